/*
 * nvml_workers.c — the NVML backend's threads: a system worker that loads
 * the library, initialises NVML (retrying with backoff while the driver is
 * absent) and enumerates GPUs, and one worker per physical GPU that samples
 * that GPU and its MIG devices. The caller's tick (the sampling engine, or
 * --once) never makes an NVML call itself: it hands each idle worker a tick,
 * waits until its deadline, and merges what came back. A worker stuck in
 * the driver is simply not given new ticks; its devices are reported from
 * its last sample (carried for a few ticks, then none) with the call it is
 * stuck in, and the other GPUs keep updating.
 *
 * While the driver answers quickly (the GPUs' sampling took less than a
 * quarter of the interval, all together, on the last tick), a steady tick
 * is one wake-up whatever the number of GPUs: the caller wakes one runner
 * thread (root_start, before it samples the host), which counts the GPUs
 * and, when the count is the enumeration's, samples every idle GPU in turn
 * and wakes the caller if it waits. The system worker is woken for the
 * enumeration (slow cadence, a GPU lost), when the runner's count failed
 * or changed (it hands the tick over), and when the runner is busy or the
 * driver slow: it counts, enumerates, and hands the tick to the runner or
 * to each idle GPU's own thread, which sample in parallel; the last of
 * them wakes the caller. A GPU is
 * claimed for a tick one at a time, so a runner stuck in one GPU's call
 * holds only that GPU: the GPUs it had not reached are late for this tick,
 * and while it is stuck every later tick goes to the GPUs' own threads.
 * The caller steps in itself when a GPU needs its thread started, the
 * system worker is busy or the driver went away. Threads are started the
 * first time they are needed.

 * Locking: root->mu guards every field marked "mu" below and the workers'
 * hand-over fields. A worker's nvml_state and private part belong to the
 * thread that claimed the GPU's tick (req++ under mu, only while
 * req == done, so one thread at a time): its own thread or the runner.
 * Everything else (last parts, GPM client, merging) belongs to the
 * thread calling sample/close (one at a time).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "backend/gpm.h"
#include "backend/nvml_internal.h"
#include "backend/nvml_load.h"
#include "clock.h"
#include "collect.h"
#include "debuglog.h"
#include "text.h"

#define BACKOFF_MIN_NS (1000ull * 1000000ull)
#define BACKOFF_MAX_NS (30000ull * 1000000ull)
/* How long close waits for threads before abandoning one stuck in the driver. */
#define CLOSE_WAIT_NS (300ull * 1000000ull)

enum sys_state {
    SYS_LOADING, /* first attempt in progress */
    SYS_WAITING, /* no library or no driver: next try at next_try_ns */
    SYS_READY,
};

struct worker {
    unsigned index;
    pthread_t thr;
    bool started;             /* its own thread runs (set by the sampling thread) */
    pthread_cond_t cv;        /* a new request or stop */
    struct nvml_state st;     /* the claiming thread's (see Locking above) */
    /* The three parts below are snapshots in bufs, handed over by swapping
     * the pointers (a snapshot is a few KiB: copying them was a visible
     * share of a DGX tick). */
    struct snapshot bufs[3];
    struct snapshot *part;    /* the worker thread's own: the part being filled */
    /* mu */
    nvmlDevice_t h;
    nvmlReturn_t hrc;
    uint64_t req, done;       /* tick numbers requested / finished */
    bool stop;
    bool sent;                /* given a tick by the current sample */
    bool armed;               /* idle when the tick began: the system worker may relay to it */
    bool counted;             /* its finishing is counted in root->pending */
    struct snapshot *result;  /* a finished part waiting to be taken */
    bool have_result;
    bool lost;                /* the finished part found the GPU lost */
    bool reserved;            /* given to the runner this tick, not claimed yet */
    bool for_thread;          /* the tick requested is its own thread's to sample */
    uint64_t cost_ns;         /* how long its last finished tick took */
    _Atomic uint64_t tick_start_ns;
    /* the sampling thread's */
    struct snapshot *last;    /* the last finished part */
    bool have_last;
    unsigned late;            /* ticks in a row without a finished part */
    char uuid[MIGMON_UUID_LEN]; /* mu: from the enumeration ("" unknown) */
    char name[MIGMON_NAME_LEN];
};

struct enum_gpu {
    nvmlDevice_t h;
    nvmlReturn_t rc;
    char uuid[MIGMON_UUID_LEN];
    char name[MIGMON_NAME_LEN]; /* so a GPU stuck from its first sample is still named */
};

struct nvml_root {
    pthread_mutex_t mu;
    pthread_cond_t done_cv; /* a worker finished a tick, or the system worker changed state */
    pthread_cond_t sys_cv;  /* a request or stop for the system worker */
    struct backend_opts o;
    char nvml_path[4096];   /* --nvml-path, copied; "" to search */
    char gpm_exe[4096];
    struct nvml_lib lib;    /* loaded by the system worker; read-only once READY */
    pthread_t sys_thr;
    bool sys_started;
    /* mu */
    enum sys_state sys;
    char sys_msg[2048];
    uint64_t next_try_ns;
    uint64_t sys_req, sys_done;
    bool want_enum;
    bool relay;             /* the system worker starts the armed GPU workers after its tick */
    bool relaying;          /* the system worker is signalling GPU workers outside the lock */
    unsigned pending;       /* GPU workers given this tick that have not finished */
    bool parallel;          /* the GPUs' own threads sample them (a slow driver) */
    uint64_t run_req, run_done; /* the runner's ticks requested / finished */
    bool run_count;         /* the runner's tick starts with the GPU count (no system worker) */
    bool counting;          /* that count is not settled yet */
    uint64_t run_tick;      /* the sampling thread's tick the runner was given */
    bool run_started;       /* set by the sampling thread */
    pthread_t run_thr;
    pthread_cond_t run_cv;  /* a tick or stop for the runner */
    bool stop;
    bool inited;
    unsigned count;         /* GPUs in the last enumeration */
    struct enum_gpu *gpus;
    size_t gpus_cap;
    bool have_enum;
    /* the system worker's own */
    struct enum_gpu *sys_gpus;
    size_t sys_cap;
    pthread_cond_t **sys_wake; /* the GPU workers relayed to, signalled after unlocking */
    size_t sys_wake_cap;
    char count_err[256];    /* the last GetCount failed: why ("" when fine) */
    char driver_version[80], nvml_version[80];
    int cuda_version; /* 12040 = 12.4; 0 unknown */
    _Atomic(const char *) sys_sym; /* the system worker's call in progress */
    _Atomic uint64_t sys_op_ns;
    /* written by the sampling thread under mu; the system worker reads them
     * under mu while relay is set */
    struct worker **workers;
    size_t nworkers;
    /* the sampling thread's */
    bool began;       /* root_start began the tick that root_sample finishes */
    bool sys_kicked;  /* this tick woke the system worker (or found it busy), or gave the runner the count */
    bool tick_open;   /* mu: a sample still waits for this tick (ticks is written under mu too) */
    uint64_t sys_tick_seq; /* mu: the system worker's request made for this tick; 0 none */
    struct gpm_client *gpm;
    bool gpm_tried;
    uint64_t ticks, last_enum_tick;
    unsigned enum_every; /* ticks between re-enumerations */
    char err[2048];
    _Atomic bool interrupted; /* any thread: stop waiting for the driver */
};

static uint64_t mono(void) { return clock_mono_ns(); }

static struct timespec abs_ts(uint64_t mono_ns)
{
    return (struct timespec){.tv_sec = (time_t)(mono_ns / 1000000000ull),
                             .tv_nsec = (long)(mono_ns % 1000000000ull)};
}

static void cond_init(pthread_cond_t *c)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(c, &a);
    pthread_condattr_destroy(&a);
}

/* Wait on cv until deadline; false when the deadline passed. */
static bool wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, uint64_t deadline)
{
    struct timespec ts = abs_ts(deadline);
    return pthread_cond_timedwait(cv, mu, &ts) != ETIMEDOUT;
}

/* The threads never take the signals the front end handles. */
static int start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

static void part_swap(struct snapshot **a, struct snapshot **b)
{
    struct snapshot *t = *a;
    *a = *b;
    *b = t;
}

/* Give GPU worker i this tick, with the enumeration's handle (mu held); it
 * counts in pending until it finishes. */
static void worker_give(struct nvml_root *r, struct worker *w, size_t i)
{
    w->h = r->gpus[i].h;
    w->hrc = r->gpus[i].rc;
    memcpy(w->uuid, r->gpus[i].uuid, sizeof(w->uuid));
    memcpy(w->name, r->gpus[i].name, sizeof(w->name));
    w->sent = true;
    w->armed = false;
    w->counted = true;
    r->pending++;
}

/* Give GPU worker i this tick for its own thread (mu held). The caller
 * signals w->cv, after unlocking where it can: a thread woken while the
 * mutex is still held only goes back to sleep on it. */
static void worker_kick(struct nvml_root *r, struct worker *w, size_t i)
{
    worker_give(r, w, i);
    w->for_thread = true;
    w->req++;
}

/* A worker given this tick (sent) that has not finished it. */
static bool worker_out(const struct worker *w)
{
    return w && w->sent && (w->reserved || w->req != w->done);
}

/* ------------------------------------------------------------ system worker */

static void sys_set(struct nvml_root *r, enum sys_state st, const char *msg)
{
    pthread_mutex_lock(&r->mu);
    r->sys = st;
    if (msg)
        snprintf(r->sys_msg, sizeof(r->sys_msg), "%s", msg);
    pthread_cond_broadcast(&r->done_cv);
    pthread_mutex_unlock(&r->mu);
}

/* Sleep until the next try (or stop); false on stop. */
static bool sys_backoff(struct nvml_root *r, uint64_t *backoff)
{
    pthread_mutex_lock(&r->mu);
    r->next_try_ns = mono() + *backoff;
    bool go = true;
    while (!r->stop && mono() < r->next_try_ns)
        wait_until(&r->sys_cv, &r->mu, r->next_try_ns);
    go = !r->stop;
    pthread_mutex_unlock(&r->mu);
    *backoff = *backoff * 2 > BACKOFF_MAX_NS ? BACKOFF_MAX_NS : *backoff * 2;
    return go;
}

static nvmlReturn_t sys_call_init(struct nvml_root *r)
{
    const struct nvml_fns *f = &r->lib.f;
    /* NVML_INIT_FLAG_NO_GPUS: a driver with zero GPUs is a valid state to
     * report ("no GPU"), not an init failure. */
    const char *sym = f->init_with_flags ? "nvmlInitWithFlags" : "nvmlInit_v2";
    atomic_store(&r->sys_op_ns, mono());
    atomic_store(&r->sys_sym, sym);
    nvmlReturn_t rc = f->init_with_flags ? f->init_with_flags(NVML_INIT_FLAG_NO_GPUS) : f->init();
    atomic_store(&r->sys_sym, NULL);
    debuglog_printf("%s dev=- rc=%d %s", sym, rc, nvml_rc_name(rc));
    return rc;
}

static bool driver_gone(nvmlReturn_t rc)
{
    return rc == NVML_ERROR_DRIVER_NOT_LOADED || rc == NVML_ERROR_UNINITIALIZED ||
           rc == NVML_ERROR_LIB_RM_VERSION_MISMATCH;
}

/* One tick of the system worker: the GPU count (every tick: one cheap
 * call, and the simulator's step clock), handles and UUIDs when asked. */
static nvmlReturn_t sys_tick(struct nvml_root *r, bool enumerate)
{
    const struct nvml_fns *f = &r->lib.f;
    unsigned count = 0;
    atomic_store(&r->sys_op_ns, mono());
    atomic_store(&r->sys_sym, "nvmlDeviceGetCount_v2");
    nvmlReturn_t rc = f->device_count(&count);
    atomic_store(&r->sys_sym, NULL);
    debuglog_printf("nvmlDeviceGetCount_v2 dev=- rc=%d %s", rc, nvml_rc_name(rc));
    if (rc != NVML_SUCCESS) {
        pthread_mutex_lock(&r->mu);
        snprintf(r->count_err, sizeof(r->count_err), "nvmlDeviceGetCount failed: %s",
                 nvml_rc_reason(rc));
        pthread_mutex_unlock(&r->mu);
        return rc;
    }
    if (count > 4096)
        count = 4096; /* no machine has more; a driver that says so is wrong */
    pthread_mutex_lock(&r->mu);
    r->count_err[0] = '\0';
    bool changed = count != r->count;
    pthread_mutex_unlock(&r->mu);
    if (!enumerate && !changed)
        return NVML_SUCCESS;
    /* Into the system worker's own grow-only buffer, then copied under the
     * lock: a steady tick allocates nothing. */
    if (count > r->sys_cap) {
        struct enum_gpu *n = realloc(r->sys_gpus, count * sizeof(*n));
        if (!n)
            return NVML_ERROR_MEMORY;
        r->sys_gpus = n;
        r->sys_cap = count;
    }
    struct enum_gpu *g = r->sys_gpus;
    if (count)
        memset(g, 0, count * sizeof(*g));
    for (unsigned i = 0; i < count; i++) {
        atomic_store(&r->sys_op_ns, mono());
        atomic_store(&r->sys_sym, "nvmlDeviceGetHandleByIndex_v2");
        g[i].rc = f->handle_by_index(i, &g[i].h);
        if (g[i].rc == NVML_SUCCESS && f->uuid) {
            atomic_store(&r->sys_sym, "nvmlDeviceGetUUID");
            if (f->uuid(g[i].h, g[i].uuid, sizeof(g[i].uuid)) != NVML_SUCCESS)
                g[i].uuid[0] = '\0';
            text_clean(g[i].uuid, sizeof(g[i].uuid));
            atomic_store(&r->sys_sym, "nvmlDeviceGetName");
            if (f->name && f->name(g[i].h, g[i].name, sizeof(g[i].name)) != NVML_SUCCESS)
                g[i].name[0] = '\0';
            text_clean(g[i].name, sizeof(g[i].name));
        }
        atomic_store(&r->sys_sym, NULL);
    }
    pthread_mutex_lock(&r->mu);
    if (count > r->gpus_cap) {
        struct enum_gpu *n = realloc(r->gpus, count * sizeof(*n));
        if (!n) {
            pthread_mutex_unlock(&r->mu);
            return NVML_ERROR_MEMORY;
        }
        r->gpus = n;
        r->gpus_cap = count;
    }
    if (count)
        memcpy(r->gpus, g, count * sizeof(*g));
    r->count = count;
    r->have_enum = true;
    pthread_mutex_unlock(&r->mu);
    return NVML_SUCCESS;
}

static void *sys_main(void *arg)
{
    struct nvml_root *r = arg;
    pthread_setname_np(pthread_self(), "migmon-system");
    uint64_t backoff = BACKOFF_MIN_NS;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        bool stop = r->stop;
        pthread_mutex_unlock(&r->mu);
        if (stop)
            break;
        if (!r->lib.dl) {
            char err[2048];
            bool missing = false;
            if (nvml_lib_open(&r->lib, r->nvml_path[0] ? r->nvml_path : NULL, &missing, err,
                              sizeof(err)) != 0) {
                sys_set(r, SYS_WAITING, err);
                if (!sys_backoff(r, &backoff))
                    break;
                continue;
            }
        }
        nvmlReturn_t rc = sys_call_init(r);
        if (rc != NVML_SUCCESS) {
            const char *hint = "";
            if (rc == NVML_ERROR_DRIVER_NOT_LOADED)
                hint = " (the NVIDIA kernel driver is not loaded)";
            else if (rc == NVML_ERROR_NO_PERMISSION)
                hint = " (no permission to open /dev/nvidia*)";
            else if (rc == NVML_ERROR_LIB_RM_VERSION_MISMATCH)
                hint = " (library and kernel driver versions differ; reboot or reload the driver)";
            char msg[2048];
            snprintf(msg, sizeof(msg), "nvmlInit failed with %s%s, library %.1500s",
                     nvml_rc_reason(rc), hint, r->lib.path);
            sys_set(r, SYS_WAITING, msg);
            if (!sys_backoff(r, &backoff))
                break;
            continue;
        }
        const struct nvml_fns *f = &r->lib.f;
        char dv[80] = "", nv[80] = "";
        if (f->driver_version && f->driver_version(dv, sizeof(dv)) != NVML_SUCCESS)
            dv[0] = '\0';
        if (f->nvml_version && f->nvml_version(nv, sizeof(nv)) != NVML_SUCCESS)
            nv[0] = '\0';
        int cv = 0;
        if (!f->cuda_version || f->cuda_version(&cv) != NVML_SUCCESS || cv < 1000 || cv > 99990)
            cv = 0; /* no libcuda, or a number that is no CUDA version */
        /* a driver may fill the whole buffer without a NUL */
        text_clean(dv, sizeof(dv));
        text_clean(nv, sizeof(nv));
        pthread_mutex_lock(&r->mu);
        memcpy(r->driver_version, dv, sizeof(dv));
        memcpy(r->nvml_version, nv, sizeof(nv));
        r->cuda_version = cv;
        r->inited = true;
        r->want_enum = true;
        pthread_mutex_unlock(&r->mu);
        sys_set(r, SYS_READY, "");
        backoff = BACKOFF_MIN_NS;
        /* Serve ticks until stop or the driver goes away. */
        bool gone = false;
        for (;;) {
            pthread_mutex_lock(&r->mu);
            while (!r->stop && r->sys_req == r->sys_done)
                pthread_cond_wait(&r->sys_cv, &r->mu);
            if (r->stop) {
                pthread_mutex_unlock(&r->mu);
                break;
            }
            uint64_t seq = r->sys_req;
            bool en = r->want_enum;
            r->want_enum = false;
            pthread_mutex_unlock(&r->mu);
            rc = sys_tick(r, en);
            pthread_mutex_lock(&r->mu);
            r->sys_done = seq;
            /* Hand the tick on, so the sampling thread is woken once, by
             * whoever finishes the last GPU: to the runner while the driver
             * is quick, else to the idle GPUs' own threads. */
            size_t kicked = 0;
            if (r->relay && !r->stop && !driver_gone(rc) && r->have_enum) {
                size_t want = r->nworkers ? r->nworkers : 1;
                if (want > r->sys_wake_cap) {
                    pthread_cond_t **nw = realloc(r->sys_wake, want * sizeof(*nw));
                    if (nw) {
                        r->sys_wake = nw;
                        r->sys_wake_cap = want;
                    }
                }
                size_t n = r->nworkers < r->count ? r->nworkers : r->count;
                if (!r->parallel && r->sys_wake_cap && r->run_started && r->run_req == r->run_done) {
                    for (size_t i = 0; i < n; i++) {
                        struct worker *w = r->workers[i];
                        if (w && w->armed) {
                            worker_give(r, w, i);
                            w->reserved = true;
                            kicked = 1;
                        }
                    }
                    if (kicked) {
                        r->run_req++;
                        r->sys_wake[0] = &r->run_cv;
                    }
                } else {
                    for (size_t i = 0; i < n && i < r->sys_wake_cap; i++) {
                        struct worker *w = r->workers[i];
                        if (w && w->armed && w->started) {
                            worker_kick(r, w, i);
                            r->sys_wake[kicked++] = &w->cv;
                        }
                    }
                }
            }
            r->relay = false;
            r->relaying = kicked > 0; /* close waits for it to end */
            pthread_mutex_unlock(&r->mu);
            if (!kicked) {
                pthread_cond_broadcast(&r->done_cv);
            } else {
                for (size_t i = 0; i < kicked; i++)
                    pthread_cond_signal(r->sys_wake[i]);
                pthread_mutex_lock(&r->mu);
                r->relaying = false;
                if (r->stop)
                    pthread_cond_broadcast(&r->done_cv);
                pthread_mutex_unlock(&r->mu);
            }
            if (driver_gone(rc)) {
                gone = true;
                break;
            }
        }
        atomic_store(&r->sys_sym, "nvmlShutdown");
        f->shutdown();
        atomic_store(&r->sys_sym, NULL);
        pthread_mutex_lock(&r->mu);
        r->inited = false;
        r->count = 0;
        pthread_mutex_unlock(&r->mu);
        if (!gone)
            break;
        /* The driver went away (reloaded): start over, after a pause. */
        sys_set(r, SYS_WAITING, "the NVIDIA driver went away (reloaded?)");
        if (!sys_backoff(r, &backoff))
            break;
    }
    return NULL;
}

/* ------------------------------------------------------------ GPU workers */

struct worker_arg {
    struct nvml_root *r;
    struct worker *w;
};

/* Sample GPU worker w's claimed tick seq (mu not held) and hand the part
 * over. True when the caller must wake the sampling thread (the last GPU
 * of the tick finished). */
static bool worker_sample(struct nvml_root *r, struct worker *w, uint64_t seq)
{
    pthread_mutex_lock(&r->mu);
    nvmlDevice_t h = w->h;
    nvmlReturn_t hrc = w->hrc;
    char uuid[MIGMON_UUID_LEN];
    memcpy(uuid, w->uuid, sizeof(uuid));
    pthread_mutex_unlock(&r->mu);
    uint64_t t0 = mono();
    atomic_store(&w->tick_start_ns, t0);
    snapshot_notes_reset(w->part);
    nvml_sample_gpu(&w->st, w->index, h, hrc, uuid, w->part);
    snapshot_check_ranges(w->part); /* absurd driver values never leave the worker */
    uint64_t t1 = mono();
    pthread_mutex_lock(&r->mu);
    part_swap(&w->part, &w->result);
    w->have_result = true;
    w->lost = w->st.lost;
    w->cost_ns = t1 - t0;
    w->done = seq;
    /* Only the last of this tick's workers wakes the sampling thread; a
     * worker finishing a tick given up on is waited for by nobody. */
    bool wake = false;
    if (w->counted) {
        w->counted = false;
        wake = --r->pending == 0;
    }
    pthread_mutex_unlock(&r->mu);
    return wake;
}

static void *worker_run(void *arg)
{
    struct worker_arg a = *(struct worker_arg *)arg;
    free(arg);
    struct nvml_root *r = a.r;
    struct worker *w = a.w;
    char name[16]; /* the kernel keeps 15 characters */
    snprintf(name, sizeof(name), "migmon-gpu%u", w->index % 100000u);
    pthread_setname_np(pthread_self(), name);
    for (;;) {
        pthread_mutex_lock(&r->mu);
        /* A tick the runner claimed is the runner's: this thread, woken
         * spuriously or just started, must not sample the GPU beside it. */
        while (!w->stop && !(w->req != w->done && w->for_thread))
            pthread_cond_wait(&w->cv, &r->mu);
        if (w->stop) {
            pthread_mutex_unlock(&r->mu);
            break;
        }
        w->for_thread = false;
        uint64_t seq = w->req;
        pthread_mutex_unlock(&r->mu);
        if (worker_sample(r, w, seq)) /* the root outlives this thread (close joins it first) */
            pthread_cond_broadcast(&r->done_cv);
    }
    return NULL;
}

/* The runner's GPU count, when the sampling thread gave it the whole tick
 * (mu not held): true when it answered the count of the enumeration. */
static bool runner_count(struct nvml_root *r)
{
    unsigned count = 0;
    atomic_store(&r->sys_op_ns, mono());
    atomic_store(&r->sys_sym, "nvmlDeviceGetCount_v2");
    nvmlReturn_t rc = r->lib.f.device_count(&count);
    atomic_store(&r->sys_sym, NULL);
    debuglog_printf("nvmlDeviceGetCount_v2 dev=- rc=%d %s", rc, nvml_rc_name(rc));
    if (count > 4096)
        count = 4096; /* as sys_tick */
    pthread_mutex_lock(&r->mu);
    bool same = rc == NVML_SUCCESS && count == r->count;
    pthread_mutex_unlock(&r->mu);
    return same;
}

/* The count failed or changed (mu held): the GPUs reserved for the runner
 * are given back and, while this tick is still the sampling thread's, the
 * system worker takes it over (it counts again, enumerates, reports a
 * failure or a driver gone away, and relays the GPUs). True when the caller
 * must signal sys_cv. */
static bool runner_hand_off(struct nvml_root *r)
{
    for (size_t i = 0; i < r->nworkers; i++) {
        struct worker *w = r->workers[i];
        if (!w || !w->reserved)
            continue;
        w->reserved = w->sent = false;
        if (w->counted) {
            w->counted = false;
            r->pending--;
        }
    }
    r->want_enum = true;
    if (r->stop || r->run_tick != r->ticks || !r->tick_open || r->sys_req != r->sys_done)
        return false; /* a tick given up on: the next one goes to the system worker */
    for (size_t i = 0; i < r->nworkers; i++) {
        struct worker *w = r->workers[i];
        if (w) /* not one the engine already handed to its thread */
            w->armed = !w->sent && w->req == w->done;
    }
    r->relay = true;
    r->sys_tick_seq = ++r->sys_req;
    return true;
}

/* The runner: each tick it is given, it claims the GPUs reserved for it
 * one at a time, in order, and samples them. A tick given up on while it
 * was stuck has no reservations left (the next tick cleared them). */
static void *runner_main(void *arg)
{
    struct nvml_root *r = arg;
    pthread_setname_np(pthread_self(), "migmon-runner");
    for (;;) {
        pthread_mutex_lock(&r->mu);
        while (!r->stop && r->run_req == r->run_done)
            pthread_cond_wait(&r->run_cv, &r->mu);
        if (r->stop) {
            pthread_mutex_unlock(&r->mu);
            break;
        }
        uint64_t run_seq = r->run_req;
        bool wake = false;
        if (r->run_count) {
            r->run_count = false;
            pthread_mutex_unlock(&r->mu);
            bool same = runner_count(r);
            pthread_mutex_lock(&r->mu);
            r->counting = false;
            if (!same) {
                bool kick = runner_hand_off(r);
                r->run_done = run_seq;
                pthread_mutex_unlock(&r->mu);
                if (kick)
                    pthread_cond_signal(&r->sys_cv);
                else
                    pthread_cond_broadcast(&r->done_cv);
                continue;
            }
        }
        for (size_t i = 0; !r->stop && i < r->nworkers; i++) {
            struct worker *w = r->workers[i];
            if (!w || !w->reserved)
                continue;
            w->reserved = false;
            w->for_thread = false;
            uint64_t seq = ++w->req;
            pthread_mutex_unlock(&r->mu);
            wake = worker_sample(r, w, seq) || wake;
            pthread_mutex_lock(&r->mu);
        }
        r->run_done = run_seq;
        pthread_mutex_unlock(&r->mu);
        if (wake)
            pthread_cond_broadcast(&r->done_cv);
    }
    return NULL;
}

static struct worker *worker_new(struct nvml_root *r, unsigned index)
{
    struct worker *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->index = index;
    w->part = &w->bufs[0];
    w->result = &w->bufs[1];
    w->last = &w->bufs[2];
    cond_init(&w->cv);
    nvml_state_init(&w->st, &r->lib);
    w->st.slow_every = r->enum_every;
    return w;
}

/* Start GPU worker w's own thread (mu not held; the sampling thread). */
static void worker_start(struct nvml_root *r, struct worker *w)
{
    struct worker_arg *a = malloc(sizeof(*a));
    if (!a)
        return;
    a->r = r;
    a->w = w;
    if (start_thread(&w->thr, worker_run, a) != 0) {
        free(a);
        return;
    }
    pthread_mutex_lock(&r->mu);
    w->started = true;
    pthread_mutex_unlock(&r->mu);
}

static void worker_free(struct worker *w)
{
    nvml_state_free(&w->st);
    for (int i = 0; i < 3; i++)
        snapshot_free(&w->bufs[i]);
    pthread_cond_destroy(&w->cv);
    free(w);
}

/* ------------------------------------------------------------ merge */

static int append_part(struct snapshot *s, const struct snapshot *p)
{
    if (snapshot_reserve(s, s->ndevices + p->ndevices) != 0 ||
        snapshot_reserve_procs(s, s->nprocs + p->nprocs) != 0)
        return -1;
    size_t base = s->ndevices, pbase = s->nprocs;
    if (p->ndevices)
        memcpy(s->devices + base, p->devices, p->ndevices * sizeof(*p->devices));
    if (p->nprocs)
        memcpy(s->procs + pbase, p->procs, p->nprocs * sizeof(*p->procs));
    for (size_t i = 0; i < p->ndevices; i++) {
        struct device *d = &s->devices[base + i];
        if (d->parent_pos >= 0)
            d->parent_pos += (int)base;
        d->proc_first += pbase;
        d->stall = NULL;
        /* reasons in the part's notes: copy them into ours */
        for (int k = 0; k < M_COUNT; k++) {
            const char *w = d->m[k].why;
            if (w && p->notes && w >= p->notes && w < p->notes + p->notes_cap)
                d->m[k].why = snapshot_note(s, "%s", w);
        }
    }
    s->ndevices += p->ndevices;
    s->nprocs += p->nprocs;
    return 0;
}

/* A worker that has not finished: its last part, aged (carried for
 * COLLECT_CARRY_TICKS ticks, then none), or a placeholder. */
static void append_stalled(struct nvml_root *r, struct worker *w, struct snapshot *s,
                           uint64_t now)
{
    const char *sym = atomic_load_explicit(&w->st.cur_sym, memory_order_relaxed);
    uint64_t t0 = atomic_load(&w->tick_start_ns);
    double secs = t0 && now > t0 ? (double)(now - t0) / 1e9 : 0;
    const char *note = snapshot_note(s, "stalled %.0f s in %s", secs,
                                     sym ? sym : "an NVML call");
    size_t first = s->ndevices;
    if (w->have_last) {
        if (append_part(s, w->last) != 0)
            return;
    } else {
        if (snapshot_reserve(s, s->ndevices + 1) != 0)
            return;
        struct device *d = &s->devices[s->ndevices++];
        memset(d, 0, sizeof(*d));
        d->kind = DEV_GPU;
        d->index = (int)w->index;
        d->mig_index = d->parent_pos = d->gi_id = d->ci_id = -1;
        d->cc_major = d->cc_minor = -1;
        d->slices = d->slices_total = -1;
        snprintf(d->uuid, sizeof(d->uuid), "%s", w->uuid);
        snprintf(d->name, sizeof(d->name), "%s", w->name);
        for (int k = 0; k < M_COUNT; k++)
            d->m[k] = metric_none(note);
        d->process_count = metric_none(note);
        d->proc_first = s->nprocs;
    }
    bool carry = w->late <= carry_ticks();
    uint64_t interval = (uint64_t)(r->o.interval_ms ? r->o.interval_ms : 1000) * 1000000ull;
    bool say = t0 && now - t0 > 2 * interval;
    for (size_t i = first; i < s->ndevices; i++) {
        struct device *d = &s->devices[i];
        for (int k = 0; k < M_COUNT; k++) {
            struct metric *m = &d->m[k];
            if (metric_ok(m) && carry)
                m->src = MSRC_CARRIED;
            else
                *m = metric_none(note);
        }
        /* the collector carries the process list itself (bounded) */
        d->process_count = metric_none(note);
        d->nprocs = 0;
        d->stall = say || !carry ? note : NULL;
    }
    s->partial = true;
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
    if (o) {
        r->o = *o;
        snprintf(r->nvml_path, sizeof(r->nvml_path), "%s", o->nvml_path ? o->nvml_path : "");
        snprintf(r->gpm_exe, sizeof(r->gpm_exe), "%s", o->gpm_exe ? o->gpm_exe : "");
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
    cond_init(&r->done_cv);
    cond_init(&r->sys_cv);
    cond_init(&r->run_cv);
    r->parallel = true; /* until a tick has measured the driver */
    r->sys = SYS_LOADING;
    if (start_thread(&r->sys_thr, sys_main, r) != 0) {
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
    if (ready && !r->gpm_tried) {
        r->gpm_tried = true;
        struct gpm_client_opts go = {
            .exe = r->gpm_exe[0] ? r->gpm_exe : NULL,
            .lib_path = r->lib.real_path,
            .interval_ms = r->o.interval_ms,
            .mode = (enum gpm_mode)r->o.gpm_mode,
        };
        r->gpm = gpm_client_open(&go);
    }
    uint64_t now = mono();
    if (r->gpm && now < deadline)
        gpm_client_settle(r->gpm, (unsigned)((deadline - now) / 1000000ull));
}

/* A new tick (mu held): nothing of the last one is waited for any more. */
static void tick_begin(struct nvml_root *r)
{
    r->ticks++;
    r->began = true;
    r->tick_open = true;
    r->counting = false;
    r->sys_tick_seq = 0;
    r->sys_kicked = false;
    r->relay = false;
    r->pending = 0;
    for (size_t i = 0; i < r->nworkers; i++) {
        struct worker *w = r->workers[i];
        if (w)
            w->sent = w->armed = w->counted = w->reserved = false;
    }
}

/* Wake the system worker for this tick (mu held, READY): the GPU count, and
 * the enumeration at a slow cadence or when a worker found its GPU lost.
 * GPU workers idle now are armed for the system worker to relay to. A
 * system worker still busy with an earlier tick is not woken again. True
 * when the caller must signal sys_cv. */
static bool sys_kick(struct nvml_root *r)
{
    r->sys_kicked = true;
    bool want = r->ticks - r->last_enum_tick >= r->enum_every;
    for (size_t i = 0; i < r->nworkers && !want; i++)
        want = r->workers[i] && r->workers[i]->lost;
    if (want) {
        r->want_enum = true;
        r->last_enum_tick = r->ticks;
    }
    if (r->sys_req != r->sys_done)
        return false;
    for (size_t i = 0; i < r->nworkers; i++) {
        struct worker *w = r->workers[i];
        if (w) /* not one the engine already handed to its thread */
            w->armed = !w->sent && w->req == w->done;
    }
    r->relay = true;
    r->sys_tick_seq = ++r->sys_req;
    return true;
}

/* A steady tick while the driver is quick (mu held, READY): the runner
 * counts the GPUs itself and, when the count is the enumeration's, samples
 * every idle GPU; the system worker is not woken (one hand-off a tick, not
 * two). Not when an enumeration is due, a GPU was lost, the last count
 * failed, or the runner or the system worker is still busy. True when the
 * caller must signal run_cv. */
static bool runner_kick(struct nvml_root *r)
{
    if (r->parallel || !r->run_started || r->run_req != r->run_done || r->sys_req != r->sys_done ||
        !r->have_enum || r->count_err[0] || r->want_enum || r->nworkers < r->count ||
        r->ticks - r->last_enum_tick >= r->enum_every)
        return false;
    for (size_t i = 0; i < r->count; i++) {
        const struct worker *w = r->workers[i];
        if (!w || w->lost)
            return false;
    }
    bool any = false;
    for (size_t i = 0; i < r->count; i++) {
        struct worker *w = r->workers[i];
        if (w->req == w->done) {
            worker_give(r, w, i);
            w->reserved = true;
            any = true;
        }
    }
    if (!any)
        return false;
    r->sys_kicked = true;
    r->run_count = true;
    r->counting = true;
    r->run_tick = r->ticks;
    r->run_req++;
    return true;
}

/* Start the tick's driver work, so that it runs while the caller samples
 * the host; root_sample collects it. */
static void root_start(void *p)
{
    struct nvml_root *r = p;
    bool wake = false, run = false;
    pthread_mutex_lock(&r->mu);
    if (!r->began) {
        tick_begin(r);
        if (r->sys == SYS_READY) {
            run = runner_kick(r);
            wake = !run && sys_kick(r);
        }
    }
    pthread_mutex_unlock(&r->mu);
    /* sys_cv and run_cv live as long as the root, which this thread closes */
    if (run)
        pthread_cond_signal(&r->run_cv);
    if (wake)
        pthread_cond_signal(&r->sys_cv);
}

/* The GPUs reserved for the runner that it has not claimed go to their own
 * threads, started if need be (mu held; dropped while a thread starts). */
static void take_back(struct nvml_root *r, size_t nw)
{
    for (size_t i = 0; i < nw && i < r->nworkers; i++) {
        struct worker *w = r->workers[i];
        if (!w || !w->reserved)
            continue;
        w->reserved = false; /* still given (sent, counted): it is the thread's now */
        if (!w->started) {
            pthread_mutex_unlock(&r->mu);
            worker_start(r, w);
            pthread_mutex_lock(&r->mu);
        }
        if (w->started && w->req == w->done) {
            w->for_thread = true;
            w->req++;
            pthread_cond_signal(&w->cv);
        }
    }
}

static int root_sample(void *p, struct snapshot *s, uint64_t deadline)
{
    struct nvml_root *r = p;
    s->ndevices = 0;
    s->nprocs = 0;
    s->partial = false;
    r->err[0] = '\0';
    gpm_client_poll(r->gpm); /* non-blocking: what the helper sent since */

    pthread_mutex_lock(&r->mu);
    if (!r->began)
        tick_begin(r);
    r->began = false;
    while (r->sys == SYS_LOADING && mono() < deadline && !atomic_load(&r->interrupted))
        wait_until(&r->done_cv, &r->mu, deadline);
    if (r->sys != SYS_READY) {
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
    if (!r->sys_kicked && sys_kick(r))
        pthread_cond_signal(&r->sys_cv);
    /* Half way to the deadline, the GPUs the runner has not reached yet (it
     * is stuck in an earlier one, or the driver turned slow) go to their
     * own threads, so one stuck GPU does not make the others late. */
    uint64_t t_wait = mono();
    uint64_t rescue_at = deadline > t_wait ? t_wait + (deadline - t_wait) / 2 : deadline;
    /* This tick's count: the system worker's, or the runner's. A tick
     * relayed to the GPUs wakes this thread only when the last GPU is done.
     * A count not back by the rescue point is not waited for: the GPUs go
     * to their own threads, from the last enumeration (a system worker
     * stuck in an earlier tick is not waited for at all). Before the first
     * enumeration there is none to fall back on: it is waited for until
     * the deadline. */
    for (;;) {
        uint64_t now = mono();
        bool sys_busy = r->sys_tick_seq && r->sys_done < r->sys_tick_seq;
        uint64_t until = sys_busy && !r->have_enum ? deadline : rescue_at;
        bool busy = (sys_busy || r->counting) && now < until;
        if (!busy || r->sys != SYS_READY || atomic_load(&r->interrupted))
            break;
        wait_until(&r->done_cv, &r->mu, now < rescue_at ? rescue_at : until);
    }
    bool sys_late = r->sys_req != r->sys_done || r->counting;
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
            struct worker *w = worker_new(r, (unsigned)i);
            pthread_mutex_lock(&r->mu);
            r->workers[i] = w;
        }
    }
    /* Threads that this tick or the next needs: the runner, or every GPU's
     * own while the driver is slow, and the own thread of each idle GPU
     * that the system worker did not relay to (it was busy or late, or the
     * GPU is new). Started outside the lock. */
    bool need_runner = !r->parallel && !r->run_started;
    bool need = need_runner;
    for (size_t i = 0; i < nw && !need; i++) {
        const struct worker *w = r->workers[i];
        need = w && !w->started && (r->parallel || (!w->sent && w->req == w->done));
    }
    if (need) {
        pthread_mutex_unlock(&r->mu);
        if (need_runner && start_thread(&r->run_thr, runner_main, r) == 0) {
            pthread_mutex_lock(&r->mu);
            r->run_started = true;
            pthread_mutex_unlock(&r->mu);
        }
        pthread_mutex_lock(&r->mu);
        for (size_t i = 0; i < nw; i++) {
            struct worker *w = r->workers[i];
            if (w && !w->started && (r->parallel || (!w->sent && w->req == w->done))) {
                pthread_mutex_unlock(&r->mu);
                worker_start(r, w);
                pthread_mutex_lock(&r->mu);
            }
        }
    }
    /* Hand the tick to every idle worker nobody relayed to; one still busy
     * with an earlier tick (stuck in the driver) is not waited for. */
    for (size_t i = 0; i < nw; i++) {
        struct worker *w = r->workers[i];
        if (w && w->started && !w->sent && w->req == w->done) {
            worker_kick(r, w, i);
            pthread_cond_signal(&w->cv);
        }
    }
    bool rescued = false;
    for (;;) {
        bool all = true;
        for (size_t i = 0; i < nw && all; i++)
            all = !worker_out(r->workers[i]);
        if (all || atomic_load(&r->interrupted))
            break;
        if (!rescued && mono() >= rescue_at) {
            rescued = true;
            take_back(r, nw);
            continue;
        }
        if (!wait_until(&r->done_cv, &r->mu, rescued ? deadline : rescue_at) && rescued)
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
            w->have_result = false;
            w->have_last = true;
            w->late = 0;
            cost += w->cost_ns;
        } else {
            w->late++;
        }
    }
    /* One runner while the GPUs' sampling takes under an eighth of the
     * interval, their own threads in parallel above a quarter. */
    uint64_t iv = (uint64_t)(r->o.interval_ms ? r->o.interval_ms : 1000) * 1000000ull;
    if (nw > 1 && cost > iv / 4)
        r->parallel = true;
    else if (nw <= 1 || cost < iv / 8)
        r->parallel = false;
    const char *sys_sym = atomic_load(&r->sys_sym);
    uint64_t sys_t0 = atomic_load(&r->sys_op_ns);
    pthread_mutex_unlock(&r->mu);

    uint64_t now = mono();
    snapshot_notes_reset(s);
    for (size_t i = 0; i < nw; i++) {
        struct worker *w = r->workers[i];
        if (!w)
            continue;
        if (w->late == 0 && w->have_last)
            append_part(s, w->last);
        else
            append_stalled(r, w, s, now);
    }
    if (sys_late) {
        s->partial = true;
        debuglog_printf("system tick late: stalled %.1f s in %s",
                        (double)(now - sys_t0) / 1e9, sys_sym ? sys_sym : "?");
    }
    if (!r->gpm_tried) {
        r->gpm_tried = true;
        struct gpm_client_opts go = {
            .exe = r->gpm_exe[0] ? r->gpm_exe : NULL,
            .lib_path = r->lib.real_path,
            .interval_ms = r->o.interval_ms,
            .mode = (enum gpm_mode)r->o.gpm_mode,
        };
        r->gpm = gpm_client_open(&go);
    }
    nvml_gpm_apply(r->gpm, s);
    return 0;
}

static void root_interrupt(void *p)
{
    struct nvml_root *r = p;
    atomic_store(&r->interrupted, true);
    pthread_mutex_lock(&r->mu);
    pthread_cond_broadcast(&r->done_cv);
    pthread_mutex_unlock(&r->mu);
}

/* Join a thread, but abandon it (false) if it does not end by deadline. */
static bool join_by(pthread_t t, uint64_t deadline)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t now = mono();
    uint64_t left = deadline > now ? deadline - now : 0;
    ts.tv_sec += (time_t)(left / 1000000000ull);
    ts.tv_nsec += (long)(left % 1000000000ull);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    if (pthread_timedjoin_np(t, NULL, &ts) == 0)
        return true;
    pthread_detach(t);
    return false;
}

/* The GPM helper dies with the thread that started it (PR_SET_PDEATHSIG is
 * the forking thread's): before that thread ends, the helper is asked to
 * leave, so it frees its samples and ends its NVML session itself. */
static void root_detach(void *p)
{
    struct nvml_root *r = p;
    gpm_client_close(r->gpm);
    r->gpm = NULL;
    r->gpm_tried = false;
}

static void root_close(void *p)
{
    struct nvml_root *r = p;
    if (!r)
        return;
    gpm_client_close(r->gpm);
    r->gpm = NULL;
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
    pthread_cond_broadcast(&r->sys_cv);
    pthread_cond_signal(&r->run_cv);
    pthread_mutex_unlock(&r->mu);
    uint64_t deadline = mono() + CLOSE_WAIT_NS;
    /* The runner may be inside any worker's state: the workers are freed
     * only once it has ended. */
    bool all = !r->run_started || join_by(r->run_thr, deadline);
    bool runner_gone = all;
    for (size_t i = 0; i < r->nworkers; i++) {
        struct worker *w = r->workers[i];
        if (!w)
            continue;
        bool ended = !w->started || join_by(w->thr, deadline);
        if (ended && runner_gone)
            worker_free(w);
        else
            all = false; /* stuck in the driver: its memory stays with it */
    }
    /* The system worker shuts NVML down on its way out (bounded). */
    bool sys_joined = !r->sys_started || join_by(r->sys_thr, mono() + CLOSE_WAIT_NS);
    free(r->workers);
    if (!all || !sys_joined) {
        debuglog_printf("close: a thread is stuck in the driver; not unloading the library");
        return; /* the root stays allocated for the threads that may still wake */
    }
    nvml_lib_close(&r->lib);
    free(r->gpus);
    free(r->sys_gpus);
    free(r->sys_wake);
    pthread_cond_destroy(&r->done_cv);
    pthread_cond_destroy(&r->sys_cv);
    pthread_cond_destroy(&r->run_cv);
    pthread_mutex_destroy(&r->mu);
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
};
