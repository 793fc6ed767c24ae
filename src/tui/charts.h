/*
 * charts.h — the bottom half of the screen: the selected device's charts
 * and the host's (charts.c), drawn by panels.c.
 */
#ifndef MIGMON_TUI_CHARTS_H
#define MIGMON_TUI_CHARTS_H

#include "tui/view.h"

/* The GPU charts of one draw: what each shows and, for one with nothing to
 * draw, its reason and the rows it takes. */
enum tui_chart_kind {
    TC_GPU_UTIL = 0, TC_MEM_BW, TC_VRAM, TC_PCIE, TC_TEMP, TC_POWER, TC_CLK_SM, TC_CLK_MEM,
    TC_COUNT
};
struct tui_chart_plan {
    int n;
    enum tui_chart_kind kind[TUI_CHARTS_MAX];
    const char *why[TUI_CHARTS_MAX]; /* N/A with nothing in the window: why; else NULL */
    int same_as[TUI_CHARTS_MAX];     /* the chart above with the same reason, or -1 */
    int rows[TUI_CHARTS_MAX];        /* rows of an N/A chart, borders included; 0 data */
};

/* Which GPU charts the selected device gets, in order, and how tall the
 * ones that only say why they are N/A are, for a column width columns
 * wide (before the layout is computed: the rows go into its want). */
void tui_plan_gpu_charts(const struct tui_view *v, int width, struct tui_chart_plan *p);

/* the GPU charts of plan p (bottom left) and the host charts (bottom right,
 * or under the GPU charts: v->lay.host_left) */
void tui_draw_gpu_charts(WINDOW *win, const struct tui_view *v, const struct tui_chart_plan *p);
void tui_draw_host_charts(WINDOW *win, const struct tui_view *v);

#endif
