/*
 * devices.h — the device list (devices.c), drawn by panels.c into the
 * view's layout.
 */
#ifndef MIGMON_TUI_DEVICES_H
#define MIGMON_TUI_DEVICES_H

#include "tui/view.h"

/* The list as the view shows it (v->drow, rebuilt for the panel's rows),
 * scrolled to keep the selection on screen (v->dev_scroll, v->dev_room). */
void tui_draw_devices(WINDOW *win, struct tui_view *v);

#endif
