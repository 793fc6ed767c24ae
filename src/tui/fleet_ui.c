/*
 * fleet_ui.c — the fleet view's rules (fleet_ui.h): the totals of the
 * header and of the node rows, and the device filter.
 */
#include "tui/fleet_ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "health.h"

bool tui_fleet_idle(const struct device *d)
{
    if (d->node_down)
        return false;
    const struct metric *u = &d->m[M_GPU_UTIL];
    if (metric_ok(u))
        return u->value < 1.0;
    return metric_ok(&d->process_count) && d->process_count.value == 0;
}

static bool has_instances(const struct snapshot *s, size_t i)
{
    const struct device *d = &s->devices[i];
    return d->kind == DEV_GPU && i + 1 < s->ndevices && s->devices[i + 1].kind == DEV_MIG &&
           s->devices[i + 1].parent_pos == (int)i;
}

void tui_fleet_totals_range(const struct snapshot *s, size_t from, size_t to,
                            const unsigned char *shown, struct tui_fleet_totals *t)
{
    memset(t, 0, sizeof(*t));
    const char *last_node = NULL;
    for (size_t i = from; i < to && i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        if (shown && !shown[i])
            continue;
        if (!last_node || strcmp(last_node, d->node) != 0) {
            t->nodes++;
            t->nodes_down += d->node_down;
            last_node = d->node;
        }
        if (d->health == HEALTH_WARNING || d->health == HEALTH_ACTION)
            t->not_ok++;
        if (d->kind == DEV_GPU) {
            t->gpus++;
        } else {
            t->mig++;
            t->mig_idle += tui_fleet_idle(d);
        }
        if (!has_instances(s, i) && metric_ok(&d->m[M_MEM_USED]) &&
            metric_ok(&d->m[M_MEM_TOTAL])) {
            t->mem_used += d->m[M_MEM_USED].value;
            t->mem_total += d->m[M_MEM_TOTAL].value;
            t->mem_known = true;
        }
    }
}

bool tui_fleet_totals(const struct snapshot *s, struct tui_fleet_totals *t)
{
    memset(t, 0, sizeof(*t));
    if (!s || s->ndevices == 0 || !s->devices[0].node[0])
        return false;
    tui_fleet_totals_range(s, 0, s->ndevices, NULL, t);
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

void tui_fleet_summary(char *out, size_t len, const struct tui_fleet_totals *t, bool brief)
{
    char down[32] = "", mem[48] = "N/A", bad[48] = "";
    if (t->mem_known)
        tui_fleet_bytes(mem, sizeof(mem), t->mem_used, t->mem_total);
    if (brief) {
        if (t->nodes_down)
            snprintf(down, sizeof(down), " %zu down", t->nodes_down);
        if (t->not_ok)
            snprintf(bad, sizeof(bad), " %zu !", t->not_ok);
        snprintf(out, len, "%zu nodes%s %zu GPU %zu MIG %zu idle %s%s", t->nodes, down, t->gpus,
                 t->mig, t->mig_idle, mem, bad);
        return;
    }
    if (t->nodes_down)
        snprintf(down, sizeof(down), " (%zu down)", t->nodes_down);
    if (t->not_ok)
        snprintf(bad, sizeof(bad), "  %zu device%s not ok", t->not_ok, t->not_ok == 1 ? "" : "s");
    snprintf(out, len, "%zu node%s%s  %zu GPU%s  %zu MIG, %zu idle  VRAM %s%s", t->nodes,
             t->nodes == 1 ? "" : "s", down, t->gpus, t->gpus == 1 ? "" : "s", t->mig,
             t->mig_idle, mem, bad);
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
    struct fgroup *nodes = calloc(n, sizeof(*nodes));
    struct fgroup *gpus = calloc(n, sizeof(*gpus));
    struct fgroup *tmp = calloc(n, sizeof(*tmp));
    if (!nodes || !gpus || !tmp)
        goto out;
    size_t nn = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && strcmp(s->devices[j].node, s->devices[i].node) == 0)
            j++;
        nodes[nn++] = (struct fgroup){i, j, range_key(s, i, j, k)};
        i = j;
    }
    sort_groups(nodes, nn);
    size_t w = 0;
    for (size_t a = 0; a < nn; a++) {
        size_t ng = 0;
        for (size_t i = nodes[a].from; i < nodes[a].to;) {
            size_t j = i + 1;
            while (j < nodes[a].to && s->devices[j].kind == DEV_MIG &&
                   s->devices[j].parent_pos == (int)i)
                j++;
            gpus[ng++] = (struct fgroup){i, j, range_key(s, i, j, k)};
            i = j;
        }
        sort_groups(gpus, ng);
        for (size_t b = 0; b < ng; b++)
            w += order_gpu(s, gpus[b].from, gpus[b].to, k, order + w, tmp);
    }
out:
    free(nodes);
    free(gpus);
    free(tmp);
}
