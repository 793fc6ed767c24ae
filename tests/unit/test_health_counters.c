/*
 * The health counters (backend/nvml/nvml_health.c) read from the simulator
 * through the collector and the NVML backend: exact values and sources,
 * the reasons of what NVML does not report (retired pages on Ampere,
 * remapped rows with MIG on, a GPU without NVLink), a call made to fail,
 * MIG devices carrying their parent's values, and the cadence: no call of
 * their own on a steady tick, the slow-cadence reads counted exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "sim_env.h"

#include "engine/collect.h"

#define MIB 1048576.0

static unsigned long (*calls)(const char *);
static void (*calls_reset)(void);

struct run {
    struct collector c;
    struct snapshot s;
    char path[64]; /* a scenario written for the test, "" for a shipped one */
};

/* A scenario file of this text in /tmp, on the simulated clock simtime. */
static void scenario_text(struct run *r, const char *text, const char *simtime)
{
    snprintf(r->path, sizeof(r->path), "/tmp/migmon-health-XXXXXX");
    int fd = mkstemp(r->path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    setenv("MIGMON_SIM_SCENARIO", r->path, 1);
    setenv("MIGMON_SIM_TIME", simtime, 1);
}

/* Open the collector on the scenario set with the simulator library lib,
 * find its call counters, take the first tick. */
static void start_lib(struct run *r, const char *lib)
{
    struct collect_opts o = {.nvml_path = lib, .interval_ms = 1000};
    char err[2048];
    assert_int_equal(collect_open(&r->c, &o, err, sizeof(err)), 0);
    void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    calls = (unsigned long (*)(const char *))dlsym(h, "migmon_sim_call_count");
    calls_reset = (void (*)(void))dlsym(h, "migmon_sim_call_reset");
    dlclose(h);
    assert_non_null(calls);
    assert_non_null(calls_reset);
    memset(&r->s, 0, sizeof(r->s));
    calls_reset();
    collect_tick(&r->c, &r->s);
}

/* The calls of the slow-cadence counters since the last reset. */
static unsigned long health_calls(void)
{
    static const char *const syms[] = {
        "nvmlDeviceGetRemappedRows",      "nvmlDeviceGetRetiredPages",
        "nvmlDeviceGetRetiredPagesPendingStatus", "nvmlDeviceGetPcieReplayCounter",
        "nvmlDeviceGetNvLinkState",       "nvmlDeviceGetNvLinkErrorCounter",
        "nvmlDeviceGetViolationStatus",
    };
    unsigned long n = 0;
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
        n += calls(syms[i]);
    return n;
}

static void start(struct run *r)
{
    start_lib(r, getenv("MIGMON_SIM_LIB"));
}

static void done(struct run *r)
{
    snapshot_free(&r->s);
    collect_close(&r->c);
    if (r->path[0])
        unlink(r->path);
}

static void is_direct(const struct metric *m, double v)
{
    if (m->src != MSRC_DIRECT || m->value != v)
        fail_msg("expected direct %.17g, got %s %.17g (%s)", v, metric_source_name(m->src),
                 m->value, m->why ? m->why : "no reason");
}

static void is_none(const struct metric *m, const char *why)
{
    assert_int_equal(m->src, MSRC_NONE);
    assert_non_null(m->why);
    assert_string_equal(m->why, why);
}

/* An A100 SXM4 (MIG off) with every counter given. */
#define A100_COUNTERS                                                                          \
    "[system]\ndriver_version = 550.144.03\n"                                                   \
    "[gpu.0]\nname = NVIDIA A100-SXM4-80GB\nmemory_total_mib = 81920\n"                        \
    "memory_reserved_mib = 637\nmemory_temperature_c = 71\n"                                    \
    "ecc_corrected_aggregate = 12\necc_uncorrected_aggregate = 1\n"                             \
    "pcie_replay_count = ramp(4, 0.5)\n"                                                        \
    "remapped_rows_correctable = 3\nremapped_rows_uncorrectable = 1\n"                          \
    "row_remap_pending = 1\nrow_remap_failure = 0\n"                                            \
    "nvlink_links_up = 10\nnvlink_crc_flit_errors = 25\nnvlink_crc_data_errors = 7\n"           \
    "nvlink_replay_errors = 11\nnvlink_recovery_errors = 2\n"                                   \
    "nvlink_data_tx_kib = 1000\nnvlink_data_rx_kib = 3000\n"                                    \
    "violation_power_s = 12.5\nviolation_thermal_s = 0.25\n"

static const char *const RETIRED_AMPERE =
    "Ampere and later remap rows instead of retiring pages (NVML_ERROR_NOT_SUPPORTED)";
static const char *const NO_NVLINK =
    "no NVLink on this GPU (nvmlDeviceGetNvLinkState: NVML_ERROR_NOT_SUPPORTED)";
static const char *const REMAP_MIG =
    "NVML does not report remapped rows while MIG mode is enabled (NVML_ERROR_NOT_SUPPORTED)";

static void test_a100_values(void **state)
{
    (void)state;
    struct run r = {0};
    scenario_text(&r, A100_COUNTERS, "10");
    start(&r);
    const struct device *d = &r.s.devices[0];
    is_direct(&d->m[M_MEM_TEMP], 71);
    is_direct(&d->m[M_ECC_CORR_AGG], 12);
    is_direct(&d->m[M_ECC_UNCORR_AGG], 1);
    is_direct(&d->m[M_PCIE_REPLAY], 9); /* 4 + 0.5 x 10 */
    is_direct(&d->m[M_REMAP_CORR], 3);
    is_direct(&d->m[M_REMAP_UNCORR], 1);
    is_direct(&d->m[M_REMAP_PENDING], 1);
    is_direct(&d->m[M_REMAP_FAILURE], 0);
    is_none(&d->m[M_RETIRED_SBE], RETIRED_AMPERE);
    is_none(&d->m[M_RETIRED_DBE], RETIRED_AMPERE);
    is_none(&d->m[M_RETIRED_PENDING], RETIRED_AMPERE);
    is_direct(&d->m[M_MEM_RESERVED], 637 * MIB);
    /* 10 of the 12 links up; the counters spread over them add up exactly */
    is_direct(&d->m[M_NVLINK_LINKS_UP], 10);
    is_direct(&d->m[M_NVLINK_CRC_ERRORS], 32);
    is_direct(&d->m[M_NVLINK_REPLAY_ERRORS], 11);
    is_direct(&d->m[M_NVLINK_RECOVERY_ERRORS], 2);
    is_direct(&d->m[M_NVLINK_DATA_BYTES], 4000 * 1024.0);
    is_direct(&d->m[M_THROTTLE_POWER_S], 12.5);
    is_direct(&d->m[M_THROTTLE_THERMAL_S], 0.25);
    /* the first read: 12 link states and the one past them, 4 counters on
     * each of the 10 links up, retired pages asked once (cause 0, then
     * remembered) and the pending status once */
    assert_int_equal(calls("nvmlDeviceGetNvLinkState"), 13);
    assert_int_equal(calls("nvmlDeviceGetNvLinkErrorCounter"), 40);
    assert_int_equal(calls("nvmlDeviceGetRetiredPages"), 1);
    assert_int_equal(calls("nvmlDeviceGetRetiredPagesPendingStatus"), 1);
    assert_int_equal(calls("nvmlDeviceGetRemappedRows"), 1);
    assert_int_equal(calls("nvmlDeviceGetPcieReplayCounter"), 1);
    assert_int_equal(calls("nvmlDeviceGetViolationStatus"), 2);
    assert_int_equal(calls("nvmlDeviceGetFieldValues"), 1);
    assert_int_equal(health_calls(), 59);
    done(&r);
}

/* The slow cadence: the counters are read at ticks 1, 6 and 11 (5 ticks of
 * 1 s), held as direct between, and a tick between makes none of their
 * calls; the field-values entries are every tick's. */
static void test_cadence(void **state)
{
    (void)state;
    struct run r = {0};
    scenario_text(&r, A100_COUNTERS, "0+1");
    start(&r);
    double first = r.s.devices[0].m[M_PCIE_REPLAY].value;
    double last = first;
    int reads = 0;
    for (int tick = 2; tick <= 12; tick++) {
        calls_reset();
        collect_tick(&r.c, &r.s);
        const struct metric *m = &r.s.devices[0].m[M_PCIE_REPLAY];
        assert_int_equal(m->src, MSRC_DIRECT);
        unsigned long n = calls("nvmlDeviceGetPcieReplayCounter");
        assert_int_equal(calls("nvmlDeviceGetFieldValues"), 1);
        if (tick == 6 || tick == 11) {
            reads++;
            assert_int_equal(n, 1);
            assert_true(m->value > last); /* ramp(4, 0.5): it moved */
            /* the walk stops at the 12 links found the first time */
            assert_int_equal(calls("nvmlDeviceGetNvLinkState"), 12);
            assert_int_equal(calls("nvmlDeviceGetNvLinkErrorCounter"), 40);
            assert_int_equal(calls("nvmlDeviceGetRemappedRows"), 1);
            assert_int_equal(calls("nvmlDeviceGetViolationStatus"), 2);
            assert_int_equal(calls("nvmlDeviceGetRetiredPages"), 0); /* remembered */
            assert_int_equal(calls("nvmlDeviceGetRetiredPagesPendingStatus"), 0);
            assert_int_equal(health_calls(), 56);
        } else {
            assert_int_equal(n, 0);
            assert_true(m->value == last);
            assert_int_equal(calls("nvmlDeviceGetNvLinkState"), 0);
            assert_int_equal(calls("nvmlDeviceGetNvLinkErrorCounter"), 0);
            assert_int_equal(calls("nvmlDeviceGetRemappedRows"), 0);
            assert_int_equal(health_calls(), 0);
        }
        last = m->value;
    }
    assert_int_equal(reads, 2);
    assert_true(last > first);
    done(&r);
}

/* Before Ampere pages are retired (counted with a zero-sized buffer:
 * INSUFFICIENT_SIZE with the count) and rows are not remapped. A V100 has
 * 6 links; the walk ends at link 6 (INVALID_ARGUMENT). */
static void test_volta_retired_pages(void **state)
{
    (void)state;
    struct run r = {0};
    scenario_text(&r,
                  "[system]\ndriver_version = 550.144.03\n"
                  "[gpu.0]\nname = Tesla V100-SXM2-32GB\narchitecture = volta\n"
                  "memory_total_mib = 32768\nnvlink_links = 6\n"
                  "retired_pages_sbe = 3\nretired_pages_dbe = 1\nretired_pages_pending = 1\n",
                  "10");
    start(&r);
    const struct device *d = &r.s.devices[0];
    is_direct(&d->m[M_RETIRED_SBE], 3);
    is_direct(&d->m[M_RETIRED_DBE], 1);
    is_direct(&d->m[M_RETIRED_PENDING], 1);
    static const enum metric_id remap[4] = {M_REMAP_CORR, M_REMAP_UNCORR, M_REMAP_PENDING,
                                            M_REMAP_FAILURE};
    for (int k = 0; k < 4; k++)
        is_none(&d->m[remap[k]], "rows are remapped from Ampere on; this GPU retires pages "
                                 "(NVML_ERROR_NOT_SUPPORTED)");
    is_direct(&d->m[M_NVLINK_LINKS_UP], 6);
    assert_int_equal(calls("nvmlDeviceGetNvLinkState"), 7);
    assert_int_equal(calls("nvmlDeviceGetRetiredPages"), 2);
    done(&r);
}

/* Each call made to fail with a given code: the metric is none with NVML's
 * error name; what is not remembered is asked again at the next read, what
 * is remembered (NOT_SUPPORTED) is not. A failed aggregate ECC entry falls
 * back to nvmlDeviceGetTotalEccErrors, which still answers. */
static void test_failing_calls(void **state)
{
    (void)state;
    struct run r = {0};
    scenario_text(&r,
                  A100_COUNTERS "remapped_rows_return = UNKNOWN\n"
                                "nvlink_errors_return = NO_PERMISSION\n"
                                "violation_return = NOT_SUPPORTED\n"
                                "memory_temperature_return = UNKNOWN\n"
                                "nvlink_throughput_return = NOT_SUPPORTED\n"
                                "ecc_aggregate_return = UNKNOWN\n"
                                "[fault.replay]\nfunction = nvmlDeviceGetPcieReplayCounter\n"
                                "return = GPU_IS_LOST\n",
                  "0+1");
    start(&r);
    for (int tick = 1; tick <= 6; tick++) {
        const struct device *d = &r.s.devices[0];
        is_none(&d->m[M_REMAP_CORR], "NVML_ERROR_UNKNOWN");
        is_none(&d->m[M_REMAP_PENDING], "NVML_ERROR_UNKNOWN");
        is_direct(&d->m[M_NVLINK_LINKS_UP], 10); /* the state calls still answer */
        is_none(&d->m[M_NVLINK_CRC_ERRORS], "NVML_ERROR_NO_PERMISSION");
        is_none(&d->m[M_NVLINK_REPLAY_ERRORS], "NVML_ERROR_NO_PERMISSION");
        is_none(&d->m[M_THROTTLE_POWER_S], "NVML_ERROR_NOT_SUPPORTED");
        is_none(&d->m[M_THROTTLE_THERMAL_S], "NVML_ERROR_NOT_SUPPORTED");
        is_none(&d->m[M_MEM_TEMP], "NVML_ERROR_UNKNOWN");
        is_none(&d->m[M_NVLINK_DATA_BYTES], "NVML_ERROR_NOT_SUPPORTED");
        is_none(&d->m[M_PCIE_REPLAY], "NVML_ERROR_GPU_IS_LOST");
        is_direct(&d->m[M_ECC_CORR_AGG], 12);
        is_direct(&d->m[M_ECC_UNCORR_AGG], 1);
        /* the other entries of the same field-values call */
        assert_int_equal(d->m[M_ENERGY].src, MSRC_DIRECT);
        assert_false(d->lost);
        if (tick == 6) { /* the second read */
            assert_int_equal(calls("nvmlDeviceGetRemappedRows"), 1);
            assert_int_equal(calls("nvmlDeviceGetPcieReplayCounter"), 1);
            assert_int_equal(calls("nvmlDeviceGetViolationStatus"), 0);
        }
        /* two aggregate ECC calls a tick, after the first (when the ECC
         * mode was not yet known the volatile counts were asked too) */
        if (tick > 1)
            assert_int_equal(calls("nvmlDeviceGetTotalEccErrors"), 2);
        calls_reset();
        collect_tick(&r.c, &r.s);
    }
    done(&r);
}

/* A PCIe board without NVLink: none with the reason, never 0, and not
 * asked again. */
static void test_no_nvlink(void **state)
{
    (void)state;
    struct run r = {0};
    scenario_text(&r,
                  "[system]\ndriver_version = 550.144.03\n"
                  "[gpu.0]\nname = NVIDIA H100 PCIe\nmemory_total_mib = 81559\n"
                  "pcie_replay_count = 5\n",
                  "0+1");
    start(&r);
    for (int tick = 1; tick <= 7; tick++) {
        const struct device *d = &r.s.devices[0];
        is_none(&d->m[M_NVLINK_LINKS_UP], NO_NVLINK);
        is_none(&d->m[M_NVLINK_CRC_ERRORS], NO_NVLINK);
        is_none(&d->m[M_NVLINK_REPLAY_ERRORS], NO_NVLINK);
        is_none(&d->m[M_NVLINK_RECOVERY_ERRORS], NO_NVLINK);
        is_none(&d->m[M_NVLINK_DATA_BYTES], NO_NVLINK);
        is_direct(&d->m[M_PCIE_REPLAY], 5);
        is_direct(&d->m[M_REMAP_CORR], 0); /* Hopper, MIG off: a real 0 */
        if (tick == 1) {
            assert_int_equal(calls("nvmlDeviceGetNvLinkState"), 1);
            assert_int_equal(health_calls(), 7);
        } else {
            assert_int_equal(calls("nvmlDeviceGetNvLinkState"), 0);
            assert_int_equal(calls("nvmlDeviceGetNvLinkErrorCounter"), 0);
        }
        /* a slow read: replays, violation x2, remapped rows */
        assert_int_equal(health_calls(), tick == 1 ? 7 : tick == 6 ? 4 : 0);
        calls_reset();
        collect_tick(&r.c, &r.s);
    }
    done(&r);
}

/* MIG: the GPU-wide counters are the parent's, value, source and reason,
 * on every MIG device; remapped rows are not reported while MIG is on;
 * reserved memory is each instance's own (the unprivileged parent's is
 * refused). No health call is made on a MIG handle. */
static void test_mig_devices_carry_the_parent(void **state)
{
    (void)state;
    struct run r = {0};
    scenario_text(&r,
                  "[system]\ndriver_version = 535.129.03\n"
                  "[gpu.0]\nname = NVIDIA H100 PCIe\nmemory_total_mib = 81559\nmig_mode = on\n"
                  "memory_temperature_c = 61\npcie_replay_count = 7\nviolation_thermal_s = 3\n"
                  "[gpu.0.mig.0]\nprofile = 3g.40gb\ngi = 2\nmemory_reserved_mib = 250\n"
                  "[gpu.0.mig.1]\nprofile = 2g.20gb\ngi = 3\n",
                  "10");
    start(&r);
    assert_int_equal(r.s.ndevices, 3);
    const struct device *g = &r.s.devices[0];
    is_direct(&g->m[M_PCIE_REPLAY], 7);
    is_direct(&g->m[M_MEM_TEMP], 61);
    is_direct(&g->m[M_THROTTLE_THERMAL_S], 3);
    is_none(&g->m[M_REMAP_CORR], REMAP_MIG);
    is_none(&g->m[M_NVLINK_LINKS_UP], NO_NVLINK);
    assert_int_equal(g->m[M_MEM_RESERVED].src, MSRC_NONE);
    assert_non_null(strstr(g->m[M_MEM_RESERVED].why, "NVML_ERROR_NO_PERMISSION"));
    for (size_t i = 1; i < 3; i++) {
        const struct device *d = &r.s.devices[i];
        assert_int_equal(d->kind, DEV_MIG);
        is_direct(&d->m[M_PCIE_REPLAY], 7);
        is_direct(&d->m[M_MEM_TEMP], 61);
        is_direct(&d->m[M_THROTTLE_THERMAL_S], 3);
        is_none(&d->m[M_REMAP_CORR], REMAP_MIG);
        is_none(&d->m[M_RETIRED_SBE], RETIRED_AMPERE);
        is_none(&d->m[M_NVLINK_CRC_ERRORS], NO_NVLINK);
        is_none(&d->m[M_NVLINK_DATA_BYTES], NO_NVLINK);
        is_direct(&d->m[M_MEM_RESERVED], i == 1 ? 250 * MIB : 0);
    }
    /* one read, on the parent */
    assert_int_equal(calls("nvmlDeviceGetPcieReplayCounter"), 1);
    assert_int_equal(calls("nvmlDeviceGetRemappedRows"), 1);
    done(&r);
}

/* The shipped H200 in MIG mode at t = 100: the power cap's 30 s of
 * violation time and the two PCIe replays of t = 60, on the parent and on
 * each of its four MIG devices. */
static void test_h200_shipped(void **state)
{
    (void)state;
    struct run r = {0};
    use_scenario("h200-mig.ini", "100");
    start(&r);
    assert_int_equal(r.s.ndevices, 5);
    for (size_t i = 0; i < r.s.ndevices; i++) {
        const struct device *d = &r.s.devices[i];
        is_direct(&d->m[M_THROTTLE_POWER_S], 30);
        is_direct(&d->m[M_PCIE_REPLAY], 2);
        is_direct(&d->m[M_NVLINK_LINKS_UP], 18);
        is_none(&d->m[M_REMAP_PENDING], REMAP_MIG);
    }
    is_direct(&r.s.devices[0].m[M_MEM_RESERVED], 1130 * MIB);
    done(&r);
}

/* Driver 450.66 (the variant library): no nvmlDeviceGetMemoryInfo_v2, so
 * no reserved figure; remapped rows are there (450.51); its header allows
 * 12 NVLink links, all an A100 SXM4 has. */
static void test_driver_450(void **state)
{
    (void)state;
    struct run r = {0};
    char lib[PATH_MAX];
    snprintf(lib, sizeof(lib), "%s/drv-450/libnvidia-ml.so.1", getenv("MIGMON_SIM_DIR"));
    scenario_text(&r, A100_COUNTERS, "10");
    start_lib(&r, lib);
    const struct device *d = &r.s.devices[0];
    is_none(&d->m[M_MEM_RESERVED], "reserved memory needs nvmlDeviceGetMemoryInfo_v2 (this "
                                   "read used v1)");
    assert_int_equal(d->m[M_MEM_USED].src, MSRC_DIRECT);
    is_direct(&d->m[M_REMAP_CORR], 3);
    is_direct(&d->m[M_NVLINK_LINKS_UP], 10);
    is_direct(&d->m[M_NVLINK_CRC_ERRORS], 32);
    assert_int_equal(calls("nvmlDeviceGetNvLinkState"), 13);
    done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a100_values),
        cmocka_unit_test(test_cadence),
        cmocka_unit_test(test_volta_retired_pages),
        cmocka_unit_test(test_failing_calls),
        cmocka_unit_test(test_no_nvlink),
        cmocka_unit_test(test_mig_devices_carry_the_parent),
        cmocka_unit_test(test_h200_shipped),
        cmocka_unit_test(test_driver_450),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
