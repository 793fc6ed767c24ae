#include "tui/layout.h"

#include <string.h>

/* Minimum heights, borders included. */
enum { BOX_MIN = 3, TOP_MIN_FULL = 9, TOP_MIN_NODETAIL = 6, BOTTOM_MIN = 10 };

static struct rect rect_make(int y, int x, int h, int w)
{
    return (struct rect){.y = y, .x = x, .h = h > 0 ? h : 0, .w = w > 0 ? w : 0};
}

/* share of total in percent, rounded */
static int pct_of(int total, int pct)
{
    return (total * pct + 50) / 100;
}

static int imax(int a, int b)
{
    return a > b ? a : b;
}

/* Split the GPU panel (right half of the top) into devices / detail /
 * processes, keeping each box at least BOX_MIN rows. */
static void split_gpu_panel(struct tui_layout *l, struct rect g, int ndevices)
{
    if (l->detail) {
        int want = ndevices + 2, lo = pct_of(g.h, 20), hi = pct_of(g.h, 30);
        int dev = imax(BOX_MIN, want < lo ? lo : want > hi ? hi : want);
        int procs = imax(BOX_MIN, pct_of(g.h, 30));
        int det = g.h - dev - procs;
        /* detail keeps its minimum: taken from the device list, then from
         * the processes, never below their own minimum (top >= 9 = 3 x 3) */
        int give = BOX_MIN - det;
        if (give > 0 && dev > BOX_MIN) {
            int t = dev - BOX_MIN < give ? dev - BOX_MIN : give;
            dev -= t;
            give -= t;
        }
        if (give > 0)
            procs -= give;
        det = g.h - dev - procs;
        l->devices = rect_make(g.y, g.x, dev, g.w);
        l->detail_r = rect_make(g.y + dev, g.x, det, g.w);
        l->procs = rect_make(g.y + dev + det, g.x, procs, g.w);
    } else {
        int dev = imax(BOX_MIN, g.h / 2);
        l->devices = rect_make(g.y, g.x, dev, g.w);
        l->procs = rect_make(g.y + dev, g.x, g.h - dev, g.w);
    }
}

static void split_charts(struct tui_layout *l, struct rect b)
{
    int lw = b.w / 2, rw = b.w - lw;
    /* left: GPU charts */
    int n = l->pcie ? 4 : 3;
    int y = b.y, left = b.h;
    struct rect *slot[4] = {&l->gpu_util, &l->mem_ctl, &l->vram, &l->pcie_r};
    for (int i = 0; i < n; i++) {
        int hh = left / (n - i); /* even split, the remainder to the last ones */
        *slot[i] = rect_make(y, b.x, hh, lw);
        y += hh;
        left -= hh;
    }
    /* right: CPU total 40 %, RAM/SWP bars (2), legend (2), RAM chart (rest, min 3) */
    int x = b.x + lw;
    int cpu = imax(BOX_MIN, pct_of(b.h, 40));
    if (b.h - cpu - 4 < BOX_MIN)
        cpu = imax(BOX_MIN, b.h - 4 - BOX_MIN);
    l->cpu_total = rect_make(b.y, x, cpu, rw);
    l->mem_bars = rect_make(b.y + cpu, x, 2, rw);
    l->legend = rect_make(b.y + cpu + 2, x, 2, rw);
    l->ram = rect_make(b.y + cpu + 4, x, b.h - cpu - 4, rw);
}

void tui_layout_compute(struct tui_layout *l, int h, int w, bool pcie, int ndevices)
{
    memset(l, 0, sizeof(*l));
    l->h = h;
    l->w = w;
    if (h < TUI_MIN_H || w < TUI_MIN_W) {
        l->too_small = true;
        return;
    }
    l->header = rect_make(0, 0, 1, w);
    l->footer = rect_make(h - 1, 0, 1, w);
    int main_y = 1, main_h = h - 2;

    int top_h = pct_of(main_h, 45);
    int bottom_h = main_h - top_h;
    l->charts = top_h >= TOP_MIN_FULL && bottom_h >= BOTTOM_MIN;
    if (!l->charts)
        top_h = main_h;
    l->detail = top_h >= TOP_MIN_FULL;
    l->pcie = pcie && l->charts;

    int lw = w / 2, rw = w - lw;
    l->cpu = rect_make(main_y, 0, top_h, lw);
    split_gpu_panel(l, rect_make(main_y, lw, top_h, rw), ndevices);
    if (l->charts)
        split_charts(l, rect_make(main_y + top_h, 0, bottom_h, w));
}
