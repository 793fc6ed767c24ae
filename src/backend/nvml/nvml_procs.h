/*
 * nvml_procs.h — who runs on each GPU and MIG device (nvml_procs.c): the
 * lists placed into the snapshot's processes, a MIG-enabled GPU's split by
 * GPU and compute instance. Called by nvml.c. Private to src/backend/.
 */
#ifndef MIGMON_NVML_PROCS_H
#define MIGMON_NVML_PROCS_H

#include <stddef.h>

#include "backend/nvml/nvml_state.h"
#include "core/snapshot.h"

/* A GPU with MIG off: its list into s->procs for device pos. */
void nvml_procs_gpu(struct nvml_state *st, const struct dev_cache *c, nvmlDevice_t h,
                    struct snapshot *s, size_t pos);
/* Before a MIG-enabled GPU's instances: decide how its lists are read
 * this tick (the parent's aggregate when privileged, remembered per GPU and
 * re-checked at the slow cadence; else each instance's own). */
void nvml_procs_mig_begin(struct nvml_state *st, nvmlDevice_t parent_h);
/* A MIG device: its own list, or queued for the parent's. */
void nvml_procs_mig(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t mh,
                    struct snapshot *s, size_t pos);
/* After a MIG-enabled GPU's instances: the parent fallback for the queued
 * ones, unattributed processes on the parent, the parent's count. */
void nvml_procs_mig_done(struct nvml_state *st, nvmlDevice_t parent_h, struct snapshot *s,
                         size_t parent_pos);

#endif
