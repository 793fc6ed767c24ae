/*
 * theme.c — roles to colour pairs and attributes, glyph sets per locale.
 *
 * Colour pair n is used by role n (pair 0, the terminal's default, by
 * R_NORMAL), so a role's pair never changes with the terminal and tests can
 * read it back with pair_content().
 */
#include "tui/theme.h"

#include <langinfo.h>
#include <math.h>
#include <string.h>
#include <strings.h>

bool tui_locale_utf8(void)
{
    const char *cs = nl_langinfo(CODESET);
    return cs && (strcasecmp(cs, "UTF-8") == 0 || strcasecmp(cs, "utf8") == 0);
}

/* no-color.org: "when present and not an empty string" colour is off. */
bool tui_color_wanted(bool no_color_flag, const char *no_color_env)
{
    if (no_color_flag)
        return false;
    return !(no_color_env && no_color_env[0] != '\0');
}

void tui_glyphs_init(struct tui_glyphs *g, bool utf8)
{
    memset(g, 0, sizeof(*g));
    g->utf8 = utf8;
    if (utf8) {
        /* U+2581..U+2588: LOWER ONE EIGHTH BLOCK .. FULL BLOCK */
        g->spark[0] = L' ';
        for (int i = 1; i <= 8; i++)
            g->spark[i] = (wchar_t)(0x2580 + i);
        g->bar_on = 0x25AE;  /* ▮ */
        g->bar_off = 0x25AF; /* ▯ */
        g->shade = 0x2592;   /* ▒ */
        g->hline = 0x2500;
        g->vline = 0x2502;
        g->ul = 0x250C;
        g->ur = 0x2510;
        g->ll = 0x2514;
        g->lr = 0x2518;
        g->ltee = 0x251C;
        g->rtee = 0x2524;
        g->ttee = 0x252C;
        g->btee = 0x2534;
        g->deg = "\xc2\xb0";          /* ° */
        g->down = "\xe2\x86\x93";     /* ↓ */
        g->cross = "\xe2\x9c\x95";    /* ✕ */
        g->ellipsis = "\xe2\x80\xa6"; /* … */
        g->sel = "\xe2\x96\xb6";      /* ▶ */
        g->fold_open = "\xe2\x96\xbe";   /* ▾ */
        g->fold_closed = "\xe2\x96\xb8"; /* ▸ */
        g->tree_mid = "\xe2\x94\x9c";    /* ├ */
        g->tree_last = "\xe2\x94\x94";   /* └ */
        g->tree_vert = "\xe2\x94\x82";   /* │ */
        g->tree_hline = "\xe2\x94\x80";  /* ─ */
        g->sort_down = "\xe2\x96\xbc";   /* ▼ */
        g->sort_up = "\xe2\x96\xb2";     /* ▲ */
        g->cut_left = "\xe2\x80\xa6";    /* … */
        g->bar_on_s = "\xe2\x96\xae";    /* ▮ */
        g->bar_off_s = "\xe2\x96\xaf";   /* ▯ */
        g->shade_s = "\xe2\x96\x92";     /* ▒ */
        g->sum = "\xce\xa3";             /* Σ */
    } else {
        /* Nine levels, densest last, for terminals that cannot show blocks. */
        static const char ascii_spark[9] = {' ', '.', ',', ':', '-', '=', '+', '*', '#'};
        for (int i = 0; i < 9; i++)
            g->spark[i] = (wchar_t)ascii_spark[i];
        g->bar_on = L'#';
        g->bar_off = L'.';
        g->shade = L':';
        g->hline = L'-';
        g->vline = L'|';
        g->ul = g->ur = g->ll = g->lr = L'+';
        g->ltee = g->rtee = g->ttee = g->btee = L'+';
        g->deg = "";
        g->down = "v";
        g->cross = "x";
        g->ellipsis = ">"; /* "~" is the estimate marker; ">": more to the right, as vim */
        g->sel = ">";
        g->fold_open = "-";
        g->fold_closed = "+";
        g->tree_mid = "|";
        g->tree_last = "`";
        g->tree_vert = "|";
        g->tree_hline = "-";
        g->sort_down = "v";
        g->sort_up = "^";
        g->cut_left = "<";
        g->bar_on_s = "#";
        g->bar_off_s = ".";
        g->shade_s = ":";
        g->sum = "S";
    }
}

/* Attributes of each role without colour: only what tells things apart. */
static attr_t mono_attr(enum tui_role r)
{
    switch (r) {
    case R_HEADER:
    case R_TITLE:
    case R_ALARM:
    case R_ALARM_ON_CACHED:
        return A_BOLD;
    case R_FREE:
        return A_DIM;
    case R_SELECTED:
        return A_REVERSE | A_BOLD;
    default:
        return A_NORMAL;
    }
}

struct role_color {
    short fg, bg;
    attr_t attr;
};

/*
 * The seed's colour table. 16+ colour terminals get the bright colours by
 * index (LightCyan 14, DarkGray 8, White 15); 8-colour terminals approximate
 * them: light cyan = cyan + bold, white = white + bold, dark grey = the
 * default foreground dimmed (black + bold is invisible on terminals that do
 * not brighten bold, and on a black background).
 */
static struct role_color role_color(enum tui_role r, bool bright, short dflt_fg, short dflt_bg)
{
    short cyan_l = bright ? 14 : COLOR_CYAN;
    attr_t cyan_l_a = bright ? A_NORMAL : A_BOLD;
    short white = bright ? 15 : COLOR_WHITE;
    attr_t white_a = bright ? A_NORMAL : A_BOLD;
    short grey = bright ? 8 : dflt_fg;
    attr_t grey_a = bright ? A_NORMAL : A_DIM;

    switch (r) {
    case R_HEADER:
        return (struct role_color){COLOR_CYAN, dflt_bg, A_BOLD};
    case R_TITLE:
        return (struct role_color){dflt_fg, dflt_bg, A_BOLD};
    case R_GOOD:
    case R_GPU:
        return (struct role_color){COLOR_GREEN, dflt_bg, A_NORMAL};
    case R_WARN:
        return (struct role_color){COLOR_YELLOW, dflt_bg, A_NORMAL};
    case R_ALARM:
        return (struct role_color){COLOR_RED, dflt_bg, A_BOLD};
    case R_MEMCTL:
    case R_CACHED:
        return (struct role_color){COLOR_BLUE, dflt_bg, A_NORMAL};
    case R_VRAM:
        return (struct role_color){COLOR_MAGENTA, dflt_bg, A_NORMAL};
    case R_PCIE:
        return (struct role_color){cyan_l, dflt_bg, cyan_l_a};
    case R_CPU:
        return (struct role_color){COLOR_CYAN, dflt_bg, A_NORMAL};
    case R_FREE:
        return (struct role_color){grey, dflt_bg, grey_a};
    case R_VALUE:
        return (struct role_color){white, dflt_bg, white_a};
    case R_SELECTED:
        return (struct role_color){COLOR_GREEN, dflt_bg, A_BOLD};
    case R_GOOD_ON_CACHED:
        return (struct role_color){COLOR_GREEN, COLOR_BLUE, A_NORMAL};
    case R_WARN_ON_CACHED:
        return (struct role_color){COLOR_YELLOW, COLOR_BLUE, A_NORMAL};
    case R_ALARM_ON_CACHED:
        return (struct role_color){COLOR_RED, COLOR_BLUE, A_BOLD};
    default:
        return (struct role_color){dflt_fg, dflt_bg, A_NORMAL};
    }
}

void tui_theme_init(struct tui_theme *t, bool want_color, bool utf8)
{
    memset(t, 0, sizeof(*t));
    tui_glyphs_init(&t->g, utf8);

    bool color = want_color && has_colors() && start_color() == OK;
    /* Pairs 1 .. R_COUNT-1 are ours; a terminal with fewer has no usable
     * colour for us. */
    if (color && COLOR_PAIRS < R_COUNT)
        color = false;
    if (!color) {
        for (int r = 0; r < R_COUNT; r++)
            t->attr[r] = mono_attr((enum tui_role)r);
        return;
    }

    /* -1 keeps the terminal's own background (and foreground for plain
     * text); without use_default_colors() it is white on black. */
    short dflt_fg = -1, dflt_bg = -1;
    if (use_default_colors() != OK) {
        dflt_fg = COLOR_WHITE;
        dflt_bg = COLOR_BLACK;
    }
    t->color = true;
    t->ncolors = COLORS;
    bool bright = COLORS >= 16;
    for (int r = 1; r < R_COUNT; r++) {
        struct role_color c = role_color((enum tui_role)r, bright, dflt_fg, dflt_bg);
        init_pair((short)r, c.fg, c.bg);
        t->pair[r] = (short)r;
        t->attr[r] = c.attr | (attr_t)COLOR_PAIR(r);
    }
}

/* Set once at start (the configuration file), read by the UI thread. */
static struct tui_thresholds th = {50, 80, 70, 90, 60, 80};

void tui_set_thresholds(const struct tui_thresholds *t)
{
    th = *t;
}

/* NaN (a value that is present but not a number) shows as absent. */
enum tui_role tui_role_load(double pct)
{
    if (isnan(pct))
        return R_FREE;
    return pct < th.load_warn ? R_GOOD : pct < th.load_alarm ? R_WARN : R_ALARM;
}

enum tui_role tui_role_vram(double pct)
{
    if (isnan(pct))
        return R_FREE;
    return pct < th.vram_warn ? R_GOOD : pct < th.vram_alarm ? R_WARN : R_ALARM;
}

enum tui_role tui_role_temp(double c)
{
    if (isnan(c))
        return R_FREE;
    return c < th.temp_warn ? R_GOOD : c < th.temp_alarm ? R_WARN : R_ALARM;
}

enum tui_role tui_role_swap(double pct)
{
    if (isnan(pct))
        return R_FREE;
    return pct < 20 ? R_FREE : pct < 50 ? R_WARN : R_ALARM;
}

/* A negative P-state is "unknown". */
enum tui_role tui_role_pstate(int p)
{
    if (p < 0)
        return R_FREE;
    return p == 0 ? R_GOOD : p <= 4 ? R_WARN : R_ALARM;
}
