/*
 * dcgm.h — per-GPU, per-GPU-instance and per-compute-instance activity from
 * NVIDIA DCGM's profiling fields, read in a helper process.
 *
 * On Ampere (A100, A30) NVML has no per-instance activity at all and GPM
 * needs Hopper; DCGM's DCGM_FI_PROF_* fields are the only source. DCGM is
 * dlopen()ed ("libdcgm.so.4", then "libdcgm.so.3") by a helper that is this
 * binary started as `mig-gpu-mon --dcgm-helper ...`, never by the monitor:
 * a connect, watch or read that hangs stalls only the helper, which the
 * client's watchdog kills and restarts with backoff, as for GPM.
 *
 * Where the helper gets DCGM (enum dcgm_mode): a running nv-hostengine
 * first (its unix socket, then 127.0.0.1:5555); an embedded engine only
 * where no other DCGM engine can hold the node's one profiling module
 * (docs/mig-utilisation.md).
 *
 * dcgm_helper.c is the helper; dcgm.c is the client the NVML backend owns.
 */
#ifndef MIGMON_DCGM_H
#define MIGMON_DCGM_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/helper_proc.h"
#include "core/model.h"

enum dcgm_mode {
    DCGM_MODE_AUTO = 0, /* a running hostengine; embedded when root and safe */
    DCGM_MODE_ADDR,     /* only the hostengine at the given address */
    DCGM_MODE_EMBEDDED, /* an embedded engine, whatever else runs */
    DCGM_MODE_OFF,      /* never load DCGM */
};

/* The profiling fields watched, in record order. */
enum dcgm_metric {
    DCGM_GR_ENGINE, /* DCGM_FI_PROF_GR_ENGINE_ACTIVE 1001, ratio */
    DCGM_SM_ACTIVE, /* 1002 */
    DCGM_SM_OCC,    /* 1003 */
    DCGM_TENSOR,    /* 1004 */
    DCGM_DRAM,      /* 1005, per GPU instance */
    DCGM_FP64,      /* 1006 */
    DCGM_FP32,      /* 1007 */
    DCGM_FP16,      /* 1008 */
    DCGM_PCIE_TX,   /* 1009, B/s, whole GPU only */
    DCGM_PCIE_RX,   /* 1010 */
    DCGM_NVLINK_TX, /* 1011 */
    DCGM_NVLINK_RX, /* 1012 */
    DCGM_NMETRICS
};

/* The DCGM field id of each enum dcgm_metric, and its dcgm-exporter name
 * without the DCGM_FI_ prefix ("PROF_GR_ENGINE_ACTIVE"). */
extern const unsigned short dcgm_metric_field[DCGM_NMETRICS];
extern const char *const dcgm_metric_name[DCGM_NMETRICS];

/* ---- the pipe protocol (helper -> client; framing in helper_proc.h) ---- */

#define DCGM_PROTO_MAGIC 0x4344u /* "DC" */

enum dcgm_rec_type {
    DCGM_REC_STATE = 1, /* where DCGM comes from, or why it does not (on change) */
    DCGM_REC_VALUES,    /* the latest values of one entity */
    DCGM_REC_PROGRESS,  /* about to make a DCGM call (stall attribution) */
    DCGM_REC_CYCLE,     /* a round ended (heartbeat) */
    DCGM_REC_DONE,      /* DCGM cannot serve (stated in the last STATE): exiting */
};

/* The DCGM calls the helper can be in. */
enum dcgm_call {
    DCGM_CALL_NONE = 0,
    DCGM_CALL_LOAD,      /* dlopen, dcgmInit */
    DCGM_CALL_CONNECT,   /* dcgmConnect_v2 */
    DCGM_CALL_EMBEDDED,  /* dcgmStartEmbedded_v2 */
    DCGM_CALL_DISCOVER,  /* devices, UUIDs, the MIG hierarchy, metric groups */
    DCGM_CALL_WATCH,     /* groups, field groups, dcgmWatchFields */
    DCGM_CALL_READ,      /* dcgmEntitiesGetLatestValues */
    DCGM_CALL_COUNT
};

enum dcgm_state {
    DCGM_STATE_STARTING = 0,
    DCGM_STATE_NOT_INSTALLED,  /* no libdcgm.so.4 / .so.3 */
    DCGM_STATE_NO_ENGINE,      /* no hostengine answered; embedded not allowed (why) */
    DCGM_STATE_FAILED,         /* a call failed: rc at call; see retry */
    DCGM_STATE_WATCHING,       /* values flow */
};

enum dcgm_source {
    DCGM_SRC_NONE = 0,
    DCGM_SRC_HOSTENGINE, /* where = "unix:/tmp/nv-hostengine" or "127.0.0.1:5555" */
    DCGM_SRC_EMBEDDED,
};

#define DCGM_WHERE_LEN 160
#define DCGM_UUID_LEN 96

struct dcgm_rec_state {
    struct helper_rec_hdr h;
    uint16_t state;    /* enum dcgm_state */
    uint16_t call;     /* enum dcgm_call the state came from */
    int32_t rc;        /* the DCGM answer behind it */
    uint16_t source;   /* enum dcgm_source */
    uint16_t retry;    /* the helper tries again by itself (a hostengine may come) */
    uint32_t watched;  /* bit per enum dcgm_metric */
    int32_t left_rc;   /* why the fields not watched are not (e.g. multi-pass) */
    uint32_t interval_ms;
    uint16_t ngpus, nents;
    char where[DCGM_WHERE_LEN];
    char detail[256];  /* e.g. "nv-hostengine (pid 812) may hold the profiling module" */
};

enum dcgm_scope {
    DCGM_SCOPE_GPU = 0,
    DCGM_SCOPE_GI,
    DCGM_SCOPE_CI,
};

struct dcgm_rec_values {
    struct helper_rec_hdr h;
    uint8_t scope; /* enum dcgm_scope */
    uint8_t nci;   /* GI scope: compute instances in the GPU instance */
    uint16_t pad;
    int32_t gi_id; /* NVML GPU instance id, -1 for a GPU */
    int32_t ci_id; /* NVML compute instance id, -1 unless CI scope */
    char gpu_uuid[DCGM_UUID_LEN];
    int64_t ts_us;                /* the newest value's DCGM timestamp */
    double v[DCGM_NMETRICS];      /* ratios 0..1 as DCGM gives them; B/s */
    int32_t st[DCGM_NMETRICS];    /* per value: DCGM_ST_* or DCGM_VALUE_BLANK */
};

/* st[] for a value that arrived as a BLANK sentinel (not yet sampled, paused,
 * not supported for this entity): not a DCGM_ST_* code. */
#define DCGM_VALUE_BLANK 1
/* st[] for a field that is not watched (see the state's left_rc). */
#define DCGM_VALUE_UNWATCHED 2

struct dcgm_rec_progress {
    struct helper_rec_hdr h;
    uint16_t call; /* enum dcgm_call */
    uint16_t pad;
    uint32_t pad2;
};

struct dcgm_rec_cycle {
    struct helper_rec_hdr h;
    uint32_t have_values;
    uint32_t pad;
};

/* The helper's entry point: argv = {exe, "--dcgm-helper", LIBRARY|"", MODE
 * (auto|addr|embedded), ADDRESS|"", INTERVAL_MS, NVML_LIBRARY|""}. */
int dcgm_helper_main(int argc, char **argv);
#define DCGM_HELPER_ARG "--dcgm-helper"

/* ---- the client (owned by the NVML backend) ---- */

struct dcgm_client;

/* The shortest DCGM watch (and helper round) of a monitor that keeps
 * running: DCGM samples its profiling fields at 1 Hz by default, and a
 * faster watch would cost the hostengine and wake the helper every tick for
 * values the engine updates no faster. --once watches at its own interval. */
#define DCGM_WATCH_MIN_MS 1000u

struct dcgm_client_opts {
    const char *exe;      /* the binary to run as helper (this one); NULL: no DCGM */
    const char *lib_path; /* --dcgm-lib, or NULL to search libdcgm.so.4 / .so.3 */
    enum dcgm_mode mode;
    const char *addr;     /* DCGM_MODE_ADDR: "host:port" or "unix:PATH" */
    unsigned interval_ms; /* DCGM's update interval and the helper's round (>= 100) */
    /* The NVML library the monitor loaded: in auto mode the helper asks it
     * whether any GPU lacks GPM before it starts an embedded engine. */
    const char *nvml_path;
    unsigned backoff_ms, watchdog_floor_ms; /* 0: defaults (1 s doubling to 30 s; 1 s) */
};

/* Starts the helper (not in DCGM_MODE_OFF). NULL only out of memory. */
struct dcgm_client *dcgm_client_open(const struct dcgm_client_opts *o);
/* Reads what the helper sent, runs the watchdog. Never blocks. */
void dcgm_client_poll(struct dcgm_client *c);
/* Waits up to timeout_ms for the helper's first state (whether DCGM is
 * installed at all: a few ms), so a first snapshot already says. */
void dcgm_client_wait_state(struct dcgm_client *c, unsigned timeout_ms);
/* Waits up to timeout_ms for the first round of values or a final state. */
void dcgm_client_settle(struct dcgm_client *c, unsigned timeout_ms);
void dcgm_client_close(struct dcgm_client *c);
int dcgm_client_helper_pid(const struct dcgm_client *c);
/* One line on where DCGM comes from or why it does not, for the info
 * panel and JSON: "DCGM via nv-hostengine unix:/tmp/nv-hostengine, watched
 * every 1 s" (a static or client-owned string; valid until the next poll). */
const char *dcgm_client_describe(const struct dcgm_client *c);

/* DCGM is off or not installed: values keep their own reasons, and only
 * the description says so. */
bool dcgm_client_quiet(const struct dcgm_client *c);

struct dcgm_view {
    bool ok;
    const char *why; /* when !ok: a static string */
    double v[DCGM_NMETRICS];
    int st[DCGM_NMETRICS];
    int nci;
    bool ci_level;
};

void dcgm_client_gpu(const struct dcgm_client *c, const char *gpu_uuid, struct dcgm_view *out);
/* A MIG device: its compute instance's values where DCGM gave them (a GI
 * with several CIs), else its GPU instance's. */
void dcgm_client_mig(const struct dcgm_client *c, const char *gpu_uuid, int gi_id, int ci_id,
                     struct dcgm_view *out);
/* Metric k of a view: ratios become percentages; BLANK, an error or a
 * ratio outside 0..1 (beyond DCGM's documented MIG overshoot) is none with
 * a reason, never 0. */
struct metric dcgm_metric(const struct dcgm_view *v, enum dcgm_metric k);

struct snapshot;
/* DCGM's values into a merged snapshot, after GPM's (dcgm_apply.c), and
 * the snapshot's dcgm_info line. */
void dcgm_apply(const struct dcgm_client *c, struct snapshot *s);

#endif
