#include "core/snapshot.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The joined reasons: written under why_lock, never freed or moved. */
static pthread_mutex_t why_lock = PTHREAD_MUTEX_INITIALIZER;
static struct why_pair {
    const char *a, *b;
    char *joined;
} why_pairs[MIGMON_WHY_JOINS];
static size_t why_npairs;

const char *metric_why_join(const char *a, const char *b)
{
    if (!a || !b)
        return a ? a : b;
    const char *out = a;
    pthread_mutex_lock(&why_lock);
    size_t i = 0;
    while (i < why_npairs && !(why_pairs[i].a == a && why_pairs[i].b == b))
        i++;
    if (i < why_npairs) {
        out = why_pairs[i].joined;
    } else if (why_npairs < MIGMON_WHY_JOINS) {
        size_t n = strlen(a) + 2 + strlen(b) + 1;
        char *j = malloc(n);
        if (j) {
            snprintf(j, n, "%s; %s", a, b);
            why_pairs[why_npairs++] = (struct why_pair){a, b, j};
            out = j;
        }
    }
    pthread_mutex_unlock(&why_lock);
    return out;
}

const char *device_vendor_name(unsigned vendor)
{
    return vendor == VENDOR_AMD ? "amd" : "nvidia";
}

const char *metric_source_name(enum metric_source s)
{
    switch (s) {
    case MSRC_NONE: return "none";
    case MSRC_DIRECT: return "direct";
    case MSRC_GPM: return "gpm";
    case MSRC_PROCESS: return "process";
    case MSRC_ESTIMATE: return "estimate";
    case MSRC_CARRIED: return "carried";
    case MSRC_DCGM: return "dcgm";
    }
    return "none";
}

#define PIB 1125899906842624.0 /* 2^50 bytes: no device has a pebibyte */

static const struct metric_info infos[M_COUNT] = {
    [M_GPU_UTIL] = {"gpu_util_pct", "%", false, 0, 100},
    [M_MEM_UTIL] = {"mem_util_pct", "%", false, 0, 100},
    [M_SM_UTIL] = {"sm_util_pct", "%", false, 0, 100},
    [M_MEM_USED] = {"memory_used_bytes", "B", false, 0, PIB},
    [M_MEM_TOTAL] = {"memory_total_bytes", "B", false, 0, PIB},
    [M_TEMP] = {"temperature_c", "C", true, -40, 200},
    [M_POWER] = {"power_w", "W", true, 0, 10000},
    [M_POWER_LIMIT] = {"power_limit_w", "W", true, 0, 10000},
    [M_ENERGY] = {"energy_j", "J", true, 0, 1e15},
    [M_CLK_GFX] = {"clock_graphics_mhz", "MHz", true, 0, 20000},
    [M_CLK_SM] = {"clock_sm_mhz", "MHz", true, 0, 20000},
    [M_CLK_MEM] = {"clock_mem_mhz", "MHz", true, 0, 20000},
    [M_PSTATE] = {"pstate", "", true, 0, 15},
    [M_PCIE_GEN] = {"pcie_gen", "", true, 1, 8},
    [M_PCIE_WIDTH] = {"pcie_width", "", true, 1, 64},
    [M_PCIE_TX] = {"pcie_tx_bytes_per_s", "B/s", true, 0, 1e12},
    [M_PCIE_RX] = {"pcie_rx_bytes_per_s", "B/s", true, 0, 1e12},
    [M_ENC_UTIL] = {"enc_util_pct", "%", true, 0, 100},
    [M_DEC_UTIL] = {"dec_util_pct", "%", true, 0, 100},
    [M_ECC_MODE] = {"ecc_enabled", "", true, 0, 1},
    [M_ECC_CORR] = {"ecc_corrected", "", true, 0, 1e15},
    [M_ECC_UNCORR] = {"ecc_uncorrected", "", true, 0, 1e15},
    [M_TEMP_SLOWDOWN] = {"temp_slowdown_c", "C", true, -40, 200},
    [M_TEMP_SHUTDOWN] = {"temp_shutdown_c", "C", true, -40, 200},
    [M_FAN] = {"fan_pct", "%", true, 0, 200},
    [M_SM_OCCUPANCY] = {"sm_occupancy_pct", "%", false, 0, 100},
    [M_TENSOR_UTIL] = {"tensor_util_pct", "%", false, 0, 100},
    [M_DFMA_TENSOR_UTIL] = {"dfma_tensor_util_pct", "%", false, 0, 100},
    [M_HMMA_TENSOR_UTIL] = {"hmma_tensor_util_pct", "%", false, 0, 100},
    [M_IMMA_TENSOR_UTIL] = {"imma_tensor_util_pct", "%", false, 0, 100},
    [M_FP64_UTIL] = {"fp64_util_pct", "%", false, 0, 100},
    [M_FP32_UTIL] = {"fp32_util_pct", "%", false, 0, 100},
    [M_FP16_UTIL] = {"fp16_util_pct", "%", false, 0, 100},
    [M_INT_UTIL] = {"integer_util_pct", "%", false, 0, 100},
    [M_NVLINK_TX] = {"nvlink_tx_bytes_per_s", "B/s", true, 0, 1e13},
    [M_NVLINK_RX] = {"nvlink_rx_bytes_per_s", "B/s", true, 0, 1e13},
    [M_XID_ERRORS] = {"xid_errors_total", "", false, 0, 1e15},
    [M_LAST_XID] = {"last_xid", "", false, 0, 65535},
    [M_MEM_TEMP] = {"memory_temp_c", "C", true, -40, 200},
    [M_PCIE_REPLAY] = {"pcie_replay_total", "", true, 0, 1e15},
    [M_ECC_CORR_AGG] = {"ecc_corrected_aggregate", "", true, 0, 1e15},
    [M_ECC_UNCORR_AGG] = {"ecc_uncorrected_aggregate", "", true, 0, 1e15},
    [M_REMAP_CORR] = {"remapped_rows_correctable", "", true, 0, 1e6},
    [M_REMAP_UNCORR] = {"remapped_rows_uncorrectable", "", true, 0, 1e6},
    [M_REMAP_PENDING] = {"row_remap_pending", "", true, 0, 1},
    [M_REMAP_FAILURE] = {"row_remap_failure", "", true, 0, 1},
    [M_RETIRED_SBE] = {"retired_pages_sbe", "", true, 0, 1e6},
    [M_RETIRED_DBE] = {"retired_pages_dbe", "", true, 0, 1e6},
    [M_RETIRED_PENDING] = {"retired_pages_pending", "", true, 0, 1},
    [M_MEM_RESERVED] = {"memory_reserved_bytes", "B", false, 0, PIB},
    [M_NVLINK_LINKS_UP] = {"nvlink_links_up", "", true, 0, 64},
    [M_NVLINK_CRC_ERRORS] = {"nvlink_crc_errors", "", true, 0, 1e18},
    [M_NVLINK_REPLAY_ERRORS] = {"nvlink_replay_errors", "", true, 0, 1e18},
    [M_NVLINK_RECOVERY_ERRORS] = {"nvlink_recovery_errors", "", true, 0, 1e18},
    [M_NVLINK_DATA_BYTES] = {"nvlink_data_bytes", "B", true, 0, 1e21},
    [M_THROTTLE_POWER_S] = {"throttle_power_s", "s", true, 0, 1e12},
    [M_THROTTLE_THERMAL_S] = {"throttle_thermal_s", "s", true, 0, 1e12},
    [M_REMAP_INACTIVE] = {"remapped_rows_inactive", "", true, 0, 1e6},
    [M_UNREPAIRABLE_MEM] = {"unrepairable_memory", "", true, 0, 1},
    [M_BANK_REMAPS] = {"bank_remaps_active", "", true, 0, 1e9},
    [M_BANK_REMAP_PENDING] = {"bank_remap_pending", "", true, 0, 1},
    [M_BANK_NO_SPARE] = {"bank_remap_no_spare_groups", "", true, 0, 1e9},
    [M_GTT_USED] = {"gtt_used_bytes", "B", true, 0, PIB},
    [M_GTT_TOTAL] = {"gtt_total_bytes", "B", true, 0, PIB},
};

/* Two readings that cannot both be true: used above total. */
static void check_memory(struct snapshot *s, struct device *d)
{
    struct metric *u = &d->m[M_MEM_USED], *t = &d->m[M_MEM_TOTAL];
    if (metric_ok(u) && metric_ok(t) && u->value > t->value) {
        const char *why = snapshot_note(s, "driver returned used %.15g > total %.15g bytes",
                                        u->value, t->value);
        *u = metric_none(why);
        *t = metric_none(why);
    }
}

/* "driver returned X" for a reading outside its range. Integers are
 * exact in a double only up to 2^53: a larger one (2^64-1, the all-ones
 * pattern, reads as 2^64) is given as the approximation it is. */
static const char *out_of_range(struct snapshot *s, double v)
{
    if (fabs(v) < 9007199254740992.0 && v == floor(v))
        return snapshot_note(s, "driver returned %.0f", v);
    if (fabs(v) >= 18446744073709549568.0 && fabs(v) <= 18446744073709551616.0)
        return snapshot_note(s, "driver returned about 2^64 (%.6g; all ones: not available?)", v);
    if (isfinite(v) && v == floor(v))
        return snapshot_note(s, "driver returned about %.6g", v);
    return snapshot_note(s, "driver returned %.15g", v);
}

void snapshot_check_ranges(struct snapshot *s)
{
    snapshot_check_ranges_from(s, 0);
}

void snapshot_check_ranges_from(struct snapshot *s, size_t first)
{
    for (size_t i = first; i < s->ndevices; i++) {
        struct device *d = &s->devices[i];
        for (int k = 0; k < M_COUNT; k++) {
            struct metric *m = &d->m[k];
            const struct metric_info *mi = &infos[k];
            if (metric_ok(m) && !(m->value >= mi->min && m->value <= mi->max))
                *m = metric_none(out_of_range(s, m->value));
        }
        check_memory(s, d);
        for (size_t j = 0; j < d->nprocs && d->proc_first + j < s->nprocs; j++) {
            struct gpu_process *p = &s->procs[d->proc_first + j];
            if (metric_ok(&p->mem_bytes) && !(p->mem_bytes.value >= 0 && p->mem_bytes.value <= PIB))
                p->mem_bytes = metric_none("driver returned an impossible memory size");
        }
    }
}

static unsigned carry_n = 3;

unsigned carry_ticks(void)
{
    return carry_n;
}

void carry_ticks_set(unsigned n)
{
    carry_n = n;
}

const struct metric_info *metric_info(enum metric_id id)
{
    if ((unsigned)id >= M_COUNT)
        return NULL;
    return &infos[id];
}

int snapshot_reserve(struct snapshot *s, size_t n)
{
    if (n <= s->cap)
        return 0;
    size_t cap = s->cap ? s->cap : 8;
    while (cap < n)
        cap *= 2;
    struct device *d = realloc(s->devices, cap * sizeof(*d));
    if (!d)
        return -1;
    s->devices = d;
    s->cap = cap;
    return 0;
}

void snapshot_own_cores(struct snapshot *s)
{
    size_t n = s->host.ncores;
    if (n > s->core_cap) {
        struct host_core *c = realloc(s->core_buf, n * sizeof(*c));
        if (!c) {
            s->host.ncores = 0;
            s->host.cores = s->core_buf;
            return;
        }
        s->core_buf = c;
        s->core_cap = n;
    }
    if (n && s->host.cores != s->core_buf)
        memcpy(s->core_buf, s->host.cores, n * sizeof(*s->core_buf));
    s->host.cores = s->core_buf;
}

void snapshot_notes_reset(struct snapshot *s)
{
    s->notes_len = 0;
}

const char *snapshot_note(struct snapshot *s, const char *fmt, ...)
{
    /* Allocated once; never grown while in use (growing would move the
     * notes that earlier metrics point at). */
    enum { NOTES_CAP = 16384 };
    if (!s->notes) {
        s->notes = malloc(NOTES_CAP);
        if (!s->notes)
            return "(reason not stored: out of memory)";
        s->notes_cap = NOTES_CAP;
        s->notes_len = 0;
    }
    size_t room = s->notes_cap - s->notes_len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s->notes + s->notes_len, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= room)
        return "(reason not stored: too many this tick)";
    const char *r = s->notes + s->notes_len;
    s->notes_len += (size_t)n + 1;
    return r;
}

int snapshot_reserve_procs(struct snapshot *s, size_t n)
{
    if (n <= s->proc_cap)
        return 0;
    size_t cap = s->proc_cap ? s->proc_cap : 16;
    while (cap < n)
        cap *= 2;
    struct gpu_process *p = realloc(s->procs, cap * sizeof(*p));
    if (!p)
        return -1;
    s->procs = p;
    s->proc_cap = cap;
    return 0;
}

int snapshot_reserve_nodes(struct snapshot *s, size_t n)
{
    if (n <= s->nodes_cap)
        return 0;
    size_t cap = s->nodes_cap ? s->nodes_cap : 16;
    while (cap < n)
        cap *= 2;
    struct node_summary *p = realloc(s->nodes, cap * sizeof(*p));
    if (!p)
        return -1;
    s->nodes = p;
    s->nodes_cap = cap;
    return 0;
}

void snapshot_free(struct snapshot *s)
{
    free(s->nodes);
    s->nodes = NULL;
    s->nnodes = s->nodes_cap = 0;
    free(s->devices);
    s->devices = NULL;
    s->cap = s->ndevices = 0;
    free(s->procs);
    s->procs = NULL;
    s->proc_cap = s->nprocs = 0;
    free(s->core_buf);
    s->core_buf = NULL;
    s->core_cap = 0;
    s->host.cores = NULL;
    s->host.ncores = 0;
    free(s->notes);
    s->notes = NULL;
    free(s->events);
    s->events = NULL;
    s->nevents = s->events_cap = 0;
    s->notes_len = s->notes_cap = 0;
}

bool snapshot_mig_vram_sum(const struct snapshot *s, size_t i, struct metric *used,
                           struct metric *total)
{
    const struct device *g = &s->devices[i];
    if (g->kind != DEV_GPU || !g->mig_enabled || metric_ok(&g->m[M_MEM_USED]))
        return false;
    double u = 0, t = 0;
    size_t n = 0;
    bool carried = false;
    for (size_t k = i + 1; k < s->ndevices; k++) {
        const struct device *d = &s->devices[k];
        if (d->kind != DEV_MIG || d->parent_pos != (int)i)
            continue;
        const struct metric *du = &d->m[M_MEM_USED], *dt = &d->m[M_MEM_TOTAL];
        if (!metric_ok(du) || !metric_ok(dt))
            return false;
        u += du->value;
        t += dt->value;
        carried |= du->src == MSRC_CARRIED || dt->src == MSRC_CARRIED;
        n++;
    }
    if (n == 0 || t <= 0)
        return false;
    *used = metric_direct(u);
    *total = metric_direct(t);
    if (carried)
        used->src = total->src = MSRC_CARRIED;
    return true;
}

int device_idle(const struct device *d)
{
    if (d->node_down)
        return -1;
    const struct metric *u = &d->m[M_GPU_UTIL];
    if (metric_ok(u))
        return u->value < 1.0;
    if (metric_ok(&d->process_count))
        return d->process_count.value == 0;
    return -1;
}

const char *proc_type_name(unsigned type)
{
    static const char *const names[8] = {"?", "C", "G", "C+G", "M", "C+M", "M+G", "C+M+G"};
    return names[type & 7u];
}

/* Short names, in bit order, as nvidia-smi -q words them. */
static const char *const throttle_names[] = {
    "gpu_idle",          /* 0x001 */
    "applications_clocks", /* 0x002 */
    "sw_power_cap",      /* 0x004 */
    "hw_slowdown",       /* 0x008 */
    "sync_boost",        /* 0x010 */
    "sw_thermal",        /* 0x020 */
    "hw_thermal",        /* 0x040 */
    "hw_power_brake",    /* 0x080 */
    "display_clocks",    /* 0x100 */
};

size_t throttle_reason_names(uint64_t mask, const char **out, size_t max)
{
    size_t n = 0;
    for (size_t bit = 0; bit < sizeof(throttle_names) / sizeof(throttle_names[0]); bit++) {
        if ((mask & (1ULL << bit)) && n < max)
            out[n++] = throttle_names[bit];
    }
    /* Bits NVML may add later are reported, not dropped. */
    if ((mask & ~0x1FFULL) && n < max)
        out[n++] = "other";
    return n;
}
