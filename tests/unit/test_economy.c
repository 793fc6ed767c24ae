/*
 * The NVML call economy, pinned: the exact number of calls the monitor
 * makes on a steady tick (no re-walk, no slow-cadence reads) for three
 * scenarios, counted by the simulator (migmon_sim_call_count), plus what
 * must not happen every tick. A change that adds a call per tick fails here
 * with the new number; if it is deliberate, update the number and
 * docs/economy.md.
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
#include <cmocka.h>

#include "sim_env.h"

#include "engine/collect.h"

static unsigned long (*calls)(const char *);
static void (*calls_reset)(void);

struct run {
    struct collector c;
    struct snapshot s;
};

/* Open on a scenario, two warm-up ticks (the first walks, reads static
 * facts and settings), then count the third. */
static unsigned long steady_tick(struct run *r, const char *scenario)
{
    use_scenario(scenario, "100+1");
    struct collect_opts o = {.nvml_path = getenv("MIGMON_SIM_LIB"), .interval_ms = 1000};
    char err[2048];
    assert_int_equal(collect_open(&r->c, &o, err, sizeof(err)), 0);
    void *h = dlopen(getenv("MIGMON_SIM_LIB"), RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    calls = (unsigned long (*)(const char *))dlsym(h, "migmon_sim_call_count");
    calls_reset = (void (*)(void))dlsym(h, "migmon_sim_call_reset");
    dlclose(h);
    assert_non_null(calls);
    assert_non_null(calls_reset);
    memset(&r->s, 0, sizeof(r->s));
    collect_tick(&r->c, &r->s);
    collect_tick(&r->c, &r->s);
    calls_reset();
    collect_tick(&r->c, &r->s);
    return calls(NULL);
}

static void done(struct run *r)
{
    snapshot_free(&r->s);
    collect_close(&r->c);
}

static void test_a100(void **state)
{
    (void)state;
    struct run r;
    unsigned long n = steady_tick(&r, "a100-sxm4-80gb.ini");
    assert_int_equal(r.s.ndevices, 1);
    /* count, memory, utilisation, temperature, power, field values (energy
     * and ECC counts), 3 clocks, P-state, 2 PCIe throughput, encoder,
     * decoder, throttle reasons, 3 process lists, per-process utilisation */
    assert_int_equal(n, 20);
    assert_int_equal(calls("nvmlDeviceGetEnforcedPowerLimit"), 0); /* slow cadence */
    assert_int_equal(calls("nvmlDeviceGetEccMode"), 0);
    assert_int_equal(calls("nvmlDeviceGetTotalEccErrors"), 0);     /* in the field values */
    assert_int_equal(calls("nvmlDeviceGetFieldValues"), 1);
    done(&r);
}

static void test_h100_535_mig(void **state)
{
    (void)state;
    struct run r;
    unsigned long n = steady_tick(&r, "h100-pcie-mig-535.ini");
    assert_int_equal(r.s.ndevices, 4);
    assert_int_equal(n, 17);
    /* no re-enumeration of the MIG slots on a steady tick */
    assert_int_equal(calls("nvmlDeviceGetMigDeviceHandleByIndex"), 0);
    assert_int_equal(calls("nvmlDeviceGetUUID"), 0);
    assert_int_equal(calls("nvmlDeviceGetMaxMigDeviceCount"), 0);
    /* the unprivileged parent's NO_PERMISSION memory is remembered */
    assert_int_equal(calls("nvmlDeviceGetMemoryInfo_v2"), 3);
    /* one compute list per instance; graphics/MPS lists were empty */
    assert_int_equal(calls("nvmlDeviceGetComputeRunningProcesses_v3"), 3);
    assert_int_equal(calls("nvmlDeviceGetGraphicsRunningProcesses_v3"), 0);
    done(&r);
}

static void test_dgx(void **state)
{
    (void)state;
    struct run r;
    unsigned long n = steady_tick(&r, "dgx-a100-8x7.ini");
    assert_int_equal(r.s.ndevices, 64);
    assert_true(n <= 200);
    assert_int_equal(n, 193);
    assert_int_equal(calls("nvmlDeviceGetMigDeviceHandleByIndex"), 0);
    assert_int_equal(calls("nvmlDeviceGetProcessUtilization"), 0);
    assert_int_equal(calls("nvmlDeviceGetMemoryInfo_v2"), 56);
    assert_int_equal(calls("nvmlDeviceGetCount_v2"), 1);
    done(&r);
}

/* A privileged MIG-enabled GPU: one process list per GPU, split by GI/CI. */
static void test_privileged_parent_list(void **state)
{
    (void)state;
    struct run r;
    steady_tick(&r, "h200-mig.ini");
    assert_int_equal(r.s.ndevices, 5);
    assert_int_equal(calls("nvmlDeviceGetComputeRunningProcesses_v3"), 1);
    /* ... and the processes still land on their instances */
    size_t placed = 0;
    for (size_t i = 1; i < r.s.ndevices; i++)
        placed += r.s.devices[i].nprocs;
    assert_int_equal(placed, 3);
    done(&r);
}

/* The slow cadence still happens: over 10 ticks the MIG slots are walked
 * again (and a reconfiguration would be seen). */
static void test_slow_cadence_runs(void **state)
{
    (void)state;
    struct run r;
    steady_tick(&r, "h100-pcie-mig-535.ini");
    calls_reset();
    for (int t = 0; t < 10; t++)
        collect_tick(&r.c, &r.s);
    assert_true(calls("nvmlDeviceGetMaxMigDeviceCount") >= 1);
    assert_true(calls("nvmlDeviceGetMigMode") >= 1);
    done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a100),
        cmocka_unit_test(test_h100_535_mig),
        cmocka_unit_test(test_dgx),
        cmocka_unit_test(test_privileged_parent_list),
        cmocka_unit_test(test_slow_cadence_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
