/*
 * values.c — what the simulated DCGM reports: its GPUs (DCGM GPU id = NVML
 * index), the MIG hierarchy, field values and the profiling metric groups.
 * See dcgm_sim.h.
 *
 * Entities. A GPU in MIG mode has its GPU instances numbered in the order
 * of their first MIG device (slot order), and its compute instances (the
 * simulator's MIG devices) in slot order; DCGM's entity id of either is
 * gpuId * DCGM_MAX_INSTANCES_PER_GPU + that index, as DCGM numbers them.
 *
 * Activity. The profiling fields come from the scenario's gpm_* rates
 * through gpm_rates.c, the same numbers NVML's GPM reports for the same
 * entity and interval, whatever the architecture: DCGM serves Ampere from
 * its profiling module and Hopper from GPM. Ratios are the percentages / 100;
 * PCIe and NVLink bytes are MiB/s × 1048576, per second (whole GPUs only).
 */
#include "dcgm_sim.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define CI_NONE 0xffffffffu /* nvmlComputeInstanceId of a GI row */

struct inst {
    long gi;                 /* NVML GI id */
    unsigned gi_local;       /* the GI's index on its GPU */
    const struct sim_mig *m; /* the CI; for a GI, its first CI */
};

/* The GIs (gi true) or CIs of gpu at t in DCGM's order; returns the count. */
static int layout(int gpu, double t, bool gi, struct inst out[SIM_MAX_MIG_SLOTS])
{
    long gis[SIM_MAX_MIG_SLOTS];
    int ngi = 0, n = 0;
    if (gpu < 0 || gpu >= sim_scn->n_gpus || sim_scn->gpus[gpu].mig_mode != SIM_MIG_ON ||
        !sim_scn->gpus[gpu].accessible)
        return 0;
    for (int slot = 0; slot < SIM_MAX_MIG_SLOTS; slot++) {
        const struct sim_mig *m = sim_mig_live(gpu, slot, t);
        int k = 0;
        if (!m)
            continue;
        while (k < ngi && gis[k] != m->gi)
            k++;
        if (k == ngi) {
            gis[ngi++] = m->gi;
            if (gi)
                out[n++] = (struct inst){m->gi, (unsigned)k, m};
        }
        if (!gi)
            out[n++] = (struct inst){m->gi, (unsigned)k, m};
    }
    return n;
}

int dcgm_entity_gpu(dcgmGroupEntityPair_t e)
{
    if (e.entityGroupId == DCGM_FE_GPU)
        return (int)e.entityId;
    if (e.entityGroupId == DCGM_FE_GPU_I || e.entityGroupId == DCGM_FE_GPU_CI)
        return (int)(e.entityId / DCGM_MAX_INSTANCES_PER_GPU);
    return -1;
}

bool dcgm_entity_resolve(const struct dcgm_conn *c, dcgmGroupEntityPair_t e, double t,
                         struct gpm_target *out)
{
    struct inst in[SIM_MAX_MIG_SLOTS];
    int gpu = dcgm_entity_gpu(e), n;
    unsigned local = e.entityId % DCGM_MAX_INSTANCES_PER_GPU;
    if (gpu < 0 || gpu >= sim_scn->n_gpus || !sim_scn->gpus[gpu].accessible)
        return false;
    if (e.entityGroupId == DCGM_FE_GPU) {
        *out = (struct gpm_target){GPM_GPU, gpu, -1, -1};
        return true;
    }
    if (dcgm_mig_denied(c))
        return false;
    n = layout(gpu, t, e.entityGroupId == DCGM_FE_GPU_I, in);
    if ((int)local >= n)
        return false;
    if (e.entityGroupId == DCGM_FE_GPU_I)
        *out = (struct gpm_target){GPM_GI, gpu, in[local].gi, -1};
    else
        *out = (struct gpm_target){GPM_CI, gpu, in[local].gi, (int)(in[local].m - sim_scn->migs)};
    return true;
}

int dcgm_instances(bool gi, double t, dcgmGroupEntityPair_t *out, int max)
{
    int n = 0;
    for (int gpu = 0; gpu < sim_scn->n_gpus; gpu++) {
        struct inst in[SIM_MAX_MIG_SLOTS];
        int k = layout(gpu, t, gi, in);
        for (int i = 0; i < k && n < max; i++)
            out[n++] =
                (dcgmGroupEntityPair_t){gi ? DCGM_FE_GPU_I : DCGM_FE_GPU_CI,
                                        (dcgm_field_eid_t)(gpu * DCGM_MAX_INSTANCES_PER_GPU + i)};
    }
    return n;
}

dcgmReturn_t dcgmGetAllSupportedDevices(dcgmHandle_t pDcgmHandle,
                                        unsigned int gpuIdList[DCGM_MAX_NUM_DEVICES], int *count)
{
    struct dcgm_conn *c;
    double t;
    dcgmReturn_t r = dcgm_enter_conn(FN_dcgmGetAllSupportedDevices, pDcgmHandle, false, &c, &t);
    int n = 0;
    if (r != DCGM_ST_OK)
        return dcgm_leave(r);
    if (!gpuIdList || !count)
        return dcgm_leave(DCGM_ST_BADPARAM);
    for (int i = 0; i < sim_scn->n_gpus && n < DCGM_MAX_NUM_DEVICES; i++)
        if (sim_scn->gpus[i].accessible)
            gpuIdList[n++] = (unsigned)i;
    *count = n;
    return dcgm_leave(DCGM_ST_OK);
}

/* NVML's compute-instance profile id for a CI of this many slices
 * (NVML_COMPUTE_INSTANCE_PROFILE_*_SLICE). */
static unsigned ci_profile_id(unsigned slices)
{
    static const unsigned ids[9] = {0, 0, 1, 2, 3, 0, 6, 4, 5};
    return slices < 9 ? ids[slices] : 0;
}

/* Each GPU's GI rows, each followed by its CI rows (dcgm-exporter walks
 * them in that order). */
static void hierarchy_fill(dcgmMigHierarchy_v2 *h, double t)
{
    h->count = 0;
    for (int gpu = 0; gpu < sim_scn->n_gpus; gpu++) {
        struct inst gis[SIM_MAX_MIG_SLOTS], cis[SIM_MAX_MIG_SLOTS];
        int ngi = layout(gpu, t, true, gis), nci = layout(gpu, t, false, cis);
        const struct sim_gpu *g = &sim_scn->gpus[gpu];
        for (int i = 0; i < ngi && h->count < DCGM_MAX_HIERARCHY_INFO; i++) {
            dcgm_field_eid_t gid = (dcgm_field_eid_t)(gpu * DCGM_MAX_INSTANCES_PER_GPU + i);
            dcgmMigHierarchyInfo_v2 *row = &h->entityList[h->count++];
            memset(row, 0, sizeof(*row));
            row->entity = (dcgmGroupEntityPair_t){DCGM_FE_GPU_I, gid};
            row->parent = (dcgmGroupEntityPair_t){DCGM_FE_GPU, (dcgm_field_eid_t)gpu};
            snprintf(row->info.gpuUuid, sizeof(row->info.gpuUuid), "%s", g->uuid);
            row->info.nvmlGpuIndex = (unsigned)gpu;
            row->info.nvmlInstanceId = (unsigned)gis[i].gi;
            row->info.nvmlComputeInstanceId = CI_NONE;
            row->info.nvmlMigProfileId = gis[i].m->profile->id;
            row->info.nvmlProfileSlices = gis[i].m->profile->slices;
            for (int j = 0; j < nci && h->count < DCGM_MAX_HIERARCHY_INFO; j++) {
                if (cis[j].gi != gis[i].gi)
                    continue;
                row = &h->entityList[h->count++];
                memset(row, 0, sizeof(*row));
                row->entity = (dcgmGroupEntityPair_t){
                    DCGM_FE_GPU_CI, (dcgm_field_eid_t)(gpu * DCGM_MAX_INSTANCES_PER_GPU + j)};
                row->parent = (dcgmGroupEntityPair_t){DCGM_FE_GPU_I, gid};
                snprintf(row->info.gpuUuid, sizeof(row->info.gpuUuid), "%s", g->uuid);
                row->info.nvmlGpuIndex = (unsigned)gpu;
                row->info.nvmlInstanceId = (unsigned)cis[j].gi;
                row->info.nvmlComputeInstanceId = (unsigned)cis[j].m->ci;
                row->info.nvmlMigProfileId = ci_profile_id(cis[j].m->ci_slices);
                row->info.nvmlProfileSlices = cis[j].m->ci_slices;
            }
        }
    }
}

dcgmReturn_t dcgmGetGpuInstanceHierarchy(dcgmHandle_t dcgmHandle, dcgmMigHierarchy_v2 *hierarchy)
{
    struct dcgm_conn *c;
    double t;
    dcgmReturn_t r = dcgm_enter_conn(FN_dcgmGetGpuInstanceHierarchy, dcgmHandle, false, &c, &t);
    if (r != DCGM_ST_OK)
        return dcgm_leave(r);
    if (!hierarchy)
        return dcgm_leave(DCGM_ST_BADPARAM);
    if (hierarchy->version != dcgmMigHierarchy_version2)
        return dcgm_leave(DCGM_ST_VER_MISMATCH);
    if (dcgm_mig_denied(c))
        return dcgm_leave(DCGM_ST_REQUIRES_ROOT);
    hierarchy_fill(hierarchy, t);
    return dcgm_leave(DCGM_ST_OK);
}

/* ---- field values ---- */

bool dcgm_is_prof_field(unsigned short f)
{
    return f >= DCGM_FI_PROF_GR_ENGINE_ACTIVE && f <= DCGM_FI_PROF_NVLINK_RX_BYTES;
}

/* Under multi_pass: tensor and the FP pipes in pass 1, the rest in pass 0. */
int dcgm_prof_pass(unsigned short f)
{
    return f == DCGM_FI_PROF_PIPE_TENSOR_ACTIVE || f == DCGM_FI_PROF_PIPE_FP64_ACTIVE ||
           f == DCGM_FI_PROF_PIPE_FP32_ACTIVE || f == DCGM_FI_PROF_PIPE_FP16_ACTIVE;
}

/* The gpm rate (enum sim_gpm_rate) of a profiling field. */
static int prof_rate(unsigned short f)
{
    static const int rates[] = {
        SIM_GPM_GRAPHICS, SIM_GPM_SM,      SIM_GPM_SM_OCCUPANCY, SIM_GPM_TENSOR,
        SIM_GPM_DRAM_BW,  SIM_GPM_FP64,    SIM_GPM_FP32,         SIM_GPM_FP16,
        SIM_GPM_PCIE_TX,  SIM_GPM_PCIE_RX, SIM_GPM_NVLINK_TX,    SIM_GPM_NVLINK_RX,
    };
    return rates[f - DCGM_FI_PROF_GR_ENGINE_ACTIVE];
}

static unsigned short field_type(unsigned short f)
{
    if (f == DCGM_FI_DEV_UUID)
        return DCGM_FT_STRING;
    if (dcgm_is_prof_field(f) && f < DCGM_FI_PROF_PCIE_TX_BYTES)
        return DCGM_FT_DOUBLE;
    return DCGM_FT_INT64;
}

/* No value: a sentinel of the field's type and the reason in status. */
static void blank(dcgmFieldValue_v2 *v, int status)
{
    bool ns = status == DCGM_ST_NOT_SUPPORTED,
         nf = status == DCGM_ST_INSTANCE_NOT_FOUND || status == DCGM_ST_COMPUTE_INSTANCE_NOT_FOUND;
    v->status = status;
    if (v->fieldType == DCGM_FT_STRING)
        snprintf(v->value.str, sizeof(v->value.str), "%s",
                 ns   ? DCGM_STR_NOT_SUPPORTED
                 : nf ? DCGM_STR_NOT_FOUND
                      : DCGM_STR_BLANK);
    else if (v->fieldType == DCGM_FT_DOUBLE)
        v->value.dbl = ns ? DCGM_FP64_NOT_SUPPORTED : nf ? DCGM_FP64_NOT_FOUND : DCGM_FP64_BLANK;
    else
        v->value.i64 = ns ? DCGM_INT64_NOT_SUPPORTED : nf ? DCGM_INT64_NOT_FOUND : DCGM_INT64_BLANK;
}

/* The value of field f of entity tg over [t1, t2], timestamped t2. */
static void value_of(dcgmFieldValue_v2 *v, const struct gpm_target *tg, double t1, double t2)
{
    double x;
    v->ts = (int64_t)sim_timestamp_us(t2);
    if (v->fieldId == DCGM_FI_DEV_UUID) {
        if (tg->kind != GPM_GPU) {
            blank(v, DCGM_ST_NOT_SUPPORTED);
            return;
        }
        v->status = DCGM_ST_OK;
        snprintf(v->value.str, sizeof(v->value.str), "%s", sim_scn->gpus[tg->gpu].uuid);
        return;
    }
    if (!dcgm_is_prof_field(v->fieldId) ||
        gpm_rate_mean(tg, prof_rate(v->fieldId), t1, t2, &x) != NVML_SUCCESS) {
        blank(v, DCGM_ST_NOT_SUPPORTED);
        return;
    }
    v->status = DCGM_ST_OK;
    if (v->fieldType == DCGM_FT_DOUBLE)
        v->value.dbl = x / 100.0;
    else
        v->value.i64 = isfinite(x) ? (int64_t)llround(x * 1048576.0) : DCGM_INT64_BLANK;
}

/*
 * One record. Status per value: the entity must exist now (else
 * INSTANCE_NOT_FOUND / COMPUTE_INSTANCE_NOT_FOUND, BADPARAM for a GPU);
 * fields this library does not model are NOT_SUPPORTED; the GPU's UUID is
 * read live with DCGM_FV_FLAG_LIVE_DATA; anything else needs a watch
 * (NOT_WATCHED) and a first sample: until the first update cycle a watched
 * field reads BLANK with NO_DATA, as DcgmCacheManager's
 * PrecheckWatchInfoForSamples answers for a watch without samples.
 */
static void record(struct dcgm_conn *c, dcgmFieldValue_v2 *v, dcgmGroupEntityPair_t e,
                   unsigned short f, unsigned flags, double t)
{
    struct gpm_target tg;
    const struct dcgm_watch *w;
    memset(v, 0, offsetof(dcgmFieldValue_v2, value) + sizeof(v->value.str));
    v->version = dcgmFieldValue_version2;
    v->entityGroupId = e.entityGroupId;
    v->entityId = e.entityId;
    v->fieldId = f;
    v->fieldType = field_type(f);
    v->ts = (int64_t)sim_timestamp_us(t);
    if (!dcgm_entity_resolve(c, e, t, &tg)) {
        blank(v, e.entityGroupId == DCGM_FE_GPU_I    ? DCGM_ST_INSTANCE_NOT_FOUND
                 : e.entityGroupId == DCGM_FE_GPU_CI ? DCGM_ST_COMPUTE_INSTANCE_NOT_FOUND
                                                     : DCGM_ST_BADPARAM);
        return;
    }
    if (f != DCGM_FI_DEV_UUID && !dcgm_is_prof_field(f)) {
        blank(v, DCGM_ST_NOT_SUPPORTED);
        return;
    }
    if (f == DCGM_FI_DEV_UUID && (flags & DCGM_FV_FLAG_LIVE_DATA)) {
        value_of(v, &tg, t, t);
        return;
    }
    if (!(w = dcgm_watch_get(c, e, f))) {
        blank(v, DCGM_ST_NOT_WATCHED);
        return;
    }
    if (!w->sampled) {
        blank(v, DCGM_ST_NO_DATA);
        return;
    }
    value_of(v, &tg, w->t_from, w->t_sample);
}

/* Records in entity-major order: entity i, field j at i * fieldCount + j. */
dcgmReturn_t dcgmEntitiesGetLatestValues(dcgmHandle_t pDcgmHandle, dcgmGroupEntityPair_t entities[],
                                         unsigned int entityCount, unsigned short fields[],
                                         unsigned int fieldCount, unsigned int flags,
                                         dcgmFieldValue_v2 values[])
{
    struct dcgm_conn *c;
    double t;
    dcgmReturn_t r = dcgm_enter_conn(FN_dcgmEntitiesGetLatestValues, pDcgmHandle, true, &c, &t);
    if (r != DCGM_ST_OK)
        return dcgm_leave(r);
    dcgm_maybe_hang(SIM_DCGM_HANG_READ, t);
    if (!entities || !fields || !values || entityCount == 0 || fieldCount == 0)
        return dcgm_leave(DCGM_ST_BADPARAM);
    dcgm_watches_advance(c, t);
    for (unsigned i = 0; i < entityCount; i++)
        for (unsigned j = 0; j < fieldCount; j++)
            record(c, &values[(size_t)i * fieldCount + j], entities[i], fields[j], flags, t);
    return dcgm_leave(DCGM_ST_OK);
}

/* ---- profiling metric groups ---- */

static void metric_group(dcgmProfMetricGroupInfo_v2 *g, unsigned minor, int pass)
{
    memset(g, 0, sizeof(*g));
    g->majorId = 0;
    g->minorId = (unsigned short)minor;
    for (unsigned short f = DCGM_FI_PROF_GR_ENGINE_ACTIVE; f <= DCGM_FI_PROF_NVLINK_RX_BYTES; f++)
        if (pass < 0 || dcgm_prof_pass(f) == pass)
            g->fieldIds[g->numFieldIds++] = f;
}

/* One group of every profiling field, or under multi_pass on a GPU before
 * Hopper two that share majorId 0 (so they cannot be watched together).
 * NVIDIA documents no A100 table; this split keeps dcgm-exporter's default
 * counters (1001, 1005, 1009, 1010) in one pass and tensor (1004) apart. */
dcgmReturn_t dcgmProfGetSupportedMetricGroups(dcgmHandle_t dcgmHandle,
                                              dcgmProfGetMetricGroups_v3 *metricGroups)
{
    struct dcgm_conn *c;
    double t;
    dcgmReturn_t r =
        dcgm_enter_conn(FN_dcgmProfGetSupportedMetricGroups, dcgmHandle, false, &c, &t);
    const struct sim_gpu *g;
    if (r != DCGM_ST_OK)
        return dcgm_leave(r);
    if (!metricGroups)
        return dcgm_leave(DCGM_ST_BADPARAM);
    if (metricGroups->version != dcgmProfGetMetricGroups_version3)
        return dcgm_leave(DCGM_ST_VER_MISMATCH);
    if (c->embedded && (c->prof_denied || sim_scn->dcgm.embedded == SIM_DCGM_EMB_MODULE_NOT_LOADED))
        return dcgm_leave(DCGM_ST_MODULE_NOT_LOADED);
    if (metricGroups->gpuId >= (unsigned)sim_scn->n_gpus ||
        !sim_scn->gpus[metricGroups->gpuId].accessible)
        return dcgm_leave(DCGM_ST_BADPARAM);
    g = &sim_scn->gpus[metricGroups->gpuId];
    metricGroups->unused = 0;
    if (sim_scn->dcgm.multi_pass && g->arch < NVML_DEVICE_ARCH_HOPPER) {
        metricGroups->numMetricGroups = 2;
        metric_group(&metricGroups->metricGroups[0], 0, 0);
        metric_group(&metricGroups->metricGroups[1], 1, 1);
    } else {
        metricGroups->numMetricGroups = 1;
        metric_group(&metricGroups->metricGroups[0], 0, -1);
    }
    return dcgm_leave(DCGM_ST_OK);
}
