/*
 * nvml_health.h — a GPU's health counters (nvml_health.c): those read at
 * the slow cadence (remapped rows, retired pages, PCIe replays, NVLink
 * links and errors, clock hold-down time), and the per-tick
 * nvmlDeviceGetFieldValues batch, which carries energy and the ECC counts
 * for nvml_read.c and memory temperature and NVLink traffic for the health
 * counters. Called by nvml_read.c. Private to src/backend/.
 */
#ifndef MIGMON_NVML_HEALTH_H
#define MIGMON_NVML_HEALTH_H

#include <stdbool.h>

#include "backend/nvml/nvml_state.h"
#include "core/snapshot.h"

/* The entries of the field-values batch. */
enum nvml_field_slot {
    NF_ENERGY,  /* TOTAL_ENERGY_CONSUMPTION (83), mJ */
    NF_SBE_VOL, /* ECC_SBE_VOL_TOTAL (3): asked while ECC is on */
    NF_DBE_VOL, /* ECC_DBE_VOL_TOTAL (4) */
    NF_SBE_AGG, /* ECC_SBE_AGG_TOTAL (5) */
    NF_DBE_AGG, /* ECC_DBE_AGG_TOTAL (6) */
    NF_MEM_TEMP, /* MEMORY_TEMP (82), C */
    NF_NVL_TX,  /* NVLINK_THROUGHPUT_DATA_TX (138), KiB, every link: asked */
    NF_NVL_RX,  /* ..._DATA_RX (139)                  unless there is no NVLink */
    NF_SLOTS
};

/* One tick's answers. why[k] is NULL when v[k] holds the value, else a
 * static reason; rc[k] the entry's code (the call's when the call as a
 * whole failed), NVML_ERROR_FUNCTION_NOT_FOUND when it was not asked. */
struct nvml_fields {
    bool asked[NF_SLOTS];
    nvmlReturn_t rc[NF_SLOTS];
    const char *why[NF_SLOTS];
    double v[NF_SLOTS];
};

/* The batch, in one nvmlDeviceGetFieldValues call (none when the library
 * lacks it or the device never answers it). ecc_on: the ECC entries are
 * asked. */
void nvml_fields_read(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h, bool ecc_on,
                      struct nvml_fields *out);

/* The slow-cadence health counters into d: with due (a tick of the slow
 * cadence) read from the driver first, else as last read (still direct:
 * counters of rare events, read at most one slow period ago). Called
 * before nvml_fields_read, which asks for NVLink traffic only where the
 * NVLink walk found links. Memory temperature and NVLink bytes come from
 * the tick's batch (nvml_health_fields_apply); aggregate ECC and reserved
 * memory are nvml_read.c's (they follow the ECC mode and the memory call). */
void nvml_health_read(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h, bool due,
                      struct device *d);
void nvml_health_fields_apply(const struct nvml_fields *fv, struct device *d);

#endif
