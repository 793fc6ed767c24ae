/*
 * nvml_internal.h — state shared by the NVML backend's files, used one way:
 * nvml_workers.c (threads) calls nvml.c (one GPU's walk), which calls
 * nvml_read.c (one device's values) and nvml_procs.c (process lists);
 * nvml_read.c calls nvml_procs.c. None calls back up. Not for use outside
 * src/backend/ except by the backend's unit tests.
 */
#ifndef MIGMON_NVML_INTERNAL_H
#define MIGMON_NVML_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/nvml_load.h"
#include "debuglog.h"
#include "snapshot.h"

/* Calls whose NOT_SUPPORTED answer is remembered per device. */
enum memo_call {
    MC_UTIL,
    MC_PROC_UTIL,
    MC_PROC_UTIL_INFO, /* nvmlDeviceGetProcessesUtilizationInfo (550+) */
    MC_MEM_V2,
    MC_ENC,
    MC_DEC,
    MC_FAN,
    MC_ECC,
    MC_ENERGY,
    MC_PCIE_TP,
    MC_THROTTLE,
    MC_FIELDS, /* nvmlDeviceGetFieldValues */
    MC_COUNT
};

struct dev_cache {
    char uuid[MIGMON_UUID_LEN];
    bool mig;         /* a MIG device's entry: a GPU never shares it, even
                       * when a driver returns the same UUID for both */
    bool seen;        /* present in the current enumeration */
    bool have_static; /* static facts read */
    int mig_mode;     /* last MIG mode seen (GPU), -1 unknown */
    char name[MIGMON_NAME_LEN];
    char pci[32];
    char serial[32]; /* the board's (inforom); "" unknown */
    char arch[16];
    int cc_major, cc_minor;
    int slices_total;
    int gi_id, ci_id, slices, ci_slices;
    char profile[32];
    struct metric temp_slowdown, temp_shutdown;
    uint32_t memo;                 /* bit per enum memo_call */
    const char *memo_why[MC_COUNT];
    /* Answers that may change, remembered until a tick (slow cadence):
     * NO_PERMISSION on a MIG-enabled parent's memory, per-process
     * utilisation on a MIG handle, and the settings below. */
    unsigned long mem_denied_until;
    unsigned long proc_util_quiet_until;
    unsigned long settings_tick;   /* power limit and ECC mode read at this tick */
    struct metric power_limit, ecc_mode, pcie_gen, pcie_width;
    unsigned long mig_mode_tick;
    /* static facts that failed for a passing reason: read again at this
     * tick, the gap doubling */
    unsigned long static_retry, static_gap;
    struct metric sm_last; /* the last SM sum from per-process samples */
    unsigned long sm_last_tick;
    /* A MIG device's graphics/MPS lists: busy last time, or read again at
     * opt_lists_next. */
    bool opt_lists_busy;
    unsigned long opt_lists_next;
    unsigned opt_type_mask;
    unsigned long long proc_util_last_seen;
};

/* One entry of a merged process list, as NVML gave it. */
struct nvml_proc {
    uint32_t pid;
    unsigned long long mem; /* bytes, or NVML_VALUE_NOT_AVAILABLE_ULL */
    unsigned gi, ci;        /* NVML_INVALID_INSTANCE_ID (0xFFFFFFFF) when unknown */
    unsigned type;          /* PROC_* bits */
};

/* A merged list with its storage: grown as needed, and given back after a
 * tick that used under an eighth of a table grown past 4,096 entries. */
struct nvml_proc_list {
    struct nvml_proc *e;
    size_t n, cap;
    /* (pid, GI, CI) -> position + 1, open addressing, so merging a list of
     * n entries is O(n), not O(n^2); sized with e */
    uint32_t *ix;
    size_t ixcap;
};

/* The newest per-process utilisation sample of one device, per PID. */
struct nvml_pu {
    uint32_t pid;
    unsigned sm, mem, enc, dec;
    unsigned long long ts;
};

struct gpm_client;
struct dcgm_client;

/*
 * The sampling context of one thread: a copy of the library's entry points
 * (the root in nvml_workers.c owns the library), the per-device caches and
 * the scratch buffers. Each GPU has its own, so GPUs share nothing but the
 * library. Owner: the thread that claimed the GPU's tick (the runner or the
 * GPU's own thread, one at a time; see nvml_workers.c), except cur_sym,
 * which the engine reads (atomically) to name a stalled call.
 */
/* A MIG slot that held a device at the last walk. */
struct mig_slot {
    unsigned int slot;
    nvmlDevice_t h;
    char uuid[MIGMON_UUID_LEN]; /* "" when it could not be read: uuid_why */
    const char *uuid_why;
};

/* How one MIG-enabled GPU's process lists are read. */
enum proc_mode {
    PM_UNKNOWN = 0,
    PM_PARENT,  /* the parent's aggregate list, split by GI/CI (needs privilege) */
    PM_PER_MIG, /* each MIG handle's own list */
};

struct nvml_state {
    struct nvml_lib lib;
    /* The NVML call in progress (its symbol name, a static string) or NULL:
     * one relaxed pointer store per call, read by the tick that finds this
     * worker late. */
    _Atomic(const char *) cur_sym;
    bool lost;    /* the last sample found the GPU lost (GPU_IS_LOST) */
    uint64_t lost_since_ns; /* CLOCK_MONOTONIC when it was first found lost */
    /* The devices of the last sample that read this GPU's identity (the GPU
     * and its MIG devices, as the part listed them): a GPU that is lost or
     * stops answering keeps its name, UUID, bus id and MIG layout from here,
     * every metric none. Replaced by the next sample that reads the GPU,
     * so a different GPU answering at the same place replaces it. Only the
     * identity fields are used; grow-only. */
    struct device *ident;
    size_t nident, ident_cap;
    bool inited;
    /* Call economy (per GPU worker). Ticks counted by this context; the
     * slow cadence in ticks (about 5 s); the MIG slots from the last walk,
     * re-walked at the slow cadence, at once when a MIG handle answers
     * NOT_FOUND / INVALID_ARGUMENT / GPU_IS_LOST or the MIG mode changes. */
    unsigned long tick;
    unsigned int slow_every;
    struct mig_slot *slots;
    size_t nslots, slots_cap;
    bool slots_valid;
    unsigned long slots_tick;
    unsigned int mig_max;
    enum proc_mode proc_mode;
    unsigned long proc_mode_tick;
    bool parent_read; /* st->parent holds this tick's parent list */
    nvmlReturn_t parent_rc;
    bool mem_v2_broken; /* library rejects our nvmlMemory_v2 version: use v1 */
    char err[2048];
    struct dev_cache *cache;
    size_t ncache, capcache;
    size_t cache_next; /* where the next lookup looks first: a tick asks in
                        * the order the entries were made */
    nvmlProcessUtilizationSample_t *pu_buf;
    size_t pu_cap;
    nvmlProcessUtilizationInfo_v1_t *pui_buf;
    size_t pui_cap;
    /* Per-process samples of the device process_util() read last; pus_dev
     * says which (NULL: none this tick). Grown as needed, given back like
     * the process list's table. */
    struct nvml_pu *pus;
    size_t npus, pus_cap;
    uint32_t *pus_ix; /* pid -> position + 1 in pus */
    size_t pus_ixcap;
    const struct dev_cache *pus_dev;
    /* Process-list scratch, all grow-only so a steady tick allocates nothing. */
    unsigned char *raw;   /* one NVML answer, raw_cap entries of the widest stride */
    size_t raw_cap;
    struct nvml_proc_list list;   /* the device being read */
    struct nvml_proc_list parent; /* a MIG-enabled parent's aggregate list */
    size_t *pending;              /* MIG device positions whose own lists failed */
    size_t npending, pending_cap;
    nvmlReturn_t pending_rc;      /* the MIG handles' answer, for the reason */
    /* Scratch for the CALL() macro. */
    uint64_t t0;
    nvmlReturn_t rc;
    char label[48];
};

/*
 * Every NVML call goes through CALL so --debug sees its device, return code
 * and latency. The comma operator sequences: start clock, call, log.
 */
#define CALL(st, sym, expr)                                                                  \
    (atomic_store_explicit(&(st)->cur_sym, (sym), memory_order_relaxed),                     \
     (st)->t0 = debuglog_enabled() ? debuglog_now_ns() : 0, (st)->rc = (expr),               \
     atomic_store_explicit(&(st)->cur_sym, NULL, memory_order_relaxed),                      \
     nvml_log_call((st), (sym)), (st)->rc)

/* The CALL macro's log line (only with --debug). Inline, so the files that
 * make NVML calls depend on this header alone, not on each other. */
static inline void nvml_log_call(struct nvml_state *st, const char *sym)
{
    if (!debuglog_enabled())
        return;
    double us = (double)(debuglog_now_ns() - st->t0) / 1000.0;
    debuglog_printf("%s dev=%s rc=%d %s %.1fus", sym, st->label, st->rc, nvml_rc_name(st->rc),
                    us);
}

static inline bool memo_known(const struct dev_cache *c, enum memo_call k)
{
    return (c->memo >> k) & 1u;
}

/* Remember a "this device will never answer" code. */
static inline bool memo_note(struct dev_cache *c, enum memo_call k, nvmlReturn_t rc)
{
    if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND) {
        c->memo |= 1u << k;
        c->memo_why[k] = nvml_rc_reason(rc);
        return true;
    }
    return false;
}

static inline struct metric memo_none(const struct dev_cache *c, enum memo_call k)
{
    return metric_none(c->memo_why[k] ? c->memo_why[k] : "NVML_ERROR_NOT_SUPPORTED");
}

#define NVML_NO_SYMBOL "not exported by this NVML library"

/* ---- nvml.c: one GPU per call ---- */

/* A fresh context over the root's library (copied); free with
 * nvml_state_free. */
void nvml_state_init(struct nvml_state *st, const struct nvml_lib *lib);
void nvml_state_free(struct nvml_state *st);
/* Sample GPU i (handle h, or hrc: why its handle could not be had) and its
 * MIG devices into part (devices[0] is the GPU, parent_pos relative to
 * part), with their process lists. */
void nvml_sample_gpu(struct nvml_state *st, unsigned int i, nvmlDevice_t h, nvmlReturn_t hrc,
                     const char *uuid, struct snapshot *part);
/* GPM's values (from the helper's records) into a merged snapshot. */
void nvml_gpm_apply(const struct gpm_client *g, struct snapshot *s);
/* DCGM's, after GPM's (dcgm_apply.c). */
void nvml_dcgm_apply(const struct dcgm_client *c, struct snapshot *s);

/* ---- nvml_read.c: one device's calls ---- */

/* A device's static facts are due: never read, or a retry's tick reached. */
bool nvml_static_due(const struct nvml_state *st, const struct dev_cache *c);
/* Static facts: read once, but a read that failed for a passing reason is
 * retried with backoff, so one UNKNOWN at start does not leave a name or
 * threshold N/A for the run. */
void nvml_read_gpu_static(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h);
/* The GPU's slice total from its GPU-instance profiles; -1 unknown. */
int nvml_read_slices_total(struct nvml_state *st, nvmlDevice_t h);
/* A GPU's per-tick values into d (its cached settings at the slow cadence). */
void nvml_read_gpu_dynamic(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h,
                           struct device *d);
/* A MIG device's static facts (name, GI/CI ids, slices, profile). */
void nvml_read_mig_static(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h);
/* A MIG device's values into d: its memory and utilisation tiers, the
 * GPU-wide values copied from parent. */
void nvml_read_mig(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h,
                   const struct device *parent, struct device *d);

/* ---- nvml_procs.c ---- */

/*
 * Per-process utilisation samples newer than the last seen one, kept per PID
 * in st->pus for the process list (st->pus_dev = c), and aggregated for the
 * device. GetProcessesUtilizationInfo (550+) first on a full GPU, else
 * GetProcessUtilization. Concurrent processes' SM shares overlap in time, so
 * their sum is an upper bound; it is clamped to 100. Returns 0 with sm and
 * mem set, or the NVML code.
 */
nvmlReturn_t nvml_process_util(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h,
                               bool mig, double *sm, double *mem);

/*
 * Read one process-list symbol of handle h into st->list, merging by PID and
 * instance with what is already there (type bits OR-ed). Over-allocates and
 * retries while NVML answers INSUFFICIENT_SIZE (the list grows between the
 * calls). Returns the NVML code of the last call.
 */
nvmlReturn_t nvml_procs_read_kind(struct nvml_state *st, nvmlDevice_t h, nvml_fn_dev_procs fn,
                                  size_t stride, unsigned type, const char *sym);
/* Compute, graphics and MPS lists of h merged into st->list (emptied first).
 * Succeeds when the compute list could be read (the others are optional:
 * graphics is not supported on MIG, MPS needs Volta). */
nvmlReturn_t nvml_procs_read(struct nvml_state *st, nvmlDevice_t h);
/* Empty a list (and its index). */
void nvml_proc_list_clear(struct nvml_proc_list *l);
/* The same; optional false reads only the compute list. */
nvmlReturn_t nvml_procs_read_lists(struct nvml_state *st, nvmlDevice_t h, bool optional);
/* A GPU with MIG off: its list into s->procs for device pos. */
void nvml_procs_gpu(struct nvml_state *st, const struct dev_cache *c, nvmlDevice_t h,
                    struct snapshot *s, size_t pos);
/* Before a MIG-enabled GPU's instances: decide how its lists are read
 * this tick (the parent's aggregate when privileged, remembered per GPU and
 * re-checked at the slow cadence; else each instance's own). */
void nvml_procs_mig_begin(struct nvml_state *st, nvmlDevice_t parent_h);
/* A MIG device: its own list, or queued for the parent's. */
void nvml_procs_mig(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t mh,
                    struct snapshot *s, size_t pos);
/* After a MIG-enabled GPU's instances: the parent fallback for the queued
 * ones, unattributed processes on the parent, the parent's count. */
void nvml_procs_mig_done(struct nvml_state *st, nvmlDevice_t parent_h, struct snapshot *s,
                         size_t parent_pos);
void nvml_procs_free(struct nvml_state *st);

#endif
