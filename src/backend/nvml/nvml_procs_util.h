/*
 * nvml_procs_util.h — per-process utilisation samples (nvml_procs_util.c):
 * read for a device by nvml_read.c, looked up per process by nvml_procs.c.
 * Private to src/backend/ and the backend's tests.
 */
#ifndef MIGMON_NVML_PROCS_UTIL_H
#define MIGMON_NVML_PROCS_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/nvml/nvml_state.h"

/*
 * Per-process utilisation samples newer than the last seen one, kept per PID
 * in st->pus for the process list (st->pus_dev = c), and aggregated for the
 * device. GetProcessesUtilizationInfo (550+) first on a full GPU, else
 * GetProcessUtilization. Concurrent processes' SM shares overlap in time, so
 * their sum is an upper bound; it is clamped to 100. Returns 0 with sm and
 * mem set, or the NVML code.
 */
nvmlReturn_t nvml_process_util(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h,
                               bool mig, double *sm, double *mem);
/* The newest sample of pid in st->pus (the device st->pus_dev), or NULL. */
const struct nvml_pu *nvml_procs_util_find(const struct nvml_state *st, uint32_t pid);

#endif
