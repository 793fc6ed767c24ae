/*
 * theme.h — colours and glyphs of the interactive UI.
 *
 * Everything the UI draws asks for a *role* ("a value in the warning range",
 * "cached memory") and a glyph set, never for a raw colour or character, so
 * that 256-, 16- and 8-colour terminals, NO_COLOR / --no-color and non-UTF-8
 * locales are handled in this one place.
 *
 * Colours follow the seed README's "색상 코딩" table. Without colour the
 * roles fall back to attributes (bold for alarms, dim for absent/secondary)
 * and the RAM chart tells used from cached by glyph.
 */
#ifndef MIGMON_TUI_THEME_H
#define MIGMON_TUI_THEME_H

#include <stdbool.h>
#include <wchar.h>

#define NCURSES_WIDECHAR 1
#include <curses.h>

enum tui_role {
    R_NORMAL = 0,
    R_HEADER,   /* Cyan + bold */
    R_TITLE,    /* panel titles */
    R_GOOD,     /* (not R_OK: unistd.h owns that name) Green: low load, "None" throttle, ECC 0 */
    R_WARN,     /* Yellow */
    R_ALARM,    /* Red + bold */
    R_GPU,      /* GPU util sparkline: green */
    R_MEMCTL,   /* Mem Ctrl sparkline: blue */
    R_VRAM,     /* VRAM sparkline, encoder/decoder: magenta */
    R_PCIE,     /* PCIe: light cyan */
    R_CPU,      /* CPU total sparkline, clocks: cyan */
    R_CACHED,   /* cached memory: blue */
    R_FREE,     /* free memory, N/A values, hints: dark grey */
    R_VALUE,    /* available memory: white */
    R_SELECTED, /* selected device: green + bold */
    /* used-memory colours drawn over a cached (blue) background: the
     * fractional top cell of a RAM chart column (seed v0.3.9) */
    R_GOOD_ON_CACHED,
    R_WARN_ON_CACHED,
    R_ALARM_ON_CACHED,
    R_COUNT
};

struct tui_glyphs {
    bool utf8;
    wchar_t spark[9];     /* 0/8 .. 8/8 of a cell, bottom-aligned; [0] is blank */
    wchar_t bar_on, bar_off; /* ▮ ▯ / # . */
    wchar_t shade;        /* cached memory when there is no colour: ▒ / : */
    wchar_t hline, vline, ul, ur, ll, lr, ltee, rtee, ttee, btee;
    const char *deg;      /* "°" or "" */
    const char *down;     /* "↓" or "v": slowdown temperature */
    const char *cross;    /* "✕" or "x": shutdown temperature */
    const char *ellipsis; /* "…" or ">": never a value marker ("~" estimate, "*" carried) */
    const char *sel;      /* "▶" or ">": selected device marker */
    const char *fold_open, *fold_closed; /* "▾" "▸" / "-" "+": a GPU's instances shown or folded */
    const char *bar_on_s, *bar_off_s, *shade_s; /* bar_on, bar_off, shade as UTF-8 */
    const char *tree_mid, *tree_last;    /* "├" "└" / "|" "`": an instance under its GPU */
    const char *tree_vert, *tree_hline;  /* "│" "─" / "|" "-": the process tree's guides */
    const char *sort_down, *sort_up;     /* "▼" "▲" / "v" "^": the column a list is sorted by */
    const char *cut_left;                /* "…" / "<": the start of a text scrolled off */
    const char *sum;      /* "Σ" or "S": a GPU's figure summed over its MIG instances */
};

struct tui_theme {
    bool color;  /* colours in use (terminal has them and not disabled) */
    int ncolors; /* COLORS when color, else 0 */
    attr_t attr[R_COUNT];  /* attributes for each role (pair included) */
    short pair[R_COUNT];   /* colour pair for each role; 0 = default */
    struct tui_glyphs g;
};

/* Decide whether the locale can show UTF-8 (nl_langinfo(CODESET)). Call
 * after setlocale(LC_ALL, ""). */
bool tui_locale_utf8(void);
/* Colour allowed unless no_color_flag or NO_COLOR is set to a non-empty
 * value (no-color.org). env: the value of NO_COLOR (NULL when unset). */
bool tui_color_wanted(bool no_color_flag, const char *no_color_env);
/* Fill t for the current terminal. Must run after initscr()/newterm(): it
 * calls has_colors(), start_color() and init_pair() when want_color. */
void tui_theme_init(struct tui_theme *t, bool want_color, bool utf8);
/* Glyph sets without touching the terminal (also used by tests). */
void tui_glyphs_init(struct tui_glyphs *g, bool utf8);

/* Warning and alarm thresholds of the roles below (the configuration
 * file's [tui] keys); the seed's by default. Set before drawing. */
struct tui_thresholds {
    double load_warn, load_alarm; /* CPU and RAM used % */
    double vram_warn, vram_alarm; /* VRAM used % */
    double temp_warn, temp_alarm; /* °C */
};
void tui_set_thresholds(const struct tui_thresholds *t);

/* Role for a percentage with the seed's thresholds (or the configured ones):
 * load (CPU, RAM used): <50 ok, <80 warn, else alarm;
 * VRAM %: <70 ok, <90 warn, else alarm; temperature °C: <60, <80;
 * swap %: <20 free (dark grey), <50 warn, else alarm. */
enum tui_role tui_role_load(double pct);
enum tui_role tui_role_vram(double pct);
enum tui_role tui_role_temp(double c);
enum tui_role tui_role_swap(double pct);
/* P0 ok, P1-P4 warn, P5+ alarm. */
enum tui_role tui_role_pstate(int p);

#endif
