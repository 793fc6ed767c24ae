/*
 * nvml_root.h — the NVML backend's threads and their shared state, private
 * to nvml_workers.c (the backend's tick: who samples which GPU), which calls
 * nvml_gpu_worker.c (a GPU's worker and its own thread), nvml_inline.c (the
 * GPUs sampled on the sampling thread, which samples each through
 * nvml_gpu_worker.c), nvml_system.c (library, init, enumeration),
 * nvml_watchdog.c (a stalled inline sample) and nvml_merge.c (the GPUs'
 * parts into the snapshot). None of them calls back into nvml_workers.c.
 *
 * Locking: root->mu guards every field marked "mu" and the workers'
 * hand-over fields. A worker's nvml_state and part belong to the thread
 * that claimed the GPU's tick (req++ under mu, only while req == done, so
 * one thread at a time): the GPU's own thread or the sampling thread.
 * Fields marked "sampler" belong to the thread calling sample/close (the
 * engine's sampling thread or --once; one at a time, handed over under mu
 * when the watchdog gives the sampling to another thread).
 */
#ifndef MIGMON_NVML_ROOT_H
#define MIGMON_NVML_ROOT_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "backend/nvml/nvml_load.h"
#include "backend/nvml/nvml_state.h"
#include "core/clock.h"
#include "core/snapshot.h"

enum sys_state {
    SYS_LOADING, /* first attempt in progress */
    SYS_WAITING, /* no library or no driver: next try at next_try_ns */
    SYS_READY,
};

/* One physical GPU: its sampling state, and the thread of its own that
 * samples it while the driver is slow or the caller cannot be replaced. */
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
    struct snapshot *part;    /* the claiming thread's: the part being filled */
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
    bool for_thread;          /* the tick requested is its own thread's to sample */
    bool wait_next;           /* a sampler given up on is in it: the next tick waits for it */
    uint64_t cost_ns;         /* how long its last finished tick took */
    bool gpm_inproc;          /* the sampling thread's word: sample its GPM in this session */
    bool res_gpm;             /* result has GPM values of this session (with have_result) */
    bool gpm_gave_up;         /* a GPM call here was too slow: the sampling thread tells the client */
    _Atomic uint64_t tick_start_ns;
    /* sampler */
    struct snapshot *last;    /* the last finished part */
    bool have_last;
    bool last_gpm;            /* last has GPM values of this session */
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
    bool parallel;          /* the driver is slow: the GPUs' own threads sample them */
    bool stop;
    /* Close has freed (or given up on) the GPU workers, whose GPM samples
     * are freed through the library: only then does the system worker end
     * NVML's session. */
    bool sys_quit;
    bool inited;
    unsigned count;         /* GPUs in the last enumeration */
    struct enum_gpu *gpus;
    size_t gpus_cap;
    bool have_enum;
    char count_err[256];    /* the last GetCount failed: why ("" when fine) */
    char driver_version[80], nvml_version[80];
    int cuda_version; /* 12040 = 12.4; 0 unknown */
    /* The sampling thread's GPUs inline (mu). Its generation is bumped when
     * the watchdog gives the sampling to another thread: the thread left in
     * the driver then finds it changed when its call comes back. */
    uint64_t inl_gen;
    bool inl_active;        /* the sampler of inl_gen is in the driver */
    uint64_t inl_fire_ns;   /* when the watchdog gives its sampling away */
    unsigned inl_left;      /* samplers given up on, still in the driver */
    bool inl_counting;      /* an inline GetCount has not come back */
    size_t inl_cur;         /* the GPU the sampler is in, index + 1; 0 none */
    bool counted_ahead;     /* the tick given away was counted: the next one is not */
    unsigned takeovers;     /* how many times the sampling was given away */
    /* The watchdog: a timer armed only while the sampler is in the driver. */
    int wd_fd;              /* timerfd; -1 none */
    pthread_t wd_thr;
    bool wd_started;
    pthread_mutex_t take_mu; /* guards takeover/takeover_arg and their call */
    void (*takeover)(void *arg);
    void *takeover_arg;
    bool can_inline;        /* mu: a takeover is set */
    /* the system worker's own */
    struct enum_gpu *sys_gpus;
    size_t sys_cap;
    pthread_cond_t **sys_wake; /* the GPU workers relayed to, signalled after unlocking */
    size_t sys_wake_cap;
    _Atomic(const char *) sys_sym; /* the system worker's call in progress */
    _Atomic uint64_t sys_op_ns;
    /* written by the sampling thread under mu; the system worker reads them
     * under mu while relay is set */
    struct worker **workers;
    size_t nworkers;
    /* sampler */
    bool began;       /* root_start began the tick that root_sample finishes */
    bool planned;     /* this tick's way is decided (inline_tick, the system worker woken) */
    bool inline_tick; /* this tick's GPUs are sampled on the sampling thread */
    bool inl_count_now; /* ... which counts them first (no one else did) */
    bool tick_open;   /* mu: a sample still waits for this tick (ticks is written under mu too) */
    uint64_t sys_tick_seq; /* mu: the system worker's request made for this tick; 0 none */
    struct gpm_client *gpm;
    struct dcgm_client *dcgm; /* started and used with gpm, by the same thread */
    struct events_client *events; /* likewise */
    char dcgm_addr[160], dcgm_lib[4096];
    bool gpm_tried;
    uint64_t ticks, last_enum_tick;
    unsigned enum_every; /* ticks between re-enumerations */
    char err[2048];
    _Atomic bool interrupted; /* any thread: stop waiting for the driver */
};

#define NVML_BACKOFF_MIN_NS (1000ull * 1000000ull)
#define NVML_BACKOFF_MAX_NS (30000ull * 1000000ull)

static inline uint64_t mono(void) { return clock_mono_ns(); }

static inline struct timespec abs_ts(uint64_t mono_ns)
{
    return (struct timespec){.tv_sec = (time_t)(mono_ns / 1000000000ull),
                             .tv_nsec = (long)(mono_ns % 1000000000ull)};
}

static inline void cond_init(pthread_cond_t *c)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(c, &a);
    pthread_condattr_destroy(&a);
}

/* Wait on cv until deadline; false when the deadline passed. */
static inline bool wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, uint64_t deadline)
{
    struct timespec ts = abs_ts(deadline);
    return pthread_cond_timedwait(cv, mu, &ts) != ETIMEDOUT;
}

/* The threads never take the signals the front end handles. */
static inline int start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* Join a thread, but abandon it (false) if it does not end by deadline. */
static inline bool join_by(pthread_t t, uint64_t deadline)
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
    backend_left_behind_set();
    return false;
}

/* Give GPU worker i this tick, with the enumeration's handle (mu held); it
 * counts in pending until it finishes. */
static inline void worker_give(struct nvml_root *r, struct worker *w, size_t i)
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
static inline void worker_kick(struct nvml_root *r, struct worker *w, size_t i)
{
    worker_give(r, w, i);
    w->for_thread = true;
    w->req++;
}

/* Swap two of a worker's parts (bufs). */
static inline void part_swap(struct snapshot **a, struct snapshot **b)
{
    struct snapshot *t = *a;
    *a = *b;
    *b = t;
}

/* ---- nvml_gpu_worker.c ---- */

/* A worker for GPU index (the sampling thread); NULL when out of memory. */
struct worker *nvml_worker_new(struct nvml_root *r, unsigned index);
/* Start GPU worker w's own thread (mu not held; the sampling thread). */
void nvml_worker_start(struct nvml_root *r, struct worker *w);
/* Sample GPU worker w's claimed tick seq (mu not held) and hand the part
 * over. True when the caller must wake the sampling thread (the last GPU
 * it waits for finished). */
bool nvml_worker_sample(struct nvml_root *r, struct worker *w, uint64_t seq);
/* Free a worker whose thread has ended or never started. */
void nvml_worker_free(struct worker *w);

/* ---- nvml_inline.c ---- */

enum inl_end {
    INL_DONE,     /* every idle GPU sampled (or the program is stopping) */
    INL_TAKEN,    /* the sampling was given to another thread: touch nothing */
    INL_RECOUNT,  /* the count failed or changed: the system worker takes the tick */
};

/* The tick's GPUs on the calling thread (mu held on entry and on return,
 * except INL_TAKEN: not held, and nothing of the tick may be touched any
 * more; the GPU the call was in has been handed over). With count, the GPU
 * count first, as the system worker would. The watchdog is armed for the
 * time it takes. */
enum inl_end nvml_inline_sample(struct nvml_root *r, size_t nw, uint64_t fire, bool count);

/* ---- nvml_system.c ---- */

/* The system worker's thread (arg: the root). */
void *nvml_system_main(void *arg);
/* A GetCount answer that means the driver went away. */
bool nvml_driver_gone(nvmlReturn_t rc);

/* ---- nvml_watchdog.c ---- */

/* Start the watchdog thread and its timer (the sampling thread); 0 or -1. */
int nvml_watchdog_start(struct nvml_root *r);
/* Fire at mono_ns unless disarmed first (the sampling thread). */
void nvml_watchdog_arm(struct nvml_root *r, uint64_t mono_ns);
void nvml_watchdog_disarm(struct nvml_root *r);
/* Make the thread end (r->stop is set) and join it until deadline; false
 * when it did not end. */
bool nvml_watchdog_stop(struct nvml_root *r, uint64_t deadline);

/* ---- nvml_merge.c ---- */

/* A finished part's devices and processes appended to s; 0 or -1. */
int nvml_merge_part(struct snapshot *s, const struct snapshot *p);
/* A worker that has not finished this tick: its last part, aged (carried
 * for carry_ticks() ticks, then none), or a placeholder from the
 * enumeration; s->partial is set. */
void nvml_merge_stalled(const struct nvml_root *r, struct worker *w, struct snapshot *s,
                        uint64_t now);

#endif
