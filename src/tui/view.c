/*
 * view.c — the view (view.h): the selection, which follows a device by its
 * UUID; the device list as shown, with its folds and the movement keys over
 * it (arrows, PgUp/PgDn, Home/End, digits, Enter); the process rows of the
 * selected device or of every device, and the cursor over them; the
 * process popup's whole command line.
 */
#include "tui/view.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/text.h"
#include "engine/proclist.h"
#include "tui/fleet_ui.h"
#include "tui/fleet_view.h"
#include "tui/proctree.h"

_Static_assert((int)PSORT_MEMORY == (int)PROCLIST_BY_MEMORY && (int)PSORT_SM == (int)PROCLIST_BY_SM &&
                   (int)PSORT_CPU == (int)PROCLIST_BY_CPU && (int)PSORT_RSS == (int)PROCLIST_BY_RSS &&
                   (int)PSORT_TIME == (int)PROCLIST_BY_TIME && (int)PSORT_PID == (int)PROCLIST_BY_PID &&
                   (int)PSORT_USER == (int)PROCLIST_BY_USER &&
                   (int)PSORT_COMMAND == (int)PROCLIST_BY_COMMAND &&
                   (int)PSORT_DEVICE == (int)PROCLIST_BY_DEVICE && (int)PSORT_COUNT == (int)PROCLIST_KEYS,
               "the s key's order is proclist's");

/* ---- selection ---- */

/* Select node row k of a fleet (its first device when its devices were
 * read: the detail panel and the charts are that device's). */
static void select_node(struct tui_view *v, size_t k)
{
    const struct snapshot *s = v->snap;
    if (!s || k >= s->nnodes)
        return;
    const struct node_summary *n = &s->nodes[k];
    if (!v->sel_node || v->sel_nodei != k)
        tui_view_proc_unpin(v);
    v->sel_node = true;
    v->sel_nodei = k;
    snprintf(v->sel_inst, sizeof(v->sel_inst), "%s", n->instance);
    if (n->devs_read && n->ndev) {
        v->sel = n->dev_first;
        snprintf(v->sel_uuid, sizeof(v->sel_uuid), "%s", s->devices[v->sel].uuid);
        snprintf(v->sel_dnode, sizeof(v->sel_dnode), "%s", s->devices[v->sel].node);
    }
}

static void follow_fleet(struct tui_view *v)
{
    const struct snapshot *s = v->snap;
    if (v->sel_node) {
        for (size_t k = 0; k < s->nnodes; k++)
            if (strcmp(s->nodes[k].instance, v->sel_inst) == 0) {
                select_node(v, k);
                return;
            }
        if (s->nnodes)
            select_node(v, v->sel_nodei < s->nnodes ? v->sel_nodei : s->nnodes - 1);
        return;
    }
    for (size_t i = 0; v->sel_uuid[0] && i < s->ndevices; i++)
        if (strcmp(s->devices[i].uuid, v->sel_uuid) == 0 &&
            strcmp(s->devices[i].node, v->sel_dnode) == 0) {
            v->sel = i;
            return;
        }
    /* its node's devices are no longer read (or it is gone): its node's row */
    for (size_t k = 0; k < s->nnodes; k++)
        if (strcmp(s->nodes[k].name, v->sel_dnode) == 0) {
            select_node(v, k);
            return;
        }
    if (s->ndevices) {
        if (v->sel >= s->ndevices)
            v->sel = s->ndevices - 1;
        snprintf(v->sel_uuid, sizeof(v->sel_uuid), "%s", s->devices[v->sel].uuid);
        snprintf(v->sel_dnode, sizeof(v->sel_dnode), "%s", s->devices[v->sel].node);
    } else if (s->nnodes) {
        select_node(v, 0);
    }
}

void tui_view_follow(struct tui_view *v)
{
    const struct snapshot *s = v->snap;
    v->snap_gen++; /* a new snapshot shown: the tree's parents are read again */
    if (s && s->fleet) {
        follow_fleet(v);
        return;
    }
    v->sel_node = false;
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
    if (index != v->sel || v->sel_node)
        tui_view_proc_unpin(v);
    v->sel = index;
    v->sel_node = false;
    snprintf(v->sel_uuid, sizeof(v->sel_uuid), "%s", s->devices[index].uuid);
    snprintf(v->sel_dnode, sizeof(v->sel_dnode), "%s", s->devices[index].node);
}

void tui_view_free(struct tui_view *v)
{
    free(v->drow);
    v->drow = NULL;
    free(v->norder);
    v->norder = NULL;
    v->nnorder = v->norder_cap = 0;
    free(v->dnode);
    v->dnode = NULL;
    v->dnode_n = v->dnode_cap = 0;
    free(v->dshow);
    v->dshow = NULL;
    v->dshow_n = v->dshow_cap = 0;
    free(v->dorder);
    v->dorder = NULL;
    v->dorder_n = v->dorder_cap = 0;
    v->ndrow = v->drow_cap = 0;
    free(v->tpar);
    v->tpar = NULL;
    v->ntpar = v->tpar_cap = 0;
    free(v->tpar_idx);
    v->tpar_idx = NULL;
    v->tpar_idx_cap = 0;
    tui_proctree_free(v);
    tui_view_free_cmdline(v);
}

void tui_view_proc_unpin(struct tui_view *v)
{
    v->proc_sel = 0;
    v->proc_scroll = 0;
    v->proc_sel_kind = PL_PROC;
    v->proc_sel_pid = 0;
    v->proc_sel_uuid[0] = '\0';
}

const struct device *tui_view_selected(const struct tui_view *v)
{
    const struct snapshot *s = v->snap;
    if (!s || s->ndevices == 0 || v->sel >= s->ndevices)
        return NULL;
    if (s->fleet && v->sel_node) { /* a node's row: its first device, when read */
        const struct node_summary *n = v->sel_nodei < s->nnodes ? &s->nodes[v->sel_nodei] : NULL;
        if (!n || !n->devs_read || !n->ndev || v->sel != n->dev_first)
            return NULL;
    }
    return &s->devices[v->sel];
}

/* ---- processes ---- */

static void add_rows(struct tui_view *v, const struct device *d)
{
    for (size_t k = 0; k < d->nprocs && v->nrows < TUI_PROC_ROWS_MAX; k++) {
        size_t i = d->proc_first + k;
        if (i < v->snap->nprocs && proclist_match(v->snap, i, v->filter))
            v->rows[v->nrows++] = i;
    }
}

/* A MIG-mode GPU's processes run in its instances: its list is theirs,
 * with the ones that could not be attributed (kept on the GPU itself). */
static bool lists_instances(const struct snapshot *s, size_t sel)
{
    return s->devices[sel].kind == DEV_GPU && s->devices[sel].mig_enabled;
}

/* The all-processes view's rows (allprocs.h): every device's processes,
 * each once, filtered; v->nrows_total is the count before
 * TUI_PROC_ROWS_MAX. */
static void all_rows(struct tui_view *v)
{
    v->nrows = proclist_collect(v->snap, v->filter, v->rows, TUI_PROC_ROWS_MAX, &v->nrows_total);
}

/* Select the device of the line under the cursor (after the cursor was
 * pinned), so the charts and the footer's [i/n] are that device's. */
static void all_follow(struct tui_view *v)
{
    if (v->nlines == 0 || v->proc_sel >= v->nlines)
        return;
    size_t di = v->plines[v->proc_sel].dev;
    if (di >= v->snap->ndevices || di == v->sel)
        return;
    /* not tui_view_select_abs: that would reset the cursor it follows */
    v->sel = di;
    v->sel_node = false;
    snprintf(v->sel_uuid, sizeof(v->sel_uuid), "%s", v->snap->devices[di].uuid);
    snprintf(v->sel_dnode, sizeof(v->sel_dnode), "%s", v->snap->devices[di].node);
}

/* The PID a line is about: a process's or a parent's; 0 none. */
static uint32_t line_pid(const struct tui_view *v, const struct tui_pline *l)
{
    if (l->kind == PL_PROC)
        return v->snap->procs[l->idx].pid;
    if (l->kind == PL_PARENT && l->idx < v->ntpar)
        return v->tpar[l->idx].pid;
    return 0;
}

static bool line_is(const struct tui_view *v, const struct tui_pline *l)
{
    if (l->kind != v->proc_sel_kind)
        return false;
    if (l->kind == PL_PROC || l->kind == PL_PARENT)
        return line_pid(v, l) == v->proc_sel_pid;
    return l->dev < v->snap->ndevices &&
           strcmp(v->snap->devices[l->dev].uuid, v->proc_sel_uuid) == 0;
}

static void pin_line(struct tui_view *v)
{
    if (v->nlines == 0) {
        v->proc_sel_kind = PL_PROC;
        v->proc_sel_pid = 0;
        v->proc_sel_uuid[0] = '\0';
        return;
    }
    const struct tui_pline *l = &v->plines[v->proc_sel];
    v->proc_sel_kind = l->kind;
    v->proc_sel_pid = line_pid(v, l);
    snprintf(v->proc_sel_uuid, sizeof(v->proc_sel_uuid), "%s",
             l->dev < v->snap->ndevices ? v->snap->devices[l->dev].uuid : "");
}

void tui_view_sort_procs(struct tui_view *v)
{
    v->nrows = 0;
    v->nlines = v->nlines_cut = 0;
    const struct device *d = tui_view_selected(v);
    if (!d)
        return;
    if (v->all_procs) {
        all_rows(v);
    } else {
        add_rows(v, d);
        if (lists_instances(v->snap, v->sel))
            for (size_t i = v->sel + 1; i < v->snap->ndevices; i++) {
                const struct device *c = &v->snap->devices[i];
                if (c->kind != DEV_MIG || c->parent_pos != (int)v->sel)
                    break;
                add_rows(v, c);
            }
    }
    proclist_sort(v->snap, v->rows, v->nrows, (enum proclist_key)v->psort, v->psort_rev);
    if (v->proc_tree) {
        tui_proctree_build(v);
    } else {
        for (size_t k = 0; k < v->nrows; k++) {
            long di = proclist_device_of(v->snap, v->rows[k]);
            v->plines[k] = (struct tui_pline){.kind = PL_PROC, .idx = v->rows[k],
                                             .dev = di >= 0 ? (size_t)di : SIZE_MAX};
        }
        v->nlines = v->nrows;
    }
    size_t n = v->nlines;
    /* keep the cursor on what it was on when it is still listed (where it
     * is, when it is listed twice: a process on two GPUs) */
    bool pinned = v->proc_sel_kind == PL_PROC || v->proc_sel_kind == PL_PARENT
                      ? v->proc_sel_pid != 0
                      : v->proc_sel_uuid[0] != '\0';
    if (pinned && !(v->proc_sel < n && line_is(v, &v->plines[v->proc_sel])))
        for (size_t i = 0; i < n; i++)
            if (line_is(v, &v->plines[i])) {
                v->proc_sel = i;
                break;
            }
    if (v->proc_sel >= n)
        v->proc_sel = n ? n - 1 : 0;
    pin_line(v);
    if (v->all_procs)
        all_follow(v);
}

void tui_view_proc_goto(struct tui_view *v, size_t k)
{
    if (v->nlines == 0)
        return;
    v->proc_sel = k < v->nlines ? k : v->nlines - 1;
    pin_line(v);
    tui_view_sort_procs(v); /* follow its device (all processes) */
}

void tui_view_proc_move(struct tui_view *v, long delta)
{
    if (v->nlines == 0)
        return;
    long k = (long)v->proc_sel + delta;
    tui_view_proc_goto(v, k < 0 ? 0 : (size_t)k);
}

void tui_view_sort_next(struct tui_view *v, int dir)
{
    v->psort = (enum proc_sort)((v->psort + (dir < 0 ? PSORT_COUNT - 1 : 1)) % PSORT_COUNT);
    v->psort_rev = false;
}

void tui_view_sort_reverse(struct tui_view *v)
{
    v->psort_rev = !v->psort_rev;
}

const char *tui_view_sort_title(char *out, size_t len, const struct tui_view *v)
{
    snprintf(out, len, "%s%s", proclist_key_name((enum proclist_key)v->psort),
             v->psort_rev ? ", reversed" : "");
    return out;
}

const struct gpu_process *tui_view_selected_proc(const struct tui_view *v)
{
    if (!tui_view_selected(v) || v->nlines == 0 || v->proc_sel >= v->nlines)
        return NULL;
    const struct tui_pline *l = &v->plines[v->proc_sel];
    return l->kind == PL_PROC ? &v->snap->procs[l->idx] : NULL;
}

const char *tui_view_selected_proc_node(const struct tui_view *v)
{
    if (!tui_view_selected_proc(v))
        return NULL;
    size_t di = v->plines[v->proc_sel].dev;
    const char *node = di < v->snap->ndevices ? v->snap->devices[di].node : "";
    return node[0] ? node : NULL;
}

/* ---- the device list as shown ---- */

bool tui_dev_is_instance_of(const struct snapshot *s, size_t i, size_t g)
{
    return i < s->ndevices && s->devices[i].kind == DEV_MIG && s->devices[i].parent_pos >= 0 &&
           (size_t)s->devices[i].parent_pos == g;
}

size_t tui_dev_instances(const struct snapshot *s, size_t g)
{
    size_t n = 0;
    while (tui_dev_is_instance_of(s, g + 1 + n, g))
        n++;
    return n;
}

/* Where a GPU's fold state is kept: by its index; -1 none (a fleet's GPUs
 * are kept by node and UUID: fleet_view.h). */
static int fold_key(const struct device *d)
{
    return d->index >= 0 && d->index < TUI_FOLD_MAX ? d->index : -1;
}

static enum tui_fold fold_of(const struct tui_view *v, const struct device *d)
{
    if (d->node[0])
        return tui_fleet_gpu_fold(v, d);
    int k = fold_key(d);
    return k < 0 ? FOLD_AUTO : (enum tui_fold)v->fold[k];
}

size_t tui_dev_gpu_of(const struct snapshot *s, size_t i)
{
    const struct device *d = &s->devices[i];
    if (d->kind == DEV_MIG && d->parent_pos >= 0 && (size_t)d->parent_pos < i)
        return (size_t)d->parent_pos;
    return i;
}

bool tui_view_fleet(const struct tui_view *v)
{
    return v->snap && v->snap->fleet;
}

/* ---- the device list as shown (one host; a fleet's: fleet_view.c) ---- */

/* Rows of the list with every automatic GPU unfolded (returned) and with
 * every one folded (*base); a GPU the user folded is one row in both. */
static size_t count_rows(const struct tui_view *v, size_t *base)
{
    const struct snapshot *s = v->snap;
    if (tui_view_fleet(v))
        return tui_fleet_count_rows(v, base);
    size_t all = 0;
    *base = 0;
    for (size_t i = 0; s && i < s->ndevices;) {
        const struct device *d = &s->devices[i];
        size_t k = d->kind == DEV_GPU ? tui_dev_instances(s, i) : 0;
        enum tui_fold f = fold_of(v, d);
        *base += 1 + (f == FOLD_OPEN ? k : 0);
        all += 1 + (f == FOLD_CLOSED ? 0 : k);
        i += 1 + k;
    }
    return all;
}

size_t tui_view_rows_wanted(struct tui_view *v)
{
    size_t base;
    tui_fleet_refresh(v);
    return count_rows(v, &base);
}

void tui_view_build_rows(struct tui_view *v, int room)
{
    const struct snapshot *s = v->snap;
    v->ndrow = 0;
    tui_fleet_refresh(v);
    if (tui_view_fleet(v)) {
        tui_fleet_build_rows(v, room);
        return;
    }
    if (!s || s->ndevices == 0)
        return;
    if (v->drow_cap < s->ndevices) {
        size_t *p = realloc(v->drow, s->ndevices * sizeof(*p));
        if (!p)
            return; /* an empty list; the next draw tries again */
        v->drow = p;
        v->drow_cap = s->ndevices;
    }
    size_t sel_gpu = v->sel < s->ndevices ? tui_dev_gpu_of(s, v->sel) : (size_t)-1;
    size_t base, all = count_rows(v, &base);
    bool everything = room <= 0 || all <= (size_t)room;
    size_t budget = room > 0 && (size_t)room > base ? (size_t)room - base : 0;
    /* the selected device's GPU first, then the others in order */
    bool sel_open = false;
    if (!everything && sel_gpu < s->ndevices && s->devices[sel_gpu].kind == DEV_GPU &&
        fold_of(v, &s->devices[sel_gpu]) == FOLD_AUTO) {
        size_t k = tui_dev_instances(s, sel_gpu);
        sel_open = true;
        budget = budget > k ? budget - k : 0;
    }
    for (size_t i = 0; i < s->ndevices;) {
        const struct device *d = &s->devices[i];
        size_t k = d->kind == DEV_GPU ? tui_dev_instances(s, i) : 0;
        enum tui_fold f = fold_of(v, d);
        bool open = f == FOLD_OPEN;
        if (f == FOLD_AUTO) {
            if (everything || (i == sel_gpu && sel_open)) {
                open = true;
            } else if (k <= budget) {
                open = true;
                budget -= k;
            }
        }
        v->drow[v->ndrow++] = i;
        if (open)
            for (size_t c = 0; c < k; c++)
                v->drow[v->ndrow++] = i + 1 + c;
        i += 1 + k;
    }
}

long tui_view_row_of(const struct tui_view *v, size_t i)
{
    for (size_t r = 0; r < v->ndrow; r++)
        if (v->drow[r] == i)
            return (long)r;
    return -1;
}

static void select_row(struct tui_view *v, long r)
{
    if (v->ndrow == 0)
        return;
    if (r < 0)
        r = 0;
    if ((size_t)r >= v->ndrow)
        r = (long)v->ndrow - 1;
    size_t e = v->drow[r];
    if (e & (TUI_DROW_NODE | TUI_DROW_WAIT))
        select_node(v, TUI_DROW_INDEX(e));
    else
        tui_view_select_abs(v, e);
}

long tui_view_place_sel(struct tui_view *v)
{
    const struct snapshot *s = v->snap;
    if (!s)
        return -1;
    long r;
    if (tui_view_fleet(v)) {
        if (v->ndrow == 0)
            return -1;
        size_t k = v->sel_node ? v->sel_nodei : tui_fleet_dev_node(v, v->sel);
        if (!v->sel_node && v->sel < s->ndevices) {
            r = tui_view_row_of(v, v->sel);
            if (r >= 0)
                return r;
            r = tui_view_row_of(v, tui_dev_gpu_of(s, v->sel));
            if (r >= 0) {
                select_row(v, r);
                return r;
            }
        }
        r = k < s->nnodes ? tui_view_row_of(v, TUI_DROW_NODE | k) : -1;
        if (r < 0)
            r = 0; /* the filter left its node out: the first row */
        if (!v->sel_node || v->sel_nodei != k)
            select_row(v, r);
        return r;
    }
    if (v->sel >= s->ndevices)
        return -1;
    r = tui_view_row_of(v, v->sel);
    if (r >= 0)
        return r;
    r = tui_view_row_of(v, tui_dev_gpu_of(s, v->sel));
    if (r >= 0)
        select_row(v, r);
    return r;
}

/* The row of the selection, moved to one shown when it is hidden. */
static long current_row(struct tui_view *v)
{
    tui_view_build_rows(v, v->dev_room);
    long r = tui_view_place_sel(v);
    return r < 0 ? 0 : r;
}

void tui_view_select(struct tui_view *v, long delta)
{
    if (!v->snap || (v->snap->ndevices == 0 && !tui_view_fleet(v)))
        return;
    select_row(v, current_row(v) + delta);
}

void tui_view_select_home(struct tui_view *v)
{
    tui_view_build_rows(v, v->dev_room);
    select_row(v, 0);
}

void tui_view_select_end(struct tui_view *v)
{
    /* the last device; its GPU unfolds unless folded by hand (then the GPU) */
    if (!v->snap)
        return;
    if (tui_view_fleet(v)) { /* the last row shown: a node folded, a filter */
        tui_view_build_rows(v, v->dev_room);
        select_row(v, (long)v->ndrow - 1);
        return;
    }
    if (v->snap->ndevices == 0)
        return;
    tui_view_select_abs(v, v->snap->ndevices - 1);
    current_row(v);
}

void tui_view_page(struct tui_view *v, int dir)
{
    int page = v->dev_room > 1 ? v->dev_room - 1 : 1;
    tui_view_select(v, (long)dir * page);
}

/* Fold or unfold node k (fleet view); folding selects its row. */
static void toggle_node(struct tui_view *v, size_t k)
{
    bool closing = tui_fleet_node_open(v, k);
    tui_fleet_node_fold_set(v, k, closing ? FOLD_CLOSED : FOLD_OPEN);
    if (closing)
        select_node(v, k);
}

void tui_view_toggle_fold(struct tui_view *v)
{
    const struct snapshot *s = v->snap;
    if (!s)
        return;
    bool fleet = tui_view_fleet(v);
    if (fleet && v->sel_node) {
        toggle_node(v, v->sel_nodei);
        return;
    }
    if (v->sel >= s->ndevices)
        return;
    size_t g = tui_dev_gpu_of(s, v->sel);
    const struct device *d = &s->devices[g];
    if (fleet && d->kind == DEV_GPU && tui_dev_instances(s, g) == 0) {
        size_t k = tui_fleet_dev_node(v, g);
        if (k != SIZE_MAX)
            toggle_node(v, k);
        return;
    }
    if (d->kind != DEV_GPU || tui_dev_instances(s, g) == 0)
        return;
    int key = fleet ? 0 : fold_key(d);
    if (key < 0)
        return;
    tui_view_build_rows(v, v->dev_room);
    long r = tui_view_row_of(v, g);
    bool open = r >= 0 && (size_t)r + 1 < v->ndrow && tui_dev_is_instance_of(s, v->drow[r + 1], g);
    if (fleet)
        tui_fleet_gpu_fold_set(v, d, open ? FOLD_CLOSED : FOLD_OPEN);
    else
        v->fold[key] = open ? FOLD_CLOSED : FOLD_OPEN;
    if (open)
        tui_view_select_abs(v, g);
}

void tui_view_jump_digit(struct tui_view *v, int digit, uint64_t now_ns)
{
    const struct snapshot *s = v->snap;
    if (!s || digit < 0 || digit > 9)
        return;
    int want = digit;
    if (v->jump_ns && now_ns - v->jump_ns < 1000000000ull && v->jump_num < 100000)
        want = v->jump_num * 10 + digit;
    size_t found = (size_t)-1, first = (size_t)-1;
    for (size_t i = 0; i < s->ndevices; i++) {
        if (s->devices[i].kind != DEV_GPU)
            continue;
        if (s->devices[i].index == want)
            found = i;
        if (s->devices[i].index == digit)
            first = i;
    }
    if (found == (size_t)-1) { /* 1 then 9 without a GPU 19: GPU 9 */
        want = digit;
        found = first;
    }
    v->jump_num = want;
    v->jump_ns = now_ns;
    if (found != (size_t)-1)
        tui_view_select_abs(v, found);
    else
        snprintf(v->status, sizeof(v->status), "no GPU %d", want);
}

/* The row of the list at screen row y, column x, or -1. */
static long row_at(const struct tui_view *v, int y, int x)
{
    struct rect r = v->lay.devices;
    if (v->lay.too_small || !v->snap || y <= r.y || y >= r.y + r.h - 1 || x <= r.x ||
        x >= r.x + r.w - 1)
        return -1;
    long row = (long)v->dev_scroll + (y - r.y - 1);
    if (row < 0 || (size_t)row >= v->ndrow)
        return -1;
    return row;
}

long tui_view_device_at(const struct tui_view *v, int y, int x)
{
    long row = row_at(v, y, x);
    if (row < 0 || (v->drow[row] & (TUI_DROW_NODE | TUI_DROW_WAIT)))
        return -1;
    return (long)v->drow[row];
}

bool tui_view_select_at(struct tui_view *v, int y, int x)
{
    long row = row_at(v, y, x);
    if (row < 0)
        return false;
    select_row(v, row);
    return true;
}

/* ---- the process popup's command line ---- */

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
    /* As the snapshot's command was made (procinfo.c): arguments joined by
     * spaces, newlines as spaces, then cleaned. It is the first
     * PROC_CMD_LEN - 1 bytes of that text, cleaned on their own (a
     * character cut in two there is '?'): the same prefix, made the same
     * way, must equal it, or this is another process now. Raw bytes would
     * differ from it at every tab, control or invalid byte. */
    while (got > 0 && buf[got - 1] == '\0')
        got--;
    for (size_t i = 0; i < got; i++)
        if (buf[i] == '\0' || buf[i] == '\n')
            buf[i] = ' ';
    buf[got] = '\0';
    char head[PROC_CMD_LEN];
    snprintf(head, sizeof(head), "%s", buf);
    text_clean(head, sizeof(head));
    text_clean(buf, got + 1);
    if (got == 0 || strcmp(head, p->command) != 0)
        snprintf(buf, CMDLINE_MAX + 1, "%s", p->command); /* exited, or another process now */
    v->full_cmd = buf;
    v->full_cmd_len = strlen(buf);
}
