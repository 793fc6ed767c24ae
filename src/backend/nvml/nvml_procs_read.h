/*
 * nvml_procs_read.h — one handle's process lists as NVML gives them
 * (nvml_procs_read.c), merged into a struct nvml_proc_list. Called by
 * nvml_procs.c. Private to src/backend/ and the backend's tests.
 */
#ifndef MIGMON_NVML_PROCS_READ_H
#define MIGMON_NVML_PROCS_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/nvml/nvml_state.h"

/*
 * Read one process-list symbol of handle h into st->list, merging by PID and
 * instance with what is already there (type bits OR-ed). Over-allocates and
 * retries while NVML answers INSUFFICIENT_SIZE (the list grows between the
 * calls). Returns the NVML code of the last call.
 */
nvmlReturn_t nvml_procs_read_kind(struct nvml_state *st, nvmlDevice_t h, nvml_fn_dev_procs fn,
                                  size_t stride, unsigned type, const char *sym);
/* Compute, graphics and MPS lists of h merged into st->list (emptied first).
 * Succeeds when the compute list could be read (the others are optional:
 * graphics is not supported on MIG, MPS needs Volta). */
nvmlReturn_t nvml_procs_read(struct nvml_state *st, nvmlDevice_t h);
/* The same; optional false reads only the compute list. */
nvmlReturn_t nvml_procs_read_lists(struct nvml_state *st, nvmlDevice_t h, bool optional);
/* Empty a list (and its index). */
void nvml_proc_list_clear(struct nvml_proc_list *l);

#endif
