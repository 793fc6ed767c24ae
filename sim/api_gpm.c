/*
 * api_gpm.c — GPU Performance Monitoring (docs/nvml-facts.md §9).
 *
 * So far only the support query. The GPM issue adds here: nvmlGpmSampleAlloc
 * / SampleFree / SampleGet / MigSampleGet / MetricsGet (with per-instance
 * metric value functions in the scenario's [gpu.N.mig.S] sections), and the
 * scenario switch that reproduces the seed README's "GPM corrupts the NVML
 * session" report (memory reads then fail with IN_USE), so the monitor's
 * helper-process isolation can be tested. Add each symbol to sim/symbols.txt
 * with its first driver (520.56.06; MigSampleGet 525.53).
 */
#include "model.h"

/* Hopper and later. Docs of driver 595+ accept a MIG handle too; older
 * drivers were called that way by the Rust version without an error, so a
 * MIG handle answers for its parent. */
static nvmlReturn_t gpm_support(struct sim_call *c, nvmlGpmSupport_t *s)
{
    if (!s)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (s->version != NVML_GPM_SUPPORT_VERSION)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    s->isSupportedDevice = c->d.g->arch >= NVML_DEVICE_ARCH_HOPPER &&
                           c->d.g->arch != NVML_DEVICE_ARCH_UNKNOWN;
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlGpmQueryDeviceSupport, (nvmlDevice_t device, nvmlGpmSupport_t *gpmSupport),
              gpm_support(&c, gpmSupport))
