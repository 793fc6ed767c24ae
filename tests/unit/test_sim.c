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
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "dl_env.h"

#include "../../sim/exports.h" /* prototypes, only for __typeof__ */

#define EPOCH_US 1700000000000000ULL
#define MIB 1048576ULL

static void *lib; /* the library the current test talks to */
static void *full_lib;

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

/* A bad file fails init with 9, and says why on stderr only when asked;
 * migmon_sim_check_scenario gives the same message without an init. */
static void expect_invalid(const char *text, const char *needle)
{
    int (*check)(const char *, char *, size_t) =
        (int (*)(const char *, char *, size_t))sym_in(lib, "migmon_sim_check_scenario");
    char *path = write_tmp(text), out[1024] = "", cerr[1024] = "", want[1100];
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
    assert_int_equal(check(path, cerr, sizeof(cerr)), -1);
    unlink(path);
    snprintf(want, sizeof(want), "nvml-sim: %s\n", cerr);
    assert_string_equal(out, want);
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
    expect_invalid("[system]\ndriver_version = 550.144.03\n[fault.typo]\n"
                   "function = nvmlDeviceGetTemprature\nreturn = UNKNOWN\n",
                   ": [fault.typo] function 'nvmlDeviceGetTemprature' matches no exported symbol");
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
    int (*check)(const char *, char *, size_t) =
        (int (*)(const char *, char *, size_t))sym_in(lib, "migmon_sim_check_scenario");
    (void)state;
    snprintf(dir, sizeof(dir), "%s/sim/scenarios", env("MIGMON_SRC"));
    assert_non_null(d = opendir(dir));
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".ini") != 0)
            continue;
        /* t = -1: before any fault's window opens (hang-init.ini blocks
         * nvmlInit from t = 0 on, by design) */
        set_scenario(e->d_name, "-1");
        /* NO_GPUS: no-gpu.ini must load too */
        if (N(nvmlInitWithFlags)(NVML_INIT_FLAG_NO_GPUS) != NVML_SUCCESS)
            fail_msg("%s does not load", e->d_name);
        assert_int_equal(N(nvmlShutdown)(), NVML_SUCCESS);
        char path[1400], err[600] = "";
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (check(path, err, sizeof(err)) != 0)
            fail_msg("%s fails the check: %s", e->d_name, err);
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

/* The process's mapped size (VmSize), kB; -1 unknown. */
static long vm_size_kb(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmSize: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/* A scenario takes room for what it defines: loading one GPU used to map
 * room for 1,024 GPUs, 8,192 MIG devices and 16,384 processes (74 MB, which
 * a sanitizer clears at every load: NVML's init then took 200 ms under
 * ThreadSanitizer, past the monitor's first tick). */
static void test_scenario_size_follows_content(void **state)
{
    unsigned n;
    (void)state;
    while (N(nvmlShutdown)() == NVML_SUCCESS && N(nvmlDeviceGetCount_v2)(&n) == NVML_SUCCESS)
        ;
    long before = vm_size_kb();
    start("a100-sxm4-80gb.ini", NULL);
    long after = vm_size_kb();
    assert_true(before > 0 && after > 0);
    assert_true(after - before < 4096);
    assert_int_equal(N(nvmlDeviceGetCount_v2)(&n), NVML_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(N(nvmlShutdown)(), NVML_SUCCESS);
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

/* ---- fault delays and hangs ---- */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A check in a fork()ed child: cmocka's asserts must not run there (a
 * failure would unwind into the parent's test runner), so it says where
 * and the child exits 1. */
#define CHILD_CHECK(cond)                                                                         \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: in the child: %s\n", __FILE__, __LINE__, #cond);               \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* Runs fn in a child process, which _exits with its result (0 = passed);
 * a child that is still running after 20 s is killed and fails the test. */
static void run_in_child(int (*fn)(void))
{
    int status = 0;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(fn());
    for (int i = 0; i < 2000 && waitpid(pid, &status, WNOHANG) == 0; i++)
        usleep(10000);
    if (waitpid(pid, &status, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        fail_msg("the child did not finish within 20 s");
    }
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

struct timed_call {
    __typeof__(&nvmlDeviceGetTemperature) fn;
    nvmlDevice_t dev;
    nvmlReturn_t rc;
    unsigned value;
    double ms;
};

static void *timed_temperature(void *arg)
{
    struct timed_call *tc = arg;
    double t0 = now_ms();
    tc->rc = tc->fn(tc->dev, NVML_TEMPERATURE_GPU, &tc->value);
    tc->ms = now_ms() - t0;
    return NULL;
}

static const char delay_scenario[] =
    "[system]\ndriver_version = 550.144.03\n"
    "[gpu.0-1]\nname = NVIDIA A100-SXM4-80GB\nmemory_total_mib = 81920\n"
    "[gpu.0]\ntemperature_c = 61\n"
    "[fault.slow-init]\nfunction = nvmlInit_v2\ndelay_ms = 100\nreturn = UNKNOWN\ncalls = 1\n"
    "[fault.slow-temp]\ntarget = gpu.0\nfunction = nvmlDeviceGetTemperature\ndelay_ms = 400\n"
    "calls = 1\n"
    "[fault.slow-fail]\ntarget = gpu.0\nfunction = nvmlDeviceGetPowerUsage\ndelay_ms = 100\n"
    "return = UNKNOWN\ncalls = 1\n"
    "[fault.slow-shutdown]\nfunction = nvmlShutdown\ndelay_ms = 100\ncalls = 1\n";

/* delay_ms: the call sleeps, then goes on (or returns `return`), without
 * holding the simulator's lock: another device answers meanwhile. Init and
 * shutdown are delayed but never failed. */
static void test_fault_delay(void **state)
{
    struct timed_call slow = {.fn = N(nvmlDeviceGetTemperature)};
    pthread_t th;
    unsigned v;
    double t0;
    char *path = write_tmp(delay_scenario);
    (void)state;
    set_scenario(path, "10");
    t0 = now_ms();
    assert_int_equal(N(nvmlInit_v2)(), NVML_SUCCESS); /* the fault's return is ignored */
    assert_true(now_ms() - t0 >= 100);
    unlink(path);
    slow.dev = gpu(0);
    assert_int_equal(pthread_create(&th, NULL, timed_temperature, &slow), 0);
    usleep(50000);
    t0 = now_ms();
    assert_int_equal(N(nvmlDeviceGetTemperature)(gpu(1), NVML_TEMPERATURE_GPU, &v), NVML_SUCCESS);
    assert_true(now_ms() - t0 < 200); /* gpu.1 does not wait for gpu.0's sleep */
    assert_int_equal(v, 40);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(slow.rc, NVML_SUCCESS);
    assert_int_equal(slow.value, 61);
    assert_true(slow.ms >= 400);
    t0 = now_ms();
    assert_int_equal(N(nvmlDeviceGetTemperature)(gpu(0), NVML_TEMPERATURE_GPU, &v), NVML_SUCCESS);
    assert_true(now_ms() - t0 < 200); /* calls = 1 */
    t0 = now_ms();
    assert_int_equal(N(nvmlDeviceGetPowerUsage)(gpu(0), &v), NVML_ERROR_UNKNOWN);
    assert_true(now_ms() - t0 >= 100);
    t0 = now_ms();
    assert_int_equal(N(nvmlShutdown)(), NVML_SUCCESS);
    assert_true(now_ms() - t0 >= 100);
    assert_int_equal(N(nvmlDeviceGetCount_v2)(&v), NVML_ERROR_UNINITIALIZED);
}

struct hang_call {
    __typeof__(&nvmlGpmMigSampleGet) fn;
    nvmlDevice_t dev;
    nvmlGpmSample_t sample;
    volatile int returned;
};

static void *hanging_sample(void *arg)
{
    struct hang_call *hc = arg;
    hc->fn(hc->dev, 9, hc->sample);
    hc->returned = 1;
    return NULL;
}

/* gpm-hang.ini in a child: six samples work, the seventh blocks for good,
 * and calls from the other thread, on other devices, still return. The
 * child exits with the hung thread still blocked. */
static int hang_child(void)
{
    static struct hang_call hc;
    nvmlDevice_t d, m;
    nvmlGpmSample_t s = NULL;
    nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
    pthread_t th;
    unsigned v;
    double t0;
    set_scenario("gpm-hang.ini", "10");
    CHILD_CHECK(N(nvmlInit_v2)() == NVML_SUCCESS);
    CHILD_CHECK(N(nvmlDeviceGetHandleByIndex_v2)(0, &d) == NVML_SUCCESS);
    CHILD_CHECK(N(nvmlGpmSampleAlloc)(&s) == NVML_SUCCESS);
    for (int i = 0; i < 3; i++) {
        CHILD_CHECK(N(nvmlGpmMigSampleGet)(d, 2, s) == NVML_SUCCESS);
        CHILD_CHECK(N(nvmlGpmSampleGet)(d, s) == NVML_SUCCESS);
    }
    hc.fn = N(nvmlGpmMigSampleGet);
    hc.dev = d;
    hc.sample = s;
    CHILD_CHECK(pthread_create(&th, NULL, hanging_sample, &hc) == 0);
    usleep(300000);
    CHILD_CHECK(!hc.returned);
    t0 = now_ms();
    CHILD_CHECK(N(nvmlDeviceGetMigDeviceHandleByIndex)(d, 2, &m) == NVML_SUCCESS);
    CHILD_CHECK(N(nvmlDeviceGetMemoryInfo_v2)(m, &m2) == NVML_SUCCESS);
    CHILD_CHECK(m2.used == 3100 * MIB);
    CHILD_CHECK(N(nvmlDeviceGetTemperature)(d, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS);
    CHILD_CHECK(now_ms() - t0 < 200);
    CHILD_CHECK(!hc.returned);
    return 0;
}

static void test_fault_hang(void **state)
{
    (void)state;
    run_in_child(hang_child);
    expect_invalid("[system]\ndriver_version = 550.144.03\n[gpu.0]\nname = NVIDIA A100-SXM4-80GB\n"
                   "memory_total_mib = 81920\n[fault.x]\nfunction = nvmlShutdown\n",
                   "[fault.x] return is required (unless delay_ms or hang is given)");
    expect_invalid("[system]\ndriver_version = 550.144.03\n[gpu.0]\nname = NVIDIA A100-SXM4-80GB\n"
                   "memory_total_mib = 81920\n[fault.x]\nfunction = nvml*\ndelay_ms = -5\n",
                   "delay_ms must not be negative");
}

/* ---- GPM ---- */

#define TWO_PI 6.283185307179586476925

static double wave(double base, double amp, double period, double phase, double t)
{
    return base + amp * sin(TWO_PI * (t + phase) / period);
}

/* The mean of wave() over [t1, t2]. */
static double wave_mean(double base, double amp, double period, double phase, double t1,
                        double t2)
{
    double w = TWO_PI / period;
    return base - amp / w * (cos(w * (t2 + phase)) - cos(w * (t1 + phase))) / (t2 - t1);
}

static nvmlGpmSample_t gpm_alloc(void)
{
    nvmlGpmSample_t s = NULL;
    assert_int_equal(N(nvmlGpmSampleAlloc)(&s), NVML_SUCCESS);
    assert_non_null(s);
    return s;
}

static nvmlGpmMetricsGet_t mg; /* 13 KB: NVML_GPM_METRIC_MAX of 595 */

/* Asks for the n metrics ids over a -> b; returns the call's code. */
static nvmlReturn_t gpm_metrics(nvmlGpmSample_t a, nvmlGpmSample_t b, const unsigned *ids,
                                unsigned n)
{
    memset(&mg, 0, sizeof(mg));
    mg.version = NVML_GPM_METRICS_GET_VERSION;
    mg.numMetrics = n;
    mg.sample1 = a;
    mg.sample2 = b;
    for (unsigned i = 0; i < n; i++)
        mg.metrics[i].metricId = ids[i];
    return N(nvmlGpmMetricsGet)(&mg);
}

/* The last request again, asking for n metrics (ids past the first ones are 0). */
static nvmlReturn_t gpm_metrics_n(unsigned n)
{
    mg.numMetrics = n;
    return N(nvmlGpmMetricsGet)(&mg);
}

/* One metric that must succeed. */
static double gpm_value(nvmlGpmSample_t a, nvmlGpmSample_t b, unsigned id)
{
    assert_int_equal(gpm_metrics(a, b, &id, 1), NVML_SUCCESS);
    assert_int_equal(mg.metrics[0].nvmlReturn, NVML_SUCCESS);
    return mg.metrics[0].value;
}

static nvmlReturn_t gpm_rc(nvmlGpmSample_t a, nvmlGpmSample_t b, unsigned id)
{
    assert_int_equal(gpm_metrics(a, b, &id, 1), NVML_SUCCESS);
    return mg.metrics[0].nvmlReturn;
}

#define assert_near(a, b) assert_true(fabs((a) - (b)) < 1e-6)

/* Sampling arrives with 520, nvmlGpmMigSampleGet with 525. */
static void test_gpm_symbols_by_driver(void **state)
{
    static const char h100[] = "[gpu.0]\nname = NVIDIA H100 PCIe\nmemory_total_mib = 81559\n"
                               "mig_mode = on\n[gpu.0.mig.0]\nprofile = 3g.40gb\ngi = 2\n";
    char text[512];
    nvmlGpmSample_t s;
    nvmlGpmSupport_t gs = {.version = NVML_GPM_SUPPORT_VERSION};
    char *path;
    (void)state;
    snprintf(text, sizeof(text), "[system]\ndriver_version = 520.61.05\n%s", h100);
    path = write_tmp(text);
    start(path, "10");
    unlink(path);
    s = gpm_alloc();
    assert_int_equal(N(nvmlGpmSampleGet)(gpu(0), s), NVML_SUCCESS);
    assert_int_equal(N(nvmlGpmMigSampleGet)(gpu(0), 2, s), NVML_ERROR_FUNCTION_NOT_FOUND);
    assert_int_equal(N(nvmlGpmSampleFree)(s), NVML_SUCCESS);
    N(nvmlShutdown)();
    snprintf(text, sizeof(text), "[system]\ndriver_version = 525.60.13\n%s", h100);
    path = write_tmp(text);
    start(path, "10");
    unlink(path);
    s = gpm_alloc();
    assert_int_equal(N(nvmlGpmMigSampleGet)(gpu(0), 2, s), NVML_SUCCESS);
    assert_int_equal(N(nvmlGpmSampleFree)(s), NVML_SUCCESS);
    N(nvmlShutdown)();
    snprintf(text, sizeof(text), "[system]\ndriver_version = 515.86.01\n%s", h100);
    path = write_tmp(text);
    start(path, "10");
    unlink(path);
    assert_int_equal(N(nvmlGpmSampleAlloc)(&s), NVML_ERROR_FUNCTION_NOT_FOUND);
    assert_int_equal(N(nvmlGpmQueryDeviceSupport)(gpu(0), &gs), NVML_ERROR_FUNCTION_NOT_FOUND);
}

static void test_gpm_alloc_free(void **state)
{
    nvmlGpmSample_t s = NULL, s2;
    int not_a_sample = 0;
    (void)state;
    assert_int_equal(N(nvmlGpmSampleAlloc)(&s), NVML_ERROR_UNINITIALIZED);
    start("h100-pcie-mig-535.ini", "10");
    assert_int_equal(N(nvmlGpmSampleAlloc)(NULL), NVML_ERROR_INVALID_ARGUMENT);
    s = gpm_alloc();
    s2 = gpm_alloc();
    assert_ptr_not_equal(s, s2);
    assert_int_equal(N(nvmlGpmSampleFree)(s), NVML_SUCCESS);
    assert_int_equal(N(nvmlGpmSampleFree)(s), NVML_ERROR_INVALID_ARGUMENT); /* double free */
    assert_int_equal(N(nvmlGpmSampleGet)(gpu(0), s), NVML_ERROR_INVALID_ARGUMENT); /* freed */
    assert_int_equal(N(nvmlGpmSampleFree)(NULL), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(N(nvmlGpmSampleFree)((nvmlGpmSample_t)(void *)&not_a_sample),
                     NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(N(nvmlGpmSampleGet)(gpu(0), NULL), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(N(nvmlGpmSampleGet)(NULL, s2), NVML_ERROR_INVALID_ARGUMENT);
    N(nvmlShutdown)();
    assert_int_equal(N(nvmlGpmSampleFree)(s2), NVML_ERROR_UNINITIALIZED);
    start("h100-pcie-mig-535.ini", "10"); /* samples outlive a session */
    assert_int_equal(N(nvmlGpmSampleFree)(s2), NVML_SUCCESS);
}

/* Which handles and architectures sample, on which drivers. */
static void test_gpm_sample_get_errors(void **state)
{
    nvmlGpmSample_t s;
    nvmlGpmSupport_t gs = {.version = NVML_GPM_SUPPORT_VERSION};
    nvmlDevice_t d;
    (void)state;
    start("h100-pcie-mig-535.ini", "15");
    d = gpu(0);
    s = gpm_alloc();
    assert_int_equal(N(nvmlGpmMigSampleGet)(mig(d, 0), 2, s), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(N(nvmlGpmMigSampleGet)(d, 2, NULL), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(N(nvmlGpmMigSampleGet)(d, 7, s), NVML_ERROR_NOT_FOUND);
    assert_int_equal(N(nvmlGpmMigSampleGet)(d, 4, s), NVML_ERROR_NOT_FOUND);
    /* the three GIs at t = 15, and the parent's 7-slice mean */
    assert_int_equal(N(nvmlGpmMigSampleGet)(d, 2, s), NVML_SUCCESS);
    assert_near(gpm_value(s, s, NVML_GPM_METRIC_GRAPHICS_UTIL), 88.0); /* wave(80, 8, 60) */
    assert_near(gpm_value(s, s, NVML_GPM_METRIC_SM_UTIL), 80.0);
    assert_near(gpm_value(s, s, NVML_GPM_METRIC_DRAM_BW_UTIL), 54.0); /* wave(50, 8, 60, 10) */
    assert_int_equal(N(nvmlGpmMigSampleGet)(d, 3, s), NVML_SUCCESS);
    assert_near(gpm_value(s, s, NVML_GPM_METRIC_GRAPHICS_UTIL), wave(35, 15, 45, 15, 15));
    assert_int_equal(N(nvmlGpmMigSampleGet)(d, 9, s), NVML_SUCCESS);
    assert_near(gpm_value(s, s, NVML_GPM_METRIC_GRAPHICS_UTIL), wave(10, 5, 30, 5, 15));
    assert_int_equal(N(nvmlGpmSampleGet)(d, s), NVML_SUCCESS);
    assert_near(gpm_value(s, s, NVML_GPM_METRIC_GRAPHICS_UTIL),
                (3 * 88.0 + 2 * wave(35, 15, 45, 15, 15) + wave(10, 5, 30, 5, 15)) / 7);
    assert_near(gpm_value(s, s, NVML_GPM_METRIC_PCIE_RX_PER_SEC), wave(410.2, 117.2, 20, 0, 15));
    assert_int_equal(N(nvmlGpmSampleGet)(mig(d, 0), s), NVML_ERROR_NOT_SUPPORTED); /* < 595 */
    N(nvmlShutdown)();
    start("h200-mig.ini", "10"); /* 570: still no MIG handles */
    assert_int_equal(N(nvmlGpmSampleGet)(mig(gpu(0), 0), s), NVML_ERROR_NOT_SUPPORTED);
    N(nvmlShutdown)();
    start("h100-sxm.ini", "10"); /* MIG off */
    assert_int_equal(N(nvmlGpmMigSampleGet)(gpu(0), 0, s), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(N(nvmlGpmSampleGet)(gpu(0), s), NVML_SUCCESS);
    N(nvmlShutdown)();
    start("a100-sxm4-80gb.ini", "10"); /* Ampere */
    assert_int_equal(N(nvmlGpmQueryDeviceSupport)(gpu(0), &gs), NVML_SUCCESS);
    assert_int_equal(gs.isSupportedDevice, 0);
    assert_int_equal(N(nvmlGpmSampleGet)(gpu(0), s), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(N(nvmlGpmMigSampleGet)(gpu(0), 0, s), NVML_ERROR_NOT_SUPPORTED);
    N(nvmlShutdown)();
    start("dgx-a100-8x7.ini", "10"); /* Ampere, MIG on */
    assert_int_equal(N(nvmlGpmSampleGet)(gpu(3), s), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(N(nvmlGpmMigSampleGet)(gpu(3), 7, s), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(N(nvmlGpmSampleFree)(s), NVML_SUCCESS);
}

static void test_gpm_metrics_get_errors(void **state)
{
    nvmlGpmSample_t a, b, c, g, blank, gone;
    nvmlDevice_t d;
    unsigned ids[4] = {NVML_GPM_METRIC_SM_UTIL, 98, NVML_GPM_METRIC_MAX_R570 - 1, 8};
    (void)state;
    start("h200-mig.ini", "100+10");
    tick(); /* t = 100 */
    d = gpu(0);
    a = gpm_alloc();
    b = gpm_alloc();
    c = gpm_alloc();
    g = gpm_alloc();
    blank = gpm_alloc();
    gone = gpm_alloc();
    assert_int_equal(N(nvmlGpmMigSampleGet)(d, 1, a), NVML_SUCCESS);
    assert_int_equal(N(nvmlGpmMigSampleGet)(d, 1, gone), NVML_SUCCESS);
    tick(); /* t = 110 */
    assert_int_equal(N(nvmlGpmMigSampleGet)(d, 1, b), NVML_SUCCESS);
    assert_int_equal(N(nvmlGpmMigSampleGet)(d, 5, c), NVML_SUCCESS);
    assert_int_equal(N(nvmlGpmSampleGet)(d, g), NVML_SUCCESS);
    assert_int_equal(N(nvmlGpmMetricsGet)(NULL), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(gpm_metrics(a, b, ids, 1), NVML_SUCCESS);
    mg.version = 2;
    assert_int_equal(N(nvmlGpmMetricsGet)(&mg), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    /* 570: NVML_GPM_METRIC_MAX is 98 */
    assert_int_equal(gpm_metrics(a, b, ids, 4), NVML_SUCCESS);
    assert_int_equal(gpm_metrics_n(98), NVML_SUCCESS);
    assert_int_equal(mg.metrics[97].nvmlReturn, NVML_ERROR_NOT_SUPPORTED); /* id 0 */
    assert_int_equal(gpm_metrics_n(99), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(gpm_metrics(a, c, ids, 1), NVML_ERROR_INVALID_ARGUMENT); /* GI 1 vs 5 */
    assert_int_equal(gpm_metrics(a, g, ids, 1), NVML_ERROR_INVALID_ARGUMENT); /* GI vs GPU */
    assert_int_equal(gpm_metrics(b, a, ids, 1), NVML_ERROR_INVALID_ARGUMENT); /* backwards */
    assert_int_equal(gpm_metrics(a, blank, ids, 1), NVML_ERROR_INVALID_ARGUMENT); /* not taken */
    assert_int_equal(gpm_metrics(NULL, b, ids, 1), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(N(nvmlGpmSampleFree)(gone), NVML_SUCCESS);
    assert_int_equal(gpm_metrics(gone, b, ids, 1), NVML_ERROR_INVALID_ARGUMENT); /* freed */
    assert_int_equal(gpm_metrics(a, a, ids, 1), NVML_SUCCESS); /* t1 == t2 is fine */
    /* per metric: an id past the driver's max is invalid; one not modelled, 3 */
    assert_int_equal(gpm_metrics(a, b, ids, 4), NVML_SUCCESS);
    assert_int_equal(mg.metrics[0].nvmlReturn, NVML_SUCCESS);
    assert_int_equal(mg.metrics[1].nvmlReturn, NVML_ERROR_INVALID_ARGUMENT);
    assert_null(mg.metrics[1].metricInfo.shortName);
    assert_int_equal(mg.metrics[2].nvmlReturn, NVML_ERROR_NOT_SUPPORTED); /* 97 */
    assert_int_equal(mg.metrics[3].nvmlReturn, NVML_ERROR_NOT_SUPPORTED); /* DMMA */
    /* samples from an earlier session do not compare with this one's clock */
    N(nvmlShutdown)();
    start("h200-mig.ini", "100+10");
    assert_int_equal(gpm_metrics(a, b, ids, 1), NVML_ERROR_INVALID_ARGUMENT);
    N(nvmlShutdown)();
    /* 595: NVML_GPM_METRIC_MAX is 333 */
    start("h200-mig-595.ini", "10");
    assert_int_equal(N(nvmlGpmMigSampleGet)(gpu(0), 1, a), NVML_SUCCESS);
    assert_int_equal(gpm_metrics(a, a, ids, 4), NVML_SUCCESS);
    assert_int_equal(gpm_metrics_n(NVML_GPM_METRIC_MAX_R595), NVML_SUCCESS);
    assert_int_equal(mg.metrics[1].nvmlReturn, NVML_ERROR_NOT_SUPPORTED); /* 98 is valid now */
    assert_int_equal(gpm_metrics_n(NVML_GPM_METRIC_MAX_R595 + 1), NVML_ERROR_INVALID_ARGUMENT);
    ids[1] = 333;
    assert_int_equal(gpm_rc(a, a, ids[1]), NVML_ERROR_INVALID_ARGUMENT);
    for (nvmlGpmSample_t *p = (nvmlGpmSample_t[]){a, b, c, g, blank}, *e = p + 5; p < e; p++)
        assert_int_equal(N(nvmlGpmSampleFree)(*p), NVML_SUCCESS);
}

/* h200-mig at t = 37.5: GI values are the scenario's functions there, the
 * parent is the slice-weighted mean over 7 slices, and nothing past
 * numMetrics is written. */
static void test_gpm_values_at_fixed_time(void **state)
{
    static const unsigned ids[] = {NVML_GPM_METRIC_GRAPHICS_UTIL, NVML_GPM_METRIC_SM_UTIL,
                                   NVML_GPM_METRIC_DRAM_BW_UTIL};
    const double t = 37.5;
    nvmlGpmSample_t a, b;
    nvmlDevice_t d;
    unsigned char sentinel[sizeof(nvmlGpmMetric_t) * 4];
    double gr1, gr5, gr13;
    (void)state;
    start("h200-mig.ini", "37.5");
    d = gpu(0);
    a = gpm_alloc();
    b = gpm_alloc();
    assert_int_equal(N(nvmlGpmMigSampleGet)(d, 1, a), NVML_SUCCESS);
    assert_int_equal(N(nvmlGpmMigSampleGet)(d, 1, b), NVML_SUCCESS);
    memset(&mg, 0, sizeof(mg));
    mg.version = NVML_GPM_METRICS_GET_VERSION;
    mg.numMetrics = 3;
    mg.sample1 = a;
    mg.sample2 = b;
    for (int i = 0; i < 3; i++)
        mg.metrics[i].metricId = ids[i];
    memset(&mg.metrics[3], 0xA5, sizeof(sentinel));
    memset(sentinel, 0xA5, sizeof(sentinel));
    assert_int_equal(N(nvmlGpmMetricsGet)(&mg), NVML_SUCCESS);
    assert_memory_equal(&mg.metrics[3], sentinel, sizeof(sentinel));
    for (int i = 0; i < 3; i++)
        assert_int_equal(mg.metrics[i].nvmlReturn, NVML_SUCCESS);
    /* slot 0, GI 1: wave(85, 6, 50) at 37.5 is its trough */
    assert_near(mg.metrics[0].value, 79.0);
    assert_near(mg.metrics[1].value, 70.0);
    assert_near(mg.metrics[2].value, 55.0); /* wave(55, 5, 50, 12.5): a zero crossing */
    assert_string_equal(mg.metrics[0].metricInfo.shortName, "GRAPHICS_UTIL");
    assert_string_equal(mg.metrics[0].metricInfo.unit, "%");
    assert_non_null(mg.metrics[0].metricInfo.longName);
    gr1 = mg.metrics[0].value;
    assert_int_equal(N(nvmlGpmMigSampleGet)(d, 5, a), NVML_SUCCESS);
    gr5 = gpm_value(a, a, NVML_GPM_METRIC_GRAPHICS_UTIL);
    assert_near(gr5, wave(40, 20, 70, 20, t));
    assert_near(gpm_value(a, a, NVML_GPM_METRIC_SM_OCCUPANCY), wave(22, 9, 70, 20, t));
    assert_int_equal(N(nvmlGpmMigSampleGet)(d, 13, a), NVML_SUCCESS);
    gr13 = gpm_value(a, a, NVML_GPM_METRIC_GRAPHICS_UTIL);
    assert_near(gr13, wave(10, 5, 35, 7, t));
    assert_int_equal(N(nvmlGpmMigSampleGet)(d, 14, a), NVML_SUCCESS); /* idle, no keys */
    assert_near(gpm_value(a, a, NVML_GPM_METRIC_GRAPHICS_UTIL), 0.0);
    assert_near(gpm_value(a, a, NVML_GPM_METRIC_DRAM_BW_UTIL), 0.0);
    /* PCIe and NVLink are GPU-level: not on a GI sample */
    assert_int_equal(gpm_rc(a, a, NVML_GPM_METRIC_PCIE_TX_PER_SEC), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(gpm_rc(a, a, NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC),
                     NVML_ERROR_NOT_SUPPORTED);
    /* the parent: 3g + 2g + 1g + idle 1g over 7 slices */
    assert_int_equal(N(nvmlGpmSampleGet)(d, a), NVML_SUCCESS);
    assert_near(gpm_value(a, a, NVML_GPM_METRIC_GRAPHICS_UTIL),
                (3 * gr1 + 2 * gr5 + gr13 + 0) / 7);
    assert_near(gpm_value(a, a, NVML_GPM_METRIC_PCIE_TX_PER_SEC), 146.5);
    assert_string_equal(mg.metrics[0].metricInfo.unit, "MiB/s");
    assert_near(gpm_value(a, a, NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC), 0.0);
    assert_int_equal(N(nvmlGpmSampleFree)(a), NVML_SUCCESS);
    assert_int_equal(N(nvmlGpmSampleFree)(b), NVML_SUCCESS);
}

/* Over [t1, t2] a metric is the mean of its function, whatever the
 * sampling pattern: the step clock gives 100 and 110. */
static void test_gpm_average_over_interval(void **state)
{
    nvmlGpmSample_t a, b, p1, p2;
    nvmlDevice_t d;
    double v;
    (void)state;
    start("h200-mig.ini", "100+10");
    tick(); /* t = 100 */
    d = gpu(0);
    a = gpm_alloc();
    b = gpm_alloc();
    p1 = gpm_alloc();
    p2 = gpm_alloc();
    assert_int_equal(N(nvmlGpmMigSampleGet)(d, 1, a), NVML_SUCCESS);
    assert_int_equal(N(nvmlGpmSampleGet)(d, p1), NVML_SUCCESS);
    tick(); /* t = 110 */
    assert_int_equal(N(nvmlGpmMigSampleGet)(d, 1, b), NVML_SUCCESS);
    assert_int_equal(N(nvmlGpmSampleGet)(d, p2), NVML_SUCCESS);
    v = gpm_value(a, b, NVML_GPM_METRIC_GRAPHICS_UTIL);
    assert_near(v, wave_mean(85, 6, 50, 0, 100, 110));
    assert_true(fabs(v - 88.30) < 0.01);
    assert_near(gpm_value(a, b, NVML_GPM_METRIC_DRAM_BW_UTIL),
                wave_mean(55, 5, 50, 12.5, 100, 110));
    assert_near(gpm_value(p1, p2, NVML_GPM_METRIC_PCIE_RX_PER_SEC),
                wave_mean(585.9, 195.3, 25, 0, 100, 110));
    assert_near(gpm_value(p1, p2, NVML_GPM_METRIC_SM_UTIL),
                (3 * wave_mean(76, 6, 50, 0, 100, 110) + 2 * wave_mean(34, 16, 70, 20, 100, 110) +
                 wave_mean(8, 4, 35, 7, 100, 110)) /
                    7);
    for (nvmlGpmSample_t *p = (nvmlGpmSample_t[]){a, b, p1, p2}, *e = p + 4; p < e; p++)
        assert_int_equal(N(nvmlGpmSampleFree)(*p), NVML_SUCCESS);
}

/* 595 on h200-mig-595: GI 1 is split into a 1-slice CI (slot 0) and a
 * 2-slice CI (slot 1); MIG handles sample their compute instance. */
static void test_gpm_compute_instances(void **state)
{
    const double t = 12;
    nvmlGpmSample_t ci0, ci1, gi1, gpu_s;
    nvmlDevice_t d;
    char name[96];
    double r0, r1, r2, r4, dram_gi;
    (void)state;
    start("h200-mig-595.ini", "12");
    d = gpu(0);
    assert_int_equal(N(nvmlDeviceGetName)(mig(d, 0), name, sizeof(name)), NVML_SUCCESS);
    assert_string_equal(name, "NVIDIA H200 MIG 1c.3g.71gb");
    ci0 = gpm_alloc();
    ci1 = gpm_alloc();
    gi1 = gpm_alloc();
    gpu_s = gpm_alloc();
    assert_int_equal(N(nvmlGpmSampleGet)(mig(d, 0), ci0), NVML_SUCCESS);
    assert_int_equal(N(nvmlGpmSampleGet)(mig(d, 1), ci1), NVML_SUCCESS);
    assert_int_equal(N(nvmlGpmMigSampleGet)(d, 1, gi1), NVML_SUCCESS);
    assert_int_equal(N(nvmlGpmSampleGet)(d, gpu_s), NVML_SUCCESS);
    r0 = wave(60, 10, 40, 0, t);
    r1 = wave(88, 6, 40, 10, t);
    r2 = wave(40, 15, 60, 15, t);
    r4 = wave(10, 5, 30, 5, t);
    assert_near(gpm_value(ci0, ci0, NVML_GPM_METRIC_GRAPHICS_UTIL), r0);
    assert_near(gpm_value(ci1, ci1, NVML_GPM_METRIC_GRAPHICS_UTIL), r1);
    assert_near(gpm_value(gi1, gi1, NVML_GPM_METRIC_GRAPHICS_UTIL), (r0 + 2 * r1) / 3);
    assert_true(fabs((r0 + 2 * r1) / 3 - 80.60) < 0.01);
    assert_near(gpm_value(gpu_s, gpu_s, NVML_GPM_METRIC_GRAPHICS_UTIL),
                (r0 + 2 * r1 + 2 * r2 + r4) / 7);
    /* DRAM belongs to the GI: both CIs report the GI's */
    dram_gi = (wave(30, 6, 40, 0, t) + 2 * wave(52, 6, 40, 10, t)) / 3;
    assert_near(gpm_value(gi1, gi1, NVML_GPM_METRIC_DRAM_BW_UTIL), dram_gi);
    assert_near(gpm_value(ci0, ci0, NVML_GPM_METRIC_DRAM_BW_UTIL), dram_gi);
    assert_near(gpm_value(ci1, ci1, NVML_GPM_METRIC_DRAM_BW_UTIL), dram_gi);
    assert_near(gpm_value(ci0, ci0, NVML_GPM_METRIC_SM_UTIL), wave(54, 9, 40, 0, t));
    assert_int_equal(gpm_rc(ci0, ci0, NVML_GPM_METRIC_PCIE_TX_PER_SEC), NVML_ERROR_NOT_SUPPORTED);
    assert_near(gpm_value(gpu_s, gpu_s, NVML_GPM_METRIC_PCIE_TX_PER_SEC),
                wave(179.7, 59.6, 25, 0, t));
    /* a CI, its GI and its sibling are different entities */
    assert_int_equal(gpm_metrics(ci0, gi1, (unsigned[]){1}, 1), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(gpm_metrics(ci0, ci1, (unsigned[]){1}, 1), NVML_ERROR_INVALID_ARGUMENT);
    for (nvmlGpmSample_t *p = (nvmlGpmSample_t[]){ci0, ci1, gi1, gpu_s}, *e = p + 4; p < e; p++)
        assert_int_equal(N(nvmlGpmSampleFree)(*p), NVML_SUCCESS);
}

/* h100-sxm: MIG off; IMMA is NaN, FP64 fails per metric, NVLink and PCIe
 * are the GPU's. The call succeeds whatever its metrics say. */
static void test_gpm_nan_and_metric_errors(void **state)
{
    static const unsigned ids[] = {NVML_GPM_METRIC_GRAPHICS_UTIL,
                                   NVML_GPM_METRIC_IMMA_TENSOR_UTIL,
                                   NVML_GPM_METRIC_FP64_UTIL,
                                   8,
                                   NVML_GPM_METRIC_PCIE_TX_PER_SEC,
                                   NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC,
                                   NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC,
                                   98,
                                   0};
    nvmlGpmSample_t a;
    nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
    (void)state;
    start("h100-sxm.ini", "10");
    a = gpm_alloc();
    assert_int_equal(N(nvmlGpmSampleGet)(gpu(0), a), NVML_SUCCESS);
    assert_int_equal(gpm_metrics(a, a, ids, 9), NVML_SUCCESS);
    assert_int_equal(mg.metrics[0].nvmlReturn, NVML_SUCCESS);
    assert_near(mg.metrics[0].value, 96.0); /* wave(92, 4, 40) at 10 */
    assert_int_equal(mg.metrics[1].nvmlReturn, NVML_SUCCESS);
    assert_true(isnan(mg.metrics[1].value));
    assert_int_equal(mg.metrics[2].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(mg.metrics[3].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(mg.metrics[4].nvmlReturn, NVML_SUCCESS);
    assert_near(mg.metrics[4].value, wave(2197.3, 585.9, 30, 0, 10));
    assert_near(mg.metrics[5].value, 118000.0);
    assert_near(mg.metrics[6].value, wave(120000, 30000, 30, 0, 10));
    assert_int_equal(mg.metrics[7].nvmlReturn, NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(mg.metrics[8].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
    /* no gpm_corrupts_session here: memory still reads after a sample */
    assert_int_equal(N(nvmlDeviceGetMemoryInfo_v2)(gpu(0), &m2), NVML_SUCCESS);
    assert_int_equal(m2.used, (61440 + 6000 + 750) * MIB); /* eval's wave at 10: +1500 sin(pi/6) */
    assert_int_equal(N(nvmlGpmSampleFree)(a), NVML_SUCCESS);
    N(nvmlShutdown)(); /* expect_invalid needs the 0 -> 1 init that loads */
    expect_invalid("[system]\ndriver_version = 570.211.01\n[gpu.0]\nname = NVIDIA H100 80GB HBM3\n"
                   "memory_total_mib = 81559\ngpm_sm_util = wave(90, 20, 10)\n",
                   "gpm_sm_util: values must stay within 0..100");
    expect_invalid("[system]\ndriver_version = 570.211.01\n[gpu.0]\nname = NVIDIA H100 80GB HBM3\n"
                   "memory_total_mib = 81559\nutil_gpu = nan\n",
                   "util_gpu: bad value 'nan'");
    expect_invalid("[system]\ndriver_version = 570.211.01\n[gpu.0]\nname = NVIDIA H200\n"
                   "memory_total_mib = 143771\nmig_mode = on\n[gpu.0.mig.0]\nprofile = 1g.18gb\n"
                   "gi = 13\ngpm_pcie_tx_mibps = 5\n",
                   ":10: [gpu.0.mig.0] gpm_pcie_tx_mibps: a GPU-wide rate; give it in [gpu.0]");
    expect_invalid("[system]\ndriver_version = 570.211.01\n[gpu.0]\nname = NVIDIA H200\n"
                   "memory_total_mib = 143771\nmig_mode = on\n[gpu.0.mig.0-1]\nprofile = 3g.71gb\n"
                   "gi = 1\nci = 0+\nci_slices = 2\n",
                   "the compute instances of GI 1 use 4 slices at t=-inf, the GI has 3");
}

/* gpm_corrupts_session, in a child process: memory reads work until the
 * first successful GPM sample, then fail with IN_USE for the rest of the
 * process, across shutdown, init and another scenario. */
static int corrupts_child(void)
{
    nvmlDevice_t d, m;
    nvmlGpmSample_t s;
    nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
    nvmlMemory_t m1;
    set_scenario("h100-pcie-mig-535-gpm-corrupts.ini", "10");
    CHILD_CHECK(N(nvmlInit_v2)() == NVML_SUCCESS);
    CHILD_CHECK(N(nvmlDeviceGetHandleByIndex_v2)(0, &d) == NVML_SUCCESS);
    CHILD_CHECK(N(nvmlDeviceGetMigDeviceHandleByIndex)(d, 0, &m) == NVML_SUCCESS);
    CHILD_CHECK(N(nvmlDeviceGetMemoryInfo_v2)(m, &m2) == NVML_SUCCESS);
    CHILD_CHECK(m2.used == 31200 * MIB);
    CHILD_CHECK(N(nvmlDeviceGetMemoryInfo)(m, &m1) == NVML_SUCCESS);
    CHILD_CHECK(N(nvmlGpmSampleAlloc)(&s) == NVML_SUCCESS);
    CHILD_CHECK(N(nvmlGpmMigSampleGet)(d, 7, s) == NVML_ERROR_NOT_FOUND); /* a failure: no harm */
    CHILD_CHECK(N(nvmlDeviceGetMemoryInfo_v2)(m, &m2) == NVML_SUCCESS);
    CHILD_CHECK(N(nvmlGpmMigSampleGet)(d, 2, s) == NVML_SUCCESS);
    CHILD_CHECK(N(nvmlDeviceGetMemoryInfo_v2)(m, &m2) == NVML_ERROR_IN_USE);
    CHILD_CHECK(N(nvmlDeviceGetMemoryInfo)(m, &m1) == NVML_ERROR_IN_USE);
    CHILD_CHECK(N(nvmlDeviceGetMemoryInfo)(d, &m1) == NVML_ERROR_IN_USE);
    CHILD_CHECK(N(nvmlDeviceGetMemoryInfo_v2)(d, NULL) == NVML_ERROR_IN_USE);
    CHILD_CHECK(N(nvmlDeviceGetName)(m, (char[96]){0}, 96) == NVML_SUCCESS); /* others work */
    CHILD_CHECK(N(nvmlGpmSampleFree)(s) == NVML_SUCCESS);
    CHILD_CHECK(N(nvmlShutdown)() == NVML_SUCCESS);
    set_scenario("h100-pcie-mig-535.ini", "10");
    CHILD_CHECK(N(nvmlInit_v2)() == NVML_SUCCESS);
    CHILD_CHECK(N(nvmlDeviceGetHandleByIndex_v2)(0, &d) == NVML_SUCCESS);
    CHILD_CHECK(N(nvmlDeviceGetMigDeviceHandleByIndex)(d, 0, &m) == NVML_SUCCESS);
    CHILD_CHECK(N(nvmlDeviceGetMemoryInfo_v2)(m, &m2) == NVML_ERROR_IN_USE);
    CHILD_CHECK(N(nvmlShutdown)() == NVML_SUCCESS);
    return 0;
}

static void test_gpm_corrupts_session(void **state)
{
    nvmlGpmSample_t s;
    nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
    (void)state;
    run_in_child(corrupts_child);
    /* this process never sampled under the switch: its memory reads work */
    start("h100-pcie-mig-535-gpm-corrupts.ini", "10");
    assert_int_equal(N(nvmlDeviceGetMemoryInfo_v2)(mig(gpu(0), 0), &m2), NVML_SUCCESS);
    N(nvmlShutdown)();
    /* without the switch, sampling leaves memory alone */
    start("h100-pcie-mig-535.ini", "10");
    s = gpm_alloc();
    assert_int_equal(N(nvmlGpmMigSampleGet)(gpu(0), 2, s), NVML_SUCCESS);
    assert_int_equal(N(nvmlDeviceGetMemoryInfo_v2)(mig(gpu(0), 0), &m2), NVML_SUCCESS);
    assert_int_equal(N(nvmlGpmSampleFree)(s), NVML_SUCCESS);
}

/* Reads a scenario without comments, blank lines and the given key. */
static void read_scenario_body(const char *file, const char *skip_key, char *out, size_t len)
{
    char path[1024], line[256];
    FILE *f;
    size_t n = 0;
    snprintf(path, sizeof(path), "%s/sim/scenarios/%s", env("MIGMON_SRC"), file);
    assert_non_null(f = fopen(path, "r"));
    while (fgets(line, sizeof(line), f)) {
        if (line[0] == ';' || line[0] == '#' || line[0] == '\n' ||
            !strncmp(line, skip_key, strlen(skip_key)))
            continue;
        assert_true(n + strlen(line) < len);
        memcpy(out + n, line, strlen(line) + 1);
        n += strlen(line);
    }
    fclose(f);
}

/* The corrupts scenario is the 535 machine plus the switch: keep them in step. */
static void test_gpm_corrupts_scenario_matches(void **state)
{
    static char a[16384], b[16384];
    (void)state;
    read_scenario_body("h100-pcie-mig-535.ini", "gpm_corrupts_session", a, sizeof(a));
    read_scenario_body("h100-pcie-mig-535-gpm-corrupts.ini", "gpm_corrupts_session", b,
                       sizeof(b));
    assert_string_equal(a, b);
}

/* ---- a hostile driver (hostile.ini, [system] hostile = true) ---- */

/* The bytes hostile.ini's raw strings decode to. */
static const char hostile_driver[] = "550.144.03\x1b[2J\x1b]0;pwned\a"
                                     "0123456789012345678901234567890123456789"
                                     "012345678901234567890123456789012345";
static const char hostile_name[] = "NVIDIA \x1b[2J\x1b]0;title\a" "A100\x9b" "31m "
                                   "\xe2\x80\xae" "LANIMRET\xff\xfe-80GB";

static void test_hostile_strings(void **state)
{
    char buf[256];
    (void)state;
    assert_int_equal(sizeof(hostile_driver) - 1, 100);
    assert_int_equal(sizeof(hostile_name) - 1, 48);
    start("hostile.ini", "100");
    /* 80 bytes (NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE): filled, no NUL */
    memset(buf, 0xAA, sizeof(buf));
    assert_int_equal(N(nvmlSystemGetDriverVersion)(buf, 80), NVML_SUCCESS);
    assert_memory_equal(buf, hostile_driver, 80);
    assert_null(memchr(buf, '\0', 80));
    assert_int_equal((unsigned char)buf[80], 0xAA); /* not one byte past the length */
    /* a buffer longer than the text: all 100 bytes, then a NUL */
    memset(buf, 0xAA, sizeof(buf));
    assert_int_equal(N(nvmlSystemGetDriverVersion)(buf, 128), NVML_SUCCESS);
    assert_memory_equal(buf, hostile_driver, 101);
    assert_int_equal(N(nvmlSystemGetDriverVersion)(NULL, 80), NVML_ERROR_INVALID_ARGUMENT);
    /* the name's bytes exactly: ESC sequences, OSC, C1, U+202E, invalid UTF-8 */
    memset(buf, 0xAA, sizeof(buf));
    assert_int_equal(N(nvmlDeviceGetName)(gpu(0), buf, 96), NVML_SUCCESS);
    assert_memory_equal(buf, hostile_name, 49);
    assert_int_equal((unsigned char)buf[49], 0xAA);
    /* a short buffer: SUCCESS, exactly length bytes, no NUL */
    memset(buf, 0xAA, sizeof(buf));
    assert_int_equal(N(nvmlDeviceGetName)(gpu(0), buf, 10), NVML_SUCCESS);
    assert_memory_equal(buf, "NVIDIA \x1b[2", 10);
    assert_int_equal((unsigned char)buf[10], 0xAA);
    /* GPU 1 and the NVML version are not raw */
    assert_int_equal(N(nvmlDeviceGetName)(gpu(1), buf, 96), NVML_SUCCESS);
    assert_string_equal(buf, "NVIDIA A100-SXM4-80GB");
    assert_int_equal(N(nvmlSystemGetNVMLVersion)(buf, 80), NVML_SUCCESS);
    assert_string_equal(buf, "12.550.144.03");
    assert_int_equal(N(nvmlDeviceGetUUID)(gpu(0), buf, 96), NVML_SUCCESS);
    assert_string_equal(buf, "GPU-0c0c0c0c-1111-4222-8333-444444444444");
}

/* The board's serial number as a scenario gives it; NOT_SUPPORTED where it
 * gives none (a board without an inforom), INSUFFICIENT_SIZE for a short
 * buffer. */
static void test_serial(void **state)
{
    char buf[32];
    (void)state;
    start("faults.ini", "0");
    assert_int_equal(N(nvmlDeviceGetSerial)(gpu(1), buf, 30), NVML_SUCCESS);
    assert_string_equal(buf, "1652022005678");
    assert_int_equal(N(nvmlDeviceGetSerial)(gpu(0), buf, 5), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(N(nvmlDeviceGetSerial)(gpu(0), NULL, 30), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(N(nvmlShutdown)(), NVML_SUCCESS);
    start("a100-sxm4-80gb.ini", "0");
    assert_int_equal(N(nvmlDeviceGetSerial)(gpu(0), buf, 30), NVML_ERROR_NOT_SUPPORTED);
}

static void test_hostile_values(void **state)
{
    nvmlDevice_t d;
    nvmlUtilization_t u;
    nvmlMemory_t m1;
    nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
    nvmlProcessInfo_v2_t p[8];
    nvmlProcessInfo_v1_t p1[8];
    nvmlSample_t smp[4];
    nvmlValueType_t vt;
    unsigned v, n;
    (void)state;
    start("hostile.ini", "100");
    d = gpu(0);
    assert_int_equal(N(nvmlDeviceGetUtilizationRates)(d, &u), NVML_SUCCESS);
    assert_int_equal(u.gpu, 4294967295u);
    assert_int_equal(u.memory, 4294967295u);
    assert_int_equal(N(nvmlDeviceGetTemperature)(d, NVML_TEMPERATURE_GPU, &v), NVML_SUCCESS);
    assert_int_equal(v, 4294967295u);
    assert_int_equal(N(nvmlDeviceGetCurrPcieLinkGeneration)(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 4294967295u);
    assert_int_equal(N(nvmlDeviceGetMaxPcieLinkGeneration)(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 4); /* the maximum is still the A100's */
    assert_int_equal(N(nvmlDeviceGetFanSpeed)(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 4294967295u);
    n = 4;
    assert_int_equal(N(nvmlDeviceGetSamples)(d, NVML_GPU_UTILIZATION_SAMPLES, 0, &vt, &n, smp),
                     NVML_SUCCESS);
    assert_int_equal(n, 4);
    assert_int_equal(smp[3].sampleValue.uiVal, 4294967295u);
    /* memory: used 2^64-1 above an 80 GiB total; free is what wraps */
    assert_int_equal(N(nvmlDeviceGetMemoryInfo)(d, &m1), NVML_SUCCESS);
    assert_true(m1.total == 85899345920ULL);
    assert_true(m1.used == 18446744073709551615ULL);
    assert_true(m1.used > m1.total);
    assert_true(m1.free == 85899345921ULL); /* total - used, modulo 2^64 */
    assert_int_equal(N(nvmlDeviceGetMemoryInfo_v2)(d, &m2), NVML_SUCCESS);
    assert_true(m2.total == 85899345920ULL);
    assert_true(m2.reserved == 640 * MIB); /* total / 128 */
    assert_true(m2.used == 18446744073709551615ULL);
    assert_true(m2.free == 85899345920ULL - 640 * MIB + 1);
    /* PID 0 is listed; 4242's memory is 2^64-2, a value, not NOT_AVAILABLE */
    n = 8;
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(d, &n, p), NVML_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(p[0].pid, 0);
    assert_true(p[0].usedGpuMemory == 1024 * MIB);
    assert_int_equal(p[1].pid, 4242);
    assert_true(p[1].usedGpuMemory == 18446744073709551614ULL);
    n = 8;
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses)(d, &n, p1), NVML_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(p1[0].pid, 0);
    assert_true(p1[1].usedGpuMemory == 18446744073709551614ULL);
    n = 0;
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v2)(d, &n, NULL),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 2);
}

/* GPU 1: INSUFFICIENT_SIZE forever, asking for the caller's count x 2 + 1000. */
static void test_hostile_process_storm(void **state)
{
    nvmlProcessInfo_v2_t p[8];
    nvmlProcessUtilizationSample_t s[8];
    nvmlDevice_t d;
    unsigned n = 0;
    (void)state;
    start("hostile.ini", "100");
    d = gpu(1);
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(d, &n, NULL),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 1000);
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(d, &n, p),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 3000);
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(d, &n, p),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 7000);
    n = 8; /* a buffer big enough for its one process makes no difference */
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v2)(d, &n, p),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 1016);
    n = 5;
    assert_int_equal(N(nvmlDeviceGetGraphicsRunningProcesses)(d, &n, (void *)p),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 1010);
    n = 0;
    assert_int_equal(N(nvmlDeviceGetMPSComputeRunningProcesses_v3)(d, &n, NULL),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 1000);
    n = 3000000000u; /* saturates instead of wrapping */
    assert_int_equal(N(nvmlDeviceGetGraphicsRunningProcesses_v2)(d, &n, p),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 4294967295u);
    assert_int_equal(N(nvmlDeviceGetComputeRunningProcesses_v3)(d, NULL, p),
                     NVML_ERROR_INVALID_ARGUMENT);
    /* the process is there: its utilisation samples list it */
    n = 8;
    assert_int_equal(N(nvmlDeviceGetProcessUtilization)(d, s, &n, 0), NVML_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(s[0].pid, 4343);
    /* GPU 0 is not in the storm */
    n = 8;
    assert_int_equal(N(nvmlDeviceGetGraphicsRunningProcesses_v2)(gpu(0), &n, p), NVML_SUCCESS);
    assert_int_equal(n, 0);
}

#define HOSTILE_GPU "[gpu.0]\nname = NVIDIA A100-SXM4-80GB\nmemory_total_mib = 81920\n"

/* The other raw keys, saturating power, absurd clocks and compute capability. */
static void test_hostile_more_keys(void **state)
{
    char buf[96];
    unsigned v;
    int major, minor;
    unsigned long long e;
    nvmlMemory_t m1;
    nvmlDevice_t d;
    (void)state;
    start(write_tmp("[system]\ndriver_version = 550.144.03\nhostile = true\n"
                    "nvml_version_raw = \\x00\\xff\\\\\n" HOSTILE_GPU
                    "uuid_raw = GPU-\\e[5mX\n"
                    "power_w = 1e12\nclock_graphics_mhz = 4294967295\nclock_sm_mhz = 4294967295\n"
                    "clock_mem_mhz = 4294967295\nclock_video_mhz = 4294967295\n"
                    "compute_capability = 377123080.-864614603\n"
                    "memory_used_raw_bytes = 100\nmemory_free_raw_bytes = 7\n"),
          "100");
    d = gpu(0);
    memset(buf, 0xAA, sizeof(buf));
    assert_int_equal(N(nvmlSystemGetNVMLVersion)(buf, 80), NVML_SUCCESS);
    assert_memory_equal(buf, "\0\xff\\\0", 4);
    memset(buf, 0xAA, sizeof(buf));
    assert_int_equal(N(nvmlDeviceGetUUID)(d, buf, 96), NVML_SUCCESS);
    assert_string_equal(buf, "GPU-\x1b[5mX");
    assert_int_equal(N(nvmlDeviceGetHandleByUUID)("GPU-\x1b[5mX", &d), NVML_SUCCESS);
    assert_ptr_equal(d, gpu(0));
    assert_int_equal(N(nvmlDeviceGetPowerUsage)(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 0xFFFFFFFFu);
    assert_int_equal(N(nvmlDeviceGetTotalEnergyConsumption)(d, &e), NVML_SUCCESS);
    assert_true(e == 100000000000000000ULL); /* 1e12 W x 100 s, in mJ */
    for (int k = NVML_CLOCK_GRAPHICS; k <= NVML_CLOCK_VIDEO; k++) {
        assert_int_equal(N(nvmlDeviceGetClockInfo)(d, (nvmlClockType_t)k, &v), NVML_SUCCESS);
        assert_int_equal(v, 4294967295u);
    }
    assert_int_equal(N(nvmlDeviceGetCudaComputeCapability)(d, &major, &minor), NVML_SUCCESS);
    assert_int_equal(major, 377123080);
    assert_int_equal(minor, -864614603);
    /* only used and free are raw: total is the modelled one */
    assert_int_equal(N(nvmlDeviceGetMemoryInfo)(d, &m1), NVML_SUCCESS);
    assert_true(m1.total == 81920 * MIB);
    assert_true(m1.used == 100);
    assert_true(m1.free == 7);
}

/* Every hostile key, and pid 0, is a load error naming its line unless the
 * scenario says hostile = true; absurd values stay errors without it. */
static void test_hostile_needs_opt_in(void **state)
{
    (void)state;
    expect_invalid("[system]\ndriver_version = 550.144.03\ndriver_version_raw = x\n" HOSTILE_GPU,
                   ":3: [system] driver_version_raw: only in a hostile scenario "
                   "([system] hostile = true)");
    expect_invalid("[system]\ndriver_version = 550.144.03\n" HOSTILE_GPU "name_raw = X\n",
                   ":6: [gpu.0] name_raw: only in a hostile scenario");
    expect_invalid("[system]\ndriver_version = 550.144.03\nhostile = false\n" HOSTILE_GPU
                   "memory_used_raw_bytes = 18446744073709551615\n",
                   ":7: [gpu.0] memory_used_raw_bytes: only in a hostile scenario");
    expect_invalid("[system]\ndriver_version = 550.144.03\n" HOSTILE_GPU
                   "procs_insufficient_storm = true\n",
                   ":6: [gpu.0] procs_insufficient_storm: only in a hostile scenario");
    expect_invalid(HOSTILE_GPU "uuid_raw = X\n[system]\ndriver_version = 550.144.03\n",
                   ":4: [gpu.0] uuid_raw: only in a hostile scenario");
    expect_invalid("[system]\ndriver_version = 550.144.03\nnvml_version_raw = x\n" HOSTILE_GPU,
                   ":3: [system] nvml_version_raw: only in a hostile scenario");
    expect_invalid("[system]\ndriver_version = 550.144.03\n" HOSTILE_GPU
                   "[process.p]\npid = 0\n",
                   ":7: [process.p] pid = 0: only in a hostile scenario");
    expect_invalid("[system]\ndriver_version = 550.144.03\n" HOSTILE_GPU
                   "[process.p]\npid = 5\nused_raw_bytes = 1\n",
                   ":8: [process.p] used_raw_bytes: only in a hostile scenario");
    expect_invalid("[system]\ndriver_version = 550.144.03\n" HOSTILE_GPU "util_gpu = 4294967295\n",
                   "[gpu.0] util_gpu: values must stay within 0..100");
    expect_invalid("[system]\ndriver_version = 550.144.03\n" HOSTILE_GPU
                   "compute_capability = 377123080.-864614603\n",
                   "[gpu.0] compute_capability: expected major 1-99 and minor 0-9");
    expect_invalid("[system]\ndriver_version = 550.144.03\n" HOSTILE_GPU "[process.p]\ngpu = 0\n",
                   "[process.p] pid is required");
    /* and what even a hostile scenario cannot say */
    expect_invalid("[system]\ndriver_version = 550.144.03\nhostile = true\n" HOSTILE_GPU
                   "name_raw = a\\qb\n",
                   ":7: [gpu.0] name_raw: unknown escape");
    expect_invalid("[system]\ndriver_version = 550.144.03\nhostile = true\n" HOSTILE_GPU
                   "name_raw = a\\x4\n",
                   ":7: [gpu.0] name_raw: \\x needs two hex digits");
    expect_invalid("[system]\ndriver_version = 550.144.03\nhostile = true\n" HOSTILE_GPU
                   "memory_used_raw_bytes = 18446744073709551616\n",
                   ":7: [gpu.0] memory_used_raw_bytes: expected bytes");
    expect_invalid("[system]\ndriver_version = 550.144.03\nhostile = true\n" HOSTILE_GPU
                   "ecc_corrected_volatile = steps(0:5, 10:1)\n",
                   "ecc_corrected_volatile: a counter must never decrease");
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
        cmocka_unit_test_setup_teardown(test_scenario_size_follows_content, setup, teardown),
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
        cmocka_unit_test_setup_teardown(test_fault_delay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fault_hang, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpm_symbols_by_driver, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpm_alloc_free, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpm_sample_get_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpm_metrics_get_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpm_values_at_fixed_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpm_average_over_interval, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpm_compute_instances, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpm_nan_and_metric_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpm_corrupts_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpm_corrupts_scenario_matches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_strings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_process_storm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_more_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_serial, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_needs_opt_in, setup, teardown),
        cmocka_unit_test_setup_teardown(test_variant_exports_match_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_variant_behaviour, setup, teardown),
    };
    full_lib = open_lib(env("MIGMON_SIM_LIB"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
