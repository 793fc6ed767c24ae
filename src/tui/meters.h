/*
 * meters.h — the host's meters: the CPU core grid and the memory bar,
 * drawn as widgets are (widgets.h): inside their rectangle only.
 */
#ifndef MIGMON_TUI_METERS_H
#define MIGMON_TUI_METERS_H

#include <stdbool.h>
#include <stddef.h>

#include "system/host.h"
#include "tui/rect.h"
#include "tui/theme.h"

/*
 * CPU cores sorted by load (highest first, cores without a value last, ties
 * by id), laid out in as many columns as r.w allows, each cell
 * "id ▮▮▮▯▯ pct%" coloured by tui_role_load; columns fill top to bottom.
 * When not all cores fit the last cell says "+N more".
 * Returns the number of cores drawn.
 */
size_t tui_cpu_cores(WINDOW *win, const struct tui_theme *t, struct rect r,
                     const struct host_core *cores, size_t ncores);

/*
 * One-row segmented bar: "LBL" then used (role by used %), cached (R_CACHED)
 * and free (R_FREE) cells, proportional to total, rounded so the three add
 * up to the bar's width. Any value none or total <= 0: the bar shows N/A.
 */
void tui_mem_bar(WINDOW *win, const struct tui_theme *t, struct rect r, const char *label,
                 struct metric used, struct metric cached, struct metric total, bool swap);

#endif
