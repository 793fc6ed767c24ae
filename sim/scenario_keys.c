/*
 * scenario_keys.c — the key tables of a scenario's [gpu.N], [gpu.R.mig.S],
 * [process.NAME] and [fault.NAME] sections, and one key applied from them
 * to its struct (scenario_keys.h); docs/simulator.md lists the keys with
 * their meaning and defaults.
 */
#include "scenario_keys.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "errors.h"
#include "scenario.h"
#include "scenario_values.h"

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

int scenario_gpm_key_index(const char *name)
{
    for (int k = 0; k < SIM_GPM_N; k++)
        if (!strcmp(sim_gpm_keys[k], name))
            return k;
    return -1;
}

/* A bad value's message, in the caller's buffer; 0 as scenario_keys_apply
 * returns it. */
static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return 0;
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
    G("xid_events", K_BOOL, xid_events),
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
    G("remapped_rows_correctable_inactive", K_VALFN, remap_inactive[0]),
    G("remapped_rows_uncorrectable_inactive", K_VALFN, remap_inactive[1]),
    G("unrepairable_memory", K_VALFN, unrepairable),
    G("bank_remaps_active", K_VALFN, bank[SIM_BANK_ACTIVE]),
    G("bank_remaps_inactive", K_VALFN, bank[SIM_BANK_INACTIVE]),
    G("bank_remap_pending", K_VALFN, bank[SIM_BANK_PENDING]),
    G("bank_remap_max_spare_groups", K_VALFN, bank[SIM_BANK_MAX_SPARE]),
    G("bank_remap_no_spare_groups", K_VALFN, bank[SIM_BANK_NO_SPARE]),
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
    G("unrepairable_memory_return", K_RC, rc[SIM_HRC_UNREPAIRABLE]),
    G("bank_remapper_return", K_RC, rc[SIM_HRC_BANK_REMAPPER]),
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

int scenario_keys_apply(enum scenario_table table, void *obj, const char *section,
                        const char *name, const char *value, char *err, size_t errlen)
{
    static const struct key *const tables[] = {
        [SCENARIO_KEYS_GPU] = gpu_keys,
        [SCENARIO_KEYS_MIG] = mig_keys,
        [SCENARIO_KEYS_PROC] = proc_keys,
        [SCENARIO_KEYS_FAULT] = fault_keys,
    };
    const struct key *keys = tables[table];
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
            return fail(err, errlen, "[%s] %s: longer than %zu characters", section, name,
                        k->size - 1);
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
        return fail(err, errlen, "[%s] %s: %s", section, name, verr);
    case K_RC:
        if (sim_error_parse(value, (int *)(void *)p) == 0)
            return 1;
        return fail(err, errlen, "[%s] %s: unknown nvmlReturn_t '%s'", section, name, value);
    }
    return fail(err, errlen, "[%s] %s: bad value '%s'", section, name, value);
}
