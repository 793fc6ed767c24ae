/*
 * charts.h — the bottom half of the screen: the selected device's charts
 * and the host's (charts.c), drawn by panels.c.
 */
#ifndef MIGMON_TUI_CHARTS_H
#define MIGMON_TUI_CHARTS_H

#include "tui/panels.h"

/* the GPU charts (bottom left) and the host charts (bottom right) */
void tui_draw_gpu_charts(WINDOW *win, const struct tui_view *v);
void tui_draw_host_charts(WINDOW *win, const struct tui_view *v);

#endif
