/*
 * units.h — how sizes, rates and energy are written for people, the same in
 * the interactive monitor and the table: binary sizes (MiB, GiB, TiB: what
 * NVML and /proc count in), decimal rates (MB/s, GB/s: how links are
 * rated), energy in Wh/kWh/MWh. Machine outputs (JSON) keep base units.
 */
#ifndef MIGMON_UNITS_H
#define MIGMON_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* "0 MiB", "650 MiB", "10.9 GiB", "141 GiB", "1.2 TiB". */
const char *units_bytes(char *out, size_t len, double bytes);
/* "0 kB/s", "950 kB/s", "12.5 MB/s", "3.2 GB/s". */
const char *units_rate(char *out, size_t len, double bytes_per_s);
/* "0.5 Wh", "139 Wh", "12.3 kWh", "1.20 MWh". */
const char *units_energy(char *out, size_t len, double joules);
/* Throttle reasons in words ("SW power cap", "HW thermal slowdown"), in bit
 * order, for the bits of mask; returns the count written (at most max).
 * Unknown bits are reported as "other". Static strings. */
size_t units_throttle_words(uint64_t mask, const char **out, size_t max);

#endif
