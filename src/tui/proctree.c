/*
 * proctree.c — the process tree (proctree.h): the parents read from /proc
 * (once per snapshot shown, by PID in a hash), the forest of each slice,
 * its lines in v->plines, and the guides and headings drawn for them.
 */
#include "tui/proctree.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/proclist.h"
#include "system/procinfo.h"
#include "tui/fmt.h"

/* Why a parent is unknown (a "parent unknown" line's idx). */
enum why {
    WHY_REMOTE,     /* a fleet's process: its node's PID */
    WHY_RECORDED,   /* replaying: a recorded PID */
    WHY_INVISIBLE,  /* the process's /proc entry was not read */
    WHY_GONE,       /* its stat now is another process's, or gone */
    WHY_UNREADABLE, /* the parent's stat cannot be read */
    WHY_REUSED,     /* the parent's PID started after its child */
    WHY_LOOP,       /* the parents make a loop */
    WHY_DEEP,       /* more than TUI_PROCTREE_DEPTH parents */
    WHY_MEMORY,     /* out of memory for the tree */
    WHY_COUNT
};

/* What a "parent unknown" line says, and Enter on it at length. */
static const char *const why_short[WHY_COUNT] = {
    "another node's", "not recorded", "not visible here", "process exited", "not readable",
    "PID reused",     "a loop",       "16+ levels up",    "no memory",
};
static const char *const why_text[WHY_COUNT] = {
    "another node's process: its PID is not looked up here",
    "a recorded process: its PID is not looked up here",
    "the process is not visible from this PID namespace (no /proc entry read)",
    "the process has exited, or its PID is another process's now",
    "its parent's /proc entry cannot be read (exited, or hidden by hidepid)",
    "its parent's PID is another process's now (it started after its child)",
    "the parents /proc gives make a loop",
    "more than 16 levels up",
    "out of memory for the tree",
};

const char *tui_proctree_why(size_t why)
{
    return why < WHY_COUNT ? why_text[why] : "?";
}

const char *tui_proctree_why_short(size_t why)
{
    return why < WHY_COUNT ? why_short[why] : "?";
}

/* A node of a slice's forest: a GPU process, a parent, or "parent unknown". */
struct tnode {
    unsigned char kind; /* enum tui_pline_kind */
    uint32_t pid;       /* 0 for "parent unknown" */
    size_t idx;         /* the line's idx */
    long parent;        /* node index, -1 a root */
    size_t rank;        /* the first of its processes in v->rows */
    long first, n;      /* its children in the order array */
};

struct scratch {
    struct tnode *node;
    size_t nn, ncap;
    uint32_t *h; /* (pid) -> node index + 1 within the slice being built; 0 empty */
    size_t hcap;
    size_t *order; /* nodes by (parent, rank) */
    size_t ocap;
    size_t *grp; /* v->rows' positions by (device, position) */
    size_t *gdev; /* the device of each of them */
    size_t gcap;
    long unk[WHY_COUNT]; /* the slice's "parent unknown" nodes */
};

static struct scratch *scratch_of(struct tui_view *v)
{
    if (!v->tree_scratch)
        v->tree_scratch = calloc(1, sizeof(struct scratch));
    return v->tree_scratch;
}

void tui_proctree_free(struct tui_view *v)
{
    struct scratch *S = v->tree_scratch;
    if (S) {
        free(S->node);
        free(S->h);
        free(S->order);
        free(S->grp);
        free(S->gdev);
        free(S);
    }
    v->tree_scratch = NULL;
}

/* ---- parents read from /proc ---- */

static size_t pid_hash(uint32_t pid, size_t cap)
{
    return (size_t)(pid * 2654435761u) & (cap - 1);
}

static int tpar_index(struct tui_view *v)
{
    size_t want = 64;
    while (want < 2 * v->tpar_cap)
        want *= 2;
    if (want != v->tpar_idx_cap) {
        uint32_t *n = realloc(v->tpar_idx, want * sizeof(*n));
        if (!n)
            return -1;
        v->tpar_idx = n;
        v->tpar_idx_cap = want;
    }
    memset(v->tpar_idx, 0, v->tpar_idx_cap * sizeof(*v->tpar_idx));
    for (size_t i = 0; i < v->ntpar; i++) {
        size_t h = pid_hash(v->tpar[i].pid, v->tpar_idx_cap);
        while (v->tpar_idx[h])
            h = (h + 1) & (v->tpar_idx_cap - 1);
        v->tpar_idx[h] = (uint32_t)i + 1;
    }
    return 0;
}

/* <proc root>/<pid>/stat into e. */
static void read_parent(const struct tui_view *v, struct tui_tparent *e)
{
    char path[4200], buf[1024];
    snprintf(path, sizeof(path), "%s/%u/stat", v->proc_root ? v->proc_root : "/proc", e->pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = -1;
    if (fd >= 0) {
        do
            n = read(fd, buf, sizeof(buf) - 1);
        while (n < 0 && errno == EINTR);
        close(fd);
    }
    struct procinfo_stat st;
    e->ok = false;
    e->ppid = -1;
    if (n <= 0)
        return;
    buf[n] = '\0';
    if (procinfo_parse_stat(buf, &st) != 0)
        return;
    e->ok = true;
    e->ppid = st.ppid;
    e->start_time = st.start_time;
    memcpy(e->comm, st.comm, sizeof(e->comm)); /* cleaned by the parser */
}

/* The parent entry of pid, read now unless this snapshot's reads have it;
 * NULL when there is no memory for it. */
static const struct tui_tparent *parent_get(struct tui_view *v, uint32_t pid)
{
    if (v->tpar_idx_cap)
        for (size_t h = pid_hash(pid, v->tpar_idx_cap); v->tpar_idx[h];
             h = (h + 1) & (v->tpar_idx_cap - 1))
            if (v->tpar[v->tpar_idx[h] - 1].pid == pid)
                return &v->tpar[v->tpar_idx[h] - 1];
    if (v->ntpar == v->tpar_cap) {
        size_t cap = v->tpar_cap ? v->tpar_cap * 2 : 64;
        struct tui_tparent *n = realloc(v->tpar, cap * sizeof(*n));
        if (!n)
            return NULL;
        v->tpar = n;
        v->tpar_cap = cap;
    }
    struct tui_tparent *e = &v->tpar[v->ntpar++];
    memset(e, 0, sizeof(*e));
    e->pid = pid;
    read_parent(v, e);
    if (v->tpar_idx_cap < 2 * v->tpar_cap) {
        if (tpar_index(v) != 0) {
            v->ntpar--;
            return NULL;
        }
    } else {
        size_t h = pid_hash(pid, v->tpar_idx_cap);
        while (v->tpar_idx[h])
            h = (h + 1) & (v->tpar_idx_cap - 1);
        v->tpar_idx[h] = (uint32_t)v->ntpar;
    }
    return e;
}

/* ---- a slice's forest ---- */

static long node_add(struct scratch *S, unsigned char kind, uint32_t pid, size_t idx, size_t rank)
{
    if (S->nn == S->ncap) {
        size_t cap = S->ncap ? S->ncap * 2 : 256;
        struct tnode *n = realloc(S->node, cap * sizeof(*n));
        if (!n)
            return -1;
        S->node = n;
        S->ncap = cap;
    }
    S->node[S->nn] = (struct tnode){kind, pid, idx, -1, rank, -1, 0};
    return (long)S->nn++;
}

/* The slice's PID hash, rebuilt for nodes [from, nn) at twice their room. */
static int hash_rebuild(struct scratch *S, size_t from)
{
    size_t want = 64;
    while (want < 2 * S->ncap)
        want *= 2;
    if (want != S->hcap) {
        uint32_t *n = realloc(S->h, want * sizeof(*n));
        if (!n)
            return -1;
        S->h = n;
        S->hcap = want;
    }
    memset(S->h, 0, S->hcap * sizeof(*S->h));
    for (size_t i = from; i < S->nn; i++) {
        if (!S->node[i].pid)
            continue;
        size_t h = pid_hash(S->node[i].pid, S->hcap);
        while (S->h[h])
            h = (h + 1) & (S->hcap - 1);
        S->h[h] = (uint32_t)i + 1;
    }
    return 0;
}

static long node_find(const struct scratch *S, uint32_t pid)
{
    if (!S->hcap)
        return -1;
    for (size_t h = pid_hash(pid, S->hcap); S->h[h]; h = (h + 1) & (S->hcap - 1))
        if (S->node[S->h[h] - 1].pid == pid)
            return (long)S->h[h] - 1;
    return -1;
}

/* A node with a PID, hashed; -1 without memory. */
static long node_put(struct scratch *S, size_t from, unsigned char kind, uint32_t pid, size_t idx,
                     size_t rank)
{
    long k = node_add(S, kind, pid, idx, rank);
    if (k < 0)
        return -1;
    if (S->hcap < 2 * S->ncap) {
        if (hash_rebuild(S, from) != 0)
            return -1;
    } else {
        size_t h = pid_hash(pid, S->hcap);
        while (S->h[h])
            h = (h + 1) & (S->hcap - 1);
        S->h[h] = (uint32_t)k + 1;
    }
    return k;
}

/* Hang node k under the slice's "parent unknown" line for why. */
static void hang_unknown(struct scratch *S, long k, enum why why, size_t rank)
{
    if (S->unk[why] < 0)
        S->unk[why] = node_add(S, PL_UNKNOWN, 0, why, rank);
    if (S->unk[why] < 0) /* no memory: a root then */
        return;
    S->node[k].parent = S->unk[why];
}

/* Process v->rows[rank] (s->procs[i]) into the slice's forest begun at
 * node from: its node, and its parents up to a root (ppid 0), a node
 * already placed, or an unknown. Rows come in order, so a node placed
 * before has a smaller rank: only the new ones take this rank. */
static void add_chain(struct tui_view *v, struct scratch *S, size_t from, size_t rank, size_t i)
{
    const struct gpu_process *p = &v->snap->procs[i];
    long k = node_find(S, p->pid);
    if (k >= 0) { /* a parent of a process before it: itself a GPU process */
        S->node[k].kind = PL_PROC;
        S->node[k].idx = i;
        return;
    }
    k = node_put(S, from, PL_PROC, p->pid, i, rank);
    if (k < 0)
        return;
    long di = proclist_device_of(v->snap, i);
    if (v->procs_recorded) {
        hang_unknown(S, k, WHY_RECORDED, rank);
        return;
    }
    if (di >= 0 && v->snap->devices[di].node[0]) {
        hang_unknown(S, k, WHY_REMOTE, rank);
        return;
    }
    /* no start time: procinfo could not read it here (another PID
     * namespace, hidepid, exited): the PID is not one to look up */
    if (p->start_time == 0) {
        hang_unknown(S, k, WHY_INVISIBLE, rank);
        return;
    }
    const struct tui_tparent *e = parent_get(v, p->pid);
    if (!e) {
        hang_unknown(S, k, WHY_MEMORY, rank);
        return;
    }
    if (!e->ok || e->start_time != p->start_time) {
        hang_unknown(S, k, WHY_GONE, rank);
        return;
    }
    uint64_t child_start = e->start_time;
    int64_t ppid = e->ppid;
    for (int depth = 0;; depth++) {
        if (ppid == 0) /* a root: init, or the kernel's kthreadd */
            return;
        if (ppid < 0) {
            hang_unknown(S, k, WHY_UNREADABLE, rank);
            return;
        }
        if (depth >= TUI_PROCTREE_DEPTH) {
            hang_unknown(S, k, WHY_DEEP, rank);
            return;
        }
        long pk = node_find(S, (uint32_t)ppid);
        if (pk >= 0) {
            if (S->node[pk].rank == rank && S->node[pk].kind != PL_UNKNOWN) {
                hang_unknown(S, k, WHY_LOOP, rank); /* placed in this very walk */
                return;
            }
            S->node[k].parent = pk;
            return;
        }
        e = parent_get(v, (uint32_t)ppid);
        if (!e) {
            hang_unknown(S, k, WHY_MEMORY, rank);
            return;
        }
        if (!e->ok) {
            hang_unknown(S, k, WHY_UNREADABLE, rank);
            return;
        }
        /* a parent starts before its child: one that started after is a
         * newcomer on the PID of the parent that exited */
        if (e->start_time > child_start) {
            hang_unknown(S, k, WHY_REUSED, rank);
            return;
        }
        size_t ei = (size_t)(e - v->tpar);
        pk = node_put(S, from, PL_PARENT, (uint32_t)ppid, ei, rank);
        if (pk < 0) {
            hang_unknown(S, k, WHY_MEMORY, rank);
            return;
        }
        S->node[k].parent = pk;
        k = pk;
        child_start = e->start_time;
        ppid = e->ppid;
    }
}

static int cmp_order(const void *pa, const void *pb, void *arg)
{
    const struct scratch *S = arg;
    const struct tnode *a = &S->node[*(const size_t *)pa], *b = &S->node[*(const size_t *)pb];
    if (a->parent != b->parent)
        return a->parent < b->parent ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    /* a "parent unknown" line after a root of the same rank (cannot be
     * both), then by PID */
    return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static void put_line(struct tui_view *v, struct tui_pline l)
{
    if (v->nlines < TUI_PROC_LINES_MAX)
        v->plines[v->nlines++] = l;
    else
        v->nlines_cut++;
}

static void emit(struct tui_view *v, struct scratch *S, size_t k, unsigned depth, uint32_t cont,
                 bool last, size_t dev)
{
    const struct tnode *t = &S->node[k];
    put_line(v, (struct tui_pline){.kind = t->kind, .depth = (unsigned char)depth, .last = last,
                                   .cont = cont, .idx = t->idx, .dev = dev});
    uint32_t cc = cont | (depth >= 1 && !last && depth < 32 ? 1u << depth : 0);
    for (long c = 0; c < t->n; c++) {
        size_t ck = S->order[t->first + c];
        emit(v, S, ck, depth + 1, cc, c + 1 == t->n, dev);
    }
}

/* Lay out the forest of nodes [from, nn) under its heading. */
static void emit_slice(struct tui_view *v, struct scratch *S, size_t from, size_t dev)
{
    size_t n = S->nn - from;
    if (n == 0)
        return;
    if (S->ocap < n) {
        size_t *o = realloc(S->order, n * sizeof(*o));
        if (!o)
            return;
        S->order = o;
        S->ocap = n;
    }
    for (size_t i = 0; i < n; i++)
        S->order[i] = from + i;
    qsort_r(S->order, n, sizeof(*S->order), cmp_order, S);
    for (size_t i = from; i < S->nn; i++) {
        S->node[i].first = -1;
        S->node[i].n = 0;
    }
    size_t roots = 0;
    for (size_t o = 0; o < n; o++) {
        struct tnode *t = &S->node[S->order[o]];
        if (t->parent < 0) {
            roots++;
            continue;
        }
        struct tnode *p = &S->node[t->parent];
        if (p->first < 0)
            p->first = (long)o;
        p->n++;
    }
    for (size_t o = 0; o < roots; o++)
        emit(v, S, S->order[o], 0, 0, o + 1 == roots, dev);
}

static int cmp_grp(const void *pa, const void *pb, void *arg)
{
    const struct scratch *S = arg;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    if (S->gdev[a] != S->gdev[b])
        return S->gdev[a] < S->gdev[b] ? -1 : 1;
    return a < b ? -1 : a > b;
}

void tui_proctree_build(struct tui_view *v)
{
    v->nlines = v->nlines_cut = 0;
    if (v->tpar_gen != v->snap_gen) { /* a new snapshot: its parents read again */
        v->ntpar = 0;
        if (v->tpar_idx)
            memset(v->tpar_idx, 0, v->tpar_idx_cap * sizeof(*v->tpar_idx));
        v->tpar_gen = v->snap_gen;
    }
    struct scratch *S = scratch_of(v);
    if (!S || v->nrows == 0)
        return;
    if (S->gcap < v->nrows) {
        size_t *g = realloc(S->grp, v->nrows * sizeof(*g));
        if (g)
            S->grp = g;
        size_t *d = realloc(S->gdev, v->nrows * sizeof(*d));
        if (d)
            S->gdev = d;
        if (!g || !d)
            return;
        S->gcap = v->nrows;
    }
    /* the rows by slice (in the device list's order), each slice's in
     * the sort's order */
    for (size_t r = 0; r < v->nrows; r++) {
        long di = proclist_device_of(v->snap, v->rows[r]);
        S->gdev[r] = di >= 0 ? (size_t)di : SIZE_MAX;
        S->grp[r] = r;
    }
    qsort_r(S->grp, v->nrows, sizeof(*S->grp), cmp_grp, S);
    for (size_t a = 0; a < v->nrows;) {
        size_t dev = S->gdev[S->grp[a]], b = a;
        while (b < v->nrows && S->gdev[S->grp[b]] == dev)
            b++;
        put_line(v, (struct tui_pline){.kind = PL_SLICE, .idx = dev, .dev = dev,
                                       .n = (uint32_t)(b - a)});
        if (!tui_proctree_folded(v, dev)) {
            S->nn = 0;
            for (size_t w = 0; w < WHY_COUNT; w++)
                S->unk[w] = -1;
            if (S->h)
                memset(S->h, 0, S->hcap * sizeof(*S->h));
            for (size_t r = a; r < b; r++)
                add_chain(v, S, 0, S->grp[r], v->rows[S->grp[r]]);
            emit_slice(v, S, 0, dev);
        }
        a = b;
    }
}

/* ---- folds ---- */

static const struct device *dev_at(const struct tui_view *v, size_t dev)
{
    return v->snap && dev < v->snap->ndevices ? &v->snap->devices[dev] : NULL;
}

bool tui_proctree_folded(const struct tui_view *v, size_t dev)
{
    const struct device *d = dev_at(v, dev);
    if (!d)
        return false;
    for (size_t i = 0; i < v->ntfold; i++)
        if (strcmp(v->tfold[i].uuid, d->uuid) == 0 && strcmp(v->tfold[i].node, d->node) == 0)
            return true;
    return false;
}

bool tui_proctree_toggle_fold(struct tui_view *v)
{
    if (!v->proc_tree || v->proc_sel >= v->nlines)
        return false;
    size_t dev = v->plines[v->proc_sel].dev;
    const struct device *d = dev_at(v, dev);
    if (!d)
        return false;
    for (size_t i = 0; i < v->ntfold; i++)
        if (strcmp(v->tfold[i].uuid, d->uuid) == 0 && strcmp(v->tfold[i].node, d->node) == 0) {
            v->tfold[i] = v->tfold[--v->ntfold];
            return true;
        }
    if (v->ntfold == sizeof(v->tfold) / sizeof(v->tfold[0])) {
        snprintf(v->status, sizeof(v->status), "at most %zu slices folded",
                 sizeof(v->tfold) / sizeof(v->tfold[0]));
        return true;
    }
    snprintf(v->tfold[v->ntfold].node, sizeof(v->tfold[0].node), "%s", d->node);
    snprintf(v->tfold[v->ntfold].uuid, sizeof(v->tfold[0].uuid), "%s", d->uuid);
    v->ntfold++;
    /* the cursor onto the heading: what it was on is folded away */
    for (size_t k = v->proc_sel + 1; k-- > 0;)
        if (v->plines[k].kind == PL_SLICE && v->plines[k].dev == dev) {
            tui_view_proc_goto(v, k);
            break;
        }
    return true;
}

/* ---- drawing ---- */

void tui_proctree_guides(char *out, size_t len, const struct tui_view *v,
                         const struct tui_pline *l)
{
    const struct tui_glyphs *g = &v->theme.g;
    size_t n = 0;
    out[0] = '\0';
    if (l->kind == PL_SLICE || l->depth == 0)
        return;
    for (unsigned k = 1; k < l->depth && n + 8 < len; k++) {
        int w = snprintf(out + n, len - n, "%s  ", k < 32 && (l->cont & (1u << k)) ? g->tree_vert : " ");
        if (w < 0)
            return;
        n += (size_t)w < len - n ? (size_t)w : len - n - 1;
    }
    snprintf(out + n, len - n, "%s%s ", l->last ? g->tree_last : g->tree_mid, g->tree_hline);
}

void tui_proctree_heading(char *out, size_t len, const struct tui_view *v,
                          const struct tui_pline *l)
{
    const struct device *d = dev_at(v, l->dev);
    const struct tui_glyphs *g = &v->theme.g;
    const char *mark = tui_proctree_folded(v, l->dev) ? g->fold_closed : g->fold_open;
    char name[200] = "?", node[80] = "";
    if (d) {
        if (d->node[0])
            snprintf(node, sizeof(node), "%.60s: ", d->node);
        if (d->kind == DEV_MIG) {
            proclist_slice_name(name, sizeof(name), d, PROCLIST_SLICE_FULL);
        } else {
            char model[MIGMON_NAME_LEN + 8];
            tui_device_name(model, sizeof(model), d, true);
            snprintf(name, sizeof(name), "GPU %d %s%s", d->index, model,
                     d->mig_enabled ? ", not attributed to an instance" : "");
        }
    }
    snprintf(out, len, "%s %s%s  %u process%s", mark, node, name, (unsigned)l->n,
             l->n == 1 ? "" : "es");
}
