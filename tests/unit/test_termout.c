/* test_termout.c — the monitor's own terminal output (tui/termout.c): the
 * exact bytes a frame writes for xterm-256color, vt100 (a terminfo entry
 * with padding and a cup that is not formatted by hand) and ansi (a screen
 * that scrolls after its last cell), drawn through the widgets' frame as
 * the monitor draws. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tui/frame.h"
#include "tui/termout.h"
#include "tui/widgets.h"

static SCREEN *scr;
static FILE *fout, *fin;
static struct tui_theme th;
static FILE *sink; /* termout's output, read back */
static long sink_off;

static int up(const char *term, int lines, int cols)
{
    setlocale(LC_ALL, "C.UTF-8");
    char buf[16];
    setenv("TERM", term, 1);
    snprintf(buf, sizeof(buf), "%d", lines);
    setenv("LINES", buf, 1);
    snprintf(buf, sizeof(buf), "%d", cols);
    setenv("COLUMNS", buf, 1);
    fout = fopen("/dev/null", "w");
    fin = fopen("/dev/null", "r");
    sink = tmpfile();
    if (!fout || !fin || !sink)
        return -1;
    scr = newterm(term, fout, fin);
    if (!scr)
        return -1;
    set_term(scr);
    tui_theme_init(&th, true, true);
    sink_off = 0;
    return termout_open(fileno(sink)) ? 0 : -1;
}

static int xterm_up(void **state)
{
    (void)state;
    return up("xterm-256color", 24, 80);
}

static int vt100_up(void **state)
{
    (void)state;
    return up("vt100", 24, 80);
}

static int ansi_up(void **state)
{
    (void)state;
    return up("ansi", 24, 80);
}

static int big_up(void **state)
{
    (void)state;
    return up("xterm-256color", 100, 300);
}

static int down(void **state)
{
    (void)state;
    termout_close();
    tui_frame_free();
    endwin();
    delscreen(scr);
    fclose(fout);
    fclose(fin);
    fclose(sink);
    return 0;
}

/* What the last flush wrote. */
static const char *written(void)
{
    static char buf[1 << 20];
    fflush(sink);
    long end = lseek(fileno(sink), 0, SEEK_END);
    size_t n = (size_t)(end - sink_off);
    if (n >= sizeof(buf))
        n = sizeof(buf) - 1;
    ssize_t got = pread(fileno(sink), buf, n, sink_off);
    buf[got > 0 ? got : 0] = '\0';
    sink_off = end;
    return buf;
}

/* One frame: each text at its place and role, then the flush. */
struct put {
    int y, x;
    enum tui_role role;
    const char *s;
};

static long frame(const struct put *p, size_t n)
{
    struct rect all = {0, 0, LINES, COLS};
    tui_frame_begin(stdscr);
    for (size_t i = 0; i < n; i++)
        tui_text(stdscr, &th, all, p[i].y, p[i].x, p[i].role, p[i].s);
    tui_frame_end(stdscr);
    assert_true(tui_frame_emitted());
    return termout_flush();
}

#define FRAME(...)                                                                        \
    frame((const struct put[]){__VA_ARGS__},                                              \
          sizeof((const struct put[]){__VA_ARGS__}) / sizeof(struct put))

/* setaf / setab of a colour as xterm-256color formats them. */
static const char *fg_of(short c)
{
    static char b[32];
    if (c < 8)
        snprintf(b, sizeof(b), "\033[3%dm", c);
    else if (c < 16)
        snprintf(b, sizeof(b), "\033[9%dm", c - 8);
    else
        snprintf(b, sizeof(b), "\033[38;5;%dm", c);
    return b;
}

#define RESET "\033(B\033[m\033[39;49m" /* sgr0, op */

static void test_first_frame_clears(void **state)
{
    (void)state;
    FRAME({2, 3, R_NORMAL, "ab"});
    assert_string_equal(written(), RESET "\033[H\033[2J\033[3;4Hab");
    /* the same frame again: not a byte */
    assert_int_equal(FRAME({2, 3, R_NORMAL, "ab"}), 0);
    assert_string_equal(written(), "");
    /* one cell changed: a step back (the cursor is after "ab") and itself */
    FRAME({2, 3, R_NORMAL, "aX"});
    assert_string_equal(written(), "\033[DX");
    /* the next cell right after the cursor: no address */
    FRAME({2, 3, R_NORMAL, "aXY"});
    assert_string_equal(written(), "Y");
    /* a frame drawn otherwise: the next one clears and repaints */
    tui_frame_invalidate();
    FRAME({2, 3, R_NORMAL, "aXY"});
    assert_string_equal(written(), RESET "\033[H\033[2J\033[3;4HaXY");
}

static void test_colours_change_least(void **state)
{
    (void)state;
    short wfg = -1, wbg = -1;
    assert_int_equal(pair_content(th.pair[R_WARN], &wfg, &wbg), OK);
    assert_true(wfg >= 0);
    assert_int_equal(wbg, -1); /* the terminal's background */
    FRAME({5, 0, R_NORMAL, "util "}, {5, 5, R_NORMAL, "42"});
    written();
    /* "42" turns warning: only the foreground is set... */
    FRAME({5, 0, R_NORMAL, "util "}, {5, 5, R_WARN, "42"});
    char want[128];
    snprintf(want, sizeof(want), "\033[2D%s42", fg_of(wfg));
    assert_string_equal(written(), want);
    /* ...and back: the default colours (op), no reset of the attributes */
    FRAME({5, 0, R_NORMAL, "util "}, {5, 5, R_NORMAL, "42"});
    assert_string_equal(written(), "\033[2D\033[39;49m42");
    /* an attribute added: only its own string; taken away: a reset */
    attr_t hdr = th.attr[R_HEADER];
    assert_true(hdr & A_BOLD);
    FRAME({5, 0, R_NORMAL, "util "}, {5, 5, R_HEADER, "42"});
    const char *w = written();
    assert_non_null(strstr(w, "\033[1m"));
    assert_null(strstr(w, "\033(B\033[m"));
    FRAME({5, 0, R_NORMAL, "util "}, {5, 5, R_NORMAL, "42"});
    assert_string_equal(written(), "\033[2D" RESET "42");
}

/* Two changes two cells apart: the cell between is written again rather
 * than a cursor move; farther apart, a move along the row each. */
static void test_gaps(void **state)
{
    (void)state;
    FRAME({8, 0, R_NORMAL, "abcdefghij"});
    written();
    FRAME({8, 0, R_NORMAL, "aBcDefghiJ"});
    assert_string_equal(written(), "\033[9DBcD\033[5CJ");
}

/* The shortest move: a chart's column a row below the last one is a step
 * down and back (6 bytes, not an 8-byte address); far back along the row,
 * the column itself (hpa) when it has fewer digits than the distance;
 * from an unknown place (after the right margin), the address. */
static void test_moves(void **state)
{
    (void)state;
    FRAME({20, 30, R_NORMAL, "a"}, {21, 30, R_NORMAL, "b"});
    written();
    FRAME({20, 30, R_NORMAL, "A"}, {21, 30, R_NORMAL, "B"});
    /* the first frame ended at the bottom-right cell (clearing what the
     * test before left there): the cursor's place is not known, so the
     * first cell has its address */
    assert_string_equal(written(), "\033[21;31HA\033[B\033[DB");
    FRAME({20, 30, R_NORMAL, "A"}, {21, 30, R_NORMAL, "B"}, {21, 60, R_NORMAL, "c"});
    assert_string_equal(written(), "\033[29Cc");
    FRAME({20, 30, R_NORMAL, "A"}, {21, 5, R_NORMAL, "d"}, {21, 30, R_NORMAL, "B"},
          {21, 60, R_NORMAL, "c"});
    assert_string_equal(written(), "\033[6Gd"); /* from (21, 61) */
    FRAME({20, 30, R_NORMAL, "A"}, {21, 5, R_NORMAL, "d"}, {21, 30, R_NORMAL, "B"},
          {21, 60, R_NORMAL, "c"}, {21, 79, R_NORMAL, "e"}, {22, 79, R_NORMAL, "f"});
    assert_string_equal(written(), "\033[73Ce\033[23;80Hf");
}

/* Wide characters: a row holding one goes whole, each character once. */
static void test_wide_row(void **state)
{
    (void)state;
    FRAME({10, 0, R_NORMAL, "x"});
    written();
    FRAME({10, 0, R_NORMAL, "x\xe6\xbc\xa2y"}); /* x 漢 y */
    const char *w = written();
    assert_true(strncmp(w, "\033[Dx\xe6\xbc\xa2y", 7) == 0);
    /* the rest of the row: 80 columns in all, 1 + 2 + 1 written so far */
    size_t spaces = strspn(w + strlen("\033[Dx\xe6\xbc\xa2y"), " ");
    assert_int_equal(spaces, 80 - 4);
}

/* Characters of two, three and four UTF-8 bytes are written as those
 * bytes: é, the degree sign, a block, 漢 and U+1F525 (a wide emoji). */
static void test_utf8_bytes(void **state)
{
    (void)state;
    FRAME({11, 0, R_NORMAL, "x"});
    written();
    FRAME({11, 0, R_NORMAL, "\xc3\xa9\xc2\xb0\xe2\x96\x88\xe6\xbc\xa2\xf0\x9f\x94\xa5!"});
    const char *w = written();
    const char *want = "\033[D\xc3\xa9\xc2\xb0\xe2\x96\x88\xe6\xbc\xa2\xf0\x9f\x94\xa5!";
    assert_true(strncmp(w, want, strlen(want)) == 0);
}

/* The bottom-right cell, on a terminal that does not scroll there (xenl). */
static void test_last_cell(void **state)
{
    (void)state;
    FRAME({23, 78, R_NORMAL, "zz"});
    written();
    FRAME({23, 78, R_NORMAL, "ab"});
    assert_string_equal(written(), "\033[24;79Hab");
    /* the cursor's place after the margin is not assumed */
    FRAME({23, 78, R_NORMAL, "ab"}, {0, 0, R_NORMAL, "z"});
    assert_string_equal(written(), "\033[1;1Hz");
}

/* ansi: writing the bottom-right cell would scroll the screen (am without
 * xenl), so it is left alone; the cell before it is written (a step back
 * from where the last frame left the cursor, before the last cell). */
static void test_last_cell_scrolls(void **state)
{
    (void)state;
    FRAME({23, 78, R_NORMAL, "zz"});
    written();
    FRAME({23, 78, R_NORMAL, "ab"});
    assert_string_equal(written(), "\033[Da");
}

/* vt100: cup and clear carry padding ("$<5>"), which is never written, and
 * cup is formatted by terminfo. */
static void test_vt100_padding(void **state)
{
    (void)state;
    FRAME({2, 3, R_NORMAL, "ab"});
    const char *w = written();
    assert_null(strstr(w, "$<"));
    assert_non_null(strstr(w, "\033[H\033[J"));
    const char *end = w + strlen(w) - strlen("\033[3;4Hab");
    assert_string_equal(end, "\033[3;4Hab");
}

/* A large screen repainted with a colour change at every cell: far more
 * than the output buffer's first size, written whole in one frame. */
static void test_large_repaint(void **state)
{
    (void)state;
    struct rect all = {0, 0, LINES, COLS};
    tui_frame_begin(stdscr);
    for (int y = 0; y < LINES; y++)
        for (int x = 0; x < COLS; x++)
            tui_text(stdscr, &th, all, y, x, (x + y) % 2 ? R_WARN : R_GOOD, "#");
    tui_frame_end(stdscr);
    long n = termout_flush();
    assert_true(n > 128 * 1024); /* twice the buffer's first size */
    const char *w = written();
    assert_int_equal((long)strlen(w), n);
    size_t hashes = 0;
    for (const char *p = w; *p; p++)
        hashes += *p == '#';
    assert_int_equal(hashes, (size_t)LINES * (size_t)COLS);
    /* and the next, unchanged frame writes nothing */
    tui_frame_begin(stdscr);
    for (int y = 0; y < LINES; y++)
        for (int x = 0; x < COLS; x++)
            tui_text(stdscr, &th, all, y, x, (x + y) % 2 ? R_WARN : R_GOOD, "#");
    tui_frame_end(stdscr);
    assert_int_equal(termout_flush(), 0);
}

int main(void)
{
    const struct CMUnitTest xterm[] = {
        cmocka_unit_test(test_first_frame_clears),
        cmocka_unit_test(test_colours_change_least),
        cmocka_unit_test(test_gaps),
        cmocka_unit_test(test_wide_row),
        cmocka_unit_test(test_utf8_bytes),
        cmocka_unit_test(test_last_cell),
        cmocka_unit_test(test_moves), /* after test_last_cell: see its first frame */
    };
    const struct CMUnitTest vt100[] = {
        cmocka_unit_test(test_vt100_padding),
    };
    const struct CMUnitTest ansi[] = {
        cmocka_unit_test(test_last_cell_scrolls),
    };
    const struct CMUnitTest big[] = {
        cmocka_unit_test(test_large_repaint),
    };
    int failed = cmocka_run_group_tests_name("xterm-256color", xterm, xterm_up, down);
    failed += cmocka_run_group_tests_name("vt100", vt100, vt100_up, down);
    failed += cmocka_run_group_tests_name("ansi", ansi, ansi_up, down);
    failed += cmocka_run_group_tests_name("xterm-256color 300x100", big, big_up, down);
    return failed;
}
