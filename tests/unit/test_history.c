/*
 * History: ring order, the carry-forward TTL, gaps for never-seen series,
 * sources kept, the VRAM total cache, devices followed by UUID across MIG
 * re-enumeration, pruning, host series, no heap calls in the steady state
 * and clean -ENOMEM paths through a failing allocator.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/history.h"
#include "system/meminfo.h"

/* Heap calls made by this file and libmigmon.a (linked with
 * -Wl,--wrap=malloc,calloc,realloc). fail_nth >= 0 makes the call whose
 * count equals it return NULL, once. */
static long heap_calls;
static long fail_nth = -1;
void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);
static bool fail_now(void)
{
    return heap_calls++ == fail_nth;
}
void *__wrap_malloc(size_t n) { return fail_now() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) { return fail_now() ? NULL : __real_calloc(a, b); }
void *__wrap_realloc(void *p, size_t n) { return fail_now() ? NULL : __real_realloc(p, n); }

static const double GiB = 1024.0 * 1024.0 * 1024.0;

static struct metric m_none(void)
{
    return metric_none("test");
}

static struct metric m_src(double v, enum metric_source src)
{
    return (struct metric){.value = v, .src = src, .why = NULL};
}

static struct hist_point at(const struct hist_series *s, size_t age)
{
    struct hist_point p;
    assert_true(hist_get(s, age, &p));
    return p;
}

static void assert_point(const struct hist_series *s, size_t age, enum metric_source src,
                         double v)
{
    struct hist_point p = at(s, age);
    assert_int_equal(p.src, src);
    if (src != MSRC_NONE)
        assert_true(p.v == v);
}

/* ---- fixtures: snapshots built by hand ---- */

#define MAXDEV 8
struct fx {
    struct snapshot s;
    struct device d[MAXDEV];
};

static void fx_reset(struct fx *f)
{
    memset(f, 0, sizeof(*f));
    f->s.devices = f->d;
    f->s.cap = MAXDEV;
    f->s.gpu_ok = true;
    f->s.host_ok = false;
    meminfo_none(&f->s.host.mem, "test");
    f->s.host.cpu_total = m_none();
}

/* Append a device with every metric none. */
static struct device *fx_dev(struct fx *f, const char *uuid)
{
    assert_true(f->s.ndevices < MAXDEV);
    struct device *d = &f->d[f->s.ndevices++];
    memset(d, 0, sizeof(*d));
    snprintf(d->uuid, sizeof(d->uuid), "%s", uuid);
    for (int k = 0; k < M_COUNT; k++)
        d->m[k] = m_none();
    return d;
}

/* A device whose GPU util is v (direct), or none when v < 0. */
static void fx_util(struct fx *f, const char *uuid, double v)
{
    struct device *d = fx_dev(f, uuid);
    if (v >= 0)
        d->m[M_GPU_UTIL] = metric_direct(v);
}

static const struct hist_series *util_of(const struct history *h, const char *uuid)
{
    const struct hist_device *hd = history_device(h, "", uuid);
    assert_non_null(hd);
    return &hd->s[HS_GPU_UTIL];
}

/* ---- hist_series ---- */

static void test_ring_wrap_order(void **state)
{
    (void)state;
    struct hist_series s;
    assert_int_equal(hist_series_init(&s, 4), 0);
    struct hist_point p;
    assert_false(hist_get(&s, 0, &p));
    for (int i = 1; i <= 10; i++) {
        struct metric m = metric_direct(i);
        p = hist_push(&s, &m);
        assert_int_equal(p.src, MSRC_DIRECT);
        assert_true(p.v == i);
        assert_int_equal(s.len, i < 4 ? (size_t)i : 4u);
    }
    assert_int_equal(s.cap, 4);
    assert_point(&s, 0, MSRC_DIRECT, 10);
    assert_point(&s, 1, MSRC_DIRECT, 9);
    assert_point(&s, 2, MSRC_DIRECT, 8);
    assert_point(&s, 3, MSRC_DIRECT, 7);
    assert_false(hist_get(&s, 4, &p));
    assert_false(hist_get(&s, 100, &p));
    hist_series_free(&s);
    assert_null(s.pts);

    /* Before the ring is full, age follows push order too. */
    assert_int_equal(hist_series_init(&s, 4), 0);
    struct metric a = metric_direct(1), b = metric_direct(2);
    hist_push(&s, &a);
    hist_push(&s, &b);
    assert_int_equal(s.len, 2);
    assert_point(&s, 0, MSRC_DIRECT, 2);
    assert_point(&s, 1, MSRC_DIRECT, 1);
    assert_false(hist_get(&s, 2, &p));
    hist_series_free(&s);

    assert_int_equal(hist_series_init(&s, 0), -EINVAL);
    assert_int_equal(hist_series_init(&s, (size_t)HIST_POINTS_MAX + 1), -EINVAL);
    assert_null(s.pts);
}

/* 10, none ×4 → 10 direct, 10 carried ×3, then a gap (never a fake 0). */
static void test_carry_ttl(void **state)
{
    (void)state;
    struct hist_series s;
    assert_int_equal(hist_series_init(&s, 16), 0);
    struct metric v = metric_direct(10), n = m_none();
    hist_push(&s, &v);
    for (int i = 1; i <= 3; i++) {
        struct hist_point p = hist_push(&s, &n);
        assert_int_equal(p.src, MSRC_CARRIED);
        assert_true(p.v == 10);
        assert_int_equal(s.misses, i);
    }
    struct hist_point p = hist_push(&s, &n);
    assert_int_equal(p.src, MSRC_NONE);
    assert_int_equal(s.len, 5);
    assert_point(&s, 4, MSRC_DIRECT, 10);
    assert_point(&s, 3, MSRC_CARRIED, 10);
    assert_point(&s, 2, MSRC_CARRIED, 10);
    assert_point(&s, 1, MSRC_CARRIED, 10);
    assert_point(&s, 0, MSRC_NONE, 0);
    /* Long outages stay gaps; the miss counter does not wrap into the
     * carry window again. */
    for (int i = 0; i < 1000; i++)
        assert_int_equal(hist_push(&s, &n).src, MSRC_NONE);
    assert_true(s.misses > HIST_CARRY_TTL);
    assert_true(s.seen);
    /* Even a counter near its limit must not wrap back into the window. */
    s.misses = UINT_MAX - 1;
    for (int i = 0; i < 4; i++)
        assert_int_equal(hist_push(&s, &n).src, MSRC_NONE);
    hist_series_free(&s);

    /* The window is the configured one: carry = 1 carries one miss, 0 none. */
    struct metric seven = metric_direct(7);
    for (unsigned k = 0; k <= 1; k++) {
        carry_ticks_set(k);
        assert_int_equal(hist_series_init(&s, 16), 0);
        hist_push(&s, &seven);
        if (k == 1)
            assert_int_equal(hist_push(&s, &n).src, MSRC_CARRIED);
        assert_int_equal(hist_push(&s, &n).src, MSRC_NONE);
        hist_series_free(&s);
    }
    carry_ticks_set(HIST_CARRY_TTL);
}

/* A real value resets the miss count: a new outage carries the new value
 * for a full TTL again. */
static void test_recovery_resets_misses(void **state)
{
    (void)state;
    struct hist_series s;
    assert_int_equal(hist_series_init(&s, 16), 0);
    struct metric a = metric_direct(10), b = metric_direct(20), n = m_none();
    hist_push(&s, &a);
    hist_push(&s, &n);
    hist_push(&s, &n);
    assert_int_equal(s.misses, 2);
    hist_push(&s, &b);
    assert_int_equal(s.misses, 0);
    for (int i = 0; i < 4; i++)
        hist_push(&s, &n);
    /* oldest → newest: 10D 10C 10C 20D 20C 20C 20C gap */
    assert_int_equal(s.len, 8);
    assert_point(&s, 7, MSRC_DIRECT, 10);
    assert_point(&s, 6, MSRC_CARRIED, 10);
    assert_point(&s, 5, MSRC_CARRIED, 10);
    assert_point(&s, 4, MSRC_DIRECT, 20);
    assert_point(&s, 3, MSRC_CARRIED, 20);
    assert_point(&s, 2, MSRC_CARRIED, 20);
    assert_point(&s, 1, MSRC_CARRIED, 20);
    assert_point(&s, 0, MSRC_NONE, 0);
    /* Recovery after the TTL expired is a plain real value again. */
    struct metric c = metric_direct(30);
    assert_int_equal(hist_push(&s, &c).src, MSRC_DIRECT);
    assert_int_equal(hist_push(&s, &n).src, MSRC_CARRIED);
    assert_true(at(&s, 0).v == 30);
    hist_series_free(&s);
}

static void test_never_seen_is_gaps(void **state)
{
    (void)state;
    struct hist_series s;
    assert_int_equal(hist_series_init(&s, 8), 0);
    struct metric n = m_none();
    for (int i = 0; i < 5; i++)
        assert_int_equal(hist_push(&s, &n).src, MSRC_NONE);
    assert_false(s.seen);
    assert_int_equal(s.len, 5);
    for (size_t age = 0; age < 5; age++)
        assert_int_equal(at(&s, age).src, MSRC_NONE);
    /* A carried input is not an observation either: nothing to carry. */
    struct metric c = m_src(42, MSRC_CARRIED);
    assert_int_equal(hist_push(&s, &c).src, MSRC_NONE);
    assert_false(s.seen);
    hist_series_free(&s);
}

static void test_sources_preserved(void **state)
{
    (void)state;
    struct hist_series s;
    assert_int_equal(hist_series_init(&s, 8), 0);
    struct metric e = m_src(33, MSRC_ESTIMATE), g = m_src(44, MSRC_GPM);
    struct metric pr = m_src(55, MSRC_PROCESS), n = m_none();
    hist_push(&s, &e);
    hist_push(&s, &g);
    hist_push(&s, &pr);
    assert_point(&s, 2, MSRC_ESTIMATE, 33);
    assert_point(&s, 1, MSRC_GPM, 44);
    assert_point(&s, 0, MSRC_PROCESS, 55);
    assert_int_equal(s.last_real.src, MSRC_PROCESS);
    hist_push(&s, &n);
    assert_point(&s, 0, MSRC_CARRIED, 55);
    /* An estimate after a miss is real again and restarts the TTL. */
    hist_push(&s, &e);
    assert_point(&s, 0, MSRC_ESTIMATE, 33);
    assert_int_equal(s.misses, 0);
    hist_series_free(&s);
}

/* Carried never re-carries: a value the collector already carried counts as
 * a miss, so the TTL still runs from the last real value. */
static void test_carried_input_counts_as_miss(void **state)
{
    (void)state;
    struct hist_series s;
    assert_int_equal(hist_series_init(&s, 8), 0);
    struct metric v = metric_direct(7), c = m_src(7, MSRC_CARRIED), n = m_none();
    hist_push(&s, &v);
    assert_int_equal(hist_push(&s, &c).src, MSRC_CARRIED);
    assert_int_equal(hist_push(&s, &n).src, MSRC_CARRIED);
    assert_int_equal(hist_push(&s, &c).src, MSRC_CARRIED);
    assert_int_equal(s.misses, 3);
    assert_int_equal(hist_push(&s, &c).src, MSRC_NONE);
    assert_true(s.last_real.v == 7);
    assert_int_equal(s.last_real.src, MSRC_DIRECT);
    hist_series_free(&s);
}

/* ---- history ---- */

static void test_init_default_points(void **state)
{
    (void)state;
    struct history h;
    assert_int_equal(history_init(&h, 0), 0);
    assert_int_equal(h.points, HIST_POINTS_DEFAULT);
    assert_int_equal(h.points, 300);
    for (int k = 0; k < HH_COUNT; k++) {
        assert_int_equal(h.host[k].cap, 300);
        assert_int_equal(h.host[k].len, 0);
    }
    assert_int_equal(h.ndevs, 0);
    assert_null(history_device(&h, "", "GPU-x"));
    assert_null(history_device(&h, "", ""));
    assert_null(history_device(&h, "", NULL));
    history_free(&h);
    assert_int_equal(history_init(&h, 5), 0);
    assert_int_equal(h.points, 5);
    assert_int_equal(h.host[HH_CPU_TOTAL].cap, 5);
    history_free(&h);
}

/* Each device series reads its own metric. */
static void test_device_series_mapping(void **state)
{
    (void)state;
    struct history h;
    assert_int_equal(history_init(&h, 8), 0);
    struct fx f;
    fx_reset(&f);
    struct device *d = fx_dev(&f, "GPU-map");
    d->m[M_GPU_UTIL] = metric_direct(11);
    d->m[M_MEM_UTIL] = metric_direct(22);
    d->m[M_SM_UTIL] = metric_direct(99); /* not recorded */
    d->m[M_MEM_USED] = metric_direct(3 * GiB);
    d->m[M_MEM_TOTAL] = metric_direct(80 * GiB);
    d->m[M_PCIE_TX] = m_src(1e6, MSRC_DIRECT);
    d->m[M_PCIE_RX] = m_src(2e6, MSRC_DIRECT);
    assert_int_equal(history_push(&h, &f.s), 0);
    const struct hist_device *hd = history_device(&h, "", "GPU-map");
    assert_non_null(hd);
    assert_string_equal(hd->uuid, "GPU-map");
    assert_point(&hd->s[HS_GPU_UTIL], 0, MSRC_DIRECT, 11);
    assert_point(&hd->s[HS_MEM_UTIL], 0, MSRC_DIRECT, 22);
    assert_point(&hd->s[HS_VRAM_USED], 0, MSRC_DIRECT, 3 * GiB);
    assert_point(&hd->s[HS_PCIE_TX], 0, MSRC_DIRECT, 1e6);
    assert_point(&hd->s[HS_PCIE_RX], 0, MSRC_DIRECT, 2e6);
    assert_true(hd->vram_total == 80 * GiB);
    assert_int_equal(hd->absent, 0);
    assert_int_equal(h.ticks, 1);
    history_free(&h);
}

/* Seed v0.3.11: a failed memory_info() made the total None and the chart's
 * vram_max fell to 1 MB. The total is kept without a TTL, while the used
 * series carries for the TTL and then shows gaps. */
static void test_vram_total_kept(void **state)
{
    (void)state;
    struct history h;
    assert_int_equal(history_init(&h, 32), 0);
    struct fx f;
    fx_reset(&f);
    struct device *d = fx_dev(&f, "MIG-vram");
    d->m[M_MEM_USED] = metric_direct(5 * GiB);
    d->m[M_MEM_TOTAL] = metric_direct(40 * GiB);
    assert_int_equal(history_push(&h, &f.s), 0);
    d->m[M_MEM_USED] = m_none();
    d->m[M_MEM_TOTAL] = m_none();
    for (int i = 0; i < 20; i++)
        assert_int_equal(history_push(&h, &f.s), 0);
    const struct hist_device *hd = history_device(&h, "", "MIG-vram");
    assert_non_null(hd);
    assert_true(hd->vram_total == 40 * GiB);
    const struct hist_series *u = &hd->s[HS_VRAM_USED];
    assert_int_equal(u->len, 21);
    assert_point(u, 20, MSRC_DIRECT, 5 * GiB);
    assert_point(u, 19, MSRC_CARRIED, 5 * GiB);
    assert_point(u, 17, MSRC_CARRIED, 5 * GiB);
    assert_point(u, 16, MSRC_NONE, 0);
    assert_point(u, 0, MSRC_NONE, 0);
    /* A total of 0 is no size either; a new real total replaces the old. */
    d->m[M_MEM_TOTAL] = metric_direct(0);
    history_push(&h, &f.s);
    assert_true(history_device(&h, "", "MIG-vram")->vram_total == 40 * GiB);
    d->m[M_MEM_TOTAL] = metric_direct(20 * GiB);
    history_push(&h, &f.s);
    assert_true(history_device(&h, "", "MIG-vram")->vram_total == 20 * GiB);

    /* A device whose total was never read reports 0 (unknown). */
    fx_reset(&f);
    fx_util(&f, "GPU-nototal", 1);
    history_push(&h, &f.s);
    assert_true(history_device(&h, "", "GPU-nototal")->vram_total == 0);
    history_free(&h);
}

/* MIG reconfiguration: instances are destroyed, created and listed in a new
 * order. Each history follows its UUID, not its position. */
static void test_mig_reenumeration_follows_uuid(void **state)
{
    (void)state;
    struct history h;
    assert_int_equal(history_init(&h, 16), 0);
    struct fx f;
    for (int t = 0; t < 3; t++) {
        fx_reset(&f);
        fx_util(&f, "GPU-0", 100 + t);
        fx_util(&f, "MIG-a", 10 + t);
        fx_util(&f, "MIG-b", 20 + t);
        assert_int_equal(history_push(&h, &f.s), 0);
    }
    /* MIG-a destroyed, MIG-c created, listed before MIG-b. */
    fx_reset(&f);
    fx_util(&f, "GPU-0", 103);
    fx_util(&f, "MIG-c", 30);
    fx_util(&f, "MIG-b", 23);
    assert_int_equal(history_push(&h, &f.s), 0);

    assert_int_equal(h.ndevs, 4);
    assert_string_equal(h.devs[0].uuid, "GPU-0"); /* first-seen order */
    assert_string_equal(h.devs[1].uuid, "MIG-a");
    assert_string_equal(h.devs[2].uuid, "MIG-b");
    assert_string_equal(h.devs[3].uuid, "MIG-c");

    const struct hist_series *b = util_of(&h, "MIG-b");
    assert_int_equal(b->len, 4);
    for (size_t age = 0; age < 4; age++)
        assert_point(b, age, MSRC_DIRECT, 23 - (double)age);
    const struct hist_series *c = util_of(&h, "MIG-c");
    assert_int_equal(c->len, 1);
    assert_point(c, 0, MSRC_DIRECT, 30);
    /* The vanished instance records a gap, not its last value. */
    const struct hist_series *a = util_of(&h, "MIG-a");
    assert_int_equal(a->len, 4);
    assert_point(a, 0, MSRC_NONE, 0);
    assert_point(a, 1, MSRC_DIRECT, 12);
    assert_int_equal(history_device(&h, "", "MIG-a")->absent, 1);
    assert_int_equal(history_device(&h, "", "MIG-b")->absent, 0);
    const struct hist_series *g = util_of(&h, "GPU-0");
    assert_int_equal(g->len, 4);
    assert_point(g, 0, MSRC_DIRECT, 103);

    /* Same set, order swapped back: still matched by UUID. */
    fx_reset(&f);
    fx_util(&f, "MIG-b", 24);
    fx_util(&f, "GPU-0", 104);
    fx_util(&f, "MIG-c", 31);
    assert_int_equal(history_push(&h, &f.s), 0);
    assert_point(util_of(&h, "MIG-b"), 0, MSRC_DIRECT, 24);
    assert_point(util_of(&h, "GPU-0"), 0, MSRC_DIRECT, 104);
    assert_point(util_of(&h, "MIG-c"), 0, MSRC_DIRECT, 31);
    assert_point(util_of(&h, "MIG-c"), 1, MSRC_DIRECT, 30);
    history_free(&h);
}

/* A device absent HIST_PRUNE_TICKS snapshots in a row is dropped; the array
 * stays compact and ordered; a device that returns starts a fresh history. */
static void test_prune_and_fresh_return(void **state)
{
    (void)state;
    struct history h;
    assert_int_equal(history_init(&h, 64), 0);
    struct fx f;
    fx_reset(&f);
    fx_util(&f, "GPU-0", 1);
    fx_util(&f, "MIG-x", 50);
    fx_util(&f, "MIG-y", 60);
    assert_int_equal(history_push(&h, &f.s), 0);
    assert_int_equal(h.ndevs, 3);

    fx_reset(&f);
    fx_util(&f, "GPU-0", 2);
    fx_util(&f, "MIG-y", 61);
    for (int i = 1; i < HIST_PRUNE_TICKS; i++) {
        assert_int_equal(history_push(&h, &f.s), 0);
        const struct hist_device *x = history_device(&h, "", "MIG-x");
        assert_non_null(x);
        assert_int_equal(x->absent, i);
    }
    const struct hist_series *xs = util_of(&h, "MIG-x");
    assert_int_equal(xs->len, HIST_PRUNE_TICKS);
    assert_point(xs, HIST_PRUNE_TICKS - 1, MSRC_DIRECT, 50);
    for (size_t age = 0; age < HIST_PRUNE_TICKS - 1; age++)
        assert_point(xs, age, MSRC_NONE, 0);

    assert_int_equal(history_push(&h, &f.s), 0); /* the 10th absence */
    assert_null(history_device(&h, "", "MIG-x"));
    assert_int_equal(h.ndevs, 2);
    assert_string_equal(h.devs[0].uuid, "GPU-0");
    assert_string_equal(h.devs[1].uuid, "MIG-y");
    assert_int_equal(util_of(&h, "MIG-y")->len, HIST_PRUNE_TICKS + 1);
    assert_point(util_of(&h, "MIG-y"), 0, MSRC_DIRECT, 61);

    /* Back, with util none: a fresh, never-seen series, nothing carried. */
    fx_reset(&f);
    fx_util(&f, "GPU-0", 3);
    fx_util(&f, "MIG-y", 62);
    fx_util(&f, "MIG-x", -1);
    assert_int_equal(history_push(&h, &f.s), 0);
    assert_int_equal(h.ndevs, 3);
    assert_string_equal(h.devs[2].uuid, "MIG-x");
    const struct hist_device *x = history_device(&h, "", "MIG-x");
    assert_int_equal(x->s[HS_GPU_UTIL].len, 1);
    assert_false(x->s[HS_GPU_UTIL].seen);
    assert_point(&x->s[HS_GPU_UTIL], 0, MSRC_NONE, 0);
    assert_int_equal(x->absent, 0);
    history_free(&h);
}

/* A device back after a short absence keeps its history (with the gap), but
 * its old value is not carried across the hole. */
/* A MIG layout replaced by another of the same size (two instances go, two
 * new ones come): the old ones are dropped after HIST_PRUNE_TICKS all the
 * same (the seed pruned only when the count fell), and a hundred such
 * reconfigurations leave the table no larger than two layouts. */
static void test_same_count_reconfiguration_prunes(void **state)
{
    (void)state;
    struct history h;
    assert_int_equal(history_init(&h, 16), 0);
    struct fx f;
    fx_reset(&f);
    fx_util(&f, "GPU-0", 1);
    fx_util(&f, "MIG-a", 10);
    fx_util(&f, "MIG-b", 20);
    assert_int_equal(history_push(&h, &f.s), 0);
    fx_reset(&f);
    fx_util(&f, "GPU-0", 2);
    fx_util(&f, "MIG-c", 30);
    fx_util(&f, "MIG-d", 40);
    for (int i = 0; i < HIST_PRUNE_TICKS; i++)
        assert_int_equal(history_push(&h, &f.s), 0);
    assert_int_equal(h.ndevs, 3);
    assert_null(history_device(&h, "", "MIG-a"));
    assert_null(history_device(&h, "", "MIG-b"));
    assert_non_null(history_device(&h, "", "MIG-c"));
    assert_non_null(history_device(&h, "", "MIG-d"));

    size_t cap = 0;
    for (int cycle = 0; cycle < 100; cycle++) {
        char u1[32], u2[32];
        snprintf(u1, sizeof(u1), "MIG-%d-1", cycle);
        snprintf(u2, sizeof(u2), "MIG-%d-2", cycle);
        fx_reset(&f);
        fx_util(&f, "GPU-0", 3);
        fx_util(&f, u1, 50);
        fx_util(&f, u2, 60);
        for (int i = 0; i < HIST_PRUNE_TICKS; i++) {
            assert_int_equal(history_push(&h, &f.s), 0);
            assert_true(h.ndevs <= 5);
        }
        assert_int_equal(h.ndevs, 3);
        if (cycle == 0)
            cap = h.cap;
        assert_int_equal(h.cap, cap); /* the table does not grow */
    }
    assert_string_equal(h.devs[0].uuid, "GPU-0");
    assert_int_equal(util_of(&h, "GPU-0")->len, 16);
    history_free(&h);
}

/* A MIG-enabled GPU that cannot read its own VRAM (no privilege): its
 * VRAM series and chart scale are its instances' sum, and a tick on which
 * one instance's figure is missing is a missed read (carried, like any
 * other series), not a smaller sum. */
static void test_mig_parent_vram_is_instances_sum(void **state)
{
    (void)state;
    struct history h;
    assert_int_equal(history_init(&h, 8), 0);
    struct fx f;
    const double G = 1024.0 * 1024 * 1024;
    for (int tick = 0; tick < 2; tick++) {
        fx_reset(&f);
        struct device *g = fx_dev(&f, "GPU-0");
        g->kind = DEV_GPU;
        g->mig_enabled = true;
        g->parent_pos = -1;
        struct device *a = fx_dev(&f, "MIG-a");
        struct device *b = fx_dev(&f, "MIG-b");
        a->kind = b->kind = DEV_MIG;
        a->parent_pos = b->parent_pos = 0;
        a->m[M_MEM_USED] = metric_direct(3 * G);
        a->m[M_MEM_TOTAL] = metric_direct(19.5 * G);
        if (tick == 0)
            b->m[M_MEM_USED] = metric_direct(1 * G);
        b->m[M_MEM_TOTAL] = metric_direct(9.75 * G);
        assert_int_equal(history_push(&h, &f.s), 0);
    }
    const struct hist_device *hd = history_device(&h, "", "GPU-0");
    assert_non_null(hd);
    assert_point(&hd->s[HS_VRAM_USED], 1, MSRC_DIRECT, 4 * G);
    assert_point(&hd->s[HS_VRAM_USED], 0, MSRC_CARRIED, 4 * G);
    assert_true(hd->vram_total == 29.25 * G);
    /* the instances keep their own */
    assert_point(&history_device(&h, "", "MIG-a")->s[HS_VRAM_USED], 0, MSRC_DIRECT, 3 * G);
    assert_true(history_device(&h, "", "MIG-a")->vram_total == 19.5 * G);
    history_free(&h);
}

static void test_short_absence_no_carry_across(void **state)
{
    (void)state;
    struct history h;
    assert_int_equal(history_init(&h, 16), 0);
    struct fx f;
    fx_reset(&f);
    fx_util(&f, "MIG-z", 40);
    history_push(&h, &f.s);
    fx_reset(&f);
    history_push(&h, &f.s); /* absent once */
    fx_util(&f, "MIG-z", -1);
    history_push(&h, &f.s); /* back, util none */
    const struct hist_series *z = util_of(&h, "MIG-z");
    assert_int_equal(z->len, 3);
    assert_point(z, 2, MSRC_DIRECT, 40);
    assert_point(z, 1, MSRC_NONE, 0);
    assert_point(z, 0, MSRC_NONE, 0);
    assert_int_equal(history_device(&h, "", "MIG-z")->absent, 0);
    history_free(&h);
}

/* No UUID: not recorded. The same UUID twice in one snapshot: once. */
static void test_empty_and_duplicate_uuid(void **state)
{
    (void)state;
    struct history h;
    assert_int_equal(history_init(&h, 8), 0);
    struct fx f;
    fx_reset(&f);
    fx_util(&f, "", 5);
    fx_util(&f, "GPU-dup", 1);
    fx_util(&f, "GPU-dup", 2);
    assert_int_equal(history_push(&h, &f.s), 0);
    assert_int_equal(h.ndevs, 1);
    const struct hist_series *s = util_of(&h, "GPU-dup");
    assert_int_equal(s->len, 1);
    assert_point(s, 0, MSRC_DIRECT, 1);
    history_free(&h);
}

static void fx_host(struct fx *f, double cpu, double used, double cached, double buffers,
                    double total)
{
    f->s.host_ok = true;
    f->s.host.cpu_total = metric_direct(cpu);
    f->s.host.mem.used = metric_direct(used);
    f->s.host.mem.cached = metric_direct(cached);
    f->s.host.mem.buffers = metric_direct(buffers);
    f->s.host.mem.total = metric_direct(total);
    f->s.host.mem.free = metric_direct(total - used - cached - buffers);
}

static void test_host_series(void **state)
{
    (void)state;
    struct history h;
    assert_int_equal(history_init(&h, 16), 0);
    struct fx f;
    fx_reset(&f);
    assert_int_equal(history_push(&h, &f.s), 0); /* host_ok false, never seen */
    for (int k = 0; k < HH_COUNT; k++)
        assert_point(&h.host[k], 0, MSRC_NONE, 0);
    assert_true(h.ram_total == 0);

    fx_host(&f, 12.5, 4 * GiB, 2 * GiB, 0.5 * GiB, 16 * GiB);
    assert_int_equal(history_push(&h, &f.s), 0);
    assert_point(&h.host[HH_CPU_TOTAL], 0, MSRC_DIRECT, 12.5);
    assert_point(&h.host[HH_RAM_USED], 0, MSRC_DIRECT, 4 * GiB);
    /* meminfo's cached excludes Buffers; the chart's band is both. */
    assert_point(&h.host[HH_RAM_CACHED], 0, MSRC_DIRECT, 2.5 * GiB);
    assert_true(h.ram_total == 16 * GiB);

    /* Buffers unknown: the band is unknown, not just the cached part. */
    f.s.host.mem.buffers = m_none();
    f.s.host.cpu_total = metric_direct(50);
    history_push(&h, &f.s);
    assert_point(&h.host[HH_RAM_CACHED], 0, MSRC_CARRIED, 2.5 * GiB);
    assert_point(&h.host[HH_CPU_TOTAL], 0, MSRC_DIRECT, 50);
    f.s.host.mem.buffers = metric_direct(GiB);
    f.s.host.mem.cached = m_none();
    history_push(&h, &f.s);
    assert_point(&h.host[HH_RAM_CACHED], 0, MSRC_CARRIED, 2.5 * GiB);

    /* host_ok false: every host series misses; ram_total is kept. */
    fx_reset(&f);
    for (int i = 0; i < 4; i++)
        history_push(&h, &f.s);
    assert_point(&h.host[HH_CPU_TOTAL], 1, MSRC_CARRIED, 50);
    assert_point(&h.host[HH_CPU_TOTAL], 0, MSRC_NONE, 0);
    assert_point(&h.host[HH_RAM_USED], 1, MSRC_CARRIED, 4 * GiB);
    assert_point(&h.host[HH_RAM_USED], 0, MSRC_NONE, 0);
    assert_point(&h.host[HH_RAM_CACHED], 0, MSRC_NONE, 0);
    assert_true(h.ram_total == 16 * GiB);
    assert_int_equal(h.host[HH_CPU_TOTAL].len, 8);
    assert_int_equal(h.ticks, 8);

    /* MemTotal unreadable with host_ok: still kept. */
    fx_host(&f, 1, GiB, GiB, GiB, 16 * GiB);
    f.s.host.mem.total = m_none();
    history_push(&h, &f.s);
    assert_true(h.ram_total == 16 * GiB);
    history_free(&h);
}

/* After the devices are known, a push allocates nothing, whatever the values
 * or their failures. */
static void test_steady_state_no_alloc(void **state)
{
    (void)state;
    struct history h;
    assert_int_equal(history_init(&h, 300), 0);
    struct fx f;
    fx_reset(&f);
    const char *uuids[] = {"GPU-0", "MIG-1", "MIG-2", "MIG-3", "GPU-1"};
    for (size_t i = 0; i < 5; i++)
        fx_util(&f, uuids[i], 1);
    fx_host(&f, 1, GiB, GiB, GiB, 16 * GiB);
    assert_int_equal(history_push(&h, &f.s), 0);

    long before = heap_calls;
    for (int t = 0; t < 1000; t++) {
        for (size_t i = 0; i < f.s.ndevices; i++) {
            struct device *d = &f.d[i];
            d->m[M_GPU_UTIL] = (t / 7 + i) % 3 ? metric_direct(t % 100) : m_none();
            d->m[M_MEM_USED] = (t / 5) % 2 ? metric_direct(t * 1e6) : m_none();
            d->m[M_MEM_TOTAL] = t % 11 ? metric_direct(80 * GiB) : m_none();
        }
        f.s.host_ok = t % 13 != 0;
        /* one device comes and goes (absent < HIST_PRUNE_TICKS) */
        f.s.ndevices = (t / 3) % 2 ? 5 : 4;
        assert_int_equal(history_push(&h, &f.s), 0);
    }
    assert_int_equal(heap_calls - before, 0);
    assert_int_equal(h.ndevs, 5);
    assert_int_equal(h.devs[0].s[HS_GPU_UTIL].len, 300);
    history_free(&h);
}

/* Every single allocation failure in init and in a push that adds devices:
 * -ENOMEM, nothing leaks (ASan/valgrind), the history stays usable, and a
 * later push records the device that could not be added. */
/* A device's series share one block, interleaved: each keeps its own
 * values across the ring's wrap, and two devices do not mix. */
static void test_device_series_apart(void **state)
{
    (void)state;
    static const enum metric_id of[HS_DEV_COUNT] = {
        [HS_GPU_UTIL] = M_GPU_UTIL, [HS_MEM_UTIL] = M_MEM_UTIL, [HS_VRAM_USED] = M_MEM_USED,
        [HS_PCIE_TX] = M_PCIE_TX,   [HS_PCIE_RX] = M_PCIE_RX,   [HS_TEMP] = M_TEMP,
        [HS_POWER] = M_POWER,       [HS_CLK_SM] = M_CLK_SM,     [HS_CLK_MEM] = M_CLK_MEM,
    };
    struct history h;
    assert_int_equal(history_init(&h, 8), 0);
    struct fx f;
    for (int t = 0; t < 8 + 5; t++) {
        fx_reset(&f);
        for (int d = 0; d < 2; d++) {
            struct device *dv = fx_dev(&f, d ? "GPU-b" : "GPU-a");
            for (int k = 0; k < HS_DEV_COUNT; k++)
                dv->m[of[k]] = metric_direct(1000.0 * d + 100.0 * k + t);
        }
        assert_int_equal(history_push(&h, &f.s), 0);
    }
    for (int d = 0; d < 2; d++) {
        const struct hist_device *hd = history_device(&h, "", d ? "GPU-b" : "GPU-a");
        assert_non_null(hd);
        for (int k = 0; k < HS_DEV_COUNT; k++) {
            assert_int_equal(hd->s[k].len, 8);
            for (size_t age = 0; age < 8; age++)
                assert_point(&hd->s[k], age, MSRC_DIRECT, 1000.0 * d + 100.0 * k + (12 - (double)age));
        }
    }
    history_free(&h);
}


/* Pages of [p, p + n) not in memory (mincore). */
static size_t pages_missing(const void *p, size_t n)
{
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(pg - 1), e = (uintptr_t)p + n;
    size_t np = (e - a + (uintptr_t)pg - 1) / (uintptr_t)pg, miss = 0;
    unsigned char *vec = __real_malloc(np);
    assert_non_null(vec);
    assert_int_equal(mincore((void *)a, e - a, vec), 0);
    for (size_t i = 0; i < np; i++)
        miss += !(vec[i] & 1);
    free(vec);
    return miss;
}

/* A ring is in memory from its first push, not faulted in a page at a time
 * by the ticks that reach it: 100,000 points (a 14 MB block for a device,
 * 1.6 MB for a host series) are all resident after one push, and read as
 * gaps beyond what was pushed. */
static void test_rings_touched_up_front(void **state)
{
    (void)state;
    struct history h;
    assert_int_equal(history_init(&h, 100000), 0);
    struct fx f;
    fx_reset(&f);
    struct device *dv = fx_dev(&f, "GPU-a");
    dv->m[M_GPU_UTIL] = metric_direct(42);
    assert_int_equal(history_push(&h, &f.s), 0);
    const struct hist_device *hd = history_device(&h, "", "GPU-a");
    assert_non_null(hd);
    assert_int_equal(pages_missing(hd->s[0].pts, 100000 * HS_DEV_COUNT * sizeof(struct hist_point)), 0);
    assert_int_equal(pages_missing(h.host[HH_CPU_TOTAL].pts, 100000 * sizeof(struct hist_point)), 0);
    assert_point(&hd->s[HS_GPU_UTIL], 0, MSRC_DIRECT, 42);
    /* the block's untouched points are gaps */
    for (size_t i = 1; i < 100000 * HS_DEV_COUNT; i += 4099)
        assert_int_equal(hd->s[0].pts[i].src, MSRC_NONE);
    history_free(&h);
}

static void test_enomem(void **state)
{
    (void)state;
    struct history h;
    long base = heap_calls;
    fail_nth = base;
    assert_int_equal(history_init(&h, 8), -ENOMEM);
    assert_int_equal(h.points, 0);
    assert_null(h.host[0].pts);
    fail_nth = heap_calls + HH_COUNT - 1; /* the last host ring */
    assert_int_equal(history_init(&h, 8), -ENOMEM);
    assert_null(h.host[0].pts);
    fail_nth = -1;

    struct fx f;
    fx_reset(&f);
    fx_util(&f, "GPU-a", 1);
    fx_util(&f, "GPU-b", 2);
    /* Count the calls of a successful push that adds both devices. */
    assert_int_equal(history_init(&h, 8), 0);
    long start = heap_calls;
    assert_int_equal(history_push(&h, &f.s), 0);
    long ncalls = heap_calls - start;
    assert_int_equal(ncalls, 1 + 2); /* devs array + one block of rings per device */
    history_free(&h);

    for (long n = 0; n < ncalls; n++) {
        assert_int_equal(history_init(&h, 8), 0);
        fail_nth = heap_calls + n;
        assert_int_equal(history_push(&h, &f.s), -ENOMEM);
        fail_nth = -1;
        /* Calls: the devs array, GPU-a's rings, GPU-b's rings. Whichever
         * fails loses that one device only; the other and the host are
         * recorded. */
        assert_int_equal(h.ndevs, 1);
        if (n <= 1) {
            assert_null(history_device(&h, "", "GPU-a"));
            assert_point(util_of(&h, "GPU-b"), 0, MSRC_DIRECT, 2);
        } else {
            assert_null(history_device(&h, "", "GPU-b"));
            assert_point(util_of(&h, "GPU-a"), 0, MSRC_DIRECT, 1);
        }
        assert_int_equal(h.ticks, 1);
        assert_int_equal(h.host[HH_CPU_TOTAL].len, 1);
        assert_int_equal(history_push(&h, &f.s), 0);
        assert_int_equal(h.ndevs, 2);
        assert_point(util_of(&h, "GPU-a"), 0, MSRC_DIRECT, 1);
        assert_point(util_of(&h, "GPU-b"), 0, MSRC_DIRECT, 2);
        history_free(&h);
    }
}

/* ---- a past from elsewhere (history_fill_past) ---- */

static void test_fill_past(void **state)
{
    (void)state;
    struct history h;
    assert_int_equal(history_init(&h, 8), 0);
    struct fx f;
    /* three ticks read before the ask, two after it */
    for (int i = 0; i < 5; i++) {
        fx_reset(&f);
        fx_util(&f, "GPU-A", 90 + i);
        assert_int_equal(history_push(&h, &f.s), 0);
    }
    /* ten points of the past (more than the ring holds), its last a gap,
     * the one before carried; PCIe not given */
    struct hist_past p;
    assert_int_equal(hist_past_init(&p, 10), 0);
    snprintf(p.uuid, sizeof(p.uuid), "GPU-A");
    p.given = 1u << HS_GPU_UTIL;
    for (size_t j = 0; j < 8; j++)
        *hist_past_at(&p, j, HS_GPU_UTIL) = (struct hist_point){.v = (double)j, .src = MSRC_GPM};
    *hist_past_at(&p, 8, HS_GPU_UTIL) = (struct hist_point){.v = 7, .src = MSRC_CARRIED};
    assert_int_equal(history_fill_past(&h, &p, 2), 0);
    const struct hist_device *hd = history_device(&h, "", "GPU-A");
    const struct hist_series *u = &hd->s[HS_GPU_UTIL];
    /* the two read since the ask, then the newest six of the past */
    assert_int_equal(u->len, 8);
    assert_point(u, 0, MSRC_DIRECT, 94);
    assert_point(u, 1, MSRC_DIRECT, 93);
    assert_point(u, 2, MSRC_NONE, 0);
    assert_point(u, 3, MSRC_CARRIED, 7);
    assert_point(u, 4, MSRC_GPM, 7);
    assert_point(u, 7, MSRC_GPM, 4);
    /* a series not given keeps what it had */
    assert_int_equal(hd->s[HS_PCIE_TX].len, 5);
    /* which points came from the past, as the ring moves on */
    assert_int_equal(history_past_points(&h, hd, 0, 8), 6);
    assert_int_equal(history_past_points(&h, hd, 0, 3), 1);
    assert_int_equal(history_past_points(&h, hd, 4, 2), 2);
    fx_reset(&f);
    fx_util(&f, "GPU-A", -1); /* a failed read: the last real value, carried */
    assert_int_equal(history_push(&h, &f.s), 0);
    assert_point(util_of(&h, "GPU-A"), 0, MSRC_CARRIED, 94);
    hd = history_device(&h, "", "GPU-A");
    assert_int_equal(history_past_points(&h, hd, 0, 8), 5);
    assert_int_equal(history_past_points(&h, hd, 0, 3), 0);

    /* nothing after the ask: the carry state is the past's (its newest real
     * point two points back) */
    assert_int_equal(history_fill_past(&h, &p, 0), 0);
    hd = history_device(&h, "", "GPU-A");
    assert_int_equal(hd->s[HS_GPU_UTIL].misses, 2);
    assert_true(hd->s[HS_GPU_UTIL].last_real.v == 7);
    assert_int_equal(history_past_points(&h, hd, 0, 8), 8);
    /* a device with no history */
    snprintf(p.uuid, sizeof(p.uuid), "GPU-Z");
    assert_int_equal(history_fill_past(&h, &p, 0), -ENOENT);
    hist_past_free(&p);
    assert_null(p.pts);
    assert_int_equal(hist_past_init(&p, 0), -EINVAL);
    history_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_wrap_order),
        cmocka_unit_test(test_carry_ttl),
        cmocka_unit_test(test_recovery_resets_misses),
        cmocka_unit_test(test_never_seen_is_gaps),
        cmocka_unit_test(test_sources_preserved),
        cmocka_unit_test(test_carried_input_counts_as_miss),
        cmocka_unit_test(test_init_default_points),
        cmocka_unit_test(test_device_series_mapping),
        cmocka_unit_test(test_vram_total_kept),
        cmocka_unit_test(test_mig_reenumeration_follows_uuid),
        cmocka_unit_test(test_prune_and_fresh_return),
        cmocka_unit_test(test_same_count_reconfiguration_prunes),
        cmocka_unit_test(test_mig_parent_vram_is_instances_sum),
        cmocka_unit_test(test_short_absence_no_carry_across),
        cmocka_unit_test(test_empty_and_duplicate_uuid),
        cmocka_unit_test(test_host_series),
        cmocka_unit_test(test_steady_state_no_alloc),
        cmocka_unit_test(test_device_series_apart),
        cmocka_unit_test(test_rings_touched_up_front),
        cmocka_unit_test(test_enomem),
        cmocka_unit_test(test_fill_past),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
