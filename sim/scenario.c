/*
 * scenario.c — reads a scenario INI file (inih) into struct sim_scenario.
 *
 * Sections: [system], [gpu.N] or [gpu.N-M] (a key in a range applies to
 * every GPU in it; later sections override earlier ones), [gpu.R.mig.S] or
 * [gpu.R.mig.S-T] with an optional "/tag" to give one slot several MIG
 * devices over time, [process.NAME], [fault.NAME], [dcgm] (scenario_dcgm.c).
 * Keys are table-driven below; docs/simulator.md lists them with their meaning and defaults.
 * Cross-field defaults and checks are in scenario_check.c.
 */
#include "scenario.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "errors.h"
#include "scenario_check.h"
#include "scenario_events.h"
#include "scenario_values.h"

struct ctx {
    struct sim_scenario *s;
    FILE *file;
    int line;       /* the line inih is on (counted by read_line) */
    bool line_start; /* the next read starts a new line */
    bool failed;
    int err_line;
    char err[320];
    /* The first key (or value) that only a hostile scenario may use: checked
     * once the whole file is read, so [system] may come anywhere. */
    int hostile_line;
    char hostile_what[160];
};

/* Notes that this line needs [system] hostile = true (see scenario_load). */
static void needs_hostile(struct ctx *c, const char *section, const char *what)
{
    if (!c->hostile_line) {
        c->hostile_line = c->line;
        snprintf(c->hostile_what, sizeof(c->hostile_what), "[%s] %s", section, what);
    }
}

static int fail(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct ctx *c, const char *fmt, ...)
{
    va_list ap;
    if (!c->failed) {
        va_start(ap, fmt);
        vsnprintf(c->err, sizeof(c->err), fmt, ap);
        va_end(ap);
        c->failed = true;
        c->err_line = c->line;
    }
    return 0; /* inih: this line is an error */
}

/* A raw key's value: its bytes, or a load error naming the line. */
static int raw_key(struct ctx *c, const char *section, const char *name, const char *value,
                   struct sim_raw *out)
{
    char rerr[120];
    needs_hostile(c, section, name);
    if (scenario_parse_raw(value, out, rerr, sizeof(rerr)) != 0)
        return fail(c, "[%s] %s: %s", section, name, rerr);
    return 1;
}

/* ---- key tables ---- */

const char *const sim_gpm_keys[SIM_GPM_N] = {
    [SIM_GPM_GRAPHICS] = "gpm_graphics_util",
    [SIM_GPM_SM] = "gpm_sm_util",
    [SIM_GPM_SM_OCCUPANCY] = "gpm_sm_occupancy",
    [SIM_GPM_INTEGER] = "gpm_integer_util",
    [SIM_GPM_TENSOR] = "gpm_tensor_util",
    [SIM_GPM_DFMA_TENSOR] = "gpm_dfma_tensor_util",
    [SIM_GPM_HMMA_TENSOR] = "gpm_hmma_tensor_util",
    [SIM_GPM_IMMA_TENSOR] = "gpm_imma_tensor_util",
    [SIM_GPM_DRAM_BW] = "gpm_dram_bw_util",
    [SIM_GPM_FP64] = "gpm_fp64_util",
    [SIM_GPM_FP32] = "gpm_fp32_util",
    [SIM_GPM_FP16] = "gpm_fp16_util",
    [SIM_GPM_PCIE_TX] = "gpm_pcie_tx_mibps",
    [SIM_GPM_PCIE_RX] = "gpm_pcie_rx_mibps",
    [SIM_GPM_NVLINK_TX] = "gpm_nvlink_tx_mibps",
    [SIM_GPM_NVLINK_RX] = "gpm_nvlink_rx_mibps",
};

static int gpm_key_index(const char *name)
{
    for (int k = 0; k < SIM_GPM_N; k++)
        if (!strcmp(sim_gpm_keys[k], name))
            return k;
    return -1;
}

/* A GPM rate: a value function, or "nan" (the driver reports NaN for it). */
static int gpm_value(struct ctx *c, const char *section, struct valfn *f, const char *name,
                     const char *value)
{
    char verr[240];
    if (!strcasecmp(value, "nan")) {
        valfn_set_nan(f);
        return 1;
    }
    if (valfn_parse(f, value, verr, sizeof(verr)) != 0)
        return fail(c, "[%s] %s: %s (or nan)", section, name, verr);
    return 1;
}

enum ktype { K_STR, K_UINT, K_ULL, K_LONG, K_DOUBLE, K_BOOL, K_TRI, K_MODE, K_VALFN, K_MW, K_RC };

struct key {
    const char *name;
    enum ktype type;
    size_t off;
    size_t size; /* K_STR buffer size */
};

#define G(n, t, f) {n, t, offsetof(struct sim_gpu, f), sizeof(((struct sim_gpu *)0)->f)}
static const struct key gpu_keys[] = {
    G("name", K_STR, name),
    G("uuid", K_STR, uuid),
    G("serial", K_STR, serial),
    G("pci_device_id", K_UINT, pci_device_id),
    G("pci_subsystem_id", K_UINT, pci_subsystem_id),
    G("minor_number", K_UINT, minor_number),
    G("accessible", K_BOOL, accessible),
    G("memory_total_mib", K_ULL, mem_total_mib),
    G("memory_reserved_mib", K_ULL, mem_reserved_mib),
    G("memory_used_mib", K_VALFN, mem_used_mib),
    G("mig_mode", K_MODE, mig_mode),
    G("mig_pending", K_MODE, mig_pending),
    G("util_gpu", K_VALFN, util_gpu),
    G("util_memory", K_VALFN, util_mem),
    G("encoder_util", K_VALFN, enc_util),
    G("decoder_util", K_VALFN, dec_util),
    G("temperature_c", K_VALFN, temp_c),
    G("memory_temperature_c", K_VALFN, mem_temp_c),
    G("temp_shutdown_c", K_UINT, temp_shutdown),
    G("temp_slowdown_c", K_UINT, temp_slowdown),
    G("temp_mem_max_c", K_UINT, temp_mem_max),
    G("temp_gpu_max_c", K_UINT, temp_gpu_max),
    G("power_w", K_VALFN, power_w),
    G("energy_j", K_VALFN, energy_j),
    G("energy_base_j", K_DOUBLE, energy_base_j),
    G("power_average", K_TRI, power_average),
    G("power_limit_w", K_MW, power_limit_mw),
    G("power_enforced_limit_w", K_MW, power_enforced_mw),
    G("power_min_limit_w", K_MW, power_min_mw),
    G("power_max_limit_w", K_MW, power_max_mw),
    G("power_default_limit_w", K_MW, power_default_mw),
    G("clock_graphics_mhz", K_VALFN, clock[0]),
    G("clock_sm_mhz", K_VALFN, clock[1]),
    G("clock_mem_mhz", K_VALFN, clock[2]),
    G("clock_video_mhz", K_VALFN, clock[3]),
    G("max_clock_graphics_mhz", K_UINT, max_clock[0]),
    G("max_clock_sm_mhz", K_UINT, max_clock[1]),
    G("max_clock_mem_mhz", K_UINT, max_clock[2]),
    G("max_clock_video_mhz", K_UINT, max_clock[3]),
    G("pstate", K_VALFN, pstate),
    G("clocks_event_reasons", K_VALFN, event_reasons),
    G("pcie_tx_kbps", K_VALFN, pcie_tx_kbps),
    G("pcie_rx_kbps", K_VALFN, pcie_rx_kbps),
    G("pcie_gen", K_VALFN, pcie_gen),
    G("pcie_width", K_VALFN, pcie_width),
    G("pcie_max_gen", K_UINT, pcie_max_gen),
    G("pcie_max_width", K_UINT, pcie_max_width),
    G("ecc_mode", K_MODE, ecc_mode),
    G("ecc_pending", K_MODE, ecc_pending),
    G("ecc_corrected_volatile", K_VALFN, ecc[0][0]),
    G("ecc_corrected_aggregate", K_VALFN, ecc[0][1]),
    G("ecc_uncorrected_volatile", K_VALFN, ecc[1][0]),
    G("ecc_uncorrected_aggregate", K_VALFN, ecc[1][1]),
    G("fan_pct", K_VALFN, fan_pct),
    G("process_grow", K_BOOL, process_grow),
    G("grow_pid", K_UINT, grow_pid),
    G("grow_used_mib", K_DOUBLE, grow_used_mib),
    G("pcie_replay_count", K_VALFN, pcie_replay),
    G("remapped_rows_correctable", K_VALFN, remap[SIM_REMAP_CORR]),
    G("remapped_rows_uncorrectable", K_VALFN, remap[SIM_REMAP_UNCORR]),
    G("row_remap_pending", K_VALFN, remap[SIM_REMAP_PENDING]),
    G("row_remap_failure", K_VALFN, remap[SIM_REMAP_FAILURE]),
    G("retired_pages_sbe", K_VALFN, retired[SIM_RETIRED_SBE]),
    G("retired_pages_dbe", K_VALFN, retired[SIM_RETIRED_DBE]),
    G("retired_pages_pending", K_VALFN, retired[SIM_RETIRED_PENDING]),
    G("nvlink_links", K_LONG, nvlinks),
    G("nvlink_links_up", K_VALFN, nvlinks_up),
    G("nvlink_replay_errors", K_VALFN, nvlink_err[SIM_NVL_REPLAY]),
    G("nvlink_recovery_errors", K_VALFN, nvlink_err[SIM_NVL_RECOVERY]),
    G("nvlink_crc_flit_errors", K_VALFN, nvlink_err[SIM_NVL_CRC_FLIT]),
    G("nvlink_crc_data_errors", K_VALFN, nvlink_err[SIM_NVL_CRC_DATA]),
    G("nvlink_data_tx_kib", K_VALFN, nvlink_kib[0]),
    G("nvlink_data_rx_kib", K_VALFN, nvlink_kib[1]),
    G("violation_power_s", K_VALFN, violation_s[0]),
    G("violation_thermal_s", K_VALFN, violation_s[1]),
    G("remapped_rows_return", K_RC, rc[SIM_HRC_REMAP]),
    G("retired_pages_return", K_RC, rc[SIM_HRC_RETIRED]),
    G("retired_pages_pending_return", K_RC, rc[SIM_HRC_RETIRED_PENDING]),
    G("pcie_replay_return", K_RC, rc[SIM_HRC_PCIE_REPLAY]),
    G("nvlink_state_return", K_RC, rc[SIM_HRC_NVLINK_STATE]),
    G("nvlink_errors_return", K_RC, rc[SIM_HRC_NVLINK_ERRORS]),
    G("violation_return", K_RC, rc[SIM_HRC_VIOLATION]),
    G("memory_temperature_return", K_RC, rc[SIM_HRC_MEM_TEMP]),
    G("ecc_aggregate_return", K_RC, rc[SIM_HRC_ECC_AGG]),
    G("nvlink_throughput_return", K_RC, rc[SIM_HRC_NVLINK_TP]),
    {NULL, K_STR, 0, 0},
};

#define M(n, t, f) {n, t, offsetof(struct sim_mig, f), sizeof(((struct sim_mig *)0)->f)}
static const struct key mig_keys[] = {
    M("profile", K_STR, profile_name),
    M("uuid", K_STR, uuid),
    M("ci_slices", K_UINT, ci_slices),
    M("memory_reserved_mib", K_ULL, mem_reserved_mib),
    M("memory_used_mib", K_VALFN, mem_used_mib),
    M("from", K_DOUBLE, from),
    M("until", K_DOUBLE, until),
    M("process_grow", K_BOOL, process_grow),
    M("grow_pid", K_UINT, grow_pid),
    M("grow_used_mib", K_DOUBLE, grow_used_mib),
    {NULL, K_STR, 0, 0},
};

#define P(n, t, f) {n, t, offsetof(struct sim_proc, f), sizeof(((struct sim_proc *)0)->f)}
static const struct key proc_keys[] = {
    P("used_mib", K_VALFN, used_mib),
    P("sm_util", K_VALFN, sm_util),
    P("mem_util", K_VALFN, mem_util),
    P("enc_util", K_VALFN, enc_util),
    P("dec_util", K_VALFN, dec_util),
    P("start", K_DOUBLE, start),
    P("end", K_DOUBLE, end),
    {NULL, K_STR, 0, 0},
};

#define F(n, t, f) {n, t, offsetof(struct sim_fault, f), sizeof(((struct sim_fault *)0)->f)}
static const struct key fault_keys[] = {
    F("target", K_STR, target),
    F("function", K_STR, function),
    F("from", K_DOUBLE, from),
    F("until", K_DOUBLE, until),
    F("calls", K_LONG, calls),
    F("after_calls", K_LONG, after_calls),
    F("delay_ms", K_LONG, delay_ms),
    F("hang", K_BOOL, hang),
    {NULL, K_STR, 0, 0},
};

/* Returns 1 if applied, 0 on a bad value (message set), -1 if the key is unknown. */
static int apply_key(struct ctx *c, const struct key *keys, void *obj, const char *section,
                     const char *name, const char *value)
{
    const struct key *k;
    char *p;
    char verr[240];
    for (k = keys; k->name && strcmp(k->name, name) != 0; k++)
        ;
    if (!k->name)
        return -1;
    p = (char *)obj + k->off;
    switch (k->type) {
    case K_STR:
        if (strlen(value) >= k->size)
            return fail(c, "[%s] %s: longer than %zu characters", section, name, k->size - 1);
        memcpy(p, value, strlen(value) + 1);
        return 1;
    case K_UINT:
        if (scenario_parse_uint(value, (unsigned *)(void *)p) == 0)
            return 1;
        break;
    case K_ULL:
        if (scenario_parse_ull(value, (unsigned long long *)(void *)p) == 0)
            return 1;
        break;
    case K_LONG:
        if (scenario_parse_long(value, (long *)(void *)p) == 0)
            return 1;
        break;
    case K_DOUBLE:
        if (scenario_parse_double(value, (double *)(void *)p) == 0)
            return 1;
        break;
    case K_BOOL:
        if (scenario_parse_bool(value, (bool *)(void *)p) == 0)
            return 1;
        break;
    case K_TRI: {
        bool b;
        if (scenario_parse_bool(value, &b) == 0) {
            *(int *)(void *)p = b;
            return 1;
        }
        break;
    }
    case K_MODE:
        if (scenario_parse_mode(value, (int *)(void *)p) == 0)
            return 1;
        break;
    case K_MW: {
        double w;
        if (scenario_parse_double(value, &w) == 0 && w >= 0 && w < 4.0e6) {
            *(unsigned *)(void *)p = (unsigned)llround(w * 1000.0);
            return 1;
        }
        break;
    }
    case K_VALFN:
        if (valfn_parse((struct valfn *)(void *)p, value, verr, sizeof(verr)) == 0)
            return 1;
        return fail(c, "[%s] %s: %s", section, name, verr);
    case K_RC:
        if (sim_error_parse(value, (int *)(void *)p) == 0)
            return 1;
        return fail(c, "[%s] %s: unknown nvmlReturn_t '%s'", section, name, value);
    }
    return fail(c, "[%s] %s: bad value '%s'", section, name, value);
}

/* ---- sections ---- */

/* Parses "N" or "N-M" at *sp; advances past it. */
static int parse_range(const char **sp, int *lo, int *hi, int max)
{
    char *end;
    long a = strtol(*sp, &end, 10), b;
    if (end == *sp || a < 0)
        return -1;
    b = a;
    if (*end == '-') {
        const char *s2 = end + 1;
        b = strtol(s2, &end, 10);
        if (end == s2 || b < a)
            return -1;
    }
    if (b >= max)
        return -1;
    *lo = (int)a;
    *hi = (int)b;
    *sp = end;
    return 0;
}

/* Room for entry i of an array of size-byte entries with *cap of them,
 * the new ones zeroed; false when out of memory. */
static bool room_for(void **arr, int *cap, int i, size_t size)
{
    if (i < *cap)
        return true;
    int n = *cap ? *cap : 8;
    while (n <= i)
        n *= 2;
    char *a = realloc(*arr, (size_t)n * size);
    if (!a)
        return false;
    memset(a + (size_t)*cap * size, 0, (size_t)(n - *cap) * size);
    *arr = a;
    *cap = n;
    return true;
}

/* GPU i, defined with its defaults on first use; NULL when out of memory. */
static struct sim_gpu *gpu_at(struct sim_scenario *s, int i)
{
    if (!room_for((void **)&s->gpus, &s->gpus_cap, i, sizeof(*s->gpus)))
        return NULL;
    struct sim_gpu *g = &s->gpus[i];
    if (!g->defined) {
        g->defined = true;
        g->accessible = true;
        g->power_average = -1;
        g->mig_mode = g->mig_pending = -2; /* not given */
        g->ecc_mode = g->ecc_pending = -2;
        g->nvlinks = -1;
        if (i + 1 > s->n_gpus)
            s->n_gpus = i + 1;
    }
    return g;
}

/* NULL when there are SIM_MAX_MIGS already, or out of memory. */
static struct sim_mig *mig_at(struct ctx *c, int gpu, int slot, const char *tag)
{
    struct sim_scenario *s = c->s;
    struct sim_mig *m;
    for (int i = 0; i < s->n_migs; i++) {
        m = &s->migs[i];
        if (m->gpu == gpu && m->slot == slot && !strcmp(m->tag, tag))
            return m;
    }
    if (s->n_migs == SIM_MAX_MIGS || !gpu_at(s, gpu) ||
        !room_for((void **)&s->migs, &s->migs_cap, s->n_migs, sizeof(*s->migs)))
        return NULL;
    m = &s->migs[s->n_migs++];
    memset(m, 0, sizeof(*m));
    m->gpu = gpu;
    m->slot = slot;
    snprintf(m->tag, sizeof(m->tag), "%s", tag);
    m->gi = m->ci = -1;
    m->from = -HUGE_VAL;
    m->until = HUGE_VAL;
    return m;
}

static void *named_at(struct ctx *c, bool proc, const char *name)
{
    struct sim_scenario *s = c->s;
    int n = proc ? s->n_procs : s->n_faults;
    for (int i = 0; i < n; i++) {
        const char *nm = proc ? s->procs[i].name : s->faults[i].name;
        if (!strcmp(nm, name))
            return proc ? (void *)&s->procs[i] : (void *)&s->faults[i];
    }
    if (proc) {
        if (n == SIM_MAX_PROCS ||
            !room_for((void **)&s->procs, &s->procs_cap, n, sizeof(*s->procs)))
            return NULL;
        struct sim_proc *p = &s->procs[s->n_procs++];
        memset(p, 0, sizeof(*p));
        snprintf(p->name, sizeof(p->name), "%s", name);
        p->gpu = 0;
        p->slot = -1;
        p->types = SIM_PROC_COMPUTE;
        p->start = -HUGE_VAL;
        p->end = HUGE_VAL;
        return p;
    }
    if (n == SIM_MAX_FAULTS)
        return NULL;
    struct sim_fault *f = &s->faults[s->n_faults++];
    memset(f, 0, sizeof(*f));
    snprintf(f->name, sizeof(f->name), "%s", name);
    snprintf(f->target, sizeof(f->target), "*");
    f->code = -1;
    f->from = -HUGE_VAL;
    f->until = HUGE_VAL;
    f->calls = -1;
    return f;
}

static int system_key(struct ctx *c, const char *name, const char *value)
{
    struct sim_system *y = &c->s->sys;
    if (!strcmp(name, "driver_version")) {
        if (strlen(value) >= sizeof(y->driver) || sim_version_parse(value, &y->drv) != 0)
            return fail(c, "[system] driver_version: expected e.g. 535.129.03, got '%s'", value);
        snprintf(y->driver, sizeof(y->driver), "%s", value);
        return 1;
    }
    if (!strcmp(name, "nvml_version")) {
        if (strlen(value) >= sizeof(y->nvml_version))
            return fail(c, "[system] nvml_version: too long");
        snprintf(y->nvml_version, sizeof(y->nvml_version), "%s", value);
        return 1;
    }
    if (!strcmp(name, "cuda_version")) {
        long v;
        if (scenario_parse_long(value, &v) != 0 || v < 1000 || v > 99999)
            return fail(c, "[system] cuda_version: expected e.g. 12020, got '%s'", value);
        y->cuda_version = (int)v;
        return 1;
    }
    if (!strcmp(name, "driver_version_raw"))
        return raw_key(c, "system", name, value, &y->driver_raw);
    if (!strcmp(name, "nvml_version_raw"))
        return raw_key(c, "system", name, value, &y->nvml_raw);
    if (!strcmp(name, "libcuda") || !strcmp(name, "privileged") ||
        !strcmp(name, "gpm_corrupts_session") || !strcmp(name, "hostile")) {
        bool *b = name[0] == 'l'   ? &y->libcuda
                  : name[0] == 'p' ? &y->privileged
                  : name[0] == 'h' ? &y->hostile
                                   : &y->gpm_corrupts_session;
        if (scenario_parse_bool(value, b) != 0)
            return fail(c, "[system] %s: expected true or false, got '%s'", name, value);
        return 1;
    }
    return fail(c, "[system] unknown key '%s'", name);
}

static int gpu_key(struct ctx *c, const char *section, int lo, int hi, const char *name,
                   const char *value)
{
    for (int i = lo; i <= hi; i++) {
        struct sim_gpu *g = gpu_at(c->s, i);
        if (!g)
            return fail(c, "[%s] out of memory", section);
        int k = gpm_key_index(name);
        if (!strcmp(name, "pci_bus_id")) {
            unsigned d, b, dv, fn;
            int used = 0;
            if (lo != hi)
                return fail(c, "[%s] pci_bus_id: give it per GPU, not for a range", section);
            if (sscanf(value, "%x:%x:%x.%x%n", &d, &b, &dv, &fn, &used) != 4 || value[used] ||
                b > 0xff || dv > 0x1f)
                return fail(c, "[%s] pci_bus_id: expected 00000000:17:00.0, got '%s'", section,
                            value);
            g->pci_domain = d;
            g->pci_bus = b;
            g->pci_device = dv;
        } else if (!strcmp(name, "architecture")) {
            if (scenario_parse_arch(value, &g->arch) != 0)
                return fail(c, "[%s] architecture: unknown '%s'", section, value);
        } else if (!strcmp(name, "compute_capability")) {
            int used = 0;
            if (sscanf(value, "%d.%d%n", &g->cc_major, &g->cc_minor, &used) != 2 || value[used])
                return fail(c, "[%s] compute_capability: expected e.g. 9.0", section);
        } else if (k >= 0) {
            if (!gpm_value(c, section, &g->gpm[k], name, value))
                return 0;
        } else if (!strcmp(name, "name_raw") || !strcmp(name, "uuid_raw")) {
            if (name[0] == 'u' && lo != hi)
                return fail(c, "[%s] uuid_raw: give it per GPU, not for a range", section);
            if (!raw_key(c, section, name, value, name[0] == 'n' ? &g->name_raw : &g->uuid_raw))
                return 0;
        } else if (!strcmp(name, "memory_total_raw_bytes") ||
                   !strcmp(name, "memory_used_raw_bytes") ||
                   !strcmp(name, "memory_free_raw_bytes")) {
            char w = name[7]; /* t, u or f */
            unsigned long long *v = w == 't' ? &g->mem_total_raw
                                    : w == 'u' ? &g->mem_used_raw
                                               : &g->mem_free_raw;
            needs_hostile(c, section, name);
            if (scenario_parse_ull(value, v) != 0)
                return fail(c, "[%s] %s: expected bytes (0 to 18446744073709551615), got '%s'",
                            section, name, value);
            *(w == 't' ? &g->mem_total_raw_set
              : w == 'u' ? &g->mem_used_raw_set
                         : &g->mem_free_raw_set) = true;
        } else if (!strcmp(name, "procs_insufficient_storm")) {
            needs_hostile(c, section, name);
            if (scenario_parse_bool(value, &g->procs_storm) != 0)
                return fail(c, "[%s] %s: expected true or false, got '%s'", section, name,
                            value);
        } else if (!strcmp(name, "mig_profiles")) {
            g->profiles = profiles_find_set(value);
            if (!g->profiles)
                return fail(c, "[%s] mig_profiles: unknown '%s' (known: %s)", section, value,
                            profiles_set_names());
        } else {
            if (!strcmp(name, "uuid") && lo != hi)
                return fail(c, "[%s] uuid: give it per GPU, not for a range", section);
            int r = apply_key(c, gpu_keys, g, section, name, value);
            if (r < 0)
                return fail(c, "[%s] unknown key '%s'", section, name);
            if (r == 0)
                return 0;
        }
    }
    return 1;
}

/* gi / ci: "7" or, in a slot range, "7+" = 7 for the first slot, +1 per slot. */
static int mig_id_key(struct ctx *c, const char *section, struct sim_mig *m, int offset,
                      const char *name, const char *value)
{
    char buf[32];
    size_t n = strlen(value);
    unsigned v;
    bool inc = n > 0 && value[n - 1] == '+';
    if (n >= sizeof(buf))
        return fail(c, "[%s] %s: bad value '%s'", section, name, value);
    memcpy(buf, value, n + 1);
    if (inc)
        buf[n - 1] = '\0';
    if (scenario_parse_uint(buf, &v) != 0)
        return fail(c, "[%s] %s: expected an id, or N+ in a slot range, got '%s'", section, name,
                    value);
    *(name[0] == 'g' ? &m->gi : &m->ci) = (long)v + (inc ? offset : 0);
    return 1;
}

static int mig_key(struct ctx *c, const char *section, int glo, int ghi, int slo, int shi,
                   const char *tag, const char *name, const char *value)
{
    for (int g = glo; g <= ghi; g++) {
        for (int sl = slo; sl <= shi; sl++) {
            struct sim_mig *m = mig_at(c, g, sl, tag);
            if (!m && c->s->n_migs == SIM_MAX_MIGS)
                return fail(c, "[%s] more than %d MIG device definitions", section,
                            SIM_MAX_MIGS);
            if (!m)
                return fail(c, "[%s] out of memory", section);
            if (!strcmp(name, "gi") || !strcmp(name, "ci")) {
                if (!mig_id_key(c, section, m, sl - slo, name, value))
                    return 0;
                continue;
            }
            int k = gpm_key_index(name);
            if (k >= SIM_GPM_N_UTIL)
                return fail(c, "[%s] %s: a GPU-wide rate; give it in [gpu.%d]", section, name, g);
            if (k >= 0) {
                if (!gpm_value(c, section, &m->gpm[k], name, value))
                    return 0;
                continue;
            }
            if (!strcmp(name, "uuid") && (glo != ghi || slo != shi))
                return fail(c, "[%s] uuid: give it per MIG device, not for a range", section);
            int r = apply_key(c, mig_keys, m, section, name, value);
            if (r < 0)
                return fail(c, "[%s] unknown key '%s'", section, name);
            if (r == 0)
                return 0;
        }
    }
    return 1;
}

static int proc_key(struct ctx *c, const char *section, struct sim_proc *p, const char *name,
                    const char *value)
{
    if (!strcmp(name, "gpu") || !strcmp(name, "mig")) {
        long v;
        if (scenario_parse_long(value, &v) != 0 || v < 0 || v >= (name[0] == 'g' ? SIM_MAX_GPUS
                                                                          : SIM_MAX_MIG_SLOTS))
            return fail(c, "[%s] %s: bad index '%s'", section, name, value);
        *(name[0] == 'g' ? &p->gpu : &p->slot) = (int)v;
        return 1;
    }
    if (!strcmp(name, "pid")) {
        if (scenario_parse_uint(value, &p->pid) != 0)
            return fail(c, "[%s] pid: bad value '%s'", section, value);
        p->pid_given = true;
        if (p->pid == 0)
            needs_hostile(c, section, "pid = 0");
        return 1;
    }
    if (!strcmp(name, "used_raw_bytes")) {
        needs_hostile(c, section, name);
        if (scenario_parse_ull(value, &p->used_raw) != 0)
            return fail(c, "[%s] %s: expected bytes (0 to 18446744073709551615), got '%s'",
                        section, name, value);
        p->used_raw_set = true;
        return 1;
    }
    if (!strcmp(name, "type")) {
        unsigned t = 0;
        char buf[64], *tok, *save = NULL;
        snprintf(buf, sizeof(buf), "%s", value);
        for (tok = strtok_r(buf, "+, ", &save); tok; tok = strtok_r(NULL, "+, ", &save)) {
            if (!strcasecmp(tok, "compute") || !strcasecmp(tok, "C"))
                t |= SIM_PROC_COMPUTE;
            else if (!strcasecmp(tok, "graphics") || !strcasecmp(tok, "G"))
                t |= SIM_PROC_GRAPHICS;
            else if (!strcasecmp(tok, "mps"))
                t |= SIM_PROC_MPS;
            else
                return fail(c, "[%s] type: expected compute, graphics, mps or a + of them",
                            section);
        }
        if (!t)
            return fail(c, "[%s] type: empty", section);
        p->types = t;
        return 1;
    }
    int r = apply_key(c, proc_keys, p, section, name, value);
    return r < 0 ? fail(c, "[%s] unknown key '%s'", section, name) : r;
}

static int fault_key(struct ctx *c, const char *section, struct sim_fault *f, const char *name,
                     const char *value)
{
    if (!strcmp(name, "return")) {
        if (sim_error_parse(value, &f->code) != 0)
            return fail(c, "[%s] return: unknown nvmlReturn_t '%s'", section, value);
        return 1;
    }
    int r = apply_key(c, fault_keys, f, section, name, value);
    return r < 0 ? fail(c, "[%s] unknown key '%s'", section, name) : r;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    struct ctx *c = user;
    const char *p;
    int lo, hi;

    if (!strcmp(section, "system"))
        return system_key(c, name, value);
    if (!strcmp(section, "dcgm")) {
        char derr[240];
        if (scenario_dcgm_key(&c->s->dcgm, name, value, derr, sizeof(derr)) != 0)
            return fail(c, "%s", derr);
        return 1;
    }
    if (!strcmp(section, "events") || !strncmp(section, "event.", 6)) {
        char eerr[240];
        if (scenario_events_key(c->s, section, name, value, eerr, sizeof(eerr)) != 0)
            return fail(c, "%s", eerr);
        return 1;
    }
    if (!strncmp(section, "process.", 8) || !strncmp(section, "fault.", 6)) {
        bool proc = section[0] == 'p';
        const char *nm = section + (proc ? 8 : 6);
        void *obj;
        if (!*nm || strlen(nm) >= 32)
            return fail(c, "[%s] the name after the dot must be 1-31 characters", section);
        obj = named_at(c, proc, nm);
        if (!obj && (proc ? c->s->n_procs == SIM_MAX_PROCS : c->s->n_faults == SIM_MAX_FAULTS))
            return fail(c, "[%s] too many %s sections (at most %d)", section,
                        proc ? "process" : "fault", proc ? SIM_MAX_PROCS : SIM_MAX_FAULTS);
        if (!obj)
            return fail(c, "[%s] out of memory", section);
        return proc ? proc_key(c, section, obj, name, value)
                    : fault_key(c, section, obj, name, value);
    }
    if (!strncmp(section, "gpu.", 4)) {
        p = section + 4;
        if (parse_range(&p, &lo, &hi, SIM_MAX_GPUS) != 0)
            return fail(c, "[%s] expected gpu.N or gpu.N-M with N < %d", section, SIM_MAX_GPUS);
        if (*p == '\0')
            return gpu_key(c, section, lo, hi, name, value);
        if (!strncmp(p, ".mig.", 5)) {
            int slo, shi;
            const char *tag = "";
            p += 5;
            if (parse_range(&p, &slo, &shi, SIM_MAX_MIG_SLOTS) != 0)
                return fail(c, "[%s] expected mig.S or mig.S-T with S < %d", section,
                            SIM_MAX_MIG_SLOTS);
            if (*p == '/' && p[1] && strlen(p + 1) < 24)
                tag = p + 1;
            else if (*p)
                return fail(c, "[%s] expected an optional /tag after the slot", section);
            return mig_key(c, section, lo, hi, slo, shi, tag, name, value);
        }
    }
    return fail(c, "[%s] unknown section (expected system, gpu.N, gpu.N.mig.S, process.NAME, "
                   "fault.NAME or dcgm)",
                section);
}

/* fgets for inih that counts lines (inih passes handlers no line numbers)
 * and rejects lines longer than inih's 200-byte buffer instead of letting
 * their tail parse as a line of its own. */
static char *read_line(char *str, int num, void *stream)
{
    struct ctx *c = stream;
    char *s = fgets(str, num, c->file);
    if (!s)
        return NULL;
    if (c->line_start)
        c->line++;
    c->line_start = strchr(s, '\n') != NULL;
    if (!c->line_start && !feof(c->file)) {
        int ch;
        fail(c, "line longer than %d characters", num - 2);
        while ((ch = fgetc(c->file)) != EOF && ch != '\n')
            ;
        c->line_start = true;
    }
    return s;
}

struct sim_scenario *scenario_load(const char *path, const char *driver_override, char *err,
                                   size_t errlen)
{
    struct ctx c = {0};
    int rc;

    c.s = calloc(1, sizeof(*c.s));
    if (!c.s) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    snprintf(c.s->path, sizeof(c.s->path), "%s", path);
    c.s->sys.libcuda = true;
    c.file = fopen(path, "r");
    if (!c.file) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        goto fail;
    }
    c.line_start = true;
    rc = ini_parse_stream(read_line, &c, handler, &c);
    fclose(c.file);
    /* Report whichever came first: inih's syntax error or ours. */
    if (rc > 0 && (!c.failed || rc < c.err_line)) {
        snprintf(err, errlen, "%s:%d: syntax error (expected [section] or key = value)", path,
                 rc);
        goto fail;
    }
    if (rc < 0 && !c.failed) {
        snprintf(err, errlen, "%s: cannot parse (inih error %d)", path, rc);
        goto fail;
    }
    if (rc != 0 || c.failed) {
        snprintf(err, errlen, "%s:%d: %s", path, c.err_line, c.err);
        goto fail;
    }
    if (c.hostile_line && !c.s->sys.hostile) {
        snprintf(err, errlen, "%s:%d: %s: only in a hostile scenario ([system] hostile = true)",
                 path, c.hostile_line, c.hostile_what);
        goto fail;
    }
    if (scenario_finish(c.s, driver_override, c.err, sizeof(c.err)) != 0 ||
        scenario_events_finish(c.s, c.err, sizeof(c.err)) != 0) {
        snprintf(err, errlen, "%s: %s", path, c.err);
        goto fail;
    }
    return c.s;
fail:
    scenario_free(c.s);
    return NULL;
}

void scenario_free(struct sim_scenario *s)
{
    if (!s)
        return;
    free(s->gpus);
    free(s->migs);
    free(s->procs);
    free(s->events.ev);
    free(s);
}
