/*
 * charts.c — the bottom half of the screen: GPU Util, Mem Ctrl, VRAM and
 * PCIe sparklines of the selected device (left); CPU total, RAM/SWP bars,
 * the memory legend and the RAM chart (right). Scales are fixed per metric:
 * 0-100 %, 0-total VRAM (the last total ever read), 0-link bandwidth.
 */
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "tui/charts.h"
#include "tui/fmt.h"


/* A history series seen as of hist_age ticks ago: the frozen view of a
 * paused display. Shallow: shares the ring. */
static struct hist_series series_at(const struct hist_series *s, size_t age)
{
    struct hist_series view = *s;
    if (age == 0 || s->cap == 0)
        return view;
    if (age >= s->len) {
        view.len = 0;
        return view;
    }
    view.len = s->len - age;
    view.head = (s->head + s->cap - (age % s->cap)) % s->cap;
    return view;
}

static void chart(WINDOW *win, const struct tui_view *v, struct rect r, const char *title,
                  const struct hist_series *s, double scale, enum tui_role role, const char *why)
{
    struct rect in = tui_box(win, &v->theme, r, title, R_TITLE);
    if (in.h <= 0 || in.w <= 0)
        return;
    if (!s || scale <= 0) {
        if (why)
            tui_text(win, &v->theme, in, in.y, in.x, R_FREE, why);
        return;
    }
    struct hist_series view = series_at(s, v->hist_age);
    tui_sparkline(win, &v->theme, in, &view, scale, role);
}

/* Theoretical PCIe bandwidth per direction for the current link, bytes/s:
 * the fixed scale of the PCIe chart. 0 when gen or width is unknown. */
static double pcie_link_bps(const struct device *d)
{
    static const double per_lane[] = {0, 250e6, 500e6, 984.6e6, 1969.2e6, 3938.4e6, 7876.9e6};
    const struct metric *g = &d->m[M_PCIE_GEN], *w = &d->m[M_PCIE_WIDTH];
    if (!metric_ok(g) || !metric_ok(w))
        return 0;
    int gen = (int)g->value;
    if (gen < 1 || gen > 6)
        return 0;
    return per_lane[gen] * w->value;
}

void tui_draw_gpu_charts(WINDOW *win, const struct tui_view *v)
{
    const struct device *d = tui_view_selected(v);
    const struct hist_device *hd = d && v->hist ? history_device(v->hist, d->uuid) : NULL;
    char t1[160], a[32], b[32], c[32];
    const struct metric none = metric_none(NULL);
    const struct metric *m = d ? d->m : NULL;

    /* GPM's quantities are named as such: graphics activity, and DRAM
     * bandwidth rather than the memory controller's busy time. */
    bool gpm_gpu = m && m[M_GPU_UTIL].src == MSRC_GPM, gpm_mem = m && m[M_MEM_UTIL].src == MSRC_GPM;
    snprintf(t1, sizeof(t1), "GPU Util %s%s", tui_fmt_pct(a, sizeof(a), m ? &m[M_GPU_UTIL] : &none, 0),
             gpm_gpu ? " gpm" : "");
    chart(win, v, v->lay.gpu_util, t1, hd ? &hd->s[HS_GPU_UTIL] : NULL, 100, R_GPU,
          d ? NULL : "no device");
    snprintf(t1, sizeof(t1), "%s %s%s", gpm_mem ? "DRAM BW" : "Mem Ctrl",
             tui_fmt_pct(a, sizeof(a), m ? &m[M_MEM_UTIL] : &none, 0), gpm_mem ? " gpm" : "");
    chart(win, v, v->lay.mem_ctl, t1, hd ? &hd->s[HS_MEM_UTIL] : NULL, 100, R_MEMCTL, NULL);

    struct metric vp = d ? tui_vram_pct(d) : none;
    if (m && metric_ok(&m[M_MEM_USED]) && metric_ok(&m[M_MEM_TOTAL]))
        snprintf(t1, sizeof(t1), "VRAM %s/%s MB (%s)", tui_fmt_num(a, sizeof(a), &m[M_MEM_USED], 1 / MIB, 0),
                 tui_fmt_num(b, sizeof(b), &m[M_MEM_TOTAL], 1 / MIB, 0), tui_fmt_pct(c, sizeof(c), &vp, 1));
    else if (m && metric_ok(&m[M_MEM_USED]))
        snprintf(t1, sizeof(t1), "VRAM %s MB", tui_fmt_num(a, sizeof(a), &m[M_MEM_USED], 1 / MIB, 0));
    else
        snprintf(t1, sizeof(t1), "VRAM N/A");
    /* scale: the last total ever read, never collapsing on a failed read */
    chart(win, v, v->lay.vram, t1, hd ? &hd->s[HS_VRAM_USED] : NULL, hd ? hd->vram_total : 0,
          R_VRAM, hd ? "total VRAM never read: no scale" : NULL);

    if (!v->lay.pcie || !d)
        return;
    snprintf(t1, sizeof(t1), "PCIe TX:%s RX:%s MB/s", tui_fmt_num(a, sizeof(a), &m[M_PCIE_TX], 1 / 1e6, 1),
             tui_fmt_num(b, sizeof(b), &m[M_PCIE_RX], 1 / 1e6, 1));
    struct rect in = tui_box(win, &v->theme, v->lay.pcie_r, t1, R_TITLE);
    double scale = pcie_link_bps(d);
    if (in.h <= 0 || in.w <= 3 || !hd)
        return;
    if (scale <= 0) {
        tui_text(win, &v->theme, in, in.y, in.x, R_FREE, "link speed unknown: no scale");
        return;
    }
    /* TX on the upper half, RX on the lower: both directions drawn (the
     * seed's v0.3.5 chart showed only TX under a TX/RX title). */
    int th = in.h >= 2 ? in.h / 2 : 1;
    struct rect tx = {in.y, in.x + 3, th, in.w - 3};
    struct rect rx = {in.y + th, in.x + 3, in.h - th, in.w - 3};
    tui_text(win, &v->theme, in, tx.y, in.x, R_FREE, "TX");
    struct hist_series vtx = series_at(&hd->s[HS_PCIE_TX], v->hist_age);
    tui_sparkline(win, &v->theme, tx, &vtx, scale, R_PCIE);
    if (rx.h > 0) {
        tui_text(win, &v->theme, in, rx.y, in.x, R_FREE, "RX");
        struct hist_series vrx = series_at(&hd->s[HS_PCIE_RX], v->hist_age);
        tui_sparkline(win, &v->theme, rx, &vrx, scale, R_PCIE);
    }
}

void tui_draw_host_charts(WINDOW *win, const struct tui_view *v)
{
    const struct snapshot *s = v->snap;
    const struct metric none = metric_none("no host sample");
    char t1[160], a[32], b[32], c[32], d[32];
    const struct mem_metrics *mm = s && s->host_ok ? &s->host.mem : NULL;

    snprintf(t1, sizeof(t1), "CPU Total %s",
             tui_fmt_pct(a, sizeof(a), s && s->host_ok ? &s->host.cpu_total : &none, 1));
    chart(win, v, v->lay.cpu_total, t1, v->hist ? &v->hist->host[HH_CPU_TOTAL] : NULL, 100, R_CPU,
          NULL);

    /* RAM and swap bars */
    struct rect bars = v->lay.mem_bars;
    struct metric cached = none;
    if (mm && metric_ok(&mm->cached) && metric_ok(&mm->buffers))
        cached = metric_direct(mm->cached.value + mm->buffers.value);
    tui_mem_bar(win, &v->theme, (struct rect){bars.y, bars.x + 1, 1, bars.w - 2}, "RAM",
                mm ? mm->used : none, cached, mm ? mm->total : none, false);
    if (mm && metric_ok(&mm->swap_total) && mm->swap_total.value == 0)
        tui_text(win, &v->theme, bars, bars.y + 1, bars.x + 1, R_FREE, "SWP no swap configured");
    else /* swap has no cached part: an explicit empty segment, not a reading */
        tui_mem_bar(win, &v->theme, (struct rect){bars.y + 1, bars.x + 1, 1, bars.w - 2}, "SWP",
                    mm ? mm->swap_used : none, metric_direct(0), mm ? mm->swap_total : none, true);

    /* legend */
    struct rect lg = {v->lay.legend.y, v->lay.legend.x + 1, v->lay.legend.h, v->lay.legend.w - 2};
    char bar[8];
    snprintf(bar, sizeof(bar), "%lc", (wint_t)v->theme.g.bar_on);
    struct metric ramp = none;
    if (mm && metric_ok(&mm->used) && metric_ok(&mm->total) && mm->total.value > 0)
        ramp = metric_direct(100.0 * mm->used.value / mm->total.value);
    tui_fmt_num(a, sizeof(a), mm ? &mm->used : &none, 1 / GIB, 1);
    tui_fmt_num(b, sizeof(b), mm ? &mm->total : &none, 1 / GIB, 1);
    snprintf(t1, sizeof(t1), "  RAM %s/%s GiB (%s)", a, b, tui_fmt_pct(c, sizeof(c), &ramp, 0));
    struct piece l1[] = {{metric_ok(&ramp) ? tui_role_load(ramp.value) : R_GOOD, bar},
                         {R_NORMAL, " used  "}, {R_CACHED, bar}, {R_NORMAL, " cached  "},
                         {R_FREE, bar}, {R_NORMAL, " free"}, {R_NORMAL, t1}};
    tui_line(win, v, lg, lg.y, l1, 7);
    tui_fmt_num(a, sizeof(a), mm ? &mm->used : &none, 1 / GIB, 1);
    tui_fmt_num(b, sizeof(b), &cached, 1 / GIB, 1);
    tui_fmt_num(c, sizeof(c), mm ? &mm->free : &none, 1 / GIB, 1);
    tui_fmt_num(d, sizeof(d), mm ? &mm->available : &none, 1 / GIB, 1);
    char s1[40], s2[40], s3[40], s4[48];
    snprintf(s1, sizeof(s1), "%sG", a);
    snprintf(s2, sizeof(s2), "%sG", b);
    snprintf(s3, sizeof(s3), "%sG", c);
    snprintf(s4, sizeof(s4), "  avl:%sG", d);
    struct piece l2[] = {{metric_ok(&ramp) ? tui_role_load(ramp.value) : R_FREE, s1},
                         {R_NORMAL, "/"}, {R_CACHED, s2}, {R_NORMAL, "/"}, {R_FREE, s3},
                         {R_VALUE, s4}};
    if (lg.h > 1)
        tui_line(win, v, lg, lg.y + 1, l2, 6);

    /* RAM chart */
    struct rect in = tui_box(win, &v->theme, v->lay.ram, "RAM", R_TITLE);
    if (v->hist && in.h > 0 && v->hist->ram_total > 0) {
        struct hist_series u = series_at(&v->hist->host[HH_RAM_USED], v->hist_age);
        struct hist_series k = series_at(&v->hist->host[HH_RAM_CACHED], v->hist_age);
        tui_ram_chart(win, &v->theme, in, &u, &k, v->hist->ram_total);
    }
}

