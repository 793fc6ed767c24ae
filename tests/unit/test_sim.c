/*
 * The NVML simulator (sim/), exercised the way the monitor uses it: dlopen
 * the library, resolve symbols by name, call with real structs. Needs
 * MIGMON_SIM_LIB, MIGMON_SIM_DIR and MIGMON_SRC (set by `make unit`).
 *
 * Each test loads its scenario with nvmlInit_v2 (the sim re-reads
 * MIGMON_SIM_SCENARIO at every 0 -> 1 init) and the teardown shuts down.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../sim/exports.h" /* prototypes, only for __typeof__ */

#define EPOCH_US 1700000000000000ULL
#define MIB 1048576ULL

static void *lib; /* the library the current test talks to */
static void *full_lib;

static const char *env(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        fail_msg("%s is not set (run through `make unit`)", name);
    return v;
}

static void *sym_in(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p)
        fail_msg("symbol %s missing", name);
    return p;
}

/* N(nvmlFoo)(args): call the loaded library's nvmlFoo with its real type. */
#define N(name) ((__typeof__(&name))sym_in(lib, #name))

static void *open_lib(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        fail_msg("dlopen %s: %s", path, dlerror());
    return h;
}

static void *open_variant(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s/libnvidia-ml.so.1", env("MIGMON_SIM_DIR"), dir);
    return open_lib(path);
}

static void set_scenario(const char *file, const char *time)
{
    char path[1024];
    if (file[0] == '/')
        snprintf(path, sizeof(path), "%s", file);
    else
        snprintf(path, sizeof(path), "%s/sim/scenarios/%s", env("MIGMON_SRC"), file);
    setenv("MIGMON_SIM_SCENARIO", path, 1);
    if (time)
        setenv("MIGMON_SIM_TIME", time, 1);
    else
        unsetenv("MIGMON_SIM_TIME");
}

static void start(const char *file, const char *time)
{
    set_scenario(file, time);
    assert_int_equal(N(nvmlInit_v2)(), NVML_SUCCESS);
}

static nvmlDevice_t gpu(unsigned i)
{
    nvmlDevice_t d = NULL;
    assert_int_equal(N(nvmlDeviceGetHandleByIndex_v2)(i, &d), NVML_SUCCESS);
    return d;
}

static nvmlDevice_t mig(nvmlDevice_t parent, unsigned slot)
{
    nvmlDevice_t d = NULL;
    assert_int_equal(N(nvmlDeviceGetMigDeviceHandleByIndex)(parent, slot, &d), NVML_SUCCESS);
    return d;
}

/* Advances a MIGMON_SIM_TIME=T0+STEP clock by one tick. */
static void tick(void)
{
    unsigned n;
    assert_int_equal(N(nvmlDeviceGetCount_v2)(&n), NVML_SUCCESS);
}

static char *write_tmp(const char *text)
{
    static char path[64];
    FILE *f;
    int fd;
    snprintf(path, sizeof(path), "/tmp/test_sim_XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

static int setup(void **state)
{
    (void)state;
    lib = full_lib;
    unsetenv("MIGMON_SIM_VERBOSE");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++)
        N(nvmlShutdown)();
    return 0;
}

/* ---- init, scenarios, versions ---- */

/* Runs first: nothing has initialised this library yet. */
static void test_uninitialised_and_missing_scenario(void **state)
{
    unsigned n;
    char buf[80];
    (void)state;
    assert_int_equal(N(nvmlShutdown)(), NVML_ERROR_UNINITIALIZED);
    assert_int_equal(N(nvmlDeviceGetCount_v2)(&n), NVML_ERROR_UNINITIALIZED);
    assert_int_equal(N(nvmlSystemGetDriverVersion)(buf, sizeof(buf)), NVML_ERROR_UNINITIALIZED);
    unsetenv("MIGMON_SIM_SCENARIO");
    assert_int_equal(N(nvmlInit_v2)(), NVML_ERROR_DRIVER_NOT_LOADED);
    set_scenario("/nonexistent/x.ini", NULL);
    assert_int_equal(N(nvmlInit_v2)(), NVML_ERROR_DRIVER_NOT_LOADED);
    assert_int_equal(N(nvmlInitWithFlags)(0), NVML_ERROR_DRIVER_NOT_LOADED);
    assert_string_equal(N(nvmlErrorString)(NVML_ERROR_FUNCTION_NOT_FOUND), "Function Not Found");
}

/* A bad file fails init with 9, and says why on stderr only when asked. */
static void expect_invalid(const char *text, const char *needle)
{
    char *path = write_tmp(text), out[1024] = "";
    char errpath[] = "/tmp/test_sim_err_XXXXXX";
    int fd = mkstemp(errpath), saved = dup(2);
    FILE *f;
    set_scenario(path, NULL);
    setenv("MIGMON_SIM_VERBOSE", "1", 1);
    dup2(fd, 2);
    assert_int_equal(N(nvmlInit_v2)(), NVML_ERROR_DRIVER_NOT_LOADED);
    dup2(saved, 2);
    close(saved);
    unsetenv("MIGMON_SIM_VERBOSE");
    f = fdopen(fd, "r");
    rewind(f);
    assert_non_null(fgets(out, sizeof(out), f));
    fclose(f);
    unlink(errpath);
    unlink(path);
    assert_true(strncmp(out, "nvml-sim: ", 10) == 0);
    assert_non_null(strstr(out, path));
    if (!strstr(out, needle))
        fail_msg("expected '%s' in: %s", needle, out);
}

static void test_invalid_scenarios(void **state)
{
    (void)state;
    expect_invalid("[system]\ndriver_version = 550.144.03\nbogus = 1\n",
                   ":3: [system] unknown key");
    expect_invalid("[gpu.0]\nname = X\n", "driver_version is required");
    expect_invalid("[system]\ndriver_version = 550.144.03\n[gpu.0]\nname = NVIDIA A100-SXM4-80GB\n"
                   "memory_total_mib = 1000\nmemory_used_mib = wave(900, 200, 10)\n",
                   "memory_used_mib: values must stay within");
    expect_invalid("[system]\ndriver_version = 550.144.03\n[gpu.0]\nname = NVIDIA A100-SXM4-80GB\n"
                   "memory_total_mib = 81920\nutil_gpu = wave(50, 10)\n",
                   ":6: [gpu.0] util_gpu: bad value");
    expect_invalid("[system]\ndriver_version = 550.144.03\n[gpu.0]\nname = NVIDIA A100-SXM4-80GB\n"
                   "memory_total_mib = 81920\nmig_mode = on\n[gpu.0.mig.0]\nprofile = 9g.99gb\n"
                   "gi = 1\n",
                   "not a a100-80gb profile");
    set_scenario("a100-sxm4-80gb.ini", "abc");
    setenv("MIGMON_SIM_VERBOSE", "0", 1);
    assert_int_equal(N(nvmlInit_v2)(), NVML_ERROR_DRIVER_NOT_LOADED);
}

static void test_every_shipped_scenario_loads(void **state)
{
    char dir[1024];
    DIR *d;
    struct dirent *e;
    int n = 0;
    (void)state;
    snprintf(dir, sizeof(dir), "%s/sim/scenarios", env("MIGMON_SRC"));
    assert_non_null(d = opendir(dir));
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".ini") != 0)
            continue;
        set_scenario(e->d_name, NULL);
        /* NO_GPUS: no-gpu.ini must load too */
        if (N(nvmlInitWithFlags)(NVML_INIT_FLAG_NO_GPUS) != NVML_SUCCESS)
            fail_msg("%s does not load", e->d_name);
        assert_int_equal(N(nvmlShutdown)(), NVML_SUCCESS);
        n++;
    }
    closedir(d);
    assert_true(n >= 5);
}

static void test_refcount_and_reload(void **state)
{
    unsigned n;
    (void)state;
    start("a100-sxm4-80gb.ini", NULL);
    assert_int_equal(N(nvmlInit_v2)(), NVML_SUCCESS); /* refcount 2, no reload */
    assert_int_equal(N(nvmlShutdown)(), NVML_SUCCESS);
    assert_int_equal(N(nvmlDeviceGetCount_v2)(&n), NVML_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(N(nvmlShutdown)(), NVML_SUCCESS);
    assert_int_equal(N(nvmlDeviceGetCount_v2)(&n), NVML_ERROR_UNINITIALIZED);
    assert_int_equal(N(nvmlShutdown)(), NVML_SUCCESS); /* extra shutdowns are no error */
    start("dgx-a100-8x7.ini", NULL);                   /* 0 -> 1 re-reads the scenario */
    assert_int_equal(N(nvmlDeviceGetCount_v2)(&n), NVML_SUCCESS);
    assert_int_equal(n, 8);
}

static void test_no_gpu_needs_flag(void **state)
{
    unsigned n = 99;
    (void)state;
    set_scenario("no-gpu.ini", NULL);
    assert_int_equal(N(nvmlInit_v2)(), NVML_ERROR_GPU_NOT_FOUND);
    assert_int_equal(N(nvmlInitWithFlags)(NVML_INIT_FLAG_NO_GPUS), NVML_SUCCESS);
    assert_int_equal(N(nvmlDeviceGetCount_v2)(&n), NVML_SUCCESS);
    assert_int_equal(n, 0);
}

static void test_inaccessible_gpu(void **state)
{
    unsigned n;
    nvmlDevice_t d;
    (void)state;
    set_scenario("inaccessible-gpu.ini", NULL);
    assert_int_equal(N(nvmlInit)(), NVML_ERROR_NO_PERMISSION); /* v1 attaches every GPU */
    start("inaccessible-gpu.ini", NULL);
    assert_int_equal(N(nvmlDeviceGetCount_v2)(&n), NVML_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(N(nvmlDeviceGetCount)(&n), NVML_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(N(nvmlDeviceGetHandleByIndex_v2)(1, &d), NVML_ERROR_NO_PERMISSION);
    assert_int_equal(N(nvmlDeviceGetHandleByIndex)(1, &d), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(N(nvmlDeviceGetHandleByIndex)(0, &d), NVML_SUCCESS);
    assert_ptr_equal(d, gpu(0));
}

static void test_system_versions(void **state)
{
    char buf[80];
    int cuda;
    (void)state;
    start("a100-sxm4-80gb.ini", NULL);
    assert_int_equal(N(nvmlSystemGetDriverVersion)(buf, sizeof(buf)), NVML_SUCCESS);
    assert_string_equal(buf, "550.144.03");
    assert_int_equal(N(nvmlSystemGetDriverVersion)(buf, 10), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(N(nvmlSystemGetNVMLVersion)(buf, sizeof(buf)), NVML_SUCCESS);
    assert_string_equal(buf, "12.550.144.03");
    assert_int_equal(N(nvmlSystemGetCudaDriverVersion_v2)(&cuda), NVML_SUCCESS);
    assert_int_equal(cuda, 12040);
}

/* ---- a GPU with MIG off: values at a fixed time ---- */

static void test_a100_values_at_fixed_time(void **state)
{
    nvmlDevice_t d;
    nvmlUtilization_t u;
    nvmlMemory_t m1;
    nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
    nvmlPciInfo_t pci;
    unsigned v, cur, pend;
    unsigned long long e;
    char name[96];
    (void)state;
    start("a100-sxm4-80gb.ini", "15");
    d = gpu(0);
    assert_int_equal(N(nvmlDeviceGetName)(d, name, sizeof(name)), NVML_SUCCESS);
    assert_string_equal(name, "NVIDIA A100-SXM4-80GB");
    assert_int_equal(N(nvmlDeviceGetPciInfo_v3)(d, &pci), NVML_SUCCESS);
    assert_string_equal(pci.busId, "00000000:07:00.0");
    assert_int_equal(pci.pciDeviceId, 0x20B210DE);
    assert_int_equal(N(nvmlDeviceGetUtilizationRates)(d, &u), NVML_SUCCESS);
    assert_int_equal(u.gpu, 70);    /* wave(55, 15, 60) at t = 15: the crest */
    assert_int_equal(u.memory, 39); /* 32 + 10 sin(2pi 22/60) = 39.4 */
    assert_int_equal(N(nvmlDeviceGetTemperature)(d, NVML_TEMPERATURE_GPU, &v), NVML_SUCCESS);
    assert_int_equal(v, 64);
    assert_int_equal(N(nvmlDeviceGetPowerUsage)(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 290000); /* GA100: instantaneous */
    assert_int_equal(N(nvmlDeviceGetPowerManagementLimit)(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 400000);
    /* energy = 3.6e8 J + integral of the wave over 0..15 s */
    assert_int_equal(N(nvmlDeviceGetTotalEnergyConsumption)(d, &e), NVML_SUCCESS);
    assert_true(llabs((long long)e - 360004131972LL) <= 1);
    /* used = the processes: 52120 + ramp(1800, 5) at 15 = 53995 MiB */
    assert_int_equal(N(nvmlDeviceGetMemoryInfo_v2)(d, &m2), NVML_SUCCESS);
    assert_int_equal(m2.total, 81920 * MIB);
    assert_int_equal(m2.reserved, 637 * MIB);
    assert_int_equal(m2.used, 53995 * MIB);
    assert_int_equal(m2.free, (81920 - 637 - 53995) * MIB);
    assert_int_equal(N(nvmlDeviceGetMemoryInfo)(d, &m1), NVML_SUCCESS);
    assert_int_equal(m1.used, (637 + 53995) * MIB); /* v1 counts reserved as used */
    assert_int_equal(m1.free, m2.free);
    m2.version = 2; /* the header comment's "must be 2" is wrong */
    assert_int_equal(N(nvmlDeviceGetMemoryInfo_v2)(d, &m2), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    assert_int_equal(N(nvmlDeviceGetClockInfo)(d, NVML_CLOCK_MEM, &v), NVML_SUCCESS);
    assert_int_equal(v, 1593);
    assert_int_equal(N(nvmlDeviceGetMaxClockInfo)(d, NVML_CLOCK_SM, &v), NVML_SUCCESS);
    assert_int_equal(v, 1410);
    assert_int_equal(N(nvmlDeviceGetCurrPcieLinkGeneration)(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 4);
    assert_int_equal(N(nvmlDeviceGetEccMode)(d, (int *)&cur, (int *)&pend), NVML_SUCCESS);
    assert_int_equal(cur, NVML_FEATURE_ENABLED);
    assert_int_equal(N(nvmlDeviceGetTotalEccErrors)(d, 0, NVML_AGGREGATE_ECC, &e), NVML_SUCCESS);
    assert_int_equal(e, 12);
    assert_int_equal(N(nvmlDeviceGetFanSpeed)(d, &v), NVML_ERROR_NOT_SUPPORTED);
    /* MIG queries on a GPU with MIG off */
    assert_int_equal(N(nvmlDeviceGetMigMode)(d, &cur, &pend), NVML_SUCCESS);
    assert_int_equal(cur, 0);
    assert_int_equal(N(nvmlDeviceGetMaxMigDeviceCount)(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 0);
    assert_int_equal(N(nvmlDeviceGetMigDeviceHandleByIndex)(d, 0, &d), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(N(nvmlDeviceGetGpuInstanceId)(d, &v), NVML_ERROR_NOT_SUPPORTED);
    nvmlDeviceAttributes_t a;
    assert_int_equal(N(nvmlDeviceGetAttributes_v2)(d, &a), NVML_ERROR_NOT_SUPPORTED);
}

static void test_field_values(void **state)
{
    nvmlFieldValue_t f[5];
    unsigned long long e;
    unsigned ids[5] = {83, 185, 186, 203, 999};
    nvmlDevice_t d, m;
    (void)state;
    start("a100-sxm4-80gb.ini", "15");
    d = gpu(0);
    memset(f, 0, sizeof(f));
    for (int i = 0; i < 5; i++)
        f[i].fieldId = ids[i];
    assert_int_equal(N(nvmlDeviceGetFieldValues)(d, 5, f), NVML_SUCCESS);
    assert_int_equal(N(nvmlDeviceGetTotalEnergyConsumption)(d, &e), NVML_SUCCESS);
    assert_int_equal(f[0].nvmlReturn, NVML_SUCCESS);
    assert_int_equal(f[0].value.ullVal, e);
    assert_int_equal(f[0].timestamp, (long long)(EPOCH_US + 15000000));
    assert_int_equal(f[1].nvmlReturn, NVML_ERROR_NOT_SUPPORTED); /* no 1 s average on GA100 */
    assert_int_equal(f[2].nvmlReturn, NVML_SUCCESS);
    assert_int_equal(f[2].value.uiVal, 290000);
    assert_int_equal(f[3].nvmlReturn, NVML_ERROR_NOT_SUPPORTED); /* NVLink, not utilisation */
    assert_int_equal(f[4].nvmlReturn, NVML_ERROR_INVALID_ARGUMENT); /* past NVML_FI_MAX */
    N(nvmlShutdown)();
    /* 535.129.03: id 203 is past NVML_FI_MAX=197: 2 on the parent, "OK" 0 on MIG */
    start("h100-pcie-mig-535.ini", "10");
    d = gpu(0);
    m = mig(d, 0);
    memset(f, 0, sizeof(f));
    f[0].fieldId = 203;
    assert_int_equal(N(nvmlDeviceGetFieldValues)(d, 1, f), NVML_ERROR_INVALID_ARGUMENT);
    f[0].fieldId = 203;
    f[0].value.ullVal = 77;
    assert_int_equal(N(nvmlDeviceGetFieldValues)(m, 1, f), NVML_SUCCESS);
    assert_int_equal(f[0].nvmlReturn, NVML_SUCCESS);
    assert_int_equal(f[0].value.ullVal, 0);
    f[0].fieldId = 194;
    assert_int_equal(N(nvmlDeviceGetFieldValues)(d, 1, f), NVML_SUCCESS);
    assert_int_equal(f[0].value.uiVal, 89);
}

/* ---- MIG on driver 535.129.03: the seed README's measured table ---- */

static void test_h100_535_parent(void **state)
{
    nvmlDevice_t d, m;
    nvmlUtilization_t u;
    nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
    nvmlMemory_t m1;
    nvmlSample_t s[200];
    nvmlValueType_t vt;
    nvmlProcessUtilizationSample_t pu[8];
    nvmlProcessInfo_v2_t p[8];
    unsigned v, v2, n;
    (void)state;
    start("h100-pcie-mig-535.ini", "10");
    d = gpu(0);
    assert_int_equal(N(nvmlDeviceGetUtilizationRates)(d, &u), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(N(nvmlDeviceGetEncoderUtilization)(d, &v, &v2), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(N(nvmlDeviceGetDecoderUtilization)(d, &v, &v2), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(N(nvmlDeviceGetMemoryInfo)(d, &m1), NVML_ERROR_NO_PERMISSION);
    assert_int_equal(N(nvmlDeviceGetMemoryInfo_v2)(d, &m2), NVML_ERROR_NO_PERMISSION);
    assert_int_equal(N(nvmlDeviceGetTemperature)(d, 0, &v), NVML_SUCCESS);
    assert_int_equal(v, 49);
    assert_int_equal(N(nvmlDeviceGetPowerUsage)(d, &v), NVML_SUCCESS);
    assert_in_range(v, 314000, 316000); /* Hopper: the 1 s average of wave(290, 25, 40) */
    assert_int_equal(N(nvmlDeviceGetClockInfo)(d, NVML_CLOCK_SM, &v), NVML_SUCCESS);
    assert_int_equal(v, 1755);
    assert_int_equal(N(nvmlDeviceGetPcieThroughput)(d, NVML_PCIE_UTIL_RX_BYTES, &v), NVML_SUCCESS);
    assert_int_equal(N(nvmlDeviceGetFanSpeed)(d, &v), NVML_ERROR_NOT_SUPPORTED);
    /* GetSamples: type 0 is power in mW (what the old tool misread as util) */
    n = 200;
    assert_int_equal(N(nvmlDeviceGetSamples)(d, NVML_TOTAL_POWER_SAMPLES, 0, &vt, &n, s),
                     NVML_SUCCESS);
    assert_int_equal(n, 120);
    assert_int_equal(vt, NVML_VALUE_TYPE_UNSIGNED_INT);
    assert_int_equal(s[119].timeStamp, EPOCH_US + 10000000);
    assert_int_equal(s[119].sampleValue.uiVal, 315000); /* 290 + 25 sin(pi/2) W */
    assert_int_equal(s[118].timeStamp, EPOCH_US + 10000000 - 20000);
    n = 0;
    assert_int_equal(N(nvmlDeviceGetSamples)(d, NVML_GPU_UTILIZATION_SAMPLES, 0, &vt, &n, NULL),
                     NVML_SUCCESS); /* sizes... */
    assert_true(n > 0);
    for (int type = 1; type <= 4; type++) {
        n = 200;
        assert_int_equal(N(nvmlDeviceGetSamples)(d, type, 0, &vt, &n, s),
                         NVML_ERROR_NOT_SUPPORTED); /* ...but no data */
    }
    n = 200;
    assert_int_equal(N(nvmlDeviceGetSamples)(d, NVML_PROCESSOR_CLK_SAMPLES, 0, &vt, &n, s),
                     NVML_SUCCESS);
    assert_int_equal(s[n - 1].sampleValue.uiVal, 1755);
    n = 0;
    assert_int_equal(N(nvmlDeviceGetProcessUtilization)(d, NULL, &n, 0),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 3);
    n = 8;
    assert_int_equal(N(nvmlDeviceGetProcessUtilization)(d, pu, &n, 0), NVML_ERROR_NOT_SUPPORTED);
    /* driver 535.129.03 has no ProcessesUtilizationInfo / TemperatureV (full library: 13) */
    nvmlProcessesUtilizationInfo_v1_t pui = {.version = nvmlProcessesUtilizationInfo_v1};
    assert_int_equal(N(nvmlDeviceGetProcessesUtilizationInfo)(d, &pui),
                     NVML_ERROR_FUNCTION_NOT_FOUND);
    /* unprivileged: no aggregate process list */
    n = 8;
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(d, &n, p),
                     NVML_ERROR_NO_PERMISSION);
    /* slots 0, 1, 3; 2 and 4-6 empty; 7 is past the maximum */
    assert_int_equal(N(nvmlDeviceGetMaxMigDeviceCount)(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 7);
    for (unsigned i = 0; i < 8; i++) {
        int want = (i == 0 || i == 1 || i == 3) ? NVML_SUCCESS
                   : i < 7                      ? NVML_ERROR_NOT_FOUND
                                                : NVML_ERROR_INVALID_ARGUMENT;
        assert_int_equal(N(nvmlDeviceGetMigDeviceHandleByIndex)(d, i, &m), want);
    }
    nvmlGpuInstanceProfileInfo_t gp;
    assert_int_equal(N(nvmlDeviceGetGpuInstanceProfileInfo)(d, 0, &gp), NVML_SUCCESS);
    assert_int_equal(gp.sliceCount, 1);
    assert_int_equal(gp.id, 19);
    assert_int_equal(N(nvmlDeviceGetGpuInstanceProfileInfo)(d, 4, &gp), NVML_SUCCESS);
    assert_int_equal(gp.sliceCount, 7);
    assert_int_equal(gp.instanceCount, 1);
    assert_int_equal(N(nvmlDeviceGetGpuInstanceProfileInfo)(d, 5, &gp), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(N(nvmlDeviceGetGpuInstanceProfileInfo)(d, 10, &gp),
                     NVML_ERROR_INVALID_ARGUMENT);
}

static void test_h100_535_mig_device(void **state)
{
    nvmlDevice_t d, m, m3, back;
    nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
    nvmlSample_t s[8];
    nvmlValueType_t vt;
    nvmlDeviceAttributes_t a;
    nvmlUtilization_t u;
    nvmlProcessUtilizationSample_t pu[8];
    nvmlTemperature_t tv = {.version = nvmlTemperature_v1};
    unsigned char buf[256];
    unsigned v, n;
    char name[96], uuid[96];
    (void)state;
    start("h100-pcie-mig-535.ini", "10");
    d = gpu(0);
    m = mig(d, 0);
    m3 = mig(d, 3);
    assert_int_equal(N(nvmlDeviceIsMigDeviceHandle)(m, &v), NVML_SUCCESS);
    assert_int_equal(v, 1);
    assert_int_equal(N(nvmlDeviceGetName)(m, name, sizeof(name)), NVML_SUCCESS);
    assert_string_equal(name, "NVIDIA H100 PCIe MIG 3g.40gb");
    assert_int_equal(N(nvmlDeviceGetUUID)(m, uuid, sizeof(uuid)), NVML_SUCCESS);
    assert_string_equal(uuid, "MIG-1f0e5c2a-9b7d-5e3c-8a41-6d2b9f0c3e17");
    assert_int_equal(N(nvmlDeviceGetHandleByUUID)(uuid, &back), NVML_SUCCESS);
    assert_ptr_equal(back, m);
    assert_int_equal(N(nvmlDeviceGetDeviceHandleFromMigDeviceHandle)(m3, &back), NVML_SUCCESS);
    assert_ptr_equal(back, d);
    assert_int_equal(N(nvmlDeviceGetIndex)(m3, &v), NVML_SUCCESS);
    assert_int_equal(v, 3);
    assert_int_equal(N(nvmlDeviceGetGpuInstanceId)(m, &v), NVML_SUCCESS);
    assert_int_equal(v, 2);
    assert_int_equal(N(nvmlDeviceGetComputeInstanceId)(m, &v), NVML_SUCCESS);
    assert_int_equal(v, 0);
    /* per-instance memory; used = its process (31200 MiB) */
    assert_int_equal(N(nvmlDeviceGetMemoryInfo_v2)(m, &m2), NVML_SUCCESS);
    assert_int_equal(m2.total, 40320 * MIB);
    assert_int_equal(m2.used, 31200 * MIB);
    assert_int_equal(N(nvmlDeviceGetAttributes_v2)(m, &a), NVML_SUCCESS);
    assert_int_equal(a.gpuInstanceSliceCount, 3);
    assert_int_equal(a.computeInstanceSliceCount, 3);
    assert_int_equal(a.memorySizeMB, 40320);
    assert_int_equal(a.multiprocessorCount, 42);
    /* GPU-wide readings on a MIG handle: the 535.129.03 codes */
    assert_int_equal(N(nvmlDeviceGetUtilizationRates)(m, &u), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(N(nvmlDeviceGetTemperature)(m, 0, &v), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(N(nvmlDeviceGetTemperatureV)(m, &tv), NVML_ERROR_FUNCTION_NOT_FOUND);
    assert_int_equal(N(nvmlDeviceGetPowerUsage)(m, &v), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(N(nvmlDeviceGetClockInfo)(m, NVML_CLOCK_SM, &v), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(N(nvmlDeviceGetPcieThroughput)(m, 0, &v), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(N(nvmlDeviceGetCurrPcieLinkWidth)(m, &v), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(N(nvmlDeviceGetMigMode)(m, &v, &n), NVML_ERROR_NOT_SUPPORTED);
    for (int type = 0; type <= 6; type++) {
        n = 0;
        assert_int_equal(N(nvmlDeviceGetSamples)(m, type, 0, &vt, &n, NULL),
                         NVML_ERROR_INVALID_ARGUMENT);
        n = 8;
        assert_int_equal(N(nvmlDeviceGetSamples)(m, type, 0, &vt, &n, s),
                         NVML_ERROR_INVALID_ARGUMENT);
    }
    n = 0;
    assert_int_equal(N(nvmlDeviceGetProcessUtilization)(m, NULL, &n, 0),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 1);
    n = 8;
    assert_int_equal(N(nvmlDeviceGetProcessUtilization)(m, pu, &n, 0),
                     NVML_ERROR_INVALID_ARGUMENT);
    /* the instance's own process list: GI/CI ids, 24-byte _v3 entries on 535.129 */
    memset(buf, 0xAB, sizeof(buf));
    n = 4;
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(m, &n, buf), NVML_SUCCESS);
    assert_int_equal(n, 1);
    nvmlProcessInfo_v2_t *e = (nvmlProcessInfo_v2_t *)(void *)buf;
    assert_int_equal(e->pid, 4101);
    assert_int_equal(e->usedGpuMemory, 31200 * MIB);
    assert_int_equal(e->gpuInstanceId, 2);
    assert_int_equal(e->computeInstanceId, 0);
    assert_int_equal(buf[24], 0xAB);
    n = 4;
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(m3, &n, buf), NVML_SUCCESS);
    assert_int_equal(e->pid, 4230);
    assert_true(e->usedGpuMemory == NVML_VALUE_NOT_AVAILABLE_ULL);
    assert_int_equal(e->gpuInstanceId, 9);
}

/* ---- process lists ---- */

static void test_process_protocol_and_strides(void **state)
{
    unsigned char buf[512];
    nvmlProcessInfo_v2_t p[8];
    nvmlDevice_t d;
    unsigned n;
    (void)state;
    start("process-churn.ini", "25");
    d = gpu(0);
    /* size query; the list then grows by one (process_grow) */
    n = 0;
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(d, &n, NULL),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 2);
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(d, &n, p),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 3);
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(d, &n, p), NVML_SUCCESS);
    assert_int_equal(n, 3);
    assert_int_equal(p[0].pid, 8100);
    assert_int_equal(p[1].pid, 8300);
    assert_int_equal(p[1].usedGpuMemory, 3000 * MIB); /* ramp(500, 100) at 25 */
    assert_int_equal(p[2].pid, 9999);
    assert_int_equal(p[0].gpuInstanceId, NVML_INVALID_INSTANCE_ID);
    n = 8; /* over-allocated, no size query: the transient process is gone */
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(d, &n, p), NVML_SUCCESS);
    assert_int_equal(n, 2);
    /* 8100 is compute and graphics; xorg's memory is not available */
    n = 8;
    assert_int_equal(N(nvmlDeviceGetGraphicsRunningProcesses_v2)(d, &n, p), NVML_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(p[0].pid, 8100);
    assert_int_equal(p[1].pid, 1450);
    assert_true(p[1].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE_ULL);
    n = 1;
    assert_int_equal(N(nvmlDeviceGetGraphicsRunningProcesses_v2)(d, &n, p),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 2);
    /* strides: v1 16 bytes, v2 24 */
    memset(buf, 0xAB, sizeof(buf));
    n = 8;
    assert_int_equal(N(nvmlDeviceGetGraphicsRunningProcesses)(d, &n, (void *)buf), NVML_SUCCESS);
    assert_int_equal(*(unsigned *)(void *)(buf + 16), 1450);
    assert_int_equal(buf[32], 0xAB);
    memset(buf, 0xAB, sizeof(buf));
    n = 8;
    assert_int_equal(N(nvmlDeviceGetGraphicsRunningProcesses_v2)(d, &n, (void *)buf), NVML_SUCCESS);
    assert_int_equal(*(unsigned *)(void *)(buf + 24), 1450);
    assert_int_equal(buf[48], 0xAB);
    n = 8;
    assert_int_equal(N(nvmlDeviceGetMPSComputeRunningProcesses_v3)(d, &n, p), NVML_SUCCESS);
    assert_int_equal(n, 2); /* scenario order */
    assert_int_equal(p[0].pid, 8200);
    assert_int_equal(p[1].pid, 8150);
    N(nvmlShutdown)();
    /* at t = 0 nobody uses MPS yet: a size query answers SUCCESS with 0 */
    start("process-churn.ini", "0");
    n = 0;
    assert_int_equal(N(nvmlDeviceGetMPSComputeRunningProcesses_v3)(gpu(0), &n, NULL),
                     NVML_SUCCESS);
    assert_int_equal(n, 0);
}

static void test_process_utilization(void **state)
{
    nvmlProcessUtilizationSample_t s[8];
    nvmlProcessUtilizationInfo_v1_t info[8];
    nvmlProcessesUtilizationInfo_v1_t pi = {.version = nvmlProcessesUtilizationInfo_v1};
    nvmlDevice_t d;
    unsigned n = 0;
    (void)state;
    start("process-churn.ini", "25.5");
    d = gpu(0);
    assert_int_equal(N(nvmlDeviceGetProcessUtilization)(d, NULL, &n, 0),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 5);
    n = 8;
    assert_int_equal(N(nvmlDeviceGetProcessUtilization)(d, s, &n, 0), NVML_SUCCESS);
    assert_int_equal(n, 5);
    assert_int_equal(s[0].pid, 8100);
    assert_int_equal(s[0].smUtil, 40);
    assert_int_equal(s[0].encUtil, 15);
    assert_int_equal(s[0].timeStamp, EPOCH_US + 25000000);
    n = 8;
    assert_int_equal(N(nvmlDeviceGetProcessUtilization)(d, s, &n, s[0].timeStamp),
                     NVML_ERROR_NOT_FOUND);
    pi.procUtilArray = info;
    pi.processSamplesCount = 2;
    assert_int_equal(N(nvmlDeviceGetProcessesUtilizationInfo)(d, &pi),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(pi.processSamplesCount, 5);
    assert_int_equal(N(nvmlDeviceGetProcessesUtilizationInfo)(d, &pi), NVML_SUCCESS);
    assert_int_equal(info[4].pid, 8300);
    assert_int_equal(info[4].smUtil, 70);
    pi.version = 1;
    assert_int_equal(N(nvmlDeviceGetProcessesUtilizationInfo)(d, &pi),
                     NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
}

/* PID 8300 exits at t = 50 and the kernel gives it to another program at 55:
 * NVML lists the same number in another list; nothing else tells them apart. */
static void test_process_pid_reuse(void **state)
{
    nvmlProcessInfo_v2_t p[8];
    unsigned n;
    (void)state;
    start("process-churn.ini", "52");
    n = 8;
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v2)(gpu(0), &n, p), NVML_SUCCESS);
    for (unsigned i = 0; i < n; i++)
        assert_int_not_equal(p[i].pid, 8300);
    n = 8;
    assert_int_equal(N(nvmlDeviceGetGraphicsRunningProcesses_v2)(gpu(0), &n, p), NVML_SUCCESS);
    assert_int_equal(n, 2);
    N(nvmlShutdown)();
    start("process-churn.ini", "60");
    n = 8;
    assert_int_equal(N(nvmlDeviceGetGraphicsRunningProcesses_v2)(gpu(0), &n, p), NVML_SUCCESS);
    assert_int_equal(n, 3);
    assert_int_equal(p[2].pid, 8300);
    assert_int_equal(p[2].usedGpuMemory, 128 * MIB);
}

/* mig-unattributed.ini: MIG handles' lists fail, the privileged parent's
 * aggregate carries GI ids, slot 1 cannot say its GI. */
static void test_mig_unattributed_scenario(void **state)
{
    nvmlProcessInfo_v2_t p[8];
    unsigned n = 8, id = 0;
    nvmlDevice_t d;
    (void)state;
    start("mig-unattributed.ini", "10");
    d = gpu(0);
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(mig(d, 0), &n, p),
                     NVML_ERROR_NOT_SUPPORTED);
    n = 8;
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(d, &n, p), NVML_SUCCESS);
    assert_int_equal(n, 3);
    assert_int_equal(p[1].pid, 4187);
    assert_int_equal(p[1].gpuInstanceId, 3);
    assert_true(p[2].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE_ULL);
    assert_int_equal(N(nvmlDeviceGetGpuInstanceId)(mig(d, 1), &id), NVML_ERROR_UNKNOWN);
    assert_int_equal(N(nvmlDeviceGetGpuInstanceId)(mig(d, 0), &id), NVML_SUCCESS);
    assert_int_equal(id, 2);
}

/* ---- privileged parent, driver 570 ---- */

static void test_h200_privileged_parent(void **state)
{
    nvmlDevice_t d;
    nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
    nvmlProcessInfo_v2_t p[8];
    nvmlTemperature_t tv = {.version = nvmlTemperature_v1};
    nvmlGpmSupport_t gs = {.version = NVML_GPM_SUPPORT_VERSION};
    unsigned n = 8;
    (void)state;
    start("h200-mig.ini", "0");
    d = gpu(0);
    assert_int_equal(N(nvmlDeviceGetMemoryInfo_v2)(d, &m2), NVML_SUCCESS);
    assert_int_equal(m2.total, 143771 * MIB);
    assert_int_equal(m2.used, (46000 + 12500 + 4100) * MIB); /* the instances' sum at t = 0 */
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(d, &n, p), NVML_SUCCESS);
    assert_int_equal(n, 3);
    assert_int_equal(p[0].gpuInstanceId, 1);
    assert_int_equal(p[1].gpuInstanceId, 5);
    assert_int_equal(p[2].gpuInstanceId, 13);
    assert_int_equal(N(nvmlDeviceGetTemperatureV)(d, &tv), NVML_SUCCESS);
    assert_int_equal(tv.temperature, 52);
    tv.version = 1;
    assert_int_equal(N(nvmlDeviceGetTemperatureV)(d, &tv), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    assert_int_equal(N(nvmlGpmQueryDeviceSupport)(d, &gs), NVML_SUCCESS);
    assert_int_equal(gs.isSupportedDevice, 1);
    gs.version = 2;
    assert_int_equal(N(nvmlGpmQueryDeviceSupport)(d, &gs), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    nvmlGpuInstanceProfileInfo_t gp;
    assert_int_equal(N(nvmlDeviceGetGpuInstanceProfileInfo)(d, 4, &gp), NVML_SUCCESS);
    assert_int_equal(gp.memorySizeMB, 137216); /* 7g.141gb */
}

/* ---- time ---- */

static void test_time_step_clock_and_energy(void **state)
{
    nvmlFieldValue_t f = {.fieldId = NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION};
    unsigned long long prev = 0, e;
    nvmlDevice_t d;
    (void)state;
    start("a100-sxm4-80gb.ini", "100+5");
    d = gpu(0);
    assert_int_equal(N(nvmlDeviceGetFieldValues)(d, 1, &f), NVML_SUCCESS);
    assert_int_equal(f.timestamp, (long long)(EPOCH_US + 100000000)); /* before any tick */
    for (int i = 0; i < 10; i++) {
        tick();
        assert_int_equal(N(nvmlDeviceGetFieldValues)(d, 1, &f), NVML_SUCCESS);
        assert_int_equal(f.timestamp, (long long)(EPOCH_US + (100 + 5 * i) * 1000000ULL));
        assert_true(f.value.ullVal > prev); /* energy only grows */
        prev = f.value.ullVal;
    }
    N(nvmlShutdown)();
    start("a100-sxm4-80gb.ini", NULL); /* real monotonic clock */
    assert_int_equal(N(nvmlDeviceGetTotalEnergyConsumption)(gpu(0), &prev), NVML_SUCCESS);
    usleep(20000);
    assert_int_equal(N(nvmlDeviceGetTotalEnergyConsumption)(gpu(0), &e), NVML_SUCCESS);
    assert_true(e > prev);
}

static void test_mig_reconfiguration(void **state)
{
    nvmlDevice_t d, m1, m;
    nvmlProcessInfo_v2_t p[8];
    unsigned n, v;
    char name[96];
    (void)state;
    start("mig-reconfig.ini", "0+10");
    tick(); /* t = 0 */
    d = gpu(0);
    m1 = mig(d, 1);
    assert_int_equal(N(nvmlDeviceGetMigDeviceHandleByIndex)(d, 2, &m), NVML_ERROR_NOT_FOUND);
    tick();
    tick(); /* t = 20 */
    /* slot 0's own list fails; the privileged parent's aggregate carries GI ids */
    n = 8;
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(mig(d, 0), &n, p),
                     NVML_ERROR_NOT_SUPPORTED);
    n = 8;
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(d, &n, p), NVML_SUCCESS);
    assert_int_equal(n, 3);
    assert_int_equal(p[0].pid, 6100);
    assert_int_equal(p[0].gpuInstanceId, 1);
    assert_int_equal(p[2].pid, 6200);
    assert_int_equal(p[2].gpuInstanceId, 5);
    for (int i = 0; i < 4; i++)
        tick(); /* t = 60: slot 1's 2g.20gb is destroyed */
    assert_int_equal(N(nvmlDeviceGetName)(m1, name, sizeof(name)), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(N(nvmlDeviceGetMigDeviceHandleByIndex)(d, 1, &m), NVML_ERROR_NOT_FOUND);
    tick(); /* t = 70: two 1g.10gb appear */
    m = mig(d, 2);
    assert_int_equal(N(nvmlDeviceGetGpuInstanceId)(m, &v), NVML_SUCCESS);
    assert_int_equal(v, 13);
    assert_int_equal(N(nvmlDeviceGetName)(mig(d, 4), name, sizeof(name)), NVML_SUCCESS);
    assert_string_equal(name, "NVIDIA A100-SXM4-80GB MIG 1g.10gb");
}

static void test_faults(void **state)
{
    nvmlDevice_t d0, d1;
    nvmlProcessInfo_v2_t p[4];
    unsigned v, n;
    char name[96];
    (void)state;
    start("faults.ini", "0+5");
    tick(); /* t = 0 */
    d0 = gpu(0);
    d1 = gpu(1);
    assert_int_equal(N(nvmlDeviceGetTemperature)(d0, 0, &v), NVML_SUCCESS);
    tick();
    tick(); /* t = 10: two failures, then fine */
    assert_int_equal(N(nvmlDeviceGetTemperature)(d0, 0, &v), NVML_ERROR_UNKNOWN);
    assert_int_equal(N(nvmlDeviceGetTemperature)(d1, 0, &v), NVML_SUCCESS); /* gpu.0 only */
    assert_int_equal(N(nvmlDeviceGetTemperature)(d0, 0, &v), NVML_ERROR_UNKNOWN);
    assert_int_equal(N(nvmlDeviceGetTemperature)(d0, 0, &v), NVML_SUCCESS);
    tick();
    tick(); /* t = 20 */
    n = 4;
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(d0, &n, p),
                     NVML_ERROR_NOT_SUPPORTED);
    tick(); /* t = 25 */
    n = 4;
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(d0, &n, p), NVML_SUCCESS);
    assert_int_equal(n, 1);
    tick(); /* t = 30: gpu.1 is lost */
    assert_int_equal(N(nvmlDeviceGetName)(d1, name, sizeof(name)), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(N(nvmlDeviceGetHandleByIndex_v2)(1, &d1), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(N(nvmlDeviceGetName)(d0, name, sizeof(name)), NVML_SUCCESS);
}

/* ---- driver versions: the full library and the symbol-accurate variants ---- */

static unsigned long long ver(const char *s)
{
    unsigned a = 0, b = 0, c = 0;
    if (!strcmp(s, "0"))
        return 0;
    sscanf(s, "%u.%u.%u", &a, &b, &c);
    return ((unsigned long long)a << 32) | ((unsigned long long)b << 16) | c;
}

/* Each variant exports exactly what sim/symbols.txt gives its driver. */
static void test_variant_exports_match_table(void **state)
{
    static const struct {
        const char *dir, *driver;
    } vs[] = {{NULL, "999.0.0"}, {"drv-450", "450.66"}, {"drv-535", "535.129.03"},
              {"drv-535.86", "535.86.10"}};
    char path[1024], line[256];
    (void)state;
    for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
        void *h = vs[i].dir ? open_variant(vs[i].dir) : full_lib;
        unsigned long long drv = ver(vs[i].driver);
        FILE *f;
        int checked = 0;
        snprintf(path, sizeof(path), "%s/sim/symbols.txt", env("MIGMON_SRC"));
        assert_non_null(f = fopen(path, "r"));
        while (fgets(line, sizeof(line), f)) {
            char name[128], first[32], from[32] = "", until[32] = "";
            int k = sscanf(line, "%127s %31s %31s %31s", name, first, from, until);
            bool want;
            if (k < 2 || name[0] == '#')
                continue;
            want = drv >= ver(first) && !(k == 4 && drv >= ver(from) && drv < ver(until));
            if ((dlsym(h, name) != NULL) != want)
                fail_msg("%s: %s should%s be exported", vs[i].driver, name, want ? "" : " not");
            checked++;
        }
        fclose(f);
        assert_true(checked > 70);
    }
}

static void test_variant_behaviour(void **state)
{
    unsigned char buf[256];
    char drvbuf[80];
    unsigned n = 8;
    nvmlDevice_t d;
    (void)state;
    /* 535.86.10: _v3 writes the 32-byte struct; ConfCompute present, DetailList absent */
    lib = open_variant("drv-535.86");
    start("h200-mig.ini", "0");
    assert_int_equal(N(nvmlSystemGetDriverVersion)(drvbuf, sizeof(drvbuf)), NVML_SUCCESS);
    assert_string_equal(drvbuf, "535.86.10");
    assert_null(dlsym(lib, "nvmlDeviceGetRunningProcessDetailList"));
    assert_non_null(dlsym(lib, "nvmlDeviceGetConfComputeMemSizeInfo"));
    d = gpu(0);
    memset(buf, 0xAB, sizeof(buf));
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(d, &n, buf), NVML_SUCCESS);
    assert_int_equal(n, 3);
    assert_int_equal(*(unsigned *)(void *)(buf + 32), 7040); /* second entry at 32 bytes */
    assert_int_equal(*(unsigned long long *)(void *)(buf + 24), 0); /* protected memory */
    n = 8;
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v2)(d, &n, (void *)buf), NVML_SUCCESS);
    assert_int_equal(*(unsigned *)(void *)(buf + 24), 7040);
    teardown(NULL);
    /* 535.129.03: back to 24 bytes, DetailList (Hopper) with the 32-byte detail struct */
    lib = open_variant("drv-535");
    start("h200-mig.ini", "0");
    n = 8;
    memset(buf, 0xAB, sizeof(buf));
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(gpu(0), &n, buf), NVML_SUCCESS);
    assert_int_equal(*(unsigned *)(void *)(buf + 24), 7040);
    nvmlProcessDetail_v1_t det[4];
    nvmlProcessDetailList_v1_t pl = {.version = nvmlProcessDetailList_v1, .mode = 0,
                                     .numProcArrayEntries = 4, .procArray = det};
    assert_int_equal(N(nvmlDeviceGetRunningProcessDetailList)(gpu(0), &pl), NVML_SUCCESS);
    assert_int_equal(pl.numProcArrayEntries, 3);
    assert_int_equal(det[1].pid, 7040);
    pl.mode = 3; /* ALL exists only in 13.x headers */
    assert_int_equal(N(nvmlDeviceGetRunningProcessDetailList)(gpu(0), &pl),
                     NVML_ERROR_INVALID_ARGUMENT);
    teardown(NULL);
    /* 450.66: no _v3 and no MemoryInfo_v2, but v1 memory works */
    lib = open_variant("drv-450");
    start("a100-sxm4-80gb.ini", "15");
    assert_null(dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3"));
    assert_null(dlsym(lib, "nvmlDeviceGetMemoryInfo_v2"));
    nvmlMemory_t m1;
    assert_int_equal(N(nvmlDeviceGetMemoryInfo)(gpu(0), &m1), NVML_SUCCESS);
    assert_int_equal(N(nvmlSystemGetNVMLVersion)(drvbuf, sizeof(drvbuf)), NVML_SUCCESS);
    assert_string_equal(drvbuf, "11.450.66");
    teardown(NULL);
    /* the full library with a 535.98 scenario: _v3 had been dropped -> 13 */
    lib = full_lib;
    start(write_tmp("[system]\ndriver_version = 535.98\n[gpu.0]\nname = NVIDIA H100 PCIe\n"
                    "memory_total_mib = 81559\n"),
          NULL);
    n = 0;
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(gpu(0), &n, NULL),
                     NVML_ERROR_FUNCTION_NOT_FOUND);
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v2)(gpu(0), &n, NULL), NVML_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_uninitialised_and_missing_scenario, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_scenarios, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_shipped_scenario_loads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refcount_and_reload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_gpu_needs_flag, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inaccessible_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_system_versions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a100_values_at_fixed_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_field_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_h100_535_parent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_h100_535_mig_device, setup, teardown),
        cmocka_unit_test_setup_teardown(test_process_protocol_and_strides, setup, teardown),
        cmocka_unit_test_setup_teardown(test_process_utilization, setup, teardown),
        cmocka_unit_test_setup_teardown(test_process_pid_reuse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mig_unattributed_scenario, setup, teardown),
        cmocka_unit_test_setup_teardown(test_h200_privileged_parent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_time_step_clock_and_energy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mig_reconfiguration, setup, teardown),
        cmocka_unit_test_setup_teardown(test_faults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_variant_exports_match_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_variant_behaviour, setup, teardown),
    };
    full_lib = open_lib(env("MIGMON_SIM_LIB"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
