/*
 * prockeys.h — the keys of the process lists and the mouse (tui.c hands
 * them over; popups and the filter line take their keys first):
 *   Up/Down, PgUp/PgDn, Home/End  the cursor over the list's lines;
 *   Left/Right                    the commands scrolled sideways;
 *   Enter                         the process popup (its whole command
 *                                 line), a tree's slice folded, what a
 *                                 parent line is;
 *   k                             the signal prompt, for a GPU process of
 *                                 this host only (not a fleet's, nor a
 *                                 recording's);
 *   the wheel                     the cursor of the list under it (a
 *                                 process list, the device list);
 *   a click                       the device or the process line under
 *                                 it (a click on the process panel
 *                                 focuses it).
 */
#ifndef MIGMON_TUI_PROCKEYS_H
#define MIGMON_TUI_PROCKEYS_H

#include <stdbool.h>

#include "tui/view.h"

/* A key of a process list; false when it is not one. */
bool tui_proc_key(struct tui_view *v, int key);
/* A mouse event outside popups. */
void tui_mouse(struct tui_view *v, const MEVENT *ev);

#endif
