/*
 * panels.h — the screen of the interactive monitor, drawn from one snapshot
 * and the history rings into the view's layout. What the user chose
 * (selection, scroll, pause, popups) is the view's (view.h); tui.c owns the
 * loop and feeds the data.
 */
#ifndef MIGMON_TUI_PANELS_H
#define MIGMON_TUI_PANELS_H

#include "tui/view.h"

/* Draw everything into win (erase first). */
void tui_draw(WINDOW *win, struct tui_view *v);
/* The line of the process panel at window row y, column x (as last
 * drawn), or -1. */
long tui_procs_line_at(const struct tui_view *v, int y, int x);

#endif
