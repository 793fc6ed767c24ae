/*
 * json_events.c — health events as JSON (json_events.h).
 */
#include "export/json_events.h"

#include "backend/events/xid.h"
#include "core/clock.h"
#include "core/text.h"

static void int_or_null(struct jsonw *w, const char *key, int v)
{
    jsonw_key(w, key);
    if (v < 0)
        jsonw_null(w);
    else
        jsonw_int(w, v);
}

static void str_or_null(struct jsonw *w, const char *key, const char *v)
{
    jsonw_key(w, key);
    jsonw_str(w, v && v[0] ? v : NULL);
}

void json_event_members(struct jsonw *w, const struct gpu_event *e, const struct eventlog_place *p)
{
    /* an operational event's legacy Xid reads as the Xid it is */
    bool ops = (e->type & GPU_EVENT_OPERATIONAL) != 0;
    bool xid = eventlog_is_xid(e) || (ops && e->xid);
    /* the events helper's own reading of the UUID: cleaned as the
     * snapshot's devices' are */
    char uuid[sizeof(e->gpu_uuid)];
    text_copy(uuid, sizeof(uuid), e->gpu_uuid);
    text_clean(uuid, sizeof(uuid));
    int_or_null(w, "gpu", p->gpu);
    str_or_null(w, "uuid", uuid);
    str_or_null(w, "device", p->device);
    int_or_null(w, "mig_index", p->mig_index);
    int_or_null(w, "gi_id", e->gi_id);
    int_or_null(w, "ci_id", e->ci_id);
    jsonw_key(w, "xid");
    if (xid)
        jsonw_uint(w, e->xid);
    else
        jsonw_null(w);
    jsonw_key(w, "meaning");
    jsonw_str(w, xid ? xid_meaning(e->xid) : NULL);
    jsonw_key(w, "action");
    jsonw_str(w, xid ? xid_action(e->xid) : NULL);
    if (ops) { /* NVML's numbers, not interpreted (docs/health.md) */
        jsonw_key(w, "severity");
        jsonw_uint(w, e->severity);
        jsonw_key(w, "category");
        jsonw_uint(w, e->category);
    }
}

static void time_members(struct jsonw *w, uint64_t elapsed_ns, int64_t wall_ns)
{
    char ts[40];
    jsonw_key(w, "elapsed_ns");
    jsonw_uint(w, elapsed_ns);
    jsonw_key(w, "wall_ns");
    jsonw_int(w, wall_ns);
    clock_rfc3339(wall_ns, ts, sizeof(ts));
    jsonw_key(w, "timestamp");
    jsonw_str(w, ts);
}

void json_write_event_lines(FILE *f, const struct snapshot *s, const struct eventlog_batch *b)
{
    struct jsonw w;
    if (b->dropped) {
        jsonw_init(&w, f, false);
        jsonw_obj_open(&w);
        jsonw_key(&w, "type");
        jsonw_str(&w, "events_dropped");
        time_members(&w, s->elapsed_ns, s->wall_ns);
        jsonw_key(&w, "count");
        jsonw_uint(&w, b->dropped);
        jsonw_key(&w, "reason");
        jsonw_str(&w, JSON_EVENTS_DROPPED_WHY);
        jsonw_obj_close(&w);
        jsonw_end(&w);
    }
    for (size_t i = 0; i < b->n; i++) {
        const struct gpu_event *e = &b->ev[i];
        jsonw_init(&w, f, false);
        jsonw_obj_open(&w);
        jsonw_key(&w, "type");
        jsonw_str(&w, "event");
        time_members(&w, e->elapsed_ns, e->wall_ns);
        jsonw_key(&w, "event_type");
        jsonw_str(&w, xid_event_type_name(e->type));
        struct eventlog_place p;
        eventlog_place(s, e, &p);
        json_event_members(&w, e, &p);
        jsonw_obj_close(&w);
        jsonw_end(&w);
    }
}
