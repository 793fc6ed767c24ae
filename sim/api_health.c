/*
 * api_health.c — the health counters: remapped rows, retired pages, the
 * PCIe replay counter, NVLink link states and error counters, and the
 * time clocks were held below the application clocks (violation status).
 *
 * Semantics (hdr):
 *   nvmlDeviceGetRemappedRows      Ampere and later; NOT_SUPPORTED "If MIG is
 *                                  enabled" (the note: "On MIG-enabled GPUs with
 *                                  active instances ... not supported").
 *   nvmlDeviceGetRetiredPages      the count of one cause; "Set to 0 to query the
 *                                  size": a short buffer (0 included) answers
 *                                  INSUFFICIENT_SIZE with the count needed, a NULL
 *                                  buffer with a count above 0 INVALID_ARGUMENT.
 *                                  Ampere and later answer NOT_SUPPORTED (they
 *                                  remap rows instead), as does the pending status.
 *   nvmlDeviceGetNvLinkState /     NOT_SUPPORTED on a GPU without NVLink,
 *   nvmlDeviceGetNvLinkErrorCounter INVALID_ARGUMENT for a link past its last or
 *                                  past the driver's NVML_NVLINK_MAX_LINKS.
 *   nvmlDeviceGetViolationStatus   violationTime in ns, referenceTime the call's
 *                                  timestamp (µs); power (0) and thermal (1) are
 *                                  modelled, the other policies NOT_SUPPORTED.
 * All are GPU-wide: a MIG device handle answers NOT_SUPPORTED. A scenario's
 * *_return key makes a call answer that code after its argument checks.
 */
#include <string.h>

#include "model.h"

_Static_assert(SIM_NVL_REPLAY == NVML_NVLINK_ERROR_DL_REPLAY &&
                   SIM_NVL_RECOVERY == NVML_NVLINK_ERROR_DL_RECOVERY &&
                   SIM_NVL_CRC_FLIT == NVML_NVLINK_ERROR_DL_CRC_FLIT &&
                   SIM_NVL_CRC_DATA == NVML_NVLINK_ERROR_DL_CRC_DATA,
               "the scenario's NVLink counters are numbered as nvmlNvLinkErrorCounter_t");

/* ---- remapped rows ---- */

static nvmlReturn_t remapped_rows(struct sim_call *c, unsigned *corr, unsigned *unc,
                                  unsigned *pending, unsigned *failure)
{
    const struct sim_gpu *g = c->d.g;
    unsigned *out[SIM_REMAP_N] = {corr, unc, pending, failure};
    if (!corr || !unc || !pending || !failure)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.m || c->d.mig_on)
        return NVML_ERROR_NOT_SUPPORTED;
    if (g->rc[SIM_HRC_REMAP])
        return g->rc[SIM_HRC_REMAP];
    for (int k = 0; k < SIM_REMAP_N; k++)
        if (!valfn_supported(&g->remap[k]))
            return NVML_ERROR_NOT_SUPPORTED;
    for (int k = 0; k < SIM_REMAP_N; k++)
        *out[k] = k < SIM_REMAP_PENDING ? model_sat_u32(valfn_eval(&g->remap[k], c->t))
                                        : model_uint(&g->remap[k], c->t, 0, 1);
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetRemappedRows,
              (nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows,
               unsigned int *isPending, unsigned int *failureOccurred),
              remapped_rows(&c, corrRows, uncRows, isPending, failureOccurred))

/* nvml.h 13.2: the same rows, split into active and inactive remaps; the
 * same answers as v1 (NOT_SUPPORTED "If MIG is enabled"). v1's counts
 * are taken as the active ones. */
static nvmlReturn_t remapped_rows_v2(struct sim_call *c, nvmlRemappedRowsInfo_v2_t *info)
{
    unsigned v[SIM_REMAP_N];
    nvmlReturn_t r;
    if (!info)
        return NVML_ERROR_INVALID_ARGUMENT;
    if ((r = remapped_rows(c, &v[0], &v[1], &v[2], &v[3])) != NVML_SUCCESS)
        return r;
    for (int k = 0; k < 2; k++)
        if (!valfn_supported(&c->d.g->remap_inactive[k]))
            return NVML_ERROR_NOT_SUPPORTED;
    info->corrActiveRemaps = v[SIM_REMAP_CORR];
    info->uncActiveRemaps = v[SIM_REMAP_UNCORR];
    info->corrInactiveRemaps = model_sat_u32(valfn_eval(&c->d.g->remap_inactive[0], c->t));
    info->uncInactiveRemaps = model_sat_u32(valfn_eval(&c->d.g->remap_inactive[1], c->t));
    info->bPending = v[SIM_REMAP_PENDING];
    info->bFailureOccurred = v[SIM_REMAP_FAILURE];
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetRemappedRows_v2, (nvmlDevice_t device, nvmlRemappedRowsInfo_v2_t *info),
              remapped_rows_v2(&c, info))

/* nvml.h 13.1: "For Hopper or newer fully supported devices". GPU-wide. */
static nvmlReturn_t unrepairable(struct sim_call *c, nvmlUnrepairableMemoryStatus_v1_t *st)
{
    const struct sim_gpu *g = c->d.g;
    if (!st)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.m)
        return NVML_ERROR_NOT_SUPPORTED;
    if (g->rc[SIM_HRC_UNREPAIRABLE])
        return g->rc[SIM_HRC_UNREPAIRABLE];
    if (!valfn_supported(&g->unrepairable))
        return NVML_ERROR_NOT_SUPPORTED;
    st->bUnrepairableMemory = model_uint(&g->unrepairable, c->t, 0, 1);
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetUnrepairableMemoryFlag_v1,
              (nvmlDevice_t device, nvmlUnrepairableMemoryStatus_v1_t *status),
              unrepairable(&c, status))

/* NVML 615: the HBM bank remapper. GPU-wide; NOT_SUPPORTED on a GPU the
 * scenario gives no bank numbers. */
static nvmlReturn_t bank_remapper(struct sim_call *c, nvmlEccBankRemapperStatus_v1_t *st)
{
    const struct sim_gpu *g = c->d.g;
    unsigned v[SIM_BANK_N];
    if (!st)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.m)
        return NVML_ERROR_NOT_SUPPORTED;
    if (g->rc[SIM_HRC_BANK_REMAPPER])
        return g->rc[SIM_HRC_BANK_REMAPPER];
    for (int k = 0; k < SIM_BANK_N; k++) {
        if (!valfn_supported(&g->bank[k]))
            return NVML_ERROR_NOT_SUPPORTED;
        v[k] = model_sat_u32(valfn_eval(&g->bank[k], c->t));
    }
    st->activeRemappings = v[SIM_BANK_ACTIVE];
    st->inactiveRemappings = v[SIM_BANK_INACTIVE];
    st->bPending = v[SIM_BANK_PENDING] ? 1 : 0;
    st->histogram.maxSpareGroupCount = v[SIM_BANK_MAX_SPARE];
    st->histogram.noSpareGroupCount = v[SIM_BANK_NO_SPARE];
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetBankRemapperStatus_v1,
              (nvmlDevice_t device, nvmlEccBankRemapperStatus_v1_t *status),
              bank_remapper(&c, status))

/* ---- retired pages ---- */

static nvmlReturn_t retired_pages(struct sim_call *c, int cause, unsigned *count,
                                  unsigned long long *addresses)
{
    const struct sim_gpu *g = c->d.g;
    if (!count || cause < NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS ||
        cause > NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR || (*count > 0 && !addresses))
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.m)
        return NVML_ERROR_NOT_SUPPORTED;
    if (g->rc[SIM_HRC_RETIRED])
        return g->rc[SIM_HRC_RETIRED];
    const struct valfn *f = &g->retired[cause];
    if (!valfn_supported(f))
        return NVML_ERROR_NOT_SUPPORTED;
    unsigned n = model_sat_u32(valfn_eval(f, c->t));
    if (*count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    /* Page addresses: deterministic, distinct per cause. */
    for (unsigned i = 0; i < n; i++)
        addresses[i] = ((unsigned long long)(cause + 1) << 32) + (unsigned long long)i * 0x1000ull;
    *count = n;
    return NVML_SUCCESS;
}

static nvmlReturn_t retired_pending(struct sim_call *c, nvmlEnableState_t *pending)
{
    const struct sim_gpu *g = c->d.g;
    if (!pending)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.m)
        return NVML_ERROR_NOT_SUPPORTED;
    if (g->rc[SIM_HRC_RETIRED_PENDING])
        return g->rc[SIM_HRC_RETIRED_PENDING];
    const struct valfn *f = &g->retired[SIM_RETIRED_PENDING];
    if (!valfn_supported(f))
        return NVML_ERROR_NOT_SUPPORTED;
    *pending = model_uint(f, c->t, 0, 1) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetRetiredPages,
              (nvmlDevice_t device, nvmlPageRetirementCause_t cause, unsigned int *pageCount,
               unsigned long long *addresses),
              retired_pages(&c, cause, pageCount, addresses))
SIM_DEVICE_FN(nvmlDeviceGetRetiredPagesPendingStatus,
              (nvmlDevice_t device, nvmlEnableState_t *isPending), retired_pending(&c, isPending))

/* ---- PCIe replays ---- */

static nvmlReturn_t pcie_replay(struct sim_call *c, unsigned *value)
{
    const struct sim_gpu *g = c->d.g;
    if (!value)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.m)
        return NVML_ERROR_NOT_SUPPORTED;
    if (g->rc[SIM_HRC_PCIE_REPLAY])
        return g->rc[SIM_HRC_PCIE_REPLAY];
    if (!valfn_supported(&g->pcie_replay))
        return NVML_ERROR_NOT_SUPPORTED;
    *value = model_sat_u32(valfn_eval(&g->pcie_replay, c->t));
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetPcieReplayCounter, (nvmlDevice_t device, unsigned int *value),
              pcie_replay(&c, value))

/* ---- NVLink ---- */

/* What a link query on a MIG handle, a GPU without NVLink, or a link that
 * does not exist answers before the link's own value; SUCCESS if none. */
static nvmlReturn_t link_check(const struct sim_call *c, unsigned link, int rc_key)
{
    const struct sim_gpu *g = c->d.g;
    if (c->d.m)
        return NVML_ERROR_NOT_SUPPORTED;
    if (g->rc[rc_key])
        return g->rc[rc_key];
    if (g->nvlinks == 0)
        return NVML_ERROR_NOT_SUPPORTED;
    if (link >= (unsigned)g->nvlinks || link >= model_nvlink_max_links())
        return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_SUCCESS;
}

static nvmlReturn_t nvlink_state(struct sim_call *c, unsigned link, nvmlEnableState_t *active)
{
    if (!active)
        return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t r = link_check(c, link, SIM_HRC_NVLINK_STATE);
    if (r != NVML_SUCCESS)
        return r;
    *active = link < model_nvlinks_up(c->d.g, c->t) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
}

static nvmlReturn_t nvlink_error(struct sim_call *c, unsigned link, int counter,
                                 unsigned long long *value)
{
    const struct sim_gpu *g = c->d.g;
    if (!value || counter < NVML_NVLINK_ERROR_DL_REPLAY || counter > NVML_NVLINK_ERROR_DL_ECC_DATA)
        return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t r = link_check(c, link, SIM_HRC_NVLINK_ERRORS);
    if (r != NVML_SUCCESS)
        return r;
    if (counter >= SIM_NVLINK_ERR_N) /* DL_ECC_DATA: not modelled */
        return NVML_ERROR_NOT_SUPPORTED;
    const struct valfn *f = &g->nvlink_err[counter];
    if (!valfn_supported(f))
        return NVML_ERROR_NOT_SUPPORTED;
    *value = model_nvlink_share(model_sat_u64(valfn_eval(f, c->t)), link,
                                model_nvlinks_up(g, c->t));
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetNvLinkState,
              (nvmlDevice_t device, unsigned int link, nvmlEnableState_t *isActive),
              nvlink_state(&c, link, isActive))
SIM_DEVICE_FN(nvmlDeviceGetNvLinkErrorCounter,
              (nvmlDevice_t device, unsigned int link, nvmlNvLinkErrorCounter_t counter,
               unsigned long long *counterValue),
              nvlink_error(&c, link, counter, counterValue))

/* ---- violation status ---- */

static nvmlReturn_t violation(struct sim_call *c, int policy, nvmlViolationTime_t *vt)
{
    const struct sim_gpu *g = c->d.g;
    bool known = (policy >= NVML_PERF_POLICY_POWER && policy <= NVML_PERF_POLICY_RELIABILITY) ||
                 policy == NVML_PERF_POLICY_TOTAL_APP_CLOCKS ||
                 policy == NVML_PERF_POLICY_TOTAL_BASE_CLOCKS;
    if (!vt || !known)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.m)
        return NVML_ERROR_NOT_SUPPORTED;
    if (g->rc[SIM_HRC_VIOLATION])
        return g->rc[SIM_HRC_VIOLATION];
    if (policy > NVML_PERF_POLICY_THERMAL || !valfn_supported(&g->violation_s[policy]))
        return NVML_ERROR_NOT_SUPPORTED;
    vt->referenceTime = sim_timestamp_us(c->t);
    vt->violationTime = model_sat_u64(valfn_eval(&g->violation_s[policy], c->t) * 1e9);
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetViolationStatus,
              (nvmlDevice_t device, nvmlPerfPolicyType_t perfPolicyType,
               nvmlViolationTime_t *violTime),
              violation(&c, perfPolicyType, violTime))
