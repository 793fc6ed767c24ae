/*
 * charts.h — the bottom half of the screen: the selected device's charts
 * and the host's (charts.c), drawn by panels.c.
 */
#ifndef MIGMON_TUI_CHARTS_H
#define MIGMON_TUI_CHARTS_H

#include "tui/panels.h"

/* Which GPU charts the selected device gets, in order, and how tall the
 * ones that only say why they are N/A are, for a column width columns
 * wide (into v->cplan before the layout is computed). */
void tui_plan_gpu_charts(const struct tui_view *v, int width, struct tui_chart_plan *p);

/* the GPU charts (bottom left) and the host charts (bottom right, or under
 * the GPU charts: v->lay.host_left) */
void tui_draw_gpu_charts(WINDOW *win, const struct tui_view *v);
void tui_draw_host_charts(WINDOW *win, const struct tui_view *v);

#endif
