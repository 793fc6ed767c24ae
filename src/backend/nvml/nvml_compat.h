/*
 * nvml_compat.h — values NVML serves through a deprecated and a
 * replacement entry point (nvml_compat.c): the GPU temperature, the clock
 * event ("throttle") reasons and the time clocks were held down. Called
 * by nvml_read.c and nvml_health.c. Private to src/backend/.
 */
#ifndef MIGMON_NVML_COMPAT_H
#define MIGMON_NVML_COMPAT_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/nvml/nvml_state.h"
#include "core/model.h"

/* The driver's branch ("580" of 580.82.07), read once per context; -1
 * when unknown. */
int nvml_driver_branch(struct nvml_state *st);

/* The GPU temperature (C), and the entry point that gave it in the reason
 * where that is worth saying (see nvml_compat.c). */
struct metric nvml_compat_temperature(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h);

/* The active clock event reasons: true with *mask; *why gets the entry
 * point's note (NULL: nothing to say) or, on false, why there are none. */
bool nvml_compat_throttle(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h,
                          uint64_t *mask, const char **why);

/* The time clocks were held down by power (out[0]) and by temperature
 * (out[1]) since the driver loaded, seconds. */
void nvml_compat_violation(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h,
                           struct metric out[2]);

#endif
