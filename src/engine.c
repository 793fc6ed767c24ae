/*
 * engine.c — the sampling thread and its hand-off (engine.h).
 *
 * Locking: mu guards ready, fresh, pending, stop and signalled. back is the
 * engine thread's own; the collector is the engine thread's own while it
 * runs. The wake pipe carries a byte or two at most (engine_acquire).
 */
#include "engine.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

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

struct engine {
    struct collector *col;
    struct engine_opts o;
    pthread_t thr;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* stop, a tick request, or the front end took a snapshot */
    int fds[2];        /* wake pipe: [0] for the front end's poll */
    struct snapshot back; /* the engine thread's */
    /* mu */
    struct snapshot ready;
    bool fresh;        /* ready holds a snapshot the front end has not taken */
    bool signalled;    /* a byte is in the pipe */
    unsigned pending;  /* manual mode: ticks requested */
    bool regrid;       /* o.interval_ms changed: restart the grid */
    bool stop;
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

static void *run(void *arg)
{
    struct engine *e = arg;
    pthread_setname_np(pthread_self(), "migmon-engine");
    pthread_mutex_lock(&e->mu);
    uint64_t interval = (uint64_t)e->o.interval_ms * 1000000ull;
    pthread_mutex_unlock(&e->mu);
    const uint64_t prime_ns = (uint64_t)ENGINE_PRIME_MS * 1000000ull;
    uint64_t start = clock_mono_ns();
    /* the second tick is the priming one (the top of this file) */
    bool prime = !e->o.manual && interval > prime_ns;
    for (uint64_t k = 0;; k++) {
        pthread_mutex_lock(&e->mu);
        if (e->regrid) { /* a new interval: the next tick one interval from now */
            e->regrid = false;
            interval = (uint64_t)e->o.interval_ms * 1000000ull;
            start = clock_mono_ns();
            k = 1;
            prime = false;
        }
        if (e->o.manual) {
            /* one tick per request, and only after the last one was taken */
            while (!e->stop && (e->pending == 0 || e->fresh))
                pthread_cond_wait(&e->cv, &e->mu);
            if (!e->stop)
                e->pending--;
        } else if (k > 0) {
            uint64_t now = clock_mono_ns();
            uint64_t next = prime ? start + prime_ns : start + k * interval;
            if (!prime && next <= now) { /* a slow tick: skip the missed grid points */
                k = (now - start) / interval + 1;
                next = start + k * interval;
            }
            struct timespec ts = {.tv_sec = (time_t)(next / 1000000000ull),
                                  .tv_nsec = (long)(next % 1000000000ull)};
            while (!e->stop && !e->regrid && clock_mono_ns() < next)
                if (pthread_cond_timedwait(&e->cv, &e->mu, &ts) == ETIMEDOUT)
                    break;
            if (e->regrid && !e->stop) { /* wait on the new grid instead */
                pthread_mutex_unlock(&e->mu);
                k--;
                continue;
            }
        }
        bool stop = e->stop;
        pthread_mutex_unlock(&e->mu);
        if (stop)
            break;
        bool priming = prime && k == 1;
        if (priming)
            prime_settle(e, start + prime_ns + (uint64_t)ENGINE_PRIME_GPM_WAIT_MS * 1000000ull);
        /* How long a tick waits for the driver: most of an interval, so a
         * late device is reported in the same tick and the next tick
         * starts on time. */
        uint64_t t = clock_mono_ns();
        collect_tick_until(e->col, &e->back, t + interval / 4 * 3);
        publish(e);
        if (priming) { /* the grid from the priming tick on */
            prime = false;
            start = t;
            k = 0;
        }
    }
    collect_detach(e->col); /* what dies with this thread ends cleanly first */
    return NULL;
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
    pthread_condattr_destroy(&a);
    /* The signals the front end handles are never delivered to us. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&e->thr, NULL, run, e);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        close(e->fds[0]);
        close(e->fds[1]);
        pthread_cond_destroy(&e->cv);
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

void engine_stop(struct engine *e)
{
    if (!e)
        return;
    pthread_mutex_lock(&e->mu);
    e->stop = true;
    pthread_cond_signal(&e->cv);
    pthread_mutex_unlock(&e->mu);
    collect_interrupt(e->col); /* a tick waiting for a stuck driver returns now */
    pthread_join(e->thr, NULL);
    close(e->fds[0]);
    close(e->fds[1]);
    snapshot_free(&e->back);
    snapshot_free(&e->ready);
    pthread_cond_destroy(&e->cv);
    pthread_mutex_destroy(&e->mu);
    free(e);
}
