/*
 * nvml_workers.c — the NVML backend's tick: who samples which GPU (a
 * GPU's worker and its own thread: nvml_gpu_worker.c; the GPUs sampled on
 * the sampling thread: nvml_inline.c). The threads, one job each:
 *
 *   the sampling thread (the engine's, or --once's caller) samples the
 *     host, then, while the driver is quick and it can be replaced, counts
 *     the GPUs and samples each in turn itself;
 *   the system worker (nvml_system.c) loads and initialises NVML and
 *     enumerates the GPUs, and counts them on a slow driver's ticks;
 *   a GPU's own thread samples that GPU while the driver is slow, when the
 *     caller cannot be replaced (--once, profile), or after a stall;
 *   the watchdog (nvml_watchdog.c) wakes only when the sampling thread's
 *     GPUs run past the tick's rescue point, and gives the sampling to
 *     another thread.
 *
 * Who samples which GPU when: each GPU is claimed for a tick by one thread
 * at a time, just before it is sampled (req++ under mu while req == done).
 * A steady tick on a quick driver is the sampling thread's alone (no other
 * thread wakes). A slow driver's tick (the GPUs' sampling took over a
 * quarter of the interval; back under an eighth) goes to the system worker,
 * which counts and wakes every idle GPU's own thread; the last to finish
 * wakes the sampling thread. A GPU still in an earlier tick's call is not
 * given the tick: its devices are reported from its last sample (carried,
 * then none, naming the call), and the other GPUs keep updating.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/dcgm/dcgm.h"
#include "backend/events/events.h"
#include "backend/gpm/gpm.h"
#include "backend/nvml/nvml.h"
#include "backend/nvml/nvml_root.h"
#include "core/debuglog.h"

/* How long close waits for threads before abandoning one stuck in the driver. */
#define CLOSE_WAIT_NS (300ull * 1000000ull)

/* A worker given this tick (sent) that has not finished it. */
static bool worker_out(const struct worker *w)
{
    return w && w->sent && w->req != w->done;
}

/* ------------------------------------------------------------ the backend */

static int root_open(void **out, const struct backend_opts *o, char *err, size_t errlen)
{
    *out = NULL;
    struct nvml_root *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return BACKEND_ERR_NOMEM;
    }
    r->wd_fd = -1;
    if (o) {
        r->o = *o;
        snprintf(r->nvml_path, sizeof(r->nvml_path), "%s", o->nvml_path ? o->nvml_path : "");
        snprintf(r->gpm_exe, sizeof(r->gpm_exe), "%s", o->gpm_exe ? o->gpm_exe : "");
        snprintf(r->dcgm_addr, sizeof(r->dcgm_addr), "%s", o->dcgm_addr ? o->dcgm_addr : "");
        snprintf(r->dcgm_lib, sizeof(r->dcgm_lib), "%s", o->dcgm_lib ? o->dcgm_lib : "");
    }
    /* An explicitly named library must exist and load now (exit 2
     * otherwise); the search, and init, may be retried while the driver is
     * missing. */
    if (r->nvml_path[0]) {
        bool missing = false;
        if (nvml_lib_open(&r->lib, r->nvml_path, &missing, err, errlen) != 0) {
            free(r);
            return BACKEND_ERR_BAD_PATH;
        }
    }
    unsigned iv = r->o.interval_ms ? r->o.interval_ms : 1000;
    r->enum_every = (5000 + iv - 1) / iv;
    pthread_mutex_init(&r->mu, NULL);
    pthread_mutex_init(&r->take_mu, NULL);
    cond_init(&r->done_cv);
    cond_init(&r->sys_cv);
    /* Until a tick has measured the driver, a caller that cannot be
     * replaced has the GPUs sampled in parallel; one that can samples
     * them itself (root_set_takeover). */
    r->parallel = true;
    r->sys = SYS_LOADING;
    if (start_thread(&r->sys_thr, nvml_system_main, r) != 0) {
        snprintf(err, errlen, "cannot start a thread: %s", strerror(errno));
        nvml_lib_close(&r->lib);
        free(r);
        return BACKEND_ERR_NOMEM;
    }
    r->sys_started = true;
    *out = r;
    return BACKEND_OK;
}

static const char *root_last_error(void *p)
{
    struct nvml_root *r = p;
    return r->err;
}

/* The GPM and DCGM clients, started with the first READY tick (forks: on
 * the sampling thread, which the helpers die with). */
static void gpm_start(struct nvml_root *r)
{
    if (r->gpm_tried)
        return;
    r->gpm_tried = true;
    pthread_mutex_lock(&r->mu);
    bool can_inline = r->can_inline;
    pthread_mutex_unlock(&r->mu);
    struct gpm_client_opts go = {
        .exe = r->gpm_exe[0] ? r->gpm_exe : NULL,
        .lib_path = r->lib.real_path,
        .interval_ms = r->o.interval_ms,
        .mode = (enum gpm_mode)r->o.gpm_mode,
        /* a stall in this session's GPM call is handed over like any other */
        .inproc = can_inline && !r->o.one_shot && r->o.gpm_mode != GPM_HELPER,
    };
    r->gpm = gpm_client_open(&go);
    /* DCGM's profiling values are watched at 1 Hz at most (DCGM's own
     * default), so its helper wakes once a second whatever the interval;
     * --once reads them at its own; --dcgm-interval sets it. */
    unsigned dcgm_ms = r->o.interval_ms;
    if (!r->o.one_shot && dcgm_ms < DCGM_WATCH_MIN_MS)
        dcgm_ms = DCGM_WATCH_MIN_MS;
    if (r->o.dcgm_interval_ms)
        dcgm_ms = r->o.dcgm_interval_ms;
    struct dcgm_client_opts dco = {
        .exe = r->gpm_exe[0] ? r->gpm_exe : NULL,
        .lib_path = r->dcgm_lib[0] ? r->dcgm_lib : NULL,
        .mode = (enum dcgm_mode)r->o.dcgm_mode,
        .addr = r->dcgm_addr,
        .interval_ms = dcgm_ms,
        .nvml_path = r->lib.real_path,
    };
    r->dcgm = dcgm_client_open(&dco);
    struct events_client_opts eo = {
        .exe = r->gpm_exe[0] ? r->gpm_exe : NULL,
        .lib_path = r->lib.real_path,
        .t0_ns = r->o.t0_ns,
    };
    r->events = events_client_open(&eo);
    /* DCGM's presence (milliseconds; a slow connect is not waited for) and
     * the pending events in the first snapshot, for at most half an
     * interval each: a 50 ms profile must not lose a short job's start. */
    unsigned wait_ms = r->o.interval_ms / 2 < 150 ? r->o.interval_ms / 2 : 150;
    dcgm_client_wait_state(r->dcgm, wait_ms);
    events_client_wait_state(r->events, wait_ms);
}

static void root_settle(void *p, unsigned timeout_ms)
{
    struct nvml_root *r = p;
    uint64_t deadline = mono() + (uint64_t)timeout_ms * 1000000ull;
    /* GPM starts with the first READY tick; wait for that first. */
    pthread_mutex_lock(&r->mu);
    while (r->sys == SYS_LOADING && mono() < deadline)
        wait_until(&r->done_cv, &r->mu, deadline);
    bool ready = r->sys == SYS_READY;
    pthread_mutex_unlock(&r->mu);
    if (ready)
        gpm_start(r);
    uint64_t now = mono();
    if (r->gpm && now < deadline)
        gpm_client_settle(r->gpm, (unsigned)((deadline - now) / 1000000ull));
    now = mono();
    if (r->dcgm && now < deadline)
        dcgm_client_settle(r->dcgm, (unsigned)((deadline - now) / 1000000ull));
    now = mono();
    /* A little more for a slow events helper; NVML reports only the events
     * after registration, so a one-shot snapshot rarely has any, and its
     * own sample must not pay for them. */
    if (r->events && now < deadline) {
        unsigned ms = (unsigned)((deadline - now) / 1000000ull);
        events_client_wait_state(r->events, ms < 250 ? ms : 250);
    }
}

static void root_set_takeover(void *p, void (*fn)(void *arg), void *arg)
{
    struct nvml_root *r = p;
    /* The watchdog only matters to a caller that samples GPUs itself. */
    bool wd = fn && nvml_watchdog_start(r) == 0;
    pthread_mutex_lock(&r->take_mu);
    r->takeover = wd ? fn : NULL;
    r->takeover_arg = wd ? arg : NULL;
    pthread_mutex_lock(&r->mu);
    if (wd && !r->can_inline && r->ticks == 0)
        r->parallel = false; /* nothing measured yet: start on this thread */
    r->can_inline = wd;
    pthread_mutex_unlock(&r->mu);
    pthread_mutex_unlock(&r->take_mu);
}

/* A new tick (mu held): nothing of the last one is waited for any more,
 * but a GPU that a sampler given up on is in (its tick was given to this
 * one). */
static void tick_begin(struct nvml_root *r)
{
    r->ticks++;
    r->began = true;
    r->planned = false;
    r->inline_tick = false;
    r->tick_open = true;
    r->sys_tick_seq = 0;
    r->relay = false;
    r->pending = 0;
    for (size_t i = 0; i < r->nworkers; i++) {
        struct worker *w = r->workers[i];
        if (!w)
            continue;
        w->sent = w->armed = w->counted = false;
        if (w->wait_next && w->req != w->done) {
            w->sent = w->counted = true;
            r->pending++;
        }
        w->wait_next = false;
    }
}

/* The enumeration is due (mu held): the slow cadence, a GPU lost, or a
 * count that failed or changed. */
static bool enum_due(const struct nvml_root *r)
{
    if (r->want_enum || !r->have_enum || r->count_err[0] ||
        r->ticks - r->last_enum_tick >= r->enum_every)
        return true;
    for (size_t i = 0; i < r->nworkers; i++)
        if (r->workers[i] && r->workers[i]->lost)
            return true;
    return false;
}

/* Wake the system worker for this tick (mu held, READY): the GPU count, and
 * the enumeration when due; with relay, it then hands the tick to the idle
 * GPUs' own threads. A system worker still busy with an earlier tick is not
 * woken again. True when the caller must signal sys_cv. */
static bool sys_kick(struct nvml_root *r, bool relay)
{
    if (enum_due(r)) {
        r->want_enum = true;
        r->last_enum_tick = r->ticks;
    }
    if (r->sys_req != r->sys_done)
        return false;
    for (size_t i = 0; i < r->nworkers && relay; i++) {
        struct worker *w = r->workers[i];
        if (w) /* not one this tick already waits for */
            w->armed = !w->sent && w->req == w->done;
    }
    r->relay = relay;
    r->sys_tick_seq = ++r->sys_req;
    return true;
}

/* Decide how this tick's GPUs are sampled (mu held, READY). True when the
 * caller must signal sys_cv. */
static bool tick_plan(struct nvml_root *r, bool *count)
{
    r->planned = true;
    bool ahead = r->counted_ahead; /* the tick given away had its count */
    r->counted_ahead = false;
    r->inline_tick = r->can_inline && !r->parallel && !r->inl_counting &&
                     r->sys_req == r->sys_done && !atomic_load(&r->interrupted);
    *count = r->inline_tick && !ahead;
    if (enum_due(r)) {
        *count = false; /* the system worker counts, then enumerates */
        return sys_kick(r, !r->inline_tick);
    }
    if (r->inline_tick || ahead)
        return false;
    return sys_kick(r, true);
}

/* Start the tick's driver work, so that it runs while the caller samples
 * the host; root_sample collects it. */
static void root_start(void *p)
{
    struct nvml_root *r = p;
    bool wake = false;
    pthread_mutex_lock(&r->mu);
    if (!r->began) {
        tick_begin(r);
        if (r->sys == SYS_READY)
            wake = tick_plan(r, &r->inl_count_now);
    }
    pthread_mutex_unlock(&r->mu);
    if (wake) /* sys_cv lives as long as the root, which this thread closes */
        pthread_cond_signal(&r->sys_cv);
}

/* Not READY (mu held, dropped): the reason, -1. */
static int not_ready(struct nvml_root *r, struct snapshot *s)
{
    uint64_t now = mono();
    const char *sym = atomic_load(&r->sys_sym);
    if (r->sys == SYS_LOADING)
        snprintf(r->err, sizeof(r->err), "starting NVML: stalled %.0f s in %s",
                 (double)(now - atomic_load(&r->sys_op_ns)) / 1e9, sym ? sym : "dlopen");
    else if (r->o.one_shot)
        snprintf(r->err, sizeof(r->err), "%s", r->sys_msg); /* its only try: the reason alone */
    else if (r->next_try_ns > now)
        snprintf(r->err, sizeof(r->err), "waiting for the NVIDIA driver (next try in %.0f s): %.1900s",
                 (double)(r->next_try_ns - now) / 1e9 + 0.5, r->sys_msg);
    else
        snprintf(r->err, sizeof(r->err), "waiting for the NVIDIA driver: %.1900s", r->sys_msg);
    bool loading = r->sys == SYS_LOADING;
    r->tick_open = false;
    pthread_mutex_unlock(&r->mu);
    s->partial = loading;
    return -1;
}

static int root_sample(void *p, struct snapshot *s, uint64_t deadline)
{
    struct nvml_root *r = p;
    s->ndevices = 0;
    s->nprocs = 0;
    s->partial = false;
    r->err[0] = '\0';
    gpm_client_poll(r->gpm); /* non-blocking: what the helpers sent since */
    dcgm_client_poll(r->dcgm);
    events_client_poll(r->events);
    s->nevents = 0; /* a reused buffer's events are not this tick's */

    pthread_mutex_lock(&r->mu);
    if (!r->began)
        tick_begin(r);
    r->began = false;
    while (r->sys == SYS_LOADING && mono() < deadline && !atomic_load(&r->interrupted))
        wait_until(&r->done_cv, &r->mu, deadline);
    if (r->sys != SYS_READY)
        return not_ready(r, s);
    if (!r->planned && tick_plan(r, &r->inl_count_now))
        pthread_cond_signal(&r->sys_cv);
    /* Half way to the deadline, what has not started is not waited for:
     * a count or enumeration still out (the GPUs then go to their own
     * threads, from the last enumeration; a system worker stuck in an
     * earlier tick is not waited for at all), and GPUs sampled on this
     * thread past it are given to another (the watchdog). Before the first
     * enumeration there is none to fall back on: it is waited for until
     * the deadline. */
    uint64_t t_wait = mono();
    uint64_t rescue_at = deadline > t_wait ? t_wait + (deadline - t_wait) / 2 : deadline;
again:
    for (;;) {
        uint64_t now = mono();
        bool sys_busy = r->sys_tick_seq && r->sys_done < r->sys_tick_seq;
        uint64_t until = !r->have_enum ? deadline : rescue_at;
        if (!sys_busy || now >= until || r->sys != SYS_READY || atomic_load(&r->interrupted))
            break;
        wait_until(&r->done_cv, &r->mu, until);
    }
    bool sys_late = r->sys_req != r->sys_done || r->inl_counting;
    if (r->sys != SYS_READY) { /* the driver went away during the tick */
        snprintf(r->err, sizeof(r->err), "waiting for the NVIDIA driver: %.1900s", r->sys_msg);
        r->tick_open = false;
        pthread_mutex_unlock(&r->mu);
        return -1;
    }
    if (r->count_err[0] && !r->have_enum) {
        snprintf(r->err, sizeof(r->err), "%s", r->count_err);
        r->tick_open = false;
        pthread_mutex_unlock(&r->mu);
        return -1;
    }
    memcpy(s->driver_version, r->driver_version, sizeof(s->driver_version));
    memcpy(s->nvml_version, r->nvml_version, sizeof(s->nvml_version));
    s->cuda_driver_version = r->cuda_version;
    unsigned count = r->have_enum ? r->count : 0;
    /* Workers for new GPUs; handles and UUIDs from the enumeration. */
    if (count > r->nworkers) {
        struct worker **n = realloc(r->workers, count * sizeof(*n));
        if (n) {
            memset(n + r->nworkers, 0, (count - r->nworkers) * sizeof(*n));
            r->workers = n;
            r->nworkers = count;
        }
    }
    size_t nw = count < r->nworkers ? count : r->nworkers;
    for (size_t i = 0; i < nw; i++) {
        if (!r->workers[i]) {
            pthread_mutex_unlock(&r->mu);
            struct worker *w = nvml_worker_new(r, (unsigned)i);
            pthread_mutex_lock(&r->mu);
            r->workers[i] = w;
        }
    }
    /* Whose GPM is sampled in this session from this tick on (gpm.h): read
     * by the thread that claims the GPU. */
    bool inproc = gpm_client_any_inproc(r->gpm);
    for (size_t i = 0; i < nw; i++) {
        if (r->workers[i])
            r->workers[i]->gpm_inproc = inproc && gpm_client_inproc(r->gpm, r->gpus[i].uuid);
    }
    /* A system worker late with this tick's enumeration: the GPUs go to
     * their own threads from the last one, not to this thread. */
    if (r->inline_tick && (sys_late || !r->have_enum))
        r->inline_tick = false;
    if (r->inline_tick) {
        uint64_t now = mono();
        uint64_t fire = rescue_at > now ? rescue_at : now + (deadline > now ? (deadline - now) / 2 : 0);
        bool count_first = r->inl_count_now;
        r->inl_count_now = false;
        enum inl_end end = nvml_inline_sample(r, nw, fire, count_first);
        if (end == INL_TAKEN)
            return BACKEND_TAKEN_OVER;
        if (end == INL_RECOUNT) { /* the system worker counts again, enumerates, relays */
            r->inline_tick = false;
            if (sys_kick(r, true))
                pthread_cond_signal(&r->sys_cv);
            goto again;
        }
    } else {
        /* Threads this tick needs: the own thread of each idle GPU that the
         * system worker did not relay to (it was busy or late, or the GPU
         * is new). Started outside the lock. */
        bool need = false;
        for (size_t i = 0; i < nw && !need; i++) {
            const struct worker *w = r->workers[i];
            need = w && !w->started && !w->sent && w->req == w->done;
        }
        for (size_t i = 0; need && i < nw; i++) {
            struct worker *w = r->workers[i];
            if (w && !w->started && !w->sent && w->req == w->done) {
                pthread_mutex_unlock(&r->mu);
                nvml_worker_start(r, w);
                pthread_mutex_lock(&r->mu);
            }
        }
        /* Hand the tick to every idle worker nobody relayed to; one still
         * busy with an earlier tick (stuck in the driver) is not waited for. */
        for (size_t i = 0; i < nw; i++) {
            struct worker *w = r->workers[i];
            if (w && w->started && !w->sent && w->req == w->done) {
                worker_kick(r, w, i);
                pthread_cond_signal(&w->cv);
            }
        }
    }
    for (;;) {
        bool all = true;
        for (size_t i = 0; i < nw && all; i++)
            all = !worker_out(r->workers[i]);
        if (all || atomic_load(&r->interrupted))
            break;
        if (!wait_until(&r->done_cv, &r->mu, deadline))
            break;
    }
    r->tick_open = false;
    uint64_t cost = 0;
    for (size_t i = 0; i < nw; i++) {
        struct worker *w = r->workers[i];
        if (!w)
            continue;
        if (w->have_result) {
            part_swap(&w->result, &w->last);
            w->last_gpm = w->res_gpm;
            w->have_result = false;
            w->have_last = true;
            w->late = 0;
            cost += w->cost_ns;
        } else {
            w->late++;
        }
        if (w->gpm_gave_up) { /* this session's GPM back to the helper */
            w->gpm_gave_up = false;
            gpm_client_inproc_failed(r->gpm, w->uuid);
        }
    }
    /* The GPUs' own threads while their sampling takes over a quarter of
     * the interval, this thread again under an eighth. */
    uint64_t iv = (uint64_t)(r->o.interval_ms ? r->o.interval_ms : 1000) * 1000000ull;
    if (cost > iv / 4)
        r->parallel = true;
    else if (cost < iv / 8)
        r->parallel = false;
    const char *sys_sym = atomic_load(&r->sys_sym);
    uint64_t sys_t0 = atomic_load(&r->sys_op_ns);
    pthread_mutex_unlock(&r->mu);

    gpm_start(r);
    uint64_t now = mono();
    snapshot_notes_reset(s);
    for (size_t i = 0; i < nw; i++) {
        struct worker *w = r->workers[i];
        if (!w)
            continue;
        size_t first = s->ndevices;
        bool fresh = w->late == 0 && w->have_last;
        if (fresh)
            nvml_merge_part(s, w->last);
        else
            nvml_merge_stalled(r, w, s, now);
        /* A part with GPM values of its own (this session's), fresh or
         * carried, keeps them; the others get the helper's. */
        if (!(w->have_last && w->last_gpm))
            nvml_gpm_apply(s, first, s->ndevices, nvml_gpm_client_view, r->gpm);
        else if (fresh && w->last->ndevices > 0)
            gpm_client_inproc_flowing(r->gpm, w->last->devices[0].uuid);
    }
    if (sys_late) {
        s->partial = true;
        debuglog_printf("system tick late: stalled %.1f s in %s",
                        (double)(now - sys_t0) / 1e9, sys_sym ? sys_sym : "?");
    }
    dcgm_apply(r->dcgm, s);
    events_apply(r->events, s);
    return 0;
}

static bool root_abandon(void *p)
{
    struct nvml_root *r = p;
    pthread_mutex_lock(&r->mu);
    bool in = r->inl_active;
    if (in) { /* as the watchdog does, with nobody to carry the tick on */
        r->inl_gen++;
        r->inl_active = false;
        r->inl_left++;
    }
    pthread_mutex_unlock(&r->mu);
    return in;
}

static void root_interrupt(void *p)
{
    struct nvml_root *r = p;
    atomic_store(&r->interrupted, true);
    pthread_mutex_lock(&r->mu);
    pthread_cond_broadcast(&r->done_cv);
    pthread_mutex_unlock(&r->mu);
}

/* The GPM helper dies with the thread that started it (PR_SET_PDEATHSIG is
 * the forking thread's): before that thread ends, the helper is asked to
 * leave, so it frees its samples and ends its NVML session itself. */
static void root_detach(void *p)
{
    struct nvml_root *r = p;
    gpm_client_close(r->gpm);
    dcgm_client_close(r->dcgm);
    events_client_close(r->events);
    r->gpm = NULL;
    r->dcgm = NULL;
    r->events = NULL;
    r->gpm_tried = false;
}

static void root_close(void *p)
{
    struct nvml_root *r = p;
    if (!r)
        return;
    gpm_client_close(r->gpm);
    dcgm_client_close(r->dcgm);
    events_client_close(r->events);
    r->gpm = NULL;
    r->dcgm = NULL;
    r->events = NULL;
    pthread_mutex_lock(&r->mu);
    r->stop = true;
    r->relay = false; /* the system worker no longer touches the GPU workers... */
    while (r->relaying) /* ...once it has signalled those it did (no driver call) */
        pthread_cond_wait(&r->done_cv, &r->mu);
    for (size_t i = 0; i < r->nworkers; i++) {
        if (r->workers[i]) {
            r->workers[i]->stop = true;
            pthread_cond_signal(&r->workers[i]->cv);
        }
    }
    /* A sampler still in a GPU's call (given up on, or its caller gave up
     * waiting for it) may be inside any worker's state. */
    bool sampler_in = r->inl_active || r->inl_left > 0;
    pthread_mutex_unlock(&r->mu);
    uint64_t deadline = mono() + CLOSE_WAIT_NS;
    bool all = !sampler_in;
    bool wd_joined = nvml_watchdog_stop(r, deadline);
    for (size_t i = 0; i < r->nworkers; i++) {
        struct worker *w = r->workers[i];
        if (!w)
            continue;
        bool ended = !w->started || join_by(w->thr, deadline);
        if (ended && !sampler_in)
            nvml_worker_free(w);
        else
            all = false; /* stuck in the driver: its memory stays with it */
    }
    /* The system worker shuts NVML down on its way out (bounded), once the
     * workers' GPM samples have been freed through the library. */
    pthread_mutex_lock(&r->mu);
    r->sys_quit = true;
    pthread_cond_broadcast(&r->sys_cv);
    pthread_mutex_unlock(&r->mu);
    bool sys_joined = !r->sys_started || join_by(r->sys_thr, mono() + CLOSE_WAIT_NS);
    if (!all || !sys_joined || !wd_joined) {
        debuglog_printf("close: a thread is stuck in the driver; not unloading the library");
        return; /* the root stays allocated for the threads that may still wake */
    }
    free(r->workers);
    nvml_lib_close(&r->lib);
    free(r->gpus);
    free(r->sys_gpus);
    free(r->sys_wake);
    pthread_cond_destroy(&r->done_cv);
    pthread_cond_destroy(&r->sys_cv);
    pthread_mutex_destroy(&r->mu);
    pthread_mutex_destroy(&r->take_mu);
    free(r);
}

const struct backend_ops nvml_backend_ops = {
    .name = "nvml",
    .open = root_open,
    .start = root_start,
    .sample = root_sample,
    .close = root_close,
    .last_error = root_last_error,
    .settle = root_settle,
    .interrupt = root_interrupt,
    .detach = root_detach,
    .set_takeover = root_set_takeover,
    .abandon = root_abandon,
};
