/*
 * dcgm.c — the monitor's side of DCGM: start the helper, read its records
 * without blocking, keep the latest values per entity, watch for a helper
 * that stalls or dies, and answer lookups for the NVML backend.
 *
 * Owner: the NVML backend state (one thread). Reasons handed out are static
 * strings, so a snapshot never points into this module's memory.
 */
#include "backend/dcgm/dcgm.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dcgm/dcgm_api.h"
#include "core/clock.h"
#include "core/debuglog.h"

#define DCGM_MAX_FAILS 3
#define DCGM_BACKOFF_MAX_NS (30ull * 1000000000ull)
#define DCGM_WATCHDOG_FLOOR_NS (1000ull * 1000000ull)
#define DCGM_MAX_ENTS 1024

static const char *const WHY_OFF = "DCGM off (--dcgm off)";
static const char *const WHY_NO_EXE = "DCGM not started (no helper binary given)";
static const char *const WHY_STARTING = "waiting for DCGM's first update";
static const char *const WHY_NOT_INSTALLED =
    "DCGM not installed (no libdcgm.so.4 or libdcgm.so.3)";
static const char *const WHY_LIB_OLD = "the DCGM library lacks a function the monitor needs";
static const char *const WHY_INIT = "DCGM could not start (dcgmInit failed)";
static const char *const WHY_NO_ENGINE_USER =
    "no nv-hostengine answered (unix:/tmp/nv-hostengine, 127.0.0.1:5555), and an embedded DCGM "
    "engine needs root";
static const char *const WHY_NO_ENGINE_OTHER =
    "no nv-hostengine answered, and another DCGM engine runs here that may hold the profiling "
    "module: give its address with --dcgm ADDR";
static const char *const WHY_NO_ENGINE_ADDR = "the nv-hostengine given with --dcgm does not answer";
static const char *const WHY_NO_ENGINE_GPM =
    "no nv-hostengine answered, and no embedded DCGM engine is started where every GPU has GPM "
    "(Hopper or later)";
static const char *const WHY_REQUIRES_ROOT =
    "DCGM answered REQUIRES_ROOT: profiling fields and MIG instances of this GPU need root, or "
    "an nv-hostengine running as root";
static const char *const WHY_PROF_HELD =
    "DCGM's profiling module returned an unrecoverable error (-37): another profiler (a second "
    "DCGM engine, Nsight, CUPTI) holds it";
static const char *const WHY_MODULE =
    "DCGM's profiling module is not loaded (MODULE_NOT_LOADED)";
static const char *const WHY_PROF_UNSUPPORTED = "DCGM has no profiling fields for this GPU";
static const char *const WHY_LOST = "the DCGM hostengine connection was lost; reconnecting";
static const char *const WHY_FAILED = "a DCGM call failed (details in the debug log, -d)";
static const char *const WHY_HELPER_FAILED = "DCGM helper exited; restarting it";
static const char *const WHY_NO_RECORD = "no DCGM value for this device";
static const char *const WHY_STALE = "DCGM values are stale (the helper sent nothing recently)";
static const char *const WHY_BLANK = "DCGM has no sample of this field yet (BLANK)";
static const char *const WHY_MULTI_PASS =
    "not watched: DCGM multiplexes it with GR_ENGINE_ACTIVE on this GPU (PROFILING_MULTI_PASS)";
static const char *const WHY_VALUE_ERR = "DCGM returned an error for this value";
static const char *const WHY_NOT_HERE = "DCGM has no such field for this entity";
static const char *const WHY_RANGE =
    "DCGM returned a ratio outside 0-1 (over 1 is a known DCGM overshoot on GPU instances)";

static const char *const WHY_STALLED[DCGM_CALL_COUNT] = {
    [DCGM_CALL_NONE] = "DCGM helper stalled; restarting it",
    [DCGM_CALL_LOAD] = "DCGM helper stalled loading libdcgm; restarting it",
    [DCGM_CALL_CONNECT] = "DCGM helper stalled in dcgmConnect_v2; restarting it",
    [DCGM_CALL_EMBEDDED] = "DCGM helper stalled in dcgmStartEmbedded_v2; restarting it",
    [DCGM_CALL_DISCOVER] = "DCGM helper stalled reading the GPUs and MIG hierarchy; restarting it",
    [DCGM_CALL_WATCH] = "DCGM helper stalled in dcgmWatchFields; restarting it",
    [DCGM_CALL_READ] = "DCGM helper stalled in dcgmEntitiesGetLatestValues; restarting it",
};
static const char *const WHY_HUNG_OFF[DCGM_CALL_COUNT] = {
    [DCGM_CALL_NONE] = "DCGM off: the DCGM helper hung 3 times",
    [DCGM_CALL_LOAD] = "DCGM off: the DCGM helper hung 3 times loading libdcgm",
    [DCGM_CALL_CONNECT] = "DCGM off: the DCGM helper hung 3 times in dcgmConnect_v2",
    [DCGM_CALL_EMBEDDED] = "DCGM off: the DCGM helper hung 3 times in dcgmStartEmbedded_v2",
    [DCGM_CALL_DISCOVER] = "DCGM off: the DCGM helper hung 3 times reading the MIG hierarchy",
    [DCGM_CALL_WATCH] = "DCGM off: the DCGM helper hung 3 times in dcgmWatchFields",
    [DCGM_CALL_READ] = "DCGM off: the DCGM helper hung 3 times in dcgmEntitiesGetLatestValues",
};

struct cent {
    uint8_t scope;
    int gi_id, ci_id, nci;
    char gpu_uuid[DCGM_UUID_LEN];
    uint64_t rx_ns;
    double v[DCGM_NMETRICS];
    int32_t st[DCGM_NMETRICS];
};

struct dcgm_client {
    struct dcgm_client_opts o;
    char exe[4096], lib[4096], nvml[4096], addr[DCGM_WHERE_LEN];
    const char *why_global; /* a reason for every device, NULL while values may flow */
    struct helper_proc hp;
    struct helper_sup sup;
    uint64_t interval_ns;
    bool have_values, done;
    enum dcgm_call cur_call;
    struct dcgm_rec_state st; /* the helper's last state */
    bool have_state;
    struct cent *ents;
    size_t nents, cap;
    char desc[DCGM_WHERE_LEN + 320];
};

static uint64_t watchdog_ns(const struct dcgm_client *c)
{
    uint64_t w = 3 * c->interval_ns;
    uint64_t floor = c->o.watchdog_floor_ms ? (uint64_t)c->o.watchdog_floor_ms * 1000000ull
                                            : DCGM_WATCHDOG_FLOOR_NS;
    return w < floor ? floor : w;
}

static void spawn(void *ctx)
{
    struct dcgm_client *c = ctx;
    char interval[24];
    snprintf(interval, sizeof(interval), "%u", c->o.interval_ms);
    const char *mode = c->o.mode == DCGM_MODE_EMBEDDED ? "embedded"
                       : c->o.mode == DCGM_MODE_ADDR   ? "addr"
                                                       : "auto";
    char *argv[] = {c->exe,   (char *)DCGM_HELPER_ARG, c->lib, (char *)mode, c->addr,
                    interval, c->nvml, NULL};
    if (helper_proc_spawn(&c->hp, argv) != 0) {
        debuglog_printf("dcgm: could not start the helper: %s", strerror(errno));
        c->sup.run = HELPER_OFF;
        c->why_global = WHY_HELPER_FAILED;
        return;
    }
    c->sup.run = HELPER_RUNNING;
    c->done = false;
    c->cur_call = DCGM_CALL_LOAD;
}

/* The reason a state gives every device, NULL for one that lets values flow. */
static const char *state_reason(const struct dcgm_rec_state *s)
{
    switch (s->state) {
    case DCGM_STATE_NOT_INSTALLED:
        return s->rc == -1 ? WHY_NOT_INSTALLED : WHY_LIB_OLD;
    case DCGM_STATE_NO_ENGINE:
        if (strcmp(s->detail, "GPM everywhere") == 0)
            return WHY_NO_ENGINE_GPM;
        if (s->detail[0] && strcmp(s->detail, "not root") != 0)
            return WHY_NO_ENGINE_OTHER;
        return strchr(s->where, ',') ? WHY_NO_ENGINE_USER : WHY_NO_ENGINE_ADDR;
    case DCGM_STATE_FAILED:
        if (s->call == DCGM_CALL_LOAD)
            return WHY_INIT;
        switch (s->rc) {
        case DCGM_ST_REQUIRES_ROOT: return WHY_REQUIRES_ROOT;
        case DCGM_ST_PROFILING_LIBRARY_ERROR: return WHY_PROF_HELD;
        case DCGM_ST_MODULE_NOT_LOADED: return WHY_MODULE;
        case DCGM_ST_PROFILING_NOT_SUPPORTED:
        case DCGM_ST_NOT_SUPPORTED: return WHY_PROF_UNSUPPORTED;
        case DCGM_ST_CONNECTION_NOT_VALID: return WHY_LOST;
        default: return WHY_FAILED;
        }
    default:
        return NULL;
    }
}

/* helper_sup_ops.failed */
static void failed(void *ctx, bool stalled, uint64_t now)
{
    struct dcgm_client *c = ctx;
    if (stalled)
        debuglog_printf("dcgm: the helper was in call %d", (int)c->cur_call);
    enum dcgm_call call = c->cur_call < DCGM_CALL_COUNT ? c->cur_call : DCGM_CALL_NONE;
    uint64_t base = c->o.backoff_ms ? (uint64_t)c->o.backoff_ms * 1000000ull : 1000000000ull;
    if (helper_sup_failed(&c->sup, &c->hp, DCGM_MAX_FAILS, base, DCGM_BACKOFF_MAX_NS, now))
        c->why_global = stalled ? WHY_STALLED[call] : WHY_HELPER_FAILED;
    else
        c->why_global = stalled ? WHY_HUNG_OFF[call] : WHY_HELPER_FAILED;
}

static struct cent *entity(struct dcgm_client *c, const struct dcgm_rec_values *r)
{
    for (size_t i = 0; i < c->nents; i++) {
        struct cent *e = &c->ents[i];
        if (e->scope == r->scope && e->gi_id == r->gi_id && e->ci_id == r->ci_id &&
            strcmp(e->gpu_uuid, r->gpu_uuid) == 0)
            return e;
    }
    if (c->nents >= DCGM_MAX_ENTS)
        return NULL;
    if (c->nents == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        struct cent *n = realloc(c->ents, cap * sizeof(*n));
        if (!n)
            return NULL;
        c->ents = n;
        c->cap = cap;
    }
    struct cent *e = &c->ents[c->nents++];
    memset(e, 0, sizeof(*e));
    e->scope = r->scope;
    e->gi_id = r->gi_id;
    e->ci_id = r->ci_id;
    memcpy(e->gpu_uuid, r->gpu_uuid, sizeof(e->gpu_uuid));
    e->gpu_uuid[DCGM_UUID_LEN - 1] = '\0';
    return e;
}

static void on_record(void *ctx, const unsigned char *p, uint8_t type)
{
    struct dcgm_client *c = ctx;
    switch (type) {
    case DCGM_REC_STATE:
        memcpy(&c->st, p, sizeof(c->st));
        c->st.where[DCGM_WHERE_LEN - 1] = c->st.detail[sizeof(c->st.detail) - 1] = '\0';
        c->have_state = true;
        c->why_global = state_reason(&c->st);
        debuglog_printf("dcgm: state %u at call %u rc %d (%s) %s", c->st.state, c->st.call,
                        c->st.rc, c->st.where, c->st.detail);
        break;
    case DCGM_REC_VALUES: {
        struct dcgm_rec_values r;
        memcpy(&r, p, sizeof(r));
        r.gpu_uuid[DCGM_UUID_LEN - 1] = '\0';
        struct cent *e = entity(c, &r);
        if (!e)
            break;
        e->nci = r.nci;
        e->rx_ns = c->hp.last_rx_ns;
        memcpy(e->v, r.v, sizeof(e->v));
        memcpy(e->st, r.st, sizeof(e->st));
        break;
    }
    case DCGM_REC_PROGRESS: {
        struct dcgm_rec_progress r;
        memcpy(&r, p, sizeof(r));
        c->cur_call = r.call < DCGM_CALL_COUNT ? (enum dcgm_call)r.call : DCGM_CALL_NONE;
        break;
    }
    case DCGM_REC_CYCLE: {
        struct dcgm_rec_cycle r;
        memcpy(&r, p, sizeof(r));
        c->cur_call = DCGM_CALL_NONE;
        if (r.have_values) {
            c->have_values = true;
            c->sup.fails = 0;
        }
        break;
    }
    case DCGM_REC_DONE:
        c->done = true;
        break;
    default:
        break;
    }
}

static size_t rec_size(uint8_t type)
{
    switch (type) {
    case DCGM_REC_STATE: return sizeof(struct dcgm_rec_state);
    case DCGM_REC_VALUES: return sizeof(struct dcgm_rec_values);
    case DCGM_REC_PROGRESS: return sizeof(struct dcgm_rec_progress);
    case DCGM_REC_CYCLE:
    case DCGM_REC_DONE: return sizeof(struct dcgm_rec_cycle);
    default: return 0;
    }
}

struct dcgm_client *dcgm_client_open(const struct dcgm_client_opts *o)
{
    struct dcgm_client *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->o = *o;
    helper_proc_init(&c->hp, "dcgm");
    if (c->o.interval_ms < 100)
        c->o.interval_ms = 100;
    c->interval_ns = (uint64_t)c->o.interval_ms * 1000000ull;
    snprintf(c->lib, sizeof(c->lib), "%s", o->lib_path ? o->lib_path : "");
    snprintf(c->addr, sizeof(c->addr), "%s", o->addr ? o->addr : "");
    snprintf(c->nvml, sizeof(c->nvml), "%s", o->nvml_path ? o->nvml_path : "");
    if (o->mode == DCGM_MODE_OFF) {
        c->sup.run = HELPER_OFF;
        c->why_global = WHY_OFF;
        return c;
    }
    if (!o->exe || !o->exe[0]) {
        c->sup.run = HELPER_OFF;
        c->why_global = WHY_NO_EXE;
        return c;
    }
    snprintf(c->exe, sizeof(c->exe), "%s", o->exe);
    spawn(c);
    return c;
}

static const struct helper_sup_ops sup_ops = {
    .magic = DCGM_PROTO_MAGIC,
    .size = rec_size,
    .on = on_record,
    .spawn = spawn,
    .failed = failed,
};

void dcgm_client_poll(struct dcgm_client *c)
{
    if (!c)
        return;
    if (helper_sup_poll(&c->sup, &c->hp, &sup_ops, c, &c->done, watchdog_ns(c)) && !c->why_global)
        c->why_global = WHY_FAILED;
}

void dcgm_client_settle(struct dcgm_client *c, unsigned timeout_ms)
{
    if (!c)
        return;
    uint64_t deadline = clock_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
    while (c->sup.run == HELPER_RUNNING && !c->have_values && !c->done &&
           !(c->have_state && c->st.state != DCGM_STATE_WATCHING && c->st.retry)) {
        uint64_t now = clock_mono_ns();
        if (now >= deadline)
            break;
        helper_proc_wait(&c->hp, (int)((deadline - now) / 1000000ull) + 1);
        dcgm_client_poll(c);
    }
    dcgm_client_poll(c);
}

void dcgm_client_wait_state(struct dcgm_client *c, unsigned timeout_ms)
{
    if (!c)
        return;
    uint64_t deadline = clock_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
    while (c->sup.run == HELPER_RUNNING && !c->have_state) {
        uint64_t now = clock_mono_ns();
        if (now >= deadline)
            break;
        helper_proc_wait(&c->hp, (int)((deadline - now) / 1000000ull) + 1);
        dcgm_client_poll(c);
    }
}

void dcgm_client_close(struct dcgm_client *c)
{
    if (!c)
        return;
    helper_proc_reap(&c->hp, false);
    free(c->ents);
    free(c);
}

int dcgm_client_helper_pid(const struct dcgm_client *c)
{
    return c && c->hp.pid > 0 ? (int)c->hp.pid : -1;
}

const char *dcgm_client_describe(const struct dcgm_client *c)
{
    if (!c)
        return WHY_OFF;
    if (c->why_global)
        return c->why_global;
    if (!c->have_state || c->st.state != DCGM_STATE_WATCHING)
        return WHY_STARTING;
    struct dcgm_client *w = (struct dcgm_client *)c; /* the description cache */
    double every = c->st.interval_ms / 1000.0;
    int n = snprintf(w->desc, sizeof(w->desc), "DCGM %s%s, watched every %g s",
                     c->st.source == DCGM_SRC_EMBEDDED ? "embedded in the helper"
                                                       : "via nv-hostengine ",
                     c->st.source == DCGM_SRC_EMBEDDED ? "" : c->st.where, every);
    if (c->st.left_rc == DCGM_ST_PROFILING_MULTI_PASS && n > 0 && (size_t)n < sizeof(w->desc)) {
        size_t len = (size_t)n;
        len += (size_t)snprintf(w->desc + len, sizeof(w->desc) - len, "; not watched:");
        for (int k = 0; k < DCGM_NMETRICS && len < sizeof(w->desc); k++) {
            if (!(c->st.watched & (1u << k)))
                len += (size_t)snprintf(w->desc + len, sizeof(w->desc) - len, " %s",
                                        dcgm_metric_name[k] + 5);
        }
        if (len < sizeof(w->desc))
            snprintf(w->desc + len, sizeof(w->desc) - len, " (multiplexed)");
    }
    return w->desc;
}

bool dcgm_client_quiet(const struct dcgm_client *c)
{
    return !c || c->o.mode == DCGM_MODE_OFF || !c->exe[0] ||
           (c->have_state && c->st.state == DCGM_STATE_NOT_INSTALLED);
}

static const struct cent *find(const struct dcgm_client *c, uint8_t scope, const char *gpu_uuid,
                               int gi_id, int ci_id)
{
    for (size_t i = 0; i < c->nents; i++) {
        const struct cent *e = &c->ents[i];
        if (e->scope == scope && e->gi_id == gi_id && e->ci_id == ci_id &&
            strcmp(e->gpu_uuid, gpu_uuid) == 0)
            return e;
    }
    return NULL;
}

static bool view_begin(const struct dcgm_client *c, struct dcgm_view *out)
{
    memset(out, 0, sizeof(*out));
    if (!c) {
        out->why = WHY_OFF;
        return false;
    }
    if (c->why_global && c->sup.run != HELPER_RUNNING) {
        out->why = c->why_global;
        return false;
    }
    if (c->why_global && !(c->have_state && c->st.state == DCGM_STATE_WATCHING)) {
        out->why = c->why_global;
        return false;
    }
    return true;
}

static void view_from(const struct dcgm_client *c, const struct cent *e, struct dcgm_view *out)
{
    if (!e) {
        out->why = c->have_values ? WHY_NO_RECORD : WHY_STARTING;
        return;
    }
    if (clock_mono_ns() - e->rx_ns > watchdog_ns(c) + c->interval_ns) {
        out->why = c->why_global ? c->why_global : WHY_STALE;
        return;
    }
    out->ok = true;
    out->nci = e->nci;
    out->ci_level = e->scope == DCGM_SCOPE_CI;
    memcpy(out->v, e->v, sizeof(out->v));
    for (int k = 0; k < DCGM_NMETRICS; k++)
        out->st[k] = e->st[k];
}

void dcgm_client_gpu(const struct dcgm_client *c, const char *gpu_uuid, struct dcgm_view *out)
{
    if (view_begin(c, out))
        view_from(c, find(c, DCGM_SCOPE_GPU, gpu_uuid, -1, -1), out);
}

void dcgm_client_mig(const struct dcgm_client *c, const char *gpu_uuid, int gi_id, int ci_id,
                     struct dcgm_view *out)
{
    if (!view_begin(c, out))
        return;
    const struct cent *e = find(c, DCGM_SCOPE_CI, gpu_uuid, gi_id, ci_id);
    if (!e)
        e = find(c, DCGM_SCOPE_GI, gpu_uuid, gi_id, -1);
    view_from(c, e, out);
}

struct metric dcgm_metric(const struct dcgm_view *v, enum dcgm_metric k)
{
    if (!v->ok)
        return metric_none(v->why ? v->why : WHY_NO_RECORD);
    switch (v->st[k]) {
    case DCGM_ST_OK: break;
    case DCGM_VALUE_BLANK: return metric_none(WHY_BLANK);
    case DCGM_VALUE_UNWATCHED: return metric_none(WHY_MULTI_PASS);
    case DCGM_ST_NO_DATA: return metric_none(WHY_BLANK);
    case DCGM_ST_NOT_SUPPORTED: return metric_none(WHY_NOT_HERE);
    default: return metric_none(WHY_VALUE_ERR);
    }
    double x = v->v[k];
    bool rate = k == DCGM_PCIE_TX || k == DCGM_PCIE_RX || k == DCGM_NVLINK_TX ||
                k == DCGM_NVLINK_RX;
    if (rate) {
        if (!(x >= 0) || isinf(x))
            return metric_none(WHY_VALUE_ERR);
    } else {
        /* Refused, not clipped: SM_ACTIVE has been seen at 1.29 on a GPU
         * instance (a DCGM report), which no clipping makes true. */
        if (!(x >= 0 && x <= 1.0))
            return metric_none(WHY_RANGE);
        x *= 100.0;
    }
    struct metric m = {.value = x, .src = MSRC_DCGM, .why = NULL};
    if (!v->ci_level && v->nci > 1)
        m.scope = MSCOPE_GPU_INSTANCE;
    if (v->ci_level && k == DCGM_DRAM && v->nci > 1)
        m.scope = MSCOPE_GPU_INSTANCE;
    return m;
}
