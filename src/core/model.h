/*
 * model.h — what one tick knows: metrics with their source, devices, snapshot.
 *
 * Every sampled number is a struct metric: a value plus the source that says
 * how it was obtained. A metric whose source is MSRC_NONE has no value; front
 * ends print "N/A" or null for it, never its (meaningless) value field.
 */
#ifndef MIGMON_MODEL_H
#define MIGMON_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/text.h"

enum metric_source {
    MSRC_NONE = 0, /* could not be read; value is meaningless */
    MSRC_DIRECT,   /* the NVML call for this device */
    MSRC_GPM,      /* GPU Performance Monitoring (Hopper+) */
    MSRC_PROCESS,  /* aggregated from per-process samples */
    MSRC_ESTIMATE, /* a real parent utilisation scaled by the slice share */
    MSRC_CARRIED,  /* last good value held for a bounded number of ticks */
    MSRC_DCGM,     /* DCGM's profiling fields (any GPU DCGM profiles; Ampere MIG) */
};

/* What a value describes when that is not simply "this device". GPU-wide
 * values of a MIG device are marked by metric_info().gpu_wide instead. */
enum metric_scope {
    MSCOPE_DEVICE = 0,
    /* A GPU-instance value shown on one of several compute instances that
     * share the GPU instance (GPM's per-GI samples, DRAM bandwidth). */
    MSCOPE_GPU_INSTANCE,
};

struct metric {
    double value;
    /* Why the value is absent or how it was derived; a static string or NULL.
     * Borrowed: never freed. */
    const char *why;
    enum metric_source src;
    unsigned char scope; /* enum metric_scope */
};
/* 24 bytes: a device holds dozens, and each tick's devices are written,
 * copied and read by three threads (the order above leaves no hole). */
_Static_assert(sizeof(struct metric) <= 24, "struct metric grew");

static inline struct metric metric_none(const char *why)
{
    return (struct metric){.value = 0, .src = MSRC_NONE, .why = why};
}

static inline struct metric metric_direct(double v)
{
    return (struct metric){.value = v, .src = MSRC_DIRECT, .why = NULL};
}

static inline bool metric_ok(const struct metric *m)
{
    return m->src != MSRC_NONE;
}

const char *metric_source_name(enum metric_source s);

/* "a; b" as a string that lives as long as the program, for a reason made
 * of two static reasons (NVML's and GPM's). The same pair gives the same
 * pointer; a or b NULL gives the other. Bounded: once MIGMON_WHY_JOINS
 * distinct pairs are held, further pairs give a. Thread-safe. */
#define MIGMON_WHY_JOINS 64
const char *metric_why_join(const char *a, const char *b);

/* Device metrics, in the order they are exported. Names in model.c. */
enum metric_id {
    M_GPU_UTIL,
    M_MEM_UTIL,
    M_SM_UTIL,
    M_MEM_USED,
    M_MEM_TOTAL,
    M_TEMP,
    M_POWER,
    M_POWER_LIMIT,
    M_ENERGY,
    M_CLK_GFX,
    M_CLK_SM,
    M_CLK_MEM,
    M_PSTATE,
    M_PCIE_GEN,
    M_PCIE_WIDTH,
    M_PCIE_TX,
    M_PCIE_RX,
    M_ENC_UTIL,
    M_DEC_UTIL,
    M_ECC_MODE,
    M_ECC_CORR,
    M_ECC_UNCORR,
    M_TEMP_SLOWDOWN,
    M_TEMP_SHUTDOWN,
    M_FAN,
    /* GPM (Hopper and later): per device, per GPU instance or per compute
     * instance (docs/mig-utilisation.md). */
    M_SM_OCCUPANCY,
    M_TENSOR_UTIL,
    M_DFMA_TENSOR_UTIL,
    M_HMMA_TENSOR_UTIL,
    M_IMMA_TENSOR_UTIL,
    M_FP64_UTIL,
    M_FP32_UTIL,
    M_FP16_UTIL,
    M_INT_UTIL,
    M_NVLINK_TX,
    M_NVLINK_RX,
    /* Health events (backend/events/events.h): the Xid events attributed to this
     * device since the monitor started, and the last one's code. */
    M_XID_ERRORS,
    M_LAST_XID,
    /* Health counters (backend/nvml/nvml_health.c), GPU-wide: a MIG device
     * carries its parent's. Counts since the driver loaded unless named
     * volatile; remap and retirement flags are 0 or 1. */
    M_MEM_TEMP,        /* HBM temperature (field MEMORY_TEMP) */
    M_PCIE_REPLAY,     /* PCIe replay counter */
    M_ECC_CORR_AGG,    /* ECC errors over the GPU's life (aggregate) */
    M_ECC_UNCORR_AGG,
    M_REMAP_CORR,      /* rows remapped for correctable errors */
    M_REMAP_UNCORR,    /* rows remapped for uncorrectable errors */
    M_REMAP_PENDING,   /* a remap waits for a GPU reset */
    M_REMAP_FAILURE,   /* a remap failed: the GPU needs replacing */
    M_RETIRED_SBE,     /* pages retired (pre-Ampere): single-bit errors */
    M_RETIRED_DBE,     /* double-bit errors */
    M_RETIRED_PENDING, /* a retirement waits for a reset */
    M_MEM_RESERVED,    /* framebuffer the driver reserves (memory info v2) */
    M_NVLINK_LINKS_UP, /* links active */
    M_NVLINK_CRC_ERRORS,      /* FLIT and data CRC errors, every link */
    M_NVLINK_REPLAY_ERRORS,   /* replays, every link */
    M_NVLINK_RECOVERY_ERRORS, /* recoveries, every link */
    M_NVLINK_DATA_BYTES,      /* data bytes sent and received, every link (running count) */
    M_THROTTLE_POWER_S,   /* time clocks were held down by power, since load */
    M_THROTTLE_THERMAL_S, /* by temperature */
    /* Memory health of recent drivers (docs/health.md): remaps no longer
     * active (remapped rows v2, 595 and later), memory errors the GPU can
     * no longer repair (a flag, 590 and later, Hopper+), the HBM bank
     * remapper (615 and later): its active remaps, a remap waiting for a
     * reset (flag) and the bank groups with no spare left. */
    M_REMAP_INACTIVE,
    M_UNREPAIRABLE_MEM,
    M_BANK_REMAPS,
    M_BANK_REMAP_PENDING,
    M_BANK_NO_SPARE,
    /* amdgpu's GTT (system memory mapped into the GPU's address space),
     * GPU-wide; NVIDIA GPUs have none (none with that reason). */
    M_GTT_USED,
    M_GTT_TOTAL,
    M_COUNT
};

struct metric_info {
    const char *name; /* JSON key, e.g. "gpu_util_pct" */
    const char *unit; /* "%", "B", "C", "W", "J", "MHz", "B/s", "" */
    /* True for values that belong to the whole physical GPU: on a MIG device
     * they are read from the parent and labelled as the parent's. */
    bool gpu_wide;
    /* The plausible range; a reading outside it is none ("driver returned
     * X"), never shown (docs/json.md lists them). */
    double min, max;
};

const struct metric_info *metric_info(enum metric_id id);

/*
 * How many samples a value that could not be read again keeps its last
 * reading, marked carried, before it is none: in the history, the process
 * lists and a stalled device (3 by default; the configuration file's
 * [general] carry). Set once at start, before any sampling thread exists,
 * then only read.
 */
unsigned carry_ticks(void);
void carry_ticks_set(unsigned n);

struct snapshot;
/* Every metric of every device of s checked against its range, and memory
 * used against total; offenders become none with the value in the reason
 * (stored in s's notes). Process memory likewise. */
void snapshot_check_ranges(struct snapshot *s);
/* The same for the devices from first on (a backend's own, after those
 * of the backends before it). */
void snapshot_check_ranges_from(struct snapshot *s, size_t first);

/* A partition of an AMD Instinct GPU (amdgpu compute partitions, CPX …)
 * is a DEV_MIG device too: a child of its physical GPU with its own memory
 * and activity (docs/amdgpu.md). */
enum device_kind { DEV_GPU = 0, DEV_MIG = 1 };

enum device_vendor { VENDOR_NVIDIA = 0, VENDOR_AMD = 1 };

/* "nvidia", "amd". */
const char *device_vendor_name(unsigned vendor);

#define MIGMON_UUID_LEN 96
#define MIGMON_NAME_LEN 96
/* Distinct Xid codes counted per device (struct device.xids). */
#define DEVICE_XID_CODES 8

struct device {
    enum device_kind kind;
    unsigned char vendor; /* enum device_vendor: which backend filled it */
    int index;      /* GPU index; for a MIG device, its parent's index */
    int mig_index;  /* slot under the parent, -1 for a GPU */
    int parent_pos; /* position of the parent in snapshot.devices, -1 for a GPU */
    char uuid[MIGMON_UUID_LEN];
    /* Why uuid is "" (a static reason string such as "NVML_ERROR_UNKNOWN"),
     * else NULL. A MIG device whose UUID cannot be read is still listed. */
    const char *uuid_why;
    char parent_uuid[MIGMON_UUID_LEN]; /* "" for a GPU */
    char name[MIGMON_NAME_LEN];
    char pci_bus_id[32];
    char serial[32];    /* the board's serial number; a MIG device has its
                         * parent's; "" when unknown */
    char arch[16];      /* "Ampere", "Hopper", … or "" when unknown */
    int cc_major;       /* -1 when unknown */
    int cc_minor;
    bool mig_enabled;   /* GPU: MIG mode currently on */
    int gi_id;          /* -1 unless MIG */
    int ci_id;          /* -1 unless MIG */
    char profile[32];   /* "3g.40gb" or "" */
    int slices;         /* GPU-instance slices of a MIG device, -1 unknown */
    int slices_total;   /* GPU: slice count of the full-GPU profile, -1 unknown */
    /* An AMD GPU with partition modes (MI300: current_compute_partition):
     * has_part_modes, the current modes ("CPX", "NPS4"; "" when that file
     * is absent), and the modes the driver lists as ones the GPU can be
     * switched to (available_*_partition, ", "-joined as the file has them;
     * "" when "Not supported"). *_why: why a list could not be read (in the
     * snapshot's notes), else NULL. Read only: nothing switches a mode. */
    bool has_part_modes;
    char part_compute[16], part_memory[16];
    char part_compute_avail[64], part_memory_avail[64];
    const char *part_compute_why, *part_memory_why;
    struct metric m[M_COUNT];
    uint64_t throttle_mask;
    bool throttle_valid;
    /* AMD: why the reasons are not known (in the snapshot's notes), else
     * NULL. NVML: with throttle_valid, the entry point's note where it is
     * worth saying (nvml_compat.c: a replacement of a deprecated call, or
     * one read after the other was refused), else NULL; without, why
     * both entry points refused, else NULL. A static string. */
    const char *throttle_why;
    /* Processes on this device: snapshot.procs[proc_first .. proc_first+nprocs).
     * process_count counts every process NVML listed for the device (none when
     * no list could be read); nprocs may be fewer (--top). */
    size_t proc_first;
    size_t nprocs;
    struct metric process_count;
    /* Sampling of this device is stuck: "stalled 12 s in
     * nvmlDeviceGetPowerUsage" (in the snapshot's notes), else NULL. */
    const char *stall;
    /* The GPU answers NVML_ERROR_GPU_IS_LOST (fell off the bus): identity
     * from before, every metric none; lost_for_s: since when (seconds). */
    bool lost;
    double lost_for_s;
    /* A GPU the driver counts but would not open or identify (nvmlDevice-
     * GetHandleByIndex_v2 answering NO_PERMISSION: a GPU outside the
     * caller's cgroup): the driver's answer (a static string), else NULL.
     * Nothing of it is known, not even whether it is lost or in MIG mode,
     * so lost and mig_enabled are false without meaning it: outputs write
     * them as unknown, and every metric is none with this reason. */
    const char *inaccessible;
    /* The node the device is on, for a fleet read from Prometheus
     * (backend/prometheus/prom_backend.h): its host name, else the target's instance
     * label; "" for this host's own devices. node_down: the node's scrape
     * target is down (up == 0), every metric none; node_down_for_s: since
     * its last sample (seconds), negative when unknown. */
    char node[64];
    bool node_down;
    double node_down_for_s;
    /* The Kubernetes pod a fleet's exporter says holds the device now
     * (the pod, namespace and container labels of its series, ours or
     * dcgm-exporter's); "" when none is labelled. */
    struct device_pod { /* as long as Kubernetes allows (text.h) */
        char name[TEXT_NAME_MAX + 1];
        char ns[TEXT_LABEL_MAX + 1];
        char container[TEXT_LABEL_MAX + 1];
    } pod;
    /* The health verdict (health.h), from the rules that fired this tick:
     * health is an enum health_level, health_rules their bits. Set by
     * health_evaluate after sampling; HEALTH_UNKNOWN until then. */
    unsigned char health;
    uint32_t health_rules;
    /* The Xid events attributed to this device since start, per code, in
     * code order (events_apply): nxids codes; xids_overflow when it had
     * more codes than fit (then the per-code counts are not all here). */
    struct device_xid {
        uint32_t xid;
        uint32_t count;
    } xids[DEVICE_XID_CODES];
    unsigned char nxids;
    bool xids_overflow;
};

/* Process type bits (NVML's lists: compute, graphics, MPS compute). */
enum {
    PROC_COMPUTE = 1u << 0,
    PROC_GRAPHICS = 1u << 1,
    PROC_MPS = 1u << 2,
};

#define PROC_NAME_LEN 64
#define PROC_USER_LEN 64
#define PROC_CMD_LEN 512
#define PROC_CONTAINER_LEN 80

/* One process on one device. Host facts come from /proc and are none/"" when
 * the process is not visible from here. */
struct gpu_process {
    uint32_t pid;       /* as NVML reports it: a host (init-namespace) PID */
    int64_t local_pid;  /* the same process in our PID namespace; -1 not visible */
    unsigned type;      /* PROC_* bits */
    int gi_id, ci_id;   /* -1 unknown */
    bool unattributed;  /* on a MIG parent: could not be assigned to an instance */
    bool carried;       /* kept from an earlier list after a failed read */
    uint64_t start_time; /* clock ticks after boot (stat field 22); 0 unknown.
                          * With pid, identifies the process across PID reuse. */
    struct metric mem_bytes; /* none when NVML_VALUE_NOT_AVAILABLE */
    struct metric sm_util, mem_util, enc_util, dec_util; /* % */
    struct metric cpu_pct;   /* % of one CPU since the previous tick */
    struct metric rss_bytes;
    char name[PROC_NAME_LEN];  /* comm; "" unknown */
    char user[PROC_USER_LEN];  /* "" unknown */
    char command[PROC_CMD_LEN]; /* full command line, spaces between args */
    char container[PROC_CONTAINER_LEN]; /* "docker:0123abcd…", "k8s:pod-uid", "" */
};

/*
 * A node of a fleet (the fleet view, --prometheus): one scrape target and
 * what Prometheus aggregated over its devices with `by (instance)`
 * (backend/prometheus/prom_query.h, docs/fleet.md). Its devices are in the snapshot
 * only when they were asked for (the nodes on the monitor's screen, every
 * node for --once and record): dev_first and ndev then say where.
 * Counts and values over its leaves (MIG instances, AMD partitions, GPUs
 * without either); under a device filter, over the devices it matches.
 * Every figure is a metric: none, with its reason, when it could not be
 * had (the node is down, its query failed, its exporter gives none).
 */
struct node_summary {
    char instance[128]; /* the target's instance label: the node's identity */
    char name[64];      /* what the screen calls it: its host name, else instance */
    signed char up;     /* 1 up, 0 down (up == 0), -1 not in up's answer */
    bool dcgm;          /* read from dcgm-exporter's series (no health verdict) */
    bool seen;          /* some series of its exporter in the last 10 minutes */
    double down_for_s;  /* down: since its exporter's last sample; -1 unknown */
    struct metric gpus, mig, idle, not_ok, pods;       /* counts */
    struct metric gpus_action, gpus_warning; /* GPUs whose worst verdict (the GPU's or an
                                              * instance's) is action, warning */
    struct metric util_max, util_mean;                 /* % */
    struct metric mem_used, mem_total, mem_devices;    /* bytes; leaves with both */
    unsigned char health; /* enum health_level: its devices' worst; unknown */
    /* its devices in snapshot.devices: dev_first .. dev_first + ndev, when
     * devs_read; else devs_why says why they are not there */
    bool devs_read;
    size_t dev_first, ndev;
    const char *devs_why;
};

/* The idle rule, the same wherever a device is called idle (the fleet's
 * filter and counts, the exporter's migmon_*_idle): utilisation read and
 * under 1 %, or, where no utilisation is to be had (an A100 without DCGM),
 * no process on it by the driver's list. 1 idle, 0 not, -1 unknown (no
 * figure to judge by, or its node is down). */
int device_idle(const struct device *d);

/* "C", "G", "C+G", "M", "M+G", … for type bits; static strings. */
const char *proc_type_name(unsigned type);

/* Throttle reason names for the bits of mask, in bit order; returns count
 * written into out (at most max). Names are static strings. */
size_t throttle_reason_names(uint64_t mask, const char **out, size_t max);

#endif
