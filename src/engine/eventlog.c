/*
 * eventlog.c — each health event of a snapshot stream once (eventlog.h).
 */
#include "engine/eventlog.h"

#include <stdio.h>
#include <string.h>

#include "backend/events/xid.h"
#include "core/text.h"
#include "engine/proclist.h"

void eventlog_init(struct eventlog *l)
{
    memset(l, 0, sizeof(*l));
}

/* The same event as the events client gave it: device_pos is left out, as
 * it is where the event's GPU is in one snapshot, not part of the event. */
static bool same_event(const struct gpu_event *a, const struct gpu_event *b)
{
    return a->elapsed_ns == b->elapsed_ns && a->wall_ns == b->wall_ns && a->gi_id == b->gi_id &&
           a->ci_id == b->ci_id && a->xid == b->xid && a->type == b->type &&
           strcmp(a->gpu_uuid, b->gpu_uuid) == 0;
}

/* The ring's length and the count, made consistent: a ring longer than the
 * count (never from the events client) is believed, as its events are
 * there. */
static void ring_of(const struct snapshot *s, size_t *n, uint64_t *total)
{
    *n = s->events ? s->nevents : 0;
    *total = s->events_total > *n ? s->events_total : *n;
}

void eventlog_take(struct eventlog *l, const struct snapshot *s, struct eventlog_batch *b)
{
    size_t n;
    uint64_t total;
    ring_of(s, &n, &total);
    uint64_t seen = l->total;
    bool restarted = total < seen;
    /* The last event handed out is where the count says it is (it arrived
     * as event number seen), unless the count began again. */
    if (!restarted && l->have_last && total - seen < n)
        restarted = !same_event(&s->events[n - 1 - (size_t)(total - seen)], &l->last);
    if (restarted) {
        seen = 0;
        l->have_last = false;
    }
    uint64_t fresh = total - seen;
    size_t k = fresh < n ? (size_t)fresh : n;
    b->ev = n ? s->events + (n - k) : NULL;
    b->n = k;
    b->dropped = fresh - k;
    b->restarted = restarted;
    l->total = total;
    if (k) {
        l->last = s->events[n - 1];
        l->have_last = true;
    }
}

void eventlog_all(const struct snapshot *s, struct eventlog_batch *b)
{
    struct eventlog l;
    eventlog_init(&l);
    eventlog_take(&l, s, b);
}

const struct device *eventlog_device(const struct snapshot *s, const struct gpu_event *e)
{
    if (e->device_pos < 0 || (size_t)e->device_pos >= s->ndevices)
        return NULL;
    return &s->devices[e->device_pos];
}

bool eventlog_is_xid(const struct gpu_event *e)
{
    return strcmp(xid_event_type_name(e->type), "xid") == 0;
}

void eventlog_what(char *out, size_t len, const struct gpu_event *e)
{
    const char *t = xid_event_type_name(e->type);
    if (eventlog_is_xid(e))
        snprintf(out, len, "Xid %u", e->xid);
    else if (strcmp(t, "operational") == 0 && e->xid)
        snprintf(out, len, "operational event, Xid %u", e->xid);
    else if (strcmp(t, "operational") == 0)
        snprintf(out, len, "operational event, category 0x%04x", e->category);
    else if (strcmp(t, "sbe") == 0)
        snprintf(out, len, "single-bit ECC error");
    else if (strcmp(t, "dbe") == 0)
        snprintf(out, len, "double-bit ECC error");
    else
        snprintf(out, len, "%s event", t);
}

void eventlog_place(const struct snapshot *s, const struct gpu_event *e, struct eventlog_place *p)
{
    const struct device *d = eventlog_device(s, e);
    p->gpu = d ? d->index : -1;
    p->mig = d && d->kind == DEV_MIG;
    p->mig_index = p->mig ? d->mig_index : -1;
    snprintf(p->device, sizeof(p->device), "%s", d ? d->uuid : "");
    p->slice[0] = '\0';
    if (p->mig)
        proclist_slice_name(p->slice, sizeof(p->slice), d, PROCLIST_SLICE_FULL);
}

void eventlog_where(char *out, size_t len, const struct gpu_event *e,
                    const struct eventlog_place *p)
{
    if (p->gpu < 0)
        snprintf(out, len, "GPU %s (not present)", e->gpu_uuid[0] ? e->gpu_uuid : "?");
    else if (p->mig)
        snprintf(out, len, "%s", p->slice);
    else if (e->gi_id >= 0 && e->ci_id >= 0)
        snprintf(out, len, "GPU %d (GI %d, CI %d)", p->gpu, e->gi_id, e->ci_id);
    else if (e->gi_id >= 0)
        snprintf(out, len, "GPU %d (GI %d)", p->gpu, e->gi_id);
    else
        snprintf(out, len, "GPU %d", p->gpu);
    text_clean(out, len); /* the UUID as the events helper read it */
}
