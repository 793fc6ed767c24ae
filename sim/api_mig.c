/*
 * api_mig.c — the MIG handle API (docs/nvml-facts.md §7).
 *
 * MIG device handles are fixed per (GPU, slot); a slot is empty (NOT_FOUND)
 * or holds the MIG device the scenario places there at the current time.
 * Return codes for calls on the wrong kind of handle follow the nvml.h
 * return lists: "NOT_SUPPORTED if device doesn't support this feature" (or
 * does not have MIG mode enabled), INVALID_ARGUMENT for an argument that is
 * not the kind of handle the call takes.
 */
#include <string.h>

#include "model.h"

static nvmlReturn_t mig_mode(struct sim_call *c, unsigned *cur, unsigned *pend)
{
    if (!cur || !pend)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.m || c->d.g->mig_mode == SIM_MIG_UNSUPPORTED)
        return NVML_ERROR_NOT_SUPPORTED;
    *cur = (unsigned)c->d.g->mig_mode;
    *pend = (unsigned)c->d.g->mig_pending;
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetMigMode,
              (nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode),
              mig_mode(&c, currentMode, pendingMode))

static nvmlReturn_t is_mig(struct sim_call *c, unsigned *is)
{
    if (!is)
        return NVML_ERROR_INVALID_ARGUMENT;
    *is = c->d.m != NULL;
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceIsMigDeviceHandle, (nvmlDevice_t device, unsigned int *isMigDevice),
              is_mig(&c, isMigDevice))

/* The maximum number of MIG *devices* (7 on A100/H100/H200), 0 with MIG off
 * or unsupported. Not a slice count (seed errata). */
static nvmlReturn_t max_mig(struct sim_call *c, unsigned *count)
{
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.m)
        return NVML_ERROR_NOT_SUPPORTED;
    *count = c->d.mig_on ? c->d.g->profiles->max_mig_devices : 0;
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetMaxMigDeviceCount, (nvmlDevice_t device, unsigned int *count),
              max_mig(&c, count))

static nvmlReturn_t mig_by_index(struct sim_call *c, unsigned index, nvmlDevice_t *out)
{
    nvmlReturn_t r;
    if (!out || c->d.m)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!c->d.mig_on)
        return NVML_ERROR_NOT_SUPPORTED;
    if (index >= c->d.g->profiles->max_mig_devices)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!sim_mig_live(c->d.gpu, (int)index, c->t))
        return NVML_ERROR_NOT_FOUND; /* an empty slot: callers must iterate all */
    r = sim_fault(c, c->d.gpu, (int)index);
    if (r == NVML_SUCCESS)
        *out = sim_mig_handle(c->d.gpu, (int)index);
    return r;
}

SIM_DEVICE_FN(nvmlDeviceGetMigDeviceHandleByIndex,
              (nvmlDevice_t device, unsigned int index, nvmlDevice_t *migDevice),
              mig_by_index(&c, index, migDevice))

static nvmlReturn_t parent_of(struct sim_call *c, nvmlDevice_t *parent)
{
    if (!parent)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!c->d.m)
        return c->d.mig_on ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_NOT_SUPPORTED;
    *parent = sim_gpu_handle(c->d.gpu);
    return NVML_SUCCESS;
}

/* The exported parameter is named migDevice; the wrapper macro wants `device`. */
nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice,
                                                          nvmlDevice_t *device)
{
    struct sim_call c;
    nvmlReturn_t r = sim_enter_dev(&c, SYM_nvmlDeviceGetDeviceHandleFromMigDeviceHandle, migDevice);
    if (r == NVML_SUCCESS)
        r = parent_of(&c, device);
    return sim_leave(r);
}

static nvmlReturn_t instance_id(struct sim_call *c, unsigned *id, bool gi)
{
    if (!id)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!c->d.m)
        return NVML_ERROR_NOT_SUPPORTED;
    *id = (unsigned)(gi ? c->d.m->gi : c->d.m->ci);
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetGpuInstanceId, (nvmlDevice_t device, unsigned int *id),
              instance_id(&c, id, true))
SIM_DEVICE_FN(nvmlDeviceGetComputeInstanceId, (nvmlDevice_t device, unsigned int *id),
              instance_id(&c, id, false))

/* Accepts only MIG device handles (3 on a full GPU). A compute instance
 * smaller than its GPU instance gets its share of the SMs. */
static nvmlReturn_t attributes(struct sim_call *c, nvmlDeviceAttributes_t *a)
{
    const struct sim_mig *m = c->d.m;
    if (!a)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!m)
        return NVML_ERROR_NOT_SUPPORTED;
    memset(a, 0, sizeof(*a));
    a->multiprocessorCount = m->profile->sms * m->ci_slices / m->profile->slices;
    a->sharedCopyEngineCount = m->profile->ce;
    a->sharedDecoderCount = m->profile->dec;
    a->sharedEncoderCount = m->profile->enc;
    a->sharedJpegCount = m->profile->jpg;
    a->sharedOfaCount = m->profile->ofa;
    a->gpuInstanceSliceCount = m->profile->slices;
    a->computeInstanceSliceCount = m->ci_slices;
    a->memorySizeMB = m->profile->mem_mib;
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetAttributes,
              (nvmlDevice_t device, nvmlDeviceAttributes_t *attributes_),
              attributes(&c, attributes_))
SIM_DEVICE_FN(nvmlDeviceGetAttributes_v2,
              (nvmlDevice_t device, nvmlDeviceAttributes_t *attributes_),
              attributes(&c, attributes_))

/* NVML_GPU_INSTANCE_PROFILE_COUNT of the driver's header: 0x0A up to 565,
 * then the GFX / NO_ME / ALL_ME profiles (docs/nvml-facts.md §7). */
static unsigned profile_count(void)
{
    if (sim_driver_at_least(580, 0, 0))
        return 0x12;
    if (sim_driver_at_least(570, 0, 0))
        return 0x11;
    return 0x0A;
}

/* Enumerate with profile = 0, 1, ... until INVALID_ARGUMENT; an index this
 * GPU lacks (e.g. 8_SLICE, 6_SLICE) is NOT_SUPPORTED. */
static nvmlReturn_t gi_profile(struct sim_call *c, unsigned index,
                               nvmlGpuInstanceProfileInfo_t *info)
{
    const struct sim_profile *p;
    if (!info || c->d.m)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!c->d.mig_on)
        return NVML_ERROR_NOT_SUPPORTED;
    if (index >= profile_count())
        return NVML_ERROR_INVALID_ARGUMENT;
    p = profiles_by_index(c->d.g->profiles, index);
    if (!p)
        return NVML_ERROR_NOT_SUPPORTED;
    memset(info, 0, sizeof(*info));
    info->id = p->id;
    info->isP2pSupported = 0;
    info->sliceCount = p->slices;
    info->instanceCount = p->instances;
    info->multiprocessorCount = p->sms;
    info->copyEngineCount = p->ce;
    info->decoderCount = p->dec;
    info->encoderCount = p->enc;
    info->jpegCount = p->jpg;
    info->ofaCount = p->ofa;
    info->memorySizeMB = p->mem_mib;
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetGpuInstanceProfileInfo,
              (nvmlDevice_t device, unsigned int profile, nvmlGpuInstanceProfileInfo_t *info),
              gi_profile(&c, profile, info))
