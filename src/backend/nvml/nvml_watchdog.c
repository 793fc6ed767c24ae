/*
 * nvml_watchdog.c — the watchdog: a thread that never calls the driver and
 * sleeps on a timer armed only while the sampling thread samples GPUs on
 * its own thread. The timer fires only when that sampling runs past the
 * tick's rescue point (half way to its deadline): then the watchdog gives
 * the sampling away (the takeover the engine set starts another sampling
 * thread, which finishes the tick with the GPUs not reached on their own
 * threads) and the thread left in the driver is given up on: when its call
 * comes back, it hands over the GPU it was sampling and returns without
 * touching anything else (nvml_workers.c, root_sample).
 *
 * A quick tick costs two timerfd_settime calls and no wake-up: arming and
 * disarming a timer wake nobody.
 */
#include <stdio.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "backend/nvml/nvml_root.h"
#include "core/debuglog.h"

static void *watchdog_main(void *arg)
{
    struct nvml_root *r = arg;
    pthread_setname_np(pthread_self(), "migmon-watchdog");
    for (;;) {
        uint64_t n;
        ssize_t got = read(r->wd_fd, &n, sizeof(n));
        if (got < 0 && errno != EINTR && errno != EAGAIN)
            break;
        /* take_mu first: with no takeover set (the engine is stopping)
         * nobody is given up on, so nobody is left without a sampler. */
        pthread_mutex_lock(&r->take_mu);
        pthread_mutex_lock(&r->mu);
        if (r->stop) {
            pthread_mutex_unlock(&r->mu);
            pthread_mutex_unlock(&r->take_mu);
            break;
        }
        uint64_t now = mono();
        bool fire = r->takeover && r->inl_active && now >= r->inl_fire_ns;
        if (fire) {
            r->inl_gen++;
            r->inl_active = false;
            r->inl_left++;
            r->parallel = true; /* the rest of the tick on the GPUs' own threads */
            r->counted_ahead = !r->inl_counting;
            r->takeovers++;
            /* the tick carried on waits for the GPU the call is in */
            if (r->inl_cur && r->inl_cur <= r->nworkers && r->workers[r->inl_cur - 1])
                r->workers[r->inl_cur - 1]->wait_next = true;
        } else if (r->inl_active) {
            nvml_watchdog_arm(r, r->inl_fire_ns); /* an expiry from before a re-arm */
        }
        pthread_mutex_unlock(&r->mu);
        if (fire) {
            debuglog_printf("watchdog: the sampling thread is stuck in the driver; "
                            "another takes the sampling over");
            r->takeover(r->takeover_arg);
        }
        pthread_mutex_unlock(&r->take_mu);
    }
    return NULL;
}

int nvml_watchdog_start(struct nvml_root *r)
{
    if (r->wd_started)
        return 0;
    r->wd_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    if (r->wd_fd < 0)
        return -1;
    if (start_thread(&r->wd_thr, watchdog_main, r) != 0) {
        close(r->wd_fd);
        r->wd_fd = -1;
        return -1;
    }
    r->wd_started = true;
    return 0;
}

void nvml_watchdog_arm(struct nvml_root *r, uint64_t mono_ns)
{
    struct itimerspec its;
    memset(&its, 0, sizeof(its));
    its.it_value = abs_ts(mono_ns ? mono_ns : 1); /* 0 would disarm */
    timerfd_settime(r->wd_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

void nvml_watchdog_disarm(struct nvml_root *r)
{
    struct itimerspec its;
    memset(&its, 0, sizeof(its));
    timerfd_settime(r->wd_fd, 0, &its, NULL);
}

bool nvml_watchdog_stop(struct nvml_root *r, uint64_t deadline)
{
    if (!r->wd_started)
        return true;
    nvml_watchdog_arm(r, 1); /* at once: it finds r->stop */
    bool ended = join_by(r->wd_thr, deadline);
    r->wd_started = false;
    if (ended) {
        close(r->wd_fd);
        r->wd_fd = -1;
    }
    return ended;
}
