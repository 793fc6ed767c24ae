/*
 * panels.c — the panels of the seed README's screen ("Screen Layout"):
 * header, CPU cores, detail, processes and footer, and the whole frame
 * (tui_draw), which lays the panes out and draws them. The device list is
 * in devices.c, the charts in charts.c, the all-processes view in
 * allprocs.c, the overlays in overlays.c; what they all read is the view
 * (view.c).
 *
 * Conventions on screen: "N/A" (dim) for a value that could not be read;
 * "~" before an estimate; "*" after a carried value; a dim "gpm"/"proc"
 * tag after values from GPM or per-process samples; on a MIG device the
 * lines holding the parent GPU's values end in a dim "[GPU n]".
 */
#include "tui/panels.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "units.h"
#include "tui/allprocs.h"
#include "tui/charts.h"
#include "tui/devices.h"
#include "tui/fmt.h"
#include "tui/overlays.h"
#include "tui/widgets.h"

/* ---- header and footer ---- */

static void draw_header(WINDOW *win, const struct tui_view *v)
{
    struct rect r = v->lay.header;
    const struct tui_theme *t = &v->theme;
    tui_fill(win, t, r, R_HEADER);
    char left[1024], clk[40]; /* left holds a whole host name and the versions */
    const struct snapshot *s = v->snap;
    const char *host = s && s->host.hostname[0] ? s->host.hostname : "";
    char drv[96] = "", cuda[32] = "", nvml[96] = "";
    if (s && s->driver_version[0]) {
        snprintf(drv, sizeof(drv), "  driver %s", s->driver_version);
        if (s->cuda_driver_version > 0)
            snprintf(cuda, sizeof(cuda), "  CUDA %d.%d", s->cuda_driver_version / 1000,
                     s->cuda_driver_version % 1000 / 10);
        if (s->nvml_version[0])
            snprintf(nvml, sizeof(nvml), "  NVML %s", s->nvml_version);
    }
    /* what the width holds, the least needed last: the NVML version goes
     * first, then CUDA's, then the demo's file name; the driver's stays */
    const char *demo = v->demo_label ? v->demo_label : "";
    const char *demo_short = v->demo_label ? "DEMO" : "";
    int fit = r.w - 21; /* the clock and a space */
    const char *steps[][3] = {{demo, cuda, nvml}, {demo, cuda, ""}, {demo, "", ""},
                              {demo_short, "", ""}};
    for (size_t k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
        snprintf(left, sizeof(left), " mig-gpu-mon  %s%s%s%s%s%s", host, steps[k][0][0] ? "  " : "",
                 steps[k][0], drv, steps[k][1], steps[k][2]);
        if (tui_text_width(left) <= fit)
            break;
    }
    /* the clock changes once a second: formatted then (the UI thread's) */
    static time_t clk_at = (time_t)-1;
    static char clk_s[sizeof(clk)];
    time_t now = s && s->wall_ns ? (time_t)(s->wall_ns / 1000000000) : time(NULL);
    if (now != clk_at) {
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(clk_s, sizeof(clk_s), "%Y-%m-%d %H:%M:%S ", &tm);
        clk_at = now;
    }
    memcpy(clk, clk_s, sizeof(clk));
    int cw = (int)strlen(clk);
    char dbg[300] = "";
    if (v->debug_path)
        snprintf(dbg, sizeof(dbg), "DEBUG %s %.200s ", t->g.utf8 ? "\u2192" : "->", v->debug_path);
    int dw = tui_text_width(dbg);
    int room = r.w - cw - 1;
    if (dw > room / 2) /* the log's path gives way to the rest */
        dw = 0;
    int x = tui_text(win, t, (struct rect){r.y, r.x, 1, room - dw}, r.y, r.x, R_HEADER, left);
    if (dw)
        tui_text(win, t, (struct rect){r.y, x + 1, 1, r.x + room - x - 1}, r.y,
                 r.x + room - dw, R_WARN, dbg);
    if (r.w > cw)
        tui_text(win, t, r, r.y, r.x + r.w - cw, R_HEADER, clk);
}

/* The footer's keys ("  "-separated, "? Help" last) in w columns: the
 * keys before "? Help" give way, least needed first (the interval, then
 * what is named elsewhere: fold, charts, the all-process list, sort and
 * filter), so "? Help", which lists them all, always shows. */
static const char *footer_fit(char *out, size_t len, const char *keys, int w)
{
    static const char *const drop[] = {"+- Interval", "Enter Fold", "c Charts", "a All",
                                       "/ Filter", "s Sort", "Enter Command"};
    snprintf(out, len, "%s", keys);
    for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]) && tui_text_width(out) > w; i++) {
        char *at = strstr(out, drop[i]);
        if (!at || at == out)
            continue;
        size_t n = strlen(drop[i]);
        if (at[n] == ' ' && at[n + 1] == ' ')
            n += 2; /* the item and the two spaces after it */
        memmove(at, at + n, strlen(at + n) + 1);
    }
    return out;
}

static void draw_footer(WINDOW *win, const struct tui_view *v)
{
    struct rect r = v->lay.footer;
    const struct tui_theme *t = &v->theme;
    char right[96];
    const struct snapshot *s = v->snap;
    size_t n = s ? s->ndevices : 0;
    char ivl[32];
    if (v->interval_ms % 1000 == 0)
        snprintf(ivl, sizeof(ivl), "%us", v->interval_ms / 1000);
    else
        snprintf(ivl, sizeof(ivl), "%ums", v->interval_ms);
    snprintf(right, sizeof(right), "%s%s [%zu/%zu] ", v->paused ? "PAUSED  " : "", ivl,
             n ? v->sel + 1 : 0, n);
    int rw = (int)strlen(right);
    struct rect left = {r.y, r.x, 1, r.w - rw - 1};
    if (v->filter_edit) {
        char f[128];
        snprintf(f, sizeof(f), " Filter processes: %s_  (Enter keeps, Esc clears)", v->filter);
        tui_text(win, t, left, r.y, r.x, R_WARN, f);
    } else if (v->status[0]) {
        tui_text(win, t, left, r.y, r.x, R_WARN, v->status);
    } else {
        bool u = t->g.utf8;
        const char *keys = v->all_procs ? tui_allprocs_footer(u)
                           : v->proc_focus
                               ? (u ? " Esc Devices  \u2191\u2193 Process  Enter Command  k Signal  "
                                      "s Sort  / Filter  a All  ? Help"
                                    : " Esc Devices  Up/Dn Process  Enter Command  k Signal  "
                                      "s Sort  / Filter  a All  ? Help")
                               : (u ? " q Quit  \u2191\u2193 Device  Enter Fold  p Processes  a All  "
                                      "c Charts  i Why N/A  +- Interval  ? Help"
                                    : " q Quit  Up/Dn Device  Enter Fold  p Processes  a All  "
                                      "c Charts  i Why N/A  +- Interval  ? Help");
        char fit[256];
        tui_text(win, t, left, r.y, r.x, R_NORMAL, footer_fit(fit, sizeof(fit), keys, left.w));
    }
    if (r.w > rw)
        tui_text(win, t, r, r.y, r.x + r.w - rw, v->paused ? R_WARN : R_NORMAL, right);
}

/* ---- CPU cores ---- */

static void draw_cpu(WINDOW *win, const struct tui_view *v)
{
    const struct snapshot *s = v->snap;
    char title[96], pct[32];
    if (!s || !s->host_ok) {
        struct rect in = tui_box(win, &v->theme, v->lay.cpu, "CPU", R_TITLE);
        tui_text(win, &v->theme, in, in.y, in.x, R_FREE, s ? s->host_error : "no sample yet");
        return;
    }
    snprintf(title, sizeof(title), "CPU (%zu cores) %s", s->host.ncores,
             tui_fmt_pct(pct, sizeof(pct), &s->host.cpu_total, 1));
    struct rect in = tui_box(win, &v->theme, v->lay.cpu, title, R_TITLE);
    tui_cpu_cores(win, &v->theme, in, s->host.cores, s->host.ncores);
}

/* Word-wrap text (lines split at '\n') into r from row *y on. */
static void draw_wrapped(WINDOW *win, const struct tui_view *v, struct rect r, int *y,
                         enum tui_role role, const char *text)
{
    char buf[1024];
    const char *p = text;
    while (*p && *y < r.y + r.h) {
        size_t take = tui_wrap_take(p, strcspn(p, "\n"), r.w);
        if (take >= sizeof(buf))
            take = sizeof(buf) - 1;
        memcpy(buf, p, take);
        buf[take] = '\0';
        tui_text(win, &v->theme, r, (*y)++, r.x, role, buf);
        p += take;
        while (*p == ' ')
            p++;
        if (*p == '\n')
            p++;
    }
}

/* No devices: the whole GPU panel explains why, hint first, then the
 * loader's message (every path searched and why it failed). */
static void draw_no_gpu(WINDOW *win, const struct tui_view *v)
{
    const struct snapshot *s = v->snap;
    struct rect all = {v->lay.devices.y, v->lay.devices.x,
                       v->lay.procs.y + v->lay.procs.h - v->lay.devices.y, v->lay.devices.w};
    struct rect in = tui_box(win, &v->theme, all, "Devices", R_TITLE);
    if (in.h <= 0 || in.w <= 0)
        return;
    const char *err = s && !s->gpu_ok ? s->gpu_error : "NVML reports no GPU on this host.";
    int y = in.y;
    /* Advice that fits the state: a library that is there but whose driver
     * is not (yet) ready is retried by itself; only a missing library needs
     * the user; a scenario without GPUs is what it is. */
    const char *hint = "No GPU data. Point --nvml-path at libnvidia-ml.so.1, or try --demo.";
    if (s && s->gpu_ok)
        hint = v->demo_label ? "This scenario has no GPU." : "No GPU.";
    else if (strncmp(err, "starting NVML", 13) == 0)
        hint = "Starting NVML (the driver is slow to answer):";
    else if (v->demo_label)
        hint = "The simulator could not start this scenario:";
    else if (strstr(err, "nvmlInit failed") || strstr(err, "driver went away"))
        hint = "The NVIDIA driver is not ready; the monitor retries by itself:";
    draw_wrapped(win, v, in, &y, R_WARN, hint);
    draw_wrapped(win, v, in, &y, R_FREE, err);
}

/* ---- the GPM page ---- */

/* Rows of the detail panel. On a wide panel (>= 90 columns) the shorter
 * lines (clocks … throttle) go two to a row, so every metric fits in the
 * seed's 50 % of the GPU panel on a 200x60 terminal. */
struct detail_cursor {
    struct rect in;
    int y;
    int col; /* 1: the left half of row y is taken */
    bool two;
};

static void detail_line(WINDOW *win, const struct tui_view *v, struct detail_cursor *c,
                        bool pairable, const struct piece *p, size_t n)
{
    struct rect r = c->in;
    int half = (c->in.w - 2) / 2;
    if (pairable && c->two) {
        if (c->col == 0) {
            r.w = half;
            c->col = 1;
        } else {
            r.x += half + 2;
            r.w = c->in.w - half - 2;
            c->col = 0;
        }
    } else if (c->col == 1) {
        c->y++;
        c->col = 0;
    }
    if (c->y >= c->in.y + c->in.h)
        return;
    r.y = c->y;
    r.h = 1;
    tui_line(win, v, r, c->y, p, n);
    if (c->col == 0)
        c->y++;
}

/* The GPM page (key g): every GPM metric of the selected device, one per
 * line with its source, or N/A with the reason. */
static void draw_detail_gpm(WINDOW *win, const struct tui_view *v, struct rect in,
                            const struct device *d)
{
    static const struct {
        enum metric_id id;
        const char *label;
    } rows[] = {
        {M_GPU_UTIL, "Graphics activity"}, {M_SM_UTIL, "SM activity"},
        {M_SM_OCCUPANCY, "SM occupancy"},  {M_MEM_UTIL, "MemBW (DRAM)"},
        {M_TENSOR_UTIL, "Tensor (any)"},   {M_HMMA_TENSOR_UTIL, "Tensor HMMA"},
        {M_IMMA_TENSOR_UTIL, "Tensor IMMA"}, {M_DFMA_TENSOR_UTIL, "Tensor DFMA"},
        {M_FP64_UTIL, "FP64"},             {M_FP32_UTIL, "FP32"},
        {M_FP16_UTIL, "FP16"},             {M_INT_UTIL, "Integer"},
        {M_NVLINK_TX, "NVLink TX"},        {M_NVLINK_RX, "NVLink RX"},
        {M_PCIE_TX, "PCIe TX"},            {M_PCIE_RX, "PCIe RX"},
    };
    struct detail_cursor cur = {.in = in, .y = in.y, .col = 0, .two = in.w >= 90};
    char gpu_mark[24]; /* the same marker as the detail panel's */
    snprintf(gpu_mark, sizeof(gpu_mark), " [GPU %d]", d->index);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct metric *m = &d->m[rows[i].id];
        /* On a full GPU the utilisation and memory rows are NVML's direct
         * readings, not GPM's: say which. */
        char val[48], label[32], note[160];
        bool rate = strcmp(metric_info(rows[i].id)->unit, "B/s") == 0;
        if (!metric_ok(m))
            snprintf(val, sizeof(val), "N/A");
        else if (rate)
            tui_fmt_rate(val, sizeof(val), m);
        else
            tui_fmt_pct(val, sizeof(val), m, 1);
        snprintf(label, sizeof(label), "%-18s", rows[i].label);
        const char *scope = "";
        if (d->kind == DEV_MIG && metric_info(rows[i].id)->gpu_wide)
            scope = gpu_mark;
        else if (m->scope == MSCOPE_GPU_INSTANCE)
            scope = " [GPU instance]";
        if (metric_ok(m))
            snprintf(note, sizeof(note), " %s%s", metric_source_name(m->src), scope);
        else
            snprintf(note, sizeof(note), " %s", m->why ? m->why : "");
        struct piece p[] = {{R_NORMAL, label}, {tui_na_or(m, R_NORMAL), val}, {R_FREE, note}};
        detail_line(win, v, &cur, metric_ok(m), p, 3);
    }
}

/* ---- detail ---- */

/* The detail panel as lines in order of importance: what an operator
 * looks at first (stall or loss, utilisation, VRAM, temperature and power,
 * why a value is missing), then identity and the rest. A short panel shows
 * the first lines; a wide one (>= 90 columns) pairs the pairable lines. */
struct dline {
    struct piece p[16];
    int n;
    bool pair;
    unsigned opt; /* pieces (bits by index) left out when the line is too wide */
    bool mark;    /* the last piece is a "[GPU n]" marker: never cut */
};

struct dlines {
    struct dline l[20];
    int n, key;
    char buf[4096];
    size_t used;
};

static const char *dl_str(struct dlines *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *dl_str(struct dlines *L, const char *fmt, ...)
{
    char *out = L->buf + L->used;
    size_t room = sizeof(L->buf) - L->used;
    if (room < 2)
        return "";
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, room, fmt, ap);
    va_end(ap);
    if (n < 0)
        return "";
    L->used += (size_t)n < room ? (size_t)n + 1 : room;
    return out;
}

/* The strings up to a NULL, one after another: dl_str's "%s%s…" without
 * printf (a detail panel is built every frame, about thirty strings). */
static const char *dl_cat_(struct dlines *L, ...)
{
    char *out = L->buf + L->used;
    size_t room = sizeof(L->buf) - L->used, n = 0;
    if (room < 2)
        return "";
    va_list ap;
    va_start(ap, L);
    for (const char *p; (p = va_arg(ap, const char *)) != NULL;) {
        size_t k = strlen(p);
        if (k > room - 1 - n)
            k = room - 1 - n;
        memcpy(out + n, p, k);
        n += k;
    }
    va_end(ap);
    out[n] = '\0';
    L->used += n + 1;
    return out;
}
#define dl_cat(L, ...) dl_cat_((L), __VA_ARGS__, (const char *)NULL)

/* sep and s appended to last, the string dl_cat just returned (nothing
 * when last is not the newest string of L: the buffer was full). */
static void dl_join(struct dlines *L, const char *last, const char *sep, const char *s)
{
    size_t n = strlen(last);
    if (last + n + 1 != L->buf + L->used)
        return;
    char *end = L->buf + L->used - 1; /* last's NUL */
    size_t room = sizeof(L->buf) - L->used;
    const char *parts[2] = {sep, s};
    for (int i = 0; i < 2; i++) {
        size_t k = strlen(parts[i]);
        if (k > room)
            k = room;
        memcpy(end, parts[i], k);
        end += k;
        room -= k;
        L->used += k;
    }
    *end = '\0';
}

/* pre and v as "%.0f": dl_str's "P%.0f" without printf. */
static const char *dl_whole(struct dlines *L, const char *pre, double v)
{
    char b[48];
    if (!tui_fmt_whole(b, sizeof(b), pre, v, ""))
        return dl_str(L, "%s%.0f", pre, v);
    return dl_cat(L, b);
}

static struct dline *dl_add(struct dlines *L, bool pair)
{
    if (L->n >= (int)(sizeof(L->l) / sizeof(L->l[0])))
        return NULL;
    struct dline *l = &L->l[L->n++];
    l->n = 0;
    l->pair = pair;
    l->opt = 0;
    l->mark = false;
    return l;
}

static void dp(struct dline *l, enum tui_role role, const char *s)
{
    if (l && l->n < (int)(sizeof(l->p) / sizeof(l->p[0])))
        l->p[l->n++] = (struct piece){role, s};
}

/* A piece the line can do without (thresholds, unit words) when narrow. */
static void dp_opt(struct dline *l, enum tui_role role, const char *s)
{
    if (l && l->n < (int)(sizeof(l->p) / sizeof(l->p[0])) && l->n < 32)
        l->opt |= 1u << l->n;
    dp(l, role, s);
}

/* The line's last piece: a MIG device's "[GPU n]" (or nothing). */
static void dp_mark(struct dline *l, const char *par)
{
    if (!par[0])
        return;
    dp(l, R_FREE, par);
    if (l)
        l->mark = true;
}

static void dp_metric(struct dlines *L, struct dline *l, const char *label, const struct metric *m,
                      enum tui_role role)
{
    char b[32];
    dp(l, R_NORMAL, label);
    dp(l, tui_na_or(m, role), dl_cat(L, tui_fmt_pct(b, sizeof(b), m, 0)));
    dp(l, R_FREE, tui_src_tag(m));
}

static const char *first_reason(const struct device *d, const char **label, int *count)
{
    static const struct {
        enum metric_id id;
        const char *label;
    } key[] = {{M_GPU_UTIL, "GPU util"}, {M_MEM_UTIL, "MemBW"}, {M_SM_UTIL, "SM util"},
               {M_MEM_USED, "VRAM"},     {M_TEMP, "Temp"},         {M_POWER, "Power"}};
    const char *why = NULL;
    *count = 0;
    for (size_t i = 0; i < sizeof(key) / sizeof(key[0]); i++) {
        const struct metric *m = &d->m[key[i].id];
        if (metric_ok(m) || !m->why)
            continue;
        if (!why) {
            why = m->why;
            *label = key[i].label;
        }
        (*count)++;
    }
    return why;
}

/* A threshold temperature in the view's unit, without the unit: "89". */
static const char *temp_num(char *out, size_t len, const struct tui_view *v, const struct metric *m)
{
    if (!metric_ok(m))
        snprintf(out, len, "N/A");
    else
        snprintf(out, len, "%.0f", v->fahrenheit ? m->value * 9.0 / 5.0 + 32.0 : m->value);
    return out;
}

static void build_detail(struct dlines *L, const struct tui_view *v, const struct device *d)
{
    const struct snapshot *s = v->snap;
    const struct tui_glyphs *g = &v->theme.g;
    const struct metric *m = d->m;
    bool mig = d->kind == DEV_MIG;
    char a[64], b[64], c[64];
    struct dline *l;
    L->n = 0;
    L->used = 0; /* every dl_str string of this build comes after this */
    const char *par = mig ? dl_str(L, " [GPU %d]", d->index) : "";

    if (d->stall || d->lost) {
        l = dl_add(L, false);
        if (d->stall)
            dp(l, R_ALARM, d->stall);
        else
            dp(l, R_ALARM, dl_str(L, "GPU lost %.0f s ago: NVML_ERROR_GPU_IS_LOST (fell off the "
                                     "bus?); identity and charts from before", d->lost_for_s));
    }
    /* utilisation */
    /* MemBW: the memory controller's busy time (NVML) or DRAM bandwidth
     * (GPM, tagged gpm): one name for both, never read as VRAM use */
    l = dl_add(L, false);
    dp_metric(L, l, "GPU ", &m[M_GPU_UTIL], R_NORMAL);
    dp_metric(L, l, "  MemBW ", &m[M_MEM_UTIL], R_NORMAL);
    dp_metric(L, l, "  SM ", &m[M_SM_UTIL], R_NORMAL);
    dp_metric(L, l, "  Enc ", &m[M_ENC_UTIL], R_VRAM);
    dp_metric(L, l, "  Dec ", &m[M_DEC_UTIL], R_VRAM);
    /* VRAM */
    struct metric vp = tui_vram_pct(d);
    l = dl_add(L, false);
    dp(l, R_NORMAL, "VRAM ");
    if (metric_ok(&m[M_MEM_USED]) || metric_ok(&m[M_MEM_TOTAL]))
        dp(l, metric_ok(&vp) ? tui_role_vram(vp.value) : R_FREE,
           dl_cat(L, tui_fmt_bytes(a, sizeof(a), &m[M_MEM_USED]), " / ",
                  tui_fmt_bytes(b, sizeof(b), &m[M_MEM_TOTAL]), " (", tui_fmt_pct(c, sizeof(c), &vp, 0),
                  ")"));
    else
        dp(l, R_FREE, "N/A");
    struct metric su, st;
    if (snapshot_mig_vram_sum(s, (size_t)(d - s->devices), &su, &st)) {
        /* NVML gives a MIG-enabled GPU's own memory only with privilege:
         * what its instances hold, said as such */
        dp(l, R_FREE, dl_cat(L, "  ", g->sum, " instances "));
        dp(l, tui_role_vram(100.0 * su.value / st.value),
           dl_cat(L, tui_fmt_bytes(a, sizeof(a), &su), " / ", tui_fmt_bytes(b, sizeof(b), &st)));
    }
    /* temperature and power */
    l = dl_add(L, false);
    bool t_ok = metric_ok(&m[M_TEMP]);
    dp(l, R_NORMAL, "Temp ");
    dp(l, t_ok ? tui_role_temp(m[M_TEMP].value) : R_FREE,
       dl_cat(L, tui_fmt_temp(a, sizeof(a), v, &m[M_TEMP])));
    if (metric_ok(&m[M_TEMP_SLOWDOWN]) || metric_ok(&m[M_TEMP_SHUTDOWN]))
        dp_opt(l, R_FREE, dl_cat(L, " (", g->down, temp_num(a, sizeof(a), v, &m[M_TEMP_SLOWDOWN]), " ",
                             g->cross, temp_num(b, sizeof(b), v, &m[M_TEMP_SHUTDOWN]), ")"));
    dp(l, R_NORMAL, "  Power ");
    dp(l, tui_na_or(&m[M_POWER], R_NORMAL), dl_cat(L, tui_fmt_num(a, sizeof(a), &m[M_POWER], 1, 0),
                                                   metric_ok(&m[M_POWER]) ? " W" : ""));
    dp(l, tui_na_or(&m[M_POWER_LIMIT], R_NORMAL),
       dl_cat(L, " / ", tui_fmt_num(b, sizeof(b), &m[M_POWER_LIMIT], 1, 0),
              metric_ok(&m[M_POWER_LIMIT]) ? " W" : ""));
    dp_mark(l, par);
    /* why a key value is missing: the question MIG users ask first */
    const char *label = NULL;
    int nwhy = 0;
    const char *why = first_reason(d, &label, &nwhy);
    if (why) {
        l = dl_add(L, false);
        dp(l, R_FREE, dl_cat(L, label, " N/A: ", why));
        if (nwhy > 1)
            dp(l, R_FREE, dl_str(L, " (+%d more: i)", nwhy - 1));
    }
    L->key = L->n;

    /* identity */
    l = dl_add(L, false);
    dp(l, R_NORMAL, "Name ");
    if (mig) {
        const struct device *p = d->parent_pos >= 0 ? &s->devices[d->parent_pos] : NULL;
        char gi[16] = "?", ci[16] = "?", pn[MIGMON_NAME_LEN + 8] = "?";
        if (d->gi_id >= 0)
            snprintf(gi, sizeof(gi), "%d", d->gi_id);
        if (d->ci_id >= 0)
            snprintf(ci, sizeof(ci), "%d", d->ci_id);
        if (p)
            tui_device_name(pn, sizeof(pn), p, false);
        dp(l, R_SELECTED, dl_str(L, "MIG %s  GI %s CI %s  %d/%d slices of GPU %d %s",
                                 d->profile[0] ? d->profile : "?", gi, ci, d->slices,
                                 p ? p->slices_total : -1, d->index, pn));
    } else {
        char nm[MIGMON_NAME_LEN + 8];
        tui_device_name(nm, sizeof(nm), d, false);
        dp(l, R_SELECTED, dl_cat(L, nm));
        dp(l, R_NORMAL, dl_cat(L, "  ", d->pci_bus_id[0] ? d->pci_bus_id : "bus N/A",
                               d->mig_enabled ? "  MIG on" : ""));
        if (d->serial[0]) /* a board without one (GeForce) says nothing */
            dp(l, R_NORMAL, dl_cat(L, "  S/N ", d->serial));
    }
    l = dl_add(L, false);
    dp(l, R_NORMAL, "UUID ");
    if (d->uuid[0])
        dp(l, R_NORMAL, d->uuid);
    else
        dp(l, R_FREE, dl_cat(L, "N/A (", d->uuid_why ? d->uuid_why : "not readable", ")"));
    dp(l, R_NORMAL, "  Arch ");
    dp(l, d->arch[0] ? R_NORMAL : R_FREE, d->arch[0] ? d->arch : "N/A");
    dp(l, R_NORMAL, "  CC ");
    if (d->cc_major >= 0)
        dp(l, R_NORMAL, dl_str(L, "%d.%d", d->cc_major, d->cc_minor));
    else
        dp(l, R_FREE, "N/A");

    /* the rest, two to a row on a wide panel */
    l = dl_add(L, true);
    dp(l, R_NORMAL, "Clk ");
    if (!metric_ok(&m[M_CLK_GFX]) && !metric_ok(&m[M_CLK_SM]) && !metric_ok(&m[M_CLK_MEM])) {
        dp(l, R_FREE, "N/A  "); /* not "N/A/N/A/N/A MHz" */
    } else {
        dp(l, R_CPU, dl_cat(L, tui_fmt_num(a, sizeof(a), &m[M_CLK_GFX], 1, 0), "/",
                            tui_fmt_num(b, sizeof(b), &m[M_CLK_SM], 1, 0), "/",
                            tui_fmt_num(c, sizeof(c), &m[M_CLK_MEM], 1, 0), " MHz"));
        dp_opt(l, R_FREE, " gfx/sm/mem");
        dp(l, R_FREE, "  ");
    }
    if (metric_ok(&m[M_PSTATE]))
        dp(l, tui_role_pstate((int)m[M_PSTATE].value), dl_whole(L, "P", m[M_PSTATE].value));
    else
        dp(l, R_FREE, "P-state N/A");
    dp_mark(l, par);
    l = dl_add(L, true);
    dp(l, R_NORMAL, "Energy ");
    if (metric_ok(&m[M_ENERGY]))
        dp(l, R_NORMAL, dl_cat(L, units_energy(a, sizeof(a), m[M_ENERGY].value),
                               m[M_ENERGY].src == MSRC_CARRIED ? "*" : ""));
    else
        dp(l, R_FREE, "N/A");
    dp_opt(l, R_FREE, " since driver load");
    dp_metric(L, l, "  Fan ", &m[M_FAN], R_NORMAL);
    dp_mark(l, par);
    l = dl_add(L, true);
    dp(l, R_NORMAL, "PCIe ");
    if (!metric_ok(&m[M_PCIE_GEN]) && !metric_ok(&m[M_PCIE_WIDTH]))
        dp(l, R_FREE, "N/A"); /* not "GenN/A xN/A" */
    else /* "Gen4 x16", "Gen N/A x16", "Gen4 x N/A" */
        dp(l, R_PCIE, dl_cat(L, metric_ok(&m[M_PCIE_GEN]) ? "Gen" : "Gen ",
                             tui_fmt_num(a, sizeof(a), &m[M_PCIE_GEN], 1, 0),
                             metric_ok(&m[M_PCIE_WIDTH]) ? " x" : " x ",
                             tui_fmt_num(b, sizeof(b), &m[M_PCIE_WIDTH], 1, 0)));
    dp(l, R_NORMAL, "  TX ");
    dp(l, tui_na_or(&m[M_PCIE_TX], R_PCIE), dl_cat(L, tui_fmt_rate(a, sizeof(a), &m[M_PCIE_TX])));
    dp(l, R_NORMAL, "  RX ");
    dp(l, tui_na_or(&m[M_PCIE_RX], R_PCIE), dl_cat(L, tui_fmt_rate(a, sizeof(a), &m[M_PCIE_RX])));
    dp_mark(l, par);
    l = dl_add(L, true);
    bool unc_bad = metric_ok(&m[M_ECC_UNCORR]) && m[M_ECC_UNCORR].value > 0;
    dp(l, R_NORMAL, "ECC ");
    dp(l, tui_na_or(&m[M_ECC_MODE], R_NORMAL),
       !metric_ok(&m[M_ECC_MODE]) ? "N/A" : m[M_ECC_MODE].value ? "on" : "off");
    dp(l, R_NORMAL, "  corrected ");
    dp(l, tui_na_or(&m[M_ECC_CORR], R_GOOD), dl_cat(L, tui_fmt_num(a, sizeof(a), &m[M_ECC_CORR], 1, 0)));
    dp(l, R_NORMAL, "  uncorrected ");
    dp(l, unc_bad ? R_ALARM : tui_na_or(&m[M_ECC_UNCORR], R_GOOD),
       dl_cat(L, tui_fmt_num(b, sizeof(b), &m[M_ECC_UNCORR], 1, 0)));
    dp_mark(l, par);
    l = dl_add(L, true);
    dp(l, R_NORMAL, "Processes ");
    dp(l, tui_na_or(&d->process_count, R_NORMAL),
       dl_cat(L, tui_fmt_num(a, sizeof(a), &d->process_count, 1, 0)));
    dp(l, R_NORMAL, "  Throttle ");
    if (d->throttle_valid) {
        /* idle is not a slowdown worth an alarm */
        const char *words[16];
        size_t n = units_throttle_words(d->throttle_mask & ~(uint64_t)1, words, 16);
        const char *tb = n ? dl_cat(L, words[0]) : "none";
        for (size_t i = 1; i < n; i++) /* appended in place: nothing came after tb */
            dl_join(L, tb, ", ", words[i]);
        dp(l, n ? R_ALARM : R_GOOD, tb);
    } else {
        dp(l, R_FREE, "N/A");
    }
    dp_mark(l, par); /* the GPU's clocks are slowed, not the instance's */
}

/* Rows the lines take at a panel width w. */
static int detail_rows(const struct dlines *L, int upto, int w)
{
    bool two = w >= 90;
    int rows = 0;
    for (int i = 0; i < upto; i++) {
        if (two && L->l[i].pair && i + 1 < upto && L->l[i + 1].pair)
            i++;
        rows++;
    }
    return rows;
}

/* One detail line in r: when it is too wide, without its optional pieces,
 * and then cut before its marker, which stays whole at the end. */
static void draw_dline(WINDOW *win, const struct tui_view *v, struct rect r, const struct dline *l)
{
    struct piece p[16];
    int n = 0, w = 0, full = 0;
    for (int i = 0; i < l->n; i++)
        full += l->p[i].s ? tui_text_width(l->p[i].s) : 0;
    for (int i = 0; i < l->n; i++) {
        if (full > r.w && i < 32 && (l->opt >> i & 1u))
            continue;
        p[n++] = l->p[i];
        w += p[n - 1].s ? tui_text_width(p[n - 1].s) : 0;
    }
    if (w <= r.w || !l->mark || n < 2) {
        tui_line(win, v, r, r.y, p, (size_t)n);
        return;
    }
    int mw = tui_text_width(p[n - 1].s);
    struct rect body = {r.y, r.x, 1, r.w > mw ? r.w - mw : 0};
    tui_line(win, v, body, r.y, p, (size_t)(n - 1));
    tui_text(win, &v->theme, r, r.y, r.x + body.w, p[n - 1].role, p[n - 1].s);
}

static void draw_detail(WINDOW *win, struct tui_view *v, const struct dlines *L)
{
    struct rect in = tui_box(win, &v->theme, v->lay.detail_r,
                             v->gpm_page ? "Detail: GPM (g: back)" : "Detail", R_TITLE);
    const struct device *d = tui_view_selected(v);
    if (!d || in.h <= 0)
        return;
    if (v->gpm_page) {
        draw_detail_gpm(win, v, in, d);
        return;
    }
    bool two = in.w >= 90;
    int half = (in.w - 2) / 2, y = in.y;
    for (int i = 0; i < L->n && y < in.y + in.h; i++, y++) {
        const struct dline *l = &L->l[i];
        if (two && l->pair && i + 1 < L->n && L->l[i + 1].pair) {
            draw_dline(win, v, (struct rect){y, in.x, 1, half}, l);
            i++;
            draw_dline(win, v, (struct rect){y, in.x + half + 2, 1, in.w - half - 2}, &L->l[i]);
        } else {
            draw_dline(win, v, (struct rect){y, in.x, 1, in.w}, l);
        }
    }
    if (detail_rows(L, L->n, in.w) > in.h) /* some lines did not fit */
        tui_text(win, &v->theme, v->lay.detail_r, v->lay.detail_r.y + v->lay.detail_r.h - 1,
                 v->lay.detail_r.x + v->lay.detail_r.w - 14, R_FREE, " more: i, g ");
}

/* ---- processes ---- */

/* Columns of the process list; header and rows share the widths. Below
 * 64 columns USER and CPU% give way to the command. */
static void proc_line(char *out, size_t len, bool wide, const char *pid,
                      const char *user, const char *type, const char *gc, const char *mem,
                      const char *sm, const char *cpu, const char *cmd)
{
    if (wide)
        snprintf(out, len, "%7s %-8.8s %-5s %s%9s %4s %5s %s", pid, user, type, gc, mem, sm, cpu,
                 cmd);
    else
        snprintf(out, len, "%7s %-5s %s%9s %4s %s", pid, type, gc, mem, sm, cmd);
}

static void draw_procs(WINDOW *win, struct tui_view *v)
{
    static const char *const sort_names[PSORT_COUNT] = {"VRAM", "SM%", "CPU%", "PID"};
    const struct device *d = tui_view_selected(v);
    tui_view_sort_procs(v);
    bool gici = d && (d->kind == DEV_MIG || d->mig_enabled);
    char title[160];
    int off = snprintf(title, sizeof(title), "Processes (by %s)", sort_names[v->psort]);
    if (v->filter[0] && off > 0 && (size_t)off < sizeof(title))
        snprintf(title + off, sizeof(title) - (size_t)off, " /%s: %zu", v->filter, v->nrows);
    struct rect in = tui_box(win, &v->theme, v->lay.procs, title,
                             v->proc_focus ? R_SELECTED : R_TITLE);
    if (!d || in.h <= 0)
        return;
    bool wide = in.w >= 64;
    int y = in.y;
    char buf[PROC_CMD_LEN + 160];
    proc_line(buf, sizeof(buf), wide, "PID", "USER", "TYPE", gici ? "GI/CI " : "", "VRAM",
              "SM%", "CPU%", "COMMAND");
    tui_text(win, &v->theme, in, y++, in.x, R_TITLE, buf);
    if (v->nrows == 0) {
        const char *msg = !metric_ok(&d->process_count)
                              ? (d->process_count.why ? d->process_count.why : "process list unavailable")
                          : v->filter[0] ? "No process matches the filter"
                                         : "No GPU processes";
        tui_text(win, &v->theme, in, y, in.x, R_FREE, msg);
        return;
    }
    int rows = in.h - 1;
    int first = 0;
    if (v->proc_focus && (int)v->proc_sel >= rows)
        first = (int)v->proc_sel - rows + 1;
    for (int r = 0; r < rows && (size_t)(first + r) < v->nrows; r++) {
        size_t k = (size_t)(first + r);
        const struct gpu_process *p = &v->snap->procs[v->rows[k]];
        char pid[16], type[16], gc[24] = "", mem[40], sm[16], cpu[16];
        snprintf(pid, sizeof(pid), "%u", (unsigned)p->pid);
        snprintf(type, sizeof(type), "%s%s", proc_type_name(p->type), p->unattributed ? "?" : "");
        if (gici) {
            if (p->gi_id >= 0 && p->ci_id >= 0)
                snprintf(gc, sizeof(gc), "%2d/%-2d ", p->gi_id, p->ci_id);
            else
                snprintf(gc, sizeof(gc), " ?/?  ");
        }
        tui_fmt_bytes(mem, sizeof(mem), &p->mem_bytes);
        tui_fmt_pct(sm, sizeof(sm), &p->sm_util, 0);
        tui_fmt_pct(cpu, sizeof(cpu), &p->cpu_pct, 0);
        bool hidden = p->local_pid < 0;
        const char *user = p->user[0] ? p->user : "N/A";
        const char *cmd = p->command[0] ? p->command
                          : p->name[0]  ? p->name
                          : hidden      ? "N/A (not visible from here)"
                                        : "N/A";
        proc_line(buf, sizeof(buf), wide, pid, user, type, gc, mem, sm, cpu, cmd);
        enum tui_role role = p->carried ? R_FREE : R_NORMAL;
        if (v->proc_focus && k == v->proc_sel)
            role = R_SELECTED;
        tui_text(win, &v->theme, in, y + r, in.x, role, buf);
    }
}

/* ---- the whole screen ---- */

static void draw_screen(WINDOW *win, struct tui_view *v)
{
    if (v->all_procs) /* first: the selection follows the process under the cursor */
        tui_view_sort_procs(v);
    const struct device *d = tui_view_selected(v);
    int h, w;
    getmaxyx(win, h, w);
    static struct dlines L; /* the UI thread's */
    L.n = L.key = 0;
    if (d)
        build_detail(&L, v, d);
    int lw = w >= 160 ? w / 2 : w * 2 / 5, inner = w - lw - 2;
    if (d && !v->all_procs)
        tui_view_sort_procs(v);
    struct tui_layout_want want = {
        .ncores = v->snap && v->snap->host_ok ? v->snap->host.ncores : 0,
        .cpu_id_width = 1,
        .dev_rows = (int)tui_view_rows_wanted(v),
        .detail_key = d ? detail_rows(&L, L.key, inner) : 1,
        .detail_full = d ? (v->gpm_page ? 16 : detail_rows(&L, L.n, inner)) : 1,
        .proc_rows = (int)v->nrows,
    };
    struct tui_chart_plan plan;
    tui_plan_gpu_charts(v, lw, &plan);
    want.ncharts = plan.n;
    for (int i = 0; i < plan.n; i++)
        want.chart_fixed[i] = plan.rows[i];
    if (v->snap && v->snap->host_ok)
        for (size_t i = 0; i < v->snap->host.ncores; i++) {
            int id = v->snap->host.cores[i].id, dw = 1;
            while (id >= 10) {
                id /= 10;
                dw++;
            }
            if (dw > want.cpu_id_width)
                want.cpu_id_width = dw;
        }
    if (v->snap && v->snap->ndevices == 0)
        want.detail_key = want.detail_full = 0;
    tui_layout_compute(&v->lay, h, w, &want);
    if (v->lay.too_small) {
        char msg[96];
        snprintf(msg, sizeof(msg), "terminal too small: %dx%d, needs %dx%d", w, h, TUI_MIN_W,
                 TUI_MIN_H);
        struct rect all = {0, 0, h, w};
        int y = h / 2 - 1;
        draw_wrapped(win, v, all, &y, R_WARN, msg);
        return;
    }
    draw_header(win, v);
    draw_cpu(win, v);
    if (v->snap && v->snap->ndevices > 0) {
        if (v->all_procs) {
            tui_draw_allprocs(win, v);
        } else {
            tui_draw_devices(win, v);
            if (v->lay.detail)
                draw_detail(win, v, &L);
            draw_procs(win, v);
        }
    } else {
        draw_no_gpu(win, v);
    }
    tui_draw_gpu_charts(win, v, &plan);
    tui_draw_host_charts(win, v);
    draw_footer(win, v);
    tui_draw_overlay(win, v);
}

void tui_draw(WINDOW *win, struct tui_view *v)
{
    tui_frame_begin(win);
    draw_screen(win, v);
    tui_frame_end(win);
}
