/*
 * nvml.h — one GPU's sample (nvml.c): the GPU, its MIG devices and their
 * process lists, into a part of the snapshot; called by nvml_workers.c.
 * Private to src/backend/ and the backend's tests.
 */
#ifndef MIGMON_NVML_H
#define MIGMON_NVML_H

#include "backend/nvml/nvml_state.h"
#include "core/snapshot.h"

struct gpm_client;

/* Sample GPU i (handle h, or hrc: why its handle could not be had) and its
 * MIG devices into part (devices[0] is the GPU, parent_pos relative to
 * part), with their process lists. */
void nvml_sample_gpu(struct nvml_state *st, unsigned int i, nvmlDevice_t h, nvmlReturn_t hrc,
                     const char *uuid, struct snapshot *part);
/* GPM's values (from the helper's records) into a merged snapshot. */
void nvml_gpm_apply(const struct gpm_client *g, struct snapshot *s);

#endif
