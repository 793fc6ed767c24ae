/*
 * prom_nodes.c — a fleet's nodes from the node round (prom_nodes.h).
 */
#include "backend/prometheus/prom_nodes.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/health_rules.h"
#include "core/text.h"

/* What the answers say of a node: the figures of the queries' tags. */
enum ag {
    AG_UP,
    AG_LAST,
    AG_GPUS,
    AG_MIG,
    AG_IDLE,
    AG_UMAX,
    AG_UCOUNT,
    AG_USUM,
    AG_MUSED,
    AG_MTOTAL,
    AG_MKNOWN,
    AG_MNOTOK,
    AG_GNOTOK,
    AG_WORST,
    AG_PODS,
    AG_GACT,
    AG_GWARN,
    AG_MTCOUNT,
    AG_GVERDICT,
    AG_UMEAN,
    AG_COUNT
};

/* A series' tags (its "a" and "f" labels) to the figure it gives. */
static const struct {
    const char *a, *f;
    enum ag ag;
} tags[] = {
    {"up", "", AG_UP},          {"last", "", AG_LAST},       {"count", "gpus", AG_GPUS},
    {"count", "mig", AG_MIG},   {"count", "idle", AG_IDLE},  {"count", "util", AG_UCOUNT},
    {"count", "mused", AG_MKNOWN}, {"count", "mnotok", AG_MNOTOK},
    {"count", "gnotok", AG_GNOTOK}, {"count", "gact", AG_GACT}, {"count", "gwarn", AG_GWARN},
    {"sum", "util", AG_USUM},   {"sum", "mused", AG_MUSED},  {"sum", "mtotal", AG_MTOTAL},
    {"max", "util", AG_UMAX},   {"worst", "", AG_WORST},     {"pods", "", AG_PODS},
    {"count", "mtotal", AG_MTCOUNT}, {"count", "gverdict", AG_GVERDICT},
};

/* A summary's family (prom_node.c) to the figure it gives; the memory's
 * leaves count for the used and the total figure alike. */
static const struct {
    const char *name;
    enum ag ag, ag2;
} fams[] = {
    {"migmon_node_gpus", AG_GPUS, AG_GPUS},
    {"migmon_node_mig_devices", AG_MIG, AG_MIG},
    {"migmon_node_idle_devices", AG_IDLE, AG_IDLE},
    {"migmon_node_utilization_ratio_mean", AG_UMEAN, AG_UMEAN},
    {"migmon_node_utilization_ratio_max", AG_UMAX, AG_UMAX},
    {"migmon_node_memory_used_bytes", AG_MUSED, AG_MUSED},
    {"migmon_node_memory_total_bytes", AG_MTOTAL, AG_MTOTAL},
    {"migmon_node_memory_devices", AG_MKNOWN, AG_MTCOUNT},
    {"migmon_node_devices_not_ok", AG_GNOTOK, AG_GNOTOK},
    {"migmon_node_gpus_action", AG_GACT, AG_GACT},
    {"migmon_node_gpus_warning", AG_GWARN, AG_GWARN},
    {"migmon_node_gpus_verdict", AG_GVERDICT, AG_GVERDICT},
    {"migmon_node_pods", AG_PODS, AG_PODS},
};

struct node_raw {
    unsigned got; /* 1 << enum ag */
    double v[AG_COUNT];
    char host[64];  /* migmon_host_info's hostname */
    char dhost[64]; /* dcgm-exporter's Hostname (or hostname) */
    bool named, dnamed;
    bool aggs, daggs; /* aggregates came from our series, from dcgm-exporter's */
    bool summary;     /* its exporter gives migmon_node_* (PQ_SUMMARY) */
};

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void nodes_init(struct node_table *t)
{
    memset(t, 0, sizeof(*t));
}

void nodes_free(struct node_table *t)
{
    free(t->v);
    free(t->raw);
    free(t->slot);
    memset(t, 0, sizeof(*t));
}

static size_t slot_of(const struct node_table *t, const char *inst)
{
    size_t at = hash(inst) % t->nslots;
    while (t->slot[at] != SIZE_MAX && strcmp(t->v[t->slot[at]].instance, inst) != 0)
        at = (at + 1) % t->nslots;
    return at;
}

static bool rehash(struct node_table *t, size_t nslots)
{
    size_t *s = malloc(nslots * sizeof(*s));
    if (!s)
        return false;
    free(t->slot);
    t->slot = s;
    t->nslots = nslots;
    for (size_t i = 0; i < nslots; i++)
        s[i] = SIZE_MAX;
    for (size_t i = 0; i < t->n; i++)
        s[slot_of(t, t->v[i].instance)] = i;
    return true;
}

struct node_summary *nodes_find(const struct node_table *t, const char *instance)
{
    if (!t->nslots)
        return NULL;
    char inst[sizeof(t->v[0].instance)];
    snprintf(inst, sizeof(inst), "%s", instance);
    size_t at = slot_of(t, inst);
    return t->slot[at] == SIZE_MAX ? NULL : &t->v[t->slot[at]];
}

/* The node of instance, added when new; -1 past the cap or out of memory. */
static long node_of(struct node_table *t, const char *instance)
{
    char inst[sizeof(t->v[0].instance)];
    snprintf(inst, sizeof(inst), "%s", instance); /* a longer label is one node */
    if (t->nslots) {
        size_t at = slot_of(t, inst);
        if (t->slot[at] != SIZE_MAX)
            return (long)t->slot[at];
    }
    if (t->n == FLEET_NODES_MAX) {
        t->full = true;
        return -1;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        struct node_summary *v = realloc(t->v, cap * sizeof(*v));
        if (v)
            t->v = v;
        struct node_raw *r = v ? realloc(t->raw, cap * sizeof(*r)) : NULL;
        if (r)
            t->raw = r;
        if (!r || !rehash(t, cap * 2)) {
            t->nomem = true;
            return -1;
        }
        t->cap = cap;
    }
    size_t i = t->n++;
    struct node_summary *n = &t->v[i];
    memset(n, 0, sizeof(*n));
    memset(&t->raw[i], 0, sizeof(t->raw[i]));
    snprintf(n->instance, sizeof(n->instance), "%s", inst);
    n->up = -1;
    t->slot[slot_of(t, n->instance)] = i;
    return (long)i;
}

/* A PQ_SUMMARY series: a summary's figure (its family by name), or under
 * a filter only that the node gives summaries (no name). */
static int read_summary(struct node_table *t, const struct prom_item *it)
{
    const char *name = prom_item_label(it, "__name__");
    int ag = -1, ag2 = -1;
    for (size_t k = 0; k < sizeof(fams) / sizeof(fams[0]) && ag < 0; k++)
        if (strcmp(name, fams[k].name) == 0) {
            ag = (int)fams[k].ag;
            ag2 = (int)fams[k].ag2;
        }
    if (name[0] && ag < 0)
        return 0; /* a family of a later version */
    long i = node_of(t, prom_item_label(it, "instance"));
    if (i < 0)
        return 0;
    struct node_raw *r = &t->raw[i];
    r->summary = true;
    double v;
    if (ag < 0 || !prom_item_value(it, &v))
        return 0;
    if (r->daggs) { /* ours win over dcgm-exporter's */
        r->got &= (1u << AG_UP) | (1u << AG_LAST);
        r->daggs = false;
    }
    r->got |= 1u << ag | 1u << ag2;
    r->v[ag] = r->v[ag2] = v;
    r->aggs = true;
    return 0;
}

int nodes_read(struct node_table *t, enum promq_node q, const struct prom_item *it)
{
    if (q == PQ_SUMMARY)
        return read_summary(t, it);
    const char *a = prom_item_label(it, "a"), *f = prom_item_label(it, "f");
    int ag = -1;
    for (size_t k = 0; k < sizeof(tags) / sizeof(tags[0]) && ag < 0; k++)
        if (strcmp(a, tags[k].a) == 0 && strcmp(f, tags[k].f) == 0)
            ag = (int)tags[k].ag;
    bool targets = q == PQ_TARGETS;
    bool name = targets && strcmp(a, "name") == 0;
    bool dname = targets && strcmp(a, "dname") == 0;
    if (ag < 0 && !name && !dname)
        return 0;
    if (!name && !dname && targets != (ag == AG_UP || ag == AG_LAST))
        return 0; /* a tag another query gives */
    long i = node_of(t, prom_item_label(it, "instance"));
    if (i < 0)
        return 0;
    struct node_raw *r = &t->raw[i];
    if (name) {
        snprintf(r->host, sizeof(r->host), "%s", prom_item_label(it, "hostname"));
        r->named = r->host[0] != '\0';
        return 0;
    }
    if (dname) {
        const char *h = prom_item_label(it, "Hostname");
        snprintf(r->dhost, sizeof(r->dhost), "%s", h[0] ? h : prom_item_label(it, "hostname"));
        r->dnamed = r->dhost[0] != '\0';
        return 0;
    }
    bool dcgm = q == PQ_DCGM_LEAVES || q == PQ_DCGM_GPUS;
    if (dcgm && r->aggs)
        return 0; /* our series were read for it: its DCGM_FI_* repeat them */
    if (!targets && !dcgm && r->daggs) { /* ours win over dcgm-exporter's */
        r->got &= (1u << AG_UP) | (1u << AG_LAST);
        r->daggs = false;
    }
    double v;
    if (!prom_item_value(it, &v))
        return 0;
    r->got |= 1u << ag;
    r->v[ag] = v;
    if (!targets) {
        if (dcgm)
            r->daggs = true;
        else
            r->aggs = true;
    }
    return 0;
}

size_t nodes_legacy(const struct node_table *t, const char **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n && n < max; i++)
        if (t->raw && !t->raw[i].summary)
            out[n++] = t->v[i].instance;
    return n;
}

/* Whether text has word (n bytes), ignoring case. */
static bool has_word(const char *text, const char *w, size_t n)
{
    for (const char *p = text; *p; p++)
        if (strncasecmp(p, w, n) == 0)
            return true;
    return false;
}

size_t nodes_with_word(const struct node_table *t, const char *word, const char **out,
                       size_t max)
{
    size_t n = 0, wn = strlen(word);
    for (size_t i = 0; i < t->n && n < max && t->raw && wn; i++) {
        const struct node_raw *r = &t->raw[i];
        if (has_word(t->v[i].instance, word, wn) || has_word(r->host, word, wn) ||
            has_word(r->dhost, word, wn))
            out[n++] = t->v[i].instance;
    }
    return n;
}

size_t nodes_down(const struct node_table *t, const char **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n && n < max; i++)
        if (t->raw && (t->raw[i].got & (1u << AG_UP)) && t->raw[i].v[AG_UP] != 1)
            out[n++] = t->v[i].instance;
    return n;
}

/* ---- finishing ---- */

static const char NEVER[] = "never seen: no migmon_* or DCGM_FI_* series from this target in "
                            "the last 10 minutes";
static const char DOWN[] = "the node's target is down (up == 0)";

static struct metric count_or(const struct node_raw *r, enum ag a, const char *why_failed,
                              struct metric dflt)
{
    if (r->got & (1u << a))
        return (struct metric){.value = r->v[a], .src = MSRC_DIRECT};
    if (why_failed)
        return metric_none(why_failed);
    return dflt;
}

static struct metric val(const struct node_raw *r, enum ag a, double scale, const char *why)
{
    if (r->got & (1u << a))
        return (struct metric){.value = r->v[a] * scale, .src = MSRC_DIRECT};
    return metric_none(why);
}

static bool got(const struct node_raw *r, enum ag a)
{
    return (r->got & (1u << a)) != 0;
}

static void fill(struct node_summary *n, const struct node_raw *r, double now,
                 const char *const why[PQ_COUNT], bool filtered)
{
    bool dcgm = !r->aggs && (r->daggs || (r->dnamed && !r->named));
    n->dcgm = dcgm;
    n->up = got(r, AG_UP) ? (r->v[AG_UP] == 1 ? 1 : 0) : -1;
    double last = got(r, AG_LAST) ? r->v[AG_LAST] : 0;
    n->seen = r->named || r->dnamed || last > 0 || r->aggs || r->daggs;
    n->down_for_s = n->up == 0 && last > 0 ? now - last : -1;
    n->health = HEALTH_UNKNOWN;
    /* without a filter a node with summaries has its figures from them */
    bool own = r->summary && !filtered;
    const char *lwhy = why[own ? PQ_SUMMARY : dcgm ? PQ_DCGM_LEAVES : PQ_LEAVES];
    const char *gwhy = why[own ? PQ_SUMMARY : dcgm ? PQ_DCGM_GPUS : PQ_GPUS];
    struct metric zero = {.value = 0, .src = MSRC_DIRECT};
    struct metric *all[] = {&n->gpus,      &n->mig,         &n->idle,
                            &n->not_ok,    &n->pods,        &n->util_max,
                            &n->util_mean, &n->mem_used,    &n->mem_total,
                            &n->mem_devices, &n->gpus_action, &n->gpus_warning};
    if (!n->seen) {
        for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++)
            *all[k] = metric_none(NEVER);
        return;
    }
    n->gpus = count_or(r, AG_GPUS, gwhy, zero);
    n->mig = count_or(r, AG_MIG, lwhy, zero);
    if (n->up == 0) {
        for (size_t k = 2; k < sizeof(all) / sizeof(all[0]); k++)
            *all[k] = metric_none(DOWN);
        return;
    }
    if (lwhy) {
        n->idle = n->util_max = n->util_mean = n->mem_used = n->mem_total = n->mem_devices =
            metric_none(lwhy);
    } else {
        n->util_max = val(r, AG_UMAX, 100, "no utilisation read from its devices");
        if (got(r, AG_UMEAN))
            n->util_mean = (struct metric){.value = 100 * r->v[AG_UMEAN], .src = MSRC_DIRECT};
        else if (got(r, AG_USUM) && got(r, AG_UCOUNT) && r->v[AG_UCOUNT] > 0)
            n->util_mean = (struct metric){.value = 100 * r->v[AG_USUM] / r->v[AG_UCOUNT],
                                           .src = MSRC_DIRECT};
        else
            n->util_mean = metric_none("no utilisation read from its devices");
        if (got(r, AG_IDLE))
            n->idle = count_or(r, AG_IDLE, NULL, zero);
        else if (metric_ok(&n->util_max))
            n->idle = zero;
        else
            n->idle = metric_none("no utilisation or process count read from its devices");
        n->mem_used = val(r, AG_MUSED, 1, "no VRAM read from its devices");
        n->mem_total = val(r, AG_MTOTAL, 1, "no VRAM read from its devices");
        n->mem_devices = count_or(r, AG_MKNOWN, NULL, zero);
        /* used and total of the same leaves, or no figure: a sum of the
         * used of some and the totals of others would be no share */
        double used_n = got(r, AG_MKNOWN) ? r->v[AG_MKNOWN] : 0;
        double total_n = got(r, AG_MTCOUNT) ? r->v[AG_MTCOUNT] : used_n;
        if (used_n != total_n)
            n->mem_used = n->mem_total = metric_none(
                "the VRAM in use of some devices, or their total, was not read");
    }
    n->pods = gwhy ? metric_none(gwhy) : val(r, AG_PODS, 1, "no pod labels on its devices' series");
    if (dcgm) {
        n->not_ok = n->gpus_action = n->gpus_warning =
            metric_none("dcgm-exporter gives no health verdict");
        return;
    }
    bool verdict = (got(r, AG_GVERDICT) && r->v[AG_GVERDICT] > 0) || got(r, AG_GACT) ||
                   got(r, AG_GWARN);
    if (gwhy || lwhy || !verdict) {
        n->not_ok = n->gpus_action = n->gpus_warning =
            metric_none(gwhy ? gwhy : lwhy ? lwhy : "no health verdict read from its devices");
        return;
    }
    n->health = got(r, AG_GACT) && r->v[AG_GACT] > 0     ? HEALTH_ACTION
                : got(r, AG_GWARN) && r->v[AG_GWARN] > 0 ? HEALTH_WARNING
                                                          : HEALTH_OK;
    n->not_ok = (struct metric){.value = (got(r, AG_GNOTOK) ? r->v[AG_GNOTOK] : 0) +
                                         (got(r, AG_MNOTOK) ? r->v[AG_MNOTOK] : 0),
                                .src = MSRC_DIRECT};
    n->gpus_action = count_or(r, AG_GACT, NULL, zero);
    n->gpus_warning = count_or(r, AG_GWARN, NULL, zero);
}

static int by_name(const void *a, const void *b)
{
    const struct node_summary *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->instance, y->instance);
}

static int by_name_only(const void *a, const void *b)
{
    const struct node_summary *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

/* Every word of filter in text, ignoring case. */
static bool words_in(const char *text, const char *filter)
{
    const char *p = filter;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (!n)
            break;
        bool found = false;
        for (const char *t = text; *t && !found; t++)
            found = strncasecmp(t, p, n) == 0;
        if (!found)
            return false;
        p += n;
    }
    return true;
}

void nodes_finish(struct node_table *t, double now, const char *const why[PQ_COUNT],
                  const char *filter, const char **why_out)
{
    *why_out = t->full ? "the fleet has more than 20000 nodes: the rest are not listed "
                         "(--prometheus-match limits the view to part of it)"
                       : NULL;
    bool filtered = filter && filter[0];
    size_t keep = 0;
    for (size_t i = 0; i < t->n; i++) {
        struct node_summary *n = &t->v[i];
        const struct node_raw *r = &t->raw[i];
        const char *host = r->named ? r->host : r->dnamed ? r->dhost : "";
        snprintf(n->name, sizeof(n->name), "%s", host);
        text_clean(n->name, sizeof(n->name));
        fill(n, r, now, why, filtered);
        n->devs_read = false;
        n->dev_first = n->ndev = 0;
        n->devs_why = "not asked for";
        if (filtered) {
            bool matched = (metric_ok(&n->gpus) && n->gpus.value > 0) ||
                           (metric_ok(&n->mig) && n->mig.value > 0);
            if (!n->seen)
                matched = words_in(n->instance, filter);
            if (!matched)
                continue;
        }
        if (keep != i)
            t->v[keep] = *n;
        keep++;
    }
    t->n = keep;
    /* a name two nodes share, or none, is the instance */
    struct node_summary **ord = malloc((t->n ? t->n : 1) * sizeof(*ord));
    if (ord) {
        for (size_t i = 0; i < t->n; i++)
            ord[i] = &t->v[i];
        qsort(ord, t->n, sizeof(*ord), by_name_only);
        /* marked after the whole run of equal names is seen */
        for (size_t i = 0; i < t->n;) {
            size_t j = i + 1;
            while (j < t->n && !strcmp(ord[j]->name, ord[i]->name))
                j++;
            if (j - i > 1 || !ord[i]->name[0])
                for (size_t k = i; k < j; k++)
                    ord[k]->name[0] = '\x01'; /* named below */
            i = j;
        }
        for (size_t i = 0; i < t->n; i++)
            if (t->v[i].name[0] == '\x01') {
                snprintf(t->v[i].name, sizeof(t->v[i].name), "%.63s", t->v[i].instance);
                text_clean(t->v[i].name, sizeof(t->v[i].name));
            }
        free(ord);
    } else {
        t->nomem = true;
    }
    if (t->n > 1) /* no table at all when no node */
        qsort(t->v, t->n, sizeof(*t->v), by_name);
    free(t->raw); /* in the old order: no longer wanted */
    t->raw = NULL;
    if (t->nslots && !rehash(t, t->nslots)) {
        free(t->slot);
        t->slot = NULL;
        t->nslots = 0;
        t->nomem = true;
    }
    if (t->nomem && !*why_out)
        *why_out = "out of memory for the fleet's nodes";
}
