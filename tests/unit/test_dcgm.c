/*
 * DCGM's values as metrics (src/backend/dcgm/dcgm.c) and the --dcgm argument
 * (src/app/cli.c). The helper and client are tested end to end against the
 * simulated libdcgm (tests/e2e/test_dcgm.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "app/cli.h"
#include "backend/dcgm/dcgm.h"
#include "backend/dcgm/dcgm_api.h"

static struct dcgm_view view(void)
{
    struct dcgm_view v;
    memset(&v, 0, sizeof(v));
    v.ok = true;
    for (int k = 0; k < DCGM_NMETRICS; k++)
        v.st[k] = DCGM_ST_OK;
    return v;
}

static void test_ratio_becomes_percent(void **state)
{
    (void)state;
    struct dcgm_view v = view();
    v.v[DCGM_GR_ENGINE] = 0.45;
    struct metric m = dcgm_metric(&v, DCGM_GR_ENGINE);
    assert_int_equal(m.src, MSRC_DCGM);
    assert_true(m.value > 44.999 && m.value < 45.001);
    assert_int_equal(m.scope, MSCOPE_DEVICE);
    assert_string_equal(metric_source_name(m.src), "dcgm");
}

static void test_rates_are_bytes_per_second(void **state)
{
    (void)state;
    struct dcgm_view v = view();
    v.v[DCGM_PCIE_TX] = 153600000.0;
    struct metric m = dcgm_metric(&v, DCGM_PCIE_TX);
    assert_int_equal(m.src, MSRC_DCGM);
    assert_true(m.value == 153600000.0);
    v.v[DCGM_PCIE_TX] = -1;
    assert_int_equal(dcgm_metric(&v, DCGM_PCIE_TX).src, MSRC_NONE);
}

/* A BLANK, an unwatched field, an error and an overshoot are none with a
 * reason that names the cause, never 0 or a clipped 100. */
static void test_no_fake_values(void **state)
{
    (void)state;
    struct dcgm_view v = view();
    v.st[DCGM_GR_ENGINE] = DCGM_VALUE_BLANK;
    struct metric m = dcgm_metric(&v, DCGM_GR_ENGINE);
    assert_int_equal(m.src, MSRC_NONE);
    assert_non_null(strstr(m.why, "BLANK"));
    v.st[DCGM_TENSOR] = DCGM_VALUE_UNWATCHED;
    m = dcgm_metric(&v, DCGM_TENSOR);
    assert_int_equal(m.src, MSRC_NONE);
    assert_non_null(strstr(m.why, "PROFILING_MULTI_PASS"));
    v.st[DCGM_SM_OCC] = DCGM_ST_GENERIC_ERROR;
    assert_string_equal(dcgm_metric(&v, DCGM_SM_OCC).why, "DCGM returned an error for this value");
    v.v[DCGM_SM_ACTIVE] = 1.29; /* reported on a GPU instance */
    m = dcgm_metric(&v, DCGM_SM_ACTIVE);
    assert_int_equal(m.src, MSRC_NONE);
    assert_non_null(strstr(m.why, "outside 0-1"));
    v.ok = false;
    v.why = "DCGM off (--dcgm off)";
    assert_string_equal(dcgm_metric(&v, DCGM_FP16).why, "DCGM off (--dcgm off)");
}

/* GPU-instance values on one of several compute instances say so. */
static void test_gi_scope(void **state)
{
    (void)state;
    struct dcgm_view v = view();
    v.v[DCGM_GR_ENGINE] = 0.5;
    v.v[DCGM_DRAM] = 0.25;
    v.nci = 2;
    assert_int_equal(dcgm_metric(&v, DCGM_GR_ENGINE).scope, MSCOPE_GPU_INSTANCE);
    v.ci_level = true;
    assert_int_equal(dcgm_metric(&v, DCGM_GR_ENGINE).scope, MSCOPE_DEVICE);
    assert_int_equal(dcgm_metric(&v, DCGM_DRAM).scope, MSCOPE_GPU_INSTANCE);
}

static void test_parse_dcgm(void **state)
{
    (void)state;
    int mode = -1;
    char addr[160];
    assert_int_equal(cli_parse_dcgm("auto", &mode, addr, sizeof(addr)), 0);
    assert_int_equal(mode, CLI_DCGM_AUTO);
    assert_int_equal(cli_parse_dcgm("off", &mode, addr, sizeof(addr)), 0);
    assert_int_equal(mode, CLI_DCGM_OFF);
    assert_int_equal(cli_parse_dcgm("embedded", &mode, addr, sizeof(addr)), 0);
    assert_int_equal(mode, CLI_DCGM_EMBEDDED);
    assert_int_equal(cli_parse_dcgm("unix:/run/nvidia/dcgm.sock", &mode, addr, sizeof(addr)), 0);
    assert_int_equal(mode, CLI_DCGM_ADDR);
    assert_string_equal(addr, "unix:/run/nvidia/dcgm.sock");
    assert_int_equal(cli_parse_dcgm("dcgm-hostengine.gpu-operator:5555", &mode, addr,
                                    sizeof(addr)), 0);
    assert_string_equal(addr, "dcgm-hostengine.gpu-operator:5555");
    assert_int_equal(cli_parse_dcgm("10.0.0.7", &mode, addr, sizeof(addr)), 0);
    static const char *const bad[] = {"", "unix:", "unix:relative", ":5555", "host:0",
                                      "host:65536", "host:port", "a b:1", "tcp://x:1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(cli_parse_dcgm(bad[i], &mode, addr, sizeof(addr)), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ratio_becomes_percent), cmocka_unit_test(test_rates_are_bytes_per_second),
        cmocka_unit_test(test_no_fake_values),        cmocka_unit_test(test_gi_scope),
        cmocka_unit_test(test_parse_dcgm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
