/*
 * mig_util.h — decide a MIG device's utilisation from what NVML answered.
 *
 * The chain (docs/mig-utilisation.md; seed-errata):
 *   1. nvmlDeviceGetUtilizationRates on the MIG handle      -> direct
 *   2. GPM on the MIG device (Hopper+, from the GPM helper)     -> gpm
 *   3. per-process samples on the MIG handle                -> process
 *   4. the parent's *real* utilisation scaled by the slice share -> estimate
 *   5. none, with the reason for this architecture/driver.
 * Power samples (GetSamples type 0) are never utilisation.
 * Pure functions: no NVML calls, so every branch is unit-tested.
 */
#ifndef MIGMON_MIG_UTIL_H
#define MIGMON_MIG_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/nvml/nvml_api.h"
#include "core/model.h"

struct mig_util_in {
    const char *arch;  /* parent architecture name, "" unknown */
    int slices;        /* this instance's GPU-instance slices, -1 unknown */
    int slices_total;  /* the parent's slice total, -1 unknown */
    struct metric parent_gpu_util;
    struct metric parent_mem_util;
    nvmlReturn_t direct_rc;
    nvmlUtilization_t direct;
    nvmlReturn_t proc_rc;
    double proc_sm, proc_mem;
};

void mig_util_resolve(const struct mig_util_in *in, struct metric *gpu, struct metric *mem,
                      struct metric *sm);

/* Tier 2 after the fact: GPM's GRAPHICS_UTIL, DRAM_BW_UTIL and SM_UTIL
 * (source gpm, or none with GPM's reason) replace what mig_util_resolve
 * gave unless that is a direct reading; with no GPM value, an absent
 * value on Hopper or later takes GPM's reason. */
void mig_util_apply_gpm(const char *arch, struct metric gpm_gpu, struct metric gpm_mem,
                        struct metric gpm_sm, struct metric *gpu, struct metric *mem,
                        struct metric *sm);

/* "3g.40gb", or "1c.3g.40gb" when the compute instance is smaller than its
 * GPU instance; memory rounded up to whole GiB. Used only when the NVML
 * device name does not carry the profile. */
void mig_profile_name(char *out, size_t len, int gi_slices, int ci_slices,
                      unsigned long long mem_mb);

/* Parse the profile at the end of a MIG device name ("... MIG 3g.40gb" or
 * "... MIG 1c.3g.40gb"). Returns 0 and fills out (and *slices if it is -1),
 * or -1 if the name carries none. */
int mig_profile_from_name(const char *name, char *out, size_t len, int *slices);

#endif
