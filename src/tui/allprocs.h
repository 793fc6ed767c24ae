/*
 * allprocs.h — the "All processes" view (key a): every GPU process of every
 * GPU and MIG device in one list, in the place of the device list, the
 * detail and the process panels; the CPU panel, the charts and the memory
 * bars stay. The list is proclist.c's (each process once, the MIG device
 * kept over its parent); sorting (s S r), filtering (/), the tree (t),
 * the cursor, the mouse, the process popup (Enter) and signals (k) are the
 * process list's own (prockeys.h), on v->plines (laid out by
 * tui_view_sort_procs). The charts follow the device of the line under
 * the cursor.
 */
#ifndef MIGMON_TUI_ALLPROCS_H
#define MIGMON_TUI_ALLPROCS_H

#include <stdbool.h>

#include "tui/view.h"

/* Key a: into the view or back to the device list (the device of the
 * process the cursor was on stays selected). */
void tui_allprocs_toggle(struct tui_view *v);
/* The line of the list at window row y, column x (as last drawn), or -1. */
long tui_allprocs_line_at(const struct tui_view *v, int y, int x);
/* The footer's keys in the view. */
const char *tui_allprocs_footer(bool utf8);
/* The view's panel. */
void tui_draw_allprocs(WINDOW *win, struct tui_view *v);

#endif
