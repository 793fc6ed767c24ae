/*
 * gpm.h — GPU Performance Monitoring (Hopper and later): first through an
 * isolated helper process, then, on a driver the helper proved, on the
 * monitor's own sampling thread.
 *
 * The monitor's own NVML session makes no nvmlGpm* call until the helper
 * has proved the driver: a helper (this binary, started as `mig-gpu-mon
 * --gpm-helper ...`) opens its own NVML session, takes GPM samples and sends
 * compact binary records over a pipe. A driver that corrupts the session
 * that made GPM calls (reported on 535.129.03: memory reads then fail with
 * IN_USE) therefore damages only the helper's session, and a GPM call that
 * hangs stalls only the helper, which the client's watchdog kills and
 * restarts (docs/mig-utilisation.md). Where the helper's memory-read canary
 * passed after its first GPM round and again ten rounds later (PROVEN), and
 * the monitor samples through an engine whose stalls the watchdog hands
 * over, the GPU's GPM moves into the monitor's session (nvml_gpm.c): no
 * process woken every tick. The helper stays for a GPU whose canary failed
 * or whose GPM calls hung in it, with --gpm helper, and for --once.
 *
 * gpm_helper.c is the helper; gpm.c is the client the NVML backend owns;
 * nvml_gpm.c samples a proved GPU in the monitor's session.
 */
#ifndef MIGMON_GPM_H
#define MIGMON_GPM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/helper_proc.h"
#include "core/model.h"

enum gpm_mode {
    GPM_AUTO = 0, /* where supported; off for a GPU whose session degrades */
    GPM_ON,       /* as auto, but keep GPM on a GPU whose session degrades */
    GPM_OFF,      /* never start the helper */
    GPM_HELPER,   /* as auto, but only ever in the helper (never the monitor's session) */
};

/* The metrics requested from nvmlGpmMetricsGet, in record order. */
enum gpm_metric {
    GPM_GRAPHICS,
    GPM_SM,
    GPM_SM_OCC,
    GPM_INT,
    GPM_TENSOR,
    GPM_DFMA,
    GPM_HMMA,
    GPM_IMMA,
    GPM_DRAM,
    GPM_FP64,
    GPM_FP32,
    GPM_FP16,
    GPM_PCIE_TX,
    GPM_PCIE_RX,
    GPM_NVLINK_RX,
    GPM_NVLINK_TX,
    GPM_NMETRICS
};

/* The NVML metric id of each enum gpm_metric. */
extern const unsigned gpm_metric_nvml_id[GPM_NMETRICS];

/* ---- the pipe protocol (helper -> client; framing in helper_proc.h) ---- */

#define GPM_PROTO_MAGIC 0x4D50u /* "PM" */

enum gpm_rec_type {
    GPM_REC_GPU = 1,  /* a GPU's GPM state (sent at start and on change) */
    GPM_REC_VALUES,   /* metrics of one entity between its last two samples */
    GPM_REC_PROGRESS, /* about to make an NVML call on a GPU (stall attribution) */
    GPM_REC_CYCLE,    /* a sampling round ended (heartbeat) */
    GPM_REC_DONE,     /* nothing to sample (no GPM-capable GPU): exiting */
};

/* The NVML calls the helper can be in, for stall reasons. */
enum gpm_call {
    GPM_CALL_NONE = 0,
    GPM_CALL_INIT,        /* nvmlInit / enumeration */
    GPM_CALL_SUPPORT,     /* nvmlGpmQueryDeviceSupport */
    GPM_CALL_SAMPLE,      /* nvmlGpmSampleGet */
    GPM_CALL_MIG_SAMPLE,  /* nvmlGpmMigSampleGet */
    GPM_CALL_METRICS,     /* nvmlGpmMetricsGet */
    GPM_CALL_MEMORY,      /* the memory-read canary */
    GPM_CALL_COUNT
};

enum gpm_gpu_state {
    GPM_GPU_SUPPORTED = 1,
    GPM_GPU_UNSUPPORTED,  /* the support query said no (rc NOT_SUPPORTED) or failed (rc) */
    GPM_GPU_NO_API,       /* the library lacks a GPM symbol this GPU needs */
    GPM_GPU_DEGRADED,     /* memory reads failed after GPM calls (rc of the read) */
    /* The memory-read canary passed after the first GPM round and again
     * GPM_PROOF_ROUNDS rounds later: the driver keeps a session that makes
     * GPM calls healthy. Says nothing of the GPU's state (still SUPPORTED). */
    GPM_GPU_PROVEN,
};

/* The helper's round whose canary, passing, proves a GPU (the first
 * round's is the other). */
#define GPM_PROOF_ROUNDS 10

enum gpm_scope {
    GPM_SCOPE_GPU = 0, /* nvmlGpmSampleGet on a GPU handle: the whole GPU */
    GPM_SCOPE_GI,      /* nvmlGpmMigSampleGet(parent, GI id): one GPU instance */
    GPM_SCOPE_CI,      /* nvmlGpmSampleGet on a MIG handle (595+): one compute instance */
};

#define GPM_UUID_LEN 96

struct gpm_rec_gpu {
    struct helper_rec_hdr h;
    uint16_t gpu;   /* the helper's GPU index */
    uint16_t state; /* enum gpm_gpu_state */
    int32_t rc;     /* the NVML answer behind the state */
    uint32_t arch;  /* nvmlDeviceArchitecture_t, 0xffffffff unknown */
    uint32_t call;  /* enum gpm_call the state came from */
    char uuid[GPM_UUID_LEN];
};

struct gpm_rec_values {
    struct helper_rec_hdr h;
    uint16_t gpu;
    uint8_t scope; /* enum gpm_scope */
    uint8_t nci;   /* GI scope: compute instances in the GPU instance */
    int32_t gi_id; /* -1 for the whole GPU */
    char gpu_uuid[GPM_UUID_LEN];
    char mig_uuid[GPM_UUID_LEN]; /* CI scope: the MIG device; else "" */
    double span_s; /* time between the two samples */
    double v[GPM_NMETRICS];
    int32_t rc[GPM_NMETRICS]; /* per-metric NVML answer */
};

struct gpm_rec_progress {
    struct helper_rec_hdr h;
    uint16_t gpu;
    uint16_t call; /* enum gpm_call */
};

struct gpm_rec_cycle {
    struct helper_rec_hdr h;
    uint32_t have_values; /* this round produced metrics (not only first samples) */
    uint32_t pad;
};

/* The helper's entry point: argv = {exe, "--gpm-helper", LIBPATH, INTERVAL_MS,
 * [EXCLUDED_GPU_UUID...]}. Writes records to stdout, exits when stdin reaches
 * EOF (the monitor went away) or on a write error. Returns the exit status. */
int gpm_helper_main(int argc, char **argv);
#define GPM_HELPER_ARG "--gpm-helper"

/* ---- the client (owned by the NVML backend) ---- */

struct gpm_client;

struct gpm_client_opts {
    const char *exe;      /* the binary to run as helper (this one); NULL: no GPM */
    const char *lib_path; /* the NVML library the monitor loaded */
    unsigned interval_ms; /* the helper's sampling period (>= 100) */
    enum gpm_mode mode;
    /* 0: the defaults (1 s first restart delay, doubling to 30 s; a helper is
     * declared stalled after 3 intervals, but not before 1 s). Tests shorten
     * them. */
    unsigned backoff_ms;
    unsigned watchdog_floor_ms;
    /* A proved GPU may be sampled in the monitor's own session
     * (gpm_client_inproc): a caller whose stalled sampling the watchdog
     * hands over, and not GPM_HELPER. */
    bool inproc;
};

/* Starts the helper (not in GPM_OFF mode). Never fails for want of GPM: a
 * helper that cannot start shows as a reason. Returns NULL only out of memory. */
struct gpm_client *gpm_client_open(const struct gpm_client_opts *o);
/* Reads what the helper sent, runs the watchdog (kill and restart a helper
 * silent for 3 intervals, with backoff; a GPU whose sampling hung 3 times
 * is excluded). Never blocks. */
void gpm_client_poll(struct gpm_client *g);
/* Waits (up to timeout_ms) until the helper has sent one round of values
 * or has nothing to sample. For one-shot snapshots. */
void gpm_client_settle(struct gpm_client *g, unsigned timeout_ms);
/* Stops the helper (bounded: closes its stdin, then SIGKILL) and reaps it. */
void gpm_client_close(struct gpm_client *g);
/* The running helper's PID, or -1 (for the benchmark). */
int gpm_client_helper_pid(const struct gpm_client *g);

/* ---- a proved GPU in the monitor's own session (nvml_gpm.c) ---- */

/* Some GPU is (to be) sampled in the monitor's session. */
bool gpm_client_any_inproc(const struct gpm_client *g);
/* GPU gpu_uuid's GPM is to be sampled in the monitor's session: the helper
 * proved its driver, in-process sampling is allowed, and it never failed
 * there. */
bool gpm_client_inproc(const struct gpm_client *g, const char *gpu_uuid);
/* The monitor's session gave that GPU's values: the helper stops sampling
 * it (it is started again without it, or, with nothing left to sample,
 * asked to leave). Once per GPU; later calls do nothing. */
void gpm_client_inproc_flowing(struct gpm_client *g, const char *gpu_uuid);
/* A GPM call on that GPU in the monitor's session took too long: the
 * helper samples it again, for good (started again with it). */
void gpm_client_inproc_failed(struct gpm_client *g, const char *gpu_uuid);

/* What GPM knows about one device. When ok is false, why says why (a static
 * string). v and rc are per enum gpm_metric. */
struct gpm_view {
    bool ok;
    const char *why;
    double v[GPM_NMETRICS];
    int rc[GPM_NMETRICS];
    int nci;        /* GI-scope values: compute instances sharing them */
    bool ci_level;  /* the values are the compute instance's own (595+) */
};

/* A physical GPU (whole-GPU values). */
void gpm_client_gpu(const struct gpm_client *g, const char *gpu_uuid, struct gpm_view *out);
/* A MIG device: its compute instance's values when the driver gives them,
 * else its GPU instance's. */
void gpm_client_mig(const struct gpm_client *g, const char *gpu_uuid, int gi_id,
                    const char *mig_uuid, struct gpm_view *out);

/* The value of metric k of a view as a struct metric: NaN, a failed metric
 * or a percentage outside 0-100 becomes none with a reason, never 0. Rates
 * ("MiB/s" in the header) are converted to bytes/s with 10^6. */
struct metric gpm_metric(const struct gpm_view *v, enum gpm_metric k);

#endif
