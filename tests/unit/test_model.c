/* The model's checks (src/core/model.c): a value outside its plausible range is
 * none with the value in the reason, never shown; used above total makes
 * both none; reasons live in the snapshot's notes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string.h>
#include <cmocka.h>

#include "core/snapshot.h"

static struct device *one_device(struct snapshot *s)
{
    memset(s, 0, sizeof(*s));
    assert_int_equal(snapshot_reserve(s, 1), 0);
    s->ndevices = 1;
    struct device *d = &s->devices[0];
    memset(d, 0, sizeof(*d));
    for (int k = 0; k < M_COUNT; k++)
        d->m[k] = metric_direct(1);
    return d;
}

static void test_absurd_values_become_none(void **state)
{
    (void)state;
    struct snapshot s;
    struct device *d = one_device(&s);
    d->m[M_GPU_UTIL] = metric_direct(4294967295.0);
    d->m[M_TEMP] = metric_direct(4294967295.0);
    d->m[M_PCIE_GEN] = metric_direct(4294967295.0);
    d->m[M_POWER] = metric_direct(4294967.295);
    d->m[M_FAN] = metric_direct(150); /* an intended speed above 100 is legal */
    d->m[M_CLK_SM] = metric_direct(1980);
    d->m[M_MEM_USED] = metric_direct((double)UINT64_MAX); /* all ones */
    d->m[M_ENERGY] = metric_direct(1e300);
    snapshot_check_ranges(&s);
    /* 2^64-1 cannot be held by a double: not printed as a wrong exact number */
    assert_string_equal(d->m[M_MEM_USED].why,
                        "driver returned about 2^64 (1.84467e+19; all ones: not available?)");
    assert_string_equal(d->m[M_ENERGY].why, "driver returned about 1e+300");
    assert_int_equal(d->m[M_GPU_UTIL].src, MSRC_NONE);
    assert_string_equal(d->m[M_GPU_UTIL].why, "driver returned 4294967295");
    assert_int_equal(d->m[M_TEMP].src, MSRC_NONE);
    assert_int_equal(d->m[M_PCIE_GEN].src, MSRC_NONE);
    assert_string_equal(d->m[M_POWER].why, "driver returned 4294967.295");
    assert_int_equal(d->m[M_FAN].src, MSRC_DIRECT);
    assert_true(d->m[M_CLK_SM].value == 1980);
    snapshot_free(&s);
}

static void test_used_above_total(void **state)
{
    (void)state;
    struct snapshot s;
    struct device *d = one_device(&s);
    d->m[M_MEM_USED] = metric_direct(90.0 * 1024 * 1024 * 1024);
    d->m[M_MEM_TOTAL] = metric_direct(80.0 * 1024 * 1024 * 1024);
    snapshot_check_ranges(&s);
    assert_int_equal(d->m[M_MEM_USED].src, MSRC_NONE);
    assert_int_equal(d->m[M_MEM_TOTAL].src, MSRC_NONE);
    assert_string_equal(d->m[M_MEM_USED].why,
                        "driver returned used 96636764160 > total 85899345920 bytes");
    /* 2^64-1 bytes is above a pebibyte */
    snapshot_free(&s);
    d = one_device(&s);
    d->m[M_MEM_USED] = metric_direct(18446744073709551615.0);
    snapshot_check_ranges(&s);
    assert_int_equal(d->m[M_MEM_USED].src, MSRC_NONE);
    snapshot_free(&s);
}

static void test_notes(void **state)
{
    (void)state;
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    const char *a = snapshot_note(&s, "stalled %d s in %s", 12, "nvmlDeviceGetPowerUsage");
    const char *b = snapshot_note(&s, "x");
    assert_string_equal(a, "stalled 12 s in nvmlDeviceGetPowerUsage");
    assert_string_equal(b, "x");
    assert_true(b > a);
    snapshot_notes_reset(&s);
    assert_ptr_equal(snapshot_note(&s, "y"), a); /* reused from the start */
    /* full: a static fallback, never a torn string */
    char big[5000];
    memset(big, 'z', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    const char *last = NULL;
    for (int i = 0; i < 5; i++)
        last = snapshot_note(&s, "%s", big);
    assert_string_equal(last, "(reason not stored: too many this tick)");
    snapshot_free(&s);
}

/* docs/metrics.md documents every metric: its JSON name appears in the
 * table as `name` with its range and sources. */
static void test_every_metric_documented(void **state)
{
    (void)state;
    const char *src = getenv("MIGMON_SRC");
    char path[4096];
    snprintf(path, sizeof(path), "%s/docs/metrics.md", src ? src : ".");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char doc[65536];
    size_t n = fread(doc, 1, sizeof(doc) - 1, f);
    fclose(f);
    doc[n] = '\0';
    for (int i = 0; i < M_COUNT; i++) {
        char key[96];
        snprintf(key, sizeof(key), "| `%s` |", metric_info((enum metric_id)i)->name);
        if (!strstr(doc, key))
            fail_msg("docs/metrics.md has no row for %s", metric_info((enum metric_id)i)->name);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_absurd_values_become_none),
        cmocka_unit_test(test_used_above_total),
        cmocka_unit_test(test_notes),
        cmocka_unit_test(test_every_metric_documented),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
