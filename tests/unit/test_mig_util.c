/* The MIG utilisation chain and profile naming (src/backend/nvml/mig_util.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "backend/nvml/mig_util.h"

static struct mig_util_in base(const char *arch)
{
    struct mig_util_in in;
    memset(&in, 0, sizeof(in));
    in.arch = arch;
    in.slices = 3;
    in.slices_total = 7;
    in.parent_gpu_util = metric_none("NVML_ERROR_NOT_SUPPORTED");
    in.parent_mem_util = metric_none("NVML_ERROR_NOT_SUPPORTED");
    in.direct_rc = NVML_ERROR_NOT_SUPPORTED;
    in.proc_rc = NVML_ERROR_INVALID_ARGUMENT;
    return in;
}

/* Driver 535 on H100: every standard route fails -> none, never 0. */
static void test_535_hopper_all_fail_is_none(void **state)
{
    (void)state;
    struct mig_util_in in = base("Hopper");
    struct metric g, m, s;
    mig_util_resolve(&in, &g, &m, &s);
    assert_int_equal(g.src, MSRC_NONE);
    assert_int_equal(m.src, MSRC_NONE);
    assert_int_equal(s.src, MSRC_NONE);
    assert_non_null(strstr(g.why, "GPM"));
}

static void test_ampere_reason_names_dcgm(void **state)
{
    (void)state;
    struct mig_util_in in = base("Ampere");
    struct metric g, m, s;
    mig_util_resolve(&in, &g, &m, &s);
    assert_int_equal(g.src, MSRC_NONE);
    assert_non_null(strstr(g.why, "DCGM"));
}

static void test_direct_wins(void **state)
{
    (void)state;
    struct mig_util_in in = base("Hopper");
    in.direct_rc = NVML_SUCCESS;
    in.direct.gpu = 42;
    in.direct.memory = 17;
    in.proc_rc = NVML_SUCCESS;
    in.proc_sm = 90;
    struct metric g, m, s;
    mig_util_resolve(&in, &g, &m, &s);
    assert_int_equal(g.src, MSRC_DIRECT);
    assert_true(g.value == 42);
    assert_int_equal(m.src, MSRC_DIRECT);
    assert_true(m.value == 17);
    assert_int_equal(s.src, MSRC_PROCESS);
    assert_true(s.value == 90);
}

static void test_gpm_before_process(void **state)
{
    (void)state;
    struct mig_util_in in = base("Hopper");
    in.proc_rc = NVML_SUCCESS;
    in.proc_sm = 99;
    struct metric g, m, s;
    mig_util_resolve(&in, &g, &m, &s);
    assert_int_equal(g.src, MSRC_PROCESS);
    mig_util_apply_gpm("Hopper", (struct metric){.value = 55.5, .src = MSRC_GPM},
                       (struct metric){.value = 12, .src = MSRC_GPM},
                       (struct metric){.value = 40.25, .src = MSRC_GPM}, &g, &m, &s);
    assert_int_equal(g.src, MSRC_GPM);
    assert_true(g.value == 55.5);
    assert_int_equal(m.src, MSRC_GPM);
    assert_true(m.value == 12);
    assert_int_equal(s.src, MSRC_GPM);
    assert_true(s.value == 40.25);
}

/* GPM without a value: a Hopper MIG device says why GPM failed; a direct
 * reading is never replaced; a failed GPM metric leaves the others. */
static void test_gpm_reason_and_partial(void **state)
{
    (void)state;
    struct mig_util_in in = base("Hopper");
    struct metric g, m, s;
    mig_util_resolve(&in, &g, &m, &s);
    mig_util_apply_gpm("Hopper", metric_none("GPM off (--gpm off)"),
                       (struct metric){.value = 30, .src = MSRC_GPM},
                       metric_none("GPM returned NaN"), &g, &m, &s);
    assert_int_equal(g.src, MSRC_NONE);
    assert_string_equal(g.why, "GPM off (--gpm off)");
    assert_int_equal(m.src, MSRC_GPM);
    assert_true(m.value == 30);
    assert_string_equal(s.why, "GPM returned NaN");
    /* Ampere keeps its own reason */
    in = base("Ampere");
    mig_util_resolve(&in, &g, &m, &s);
    mig_util_apply_gpm("Ampere", metric_none("needs Hopper or later (GPM) or DCGM profiling"),
                       metric_none(NULL), metric_none(NULL), &g, &m, &s);
    assert_non_null(strstr(g.why, "NVML has no per-MIG utilisation before Hopper"));
    g = metric_direct(42);
    mig_util_apply_gpm("Hopper", (struct metric){.value = 1, .src = MSRC_GPM}, metric_none(NULL),
                       metric_none(NULL), &g, &m, &s);
    assert_int_equal(g.src, MSRC_DIRECT);
    assert_true(g.value == 42);
}

static void test_process_fallback(void **state)
{
    (void)state;
    struct mig_util_in in = base("Ampere");
    in.proc_rc = NVML_SUCCESS;
    in.proc_sm = 63;
    in.proc_mem = 21;
    struct metric g, m, s;
    mig_util_resolve(&in, &g, &m, &s);
    assert_int_equal(g.src, MSRC_PROCESS);
    assert_true(g.value == 63);
    assert_true(m.value == 21);
    assert_int_equal(s.src, MSRC_PROCESS);
}

/* Estimate only from a real (direct) parent utilisation: 29 % x 7/3. */
static void test_estimate_from_direct_parent(void **state)
{
    (void)state;
    struct mig_util_in in = base("Hopper");
    in.parent_gpu_util = metric_direct(30);
    struct metric g, m, s;
    mig_util_resolve(&in, &g, &m, &s);
    assert_int_equal(g.src, MSRC_ESTIMATE);
    assert_true(g.value > 69.99 && g.value < 70.01);
    assert_non_null(g.why);
    assert_int_equal(m.src, MSRC_NONE); /* parent mem util unknown: no estimate */
    assert_int_equal(s.src, MSRC_NONE);
}

static void test_estimate_clamped_to_100(void **state)
{
    (void)state;
    struct mig_util_in in = base("Hopper");
    in.slices = 1;
    in.parent_gpu_util = metric_direct(50);
    struct metric g, m, s;
    mig_util_resolve(&in, &g, &m, &s);
    assert_int_equal(g.src, MSRC_ESTIMATE);
    assert_true(g.value == 100);
}

/* The seed's bug: power samples (or anything not a direct utilisation) are
 * never scaled into a utilisation. */
static void test_no_estimate_from_non_direct_parent(void **state)
{
    (void)state;
    struct mig_util_in in = base("Hopper");
    in.parent_gpu_util = (struct metric){.value = 290.0, .src = MSRC_ESTIMATE};
    struct metric g, m, s;
    mig_util_resolve(&in, &g, &m, &s);
    assert_int_equal(g.src, MSRC_NONE);
    in.parent_gpu_util = (struct metric){.value = 29.0, .src = MSRC_CARRIED};
    mig_util_resolve(&in, &g, &m, &s);
    assert_int_equal(g.src, MSRC_NONE);
}

static void test_no_estimate_without_slices(void **state)
{
    (void)state;
    struct mig_util_in in = base("Hopper");
    in.parent_gpu_util = metric_direct(30);
    in.slices = -1;
    struct metric g, m, s;
    mig_util_resolve(&in, &g, &m, &s);
    assert_int_equal(g.src, MSRC_NONE);
    in.slices = 3;
    in.slices_total = -1;
    mig_util_resolve(&in, &g, &m, &s);
    assert_int_equal(g.src, MSRC_NONE);
}

static void test_profile_name(void **state)
{
    (void)state;
    char out[32];
    mig_profile_name(out, sizeof(out), 3, 3, 40192);
    assert_string_equal(out, "3g.40gb");
    mig_profile_name(out, sizeof(out), 1, 1, 9856);
    assert_string_equal(out, "1g.10gb");
    mig_profile_name(out, sizeof(out), 3, 1, 40192);
    assert_string_equal(out, "1c.3g.40gb");
    mig_profile_name(out, sizeof(out), 0, 0, 1);
    assert_string_equal(out, "");
}

static void test_profile_from_name(void **state)
{
    (void)state;
    char out[32];
    int slices = -1;
    assert_int_equal(mig_profile_from_name("NVIDIA H100 PCIe MIG 3g.40gb", out, sizeof(out),
                                           &slices), 0);
    assert_string_equal(out, "3g.40gb");
    assert_int_equal(slices, 3);
    slices = 2; /* attributes already known: kept */
    assert_int_equal(mig_profile_from_name("NVIDIA A100-SXM4-80GB MIG 1c.2g.20gb", out,
                                           sizeof(out), &slices), 0);
    assert_string_equal(out, "1c.2g.20gb");
    assert_int_equal(slices, 2);
    assert_int_equal(mig_profile_from_name("NVIDIA H100 PCIe", out, sizeof(out), NULL), -1);
    assert_int_equal(mig_profile_from_name("X MIG 3g.40", out, sizeof(out), NULL), -1);
    assert_int_equal(mig_profile_from_name("X MIG g.40gb", out, sizeof(out), NULL), -1);
    assert_int_equal(mig_profile_from_name("X MIG 3g.40gbx", out, sizeof(out), NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_535_hopper_all_fail_is_none),
        cmocka_unit_test(test_ampere_reason_names_dcgm),
        cmocka_unit_test(test_direct_wins),
        cmocka_unit_test(test_gpm_before_process),
        cmocka_unit_test(test_gpm_reason_and_partial),
        cmocka_unit_test(test_process_fallback),
        cmocka_unit_test(test_estimate_from_direct_parent),
        cmocka_unit_test(test_estimate_clamped_to_100),
        cmocka_unit_test(test_no_estimate_from_non_direct_parent),
        cmocka_unit_test(test_no_estimate_without_slices),
        cmocka_unit_test(test_profile_name),
        cmocka_unit_test(test_profile_from_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
