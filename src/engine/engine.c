/*
 * engine.c — the sampling thread and its hand-off (engine.h).
 *
 * Locking: mu guards ready, fresh, pending, stop and signalled. back is the
 * engine thread's own; the collector is the engine thread's own while it
 * runs. The wake pipe carries a byte or two at most (engine_acquire).
 */
#include "engine/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"

/* How long engine_stop waits for the sampling thread to finish its tick. */
#define STOP_WAIT_NS (300ull * 1000000ull)

/*
 * Priming: CPU % (host and processes) and GPM's values are deltas between
 * two samples, so the first snapshot has them N/A. The second tick comes
 * ENGINE_PRIME_MS after the first whatever the interval (an hour's
 * interval would show N/A for an hour), then the grid restarts from it.
 * That tick first waits, at most ENGINE_PRIME_GPM_WAIT_MS more, for the
 * GPM helper's first values (it needs two samples 100 ms apart of its
 * own). --once primes the same way (main.c run_once). Manual mode (the
 * screen tests) steps its own ticks and is not primed.
 */
#define ENGINE_PRIME_MS 200u
#define ENGINE_PRIME_GPM_WAIT_MS 1000u
#define ENGINE_PRIME_SLICE_MS 50u
#define PRIME_NS ((uint64_t)ENGINE_PRIME_MS * 1000000ull)

struct engine {
    struct collector *col;
    struct engine_opts o;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* stop, a tick request, the front end took a snapshot, a takeover */
    pthread_cond_t gone_cv; /* a sampling thread left its role or ended */
    int fds[2];        /* wake pipe: [0] for the front end's poll */
    struct snapshot back; /* the sampling thread's */
    /* mu */
    struct snapshot ready;
    bool fresh;        /* ready holds a snapshot the front end has not taken */
    bool signalled;    /* a byte is in the pipe */
    unsigned pending;  /* manual mode: ticks requested */
    bool regrid;       /* o.interval_ms changed: restart the grid */
    bool now;          /* a tick at once, off the grid (engine_tick_now) */
    bool extra;        /* the tick in progress is that one: the grid does not move */
    bool stop;
    /* The grid and the tick in progress: the sampling thread's, handed
     * over under mu when another takes the sampling over. */
    uint64_t start, interval, k, deadline;
    bool resume;       /* the thread taking over runs the tick at deadline first */
    bool prime;        /* the next tick (k == 1) is the priming one */
    /* Threads: the one sampling, those given up on while stuck in the
     * driver, and those that came back from it and wait to take over (so
     * that a thread that started the GPM helper stays alive: the helper
     * dies with it). */
    unsigned threads;  /* alive */
    unsigned spares;   /* waiting to take over */
    unsigned wanted;   /* takeovers asked of the spares */
    bool detaching;    /* the sampling thread, stopping, ends what dies with it */
    bool holder_out;   /* the sampling thread left its loop on stop */
    bool release;      /* stopping: the spares end */
};

static void snap_swap(struct snapshot *a, struct snapshot *b)
{
    struct snapshot t = *a;
    *a = *b;
    *b = t;
}

static void publish(struct engine *e)
{
    pthread_mutex_lock(&e->mu);
    snap_swap(&e->back, &e->ready);
    e->fresh = true;
    bool wake = !e->signalled;
    e->signalled = true;
    pthread_mutex_unlock(&e->mu);
    /* outside the lock, so the woken front end does not wait for it */
    if (wake) {
        char b = 1;
        ssize_t n = write(e->fds[1], &b, 1);
        (void)n; /* the pipe cannot be full: a byte or two at most are in it */
    }
}

static bool stopping(struct engine *e)
{
    pthread_mutex_lock(&e->mu);
    bool stop = e->stop;
    pthread_mutex_unlock(&e->mu);
    return stop;
}

/* The priming tick's wait for the sources that need two samples of their
 * own (GPM), until `until` at most. In slices, so engine_stop is never
 * kept waiting long (collect_settle does not watch for it); a settle that
 * returns before its slice is up has nothing more to wait for (values are
 * there, or there will be none). */
static void prime_settle(struct engine *e, uint64_t until)
{
    for (;;) {
        uint64_t now = clock_mono_ns();
        if (now >= until || stopping(e))
            return;
        uint64_t ms = (until - now) / 1000000ull;
        if (ms > ENGINE_PRIME_SLICE_MS)
            ms = ENGINE_PRIME_SLICE_MS;
        if (ms == 0)
            return;
        collect_settle(e->col, (unsigned)ms);
        if (clock_mono_ns() - now < ms * 1000000ull)
            return;
    }
}

/* Wait for the next tick's time (mu held); false on stop. */
static bool next_tick(struct engine *e)
{
    if (e->regrid) { /* a new interval: the next tick one interval from now */
        e->regrid = false;
        e->prime = false;
        e->interval = (uint64_t)e->o.interval_ms * 1000000ull;
        e->start = clock_mono_ns();
        e->k = 1;
    }
    if (e->o.manual) {
        /* one tick per request, and only after the last one was taken */
        while (!e->stop && (e->pending == 0 || e->fresh))
            pthread_cond_wait(&e->cv, &e->mu);
        if (!e->stop)
            e->pending--;
    } else if (e->k > 0) {
        for (;;) {
            uint64_t now = clock_mono_ns();
            bool priming = e->prime && e->k == 1;
            uint64_t next = priming ? e->start + PRIME_NS : e->start + e->k * e->interval;
            if (!priming && next <= now) { /* a slow tick: skip the missed grid points */
                e->k = (now - e->start) / e->interval + 1;
                next = e->start + e->k * e->interval;
            }
            struct timespec ts = {.tv_sec = (time_t)(next / 1000000000ull),
                                  .tv_nsec = (long)(next % 1000000000ull)};
            while (!e->stop && !e->regrid && !e->now && clock_mono_ns() < next)
                if (pthread_cond_timedwait(&e->cv, &e->mu, &ts) == ETIMEDOUT)
                    break;
            if (e->now && !e->stop && !e->regrid && clock_mono_ns() < next) {
                e->now = false;
                e->extra = true;
                break;
            }
            e->now = false; /* the grid's tick is due anyway */
            if (!e->regrid || e->stop)
                break;
            e->regrid = false; /* wait on the new grid instead */
            e->prime = false;
            e->interval = (uint64_t)e->o.interval_ms * 1000000ull;
            e->start = clock_mono_ns();
            e->k = 1;
        }
    }
    return !e->stop;
}

/* The sampling role (mu held on entry and return): tick until stop (true),
 * or until this thread's tick was given to another while it was stuck in
 * the driver (false). */
static bool sample_role(struct engine *e)
{
    for (;;) {
        if (!e->resume) {
            if (!next_tick(e))
                return true;
            /* How long a tick waits for the driver: most of an interval, so
             * a late device is reported in the same tick and the next tick
             * starts on time. */
            e->deadline = clock_mono_ns() + e->interval / 4 * 3;
        }
        /* a tick taken over is run as it was, not primed again */
        bool priming = !e->resume && !e->extra && e->prime && e->k == 1;
        e->resume = false;
        uint64_t prime_until = e->start + PRIME_NS + (uint64_t)ENGINE_PRIME_GPM_WAIT_MS * 1000000ull;
        pthread_mutex_unlock(&e->mu);
        if (priming)
            prime_settle(e, prime_until);
        pthread_mutex_lock(&e->mu);
        if (priming) /* the tick's deadline from when it really starts */
            e->deadline = clock_mono_ns() + e->interval / 4 * 3;
        uint64_t deadline = e->deadline;
        pthread_mutex_unlock(&e->mu);
        uint64_t t = clock_mono_ns();
        if (collect_tick_until(e->col, &e->back, deadline) == COLLECT_TAKEN_OVER) {
            pthread_mutex_lock(&e->mu); /* e outlives every thread counted in threads */
            return false;
        }
        publish(e);
        pthread_mutex_lock(&e->mu);
        if (priming) { /* the grid from the priming tick on */
            e->start = t;
            e->k = 0;
        }
        if (e->extra) { /* off the grid: the grid's next tick stays */
            e->extra = false;
            continue;
        }
        if (e->k >= 1 || priming) /* the second tick is done: primed, or taken over */
            e->prime = false;
        e->k++;
    }
}

static void *run(void *arg)
{
    struct engine *e = arg;
    pthread_setname_np(pthread_self(), "migmon-engine");
    pthread_mutex_lock(&e->mu);
    for (;;) {
        if (sample_role(e)) {
            e->detaching = true;
            pthread_mutex_unlock(&e->mu);
            collect_detach(e->col); /* what dies with this thread ends cleanly first */
            pthread_mutex_lock(&e->mu);
            e->holder_out = true;
            break;
        }
        /* Given up on and back from the driver: wait to take over. */
        if (e->stop)
            break;
        e->spares++;
        pthread_cond_broadcast(&e->gone_cv);
        while (!e->release && !e->wanted)
            pthread_cond_wait(&e->cv, &e->mu);
        e->spares--;
        if (!e->wanted)
            break;
        e->wanted--;
    }
    e->threads--;
    pthread_cond_broadcast(&e->gone_cv); /* under mu: e may be freed once it is released */
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

/* Start a sampling thread (mu held); 0 or an errno. */
static int thread_add(struct engine *e)
{
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    /* The signals the front end handles are never delivered to us. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_t t;
    int rc = pthread_create(&t, &a, run, e);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
    if (rc == 0)
        e->threads++;
    return rc;
}

/* From the backend's watchdog: the sampling thread is stuck in the driver;
 * another carries the tick on (a spare, or a new thread). */
static void takeover(void *arg)
{
    struct engine *e = arg;
    pthread_mutex_lock(&e->mu);
    if (!e->stop) {
        e->resume = true;
        if (e->spares > e->wanted) {
            e->wanted++;
            pthread_cond_broadcast(&e->cv);
        } else if (thread_add(e) != 0) {
            e->resume = false; /* nothing to carry it on: the tick is lost */
        }
    }
    pthread_mutex_unlock(&e->mu);
}

int engine_start(struct engine **out, struct collector *col, const struct engine_opts *o)
{
    *out = NULL;
    struct engine *e = calloc(1, sizeof(*e));
    if (!e)
        return -ENOMEM;
    e->col = col;
    e->o = *o;
    if (e->o.interval_ms == 0)
        e->o.interval_ms = 1000;
    e->interval = (uint64_t)e->o.interval_ms * 1000000ull;
    e->start = clock_mono_ns();
    /* the second tick is the priming one (the top of this file) */
    e->prime = !e->o.manual && e->interval > PRIME_NS;
    if (pipe2(e->fds, O_CLOEXEC | O_NONBLOCK) != 0) {
        int err = -errno;
        free(e);
        return err;
    }
    pthread_mutex_init(&e->mu, NULL);
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&e->cv, &a);
    pthread_cond_init(&e->gone_cv, &a);
    pthread_condattr_destroy(&a);
    collect_set_takeover(col, takeover, e);
    pthread_mutex_lock(&e->mu);
    int rc = thread_add(e);
    pthread_mutex_unlock(&e->mu);
    if (rc != 0) {
        collect_set_takeover(col, NULL, NULL);
        close(e->fds[0]);
        close(e->fds[1]);
        pthread_cond_destroy(&e->cv);
        pthread_cond_destroy(&e->gone_cv);
        pthread_mutex_destroy(&e->mu);
        free(e);
        return -rc;
    }
    *out = e;
    return 0;
}

int engine_fd(const struct engine *e)
{
    return e->fds[0];
}

bool engine_acquire(struct engine *e, struct snapshot *s)
{
    /* Drain the wake-up byte first, then take the snapshot. A publish
     * between the two is taken now (it left "signalled" set and wrote no
     * byte, and the snapshot it published is the one taken); a publish
     * after the unlock finds "signalled" clear and writes a byte, so the
     * next poll wakes. The other order lost a wake-up for good when a
     * publish came between the unlock and the read: its byte was drained
     * while "signalled" stayed set, and no byte came again until a key. */
    char b[8];
    ssize_t n = read(e->fds[0], b, sizeof(b));
    (void)n;
    bool got = false;
    pthread_mutex_lock(&e->mu);
    if (e->fresh) {
        snap_swap(s, &e->ready);
        e->fresh = false;
        got = true;
        if (e->o.manual) /* only a manual engine waits for this */
            pthread_cond_signal(&e->cv);
    }
    e->signalled = false;
    pthread_mutex_unlock(&e->mu);
    return got;
}

void engine_set_interval(struct engine *e, unsigned interval_ms)
{
    if (interval_ms < 100)
        interval_ms = 100;
    pthread_mutex_lock(&e->mu);
    e->o.interval_ms = interval_ms;
    e->regrid = true;
    pthread_cond_signal(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

void engine_request_tick(struct engine *e, unsigned n)
{
    pthread_mutex_lock(&e->mu);
    e->pending += n;
    pthread_cond_signal(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

void engine_tick_now(struct engine *e)
{
    pthread_mutex_lock(&e->mu);
    if (e->o.manual)
        e->pending++;
    else
        e->now = true;
    pthread_cond_signal(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

void engine_stop(struct engine *e)
{
    if (!e)
        return;
    pthread_mutex_lock(&e->mu);
    e->stop = true;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
    collect_set_takeover(e->col, NULL, NULL); /* nobody is given up on from now */
    collect_interrupt(e->col); /* a tick waiting for a stuck driver returns now */
    /* The sampling thread ends its tick, then the spares (after it: the
     * GPM helper dies with the thread that started it, and the sampling
     * thread asks it to leave first). A thread still in the driver is not
     * waited for: it never touches the collector again. */
    uint64_t deadline = clock_mono_ns() + STOP_WAIT_NS;
    pthread_mutex_lock(&e->mu);
    for (int round = 0; round < 2 && !e->holder_out; round++) {
        struct timespec ts = {.tv_sec = (time_t)(deadline / 1000000000ull),
                              .tv_nsec = (long)(deadline % 1000000000ull)};
        while (!e->holder_out && pthread_cond_timedwait(&e->gone_cv, &e->mu, &ts) != ETIMEDOUT)
            ;
        /* Out of its tick and asking the helpers to leave: waited for to
         * the end, for the collector is closed next (that is bounded: a
         * helper gets 100 ms to leave, then is killed; helper_proc_reap). */
        while (!e->holder_out && e->detaching)
            pthread_cond_wait(&e->gone_cv, &e->mu);
        if (e->holder_out)
            break;
        /* In the driver, it is left there; anywhere else it is about to
         * end its tick (every wait of a tick returns once interrupted). */
        pthread_mutex_unlock(&e->mu);
        bool in_driver = collect_abandon(e->col);
        pthread_mutex_lock(&e->mu);
        if (in_driver)
            break;
        deadline = clock_mono_ns() + STOP_WAIT_NS;
    }
    struct timespec ts = {.tv_sec = (time_t)(deadline / 1000000000ull),
                          .tv_nsec = (long)(deadline % 1000000000ull)};
    e->release = true;
    pthread_cond_broadcast(&e->cv);
    while (e->spares && pthread_cond_timedwait(&e->gone_cv, &e->mu, &ts) != ETIMEDOUT)
        ;
    unsigned left = e->threads;
    pthread_mutex_unlock(&e->mu);
    if (left)
        return; /* e stays for the threads still in the driver; they end with the process */
    close(e->fds[0]);
    close(e->fds[1]);
    snapshot_free(&e->back);
    snapshot_free(&e->ready);
    pthread_cond_destroy(&e->cv);
    pthread_cond_destroy(&e->gone_cv);
    pthread_mutex_destroy(&e->mu);
    free(e);
}
