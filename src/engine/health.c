/*
 * health.c — the verdict rules (health.h, docs/health.md).
 *
 * Each rule reads one thing a tick knows: a device flag, a counter, or the
 * Xid events among the snapshot's recent ones (the last 64) attributed to
 * the device. Events attributed to a GPU count for its MIG instances too
 * (what hits the GPU hits what runs on it), and an instance's events count
 * for its GPU (the GPU's row covers what runs on it).
 */
#include "engine/health.h"

#include <stdbool.h>

#include "core/model.h"
#include "core/snapshot.h"

/* The rule an Xid falls under, from what NVIDIA's catalog says to do. */
static enum health_rule xid_rule(unsigned xid)
{
    switch (xid) {
    case 48: case 61: case 62: case 63: case 64: case 74: case 79: case 95:
    case 119: case 120: case 140:
        return HEALTH_R_XID_RESET;
    case 94:
        return HEALTH_R_XID_JOBS;
    case 13: case 31: case 43: case 45: case 69:
        return HEALTH_R_XID_APP;
    default:
        return HEALTH_R_XID_OTHER;
    }
}

/* Is the event at device position ev_pos one that counts for device pos? */
static bool event_counts(const struct snapshot *s, int ev_pos, size_t pos)
{
    if (ev_pos < 0 || (size_t)ev_pos >= s->ndevices)
        return false;
    if ((size_t)ev_pos == pos)
        return true;
    const struct device *d = &s->devices[pos], *e = &s->devices[ev_pos];
    if (d->kind == DEV_MIG && e->kind == DEV_GPU) /* the GPU's: its instances' too */
        return d->parent_pos == ev_pos;
    if (d->kind == DEV_GPU && e->kind == DEV_MIG) /* an instance's: its GPU's too */
        return e->parent_pos == (int)pos;
    return false;
}

/* A flag counter: 1 fired, 0 read and clear, -1 unknown. */
static int flag(const struct metric *m)
{
    return metric_ok(m) ? m->value >= 1 : -1;
}

static void evaluate(const struct snapshot *s, size_t pos)
{
    struct device *d = &s->devices[pos];
    uint32_t bits = 0;
    bool known = false; /* some rule's input could be read */
    if (d->lost) {
        bits |= 1u << HEALTH_R_LOST;
        known = true;
    }
    static const struct {
        enum metric_id id;
        enum health_rule r;
    } flags[] = {{M_REMAP_FAILURE, HEALTH_R_REMAP_FAILURE},
                 {M_REMAP_PENDING, HEALTH_R_REMAP_PENDING},
                 {M_RETIRED_PENDING, HEALTH_R_RETIRE_PENDING},
                 {M_UNREPAIRABLE_MEM, HEALTH_R_UNREPAIRABLE},
                 {M_BANK_REMAP_PENDING, HEALTH_R_BANK_PENDING},
                 {M_BANK_NO_SPARE, HEALTH_R_BANK_NO_SPARE},
                 {M_ECC_UNCORR, HEALTH_R_ECC_UNCORR}};
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        int f = flag(&d->m[flags[i].id]);
        if (f >= 0)
            known = true;
        if (f > 0)
            bits |= 1u << flags[i].r;
    }
    const struct metric *t = &d->m[M_TEMP], *slow = &d->m[M_TEMP_SLOWDOWN];
    if (metric_ok(t) && metric_ok(slow)) {
        known = true;
        if (slow->value > 0 && t->value >= slow->value)
            bits |= 1u << HEALTH_R_HOT;
    }
    /* Watched events are a reading, none attributed too: the device's own
     * (xid_errors_total is a count), or for a MIG instance its GPU's (an
     * Xid of the whole GPU counts for its instances). */
    const struct metric *xids = &d->m[M_XID_ERRORS];
    if (metric_ok(xids) ||
        (d->kind == DEV_MIG && d->parent_pos >= 0 && (size_t)d->parent_pos < s->ndevices &&
         metric_ok(&s->devices[d->parent_pos].m[M_XID_ERRORS])))
        known = true;
    for (size_t i = 0; i < s->nevents; i++) {
        const struct gpu_event *ev = &s->events[i];
        if (!event_counts(s, ev->device_pos, pos))
            continue;
        /* an operational event with a legacy Xid is that Xid's incident
         * (NVIDIA: "the same occurrence"): the Xid's rule; without one, its
         * own */
        if (ev->xid)
            bits |= 1u << xid_rule(ev->xid);
        else if (ev->type & GPU_EVENT_OPERATIONAL)
            bits |= 1u << HEALTH_R_OPERATIONAL;
    }
    unsigned level = known ? HEALTH_OK : HEALTH_UNKNOWN;
    for (unsigned r = 0; r < HEALTH_R_COUNT; r++)
        if ((bits & (1u << r)) && health_rule_level(r) > level)
            level = health_rule_level(r);
    d->health = (unsigned char)level;
    d->health_rules = bits;
}

void health_evaluate(struct snapshot *s)
{
    for (size_t i = 0; i < s->ndevices; i++)
        evaluate(s, i);
}
