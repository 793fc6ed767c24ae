/*
 * detail.h — the detail panel (detail.c): the selected device's values as
 * lines in order of importance, and its GPM page (key g). The lines are
 * built before the layout, which asks how many rows they take, and drawn
 * after it (panels.c).
 */
#ifndef MIGMON_TUI_DETAIL_H
#define MIGMON_TUI_DETAIL_H

#include "tui/fmt.h"

/* The detail panel as lines in order of importance: what an operator
 * looks at first (stall or loss, utilisation, VRAM, temperature and power,
 * why a value is missing), then identity and the rest. A short panel shows
 * the first lines; a wide one (>= 90 columns) pairs the pairable lines. */
struct tui_dline {
    struct piece p[16];
    int n;
    bool pair;
    unsigned opt; /* pieces (bits by index) left out when the line is too wide */
    bool mark;    /* the last piece is a "[GPU n]" marker: never cut */
};

/* The lines of one draw; their strings live in buf. */
struct tui_dlines {
    struct tui_dline l[40];
    int n, key;
    char buf[8192];
    size_t used;
};

/* The lines of device d into L; L->key: how many are the key lines
 * (stall, utilisation, VRAM, temperature and power, why N/A, and the
 * health verdict when it is warning or action). */
void tui_detail_build(struct tui_dlines *L, const struct tui_view *v, const struct device *d);
/* Rows the first upto lines take at a panel width w. */
int tui_detail_rows(const struct tui_dlines *L, int upto, int w);
/* The panel in v->lay.detail_r: the lines of L, or the GPM page of the
 * selected device (v->gpm_page). */
void tui_draw_detail(WINDOW *win, struct tui_view *v, const struct tui_dlines *L);

#endif
