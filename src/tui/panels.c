/*
 * panels.c — the panels of the seed README's screen ("Screen Layout"):
 * header, CPU cores, processes and footer, and the whole frame (tui_draw),
 * which lays the panes out and draws them. The device list is in
 * devices.c, the detail panel in detail.c, the charts in charts.c, the
 * all-processes view in allprocs.c, the overlays in overlays.c; what they
 * all read is the view (view.c).
 *
 * Conventions on screen: "N/A" (dim) for a value that could not be read;
 * "~" before an estimate; "*" after a carried value; a dim "gpm"/"proc"
 * tag after values from GPM or per-process samples; on a MIG device the
 * lines holding the parent GPU's values end in a dim "[GPU n]".
 */
#include "tui/fleet_view.h"
#include "tui/panels.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tui/allprocs.h"
#include "tui/charts.h"
#include "tui/detail.h"
#include "tui/devices.h"
#include "tui/fleet_ui.h"
#include "tui/fmt.h"
#include "tui/frame.h"
#include "tui/health_ui.h"
#include "tui/meters.h"
#include "tui/overlays.h"
#include "tui/proctable.h"
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
    char drv[256] = "", cuda[32] = "", nvml[96] = "";
    if (s && s->driver_version[0]) {
        snprintf(drv, sizeof(drv), "  driver %s", s->driver_version);
        if (s->cuda_driver_version > 0)
            snprintf(cuda, sizeof(cuda), "  CUDA %d.%d", s->cuda_driver_version / 1000,
                     s->cuda_driver_version % 1000 / 10);
        if (s->nvml_version[0])
            snprintf(nvml, sizeof(nvml), "  NVML %s", s->nvml_version);
    }
    /* a fleet (--prometheus): its totals where the driver's versions go;
     * under the device filter, of the devices it leaves, after the filter */
    struct tui_fleet_totals ft;
    if (tui_fleet_totals(s, &ft)) {
        /* the nodes' aggregates, as Prometheus counted them under the
         * filter it was given (the one typed, once it has answered) */
        char sum[160], pre[80] = "";
        if (s->fleet_filter[0])
            snprintf(pre, sizeof(pre), "/%.60s: ", s->fleet_filter);
        tui_fleet_summary(sum, sizeof(sum), &ft, false);
        /* the name, the filter, the clock, the health summary */
        int fixed = tui_text_width(host) + tui_text_width(pre) + 40;
        if (tui_text_width(sum) + fixed > r.w)
            tui_fleet_summary(sum, sizeof(sum), &ft, true);
        snprintf(drv, sizeof(drv), "  %s%s", pre, sum);
        cuda[0] = nvml[0] = '\0';
    }
    /* what the width holds, the least needed last: the NVML version goes
     * first, then CUDA's, then the demo's file name, then the health
     * summary shortens; the driver's stays */
    const char *demo = v->demo_label ? v->demo_label : "";
    const char *demo_short = v->replay.on ? "REPLAY" : v->demo_label ? "DEMO" : "";
    /* the health summary, when some GPU is not ok, goes before the clock */
    char hsum[96] = "";
    enum tui_role hrole = R_WARN;
    int form = tui_health_summary(hsum, sizeof(hsum), s, TUI_HEALTH_FULL, &hrole)
                   ? TUI_HEALTH_FULL
                   : TUI_HEALTH_TINY + 1; /* none */
    const char *steps[][3] = {{demo, cuda, nvml}, {demo, cuda, ""}, {demo, "", ""},
                              {demo_short, "", ""}};
    size_t k = 0, nsteps = sizeof(steps) / sizeof(steps[0]);
    int hroom = 0;
    for (;;) {
        snprintf(left, sizeof(left), " mig-gpu-mon  %s%s%s%s%s%s", host, steps[k][0][0] ? "  " : "",
                 steps[k][0], drv, steps[k][1], steps[k][2]);
        hroom = form <= TUI_HEALTH_TINY ? tui_text_width(hsum) + 2 : 0;
        if (tui_text_width(left) <= r.w - 21 - hroom) /* the clock and a space */
            break;
        if (k + 1 < nsteps)
            k++;
        else if (form <= TUI_HEALTH_TINY && ++form <= TUI_HEALTH_TINY)
            tui_health_summary(hsum, sizeof(hsum), s, (enum tui_health_form)form, NULL);
        else
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
    if (form > TUI_HEALTH_TINY)
        hroom = 0;
    int room = r.w - cw - 1 - hroom;
    if (hroom)
        tui_text(win, t, r, r.y, r.x + room + 2, hrole, hsum);
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
                                       "o Sort",      "t Tree",     "/ Filter", "s Sort",
                                       "Enter Command"};
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

/* Replaying: where the shown snapshot is, as a bar, with its recorded
 * wall clock (UTC) and the keys that move it. */
static void replay_footer(char *out, size_t len, const struct tui_view *v, int w)
{
    const struct tui_replay_bar *b = &v->replay;
    bool u = v->theme.g.utf8;
    char when[48] = "?";
    if (b->wall_ns > 0) {
        time_t t = (time_t)(b->wall_ns / 1000000000);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
        size_t n = strlen(when);
        snprintf(when + n, sizeof(when) - n, ".%03dZ", (int)(b->wall_ns / 1000000 % 1000));
    }
    char skipped[48] = "";
    if (b->skipped)
        snprintf(skipped, sizeof(skipped), "  %llu skipped", b->skipped);
    char head[160];
    snprintf(head, sizeof(head), " %s %gx %s %llu/%llu%s ", b->playing ? (u ? "\u25b6" : ">") : "||",
             b->speed, when, b->pos, b->count, skipped);
    const char *keys = b->playing ? "  Space Pause  ,. Step  [] 1 min  <> Start/End  ? Help"
                                  : "  Space Play  ,. Step  [] 1 min  <> Start/End  ? Help";
    int bar = w - tui_text_width(head) - (int)strlen(keys);
    if (bar < 10)
        keys = "";
    bar = w - tui_text_width(head) - (int)strlen(keys) - 2;
    if (bar > 60)
        bar = 60;
    char cells[61 * 3 + 1] = "";
    size_t at = 0;
    int mark = bar > 0 ? (int)(b->frac * (bar - 1) + 0.5) : 0;
    for (int i = 0; i < bar; i++) {
        const char *c = i == mark ? (u ? "\u25c6" : "|") : i < mark ? (u ? "\u2501" : "=") : (u ? "\u2500" : "-");
        size_t n = strlen(c);
        memcpy(cells + at, c, n);
        at += n;
    }
    cells[at] = '\0';
    snprintf(out, len, "%s%s%s%s%s", head, bar > 0 ? "[" : "", cells, bar > 0 ? "]" : "", keys);
}

/* The fleet view's keys: the device filter (and Esc, which clears it) in
 * place of the processes, which are not read from Prometheus. */
static const char *fleet_keys(bool utf8, bool filtered)
{
    if (filtered)
        return utf8 ? " q Quit  Esc Unfilter  \u2191\u2193 Device  Enter Fold  / Filter  o Sort  "
                      "p Processes  c Charts  i Why N/A  +- Interval  ? Help"
                    : " q Quit  Esc Unfilter  Up/Dn Device  Enter Fold  / Filter  o Sort  "
                      "p Processes  c Charts  i Why N/A  +- Interval  ? Help";
    return utf8 ? " q Quit  \u2191\u2193 Device  Enter Fold  / Filter  o Sort  p Processes  "
                  "c Charts  i Why N/A  +- Interval  ? Help"
                : " q Quit  Up/Dn Device  Enter Fold  / Filter  o Sort  p Processes  "
                  "c Charts  i Why N/A  +- Interval  ? Help";
}

static void draw_footer(WINDOW *win, const struct tui_view *v)
{
    struct rect r = v->lay.footer;
    const struct tui_theme *t = &v->theme;
    char right[96];
    const struct snapshot *s = v->snap;
    size_t n = s ? s->ndevices : 0, at = n ? v->sel + 1 : 0;
    if (tui_view_fleet(v)) /* the fleet's devices, not those read */
        tui_fleet_position(v, &at, &n);
    char ivl[32];
    if (v->interval_ms % 1000 == 0)
        snprintf(ivl, sizeof(ivl), "%us", v->interval_ms / 1000);
    else
        snprintf(ivl, sizeof(ivl), "%ums", v->interval_ms);
    if (v->replay.on) /* the recording's own interval; the pace is the speed */
        snprintf(right, sizeof(right), "%s[%zu/%zu] ", v->replay.playing ? "" : "PAUSED  ",
                 at, n);
    else
        snprintf(right, sizeof(right), "%s%s [%zu/%zu] ", v->paused ? "PAUSED  " : "", ivl, at,
                 n);
    int rw = (int)strlen(right);
    struct rect left = {r.y, r.x, 1, r.w - rw - 1};
    if (v->filter_edit) {
        char f[128];
        snprintf(f, sizeof(f), " Filter processes: %s_  (Enter keeps, Esc clears)", v->filter);
        tui_text(win, t, left, r.y, r.x, R_WARN, f);
    } else if (v->dfilter_edit) {
        char f[160];
        snprintf(f, sizeof(f),
                 " Filter devices (node, model, profile, UUID, pod; idle): %s_  "
                 "(Enter keeps, Esc clears)",
                 v->dfilter);
        tui_text(win, t, left, r.y, r.x, R_WARN, f);
    } else if (v->status[0]) {
        tui_text(win, t, left, r.y, r.x, R_WARN, v->status);
    } else if (v->replay.on && !v->all_procs && !v->proc_focus) {
        char bar[512];
        replay_footer(bar, sizeof(bar), v, left.w);
        tui_text(win, t, left, r.y, r.x, R_NORMAL, bar);
    } else {
        bool u = t->g.utf8;
        const char *keys = v->all_procs ? tui_allprocs_footer(u)
                           : v->proc_focus
                               ? (u ? " Esc Devices  \u2191\u2193 Process  Enter Command  k Signal  "
                                      "s Sort  / Filter  t Tree  a All  ? Help"
                                    : " Esc Devices  Up/Dn Process  Enter Command  k Signal  "
                                      "s Sort  / Filter  t Tree  a All  ? Help")
                           : tui_view_fleet(v) ? fleet_keys(u, v->dfilter[0] != '\0')
                               : (u ? " q Quit  \u2191\u2193 Device  Enter Fold  p Processes  a All  "
                                      "c Charts  i Why N/A  +- Interval  ? Help"
                                    : " q Quit  Up/Dn Device  Enter Fold  p Processes  a All  "
                                      "c Charts  i Why N/A  +- Interval  ? Help");
        char fit[256];
        tui_text(win, t, left, r.y, r.x, R_NORMAL, footer_fit(fit, sizeof(fit), keys, left.w));
    }
    if (r.w > rw)
        tui_text(win, t, r, r.y, r.x + r.w - rw,
                 v->paused || (v->replay.on && !v->replay.playing) ? R_WARN : R_NORMAL, right);
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
    const char *err = s && !s->gpu_ok ? s->gpu_error : "No backend reports a GPU on this host.";
    int y = in.y;
    /* Advice that fits the state: a library that is there but whose driver
     * is not (yet) ready is retried by itself; only a missing library needs
     * the user; a scenario without GPUs is what it is; before the first
     * sample nothing is known yet, of NVML or any other backend. */
    const char *hint = "No GPU data. Point --nvml-path at libnvidia-ml.so.1, or try --demo.";
    if (!s) {
        hint = "Waiting for the first sample.";
        err = "";
    } else if (s->gpu_ok)
        hint = v->demo_label ? "This scenario has no GPU." : "No GPU.";
    else if (v->replay.on) /* no driver here: what failed is the file */
        hint = "The recording could not be read at this snapshot:";
    else if (strncmp(err, "starting NVML", 13) == 0)
        hint = "Starting NVML (the driver is slow to answer):";
    else if (v->demo_label)
        hint = "The simulator could not start this scenario:";
    else if (strstr(err, "nvmlInit failed") || strstr(err, "driver went away"))
        hint = "The NVIDIA driver is not ready; the monitor retries by itself:";
    draw_wrapped(win, v, in, &y, R_WARN, hint);
    draw_wrapped(win, v, in, &y, R_FREE, err);
}

/* ---- processes ---- */

/* The process panel's columns: PID USER TYPE VRAM SM% CPU% COMMAND at the
 * widths they always had, the slice (DEV) where the device has slices,
 * NVIDIA's GI/CI ids where they fit; RSS and TIME when the list is sorted
 * by them. GI/CI, then USER and CPU% give way while the command would get
 * fewer than 20 columns. */
static const struct tui_pcol_spec panel_cols[] = {
    {PC_PID, 7, 0, PW_ALWAYS},  {PC_USER, 8, 8, PW_ALWAYS}, {PC_TYPE, 5, 0, PW_ALWAYS},
    {PC_DEV, 0, 0, PW_SLICES},  {PC_GICI, 0, 0, PW_NVMIG},  {PC_VRAM, 9, 0, PW_ALWAYS},
    {PC_SM, 4, 0, PW_ALWAYS},   {PC_CPU, 5, 0, PW_ALWAYS},  {PC_RSS, 0, 0, PW_SORTED},
    {PC_TIME, 0, 0, PW_SORTED}, {PC_CMD, 0, 0, PW_ALWAYS},
};
static const unsigned char panel_drop[] = {PC_GICI, PC_USER, PC_CPU};
static const struct tui_ptable panel_table = {
    panel_cols, sizeof(panel_cols) / sizeof(panel_cols[0]), panel_drop, sizeof(panel_drop), 20};

long tui_procs_line_at(const struct tui_view *v, int y, int x)
{
    struct rect r = v->lay.procs;
    if (v->all_procs || v->lay.too_small || r.h < 3)
        return -1;
    return tui_ptable_line_at(v, (struct rect){r.y + 1, r.x + 1, r.h - 2, r.w - 2}, y, x);
}

static void draw_procs(WINDOW *win, struct tui_view *v)
{
    const struct device *d = tui_view_selected(v);
    tui_view_sort_procs(v);
    char title[200], by[48];
    int off = snprintf(title, sizeof(title), "Processes (by %s%s)",
                       tui_view_sort_title(by, sizeof(by), v), v->proc_tree ? ", tree" : "");
    if (v->filter[0] && off > 0 && (size_t)off < sizeof(title))
        snprintf(title + off, sizeof(title) - (size_t)off, " /%s: %zu", v->filter, v->nrows);
    struct rect in = tui_box(win, &v->theme, v->lay.procs, title,
                             v->proc_focus ? R_SELECTED : R_TITLE);
    if (!d || in.h <= 0)
        return;
    tui_ptable_draw(win, v, in, &panel_table, v->proc_focus);
    if (v->nlines == 0) {
        const char *msg = !metric_ok(&d->process_count)
                              ? (d->process_count.why ? d->process_count.why : "process list unavailable")
                          : v->filter[0] ? "No process matches the filter"
                                         : "No GPU processes";
        tui_text(win, &v->theme, in, in.y + 1, in.x, R_FREE, msg);
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
    static struct tui_dlines L; /* the UI thread's */
    L.n = L.key = 0;
    if (d)
        tui_detail_build(&L, v, d);
    int lw = w >= 160 ? w / 2 : w * 2 / 5, inner = w - lw - 2;
    if (d && !v->all_procs)
        tui_view_sort_procs(v);
    struct tui_layout_want want = {
        .ncores = v->snap && v->snap->host_ok ? v->snap->host.ncores : 0,
        .cpu_id_width = 1,
        .dev_rows = (int)tui_view_rows_wanted(v),
        .detail_key = d ? tui_detail_rows(&L, L.key, inner) : 1,
        .detail_full = d ? (v->gpm_page ? 16 : tui_detail_rows(&L, L.n, inner)) : 1,
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
    /* a fleet lists its nodes before any device is read, and says so when a
     * filter leaves none */
    bool listed = v->snap && (v->snap->ndevices > 0 || v->snap->nnodes > 0 ||
                              (v->snap->fleet && v->snap->fleet_filter[0]));
    if (!listed)
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
    if (listed) {
        if (v->all_procs) {
            tui_draw_allprocs(win, v);
        } else {
            tui_draw_devices(win, v);
            if (v->lay.detail)
                tui_draw_detail(win, v, &L);
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
