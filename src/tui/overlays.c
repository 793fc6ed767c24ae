/*
 * overlays.c — help, the process popup (whole command line, wrapped and
 * scrollable), the signal prompt, the reasons popup (key i) and the health
 * events (key e).
 */
#include "tui/overlays.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/text.h"
#include "engine/proclist.h"
#include "system/procinfo.h"
#include "tui/fmt.h"
#include "tui/health_ui.h"

static void draw_modal(WINDOW *win, const struct tui_view *v, const char *title,
                       const char *const *lines, size_t n)
{
    int h = v->lay.h, w = v->lay.w;
    int bw = tui_text_width(title) + 4;
    for (size_t i = 0; i < n; i++) {
        int l = tui_text_width(lines[i]) + 4;
        if (l > bw)
            bw = l;
    }
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
    char sum[96];
    snprintf(sum, sizeof(sum),
             "%s    a MIG GPU's VRAM as the sum of its instances (its own needs privilege)",
             v->theme.g.sum);
    bool fleet = tui_view_fleet(v); /* its own Enter and / (same line count) */
    const char *const lines[] = {
        /* 20 lines: the whole of it fits 80x24 (22 rows with the border) */
        "Up/Down Tab         previous / next device (PgUp/PgDn Home/End: pages)",
        "0-9, mouse          GPU n (two digits quickly: GPU 12); select by mouse",
        fleet ? "Enter               fold / unfold a node's GPUs, a GPU's MIG instances"
              : "Enter               fold / unfold a GPU's MIG instances",
        "g  i                GPM page of the detail; why each N/A is missing",
        "e  c                health events (Xids, ECC); charts: activity / thermal",
        v->replay.on ? "+ / -               replay speed twice / half"
                     : "+ / -               sampling interval up / down (min 100 ms)",
        fleet ? "o  /  Esc           sort devices (util mem idle health); filter; clear"
              : "p  a                focus the process list; every GPU process in one list",
        fleet ? "p  a                focus the process list; every GPU process in one list"
              : "  Up/Down Enter     move / the whole command line (Left/Right: scroll)",
        fleet ? "  Up/Down Enter     move / the whole command line (Left/Right: scroll)"
              : "  s S r             sort key: next, previous; reverse the order",
        fleet ? "  s S r  t          sort key: next, previous; reverse; tree of parents"
              : "  t                 tree: processes under their parents, per slice",
        "  /                 filter: PID, command, user, slice (0/1, 2g.35gb), pod",
        v->replay.on ? "  Esc               back (a recorded process is never signalled)"
                     : "  k  Esc            send a signal (TERM, INT or KILL); back",
        v->replay.on ? "space . , ] [ > <   play/pause; step; +/- 1 min; end/start"
                     : "space               pause the display (sampling and history go on)",
        "q, Ctrl-C           quit",
        "",
        "N/A  could not be read     ~  estimate     *  carried (last value)",
        "gpm/proc  from GPM / per-process samples   [GPU n]  the parent GPU's value",
        sum,
        "!  !!  health: worth a look / an operator must act (detail panel, e)",
    };
    draw_modal(win, v, "Help (any key closes)", lines, sizeof(lines) / sizeof(lines[0]));
}

bool tui_proc_signalable(const struct gpu_process *p, const char *proc_root, char *why,
                         size_t len)
{
    /* kill() with 0 or a negative number signals a process group or every
     * process we may signal: only a real, positive PID is acceptable */
    if (p->local_pid <= 0 || p->local_pid > INT32_MAX) {
        snprintf(why, len, "PID %u is not visible from this PID namespace; cannot signal it",
                 (unsigned)p->pid);
        return false;
    }
    /* The list may be a second old: make sure the PID still is the process
     * shown (same start time), not a newcomer that reused the number. */
    char path[4200], buf[1024];
    snprintf(path, sizeof(path), "%s/%lld/stat", proc_root ? proc_root : "/proc",
             (long long)p->local_pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (fd >= 0)
        close(fd);
    struct procinfo_stat st;
    if (n > 0)
        buf[n] = '\0';
    if (n <= 0 || procinfo_parse_stat(buf, &st) != 0 ||
        (p->start_time && st.start_time != p->start_time)) {
        snprintf(why, len, "PID %lld has exited or is another process now; not signalled",
                 (long long)p->local_pid);
        return false;
    }
    return true;
}

static void draw_proc_modal(WINDOW *win, const struct tui_view *v)
{
    const struct gpu_process *p = tui_view_selected_proc(v);
    char l0[256], l1[256], l3[160];
    if (!p)
        return;
    if (v->modal == MODAL_KILL_CONFIRM) {
        snprintf(l0, sizeof(l0), "Signal PID %lld (%s):", (long long)p->local_pid,
                 p->name[0] ? p->name : "?");
        const char *lines[] = {l0, "", "t or Enter  SIGTERM (ask it to end)",
                               "i           SIGINT (like Ctrl-C)",
                               "9           SIGKILL (cannot be caught)",
                               "any other   cancel"};
        draw_modal(win, v, "Send a signal", lines, sizeof(lines) / sizeof(lines[0]));
        return;
    }
    char local[96];
    const char *node = tui_view_selected_proc_node(v);
    if (node)
        snprintf(local, sizeof(local), "none (on node %.60s)", node);
    else if (p->local_pid > 0)
        snprintf(local, sizeof(local), "%lld", (long long)p->local_pid);
    else
        snprintf(local, sizeof(local), "not visible from this PID namespace");
    snprintf(l0, sizeof(l0), "PID %u  local PID %s  type %s  user %s", (unsigned)p->pid, local,
             proc_type_name(p->type), p->user[0] ? p->user : "N/A");
    /* where it runs: its slice's name (proclist.h), as everywhere */
    size_t di = v->plines[v->proc_sel].dev;
    const struct device *d = di < v->snap->ndevices ? &v->snap->devices[di] : NULL;
    char where[160] = "";
    if (d && d->kind == DEV_MIG)
        proclist_slice_name(where, sizeof(where), d, PROCLIST_SLICE_FULL);
    else if (d && p->unattributed) /* on a MIG GPU, in none of its instances */
        snprintf(where, sizeof(where), "GPU %d, not attributed to an instance", d->index);
    else if (d)
        snprintf(where, sizeof(where), "GPU %d", d->index);
    if (d && d->node[0]) {
        size_t n = strlen(where);
        snprintf(where + n, sizeof(where) - n, " on node %.60s", d->node);
    }
    snprintf(l1, sizeof(l1), "%s%s", where, p->carried ? "  carried from an earlier list" : "");
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
    if (l1[0])
        lines[n++] = l1;
    lines[n++] = l3;
    size_t head = n;
    size_t len = strlen(cmd), total = (len + (size_t)w - 1) / (size_t)w;
    int room = v->lay.h - 2 - 2 - (int)head - 1;
    if (room < 1)
        room = 1;
    size_t first = (size_t)(v->cmd_scroll > 0 ? v->cmd_scroll : 0);
    if (total > (size_t)room && first > total - (size_t)room)
        first = total - (size_t)room;
    if (total <= (size_t)room)
        first = 0;
    for (size_t k = first; k < total && n < MAXL + head && (int)(n - head) < room; k++) {
        size_t off = k * (size_t)w, take = len - off < (size_t)w ? len - off : (size_t)w;
        snprintf(wrapped[n - head], sizeof(wrapped[0]), "%.*s", (int)take, cmd + off);
        lines[n] = wrapped[n - head];
        n++;
    }
    char title[96];
    if (total > (size_t)room)
        snprintf(title, sizeof(title), "Process: command line %zu-%zu of %zu lines (Up/Down)",
                 first + 1, first + (n - head), total);
    else
        snprintf(title, sizeof(title), "Process (any key closes)");
    draw_modal(win, v, title, lines, n);
}

/* Text wrapped at spaces into lines of clip.w columns from row y on, the
 * lines after the first indented by hang columns; only the rows inside
 * clip are drawn. Returns the row after the last. */
static int wrap_clipped(WINDOW *win, const struct tui_view *v, struct rect clip, int y,
                        const char *s, int hang)
{
    char buf[1024];
    const char *p = s;
    if (!*p)
        return y + 1;
    if (hang > clip.w / 2)
        hang = 0;
    for (int x = clip.x, w = clip.w; *p; x = clip.x + hang, w = clip.w - hang) {
        size_t take = tui_wrap_take(p, strlen(p), w);
        if (take >= sizeof(buf))
            take = sizeof(buf) - 1;
        memcpy(buf, p, take);
        buf[take] = '\0';
        if (y >= clip.y && y < clip.y + clip.h)
            tui_text(win, &v->theme, clip, y, x, R_NORMAL, buf);
        y++;
        p += take;
        while (*p == ' ')
            p++;
    }
    return y;
}

/* The lines of text ('\n'-separated) wrapped into clip from row y on, each
 * line's continuation indented by its own leading spaces and hang more;
 * only the rows inside clip are drawn. Returns the row after the last. */
static int wrap_text(WINDOW *win, const struct tui_view *v, struct rect clip, int y,
                     const char *text, int hang)
{
    char line[1024];
    const char *p = text;
    while (*p) {
        size_t len = strcspn(p, "\n");
        snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) - 1 ? len : sizeof(line) - 1), p);
        y = wrap_clipped(win, v, clip, y, line, (int)strspn(line, " ") + hang);
        p += len;
        if (*p == '\n')
            p++;
    }
    return y;
}

/* A popup of text over most of the screen, wrapped (wrap_text) and
 * scrolled by v->cmd_scroll (Up/Down, PgUp/PgDn), which stops where the
 * last row is at the bottom: the rows are counted first, so a key past
 * the end shows the end, not an empty popup. */
static void draw_text_popup(WINDOW *win, struct tui_view *v, const char *title, const char *text,
                            int hang)
{
    int bw = v->lay.w - 4, bh = v->lay.h - 4;
    if (bw < 20 || bh < 3)
        return;
    struct rect r = {2, 2, bh, bw};
    struct rect in = tui_box(win, &v->theme, r, title, R_HEADER);
    struct rect clip = {in.y, in.x + 1, in.h, in.w - 2}, count = clip;
    count.h = 0; /* draws nothing */
    int total = wrap_text(win, v, count, 0, text, hang);
    int most = total > in.h ? total - in.h : 0;
    if (v->cmd_scroll > most)
        v->cmd_scroll = most;
    wrap_text(win, v, clip, in.y - v->cmd_scroll, text, hang);
}

/* Every value of the selected device that is N/A, with its whole reason,
 * wrapped; scrolls with Up/Down. */
static void draw_reasons(WINDOW *win, struct tui_view *v)
{
    const struct device *d = tui_view_selected(v);
    if (!d)
        return;
    static char text[16384];
    size_t off = 0;
    int count = 0;
#define ADD(...)                                                                                   \
    do {                                                                                           \
        if (off < sizeof(text))                                                                    \
            off += (size_t)snprintf(text + off, sizeof(text) - off, __VA_ARGS__);                  \
    } while (0)
    if (d->stall) {
        ADD("%s\n", d->stall);
        count++;
    }
    if (!d->uuid[0]) {
        ADD("UUID: %s\n", d->uuid_why ? d->uuid_why : "not readable");
        count++;
    }
    for (int i = 0; i < M_COUNT; i++) {
        const struct metric *m = &d->m[i];
        if (metric_ok(m))
            continue;
        ADD("%s: %s\n", metric_info((enum metric_id)i)->name, m->why ? m->why : "no reason given");
        count++;
    }
    if (!metric_ok(&d->process_count)) {
        ADD("processes: %s\n", d->process_count.why ? d->process_count.why : "no reason given");
        count++;
    }
    if (!d->throttle_valid) {
        ADD("throttle reasons: not readable\n");
        count++;
    }
    /* Where the activity comes from (DCGM's), or where the missing
     * activity could come from on this machine. */
    bool activity_na = false, from_dcgm = false;
    static const enum metric_id ACT[] = {M_GPU_UTIL, M_SM_UTIL, M_SM_OCCUPANCY, M_TENSOR_UTIL};
    for (size_t i = 0; i < sizeof(ACT) / sizeof(ACT[0]); i++) {
        activity_na |= !metric_ok(&d->m[ACT[i]]);
        from_dcgm |= d->m[ACT[i]].src == MSRC_DCGM;
    }
    if (count == 0)
        ADD("Every value of this device was read.\n");
    if (v->snap && v->snap->dcgm_info[0] && (activity_na || from_dcgm)) {
        const char *lead = from_dcgm                                   ? "Activity from "
                           : strncmp(v->snap->dcgm_info, "DCGM ", 5) ? "DCGM: "
                                                                       : "";
        ADD("\n%s%s\n", lead, v->snap->dcgm_info);
    }
#undef ADD
    char title[240];
    char name[160];
    proclist_slice_name(name, sizeof(name), d, PROCLIST_SLICE_FULL);
    snprintf(title, sizeof(title), "Why N/A: %s, %d value%s (Up/Down, any key closes)", name,
             count, count == 1 ? "" : "s");
    draw_text_popup(win, v, title, text, 0);
}

/* The recent health events, newest first (health_ui.h has the text):
 * continuation lines indented so the times stand out. */
static void draw_events(WINDOW *win, struct tui_view *v)
{
    static char text[64 * 512 + 1024]; /* the UI thread's */
    tui_events_text(text, sizeof(text), v->snap);
    draw_text_popup(win, v, "Health events (Up/Down, any key closes)", text, 4);
}

void tui_draw_overlay(WINDOW *win, struct tui_view *v)
{
    switch (v->modal) {
    case MODAL_HELP: draw_help(win, v); break;
    case MODAL_PROC_DETAIL:
    case MODAL_KILL_CONFIRM: draw_proc_modal(win, v); break;
    case MODAL_REASONS: draw_reasons(win, v); break;
    case MODAL_EVENTS: draw_events(win, v); break;
    default: break;
    }
}
