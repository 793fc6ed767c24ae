/*
 * panels.c — the panels of the seed README's screen ("Screen Layout"):
 * header, CPU cores, device list, detail, top processes, GPU charts, CPU
 * total, RAM/SWP bars and legend, RAM chart, footer, and the overlays.
 *
 * Conventions on screen: "N/A" (dim) for a value that could not be read;
 * "~" before an estimate; "*" after a carried value; a dim "gpm"/"proc"
 * tag after values from GPM or per-process samples; on a MIG device the
 * lines holding the parent GPU's values end in a dim "[GPU n]".
 */
#include "tui/panels.h"
#include "text.h"

#include <math.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "clock.h"
#include "tui/charts.h"
#include "tui/fmt.h"
#include "tui/widgets.h"

/* ---- formatting ---- */

static const char *src_tag(const struct metric *m)
{
    switch (m->src) {
    case MSRC_GPM: return " gpm";
    case MSRC_PROCESS: return " proc";
    default: return "";
    }
}

/* ---- small drawing helpers ---- */

static enum tui_role na_or(const struct metric *m, enum tui_role role)
{
    return metric_ok(m) ? role : R_FREE;
}



/* ---- selection ---- */

void tui_view_follow(struct tui_view *v)
{
    const struct snapshot *s = v->snap;
    if (!s || s->ndevices == 0) {
        v->sel = 0;
        return;
    }
    if (v->sel_uuid[0])
        for (size_t i = 0; i < s->ndevices; i++)
            if (strcmp(s->devices[i].uuid, v->sel_uuid) == 0) {
                v->sel = i;
                return;
            }
    if (v->sel >= s->ndevices)
        v->sel = s->ndevices - 1;
    snprintf(v->sel_uuid, sizeof(v->sel_uuid), "%s", s->devices[v->sel].uuid);
}

void tui_view_select_abs(struct tui_view *v, size_t index)
{
    const struct snapshot *s = v->snap;
    if (!s || s->ndevices == 0)
        return;
    if (index >= s->ndevices)
        index = s->ndevices - 1;
    if (index != v->sel) {
        v->proc_sel = 0;
        v->proc_sel_pid = 0;
    }
    v->sel = index;
    snprintf(v->sel_uuid, sizeof(v->sel_uuid), "%s", s->devices[index].uuid);
}

void tui_view_select(struct tui_view *v, long delta)
{
    const struct snapshot *s = v->snap;
    if (!s || s->ndevices == 0)
        return;
    long i = (long)v->sel + delta;
    if (i < 0)
        i = 0;
    tui_view_select_abs(v, (size_t)i);
}

long tui_view_device_at(const struct tui_view *v, int y, int x)
{
    struct rect r = v->lay.devices;
    if (v->lay.too_small || !v->snap || y <= r.y || y >= r.y + r.h - 1 || x <= r.x ||
        x >= r.x + r.w - 1)
        return -1;
    long i = (long)v->dev_scroll + (y - r.y - 1);
    return i < (long)v->snap->ndevices ? i : -1;
}

/* ---- processes ---- */

static double sort_key(const struct gpu_process *p, enum proc_sort k)
{
    const struct metric *m = k == PSORT_SM ? &p->sm_util : k == PSORT_CPU ? &p->cpu_pct
                                                                          : &p->mem_bytes;
    return metric_ok(m) ? m->value : -1.0; /* unknown sorts after every known value */
}

void tui_view_sort_procs(struct tui_view *v)
{
    v->nrows = 0;
    const struct device *d = tui_view_selected(v);
    if (!d)
        return;
    const struct gpu_process *base = v->snap->procs + d->proc_first;
    size_t n = d->nprocs < TUI_PROC_ROWS_MAX ? d->nprocs : TUI_PROC_ROWS_MAX;
    /* insertion sort: a few dozen rows, no allocation */
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        while (j > 0) {
            const struct gpu_process *a = &base[v->rows[j - 1]], *b = &base[i];
            bool before;
            if (v->psort == PSORT_PID) {
                before = b->pid < a->pid;
            } else {
                double ka = sort_key(a, v->psort), kb = sort_key(b, v->psort);
                before = kb > ka || (kb == ka && b->pid < a->pid);
            }
            if (!before)
                break;
            v->rows[j] = v->rows[j - 1];
            j--;
        }
        v->rows[j] = i;
    }
    v->nrows = n;
    /* keep the cursor on the same PID when it is still listed */
    if (v->proc_sel_pid)
        for (size_t i = 0; i < n; i++)
            if (base[v->rows[i]].pid == v->proc_sel_pid)
                v->proc_sel = i;
    if (v->proc_sel >= n)
        v->proc_sel = n ? n - 1 : 0;
    v->proc_sel_pid = n ? base[v->rows[v->proc_sel]].pid : 0;
}

/* ---- header and footer ---- */

static void draw_header(WINDOW *win, const struct tui_view *v)
{
    struct rect r = v->lay.header;
    const struct tui_theme *t = &v->theme;
    tui_fill(win, t, (struct rect){r.y, r.x, 1, r.w}, R_HEADER);
    char left[384], clk[40];
    const struct snapshot *s = v->snap;
    snprintf(left, sizeof(left), " mig-gpu-mon  %s%s%s", s && s->host.hostname[0] ? s->host.hostname : "",
             v->demo_label ? "  " : "", v->demo_label ? v->demo_label : "");
    time_t now = s && s->wall_ns ? (time_t)(s->wall_ns / 1000000000) : time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(clk, sizeof(clk), "%Y-%m-%d %H:%M:%S ", &tm);
    int cw = (int)strlen(clk);
    tui_text(win, t, (struct rect){r.y, r.x, 1, r.w - cw - 1}, r.y, r.x, R_HEADER, left);
    if (r.w > cw)
        tui_text(win, t, r, r.y, r.x + r.w - cw, R_HEADER, clk);
}

static void draw_footer(WINDOW *win, const struct tui_view *v)
{
    struct rect r = v->lay.footer;
    const struct tui_theme *t = &v->theme;
    char right[64];
    const struct snapshot *s = v->snap;
    size_t n = s ? s->ndevices : 0;
    snprintf(right, sizeof(right), "%s[%zu/%zu] ", v->paused ? "PAUSED  " : "",
             n ? v->sel + 1 : 0, n);
    if (v->status[0]) {
        tui_text(win, t, r, r.y, r.x, R_WARN, v->status);
    } else {
        const char *keys = v->proc_focus
                               ? " Esc Devices  \u2191\u2193 Process  Enter Command  s Sort  k Kill  ? Help"
                               : " q Quit  Tab/\u2191\u2193 Device  p Processes  space Pause  ? Help";
        if (!t->g.utf8)
            keys = v->proc_focus ? " Esc Devices  Up/Dn Process  Enter Command  s Sort  k Kill  ? Help"
                                 : " q Quit  Tab/Up/Dn Device  p Processes  space Pause  ? Help";
        tui_text(win, t, (struct rect){r.y, r.x, 1, r.w - (int)strlen(right)}, r.y, r.x, R_NORMAL,
                 keys);
    }
    int rw = (int)strlen(right);
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

/* ---- device list ---- */

/* A device whose static facts could not be read (a lost GPU): what NVML
 * said instead of its name. */
static const char *unnamed(const struct device *d)
{
    for (int i = 0; i < M_COUNT; i++)
        if (!metric_ok(&d->m[i]) && d->m[i].why)
            return d->m[i].why;
    return "name not readable";
}

static void device_label(char *out, size_t len, const struct device *d)
{
    if (d->kind == DEV_MIG)
        snprintf(out, len, "  MIG %d %s", d->mig_index, d->profile[0] ? d->profile : "?");
    else
        snprintf(out, len, "GPU %d: %s%s%s", d->index, d->name[0] ? "" : "(",
                 d->name[0] ? d->name : unnamed(d), d->name[0] ? "" : ")");
}

/* Word-wrap text (lines split at '\n') into r from row *y on. */
static void draw_wrapped(WINDOW *win, const struct tui_view *v, struct rect r, int *y,
                         enum tui_role role, const char *text)
{
    char buf[512];
    const char *p = text;
    while (*p && *y < r.y + r.h) {
        size_t len = strcspn(p, "\n"), take = len;
        if (take > (size_t)r.w) {
            take = (size_t)r.w;
            size_t sp = take;
            while (sp > 0 && p[sp] != ' ')
                sp--;
            if (sp > 0)
                take = sp;
        }
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
     * the user. */
    const char *hint = "No GPU data. Point --nvml-path at libnvidia-ml.so.1, or try --demo.";
    if (strncmp(err, "starting NVML", 13) == 0)
        hint = "Starting NVML (the driver is slow to answer):";
    else if (strstr(err, "nvmlInit failed") || strstr(err, "driver went away"))
        hint = "The NVIDIA driver is not ready; the monitor retries by itself:";
    else if (v->demo_label)
        hint = "The simulator could not start this scenario:";
    else if (s && s->gpu_ok)
        hint = "No GPU.";
    draw_wrapped(win, v, in, &y, R_WARN, hint);
    draw_wrapped(win, v, in, &y, R_FREE, err);
}

static void draw_devices(WINDOW *win, struct tui_view *v)
{
    const struct snapshot *s = v->snap;
    char title[64];
    snprintf(title, sizeof(title), "Devices");
    struct rect in = tui_box(win, &v->theme, v->lay.devices, title, R_TITLE);
    if (in.h <= 0 || in.w <= 0)
        return;
    if (!s || s->ndevices == 0)
        return; /* tui_draw shows draw_no_gpu() instead */
    /* scroll so the selection is visible */
    if ((int)v->sel < v->dev_scroll)
        v->dev_scroll = (int)v->sel;
    if ((int)v->sel >= v->dev_scroll + in.h)
        v->dev_scroll = (int)v->sel - in.h + 1;
    if (v->dev_scroll > (int)s->ndevices - in.h)
        v->dev_scroll = (int)s->ndevices - in.h;
    if (v->dev_scroll < 0)
        v->dev_scroll = 0;
    for (int row = 0; row < in.h; row++) {
        size_t i = (size_t)(v->dev_scroll + row);
        if (i >= s->ndevices)
            break;
        const struct device *d = &s->devices[i];
        bool sel = i == v->sel;
        char label[160], util[32], vram[32], buf[256];
        device_label(label, sizeof(label), d);
        struct metric vp = tui_vram_pct(d);
        tui_fmt_pct(util, sizeof(util), &d->m[M_GPU_UTIL], 0);
        tui_fmt_pct(vram, sizeof(vram), &vp, 0);
        snprintf(buf, sizeof(buf), "%s %s", sel ? v->theme.g.sel : " ", label);
        int y = in.y + row;
        int x = tui_text(win, &v->theme, in, y, in.x, sel ? R_SELECTED : R_NORMAL, buf);
        /* a lost or stalled GPU says so in the alarm colour */
        if (d->lost || d->stall) {
            char tag[48];
            if (d->lost)
                snprintf(tag, sizeof(tag), " LOST %.0fs ago", d->lost_for_s);
            else
                snprintf(tag, sizeof(tag), " STALLED");
            x = tui_text(win, &v->theme, in, y, x, R_ALARM, tag);
        }
        /* the figures right-aligned when they fit, else after the label */
        char fig[96];
        const char *tag = src_tag(&d->m[M_GPU_UTIL]);
        snprintf(fig, sizeof(fig), " GPU:%s%s VRAM:%s", util, tag, vram);
        int fx = in.x + in.w - (int)strlen(fig);
        if (fx < x)
            fx = x;
        struct piece p[] = {
            {R_NORMAL, " GPU:"}, {na_or(&d->m[M_GPU_UTIL], R_NORMAL), util}, {R_FREE, tag},
            {R_NORMAL, " VRAM:"}, {na_or(&vp, R_NORMAL), vram},
        };
        tui_line(win, v, (struct rect){y, fx, 1, in.x + in.w - fx}, y, p, 5);
    }
    /* scroll marks on the border */
    if (v->dev_scroll > 0)
        tui_text(win, &v->theme, v->lay.devices, v->lay.devices.y,
                 v->lay.devices.x + v->lay.devices.w - 4, R_FREE, v->theme.g.utf8 ? "\u25b2" : "^");
    if (v->dev_scroll + in.h < (int)s->ndevices)
        tui_text(win, &v->theme, v->lay.devices, v->lay.devices.y + v->lay.devices.h - 1,
                 v->lay.devices.x + v->lay.devices.w - 4, R_FREE, v->theme.g.utf8 ? "\u25bc" : "v");
}

/* ---- detail ---- */

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
        {M_SM_OCCUPANCY, "SM occupancy"},  {M_MEM_UTIL, "DRAM bandwidth"},
        {M_TENSOR_UTIL, "Tensor (any)"},   {M_HMMA_TENSOR_UTIL, "Tensor HMMA"},
        {M_IMMA_TENSOR_UTIL, "Tensor IMMA"}, {M_DFMA_TENSOR_UTIL, "Tensor DFMA"},
        {M_FP64_UTIL, "FP64"},             {M_FP32_UTIL, "FP32"},
        {M_FP16_UTIL, "FP16"},             {M_INT_UTIL, "Integer"},
        {M_NVLINK_TX, "NVLink TX"},        {M_NVLINK_RX, "NVLink RX"},
        {M_PCIE_TX, "PCIe TX"},            {M_PCIE_RX, "PCIe RX"},
    };
    struct detail_cursor cur = {.in = in, .y = in.y, .col = 0, .two = in.w >= 90};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct metric *m = &d->m[rows[i].id];
        /* On a full GPU the utilisation and memory rows are NVML's direct
         * readings, not GPM's: say which. */
        char val[48], label[32], note[160];
        bool rate = strcmp(metric_info(rows[i].id)->unit, "B/s") == 0;
        if (!metric_ok(m))
            snprintf(val, sizeof(val), "N/A");
        else if (rate)
            snprintf(val, sizeof(val), "%.1f MB/s", m->value / 1e6);
        else
            tui_fmt_pct(val, sizeof(val), m, 1);
        snprintf(label, sizeof(label), "%-18s", rows[i].label);
        const char *scope = "";
        if (d->kind == DEV_MIG && metric_info(rows[i].id)->gpu_wide)
            scope = " [GPU]";
        else if (m->scope == MSCOPE_GPU_INSTANCE)
            scope = " [GPU instance]";
        if (metric_ok(m))
            snprintf(note, sizeof(note), " %s%s", metric_source_name(m->src), scope);
        else
            snprintf(note, sizeof(note), " %s", m->why ? m->why : "");
        struct piece p[] = {{R_NORMAL, label}, {na_or(m, R_NORMAL), val}, {R_FREE, note}};
        detail_line(win, v, &cur, metric_ok(m), p, 3);
    }
}

static void draw_detail(WINDOW *win, const struct tui_view *v)
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
    const struct snapshot *s = v->snap;
    const struct tui_glyphs *g = &v->theme.g;
    bool mig = d->kind == DEV_MIG;
    char par[48] = "";
    if (mig)
        snprintf(par, sizeof(par), " [GPU %d]", d->index);
    char a[64], b[64], c[64], e[64], buf[384];
    struct detail_cursor cur = {.in = in, .y = in.y, .col = 0, .two = in.w >= 90};
    const struct metric *m = d->m;

    /* Name */
    if (mig) {
        const struct device *p = d->parent_pos >= 0 ? &s->devices[d->parent_pos] : NULL;
        snprintf(buf, sizeof(buf), "MIG %s GI %d CI %d (%d/%d slices) on GPU %d: %s",
                 d->profile[0] ? d->profile : "?", d->gi_id, d->ci_id, d->slices,
                 p ? p->slices_total : -1, d->index, p ? p->name : "?");
    } else {
        snprintf(buf, sizeof(buf), "%s%s", d->name[0] ? d->name : unnamed(d),
                 d->mig_enabled ? "  MIG on" : "");
    }
    struct piece name[] = {{R_NORMAL, "Name: "}, {R_SELECTED, buf}};
    detail_line(win, v, &cur, false, name, 2);
    /* UUID, arch */
    if (d->cc_major >= 0)
        snprintf(a, sizeof(a), "%d.%d", d->cc_major, d->cc_minor);
    else
        snprintf(a, sizeof(a), "N/A");
    char un[80];
    snprintf(un, sizeof(un), "N/A%s%.60s%s", d->uuid_why ? " (" : "", d->uuid_why ? d->uuid_why : "",
             d->uuid_why ? ")" : "");
    struct piece uuid[] = {{R_NORMAL, "UUID: "}, {d->uuid[0] ? R_NORMAL : R_FREE, d->uuid[0] ? d->uuid : un},
                           {R_NORMAL, "  Arch:"}, {d->arch[0] ? R_NORMAL : R_FREE, d->arch[0] ? d->arch : "N/A"},
                           {R_NORMAL, "  CC:"}, {d->cc_major >= 0 ? R_NORMAL : R_FREE, a}};
    detail_line(win, v, &cur, false, uuid, 6);
    /* VRAM */
    struct metric vp = tui_vram_pct(d);
    tui_fmt_num(a, sizeof(a), &m[M_MEM_USED], 1 / MIB, 0);
    tui_fmt_num(b, sizeof(b), &m[M_MEM_TOTAL], 1 / MIB, 0);
    tui_fmt_pct(c, sizeof(c), &vp, 1);
    snprintf(buf, sizeof(buf), "%s MB / %s MB (%s)", a, b, c);
    struct piece vram[] = {{R_NORMAL, "VRAM "},
                           {metric_ok(&vp) ? tui_role_vram(vp.value) : R_FREE,
                            metric_ok(&m[M_MEM_USED]) || metric_ok(&m[M_MEM_TOTAL]) ? buf : "N/A"}};
    detail_line(win, v, &cur, false, vram, 2);
    /* utilisation, encoder, decoder */
    tui_fmt_pct(a, sizeof(a), &m[M_GPU_UTIL], 0);
    tui_fmt_pct(b, sizeof(b), &m[M_MEM_UTIL], 0);
    tui_fmt_pct(c, sizeof(c), &m[M_SM_UTIL], 0);
    char en[32], de[32];
    tui_fmt_pct(en, sizeof(en), &m[M_ENC_UTIL], 0);
    tui_fmt_pct(de, sizeof(de), &m[M_DEC_UTIL], 0);
    struct piece util[] = {
        {R_NORMAL, "GPU: "}, {na_or(&m[M_GPU_UTIL], R_NORMAL), a}, {R_FREE, src_tag(&m[M_GPU_UTIL])},
        {R_NORMAL, "  Mem: "}, {na_or(&m[M_MEM_UTIL], R_NORMAL), b}, {R_FREE, src_tag(&m[M_MEM_UTIL])},
        {R_NORMAL, "  SM: "}, {na_or(&m[M_SM_UTIL], R_NORMAL), c}, {R_FREE, src_tag(&m[M_SM_UTIL])},
        {R_NORMAL, "  Enc: "}, {na_or(&m[M_ENC_UTIL], R_VRAM), en},
        {R_NORMAL, "  Dec: "}, {na_or(&m[M_DEC_UTIL], R_VRAM), de},
    };
    detail_line(win, v, &cur, false, util, 13);
    /* clocks */
    tui_fmt_num(a, sizeof(a), &m[M_CLK_GFX], 1, 0);
    tui_fmt_num(b, sizeof(b), &m[M_CLK_SM], 1, 0);
    tui_fmt_num(c, sizeof(c), &m[M_CLK_MEM], 1, 0);
    if (metric_ok(&m[M_PSTATE]))
        snprintf(e, sizeof(e), "P%.0f", m[M_PSTATE].value);
    else
        snprintf(e, sizeof(e), "P?");
    snprintf(buf, sizeof(buf), "%s/%s/%s MHz", a, b, c);
    struct piece clk[] = {
        {R_NORMAL, "Clk: "}, {R_CPU, buf}, {R_NORMAL, "  "},
        {metric_ok(&m[M_PSTATE]) ? tui_role_pstate((int)m[M_PSTATE].value) : R_FREE, e},
        {R_FREE, par}};
    detail_line(win, v, &cur, true, clk, 5);
    /* temperature and power */
    tui_fmt_num(a, sizeof(a), &m[M_TEMP], 1, 0);
    snprintf(buf, sizeof(buf), "%s%s%s", a, metric_ok(&m[M_TEMP]) ? g->deg : "",
             metric_ok(&m[M_TEMP]) ? "C" : "");
    tui_fmt_num(b, sizeof(b), &m[M_TEMP_SLOWDOWN], 1, 0);
    tui_fmt_num(c, sizeof(c), &m[M_TEMP_SHUTDOWN], 1, 0);
    char thr[192], pw[96], pl[32];
    snprintf(thr, sizeof(thr), " (%s%s %s%s)", g->down, b, g->cross, c);
    tui_fmt_num(pw, sizeof(pw), &m[M_POWER], 1, 0);
    tui_fmt_num(pl, sizeof(pl), &m[M_POWER_LIMIT], 1, 0);
    size_t pn = strlen(pw);
    snprintf(pw + pn, sizeof(pw) - pn, "/%sW", pl);
    char fan[32], kj[32];
    tui_fmt_pct(fan, sizeof(fan), &m[M_FAN], 0);
    struct piece temp[] = {
        {R_NORMAL, "Temp: "}, {metric_ok(&m[M_TEMP]) ? tui_role_temp(m[M_TEMP].value) : R_FREE, buf},
        {R_FREE, thr}, {R_NORMAL, "  Fan: "}, {na_or(&m[M_FAN], R_NORMAL), fan}, {R_FREE, par}};
    detail_line(win, v, &cur, true, temp, 6);
    /* power and energy since the driver loaded */
    tui_fmt_num(kj, sizeof(kj), &m[M_ENERGY], 1e-3, 1);
    if (metric_ok(&m[M_ENERGY])) {
        size_t n = strlen(kj);
        snprintf(kj + n, sizeof(kj) - n, " kJ");
    }
    struct piece power[] = {{R_NORMAL, "Power: "}, {na_or(&m[M_POWER], R_NORMAL), pw},
                            {R_NORMAL, "  Energy: "}, {na_or(&m[M_ENERGY], R_NORMAL), kj},
                            {R_FREE, par}};
    detail_line(win, v, &cur, true, power, 5);
    /* PCIe */
    tui_fmt_num(a, sizeof(a), &m[M_PCIE_GEN], 1, 0);
    tui_fmt_num(b, sizeof(b), &m[M_PCIE_WIDTH], 1, 0);
    tui_fmt_num(c, sizeof(c), &m[M_PCIE_TX], 1 / 1e6, 1);
    tui_fmt_num(e, sizeof(e), &m[M_PCIE_RX], 1 / 1e6, 1);
    snprintf(buf, sizeof(buf), "Gen%s x%s  TX:%s RX:%s MB/s", a, b, c, e);
    struct piece pcie[] = {{R_NORMAL, "PCIe: "}, {R_PCIE, buf}, {R_FREE, par}};
    detail_line(win, v, &cur, true, pcie, 3);
    /* ECC */
    const char *ecc = !metric_ok(&m[M_ECC_MODE]) ? "N/A" : m[M_ECC_MODE].value ? "On" : "Off";
    tui_fmt_num(a, sizeof(a), &m[M_ECC_CORR], 1, 0);
    tui_fmt_num(b, sizeof(b), &m[M_ECC_UNCORR], 1, 0);
    bool unc_bad = metric_ok(&m[M_ECC_UNCORR]) && m[M_ECC_UNCORR].value > 0;
    struct piece eccp[] = {{R_NORMAL, "ECC: "}, {na_or(&m[M_ECC_MODE], R_NORMAL), ecc},
                           {R_NORMAL, "  Corr:"}, {na_or(&m[M_ECC_CORR], R_GOOD), a},
                           {R_NORMAL, "  Uncorr:"}, {unc_bad ? R_ALARM : na_or(&m[M_ECC_UNCORR], R_GOOD), b}};
    detail_line(win, v, &cur, true, eccp, 6);
    /* throttle and process count */
    const char *names[16];
    buf[0] = '\0';
    enum tui_role trole = R_FREE;
    if (d->throttle_valid) {
        /* idle is not a slowdown worth an alarm */
        uint64_t mask = d->throttle_mask & ~(uint64_t)1;
        size_t n = throttle_reason_names(mask, names, 16);
        size_t off = 0;
        for (size_t i = 0; i < n && off < sizeof(buf); i++)
            off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", i ? "," : "", names[i]);
        if (n == 0)
            snprintf(buf, sizeof(buf), "None");
        trole = n ? R_ALARM : R_GOOD;
    } else {
        snprintf(buf, sizeof(buf), "N/A");
    }
    tui_fmt_num(a, sizeof(a), &d->process_count, 1, 0);
    struct piece thp[] = {{R_NORMAL, "Throttle: "}, {trole, buf}, {R_NORMAL, "  Processes: "},
                          {na_or(&d->process_count, R_NORMAL), a}};
    detail_line(win, v, &cur, true, thp, 4);
    if (d->stall || d->lost) {
        if (d->stall)
            snprintf(buf, sizeof(buf), "%s", d->stall);
        else
            snprintf(buf, sizeof(buf), "GPU lost %.0f s ago: NVML_ERROR_GPU_IS_LOST (fell off the "
                                       "bus?)", d->lost_for_s);
        struct piece st[] = {{R_ALARM, buf}};
        detail_line(win, v, &cur, false, st, 1);
    }
    /* why GPU utilisation is absent: the question MIG users ask first */
    if (!metric_ok(&m[M_GPU_UTIL]) && m[M_GPU_UTIL].why) {
        snprintf(buf, sizeof(buf), "GPU util N/A: %s", m[M_GPU_UTIL].why);
        struct piece why[] = {{R_FREE, buf}};
        detail_line(win, v, &cur, false, why, 1);
    }
}

/* ---- top processes ---- */

static void fmt_bytes_mb(char *out, size_t len, const struct metric *m)
{
    if (!metric_ok(m))
        snprintf(out, len, "N/A");
    else
        snprintf(out, len, "%.0fMB%s", m->value / MIB, m->src == MSRC_CARRIED ? "*" : "");
}

static void draw_procs(WINDOW *win, struct tui_view *v)
{
    static const char *const sort_names[PSORT_COUNT] = {"VRAM", "SM%", "CPU%", "PID"};
    char title[64];
    snprintf(title, sizeof(title), "Top Processes (by %s)", sort_names[v->psort]);
    struct rect in = tui_box(win, &v->theme, v->lay.procs, title,
                             v->proc_focus ? R_SELECTED : R_TITLE);
    const struct device *d = tui_view_selected(v);
    tui_view_sort_procs(v);
    if (!d || in.h <= 0)
        return;
    int y = in.y;
    tui_text(win, &v->theme, in, y++, in.x, R_TITLE,
             "    PID USER      T      VRAM  SM%  CPU% COMMAND");
    if (v->nrows == 0) {
        const char *msg = !metric_ok(&d->process_count)
                              ? (d->process_count.why ? d->process_count.why : "process list unavailable")
                              : "No GPU processes";
        tui_text(win, &v->theme, in, y, in.x, R_FREE, msg);
        return;
    }
    const struct gpu_process *base = v->snap->procs + d->proc_first;
    int rows = in.h - 1;
    int first = 0;
    if (v->proc_focus && (int)v->proc_sel >= rows)
        first = (int)v->proc_sel - rows + 1;
    for (int r = 0; r < rows && (size_t)(first + r) < v->nrows; r++) {
        size_t k = (size_t)(first + r);
        const struct gpu_process *p = &base[v->rows[k]];
        char mem[32], sm[16], cpu[16], buf[PROC_CMD_LEN + 128];
        fmt_bytes_mb(mem, sizeof(mem), &p->mem_bytes);
        tui_fmt_pct(sm, sizeof(sm), &p->sm_util, 0);
        tui_fmt_pct(cpu, sizeof(cpu), &p->cpu_pct, 0);
        const char *cmd = p->command[0] ? p->command : p->name[0] ? p->name : "?";
        snprintf(buf, sizeof(buf), "%7u %-8.8s %-3s%s %9s %4s %5s %s", (unsigned)p->pid,
                 p->user[0] ? p->user : "?", proc_type_name(p->type), p->unattributed ? "?" : " ",
                 mem, sm, cpu, cmd);
        enum tui_role role = p->carried ? R_FREE : R_NORMAL;
        if (v->proc_focus && k == v->proc_sel)
            role = R_SELECTED;
        tui_text(win, &v->theme, in, y + r, in.x, role, buf);
    }
}

bool tui_device_has_pcie(const struct device *d)
{
    return metric_ok(&d->m[M_PCIE_TX]) || metric_ok(&d->m[M_PCIE_RX]);
}

/* ---- overlays ---- */

static void draw_modal(WINDOW *win, const struct tui_view *v, int h, int w, const char *title,
                       const char *const *lines, size_t n)
{
    int bw = 0;
    for (size_t i = 0; i < n; i++) {
        int l = (int)strlen(lines[i]);
        if (l > bw)
            bw = l;
    }
    bw += 4;
    if (bw > w - 2)
        bw = w - 2;
    int bh = (int)n + 2;
    if (bh > h - 2)
        bh = h - 2;
    struct rect r = {(h - bh) / 2, (w - bw) / 2, bh, bw};
    struct rect in = tui_box(win, &v->theme, r, title, R_HEADER);
    for (int i = 0; i < in.h && (size_t)i < n; i++)
        tui_text(win, &v->theme, in, in.y + i, in.x + 1, R_NORMAL, lines[i]);
}

static void draw_help(WINDOW *win, const struct tui_view *v)
{
    static const char *const lines[] = {
        "Tab, Down, Right   next device",
        "Shift-Tab, Up, Left  previous device",
        "Home / End         first / last device",
        "mouse click        select a device",
        "g                  GPM page of the detail panel",
        "p                  focus the process list",
        "  Up/Down Enter    move / show the command line",
        "  s                cycle the sort key",
        "  k                send SIGTERM (asks y/n)",
        "  Esc              back to the devices",
        "space              pause the display (sampling",
        "                   and history continue)",
        "q, Ctrl-C          quit",
        "",
        "N/A  could not be read     ~  estimate",
        "*    carried (last value)  gpm/proc  source",
        "[GPU n]  the parent GPU's value",
    };
    draw_modal(win, v, v->lay.h, v->lay.w, "Help (any key closes)", lines,
               sizeof(lines) / sizeof(lines[0]));
}

const struct gpu_process *tui_view_selected_proc(const struct tui_view *v)
{
    const struct device *d = tui_view_selected(v);
    if (!d || v->nrows == 0 || v->proc_sel >= v->nrows)
        return NULL;
    return &v->snap->procs[d->proc_first + v->rows[v->proc_sel]];
}

/* The most of a command line the popup reads: /proc shows at most the
 * argument area, bounded by ARG_MAX (2 MiB by default); we keep 256 KiB. */
#define CMDLINE_MAX (256u * 1024u)

void tui_view_free_cmdline(struct tui_view *v)
{
    free(v->full_cmd);
    v->full_cmd = NULL;
    v->full_cmd_len = 0;
    v->cmd_scroll = 0;
}

void tui_view_load_cmdline(struct tui_view *v, const char *proc_root)
{
    tui_view_free_cmdline(v);
    const struct gpu_process *p = tui_view_selected_proc(v);
    if (!p)
        return;
    char path[4200];
    char *buf = malloc(CMDLINE_MAX + 1);
    if (!buf)
        return;
    size_t got = 0;
    if (p->local_pid > 0) {
        snprintf(path, sizeof(path), "%s/%lld/cmdline", proc_root ? proc_root : "/proc",
                 (long long)p->local_pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        while (fd >= 0 && got < CMDLINE_MAX) {
            ssize_t r = read(fd, buf + got, CMDLINE_MAX - got);
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        if (fd >= 0)
            close(fd);
    }
    while (got > 0 && buf[got - 1] == '\0')
        got--;
    for (size_t i = 0; i < got; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[got] = '\0';
    if (got == 0 || strncmp(buf, p->command, strlen(p->command)) != 0)
        snprintf(buf, CMDLINE_MAX + 1, "%s", p->command); /* exited, or another process now */
    text_clean(buf, strlen(buf) + 1);
    v->full_cmd = buf;
    v->full_cmd_len = strlen(buf);
}

static void draw_proc_modal(WINDOW *win, const struct tui_view *v)
{
    const struct gpu_process *p = tui_view_selected_proc(v);
    char l0[128], l1[128], l3[160];
    if (!p)
        return;
    if (v->modal == MODAL_KILL_CONFIRM) {
        snprintf(l0, sizeof(l0), "Send SIGTERM to PID %u (%s)?  y / n", (unsigned)p->pid,
                 p->name[0] ? p->name : "?");
        const char *lines[] = {l0};
        draw_modal(win, v, v->lay.h, v->lay.w, "Kill", lines, 1);
        return;
    }
    snprintf(l0, sizeof(l0), "PID %u  local PID %lld  type %s  user %s", (unsigned)p->pid,
             (long long)p->local_pid, proc_type_name(p->type), p->user[0] ? p->user : "?");
    snprintf(l1, sizeof(l1), "GI %d  CI %d%s%s", p->gi_id, p->ci_id,
             p->unattributed ? "  unattributed" : "", p->carried ? "  carried" : "");
    snprintf(l3, sizeof(l3), "container: %s", p->container[0] ? p->container : "-");
    /* The whole command line, wrapped to the popup and scrollable. */
    const char *cmd = v->full_cmd && v->full_cmd[0] ? v->full_cmd
                      : p->command[0]               ? p->command
                                                    : "(command line not visible)";
    int w = v->lay.w - 6;
    if (w < 10)
        w = 10;
    enum { MAXL = 64 };
    static char wrapped[MAXL][512];
    const char *lines[MAXL + 4];
    size_t n = 0;
    lines[n++] = l0;
    lines[n++] = l1;
    lines[n++] = l3;
    size_t len = strlen(cmd), total = (len + (size_t)w - 1) / (size_t)w;
    int room = v->lay.h - 2 - 2 - 4;
    if (room < 1)
        room = 1;
    size_t first = (size_t)(v->cmd_scroll > 0 ? v->cmd_scroll : 0);
    if (total > (size_t)room && first > total - (size_t)room)
        first = total - (size_t)room;
    if (total <= (size_t)room)
        first = 0;
    for (size_t k = first; k < total && n < MAXL + 3 && (int)(n - 3) < room; k++) {
        size_t off = k * (size_t)w, take = len - off < (size_t)w ? len - off : (size_t)w;
        snprintf(wrapped[n - 3], sizeof(wrapped[0]), "%.*s", (int)take, cmd + off);
        lines[n] = wrapped[n - 3];
        n++;
    }
    char title[96];
    if (total > (size_t)room)
        snprintf(title, sizeof(title), "Process: command line %zu-%zu of %zu lines (Up/Down)",
                 first + 1, first + (n - 3), total);
    else
        snprintf(title, sizeof(title), "Process (any key closes)");
    draw_modal(win, v, v->lay.h, v->lay.w, title, lines, n);
}

/* ---- the whole screen ---- */

static void draw_screen(WINDOW *win, struct tui_view *v)
{
    const struct device *d = tui_view_selected(v);
    int h, w;
    getmaxyx(win, h, w);
    tui_layout_compute(&v->lay, h, w, d && tui_device_has_pcie(d),
                       v->snap ? (int)v->snap->ndevices : 0);
    if (v->lay.too_small) {
        char msg[96];
        snprintf(msg, sizeof(msg), "terminal too small: %dx%d (needs %dx%d)", w, h, TUI_MIN_W,
                 TUI_MIN_H);
        struct rect all = {0, 0, h, w};
        tui_text(win, &v->theme, all, h / 2, 0, R_WARN, msg);
        return;
    }
    draw_header(win, v);
    draw_cpu(win, v);
    if (v->snap && v->snap->ndevices > 0) {
        draw_devices(win, v);
        if (v->lay.detail)
            draw_detail(win, v);
        draw_procs(win, v);
    } else {
        draw_no_gpu(win, v);
    }
    if (v->lay.charts) {
        tui_draw_gpu_charts(win, v);
        tui_draw_host_charts(win, v);
    }
    draw_footer(win, v);
    if (v->modal == MODAL_HELP)
        draw_help(win, v);
    else if (v->modal == MODAL_PROC_DETAIL || v->modal == MODAL_KILL_CONFIRM)
        draw_proc_modal(win, v);
}

void tui_draw(WINDOW *win, struct tui_view *v)
{
    tui_frame_begin(win);
    draw_screen(win, v);
    tui_frame_end(win);
}
