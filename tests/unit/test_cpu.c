/* test_cpu.c — /proc/stat parsing and busy % deltas (system/cpu.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "system/cpu.h"

#define CAP 2048

static struct cpu_times prev_t[CAP], cur_t[CAP];
static struct metric pct[CAP];

/* Parse text (a C string) into the given storage. */
static struct cpu_stat parse_into(const char *text, struct cpu_times *t, size_t cap)
{
    struct cpu_stat st = {.cores = t, .cap = cap};
    cpu_parse_stat(text, strlen(text), &st);
    return st;
}

static char *read_fixture(const char *name, size_t *len)
{
    const char *src = getenv("MIGMON_SRC");
    char path[4096];
    snprintf(path, sizeof(path), "%s/tests/fixtures/proc/%s", src ? src : ".", name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    static char buf[1 << 16];
    *len = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    char *copy = malloc(*len ? *len : 1); /* exact size: ASan sees any overread */
    memcpy(copy, buf, *len);
    return copy;
}

static struct cpu_stat parse_fixture(const char *name, struct cpu_times *t)
{
    size_t len;
    char *buf = read_fixture(name, &len);
    struct cpu_stat st = {.cores = t, .cap = CAP};
    cpu_parse_stat(buf, len, &st);
    free(buf);
    return st;
}

static void assert_pct(const struct metric *m, double want)
{
    if (!metric_ok(m))
        fail_msg("expected %.9f, got none (%s)", want, m->why ? m->why : "");
    if (m->src != MSRC_DIRECT || m->value < want - 1e-9 || m->value > want + 1e-9)
        fail_msg("expected %.9f, got %.9f", want, m->value);
}

static void assert_none(const struct metric *m, const char *why)
{
    if (metric_ok(m))
        fail_msg("expected none (%s), got %f", why, m->value);
    assert_non_null(m->why);
    assert_string_equal(m->why, why);
}

/* Real capture from a 2-CPU VM (kernel 6.18), 1.2 s apart with one core busy.
 *   total busy  2302+0+2258+0+117+0 = 4677 -> 2403+2260+117 = 4780: +103
 *   total idle  71336+330 = 71666 -> 71476+330 = 71806: +140; 103/243 = 42.3868%
 *   cpu0 busy 1737 -> 1740 (+3), idle 36430 -> 36549 (+119): 3/122
 *   cpu1 busy 2938 -> 3039 (+101), idle 35234 -> 35255 (+21): 101/122 */
static void test_two_core_capture(void **state)
{
    (void)state;
    struct cpu_stat a = parse_fixture("two-core/stat.1", prev_t);
    struct cpu_stat b = parse_fixture("two-core/stat.2", cur_t);
    assert_true(a.total_seen && a.total.ok);
    assert_int_equal(a.total.busy, 4677);
    assert_int_equal(a.total.idle, 71666);
    assert_int_equal(a.ncores, 2);
    assert_int_equal(a.needed, 2);
    assert_int_equal(a.cores[0].id, 0);
    assert_int_equal(a.cores[0].busy, 778 + 911 + 48);
    assert_int_equal(a.cores[0].idle, 36423 + 7);
    assert_int_equal(a.cores[1].id, 1);

    struct metric total;
    cpu_deltas(NULL, &b, &total, pct);
    assert_none(&total, "first sample: no delta yet");
    assert_none(&pct[0], "first sample: no delta yet");
    assert_none(&pct[1], "first sample: no delta yet");

    cpu_deltas(&a, &b, &total, pct);
    assert_pct(&total, 100.0 * 103 / 243);
    assert_pct(&pct[0], 100.0 * 3 / 122);
    assert_pct(&pct[1], 100.0 * 101 / 122);
}

/* 64 possible CPUs; 8..15 offline at sample 1. At sample 2 cpu8 is back and
 * cpu63 has gone. Core i (online at both) did i busy jiffies of 100, so its
 * busy % is i. The aggregate line sums every possible CPU (fs/proc/stat.c
 * for_each_possible_cpu), so it also moves by cpu8's 3/50 and cpu63's 20/50:
 *   busy (0+..+7) + (16+..+62) + 3 + 20 = 28 + 1833 + 23 = 1884
 *   total 55*100 + 50 + 50 = 5600 -> 33.642857% */
static void test_offline_cores(void **state)
{
    (void)state;
    struct cpu_stat a = parse_fixture("c64-offline/stat.1", prev_t);
    struct cpu_stat b = parse_fixture("c64-offline/stat.2", cur_t);
    assert_int_equal(a.ncores, 56);
    assert_int_equal(b.ncores, 56);
    assert_int_equal(a.cores[7].id, 7);
    assert_int_equal(a.cores[8].id, 16);
    assert_int_equal(a.cores[55].id, 63);
    assert_int_equal(b.cores[8].id, 8);
    assert_int_equal(b.cores[9].id, 16);
    assert_int_equal(b.cores[55].id, 62);

    struct metric total;
    cpu_deltas(&a, &b, &total, pct);
    assert_pct(&total, 100.0 * 1884 / 5600);
    for (size_t i = 0; i < b.ncores; i++) {
        if (b.cores[i].id == 8)
            assert_none(&pct[i], "core was offline at the previous sample");
        else
            assert_pct(&pct[i], b.cores[i].id);
    }
}

/* CentOS 6 (2.6.32): nine counters, no guest_nice. Busy/idle jiffies per core
 * 50/50, 25/175, 0/200, 100/0: 175 busy of 100+200+200+100 = 600. */
static void test_old_kernel(void **state)
{
    (void)state;
    struct cpu_stat a = parse_fixture("old-kernel/stat.1", prev_t);
    struct cpu_stat b = parse_fixture("old-kernel/stat.2", cur_t);
    assert_true(a.total.ok);
    assert_int_equal(b.ncores, 4);
    struct metric total;
    cpu_deltas(&a, &b, &total, pct);
    assert_pct(&total, 100.0 * 175 / 600);
    assert_pct(&pct[0], 50);
    assert_pct(&pct[1], 12.5);
    assert_pct(&pct[2], 0);
    assert_pct(&pct[3], 100);
}

/* guest is already inside user (and guest_nice inside nice): +100 user of
 * which +50 guest, +100 idle is 50%, not 150/250 = 60%. */
static void test_guest_not_double_counted(void **state)
{
    (void)state;
    struct cpu_stat a = parse_into("cpu  100 10 0 100 0 0 0 0 50 5\n"
                                   "cpu0 100 10 0 100 0 0 0 0 50 5\n",
                                   prev_t, CAP);
    struct cpu_stat b = parse_into("cpu  200 10 0 200 0 0 0 0 100 5\n"
                                   "cpu0 200 10 0 200 0 0 0 0 100 5\n",
                                   cur_t, CAP);
    struct metric total;
    cpu_deltas(&a, &b, &total, pct);
    assert_pct(&total, 50);
    assert_pct(&pct[0], 50);
}

/* iowait is idle time: +25 system, +75 iowait is 25% busy. And when the
 * kernel moves time from iowait to idle after the fact (iowait goes down,
 * idle+iowait still goes up) the tick still has a value. */
static void test_iowait_is_idle(void **state)
{
    (void)state;
    struct cpu_stat a = parse_into("cpu0 0 0 100 1000 500 0 0 0\n", prev_t, CAP);
    struct cpu_stat b = parse_into("cpu0 0 0 125 1000 575 0 0 0\n", cur_t, CAP);
    struct metric total;
    cpu_deltas(&a, &b, &total, pct);
    assert_pct(&pct[0], 25);
    assert_none(&total, "no aggregate cpu line in /proc/stat");

    b = parse_into("cpu0 10 0 100 1100 490 0 0 0\n", cur_t, CAP); /* iowait -10, idle +100 */
    cpu_deltas(&a, &b, &total, pct);
    assert_pct(&pct[0], 10); /* +10 busy, +90 idle+iowait */
}

/* Every counter folds into busy or idle: irq, softirq and steal are busy. */
static void test_field_folding(void **state)
{
    (void)state;
    struct cpu_stat a = parse_into("cpu  1 2 3 4 5 6 7 8 9 10\n", prev_t, CAP);
    assert_true(a.total.ok);
    assert_int_equal(a.total.busy, 1 + 2 + 3 + 6 + 7 + 8);
    assert_int_equal(a.total.idle, 4 + 5);
    /* 2.4-era four counters: fine; missing ones count as 0. */
    a = parse_into("cpu  1 2 3 4\n", prev_t, CAP);
    assert_true(a.total.ok);
    assert_int_equal(a.total.busy, 6);
    assert_int_equal(a.total.idle, 4);
    /* A future eleventh counter is ignored. */
    a = parse_into("cpu  1 2 3 4 5 6 7 8 9 10 11\n", prev_t, CAP);
    assert_true(a.total.ok);
    assert_int_equal(a.total.busy, 27);
}

static void test_backwards_and_zero(void **state)
{
    (void)state;
    struct cpu_stat a =
        parse_into("cpu  100 0 0 100\ncpu0 100 0 0 100\ncpu1 5 0 0 5\n", prev_t, CAP);
    struct cpu_stat b = parse_into("cpu  90 0 0 300\ncpu0 100 0 0 100\ncpu1 6 0 0 9\n", cur_t, CAP);
    struct metric total;
    cpu_deltas(&a, &b, &total, pct);
    assert_none(&total, "counter went backwards");
    assert_none(&pct[0], "no clock ticks elapsed");
    assert_pct(&pct[1], 20);
    /* idle going backwards (as the aggregate does when a CPU goes offline on
     * NOHZ kernels) is none too. */
    b = parse_into("cpu  200 0 0 50\n", cur_t, CAP);
    cpu_deltas(&a, &b, &total, pct);
    assert_none(&total, "counter went backwards");
    /* Wrapped to small numbers: none, never a huge or negative percentage. */
    b = parse_into("cpu  3 0 0 4\n", cur_t, CAP);
    cpu_deltas(&a, &b, &total, pct);
    assert_none(&total, "counter went backwards");
}

/* Counters near 2^64: the delta is exact; a sum that overflows is malformed. */
static void test_huge_counters(void **state)
{
    (void)state;
    struct cpu_stat a =
        parse_into("cpu  9223372036854775000 0 0 9223372036854775000\n", prev_t, CAP);
    struct cpu_stat b =
        parse_into("cpu  9223372036854775100 0 0 9223372036854775300\n", cur_t, CAP);
    assert_true(a.total.ok && b.total.ok);
    struct metric total;
    cpu_deltas(&a, &b, &total, pct);
    assert_pct(&total, 25);
    /* Past 2^53 jiffies 100.0 * db / dt rounded to 100.00000000000001; the
     * fuzzer found it (fuzz/corpus/procstat/crash-pct-over-100-rounding). */
    a = parse_into("cpu0 423 0 0 0\n", prev_t, CAP);
    b = parse_into("cpu0 6829748317759761 7 8 0\n", cur_t, CAP);
    cpu_deltas(&a, &b, &total, pct);
    assert_true(metric_ok(&pct[0]) && pct[0].value <= 100.0);
    assert_pct(&pct[0], 100);
    /* busy + idle > 2^64 */
    a = parse_into("cpu  18446744073709551615 0 0 1\n", prev_t, CAP);
    assert_true(a.total_seen);
    assert_false(a.total.ok);
    /* one counter > 2^64 */
    a = parse_into("cpu  18446744073709551616 0 0 1\n", prev_t, CAP);
    assert_false(a.total.ok);
    /* busy alone overflowing */
    a = parse_into("cpu  18446744073709551615 1 0 0\n", prev_t, CAP);
    assert_false(a.total.ok);
    b = parse_into("cpu  18446744073709551615 2 0 0\n", cur_t, CAP);
    cpu_deltas(&a, &b, &total, pct);
    assert_none(&total, "malformed /proc/stat line");
}

static void test_malformed_lines(void **state)
{
    (void)state;
    struct cpu_stat st = parse_into("cpu  -1 0 0 5\n"    /* negative */
                                    "cpu0 1 2 3\n"       /* too few counters */
                                    "cpu1 1 2 3 4x\n"    /* junk in a number */
                                    "cpu2 1 2 3 4 \n"    /* trailing blank is fine */
                                    "cpu3\t1\t2\t3\t4\n" /* tabs are fine */
                                    "cpu4 1 2 3 4\r\n"   /* CR is not */
                                    "cpu5 \n"            /* nothing */
                                    "cpux 1 2 3 4\n"     /* not a cpu line */
                                    "cpu6: 1 2 3 4\n"    /* not a cpu line */
                                    "cpu7 1 2 3 4\n",
                                    cur_t, CAP);
    assert_true(st.total_seen);
    assert_false(st.total.ok);
    assert_int_equal(st.ncores, 7);
    const int ids[] = {0, 1, 2, 3, 4, 5, 7};
    const bool ok[] = {false, false, true, true, false, false, true};
    for (int i = 0; i < 7; i++) {
        assert_int_equal(st.cores[i].id, ids[i]);
        assert_int_equal(st.cores[i].ok, ok[i]);
    }
    /* A malformed line has no delta either side. */
    struct cpu_stat a = parse_into("cpu0 1 2 3 4\n", prev_t, CAP);
    struct metric total;
    cpu_deltas(&a, &st, &total, pct);
    assert_none(&pct[0], "malformed /proc/stat line");
}

/* Kernel order is ascending; anything else is dropped, first aggregate wins. */
static void test_order_and_duplicates(void **state)
{
    (void)state;
    struct cpu_stat st = parse_into("cpu  1 1 1 1\ncpu3 1 1 1 1\ncpu  9 9 9 9\ncpu3 2 2 2 2\n"
                                    "cpu1 1 1 1 1\ncpu8 1 1 1 1\ncpu8191 1 0 0 0\ncpu8192 1 0 0 0\n"
                                    "cpu99999999999999999999 1 0 0 0\n",
                                    cur_t, CAP);
    assert_int_equal(st.total.busy, 3);
    assert_int_equal(st.ncores, 3);
    assert_int_equal(st.cores[0].id, 3);
    assert_int_equal(st.cores[0].busy, 3);
    assert_int_equal(st.cores[1].id, 8);
    assert_int_equal(st.cores[2].id, CPU_MAX_ID - 1);
}

/* Only whole lines count: a read cut mid-number must not give a short value. */
static void test_truncated(void **state)
{
    (void)state;
    const char *text = "cpu  100 0 0 100\ncpu0 50 0 0 50\ncpu1 50 0 0 5";
    struct cpu_stat st = parse_into(text, cur_t, CAP);
    assert_true(st.total.ok);
    assert_int_equal(st.ncores, 1);
    for (size_t n = 0; n <= strlen(text); n++) {
        struct cpu_stat s = {.cores = cur_t, .cap = CAP};
        cpu_parse_stat(text, n, &s);
        assert_int_equal(s.total_seen, n >= 17);
        assert_int_equal(s.ncores, n >= 32 ? 1 : 0);
    }
    st = parse_into("", cur_t, CAP);
    assert_false(st.total_seen);
    assert_int_equal(st.ncores, 0);
    /* A NUL inside a line makes that line malformed, nothing worse. */
    const char nul[] = "cpu0 1 2\0 3 4\ncpu1 1 2 3 4\n";
    struct cpu_stat s = {.cores = cur_t, .cap = CAP};
    cpu_parse_stat(nul, sizeof(nul) - 1, &s);
    assert_int_equal(s.ncores, 2);
    assert_false(s.cores[0].ok);
    assert_true(s.cores[1].ok);
}

/* Too little storage: what fits is filled, needed says how much to grow. */
static void test_small_storage(void **state)
{
    (void)state;
    struct cpu_stat st =
        parse_into("cpu  1 1 1 1\ncpu0 1 1 1 1\ncpu2 1 1 1 1\ncpu5 1 1 1 1\n", cur_t, 2);
    assert_int_equal(st.ncores, 2);
    assert_int_equal(st.needed, 3);
    assert_int_equal(st.cores[1].id, 2);
    st = parse_into("cpu  1 1 1 1\ncpu0 1 1 1 1\n", cur_t, 0);
    assert_int_equal(st.ncores, 0);
    assert_int_equal(st.needed, 1);
    assert_true(st.total.ok);
}

/* 1 core and 1024 sparse cores (even ids 0..2046), generated. */
static void test_core_counts(void **state)
{
    (void)state;
    static char a[256 * 1024], b[256 * 1024];
    size_t na = 0, nb = 0;
    na += (size_t)sprintf(a + na, "cpu  0 0 0 0\n");
    nb += (size_t)sprintf(b + nb, "cpu  0 0 0 0\n");
    for (int i = 0; i < 1024; i++) {
        /* core 2i: busy += i % 101 over 100 jiffies */
        uint64_t base = 123456789ULL * (uint64_t)(i + 1);
        na += (size_t)sprintf(a + na, "cpu%d %llu 0 0 %llu 0 0 0 0 0 0\n", 2 * i,
                              (unsigned long long)base, (unsigned long long)base);
        nb += (size_t)sprintf(b + nb, "cpu%d %llu 0 0 %llu 0 0 0 0 0 0\n", 2 * i,
                              (unsigned long long)(base + (uint64_t)(i % 101)),
                              (unsigned long long)(base + 100 - (uint64_t)(i % 101)));
    }
    struct cpu_stat sa = {.cores = prev_t, .cap = CAP}, sb = {.cores = cur_t, .cap = CAP};
    cpu_parse_stat(a, na, &sa);
    cpu_parse_stat(b, nb, &sb);
    assert_int_equal(sa.ncores, 1024);
    assert_int_equal(sb.ncores, 1024);
    struct metric total;
    cpu_deltas(&sa, &sb, &total, pct);
    for (int i = 0; i < 1024; i++) {
        assert_int_equal(sb.cores[i].id, 2 * i);
        assert_pct(&pct[i], i % 101);
    }

    struct cpu_stat one1 =
        parse_into("cpu  5 0 5 90 0 0 0 0 0 0\ncpu0 5 0 5 90 0 0 0 0 0 0\n", prev_t, CAP);
    struct cpu_stat one2 =
        parse_into("cpu  6 0 5 99 0 0 0 0 0 0\ncpu0 6 0 5 99 0 0 0 0 0 0\n", cur_t, CAP);
    cpu_deltas(&one1, &one2, &total, pct);
    assert_pct(&total, 10);
    assert_pct(&pct[0], 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_core_capture),   cmocka_unit_test(test_offline_cores),
        cmocka_unit_test(test_old_kernel),         cmocka_unit_test(test_guest_not_double_counted),
        cmocka_unit_test(test_iowait_is_idle),     cmocka_unit_test(test_field_folding),
        cmocka_unit_test(test_backwards_and_zero), cmocka_unit_test(test_huge_counters),
        cmocka_unit_test(test_malformed_lines),    cmocka_unit_test(test_order_and_duplicates),
        cmocka_unit_test(test_truncated),          cmocka_unit_test(test_small_storage),
        cmocka_unit_test(test_core_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
