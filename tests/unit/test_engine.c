/*
 * The sampling engine against the simulator (with the real GPM helper):
 * priming, the second tick ~200 ms after the first whatever the interval,
 * then the interval kept; and a prompt stop while it primes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "sim_env.h"

#include "backend/gpm/gpm.h"
#include "core/clock.h"
#include "engine/collect.h"
#include "engine/engine.h"

static void open_sim(struct collector *c, unsigned interval_ms)
{
    const char *bin = getenv("MIGMON_BIN");
    assert_non_null(bin);
    struct collect_opts o = {.nvml_path = getenv("MIGMON_SIM_LIB"),
                             .gpm_exe = bin,
                             .gpm_mode = GPM_AUTO,
                             .interval_ms = interval_ms};
    char err[2048];
    assert_int_equal(collect_open(c, &o, err, sizeof(err)), 0);
    assert_non_null(c->be_state);
}

/* The next snapshot within ms milliseconds: true when one came. */
static bool next_snapshot(struct engine *e, struct snapshot *s, unsigned ms)
{
    uint64_t end = clock_mono_ns() + (uint64_t)ms * 1000000ull;
    for (;;) {
        if (engine_acquire(e, s))
            return true;
        uint64_t now = clock_mono_ns();
        if (now >= end)
            return false;
        struct pollfd p = {.fd = engine_fd(e), .events = POLLIN};
        poll(&p, 1, (int)((end - now) / 1000000ull) + 1);
    }
}

static const struct device *first_mig(const struct snapshot *s)
{
    for (size_t i = 0; i < s->ndevices; i++)
        if (s->devices[i].kind == DEV_MIG)
            return &s->devices[i];
    return NULL;
}

/*
 * An hour's interval: the first snapshot at once (its CPU % N/A: a delta
 * needs two samples), the second within about 200 ms (plus the bounded
 * wait for GPM's first values), with the host's CPU % and a MIG
 * instance's GPM utilisation; then nothing more for a long while (the
 * interval is kept, the engine does not go on sampling every 200 ms).
 */
static void test_priming_with_a_long_interval(void **state)
{
    (void)state;
    use_scenario("h200-mig.ini", "100");
    struct collector c;
    open_sim(&c, 3600000);
    struct engine *e = NULL;
    struct engine_opts o = {.interval_ms = 3600000};
    uint64_t t0 = clock_mono_ns();
    assert_int_equal(engine_start(&e, &c, &o), 0);
    struct snapshot a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    assert_true(next_snapshot(e, &a, 3000));
    assert_false(metric_ok(&a.host.cpu_total));
    assert_true(next_snapshot(e, &b, 3000));
    uint64_t t1 = clock_mono_ns();
    /* ~200 ms; at most the GPM wait (1 s) and a tick more on a busy machine */
    assert_true(b.elapsed_ns - a.elapsed_ns >= 150000000ull);
    assert_true(t1 - t0 < 2000000000ull);
    assert_true(b.host_ok);
    assert_true(metric_ok(&b.host.cpu_total));
    const struct device *m = first_mig(&b);
    assert_non_null(m);
    assert_int_equal(m->m[M_GPU_UTIL].src, MSRC_GPM);
    assert_true(metric_ok(&m->m[M_SM_OCCUPANCY]));
    /* the interval from there on */
    assert_false(next_snapshot(e, &a, 600));
    engine_stop(e);
    snapshot_free(&a);
    snapshot_free(&b);
    collect_close(&c);
}

/* An interval of 200 ms or less needs no priming: the ticks keep their
 * grid from the first one. */
static void test_short_interval_unchanged(void **state)
{
    (void)state;
    use_scenario("a100-sxm4-80gb.ini", "100");
    struct collector c;
    open_sim(&c, 150);
    struct engine *e = NULL;
    struct engine_opts o = {.interval_ms = 150};
    assert_int_equal(engine_start(&e, &c, &o), 0);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    uint64_t at[4];
    for (int i = 0; i < 4; i++) {
        assert_true(next_snapshot(e, &s, 3000));
        at[i] = s.elapsed_ns;
    }
    /* On the grid: 150 ms apart, or a multiple where a slow tick (a loaded
     * machine, a sanitizer) made the engine skip the grid points it missed;
     * each within 60 ms of its point (the wake-up's latency). */
    for (int i = 1; i < 4; i++) {
        uint64_t gap = at[i] - at[i - 1];
        uint64_t n = (gap + 75000000ull) / 150000000ull;
        uint64_t off = gap > n * 150000000ull ? gap - n * 150000000ull : n * 150000000ull - gap;
        assert_true(n >= 1);
        assert_true(off < 60000000ull);
    }
    engine_stop(e);
    snapshot_free(&s);
    collect_close(&c);
}

/* A stop while the priming tick waits for GPM comes back promptly (the
 * wait is sliced), and no tick is left running. */
static void test_stop_while_priming(void **state)
{
    (void)state;
    use_scenario("h200-mig.ini", "100");
    struct collector c;
    open_sim(&c, 3600000);
    struct engine *e = NULL;
    struct engine_opts o = {.interval_ms = 3600000};
    assert_int_equal(engine_start(&e, &c, &o), 0);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    assert_true(next_snapshot(e, &s, 3000));
    uint64_t t = clock_mono_ns();
    engine_stop(e);
    assert_true(clock_mono_ns() - t < 1000000000ull);
    snapshot_free(&s);
    collect_close(&c);
}

/* A backend whose detach (its helpers asked to leave) takes 900 ms, as three
 * helpers on a loaded machine can: the engine stops only after it, for the
 * collector is closed next and detach still holds the backend's state. */
struct slow_detach {
    atomic_bool detaching, detached;
};

static int slow_open(void **st, const struct backend_opts *o, char *err, size_t len)
{
    (void)st, (void)o, (void)err, (void)len;
    return -1; /* never opened through the registry */
}

static int slow_sample(void *st, struct snapshot *s, uint64_t deadline_ns)
{
    (void)st, (void)deadline_ns;
    s->ndevices = 0;
    return 0;
}

static void slow_close(void *st)
{
    struct slow_detach *d = st;
    assert_false(atomic_load(&d->detaching) && !atomic_load(&d->detached));
}

static void slow_detach_fn(void *st)
{
    struct slow_detach *d = st;
    atomic_store(&d->detaching, true);
    struct timespec ts = {0, 900 * 1000000L};
    nanosleep(&ts, NULL);
    atomic_store(&d->detached, true);
}

static void test_stop_waits_for_a_slow_detach(void **state)
{
    (void)state;
    static const struct backend_ops ops = {.name = "slow-detach",
                                           .open = slow_open,
                                           .sample = slow_sample,
                                           .close = slow_close,
                                           .detach = slow_detach_fn};
    struct slow_detach d;
    atomic_init(&d.detaching, false);
    atomic_init(&d.detached, false);
    struct collector c;
    memset(&c, 0, sizeof(c));
    c.be = &ops;
    c.be_state = &d;
    c.budget_ns = 500000000ull;
    struct engine *e = NULL;
    struct engine_opts o = {.interval_ms = 1000};
    assert_int_equal(engine_start(&e, &c, &o), 0);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    assert_true(next_snapshot(e, &s, 3000));
    assert_int_equal(s.ndevices, 0);
    uint64_t t = clock_mono_ns();
    engine_stop(e);
    uint64_t took = clock_mono_ns() - t;
    assert_true(atomic_load(&d.detached));
    assert_true(took >= 850000000ull); /* it did wait for the detach */
    slow_close(&d);
    snapshot_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_priming_with_a_long_interval),
        cmocka_unit_test(test_short_interval_unchanged),
        cmocka_unit_test(test_stop_while_priming),
        cmocka_unit_test(test_stop_waits_for_a_slow_detach),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
