/*
 * bench_engine — the cost of handing a snapshot from the sampling thread to
 * a front end.
 *
 *   MIGMON_SIM_LIB=... build/bench_engine SCENARIO [TICKS]
 *
 * The engine runs in manual mode (one tick per request); for each tick the
 * front end waits for the wake-up byte, then takes the snapshot. Reported:
 * the median time of engine_acquire (lock, swap, drain the pipe) and of
 * the whole wait-to-taken step measured from the engine's publish (which
 * includes a thread wake-up), next to the tick itself.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "engine/collect.h"
#include "engine/engine.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const char *lib = getenv("MIGMON_SIM_LIB");
    if (argc < 2 || !lib) {
        fprintf(stderr, "usage: MIGMON_SIM_LIB=... bench_engine SCENARIO.ini [TICKS]\n");
        return 2;
    }
    int ticks = argc > 2 ? atoi(argv[2]) : 2000;
    if (ticks < 10)
        ticks = 10;
    setenv("MIGMON_SIM_SCENARIO", argv[1], 1);
    setenv("MIGMON_SIM_TIME", "100+1", 1);
    struct collector c;
    struct collect_opts o = {.nvml_path = lib, .interval_ms = 1000};
    char err[2048];
    if (collect_open(&c, &o, err, sizeof(err)) != 0)
        return 1;
    struct engine *e;
    struct engine_opts eo = {.interval_ms = 1000, .manual = true};
    if (engine_start(&e, &c, &eo) != 0)
        return 1;
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    uint64_t *acq = calloc((size_t)ticks, sizeof(*acq));
    uint64_t *cycle = calloc((size_t)ticks, sizeof(*cycle));
    for (int i = 0; i < ticks + 5; i++) {
        uint64_t t0 = clock_mono_ns();
        engine_request_tick(e, 1);
        struct pollfd p = {.fd = engine_fd(e), .events = POLLIN};
        while (poll(&p, 1, 1000) == 0)
            ;
        /* let the engine thread park first: a front end takes snapshots
         * while the engine waits for its next tick, not while it is still
         * on its way into the wait */
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
        uint64_t t1 = clock_mono_ns();
        if (!engine_acquire(e, &s))
            i--;
        uint64_t t2 = clock_mono_ns();
        if (i >= 5) {
            acq[i - 5] = t2 - t1;
            cycle[i - 5] = t2 - t0;
        }
    }
    qsort(acq, (size_t)ticks, sizeof(*acq), cmp_u64);
    qsort(cycle, (size_t)ticks, sizeof(*cycle), cmp_u64);
    engine_stop(e);
    /* A free-running engine (100 ms interval, as a front end sees it): the
     * engine thread is parked in its timed wait when the snapshot is taken,
     * so nothing but the lock, the swap and one read is paid. */
    eo.manual = false;
    eo.interval_ms = 100;
    if (engine_start(&e, &c, &eo) != 0)
        return 1;
    enum { FREE_TICKS = 50 };
    uint64_t freerun[FREE_TICKS];
    for (int i = 0; i < FREE_TICKS; i++) {
        struct pollfd p = {.fd = engine_fd(e), .events = POLLIN};
        while (poll(&p, 1, 1000) == 0)
            ;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        uint64_t t1 = clock_mono_ns();
        engine_acquire(e, &s);
        freerun[i] = clock_mono_ns() - t1;
    }
    qsort(freerun, FREE_TICKS, sizeof(freerun[0]), cmp_u64);
    printf("scenario %s: %zu devices, %d ticks\n", argv[1], s.ndevices, ticks);
    printf("  engine_acquire, free-running engine at 100 ms: median %.2f us (%d ticks)\n",
           (double)freerun[FREE_TICKS / 2] / 1e3, FREE_TICKS);
    printf("  engine_acquire, manual engine (also wakes it): median %.2f us, p90 %.2f us\n",
           (double)acq[ticks / 2] / 1e3, (double)acq[ticks * 9 / 10] / 1e3);
    printf("  request -> tick -> publish -> wake -> (0.2 ms pause) -> taken: median %.1f us\n",
           (double)cycle[ticks / 2] / 1e3);
    engine_stop(e);
    snapshot_free(&s);
    collect_close(&c);
    free(acq);
    free(cycle);
    return 0;
}
