/*
 * layout.h — where each panel goes for a terminal size.
 *
 * Pure arithmetic (no curses calls), so the degradation rules are unit
 * tested: the seed README's proportions ("레이아웃 계층 구조": top 45 % /
 * bottom 55 %, CPU | GPU halves, devices 20 % / detail 50 % / processes 30 %,
 * GPU charts 25 % each or 33 % without PCIe, CPU total 40 %) with minimum
 * sizes; when the height runs out the charts go first, then the detail
 * panel; below TUI_MIN_W x TUI_MIN_H only a "terminal too small" message.
 * Header and footer are one line each (the seed's boxed 3-line versions
 * cost six rows of an 80x24 terminal).
 */
#ifndef MIGMON_TUI_LAYOUT_H
#define MIGMON_TUI_LAYOUT_H

#include <stdbool.h>

#include "tui/widgets.h"

#define TUI_MIN_W 40
#define TUI_MIN_H 12

struct tui_layout {
    int h, w;
    bool too_small;
    bool charts; /* bottom half shown */
    bool detail; /* detail panel shown */
    bool pcie;   /* PCIe chart shown */
    struct rect header, footer;
    struct rect cpu, devices, detail_r, procs;
    struct rect gpu_util, mem_ctl, vram, pcie_r;
    struct rect cpu_total, mem_bars, legend, ram;
};

/* pcie: the selected device has PCIe throughput data; ndevices: rows the
 * device list would like (it gets between 20 % and 30 % of the GPU panel —
 * the seed's fixed 20 % leaves one row for a 4-device MIG GPU at 40 lines). */
void tui_layout_compute(struct tui_layout *l, int h, int w, bool pcie, int ndevices);

#endif
