/*
 * health_rules.c — the health verdict's levels and rules (health_rules.h,
 * docs/health.md).
 */
#include "core/health_rules.h"

static const struct health_rule_info rules[HEALTH_R_COUNT] = {
    [HEALTH_R_LOST] = {"gpu-lost", HEALTH_ACTION,
                "drain the node and reset or reseat the GPU: it fell off the bus"},
    [HEALTH_R_REMAP_FAILURE] = {"row-remap-failure", HEALTH_ACTION,
                         "replace the GPU (RMA): a memory row could not be remapped"},
    [HEALTH_R_REMAP_PENDING] = {"row-remap-pending", HEALTH_ACTION,
                         "reset the GPU when its jobs allow: a row remap waits for it"},
    [HEALTH_R_RETIRE_PENDING] = {"page-retirement-pending", HEALTH_ACTION,
                          "reset the GPU when its jobs allow: a page retirement waits for it"},
    [HEALTH_R_UNREPAIRABLE] = {"unrepairable-memory", HEALTH_ACTION,
                        "replace the GPU (RMA): it has memory errors it can no longer repair"},
    [HEALTH_R_BANK_PENDING] = {"bank-remap-pending", HEALTH_ACTION,
                        "reset the GPU when its jobs allow: an HBM bank remap waits for it"},
    [HEALTH_R_XID_RESET] = {"xid-needs-reset", HEALTH_ACTION,
                     "an Xid whose remedy is a reset or a drain: see the events (key e)"},
    [HEALTH_R_XID_JOBS] = {"xid-contained-ecc", HEALTH_WARNING,
                    "restart the jobs on the affected MIG instance (contained ECC error)"},
    [HEALTH_R_XID_APP] = {"xid-application-fault", HEALTH_WARNING,
                   "a job faulted (usually its own bug or input): check the application"},
    [HEALTH_R_XID_OTHER] = {"xid", HEALTH_WARNING, "an Xid was reported: see the events (key e)"},
    [HEALTH_R_OPERATIONAL] = {"operational-event", HEALTH_WARNING,
                       "the driver reported an operational event: see the events (key e) and "
                       "NVIDIA's GPU Operational Event catalog"},
    [HEALTH_R_BANK_NO_SPARE] = {"bank-remap-exhausted", HEALTH_WARNING,
                         "some HBM bank groups have no spare left: a new error there cannot be "
                         "remapped; plan to replace the GPU"},
    [HEALTH_R_ECC_UNCORR] = {"ecc-uncorrectable", HEALTH_WARNING,
                      "uncorrectable ECC errors since the driver loaded: restart the jobs on "
                      "this GPU; watch the remapped rows"},
    [HEALTH_R_HOT] = {"at-slowdown-temperature", HEALTH_WARNING,
               "the GPU is at its slowdown temperature: its clocks are cut; check the cooling"},
};

static const char *const level_names[] = {
    [HEALTH_UNKNOWN] = "unknown",
    [HEALTH_OK] = "ok",
    [HEALTH_WARNING] = "warning",
    [HEALTH_ACTION] = "action",
};

const char *health_level_name(unsigned level)
{
    return level < sizeof(level_names) / sizeof(level_names[0]) ? level_names[level] : "unknown";
}

size_t health_rules_of(uint32_t bits, struct health_rule_info *out, size_t max)
{
    size_t n = 0;
    for (unsigned r = 0; r < HEALTH_R_COUNT && n < max; r++)
        if (bits & (1u << r))
            out[n++] = rules[r];
    return n;
}

unsigned health_rule_level(unsigned r)
{
    return r < HEALTH_R_COUNT ? rules[r].level : HEALTH_UNKNOWN;
}
