/*
 * clock.h — the one reference instant and the drift-corrected tick.
 *
 * Every sample's elapsed_ns is measured from one CLOCK_MONOTONIC instant
 * taken at start (ADR-005), so all samplers share one timeline.
 */
#ifndef MIGMON_CLOCK_H
#define MIGMON_CLOCK_H

#include <stdint.h>

uint64_t clock_mono_ns(void);
int64_t clock_wall_ns(void);
/* RFC 3339 UTC with milliseconds: "2026-11-29T14:37:42.123Z". */
void clock_rfc3339(int64_t wall_ns, char *out, unsigned long len);
/* Milliseconds to wait until the next tick so ticks stay on a fixed grid:
 * next = start + k*interval for the smallest k with next > now. */
int clock_ms_until_next(uint64_t start_ns, uint64_t interval_ns, uint64_t now_ns);

#endif
