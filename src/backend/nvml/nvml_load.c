#include "backend/nvml/nvml_load.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/debuglog.h"
#include "core/libpath.h"

/* After --nvml-path and LD_LIBRARY_PATH: the seed README's table, rows 1–11.
 * The two sonames are looked up by libpath (the ld.so cache and the
 * system's directories), never handed to dlopen bare. */
static const char *const default_paths[] = {
    "libnvidia-ml.so.1",
    "libnvidia-ml.so",
    "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
    "/usr/lib64/libnvidia-ml.so.1",
    "/usr/lib/aarch64-linux-gnu/libnvidia-ml.so.1",
    "/usr/local/nvidia/lib64/libnvidia-ml.so.1",
    "/usr/local/nvidia/lib/libnvidia-ml.so.1",
    "/run/nvidia/driver/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
    "/run/nvidia/driver/usr/lib64/libnvidia-ml.so.1",
    "/usr/local/cuda/lib64/stubs/libnvidia-ml.so",
    "/usr/lib/wsl/lib/libnvidia-ml.so.1",
    NULL,
};

const char *const *nvml_lib_default_paths(void)
{
    return default_paths;
}

#define F(field) offsetof(struct nvml_fns, field)

struct sym_row {
    size_t off;
    bool required;
    const char *names[4]; /* newest first */
};

/*
 * Every versioned name is asked for explicitly: the header's auto-upgrade
 * #defines do not exist for a dlsym caller. GetMemoryInfo has no #define at
 * all, so _v2 and v1 are two separate rows with two struct layouts.
 */
static const struct sym_row rows[] = {
    {F(init), true, {"nvmlInit_v2", "nvmlInit"}},
    {F(init_with_flags), false, {"nvmlInitWithFlags"}},
    {F(shutdown), true, {"nvmlShutdown"}},
    {F(error_string), false, {"nvmlErrorString"}},
    {F(driver_version), false, {"nvmlSystemGetDriverVersion"}},
    {F(nvml_version), false, {"nvmlSystemGetNVMLVersion"}},
    {F(cuda_version), false, {"nvmlSystemGetCudaDriverVersion_v2"}},
    {F(device_count), true, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}},
    {F(handle_by_index), true, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}},
    {F(name), false, {"nvmlDeviceGetName"}},
    {F(uuid), false, {"nvmlDeviceGetUUID"}},
    {F(serial), false, {"nvmlDeviceGetSerial"}},
    {F(pci_info), false, {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2",
                          "nvmlDeviceGetPciInfo"}},
    {F(arch), false, {"nvmlDeviceGetArchitecture"}},
    {F(cuda_cc), false, {"nvmlDeviceGetCudaComputeCapability"}},
    {F(utilization), false, {"nvmlDeviceGetUtilizationRates"}},
    {F(memory_v2), false, {"nvmlDeviceGetMemoryInfo_v2"}},
    {F(memory_v1), false, {"nvmlDeviceGetMemoryInfo"}},
    {F(temperature), false, {"nvmlDeviceGetTemperature"}},
    {F(temperature_v), false, {"nvmlDeviceGetTemperatureV"}},
    {F(temp_threshold), false, {"nvmlDeviceGetTemperatureThreshold"}},
    {F(power_usage), false, {"nvmlDeviceGetPowerUsage"}},
    {F(power_limit_enforced), false, {"nvmlDeviceGetEnforcedPowerLimit"}},
    {F(power_limit_mgmt), false, {"nvmlDeviceGetPowerManagementLimit"}},
    {F(energy), false, {"nvmlDeviceGetTotalEnergyConsumption"}},
    {F(clock_info), false, {"nvmlDeviceGetClockInfo"}},
    {F(pstate), false, {"nvmlDeviceGetPerformanceState"}},
    /* Two rows, not one with a fallback name: a library may export both and
     * refuse one (nvml_compat.c). */
    {F(clock_event_reasons), false, {"nvmlDeviceGetCurrentClocksEventReasons"}},
    {F(clock_throttle_reasons), false, {"nvmlDeviceGetCurrentClocksThrottleReasons"}},
    {F(encoder_util), false, {"nvmlDeviceGetEncoderUtilization"}},
    {F(decoder_util), false, {"nvmlDeviceGetDecoderUtilization"}},
    {F(pcie_throughput), false, {"nvmlDeviceGetPcieThroughput"}},
    {F(pcie_gen), false, {"nvmlDeviceGetCurrPcieLinkGeneration"}},
    {F(pcie_width), false, {"nvmlDeviceGetCurrPcieLinkWidth"}},
    {F(ecc_mode), false, {"nvmlDeviceGetEccMode"}},
    {F(ecc_count), false, {"nvmlDeviceGetTotalEccErrors"}},
    {F(fan_speed), false, {"nvmlDeviceGetFanSpeed"}},
    {F(samples), false, {"nvmlDeviceGetSamples"}},
    {F(process_util), false, {"nvmlDeviceGetProcessUtilization"}},
    {F(processes_util_info), false, {"nvmlDeviceGetProcessesUtilizationInfo"}},
    {F(procs_compute), false, {"nvmlDeviceGetComputeRunningProcesses_v3",
                               "nvmlDeviceGetComputeRunningProcesses_v2",
                               "nvmlDeviceGetComputeRunningProcesses"}},
    {F(procs_graphics), false, {"nvmlDeviceGetGraphicsRunningProcesses_v3",
                                "nvmlDeviceGetGraphicsRunningProcesses_v2",
                                "nvmlDeviceGetGraphicsRunningProcesses"}},
    {F(procs_mps), false, {"nvmlDeviceGetMPSComputeRunningProcesses_v3",
                           "nvmlDeviceGetMPSComputeRunningProcesses_v2",
                           "nvmlDeviceGetMPSComputeRunningProcesses"}},
    {F(mig_mode), false, {"nvmlDeviceGetMigMode"}},
    {F(is_mig_handle), false, {"nvmlDeviceIsMigDeviceHandle"}},
    {F(max_mig_count), false, {"nvmlDeviceGetMaxMigDeviceCount"}},
    {F(mig_handle_by_index), false, {"nvmlDeviceGetMigDeviceHandleByIndex"}},
    {F(mig_parent), false, {"nvmlDeviceGetDeviceHandleFromMigDeviceHandle"}},
    {F(gpu_instance_id), false, {"nvmlDeviceGetGpuInstanceId"}},
    {F(compute_instance_id), false, {"nvmlDeviceGetComputeInstanceId"}},
    {F(attributes), false, {"nvmlDeviceGetAttributes_v2", "nvmlDeviceGetAttributes"}},
    {F(gi_profile_info), false, {"nvmlDeviceGetGpuInstanceProfileInfo"}},
    {F(field_values), false, {"nvmlDeviceGetFieldValues"}},
    {F(gpm_query_support), false, {"nvmlGpmQueryDeviceSupport"}},
    {F(gpm_sample_alloc), false, {"nvmlGpmSampleAlloc"}},
    {F(gpm_sample_free), false, {"nvmlGpmSampleFree"}},
    {F(gpm_sample_get), false, {"nvmlGpmSampleGet"}},
    {F(gpm_mig_sample_get), false, {"nvmlGpmMigSampleGet"}},
    {F(gpm_metrics_get), false, {"nvmlGpmMetricsGet"}},
    {F(remapped_rows), false, {"nvmlDeviceGetRemappedRows"}},
    {F(retired_pages), false, {"nvmlDeviceGetRetiredPages"}},
    {F(retired_pending), false, {"nvmlDeviceGetRetiredPagesPendingStatus"}},
    {F(pcie_replay), false, {"nvmlDeviceGetPcieReplayCounter"}},
    {F(nvlink_state), false, {"nvmlDeviceGetNvLinkState"}},
    {F(nvlink_errors), false, {"nvmlDeviceGetNvLinkErrorCounter"}},
    {F(violation), false, {"nvmlDeviceGetViolationStatus"}},
    {F(remapped_rows_v2), false, {"nvmlDeviceGetRemappedRows_v2"}},
    {F(unrepairable), false, {"nvmlDeviceGetUnrepairableMemoryFlag_v1"}},
    {F(bank_remapper), false, {"nvmlDeviceGetBankRemapperStatus_v1"}},
    {F(conf_compute_mem_size), false, {"nvmlDeviceGetConfComputeMemSizeInfo"}},
    {F(process_detail_list), false, {"nvmlDeviceGetRunningProcessDetailList"}},
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))
_Static_assert(NROWS <= sizeof(((struct nvml_lib *)0)->resolved) / sizeof(const char *),
               "resolved[] too small");

size_t nvml_sym_count(void) { return NROWS; }
const char *nvml_sym_label(size_t row) { return row < NROWS ? rows[row].names[0] : NULL; }
bool nvml_sym_required(size_t row) { return row < NROWS && rows[row].required; }

const char *nvml_rc_name(nvmlReturn_t rc)
{
    static const char *const names[] = {
        "SUCCESS", "UNINITIALIZED", "INVALID_ARGUMENT", "NOT_SUPPORTED", "NO_PERMISSION",
        "ALREADY_INITIALIZED", "NOT_FOUND", "INSUFFICIENT_SIZE", "INSUFFICIENT_POWER",
        "DRIVER_NOT_LOADED", "TIMEOUT", "IRQ_ISSUE", "LIBRARY_NOT_FOUND", "FUNCTION_NOT_FOUND",
        "CORRUPTED_INFOROM", "GPU_IS_LOST", "RESET_REQUIRED", "OPERATING_SYSTEM",
        "LIB_RM_VERSION_MISMATCH", "IN_USE", "MEMORY", "NO_DATA", "VGPU_ECC_NOT_SUPPORTED",
        "INSUFFICIENT_RESOURCES", "FREQ_NOT_SUPPORTED", "ARGUMENT_VERSION_MISMATCH", "DEPRECATED",
        "NOT_READY", "GPU_NOT_FOUND", "INVALID_STATE",
    };
    if (rc >= 0 && (size_t)rc < sizeof(names) / sizeof(names[0]))
        return names[rc];
    if (rc == NVML_ERROR_UNKNOWN)
        return "UNKNOWN";
    return "UNRECOGNISED";
}

const char *nvml_rc_reason(nvmlReturn_t rc)
{
    static const char *const reasons[] = {
        "NVML_SUCCESS", "NVML_ERROR_UNINITIALIZED", "NVML_ERROR_INVALID_ARGUMENT",
        "NVML_ERROR_NOT_SUPPORTED", "NVML_ERROR_NO_PERMISSION", "NVML_ERROR_ALREADY_INITIALIZED",
        "NVML_ERROR_NOT_FOUND", "NVML_ERROR_INSUFFICIENT_SIZE", "NVML_ERROR_INSUFFICIENT_POWER",
        "NVML_ERROR_DRIVER_NOT_LOADED", "NVML_ERROR_TIMEOUT", "NVML_ERROR_IRQ_ISSUE",
        "NVML_ERROR_LIBRARY_NOT_FOUND", "NVML_ERROR_FUNCTION_NOT_FOUND",
        "NVML_ERROR_CORRUPTED_INFOROM", "NVML_ERROR_GPU_IS_LOST", "NVML_ERROR_RESET_REQUIRED",
        "NVML_ERROR_OPERATING_SYSTEM", "NVML_ERROR_LIB_RM_VERSION_MISMATCH", "NVML_ERROR_IN_USE",
        "NVML_ERROR_MEMORY", "NVML_ERROR_NO_DATA", "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED",
        "NVML_ERROR_INSUFFICIENT_RESOURCES", "NVML_ERROR_FREQ_NOT_SUPPORTED",
        "NVML_ERROR_ARGUMENT_VERSION_MISMATCH", "NVML_ERROR_DEPRECATED", "NVML_ERROR_NOT_READY",
        "NVML_ERROR_GPU_NOT_FOUND", "NVML_ERROR_INVALID_STATE",
    };
    if (rc >= 0 && (size_t)rc < sizeof(reasons) / sizeof(reasons[0]))
        return reasons[rc];
    if (rc == NVML_ERROR_UNKNOWN)
        return "NVML_ERROR_UNKNOWN";
    return "NVML error (unrecognised code)";
}

/* Stride of the entries a process-list symbol writes (nvml-facts §6):
 * v1 16 B; _v2 24 B; _v3 24 B, except drivers 535.43.02–535.86.x, whose _v3
 * wrote 32 B. Those are recognised as nvitop does: _v3 present, the
 * confidential-computing query present, and RunningProcessDetailList (which
 * took over the protected-memory field in 535.104.05) absent. */
static size_t proc_stride(const struct nvml_lib *lib, const char *resolved)
{
    if (!resolved)
        return 0;
    size_t n = strlen(resolved);
    if (n > 3 && strcmp(resolved + n - 3, "_v3") == 0) {
        if (lib->f.conf_compute_mem_size && !lib->f.process_detail_list)
            return sizeof(nvmlProcessInfo_535cc_t);
        return sizeof(nvmlProcessInfo_v2_t);
    }
    if (n > 3 && strcmp(resolved + n - 3, "_v2") == 0)
        return sizeof(nvmlProcessInfo_v2_t);
    return sizeof(nvmlProcessInfo_v1_t);
}

/* Resolve the table. Returns 0, or -1 naming the first missing required row. */
static int resolve(struct nvml_lib *lib, char *err, size_t errlen)
{
    memset(&lib->f, 0, sizeof(lib->f));
    for (size_t r = 0; r < NROWS; r++) {
        void *p = NULL;
        const char *got = NULL;
        for (size_t k = 0; k < 4 && rows[r].names[k]; k++) {
            dlerror();
            p = dlsym(lib->dl, rows[r].names[k]);
            debuglog_printf("dlsym %s -> %s", rows[r].names[k], p ? "found" : "missing");
            if (p) {
                got = rows[r].names[k];
                break;
            }
        }
        lib->resolved[r] = got;
        if (!p && rows[r].required) {
            snprintf(err, errlen, "%s does not export %s (nor an older name): not a usable NVML "
                                  "library", lib->path, rows[r].names[0]);
            return -1;
        }
        /* POSIX guarantees function pointers round-trip through void *. */
        memcpy((char *)&lib->f + rows[r].off, &p, sizeof(p));
    }
    for (size_t r = 0; r < NROWS; r++) {
        if (rows[r].off == F(procs_compute))
            lib->proc_stride[NVML_PROCS_COMPUTE] = proc_stride(lib, lib->resolved[r]);
        else if (rows[r].off == F(procs_graphics))
            lib->proc_stride[NVML_PROCS_GRAPHICS] = proc_stride(lib, lib->resolved[r]);
        else if (rows[r].off == F(procs_mps))
            lib->proc_stride[NVML_PROCS_MPS] = proc_stride(lib, lib->resolved[r]);
    }
    return 0;
}

/* The attempts, each "\n  path: reason", for the message of a library not
 * found. A line is there whole or not at all: those past the room (a long
 * LD_LIBRARY_PATH) are counted, and the message says how many. The room
 * leaves the message's other words space in the callers' 2048 bytes
 * (gpu_error, with "waiting for the NVIDIA driver ...: " before it). */
struct attempts {
    char list[1536];
    unsigned left_out;
};

static void note_attempt(struct attempts *a, const char *path, const char *why)
{
    size_t used = strlen(a->list);
    int n = snprintf(NULL, 0, "\n  %s: %s", path, why);
    if (a->left_out || n < 0 || used + (size_t)n >= sizeof(a->list)) {
        a->left_out++;
        return;
    }
    snprintf(a->list + used, sizeof(a->list) - used, "\n  %s: %s", path, why);
}

static int try_path(struct nvml_lib *lib, const char *path, struct attempts *tried,
                    char *lasterr, size_t lasterrlen)
{
    dlerror();
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *e = dlerror();
        snprintf(lasterr, lasterrlen, "%s", e ? e : "unknown dlopen error");
        debuglog_printf("dlopen %s -> failed: %s", path, lasterr);
        /* dlerror is "<path>: <reason>" or just the reason; keep the reason. */
        const char *why = lasterr;
        size_t plen = strlen(path);
        if (strncmp(why, path, plen) == 0 && why[plen] == ':')
            why += plen + 1;
        while (*why == ' ')
            why++;
        note_attempt(tried, path, why);
        return -1;
    }
    debuglog_printf("dlopen %s -> loaded", path);
    lib->dl = dl;
    snprintf(lib->path, sizeof(lib->path), "%s", path);
    /* The file the dynamic linker chose, so a second process (the GPM
     * helper) loads exactly the same library. */
    struct link_map *lm = NULL;
    if (dlinfo(dl, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0] == '/')
        snprintf(lib->real_path, sizeof(lib->real_path), "%s", lm->l_name);
    else
        snprintf(lib->real_path, sizeof(lib->real_path), "%s", path);
    return 0;
}

/* LD_LIBRARY_PATH's directories, each tried and listed (libpath.h: only
 * the absolute ones; an empty or relative entry is the current
 * directory, never searched). */
struct env_try {
    struct nvml_lib *lib;
    struct attempts *tried;
    char *lasterr;
    size_t lasterrlen;
};

static int env_try_dir(const char *dir, size_t len, void *ctx)
{
    struct env_try *t = ctx;
    char cand[4096];
    if (snprintf(cand, sizeof(cand), "%.*s/%s", (int)len, dir, default_paths[0]) >=
        (int)sizeof(cand))
        return 0;
    return try_path(t->lib, cand, t->tried, t->lasterr, t->lasterrlen) == 0;
}

int nvml_lib_open(struct nvml_lib *lib, const char *explicit_path, bool *explicit_missing,
                  char *err, size_t errlen)
{
    memset(lib, 0, sizeof(*lib));
    if (explicit_missing)
        *explicit_missing = false;
    struct attempts tried = {.list = ""};
    char lasterr[512] = "";

    if (explicit_path) {
        struct stat st;
        if (stat(explicit_path, &st) != 0) {
            if (explicit_missing)
                *explicit_missing = true;
            snprintf(err, errlen, "--nvml-path %s: no such file", explicit_path);
            return -1;
        }
        /* the file named, in the current directory when there is no '/'
         * (dlopen would search for a bare name instead) */
        char here[4096];
        const char *path = explicit_path;
        if (!strchr(path, '/') && snprintf(here, sizeof(here), "./%s", path) < (int)sizeof(here))
            path = here;
        if (try_path(lib, path, &tried, lasterr, sizeof(lasterr)) != 0) {
            snprintf(err, errlen, "--nvml-path %s: cannot load it: %s", explicit_path, lasterr);
            return -1;
        }
        if (resolve(lib, err, errlen) != 0) {
            nvml_lib_close(lib);
            return -1;
        }
        return 0;
    }

    struct env_try et = {lib, &tried, lasterr, sizeof(lasterr)};
    if (libpath_env_each(env_try_dir, &et))
        goto loaded;
    for (size_t i = 0; default_paths[i]; i++) {
        const char *path = default_paths[i];
        char found[4096];
        if (!strchr(path, '/')) {
            /* A soname: the ld.so cache and the system's directories (its
             * LD_LIBRARY_PATH directories were tried above, one by one;
             * the unversioned name's are looked in, not listed). */
            unsigned where = LIBPATH_SYSTEM | (i ? LIBPATH_ENV : 0);
            if (libpath_find(path, where, found, sizeof(found)) != 0) {
                note_attempt(&tried, path, i ? "not in LD_LIBRARY_PATH, the ld.so cache or the "
                                               "system's library directories"
                                             : "not in the ld.so cache or the system's library "
                                               "directories");
                continue;
            }
            path = found;
        }
        if (try_path(lib, path, &tried, lasterr, sizeof(lasterr)) == 0)
            goto loaded;
    }
    /* each path tried is listed with its error: the last one is not repeated */
    char more[64] = "";
    if (tried.left_out)
        snprintf(more, sizeof(more), "\n  (%u more not shown)", tried.left_out);
    snprintf(err, errlen,
             "NVML library (libnvidia-ml) not found; is the NVIDIA driver installed? Tried:%s%s\n"
             "If the library is elsewhere, run with --nvml-path /path/to/libnvidia-ml.so.1",
             tried.list, more);
    return -1;

loaded:
    if (resolve(lib, err, errlen) != 0) {
        nvml_lib_close(lib);
        return -1;
    }
    return 0;
}

void nvml_lib_close(struct nvml_lib *lib)
{
    if (lib->dl)
        dlclose(lib->dl);
    lib->dl = NULL;
}
