/*
 * events.c — the monitor's side of NVML health events: start the events
 * helper, read its records without blocking, keep a ring of the most
 * recent events and per (GPU, GPU instance, compute instance, Xid) counts
 * since start, watch for a helper that stalls or dies, and put it all into
 * the merged snapshot (events_apply).
 *
 * Time: the helper stamps each event with its CLOCK_MONOTONIC, which is
 * one clock for every process of the host, so the event's place on the
 * monitor's timeline is that instant minus the monitor's reference instant
 * (collect.c's t0_ns).
 *
 * Owner: the NVML backend state (one thread). Reasons handed out are static
 * strings, so a snapshot never points into this module's memory.
 */
#include "backend/events/events.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/nvml/nvml_api.h"
#include "core/clock.h"
#include "core/debuglog.h"
#include "core/snapshot.h"

#define EVENTS_MAX_FAILS 3
#define EVENTS_BACKOFF_MAX_NS (30ull * 1000000000ull)
/* A wait is 1 s; 3 s of silence is a helper stuck in a call. */
#define EVENTS_WATCHDOG_NS (3000ull * 1000000ull)
/* The most one wait for the helper's first state takes. */
#define EVENTS_SETTLE_MAX_MS 400u

static const char *const WHY_NO_EXE = "events not started (no helper binary given)";
static const char *const WHY_STARTING = "waiting for the events helper";
static const char *const WHY_NO_API =
    "this driver has no NVML event API (FUNCTION_NOT_FOUND): no Xid events";
static const char *const WHY_UNSUPPORTED = "no GPU here supports Xid events";
static const char *const WHY_INIT = "the events helper could not start NVML";
static const char *const WHY_SETUP = "registering for NVML events failed; retrying";
static const char *const WHY_WAIT = "nvmlEventSetWait_v2 failed; retrying";
static const char *const WHY_WAIT_V3 = "nvmlEventSetWait_v3 failed; retrying";
static const char *const WHY_HELPER_FAILED = "events helper exited; restarting it";
static const char *const WHY_OFF = "events off: the events helper failed 3 times";
/* Per GPU, while the events of others flow. */
static const char *const WHY_GPU_UNOPENED =
    "the events helper could not open this GPU: its Xid events are not watched";
static const char *const WHY_GPU_NO_XID =
    "this GPU does not report Xid events (nvmlDeviceGetSupportedEventTypes)";
static const char *const WHY_GPU_FAILED =
    "registering this GPU's Xid events failed (nvmlDeviceRegisterEvents)";
static const char *const WHY_MIG_HIDDEN =
    "a MIG instance's own Xid events reach only a privileged monitor (nvml.h); "
    "those of its whole GPU are counted on the GPU";
static const char *const WHY_MIG_UNKNOWN =
    "whether a MIG instance's own Xid events reach this monitor is not known "
    "(no GPU was in MIG mode when the events were registered)";

static const char *const WHY_STALLED[EVENTS_CALL_COUNT] = {
    [EVENTS_CALL_NONE] = "events helper stalled; restarting it",
    [EVENTS_CALL_INIT] = "events helper stalled starting NVML; restarting it",
    [EVENTS_CALL_SETUP] = "events helper stalled registering for events; restarting it",
    [EVENTS_CALL_WAIT] = "events helper stalled in nvmlEventSetWait_v2; restarting it",
    [EVENTS_CALL_WAIT_V3] = "events helper stalled in nvmlEventSetWait_v3; restarting it",
};
static const char *const WHY_HUNG_OFF[EVENTS_CALL_COUNT] = {
    [EVENTS_CALL_NONE] = "events off: the events helper hung 3 times",
    [EVENTS_CALL_INIT] = "events off: the events helper hung 3 times starting NVML",
    [EVENTS_CALL_SETUP] = "events off: the events helper hung 3 times registering for events",
    [EVENTS_CALL_WAIT] = "events off: the events helper hung 3 times in nvmlEventSetWait_v2",
    [EVENTS_CALL_WAIT_V3] = "events off: the events helper hung 3 times in nvmlEventSetWait_v3",
};

struct xid_key {
    char gpu_uuid[EVENTS_UUID_LEN];
    int gi_id, ci_id;
    unsigned xid;
    uint64_t count;
    uint64_t last_seq; /* the total when it last counted: newest wins */
};

struct events_client {
    struct events_client_opts o;
    char exe[4096], lib[4096];
    const char *why; /* NULL while events may flow */
    struct helper_proc hp;
    struct helper_sup sup;
    bool done, watching;
    enum events_call cur_call;
    struct events_rec_state st;
    bool have_state;
    struct events_item ring[EVENTS_RING];
    uint64_t total; /* ring[(total - 1) % EVENTS_RING] is the newest */
    struct xid_key keys[EVENTS_MAX_KEYS];
    size_t nkeys;
    /* The GPUs of the last registration (EVENTS_REC_GPU), grown to the
     * helper's count when it is sent, so a steady tick allocates nothing. */
    struct events_gpu {
        char uuid[EVENTS_UUID_LEN];
        uint16_t state; /* enum events_gpu_state */
    } *gpus;
    size_t ngpus, gpus_cap;
};

static uint64_t watchdog_ns(const struct events_client *c)
{
    uint64_t w = c->o.watchdog_ms ? (uint64_t)c->o.watchdog_ms * 1000000ull : 0;
    return w < EVENTS_WATCHDOG_NS ? EVENTS_WATCHDOG_NS : w;
}

static void spawn(void *ctx)
{
    struct events_client *c = ctx;
    char *argv[] = {c->exe, (char *)EVENTS_HELPER_ARG, c->lib, NULL};
    if (helper_proc_spawn(&c->hp, argv) != 0) {
        debuglog_printf("events: could not start the helper: %s", strerror(errno));
        c->sup.run = HELPER_OFF;
        c->why = WHY_HELPER_FAILED;
        return;
    }
    c->sup.run = HELPER_RUNNING;
    c->done = c->watching = false;
    c->cur_call = EVENTS_CALL_INIT;
    if (!c->why)
        c->why = WHY_STARTING;
}

static const char *state_reason(const struct events_rec_state *s)
{
    switch (s->state) {
    case EVENTS_STATE_NO_API: return WHY_NO_API;
    case EVENTS_STATE_UNSUPPORTED: return WHY_UNSUPPORTED;
    case EVENTS_STATE_FAILED:
        return s->call == EVENTS_CALL_INIT      ? WHY_INIT
               : s->call == EVENTS_CALL_SETUP   ? WHY_SETUP
               : s->call == EVENTS_CALL_WAIT_V3 ? WHY_WAIT_V3
                                                : WHY_WAIT;
    case EVENTS_STATE_WATCHING: return NULL;
    default: return WHY_STARTING;
    }
}

/* helper_sup_ops.failed */
static void failed(void *ctx, bool stalled, uint64_t now)
{
    struct events_client *c = ctx;
    if (stalled)
        debuglog_printf("events: the helper was in call %d", (int)c->cur_call);
    c->watching = false;
    enum events_call call = c->cur_call < EVENTS_CALL_COUNT ? c->cur_call : EVENTS_CALL_NONE;
    uint64_t base = c->o.backoff_ms ? (uint64_t)c->o.backoff_ms * 1000000ull : 1000000000ull;
    if (helper_sup_failed(&c->sup, &c->hp, EVENTS_MAX_FAILS, base, EVENTS_BACKOFF_MAX_NS, now))
        c->why = stalled ? WHY_STALLED[call] : WHY_HELPER_FAILED;
    else
        c->why = stalled ? WHY_HUNG_OFF[call] : WHY_OFF;
}

static void count_xid(struct events_client *c, const struct events_item *e)
{
    struct xid_key *k = NULL;
    for (size_t i = 0; i < c->nkeys && !k; i++) {
        struct xid_key *x = &c->keys[i];
        if (x->xid == e->xid && x->gi_id == e->gi_id && x->ci_id == e->ci_id &&
            strcmp(x->gpu_uuid, e->gpu_uuid) == 0)
            k = x;
    }
    if (!k) {
        if (c->nkeys == EVENTS_MAX_KEYS)
            return; /* 512 distinct codes per instance: the ring still has them */
        k = &c->keys[c->nkeys++];
        memset(k, 0, sizeof(*k));
        memcpy(k->gpu_uuid, e->gpu_uuid, sizeof(k->gpu_uuid));
        k->gi_id = e->gi_id;
        k->ci_id = e->ci_id;
        k->xid = e->xid;
    }
    k->count++;
    k->last_seq = c->total;
}

_Static_assert(MIGMON_EVENT_TYPE_OPERATIONAL == GPU_EVENT_OPERATIONAL,
               "one mark for an operational event");

static void on_event(struct events_client *c, const struct events_rec_event *r)
{
    struct events_item e;
    memset(&e, 0, sizeof(e));
    uint64_t t0 = c->o.t0_ns;
    e.elapsed_ns = r->mono_ns > t0 ? r->mono_ns - t0 : 0;
    e.wall_ns = r->wall_ns;
    memcpy(e.gpu_uuid, r->gpu_uuid, sizeof(e.gpu_uuid));
    e.gpu_uuid[EVENTS_UUID_LEN - 1] = '\0';
    e.gi_id = r->gi_id;
    e.ci_id = r->ci_id;
    e.xid = r->xid;
    e.type = r->type;
    e.severity = r->severity;
    e.category = r->category;
    c->ring[c->total % EVENTS_RING] = e;
    c->total++;
    if (e.type & NVML_EVENT_TYPE_XID)
        count_xid(c, &e);
    debuglog_printf("events: %s type 0x%llx xid %u gi %d ci %d", e.gpu_uuid,
                    (unsigned long long)e.type, e.xid, e.gi_id, e.ci_id);
}

/* Record 0 starts a registration's list; one that does not fit is left
 * out (its GPU then reads as not watched). */
static void on_gpu(struct events_client *c, const struct events_rec_gpu *r)
{
    if (r->index == 0)
        c->ngpus = 0;
    if (r->index != c->ngpus || r->count == 0)
        return; /* out of order: a broken helper; its GPUs stay unwatched */
    if (c->ngpus == c->gpus_cap) {
        size_t cap = r->count > c->gpus_cap ? r->count : c->gpus_cap + 1;
        struct events_gpu *g = realloc(c->gpus, cap * sizeof(*g));
        if (!g)
            return;
        c->gpus = g;
        c->gpus_cap = cap;
    }
    struct events_gpu *g = &c->gpus[c->ngpus++];
    memcpy(g->uuid, r->gpu_uuid, sizeof(g->uuid));
    g->uuid[sizeof(g->uuid) - 1] = '\0';
    g->state = r->state;
}

static void on_record(void *ctx, const unsigned char *p, uint8_t type)
{
    struct events_client *c = ctx;
    switch (type) {
    case EVENTS_REC_STATE:
        memcpy(&c->st, p, sizeof(c->st));
        c->st.detail[sizeof(c->st.detail) - 1] = '\0';
        c->have_state = true;
        c->why = state_reason(&c->st);
        c->watching = c->st.state == EVENTS_STATE_WATCHING;
        if (c->watching)
            c->sup.fails = 0;
        debuglog_printf("events: state %u at call %u rc %d (%u of %u GPUs) %s", c->st.state,
                        c->st.call, c->st.rc, c->st.nwatched, c->st.ngpus, c->st.detail);
        break;
    case EVENTS_REC_EVENT: {
        struct events_rec_event r;
        memcpy(&r, p, sizeof(r));
        on_event(c, &r);
        break;
    }
    case EVENTS_REC_PROGRESS: {
        struct events_rec_progress r;
        memcpy(&r, p, sizeof(r));
        c->cur_call = r.call < EVENTS_CALL_COUNT ? (enum events_call)r.call : EVENTS_CALL_NONE;
        break;
    }
    case EVENTS_REC_BEAT:
        c->cur_call = EVENTS_CALL_NONE;
        break;
    case EVENTS_REC_DONE:
        c->done = true;
        break;
    case EVENTS_REC_GPU: {
        struct events_rec_gpu r;
        memcpy(&r, p, sizeof(r));
        on_gpu(c, &r);
        break;
    }
    default:
        break;
    }
}

static size_t rec_size(uint8_t type)
{
    switch (type) {
    case EVENTS_REC_STATE: return sizeof(struct events_rec_state);
    case EVENTS_REC_EVENT: return sizeof(struct events_rec_event);
    case EVENTS_REC_PROGRESS:
    case EVENTS_REC_BEAT:
    case EVENTS_REC_DONE: return sizeof(struct events_rec_progress);
    case EVENTS_REC_GPU: return sizeof(struct events_rec_gpu);
    default: return 0;
    }
}

struct events_client *events_client_open(const struct events_client_opts *o)
{
    struct events_client *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->o = *o;
    helper_proc_init(&c->hp, "events");
    snprintf(c->lib, sizeof(c->lib), "%s", o->lib_path ? o->lib_path : "");
    if (!o->exe || !o->exe[0]) {
        c->sup.run = HELPER_OFF;
        c->why = WHY_NO_EXE;
        return c;
    }
    snprintf(c->exe, sizeof(c->exe), "%s", o->exe);
    spawn(c);
    return c;
}

static const struct helper_sup_ops sup_ops = {
    .magic = EVENTS_PROTO_MAGIC,
    .size = rec_size,
    .on = on_record,
    .spawn = spawn,
    .failed = failed,
};

void events_client_poll(struct events_client *c)
{
    if (!c)
        return;
    if (helper_sup_poll(&c->sup, &c->hp, &sup_ops, c, &c->done, watchdog_ns(c))) {
        c->watching = false;
        if (!c->why)
            c->why = WHY_HELPER_FAILED;
    }
}

void events_client_wait_state(struct events_client *c, unsigned timeout_ms)
{
    if (!c)
        return;
    if (timeout_ms > EVENTS_SETTLE_MAX_MS)
        timeout_ms = EVENTS_SETTLE_MAX_MS;
    uint64_t deadline = clock_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
    for (;;) {
        events_client_poll(c);
        if (c->sup.run != HELPER_RUNNING || c->done || c->have_state)
            break;
        uint64_t now = clock_mono_ns();
        if (now >= deadline)
            break;
        helper_proc_wait(&c->hp, (int)((deadline - now) / 1000000ull) + 1);
    }
}

void events_client_close(struct events_client *c)
{
    if (!c)
        return;
    helper_proc_reap(&c->hp, false);
    free(c->gpus);
    free(c);
}

int events_client_helper_pid(const struct events_client *c)
{
    return c && c->hp.pid > 0 ? (int)c->hp.pid : -1;
}

const char *events_client_why(const struct events_client *c)
{
    if (!c)
        return WHY_NO_EXE;
    if (c->watching && c->sup.run == HELPER_RUNNING)
        return NULL;
    return c->why ? c->why : WHY_STARTING;
}

const char *events_client_gpu_why(const struct events_client *c, const char *gpu_uuid)
{
    const char *why = events_client_why(c);
    if (why)
        return why;
    for (size_t i = 0; i < c->ngpus; i++) {
        if (strcmp(c->gpus[i].uuid, gpu_uuid) != 0)
            continue;
        switch (c->gpus[i].state) {
        case EVENTS_GPU_WATCHED: return NULL;
        case EVENTS_GPU_NO_XID: return WHY_GPU_NO_XID;
        default: return WHY_GPU_FAILED;
        }
    }
    return WHY_GPU_UNOPENED;
}

const char *events_client_mig_why(const struct events_client *c, const char *gpu_uuid)
{
    const char *why = events_client_gpu_why(c, gpu_uuid);
    if (why)
        return why;
    switch (c->st.mig) {
    case EVENTS_MIG_SEEN: return NULL;
    case EVENTS_MIG_HIDDEN: return WHY_MIG_HIDDEN;
    default: return WHY_MIG_UNKNOWN;
    }
}

uint64_t events_client_total(const struct events_client *c)
{
    return c ? c->total : 0;
}

const struct events_item *events_client_recent(const struct events_client *c, unsigned n)
{
    if (!c || n >= c->total || n >= EVENTS_RING)
        return NULL;
    return &c->ring[(c->total - 1 - n) % EVENTS_RING];
}

/* ------------------------------------------------------------ into the snapshot */

/* The device an event belongs to: the MIG device of the GPU with the
 * event's GPU and compute instance (or the GPU instance alone when the
 * compute instance is not named), else the GPU; -1 when the GPU is absent. */
static int device_of(const struct snapshot *s, const char *uuid, int gi, int ci)
{
    int gpu = -1;
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        if (d->kind == DEV_GPU && strcmp(d->uuid, uuid) == 0)
            gpu = (int)i;
    }
    if (gpu < 0 || gi < 0)
        return gpu;
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        if (d->kind == DEV_MIG && d->parent_pos == gpu && d->gi_id == gi &&
            (ci < 0 || d->ci_id == ci))
            return (int)i;
    }
    return gpu;
}

static void apply_events(const struct events_client *c, struct snapshot *s)
{
    size_t n = c->total < EVENTS_RING ? (size_t)c->total : EVENTS_RING;
    if (n > s->events_cap) {
        struct gpu_event *e = realloc(s->events, EVENTS_RING * sizeof(*e));
        if (!e)
            n = s->events_cap;
        else {
            s->events = e;
            s->events_cap = EVENTS_RING;
        }
    }
    for (size_t k = 0; k < n; k++) {
        const struct events_item *it = events_client_recent(c, (unsigned)(n - 1 - k));
        struct gpu_event *g = &s->events[k];
        g->elapsed_ns = it->elapsed_ns;
        g->wall_ns = it->wall_ns;
        snprintf(g->gpu_uuid, sizeof(g->gpu_uuid), "%s", it->gpu_uuid);
        g->device_pos = device_of(s, it->gpu_uuid, it->gi_id, it->ci_id);
        g->gi_id = it->gi_id;
        g->ci_id = it->ci_id;
        g->xid = it->xid;
        g->type = it->type;
        g->severity = it->severity;
        g->category = it->category;
    }
    s->nevents = n;
}

static const char *const WHY_NO_XID = "no Xid event on this device since the monitor started";

/* n more events of code xid on d, in d's per-code table (code order). */
static void count_code(struct device *d, unsigned xid, uint64_t n)
{
    size_t k = 0;
    while (k < d->nxids && d->xids[k].xid < xid)
        k++;
    if (k < d->nxids && d->xids[k].xid == xid) {
        d->xids[k].count += (uint32_t)n;
        return;
    }
    if (d->nxids == DEVICE_XID_CODES) {
        d->xids_overflow = true;
        return;
    }
    memmove(&d->xids[k + 1], &d->xids[k], (d->nxids - k) * sizeof(d->xids[0]));
    d->xids[k] = (struct device_xid){.xid = xid, .count = (uint32_t)n};
    d->nxids++;
}

/* Why device d's own Xid events are not watched, NULL when they are: a
 * GPU's when the helper registered them; a MIG instance's when its GPU's
 * are and the instance's own reach the monitor (privilege). A GPU with no
 * UUID (not opened: inaccessible-gpu.ini) cannot be matched to the
 * helper's, and nothing of it is known anyway. */
static const char *watched_why(const struct events_client *c, const struct snapshot *s,
                               const struct device *d)
{
    if (s->events_why)
        return s->events_why;
    const char *gpu_uuid = d->kind == DEV_MIG ? d->parent_uuid : d->uuid;
    if (!gpu_uuid[0])
        return d->inaccessible ? d->inaccessible : d->uuid_why ? d->uuid_why : WHY_GPU_UNOPENED;
    return d->kind == DEV_MIG ? events_client_mig_why(c, gpu_uuid)
                              : events_client_gpu_why(c, gpu_uuid);
}

void events_apply(const struct events_client *c, struct snapshot *s)
{
    s->nevents = 0;
    s->events_total = events_client_total(c);
    s->events_why = events_client_why(c);
    if (c)
        apply_events(c, s);
    for (size_t i = 0; i < s->ndevices; i++) {
        struct device *d = &s->devices[i];
        /* A lost GPU keeps every metric none with the driver's answer; its
         * events (Xid 79 among them) stay in the events list. */
        if (d->lost)
            continue;
        d->nxids = 0;
        d->xids_overflow = false;
        /* 0 only where the device's events are watched: elsewhere an Xid
         * would go unseen, and 0 would say there was none. */
        const char *why = watched_why(c, s, d);
        d->m[M_XID_ERRORS] = why ? metric_none(why) : metric_direct(0);
        d->m[M_LAST_XID] = metric_none(why ? why : WHY_NO_XID);
    }
    if (s->events_why || !c->nkeys)
        return;
    /* Oldest count first, so the newest Xid of a device is written last. */
    const struct xid_key *order[EVENTS_MAX_KEYS];
    size_t n = c->nkeys;
    for (size_t i = 0; i < n; i++) {
        order[i] = &c->keys[i];
        for (size_t j = i; j > 0 && order[j - 1]->last_seq > order[j]->last_seq; j--) {
            const struct xid_key *t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    }
    for (size_t i = 0; i < n; i++) {
        int pos = device_of(s, order[i]->gpu_uuid, order[i]->gi_id, order[i]->ci_id);
        if (pos < 0 || s->devices[pos].lost || !metric_ok(&s->devices[pos].m[M_XID_ERRORS]))
            continue;
        struct device *d = &s->devices[pos];
        d->m[M_XID_ERRORS].value += (double)order[i]->count;
        d->m[M_LAST_XID] = metric_direct(order[i]->xid);
        count_code(d, order[i]->xid, order[i]->count);
    }
}
