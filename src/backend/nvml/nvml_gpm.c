/*
 * nvml_gpm.c — GPM in the monitor's own NVML session, for a GPU whose
 * driver the GPM helper proved (gpm.h: its memory-read canary passed after
 * GPM calls, twice): sampled by the thread that samples the GPU, right
 * after its other values, so a steady tick wakes no process for it.
 *
 * The entities are the helper's: the whole GPU, each GPU instance of the
 * part's MIG devices (nvmlGpmMigSampleGet) and, where the driver samples
 * MIG handles (595+), each compute instance. Each has two samples,
 * allocated once and freed exactly once, when the entity goes (a MIG
 * change), GPM goes back to the helper, or the worker is freed. An entity
 * is sampled on a tick at least GPM_MIN_SPAN_NS after its last sample (at
 * -i 100, every tick: the grid's ticks jitter by a few ms around 100 ms),
 * and its metrics are those between the two. Every call goes through CALL,
 * so one that stalls is named and handed over as any other NVML call
 * (nvml_watchdog.c); one that comes back after more than GPM_SLOW_NS gives
 * this GPU's GPM back to the helper for good.
 *
 * Owner: the thread that claimed the GPU's tick (nvml_root.h), through its
 * nvml_state.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/gpm/gpm.h"
#include "backend/nvml/nvml.h"
#include "backend/nvml/nvml_state.h"
#include "core/clock.h"

/* NVIDIA asks for samples at least 100 ms apart; the engine's ticks at
 * -i 100 are 100 ms apart give or take its timer's jitter. */
#define GPM_MIN_SPAN_NS (95ull * 1000000ull)
/* A GPM call that takes this long is not a driver to sample GPM in. */
#define GPM_SLOW_NS (1000ull * 1000000ull)
#define GPM_MAX_ENTS 128

static const char *const WHY_FIRST =
    "waiting for the first GPM sample (two samples 100 ms apart are needed)";
static const char *const WHY_NO_ENT = "no GPM sample for this device";

struct gent {
    enum gpm_scope scope;
    int gi_id;
    int nci;
    char mig_uuid[MIGMON_UUID_LEN];
    nvmlDevice_t mig_h;
    nvmlGpmSample_t s[2]; /* owned; freed exactly once in ent_free */
    int cur;              /* s[cur] receives the next sample */
    bool have_prev;       /* s[!cur] holds the previous sample */
    uint64_t t_prev;
    bool seen;            /* in this tick's part */
    bool have_vals;       /* v and rc hold the metrics of the last two samples */
    nvmlReturn_t why_rc;  /* the last sample failed: its answer (no values meanwhile) */
    double v[GPM_NMETRICS];
    int32_t rc[GPM_NMETRICS];
};

struct nvml_gpm {
    struct gent e[GPM_MAX_ENTS];
    size_t n;
    int ci_sampling; /* nvmlGpmSampleGet on MIG handles: -1 untried, 0 no, 1 yes */
    nvmlGpmMetricsGet_t mg; /* one request, reused (13 KB) */
};

static void ent_free(struct nvml_state *st, struct gent *e)
{
    for (int k = 0; k < 2; k++) {
        if (e->s[k] && st->lib.f.gpm_sample_free)
            st->lib.f.gpm_sample_free(e->s[k]);
        e->s[k] = NULL;
    }
}

void nvml_gpm_free(struct nvml_state *st)
{
    if (!st->gpm)
        return;
    for (size_t i = 0; i < st->gpm->n; i++)
        ent_free(st, &st->gpm->e[i]);
    free(st->gpm);
    st->gpm = NULL;
}

/* The entity of this scope, GI and MIG device, made (with its samples)
 * when new; NULL when there is no room or no sample could be had. */
static struct gent *ent_get(struct nvml_state *st, enum gpm_scope scope, int gi_id,
                            const char *mig_uuid)
{
    struct nvml_gpm *g = st->gpm;
    for (size_t i = 0; i < g->n; i++) {
        struct gent *e = &g->e[i];
        if (e->scope == scope && e->gi_id == gi_id &&
            (scope != GPM_SCOPE_CI || strcmp(e->mig_uuid, mig_uuid) == 0))
            return e;
    }
    if (g->n == GPM_MAX_ENTS)
        return NULL;
    struct gent *e = &g->e[g->n];
    memset(e, 0, sizeof(*e));
    e->scope = scope;
    e->gi_id = gi_id;
    if (scope == GPM_SCOPE_CI)
        memcpy(e->mig_uuid, mig_uuid, sizeof(e->mig_uuid));
    if (st->lib.f.gpm_sample_alloc(&e->s[0]) != NVML_SUCCESS ||
        st->lib.f.gpm_sample_alloc(&e->s[1]) != NVML_SUCCESS) {
        ent_free(st, e);
        return NULL;
    }
    g->n++;
    return e;
}

/* Mark the part's entities seen (made as needed); drop the others. */
static void ents_from_part(struct nvml_state *st, const struct snapshot *part)
{
    struct nvml_gpm *g = st->gpm;
    for (size_t i = 0; i < g->n; i++)
        g->e[i].seen = false;
    struct gent *e = ent_get(st, GPM_SCOPE_GPU, -1, "");
    if (e)
        e->seen = true;
    bool gi_api = st->lib.f.gpm_mig_sample_get != NULL;
    for (size_t i = 1; i < part->ndevices; i++) {
        const struct device *d = &part->devices[i];
        if (d->kind != DEV_MIG || d->gi_id < 0)
            continue;
        int nci = 0;
        for (size_t k = 1; k < part->ndevices; k++)
            nci += part->devices[k].kind == DEV_MIG && part->devices[k].gi_id == d->gi_id;
        if (gi_api && (e = ent_get(st, GPM_SCOPE_GI, d->gi_id, "")) != NULL) {
            e->seen = true;
            e->nci = nci;
        }
        if (g->ci_sampling == 0 || !d->uuid[0])
            continue;
        nvmlDevice_t mh = NULL;
        for (size_t k = 0; k < st->nslots && !mh; k++)
            if ((int)st->slots[k].slot == d->mig_index)
                mh = st->slots[k].h;
        if (mh && (e = ent_get(st, GPM_SCOPE_CI, d->gi_id, d->uuid)) != NULL) {
            e->seen = true;
            e->nci = nci;
            e->mig_h = mh;
        }
    }
    size_t w = 0;
    for (size_t i = 0; i < g->n; i++) {
        if (g->e[i].seen)
            g->e[w++] = g->e[i];
        else
            ent_free(st, &g->e[i]);
    }
    g->n = w;
}

/* One entity's sample and, with the previous one, its metrics. False when
 * a call took longer than GPM_SLOW_NS. */
static bool sample_ent(struct nvml_state *st, nvmlDevice_t h, struct gent *e, uint64_t now)
{
    struct nvml_gpm *g = st->gpm;
    const struct nvml_fns *f = &st->lib.f;
    if (e->have_prev && now - e->t_prev < GPM_MIN_SPAN_NS)
        return true;
    nvmlReturn_t rc;
    uint64_t t0 = clock_mono_ns();
    if (e->scope == GPM_SCOPE_GI)
        rc = CALL(st, "nvmlGpmMigSampleGet",
                  f->gpm_mig_sample_get(h, (unsigned)e->gi_id, e->s[e->cur]));
    else
        rc = CALL(st, "nvmlGpmSampleGet",
                  f->gpm_sample_get(e->scope == GPM_SCOPE_CI ? e->mig_h : h, e->s[e->cur]));
    uint64_t t1 = clock_mono_ns();
    if (t1 - t0 > GPM_SLOW_NS)
        return false;
    if (rc != NVML_SUCCESS) {
        e->have_prev = e->have_vals = false;
        e->why_rc = rc;
        if (e->scope == GPM_SCOPE_CI && g->ci_sampling < 0)
            g->ci_sampling = 0; /* drivers before 595 sample GIs only */
        return true;
    }
    if (e->scope == GPM_SCOPE_CI)
        g->ci_sampling = 1;
    e->why_rc = NVML_SUCCESS;
    if (e->have_prev) {
        nvmlGpmMetricsGet_t *mg = &g->mg;
        mg->version = NVML_GPM_METRICS_GET_VERSION;
        mg->numMetrics = GPM_NMETRICS;
        mg->sample1 = e->s[!e->cur];
        mg->sample2 = e->s[e->cur];
        for (int k = 0; k < GPM_NMETRICS; k++) {
            memset(&mg->metrics[k], 0, sizeof(mg->metrics[k]));
            mg->metrics[k].metricId = gpm_metric_nvml_id[k];
        }
        rc = CALL(st, "nvmlGpmMetricsGet", f->gpm_metrics_get(mg));
        if (clock_mono_ns() - t1 > GPM_SLOW_NS)
            return false;
        e->have_vals = rc == NVML_SUCCESS;
        if (rc != NVML_SUCCESS)
            e->why_rc = rc;
        for (int k = 0; k < GPM_NMETRICS && e->have_vals; k++) {
            e->rc[k] = mg->metrics[k].nvmlReturn;
            e->v[k] = e->rc[k] == NVML_SUCCESS ? mg->metrics[k].value : 0;
        }
    }
    e->t_prev = t1;
    e->have_prev = true;
    e->cur = !e->cur;
    return true;
}

static const struct gent *find(const struct nvml_gpm *g, enum gpm_scope scope, int gi_id,
                               const char *mig_uuid)
{
    for (size_t i = 0; i < g->n; i++) {
        const struct gent *e = &g->e[i];
        if (e->scope == scope && e->gi_id == gi_id &&
            (scope != GPM_SCOPE_CI || strcmp(e->mig_uuid, mig_uuid) == 0))
            return e;
    }
    return NULL;
}

static void view_of(const struct gent *e, struct gpm_view *out)
{
    memset(out, 0, sizeof(*out));
    if (!e) {
        out->why = WHY_NO_ENT;
        return;
    }
    if (!e->have_vals) {
        out->why = e->why_rc != NVML_SUCCESS ? nvml_rc_reason(e->why_rc) : WHY_FIRST;
        return;
    }
    out->ok = true;
    out->nci = e->nci;
    out->ci_level = e->scope == GPM_SCOPE_CI;
    for (int k = 0; k < GPM_NMETRICS; k++) {
        out->v[k] = e->v[k];
        out->rc[k] = e->rc[k];
    }
}

/* nvml_gpm_apply's lookup in this context's entities. */
static void part_view(const void *src, const struct device *d, struct gpm_view *out)
{
    const struct nvml_gpm *g = src;
    if (d->kind == DEV_GPU) {
        view_of(find(g, GPM_SCOPE_GPU, -1, ""), out);
        return;
    }
    const struct gent *e = find(g, GPM_SCOPE_CI, d->gi_id, d->uuid);
    view_of(e ? e : find(g, GPM_SCOPE_GI, d->gi_id, ""), out);
}

bool nvml_gpm_sample(struct nvml_state *st, nvmlDevice_t h, struct snapshot *part, bool on,
                     bool *gave_up)
{
    *gave_up = false;
    const struct nvml_fns *f = &st->lib.f;
    if (!on || !h || part->ndevices == 0 || part->devices[0].lost || !f->gpm_sample_alloc ||
        !f->gpm_sample_free || !f->gpm_sample_get || !f->gpm_metrics_get) {
        nvml_gpm_free(st);
        return false;
    }
    if (!st->gpm) {
        st->gpm = calloc(1, sizeof(*st->gpm));
        if (!st->gpm)
            return false;
        st->gpm->ci_sampling = -1;
    }
    struct nvml_gpm *g = st->gpm;
    ents_from_part(st, part);
    uint64_t now = clock_mono_ns();
    bool any = false;
    for (size_t i = 0; i < g->n; i++) {
        if (!sample_ent(st, h, &g->e[i], now)) {
            nvml_gpm_free(st);
            *gave_up = true;
            return false;
        }
        any = any || g->e[i].have_vals;
    }
    if (g->ci_sampling == 0) { /* the compute instances this driver cannot sample */
        size_t w = 0;
        for (size_t i = 0; i < g->n; i++) {
            if (g->e[i].scope == GPM_SCOPE_CI)
                ent_free(st, &g->e[i]);
            else
                g->e[w++] = g->e[i];
        }
        g->n = w;
    }
    /* Until the first values, the helper's (it still samples this GPU)
     * are applied after the merge instead. */
    if (!any)
        return false;
    nvml_gpm_apply(part, 0, part->ndevices, part_view, g);
    return true;
}
