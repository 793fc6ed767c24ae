#include "backend/prometheus/prom_fleet.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/prometheus/prom_fleet_int.h"
#include "core/health_rules.h"
#include "core/text.h"

/* ---- building ---- */

/* The slot of instance in the nodes' table: its node's, or the free one
 * where it goes. */
static size_t node_slot(const struct build *b, const char *instance)
{
    size_t at = fleet_hash(instance) % b->nnslots;
    while (b->nslot[at] != SIZE_MAX && strcmp(b->f->nodes[b->nslot[at]].instance, instance) != 0)
        at = (at + 1) % b->nnslots;
    return at;
}

/* The nodes grown to cap, the table rebuilt over 2 * cap slots. */
static bool nodes_grow(struct build *b, size_t cap)
{
    struct fleet *f = b->f;
    struct fleet_node *n = realloc(f->nodes, cap * sizeof(*n));
    if (n)
        f->nodes = n;
    bool *m = n ? realloc(b->nmigmon, cap * sizeof(*m)) : NULL;
    if (m)
        b->nmigmon = m;
    size_t *s = m ? malloc(2 * cap * sizeof(*s)) : NULL;
    if (!s) {
        b->nomem = true;
        return false;
    }
    b->ncap = cap;
    free(b->nslot);
    b->nslot = s;
    b->nnslots = 2 * cap;
    for (size_t i = 0; i < b->nnslots; i++)
        s[i] = SIZE_MAX;
    for (size_t i = 0; i < f->nnodes; i++)
        s[node_slot(b, f->nodes[i].instance)] = i;
    return true;
}

/* The node of a target (its instance label): a registered one, else -1
 * (a series of a node not asked for is not read). */
static int node_of(struct build *b, const char *label)
{
    char instance[sizeof(b->f->nodes[0].instance)];
    snprintf(instance, sizeof(instance), "%s", label);
    if (!b->nnslots)
        return -1;
    size_t at = node_slot(b, instance);
    return b->nslot[at] != SIZE_MAX ? (int)b->nslot[at] : -1;
}

/* A node registered (fleet_build_node), added when new. */
static int node_add(struct build *b, const char *label)
{
    struct fleet *f = b->f;
    char instance[sizeof(f->nodes[0].instance)];
    snprintf(instance, sizeof(instance), "%s", label);
    int have = node_of(b, instance);
    if (have >= 0)
        return have;
    if (f->nnodes == b->ncap && !nodes_grow(b, b->ncap ? b->ncap * 2 : 16))
        return -1;
    size_t i = f->nnodes++;
    struct fleet_node *n = &f->nodes[i];
    memset(n, 0, sizeof(*n));
    snprintf(n->instance, sizeof(n->instance), "%s", instance);
    n->up = -1;
    b->nmigmon[i] = false;
    b->nslot[node_slot(b, n->instance)] = i;
    return (int)i;
}

static void rehash(struct build *b)
{
    size_t want = b->dcap * 2;
    size_t *s = malloc(want * sizeof(*s));
    if (!s) {
        b->nomem = true;
        return;
    }
    for (size_t i = 0; i < want; i++)
        s[i] = SIZE_MAX;
    for (size_t d = 0; d < b->f->ndevs; d++) {
        size_t at = fleet_hash(b->keys[d]) % want;
        while (s[at] != SIZE_MAX)
            at = (at + 1) % want;
        s[at] = d;
    }
    free(b->slot);
    b->slot = s;
    b->nslots = want;
}

static void init_device(struct device *d)
{
    memset(d, 0, sizeof(*d));
    d->mig_index = -1;
    d->parent_pos = -1;
    d->cc_major = d->cc_minor = -1;
    d->gi_id = d->ci_id = -1;
    d->slices = d->slices_total = -1;
    d->node_down_for_s = -1;
    for (int k = 0; k < M_COUNT; k++)
        d->m[k] = metric_none("not read from Prometheus");
    d->process_count = metric_none("not read from Prometheus");
}

/* The device of key, added (initialised, on node) when new. */
static struct device *add(struct build *b, const char *key, int node)
{
    struct device *d = fleet_find(b, key);
    if (d || b->nomem || node < 0)
        return d;
    struct fleet *f = b->f;
    if (f->ndevs >= b->max_devices) {
        f->capped++;
        return NULL;
    }
    if (f->ndevs == b->dcap) {
        size_t cap = b->dcap ? b->dcap * 2 : 64;
        struct device *nd = realloc(f->devs, cap * sizeof(*nd));
        int *nn = nd ? realloc(b->dnode, cap * sizeof(*nn)) : NULL;
        if (nd)
            f->devs = nd;
        if (nn)
            b->dnode = nn;
        unsigned *np = nn ? realloc(b->dnprocs, cap * sizeof(*np)) : NULL;
        if (np)
            b->dnprocs = np;
        char(*nk)[FLEET_KEY_LEN] = np ? realloc(b->keys, cap * sizeof(*nk)) : NULL;
        if (!nk) {
            b->nomem = true;
            return NULL;
        }
        b->keys = nk;
        b->dcap = cap;
        rehash(b);
        if (b->nomem)
            return NULL;
    }
    size_t i = f->ndevs++;
    d = &f->devs[i];
    init_device(d);
    b->dnode[i] = node;
    b->dnprocs[i] = 0;
    if (key[0] != 'd') /* one of our migmon_* devices */
        b->nmigmon[node] = true;
    snprintf(b->keys[i], sizeof(b->keys[i]), "%s", key);
    size_t at = fleet_hash(key) % b->nslots;
    while (b->slot[at] != SIZE_MAX)
        at = (at + 1) % b->nslots;
    b->slot[at] = i;
    return d;
}

static int int_or(const char *s, int dflt)
{
    char *end;
    long v = strtol(s, &end, 10);
    return *s && !*end && v >= 0 && v < 1000000 ? (int)v : dflt;
}

static void set_identity(struct device *d, const struct prom_item *it, bool mig)
{
    d->kind = mig ? DEV_MIG : DEV_GPU;
    d->index = int_or(fleet_lab(it, "gpu"), -1);
    snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "%s", fleet_lab(it, "pci_bus_id"));
    snprintf(d->serial, sizeof(d->serial), "%s", fleet_lab(it, "serial"));
    snprintf(d->arch, sizeof(d->arch), "%s", fleet_lab(it, "architecture"));
    if (sscanf(fleet_lab(it, "compute_capability"), "%d.%d", &d->cc_major, &d->cc_minor) != 2)
        d->cc_major = d->cc_minor = -1;
    d->vendor = strcmp(fleet_lab(it, "vendor"), "amd") == 0 ? VENDOR_AMD : VENDOR_NVIDIA;
    if (mig && d->vendor == VENDOR_AMD) {
        /* an amdgpu compute partition, as the amdgpu backend gives it: its
         * GPU's name, the partition's index as its GPU instance, one slice */
        snprintf(d->uuid, sizeof(d->uuid), "%s", fleet_lab(it, "mig_uuid"));
        snprintf(d->parent_uuid, sizeof(d->parent_uuid), "%s", fleet_lab(it, "uuid"));
        snprintf(d->profile, sizeof(d->profile), "%s", fleet_lab(it, "mig_profile"));
        snprintf(d->name, sizeof(d->name), "%s", fleet_lab(it, "model"));
        d->gi_id = int_or(fleet_lab(it, "partition_id"), -1);
        d->ci_id = -1;
        d->slices = 1;
        if (!d->uuid[0])
            d->uuid_why = "not in Prometheus";
    } else if (mig) {
        snprintf(d->uuid, sizeof(d->uuid), "%s", fleet_lab(it, "mig_uuid"));
        snprintf(d->parent_uuid, sizeof(d->parent_uuid), "%s", fleet_lab(it, "uuid"));
        snprintf(d->profile, sizeof(d->profile), "%s", fleet_lab(it, "mig_profile"));
        snprintf(d->name, sizeof(d->name), "%.60s MIG %.30s", fleet_lab(it, "model"), d->profile);
        d->gi_id = int_or(fleet_lab(it, "gpu_instance_id"), -1);
        d->ci_id = int_or(fleet_lab(it, "compute_instance_id"), -1);
        d->mig_index = int_or(fleet_lab(it, "mig_index"), -1); /* its exporter's own slot */
        if (!d->uuid[0])
            d->uuid_why = "not in Prometheus";
    } else {
        snprintf(d->uuid, sizeof(d->uuid), "%s", fleet_lab(it, "uuid"));
        snprintf(d->name, sizeof(d->name), "%s", fleet_lab(it, "model"));
        d->mig_enabled = strcmp(fleet_lab(it, "mig_mode"), "enabled") == 0;
    }
}

static void read_ident(struct build *b, const struct prom_item *it)
{
    char key[FLEET_KEY_LEN];
    const char *name = fleet_lab(it, "__name__"), *inst = fleet_lab(it, "instance");
    int n = node_of(b, inst);
    if (n < 0)
        return;
    struct fleet_node *node = &b->f->nodes[n];
    double v;
    if (strcmp(name, "migmon_last_sample_timestamp_seconds") == 0) {
        if (fleet_val(it, &v) && node->last_sample <= 0)
            node->last_sample = v;
    } else if (strcmp(name, "migmon_device_info") == 0) {
        fleet_key_gpu(key, sizeof(key), inst, fleet_lab(it, "uuid"));
        struct device *d = add(b, key, n);
        if (d)
            set_identity(d, it, false);
    } else if (strcmp(name, "migmon_mig_info") == 0) {
        /* its GPU, from the instance's labels until migmon_device_info
         * says more: an instance is never listed without its GPU */
        fleet_key_gpu(key, sizeof(key), inst, fleet_lab(it, "uuid"));
        struct device *g = add(b, key, n);
        if (g && !g->uuid[0]) {
            set_identity(g, it, false);
            g->mig_enabled = true;
        }
        if (!g)
            return;
        fleet_key_mig(key, sizeof(key), it);
        struct device *d = add(b, key, n);
        if (d)
            set_identity(d, it, true);
    }
}

/* A migmon_* family's suffix, the metric it fills and its scale. */
static const struct {
    const char *suffix;
    enum metric_id id;
    double scale;
} families[] = {
    {"utilization_ratio", M_GPU_UTIL, 100},       {"memory_utilization_ratio", M_MEM_UTIL, 100},
    {"sm_utilization_ratio", M_SM_UTIL, 100},     {"memory_used_bytes", M_MEM_USED, 1},
    {"memory_total_bytes", M_MEM_TOTAL, 1},       {"temperature_celsius", M_TEMP, 1},
    {"power_watts", M_POWER, 1},                  {"power_limit_watts", M_POWER_LIMIT, 1},
    {"energy_joules_total", M_ENERGY, 1},         {"graphics_clock_hertz", M_CLK_GFX, 1e-6},
    {"sm_clock_hertz", M_CLK_SM, 1e-6},           {"memory_clock_hertz", M_CLK_MEM, 1e-6},
    {"fan_speed_ratio", M_FAN, 100},              {"performance_state", M_PSTATE, 1},
};

/* The pod a series labels its device with (the values' queries keep the
 * labels; the first series with a pod names it). */
static void read_pod(struct device *d, const struct prom_item *it)
{
    const char *pod = fleet_lab(it, "pod");
    if (!pod[0] || d->pod.name[0])
        return;
    /* cut to what Kubernetes allows, on a character boundary, and cleaned */
    text_take(d->pod.name, sizeof(d->pod.name), pod);
    text_take(d->pod.ns, sizeof(d->pod.ns), fleet_lab(it, "namespace"));
    text_take(d->pod.container, sizeof(d->pod.container), fleet_lab(it, "container"));
}

static void read_values(struct build *b, const struct prom_item *it)
{
    char key[FLEET_KEY_LEN];
    const char *name = fleet_lab(it, "__name__");
    bool mig = strncmp(name, "migmon_mig_", 11) == 0;
    if (!mig && strncmp(name, "migmon_gpu_", 11) != 0)
        return;
    fleet_key_of(key, sizeof(key), it, mig);
    struct device *d = fleet_find(b, key);
    double v;
    if (!d || !fleet_val(it, &v))
        return;
    read_pod(d, it);
    const char *suf = name + 11;
    enum metric_source src = fleet_source_of(fleet_lab(it, "source"));
    if (!strcmp(suf, "health")) {
        const char *st = fleet_lab(it, "state");
        if (v == 1)
            d->health = !strcmp(st, "ok")        ? HEALTH_OK
                        : !strcmp(st, "warning") ? HEALTH_WARNING
                        : !strcmp(st, "action")  ? HEALTH_ACTION
                                                 : HEALTH_UNKNOWN;
    } else if (!strcmp(suf, "lost")) {
        d->lost = v == 1;
    } else if (!strcmp(suf, "sampling_stalled")) {
        if (v == 1)
            d->stall = "its exporter says: sampling stalled in a driver call";
    } else if (!strcmp(suf, "processes")) {
        d->process_count = (struct metric){.value = v, .src = src};
    } else {
        for (size_t k = 0; k < sizeof(families) / sizeof(families[0]); k++)
            if (strcmp(suf, families[k].suffix) == 0) {
                d->m[families[k].id] = (struct metric){.value = v * families[k].scale, .src = src};
                break;
            }
    }
}

/* ---- dcgm-exporter ---- */

/* The node has our own exporter's series: its DCGM_FI_* (--compat dcgm)
 * are the same values again, and are not read. */
static bool has_migmon(struct build *b, int node)
{
    return b->nmigmon[node];
}

static void dcgm_keys(const struct prom_item *it, char *gk, char *mk, size_t n)
{
    const char *inst = fleet_lab(it, "instance"), *uuid = fleet_lab(it, "UUID");
    snprintf(gk, n, "d\x1fg\x1f%.100s\x1f%.100s", inst, uuid);
    snprintf(mk, n, "d\x1fm\x1f%.100s\x1f%.96s\x1f%.10s", inst, uuid, fleet_lab(it, "GPU_I_ID"));
}

static void read_dcgm_ident(struct build *b, const struct prom_item *it)
{
    char gk[FLEET_KEY_LEN], mk[FLEET_KEY_LEN];
    int n = node_of(b, fleet_lab(it, "instance"));
    if (n < 0 || has_migmon(b, n))
        return;
    dcgm_keys(it, gk, mk, sizeof(gk));
    struct device *g = add(b, gk, n);
    if (!g)
        return;
    g->kind = DEV_GPU;
    g->index = int_or(fleet_lab(it, "gpu"), -1);
    snprintf(g->uuid, sizeof(g->uuid), "%s", fleet_lab(it, "UUID"));
    snprintf(g->name, sizeof(g->name), "%s", fleet_lab(it, "modelName"));
    snprintf(g->pci_bus_id, sizeof(g->pci_bus_id), "%s", fleet_lab(it, "pci_bus_id"));
    if (!fleet_lab(it, "GPU_I_ID")[0])
        return;
    g->mig_enabled = true;
    struct device *m = add(b, mk, n);
    if (!m)
        return;
    g = fleet_find(b, gk); /* add may have moved the array */
    m->kind = DEV_MIG;
    m->index = g->index;
    m->gi_id = int_or(fleet_lab(it, "GPU_I_ID"), -1);
    snprintf(m->parent_uuid, sizeof(m->parent_uuid), "%s", g->uuid);
    snprintf(m->profile, sizeof(m->profile), "%s", fleet_lab(it, "GPU_I_PROFILE"));
    snprintf(m->name, sizeof(m->name), "%.60s MIG %.30s", g->name, m->profile);
    snprintf(m->pci_bus_id, sizeof(m->pci_bus_id), "%s", g->pci_bus_id);
    m->uuid_why = "dcgm-exporter does not label MIG UUIDs";
}

static void put(struct device *d, enum metric_id id, double v, enum metric_source src)
{
    d->m[id] = (struct metric){.value = v, .src = src};
}

/* The total is used + free + reserved: free and reserved are summed
 * here, used is added when the fleet is finished (dcgm_totals). */
static void read_dcgm_values(struct build *b, const struct prom_item *it)
{
    char gk[FLEET_KEY_LEN], mk[FLEET_KEY_LEN];
    const char *name = fleet_lab(it, "__name__");
    dcgm_keys(it, gk, mk, sizeof(gk));
    bool mig = fleet_lab(it, "GPU_I_ID")[0] != '\0';
    struct device *g = fleet_find(b, gk), *d = mig ? fleet_find(b, mk) : g;
    double v;
    if (!d || !g || !fleet_val(it, &v))
        return;
    read_pod(d, it);
    if (!strcmp(name, "DCGM_FI_DEV_FB_USED")) {
        put(d, M_MEM_USED, v * 1048576.0, MSRC_DIRECT);
    } else if (!strcmp(name, "DCGM_FI_DEV_FB_FREE") ||
               !strcmp(name, "DCGM_FI_DEV_FB_RESERVED")) {
        /* summed into the total; used is added below */
        bool was = metric_ok(&d->m[M_MEM_TOTAL]);
        put(d, M_MEM_TOTAL, (was ? d->m[M_MEM_TOTAL].value : 0) + v * 1048576.0,
            MSRC_DIRECT);
        if (!strcmp(name, "DCGM_FI_DEV_FB_RESERVED"))
            put(d, M_MEM_RESERVED, v * 1048576.0, MSRC_DIRECT);
    } else if (!strcmp(name, "DCGM_FI_DEV_GPU_TEMP")) {
        put(g, M_TEMP, v, MSRC_DIRECT);
    } else if (!strcmp(name, "DCGM_FI_DEV_POWER_USAGE")) {
        put(g, M_POWER, v, MSRC_DIRECT);
    } else if (!strcmp(name, "DCGM_FI_DEV_SM_CLOCK")) {
        put(g, M_CLK_SM, v, MSRC_DIRECT);
    } else if (!strcmp(name, "DCGM_FI_DEV_MEM_CLOCK")) {
        put(g, M_CLK_MEM, v, MSRC_DIRECT);
    } else if (!strcmp(name, "DCGM_FI_DEV_GPU_UTIL")) {
        if (!metric_ok(&d->m[M_GPU_UTIL]))
            put(d, M_GPU_UTIL, v, MSRC_DIRECT);
    } else if (!strcmp(name, "DCGM_FI_DEV_MEM_COPY_UTIL")) {
        if (!metric_ok(&d->m[M_MEM_UTIL]))
            put(d, M_MEM_UTIL, v, MSRC_DIRECT);
    } else if (!strcmp(name, "DCGM_FI_PROF_GR_ENGINE_ACTIVE")) {
        put(d, M_GPU_UTIL, v * 100, MSRC_DCGM); /* the profiling field wins */
    } else if (!strcmp(name, "DCGM_FI_PROF_SM_ACTIVE")) {
        put(d, M_SM_UTIL, v * 100, MSRC_DCGM);
    } else if (!strcmp(name, "DCGM_FI_PROF_DRAM_ACTIVE")) {
        put(d, M_MEM_UTIL, v * 100, MSRC_DCGM);
    }
}

/* M_MEM_TOTAL holds free + reserved so far: with used it is the total,
 * without used it is no total. */
static void dcgm_totals(struct build *b)
{
    for (size_t k = 0; k < b->f->ndevs; k++) {
        struct device *d = &b->f->devs[k];
        if (b->keys[k][0] != 'd' || !metric_ok(&d->m[M_MEM_TOTAL]))
            continue;
        if (metric_ok(&d->m[M_MEM_USED]))
            d->m[M_MEM_TOTAL].value += d->m[M_MEM_USED].value;
        else
            d->m[M_MEM_TOTAL] = metric_none("DCGM_FI_DEV_FB_USED not in Prometheus");
    }
}

/* ---- ordering ---- */

struct order {
    const struct fleet *f;
    const int *dnode;
};
static struct order sort_ctx; /* qsort has no argument; fleet_build is not reentrant */

static int cmp_dev(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    const struct device *da = &sort_ctx.f->devs[a], *db = &sort_ctx.f->devs[b];
    int c = strcmp(sort_ctx.f->nodes[sort_ctx.dnode[a]].name,
                   sort_ctx.f->nodes[sort_ctx.dnode[b]].name);
    if (c)
        return c;
    if (sort_ctx.dnode[a] != sort_ctx.dnode[b])
        return sort_ctx.dnode[a] < sort_ctx.dnode[b] ? -1 : 1;
    if (da->index != db->index)
        return da->index < db->index ? -1 : 1;
    const char *ua = da->kind == DEV_MIG ? da->parent_uuid : da->uuid;
    const char *ub = db->kind == DEV_MIG ? db->parent_uuid : db->uuid;
    if ((c = strcmp(ua, ub)))
        return c;
    if (da->kind != db->kind)
        return da->kind == DEV_GPU ? -1 : 1;
    if (da->gi_id != db->gi_id)
        return da->gi_id < db->gi_id ? -1 : 1;
    return da->ci_id < db->ci_id ? -1 : da->ci_id > db->ci_id;
}

/* The labels are other hosts' text: made safe to show (text.h). */
static void clean_strings(struct device *d)
{
    text_clean(d->name, sizeof(d->name));
    text_clean(d->uuid, sizeof(d->uuid));
    text_clean(d->parent_uuid, sizeof(d->parent_uuid));
    text_clean(d->profile, sizeof(d->profile));
    text_clean(d->pci_bus_id, sizeof(d->pci_bus_id));
    text_clean(d->serial, sizeof(d->serial));
    text_clean(d->arch, sizeof(d->arch));
    text_clean(d->node, sizeof(d->node));
    text_clean(d->pod.name, sizeof(d->pod.name));
    text_clean(d->pod.ns, sizeof(d->pod.ns));
    text_clean(d->pod.container, sizeof(d->pod.container));
}

static int finish(struct build *b, double now)
{
    struct fleet *f = b->f;
    size_t n = f->ndevs;
    size_t *ord = malloc((n ? n : 1) * sizeof(*ord));
    struct device *out = malloc((n ? n : 1) * sizeof(*out));
    struct fleet_src *src = malloc((n ? n : 1) * sizeof(*src));
    if (!ord || !out || !src) {
        free(ord);
        free(out);
        free(src);
        return -1;
    }
    for (size_t i = 0; i < f->nnodes; i++)
        if (!f->nodes[i].name[0])
            snprintf(f->nodes[i].name, sizeof(f->nodes[i].name), "%.63s", f->nodes[i].instance);
    dcgm_totals(b);
    for (size_t i = 0; i < n; i++)
        ord[i] = i;
    sort_ctx = (struct order){.f = f, .dnode = b->dnode};
    qsort(ord, n, sizeof(*ord), cmp_dev);
    int parent = -1, slot = 0;
    for (size_t i = 0; i < n; i++) {
        struct device *d = &out[i];
        *d = f->devs[ord[i]];
        struct fleet_node *node = &f->nodes[b->dnode[ord[i]]];
        if (node->ndev++ == 0)
            node->dev_first = i;
        snprintf(d->node, sizeof(d->node), "%s", node->name);
        clean_strings(d);
        bool dcgm = b->keys[ord[i]][0] == 'd';
        src[i] = (struct fleet_src){.node = (unsigned)b->dnode[ord[i]], .dcgm = dcgm};
        if (d->kind == DEV_GPU) {
            parent = (int)i;
            slot = 0;
            node->ngpus++;
        } else {
            node->nmig++;
            if (parent >= 0 && strcmp(out[parent].uuid, d->parent_uuid) == 0 &&
                strcmp(out[parent].node, d->node) == 0) {
                d->parent_pos = parent;
                if (d->mig_index < 0) /* its exporter names none (dcgm-exporter's) */
                    d->mig_index = slot;
                slot++;
                out[parent].mig_enabled = true;
                if (out[parent].vendor == VENDOR_AMD) /* its partitions, as amdgpu counts */
                    out[parent].slices_total = slot;
                /* the GPU's own values, on its instances as NVML's backend
                 * gives them (the exporter writes them on the GPU only) */
                for (int k = 0; k < M_COUNT; k++)
                    if (metric_info((enum metric_id)k)->gpu_wide && !metric_ok(&d->m[k]))
                        d->m[k] = out[parent].m[k];
            }
        }
        const char *vwhy = node->why[dcgm ? PD_DCGM_VALUES : PD_VALUES];
        if (node->up == 0) {
            d->node_down = true;
            d->node_down_for_s = node->last_sample > 0 ? now - node->last_sample : -1;
            for (int k = 0; k < M_COUNT; k++)
                d->m[k] = metric_none("the node's target is down (up == 0)");
            d->process_count = metric_none("the node's target is down (up == 0)");
            d->health = HEALTH_UNKNOWN;
        } else if (vwhy) {
            /* the values query failed: every value it fills is none with its reason */
            for (int k = 0; k < M_COUNT; k++)
                d->m[k] = metric_none(vwhy);
            d->process_count = metric_none(vwhy);
        }
    }
    int rc = fleet_place_procs(b, ord, out, n);
    free(ord);
    free(f->devs);
    f->devs = out;
    f->src = src;
    return rc;
}

struct build *fleet_build_new(size_t max_devices)
{
    struct build *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    b->f = &b->fleet;
    b->max_devices = max_devices;
    return b;
}

int fleet_build_node(struct build *b, const char *instance, const char *name, int up,
                     double last_sample)
{
    int n = node_add(b, instance);
    if (n < 0)
        return -1;
    struct fleet_node *node = &b->f->nodes[n];
    snprintf(node->name, sizeof(node->name), "%s", name);
    node->up = up;
    node->last_sample = last_sample;
    return 0;
}

size_t fleet_build_nnodes(const struct build *b)
{
    return b->f->nnodes;
}

const char *fleet_build_instance(const struct build *b, size_t k)
{
    return k < b->f->nnodes ? b->f->nodes[k].instance : "";
}

bool fleet_build_node_known(struct build *b, const char *instance)
{
    return node_of(b, instance) >= 0;
}

void fleet_build_node_why(struct build *b, const char *instance, enum promq_detail q,
                          const char *why)
{
    int n = node_of(b, instance);
    if (n >= 0 && q < PD_COUNT)
        b->f->nodes[n].why[q] = why;
}

int fleet_build_read(struct build *b, enum promq_detail q, const struct prom_item *it)
{
    if (b->nomem)
        return 0;
    switch (q) {
    case PD_IDENT:
        read_ident(b, it);
        break;
    case PD_VALUES:
        read_values(b, it);
        break;
    case PD_DCGM_IDENT:
        read_dcgm_ident(b, it);
        break;
    case PD_DCGM_VALUES:
        read_dcgm_values(b, it);
        break;
    case PD_PROCS:
        fleet_read_proc(b, it);
        break;
    default:
        break;
    }
    return 0;
}

int fleet_build_finish(struct build *b, struct fleet *f, double now)
{
    int rc = b->nomem ? -1 : finish(b, now);
    *f = b->fleet;
    memset(&b->fleet, 0, sizeof(b->fleet));
    if (rc != 0)
        fleet_free(f);
    return rc;
}

void fleet_build_free(struct build *b)
{
    if (!b)
        return;
    free(b->dnode);
    free(b->nslot);
    free(b->nmigmon);
    free(b->dnprocs);
    free(b->keys);
    free(b->slot);
    fleet_free_procs(b);
    fleet_free(&b->fleet);
    free(b);
}

void fleet_free(struct fleet *f)
{
    free(f->nodes);
    free(f->devs);
    free(f->procs);
    free(f->src);
    memset(f, 0, sizeof(*f));
}
