#include "backend/prometheus/prom_past.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/prometheus/prom_client.h"
#include "backend/prometheus/prom_fleet_int.h"

/* The families the charts draw (history.h's series but PCIe, which is not
 * read from Prometheus), as prom_fleet.c reads them. */
#define MIGMON_OWN "utilization_ratio|memory_utilization_ratio|memory_used_bytes"
#define MIGMON_WIDE "temperature_celsius|power_watts|sm_clock_hertz|memory_clock_hertz"
#define DCGM_PAST                                                                            \
    "DCGM_FI_DEV_(FB_USED|GPU_TEMP|POWER_USAGE|GPU_UTIL|MEM_COPY_UTIL|SM_CLOCK|MEM_CLOCK)|" \
    "DCGM_FI_PROF_(GR_ENGINE_ACTIVE|DRAM_ACTIVE)"

#define GIVEN                                                                                \
    ((1u << HS_GPU_UTIL) | (1u << HS_MEM_UTIL) | (1u << HS_VRAM_USED) | (1u << HS_TEMP) |   \
     (1u << HS_POWER) | (1u << HS_CLK_SM) | (1u << HS_CLK_MEM))

struct past_grid prom_past_grid(int64_t end_ms, unsigned step_ms, size_t points)
{
    struct past_grid g = {.step_ms = step_ms ? step_ms : 1000};
    g.n = points < PROM_PAST_MAX_POINTS ? points : PROM_PAST_MAX_POINTS;
    if (g.n == 0)
        g.n = 1;
    g.start_ms = end_ms - (int64_t)(g.n - 1) * g.step_ms;
    return g;
}

int prom_past_query(char *out, size_t cap, const struct past_dev *d)
{
    char inst[4 * sizeof(d->instance)], uuid[4 * sizeof(d->uuid)];
    if (!d->uuid[0])
        return -1;
    promql_quote(inst, sizeof(inst), d->instance);
    promql_quote(uuid, sizeof(uuid), d->uuid);
    int n;
    if (d->dcgm) {
        n = snprintf(out, cap,
                     "max by (__name__, GPU_I_ID) ({__name__=~\"" DCGM_PAST "\", instance=\"%s\", "
                     "UUID=\"%s\"})",
                     inst, uuid);
    } else if (d->gi < 0) {
        /* the GPU's series, and its instances' memory for the sum */
        n = snprintf(out, cap,
                     "max by (__name__, uuid, gpu_instance_id, compute_instance_id, source) "
                     "({__name__=~\"migmon_gpu_(" MIGMON_OWN "|" MIGMON_WIDE
                     ")|migmon_mig_memory_used_bytes\", instance=\"%s\", uuid=\"%s\"})",
                     inst, uuid);
    } else if (d->ci >= 0) {
        /* the instance's own series, and its GPU's GPU-wide ones */
        n = snprintf(out, cap,
                     "max by (__name__, uuid, gpu_instance_id, compute_instance_id, source) "
                     "({__name__=~\"migmon_mig_(" MIGMON_OWN ")\", instance=\"%s\", uuid=\"%s\", "
                     "gpu_instance_id=\"%d\", compute_instance_id=\"%d\"} or {__name__=~"
                     "\"migmon_gpu_(" MIGMON_WIDE ")\", instance=\"%s\", uuid=\"%s\"})",
                     inst, uuid, d->gi, d->ci, inst, uuid);
    } else {
        return -1;
    }
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* ---- building ---- */

/* What a series is to the device: its own, its GPU's GPU-wide value, or
 * one instance's part of the GPU's VRAM sum. */
enum role { R_SKIP, R_OWN, R_WIDE, R_PART };

struct family {
    const char *name;
    enum hist_dev_series k;
    double scale;
    int prio;  /* of two families for one series, the higher wins */
    bool wide; /* a GPU-wide value (metric_info's gpu_wide) */
    enum metric_source src; /* dcgm: fixed; migmon: MSRC_NONE, the series' label */
};

static const struct family migmon_fams[] = {
    {"utilization_ratio", HS_GPU_UTIL, 100, 2, false, MSRC_NONE},
    {"memory_utilization_ratio", HS_MEM_UTIL, 100, 2, false, MSRC_NONE},
    {"memory_used_bytes", HS_VRAM_USED, 1, 2, false, MSRC_NONE},
    {"temperature_celsius", HS_TEMP, 1, 2, true, MSRC_NONE},
    {"power_watts", HS_POWER, 1, 2, true, MSRC_NONE},
    {"sm_clock_hertz", HS_CLK_SM, 1e-6, 2, true, MSRC_NONE},
    {"memory_clock_hertz", HS_CLK_MEM, 1e-6, 2, true, MSRC_NONE},
};

/* dcgm-exporter's: the profiling fields win over the device ones, as in
 * prom_fleet.c */
static const struct family dcgm_fams[] = {
    {"DCGM_FI_DEV_FB_USED", HS_VRAM_USED, 1048576.0, 2, false, MSRC_DIRECT},
    {"DCGM_FI_DEV_GPU_TEMP", HS_TEMP, 1, 2, true, MSRC_DIRECT},
    {"DCGM_FI_DEV_POWER_USAGE", HS_POWER, 1, 2, true, MSRC_DIRECT},
    {"DCGM_FI_DEV_SM_CLOCK", HS_CLK_SM, 1, 2, true, MSRC_DIRECT},
    {"DCGM_FI_DEV_MEM_CLOCK", HS_CLK_MEM, 1, 2, true, MSRC_DIRECT},
    {"DCGM_FI_DEV_GPU_UTIL", HS_GPU_UTIL, 1, 1, false, MSRC_DIRECT},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", HS_MEM_UTIL, 1, 1, false, MSRC_DIRECT},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", HS_GPU_UTIL, 100, 2, false, MSRC_DCGM},
    {"DCGM_FI_PROF_DRAM_ACTIVE", HS_MEM_UTIL, 100, 2, false, MSRC_DCGM},
};

/* A read value over a carried or estimated one, when two series give the
 * same point (a source that changed within Prometheus' lookback). */
static int src_rank(enum metric_source s)
{
    return s == MSRC_CARRIED ? 1 : s == MSRC_ESTIMATE ? 2 : 3;
}

static bool label_is(const char *s, int id)
{
    char b[16];
    snprintf(b, sizeof(b), "%d", id);
    return strcmp(s, b) == 0;
}

/* The role of series item for d, and its family. */
static enum role role_of(json_t *it, const struct past_dev *d, const struct family **fam)
{
    const char *name = fleet_jlab(it, "__name__");
    *fam = NULL;
    if (d->dcgm) {
        for (size_t i = 0; i < sizeof(dcgm_fams) / sizeof(dcgm_fams[0]); i++)
            if (!strcmp(name, dcgm_fams[i].name))
                *fam = &dcgm_fams[i];
        if (!*fam)
            return R_SKIP;
        const char *gi = fleet_jlab(it, "GPU_I_ID");
        /* as prom_fleet.c: a GPU-wide field of an instance is its GPU's */
        if (d->gi < 0 ? !gi[0] : label_is(gi, d->gi))
            return (*fam)->wide && d->gi >= 0 ? R_WIDE : R_OWN;
        if ((*fam)->wide)
            return R_WIDE;
        return d->gi < 0 && (*fam)->k == HS_VRAM_USED ? R_PART : R_SKIP;
    }
    bool mig = strncmp(name, "migmon_mig_", 11) == 0;
    if (!mig && strncmp(name, "migmon_gpu_", 11) != 0)
        return R_SKIP;
    if (strcmp(fleet_jlab(it, "uuid"), d->uuid) != 0)
        return R_SKIP;
    for (size_t i = 0; i < sizeof(migmon_fams) / sizeof(migmon_fams[0]); i++)
        if (!strcmp(name + 11, migmon_fams[i].name))
            *fam = &migmon_fams[i];
    if (!*fam)
        return R_SKIP;
    if (d->gi < 0) /* a GPU: its own, and its instances' memory */
        return !mig ? R_OWN : (*fam)->k == HS_VRAM_USED ? R_PART : R_SKIP;
    if (mig) /* an instance: its own; its GPU's GPU-wide values */
        return label_is(fleet_jlab(it, "gpu_instance_id"), d->gi) &&
                       label_is(fleet_jlab(it, "compute_instance_id"), d->ci)
                   ? R_OWN
                   : R_SKIP;
    return (*fam)->wide ? R_WIDE : R_SKIP;
}

/* The place of timestamp t (seconds) on g, or -1 off the grid. */
static long place(const struct past_grid *g, json_t *t)
{
    if (!json_is_number(t))
        return -1;
    double s = json_number_value(t);
    if (!isfinite(s) || fabs(s) > 1e13)
        return -1;
    long long off = llround(s * 1000.0) - g->start_ms;
    if (off < -1)
        return -1;
    long long j = (off + g->step_ms / 2) / g->step_ms;
    long long miss = off - j * (long long)g->step_ms;
    if (miss < -1 || miss > 1 || j < 0 || (unsigned long long)j >= g->n)
        return -1;
    return (long)j;
}

/* One instance's memory, for its GPU's sum. */
struct part {
    char key[40];
    struct hist_point *pts; /* g->n */
};

struct past_build {
    struct hist_past *p;
    const struct past_grid *g;
    unsigned char *rank; /* of each point of p */
    struct part parts[PROM_PAST_MAX_INSTANCES];
    size_t nparts;
    bool too_many; /* more instances than parts: no sum */
};

static struct hist_point *part_of(struct past_build *b, json_t *it, bool *nomem)
{
    char key[40];
    const char *gi = fleet_jlab(it, "GPU_I_ID"); /* dcgm-exporter's; ours below */
    snprintf(key, sizeof(key), "%.16s\x1f%.16s", gi[0] ? gi : fleet_jlab(it, "gpu_instance_id"),
             fleet_jlab(it, "compute_instance_id"));
    for (size_t i = 0; i < b->nparts; i++)
        if (!strcmp(b->parts[i].key, key))
            return b->parts[i].pts;
    if (b->nparts == PROM_PAST_MAX_INSTANCES) {
        b->too_many = true;
        return NULL;
    }
    struct part *pt = &b->parts[b->nparts];
    pt->pts = malloc(b->g->n * sizeof(*pt->pts));
    if (!pt->pts) {
        *nomem = true;
        return NULL;
    }
    for (size_t j = 0; j < b->g->n; j++)
        pt->pts[j] = (struct hist_point){.v = 0, .src = MSRC_NONE};
    snprintf(pt->key, sizeof(pt->key), "%s", key);
    b->nparts++;
    return pt->pts;
}

/* The points of series item it, placed. */
static int read_series(struct past_build *b, json_t *it, const struct past_dev *d)
{
    const struct family *fam;
    enum role r = role_of(it, d, &fam);
    json_t *vals = json_object_get(it, "values");
    if (r == R_SKIP || !json_is_array(vals))
        return 0;
    enum metric_source src = fam->src != MSRC_NONE ? fam->src : fleet_source_of(fleet_jlab(it, "source"));
    bool nomem = false;
    struct hist_point *part = r == R_PART ? part_of(b, it, &nomem) : NULL;
    if (nomem)
        return -1;
    if (r == R_PART && !part)
        return 0;
    int rank = (r == R_OWN ? 2 : 1) * 16 + fam->prio * 4 + src_rank(src);
    size_t i;
    json_t *pv;
    json_array_foreach(vals, i, pv) {
        long j = place(b->g, json_array_get(pv, 0));
        double v;
        if (j < 0 || !fleet_num(json_array_get(pv, 1), &v))
            continue; /* off the grid, or no number (NaN): a gap */
        struct hist_point pt = {.v = v * fam->scale, .src = src};
        if (part) {
            if (part[j].src == MSRC_NONE || src_rank(src) > src_rank(part[j].src))
                part[j] = pt;
            continue;
        }
        size_t at = (size_t)j * HS_DEV_COUNT + fam->k;
        if (rank > b->rank[at]) {
            b->p->pts[at] = pt;
            b->rank[at] = (unsigned char)rank;
        }
    }
    return 0;
}

/* A MIG-enabled GPU without its own VRAM figure at a point: its
 * instances' sum there, when every one has a value (snapshot_mig_vram_sum's
 * rule; carried when a part is). */
static void sum_parts(struct past_build *b)
{
    if (b->too_many || b->nparts == 0)
        return;
    for (size_t j = 0; j < b->g->n; j++) {
        struct hist_point *own = hist_past_at(b->p, j, HS_VRAM_USED);
        if (own->src != MSRC_NONE)
            continue;
        double sum = 0;
        bool all = true, carried = false;
        for (size_t i = 0; all && i < b->nparts; i++) {
            struct hist_point q = b->parts[i].pts[j];
            all = q.src != MSRC_NONE;
            sum += q.v;
            carried |= q.src == MSRC_CARRIED;
        }
        if (all)
            *own = (struct hist_point){.v = sum, .src = carried ? MSRC_CARRIED : MSRC_DIRECT};
    }
}

int prom_past_build(struct hist_past *p, json_t *res, const struct past_dev *d,
                    const struct past_grid *g, char *err, size_t errlen)
{
    memset(p, 0, sizeof(*p));
    if (!json_is_array(res)) {
        snprintf(err, errlen, "the answer's result is not a list of series");
        return -1;
    }
    if (hist_past_init(p, g->n) != 0) {
        snprintf(err, errlen, "out of memory for %zu points", g->n);
        return -1;
    }
    struct past_build b = {.p = p, .g = g};
    b.rank = calloc(g->n * HS_DEV_COUNT, 1);
    int rc = b.rank ? 0 : -1;
    size_t i;
    json_t *it;
    json_array_foreach(res, i, it) {
        if (rc == 0)
            rc = read_series(&b, it, d);
    }
    if (rc == 0 && d->gi < 0 && d->mig_enabled)
        sum_parts(&b);
    for (size_t k = 0; k < b.nparts; k++)
        free(b.parts[k].pts);
    free(b.rank);
    if (rc != 0) {
        hist_past_free(p);
        snprintf(err, errlen, "out of memory for %zu points", g->n);
        return -1;
    }
    p->given = GIVEN;
    return 0;
}
