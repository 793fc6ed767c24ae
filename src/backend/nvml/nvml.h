/*
 * nvml.h — one GPU's sample (nvml.c): the GPU, its MIG devices and their
 * process lists, into a part of the snapshot; called by nvml_workers.c.
 * Private to src/backend/ and the backend's tests.
 */
#ifndef MIGMON_NVML_H
#define MIGMON_NVML_H

#include "backend/nvml/nvml_state.h"
#include "core/snapshot.h"

struct gpm_view;

/* Sample GPU i (handle h, or hrc: why its handle could not be had) and its
 * MIG devices into part (devices[0] is the GPU, parent_pos relative to
 * part), with their process lists. */
void nvml_sample_gpu(struct nvml_state *st, unsigned int i, nvmlDevice_t h, nvmlReturn_t hrc,
                     const char *uuid, struct snapshot *part);
/* A device's GPM values from src (a view per device). */
typedef void (*nvml_gpm_view_fn)(const void *src, const struct device *d, struct gpm_view *out);
/* GPM's values into devices first .. end-1 of s (a merged snapshot or one
 * GPU's part: a MIG device's parent at its parent_pos in s). */
void nvml_gpm_apply(struct snapshot *s, size_t first, size_t end, nvml_gpm_view_fn view,
                    const void *src);
/* The helper's values: src is the backend's struct gpm_client. */
void nvml_gpm_client_view(const void *src, const struct device *d, struct gpm_view *out);

/* ---- nvml_gpm.c: GPM in this context's own session ---- */

/* GPU h's GPM in st's own session into part (after nvml_sample_gpu), when
 * on (the GPM helper proved its driver). Without on, whatever GPM state st
 * holds is freed (samples included). True when the part got GPM values:
 * the helper's are then not applied to it. *gave_up: a GPM call took over
 * a second; st holds no GPM state any more, and this GPU's GPM goes back to
 * the helper. */
bool nvml_gpm_sample(struct nvml_state *st, nvmlDevice_t h, struct snapshot *part, bool on,
                     bool *gave_up);
/* The GPM samples st holds, freed through its library. */
void nvml_gpm_free(struct nvml_state *st);

#endif
