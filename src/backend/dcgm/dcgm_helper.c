/*
 * dcgm_helper.c — the DCGM helper process: loads libdcgm, connects to a
 * running nv-hostengine (or, where that is safe, starts an embedded
 * engine), watches the profiling fields of every GPU, GPU instance and
 * compute instance, and sends their latest values over stdout (dcgm.h).
 *
 * Before every DCGM call that can stall, a progress record names it, so the
 * monitor can say where a hung helper was stuck. A hostengine that goes
 * away is reconnected with backoff; an answer that cannot change by
 * retrying (REQUIRES_ROOT, the profiling module held by another engine or
 * not loaded) ends the helper after saying so, and it is not restarted.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/dcgm/dcgm_helper.h"
#include "core/clock.h"

const unsigned short dcgm_metric_field[DCGM_NMETRICS] = {
    [DCGM_GR_ENGINE] = DCGM_FI_PROF_GR_ENGINE_ACTIVE, [DCGM_SM_ACTIVE] = DCGM_FI_PROF_SM_ACTIVE,
    [DCGM_SM_OCC] = DCGM_FI_PROF_SM_OCCUPANCY,       [DCGM_TENSOR] = DCGM_FI_PROF_PIPE_TENSOR_ACTIVE,
    [DCGM_DRAM] = DCGM_FI_PROF_DRAM_ACTIVE,          [DCGM_FP64] = DCGM_FI_PROF_PIPE_FP64_ACTIVE,
    [DCGM_FP32] = DCGM_FI_PROF_PIPE_FP32_ACTIVE,     [DCGM_FP16] = DCGM_FI_PROF_PIPE_FP16_ACTIVE,
    [DCGM_PCIE_TX] = DCGM_FI_PROF_PCIE_TX_BYTES,     [DCGM_PCIE_RX] = DCGM_FI_PROF_PCIE_RX_BYTES,
    [DCGM_NVLINK_TX] = DCGM_FI_PROF_NVLINK_TX_BYTES, [DCGM_NVLINK_RX] = DCGM_FI_PROF_NVLINK_RX_BYTES,
};

const char *const dcgm_metric_name[DCGM_NMETRICS] = {
    [DCGM_GR_ENGINE] = "PROF_GR_ENGINE_ACTIVE", [DCGM_SM_ACTIVE] = "PROF_SM_ACTIVE",
    [DCGM_SM_OCC] = "PROF_SM_OCCUPANCY",        [DCGM_TENSOR] = "PROF_PIPE_TENSOR_ACTIVE",
    [DCGM_DRAM] = "PROF_DRAM_ACTIVE",           [DCGM_FP64] = "PROF_PIPE_FP64_ACTIVE",
    [DCGM_FP32] = "PROF_PIPE_FP32_ACTIVE",      [DCGM_FP16] = "PROF_PIPE_FP16_ACTIVE",
    [DCGM_PCIE_TX] = "PROF_PCIE_TX_BYTES",      [DCGM_PCIE_RX] = "PROF_PCIE_RX_BYTES",
    [DCGM_NVLINK_TX] = "PROF_NVLINK_TX_BYTES",  [DCGM_NVLINK_RX] = "PROF_NVLINK_RX_BYTES",
};

/* ------------------------------------------------------------ discovery */

static int gpu_uuids(struct dh *d, const unsigned *ids, int n, char (*uuid)[DCGM_UUID_LEN])
{
    dcgmGroupEntityPair_t ents[DCGM_MAX_NUM_DEVICES];
    unsigned short fid = DCGM_FI_DEV_UUID;
    for (int i = 0; i < n; i++) {
        ents[i].entityGroupId = DCGM_FE_GPU;
        ents[i].entityId = ids[i];
        uuid[i][0] = '\0';
    }
    dcgmFieldValue_v2 *v = calloc((size_t)n, sizeof(*v));
    if (!v)
        return DCGM_ST_GENERIC_ERROR;
    dcgmh_progress(DCGM_CALL_READ); /* the same call as a round's read */
    int rc = d->f.latest(d->h, ents, (unsigned)n, &fid, 1, DCGM_FV_FLAG_LIVE_DATA, v);
    for (int i = 0; rc == DCGM_ST_OK && i < n; i++) {
        if (v[i].status != DCGM_ST_OK || v[i].fieldType != DCGM_FT_STRING)
            continue;
        for (int k = 0; k < n; k++) {
            if (v[i].entityGroupId == DCGM_FE_GPU && v[i].entityId == ids[k]) {
                v[i].value.str[DCGM_MAX_STR_LENGTH - 1] = '\0';
                snprintf(uuid[k], DCGM_UUID_LEN, "%.*s", DCGM_UUID_LEN - 1, v[i].value.str);
            }
        }
    }
    free(v);
    return rc;
}

static struct hent *add_ent(struct dh *d, int group, unsigned id, uint8_t scope)
{
    if (d->nents >= MAX_ENTS)
        return NULL;
    struct hent *e = &d->ents[d->nents++];
    memset(e, 0, sizeof(*e));
    e->e.entityGroupId = group;
    e->e.entityId = id;
    e->scope = scope;
    e->gi_id = e->ci_id = -1;
    return e;
}

/* The GPUs, their GPU instances, and the compute instances of a GPU
 * instance that has several (one CI's values are its GI's). */
static int discover(struct dh *d)
{
    dcgmh_progress(DCGM_CALL_DISCOVER);
    unsigned ids[DCGM_MAX_NUM_DEVICES];
    int n = 0;
    int rc = d->f.devices(d->h, ids, &n);
    if (rc != DCGM_ST_OK)
        return rc;
    if (n < 0 || n > DCGM_MAX_NUM_DEVICES)
        n = n < 0 ? 0 : DCGM_MAX_NUM_DEVICES;
    char uuid[DCGM_MAX_NUM_DEVICES][DCGM_UUID_LEN];
    if (n > 0 && (rc = gpu_uuids(d, ids, n, uuid)) != DCGM_ST_OK)
        return rc;
    d->nents = 0;
    d->ngpus = (unsigned)n;
    for (int i = 0; i < n; i++) {
        struct hent *e = add_ent(d, DCGM_FE_GPU, ids[i], DCGM_SCOPE_GPU);
        if (e)
            memcpy(e->gpu_uuid, uuid[i], sizeof(e->gpu_uuid));
    }
    dcgmMigHierarchy_v2 *hi = calloc(1, sizeof(*hi));
    if (!hi)
        return DCGM_ST_GENERIC_ERROR;
    hi->version = dcgmMigHierarchy_version2;
    rc = d->f.hierarchy(d->h, hi);
    if (rc == DCGM_ST_OK) {
        unsigned cnt = hi->count > DCGM_MAX_HIERARCHY_INFO ? DCGM_MAX_HIERARCHY_INFO : hi->count;
        unsigned first_gi = d->nents;
        for (unsigned i = 0; i < cnt; i++) {
            const dcgmMigHierarchyInfo_v2 *r = &hi->entityList[i];
            if (r->entity.entityGroupId != DCGM_FE_GPU_I)
                continue;
            struct hent *e = add_ent(d, DCGM_FE_GPU_I, r->entity.entityId, DCGM_SCOPE_GI);
            if (!e)
                break;
            e->gi_id = (int)r->info.nvmlInstanceId;
            snprintf(e->gpu_uuid, sizeof(e->gpu_uuid), "%.*s", DCGM_UUID_LEN - 1,
                     r->info.gpuUuid);
        }
        unsigned last_gi = d->nents;
        for (unsigned g = first_gi; g < last_gi; g++) {
            unsigned nci = 0;
            for (unsigned i = 0; i < cnt; i++) {
                const dcgmMigHierarchyInfo_v2 *r = &hi->entityList[i];
                nci += r->entity.entityGroupId == DCGM_FE_GPU_CI &&
                       r->parent.entityGroupId == DCGM_FE_GPU_I &&
                       r->parent.entityId == d->ents[g].e.entityId;
            }
            d->ents[g].nci = (uint8_t)(nci > 255 ? 255 : nci);
            for (unsigned i = 0; nci > 1 && i < cnt; i++) {
                const dcgmMigHierarchyInfo_v2 *r = &hi->entityList[i];
                if (r->entity.entityGroupId != DCGM_FE_GPU_CI ||
                    r->parent.entityId != d->ents[g].e.entityId)
                    continue;
                struct hent *e = add_ent(d, DCGM_FE_GPU_CI, r->entity.entityId, DCGM_SCOPE_CI);
                if (!e)
                    break;
                e->gi_id = d->ents[g].gi_id;
                e->ci_id = (int)r->info.nvmlComputeInstanceId;
                e->nci = d->ents[g].nci;
                snprintf(e->gpu_uuid, sizeof(e->gpu_uuid), "%s", d->ents[g].gpu_uuid);
            }
        }
    }
    free(hi);
    return rc;
}

/* The fields to watch: those of the metric group with GR_ENGINE_ACTIVE,
 * and for every other major id (groups that can run beside it) the group
 * with the most wanted fields. What no chosen group has is left out, the
 * reason being multiplexing (PROFILING_MULTI_PASS). */
static int choose_fields(struct dh *d)
{
    dcgmProfGetMetricGroups_v3 *mg = calloc(1, sizeof(*mg));
    if (!mg)
        return DCGM_ST_GENERIC_ERROR;
    mg->version = dcgmProfGetMetricGroups_version3;
    mg->gpuId = d->ngpus ? d->ents[0].e.entityId : 0;
    dcgmh_progress(DCGM_CALL_DISCOVER);
    int rc = d->f.prof_groups(d->h, mg);
    unsigned n = rc != DCGM_ST_OK ? 0
                 : mg->numMetricGroups > DCGM_PROF_MAX_NUM_GROUPS_V2 ? DCGM_PROF_MAX_NUM_GROUPS_V2
                                                                     : mg->numMetricGroups;
    uint32_t has[DCGM_PROF_MAX_NUM_GROUPS_V2] = {0};
    for (unsigned g = 0; g < n; g++) {
        const dcgmProfMetricGroupInfo_v2 *gi = &mg->metricGroups[g];
        for (unsigned f = 0; f < gi->numFieldIds && f < DCGM_PROF_MAX_FIELD_IDS_PER_GROUP_V2; f++)
            for (int k = 0; k < DCGM_NMETRICS; k++)
                if (gi->fieldIds[f] == dcgm_metric_field[k])
                    has[g] |= 1u << k;
    }
    uint32_t take = 0;
    bool major_used[DCGM_PROF_MAX_NUM_GROUPS_V2] = {false}; /* by group index */
    /* first the group with GR_ENGINE_ACTIVE, then the best of each other major id */
    for (int pass = 0; pass < 2; pass++) {
        for (unsigned g = 0; g < n; g++) {
            if (major_used[g] || (pass == 0 && !(has[g] & (1u << DCGM_GR_ENGINE))))
                continue;
            unsigned best = g;
            for (unsigned h = g + 1; h < n; h++) {
                if (mg->metricGroups[h].majorId == mg->metricGroups[g].majorId &&
                    __builtin_popcount(has[h] & ~take) > __builtin_popcount(has[best] & ~take))
                    best = h;
            }
            if (pass == 0)
                best = g;
            take |= has[best];
            for (unsigned h = 0; h < n; h++)
                major_used[h] = major_used[h] ||
                                mg->metricGroups[h].majorId == mg->metricGroups[g].majorId;
            if (pass == 0)
                break;
        }
    }
    free(mg);
    if (rc != DCGM_ST_OK)
        return rc;
    d->nfields = 0;
    for (int k = 0; k < DCGM_NMETRICS; k++) {
        if (take & (1u << k)) {
            d->field_metric[d->nfields] = k;
            d->fields[d->nfields++] = dcgm_metric_field[k];
        }
    }
    d->watched = take;
    d->left_rc = take == (1u << DCGM_NMETRICS) - 1 ? DCGM_ST_OK : DCGM_ST_PROFILING_MULTI_PASS;
    return d->nfields ? DCGM_ST_OK : DCGM_ST_PROFILING_NOT_SUPPORTED;
}

static int watch(struct dh *d)
{
    char name[64];
    snprintf(name, sizeof(name), "mig-gpu-mon-%d", (int)getpid());
    dcgmh_progress(DCGM_CALL_WATCH);
    int rc = d->f.group_create(d->h, DCGM_GROUP_EMPTY, name, &d->grp);
    if (rc != DCGM_ST_OK)
        return rc;
    d->have_grp = true;
    for (unsigned i = 0; i < d->nents; i++) {
        rc = d->f.group_add(d->h, d->grp, d->ents[i].e.entityGroupId, d->ents[i].e.entityId);
        if (rc != DCGM_ST_OK)
            return rc;
    }
    rc = d->f.fg_create(d->h, (int)d->nfields, d->fields, name, &d->fg);
    if (rc != DCGM_ST_OK)
        return rc;
    d->have_fg = true;
    long long every_us = (long long)d->interval_ms * 1000;
    double keep_s = 3.0 * d->interval_ms / 1000.0;
    rc = d->f.watch(d->h, d->grp, d->fg, every_us, keep_s < 5 ? 5 : keep_s, 2);
    if (rc != DCGM_ST_OK)
        return rc;
    d->watching = true;
    /* A watch's first value comes with the engine's next update; one forced
     * update (as DCGM's documentation advises) has it now, so the first
     * round already has values. */
    return d->f.update_all(d->h, 1);
}

/* ------------------------------------------------------------ reading */

static int read_batch(struct dh *d, unsigned first, unsigned n, bool *have)
{
    dcgmGroupEntityPair_t ents[READ_BATCH];
    for (unsigned i = 0; i < n; i++)
        ents[i] = d->ents[first + i].e;
    /* Only what is matched is cleared: a record the library leaves unwritten
     * then matches no entity (a whole memset is 396 KB a batch). */
    for (unsigned j = 0; j < n * d->nfields; j++)
        d->vals[j].entityGroupId = DCGM_FE_NONE;
    dcgmh_progress(DCGM_CALL_READ);
    int rc = d->f.latest(d->h, ents, n, d->fields, d->nfields, 0, d->vals);
    if (rc != DCGM_ST_OK)
        return rc;
    for (unsigned i = 0; i < n; i++) {
        const struct hent *e = &d->ents[first + i];
        struct dcgm_rec_values r;
        memset(&r, 0, sizeof(r));
        r.scope = e->scope;
        r.nci = e->nci;
        r.gi_id = e->gi_id;
        r.ci_id = e->ci_id;
        memcpy(r.gpu_uuid, e->gpu_uuid, sizeof(r.gpu_uuid));
        for (int k = 0; k < DCGM_NMETRICS; k++)
            r.st[k] = DCGM_VALUE_UNWATCHED;
        for (unsigned j = 0; j < n * d->nfields; j++) {
            const dcgmFieldValue_v2 *v = &d->vals[j];
            if (v->entityGroupId != e->e.entityGroupId || v->entityId != e->e.entityId)
                continue;
            int k = -1;
            for (unsigned f = 0; f < d->nfields; f++) {
                if (d->fields[f] == v->fieldId)
                    k = d->field_metric[f];
            }
            if (k < 0)
                continue;
            if (v->ts > r.ts_us)
                r.ts_us = v->ts;
            if (v->status != DCGM_ST_OK) {
                r.st[k] = v->status;
            } else if (v->fieldType == DCGM_FT_DOUBLE) {
                r.v[k] = v->value.dbl;
                r.st[k] = v->value.dbl >= DCGM_FP64_BLANK ? DCGM_VALUE_BLANK : DCGM_ST_OK;
            } else if (v->fieldType == DCGM_FT_INT64) {
                r.v[k] = (double)v->value.i64;
                r.st[k] = v->value.i64 >= DCGM_INT64_BLANK ? DCGM_VALUE_BLANK : DCGM_ST_OK;
            } else {
                r.st[k] = DCGM_ST_BADPARAM;
            }
            *have = *have || r.st[k] == DCGM_ST_OK;
        }
        helper_send(DCGM_PROTO_MAGIC, &r, DCGM_REC_VALUES, sizeof(r));
    }
    return DCGM_ST_OK;
}

static int read_round(struct dh *d)
{
    bool have = false;
    for (unsigned i = 0; i < d->nents; i += READ_BATCH) {
        unsigned n = d->nents - i < READ_BATCH ? d->nents - i : READ_BATCH;
        int rc = read_batch(d, i, n, &have);
        if (rc != DCGM_ST_OK)
            return rc;
    }
    dcgmh_heartbeat(have);
    return DCGM_ST_OK;
}

/* Answers that retrying cannot change. */
static bool final_rc(int rc)
{
    return rc == DCGM_ST_REQUIRES_ROOT || rc == DCGM_ST_MODULE_NOT_LOADED ||
           rc == DCGM_ST_PROFILING_LIBRARY_ERROR || rc == DCGM_ST_PROFILING_NOT_SUPPORTED ||
           rc == DCGM_ST_NOT_SUPPORTED || rc == DCGM_ST_NO_PERMISSION ||
           rc == DCGM_ST_VER_MISMATCH;
}

/* Discover, choose, watch: DCGM_ST_OK or the failing answer (state sent). */
static int setup(struct dh *d)
{
    enum dcgm_call at = DCGM_CALL_DISCOVER;
    int rc = discover(d);
    if (rc == DCGM_ST_OK)
        rc = choose_fields(d);
    if (rc == DCGM_ST_OK) {
        at = DCGM_CALL_WATCH;
        rc = watch(d);
        if (rc == DCGM_ST_PROFILING_MULTI_PASS && d->nfields > 1) {
            /* The groups said one pass; the watch disagrees: GR_ENGINE_ACTIVE alone. */
            dcgmh_disconnect(d);
            if (dcgmh_connect(d) != 0)
                return DCGM_ST_CONNECTION_NOT_VALID;
            d->nfields = 1;
            d->fields[0] = DCGM_FI_PROF_GR_ENGINE_ACTIVE;
            d->field_metric[0] = DCGM_GR_ENGINE;
            d->watched = 1u << DCGM_GR_ENGINE;
            d->left_rc = DCGM_ST_PROFILING_MULTI_PASS;
            rc = watch(d);
        }
    }
    if (rc != DCGM_ST_OK)
        dcgmh_send_state(d, DCGM_STATE_FAILED, at, rc, !final_rc(rc), NULL);
    return rc;
}

/* The MIG layout again (every REWALK_NS): when it changed, the group is
 * rebuilt and watched anew (new GPU instances get values, gone ones stop).
 * DCGM_ST_OK, or the failing answer. */
static int rewalk(struct dh *d)
{
    static struct hent old[MAX_ENTS];
    unsigned nold = d->nents;
    memcpy(old, d->ents, sizeof(old[0]) * nold);
    int rc = discover(d);
    if (rc != DCGM_ST_OK)
        return rc;
    bool same = nold == d->nents;
    for (unsigned i = 0; same && i < nold; i++)
        same = old[i].e.entityGroupId == d->ents[i].e.entityGroupId &&
               old[i].e.entityId == d->ents[i].e.entityId && old[i].gi_id == d->ents[i].gi_id &&
               old[i].ci_id == d->ents[i].ci_id && old[i].nci == d->ents[i].nci;
    if (same)
        return DCGM_ST_OK;
    dcgmh_progress(DCGM_CALL_WATCH);
    dcgmh_unwatch(d);
    return watch(d);
}

static void idle_beat(void *ctx)
{
    (void)ctx;
    dcgmh_heartbeat(false);
}

static int run(struct dh *d)
{
    uint64_t retry = RETRY_FIRST_NS;
    for (;;) {
        int c = dcgmh_connect(d);
        if (c < 0)
            return 0;
        if (c == 0) {
            int rc = setup(d);
            if (rc == DCGM_ST_OK) {
                dcgmh_send_state(d, DCGM_STATE_WATCHING, DCGM_CALL_NONE, DCGM_ST_OK, false, NULL);
                retry = RETRY_FIRST_NS;
                uint64_t interval = (uint64_t)d->interval_ms * 1000000ull;
                uint64_t next = clock_mono_ns(), walked = next;
                for (;;) {
                    rc = read_round(d);
                    if (rc != DCGM_ST_OK)
                        break;
                    if (clock_mono_ns() - walked >= REWALK_NS) {
                        walked = clock_mono_ns();
                        if ((rc = rewalk(d)) != DCGM_ST_OK)
                            break;
                    }
                    next += interval;
                    uint64_t now = clock_mono_ns();
                    if (next <= now)
                        next = now + interval;
                    if (!helper_wait_until(next))
                        return 0;
                }
                dcgmh_send_state(d, DCGM_STATE_FAILED, DCGM_CALL_READ, rc, !final_rc(rc), NULL);
            }
            dcgmh_disconnect(d);
            if (final_rc(rc))
                return 0;
        }
        /* heartbeats every interval, but not more than twice a second (the
         * client's watchdog allows 3 intervals and at least 1 s) */
        uint64_t beat = (uint64_t)(d->interval_ms < 500 ? 500 : d->interval_ms) * 1000000ull;
        if (!helper_idle_until(clock_mono_ns() + retry, beat, idle_beat, NULL))
            return 0;
        retry = retry * 2 > RETRY_MAX_NS ? RETRY_MAX_NS : retry * 2;
    }
}

int dcgm_helper_main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: %s %s LIBRARY|'' auto|addr|embedded ADDRESS|'' INTERVAL_MS [NVML]\n",
                argv[0], DCGM_HELPER_ARG);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    struct dh *d = calloc(1, sizeof(*d));
    if (!d)
        return 1;
    d->mode = strcmp(argv[3], "embedded") == 0 ? DCGM_MODE_EMBEDDED
              : strcmp(argv[3], "addr") == 0   ? DCGM_MODE_ADDR
                                               : DCGM_MODE_AUTO;
    d->nvml = argc > 6 ? argv[6] : "";
    snprintf(d->addr, sizeof(d->addr), "%s", argv[4]);
    long ms = strtol(argv[5], NULL, 10);
    d->interval_ms = ms < 100 ? 100 : (unsigned)ms;
    d->vals = calloc(READ_BATCH * DCGM_NMETRICS, sizeof(*d->vals));
    char detail[256] = "";
    dcgmh_progress(DCGM_CALL_LOAD);
    int lrc = d->vals ? dcgmh_load(d, argv[2], detail, sizeof(detail)) : -2;
    if (lrc != 0) {
        dcgmh_send_state(d, DCGM_STATE_NOT_INSTALLED, DCGM_CALL_LOAD, lrc, false, detail);
        dcgmh_send_done();
    } else {
        /* Installed: said at once, before any connect can take its time. */
        dcgmh_send_state(d, DCGM_STATE_STARTING, DCGM_CALL_LOAD, DCGM_ST_OK, false, NULL);
        int rc = d->f.init();
        if (rc != DCGM_ST_OK) {
            dcgmh_send_state(d, DCGM_STATE_FAILED, DCGM_CALL_LOAD, rc, false, "dcgmInit");
            dcgmh_send_done();
        } else {
            run(d);
            dcgmh_disconnect(d);
            d->f.shutdown();
            dcgmh_send_done(); /* the last word: the client may kill us now */
        }
    }
    if (d->dl)
        dlclose(d->dl);
    free(d->vals);
    free(d);
    return 0;
}
