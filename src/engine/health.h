/*
 * health.h — a verdict per device from named rules over what one tick read:
 * the remap and retirement flags, the volatile uncorrectable ECC count, the
 * temperature against the slowdown threshold, the Xid events attributed to
 * the device and whether the GPU is lost (NVLink and PCIe replay counters
 * run since the driver loaded: without a baseline no rule reads them). Each rule has a level, a short name and the operator's action
 * (docs/health.md). The verdict is the worst level among the rules that
 * fired; unknown when nothing the rules read could be read.
 */
#ifndef MIGMON_HEALTH_H
#define MIGMON_HEALTH_H

#include "core/health_rules.h"

struct snapshot;

/* Sets health and health_rules of every device of s from its metrics,
 * its lost flag and s's events. Pure: the same snapshot, the same verdict. */
void health_evaluate(struct snapshot *s);

#endif
