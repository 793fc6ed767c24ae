/*
 * layout.h — where each panel goes for a terminal size and for what there
 * is to show.
 *
 * Pure arithmetic (no curses calls), so the sizing rules are unit tested.
 * The seed README's arrangement is kept: CPU cores top left, the GPU panel
 * (devices, detail, processes) top right, the selected device's charts
 * bottom left, the host's charts bottom right. The sizes come from the
 * content instead of fixed shares (docs/tui.md, "Sizing rules"):
 *
 *  - the two columns are laid out independently; the left one is 2/5 of
 *    the width below 160 columns (the GPU side needs the room), half above;
 *  - left: the CPU panel is as tall as its cores need (capped at 3/5 of
 *    the height; the rest says "+N more"), the charts share what is left,
 *    each at least 3 rows, as many as fit;
 *  - right: every panel first gets its minimum (devices 1 row, the detail
 *    panel's key lines, a process header and 3 rows, the RAM and swap
 *    bars), then the rest goes to the whole detail panel, to the device
 *    rows, to the process rows, and when at least 10 rows remain, to the
 *    host charts (CPU total, legend, RAM); what is still left lengthens the
 *    process list. When even the minimums do not fit, the detail panel
 *    shrinks to one line, then goes. The process panel's minimum is the
 *    rows its processes take, up to 3: an empty row is not kept from the
 *    detail panel;
 *  - a GPU chart whose value is N/A with nothing in its window is only as
 *    tall as its reason (chart_fixed); the charts of data share the rest;
 *  - the host charts are never dropped at 120x40 or larger: when the right
 *    column has no room for them they go under the GPU charts, which give
 *    way from the last; below that size they go there only when every GPU
 *    chart still fits.
 *
 * Header and footer are one line each. Below TUI_MIN_W x TUI_MIN_H only a
 * "terminal too small" message is drawn.
 */
#ifndef MIGMON_TUI_LAYOUT_H
#define MIGMON_TUI_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "tui/rect.h"

#define TUI_MIN_W 40
#define TUI_MIN_H 12
#define TUI_CHARTS_MAX 6
/* Process rows the right column keeps below the header at the least. */
#define TUI_PROC_ROWS_MIN 3

/* What there is to show, in rows of content (borders excluded). */
struct tui_layout_want {
    size_t ncores;    /* host CPU cores */
    int cpu_id_width; /* digits of the largest core id (1 when unknown) */
    int dev_rows;     /* device rows with every instance expanded */
    int detail_key;   /* the detail panel's key lines (util, VRAM, temp+power, why) */
    int detail_full;  /* every line of the detail panel at the right column's width */
    int proc_rows;    /* process rows of the selected device */
    int ncharts;      /* GPU charts wanted, in the order they are dropped last to first */
    /* Rows (borders included) of a chart that only says why its value is
     * N/A; 0: a chart of data, which shares what is left. */
    int chart_fixed[TUI_CHARTS_MAX];
};

struct tui_layout {
    int h, w;
    bool too_small;
    bool detail;    /* detail panel shown */
    bool host_charts; /* CPU total, legend and RAM chart shown */
    bool host_left;   /* ... and placed under the GPU charts (the right column is full) */
    int ncharts;    /* GPU charts shown, 0..TUI_CHARTS_MAX */
    struct rect header, footer;
    struct rect cpu, devices, detail_r, procs;
    struct rect chart[TUI_CHARTS_MAX];
    struct rect cpu_total, mem_bars, legend, ram;
};

void tui_layout_compute(struct tui_layout *l, int h, int w, const struct tui_layout_want *want);

/* Rows the CPU core grid needs for ncores cores in an inner width w (the
 * arithmetic of tui_cpu_cores: cells of id, a bar of at least 5 and the
 * percentage, 2 columns apart). */
int tui_cpu_rows_needed(size_t ncores, int id_width, int w);

#endif
