/* test_meminfo.c — /proc/meminfo parsing and htop's RAM breakdown (system/meminfo.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "system/meminfo.h"

#define KB 1024.0

static void derive_text(const char *text, size_t len, struct mem_metrics *m)
{
    struct meminfo_raw raw;
    char *copy = malloc(len ? len : 1); /* exact size: ASan sees any overread */
    memcpy(copy, text, len);
    meminfo_parse(copy, len, &raw);
    free(copy);
    meminfo_derive(&raw, m);
}

static void derive_str(const char *text, struct mem_metrics *m)
{
    derive_text(text, strlen(text), m);
}

static void derive_fixture(const char *name, struct mem_metrics *m)
{
    const char *src = getenv("MIGMON_SRC");
    char path[4096];
    snprintf(path, sizeof(path), "%s/tests/fixtures/proc/%s/meminfo", src ? src : ".", name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    derive_text(buf, n, m);
}

static void assert_bytes(const struct metric *m, double kb)
{
    if (!metric_ok(m))
        fail_msg("expected %.0f kB, got none (%s)", kb, m->why ? m->why : "");
    if (m->src != MSRC_DIRECT || m->value != kb * KB)
        fail_msg("expected %.0f B, got %.0f", kb * KB, m->value);
}

static void assert_none(const struct metric *m, const char *why)
{
    if (metric_ok(m))
        fail_msg("expected none (%s), got %f", why, m->value);
    assert_non_null(m->why);
    assert_string_equal(m->why, why);
}

static void assert_parts_sum(const struct mem_metrics *m)
{
    assert_true(m->used.value + m->cached.value + m->buffers.value + m->free.value ==
                m->total.value);
}

/* Real capture, 2-CPU VM, kernel 6.18, no swap.
 *   cached = 225740 + 45128 - 8952 = 261916
 *   used   = 24683620 - 24325964 - 2960 - 261916 = 92780 */
static void test_two_core(void **state)
{
    (void)state;
    struct mem_metrics m;
    derive_fixture("two-core", &m);
    assert_bytes(&m.total, 24683620);
    assert_bytes(&m.free, 24325964);
    assert_bytes(&m.available, 24363244);
    assert_bytes(&m.buffers, 2960);
    assert_bytes(&m.cached, 261916);
    assert_bytes(&m.used, 92780);
    assert_bytes(&m.swap_total, 0);
    assert_bytes(&m.swap_used, 0);
    assert_parts_sum(&m);
}

/* 256 GiB server, 5.15.
 *   cached = 98172636 + 6291456 - 4718592 = 99745500
 *   used   = 263859516 - 118273644 - 2873412 - 99745500 = 42966960
 *   swap   = 8388604 - 8123392 = 265212 */
static void test_c64(void **state)
{
    (void)state;
    struct mem_metrics m;
    derive_fixture("c64-offline", &m);
    assert_bytes(&m.total, 263859516);
    assert_bytes(&m.cached, 99745500);
    assert_bytes(&m.used, 42966960);
    assert_bytes(&m.available, 221736448);
    assert_bytes(&m.swap_total, 8388604);
    assert_bytes(&m.swap_used, 265212);
    assert_parts_sum(&m);
}

/* 1 TiB RAM, 256 GiB swap: byte values past 2^40, still exact.
 *   cached = 387973120 + 25165824 - 16777216 = 396361728
 *   used   = 1056449876 - 412316860 - 10485760 - 396361728 = 237285528
 *   swap   = 268435452 - 201326588 = 67108864 (64 GiB) */
static void test_huge_swap(void **state)
{
    (void)state;
    struct mem_metrics m;
    derive_fixture("huge-swap", &m);
    assert_bytes(&m.total, 1056449876);
    assert_true(m.total.value > 1099511627776.0 * 0.98);
    assert_bytes(&m.cached, 396361728);
    assert_bytes(&m.used, 237285528);
    assert_bytes(&m.free, 412316860);
    assert_bytes(&m.available, 803209216);
    assert_bytes(&m.swap_total, 268435452);
    assert_bytes(&m.swap_used, 67108864);
    assert_true(m.swap_used.value == 68719476736.0);
    assert_parts_sum(&m);
}

/* No swap is 0 and 0: real zeros, not unknowns.
 *   cached = 14987124 + 1310720 - 1048576 = 15249268
 *   used   = 32880524 - 9127384 - 412876 - 15249268 = 8090996 */
static void test_no_swap(void **state)
{
    (void)state;
    struct mem_metrics m;
    derive_fixture("no-swap", &m);
    assert_bytes(&m.swap_total, 0);
    assert_bytes(&m.swap_used, 0);
    assert_bytes(&m.cached, 15249268);
    assert_bytes(&m.used, 8090996);
}

/* CentOS 6, 2.6.32: no MemAvailable; the rest is all there.
 *   cached = 11012384 + 2105356 - 153088 = 12964652
 *   used   = 16334480 - 2306764 - 398712 - 12964652 = 664352
 *   swap   = 8191992 - 8101744 = 90248 */
static void test_old_kernel(void **state)
{
    (void)state;
    struct mem_metrics m;
    derive_fixture("old-kernel", &m);
    assert_none(&m.available, "no MemAvailable in /proc/meminfo (kernel before 3.14)");
    assert_bytes(&m.total, 16334480);
    assert_bytes(&m.cached, 12964652);
    assert_bytes(&m.used, 664352);
    assert_bytes(&m.swap_used, 90248);
}

#define GOOD_HEAD "MemTotal: 1000 kB\nMemFree: 100 kB\nMemAvailable: 600 kB\nBuffers: 50 kB\n"
#define GOOD_TAIL "SwapTotal: 400 kB\nSwapFree: 300 kB\n"

static void test_synthetic_good(void **state)
{
    (void)state;
    struct mem_metrics m;
    /* order does not matter, unknown lines are skipped */
    derive_str("Foo: 1 kB\n" GOOD_TAIL "Shmem: 20 kB\nCached: 300 kB\nSReclaimable: 70 kB\n"
               "HugePages_Total: 0\n" GOOD_HEAD,
               &m);
    assert_bytes(&m.cached, 350);
    assert_bytes(&m.used, 500);
    assert_bytes(&m.swap_used, 100);
    assert_parts_sum(&m);
}

static void test_malformed_fields(void **state)
{
    (void)state;
    struct mem_metrics m;
    const char *bad_cached[] = {
        "Cached: -300 kB\n",                    /* negative */
        "Cached: 300\n",                        /* no unit */
        "Cached: 300 MB\n",                     /* wrong unit */
        "Cached: 300 kB junk\n",                /* trailing junk */
        "Cached: 3x00 kB\n",                    /* junk in the number */
        "Cached: kB\n",                         /* no number */
        "Cached: 99999999999999999999999 kB\n", /* overflows uint64 */
        "Cached: 8796093022209 kB\n",           /* 2^43 + 1 kB: past 8 PiB */
        "Cached: 300 kB\nCached: 300 kB\n",     /* twice: which one? */
    };
    for (size_t i = 0; i < sizeof(bad_cached) / sizeof(bad_cached[0]); i++) {
        char text[512];
        snprintf(text, sizeof(text), GOOD_HEAD GOOD_TAIL "Shmem: 20 kB\nSReclaimable: 70 kB\n%s",
                 bad_cached[i]);
        derive_str(text, &m);
        assert_none(&m.cached, "malformed /proc/meminfo line");
        assert_none(&m.used, "needs MemFree, Buffers and cached");
        assert_bytes(&m.total, 1000); /* the rest is unaffected */
        assert_bytes(&m.free, 100);
        assert_bytes(&m.swap_used, 100);
    }
    /* 2^43 kB exactly is the largest accepted value */
    derive_str("SwapTotal: 8796093022208 kB\nSwapFree: 0 kB\n", &m);
    assert_bytes(&m.swap_used, 8796093022208.0);
    assert_none(&m.total, "field missing from /proc/meminfo");
}

static void test_inconsistent(void **state)
{
    (void)state;
    struct mem_metrics m;
    /* free > total, swap free > swap total */
    derive_str(
        "MemTotal: 1000 kB\nMemFree: 1001 kB\nMemAvailable: 2000 kB\nBuffers: 5000 kB\n"
        "Cached: 10 kB\nSReclaimable: 0 kB\nShmem: 0 kB\nSwapTotal: 10 kB\nSwapFree: 11 kB\n",
        &m);
    assert_none(&m.free, "larger than MemTotal");
    assert_none(&m.available, "larger than MemTotal");
    assert_none(&m.buffers, "larger than MemTotal");
    assert_bytes(&m.cached, 10);
    assert_none(&m.used, "needs MemFree, Buffers and cached");
    assert_bytes(&m.swap_total, 10);
    assert_none(&m.swap_used, "SwapFree larger than SwapTotal");
    /* Shmem > Cached + SReclaimable; then a cached > total */
    derive_str(GOOD_HEAD GOOD_TAIL "Cached: 10 kB\nSReclaimable: 5 kB\nShmem: 16 kB\n", &m);
    assert_none(&m.cached, "Shmem larger than Cached + SReclaimable");
    derive_str(GOOD_HEAD GOOD_TAIL "Cached: 1000 kB\nSReclaimable: 5 kB\nShmem: 4 kB\n", &m);
    assert_none(&m.cached, "larger than MemTotal");
    /* parts fine alone but summing past total: used would be negative */
    derive_str(GOOD_HEAD GOOD_TAIL "Cached: 900 kB\nSReclaimable: 0 kB\nShmem: 0 kB\n", &m);
    assert_bytes(&m.cached, 900);
    assert_none(&m.used, "MemFree + Buffers + cached larger than MemTotal");
    /* MemTotal 0 or missing: no RAM metric at all, swap still fine */
    derive_str("MemTotal: 0 kB\nMemFree: 0 kB\n" GOOD_TAIL, &m);
    assert_none(&m.total, "MemTotal is 0");
    assert_none(&m.free, "MemTotal is 0");
    assert_bytes(&m.swap_used, 100);
    derive_str("MemFree: 5 kB\n" GOOD_TAIL, &m);
    assert_none(&m.free, "field missing from /proc/meminfo");
    /* SReclaimable missing (before 2.6.19): no honest cached */
    derive_str(GOOD_HEAD GOOD_TAIL "Cached: 300 kB\nShmem: 20 kB\n", &m);
    assert_none(&m.cached, "field missing from /proc/meminfo");
    /* swap missing */
    derive_str(GOOD_HEAD, &m);
    assert_none(&m.swap_total, "field missing from /proc/meminfo");
    assert_none(&m.swap_used, "field missing from /proc/meminfo");
    derive_str(GOOD_HEAD "SwapTotal: 5 kB\n", &m);
    assert_bytes(&m.swap_total, 5);
    assert_none(&m.swap_used, "field missing from /proc/meminfo");
}

/* A read cut short: the partial last line is not trusted. */
static void test_truncated(void **state)
{
    (void)state;
    struct mem_metrics m;
    const char *text = GOOD_HEAD "Cached: 300 kB\nSReclaimable: 70 kB\nShmem: 20 kB\n"
                                 "SwapTotal: 400 kB\nSwapFree: 3";
    derive_str(text, &m);
    assert_bytes(&m.swap_total, 400);
    assert_none(&m.swap_used, "field missing from /proc/meminfo");
    /* every prefix: never a crash, and whatever is known is right */
    for (size_t n = 0; n <= strlen(text); n++) {
        derive_text(text, n, &m);
        if (metric_ok(&m.total))
            assert_bytes(&m.total, 1000);
        if (metric_ok(&m.used))
            assert_bytes(&m.used, 500);
    }
    derive_str("", &m);
    assert_none(&m.total, "field missing from /proc/meminfo");
    /* NUL bytes inside lines */
    const char nul[] = "MemTotal: 1000 kB\nMemFree: 1\0 kB\nBuffers: 5 kB\n";
    derive_text(nul, sizeof(nul) - 1, &m);
    assert_bytes(&m.total, 1000);
    assert_none(&m.free, "malformed /proc/meminfo line");
    assert_bytes(&m.buffers, 5);
}

static void test_none_helper(void **state)
{
    (void)state;
    struct mem_metrics m;
    meminfo_none(&m, "gone");
    assert_none(&m.total, "gone");
    assert_none(&m.swap_used, "gone");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_core),         cmocka_unit_test(test_c64),
        cmocka_unit_test(test_huge_swap),        cmocka_unit_test(test_no_swap),
        cmocka_unit_test(test_old_kernel),       cmocka_unit_test(test_synthetic_good),
        cmocka_unit_test(test_malformed_fields), cmocka_unit_test(test_inconsistent),
        cmocka_unit_test(test_truncated),        cmocka_unit_test(test_none_helper),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
