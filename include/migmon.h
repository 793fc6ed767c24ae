/*
 * migmon.h — mig-gpu-mon's sampling core as a C library: watch a process
 * (yours or another) and its descendants, and read their peak GPU memory
 * (NVML's per-process allocation on every GPU and MIG instance) and peak
 * CPU memory. The same core as `mig-gpu-mon profile` (docs/library.md).
 *
 * Link with -lmigmon (pkg-config migmon). The NVIDIA driver's NVML library
 * is loaded at run time; without it the GPU figure is "unavailable".
 *
 * A migmon_t is used by one thread at a time. Every function returns
 * MIGMON_OK or a negative MIGMON_E* code; migmon_last_error says why.
 */
#ifndef MIGMON_H
#define MIGMON_H

#ifdef __cplusplus
extern "C" {
#endif

#define MIGMON_API_VERSION 1

typedef struct migmon migmon_t;

enum {
    MIGMON_OK = 0,
    MIGMON_EINVAL = -1,  /* a NULL handle or argument, a PID that is not positive */
    MIGMON_ENOMEM = -2,
    MIGMON_ENVML = -3,   /* the nvml_path given cannot be loaded */
    MIGMON_ESYS = -4,    /* /proc cannot be read */
    /* migmon_sample: this sample's GPU figures could not be read (the
     * driver failed or is not there). The watched tree and its CPU memory
     * were still sampled; the peaks keep every good sample's figures, and
     * a later sample may succeed. */
    MIGMON_EGPU = -5,
};

struct migmon_peaks {
    /* "nvml_process_allocation": NVML's per-process allocation of the
     * watched tree ("drm_fdinfo_vram": AMD GPUs' DRM fdinfo VRAM instead;
     * "process_allocation": both); "device_memory_delta": the devices' used-memory growth
     * (no process list could be read: device-level, approximate);
     * "unavailable": no GPU figure, gpu_known is 0. A static string. */
    const char *gpu_memory_metric;
    int gpu_known;
    unsigned long long peak_gpu_memory_bytes;
    /* the watched tree's summed RSS, peak over the samples */
    unsigned long long peak_cpu_memory_bytes;
    unsigned long samples;
};

/* Open a monitor. nvml_path: the NVML library to load, or NULL to search
 * for it as mig-gpu-mon does. interval_ms: the time one sample may take at
 * most (3/4 of it: a stuck driver costs a late figure, never a stuck call);
 * 0 means 50. The open takes a first sample, which may wait up to 3 s for a
 * slow driver to list every device and MIG instance. On failure *out is NULL
 * and migmon_last_error(NULL) says why. */
int migmon_open(migmon_t **out, const char *nvml_path, unsigned interval_ms);
/* Watch pid and its descendants (found again at every sample). */
int migmon_watch_pid(migmon_t *m, int pid);
/* Watch this process and its descendants. */
int migmon_watch_self(migmon_t *m);
/* Take one sample now; call it periodically (every 50 ms or so).
 * MIGMON_EGPU when this sample has no GPU figures, with the reason. */
int migmon_sample(migmon_t *m);
/* The peaks so far. */
int migmon_peaks(migmon_t *m, struct migmon_peaks *out);
/* Why the last call on m (or the last migmon_open, for NULL) failed;
 * "" when it did not. Valid until the next call on m. */
const char *migmon_last_error(const migmon_t *m);
void migmon_close(migmon_t *m);
/* The library's version, "0.1.0". */
const char *migmon_version(void);

#ifdef __cplusplus
}
#endif

#endif
