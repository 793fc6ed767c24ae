/*
 * events_helper.c — the events helper process: its own NVML session, one
 * event set with the Xid (and, where the GPU supports them, ECC single and
 * double bit) events of every GPU, and a loop of 1 s waits, each event
 * sent to the monitor as a record (events.h).
 *
 * One set for every GPU: a wait returns the next event of any of them, so
 * one 1 s wait serves the whole host. Before each wait a progress record
 * names it, after it a heartbeat says it returned, so a wait that never
 * returns is told from a quiet host by the client's watchdog. Answers that
 * cannot change (no event API, no GPU with Xid events) end the helper after
 * saying so; a wait that fails is retried after the set is built again,
 * 5 s doubling to 60 s, with heartbeats meanwhile.
 *
 * Where the library has the GPU operational events (NVML 615), each GPU's
 * are subscribed on the same set and the wait is nvmlEventSetWait_v3,
 * which returns both kinds: still one wait for the host, and one record
 * per event, an operational one marked MIGMON_EVENT_TYPE_OPERATIONAL with
 * the legacy Xid of its context (docs/health.md, "Operational events").
 *
 * The event functions are resolved here with dlsym and not in the shared
 * symbol table: no other process calls them.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/events/events.h"
#include "backend/nvml/nvml_load.h"
#include "core/clock.h"

#define WAIT_MS 1000
#define RETRY_FIRST_NS (5ull * 1000000000ull)
#define RETRY_MAX_NS (60ull * 1000000000ull)
#define MAX_GPUS 4096
/* The events the monitor asks for: those that say a GPU is sick. */
#define WANTED (NVML_EVENT_TYPE_XID | NVML_EVENT_TYPE_SINGLE_BIT_ECC | NVML_EVENT_TYPE_DOUBLE_BIT_ECC)

struct efns {
    nvml_fn_dev_ull supported;
    nvml_fn_event_set_create create;
    nvml_fn_event_set_free free_set;
    nvml_fn_dev_register_events reg;
    nvml_fn_event_set_wait wait;
    /* GPU operational events (NVML 615), all four or none: optional */
    nvml_fn_event_register_ops reg_ops;
    nvml_fn_event_set_wait_v3 wait3;
    nvml_fn_event_context_count ctx_count;
    nvml_fn_event_context_xid ctx_xid;
};

struct egpu {
    nvmlDevice_t h;
    char uuid[EVENTS_UUID_LEN];
    enum events_gpu_state state;
    nvmlReturn_t rc;
};

struct eh {
    struct nvml_lib lib;
    struct efns e;
    nvmlEventSet_t set;
    struct egpu *gpus;
    unsigned ngpus, nwatched;
    unsigned nops; /* GPUs whose operational events are on the set: wait with v3 */
    enum events_mig mig;
};

static void progress(enum events_call call)
{
    struct events_rec_progress r;
    memset(&r, 0, sizeof(r));
    r.call = (uint16_t)call;
    helper_send(EVENTS_PROTO_MAGIC, &r, EVENTS_REC_PROGRESS, sizeof(r));
}

static void beat(nvmlReturn_t rc)
{
    struct events_rec_progress r;
    memset(&r, 0, sizeof(r));
    r.rc = rc;
    helper_send(EVENTS_PROTO_MAGIC, &r, EVENTS_REC_BEAT, sizeof(r));
}

static void send_state(const struct eh *d, enum events_state state, enum events_call call,
                       nvmlReturn_t rc, bool retry, const char *detail)
{
    struct events_rec_state s;
    memset(&s, 0, sizeof(s));
    s.state = (uint16_t)state;
    s.call = (uint16_t)call;
    s.rc = rc;
    s.retry = retry;
    s.ngpus = (uint16_t)(d->ngpus > 0xffff ? 0xffff : d->ngpus);
    s.nwatched = (uint16_t)(d->nwatched > 0xffff ? 0xffff : d->nwatched);
    s.mig = (uint16_t)d->mig;
    snprintf(s.detail, sizeof(s.detail), "%s", detail ? detail : "");
    helper_send(EVENTS_PROTO_MAGIC, &s, EVENTS_REC_STATE, sizeof(s));
}

/* Each GPU opened and what became of its registration, so the monitor
 * counts 0 Xids only on GPUs whose events are watched. */
static void send_gpus(const struct eh *d)
{
    for (unsigned i = 0; i < d->ngpus && i < 0xffff; i++) {
        struct events_rec_gpu r;
        memset(&r, 0, sizeof(r));
        memcpy(r.gpu_uuid, d->gpus[i].uuid, sizeof(r.gpu_uuid));
        r.gpu_uuid[EVENTS_UUID_LEN - 1] = '\0';
        r.index = (uint16_t)i;
        r.count = (uint16_t)(d->ngpus > 0xffff ? 0xffff : d->ngpus);
        r.state = (uint16_t)d->gpus[i].state;
        r.rc = d->gpus[i].rc;
        helper_send(EVENTS_PROTO_MAGIC, &r, EVENTS_REC_GPU, sizeof(r));
    }
}

/* Whether a MIG instance's own events reach this caller (events.h, enum
 * events_mig), from GPU h when it is in MIG mode: the aggregate memory of
 * a MIG-enabled GPU is given on the same condition ("only if the caller
 * has appropriate privileges", nvml.h), and answers NO_PERMISSION
 * otherwise. */
static enum events_mig mig_seen(const struct nvml_fns *f, nvmlDevice_t h)
{
    unsigned int cur = 0, pend = 0;
    if (!f->mig_mode || f->mig_mode(h, &cur, &pend) != NVML_SUCCESS ||
        cur != NVML_DEVICE_MIG_ENABLE)
        return EVENTS_MIG_UNKNOWN;
    nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
    if (f->memory_v2) {
        nvmlMemory_v2_t m2;
        memset(&m2, 0, sizeof(m2));
        m2.version = nvmlMemory_v2;
        rc = f->memory_v2(h, &m2);
    }
    if (rc != NVML_SUCCESS && rc != NVML_ERROR_NO_PERMISSION && f->memory_v1) {
        nvmlMemory_t m1;
        rc = f->memory_v1(h, &m1);
    }
    return rc == NVML_SUCCESS             ? EVENTS_MIG_SEEN
           : rc == NVML_ERROR_NO_PERMISSION ? EVENTS_MIG_HIDDEN
                                            : EVENTS_MIG_UNKNOWN;
}

static void send_done(void)
{
    struct events_rec_progress r;
    memset(&r, 0, sizeof(r));
    helper_send(EVENTS_PROTO_MAGIC, &r, EVENTS_REC_DONE, sizeof(r));
}

/* 0, or the name of the first event function the library lacks. */
static const char *resolve(struct eh *d)
{
    static const struct {
        const char *name;
        size_t off;
    } syms[] = {
#define S(n, m) {n, offsetof(struct efns, m)}
        S("nvmlDeviceGetSupportedEventTypes", supported), S("nvmlEventSetCreate", create),
        S("nvmlEventSetFree", free_set), S("nvmlDeviceRegisterEvents", reg),
        S("nvmlEventSetWait_v2", wait),
#undef S
    };
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        void *p = dlsym(d->lib.dl, syms[i].name);
        if (!p)
            return syms[i].name;
        memcpy((char *)&d->e + syms[i].off, &p, sizeof(p));
    }
    /* The operational events' calls: one wait serves both kinds (v3
     * returns the event bits too), so they are used only all together. */
    static const struct {
        const char *name;
        size_t off;
    } ops[] = {
#define S(n, m) {n, offsetof(struct efns, m)}
        S("nvmlEventSetRegisterGpuOperationalEvents_v1", reg_ops),
        S("nvmlEventSetWait_v3", wait3),
        S("nvmlEventSetGetContextCount_v1", ctx_count),
        S("nvmlEventSetGetGpuOperationalEventContextLegacyXid_v1", ctx_xid),
#undef S
    };
    void *got[4];
    bool all = true;
    for (size_t i = 0; i < 4; i++)
        all &= (got[i] = dlsym(d->lib.dl, ops[i].name)) != NULL;
    for (size_t i = 0; i < 4 && all; i++)
        memcpy((char *)&d->e + ops[i].off, &got[i], sizeof(got[i]));
    return NULL;
}

static void teardown(struct eh *d)
{
    if (d->set)
        d->e.free_set(d->set);
    d->set = NULL;
    d->nwatched = 0;
    d->nops = 0;
}

/* The GPUs, their UUIDs and the set. 0 watching; 1 nothing to watch, ever
 * (state sent); -1 failed, retry (state sent). */
static int setup(struct eh *d)
{
    const struct nvml_fns *f = &d->lib.f;
    progress(EVENTS_CALL_SETUP);
    unsigned n = 0;
    nvmlReturn_t rc = f->device_count(&n);
    if (rc != NVML_SUCCESS) {
        send_state(d, EVENTS_STATE_FAILED, EVENTS_CALL_SETUP, rc, true, "nvmlDeviceGetCount_v2");
        return -1;
    }
    if (n > MAX_GPUS)
        n = MAX_GPUS;
    free(d->gpus);
    d->gpus = calloc(n ? n : 1, sizeof(*d->gpus));
    d->ngpus = 0;
    if (!d->gpus) {
        send_state(d, EVENTS_STATE_FAILED, EVENTS_CALL_SETUP, NVML_ERROR_MEMORY, true, NULL);
        return -1;
    }
    rc = d->e.create(&d->set);
    if (rc == NVML_ERROR_FUNCTION_NOT_FOUND) {
        send_state(d, EVENTS_STATE_NO_API, EVENTS_CALL_SETUP, rc, false, "nvmlEventSetCreate");
        return 1;
    }
    if (rc != NVML_SUCCESS) {
        d->set = NULL;
        send_state(d, EVENTS_STATE_FAILED, EVENTS_CALL_SETUP, rc, true, "nvmlEventSetCreate");
        return -1;
    }
    bool no_api = false;
    d->mig = EVENTS_MIG_UNKNOWN;
    for (unsigned i = 0; i < n; i++) {
        struct egpu *g = &d->gpus[d->ngpus];
        if (f->handle_by_index(i, &g->h) != NVML_SUCCESS ||
            f->uuid(g->h, g->uuid, sizeof(g->uuid)) != NVML_SUCCESS)
            continue; /* the monitor reports that GPU's own trouble */
        g->uuid[sizeof(g->uuid) - 1] = '\0';
        d->ngpus++;
        unsigned long long types = 0;
        rc = d->e.supported(g->h, &types);
        if (rc == NVML_ERROR_FUNCTION_NOT_FOUND)
            no_api = true;
        g->state = rc == NVML_SUCCESS ? EVENTS_GPU_NO_XID : EVENTS_GPU_FAILED;
        g->rc = rc;
        if (rc == NVML_SUCCESS && d->e.reg_ops) {
            /* the GPU's structured events on the same set (by its UUID):
             * zeroed filters take every level and severity */
            nvmlGpuOperationalEventConfig_v1_t cfg;
            memset(&cfg, 0, sizeof(cfg));
            memcpy(cfg.uuid, g->uuid, sizeof(cfg.uuid));
            if (d->e.reg_ops(d->set, &cfg) == NVML_SUCCESS)
                d->nops++;
        }
        if (rc != NVML_SUCCESS || !(types & NVML_EVENT_TYPE_XID))
            continue;
        rc = d->e.reg(g->h, types & WANTED, d->set);
        if (rc == NVML_ERROR_NOT_SUPPORTED) /* some of the ECC types after all */
            rc = d->e.reg(g->h, NVML_EVENT_TYPE_XID, d->set);
        g->state = rc == NVML_SUCCESS ? EVENTS_GPU_WATCHED : EVENTS_GPU_FAILED;
        g->rc = rc;
        if (rc != NVML_SUCCESS)
            continue;
        d->nwatched++;
        if (d->mig == EVENTS_MIG_UNKNOWN)
            d->mig = mig_seen(f, g->h);
    }
    if (d->nwatched == 0 && d->nops == 0) {
        teardown(d);
        send_state(d, no_api ? EVENTS_STATE_NO_API : EVENTS_STATE_UNSUPPORTED, EVENTS_CALL_SETUP,
                   no_api ? NVML_ERROR_FUNCTION_NOT_FOUND : NVML_ERROR_NOT_SUPPORTED, false,
                   no_api ? "nvmlDeviceGetSupportedEventTypes" : NULL);
        return 1;
    }
    send_gpus(d);
    return 0;
}

static void send_event(const struct eh *d, const nvmlEventData_t *ev)
{
    struct events_rec_event r;
    memset(&r, 0, sizeof(r));
    r.mono_ns = clock_mono_ns();
    r.wall_ns = clock_wall_ns();
    for (unsigned i = 0; i < d->ngpus && !r.gpu_uuid[0]; i++)
        if (d->gpus[i].h == ev->device)
            memcpy(r.gpu_uuid, d->gpus[i].uuid, sizeof(r.gpu_uuid));
    if (!r.gpu_uuid[0] &&
        d->lib.f.uuid(ev->device, r.gpu_uuid, sizeof(r.gpu_uuid)) != NVML_SUCCESS)
        r.gpu_uuid[0] = '\0';
    r.gpu_uuid[EVENTS_UUID_LEN - 1] = '\0';
    r.type = ev->eventType;
    r.xid = (ev->eventType & NVML_EVENT_TYPE_XID) ? (uint32_t)ev->eventData : 0;
    r.gi_id = ev->gpuInstanceId == NVML_EVENT_NO_INSTANCE ? -1 : (int32_t)ev->gpuInstanceId;
    r.ci_id = ev->computeInstanceId == NVML_EVENT_NO_INSTANCE ? -1 : (int32_t)ev->computeInstanceId;
    helper_send(EVENTS_PROTO_MAGIC, &r, EVENTS_REC_EVENT, sizeof(r));
}

/*
 * One record of nvmlEventSetWait_v3. An event bit (eventType non-zero) is
 * sent as v2's is; a structured operational event (eventType
 * NVML_EVENT_TYPE_NONE) as an event of type MIGMON_EVENT_TYPE_OPERATIONAL
 * with its severity, category and the legacy Xid of its context, if it
 * carries one. The kinds are told apart by eventType because nvml.h's
 * values of dataType are not known here (nvml_api.h).
 */
static void send_event_v3(const struct eh *d, const nvmlEventSetWait_v3_t *ev)
{
    struct events_rec_event r;
    memset(&r, 0, sizeof(r));
    r.mono_ns = clock_mono_ns();
    r.wall_ns = clock_wall_ns();
    memcpy(r.gpu_uuid, ev->uuid, sizeof(r.gpu_uuid));
    r.gpu_uuid[EVENTS_UUID_LEN - 1] = '\0';
    r.gi_id = ev->gpuInstanceId == NVML_GPU_INSTANCE_ID_ANY ? -1 : (int32_t)ev->gpuInstanceId;
    r.ci_id =
        ev->computeInstanceId == NVML_COMPUTE_INSTANCE_ID_ANY ? -1 : (int32_t)ev->computeInstanceId;
    if (ev->eventType != NVML_EVENT_TYPE_NONE) {
        r.type = ev->eventType;
        r.xid = (ev->eventType & NVML_EVENT_TYPE_XID) ? (uint32_t)ev->eventData : 0;
    } else {
        r.type = MIGMON_EVENT_TYPE_OPERATIONAL;
        r.severity = ev->severity;
        r.category = ev->categoryId;
        nvmlEventSetGetContextCount_v1_t n;
        memset(&n, 0, sizeof(n));
        if (d->e.ctx_count(d->set, &n) == NVML_SUCCESS) {
            for (unsigned i = 0; i < n.count && i < 64 && !r.xid; i++) {
                nvmlEventSetGetGpuOperationalEventContextLegacyXid_v1_t x;
                memset(&x, 0, sizeof(x));
                x.index = i;
                if (d->e.ctx_xid(d->set, &x) == NVML_SUCCESS && x.xidCode <= 65535)
                    r.xid = x.xidCode;
            }
        }
    }
    helper_send(EVENTS_PROTO_MAGIC, &r, EVENTS_REC_EVENT, sizeof(r));
}

/* The wait the set is read with: v3 while operational events are
 * registered (it returns the event bits too: one wait for both), else v2. */
static enum events_call wait_call(const struct eh *d)
{
    return d->nops ? EVENTS_CALL_WAIT_V3 : EVENTS_CALL_WAIT;
}

static const char *wait_name(const struct eh *d)
{
    return d->nops ? "nvmlEventSetWait_v3" : "nvmlEventSetWait_v2";
}

/* One wait of the version wait_call() names. */
static nvmlReturn_t wait_one(const struct eh *d, unsigned ms)
{
    if (d->nops) {
        nvmlEventSetWait_v3_t ev;
        memset(&ev, 0, sizeof(ev));
        ev.timeoutMs = ms;
        nvmlReturn_t rc = d->e.wait3(d->set, &ev);
        if (rc == NVML_SUCCESS)
            send_event_v3(d, &ev);
        return rc;
    }
    nvmlEventData_t ev;
    memset(&ev, 0, sizeof(ev));
    nvmlReturn_t rc = d->e.wait(d->set, &ev, ms);
    if (rc == NVML_SUCCESS)
        send_event(d, &ev);
    return rc;
}

/* The events already pending, with waits that do not block; then the
 * state says watching, so a client that waits for it has them too. */
static nvmlReturn_t catch_up(struct eh *d)
{
    nvmlReturn_t rc;
    for (;;) {
        progress(wait_call(d));
        rc = wait_one(d, 0);
        beat(rc);
        if (rc != NVML_SUCCESS)
            break;
    }
    if (rc == NVML_ERROR_TIMEOUT) {
        send_state(d, EVENTS_STATE_WATCHING, EVENTS_CALL_NONE, NVML_SUCCESS, false, NULL);
        rc = NVML_SUCCESS;
    }
    return rc;
}

static void idle_beat(void *ctx)
{
    (void)ctx;
    beat(NVML_SUCCESS);
}

static void run(struct eh *d)
{
    uint64_t retry = RETRY_FIRST_NS;
    for (;;) {
        int s = setup(d);
        if (s > 0)
            return;
        if (s == 0) {
            nvmlReturn_t rc = catch_up(d);
            while (rc == NVML_SUCCESS) {
                progress(wait_call(d));
                rc = wait_one(d, WAIT_MS);
                beat(rc);
                if (rc != NVML_SUCCESS && rc != NVML_ERROR_TIMEOUT)
                    break;
                if (!helper_wait_until(clock_mono_ns())) /* the monitor went away */
                    return;
                retry = RETRY_FIRST_NS;
                rc = NVML_SUCCESS;
            }
            /* named before teardown, which forgets the set's registrations */
            enum events_call call = wait_call(d);
            const char *name = wait_name(d);
            teardown(d);
            if (rc == NVML_ERROR_FUNCTION_NOT_FOUND) {
                send_state(d, EVENTS_STATE_NO_API, call, rc, false, name);
                return;
            }
            send_state(d, EVENTS_STATE_FAILED, call, rc, true, name);
        }
        if (!helper_idle_until(clock_mono_ns() + retry, 1000000000ull, idle_beat, NULL))
            return;
        retry = retry * 2 > RETRY_MAX_NS ? RETRY_MAX_NS : retry * 2;
    }
}

int events_helper_main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s %s LIBRARY|''\n", argv[0], EVENTS_HELPER_ARG);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    struct eh *d = calloc(1, sizeof(*d));
    if (!d)
        return 1;
    progress(EVENTS_CALL_INIT);
    bool missing = false;
    char err[1024];
    if (nvml_lib_open(&d->lib, argv[2][0] ? argv[2] : NULL, &missing, err, sizeof(err)) != 0) {
        send_state(d, EVENTS_STATE_FAILED, EVENTS_CALL_INIT, NVML_ERROR_LIBRARY_NOT_FOUND, false,
                   "libnvidia-ml");
        send_done();
        free(d);
        return 0;
    }
    const char *lacks = resolve(d);
    nvmlReturn_t rc = NVML_SUCCESS;
    if (lacks) {
        send_state(d, EVENTS_STATE_NO_API, EVENTS_CALL_INIT, NVML_ERROR_FUNCTION_NOT_FOUND, false,
                   lacks);
    } else {
        rc = d->lib.f.init_with_flags ? d->lib.f.init_with_flags(NVML_INIT_FLAG_NO_GPUS)
                                      : d->lib.f.init();
        if (rc != NVML_SUCCESS)
            send_state(d, EVENTS_STATE_FAILED, EVENTS_CALL_INIT, rc, false, "nvmlInit");
        else
            run(d);
    }
    send_done();
    if (!lacks && rc == NVML_SUCCESS) {
        teardown(d);
        d->lib.f.shutdown();
    }
    free(d->gpus);
    nvml_lib_close(&d->lib);
    free(d);
    return 0;
}
