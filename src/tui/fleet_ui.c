/*
 * fleet_ui.c — the fleet view's rules (fleet_ui.h): the totals of the
 * header and of the node rows, and the device filter.
 */
#include "tui/fleet_ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/health_rules.h"

bool tui_fleet_idle(const struct device *d)
{
    return device_idle(d) == 1;
}

static bool has_instances(const struct snapshot *s, size_t i)
{
    const struct device *d = &s->devices[i];
    return d->kind == DEV_GPU && i + 1 < s->ndevices && s->devices[i + 1].kind == DEV_MIG &&
           s->devices[i + 1].parent_pos == (int)i;
}

void tui_fleet_node_totals(const struct node_summary *n, struct tui_fleet_totals *t)
{
    memset(t, 0, sizeof(*t));
    t->nodes = 1;
    t->nodes_down = n->up == 0;
    t->gpus = metric_ok(&n->gpus) ? (size_t)n->gpus.value : 0;
    t->mig = metric_ok(&n->mig) ? (size_t)n->mig.value : 0;
    t->gpus_known = metric_ok(&n->gpus) || !n->seen;
    t->mig_known = metric_ok(&n->mig) || !n->seen;
    t->idle = metric_ok(&n->idle) ? (size_t)n->idle.value : 0;
    t->idle_known = metric_ok(&n->idle) || n->up == 0 || !n->seen;
    t->not_ok = metric_ok(&n->not_ok) ? (size_t)n->not_ok.value : 0;
    if (metric_ok(&n->mem_used) && metric_ok(&n->mem_total)) {
        t->mem_used = n->mem_used.value;
        t->mem_total = n->mem_total.value;
        t->mem_known = true;
    }
}

bool tui_fleet_totals(const struct snapshot *s, struct tui_fleet_totals *t)
{
    memset(t, 0, sizeof(*t));
    if (!s || !s->fleet)
        return false;
    t->idle_known = t->gpus_known = t->mig_known = true;
    for (size_t k = 0; k < s->nnodes; k++) {
        struct tui_fleet_totals n;
        tui_fleet_node_totals(&s->nodes[k], &n);
        t->nodes++;
        t->nodes_down += n.nodes_down;
        t->gpus += n.gpus;
        t->mig += n.mig;
        t->idle += n.idle;
        t->idle_known = t->idle_known && n.idle_known;
        t->gpus_known = t->gpus_known && n.gpus_known;
        t->mig_known = t->mig_known && n.mig_known;
        t->not_ok += n.not_ok;
        t->mem_used += n.mem_used;
        t->mem_total += n.mem_total;
        t->mem_known = t->mem_known || n.mem_known;
    }
    return true;
}

/* A word of the filter (n bytes at w) in text, ignoring case. */
static bool has_word(const char *text, const char *w, size_t n)
{
    size_t len = strlen(text);
    for (size_t i = 0; i + n <= len; i++)
        if (strncasecmp(text + i, w, n) == 0)
            return true;
    return false;
}

static bool word_match(const struct snapshot *s, size_t i, const char *w, size_t n)
{
    const struct device *d = &s->devices[i];
    if (n == 4 && strncasecmp(w, "idle", 4) == 0)
        return (d->kind == DEV_MIG || !has_instances(s, i)) && tui_fleet_idle(d);
    return has_word(d->node, w, n) || has_word(d->name, w, n) || has_word(d->profile, w, n) ||
           has_word(d->uuid, w, n) || has_word(d->pci_bus_id, w, n) ||
           has_word(d->pod.name, w, n) || has_word(d->pod.ns, w, n) ||
           has_word(d->pod.container, w, n);
}

bool tui_fleet_match(const struct snapshot *s, size_t i, const char *filter)
{
    const char *p = filter;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (n > 0 && !word_match(s, i, p, n))
            return false;
        p += n;
    }
    return true;
}

size_t tui_fleet_filter(const struct snapshot *s, const char *filter, unsigned char *shown)
{
    size_t n = 0;
    for (size_t i = 0; i < s->ndevices; i++)
        shown[i] = 0;
    for (size_t i = 0; i < s->ndevices; i++) {
        if (!tui_fleet_match(s, i, filter))
            continue;
        shown[i] = 1;
        const struct device *d = &s->devices[i];
        if (d->kind == DEV_MIG && d->parent_pos >= 0 && (size_t)d->parent_pos < i)
            shown[d->parent_pos] = 1;
    }
    for (size_t i = 0; i < s->ndevices; i++)
        n += shown[i];
    return n;
}

void tui_fleet_bytes(char *out, size_t len, double used, double total)
{
    const char *u = "GiB";
    double div = 1073741824.0;
    if (total >= 1099511627776.0 * 10) {
        u = "TiB";
        div = 1099511627776.0;
    }
    snprintf(out, len, "%.1f/%.1f %s", used / div, total / div, u);
}

/* A count some nodes could not give: what the others gave, and "+"; "?"
 * when none gave one. */
static void count_text(char *out, size_t len, size_t n, bool known)
{
    if (known)
        snprintf(out, len, "%zu", n);
    else if (n)
        snprintf(out, len, "%zu+", n);
    else
        snprintf(out, len, "?");
}

void tui_fleet_summary(char *out, size_t len, const struct tui_fleet_totals *t, bool brief)
{
    char down[32] = "", mem[48] = "N/A", bad[48] = "", gpus[32], mig[32], idle[32];
    if (t->mem_known)
        tui_fleet_bytes(mem, sizeof(mem), t->mem_used, t->mem_total);
    count_text(gpus, sizeof(gpus), t->gpus, t->gpus_known);
    count_text(mig, sizeof(mig), t->mig, t->mig_known);
    count_text(idle, sizeof(idle), t->idle, t->idle_known);
    if (brief) {
        if (t->nodes_down)
            snprintf(down, sizeof(down), " %zu down", t->nodes_down);
        if (t->not_ok)
            snprintf(bad, sizeof(bad), " %zu !", t->not_ok);
        snprintf(out, len, "%zu nodes%s %s GPU %s MIG %s idle %s%s", t->nodes, down, gpus, mig,
                 idle, mem, bad);
        return;
    }
    if (t->nodes_down)
        snprintf(down, sizeof(down), " (%zu down)", t->nodes_down);
    if (t->not_ok)
        snprintf(bad, sizeof(bad), "  %zu device%s not ok", t->not_ok, t->not_ok == 1 ? "" : "s");
    snprintf(out, len, "%zu node%s%s  %s GPU%s  %s MIG, %s idle  VRAM %s%s", t->nodes,
             t->nodes == 1 ? "" : "s", down, gpus, t->gpus == 1 && t->gpus_known ? "" : "s", mig,
             idle, mem, bad);
}

const char *tui_fleet_sort_name(enum tui_fleet_sort k)
{
    static const char *const names[FSORT_COUNT] = {"node", "util", "mem", "idle", "health"};
    return (unsigned)k < FSORT_COUNT ? names[k] : "node";
}

/* A sort key: known or not, and a value where more comes first. */
struct fkey {
    bool known;
    double v;
};

static struct fkey dev_key(const struct device *d, enum tui_fleet_sort k)
{
    struct fkey r = {false, 0};
    if (d->node_down && k != FSORT_HEALTH)
        return r;
    switch (k) {
    case FSORT_UTIL:
        if (metric_ok(&d->m[M_GPU_UTIL]))
            r = (struct fkey){true, d->m[M_GPU_UTIL].value};
        break;
    case FSORT_MEM:
        if (metric_ok(&d->m[M_MEM_USED]))
            r = (struct fkey){true, d->m[M_MEM_USED].value};
        break;
    case FSORT_IDLE:
        if (metric_ok(&d->m[M_GPU_UTIL]) || metric_ok(&d->process_count))
            r = (struct fkey){true, tui_fleet_idle(d) ? 1 : 0};
        break;
    case FSORT_HEALTH:
        if (d->health != HEALTH_UNKNOWN)
            r = (struct fkey){true, (double)d->health};
        break;
    default:
        break;
    }
    return r;
}

/* A group's key from its members': the count of idle ones, the maximum
 * of the others. */
static void fold_key(struct fkey *g, struct fkey m, enum tui_fleet_sort k)
{
    if (!m.known)
        return;
    if (!g->known)
        *g = (struct fkey){true, k == FSORT_IDLE ? 0 : m.v};
    if (k == FSORT_IDLE)
        g->v += m.v;
    else if (m.v > g->v)
        g->v = m.v;
}

/* Whether a comes before b: known first, then more first. */
static bool key_before(struct fkey a, struct fkey b)
{
    if (a.known != b.known)
        return a.known;
    return a.known && a.v > b.v;
}

/* A run of devices that moves as one: a node, a GPU with its instances, or
 * one instance. */
struct fgroup {
    size_t from, to;
    struct fkey key;
};

/* Stable insertion sort of g[0..n) by key (the lists are small). */
static void sort_groups(struct fgroup *g, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        struct fgroup x = g[i];
        size_t j = i;
        while (j > 0 && key_before(x.key, g[j - 1].key)) {
            g[j] = g[j - 1];
            j--;
        }
        g[j] = x;
    }
}

static struct fkey range_key(const struct snapshot *s, size_t from, size_t to,
                             enum tui_fleet_sort k)
{
    struct fkey g = {false, 0};
    for (size_t i = from; i < to; i++) {
        const struct device *d = &s->devices[i];
        /* a GPU split into instances counts by its instances for idleness */
        if (k == FSORT_IDLE && has_instances(s, i))
            continue;
        fold_key(&g, dev_key(d, k), k);
    }
    return g;
}

/* Orders the groups of [from, to) one level down and writes them to out. */
static size_t order_gpu(const struct snapshot *s, size_t gpu, size_t to, enum tui_fleet_sort k,
                        size_t *out, struct fgroup *tmp)
{
    size_t n = 0, w = 0;
    out[w++] = gpu;
    for (size_t i = gpu + 1; i < to; i++)
        tmp[n++] = (struct fgroup){i, i + 1, dev_key(&s->devices[i], k)};
    sort_groups(tmp, n);
    for (size_t i = 0; i < n; i++)
        out[w++] = tmp[i].from;
    return w;
}

void tui_fleet_order(const struct snapshot *s, enum tui_fleet_sort k, size_t *order)
{
    size_t n = s->ndevices;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    if (k == FSORT_NODE || n == 0)
        return;
    struct fgroup *gpus = calloc(n, sizeof(*gpus));
    struct fgroup *tmp = calloc(n, sizeof(*tmp));
    if (!gpus || !tmp)
        goto out;
    size_t w = 0;
    /* each node's devices (a run of one node) in place, ordered within */
    for (size_t a = 0; a < n;) {
        size_t end = a + 1;
        while (end < n && strcmp(s->devices[end].node, s->devices[a].node) == 0)
            end++;
        size_t ng = 0;
        for (size_t i = a; i < end;) {
            size_t j = i + 1;
            while (j < end && s->devices[j].kind == DEV_MIG && s->devices[j].parent_pos == (int)i)
                j++;
            gpus[ng++] = (struct fgroup){i, j, range_key(s, i, j, k)};
            i = j;
        }
        sort_groups(gpus, ng);
        for (size_t b = 0; b < ng; b++)
            w += order_gpu(s, gpus[b].from, gpus[b].to, k, order + w, tmp);
        a = end;
    }
out:
    free(gpus);
    free(tmp);
}

static struct fkey node_key(const struct node_summary *n, enum tui_fleet_sort k)
{
    struct fkey r = {false, 0};
    if (n->up == 0 && k != FSORT_HEALTH)
        return r;
    switch (k) {
    case FSORT_UTIL:
        if (metric_ok(&n->util_max))
            r = (struct fkey){true, n->util_max.value};
        break;
    case FSORT_MEM:
        if (metric_ok(&n->mem_used))
            r = (struct fkey){true, n->mem_used.value};
        break;
    case FSORT_IDLE:
        if (metric_ok(&n->idle))
            r = (struct fkey){true, n->idle.value};
        break;
    case FSORT_HEALTH:
        if (n->health != HEALTH_UNKNOWN)
            r = (struct fkey){true, (double)n->health};
        break;
    default:
        break;
    }
    return r;
}

void tui_fleet_order_nodes(const struct snapshot *s, enum tui_fleet_sort k, size_t *order)
{
    size_t n = s->nnodes;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    if (k == FSORT_NODE || n == 0)
        return;
    struct fgroup *g = malloc(n * sizeof(*g));
    if (!g)
        return;
    for (size_t i = 0; i < n; i++)
        g[i] = (struct fgroup){i, i + 1, node_key(&s->nodes[i], k)};
    /* a merge sort: stable, and n log n for a fleet of thousands */
    struct fgroup *tmp = malloc(n * sizeof(*tmp));
    if (tmp) {
        for (size_t width = 1; width < n; width *= 2) {
            for (size_t lo = 0; lo < n; lo += 2 * width) {
                size_t mid = lo + width < n ? lo + width : n;
                size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
                size_t a = lo, b = mid, w = lo;
                while (a < mid && b < hi)
                    tmp[w++] = key_before(g[b].key, g[a].key) ? g[b++] : g[a++];
                while (a < mid)
                    tmp[w++] = g[a++];
                while (b < hi)
                    tmp[w++] = g[b++];
            }
            memcpy(g, tmp, n * sizeof(*g));
        }
        free(tmp);
    }
    for (size_t i = 0; i < n; i++)
        order[i] = g[i].from;
    free(g);
}
