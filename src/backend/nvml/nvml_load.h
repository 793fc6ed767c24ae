/*
 * nvml_load.h — find libnvidia-ml, resolve the symbols we use.
 *
 * Search order (seed README, "NVML 라이브러리 탐색 경로"): --nvml-path, each
 * absolute LD_LIBRARY_PATH directory, the sonames libnvidia-ml.so.1 and
 * libnvidia-ml.so in the ld.so cache and the system's directories
 * (libpath.h: never the current directory), then the distribution /
 * container / WSL paths. Each symbol is required or
 * optional and lists its names newest first; a missing optional symbol only
 * makes its metric `none`.
 */
#ifndef MIGMON_NVML_LOAD_H
#define MIGMON_NVML_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/nvml/nvml_api.h"

/* Resolved entry points; NULL means the library does not export any of the
 * names listed for it in nvml_load.c. */
struct nvml_fns {
    nvml_fn_void init;                 /* nvmlInit_v2, nvmlInit */
    nvml_fn_init_flags init_with_flags; /* preferred: NO_GPUS keeps a GPU-less host usable */
    nvml_fn_void shutdown;
    nvml_fn_error_string error_string;
    nvml_fn_str driver_version;
    nvml_fn_str nvml_version;
    nvml_fn_int_out cuda_version; /* _v2 only: v1 makes a version up without libcuda */
    nvml_fn_uint_out device_count;     /* nvmlDeviceGetCount_v2, nvmlDeviceGetCount */
    nvml_fn_handle_by_index handle_by_index;
    nvml_fn_dev_str name;
    nvml_fn_dev_str uuid;
    nvml_fn_dev_str serial;
    nvml_fn_dev_pci pci_info;          /* _v3, _v2, unversioned */
    nvml_fn_dev_uint arch;
    nvml_fn_dev_int2 cuda_cc;
    nvml_fn_dev_util utilization;
    nvml_fn_dev_mem2 memory_v2;
    nvml_fn_dev_mem memory_v1;
    nvml_fn_dev_temp temperature;      /* DEPRECATED(13.0): the fallback of temperature_v */
    nvml_fn_dev_tempv temperature_v;   /* 565 and later */
    nvml_fn_dev_thresh temp_threshold;
    nvml_fn_dev_uint power_usage;
    nvml_fn_dev_uint power_limit_enforced;
    nvml_fn_dev_uint power_limit_mgmt;
    nvml_fn_dev_ull energy;
    nvml_fn_dev_clock clock_info;
    nvml_fn_dev_pstate pstate;
    nvml_fn_dev_ull clock_event_reasons;    /* ...ClocksEventReasons (535.43.02 and later) */
    nvml_fn_dev_ull clock_throttle_reasons; /* ...ClocksThrottleReasons: DEPRECATED(13.0) */
    nvml_fn_dev_codec encoder_util;
    nvml_fn_dev_codec decoder_util;
    nvml_fn_dev_pcie_tp pcie_throughput;
    nvml_fn_dev_uint pcie_gen;
    nvml_fn_dev_uint pcie_width;
    nvml_fn_dev_ecc_mode ecc_mode;
    nvml_fn_dev_ecc_count ecc_count;
    nvml_fn_dev_uint fan_speed;
    nvml_fn_dev_samples samples;
    nvml_fn_dev_fields field_values;
    nvml_fn_dev_proc_util process_util;
    nvml_fn_dev_procs_util_info processes_util_info;
    nvml_fn_dev_procs procs_compute;   /* _v3, _v2, v1: stride in nvml_lib */
    nvml_fn_dev_procs procs_graphics;
    nvml_fn_dev_procs procs_mps;
    nvml_fn_dev_uint2 mig_mode;
    nvml_fn_dev_uint is_mig_handle;
    nvml_fn_dev_uint max_mig_count;
    nvml_fn_dev_mig_handle mig_handle_by_index;
    nvml_fn_dev_parent mig_parent;
    nvml_fn_dev_uint gpu_instance_id;
    nvml_fn_dev_uint compute_instance_id;
    nvml_fn_dev_attrs attributes;      /* _v2, unversioned */
    nvml_fn_dev_gi_profile gi_profile_info;
    /* GPM: resolved in every process, called only by the GPM helper. */
    nvml_fn_dev_gpm_support gpm_query_support;
    nvml_fn_gpm_sample_alloc gpm_sample_alloc;
    nvml_fn_gpm_sample_free gpm_sample_free;
    nvml_fn_gpm_sample_get gpm_sample_get;
    nvml_fn_gpm_mig_sample_get gpm_mig_sample_get; /* 525 and later */
    nvml_fn_gpm_metrics_get gpm_metrics_get;
    /* Health counters (nvml_health.c). */
    nvml_fn_dev_remapped_rows remapped_rows;  /* 450.51 and later (Ampere+) */
    nvml_fn_dev_retired_pages retired_pages;
    nvml_fn_dev_enable_state retired_pending;
    nvml_fn_dev_uint pcie_replay;
    nvml_fn_dev_nvlink_state nvlink_state;
    nvml_fn_dev_nvlink_error nvlink_errors;
    nvml_fn_dev_violation violation;          /* DEPRECATED(13.0), still exported */
    nvml_fn_dev_remapped_rows_v2 remapped_rows_v2; /* 595 and later */
    nvml_fn_dev_unrepairable unrepairable;         /* 590 and later, Hopper+ */
    nvml_fn_dev_bank_remapper bank_remapper;       /* 615 and later */
    /* Probes only: their presence decides the _v3 process-entry stride. */
    void *conf_compute_mem_size;
    void *process_detail_list;
};

enum nvml_proc_kind { NVML_PROCS_COMPUTE, NVML_PROCS_GRAPHICS, NVML_PROCS_MPS, NVML_PROCS_KINDS };

struct nvml_lib {
    void *dl;
    char path[4096];           /* the path that loaded */
    char real_path[4096];      /* the file it resolved to (absolute when known) */
    struct nvml_fns f;
    /* Bytes per entry written by each process-list symbol that resolved. */
    size_t proc_stride[NVML_PROCS_KINDS];
    /* For each table row, the name that resolved (NULL: none). */
    const char *resolved[80];
};

/* Number of rows in the symbol table, and row accessors (for --debug and tests). */
size_t nvml_sym_count(void);
const char *nvml_sym_label(size_t row);   /* first (newest) name of the row */
bool nvml_sym_required(size_t row);

/*
 * Try the search order and resolve the symbol table. explicit_path (may be
 * NULL) is --nvml-path: when given and it does not load, that is an error on
 * its own (no silent fallback to another library). Returns 0, or -1 with a
 * message in err naming every path tried and the last dlerror().
 * *explicit_missing is set when explicit_path does not exist.
 */
int nvml_lib_open(struct nvml_lib *lib, const char *explicit_path, bool *explicit_missing,
                  char *err, size_t errlen);
void nvml_lib_close(struct nvml_lib *lib);

/* The candidate list in order, for --help / docs / tests; NULL-terminated. */
const char *const *nvml_lib_default_paths(void);

/* Static, human-readable name of an NVML return code ("NOT_SUPPORTED"). */
const char *nvml_rc_name(nvmlReturn_t rc);
/* Static "NVML_ERROR_NOT_SUPPORTED"-style string, used as a metric's reason. */
const char *nvml_rc_reason(nvmlReturn_t rc);

#endif
