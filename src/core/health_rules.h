/*
 * health_rules.h — the words of a health verdict (docs/health.md): its
 * levels, its rules (each a bit of struct device's health_rules) with their
 * names and the operator's actions. The vocabulary: the engine's
 * health_evaluate (engine/health.h) sets the verdict from them; exporters,
 * the replay reader, the fleet view and the TUI name and parse it.
 */
#ifndef MIGMON_HEALTH_RULES_H
#define MIGMON_HEALTH_RULES_H

#include <stddef.h>
#include <stdint.h>

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

/* The rules, in order: rule r is bit 1u << r of health_rules. */
enum health_rule {
    HEALTH_R_LOST,           /* the GPU answers GPU_IS_LOST */
    HEALTH_R_REMAP_FAILURE,  /* a row remap failed */
    HEALTH_R_REMAP_PENDING,  /* a row remap waits for a reset */
    HEALTH_R_RETIRE_PENDING, /* a page retirement waits for a reset */
    HEALTH_R_UNREPAIRABLE,   /* memory errors the GPU can no longer repair */
    HEALTH_R_BANK_PENDING,   /* an HBM bank remap waits for a reset */
    HEALTH_R_XID_RESET,      /* an Xid whose documented action is a reset or a drain */
    HEALTH_R_XID_JOBS,       /* an Xid whose action is to restart the jobs (contained ECC) */
    HEALTH_R_XID_APP,        /* an application fault */
    HEALTH_R_XID_OTHER,      /* any other Xid */
    HEALTH_R_OPERATIONAL,    /* an operational event without a legacy Xid */
    HEALTH_R_BANK_NO_SPARE,  /* HBM bank groups with no spare left */
    HEALTH_R_ECC_UNCORR,     /* uncorrectable ECC errors since the driver loaded */
    HEALTH_R_HOT,            /* at or above the slowdown temperature */
    HEALTH_R_COUNT
};

/* The level of rule r (enum health_level); HEALTH_UNKNOWN for no such rule. */
unsigned health_rule_level(unsigned r);

#endif
