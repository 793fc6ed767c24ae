/*
 * charts.c — the bottom half of the screen: GPU Util, Mem Ctrl, VRAM and
 * PCIe sparklines of the selected device, or (key c) its temperature,
 * power and clocks (left); CPU total, RAM/SWP bars, the memory legend and
 * the RAM chart (right). Scales: 0-100 %, 0-total VRAM (the last total ever
 * read), 0-shutdown temperature, 0-power limit; PCIe and clocks 0-the
 * largest value in the window, shown in the title.
 */
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "tui/charts.h"
#include "tui/fmt.h"
#include "units.h"


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

/* Largest real value among the newest n points of s, or -1. */
static double window_max(const struct hist_series *s, size_t n)
{
    double mx = -1;
    for (size_t age = 0; age < n; age++) {
        struct hist_point p;
        if (!hist_get(s, age, &p))
            break;
        if (p.src != MSRC_NONE && p.v > mx)
            mx = p.v;
    }
    return mx;
}

/* "0.3 s", "98 s", "5 min", "1.5 h": the time n points at the interval cover. */
static void span(char *out, size_t len, size_t n, unsigned interval_ms)
{
    double sec = (double)n * interval_ms / 1000.0;
    if (sec < 9.95)
        snprintf(out, len, "%.1f s", sec);
    else if (sec < 120)
        snprintf(out, len, "%.0f s", sec);
    else if (sec < 7200)
        snprintf(out, len, "%.0f min", sec / 60);
    else
        snprintf(out, len, "%.1f h", sec / 3600);
}

/* Points a chart of inner width w shows of s. */
static size_t shown_points(int w, const struct hist_series *s)
{
    size_t n = w > 0 ? (size_t)w : 0;
    return s && s->len < n ? s->len : s ? n : 0;
}

/*
 * One chart: "<title>  max <max> in <span>" in the top border, the
 * sparkline inside. fmt_max formats the window's maximum (NULL: none
 * shown). A missing series or scale says why in the box.
 */
static void chart(WINDOW *win, const struct tui_view *v, struct rect r, const char *title,
                  const struct hist_series *s, double scale, enum tui_role role, const char *why,
                  const char *(*fmt_max)(char *, size_t, double))
{
    char t[256];
    struct hist_series view = {0};
    if (s)
        view = series_at(s, v->hist_age);
    size_t n = shown_points(r.w - 2, s ? &view : NULL);
    double mx = s ? window_max(&view, n) : -1;
    char a[48], b[32];
    /* the window's maximum when the title has room for it */
    if (fmt_max && mx >= 0 && n > 1 &&
        snprintf(t, sizeof(t), "%s  max %s in %s", title, fmt_max(a, sizeof(a), mx),
                 (span(b, sizeof(b), n, v->interval_ms), b)) > 0 &&
        tui_text_width(t) + 4 <= r.w) {
        /* t holds it */
    } else {
        snprintf(t, sizeof(t), "%s", title);
    }
    struct rect in = tui_box(win, &v->theme, r, t, R_TITLE);
    if (in.h <= 0 || in.w <= 0)
        return;
    if (!s || scale <= 0) {
        if (why)
            tui_text(win, &v->theme, in, in.y, in.x, R_FREE, why);
        return;
    }
    tui_sparkline(win, &v->theme, in, &view, scale, role);
}

static const char *max_pct(char *out, size_t len, double v)
{
    snprintf(out, len, "%.0f%%", v);
    return out;
}

static const char *max_bytes(char *out, size_t len, double v)
{
    return units_bytes(out, len, v);
}

/* The thermal charts' unit (the view's), for max_temp; UI thread only. */
static bool fahrenheit;

static const char *max_temp(char *out, size_t len, double v)
{
    snprintf(out, len, "%.0f %s", fahrenheit ? v * 9.0 / 5.0 + 32.0 : v, fahrenheit ? "F" : "C");
    return out;
}

static const char *max_watts(char *out, size_t len, double v)
{
    snprintf(out, len, "%.0f W", v);
    return out;
}

static const char *max_mhz(char *out, size_t len, double v)
{
    snprintf(out, len, "%.0f MHz", v);
    return out;
}

/* PCIe: TX above, RX below, both on the scale of the largest value in
 * the window (link rates are far above what a job moves: a link-rate
 * scale leaves the chart empty). The scale is in the title. */
static void pcie_chart(WINDOW *win, const struct tui_view *v, struct rect r, const struct device *d,
                       const struct hist_device *hd)
{
    char t1[320], a[32], b[32], c[32], e[48];
    const struct metric *m = d->m;
    struct hist_series vtx = {0}, vrx = {0};
    double scale = -1;
    size_t n = 0;
    const char *scale_note = NULL;
    if (hd) {
        vtx = series_at(&hd->s[HS_PCIE_TX], v->hist_age);
        vrx = series_at(&hd->s[HS_PCIE_RX], v->hist_age);
        n = shown_points(r.w - 5, &vtx);
        double mt = window_max(&vtx, n), mr = window_max(&vrx, n);
        scale = mt > mr ? mt : mr;
    }
    if (scale >= 0 && scale < 1e6)
        scale = 1e6; /* at least 1 MB/s full scale: idle links stay flat */
    tui_fmt_rate(a, sizeof(a), &m[M_PCIE_TX]);
    tui_fmt_rate(b, sizeof(b), &m[M_PCIE_RX]);
    snprintf(t1, sizeof(t1), "PCIe TX %s RX %s", a, b);
    if (scale > 0) { /* the scale in the title, or else on the chart's first row */
        char t2[512];
        span(e, sizeof(e), n, v->interval_ms);
        snprintf(t2, sizeof(t2), "%s  scale %s, %s", t1, units_rate(c, sizeof(c), scale), e);
        snprintf(e, sizeof(e), "scale %s", c);
        if (tui_text_width(t2) + 4 <= r.w && strlen(t2) < sizeof(t1))
            memcpy(t1, t2, strlen(t2) + 1);
        else
            scale_note = e;
    }
    struct rect in = tui_box(win, &v->theme, r, t1, R_TITLE);
    if (in.h <= 0 || in.w <= 3 || !hd || scale <= 0)
        return;
    /* TX on the upper half, RX on the lower: both directions drawn (the
     * seed's v0.3.5 chart showed only TX under a TX/RX title). */
    int th = in.h >= 2 ? in.h / 2 : 1;
    struct rect tx = {in.y, in.x + 3, th, in.w - 3};
    struct rect rx = {in.y + th, in.x + 3, in.h - th, in.w - 3};
    tui_text(win, &v->theme, in, tx.y, in.x, R_FREE, "TX");
    tui_sparkline(win, &v->theme, tx, &vtx, scale, R_PCIE);
    if (scale_note) /* the full scale, over the oldest columns */
        tui_text(win, &v->theme, tx, tx.y, tx.x, R_FREE, scale_note);
    if (rx.h > 0) {
        tui_text(win, &v->theme, in, rx.y, in.x, R_FREE, "RX");
        tui_sparkline(win, &v->theme, rx, &vrx, scale, R_PCIE);
    }
}

static void activity_charts(WINDOW *win, const struct tui_view *v, const struct device *d,
                            const struct hist_device *hd)
{
    char t1[160], a[32], b[32], c[32];
    const struct metric none = metric_none(NULL);
    const struct metric *m = d ? d->m : NULL;
    const struct rect *r = v->lay.chart;
    int n = v->lay.ncharts;
    /* GPM's quantities are named as such: graphics activity, and DRAM
     * bandwidth rather than the memory controller's busy time. */
    bool gpm_gpu = m && m[M_GPU_UTIL].src == MSRC_GPM, gpm_mem = m && m[M_MEM_UTIL].src == MSRC_GPM;
    if (n > 0) {
        snprintf(t1, sizeof(t1), "GPU Util %s%s", tui_fmt_pct(a, sizeof(a), m ? &m[M_GPU_UTIL] : &none, 0),
                 gpm_gpu ? " gpm" : "");
        chart(win, v, r[0], t1, hd ? &hd->s[HS_GPU_UTIL] : NULL, 100, R_GPU, d ? NULL : "no device",
              max_pct);
    }
    if (n > 1) {
        snprintf(t1, sizeof(t1), "%s %s%s", gpm_mem ? "DRAM BW" : "Mem Ctrl",
                 tui_fmt_pct(a, sizeof(a), m ? &m[M_MEM_UTIL] : &none, 0), gpm_mem ? " gpm" : "");
        chart(win, v, r[1], t1, hd ? &hd->s[HS_MEM_UTIL] : NULL, 100, R_MEMCTL, NULL, max_pct);
    }
    if (n > 2) {
        struct metric vp = d ? tui_vram_pct(d) : none, su, st;
        if (d && snapshot_mig_vram_sum(v->snap, (size_t)(d - v->snap->devices), &su, &st)) {
            vp = metric_direct(100.0 * su.value / st.value);
            vp.src = su.src;
            snprintf(t1, sizeof(t1), "VRAM %s instances %s / %s (%s)", v->theme.g.sum,
                     tui_fmt_bytes(a, sizeof(a), &su), tui_fmt_bytes(b, sizeof(b), &st),
                     tui_fmt_pct(c, sizeof(c), &vp, 0));
        } else if (m && metric_ok(&m[M_MEM_USED]) && metric_ok(&m[M_MEM_TOTAL]))
            snprintf(t1, sizeof(t1), "VRAM %s / %s (%s)", tui_fmt_bytes(a, sizeof(a), &m[M_MEM_USED]),
                     tui_fmt_bytes(b, sizeof(b), &m[M_MEM_TOTAL]), tui_fmt_pct(c, sizeof(c), &vp, 0));
        else if (m && metric_ok(&m[M_MEM_USED]))
            snprintf(t1, sizeof(t1), "VRAM %s", tui_fmt_bytes(a, sizeof(a), &m[M_MEM_USED]));
        else
            snprintf(t1, sizeof(t1), "VRAM N/A");
        /* scale: the last total ever read, never collapsing on a failed read */
        chart(win, v, r[2], t1, hd ? &hd->s[HS_VRAM_USED] : NULL, hd ? hd->vram_total : 0, R_VRAM,
              hd ? "total VRAM never read: no scale" : NULL, max_bytes);
    }
    if (n > 3 && d)
        pcie_chart(win, v, r[3], d, hd);
}

/* c: temperature, power and clocks of the selected device (its GPU's for a
 * MIG device: they are GPU-wide). */
static void thermal_charts(WINDOW *win, const struct tui_view *v, const struct device *d,
                           const struct hist_device *hd)
{
    char t1[160], a[32], b[32];
    const struct metric none = metric_none(NULL);
    const struct metric *m = d ? d->m : NULL;
    const struct rect *r = v->lay.chart;
    int n = v->lay.ncharts;
    const char *par = d && d->kind == DEV_MIG ? " [GPU]" : "";
    double tmax = m && metric_ok(&m[M_TEMP_SHUTDOWN]) ? m[M_TEMP_SHUTDOWN].value : 100;
    double pmax = m && metric_ok(&m[M_POWER_LIMIT]) ? m[M_POWER_LIMIT].value : 0;
    double cmax = 0, mmax = 0;
    if (hd) {
        struct hist_series ps = series_at(&hd->s[HS_POWER], v->hist_age);
        struct hist_series cs = series_at(&hd->s[HS_CLK_SM], v->hist_age);
        struct hist_series ms = series_at(&hd->s[HS_CLK_MEM], v->hist_age);
        if (pmax <= 0)
            pmax = window_max(&ps, ps.len);
        cmax = window_max(&cs, cs.len);
        mmax = window_max(&ms, ms.len);
    }
    if (n > 0) {
        fahrenheit = v->fahrenheit;
        struct metric sc = metric_direct(tmax);
        snprintf(t1, sizeof(t1), "Temp %s%s  scale %s", tui_fmt_temp(a, sizeof(a), v, m ? &m[M_TEMP] : &none),
                 par, tui_fmt_temp(b, sizeof(b), v, &sc));
        chart(win, v, r[0], t1, hd ? &hd->s[HS_TEMP] : NULL, tmax, R_WARN, d ? NULL : "no device",
              max_temp);
    }
    if (n > 1) {
        snprintf(t1, sizeof(t1), "Power %s W / %s W%s", tui_fmt_num(a, sizeof(a), m ? &m[M_POWER] : &none, 1, 0),
                 tui_fmt_num(b, sizeof(b), m ? &m[M_POWER_LIMIT] : &none, 1, 0), par);
        chart(win, v, r[1], t1, hd ? &hd->s[HS_POWER] : NULL, pmax, R_ALARM, NULL, max_watts);
    }
    if (n > 2) {
        snprintf(t1, sizeof(t1), "SM clock %s MHz%s", tui_fmt_num(a, sizeof(a), m ? &m[M_CLK_SM] : &none, 1, 0), par);
        chart(win, v, r[2], t1, hd ? &hd->s[HS_CLK_SM] : NULL, cmax, R_CPU, NULL, max_mhz);
    }
    if (n > 3) {
        snprintf(t1, sizeof(t1), "Mem clock %s MHz%s", tui_fmt_num(a, sizeof(a), m ? &m[M_CLK_MEM] : &none, 1, 0), par);
        chart(win, v, r[3], t1, hd ? &hd->s[HS_CLK_MEM] : NULL, mmax, R_MEMCTL, NULL, max_mhz);
    }
}

void tui_draw_gpu_charts(WINDOW *win, const struct tui_view *v)
{
    const struct device *d = tui_view_selected(v);
    const struct hist_device *hd = d && v->hist ? history_device(v->hist, d->uuid) : NULL;
    if (v->charts == CHARTS_THERMAL)
        thermal_charts(win, v, d, hd);
    else
        activity_charts(win, v, d, hd);
}

void tui_draw_host_charts(WINDOW *win, const struct tui_view *v)
{
    const struct snapshot *s = v->snap;
    const struct tui_glyphs *g = &v->theme.g;
    const struct metric none = metric_none("no host sample");
    char t1[160], a[32], b[32], c[32], d[32];
    const struct mem_metrics *mm = s && s->host_ok ? &s->host.mem : NULL;

    if (v->lay.host_charts) {
        snprintf(t1, sizeof(t1), "CPU Total %s",
                 tui_fmt_pct(a, sizeof(a), s && s->host_ok ? &s->host.cpu_total : &none, 1));
        chart(win, v, v->lay.cpu_total, t1, v->hist ? &v->hist->host[HH_CPU_TOTAL] : NULL, 100,
              R_CPU, NULL, max_pct);
    }

    /* RAM and swap bars, each with its figures at the right */
    struct rect bars = v->lay.mem_bars;
    struct metric cached = none;
    if (mm && metric_ok(&mm->cached) && metric_ok(&mm->buffers))
        cached = metric_direct(mm->cached.value + mm->buffers.value);
    struct metric ramp = none, swpp = none;
    if (mm && metric_ok(&mm->used) && metric_ok(&mm->total) && mm->total.value > 0)
        ramp = metric_direct(100.0 * mm->used.value / mm->total.value);
    if (mm && metric_ok(&mm->swap_used) && metric_ok(&mm->swap_total) && mm->swap_total.value > 0)
        swpp = metric_direct(100.0 * mm->swap_used.value / mm->swap_total.value);
    if (bars.h > 0) {
        char fig[96];
        tui_fmt_num(a, sizeof(a), mm ? &mm->used : &none, 1 / GIB, 1);
        tui_fmt_num(b, sizeof(b), mm ? &mm->total : &none, 1 / GIB, 1);
        snprintf(fig, sizeof(fig), " %s/%s GiB %s", a, b, tui_fmt_pct(c, sizeof(c), &ramp, 0));
        int fw = tui_text_width(fig), bw = bars.w - 2 - fw;
        if (bw < 12) { /* too narrow for figures beside the bar */
            bw = bars.w - 2;
            fw = 0;
        }
        tui_mem_bar(win, &v->theme, (struct rect){bars.y, bars.x + 1, 1, bw}, "RAM",
                    mm ? mm->used : none, cached, mm ? mm->total : none, false);
        if (fw)
            tui_text(win, &v->theme, bars, bars.y, bars.x + 1 + bw,
                     metric_ok(&ramp) ? tui_role_load(ramp.value) : R_FREE, fig);
        if (bars.h > 1) {
            if (mm && metric_ok(&mm->swap_total) && mm->swap_total.value == 0) {
                tui_text(win, &v->theme, bars, bars.y + 1, bars.x + 1, R_FREE,
                         "SWP no swap configured");
            } else { /* swap has no cached part: an explicit empty segment, not a reading */
                tui_fmt_num(a, sizeof(a), mm ? &mm->swap_used : &none, 1 / GIB, 1);
                tui_fmt_num(b, sizeof(b), mm ? &mm->swap_total : &none, 1 / GIB, 1);
                snprintf(fig, sizeof(fig), " %s/%s GiB %s", a, b, tui_fmt_pct(c, sizeof(c), &swpp, 0));
                tui_mem_bar(win, &v->theme, (struct rect){bars.y + 1, bars.x + 1, 1, bw}, "SWP",
                            mm ? mm->swap_used : none, metric_direct(0),
                            mm ? mm->swap_total : none, true);
                if (fw)
                    tui_text(win, &v->theme, bars, bars.y + 1, bars.x + 1 + bw,
                             metric_ok(&swpp) ? tui_role_swap(swpp.value) : R_FREE, fig);
            }
        }
    }
    if (!v->lay.host_charts)
        return;

    /* legend: the glyphs the bar uses (without colour cached is shaded) */
    struct rect lg = {v->lay.legend.y, v->lay.legend.x + 1, v->lay.legend.h, v->lay.legend.w - 2};
    const char *cached_s = v->theme.color ? g->bar_on_s : g->shade_s;
    struct piece l1[] = {{metric_ok(&ramp) ? tui_role_load(ramp.value) : R_GOOD, g->bar_on_s},
                         {R_NORMAL, " used  "}, {R_CACHED, cached_s}, {R_NORMAL, " cached  "},
                         {R_FREE, g->bar_off_s}, {R_NORMAL, " free"}};
    tui_line(win, v, lg, lg.y, l1, 6);
    tui_fmt_num(a, sizeof(a), mm ? &mm->used : &none, 1 / GIB, 1);
    tui_fmt_num(b, sizeof(b), &cached, 1 / GIB, 1);
    tui_fmt_num(c, sizeof(c), mm ? &mm->free : &none, 1 / GIB, 1);
    tui_fmt_num(d, sizeof(d), mm ? &mm->available : &none, 1 / GIB, 1);
    char s1[40], s2[40], s3[40], s4[48];
    snprintf(s1, sizeof(s1), "%s", a);
    snprintf(s2, sizeof(s2), "%s", b);
    snprintf(s3, sizeof(s3), "%s GiB", c);
    snprintf(s4, sizeof(s4), "  available %s GiB", d);
    struct piece l2[] = {{metric_ok(&ramp) ? tui_role_load(ramp.value) : R_FREE, s1},
                         {R_NORMAL, " / "}, {R_CACHED, s2}, {R_NORMAL, " / "}, {R_FREE, s3},
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
