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

#include <stddef.h>
#include <stdint.h>

struct snapshot;

enum health_level {
    HEALTH_UNKNOWN = 0, /* no signal the rules read could be read */
    HEALTH_OK,
    HEALTH_WARNING,     /* worth a look; jobs may go on */
    HEALTH_ACTION,      /* an operator must act: drain, reset, replace */
};

/* "unknown", "ok", "warning", "action"; static. */
const char *health_level_name(unsigned level);

/* The rules whose bits are set in rules, in rule order: at most max of
 * them, each as its name ("row-remap-pending"), level and action text
 * ("reset the GPU: a row remap waits for it"); returns how many. Static
 * strings. */
struct health_rule_info {
    const char *name;
    unsigned level; /* enum health_level */
    const char *action;
};
size_t health_rules_of(uint32_t rules, struct health_rule_info *out, size_t max);

/* Sets health and health_rules of every device of s from its metrics,
 * its lost flag and s's events. Pure: the same snapshot, the same verdict. */
void health_evaluate(struct snapshot *s);

#endif
