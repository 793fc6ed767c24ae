/*
 * api_procs.c — running-process lists (docs/nvml-facts.md §6).
 *
 * One list builder serves every symbol; they differ only in the entry layout
 * they write:
 *   unversioned  nvmlProcessInfo_v1_t, 16 bytes (pid, usedGpuMemory)
 *   _v2          nvmlProcessInfo_v2_t, 24 bytes (+ gpuInstanceId, computeInstanceId)
 *   _v3          24 bytes, except drivers 535.43.02-535.86.x whose header grew
 *                the struct to 32 bytes (+ usedGpuCcProtectedMemory) without a
 *                version bump (nvidia-settings src/nvml.h per tag; nvitop PRs #79, #89, #94)
 *   DetailList   nvmlProcessDetail_v1_t, 32 bytes
 *
 * Protocol: *count too small (or a NULL buffer) -> INSUFFICIENT_SIZE with
 * the count needed; no processes -> SUCCESS with 0. A MIG-enabled parent
 * lists the aggregate (with GI/CI ids) only for a privileged caller.
 *
 * With process_grow set, a process appears right after every size query
 * (NULL buffer), so a caller that allocates exactly the reported count sees
 * INSUFFICIENT_SIZE once more; it leaves after the caller has read it.
 *
 * A hostile GPU with procs_insufficient_storm answers every list call, on
 * any of its handles, with INSUFFICIENT_SIZE and *count = *count x 2 + 1000
 * (saturating at UINT_MAX), whatever the buffer: a driver that makes a
 * caller who trusts the count grow its buffer without bound. It never blocks.
 */
#include <string.h>

#include "model.h"

enum layout { L_V1, L_V2, L_V3, L_DETAIL };
enum { K_COMPUTE, K_GRAPHICS, K_MPS };
static const unsigned kind_bits[3] = {SIM_PROC_COMPUTE, SIM_PROC_GRAPHICS, SIM_PROC_MPS};

static size_t stride_of(enum layout l)
{
    switch (l) {
    case L_V1:
        return sizeof(nvmlProcessInfo_v1_t);
    case L_V2:
        return sizeof(nvmlProcessInfo_v2_t);
    case L_V3:
        /* [535.43.02, 535.98): the 32-byte struct. 535.98 itself does not
         * export _v3 (sim/symbols.txt), so the bound never matters there. */
        if (sim_driver_at_least(535, 43, 2) && !sim_driver_at_least(535, 98, 0))
            return sizeof(nvmlProcessInfo_535cc_t);
        return sizeof(nvmlProcessInfo_v2_t);
    case L_DETAIL:
        return sizeof(nvmlProcessDetail_v1_t);
    }
    return 0;
}

static void write_entry(void *dst, size_t stride, const struct model_proc *p)
{
    memset(dst, 0, stride);
    if (stride == sizeof(nvmlProcessInfo_v1_t)) {
        nvmlProcessInfo_v1_t *e = dst;
        e->pid = p->pid;
        e->usedGpuMemory = p->used;
    } else {
        /* v2, the 535 "v3" and the detail struct share the first 24 bytes;
         * protected memory stays 0 (no Confidential Computing, and none is
         * reported in MIG mode). */
        nvmlProcessInfo_v2_t *e = dst;
        e->pid = p->pid;
        e->usedGpuMemory = p->used;
        e->gpuInstanceId = p->gi;
        e->computeInstanceId = p->ci;
    }
}

static bool grow_enabled(const struct sim_call *c)
{
    return c->d.m ? c->d.m->process_grow : c->d.g->process_grow;
}

/* The transient process of the process_grow race, on this device. */
static void grow_entry(const struct sim_call *c, struct model_proc *p)
{
    const struct sim_mig *m = c->d.m;
    memset(p, 0, sizeof(*p));
    if (!m && c->d.mig_on)
        for (int s = 0; s < SIM_MAX_MIG_SLOTS && !m; s++)
            m = sim_mig_live(c->d.gpu, s, c->t);
    p->pid = m ? m->grow_pid : c->d.g->grow_pid;
    p->used = (unsigned long long)((m ? m->grow_used_mib : c->d.g->grow_used_mib) * (double)MIB);
    p->gi = m ? (unsigned)m->gi : NVML_INVALID_INSTANCE_ID;
    p->ci = m ? (unsigned)m->ci : NVML_INVALID_INSTANCE_ID;
}

static nvmlReturn_t running(struct sim_call *c, unsigned kinds, int flag_kind, unsigned *count,
                            void *infos, enum layout layout)
{
    struct model_proc p[MODEL_MAX_PROCS];
    bool *grown;
    size_t stride = stride_of(layout);
    int n;

    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.mig_on && !c->d.m && !sim_scn->sys.privileged)
        return NVML_ERROR_NO_PERMISSION;
    if (c->d.g->procs_storm) {
        unsigned long long want = (unsigned long long)*count * 2 + 1000;
        *count = want > 0xFFFFFFFFull ? 0xFFFFFFFFu : (unsigned)want;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    n = model_procs(&c->d, c->t, kinds, p);
    grown = sim_grow_flag(c->d.gpu, c->d.slot, flag_kind);
    if (grow_enabled(c) && flag_kind == K_COMPUTE) {
        if (*grown)
            grow_entry(c, &p[n++]);
        if (!infos)
            *grown = true; /* arrives just after this count was taken */
    }
    if (n == 0) {
        *count = 0;
        return NVML_SUCCESS;
    }
    if (!infos || *count < (unsigned)n) {
        *count = (unsigned)n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (int i = 0; i < n; i++)
        write_entry((char *)infos + (size_t)i * stride, stride, &p[i]);
    *count = (unsigned)n;
    *grown = false; /* seen: it exits again */
    return NVML_SUCCESS;
}

#define RUNNING_FNS(Kind, K)                                                                      \
    SIM_DEVICE_FN(nvmlDeviceGet##Kind##RunningProcesses,                                          \
                  (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v1_t *infos),    \
                  running(&c, kind_bits[K], K, infoCount, infos, L_V1))                            \
    SIM_DEVICE_FN(nvmlDeviceGet##Kind##RunningProcesses_v2,                                       \
                  (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v2_t *infos),    \
                  running(&c, kind_bits[K], K, infoCount, infos, L_V2))                            \
    SIM_DEVICE_FN(nvmlDeviceGet##Kind##RunningProcesses_v3,                                       \
                  (nvmlDevice_t device, unsigned int *infoCount, void *infos),                    \
                  running(&c, kind_bits[K], K, infoCount, infos, L_V3))

RUNNING_FNS(Compute, K_COMPUTE)
RUNNING_FNS(Graphics, K_GRAPHICS)
RUNNING_FNS(MPSCompute, K_MPS)

/* 535.104.05+; "For Hopper or newer fully supported devices". */
static nvmlReturn_t detail_list(struct sim_call *c, nvmlProcessDetailList_v1_t *pl)
{
    unsigned kinds;
    if (!pl)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (pl->version != nvmlProcessDetailList_v1)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (pl->mode <= 2)
        kinds = kind_bits[pl->mode];
    else if (pl->mode == 3 && sim_driver_at_least(580, 0, 0)) /* ALL: 13.x headers only */
        kinds = SIM_PROC_COMPUTE | SIM_PROC_GRAPHICS | SIM_PROC_MPS;
    else
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.g->arch < NVML_DEVICE_ARCH_HOPPER)
        return NVML_ERROR_NOT_SUPPORTED;
    return running(c, kinds, pl->mode <= 2 ? (int)pl->mode : K_COMPUTE, &pl->numProcArrayEntries,
                   pl->procArray, L_DETAIL);
}

SIM_DEVICE_FN(nvmlDeviceGetRunningProcessDetailList,
              (nvmlDevice_t device, nvmlProcessDetailList_v1_t *plist), detail_list(&c, plist))

/* Confidential Computing memory split (Hopper and later). CC is off in every
 * scenario, so nothing is protected. Its presence with _v3 and without
 * DetailList is how nvitop detects the 32-byte 535 process struct. */
static nvmlReturn_t cc_mem(struct sim_call *c, nvmlConfComputeMemSizeInfo_t *info)
{
    if (!info)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.m || c->d.g->arch < NVML_DEVICE_ARCH_HOPPER)
        return NVML_ERROR_NOT_SUPPORTED;
    info->protectedMemSizeKib = 0;
    info->unprotectedMemSizeKib = c->d.g->mem_total_mib * 1024;
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetConfComputeMemSizeInfo,
              (nvmlDevice_t device, nvmlConfComputeMemSizeInfo_t *memInfo), cc_mem(&c, memInfo))
