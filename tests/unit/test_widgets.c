/* test_widgets.c — the TUI's drawing widgets (tui/widgets.c, sparkline.c,
 * meters.c) and the frame they draw into (tui/frame.c, canvas.c), drawn
 * into a real curses screen (newterm() on /dev/null, xterm-256color,
 * 60x220) and read back cell by cell: glyph, colour pair and attributes.
 *
 * Every drawing test fills the screen with a sentinel first and checks that
 * nothing outside the widget's rectangle changed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text.h"
#include "tui/frame.h"
#include "tui/meters.h"
#include "tui/sparkline.h"
#include "tui/widgets.h"

#define LINES_N 60
#define COLS_N 220
#define SENTINEL L'@'

static SCREEN *scr;
static FILE *fout, *fin;
static struct tui_theme th;    /* colour, UTF-8 */
static struct tui_theme mono;  /* no colour, UTF-8 */
static struct tui_theme ascii; /* colour, ASCII glyphs */

/* ---- screen and cells ---- */

static int screen_up(void **state)
{
    (void)state;
    setlocale(LC_ALL, "C.UTF-8");
    setenv("TERM", "xterm-256color", 1);
    setenv("LINES", "60", 1);
    setenv("COLUMNS", "220", 1);
    fout = fopen("/dev/null", "w");
    fin = fopen("/dev/null", "r");
    if (!fout || !fin)
        return -1;
    scr = newterm("xterm-256color", fout, fin);
    if (!scr)
        return -1;
    set_term(scr);
    if (LINES != LINES_N || COLS != COLS_N)
        return -1;
    tui_theme_init(&th, true, true);
    tui_theme_init(&mono, false, true);
    tui_theme_init(&ascii, true, false);
    return th.color && !mono.color ? 0 : -1;
}

static int screen_down(void **state)
{
    (void)state;
    tui_frame_free();
    endwin();
    delscreen(scr);
    fclose(fout);
    fclose(fin);
    return 0;
}

struct cell {
    wchar_t wc;
    attr_t attr; /* without the colour bits */
    short pair;
};

static struct cell cell_in(WINDOW *w, int y, int x)
{
    cchar_t cc;
    wchar_t wcs[CCHARW_MAX + 1] = {0};
    attr_t a = 0;
    short p = 0;
    if (mvwin_wch(w, y, x, &cc) == ERR)
        fail_msg("mvwin_wch(%d, %d) failed", y, x);
    getcchar(&cc, wcs, &a, &p, NULL);
    return (struct cell){wcs[0], a & ~A_COLOR, p};
}

static struct cell cell_at(int y, int x)
{
    return cell_in(stdscr, y, x);
}

static void put_sentinel(WINDOW *w, int y, int x)
{
    cchar_t cc;
    wchar_t s[2] = {SENTINEL, 0};
    setcchar(&cc, s, A_NORMAL, 0, NULL);
    mvwadd_wch(w, y, x, &cc);
}

static void fill_sentinel(void)
{
    for (int y = 0; y < LINES_N; y++)
        for (int x = 0; x < COLS_N; x++)
            put_sentinel(stdscr, y, x);
}

static bool inside(struct rect r, int y, int x)
{
    return y >= r.y && y < r.y + r.h && x >= r.x && x < r.x + r.w;
}

/* Nothing outside r changed (r may be partly off screen or empty). */
static void assert_outside_untouched(struct rect r)
{
    for (int y = 0; y < LINES_N; y++)
        for (int x = 0; x < COLS_N; x++) {
            if (inside(r, y, x))
                continue;
            struct cell c = cell_at(y, x);
            if (c.wc != SENTINEL || c.attr != 0 || c.pair != 0)
                fail_msg("cell (%d, %d) outside rect {%d,%d,%d,%d} changed to U+%04X", y, x, r.y,
                         r.x, r.h, r.w, (unsigned)c.wc);
        }
}

static void assert_cell(int y, int x, wchar_t wc, const struct tui_theme *t, enum tui_role role)
{
    struct cell c = cell_at(y, x);
    attr_t want_attr = t->attr[role] & ~A_COLOR;
    if (c.wc != wc || c.pair != t->pair[role] || c.attr != want_attr)
        fail_msg("cell (%d, %d): U+%04X pair %d attr %#lx, expected U+%04X pair %d attr %#lx", y,
                 x, (unsigned)c.wc, c.pair, (unsigned long)c.attr, (unsigned)wc, t->pair[role],
                 (unsigned long)want_attr);
}

/* A blank as the eye sees it: a space on the terminal's own background,
 * with nothing that would show on a space (reverse, standout, underline);
 * its foreground may be any (a chart's gaps carry the chart's colour). */
static void assert_blank(int y, int x)
{
    struct cell c = cell_at(y, x);
    short fg = -1, bg = -1;
    bool default_bg = c.pair == 0 || (pair_content(c.pair, &fg, &bg) == OK && bg == -1);
    if (c.wc != L' ' || !default_bg || (c.attr & (A_REVERSE | A_STANDOUT | A_UNDERLINE)))
        fail_msg("cell (%d, %d): U+%04X pair %d (background %d) attr %#lx, expected a blank", y,
                 x, (unsigned)c.wc, c.pair, bg, (unsigned long)c.attr);
}

/* The text of n cells from (y, x) of window w, as a wide string. */
static const wchar_t *row_in(WINDOW *w, int y, int x, int n)
{
    static wchar_t buf[1100];
    if (n >= (int)(sizeof(buf) / sizeof(buf[0])))
        n = (int)(sizeof(buf) / sizeof(buf[0])) - 1;
    for (int i = 0; i < n; i++)
        buf[i] = cell_in(w, y, x + i).wc;
    buf[n] = 0;
    return buf;
}

static const wchar_t *row_text(int y, int x, int n)
{
    return row_in(stdscr, y, x, n);
}

static void assert_row(int y, int x, const wchar_t *want)
{
    const wchar_t *got = row_text(y, x, (int)wcslen(want));
    if (wcscmp(got, want) != 0)
        fail_msg("row %d from %d: \"%ls\", expected \"%ls\"", y, x, got, want);
}

/* ---- series ---- */

static struct hist_series series_of(const double *v, size_t n)
{
    struct hist_series s;
    assert_int_equal(hist_series_init(&s, 300), 0);
    for (size_t i = 0; i < n; i++) {
        struct metric m = isnan(v[i]) ? metric_none("test gap") : metric_direct(v[i]);
        hist_push(&s, &m);
    }
    return s;
}

/* ---- tui_spark_level ---- */

static void test_spark_level(void **state)
{
    (void)state;
    /* 99.7% in one row rounds to a full block; truncation gave 7/8 (seed v0.3.5) */
    assert_int_equal(tui_spark_level(99.7, 100, 1), 8);
    assert_int_equal(tui_spark_level(100, 100, 1), 8);
    assert_int_equal(tui_spark_level(150, 100, 1), 8);
    assert_int_equal(tui_spark_level(50, 100, 1), 4);
    assert_int_equal(tui_spark_level(6.25, 100, 1), 1); /* half an eighth rounds up */
    assert_int_equal(tui_spark_level(6.2, 100, 1), 0);
    assert_int_equal(tui_spark_level(0, 100, 1), 0);
    assert_int_equal(tui_spark_level(-5, 100, 1), 0);
    assert_int_equal(tui_spark_level(NAN, 100, 1), 0);
    /* rows*8 levels */
    assert_int_equal(tui_spark_level(50, 100, 3), 12);
    assert_int_equal(tui_spark_level(99.7, 100, 3), 24);
    assert_int_equal(tui_spark_level(30, 100, 4), 10); /* 9.6 */
    /* no scale, no rows */
    assert_int_equal(tui_spark_level(50, 0, 1), 0);
    assert_int_equal(tui_spark_level(50, -1, 1), 0);
    assert_int_equal(tui_spark_level(50, 100, 0), 0);
}

/* ---- tui_sparkline ---- */

/* 0, 10, … 100 pushed in order: newest (100) in the rightmost column, the
 * older points to its left, and the columns without data blank (seed v0.3.5:
 * the oldest point was drawn at the right). */
static void test_sparkline_direction(void **state)
{
    (void)state;
    double v[11];
    for (int i = 0; i <= 10; i++)
        v[i] = i * 10.0;
    struct hist_series s = series_of(v, 11);
    fill_sentinel();
    struct rect r = {2, 5, 1, 20};
    tui_sparkline(stdscr, &th, r, &s, 100, R_GPU);
    const wchar_t *g = th.g.spark;
    int right = r.x + r.w - 1;
    assert_cell(2, right, g[8], &th, R_GPU);      /* 100 */
    assert_cell(2, right - 1, g[7], &th, R_GPU);  /* 90: 7.2 */
    assert_cell(2, right - 2, g[6], &th, R_GPU);  /* 80: 6.4 */
    assert_cell(2, right - 3, g[6], &th, R_GPU);  /* 70: 5.6 */
    assert_cell(2, right - 5, g[4], &th, R_GPU);  /* 50 */
    assert_cell(2, right - 9, g[1], &th, R_GPU);  /* 10: 0.8 */
    assert_blank(2, right - 10);                  /* 0 */
    for (int x = r.x; x < right - 10; x++)        /* no data yet */
        assert_blank(2, x);
    assert_outside_untouched(r);

    /* narrower than the history: only the newest points */
    fill_sentinel();
    r = (struct rect){3, 0, 1, 3};
    tui_sparkline(stdscr, &th, r, &s, 100, R_CPU);
    assert_row(3, 0, (wchar_t[]){g[6], g[7], g[8], 0});
    assert_cell(3, 2, g[8], &th, R_CPU);
    assert_outside_untouched(r);
    hist_series_free(&s);
}

static void test_sparkline_rounding(void **state)
{
    (void)state;
    double v[] = {99.7};
    struct hist_series s = series_of(v, 1);
    fill_sentinel();
    struct rect r = {0, 0, 1, 4};
    tui_sparkline(stdscr, &th, r, &s, 100, R_CPU);
    assert_cell(0, 3, L'█', &th, R_CPU); /* not ▇ */
    assert_outside_untouched(r);
    hist_series_free(&s);
}

static void test_sparkline_multirow(void **state)
{
    (void)state;
    double v[] = {100, 50, 99.7, 30, 0};
    struct hist_series s = series_of(v, 5);
    fill_sentinel();
    struct rect r = {10, 10, 3, 5}; /* 24 levels */
    tui_sparkline(stdscr, &th, r, &s, 100, R_VRAM);
    const wchar_t *g = th.g.spark;
    /* column 14: 0 → blank */
    for (int y = 10; y < 13; y++)
        assert_blank(y, 14);
    /* column 13: 30 → 7.2 → 7/8 of the bottom row */
    assert_cell(12, 13, g[7], &th, R_VRAM);
    assert_blank(11, 13);
    assert_blank(10, 13);
    /* column 12: 99.7 → 23.9 → 24: all full */
    for (int y = 10; y < 13; y++)
        assert_cell(y, 12, g[8], &th, R_VRAM);
    /* column 11: 50 → 12: bottom full, middle half, top blank */
    assert_cell(12, 11, g[8], &th, R_VRAM);
    assert_cell(11, 11, g[4], &th, R_VRAM);
    assert_blank(10, 11);
    /* column 10: 100 */
    for (int y = 10; y < 13; y++)
        assert_cell(y, 10, g[8], &th, R_VRAM);
    assert_outside_untouched(r);
    hist_series_free(&s);
}

/* 100, then four failed reads (three carried, then a gap), then 100 again. */
static void test_sparkline_gap_and_carried(void **state)
{
    (void)state;
    double v[] = {100, NAN, NAN, NAN, NAN, 100};
    struct hist_series s = series_of(v, 6);
    fill_sentinel();
    struct rect r = {20, 0, 2, 6};
    tui_sparkline(stdscr, &th, r, &s, 100, R_GPU);
    const wchar_t *g = th.g.spark;
    /* newest, direct */
    assert_cell(20, 5, g[8], &th, R_GPU);
    assert_cell(21, 5, g[8], &th, R_GPU);
    /* the gap: blank */
    assert_blank(20, 4);
    assert_blank(21, 4);
    /* carried: same glyph, dimmed */
    for (int x = 1; x <= 3; x++)
        for (int y = 20; y <= 21; y++) {
            struct cell c = cell_at(y, x);
            assert_int_equal(c.wc, g[8]);
            assert_int_equal(c.pair, th.pair[R_GPU]);
            assert_true(c.attr & A_DIM);
        }
    /* the oldest, direct: not dim */
    assert_cell(21, 0, g[8], &th, R_GPU);
    assert_false(cell_at(21, 0).attr & A_DIM);
    assert_outside_untouched(r);
    hist_series_free(&s);
}

static void test_sparkline_estimate_dim(void **state)
{
    (void)state;
    struct hist_series s;
    assert_int_equal(hist_series_init(&s, 10), 0);
    struct metric m = {.value = 50, .src = MSRC_ESTIMATE, .why = "share"};
    hist_push(&s, &m);
    fill_sentinel();
    struct rect r = {0, 0, 1, 1};
    tui_sparkline(stdscr, &th, r, &s, 100, R_GPU);
    struct cell c = cell_at(0, 0);
    assert_int_equal(c.wc, th.g.spark[4]);
    assert_true(c.attr & A_DIM);
    assert_outside_untouched(r);
    hist_series_free(&s);
}

static void test_sparkline_no_scale_no_series(void **state)
{
    (void)state;
    double v[] = {50};
    struct hist_series s = series_of(v, 1);
    fill_sentinel();
    struct rect r = {5, 5, 2, 10};
    tui_sparkline(stdscr, &th, r, &s, 0, R_GPU); /* scale <= 0: nothing */
    assert_outside_untouched((struct rect){0, 0, 0, 0});
    tui_sparkline(stdscr, &th, r, NULL, 100, R_GPU); /* no series: blank */
    for (int y = 5; y < 7; y++)
        for (int x = 5; x < 15; x++)
            assert_blank(y, x);
    assert_outside_untouched(r);
    hist_series_free(&s);
}

static void test_sparkline_ascii(void **state)
{
    (void)state;
    double v[] = {100, 50, 12.5, 0};
    struct hist_series s = series_of(v, 4);
    fill_sentinel();
    struct rect r = {0, 0, 1, 4};
    tui_sparkline(stdscr, &ascii, r, &s, 100, R_GPU);
    assert_row(0, 0, L"#-. ");
    assert_cell(0, 0, L'#', &ascii, R_GPU);
    assert_outside_untouched(r);
    hist_series_free(&s);
}

/* ---- tui_ram_chart ---- */

/* used 30% + cached 50% over 4 rows (32 levels): used 10, used+cached 26.
 * Bottom row full used; the row where used ends is ▂ in the used colour on
 * the cached background; cached starts right above: full, then ▂. */
static void test_ram_chart_touching(void **state)
{
    (void)state;
    double u[] = {30}, c[] = {50};
    struct hist_series su = series_of(u, 1), sc = series_of(c, 1);
    fill_sentinel();
    struct rect r = {10, 10, 4, 3};
    tui_ram_chart(stdscr, &th, r, &su, &sc, 100);
    const wchar_t *g = th.g.spark;
    assert_cell(13, 12, g[8], &th, R_GOOD);
    assert_cell(12, 12, g[2], &th, R_GOOD_ON_CACHED);
    short fg, bg;
    pair_content(cell_at(12, 12).pair, &fg, &bg);
    assert_int_equal(fg, COLOR_GREEN);
    assert_int_equal(bg, COLOR_BLUE);
    assert_cell(11, 12, g[8], &th, R_CACHED);
    assert_cell(10, 12, g[2], &th, R_CACHED);
    /* older columns: no data, blank */
    for (int y = 10; y < 14; y++) {
        assert_blank(y, 10);
        assert_blank(y, 11);
    }
    assert_outside_untouched(r);
    hist_series_free(&su);
    hist_series_free(&sc);
}

/* used only: the partial cell keeps the default background. */
static void test_ram_chart_used_only(void **state)
{
    (void)state;
    double u[] = {30}, c[] = {0};
    struct hist_series su = series_of(u, 1), sc = series_of(c, 1);
    fill_sentinel();
    struct rect r = {0, 0, 4, 1};
    tui_ram_chart(stdscr, &th, r, &su, &sc, 100);
    assert_cell(3, 0, th.g.spark[8], &th, R_GOOD);
    assert_cell(2, 0, th.g.spark[2], &th, R_GOOD); /* not R_GOOD_ON_CACHED */
    assert_blank(1, 0);
    assert_blank(0, 0);
    assert_outside_untouched(r);
    hist_series_free(&su);
    hist_series_free(&sc);
}

/* Per-column used colour; cached only from the bottom; a gap column blank;
 * a column exactly on a row boundary has no partial cell. */
static void test_ram_chart_columns(void **state)
{
    (void)state;
    double u[] = {85, 0, NAN, 25, 60}, c[] = {10, 50, 40, 25, 10};
    struct hist_series su = series_of(u, 5), sc = series_of(c, 5);
    fill_sentinel();
    struct rect r = {30, 100, 4, 5};
    tui_ram_chart(stdscr, &th, r, &su, &sc, 100);
    const wchar_t *g = th.g.spark;
    /* x=104: used 60 (19.2 → 19), top 70 (22.4 → 22): warn */
    assert_cell(33, 104, g[8], &th, R_WARN);
    assert_cell(32, 104, g[8], &th, R_WARN);
    assert_cell(31, 104, g[3], &th, R_WARN_ON_CACHED);
    assert_blank(30, 104); /* cached (19..22) lies within the partial cell */
    /* x=103: used 25 → 8 (a whole row), top 50 → 16 */
    assert_cell(33, 103, g[8], &th, R_GOOD);
    assert_cell(32, 103, g[8], &th, R_CACHED);
    assert_blank(31, 103);
    /* x=102: the used read failed after a real 0: carried 0, cached 40 → 12.8 → 13 */
    assert_cell(33, 102, g[8], &th, R_CACHED);
    assert_cell(32, 102, g[5], &th, R_CACHED);
    assert_blank(31, 102);
    /* x=101: used 0, cached 50 → blue from the bottom */
    assert_cell(33, 101, g[8], &th, R_CACHED);
    assert_cell(32, 101, g[8], &th, R_CACHED);
    assert_blank(31, 101);
    /* x=100: used 85 → 27.2 → 27, top 95 → 30.4 → 30: alarm */
    assert_cell(30, 100, g[3], &th, R_ALARM_ON_CACHED);
    assert_cell(31, 100, g[8], &th, R_ALARM);
    assert_outside_untouched(r);
    hist_series_free(&su);
    hist_series_free(&sc);
}

static void test_ram_chart_gap_blank(void **state)
{
    (void)state;
    double u[] = {NAN, 50}, c[] = {20, 20};
    struct hist_series su = series_of(u, 2), sc = series_of(c, 2);
    fill_sentinel();
    struct rect r = {0, 0, 2, 2};
    tui_ram_chart(stdscr, &th, r, &su, &sc, 100);
    assert_blank(0, 0); /* never seen before: a gap, not carried */
    assert_blank(1, 0);
    assert_cell(1, 1, th.g.spark[8], &th, R_WARN);
    assert_outside_untouched(r);
    /* total <= 0 draws nothing */
    fill_sentinel();
    tui_ram_chart(stdscr, &th, r, &su, &sc, 0);
    assert_outside_untouched((struct rect){0, 0, 0, 0});
    hist_series_free(&su);
    hist_series_free(&sc);
}

/* Without colour cached is the shade glyph. */
static void test_ram_chart_no_color(void **state)
{
    (void)state;
    double u[] = {30}, c[] = {50};
    struct hist_series su = series_of(u, 1), sc = series_of(c, 1);
    fill_sentinel();
    struct rect r = {0, 0, 4, 1};
    tui_ram_chart(stdscr, &mono, r, &su, &sc, 100);
    assert_cell(3, 0, mono.g.spark[8], &mono, R_GOOD);
    assert_cell(2, 0, mono.g.spark[2], &mono, R_GOOD_ON_CACHED);
    assert_cell(1, 0, mono.g.shade, &mono, R_CACHED);
    assert_blank(0, 0); /* 2/8 of a cell: less than half */
    assert_int_equal(cell_at(2, 0).pair, 0);
    assert_outside_untouched(r);
    hist_series_free(&su);
    hist_series_free(&sc);
}

/* ---- tui_mem_bar ---- */

static void test_mem_bar_cells(void **state)
{
    (void)state;
    fill_sentinel();
    struct rect r = {5, 10, 1, 24}; /* "RAM " + 20 cells */
    tui_mem_bar(stdscr, &th, r, "RAM", metric_direct(25), metric_direct(50), metric_direct(100),
                false);
    assert_row(5, 10, L"RAM ▮▮▮▮▮▮▮▮▮▮▮▮▮▮▮▯▯▯▯▯");
    for (int i = 0; i < 20; i++) {
        int x = 14 + i;
        if (i < 5)
            assert_cell(5, x, th.g.bar_on, &th, R_GOOD);
        else if (i < 15)
            assert_cell(5, x, th.g.bar_on, &th, R_CACHED);
        else
            assert_cell(5, x, th.g.bar_off, &th, R_FREE);
    }
    assert_outside_untouched(r);

    /* thirds of 10 cells: boundaries 3.33 → 3, 6.67 → 7; the parts add up */
    fill_sentinel();
    r = (struct rect){0, 0, 1, 10};
    tui_mem_bar(stdscr, &th, r, NULL, metric_direct(1), metric_direct(1), metric_direct(3),
                false);
    assert_row(0, 0, L"▮▮▮▮▮▮▮▯▯▯");
    assert_cell(0, 2, th.g.bar_on, &th, R_GOOD); /* 33% used */
    assert_cell(0, 3, th.g.bar_on, &th, R_CACHED);
    assert_cell(0, 7, th.g.bar_off, &th, R_FREE);
    assert_outside_untouched(r);
}

static void test_mem_bar_roles(void **state)
{
    (void)state;
    /* RAM 85% used: alarm */
    fill_sentinel();
    struct rect r = {0, 0, 1, 14};
    tui_mem_bar(stdscr, &th, r, "RAM", metric_direct(85), metric_direct(5), metric_direct(100),
                false);
    assert_cell(0, 4, th.g.bar_on, &th, R_ALARM);
    /* swap: 10% dark grey, 30% warn, 60% alarm; cached may be none */
    tui_mem_bar(stdscr, &th, r, "SWP", metric_direct(1), metric_none("n/a"), metric_direct(10),
                true);
    assert_row(0, 0, L"SWP ▮▯▯▯▯▯▯▯▯▯");
    assert_cell(0, 4, th.g.bar_on, &th, R_FREE);
    tui_mem_bar(stdscr, &th, r, "SWP", metric_direct(3), metric_direct(0), metric_direct(10),
                true);
    assert_cell(0, 4, th.g.bar_on, &th, R_WARN);
    assert_cell(0, 7, th.g.bar_off, &th, R_FREE);
    tui_mem_bar(stdscr, &th, r, "SWP", metric_direct(6), metric_direct(0), metric_direct(10),
                true);
    assert_cell(0, 9, th.g.bar_on, &th, R_ALARM);
    assert_outside_untouched(r);
}

static void test_mem_bar_na(void **state)
{
    (void)state;
    struct rect r = {0, 0, 1, 12};
    struct metric none = metric_none("unreadable");
    struct {
        struct metric u, c, t;
    } cases[] = {
        {none, metric_direct(1), metric_direct(10)},
        {metric_direct(1), none, metric_direct(10)}, /* RAM: cached none → N/A */
        {metric_direct(1), metric_direct(1), none},
        {metric_direct(1), metric_direct(1), metric_direct(0)}, /* no swap configured */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fill_sentinel();
        tui_mem_bar(stdscr, &th, r, "RAM", cases[i].u, cases[i].c, cases[i].t, false);
        assert_row(0, 0, L"RAM N/A     ");
        assert_cell(0, 4, L'N', &th, R_FREE);
        assert_outside_untouched(r);
    }
}

static void test_mem_bar_no_color_ascii(void **state)
{
    (void)state;
    fill_sentinel();
    struct rect r = {0, 0, 1, 10};
    /* no colour: cached by the shade glyph */
    tui_mem_bar(stdscr, &mono, r, "", metric_direct(2), metric_direct(5), metric_direct(10),
                false);
    assert_row(0, 0, L"▮▮▒▒▒▒▒▯▯▯");
    assert_cell(0, 9, L'▯', &mono, R_FREE);
    assert_int_equal(cell_at(0, 9).attr, A_DIM);
    /* ASCII with colour */
    tui_mem_bar(stdscr, &ascii, r, "", metric_direct(2), metric_direct(5), metric_direct(10),
                false);
    assert_row(0, 0, L"#######...");
    assert_cell(0, 3, L'#', &ascii, R_CACHED);
    assert_outside_untouched(r);
}

/* ---- tui_cpu_cores ---- */

static struct host_core core_buf[1100];

static const struct host_core *make_cores(size_t n)
{
    for (size_t i = 0; i < n; i++) {
        core_buf[i].id = (int)i;
        core_buf[i].pct = metric_direct((double)((i * 37) % 100));
    }
    return core_buf;
}

/* Cells drawn (a "%" or "N/A" each), columns in use (cells in the top
 * row) and whether a "+N more" appeared, read back from the screen. */
struct cores_seen {
    int cells, cols;
    long more;
};

static struct cores_seen count_cores(WINDOW *w, struct rect r)
{
    struct cores_seen s = {0, 0, -1};
    for (int y = r.y; y < r.y + r.h; y++) {
        const wchar_t *row = row_in(w, y, r.x, r.w);
        for (const wchar_t *p = row; *p; p++) {
            if (*p == L'%' || (p[0] == L'N' && p[1] == L'/' && p[2] == L'A')) {
                s.cells++;
                if (y == r.y)
                    s.cols++;
            }
        }
        const wchar_t *m = wcschr(row, L'+');
        if (m) {
            s.more = wcstol(m + 1, NULL, 10);
            if (y == r.y)
                s.cols++;
        }
    }
    return s;
}

static void test_cpu_cores_sorted(void **state)
{
    (void)state;
    struct host_core c[5] = {
        {0, metric_direct(10)}, {1, metric_direct(90)}, {2, metric_none("first sample")},
        {3, metric_direct(50)}, {4, metric_direct(90)},
    };
    fill_sentinel();
    struct rect r = {1, 1, 10, 40};
    assert_int_equal(tui_cpu_cores(stdscr, &th, r, c, 5), 5);
    /* one column (5 cores fit under each other); bar 10 cells */
    assert_row(1, 1, L"1 ▮▮▮▮▮▮▮▮▮▯  90%");
    assert_row(2, 1, L"4 ▮▮▮▮▮▮▮▮▮▯  90%"); /* tie: lower id first */
    assert_row(3, 1, L"3 ▮▮▮▮▮▯▯▯▯▯  50%");
    assert_row(4, 1, L"0 ▮▯▯▯▯▯▯▯▯▯  10%");
    assert_row(5, 1, L"2 ▯▯▯▯▯▯▯▯▯▯  N/A"); /* no value: last */
    assert_cell(1, 3, th.g.bar_on, &th, R_ALARM);
    assert_cell(1, 12, th.g.bar_off, &th, R_FREE);
    assert_cell(1, 17, L'%', &th, R_ALARM);
    assert_cell(3, 3, th.g.bar_on, &th, R_WARN);
    assert_cell(4, 3, th.g.bar_on, &th, R_GOOD);
    assert_cell(5, 15, L'N', &th, R_FREE);
    assert_outside_untouched(r);
}

static void test_cpu_cores_rounding_and_ids(void **state)
{
    (void)state;
    struct host_core c[3] = {
        {7, metric_direct(99.7)}, {12, metric_direct(0.4)}, {100, metric_direct(45.5)}};
    fill_sentinel();
    struct rect r = {0, 0, 3, 30};
    assert_int_equal(tui_cpu_cores(stdscr, &th, r, c, 3), 3);
    /* ids right-aligned to the widest; pct rounded, not truncated */
    assert_row(0, 0, L"  7 ▮▮▮▮▮▮▮▮▮▮ 100%");
    assert_row(1, 0, L"100 ▮▮▮▮▮▯▯▯▯▯  46%");
    assert_row(2, 0, L" 12 ▯▯▯▯▯▯▯▯▯▯   0%");
    assert_outside_untouched(r);
}

/* Columns as many as fit (cell "id bar pct%" with a bar of at least 5 and
 * 2 columns between cells), no more than the cores need; "+N more" in the
 * last cell when they do not all fit. 10 rows. */
static void test_cpu_cores_widths(void **state)
{
    (void)state;
    const struct {
        int w;
        size_t n;
        int cols;
        long more; /* -1: none */
    } cases[] = {
        {40, 1, 1, -1},   {40, 2, 1, -1},    {40, 64, 2, 45},  {40, 256, 2, 237},
        {80, 1, 1, -1},   {80, 2, 1, -1},    {80, 64, 5, 15},  {80, 256, 5, 207},
        {200, 1, 1, -1},  {200, 2, 1, -1},   {200, 64, 7, -1}, {200, 256, 12, 137},
        {12, 256, 1, 247}, /* narrower than a 2-digit cell's minimum: one column */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fill_sentinel();
        struct rect r = {2, 3, 10, cases[i].w};
        const struct host_core *c = make_cores(cases[i].n);
        size_t drawn = tui_cpu_cores(stdscr, &th, r, c, cases[i].n);
        struct cores_seen s = count_cores(stdscr, r);
        if (s.cols != cases[i].cols || s.more != cases[i].more)
            fail_msg("w=%d n=%zu: %d columns, more %ld; expected %d, %ld", cases[i].w,
                     cases[i].n, s.cols, s.more, cases[i].cols, cases[i].more);
        size_t want = cases[i].more < 0 ? cases[i].n : cases[i].n - (size_t)cases[i].more;
        assert_int_equal(drawn, want);
        assert_int_equal(s.cells, (int)want);
        assert_outside_untouched(r);
    }
}

/* Columns fill top to bottom; the core without a value is the last cell. */
static void test_cpu_cores_column_order(void **state)
{
    (void)state;
    struct host_core c[64];
    for (int i = 0; i < 64; i++)
        c[i] = (struct host_core){i, metric_direct(i)}; /* core 63 busiest */
    c[0].pct = metric_none("first sample");
    fill_sentinel();
    struct rect r = {0, 0, 10, 200};
    assert_int_equal(tui_cpu_cores(stdscr, &th, r, c, 64), 64);
    /* cell "NN ▮▮▮▮▮▮▮▮▮▮ PPP%" = 18 columns, pitch 20 */
    assert_row(0, 0, L"63 ▮▮▮▮▮▮▯▯▯▯  63%");
    assert_row(1, 0, L"62 ▮▮▮▮▮▮▯▯▯▯  62%");
    assert_row(9, 0, L"54 ▮▮▮▮▮▯▯▯▯▯  54%");
    assert_row(0, 20, L"53 ▮▮▮▮▮▯▯▯▯▯  53%");
    /* 64th cell: column 6, row 3 */
    assert_row(3, 6 * 20, L" 0 ▯▯▯▯▯▯▯▯▯▯  N/A");
    assert_row(2, 6 * 20, L" 1 ▯▯▯▯▯▯▯▯▯▯   1%");
    assert_outside_untouched(r);
}

/* More than 1024 cores: at most 1024 drawn, the rest counted, in a pad big
 * enough for all of them. */
static void test_cpu_cores_over_1024(void **state)
{
    (void)state;
    WINDOW *pad = newpad(120, 1000);
    assert_non_null(pad);
    const struct host_core *c = make_cores(1100);
    core_buf[1099].pct = metric_direct(100); /* the busiest is the last one */
    struct rect r = {0, 0, 120, 1000};
    assert_int_equal(tui_cpu_cores(pad, &th, r, c, 1100), 1024);
    struct cores_seen s = count_cores(pad, r);
    assert_int_equal(s.cells, 1024);
    assert_int_equal(s.more, 76);
    assert_true(wcsncmp(row_in(pad, 0, 0, 5), L"1099 ", 5) == 0);
    delwin(pad);
}

static void test_cpu_cores_tiny(void **state)
{
    (void)state;
    const struct host_core *c = make_cores(8);
    const struct rect rs[] = {{0, 0, 0, 0}, {5, 5, 1, 1}, {5, 5, 1, 3}, {5, 5, 2, 9},
                              {5, 5, -3, 10}, {58, 215, 10, 40}, {-2, -4, 4, 8}};
    for (size_t i = 0; i < sizeof(rs) / sizeof(rs[0]); i++) {
        fill_sentinel();
        tui_cpu_cores(stdscr, &th, rs[i], c, 8);
        assert_outside_untouched(rs[i]);
    }
    fill_sentinel();
    struct rect r = {5, 5, 1, 9};
    assert_int_equal(tui_cpu_cores(stdscr, &th, r, c, 8), 0);
    assert_row(5, 5, L"+8 more  ");
    assert_outside_untouched(r);
    assert_int_equal(tui_cpu_cores(stdscr, &th, r, c, 0), 0);
    assert_row(5, 5, L"         ");
}

/* ---- tui_text and tui_box ---- */

static void test_text(void **state)
{
    (void)state;
    fill_sentinel();
    struct rect r = {3, 10, 2, 8};
    int end = tui_text(stdscr, &th, r, 3, 10, R_HEADER, "Temp°C");
    assert_int_equal(end, 16);
    assert_row(3, 10, L"Temp°C");
    assert_cell(3, 14, L'°', &th, R_HEADER);
    /* cut at the right edge, where an ellipsis says so */
    end = tui_text(stdscr, &th, r, 4, 12, R_NORMAL, "abcdefghij");
    assert_int_equal(end, 18);
    assert_row(4, 12, L"abcde\u2026");
    /* a wide character that would straddle the edge is left out */
    end = tui_text(stdscr, &th, r, 3, 16, R_NORMAL, "a漢");
    assert_int_equal(end, 18);
    assert_int_equal(cell_at(3, 16).wc, L'a');
    assert_int_equal(cell_at(3, 17).wc, L'\u2026');
    /* text that fits exactly is not cut */
    end = tui_text(stdscr, &th, r, 4, 12, R_NORMAL, "uvwxyz");
    assert_row(4, 12, L"uvwxyz");
    /* a bad byte is one '?' */
    end = tui_text(stdscr, &th, r, 4, 10, R_NORMAL, "x\xffy");
    assert_int_equal(end, 13);
    assert_row(4, 10, L"x?y");
    /* outside the rectangle: nothing, x returned */
    assert_int_equal(tui_text(stdscr, &th, r, 5, 10, R_NORMAL, "zz"), 10);
    assert_int_equal(tui_text(stdscr, &th, r, 2, 10, R_NORMAL, "zz"), 10);
    assert_int_equal(tui_text(stdscr, &th, r, 3, 18, R_NORMAL, "zz"), 18);
    /* starting left of the rectangle: only the part inside */
    end = tui_text(stdscr, &th, r, 4, 8, R_NORMAL, "0123");
    assert_int_equal(end, 12);
    assert_row(4, 10, L"23");
    assert_outside_untouched(r);
    /* the window's own attributes neither leak in nor get lost */
    wattr_set(stdscr, A_UNDERLINE, 0, NULL);
    tui_text(stdscr, &th, r, 3, 10, R_NORMAL, "n");
    assert_int_equal(cell_at(3, 10).attr, 0);
    attr_t a;
    short p;
    wattr_get(stdscr, &a, &p, NULL);
    assert_int_equal(a & ~A_COLOR, A_UNDERLINE);
    wattr_set(stdscr, A_NORMAL, 0, NULL);
}

/* What the C library's decoder makes of s, as text drawing promises it:
 * each undecodable byte and each unprintable character one '?', and so each
 * format character (text.h), to which wcwidth gives no column. */
static size_t reference_text(const char *s, wchar_t *out, size_t cap)
{
    mbstate_t st;
    memset(&st, 0, sizeof(st));
    size_t len = strlen(s), k = 0;
    while (len > 0 && k + 1 < cap) {
        wchar_t wc;
        size_t n = mbrtowc(&wc, s, len, &st);
        if (n == (size_t)-1 || n == (size_t)-2 || n == 0 || (unsigned long)wc > 0x10ffff) {
            /* glibc also reads the old forms past U+10FFFF; UTF-8 (RFC
             * 3629) ends there, and so do the widgets: a byte each */
            memset(&st, 0, sizeof(st));
            wc = L'?';
            n = 1;
        } else if (wcwidth(wc) < 0 || text_is_control((uint32_t)wc)) {
            wc = L'?';
        } else if (wcwidth(wc) == 0) { /* joins the cell before: no column */
            s += n;
            len -= n;
            continue;
        }
        out[k++] = wc;
        s += n;
        len -= n;
    }
    out[k] = L'\0';
    return k;
}

/* UTF-8 is decoded by the widgets themselves: every edge of the encoding
 * (overlong forms, surrogates, cut sequences, C0 and C1 controls) comes
 * out as the C library's decoder has it, and past U+10FFFF as RFC 3629
 * has it. */
static void test_text_utf8_like_libc(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xe0\x9f\xbf", "\xed\xa0\x80",
        "\xed\x9f\xbf", "\xf0\x8f\xbf\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80",
        "\xf0\x9f\x98", "\xe2\x96", "\xe2\x96\x88x", "\xc3\xa9", "\xf0\x90\x8c\x80",
        "\xf4\x8f\xbf\xbd", "a\x01b\x7f", "\xc2\x9b[2J", "\xe2\x80\xae", "\x80\xbf",
        "x\xe2\x96\x88\xe2\x96y", "\xef\xbf\xbd",
        /* RLM, ALM, ZWSP, BOM, the line separator, a tag: one '?' each */
        "a\xe2\x80\x8f" "b\xd8\x9c\xe2\x80\x8b\xef\xbb\xbf\xe2\x80\xa8\xf3\xa0\x81\x81" "c",
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        wchar_t want[32];
        size_t n = reference_text(cases[i], want, 32);
        werase(stdscr);
        struct rect r = {1, 0, 1, 40};
        int end = tui_text(stdscr, &th, r, 1, 0, R_NORMAL, cases[i]);
        if (end != (int)n)
            fail_msg("case %zu: %d columns, the C library has %zu characters", i, end, n);
        for (size_t k = 0; k < n; k++) {
            if (cell_at(1, (int)k).wc != want[k])
                fail_msg("case %zu, column %zu: U+%04X, the C library has U+%04X", i, k,
                         (unsigned)cell_at(1, (int)k).wc, (unsigned)want[k]);
        }
    }
}

static void test_box(void **state)
{
    (void)state;
    fill_sentinel();
    struct rect r = {2, 2, 4, 12};
    struct rect in = tui_box(stdscr, &th, r, "CPU", R_TITLE);
    assert_int_equal(in.y, 3);
    assert_int_equal(in.x, 3);
    assert_int_equal(in.h, 2);
    assert_int_equal(in.w, 10);
    assert_row(2, 2, L"┌ CPU ─────┐");
    assert_row(3, 2, L"│          │");
    assert_row(4, 2, L"│          │");
    assert_row(5, 2, L"└──────────┘");
    assert_cell(2, 4, L'C', &th, R_TITLE);
    assert_outside_untouched(r);

    /* a title too long is cut with the ellipsis */
    fill_sentinel();
    tui_box(stdscr, &th, r, "Mem Ctrl 38%", R_TITLE);
    assert_row(2, 2, L"┌ Mem Ctr… ┐");
    assert_outside_untouched(r);

    /* ASCII */
    fill_sentinel();
    tui_box(stdscr, &ascii, r, "Mem Ctrl 38%", R_TITLE);
    assert_row(2, 2, L"+ Mem Ctr> +");
    assert_row(3, 2, L"|          |");
    assert_row(5, 2, L"+----------+");
    assert_outside_untouched(r);
}

/* Tiny, empty, negative and off-screen rectangles: no crash, nothing
 * written outside. */
static void test_tiny_rects(void **state)
{
    (void)state;
    double v[] = {10, 50, 90};
    struct hist_series s = series_of(v, 3);
    const struct rect rs[] = {
        {0, 0, 0, 0},     {10, 10, 1, 1},   {10, 10, 2, 2},      {10, 10, 1, 5},
        {10, 10, 5, 1},   {10, 10, -1, 5},  {10, 10, 5, -7},     {-3, -3, 5, 5},
        {58, 218, 5, 5},  {60, 0, 1, 10},   {0, 220, 1, 10},     {59, 219, 1, 1},
        {-100, -100, 1000, 1000},
    };
    for (size_t i = 0; i < sizeof(rs) / sizeof(rs[0]); i++) {
        struct rect r = rs[i];
        fill_sentinel();
        tui_box(stdscr, &th, r, "A very long title", R_TITLE);
        tui_text(stdscr, &th, r, r.y, r.x, R_NORMAL, "some text here");
        tui_sparkline(stdscr, &th, r, &s, 100, R_GPU);
        tui_ram_chart(stdscr, &th, r, &s, &s, 200);
        tui_mem_bar(stdscr, &th, r, "RAM", metric_direct(1), metric_direct(1), metric_direct(4),
                    false);
        assert_outside_untouched(r);
    }
    /* a 2x2 box is only corners; inner empty */
    fill_sentinel();
    struct rect in = tui_box(stdscr, &th, (struct rect){10, 10, 2, 2}, "T", R_TITLE);
    assert_true(in.h <= 0 && in.w <= 0);
    assert_row(10, 10, L"┌┐");
    assert_row(11, 10, L"└┘");
    hist_series_free(&s);
}

/* ---- frames ---- */

/*
 * A screen of every widget, wide and combining characters included, with
 * overlaps that cut wide characters in half (left half, right half, a wide
 * character over half of another), as a modal over a process name does.
 * step varies the values.
 */
static void draw_scene(WINDOW *w, int step, const struct hist_series *s)
{
    struct rect all = {0, 0, LINES_N, COLS_N};
    char buf[64];
    tui_fill(w, &th, (struct rect){0, 0, 1, COLS_N}, R_HEADER);
    snprintf(buf, sizeof(buf), " host %d  12:00:%02d ", step, step % 60);
    tui_text(w, &th, all, 0, 1, R_HEADER, buf);
    struct rect in = tui_box(w, &th, (struct rect){1, 0, 12, 60}, "GPU Util 漢字", R_TITLE);
    tui_sparkline(w, &th, in, s, 100, R_GPU);
    in = tui_box(w, &th, (struct rect){1, 60, 12, 60}, "RAM", R_TITLE);
    tui_ram_chart(w, &th, in, s, s, 150);
    tui_mem_bar(w, &th, (struct rect){13, 1, 1, 50}, "RAM", metric_direct(30 + step),
                metric_direct(20), metric_direct(100), false);
    struct host_core c[6];
    for (int i = 0; i < 6; i++)
        c[i] = (struct host_core){i, metric_direct((i * 17 + step * 7) % 101)};
    tui_cpu_cores(w, &th, (struct rect){14, 1, 3, 100}, c, 6);
    /* process names: wide, combining (e + U+0301, two on one cell), a bad byte */
    for (int i = 0; i < 6; i++) {
        snprintf(buf, sizeof(buf), "%5d  名前%d e\xcc\x81x\xcc\x81\xcc\x88 \xff %s", 100 + i,
                 i + step, step % 2 ? "漢" : "ab");
        tui_text(w, &th, all, 20 + i, 2, i == step % 6 ? R_SELECTED : R_NORMAL, buf);
    }
    /* a modal whose edge cuts the wide characters of rows 20..25 */
    if (step % 3 != 2)
        tui_box(w, &th, (struct rect){19, 10 + step % 2, 5, 30}, "Process", R_TITLE);
    /* a wide character written over the right half of another */
    tui_text(w, &th, all, 30, 4, R_NORMAL, "漢漢漢");
    tui_text(w, &th, all, 30, 5 + 2 * (step % 2), R_WARN, "字");
    /* a one-column character over a left half, one over a right half */
    tui_text(w, &th, all, 31, 4, R_NORMAL, "漢漢漢");
    tui_text(w, &th, all, 31, 6 + (step % 3), R_ALARM, "x");
    /* the last row and the bottom-right cell */
    snprintf(buf, sizeof(buf), "footer %d", step);
    tui_text(w, &th, all, LINES_N - 1, COLS_N - 9, R_NORMAL, buf);
    tui_text(w, &th, all, LINES_N - 1, COLS_N - 1, R_NORMAL, step % 2 ? "Z" : "z");
}

/* Every cell of a and b the same, as curses holds them (character,
 * combining characters, attributes, pair and wide-character halves). */
static void assert_windows_same(WINDOW *a, WINDOW *b)
{
    for (int y = 0; y < LINES_N; y++)
        for (int x = 0; x < COLS_N; x++) {
            cchar_t ca, cb;
            memset(&ca, 0, sizeof(ca));
            memset(&cb, 0, sizeof(cb));
            mvwin_wch(a, y, x, &ca);
            mvwin_wch(b, y, x, &cb);
            if (memcmp(&ca, &cb, sizeof(ca)) != 0)
                fail_msg("cell (%d, %d): U+%04X attr %#lx in the window drawn directly, U+%04X "
                         "attr %#lx in the framed one",
                         y, x, (unsigned)ca.chars[0], (unsigned long)ca.attr,
                         (unsigned)cb.chars[0], (unsigned long)cb.attr);
        }
}

static struct hist_series scene_series(int step)
{
    double v[200];
    for (int i = 0; i < 200; i++)
        v[i] = fmod((i + step) * 13.7, 110.0);
    v[50] = NAN;
    return series_of(v, 200);
}

/* A framed window ends up with the cells of one drawn directly, frame after
 * frame, however the frames differ. */
static void test_frame_same_as_direct(void **state)
{
    (void)state;
    WINDOW *direct = newwin(LINES_N, COLS_N, 0, 0);
    WINDOW *framed = newwin(LINES_N, COLS_N, 0, 0);
    assert_non_null(direct);
    assert_non_null(framed);
    for (int step = 0; step < 8; step++) {
        struct hist_series s = scene_series(step);
        werase(direct);
        draw_scene(direct, step, &s);
        tui_frame_begin(framed);
        draw_scene(framed, step, &s);
        assert_true(tui_frame_end(framed) > 0);
        assert_windows_same(direct, framed);
        hist_series_free(&s);
    }
    tui_frame_free();
    delwin(direct);
    delwin(framed);
}

/* A sparkline written straight into the frame (the fast path) has the cells
 * of one drawn cell by cell into a window: a history device's interleaved
 * series whose ring has wrapped, with gaps, carried points (dim) and a
 * short history, in charts cut by the window's edges. */
static void test_frame_sparkline_same_as_direct(void **state)
{
    (void)state;
    struct history h;
    assert_int_equal(history_init(&h, 50), 0);
    struct snapshot snap;
    memset(&snap, 0, sizeof(snap));
    assert_int_equal(snapshot_reserve(&snap, 1), 0);
    snap.ndevices = 1;
    memset(&snap.devices[0], 0, sizeof(snap.devices[0])); /* no node: a local device */
    snprintf(snap.devices[0].uuid, sizeof(snap.devices[0].uuid), "GPU-spark");
    WINDOW *direct = newwin(LINES_N, COLS_N, 0, 0);
    WINDOW *framed = newwin(LINES_N, COLS_N, 0, 0);
    assert_non_null(direct);
    assert_non_null(framed);
    for (int tick = 0; tick < 130; tick++) {
        struct metric *m = snap.devices[0].m;
        for (int k = 0; k < M_COUNT; k++)
            m[k] = metric_none("test");
        /* reads fail now and then: carried for three ticks, then gaps */
        if (tick % 17 < 12)
            m[M_GPU_UTIL] = metric_direct(fmod(tick * 7.3, 104.0));
        m[M_MEM_UTIL] = metric_direct(tick % 90);
        if (tick % 5 == 0) /* an estimate: drawn dim */
            m[M_MEM_UTIL].src = MSRC_ESTIMATE;
        assert_int_equal(history_push(&h, &snap), 0);
        if (tick % 9 != 0 && tick != 129)
            continue;
        const struct hist_device *hd = history_device(&h, "", "GPU-spark");
        assert_non_null(hd);
        for (int pass = 0; pass < 2; pass++) {
            WINDOW *w = pass ? framed : direct;
            if (pass)
                tui_frame_begin(w);
            else
                werase(w);
            /* wider than the ring, cut at the left edge, cut at the right */
            tui_sparkline(w, &th, (struct rect){2, 3, 5, 80}, &hd->s[HS_GPU_UTIL], 100, R_GPU);
            tui_sparkline(w, &th, (struct rect){10, -7, 3, 30}, &hd->s[HS_MEM_UTIL], 100, R_MEMCTL);
            tui_sparkline(w, &th, (struct rect){LINES_N - 2, COLS_N - 20, 4, 40},
                          &hd->s[HS_GPU_UTIL], 60, R_GPU);
            if (pass)
                tui_frame_end(w);
        }
        assert_windows_same(direct, framed);
    }
    tui_frame_free();
    delwin(direct);
    delwin(framed);
    snapshot_free(&snap);
    history_free(&h);
}

/* A RAM chart written straight into the frame has the cells of one drawn
 * cell by cell: used in every load role (under 50, 75, 90 % and over),
 * cached above it, gaps in either series, with and without colour, in
 * charts cut by the window's edges. */
static void test_frame_ram_chart_same_as_direct(void **state)
{
    (void)state;
    double used[260], cached[260];
    for (int i = 0; i < 260; i++) {
        used[i] = i % 23 == 0 ? NAN : fmod(i * 3.7, 98.0);
        cached[i] = i % 31 == 0 ? NAN : fmod(i * 1.9, 40.0); /* used + cached may pass the total */
    }
    struct hist_series su = series_of(used, 260), sc = series_of(cached, 260);
    WINDOW *direct = newwin(LINES_N, COLS_N, 0, 0);
    WINDOW *framed = newwin(LINES_N, COLS_N, 0, 0);
    assert_non_null(direct);
    assert_non_null(framed);
    const struct tui_theme *themes[] = {&th, &mono};
    for (int k = 0; k < 2; k++) {
        for (int pass = 0; pass < 2; pass++) {
            WINDOW *w = pass ? framed : direct;
            if (pass)
                tui_frame_begin(w);
            else
                werase(w);
            tui_ram_chart(w, themes[k], (struct rect){1, 2, 6, 90}, &su, &sc, 100);
            tui_ram_chart(w, themes[k], (struct rect){8, -9, 4, 40}, &su, &sc, 100);
            tui_ram_chart(w, themes[k], (struct rect){LINES_N - 3, COLS_N - 30, 5, 60}, &su,
                          &sc, 100);
            if (pass)
                tui_frame_end(w);
        }
        assert_windows_same(direct, framed);
    }
    tui_frame_free();
    delwin(direct);
    delwin(framed);
    hist_series_free(&su);
    hist_series_free(&sc);
}

/* A run of a gauge's glyphs draws what tui_text draws for the same glyphs
 * as a string, framed or not, whatever room is left (cut with the
 * ellipsis, one column, outside the rectangle or the window), and returns
 * the same column; a wide glyph goes through the string path. */
static void test_glyph_run_same_as_text(void **state)
{
    (void)state;
    static const wchar_t wide = 0x6F22; /* 漢 */
    WINDOW *w[2];
    for (int k = 0; k < 2; k++) {
        w[k] = newwin(LINES_N, COLS_N, 0, 0);
        assert_non_null(w[k]);
    }
    for (int framed = 0; framed < 2; framed++) {
        for (int t = 0; t < 3; t++) {
            const struct tui_theme *tt = t == 1 ? &ascii : &th;
            wchar_t wc = t == 2 ? wide : tt->g.bar_on;
            const char *u8 = t == 2 ? "漢" : tt->g.bar_on_s;
            /* w[0] drawn directly; w[1] through a frame in the second pass */
            werase(w[0]);
            if (framed)
                tui_frame_begin(w[1]);
            else
                werase(w[1]);
            int row = 0;
            for (int n = 0; n <= 14; n++)
                for (int room = -1; room <= 16; room++, row++) {
                    int y = row % (LINES_N - 2), x = (row / (LINES_N - 2)) * 24;
                    struct rect r = {y, x, 1, room};
                    if (row % 7 == 0) /* past the window's right edge */
                        r = (struct rect){y, COLS_N - 5, 1, room + 10};
                    int x0 = row % 5 == 0 ? r.x - 2 : r.x;
                    char buf[128] = "";
                    for (int i = 0; i < n; i++)
                        strcat(buf, u8);
                    int a = tui_text(w[0], tt, r, r.y, x0, R_GPU, buf);
                    int b = tui_glyph_run(w[1], tt, r, r.y, x0, R_GPU, wc, u8, n);
                    if (a != b)
                        fail_msg("%d glyphs in %d columns at %d: tui_text ends at %d, the run at %d",
                                 n, room, x0, a, b);
                }
            /* a row outside the rectangle draws nothing */
            assert_int_equal(tui_glyph_run(w[1], tt, (struct rect){5, 0, 1, 10}, 6, 0, R_GPU, wc,
                                           u8, 3),
                             0);
            if (framed)
                tui_frame_end(w[1]);
            assert_windows_same(w[0], w[1]);
        }
    }
    tui_frame_free();
    for (int k = 0; k < 2; k++)
        delwin(w[k]);
}

/* Random overlapping text (one- and two-column characters, combining ones)
 * and boxes over a few rows, frame after frame: framed and direct agree. */
static void test_frame_random_overlaps(void **state)
{
    (void)state;
    static const char *const bits[] = {"a", "Z", " ", "漢", "字", "e\xcc\x81", "°", "─", "名\xcc\x88"};
    const size_t nbits = sizeof(bits) / sizeof(bits[0]);
    WINDOW *direct = newwin(LINES_N, COLS_N, 0, 0);
    WINDOW *framed = newwin(LINES_N, COLS_N, 0, 0);
    assert_non_null(direct);
    assert_non_null(framed);
    unsigned long rnd = 12345;
#define RND(n) ((rnd = rnd * 6364136223846793005ul + 1442695040888963407ul) >> 33) % (n)
    struct rect all = {0, 0, LINES_N, COLS_N};
    for (int frame = 0; frame < 60; frame++) {
        unsigned long seed = rnd;
        for (int pass = 0; pass < 2; pass++) {
            WINDOW *w = pass ? framed : direct;
            rnd = seed;
            if (pass)
                tui_frame_begin(w);
            else
                werase(w);
            for (int op = 0; op < 40; op++) {
                int y = 40 + (int)RND(4), x = (int)RND(40);
                if (RND(8) == 0) {
                    tui_box(w, &th, (struct rect){y, x, 2 + (int)RND(3), 2 + (int)RND(10)}, "T",
                            R_TITLE);
                    continue;
                }
                char buf[64] = "";
                for (int k = (int)RND(6); k >= 0; k--)
                    strcat(buf, bits[RND(nbits)]);
                tui_text(w, &th, all, y, x, RND(2) ? R_NORMAL : R_WARN, buf);
            }
            if (pass)
                tui_frame_end(w);
        }
        assert_windows_same(direct, framed);
    }
#undef RND
    tui_frame_free();
    delwin(direct);
    delwin(framed);
}

/* What reaches curses: the same frame again, nothing; one value changed,
 * the cells of that value. */
static void test_frame_diff(void **state)
{
    (void)state;
    WINDOW *w = newwin(LINES_N, COLS_N, 0, 0);
    assert_non_null(w);
    struct rect r = {2, 2, 5, 30};
    tui_frame_begin(w);
    struct rect in = tui_box(w, &th, r, "GPU 0", R_TITLE);
    tui_text(w, &th, in, in.y, in.x, R_NORMAL, "util 42%");
    /* first frame: every cell that is not blank (the box: 2x30 + 2x3 cells,
     * " GPU 0 " over the border changes no count; the text 7, its space
     * being a plain blank) */
    assert_int_equal(tui_frame_end(w), 2 * 30 + 2 * 3 + 7);

    for (int i = 0; i < 3; i++) {
        tui_frame_begin(w);
        in = tui_box(w, &th, r, "GPU 0", R_TITLE);
        tui_text(w, &th, in, in.y, in.x, R_NORMAL, "util 42%");
        assert_int_equal(tui_frame_end(w), 0);
    }
    tui_frame_begin(w);
    in = tui_box(w, &th, r, "GPU 0", R_TITLE);
    tui_text(w, &th, in, in.y, in.x, R_NORMAL, "util 43%");
    assert_int_equal(tui_frame_end(w), 1);
    assert_int_equal(row_in(w, 3, 3, 8)[6], L'3');
    /* one colour changed */
    tui_frame_begin(w);
    in = tui_box(w, &th, r, "GPU 0", R_TITLE);
    tui_text(w, &th, in, in.y, in.x, R_NORMAL, "util ");
    tui_text(w, &th, in, in.y, in.x + 5, R_WARN, "43");
    tui_text(w, &th, in, in.y, in.x + 7, R_NORMAL, "%");
    assert_int_equal(tui_frame_end(w), 2);
    assert_int_equal(cell_in(w, 3, 8).pair, th.pair[R_WARN]);
    /* the text gone: its cells blank again */
    tui_frame_begin(w);
    tui_box(w, &th, r, "GPU 0", R_TITLE);
    assert_int_equal(tui_frame_end(w), 7);
    assert_int_equal(cell_in(w, 3, 3).wc, L' ');

    /* the window drawn otherwise: invalidated, the next frame rewrites it */
    wattr_set(w, A_NORMAL, 0, NULL);
    mvwaddstr(w, 40, 40, "stray");
    tui_frame_invalidate();
    tui_frame_begin(w);
    tui_box(w, &th, r, "GPU 0", R_TITLE);
    assert_int_equal(tui_frame_end(w), 2 * 30 + 2 * 3);
    assert_int_equal(cell_in(w, 40, 40).wc, L' ');

    /* no frame open: nothing handed over */
    assert_int_equal(tui_frame_end(w), 0);
    tui_frame_free();
    delwin(w);
}

/* Another window, or the same one at another size (a resized terminal):
 * the whole window is rewritten from blank. */
static void test_frame_new_size(void **state)
{
    (void)state;
    WINDOW *a = newwin(20, 50, 0, 0);
    WINDOW *b = newwin(10, 30, 0, 0);
    assert_non_null(a);
    assert_non_null(b);
    struct rect r = {0, 0, 4, 10};
    tui_frame_begin(a);
    tui_box(a, &th, r, NULL, R_TITLE);
    assert_int_equal(tui_frame_end(a), 2 * 10 + 2 * 2);
    tui_frame_begin(b);
    tui_box(b, &th, r, NULL, R_TITLE);
    assert_int_equal(tui_frame_end(b), 2 * 10 + 2 * 2);
    /* a frame never closed is abandoned by the next begin */
    tui_frame_begin(b);
    tui_box(b, &th, r, NULL, R_TITLE);
    tui_frame_begin(b);
    tui_box(b, &th, r, NULL, R_TITLE);
    assert_int_equal(tui_frame_end(b), 0);
    wresize(b, 12, 40);
    tui_frame_begin(b);
    tui_box(b, &th, r, NULL, R_TITLE);
    assert_int_equal(tui_frame_end(b), 2 * 10 + 2 * 2);
    tui_frame_free();
    delwin(a);
    delwin(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spark_level),
        cmocka_unit_test(test_sparkline_direction),
        cmocka_unit_test(test_sparkline_rounding),
        cmocka_unit_test(test_sparkline_multirow),
        cmocka_unit_test(test_sparkline_gap_and_carried),
        cmocka_unit_test(test_sparkline_estimate_dim),
        cmocka_unit_test(test_sparkline_no_scale_no_series),
        cmocka_unit_test(test_sparkline_ascii),
        cmocka_unit_test(test_ram_chart_touching),
        cmocka_unit_test(test_ram_chart_used_only),
        cmocka_unit_test(test_ram_chart_columns),
        cmocka_unit_test(test_ram_chart_gap_blank),
        cmocka_unit_test(test_ram_chart_no_color),
        cmocka_unit_test(test_mem_bar_cells),
        cmocka_unit_test(test_mem_bar_roles),
        cmocka_unit_test(test_mem_bar_na),
        cmocka_unit_test(test_mem_bar_no_color_ascii),
        cmocka_unit_test(test_cpu_cores_sorted),
        cmocka_unit_test(test_cpu_cores_rounding_and_ids),
        cmocka_unit_test(test_cpu_cores_widths),
        cmocka_unit_test(test_cpu_cores_column_order),
        cmocka_unit_test(test_cpu_cores_over_1024),
        cmocka_unit_test(test_cpu_cores_tiny),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_text_utf8_like_libc),
        cmocka_unit_test(test_box),
        cmocka_unit_test(test_tiny_rects),
        cmocka_unit_test(test_frame_same_as_direct),
        cmocka_unit_test(test_frame_sparkline_same_as_direct),
        cmocka_unit_test(test_frame_ram_chart_same_as_direct),
        cmocka_unit_test(test_glyph_run_same_as_text),
        cmocka_unit_test(test_frame_random_overlaps),
        cmocka_unit_test(test_frame_diff),
        cmocka_unit_test(test_frame_new_size),
    };
    return cmocka_run_group_tests(tests, screen_up, screen_down);
}
