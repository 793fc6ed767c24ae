/*
 * fleet_view.c — the fleet's device list (fleet_view.h).
 */
#include "tui/fleet_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/fleet_ui.h"

/* The array *p grown to hold n entries of size sz; false when it cannot. */
static bool grow(void **p, size_t *cap, size_t n, size_t sz)
{
    if (n <= *cap)
        return true;
    void *q = realloc(*p, n * sz);
    if (!q)
        return false;
    *p = q;
    *cap = n;
    return true;
}

void tui_fleet_refresh(struct tui_view *v)
{
    const struct snapshot *s = v->snap;
    v->dnode_n = v->nnorder = v->dshow_n = v->dorder_n = 0;
    if (!s || !s->fleet)
        return;
    size_t nd = s->ndevices, nn = s->nnodes;
    if (nd && grow((void **)&v->dnode, &v->dnode_cap, nd, sizeof(*v->dnode))) {
        for (size_t i = 0; i < nd; i++)
            v->dnode[i] = SIZE_MAX;
        for (size_t k = 0; k < nn; k++) {
            const struct node_summary *n = &s->nodes[k];
            for (size_t i = n->dev_first; n->devs_read && i < n->dev_first + n->ndev && i < nd; i++)
                v->dnode[i] = k;
        }
        v->dnode_n = nd;
    }
    if (nn && grow((void **)&v->norder, &v->norder_cap, nn, sizeof(*v->norder))) {
        tui_fleet_order_nodes(s, v->dsort, v->norder);
        v->nnorder = nn;
    }
    if (v->dfilter[0] && nd && grow((void **)&v->dshow, &v->dshow_cap, nd, 1)) {
        v->dshown = tui_fleet_filter(s, v->dfilter, v->dshow);
        v->dshow_n = nd;
    }
    if (v->dsort != FSORT_NODE && nd &&
        grow((void **)&v->dorder, &v->dorder_cap, nd, sizeof(*v->dorder))) {
        tui_fleet_order(s, v->dsort, v->dorder);
        v->dorder_n = nd;
    }
}

size_t tui_fleet_dev_node(const struct tui_view *v, size_t i)
{
    return i < v->dnode_n ? v->dnode[i] : SIZE_MAX;
}

/* ---- folds ---- */

static struct tui_node_fold *node_fold_find(const struct tui_view *v, const char *inst)
{
    for (size_t k = 0; k < v->nnode_fold; k++)
        if (strcmp(v->node_fold[k].node, inst) == 0)
            return (struct tui_node_fold *)&v->node_fold[k];
    return NULL;
}

bool tui_fleet_node_open(const struct tui_view *v, size_t k)
{
    const struct snapshot *s = v->snap;
    if (!s || k >= s->nnodes)
        return false;
    const struct tui_node_fold *f = node_fold_find(v, s->nodes[k].instance);
    if (f && f->fold != FOLD_AUTO)
        return f->fold == FOLD_OPEN;
    return s->nnodes <= FLEET_OPEN_NODES_MAX;
}

void tui_fleet_node_fold_set(struct tui_view *v, size_t k, enum tui_fold fold)
{
    const struct snapshot *s = v->snap;
    if (!s || k >= s->nnodes)
        return;
    struct tui_node_fold *f = node_fold_find(v, s->nodes[k].instance);
    if (!f) { /* past the table's end the first entry is reused */
        f = &v->node_fold[v->nnode_fold < TUI_NODE_FOLD_MAX ? v->nnode_fold++ : 0];
        snprintf(f->node, sizeof(f->node), "%s", s->nodes[k].instance);
    }
    f->fold = (unsigned char)fold;
}

static struct tui_gpu_fold *gpu_fold_find(const struct tui_view *v, const struct device *d)
{
    for (size_t k = 0; k < v->ngpu_fold; k++)
        if (strcmp(v->gpu_fold[k].uuid, d->uuid) == 0 && strcmp(v->gpu_fold[k].node, d->node) == 0)
            return (struct tui_gpu_fold *)&v->gpu_fold[k];
    return NULL;
}

enum tui_fold tui_fleet_gpu_fold(const struct tui_view *v, const struct device *d)
{
    const struct tui_gpu_fold *f = gpu_fold_find(v, d);
    return f ? (enum tui_fold)f->fold : FOLD_AUTO;
}

void tui_fleet_gpu_fold_set(struct tui_view *v, const struct device *d, enum tui_fold fold)
{
    struct tui_gpu_fold *f = gpu_fold_find(v, d);
    if (!f) {
        f = &v->gpu_fold[v->ngpu_fold < TUI_NODE_FOLD_MAX ? v->ngpu_fold++ : 0];
        snprintf(f->node, sizeof(f->node), "%s", d->node);
        snprintf(f->uuid, sizeof(f->uuid), "%s", d->uuid);
    }
    f->fold = (unsigned char)fold;
}

/* ---- the rows ---- */

/* The device shown p-th under the list's order (a node's devices stay in
 * its range under every order). */
static size_t at(const struct tui_view *v, size_t p)
{
    return p < v->dorder_n ? v->dorder[p] : p;
}

static bool shown(const struct tui_view *v, size_t i)
{
    return i >= v->dshow_n || v->dshow[i];
}

static size_t shown_instances(const struct tui_view *v, size_t g, size_t k)
{
    size_t n = 0;
    for (size_t c = 0; c < k; c++)
        n += shown(v, g + 1 + c);
    return n;
}

static size_t node_at(const struct tui_view *v, size_t p)
{
    return p < v->nnorder ? v->norder[p] : p;
}

static bool loaded(const struct node_summary *n)
{
    return n->devs_read;
}

/* The node has a row: its devices were not read (Prometheus filtered the
 * nodes), or some device of it is shown. */
static bool node_listed(const struct tui_view *v, const struct node_summary *n)
{
    if (!loaded(n) || !v->dshow_n || n->ndev == 0)
        return true;
    for (size_t i = n->dev_first; i < n->dev_first + n->ndev; i++)
        if (shown(v, i))
            return true;
    return false;
}

size_t tui_fleet_count_rows(const struct tui_view *v, size_t *base)
{
    const struct snapshot *s = v->snap;
    size_t all = 0;
    *base = 0;
    for (size_t q = 0; s && q < s->nnodes; q++) {
        size_t k = node_at(v, q);
        const struct node_summary *n = &s->nodes[k];
        if (!node_listed(v, n))
            continue;
        all++;
        (*base)++;
        if (!tui_fleet_node_open(v, k))
            continue;
        if (!loaded(n)) {
            all++;
            (*base)++;
            continue;
        }
        size_t end = n->dev_first + n->ndev;
        for (size_t p = n->dev_first; p < end && p < s->ndevices;) {
            size_t i = at(v, p);
            const struct device *d = &s->devices[i];
            size_t kk = d->kind == DEV_GPU ? tui_dev_instances(s, i) : 0;
            if (shown(v, i)) {
                size_t kl = shown_instances(v, i, kk);
                enum tui_fold f = tui_fleet_gpu_fold(v, d);
                *base += 1 + (f == FOLD_OPEN ? kl : 0);
                all += 1 + (f == FOLD_CLOSED ? 0 : kl);
            }
            p += 1 + kk;
        }
    }
    return all;
}

void tui_fleet_build_rows(struct tui_view *v, int room)
{
    const struct snapshot *s = v->snap;
    v->ndrow = 0;
    if (!s)
        return;
    size_t cap = s->ndevices + 2 * s->nnodes + 1;
    if (!grow((void **)&v->drow, &v->drow_cap, cap, sizeof(*v->drow)))
        return; /* an empty list; the next draw tries again */
    size_t base, all = tui_fleet_count_rows(v, &base);
    bool everything = room <= 0 || all <= (size_t)room;
    size_t budget = room > 0 && (size_t)room > base ? (size_t)room - base : 0;
    size_t sel_gpu = !v->sel_node && v->sel < s->ndevices ? tui_dev_gpu_of(s, v->sel) : SIZE_MAX;
    bool sel_open = false;
    if (!everything && sel_gpu < s->ndevices && s->devices[sel_gpu].kind == DEV_GPU &&
        tui_fleet_gpu_fold(v, &s->devices[sel_gpu]) == FOLD_AUTO) {
        size_t k = shown_instances(v, sel_gpu, tui_dev_instances(s, sel_gpu));
        sel_open = true;
        budget = budget > k ? budget - k : 0;
    }
    for (size_t q = 0; q < s->nnodes; q++) {
        size_t k = node_at(v, q);
        const struct node_summary *n = &s->nodes[k];
        if (!node_listed(v, n))
            continue;
        v->drow[v->ndrow++] = TUI_DROW_NODE | k;
        if (!tui_fleet_node_open(v, k))
            continue;
        if (!loaded(n)) {
            v->drow[v->ndrow++] = TUI_DROW_WAIT | k;
            continue;
        }
        size_t end = n->dev_first + n->ndev;
        for (size_t p = n->dev_first; p < end && p < s->ndevices;) {
            size_t i = at(v, p);
            const struct device *d = &s->devices[i];
            size_t kk = d->kind == DEV_GPU ? tui_dev_instances(s, i) : 0;
            if (!shown(v, i)) {
                p += 1 + kk;
                continue;
            }
            size_t kl = shown_instances(v, i, kk);
            enum tui_fold f = tui_fleet_gpu_fold(v, d);
            bool open = f == FOLD_OPEN;
            if (f == FOLD_AUTO) {
                if (everything || (i == sel_gpu && sel_open)) {
                    open = true;
                } else if (kl <= budget) {
                    open = true;
                    budget -= kl;
                }
            }
            v->drow[v->ndrow++] = i;
            if (open)
                for (size_t c = 0; c < kk; c++)
                    if (shown(v, at(v, p + 1 + c)))
                        v->drow[v->ndrow++] = at(v, p + 1 + c);
            p += 1 + kk;
        }
    }
}

/* ---- what the list wants read ---- */

static size_t entry_node(const struct tui_view *v, size_t e)
{
    if (e & (TUI_DROW_NODE | TUI_DROW_WAIT))
        return TUI_DROW_INDEX(e);
    return tui_fleet_dev_node(v, e);
}

static size_t add_node(const struct tui_view *v, const char **out, size_t n, size_t max, size_t k)
{
    const struct snapshot *s = v->snap;
    if (k >= s->nnodes || n >= max)
        return n;
    for (size_t j = 0; j < n; j++)
        if (out[j] == s->nodes[k].instance)
            return n;
    out[n++] = s->nodes[k].instance;
    return n;
}

size_t tui_fleet_wanted(const struct tui_view *v, const char **out, size_t max)
{
    const struct snapshot *s = v->snap;
    size_t n = 0;
    if (!s || !s->fleet)
        return 0;
    if (s->nnodes <= FLEET_OPEN_NODES_MAX) {
        for (size_t k = 0; k < s->nnodes; k++)
            n = add_node(v, out, n, max, k);
        return n;
    }
    /* the selection's node first: its detail panel shows its first GPU */
    if (v->sel_node)
        n = add_node(v, out, n, max, v->sel_nodei);
    else if (v->sel < s->ndevices)
        n = add_node(v, out, n, max, tui_fleet_dev_node(v, v->sel));
    long room = v->dev_room > 0 ? v->dev_room : 24;
    long from = v->dev_scroll - room, to = v->dev_scroll + 2 * room;
    for (long r = from < 0 ? 0 : from; r < to && (size_t)r < v->ndrow; r++) {
        size_t k = entry_node(v, v->drow[r]);
        if (k < s->nnodes && tui_fleet_node_open(v, k))
            n = add_node(v, out, n, max, k);
    }
    return n;
}

static size_t node_devices(const struct node_summary *n)
{
    return (metric_ok(&n->gpus) ? (size_t)n->gpus.value : 0) +
           (metric_ok(&n->mig) ? (size_t)n->mig.value : 0);
}

void tui_fleet_position(const struct tui_view *v, size_t *i, size_t *n)
{
    const struct snapshot *s = v->snap;
    *i = *n = 0;
    if (!s || !s->fleet)
        return;
    size_t sk = v->sel_node ? v->sel_nodei : tui_fleet_dev_node(v, v->sel);
    for (size_t q = 0; q < s->nnodes; q++) {
        size_t k = node_at(v, q);
        const struct node_summary *nd = &s->nodes[k];
        if (k == sk && nd->devs_read) {
            size_t off = 0;
            for (size_t p = nd->dev_first; !v->sel_node && p < nd->dev_first + nd->ndev; p++)
                if (at(v, p) == v->sel) {
                    off = p - nd->dev_first;
                    break;
                }
            *i = *n + off + 1;
        }
        *n += node_devices(nd);
    }
}

const struct node_summary *tui_fleet_selected_node(const struct tui_view *v)
{
    const struct snapshot *s = v->snap;
    if (!s || !s->fleet || !v->sel_node || v->sel_nodei >= s->nnodes)
        return NULL;
    return &s->nodes[v->sel_nodei];
}
