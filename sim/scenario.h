/*
 * scenario.h — the simulated machine, as read from a scenario INI file
 * (format: docs/simulator.md). Loaded at every nvmlInit that takes the
 * reference count from 0 to 1; immutable until the next such load. What
 * changes while it is loaded (time, fault counters, the process-list race)
 * lives in state.c.
 */
#ifndef SIM_SCENARIO_H
#define SIM_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>

#include "profiles.h"
#include "scenario_dcgm.h"
#include "scenario_values.h"
#include "valfn.h"

#define SIM_MAX_GPUS 1024     /* the scaling benchmark goes to 1,000 */
#define SIM_MAX_MIG_SLOTS 8   /* GetMigDeviceHandleByIndex indices 0..7 */
#define SIM_MAX_MIGS 8192     /* MIG device definitions over the whole timeline */
#define SIM_MAX_PROCS 16384
#define SIM_MAX_FAULTS 32
#define SIM_NAME_LEN 96

enum { SIM_PROC_COMPUTE = 1, SIM_PROC_GRAPHICS = 2, SIM_PROC_MPS = 4 };
enum { SIM_MIG_UNSUPPORTED = -1, SIM_MIG_OFF = 0, SIM_MIG_ON = 1 };
enum { SIM_ECC_UNSUPPORTED = -1, SIM_ECC_OFF = 0, SIM_ECC_ON = 1 };

/*
 * GPM metric rates (docs/simulator.md "GPM"): value functions in [gpu.N]
 * (a GPU with MIG off) and [gpu.N.mig.S] (a compute instance, % of its own
 * capacity). The percentages come first; the transfer rates (MiB/s) exist
 * only per GPU. sim_gpm_keys[] holds the scenario key of each.
 */
enum sim_gpm_rate {
    SIM_GPM_GRAPHICS,
    SIM_GPM_SM,
    SIM_GPM_SM_OCCUPANCY,
    SIM_GPM_INTEGER,
    SIM_GPM_TENSOR,
    SIM_GPM_DFMA_TENSOR,
    SIM_GPM_HMMA_TENSOR,
    SIM_GPM_IMMA_TENSOR,
    SIM_GPM_DRAM_BW,
    SIM_GPM_FP64,
    SIM_GPM_FP32,
    SIM_GPM_FP16,
    SIM_GPM_N_UTIL, /* the percentages above; per compute instance in MIG mode */
    SIM_GPM_PCIE_TX = SIM_GPM_N_UTIL,
    SIM_GPM_PCIE_RX,
    SIM_GPM_NVLINK_TX,
    SIM_GPM_NVLINK_RX,
    SIM_GPM_N
};
extern const char *const sim_gpm_keys[SIM_GPM_N];

/* Health-counter value functions (struct sim_gpu), and the calls or field
 * entries a scenario can make fail ([gpu.N] *_return keys). */
enum { SIM_REMAP_CORR, SIM_REMAP_UNCORR, SIM_REMAP_PENDING, SIM_REMAP_FAILURE, SIM_REMAP_N };
enum { SIM_RETIRED_SBE, SIM_RETIRED_DBE, SIM_RETIRED_PENDING, SIM_RETIRED_N };
/* nvmlEccBankRemapperStatus_v1_t's numbers (api_health.c). */
enum {
    SIM_BANK_ACTIVE,
    SIM_BANK_INACTIVE,
    SIM_BANK_PENDING,
    SIM_BANK_MAX_SPARE,
    SIM_BANK_NO_SPARE,
    SIM_BANK_N
};
/* The NVLink error counters, numbered as nvmlNvLinkErrorCounter_t. */
enum { SIM_NVL_REPLAY, SIM_NVL_RECOVERY, SIM_NVL_CRC_FLIT, SIM_NVL_CRC_DATA, SIM_NVLINK_ERR_N };
enum sim_health_rc {
    SIM_HRC_REMAP,           /* nvmlDeviceGetRemappedRows */
    SIM_HRC_RETIRED,         /* nvmlDeviceGetRetiredPages */
    SIM_HRC_RETIRED_PENDING, /* nvmlDeviceGetRetiredPagesPendingStatus */
    SIM_HRC_PCIE_REPLAY,     /* nvmlDeviceGetPcieReplayCounter */
    SIM_HRC_NVLINK_STATE,    /* nvmlDeviceGetNvLinkState */
    SIM_HRC_NVLINK_ERRORS,   /* nvmlDeviceGetNvLinkErrorCounter */
    SIM_HRC_VIOLATION,       /* nvmlDeviceGetViolationStatus */
    SIM_HRC_MEM_TEMP,        /* field 82's entry */
    SIM_HRC_ECC_AGG,         /* fields 5 and 6 */
    SIM_HRC_NVLINK_TP,       /* fields 138 and 139 */
    SIM_HRC_UNREPAIRABLE,    /* nvmlDeviceGetUnrepairableMemoryFlag_v1 */
    SIM_HRC_BANK_REMAPPER,   /* nvmlDeviceGetBankRemapperStatus_v1 */
    SIM_HRC_N
};
/* The NVLink links a driver's header allows (NVML_NVLINK_MAX_LINKS): 12 up
 * to 515, 18 from 520, 36 in the 13.x headers (580 and later). */
#define SIM_NVLINK_MAX 36

struct sim_system {
    char driver[32];
    sim_version_t drv;
    char nvml_version[48];
    int cuda_version; /* 12020 = 12.2 */
    bool libcuda;     /* false: nvmlSystemGetCudaDriverVersion_v2 -> LIBRARY_NOT_FOUND */
    bool privileged;  /* root / CAP_SYS_ADMIN: aggregate MIG memory and processes */
    bool gpm_corrupts_session; /* after a GPM sample, this process's memory reads fail (19) */
    /* A driver that returns garbage: the gauges' plausibility checks are
     * off, readings are clamped only to what their C type holds, and the
     * raw keys below (and pid 0) are allowed. */
    bool hostile;
    struct sim_raw driver_raw; /* nvmlSystemGetDriverVersion writes these bytes */
    struct sim_raw nvml_raw;   /* nvmlSystemGetNVMLVersion writes these bytes */
};

struct sim_gpu {
    bool defined;
    char name[SIM_NAME_LEN];
    char uuid[SIM_NAME_LEN];
    char serial[32]; /* "": nvmlDeviceGetSerial answers NOT_SUPPORTED */
    unsigned pci_domain, pci_bus, pci_device;
    unsigned pci_device_id, pci_subsystem_id;
    unsigned arch;
    int cc_major, cc_minor;
    unsigned minor_number;
    bool accessible; /* false: counted by GetCount_v2 but NO_PERMISSION */
    bool xid_events; /* false: GetSupportedEventTypes lacks the Xid bit */

    unsigned long long mem_total_mib, mem_reserved_mib;
    struct valfn mem_used_mib; /* allocated, excluding reserved; unset = sum of processes */

    int mig_mode, mig_pending;
    const struct sim_profile_set *profiles;

    struct valfn util_gpu, util_mem, enc_util, dec_util;
    struct valfn temp_c, mem_temp_c;
    unsigned temp_shutdown, temp_slowdown, temp_mem_max, temp_gpu_max;
    struct valfn power_w, energy_j; /* energy_j unset = energy_base_j + integral of power */
    double energy_base_j;
    int power_average; /* 1: GetPowerUsage is a 1 s average (Ampere except GA100, and later);
                          0: instantaneous; -1: not given (derived from the name) */
    unsigned power_limit_mw, power_enforced_mw, power_min_mw, power_max_mw, power_default_mw;
    struct valfn clock[4];     /* graphics, SM, memory, video (MHz) */
    unsigned max_clock[4];
    struct valfn pstate, event_reasons;
    struct valfn pcie_tx_kbps, pcie_rx_kbps, pcie_gen, pcie_width;
    unsigned pcie_max_gen, pcie_max_width;
    int ecc_mode, ecc_pending;
    struct valfn ecc[2][2]; /* [corrected, uncorrected][volatile, aggregate] */
    struct valfn fan_pct;
    struct valfn gpm[SIM_GPM_N]; /* percentages ignored with MIG on: the instances' count */

    /* Health counters (sim/api_health.c; docs/simulator.md "Health
     * counters"). The remap and retirement defaults follow the generation:
     * rows are remapped from Ampere on, pages retired before. */
    struct valfn pcie_replay;
    struct valfn remap[SIM_REMAP_N];
    struct valfn remap_inactive[2]; /* correctable, uncorrectable: RemappedRows_v2 */
    struct valfn unrepairable;      /* 0/1: UnrepairableMemoryFlag_v1 (Hopper and later) */
    struct valfn bank[SIM_BANK_N];  /* BankRemapperStatus_v1; none unless given */
    struct valfn retired[SIM_RETIRED_N];
    long nvlinks;                  /* links the GPU has (0: no NVLink); -1 until given */
    struct valfn nvlinks_up;       /* links 0 .. up-1 are active */
    struct valfn nvlink_err[SIM_NVLINK_ERR_N]; /* totals over the active links */
    struct valfn nvlink_kib[2];    /* data TX, RX (KiB running counts) */
    struct valfn violation_s[2];   /* power, thermal: seconds held below application clocks */
    /* *_return keys: the code the call (or field entry) answers; 0 = as modelled */
    int rc[SIM_HRC_N];

    bool process_grow; /* the list gains a process between size and data query */
    unsigned grow_pid;
    double grow_used_mib;

    /* hostile only */
    struct sim_raw name_raw, uuid_raw; /* GetName / GetUUID of the GPU's own handle */
    bool mem_total_raw_set, mem_used_raw_set, mem_free_raw_set;
    unsigned long long mem_total_raw, mem_used_raw, mem_free_raw; /* bytes, exactly */
    bool procs_storm; /* every running-process call: INSUFFICIENT_SIZE, count x 2 + 1000 */
};

struct sim_mig {
    int gpu, slot;
    char tag[24];
    char profile_name[24];
    const struct sim_profile *profile;
    long gi, ci;        /* -1 until given */
    unsigned ci_slices; /* 0 = the whole GPU instance */
    char uuid[SIM_NAME_LEN];
    unsigned long long mem_reserved_mib;
    struct valfn mem_used_mib; /* unset = sum of its processes */
    double from, until;        /* present for from <= t < until */
    struct valfn gpm[SIM_GPM_N_UTIL]; /* this compute instance's GPM percentages */
    bool process_grow;
    unsigned grow_pid;
    double grow_used_mib;
};

struct sim_proc {
    char name[32];
    unsigned pid;
    bool pid_given; /* pid 0 is a value (hostile only), not a missing pid */
    int gpu, slot; /* slot -1: on the GPU itself (MIG off) */
    unsigned types; /* SIM_PROC_* */
    struct valfn used_mib; /* none = NVML_VALUE_NOT_AVAILABLE */
    bool used_raw_set;     /* hostile only: usedGpuMemory is used_raw, exactly */
    unsigned long long used_raw;
    struct valfn sm_util, mem_util, enc_util, dec_util;
    double start, end;
};

struct sim_fault {
    char name[32];
    char target[64];   /* fnmatch pattern over "system", "gpu.N", "gpu.N.mig.S" */
    char function[64]; /* fnmatch pattern over exported symbol names */
    int code;          /* -1: none (only a delay or hang) */
    long delay_ms;     /* > 0: the call sleeps this long first, without the lock */
    bool hang;         /* the call blocks until the process is killed */
    double from, until;
    long calls;       /* fire at most this many times; -1 = unlimited */
    long after_calls; /* let this many matching calls through first */
};

/* [event.NAME] sections and the [events] switches (sim/scenario_events.c,
 * sim/api_events.c). */
#define SIM_MAX_EVENTS 256
enum { SIM_EVENT_WAIT_OK = 0, SIM_EVENT_WAIT_FAIL, SIM_EVENT_WAIT_HANG };

struct sim_event {
    char name[32];
    double t;                /* simulated seconds; -inf until given */
    int gpu, slot;           /* slot -1: the whole GPU */
    unsigned long long type; /* one NVML_EVENT_TYPE_* bit */
    long xid;                /* -1 until given (required for an Xid) */
    /* type = operational (SIM_EVENT_OPERATIONAL): a structured GPU
     * operational event, delivered only by nvmlEventSetWait_v3 to a set
     * with the GPU's operational subscription. legacy_xid: its legacy-Xid
     * context (-1: none); the rest as nvmlEventSetWait_v3_t reports them. */
    long legacy_xid;
    unsigned severity, category, module_code;
};
/* Not an NVML event bit: the sim's mark of a structured operational event. */
#define SIM_EVENT_OPERATIONAL (1ULL << 62)

struct sim_events {
    bool api_off; /* events_api = no: the event functions are FUNCTION_NOT_FOUND */
    int wait;     /* SIM_EVENT_WAIT_* */
    int n, cap;
    struct sim_event *ev; /* owned; sorted by t once loaded */
};

struct sim_scenario {
    char path[512];
    struct sim_system sys;
    /* Owned arrays grown by the parser as sections name them (cap entries,
     * the first n used; at most SIM_MAX_*): a scenario of one GPU does not
     * carry room for a thousand (74 MB, which every load had to clear). */
    int n_gpus, gpus_cap;
    struct sim_gpu *gpus;
    int n_migs, migs_cap;
    struct sim_mig *migs;
    int n_procs, procs_cap;
    struct sim_proc *procs;
    int n_faults;
    struct sim_fault faults[SIM_MAX_FAULTS];
    struct sim_dcgm dcgm; /* [dcgm]: read only by the simulated libdcgm */
    struct sim_events events;
};

/*
 * Reads and validates a scenario. driver_override (may be NULL or "")
 * replaces driver_version, and with it the derived nvml/cuda versions: the
 * symbol-accurate variant libraries are built for one driver. Returns the
 * scenario (caller frees with scenario_free) or NULL with a message in err
 * of the form "FILE:LINE: what" or "FILE: [section] what".
 */
struct sim_scenario *scenario_load(const char *path, const char *driver_override, char *err,
                                   size_t errlen);
void scenario_free(struct sim_scenario *s);

#endif
