/*
 * api_events.c — NVML events: nvmlDeviceGetSupportedEventTypes,
 * nvmlEventSetCreate / Free, nvmlDeviceRegisterEvents and
 * nvmlEventSetWait_v2, driven by the scenario's [event.NAME] sections.
 *
 * Each scenario event is delivered once to each live event set that
 * registered its type on its GPU, in time order, once the simulated clock
 * has reached its t (with MIGMON_SIM_TIME fixed, every event at or before
 * T is due at once). A wait with nothing due sleeps with the simulator's
 * lock released until the set's next event is due or the timeout, as a
 * driver's wait blocks (on a clock fixed by MIGMON_SIM_TIME, which other
 * processes' calls move, in 10 ms steps), and answers TIMEOUT after
 * timeoutms real milliseconds. As nvml.h documents for MIG mode, an event attributed to an
 * instance reaches only a privileged caller (an unprivileged one sees only
 * the events that affect the whole GPU); its gpuInstanceId and
 * computeInstanceId are the slot's ids, 0xFFFFFFFF for a whole-GPU event.
 *
 * GPU operational events (NVML 615): nvmlEventSetRegisterGpuOperationalEvents_v1
 * subscribes a set to one GPU's structured events (by its "GPU-..." UUID);
 * nvmlEventSetWait_v3 returns the next event of either kind: an event bit
 * as v2 would (eventType the bit, dataType SIM_DATA_NVML_EVENT), or a
 * structured one (eventType NVML_EVENT_TYPE_NONE, the GPU's UUID, its
 * severity and category); nvmlEventSetGetContextCount_v1 and
 * ..._ContextLegacyXid_v1 answer for the set's most recent v3 event. The
 * v2 wait never returns a structured event. The instance ids of a
 * structured event follow its mig slot as an event bit's do: whether a
 * driver fills them for structured records is not documented.
 *
 * Faults: [events] events_api = no makes every function here answer
 * FUNCTION_NOT_FOUND, as a library whose driver lacks them would to a
 * caller that resolved them; event_wait = fail makes the wait answer
 * UNKNOWN, event_wait = hang makes it never return.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"

#define SET_MAGIC 0x45565453u /* "EVTS" */

struct nvmlEventSet_st {
    unsigned magic;
    struct nvmlEventSet_st *next; /* the registry of live sets */
    unsigned long long session;   /* registrations belong to one NVML session */
    unsigned long long mask[SIM_MAX_GPUS];
    unsigned char delivered[SIM_MAX_EVENTS];
    unsigned char ops[SIM_MAX_GPUS]; /* subscribed to the GPU's operational events */
    /* The most recent event nvmlEventSetWait_v3 returned: its context
     * records (the legacy Xid's; -1 none). */
    bool have_last;
    long last_legacy_xid;
};

/* nvmlEventDataType_t: the values are not published outside nvml.h (not
 * yet checked against it); the monitor tells the kinds apart by eventType. */
#define SIM_DATA_NVML_EVENT 0u
#define SIM_DATA_GPU_OPERATIONAL_EVENT 1u

/* Live sets, so a freed or foreign pointer is recognised without being
 * dereferenced. Under the simulator's lock (every call runs in sim_enter). */
static struct nvmlEventSet_st *sets;

static bool set_live(const struct nvmlEventSet_st *s)
{
    for (const struct nvmlEventSet_st *p = sets; p; p = p->next)
        if (p == s)
            return s->magic == SET_MAGIC && s->session == sim_session();
    return false;
}

static nvmlReturn_t api_on(void)
{
    return sim_scn->events.api_off ? NVML_ERROR_FUNCTION_NOT_FOUND : NVML_SUCCESS;
}

/* Xid (unless xid_events = false), power state and clock changes on every
 * GPU; ECC errors only where ECC is on. */
static unsigned long long supported(const struct sim_gpu *g)
{
    unsigned long long t = NVML_EVENT_TYPE_PSTATE | NVML_EVENT_TYPE_CLOCK;
    if (g->xid_events)
        t |= NVML_EVENT_TYPE_XID;
    if (g->ecc_mode == SIM_ECC_ON)
        t |= NVML_EVENT_TYPE_SINGLE_BIT_ECC | NVML_EVENT_TYPE_DOUBLE_BIT_ECC;
    return t;
}

static nvmlReturn_t supported_types(struct sim_call *c, unsigned long long *types)
{
    nvmlReturn_t r = api_on();
    if (r != NVML_SUCCESS)
        return r;
    if (!types)
        return NVML_ERROR_INVALID_ARGUMENT;
    *types = supported(c->d.g);
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetSupportedEventTypes,
              (nvmlDevice_t device, unsigned long long *eventTypes),
              supported_types(&c, eventTypes))

static nvmlReturn_t set_create(nvmlEventSet_t *out)
{
    nvmlReturn_t r = api_on();
    if (r != NVML_SUCCESS)
        return r;
    if (!out)
        return NVML_ERROR_INVALID_ARGUMENT;
    struct nvmlEventSet_st *s = calloc(1, sizeof(*s));
    if (!s)
        return NVML_ERROR_MEMORY;
    s->magic = SET_MAGIC;
    s->session = sim_session();
    s->next = sets;
    sets = s;
    *out = s;
    return NVML_SUCCESS;
}

SIM_SYSTEM_FN(nvmlEventSetCreate, (nvmlEventSet_t * set), set_create(set))

static nvmlReturn_t set_free(nvmlEventSet_t s)
{
    nvmlReturn_t r = api_on();
    if (r != NVML_SUCCESS)
        return r;
    struct nvmlEventSet_st **pp = &sets;
    while (*pp && *pp != s)
        pp = &(*pp)->next;
    if (!s || !*pp || s->magic != SET_MAGIC)
        return NVML_ERROR_INVALID_ARGUMENT;
    *pp = s->next;
    s->magic = 0;
    free(s);
    return NVML_SUCCESS;
}

SIM_SYSTEM_FN(nvmlEventSetFree, (nvmlEventSet_t set), set_free(set))

/* Per-instance registration through a MIG handle is not supported (nvml.h:
 * the parent's set reports its instances' events). */
static nvmlReturn_t register_events(struct sim_call *c, unsigned long long types,
                                    nvmlEventSet_t s)
{
    nvmlReturn_t r = api_on();
    if (r != NVML_SUCCESS)
        return r;
    if (!set_live(s))
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.slot >= 0 || (types & ~supported(c->d.g)) != 0)
        return NVML_ERROR_NOT_SUPPORTED;
    s->mask[c->d.gpu] |= types;
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceRegisterEvents,
              (nvmlDevice_t device, unsigned long long eventTypes, nvmlEventSet_t set),
              register_events(&c, eventTypes, set))

/* Does set s take scenario event v (v3: the structured kind too)? */
static bool wants(const struct nvmlEventSet_st *s, const struct sim_event *v, bool v3)
{
    if (v->type == SIM_EVENT_OPERATIONAL)
        return v3 && s->ops[v->gpu];
    return (s->mask[v->gpu] & v->type) != 0;
}

/* The first event due for s at time t, marked delivered; NULL if none.
 * *mig: the MIG device it is attributed to (NULL: the whole GPU). */
static const struct sim_event *next_due(struct nvmlEventSet_st *s, double t, bool v3,
                                        const struct sim_mig **mig)
{
    const struct sim_events *e = &sim_scn->events;
    for (int i = 0; i < e->n && e->ev[i].t <= t; i++) {
        const struct sim_event *v = &e->ev[i];
        if (s->delivered[i] || !wants(s, v, v3))
            continue;
        const struct sim_mig *m = v->slot >= 0 ? sim_mig_live(v->gpu, v->slot, v->t) : NULL;
        if (m && !sim_scn->sys.privileged)
            continue; /* an instance's event: not for an unprivileged caller */
        s->delivered[i] = 1;
        *mig = m;
        return v;
    }
    return NULL;
}

static void fill_v2(const struct sim_event *v, const struct sim_mig *m, nvmlEventData_t *d)
{
    memset(d, 0, sizeof(*d));
    d->device = sim_gpu_handle(v->gpu);
    d->eventType = v->type;
    d->eventData = v->type == NVML_EVENT_TYPE_XID ? (unsigned long long)v->xid : 0;
    d->gpuInstanceId = m ? (unsigned)m->gi : NVML_EVENT_NO_INSTANCE;
    d->computeInstanceId = m ? (unsigned)m->ci : NVML_EVENT_NO_INSTANCE;
}

static void fill_v3(struct nvmlEventSet_st *s, const struct sim_event *v, const struct sim_mig *m,
                    double t, nvmlEventSetWait_v3_t *d)
{
    unsigned timeout = d->timeoutMs;
    memset(d, 0, sizeof(*d));
    d->timeoutMs = timeout;
    snprintf(d->uuid, sizeof(d->uuid), "%s", sim_scn->gpus[v->gpu].uuid);
    d->gpuInstanceId = m ? (unsigned)m->gi : NVML_GPU_INSTANCE_ID_ANY;
    d->computeInstanceId = m ? (unsigned)m->ci : NVML_COMPUTE_INSTANCE_ID_ANY;
    d->timestampUsec = sim_timestamp_us(v->t < t ? v->t : t);
    s->have_last = true;
    s->last_legacy_xid = -1;
    if (v->type != SIM_EVENT_OPERATIONAL) {
        d->dataType = SIM_DATA_NVML_EVENT;
        d->eventType = v->type;
        d->eventData = v->type == NVML_EVENT_TYPE_XID ? (unsigned long long)v->xid : 0;
        return;
    }
    d->dataType = SIM_DATA_GPU_OPERATIONAL_EVENT;
    d->eventType = NVML_EVENT_TYPE_NONE;
    memcpy(d->sourceModule, "SIM", 3);
    d->severity = v->severity;
    d->categoryId = v->category;
    d->moduleEventCode = v->module_code;
    s->last_legacy_xid = v->legacy_xid;
}

/* The time of the set's next event after t that is still to be delivered
 * (the privilege filter aside: a wait may wake for nothing), or INFINITY. */
static double next_at(const struct nvmlEventSet_st *s, double t)
{
    const struct sim_events *e = &sim_scn->events;
    for (int i = 0; i < e->n; i++)
        if (e->ev[i].t > t && !s->delivered[i] && wants(s, &e->ev[i], true))
            return e->ev[i].t;
    return INFINITY;
}

static double real_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Both waits: v3 when data3 is given. */
static nvmlReturn_t wait_any(int sym, nvmlEventSet_t set, nvmlEventData_t *data,
                             nvmlEventSetWait_v3_t *data3, unsigned int timeoutms)
{
    double deadline = real_now() + timeoutms / 1000.0;
    for (bool first = true;; first = false) {
        struct sim_call c;
        nvmlReturn_t r = sim_enter(&c, sym);
        if (r == NVML_SUCCESS && first)
            r = sim_fault(&c, -1, -1);
        if (r == NVML_SUCCESS)
            r = api_on();
        if (r == NVML_SUCCESS && ((!data && !data3) || !set_live(set)))
            r = NVML_ERROR_INVALID_ARGUMENT;
        if (r == NVML_SUCCESS && sim_scn->events.wait == SIM_EVENT_WAIT_FAIL)
            r = NVML_ERROR_UNKNOWN;
        if (r == NVML_SUCCESS && sim_scn->events.wait == SIM_EVENT_WAIT_HANG) {
            sim_leave(r);
            for (;;) /* as a driver wait that never wakes: until the process is killed */
                nap_ms(3600L * 1000);
        }
        const struct sim_mig *m = NULL;
        const struct sim_event *v = r == NVML_SUCCESS ? next_due(set, c.t, data3 != NULL, &m) : NULL;
        if (v) {
            if (data3)
                fill_v3(set, v, m, c.t, data3);
            else
                fill_v2(v, m, data);
            return sim_leave(NVML_SUCCESS);
        }
        double due = r == NVML_SUCCESS && sim_clock_real() ? next_at(set, c.t) - c.t : 0.010;
        sim_leave(r);
        if (r != NVML_SUCCESS)
            return r;
        double left = deadline - real_now();
        if (left <= 0)
            return NVML_ERROR_TIMEOUT;
        double nap = due < left ? due : left;
        nap_ms((long)(nap * 1000) + 1);
    }
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
    return wait_any(SYM_nvmlEventSetWait_v2, set, data, NULL, timeoutms);
}

nvmlReturn_t nvmlEventSetWait_v3(nvmlEventSet_t set, nvmlEventSetWait_v3_t *data)
{
    return wait_any(SYM_nvmlEventSetWait_v3, set, NULL, data, data ? data->timeoutMs : 0);
}

/* One GPU's structured events on set s, the GPU named by its UUID
 * ("GPU-...": a MIG UUID or an unknown one is INVALID_ARGUMENT, as
 * NOT_FOUND would not say the argument is wrong). Subscribing twice is a
 * success (the reference: "treated as success"). */
static nvmlReturn_t register_ops(nvmlEventSet_t s, nvmlGpuOperationalEventConfig_v1_t *cfg)
{
    nvmlReturn_t r = api_on();
    if (r != NVML_SUCCESS)
        return r;
    if (!cfg || !set_live(s) || !memchr(cfg->uuid, '\0', sizeof(cfg->uuid)))
        return NVML_ERROR_INVALID_ARGUMENT;
    for (int g = 0; g < sim_scn->n_gpus; g++) {
        if (strcmp(sim_scn->gpus[g].uuid, cfg->uuid) != 0)
            continue;
        if (!sim_scn->gpus[g].accessible)
            return NVML_ERROR_NO_PERMISSION;
        s->ops[g] = 1;
        return NVML_SUCCESS;
    }
    return NVML_ERROR_INVALID_ARGUMENT;
}

SIM_SYSTEM_FN(nvmlEventSetRegisterGpuOperationalEvents_v1,
              (nvmlEventSet_t set, nvmlGpuOperationalEventConfig_v1_t *config),
              register_ops(set, config))

static nvmlReturn_t context_count(nvmlEventSet_t s, nvmlEventSetGetContextCount_v1_t *out)
{
    nvmlReturn_t r = api_on();
    if (r != NVML_SUCCESS)
        return r;
    if (!out || !set_live(s))
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!s->have_last)
        return NVML_ERROR_NOT_FOUND; /* no event returned yet */
    out->count = s->last_legacy_xid >= 0 ? 1 : 0;
    return NVML_SUCCESS;
}

SIM_SYSTEM_FN(nvmlEventSetGetContextCount_v1,
              (nvmlEventSet_t set, nvmlEventSetGetContextCount_v1_t *count),
              context_count(set, count))

static nvmlReturn_t context_xid(nvmlEventSet_t s,
                                nvmlEventSetGetGpuOperationalEventContextLegacyXid_v1_t *p)
{
    nvmlReturn_t r = api_on();
    if (r != NVML_SUCCESS)
        return r;
    if (!p || !set_live(s))
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!s->have_last)
        return NVML_ERROR_NOT_FOUND;
    if (s->last_legacy_xid < 0 || p->index != 0)
        return NVML_ERROR_INVALID_ARGUMENT; /* no such context record */
    p->xidCode = (unsigned)s->last_legacy_xid;
    return NVML_SUCCESS;
}

SIM_SYSTEM_FN(nvmlEventSetGetGpuOperationalEventContextLegacyXid_v1,
              (nvmlEventSet_t set,
               nvmlEventSetGetGpuOperationalEventContextLegacyXid_v1_t *params),
              context_xid(set, params))
