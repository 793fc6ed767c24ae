#include "tui/layout.h"

#include <string.h>

/* Boxes: one row of content costs three rows with the borders. */
enum { BORDER = 2, BOX_MIN = 3, CHART_MIN = 3, HOST_CHARTS_MIN = 10, BARS = 2, LEGEND = 2,
       HOST_ALWAYS_H = 40, HOST_ALWAYS_W = 120 };

static struct rect rect_make(int y, int x, int h, int w)
{
    return (struct rect){.y = y, .x = x, .h = h > 0 ? h : 0, .w = w > 0 ? w : 0};
}

static int imin(int a, int b)
{
    return a < b ? a : b;
}

static int imax(int a, int b)
{
    return a > b ? a : b;
}

int tui_cpu_rows_needed(size_t ncores, int id_width, int w)
{
    if (ncores == 0)
        return 1;
    /* keep in step with tui_cpu_cores (widgets.c) */
    int cellmin = imax(id_width, 1) + 1 + 1 + 4 + 5;
    int cols = (w + 2) / (cellmin + 2);
    if (cols < 1)
        cols = 1;
    size_t rows = (ncores + (size_t)cols - 1) / (size_t)cols;
    return rows > 100000 ? 100000 : (int)rows;
}

/* Rows of a chart at the least. */
static int chart_min(const struct tui_layout_want *want, int i)
{
    return want->chart_fixed[i] > 0 ? want->chart_fixed[i] : CHART_MIN;
}

/* Left column: the CPU panel as tall as its cores need, the charts below,
 * and the host charts under them when host (the right column had no room). */
static void left_column(struct tui_layout *l, struct rect c, const struct tui_layout_want *want,
                        bool host, bool force_host)
{
    int need = tui_cpu_rows_needed(want->ncores, want->cpu_id_width, c.w - BORDER) + BORDER;
    int cap = imax(BOX_MIN, c.h * 3 / 5);
    int cpu = imin(need, cap);
    int rest = c.h - cpu;
    int n = imin(imax(want->ncharts, 0), TUI_CHARTS_MAX);
    /* drop what does not fit: the host charts first unless they must stay,
     * then the GPU charts from the last */
    for (;;) {
        int mins = host ? 2 * CHART_MIN + LEGEND : 0;
        for (int i = 0; i < n; i++)
            mins += chart_min(want, i);
        if (mins <= rest)
            break;
        if (host && (!force_host || n == 0))
            host = false;
        else
            n--;
    }
    if (n <= 0 && !host) { /* no room for a chart: the cores take the column */
        n = 0;
        cpu = c.h;
        rest = 0;
    }
    l->cpu = rect_make(c.y, c.x, cpu, c.w);
    l->ncharts = n;
    /* each chart its minimum, the rows left to the charts of data */
    int h[TUI_CHARTS_MAX + 2], nflex = 0, left = rest - (host ? LEGEND : 0);
    int total = n + (host ? 2 : 0);
    for (int i = 0; i < total; i++) {
        bool fixed = i < n && want->chart_fixed[i] > 0;
        h[i] = i < n ? chart_min(want, i) : CHART_MIN;
        left -= h[i];
        nflex += !fixed;
    }
    for (int i = 0, k = 0; i < total && left > 0; i++) {
        bool fixed = i < n && want->chart_fixed[i] > 0;
        if (nflex > 0 && fixed)
            continue;
        int share = nflex > 0 ? nflex : total;
        int give = left / (share - k); /* even split, the remainder to the last ones */
        h[i] += give;
        left -= give;
        k++;
    }
    int y = c.y + cpu;
    for (int i = 0; i < n; i++) {
        l->chart[i] = rect_make(y, c.x, h[i], c.w);
        y += h[i];
    }
    if (host) {
        l->host_charts = l->host_left = true;
        l->cpu_total = rect_make(y, c.x, h[n], c.w);
        y += h[n];
        l->legend = rect_make(y, c.x, LEGEND, c.w);
        y += LEGEND;
        l->ram = rect_make(y, c.x, h[n + 1], c.w);
    }
}

/* Right column: devices, detail, processes, then the host's bars and charts. */
static void right_column(struct tui_layout *l, struct rect c, const struct tui_layout_want *want)
{
    int bars = c.h >= BOX_MIN * 3 + BARS ? BARS : 0;
    int avail = c.h - bars;
    int dev_want = imax(want->dev_rows, 1) + BORDER;
    int key = imax(want->detail_key, 1) + BORDER;
    int full = imax(want->detail_full, want->detail_key) + BORDER;
    /* the header and the rows there are (one for "No GPU processes"), up to 3 */
    int proc_min = 1 + imax(1, imin(want->proc_rows, TUI_PROC_ROWS_MIN)) + BORDER;
    int proc_want = imax(1 + want->proc_rows + BORDER, proc_min);

    int dev = BOX_MIN, det = key, procs = proc_min;
    /* not even the minimums: the detail panel gives way, then the processes */
    if (dev + det + procs > avail)
        det = imax(avail - dev - procs, 0);
    if (det > 0 && det < BOX_MIN)
        det = 0;
    if (dev + det + procs > avail)
        procs = imax(avail - dev, BOX_MIN);
    if (dev + det + procs > avail) { /* only the device list */
        procs = 0;
        dev = avail;
    }
    int extra = avail - dev - det - procs;
    int give;
    if (extra > 0) { /* the device rows, up to half of the column */
        give = imin(extra, imax(imin(dev_want, avail / 2) - dev, 0));
        dev += give;
        extra -= give;
    }
    if (det > 0 && extra > 0) { /* the whole detail panel */
        give = imin(extra, full - det);
        det += give;
        extra -= give;
    }
    if (extra > 0) { /* every device row */
        give = imin(extra, dev_want - dev);
        dev += give;
        extra -= give;
    }
    if (extra > 0 && procs > 0) { /* every process row */
        give = imin(extra, proc_want - procs);
        procs += give;
        extra -= give;
    }
    l->host_charts = extra >= HOST_CHARTS_MIN;
    int host = l->host_charts ? extra : 0;
    if (!l->host_charts) { /* what is left lengthens the list below */
        if (procs > 0)
            procs += extra;
        else
            dev += extra;
    }
    l->detail = det > 0;
    int y = c.y;
    l->devices = rect_make(y, c.x, dev, c.w);
    y += dev;
    l->detail_r = rect_make(y, c.x, det, c.w);
    y += det;
    l->procs = rect_make(y, c.x, procs, c.w);
    y += procs;
    if (l->host_charts) {
        /* CPU total 40 %, the legend 2 rows, the RAM chart the rest */
        int legend = LEGEND;
        int cpu = imax(BOX_MIN, (host - legend) * 2 / 5);
        l->cpu_total = rect_make(y, c.x, cpu, c.w);
        y += cpu;
        l->mem_bars = rect_make(y, c.x, bars, c.w);
        y += bars;
        l->legend = rect_make(y, c.x, legend, c.w);
        y += legend;
        l->ram = rect_make(y, c.x, host - cpu - legend, c.w);
    } else {
        l->mem_bars = rect_make(y, c.x, bars, c.w);
    }
}

void tui_layout_compute(struct tui_layout *l, int h, int w, const struct tui_layout_want *want)
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
    int lw = w >= 160 ? w / 2 : w * 2 / 5;
    right_column(l, rect_make(main_y, lw, main_h, w - lw), want);
    left_column(l, rect_make(main_y, 0, main_h, lw), want, !l->host_charts,
                h >= HOST_ALWAYS_H && w >= HOST_ALWAYS_W);
}
