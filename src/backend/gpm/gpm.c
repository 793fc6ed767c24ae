/*
 * gpm.c — the monitor's side of GPM: start the helper, read its records
 * without blocking, keep the latest values per entity, watch for a helper
 * that stalls or dies, and answer lookups for the NVML backend. A GPU the
 * helper proved moves into the monitor's own session (gpm.h): once its
 * values flow there, the helper is started again without it, or, with
 * nothing left to sample, asked to leave (without waiting for it).
 *
 * Owner: the NVML backend state (one thread). Reasons handed out are static
 * strings, so a snapshot never points into this module's memory.
 */
#include "backend/gpm/gpm.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/helper_proc.h"
#include "backend/nvml/nvml_api.h"
#include "backend/nvml/nvml_load.h"
#include "core/clock.h"
#include "core/debuglog.h"

/* Consecutive stalls or crashes of the helper while it was working on one
 * GPU before GPM is switched off for that GPU. */
#define GPM_MAX_FAILS 3
#define GPM_BACKOFF_MAX_NS (30ull * 1000000000ull)
#define GPM_WATCHDOG_FLOOR_NS (1000ull * 1000000ull)
#define GPM_MAX_GPUS 1024

static const char *const WHY_OFF = "GPM off (--gpm off)";
static const char *const WHY_NO_EXE = "GPM not started (no helper binary given)";
static const char *const WHY_STARTING =
    "waiting for the first GPM sample (two samples 100 ms apart are needed)";
static const char *const WHY_PRE_HOPPER = "needs Hopper or later (GPM) or DCGM profiling";
static const char *const WHY_UNSUPPORTED =
    "GPM not supported on this GPU (nvmlGpmQueryDeviceSupport)";
static const char *const WHY_NO_API =
    "this NVML library has no GPM functions (driver 520 or later)";
static const char *const WHY_NO_MIG_API =
    "this NVML library has no nvmlGpmMigSampleGet (driver 525 or later)";
static const char *const WHY_DEGRADED_OFF =
    "GPM off for this GPU: after GPM calls the driver failed memory reads in the GPM helper's "
    "own NVML session (a driver fault); the monitor's readings are unaffected; --gpm on keeps "
    "GPM";
static const char *const WHY_DEGRADED_ON =
    "GPM helper's NVML session fails memory reads after GPM calls (a driver fault); kept by "
    "--gpm on";
static const char *const WHY_HELPER_FAILED = "GPM helper exited; restarting it";
static const char *const WHY_HELPER_GAVE_UP =
    "GPM off: the GPM helper failed 3 times in a row (its NVML session could not start)";
static const char *const WHY_HUNG_INIT_OFF =
    "GPM off: the GPM helper hung 3 times before sampling (in nvmlInit or enumeration)";
static const char *const WHY_NO_RECORD = "no GPM sample for this device";
static const char *const WHY_STALE = "GPM values are stale (the helper sent nothing recently)";
static const char *const WHY_NAN = "GPM returned NaN";
static const char *const WHY_RANGE = "GPM returned a percentage outside 0-100";

/* Per enum gpm_call: the helper stalled there / GPM was switched off for it. */
static const char *const WHY_STALLED[GPM_CALL_COUNT] = {
    [GPM_CALL_NONE] = "GPM helper stalled; restarting it",
    [GPM_CALL_INIT] = "GPM helper stalled in nvmlInit or enumeration; restarting it",
    [GPM_CALL_SUPPORT] = "GPM helper stalled in nvmlGpmQueryDeviceSupport; restarting it",
    [GPM_CALL_SAMPLE] = "GPM helper stalled in nvmlGpmSampleGet; restarting it",
    [GPM_CALL_MIG_SAMPLE] = "GPM helper stalled in nvmlGpmMigSampleGet; restarting it",
    [GPM_CALL_METRICS] = "GPM helper stalled in nvmlGpmMetricsGet; restarting it",
    [GPM_CALL_MEMORY] = "GPM helper stalled in nvmlDeviceGetMemoryInfo; restarting it",
};
static const char *const WHY_HUNG_OFF[GPM_CALL_COUNT] = {
    [GPM_CALL_NONE] = "GPM off for this GPU: the GPM helper hung 3 times",
    [GPM_CALL_INIT] = "GPM off for this GPU: the GPM helper hung 3 times in enumeration",
    [GPM_CALL_SUPPORT] =
        "GPM off for this GPU: the GPM helper hung 3 times in nvmlGpmQueryDeviceSupport",
    [GPM_CALL_SAMPLE] = "GPM off for this GPU: the GPM helper hung 3 times in nvmlGpmSampleGet",
    [GPM_CALL_MIG_SAMPLE] =
        "GPM off for this GPU: the GPM helper hung 3 times in nvmlGpmMigSampleGet",
    [GPM_CALL_METRICS] =
        "GPM off for this GPU: the GPM helper hung 3 times in nvmlGpmMetricsGet",
    [GPM_CALL_MEMORY] =
        "GPM off for this GPU: the GPM helper hung 3 times in nvmlDeviceGetMemoryInfo",
};

enum helper_state {
    HS_OFF,      /* --gpm off, or given up */
    HS_RUNNING,
    HS_WAITING,  /* restart at restart_at */
    HS_FINISHED, /* the helper found nothing to sample */
    HS_LEAVING,  /* asked to leave (stdin closed): reaped once it has, or at leave_by */
    HS_RETIRED,  /* not needed: every GPU it sampled is sampled in the monitor's session */
};

/* How long a helper asked to leave is given before SIGKILL. */
#define GPM_LEAVE_NS (1000ull * 1000000ull)

struct cgpu {
    char uuid[GPM_UUID_LEN];
    int state; /* enum gpm_gpu_state, 0 before the helper said */
    int rc;
    unsigned arch;
    bool no_mig_api;
    unsigned fails;        /* consecutive stalls/crashes attributed to it */
    bool excluded;         /* GPM switched off for it */
    const char *why_off;   /* when excluded */
    const char *why_stall; /* the last stall, until values flow again */
    bool ever_failed;      /* the helper stalled or died on it once */
    bool proven;           /* the helper's canary proved its driver (GPM_GPU_PROVEN) */
    bool flowing;          /* its values come from the monitor's session: not the helper's */
    bool inproc_off;       /* a GPM call in the monitor's session was too slow: helper only */
};

struct centity {
    uint8_t scope;
    int gi_id;
    int nci;
    char gpu_uuid[GPM_UUID_LEN];
    char mig_uuid[GPM_UUID_LEN];
    uint64_t rx_ns;
    double v[GPM_NMETRICS];
    int32_t rc[GPM_NMETRICS];
};

struct gpm_client {
    struct gpm_client_opts o;
    char exe[4096];
    char lib[4096];
    enum helper_state hs;
    const char *why_global; /* a reason for every device (off, gave up) */
    struct helper_proc hp;  /* the running helper, if any */
    uint64_t restart_at;
    uint64_t leave_by;      /* HS_LEAVING: SIGKILL then */
    bool respawn;           /* the set of GPUs the helper samples changed: start it again */
    uint64_t interval_ns;
    unsigned consecutive;   /* failures since values last flowed */
    unsigned global_fails;  /* stalls outside any GPU (init) */
    bool have_values;       /* a round with values since the start */
    bool done;              /* DONE received from the running helper */
    unsigned cur_gpu;       /* last progress record */
    enum gpm_call cur_call;
    struct cgpu *gpus;      /* by the helper's GPU index */
    size_t ngpus;
    struct centity *ents;
    size_t nents, cap_ents;
};

static uint64_t watchdog_ns(const struct gpm_client *g)
{
    uint64_t w = 3 * g->interval_ns;
    uint64_t floor = g->o.watchdog_floor_ms ? (uint64_t)g->o.watchdog_floor_ms * 1000000ull
                                            : GPM_WATCHDOG_FLOOR_NS;
    return w < floor ? floor : w;
}

static struct cgpu *gpu_at(struct gpm_client *g, unsigned idx)
{
    if (idx >= GPM_MAX_GPUS)
        return NULL;
    if (idx >= g->ngpus) {
        struct cgpu *n = realloc(g->gpus, (idx + 1) * sizeof(*n));
        if (!n)
            return NULL;
        memset(n + g->ngpus, 0, (idx + 1 - g->ngpus) * sizeof(*n));
        g->gpus = n;
        g->ngpus = idx + 1;
    }
    return &g->gpus[idx];
}

static const struct cgpu *gpu_by_uuid(const struct gpm_client *g, const char *uuid)
{
    for (size_t i = 0; i < g->ngpus; i++) {
        if (g->gpus[i].uuid[0] && strcmp(g->gpus[i].uuid, uuid) == 0)
            return &g->gpus[i];
    }
    return NULL;
}

/* A GPU the helper is started without: GPM off for it, or sampled in the
 * monitor's session. */
static bool not_helpers(const struct cgpu *c)
{
    return c->uuid[0] && (c->excluded || c->flowing);
}

static void spawn(struct gpm_client *g)
{
    char interval[24];
    snprintf(interval, sizeof(interval), "%u", g->o.interval_ms);
    size_t nex = 0;
    for (size_t i = 0; i < g->ngpus; i++)
        nex += not_helpers(&g->gpus[i]);
    char **argv = calloc(6 + nex, sizeof(char *));
    if (!argv)
        goto fail;
    size_t a = 0;
    argv[a++] = g->exe;
    argv[a++] = (char *)GPM_HELPER_ARG;
    argv[a++] = g->lib;
    argv[a++] = interval;
    argv[a++] = (char *)(g->o.mode == GPM_ON ? "on" : "auto");
    for (size_t i = 0; i < g->ngpus; i++) {
        if (not_helpers(&g->gpus[i]))
            argv[a++] = g->gpus[i].uuid;
    }
    argv[a] = NULL;
    int rc = helper_proc_spawn(&g->hp, argv);
    free(argv);
    if (rc != 0)
        goto fail;
    g->hs = HS_RUNNING;
    g->done = false;
    g->cur_gpu = 0xffff;
    g->cur_call = GPM_CALL_INIT;
    return;
fail:
    debuglog_printf("gpm: could not start the helper: %s", strerror(errno));
    g->hs = HS_OFF;
    g->why_global = WHY_HELPER_GAVE_UP;
}

/* The helper stalled or died while at (cur_gpu, cur_call). */
static void failed(struct gpm_client *g, bool stalled, uint64_t now)
{
    helper_proc_reap(&g->hp, true);
    g->consecutive++;
    enum gpm_call call = g->cur_call < GPM_CALL_COUNT ? g->cur_call : GPM_CALL_NONE;
    struct cgpu *c = g->cur_gpu < g->ngpus ? &g->gpus[g->cur_gpu] : NULL;
    if (c && c->uuid[0]) {
        c->fails++;
        c->ever_failed = true;
        c->why_stall = stalled ? WHY_STALLED[call] : WHY_HELPER_FAILED;
        if (c->fails >= GPM_MAX_FAILS) {
            c->excluded = true;
            c->why_off = stalled ? WHY_HUNG_OFF[call] : WHY_HELPER_GAVE_UP;
            debuglog_printf("gpm: GPU %s excluded after %u failures", c->uuid, c->fails);
        }
    } else if (++g->global_fails >= GPM_MAX_FAILS) {
        g->hs = HS_OFF;
        g->why_global = stalled ? WHY_HUNG_INIT_OFF : WHY_HELPER_GAVE_UP;
        return;
    } else {
        g->why_global = stalled ? WHY_STALLED[call] : WHY_HELPER_FAILED;
    }
    uint64_t base = g->o.backoff_ms ? (uint64_t)g->o.backoff_ms * 1000000ull : 1000000000ull;
    g->hs = HS_WAITING;
    g->restart_at = now + helper_backoff_ns(g->consecutive, base, GPM_BACKOFF_MAX_NS);
}

static struct centity *entity(struct gpm_client *g, const struct gpm_rec_values *r)
{
    for (size_t i = 0; i < g->nents; i++) {
        struct centity *e = &g->ents[i];
        if (e->scope == r->scope && e->gi_id == r->gi_id &&
            strcmp(e->gpu_uuid, r->gpu_uuid) == 0 &&
            (r->scope != GPM_SCOPE_CI || strcmp(e->mig_uuid, r->mig_uuid) == 0))
            return e;
    }
    if (g->nents == g->cap_ents) {
        size_t cap = g->cap_ents ? 2 * g->cap_ents : 16;
        struct centity *n = realloc(g->ents, cap * sizeof(*n));
        if (!n)
            return NULL;
        g->ents = n;
        g->cap_ents = cap;
    }
    struct centity *e = &g->ents[g->nents++];
    memset(e, 0, sizeof(*e));
    e->scope = r->scope;
    e->gi_id = r->gi_id;
    memcpy(e->gpu_uuid, r->gpu_uuid, sizeof(e->gpu_uuid));
    memcpy(e->mig_uuid, r->mig_uuid, sizeof(e->mig_uuid));
    e->gpu_uuid[GPM_UUID_LEN - 1] = e->mig_uuid[GPM_UUID_LEN - 1] = '\0';
    return e;
}

static void on_record(void *ctx, const unsigned char *p, uint8_t type)
{
    struct gpm_client *g = ctx;
    uint64_t now = g->hp.last_rx_ns;
    switch (type) {
    case GPM_REC_GPU: {
        struct gpm_rec_gpu r;
        memcpy(&r, p, sizeof(r));
        struct cgpu *c = gpu_at(g, r.gpu);
        if (!c)
            break;
        r.uuid[GPM_UUID_LEN - 1] = '\0';
        if (r.state == GPM_GPU_PROVEN) { /* the same GPU, still SUPPORTED */
            c->proven = strcmp(c->uuid, r.uuid) == 0 && c->state == GPM_GPU_SUPPORTED;
            debuglog_printf("gpm: GPU %u %s proved (canary after GPM calls)", r.gpu, r.uuid);
            break;
        }
        memcpy(c->uuid, r.uuid, sizeof(c->uuid));
        c->state = r.state;
        c->rc = r.rc;
        if (r.arch)
            c->arch = r.arch;
        if (r.state == GPM_GPU_SUPPORTED)
            c->no_mig_api = r.rc == NVML_ERROR_FUNCTION_NOT_FOUND;
        if (r.state == GPM_GPU_DEGRADED && g->o.mode != GPM_ON) {
            c->excluded = true;
            c->why_off = WHY_DEGRADED_OFF;
        }
        debuglog_printf("gpm: GPU %u %s state %u rc %d", r.gpu, c->uuid, r.state, r.rc);
        break;
    }
    case GPM_REC_VALUES: {
        struct gpm_rec_values r;
        memcpy(&r, p, sizeof(r));
        struct centity *e = entity(g, &r);
        if (!e)
            break;
        e->nci = r.nci;
        e->rx_ns = now;
        memcpy(e->v, r.v, sizeof(e->v));
        memcpy(e->rc, r.rc, sizeof(e->rc));
        break;
    }
    case GPM_REC_PROGRESS: {
        struct gpm_rec_progress r;
        memcpy(&r, p, sizeof(r));
        g->cur_gpu = r.gpu;
        g->cur_call = r.call < GPM_CALL_COUNT ? (enum gpm_call)r.call : GPM_CALL_NONE;
        break;
    }
    case GPM_REC_CYCLE: {
        struct gpm_rec_cycle r;
        memcpy(&r, p, sizeof(r));
        g->cur_gpu = 0xffff;
        g->cur_call = GPM_CALL_NONE;
        if (r.have_values) {
            /* A whole round with values: the helper is healthy again. A
             * helper that hangs part-way through every round never gets
             * here, so its failures add up. */
            g->have_values = true;
            g->consecutive = 0;
            g->global_fails = 0;
            g->why_global = NULL;
            for (size_t i = 0; i < g->ngpus; i++) {
                g->gpus[i].fails = 0;
                g->gpus[i].why_stall = NULL;
            }
        }
        break;
    }
    case GPM_REC_DONE:
        g->done = true;
        break;
    default:
        break;
    }
}

static size_t rec_size(uint8_t type)
{
    switch (type) {
    case GPM_REC_GPU: return sizeof(struct gpm_rec_gpu);
    case GPM_REC_VALUES: return sizeof(struct gpm_rec_values);
    case GPM_REC_PROGRESS: return sizeof(struct gpm_rec_progress);
    case GPM_REC_CYCLE:
    case GPM_REC_DONE: return sizeof(struct gpm_rec_cycle);
    default: return 0;
    }
}

/* Reads everything available; returns false on EOF or a broken stream. */
static bool drain(struct gpm_client *g, uint64_t now)
{
    return helper_proc_drain(&g->hp, GPM_PROTO_MAGIC, rec_size, on_record, g, now);
}

struct gpm_client *gpm_client_open(const struct gpm_client_opts *o)
{
    struct gpm_client *g = calloc(1, sizeof(*g));
    if (!g)
        return NULL;
    g->o = *o;
    helper_proc_init(&g->hp, "gpm");
    if (g->o.interval_ms < 100)
        g->o.interval_ms = 100;
    g->interval_ns = (uint64_t)g->o.interval_ms * 1000000ull;
    snprintf(g->lib, sizeof(g->lib), "%s", o->lib_path ? o->lib_path : "");
    if (o->mode == GPM_OFF) {
        g->hs = HS_OFF;
        g->why_global = WHY_OFF;
        return g;
    }
    if (!o->exe || !o->exe[0]) {
        g->hs = HS_OFF;
        g->why_global = WHY_NO_EXE;
        return g;
    }
    snprintf(g->exe, sizeof(g->exe), "%s", o->exe);
    spawn(g);
    return g;
}

/* GPUs the helper samples: GPM-capable, not switched off, not sampled in
 * the monitor's session. */
static size_t helper_gpus(const struct gpm_client *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->ngpus; i++) {
        const struct cgpu *c = &g->gpus[i];
        n += c->state == GPM_GPU_SUPPORTED && !c->excluded && !c->flowing;
    }
    return n;
}

/* The set of GPUs the helper samples changed (gpm_client_inproc_*): a
 * running helper is started again with the new set, or asked to leave
 * when nothing is left; a retired one is started again for a GPU that
 * came back to it. */
static void apply_respawn(struct gpm_client *g, uint64_t now)
{
    g->respawn = false;
    size_t left = helper_gpus(g);
    switch (g->hs) {
    case HS_RUNNING:
        if (left == 0) {
            /* Not waited for: it leaves within its poll, after freeing its
             * samples and ending its session; the next polls reap it. */
            helper_proc_ask_leave(&g->hp);
            g->hs = HS_LEAVING;
            g->leave_by = now + GPM_LEAVE_NS;
            debuglog_printf("gpm: every GPU sampled in the monitor's session: helper asked to leave");
        } else {
            helper_proc_reap(&g->hp, false);
            spawn(g);
        }
        break;
    case HS_LEAVING:
    case HS_RETIRED:
        if (left > 0) {
            helper_proc_reap(&g->hp, true);
            spawn(g);
        }
        break;
    default: /* waiting (its restart takes the new set), finished or off */
        break;
    }
}

void gpm_client_poll(struct gpm_client *g)
{
    if (!g)
        return;
    uint64_t now = clock_mono_ns();
    if (g->respawn) {
        apply_respawn(g, now);
        now = clock_mono_ns(); /* a helper started now is not silent since before */
    }
    if (g->hs == HS_WAITING && now >= g->restart_at) {
        spawn(g);
        now = clock_mono_ns();
    }
    if (g->hs == HS_LEAVING) {
        /* what it still sends is read (and dropped: its GPUs are the
         * monitor's); EOF says it has gone */
        bool open = drain(g, now);
        if (!open || g->done || now >= g->leave_by) {
            helper_proc_reap(&g->hp, true);
            g->hs = HS_RETIRED;
        }
        return;
    }
    if (g->hs != HS_RUNNING)
        return;
    bool open = drain(g, now);
    if (!open || g->done) {
        if (g->done) { /* it exits right after saying so: not waited for */
            helper_proc_reap(&g->hp, true);
            g->hs = HS_FINISHED;
        } else {
            failed(g, false, now);
        }
        return;
    }
    if (now - g->hp.last_rx_ns > watchdog_ns(g)) {
        debuglog_printf("gpm: helper silent for %.1f s (GPU %u, call %d): restarting",
                        (double)(now - g->hp.last_rx_ns) / 1e9, g->cur_gpu, (int)g->cur_call);
        failed(g, true, now);
    }
}

void gpm_client_settle(struct gpm_client *g, unsigned timeout_ms)
{
    if (!g)
        return;
    uint64_t deadline = clock_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
    while (g->hs == HS_RUNNING && !g->have_values && !g->done) {
        uint64_t now = clock_mono_ns();
        if (now >= deadline)
            break;
        helper_proc_wait(&g->hp, (int)((deadline - now) / 1000000ull) + 1);
        gpm_client_poll(g);
    }
    gpm_client_poll(g);
}

void gpm_client_close(struct gpm_client *g)
{
    if (!g)
        return;
    helper_proc_reap(&g->hp, false);
    free(g->gpus);
    free(g->ents);
    free(g);
}

int gpm_client_helper_pid(const struct gpm_client *g)
{
    return g && g->hp.pid > 0 ? (int)g->hp.pid : -1;
}

static bool inproc_ok(const struct gpm_client *g, const struct cgpu *c)
{
    return c && g->o.inproc && c->proven && !c->inproc_off && !c->excluded && !c->ever_failed &&
           c->state == GPM_GPU_SUPPORTED;
}

bool gpm_client_any_inproc(const struct gpm_client *g)
{
    if (!g || !g->o.inproc)
        return false;
    for (size_t i = 0; i < g->ngpus; i++)
        if (inproc_ok(g, &g->gpus[i]))
            return true;
    return false;
}

bool gpm_client_inproc(const struct gpm_client *g, const char *gpu_uuid)
{
    return g && g->o.inproc && gpu_uuid[0] && inproc_ok(g, gpu_by_uuid(g, gpu_uuid));
}

void gpm_client_inproc_flowing(struct gpm_client *g, const char *gpu_uuid)
{
    if (!g || !gpu_uuid[0])
        return;
    struct cgpu *c = (struct cgpu *)gpu_by_uuid(g, gpu_uuid);
    if (!inproc_ok(g, c) || c->flowing)
        return;
    c->flowing = true;
    g->respawn = true;
    debuglog_printf("gpm: GPU %s sampled in the monitor's session", c->uuid);
}

void gpm_client_inproc_failed(struct gpm_client *g, const char *gpu_uuid)
{
    if (!g || !gpu_uuid[0])
        return;
    struct cgpu *c = (struct cgpu *)gpu_by_uuid(g, gpu_uuid);
    if (!c || c->inproc_off)
        return;
    c->inproc_off = true;
    debuglog_printf("gpm: GPU %s: a GPM call in the monitor's session was slow; back to the helper",
                    c->uuid);
    if (c->flowing) {
        c->flowing = false;
        g->respawn = true;
    }
}

/* Why a GPU has no GPM values, or NULL when values may be looked up. */
static const char *gpu_reason(const struct gpm_client *g, const struct cgpu *c)
{
    if (g->hs == HS_OFF)
        return g->why_global ? g->why_global : WHY_OFF;
    if (c) {
        if (c->excluded)
            return c->why_off;
        bool pre_hopper = c->arch && c->arch < NVML_DEVICE_ARCH_HOPPER;
        switch (c->state) {
        case GPM_GPU_UNSUPPORTED:
            if (pre_hopper)
                return WHY_PRE_HOPPER;
            return c->rc == NVML_ERROR_NOT_SUPPORTED ? WHY_UNSUPPORTED : nvml_rc_reason(c->rc);
        case GPM_GPU_NO_API:
            return pre_hopper ? WHY_PRE_HOPPER : WHY_NO_API;
        default:
            break;
        }
        if (c->why_stall && g->hs != HS_RUNNING)
            return c->why_stall;
    }
    if (g->hs == HS_FINISHED || g->hs == HS_LEAVING || g->hs == HS_RETIRED)
        return WHY_NO_RECORD;
    if (g->why_global && g->hs != HS_RUNNING)
        return g->why_global;
    return NULL;
}

static const struct centity *find(const struct gpm_client *g, uint8_t scope, const char *gpu_uuid,
                                  int gi_id, const char *mig_uuid)
{
    for (size_t i = 0; i < g->nents; i++) {
        const struct centity *e = &g->ents[i];
        if (e->scope == scope && e->gi_id == gi_id && strcmp(e->gpu_uuid, gpu_uuid) == 0 &&
            (scope != GPM_SCOPE_CI || strcmp(e->mig_uuid, mig_uuid) == 0))
            return e;
    }
    return NULL;
}

/* A found entity's values into the view, unless they are stale. */
static void view_from(const struct gpm_client *g, const struct cgpu *c, const struct centity *e,
                      struct gpm_view *out)
{
    uint64_t now = clock_mono_ns();
    if (!e) {
        out->why = c && c->why_stall ? c->why_stall : g->have_values ? WHY_NO_RECORD
                                                                      : WHY_STARTING;
        return;
    }
    if (now - e->rx_ns > watchdog_ns(g) + g->interval_ns) {
        out->why = c && c->why_stall ? c->why_stall : WHY_STALE;
        return;
    }
    out->ok = true;
    out->why = c && c->state == GPM_GPU_DEGRADED ? WHY_DEGRADED_ON : NULL;
    out->nci = e->nci;
    out->ci_level = e->scope == GPM_SCOPE_CI;
    for (int k = 0; k < GPM_NMETRICS; k++) {
        out->v[k] = e->v[k];
        out->rc[k] = e->rc[k];
    }
}

/* Start a lookup: false (with out->why set) when the GPU has no GPM. */
static bool view_begin(const struct gpm_client *g, const char *gpu_uuid, struct gpm_view *out,
                       const struct cgpu **c)
{
    memset(out, 0, sizeof(*out));
    *c = NULL;
    if (!g) {
        out->why = WHY_OFF;
        return false;
    }
    *c = gpu_by_uuid(g, gpu_uuid);
    out->why = gpu_reason(g, *c);
    return out->why == NULL;
}

void gpm_client_gpu(const struct gpm_client *g, const char *gpu_uuid, struct gpm_view *out)
{
    const struct cgpu *c;
    if (view_begin(g, gpu_uuid, out, &c))
        view_from(g, c, find(g, GPM_SCOPE_GPU, gpu_uuid, -1, ""), out);
}

void gpm_client_mig(const struct gpm_client *g, const char *gpu_uuid, int gi_id,
                    const char *mig_uuid, struct gpm_view *out)
{
    const struct cgpu *c;
    if (!view_begin(g, gpu_uuid, out, &c))
        return;
    const struct centity *e = find(g, GPM_SCOPE_CI, gpu_uuid, gi_id, mig_uuid);
    if (!e)
        e = find(g, GPM_SCOPE_GI, gpu_uuid, gi_id, "");
    if (!e && c && c->no_mig_api) {
        out->why = WHY_NO_MIG_API;
        return;
    }
    view_from(g, c, e, out);
}

struct metric gpm_metric(const struct gpm_view *v, enum gpm_metric k)
{
    if (!v->ok)
        return metric_none(v->why ? v->why : WHY_NO_RECORD);
    if (v->rc[k] != NVML_SUCCESS)
        return metric_none(nvml_rc_reason(v->rc[k]));
    double x = v->v[k];
    if (isnan(x))
        return metric_none(WHY_NAN);
    bool rate = k == GPM_PCIE_TX || k == GPM_PCIE_RX || k == GPM_NVLINK_TX || k == GPM_NVLINK_RX;
    if (rate) {
        if (!(x >= 0) || isinf(x))
            return metric_none("GPM returned a negative or infinite rate");
        /* The header says MiB/s, but the values match nvidia-smi and Nsight
         * only when read as 10^6 bytes/s (docs/mig-utilisation.md). */
        x *= 1e6;
    } else if (!(x >= 0 && x <= 100.0)) {
        return metric_none(WHY_RANGE);
    }
    struct metric m = {.value = x, .src = MSRC_GPM, .why = v->why};
    /* GI-level values shown on one of several compute instances of the GI. */
    if (!v->ci_level && v->nci > 1)
        m.scope = MSCOPE_GPU_INSTANCE;
    if (v->ci_level && k == GPM_DRAM && v->nci > 1)
        m.scope = MSCOPE_GPU_INSTANCE; /* DRAM bandwidth exists per GI only */
    return m;
}
