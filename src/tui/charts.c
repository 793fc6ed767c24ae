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

#include "core/units.h"
#include "tui/charts.h"
#include "tui/fmt.h"
#include "tui/meters.h"
#include "tui/sparkline.h"


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
static bool max_in_f;
static const char *max_deg = ""; /* the theme's ° ("" in ASCII) */

static const char *max_temp(char *out, size_t len, double v)
{
    /* as the title writes temperatures: "41°C" ("41C" in ASCII) */
    snprintf(out, len, "%.0f%s%s", max_in_f ? v * 9.0 / 5.0 + 32.0 : v, max_deg, max_in_f ? "F" : "C");
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

/* ---- the GPU charts: which, and how tall ---- */

/* Reason lines an N/A chart shows at the most (the i popup has the rest). */
enum { WHY_LINES_MAX = 3 };

/* Lines s takes wrapped at spaces into w columns (as draw_why draws it). */
static int wrap_lines(const char *s, int w)
{
    int n = 0;
    size_t len = strlen(s);
    while (len > 0 && w > 0) {
        size_t take = tui_wrap_take(s, len, w);
        s += take;
        len -= take;
        while (len > 0 && *s == ' ')
            s++, len--;
        n++;
    }
    return n ? n : 1;
}

/* The reason inside an N/A chart, wrapped; the last line it has room for
 * holds the rest, cut with the ellipsis. */
static void draw_why(WINDOW *win, const struct tui_view *v, struct rect in, const char *s)
{
    char buf[512];
    for (int y = in.y; y < in.y + in.h && *s; y++) {
        size_t take = strlen(s);
        if (y < in.y + in.h - 1)
            take = tui_wrap_take(s, take, in.w);
        if (take >= sizeof(buf))
            take = sizeof(buf) - 1;
        memcpy(buf, s, take);
        buf[take] = '\0';
        tui_text(win, &v->theme, in, y, in.x, R_FREE, buf);
        s += take;
        while (*s == ' ')
            s++;
    }
}

/* The device has PCIe throughput figures (the PCIe chart is shown). */
static bool has_pcie(const struct device *d)
{
    return metric_ok(&d->m[M_PCIE_TX]) || metric_ok(&d->m[M_PCIE_RX]);
}

/* The history series a chart draws (NULL: it has none). */
static const struct hist_series *kind_series(const struct hist_device *hd, enum tui_chart_kind k)
{
    static const int series[TC_COUNT] = {
        [TC_GPU_UTIL] = HS_GPU_UTIL, [TC_MEM_BW] = HS_MEM_UTIL, [TC_VRAM] = HS_VRAM_USED,
        [TC_PCIE] = HS_PCIE_TX,      [TC_TEMP] = HS_TEMP,       [TC_POWER] = HS_POWER,
        [TC_CLK_SM] = HS_CLK_SM,     [TC_CLK_MEM] = HS_CLK_MEM,
    };
    return hd ? &hd->s[series[k]] : NULL;
}

/* The metric a chart is about. */
static const struct metric *kind_metric(const struct device *d, enum tui_chart_kind k)
{
    static const enum metric_id id[TC_COUNT] = {
        [TC_GPU_UTIL] = M_GPU_UTIL, [TC_MEM_BW] = M_MEM_UTIL, [TC_VRAM] = M_MEM_USED,
        [TC_PCIE] = M_PCIE_TX,      [TC_TEMP] = M_TEMP,       [TC_POWER] = M_POWER,
        [TC_CLK_SM] = M_CLK_SM,     [TC_CLK_MEM] = M_CLK_MEM,
    };
    return &d->m[id[k]];
}

static const char *const kind_label[TC_COUNT] = {
    [TC_GPU_UTIL] = "GPU Util", [TC_MEM_BW] = "MemBW", [TC_VRAM] = "VRAM", [TC_PCIE] = "PCIe",
    [TC_TEMP] = "Temp",         [TC_POWER] = "Power", [TC_CLK_SM] = "SM clock",
    [TC_CLK_MEM] = "Mem clock",
};

/* A chart with nothing to draw: its value N/A now and no real point in the
 * window it would show. Its reason, or NULL when it has data. */
static const char *empty_why(const struct tui_view *v, const struct device *d,
                             const struct hist_device *hd, enum tui_chart_kind k, int width)
{
    const struct metric *m = kind_metric(d, k);
    if (metric_ok(m))
        return NULL;
    if (k == TC_PCIE && metric_ok(&d->m[M_PCIE_RX]))
        return NULL;
    const struct hist_series *s = kind_series(hd, k);
    if (s) {
        struct hist_series view = series_at(s, v->hist_age);
        if (window_max(&view, shown_points(width - 2, &view)) >= 0)
            return NULL;
    }
    return m->why ? m->why : "not read";
}

static void plan_add(struct tui_chart_plan *p, const struct tui_view *v, const struct device *d,
                     const struct hist_device *hd, enum tui_chart_kind k, int width)
{
    if (p->n >= TUI_CHARTS_MAX)
        return;
    int i = p->n++;
    p->kind[i] = k;
    p->why[i] = d ? empty_why(v, d, hd, k, width) : NULL;
    p->same_as[i] = -1;
    p->rows[i] = 0;
    if (!p->why[i])
        return;
    /* the same reason as the chart above: said once */
    for (int j = 0; j < i; j++)
        if (p->why[j] && strcmp(p->why[j], p->why[i]) == 0) {
            p->same_as[i] = j;
            p->rows[i] = 2 + 1;
            return;
        }
    int lines = wrap_lines(p->why[i], width - 2);
    p->rows[i] = 2 + (lines < WHY_LINES_MAX ? lines : WHY_LINES_MAX);
}

void tui_plan_gpu_charts(const struct tui_view *v, int width, struct tui_chart_plan *p)
{
    const struct device *d = tui_view_selected(v);
    const struct hist_device *hd = d && v->hist ? history_device(v->hist, d->node, d->uuid) : NULL;
    memset(p, 0, sizeof(*p));
    if (v->charts == CHARTS_THERMAL) {
        plan_add(p, v, d, hd, TC_TEMP, width);
        plan_add(p, v, d, hd, TC_POWER, width);
        plan_add(p, v, d, hd, TC_CLK_SM, width);
        plan_add(p, v, d, hd, TC_CLK_MEM, width);
        return;
    }
    plan_add(p, v, d, hd, TC_GPU_UTIL, width);
    plan_add(p, v, d, hd, TC_MEM_BW, width);
    plan_add(p, v, d, hd, TC_VRAM, width);
    if (d && has_pcie(d))
        plan_add(p, v, d, hd, TC_PCIE, width);
    /* no activity to chart (a MIG GPU before Hopper): the GPU's power and
     * temperature take the rows, titled as what they are */
    if (d && (p->why[0] || p->why[1])) {
        plan_add(p, v, d, hd, TC_POWER, width);
        plan_add(p, v, d, hd, TC_TEMP, width);
        for (int i = p->n - 2; i < p->n; i++)
            if (p->why[i]) { /* no use for a second reason box */
                p->n = i;
                break;
            }
    }
}

/* ---- the GPU charts: drawing ---- */

/* " [GPU n]" on a MIG device's chart of a GPU-wide value, else "". */
static const char *parent_mark(char *out, size_t len, const struct device *d, enum tui_chart_kind k)
{
    bool wide = k == TC_TEMP || k == TC_POWER || k == TC_CLK_SM || k == TC_CLK_MEM || k == TC_PCIE;
    if (d->kind == DEV_MIG && wide)
        snprintf(out, len, " [GPU %d]", d->index);
    else
        out[0] = '\0';
    return out;
}

static void vram_title(char *t1, size_t len, const struct tui_view *v, const struct device *d,
                       struct metric *vp)
{
    char a[32], b[32], c[32];
    const struct metric *m = d->m;
    struct metric su, st;
    *vp = tui_vram_pct(d);
    if (snapshot_mig_vram_sum(v->snap, (size_t)(d - v->snap->devices), &su, &st)) {
        *vp = metric_direct(100.0 * su.value / st.value);
        vp->src = su.src;
        snprintf(t1, len, "VRAM %s instances %s / %s (%s)", v->theme.g.sum,
                 tui_fmt_bytes(a, sizeof(a), &su), tui_fmt_bytes(b, sizeof(b), &st),
                 tui_fmt_pct(c, sizeof(c), vp, 0));
    } else if (metric_ok(&m[M_MEM_USED]) && metric_ok(&m[M_MEM_TOTAL]))
        snprintf(t1, len, "VRAM %s / %s (%s)", tui_fmt_bytes(a, sizeof(a), &m[M_MEM_USED]),
                 tui_fmt_bytes(b, sizeof(b), &m[M_MEM_TOTAL]), tui_fmt_pct(c, sizeof(c), vp, 0));
    else if (metric_ok(&m[M_MEM_USED]))
        snprintf(t1, len, "VRAM %s", tui_fmt_bytes(a, sizeof(a), &m[M_MEM_USED]));
    else
        snprintf(t1, len, "VRAM N/A");
}

static void draw_one(WINDOW *win, const struct tui_view *v, const struct device *d,
                     const struct hist_device *hd, const struct tui_chart_plan *p, int i,
                     struct rect r)
{
    char t1[200], a[32], b[32], pm[24];
    enum tui_chart_kind k = p->kind[i];
    const struct metric *m = d->m;
    parent_mark(pm, sizeof(pm), d, k);
    if (p->why[i]) { /* the title as always, the reason inside */
        if (k == TC_VRAM)
            snprintf(t1, sizeof(t1), "VRAM N/A");
        else
            snprintf(t1, sizeof(t1), "%s N/A%s", kind_label[k], pm);
        struct rect in = tui_box(win, &v->theme, r, t1, R_TITLE);
        if (in.h <= 0 || in.w <= 0)
            return;
        char msg[96];
        if (p->same_as[i] >= 0) {
            snprintf(msg, sizeof(msg), "N/A: as %s above", kind_label[p->kind[p->same_as[i]]]);
            draw_why(win, v, in, msg);
        } else {
            draw_why(win, v, in, p->why[i]);
        }
        return;
    }
    const char *src = "";
    switch (k) {
    case TC_GPU_UTIL:
    case TC_MEM_BW: {
        /* GPM's and DCGM's figures are marked as such (graphics activity, DRAM
         * bandwidth rather than the memory controller's busy time) */
        const struct metric *x = kind_metric(d, k);
        src = x->src == MSRC_GPM ? " gpm" : x->src == MSRC_DCGM ? " dcgm" : "";
        snprintf(t1, sizeof(t1), "%s %s%s", kind_label[k], tui_fmt_pct(a, sizeof(a), x, 0), src);
        chart(win, v, r, t1, kind_series(hd, k), 100, k == TC_GPU_UTIL ? R_GPU : R_MEMCTL, NULL,
              max_pct);
        break;
    }
    case TC_VRAM: {
        struct metric vp;
        vram_title(t1, sizeof(t1), v, d, &vp);
        /* scale: the last total ever read, never collapsing on a failed read */
        chart(win, v, r, t1, kind_series(hd, k), hd ? hd->vram_total : 0, R_VRAM,
              hd ? "total VRAM never read: no scale" : NULL, max_bytes);
        break;
    }
    case TC_PCIE:
        pcie_chart(win, v, r, d, hd);
        break;
    case TC_TEMP: {
        double tmax = metric_ok(&m[M_TEMP_SHUTDOWN]) ? m[M_TEMP_SHUTDOWN].value : 100;
        struct metric sc = metric_direct(tmax);
        max_in_f = v->fahrenheit;
        max_deg = v->theme.g.deg;
        snprintf(t1, sizeof(t1), "Temp %s%s  scale %s", tui_fmt_temp(a, sizeof(a), v, &m[M_TEMP]),
                 pm, tui_fmt_temp(b, sizeof(b), v, &sc));
        chart(win, v, r, t1, kind_series(hd, k), tmax, R_WARN, NULL, max_temp);
        break;
    }
    case TC_POWER: {
        double pmax = metric_ok(&m[M_POWER_LIMIT]) ? m[M_POWER_LIMIT].value : 0;
        if (pmax <= 0 && hd) {
            struct hist_series ps = series_at(&hd->s[HS_POWER], v->hist_age);
            pmax = window_max(&ps, ps.len);
        }
        /* an unknown value is "N/A", not "N/A W" */
        snprintf(t1, sizeof(t1), "Power %s%s / %s%s%s", tui_fmt_num(a, sizeof(a), &m[M_POWER], 1, 0),
                 metric_ok(&m[M_POWER]) ? " W" : "", tui_fmt_num(b, sizeof(b), &m[M_POWER_LIMIT], 1, 0),
                 metric_ok(&m[M_POWER_LIMIT]) ? " W" : "", pm);
        chart(win, v, r, t1, kind_series(hd, k), pmax, R_ALARM, NULL, max_watts);
        break;
    }
    case TC_CLK_SM:
    case TC_CLK_MEM: {
        double cmax = 0;
        if (hd) {
            struct hist_series cs = series_at(kind_series(hd, k), v->hist_age);
            cmax = window_max(&cs, cs.len);
        }
        snprintf(t1, sizeof(t1), "%s %s MHz%s", kind_label[k],
                 tui_fmt_num(a, sizeof(a), kind_metric(d, k), 1, 0), pm);
        chart(win, v, r, t1, kind_series(hd, k), cmax, k == TC_CLK_SM ? R_CPU : R_MEMCTL, NULL,
              max_mhz);
        break;
    }
    case TC_COUNT:
        break;
    }
}

/* The part of the chart in r that came from the backend's past (the fleet
 * view's range query, history_fill_past), said in its bottom border:
 * " 9.8 s from Prometheus ". False when it shows none of it. */
static bool past_caption(WINDOW *win, const struct tui_view *v, struct rect r,
                         const struct hist_device *hd, enum tui_chart_kind k)
{
    if (!hd || !v->hist)
        return false;
    struct hist_series view = series_at(kind_series(hd, k), v->hist_age);
    size_t past = history_past_points(v->hist, hd, v->hist_age, shown_points(r.w - 2, &view));
    if (!past)
        return false;
    char a[32], t[64];
    span(a, sizeof(a), past, v->interval_ms);
    snprintf(t, sizeof(t), " %s from Prometheus ", a);
    int w = tui_text_width(t);
    if (w + 4 > r.w)
        return false;
    tui_text(win, &v->theme, r, r.y + r.h - 1, r.x + r.w - 2 - w, R_FREE, t);
    return true;
}

void tui_draw_gpu_charts(WINDOW *win, const struct tui_view *v, const struct tui_chart_plan *p)
{
    const struct device *d = tui_view_selected(v);
    const struct hist_device *hd = d && v->hist ? history_device(v->hist, d->node, d->uuid) : NULL;
    int n = v->lay.ncharts < p->n ? v->lay.ncharts : p->n;
    bool said = false; /* the past's caption, under the first chart with data */
    for (int i = 0; i < n; i++) {
        if (d) {
            draw_one(win, v, d, hd, p, i, v->lay.chart[i]);
            if (!said && !p->why[i] && v->lay.chart[i].h >= 3)
                said = past_caption(win, v, v->lay.chart[i], hd, p->kind[i]);
        } else {
            chart(win, v, v->lay.chart[i], kind_label[p->kind[i]], NULL, 0, R_FREE,
                  i == 0 ? "no device" : NULL, NULL);
        }
    }
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
