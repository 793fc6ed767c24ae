/*
 * watch.h — the sampling core of `profile` and of the C library: a process
 * tree watched over time, with its peak GPU memory (NVML's per-process
 * allocation, or the devices' used-memory growth where no process list can
 * be read), its peak RSS, and per device utilisation, energy, temperature
 * and throttle reasons (docs/profile.md).
 *
 * One owner: a watch is used by one thread at a time (its engine's and
 * collector's threads are its own and never touch it).
 */
#ifndef MIGMON_WATCH_H
#define MIGMON_WATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "engine/collect.h"
#include "engine/engine.h"

#define WATCH_TREE_MAX 4096
#define WATCH_DEV_MAX 1024

/* What is known of one device over the run, matched by UUID. A MIG
 * device's energy, temperature and throttle reasons are its parent GPU's
 * (NVML reads them there): they are kept on the GPU's entry only. */
struct watch_dev {
    char uuid[MIGMON_UUID_LEN];
    char parent_uuid[MIGMON_UUID_LEN]; /* "" for a GPU */
    char name[MIGMON_NAME_LEN];
    char profile[32];
    int index, mig_index;
    int gi_id, ci_id; /* an NVIDIA MIG device's GPU and compute instance; -1 unknown */
    bool mig;
    bool amd; /* an AMD GPU, or partition (mig) */
    bool visible; /* among the devices the command may use */
    bool used0_ok;
    double used0;          /* VRAM used before the watch started */
    double peak_alloc;     /* NVML per-process allocation of the tree, peak */
    bool alloc_seen;       /* a process list of this device was read */
    double peak_delta;     /* used - used0, peak (>= 0) */
    bool delta_ok;
    double util_peak, util_sum;
    unsigned util_n;
    enum metric_source util_src;
    bool energy0_ok;
    double energy0, energy1;
    double temp_peak;
    bool temp_ok;
    uint64_t throttle;
};

struct watch_opts {
    const char *nvml_path; /* NULL: search */
    const char *proc_root; /* NULL: /proc */
    const char *backends;  /* --backend: "nvml,amdgpu"; NULL: every backend with a device */
    const char *sysfs_root; /* amdgpu's sysfs; NULL: /sys */
    const char *gpm_exe;   /* the GPM helper (this binary); NULL: no GPM */
    unsigned interval_ms;  /* the sampling period: each sample's deadline is 3/4 of it */
    bool quiet;            /* do not report the first failing sample on stderr */
    FILE *timeline;        /* every sample's snapshot as a JSON line, or NULL */
    int dcgm_mode;         /* enum dcgm_mode, as in collect_opts: auto (0), addr, embedded, off */
    const char *dcgm_addr; /* the hostengine for the addr mode */
    const char *dcgm_lib;  /* NULL: search libdcgm.so.4, then .so.3 */
};

struct watch {
    const char *proc_root;
    unsigned interval_ms;
    bool quiet;
    FILE *timeline;
    int timeline_errno; /* of the first failed timeline write; none is tried after it */
    pid_t root; /* the tree's root; 0: none yet */
    struct collector col;
    /* Ticks after the first, one per watch_sample (manual): the sampling
     * thread samples the GPUs itself while the driver is quick, and a
     * stalled call is given up on without holding the caller; NULL: the
     * caller's thread ticks. */
    struct engine *eng;
    struct snapshot s;
    size_t ndev;
    struct watch_dev dev[WATCH_DEV_MAX];
    pid_t tree[WATCH_TREE_MAX];
    size_t ntree;
    bool children_files; /* /proc/PID/task/TID/children exists */
    double peak_gpu;     /* nvml_process_allocation: the total over devices, peak */
    bool any_alloc;      /* some device's process list was read */
    unsigned alloc_vendors; /* 1 << enum device_vendor of each such device */
    double peak_delta_total;
    bool any_delta;
    double peak_rss;
    unsigned long samples, failed;
    char first_error[2048]; /* the first failed sample's gpu_error, whole */
    char error[2048]; /* why the last sample had no GPU figures; "" when it had */
    char visible_note[512];
};

/* Open the collector and take the baseline sample (every device's used
 * memory before the root runs). w is zeroed here. Returns 0, or -1 with a
 * message in err. */
int watch_open(struct watch *w, const struct watch_opts *o, char *err, size_t errlen);
void watch_set_root(struct watch *w, pid_t root);
/* One sample: the tree, its RSS, every device's figures. Returns 0, or -1
 * when the GPU part failed (w->error says why; the tree and its RSS were
 * still sampled, and the peaks keep the good samples' figures). */
int watch_sample(struct watch *w);
/* "nvml_process_allocation" (the process lists were NVIDIA's),
 * "drm_fdinfo_vram" (AMD's, from DRM fdinfo), "process_allocation" (both),
 * "device_memory_delta" or "unavailable". */
const char *watch_metric_name(const struct watch *w);
/* The peak GPU memory of the metric named (meaningless when unavailable). */
double watch_peak_gpu(const struct watch *w);
void watch_close(struct watch *w);

#endif
