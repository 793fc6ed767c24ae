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

#endif
