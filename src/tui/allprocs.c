/*
 * allprocs.c — the "All processes" view (allprocs.h): its keys and its
 * panel (its rows are the view's, view.c), whose columns are as wide as
 * what they hold this frame and give way, least needed first, to keep at
 * least CMD_MIN columns of the command line.
 */
#include "tui/allprocs.h"

#include <stdio.h>
#include <string.h>

#include "proclist.h"
#include "tui/fmt.h"

#define SHOWN_MAX 256 /* rows on screen at once; a taller panel shows this many */

void tui_allprocs_toggle(struct tui_view *v)
{
    if (!v->all_procs && (!v->snap || v->snap->ndevices == 0)) {
        snprintf(v->status, sizeof(v->status), "no GPU: no processes to list");
        return;
    }
    v->all_procs = !v->all_procs;
    v->proc_focus = false;
    v->proc_sel = 0;
    v->proc_sel_pid = 0;
}

/* Where the view goes: the device list, the detail and the process panels
 * together (the layout's rectangles for them, top to bottom). */
static struct rect panel_rect(const struct tui_view *v)
{
    const struct tui_layout *l = &v->lay;
    return (struct rect){l->devices.y, l->devices.x, l->procs.y + l->procs.h - l->devices.y,
                         l->devices.w};
}

/* The first row shown when the panel has room for rows rows: the cursor's
 * row is the last one shown once it is past the first screen. */
static size_t first_shown(const struct tui_view *v, int rows)
{
    return rows > 0 && v->proc_sel >= (size_t)rows ? v->proc_sel - (size_t)rows + 1 : 0;
}

bool tui_allprocs_key(struct tui_view *v, int key)
{
    struct rect r = panel_rect(v);
    int page = r.h - 3; /* borders and the header line */
    size_t step = page > 1 ? (size_t)page : 1, last = v->nrows ? v->nrows - 1 : 0;
    MEVENT ev;
    switch (key) {
    case KEY_MOUSE: /* a click on a row selects it */
        if (getmouse(&ev) != OK || !(ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) ||
            ev.x <= r.x || ev.x >= r.x + r.w - 1 || ev.y < r.y + 2 || ev.y >= r.y + r.h - 1)
            return false;
        {
            int rows = r.h - 3 < SHOWN_MAX ? r.h - 3 : SHOWN_MAX;
            size_t k = first_shown(v, rows) + (size_t)(ev.y - r.y - 2);
            if (k >= v->nrows)
                return false;
            v->proc_sel = k;
        }
        break;
    case KEY_NPAGE: v->proc_sel = v->proc_sel + step < last ? v->proc_sel + step : last; break;
    case KEY_PPAGE: v->proc_sel = v->proc_sel > step ? v->proc_sel - step : 0; break;
    case KEY_HOME: v->proc_sel = 0; break;
    case KEY_END: v->proc_sel = last; break;
    default: return false;
    }
    v->proc_sel_pid = 0;
    tui_view_sort_procs(v); /* pin the cursor's PID, follow its device */
    return true;
}

const char *tui_allprocs_footer(bool utf8)
{
    return utf8 ? " a Devices  \u2191\u2193 Process  Enter Command  k Signal  s Sort  / Filter  "
                  "? Help"
                : " a Devices  Up/Dn Process  Enter Command  k Signal  s Sort  / Filter  ? Help";
}

/* ---- the panel ---- */

enum { C_PID, C_DEV, C_GICI, C_VRAM, C_SM, C_CPU, C_RSS, C_TIME, C_USER, C_CMD, C_N };

static const struct {
    const char *head;
    bool left; /* left-aligned (text), else right-aligned (figures) */
} cols[C_N] = {
    {"PID", false}, {"DEV", true},  {"GI/CI", false}, {"VRAM", false}, {"SM%", false},
    {"CPU%", false}, {"RSS", false}, {"TIME", false}, {"USER", true},   {"COMMAND", true},
};

/* The columns that give way when the command would get fewer than CMD_MIN
 * columns, first to last: the resident memory and the instance ids (the
 * device already names the MIG device), then the time, the user, the CPU
 * and SM shares. PID, device, VRAM and command stay. */
static const int drop_order[] = {C_RSS, C_GICI, C_TIME, C_USER, C_CPU, C_SM};
#define CMD_MIN 16
#define USER_W 8
#define CELL_LEN (PROC_USER_LEN + 8) /* a whole user name and the ellipsis */

/* s cut to w columns (counted one per character: user names), its end
 * marked with the ellipsis. */
static void cut(char *s, size_t len, int w, const char *ellipsis)
{
    if (tui_text_width(s) <= w)
        return;
    int ew = tui_text_width(ellipsis);
    size_t i = 0;
    for (int keep = w - ew; s[i]; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80 && keep-- == 0)
            break;
    snprintf(s + i, len - i, "%s", ellipsis);
}

static void fill_cells(const struct tui_view *v, const struct gpu_process *p,
                       char cell[C_CMD][CELL_LEN], const char **cmd)
{
    const struct snapshot *s = v->snap;
    long di = proclist_device_of(s, (size_t)(p - s->procs));
    const struct device *d = di >= 0 ? &s->devices[di] : NULL;
    snprintf(cell[C_PID], CELL_LEN, "%u", (unsigned)p->pid);
    if (d)
        proclist_device_node_label(cell[C_DEV], CELL_LEN - 1, d);
    else
        snprintf(cell[C_DEV], CELL_LEN, "?");
    if (p->unattributed) /* on a MIG GPU, in none of its instances: as TYPE's "?" */
        strcat(cell[C_DEV], "?");
    bool mig = d && (d->kind == DEV_MIG || d->mig_enabled);
    if (p->gi_id >= 0 && p->ci_id >= 0)
        snprintf(cell[C_GICI], CELL_LEN, "%d/%d", p->gi_id, p->ci_id);
    else if (p->gi_id >= 0)
        snprintf(cell[C_GICI], CELL_LEN, "%d/?", p->gi_id);
    else
        snprintf(cell[C_GICI], CELL_LEN, "%s", mig ? "?/?" : "-"); /* "-": MIG off */
    tui_fmt_bytes(cell[C_VRAM], CELL_LEN, &p->mem_bytes);
    tui_fmt_pct(cell[C_SM], CELL_LEN, &p->sm_util, 0);
    tui_fmt_pct(cell[C_CPU], CELL_LEN, &p->cpu_pct, 0);
    tui_fmt_bytes(cell[C_RSS], CELL_LEN, &p->rss_bytes);
    struct metric el = proclist_elapsed(s, p, proclist_clk_tck());
    proclist_fmt_elapsed(cell[C_TIME], CELL_LEN, &el);
    snprintf(cell[C_USER], CELL_LEN, "%s", p->user[0] ? p->user : "N/A");
    cut(cell[C_USER], CELL_LEN, USER_W, v->theme.g.ellipsis);
    *cmd = p->command[0]       ? p->command
           : p->name[0]        ? p->name
           : p->local_pid < 0  ? "N/A (not visible from here)"
                               : "N/A";
}

/* One line of the columns shown, each padded to its width (in columns:
 * a user name may be UTF-8), the command last. */
static void put_line(char *out, size_t len, const bool on[C_N], const int w[C_N],
                     const char *const text[C_N])
{
    size_t n = 0;
    out[0] = '\0';
    for (int c = 0; c < C_N && n + 1 < len; c++) {
        if (!on[c])
            continue;
        int pad = c == C_CMD ? 0 : w[c] - tui_text_width(text[c]);
        if (pad < 0)
            pad = 0;
        const char *sep = n ? " " : "";
        int k = cols[c].left ? snprintf(out + n, len - n, "%s%s%*s", sep, text[c], pad, "")
                             : snprintf(out + n, len - n, "%s%*s%s", sep, pad, "", text[c]);
        if (k < 0)
            break;
        n += (size_t)k < len - n ? (size_t)k : len - n - 1;
    }
}

/* Processes a list could not be read for, and processes beyond --top:
 * what the list does not hold, said in the title. */
static void tally(const struct snapshot *s, size_t *unread, double *beyond)
{
    *unread = 0;
    *beyond = 0;
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        if (d->kind == DEV_GPU && d->mig_enabled)
            continue; /* its count is its instances' too */
        if (!metric_ok(&d->process_count))
            (*unread)++;
        else if (d->process_count.value > (double)d->nprocs)
            *beyond += d->process_count.value - (double)d->nprocs;
    }
}

void tui_draw_allprocs(WINDOW *win, struct tui_view *v)
{
    static const char *const sort_names[PSORT_COUNT] = {"VRAM", "SM%", "CPU%", "PID"};
    size_t unread; /* v->rows: sorted by the frame (tui_draw), before the layout */
    double beyond;
    tally(v->snap, &unread, &beyond);
    char title[200];
    int off = snprintf(title, sizeof(title), "All processes (by %s)", sort_names[v->psort]);
    if (v->filter[0] && off > 0 && (size_t)off < sizeof(title))
        off += snprintf(title + off, sizeof(title) - (size_t)off, " /%s", v->filter);
    if (off > 0 && (size_t)off < sizeof(title))
        off += snprintf(title + off, sizeof(title) - (size_t)off, ": %zu", v->nrows);
    if (v->nrows_total > v->nrows && off > 0 && (size_t)off < sizeof(title))
        off += snprintf(title + off, sizeof(title) - (size_t)off, " of %zu", v->nrows_total);
    if (beyond > 0 && off > 0 && (size_t)off < sizeof(title))
        off += snprintf(title + off, sizeof(title) - (size_t)off, ", +%.0f past --top", beyond);
    if (unread && off > 0 && (size_t)off < sizeof(title))
        snprintf(title + off, sizeof(title) - (size_t)off, ", %zu list%s N/A", unread,
                 unread == 1 ? "" : "s");
    struct rect in = tui_box(win, &v->theme, panel_rect(v), title, R_SELECTED);
    if (in.h <= 0 || in.w <= 0)
        return;
    int rows = in.h - 1;
    if (rows > SHOWN_MAX)
        rows = SHOWN_MAX;
    size_t first = first_shown(v, rows);
    size_t shown = v->nrows - first < (size_t)rows ? v->nrows - first : (size_t)rows;

    static char cell[SHOWN_MAX][C_CMD][CELL_LEN]; /* the UI thread's */
    static const char *cmd[SHOWN_MAX];
    int w[C_N];
    for (int c = 0; c < C_N; c++)
        w[c] = tui_text_width(cols[c].head);
    for (size_t r = 0; r < shown; r++) {
        fill_cells(v, &v->snap->procs[v->rows[first + r]], cell[r], &cmd[r]);
        for (int c = 0; c < C_CMD; c++) {
            int cw = tui_text_width(cell[r][c]);
            if (cw > w[c])
                w[c] = cw;
        }
    }
    bool on[C_N];
    int fixed = 0;
    for (int c = 0; c < C_CMD; c++) {
        on[c] = true;
        fixed += w[c] + 1;
    }
    on[C_CMD] = true;
    for (size_t k = 0; k < sizeof(drop_order) / sizeof(drop_order[0]) && fixed + CMD_MIN > in.w;
         k++) {
        on[drop_order[k]] = false;
        fixed -= w[drop_order[k]] + 1;
    }

    char line[PROC_CMD_LEN + 16 * CELL_LEN];
    const char *text[C_N];
    for (int c = 0; c < C_N; c++)
        text[c] = cols[c].head;
    put_line(line, sizeof(line), on, w, text);
    int y = in.y;
    tui_text(win, &v->theme, in, y++, in.x, R_TITLE, line);
    if (v->nrows == 0) {
        const char *msg = v->filter[0] ? "No process matches the filter"
                          : unread     ? "No GPU process in the lists that could be read"
                                       : "No GPU processes";
        tui_text(win, &v->theme, in, y, in.x, R_FREE, msg);
        return;
    }
    for (size_t r = 0; r < shown; r++) {
        size_t k = first + r;
        for (int c = 0; c < C_CMD; c++)
            text[c] = cell[r][c];
        text[C_CMD] = cmd[r];
        put_line(line, sizeof(line), on, w, text);
        const struct gpu_process *p = &v->snap->procs[v->rows[k]];
        enum tui_role role = k == v->proc_sel ? R_SELECTED : p->carried ? R_FREE : R_NORMAL;
        tui_text(win, &v->theme, in, y + (int)r, in.x, role, line);
    }
}
