/*
 * dcgm_apply.c — DCGM's values into a merged snapshot, after GPM's.
 *
 * The order of trust for a device's activity: NVML's own reading, then GPM
 * (Hopper and later), then DCGM's profiling fields, then the per-process
 * sum and the slice-share estimate. So on Hopper GPM stays first and DCGM
 * fills in only where GPM has no value (off, stalled, NO_PERMISSION); on
 * Ampere MIG, DCGM is the only measurement there is.
 *
 * Where DCGM is not installed or switched off, every value keeps the
 * reason it had (the info line says "DCGM not installed"); where it is
 * installed but cannot serve (no hostengine, REQUIRES_ROOT, a hung helper),
 * that reason is added to the value's own.
 */
#include <stdio.h>
#include <string.h>

#include "backend/dcgm/dcgm.h"
#include "core/snapshot.h"

/* The metrics DCGM can fill, with their field. */
static const struct {
    enum metric_id id;
    enum dcgm_metric k;
} FILL[] = {
    {M_GPU_UTIL, DCGM_GR_ENGINE}, {M_MEM_UTIL, DCGM_DRAM},    {M_SM_UTIL, DCGM_SM_ACTIVE},
    {M_SM_OCCUPANCY, DCGM_SM_OCC}, {M_TENSOR_UTIL, DCGM_TENSOR}, {M_FP64_UTIL, DCGM_FP64},
    {M_FP32_UTIL, DCGM_FP32},      {M_FP16_UTIL, DCGM_FP16},
};

/* A value DCGM may replace: none, or one that is only an upper bound or an
 * estimate. NVML's and GPM's readings stay. */
static bool replaceable(const struct metric *m)
{
    return m->src == MSRC_NONE || m->src == MSRC_PROCESS || m->src == MSRC_ESTIMATE ||
           m->src == MSRC_CARRIED;
}

static void fill(struct device *d, const struct dcgm_view *v, bool quiet)
{
    for (size_t i = 0; i < sizeof(FILL) / sizeof(FILL[0]); i++) {
        struct metric *m = &d->m[FILL[i].id];
        if (!replaceable(m))
            continue;
        /* A non-MIG GPU's memory utilisation is NVML's memory-controller
         * busy time; DRAM_ACTIVE is another quantity and does not stand
         * in for it (the MIG-mode parent has no NVML figure at all). */
        if (FILL[i].id == M_MEM_UTIL && d->kind == DEV_GPU && !d->mig_enabled)
            continue;
        /* Whole-GPU activity of a GPU outside MIG mode is NVML's. */
        if (FILL[i].id == M_GPU_UTIL && d->kind == DEV_GPU && !d->mig_enabled)
            continue;
        struct metric x = dcgm_metric(v, FILL[i].k);
        if (metric_ok(&x))
            *m = x;
        else if (!metric_ok(m) && !quiet)
            m->why = metric_why_join(m->why, x.why);
    }
    if (d->kind == DEV_GPU) {
        static const struct {
            enum metric_id id;
            enum dcgm_metric k;
        } RATES[] = {{M_PCIE_TX, DCGM_PCIE_TX},
                     {M_PCIE_RX, DCGM_PCIE_RX},
                     {M_NVLINK_TX, DCGM_NVLINK_TX},
                     {M_NVLINK_RX, DCGM_NVLINK_RX}};
        for (size_t i = 0; i < sizeof(RATES) / sizeof(RATES[0]); i++) {
            struct metric *m = &d->m[RATES[i].id];
            struct metric x = dcgm_metric(v, RATES[i].k);
            if (!metric_ok(m) && metric_ok(&x))
                *m = x;
        }
    }
}

void dcgm_apply(const struct dcgm_client *c, struct snapshot *s)
{
    const char *desc = dcgm_client_describe(c);
    snprintf(s->dcgm_info, sizeof(s->dcgm_info), "%s", desc);
    bool quiet = !c || dcgm_client_quiet(c);
    for (size_t i = 0; i < s->ndevices; i++) {
        struct device *d = &s->devices[i];
        if (d->lost || (!d->uuid[0] && d->kind == DEV_GPU))
            continue;
        struct dcgm_view v;
        if (d->kind == DEV_GPU) {
            dcgm_client_gpu(c, d->uuid, &v);
        } else {
            if (d->gi_id < 0 || !d->parent_uuid[0])
                continue;
            dcgm_client_mig(c, d->parent_uuid, d->gi_id, d->ci_id, &v);
        }
        fill(d, &v, quiet);
        if (d->kind == DEV_MIG && d->parent_pos >= 0 && (size_t)d->parent_pos < s->ndevices) {
            /* GPU-wide DCGM rates (NVLink) are the parent's. */
            const struct device *p = &s->devices[d->parent_pos];
            for (int k = 0; k < 2; k++) {
                enum metric_id id = k ? M_NVLINK_RX : M_NVLINK_TX;
                if (!metric_ok(&d->m[id]) && p->m[id].src == MSRC_DCGM)
                    d->m[id] = p->m[id];
            }
        }
    }
}
