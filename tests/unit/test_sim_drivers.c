/*
 * The simulator's drivers to come (docs/simulator.md, "Deprecated calls",
 * the 615 events): on a CUDA 14 driver every call deprecated in 13.0
 * answers NVML_ERROR_DEPRECATED while its replacement answers, a wrong
 * struct version is ARGUMENT_VERSION_MISMATCH; nvmlEventSetWait_v3 returns
 * the structured events, nvmlEventSetWait_v2 never does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "sim_env.h"

#include "backend/nvml/nvml_api.h"

static void *lib;

static void *sym(const char *name)
{
    void *p = dlsym(lib, name);
    if (!p)
        fail_msg("no symbol %s", name);
    return p;
}

static void open_lib(const char *scenario)
{
    use_scenario(scenario, "100");
    lib = dlopen(getenv("MIGMON_SIM_LIB"), RTLD_NOW | RTLD_LOCAL);
    assert_non_null(lib);
    assert_int_equal(((nvml_fn_void)sym("nvmlInit_v2"))(), NVML_SUCCESS);
}

static void close_lib(void)
{
    ((nvml_fn_void)sym("nvmlShutdown"))();
    dlclose(lib);
}

static nvmlDevice_t gpu(unsigned i)
{
    nvmlDevice_t h = NULL;
    assert_int_equal(((nvml_fn_handle_by_index)sym("nvmlDeviceGetHandleByIndex_v2"))(i, &h),
                     NVML_SUCCESS);
    return h;
}

static void test_cuda14_removes_the_deprecated_calls(void **state)
{
    (void)state;
    open_lib("cuda14-h100-sxm.ini");
    nvmlDevice_t h = gpu(0);
    unsigned t = 0;
    unsigned long long mask = 0;
    nvmlViolationTime_t vt;
    assert_int_equal(((nvml_fn_dev_temp)sym("nvmlDeviceGetTemperature"))(h, 0, &t),
                     NVML_ERROR_DEPRECATED);
    assert_int_equal(((nvml_fn_dev_ull)sym("nvmlDeviceGetCurrentClocksThrottleReasons"))(h, &mask),
                     NVML_ERROR_DEPRECATED);
    assert_int_equal(((nvml_fn_dev_ull)sym("nvmlDeviceGetSupportedClocksThrottleReasons"))(h, &mask),
                     NVML_ERROR_DEPRECATED);
    assert_int_equal(((nvml_fn_dev_violation)sym("nvmlDeviceGetViolationStatus"))(h, 0, &vt),
                     NVML_ERROR_DEPRECATED);
    /* the replacements answer, with the values of the scenario at t = 100 */
    nvmlTemperature_t tv = {.version = 2, .sensorType = 0};
    nvml_fn_dev_tempv tempv = (nvml_fn_dev_tempv)sym("nvmlDeviceGetTemperatureV");
    assert_int_equal(tempv(h, &tv), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    tv.version = nvmlTemperature_v1;
    assert_int_equal(tempv(h, &tv), NVML_SUCCESS);
    assert_int_equal(tv.temperature, 62);
    assert_int_equal(((nvml_fn_dev_ull)sym("nvmlDeviceGetCurrentClocksEventReasons"))(h, &mask),
                     NVML_SUCCESS);
    assert_int_equal(mask, 36);
    assert_int_equal(((nvml_fn_dev_ull)sym("nvmlDeviceGetSupportedClocksEventReasons"))(h, &mask),
                     NVML_SUCCESS);
    assert_int_equal(mask, 0x1FF);
    nvmlFieldValue_t fv[2];
    memset(fv, 0, sizeof(fv));
    fv[0].fieldId = NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP;
    fv[1].fieldId = NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN;
    assert_int_equal(((nvml_fn_dev_fields)sym("nvmlDeviceGetFieldValues"))(h, 2, fv), NVML_SUCCESS);
    assert_int_equal(fv[0].nvmlReturn, NVML_SUCCESS);
    assert_int_equal(fv[0].value.ullVal, 37000000000ULL); /* ramp(12, 0.25) at 100 s, in ns */
    assert_int_equal(fv[1].nvmlReturn, NVML_SUCCESS);
    assert_int_equal(fv[1].value.ullVal, 9000000000ULL);
    close_lib();
}

static void test_615_events_and_memory_health(void **state)
{
    (void)state;
    open_lib("b200-health-615.ini");
    nvmlDevice_t h0 = gpu(0), h1 = gpu(1);
    nvmlRemappedRowsInfo_v2_t rr;
    assert_int_equal(((nvml_fn_dev_remapped_rows_v2)sym("nvmlDeviceGetRemappedRows_v2"))(h0, &rr),
                     NVML_SUCCESS);
    assert_int_equal(rr.corrActiveRemaps, 3);
    assert_int_equal(rr.corrInactiveRemaps, 2);
    assert_int_equal(((nvml_fn_dev_remapped_rows_v2)sym("nvmlDeviceGetRemappedRows_v2"))(h1, &rr),
                     NVML_ERROR_NOT_SUPPORTED); /* MIG on */
    nvmlEccBankRemapperStatus_v1_t b;
    assert_int_equal(((nvml_fn_dev_bank_remapper)sym("nvmlDeviceGetBankRemapperStatus_v1"))(h0, &b),
                     NVML_SUCCESS);
    assert_int_equal(b.activeRemappings, 6);
    assert_int_equal(b.bPending, 1);
    assert_int_equal(b.histogram.noSpareGroupCount, 1);
    assert_int_equal(((nvml_fn_dev_bank_remapper)sym("nvmlDeviceGetBankRemapperStatus_v1"))(h1, &b),
                     NVML_ERROR_NOT_SUPPORTED); /* no bank numbers given */

    nvmlEventSet_t set = NULL;
    assert_int_equal(((nvml_fn_event_set_create)sym("nvmlEventSetCreate"))(&set), NVML_SUCCESS);
    assert_int_equal(((nvml_fn_dev_register_events)sym("nvmlDeviceRegisterEvents"))(
                         h1, NVML_EVENT_TYPE_XID, set),
                     NVML_SUCCESS);
    nvmlGpuOperationalEventConfig_v1_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    snprintf(cfg.uuid, sizeof(cfg.uuid), "MIG-not-a-gpu");
    nvml_fn_event_register_ops reg =
        (nvml_fn_event_register_ops)sym("nvmlEventSetRegisterGpuOperationalEvents_v1");
    assert_int_equal(reg(set, &cfg), NVML_ERROR_INVALID_ARGUMENT);
    snprintf(cfg.uuid, sizeof(cfg.uuid), "GPU-c71f04b2-9e35-4d8a-b6f1-3a2e7d90c584");
    assert_int_equal(reg(set, &cfg), NVML_SUCCESS);
    assert_int_equal(reg(set, &cfg), NVML_SUCCESS); /* again: a success */
    nvml_fn_event_set_wait_v3 wait3 = (nvml_fn_event_set_wait_v3)sym("nvmlEventSetWait_v3");
    nvml_fn_event_context_xid ctx = (nvml_fn_event_context_xid)sym(
        "nvmlEventSetGetGpuOperationalEventContextLegacyXid_v1");
    nvmlEventSetWait_v3_t e;
    memset(&e, 0, sizeof(e));
    /* t = 3: the Xid bit, then the structured event of the same incident */
    assert_int_equal(wait3(set, &e), NVML_SUCCESS);
    assert_int_equal(e.eventType, NVML_EVENT_TYPE_XID);
    assert_int_equal(e.eventData, 94);
    assert_int_equal(e.gpuInstanceId, 3);
    assert_int_equal(wait3(set, &e), NVML_SUCCESS);
    assert_int_equal(e.eventType, NVML_EVENT_TYPE_NONE);
    assert_string_equal(e.uuid, "GPU-c71f04b2-9e35-4d8a-b6f1-3a2e7d90c584");
    assert_int_equal(e.severity, 3);
    assert_int_equal(e.categoryId, 2);
    nvmlEventSetGetGpuOperationalEventContextLegacyXid_v1_t x = {.index = 0, .xidCode = 0};
    assert_int_equal(ctx(set, &x), NVML_SUCCESS);
    assert_int_equal(x.xidCode, 94);
    /* t = 4: a structured event without a legacy Xid; then nothing (GPU 0's
     * structured event at t = 6 is not subscribed) */
    assert_int_equal(wait3(set, &e), NVML_SUCCESS);
    assert_int_equal(e.gpuInstanceId, 2);
    x.index = 0;
    assert_int_equal(ctx(set, &x), NVML_ERROR_INVALID_ARGUMENT);
    e.timeoutMs = 0;
    assert_int_equal(wait3(set, &e), NVML_ERROR_TIMEOUT);
    ((nvml_fn_event_set_free)sym("nvmlEventSetFree"))(set);

    /* v2 on a set with both subscriptions: the event bit only */
    assert_int_equal(((nvml_fn_event_set_create)sym("nvmlEventSetCreate"))(&set), NVML_SUCCESS);
    assert_int_equal(((nvml_fn_dev_register_events)sym("nvmlDeviceRegisterEvents"))(
                         h1, NVML_EVENT_TYPE_XID, set),
                     NVML_SUCCESS);
    assert_int_equal(reg(set, &cfg), NVML_SUCCESS);
    nvmlEventData_t d;
    nvml_fn_event_set_wait wait2 = (nvml_fn_event_set_wait)sym("nvmlEventSetWait_v2");
    assert_int_equal(wait2(set, &d, 0), NVML_SUCCESS);
    assert_int_equal(d.eventData, 94);
    assert_int_equal(wait2(set, &d, 0), NVML_ERROR_TIMEOUT);
    ((nvml_fn_event_set_free)sym("nvmlEventSetFree"))(set);
    close_lib();
}

/* A one-GPU scenario on driver drv, written to a file of its own. */
static void open_driver(const char *drv)
{
    char path[64];
    snprintf(path, sizeof(path), "/tmp/migmon-sim-drivers.XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fprintf(f, "[system]\ndriver_version = %s\n[gpu.0]\nname = NVIDIA H100 80GB HBM3\n"
               "memory_total_mib = 81559\n",
            drv);
    assert_int_equal(fclose(f), 0);
    setenv("MIGMON_SIM_SCENARIO", path, 1);
    setenv("MIGMON_SIM_TIME", "100", 1);
    lib = dlopen(getenv("MIGMON_SIM_LIB"), RTLD_NOW | RTLD_LOCAL);
    assert_non_null(lib);
    int rc = ((nvml_fn_void)sym("nvmlInit_v2"))();
    unlink(path); /* read at init */
    assert_int_equal(rc, NVML_SUCCESS);
}

/* NVML_FI_MAX of each driver's header: the last id below it is one the
 * driver knows (per entry NOT_SUPPORTED: the simulator does not model it),
 * the id itself is unknown (INVALID_ARGUMENT). */
static void test_field_max_follows_the_header(void **state)
{
    (void)state;
    static const struct {
        const char *drv;
        unsigned max;
    } cases[] = {
        {"570.211.01", 269}, {"575.57.08", 274}, {"580.82.07", 274},
        {"590.44.01", 289},  {"595.45.04", 303}, {"610.43.03", 303},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        open_driver(cases[i].drv);
        nvmlFieldValue_t fv[2];
        memset(fv, 0, sizeof(fv));
        fv[0].fieldId = cases[i].max - 1;
        fv[1].fieldId = cases[i].max;
        ((nvml_fn_dev_fields)sym("nvmlDeviceGetFieldValues"))(gpu(0), 2, fv);
        if (fv[0].nvmlReturn != NVML_ERROR_NOT_SUPPORTED ||
            fv[1].nvmlReturn != NVML_ERROR_INVALID_ARGUMENT)
            fail_msg("driver %s: id %u answered %d, id %u answered %d (want 3, 2)",
                     cases[i].drv, fv[0].fieldId, (int)fv[0].nvmlReturn, fv[1].fieldId,
                     (int)fv[1].nvmlReturn);
        close_lib();
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cuda14_removes_the_deprecated_calls),
        cmocka_unit_test(test_615_events_and_memory_health),
        cmocka_unit_test(test_field_max_follows_the_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
