/*
 * nvml_read.h — one device's values (nvml_read.c): static facts, a GPU's
 * per-tick values and its settings at the slow cadence, a MIG device's.
 * Called by nvml.c. Private to src/backend/.
 */
#ifndef MIGMON_NVML_READ_H
#define MIGMON_NVML_READ_H

#include <stdbool.h>

#include "backend/nvml/nvml_state.h"
#include "core/snapshot.h"

/* A device's static facts are due: never read, or a retry's tick reached. */
bool nvml_static_due(const struct nvml_state *st, const struct dev_cache *c);
/* Static facts: read once, but a read that failed for a passing reason is
 * retried with backoff, so one UNKNOWN at start does not leave a name or
 * threshold N/A for the run. */
void nvml_read_gpu_static(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h);
/* The GPU's slice total from its GPU-instance profiles; -1 unknown. */
int nvml_read_slices_total(struct nvml_state *st, nvmlDevice_t h);
/* A GPU's per-tick values into d (its cached settings at the slow cadence). */
void nvml_read_gpu_dynamic(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h,
                           struct device *d);
/* A MIG device's static facts (name, GI/CI ids, slices, profile). */
void nvml_read_mig_static(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h);
/* A MIG device's values into d: its memory and utilisation tiers, the
 * GPU-wide values copied from parent. */
void nvml_read_mig(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h,
                   const struct device *parent, struct device *d);

#endif
