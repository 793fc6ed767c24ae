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
 * Faults: [events] events_api = no makes every function here answer
 * FUNCTION_NOT_FOUND, as a library whose driver lacks them would to a
 * caller that resolved them; event_wait = fail makes the wait answer
 * UNKNOWN, event_wait = hang makes it never return.
 */
#include <errno.h>
#include <math.h>
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
};

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

/* The first event due for s at time t, marked delivered, into d. */
static bool next_due(struct nvmlEventSet_st *s, double t, nvmlEventData_t *d)
{
    const struct sim_events *e = &sim_scn->events;
    for (int i = 0; i < e->n && e->ev[i].t <= t; i++) {
        const struct sim_event *v = &e->ev[i];
        if (s->delivered[i] || !(s->mask[v->gpu] & v->type))
            continue;
        const struct sim_mig *m = v->slot >= 0 ? sim_mig_live(v->gpu, v->slot, v->t) : NULL;
        if (m && !sim_scn->sys.privileged)
            continue; /* an instance's event: not for an unprivileged caller */
        s->delivered[i] = 1;
        memset(d, 0, sizeof(*d));
        d->device = sim_gpu_handle(v->gpu);
        d->eventType = v->type;
        d->eventData = v->type == NVML_EVENT_TYPE_XID ? (unsigned long long)v->xid : 0;
        d->gpuInstanceId = m ? (unsigned)m->gi : NVML_EVENT_NO_INSTANCE;
        d->computeInstanceId = m ? (unsigned)m->ci : NVML_EVENT_NO_INSTANCE;
        return true;
    }
    return false;
}

/* The time of the set's next event after t that is still to be delivered
 * (the privilege filter aside: a wait may wake for nothing), or INFINITY. */
static double next_at(const struct nvmlEventSet_st *s, double t)
{
    const struct sim_events *e = &sim_scn->events;
    for (int i = 0; i < e->n; i++)
        if (e->ev[i].t > t && !s->delivered[i] && (s->mask[e->ev[i].gpu] & e->ev[i].type))
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

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
    double deadline = real_now() + timeoutms / 1000.0;
    for (bool first = true;; first = false) {
        struct sim_call c;
        nvmlReturn_t r = sim_enter(&c, SYM_nvmlEventSetWait_v2);
        if (r == NVML_SUCCESS && first)
            r = sim_fault(&c, -1, -1);
        if (r == NVML_SUCCESS)
            r = api_on();
        if (r == NVML_SUCCESS && (!data || !set_live(set)))
            r = NVML_ERROR_INVALID_ARGUMENT;
        if (r == NVML_SUCCESS && sim_scn->events.wait == SIM_EVENT_WAIT_FAIL)
            r = NVML_ERROR_UNKNOWN;
        if (r == NVML_SUCCESS && sim_scn->events.wait == SIM_EVENT_WAIT_HANG) {
            sim_leave(r);
            for (;;) /* as a driver wait that never wakes: until the process is killed */
                nap_ms(3600L * 1000);
        }
        if (r == NVML_SUCCESS && next_due(set, c.t, data))
            return sim_leave(NVML_SUCCESS);
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
