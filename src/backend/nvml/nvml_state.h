/*
 * nvml_state.h — the NVML backend's shared internals: one GPU's sampling
 * context (struct nvml_state) with its per-device caches, the CALL macro
 * and the memo of calls a device never answers (nvml_state.c). The files
 * above use it one way: nvml_workers.c (threads) calls nvml.c (one GPU's
 * walk), which calls nvml_read.c (one device's values) and nvml_procs.c
 * (who runs where); nvml_read.c and nvml_procs.c call nvml_procs_util.c
 * (per-process utilisation), nvml_procs.c calls nvml_procs_read.c (the
 * lists as NVML gives them), nvml_read.c calls nvml_health.c (the health
 * counters and the field-values batch). None calls back up, and nothing
 * here calls any of them. Not for use outside src/backend/ except by the backend's
 * unit tests and fuzz target.
 */
#ifndef MIGMON_NVML_STATE_H
#define MIGMON_NVML_STATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/nvml/nvml_load.h"
#include "core/debuglog.h"
#include "core/snapshot.h"

struct nvml_gpm; /* nvml_gpm.c */

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
    /* health counters (nvml_health.c) */
    MC_REMAP,           /* nvmlDeviceGetRemappedRows */
    MC_RETIRED,         /* nvmlDeviceGetRetiredPages (both causes) */
    MC_RETIRED_PENDING, /* nvmlDeviceGetRetiredPagesPendingStatus */
    MC_PCIE_REPLAY,     /* nvmlDeviceGetPcieReplayCounter */
    MC_NVLINK,          /* nvmlDeviceGetNvLinkState on link 0: no NVLink */
    MC_VIOL_POWER,      /* nvmlDeviceGetViolationStatus, per policy */
    MC_VIOL_THERMAL,
    MC_REMAP_V2,        /* nvmlDeviceGetRemappedRows_v2 */
    MC_UNREPAIRABLE,    /* nvmlDeviceGetUnrepairableMemoryFlag_v1 */
    MC_BANK,            /* nvmlDeviceGetBankRemapperStatus_v1 */
    MC_COUNT
};
_Static_assert(MC_COUNT <= 32, "memo bits are a uint32_t");

/* Values with a deprecated and a replacement entry point (nvml_compat.c). */
enum compat_call { CC_TEMP, CC_THROTTLE, CC_VIOL_POWER, CC_VIOL_THERMAL, CC_COUNT };
/* Which entry point answers for a device, remembered once one refused. */
enum compat_path {
    CP_UNKNOWN = 0, /* the preferred one is asked */
    CP_NEW,         /* the replacement answers */
    CP_OLD,         /* the replacement refused: the old call answers */
    CP_NONE,        /* both refused: compat_why says how */
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
    unsigned arch_id; /* nvmlDeviceArchitecture_t; 0 unknown */
    /* Health counters read at the slow cadence (nvml_health.c), indexed by
     * metric id - M_MEM_TEMP and kept between reads; only those ids are
     * used. nvl_links: the links the first NVLink walk found (-1 not
     * walked, 0 none); nvl_unsup: the error counters (bit per
     * nvmlNvLinkErrorCounter_t) the links answer NOT_SUPPORTED for. */
    struct metric health[M_COUNT - M_MEM_TEMP];
    int nvl_links;
    unsigned nvl_unsup;
    /* nvml_compat.c: per value, the entry point that answers and the
     * reason it carries (a static string, or metric_why_join's). */
    unsigned char compat_path[CC_COUNT];
    const char *compat_why[CC_COUNT];
    struct metric sm_last; /* the last SM sum from per-process samples */
    unsigned long sm_last_tick;
    /* A MIG device's graphics/MPS lists: busy last time, or read again at
     * opt_lists_next. */
    bool opt_lists_busy;
    unsigned long opt_lists_next;
    unsigned opt_type_mask;
    unsigned long long proc_util_last_seen;
};

/* A GPU or compute instance id NVML did not give (its
 * NVML_INVALID_INSTANCE_ID). */
#define NVML_NO_ID 0xFFFFFFFFu

/* One entry of a merged process list, as NVML gave it. */
struct nvml_proc {
    uint32_t pid;
    unsigned long long mem; /* bytes, or NVML_VALUE_NOT_AVAILABLE_ULL */
    unsigned gi, ci;        /* NVML_NO_ID when unknown */
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

/*
 * The sampling context of one thread: a copy of the library's entry points
 * (the root in nvml_workers.c owns the library), the per-device caches and
 * the scratch buffers. Each GPU has its own, so GPUs share nothing but the
 * library. Owner: the thread that claimed the GPU's tick (the runner or the
 * GPU's own thread, one at a time; see nvml_workers.c), except cur_sym,
 * which the engine reads (atomically) to name a stalled call.
 */
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
    /* The driver's branch (580 of "580.82.07"), read once by nvml_compat.c;
     * 0 not read yet, -1 unknown. */
    int drv_branch;
    char err[2048];
    struct dev_cache *cache;
    size_t ncache, capcache;
    size_t cache_next; /* where the next lookup looks first: a tick asks in
                        * the order the entries were made */
    nvmlProcessUtilizationSample_t *pu_buf;
    size_t pu_cap;
    nvmlProcessUtilizationInfo_v1_t *pui_buf;
    size_t pui_cap;
    /* Per-process samples of the device nvml_process_util() read last; pus_dev
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
    /* GPM in this session (nvml_gpm.c), for a GPU the GPM helper proved;
     * NULL while the helper samples it. */
    struct nvml_gpm *gpm;
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

/* The most entries one process list may take (2 MiB at the widest stride),
 * and the most per-process utilisation samples one answer may take (2.5 MiB
 * at 40 bytes): the count is the driver's word, up to 2^32-1, and a driver
 * that keeps asking for more is answered with its own INSUFFICIENT_SIZE,
 * never with unbounded memory. Far above any real GPU's process count. */
#define NVML_MAX_PROC_ENTRIES 65536u

/* A fresh context over the root's library (copied); free with
 * nvml_state_free, which gives back every buffer the context grew. */
void nvml_state_init(struct nvml_state *st, const struct nvml_lib *lib);
void nvml_state_free(struct nvml_state *st);

/* The cache entry of a device (a GPU's UUID, or a MIG device's key), made
 * when it is new; NULL when out of memory. */
struct dev_cache *nvml_cache_get(struct nvml_state *st, const char *uuid, bool mig);
/* Drop entries for devices that disappeared (MIG reconfiguration, GPU
 * loss): those not marked seen since the last prune. */
void nvml_cache_prune(struct nvml_state *st);

/* ---- open-addressing indexes (position + 1 per slot, 0 empty) ---- */

static inline size_t nvml_ix_slot(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

static inline void nvml_ix_insert(uint32_t *ix, size_t cap, uint64_t key, size_t pos)
{
    size_t h = nvml_ix_slot(key, cap);
    while (ix[h])
        h = (h + 1) & (cap - 1);
    ix[h] = (uint32_t)pos + 1;
}

/* Room for n entries, at most half full. 1: reallocated and cleared (the
 * caller re-inserts its entries); 0: it fits; -1: out of memory. */
int nvml_ix_reserve(uint32_t **ix, size_t *cap, size_t n);

/* Shrink *buf (*cap entries of elem bytes) after an answer of count
 * entries: a buffer grown past 4,096 entries is given back once an answer
 * uses under an eighth of it, down to twice that answer, 1,024 entries at
 * least, so a storm of INSUFFICIENT_SIZE does not hold its peak for good.
 * A failed realloc keeps the old buffer. */
void nvml_buf_shrink(void **buf, size_t *cap, size_t count, size_t elem);

/*
 * A table (entries and their index) after a tick that used n of its *cap
 * entries: grown past 4,096 and now under an eighth full, it is cut like a
 * sample buffer, and a new index sized for n replaces the old one (the
 * caller re-inserts its entries). False when nothing changed: small
 * enough already, or an allocation failed (the old table stays whole).
 */
bool nvml_table_trim(void **e, size_t *cap, size_t n, size_t elem, uint32_t **ix, size_t *ixcap);

#endif
