/* test_theme.c — NO_COLOR parsing, locale detection, glyph sets, role
 * thresholds and the colour pairs/attributes set up for 256-, 8- and
 * no-colour terminals (tui/theme.c). Terminals are real terminfo entries
 * driven by newterm() on /dev/null. */
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

#include "tui/theme.h"

static SCREEN *scr;
static FILE *fout, *fin;

static void term_open(const char *term)
{
    setlocale(LC_ALL, "C.UTF-8");
    setenv("TERM", term, 1);
    setenv("LINES", "24", 1);
    setenv("COLUMNS", "80", 1);
    fout = fopen("/dev/null", "w");
    fin = fopen("/dev/null", "r");
    assert_non_null(fout);
    assert_non_null(fin);
    scr = newterm(term, fout, fin);
    if (!scr)
        fail_msg("newterm(%s) failed: is its terminfo entry installed?", term);
    set_term(scr);
}

static void term_close(void)
{
    endwin();
    delscreen(scr);
    scr = NULL;
    fclose(fout);
    fclose(fin);
}

static void assert_pair(const struct tui_theme *t, enum tui_role r, short fg, short bg)
{
    short f = 0, b = 0;
    assert_int_not_equal(t->pair[r], 0);
    assert_int_equal(pair_content(t->pair[r], &f, &b), OK);
    if (f != fg || b != bg)
        fail_msg("role %d: pair %d is (%d, %d), expected (%d, %d)", (int)r, t->pair[r], f, b,
                 fg, bg);
    /* attr carries the same pair */
    assert_int_equal(PAIR_NUMBER(t->attr[r]), t->pair[r]);
}

static attr_t plain(const struct tui_theme *t, enum tui_role r)
{
    return t->attr[r] & ~A_COLOR;
}

static void test_no_color_env(void **state)
{
    (void)state;
    assert_true(tui_color_wanted(false, NULL));  /* unset */
    assert_true(tui_color_wanted(false, ""));    /* set but empty: ignored */
    assert_false(tui_color_wanted(false, "1"));  /* any non-empty value */
    assert_false(tui_color_wanted(false, "0"));  /* even "0" (no-color.org) */
    assert_false(tui_color_wanted(true, NULL));  /* --no-color */
    assert_false(tui_color_wanted(true, ""));
}

static void test_locale_utf8(void **state)
{
    (void)state;
    assert_non_null(setlocale(LC_ALL, "C.UTF-8"));
    assert_true(tui_locale_utf8());
    assert_non_null(setlocale(LC_ALL, "C"));
    assert_false(tui_locale_utf8());
    setlocale(LC_ALL, "C.UTF-8");
}

static void test_glyphs_utf8(void **state)
{
    (void)state;
    struct tui_glyphs g;
    tui_glyphs_init(&g, true);
    assert_true(g.utf8);
    assert_int_equal(g.spark[0], L' ');
    for (int i = 1; i <= 8; i++)
        assert_int_equal(g.spark[i], 0x2580 + i); /* ▁ .. █ */
    assert_int_equal(g.bar_on, 0x25AE);
    assert_int_equal(g.bar_off, 0x25AF);
    assert_int_equal(g.shade, 0x2592);
    assert_int_equal(g.hline, 0x2500);
    assert_int_equal(g.vline, 0x2502);
    assert_int_equal(g.ul, 0x250C);
    assert_int_equal(g.lr, 0x2518);
    assert_int_equal(g.ltee, 0x251C);
    assert_int_equal(g.btee, 0x2534);
    assert_string_equal(g.deg, "°");
    assert_string_equal(g.down, "↓");
    assert_string_equal(g.cross, "✕");
    assert_string_equal(g.ellipsis, "…");
    assert_string_equal(g.sel, "▶");
}

static void test_glyphs_ascii(void **state)
{
    (void)state;
    struct tui_glyphs g;
    tui_glyphs_init(&g, false);
    assert_false(g.utf8);
    const char *lv = " .,:-=+*#";
    for (int i = 0; i <= 8; i++)
        assert_int_equal(g.spark[i], (wchar_t)lv[i]);
    assert_int_equal(g.bar_on, L'#');
    assert_int_equal(g.bar_off, L'.');
    assert_int_equal(g.shade, L':');
    assert_int_equal(g.hline, L'-');
    assert_int_equal(g.vline, L'|');
    const wchar_t corners[] = {g.ul, g.ur, g.ll, g.lr, g.ltee, g.rtee, g.ttee, g.btee};
    for (size_t i = 0; i < sizeof(corners) / sizeof(corners[0]); i++)
        assert_int_equal(corners[i], L'+');
    /* every string is pure ASCII */
    const char *strs[] = {g.deg, g.down, g.cross, g.ellipsis, g.sel};
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        for (const char *p = strs[i]; *p; p++)
            assert_true((unsigned char)*p < 0x80);
    assert_string_equal(g.deg, "");
    assert_string_equal(g.down, "v");
    assert_string_equal(g.cross, "x");
    /* the cut marker is no value marker: "~" estimate, "*" carried */
    assert_string_equal(g.ellipsis, ">");
    assert_string_equal(g.sel, ">");
}

static void test_role_thresholds(void **state)
{
    (void)state;
    assert_int_equal(tui_role_load(0), R_GOOD);
    assert_int_equal(tui_role_load(49.9), R_GOOD);
    assert_int_equal(tui_role_load(50), R_WARN);
    assert_int_equal(tui_role_load(79.9), R_WARN);
    assert_int_equal(tui_role_load(80), R_ALARM);
    assert_int_equal(tui_role_load(100), R_ALARM);

    assert_int_equal(tui_role_vram(69.9), R_GOOD);
    assert_int_equal(tui_role_vram(70), R_WARN);
    assert_int_equal(tui_role_vram(89.9), R_WARN);
    assert_int_equal(tui_role_vram(90), R_ALARM);

    assert_int_equal(tui_role_temp(59), R_GOOD);
    assert_int_equal(tui_role_temp(60), R_WARN);
    assert_int_equal(tui_role_temp(79), R_WARN);
    assert_int_equal(tui_role_temp(80), R_ALARM);

    assert_int_equal(tui_role_swap(0), R_FREE);
    assert_int_equal(tui_role_swap(19.9), R_FREE);
    assert_int_equal(tui_role_swap(20), R_WARN);
    assert_int_equal(tui_role_swap(49.9), R_WARN);
    assert_int_equal(tui_role_swap(50), R_ALARM);

    assert_int_equal(tui_role_pstate(0), R_GOOD);
    assert_int_equal(tui_role_pstate(1), R_WARN);
    assert_int_equal(tui_role_pstate(4), R_WARN);
    assert_int_equal(tui_role_pstate(5), R_ALARM);
    assert_int_equal(tui_role_pstate(12), R_ALARM);
    assert_int_equal(tui_role_pstate(-1), R_FREE); /* unknown */

    assert_int_equal(tui_role_load(NAN), R_FREE);
}

/* 256 colours: bright colours by index, the terminal's own background. */
static void test_theme_256(void **state)
{
    (void)state;
    term_open("xterm-256color");
    struct tui_theme t;
    tui_theme_init(&t, true, true);
    assert_true(t.color);
    assert_int_equal(t.ncolors, 256);
    assert_true(t.g.utf8);
    assert_int_equal(t.pair[R_NORMAL], 0);
    assert_int_equal(t.attr[R_NORMAL], 0);

    assert_pair(&t, R_HEADER, COLOR_CYAN, -1);
    assert_true(plain(&t, R_HEADER) & A_BOLD);
    assert_pair(&t, R_GOOD, COLOR_GREEN, -1);
    assert_pair(&t, R_WARN, COLOR_YELLOW, -1);
    assert_pair(&t, R_ALARM, COLOR_RED, -1);
    assert_int_equal(plain(&t, R_ALARM), A_BOLD);
    assert_pair(&t, R_GPU, COLOR_GREEN, -1);
    assert_pair(&t, R_MEMCTL, COLOR_BLUE, -1);
    assert_pair(&t, R_VRAM, COLOR_MAGENTA, -1);
    assert_pair(&t, R_PCIE, 14, -1); /* LightCyan */
    assert_int_equal(plain(&t, R_PCIE), 0);
    assert_pair(&t, R_CPU, COLOR_CYAN, -1);
    assert_pair(&t, R_CACHED, COLOR_BLUE, -1);
    assert_pair(&t, R_FREE, 8, -1); /* DarkGray */
    assert_int_equal(plain(&t, R_FREE), 0);
    assert_pair(&t, R_VALUE, 15, -1); /* White */
    assert_pair(&t, R_SELECTED, COLOR_GREEN, -1);
    assert_true(plain(&t, R_SELECTED) & A_BOLD);
    /* used over cached: the used colour on the cached blue */
    assert_pair(&t, R_GOOD_ON_CACHED, COLOR_GREEN, COLOR_BLUE);
    assert_pair(&t, R_WARN_ON_CACHED, COLOR_YELLOW, COLOR_BLUE);
    assert_pair(&t, R_ALARM_ON_CACHED, COLOR_RED, COLOR_BLUE);
    /* every role has its own pair */
    for (int r = 1; r < R_COUNT; r++)
        for (int q = r + 1; q < R_COUNT; q++)
            assert_int_not_equal(t.pair[r], t.pair[q]);
    term_close();
}

/* 8 colours: bright colours approximated with attributes. */
static void test_theme_8(void **state)
{
    (void)state;
    term_open("xterm");
    struct tui_theme t;
    tui_theme_init(&t, true, false);
    assert_true(t.color);
    assert_int_equal(t.ncolors, 8);
    assert_false(t.g.utf8);
    assert_pair(&t, R_PCIE, COLOR_CYAN, -1);
    assert_int_equal(plain(&t, R_PCIE), A_BOLD);
    assert_pair(&t, R_FREE, -1, -1); /* default foreground, dimmed */
    assert_int_equal(plain(&t, R_FREE), A_DIM);
    assert_pair(&t, R_VALUE, COLOR_WHITE, -1);
    assert_int_equal(plain(&t, R_VALUE), A_BOLD);
    assert_pair(&t, R_GOOD, COLOR_GREEN, -1);
    assert_pair(&t, R_GOOD_ON_CACHED, COLOR_GREEN, COLOR_BLUE);
    term_close();
}

static void assert_mono(const struct tui_theme *t)
{
    assert_false(t->color);
    assert_int_equal(t->ncolors, 0);
    for (int r = 0; r < R_COUNT; r++)
        assert_int_equal(t->pair[r], 0);
    assert_int_equal(t->attr[R_NORMAL], 0);
    assert_int_equal(t->attr[R_ALARM], A_BOLD);
    assert_int_equal(t->attr[R_ALARM_ON_CACHED], A_BOLD);
    assert_int_equal(t->attr[R_HEADER], A_BOLD);
    assert_int_equal(t->attr[R_FREE], A_DIM);
    assert_int_equal(t->attr[R_SELECTED], A_REVERSE | A_BOLD);
    assert_int_equal(t->attr[R_GOOD], 0);
    assert_int_equal(t->attr[R_CACHED], 0);
}

/* --no-color / NO_COLOR on a colour terminal: attributes only. */
static void test_theme_no_color(void **state)
{
    (void)state;
    term_open("xterm-256color");
    struct tui_theme t;
    tui_theme_init(&t, tui_color_wanted(false, "1"), true);
    assert_mono(&t);
    term_close();
}

/* A terminal without colours, colour wanted: attributes only. */
static void test_theme_mono_terminal(void **state)
{
    (void)state;
    term_open("xterm-mono");
    assert_false(has_colors());
    struct tui_theme t;
    tui_theme_init(&t, true, true);
    assert_mono(&t);
    term_close();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_color_env),
        cmocka_unit_test(test_locale_utf8),
        cmocka_unit_test(test_glyphs_utf8),
        cmocka_unit_test(test_glyphs_ascii),
        cmocka_unit_test(test_role_thresholds),
        cmocka_unit_test(test_theme_256),
        cmocka_unit_test(test_theme_8),
        cmocka_unit_test(test_theme_no_color),
        cmocka_unit_test(test_theme_mono_terminal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
