/*
 * nvml_read.c — what one device's NVML calls answer: a GPU's static facts
 * and per-tick values, a MIG device's static facts and values (the GPU-wide
 * ones taken from its parent, utilisation by mig_util.c's tiers). The walk
 * over a GPU and its MIG slots is nvml.c's; this file only reads.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/nvml/mig_util.h"
#include "backend/nvml/nvml_compat.h"
#include "backend/nvml/nvml_health.h"
#include "backend/nvml/nvml_load.h"
#include "backend/nvml/nvml_procs_util.h"
#include "backend/nvml/nvml_read.h"
#include "backend/nvml/nvml_state.h"
#include "core/debuglog.h"
#include "core/text.h"

static const char *const NO_SYMBOL = NVML_NO_SYMBOL;

static const char *arch_name(unsigned int a)
{
    switch (a) {
    case NVML_DEVICE_ARCH_KEPLER: return "Kepler";
    case NVML_DEVICE_ARCH_MAXWELL: return "Maxwell";
    case NVML_DEVICE_ARCH_PASCAL: return "Pascal";
    case NVML_DEVICE_ARCH_VOLTA: return "Volta";
    case NVML_DEVICE_ARCH_TURING: return "Turing";
    case NVML_DEVICE_ARCH_AMPERE: return "Ampere";
    case NVML_DEVICE_ARCH_ADA: return "Ada";
    case NVML_DEVICE_ARCH_HOPPER: return "Hopper";
    case NVML_DEVICE_ARCH_BLACKWELL: return "Blackwell";
    case NVML_DEVICE_ARCH_RUBIN: return "Rubin";
    default: return "";
    }
}

/* ---------------------------------------------------------------- helpers */

static struct metric read_uint(struct nvml_state *st, const char *sym, nvml_fn_dev_uint fn,
                               nvmlDevice_t h, double scale)
{
    if (!fn)
        return metric_none(NO_SYMBOL);
    unsigned int v = 0;
    if (CALL(st, sym, fn(h, &v)) != NVML_SUCCESS)
        return metric_none(nvml_rc_reason(st->rc));
    return metric_direct((double)v * scale);
}

static struct metric read_clock(struct nvml_state *st, nvmlDevice_t h, nvmlClockType_t type)
{
    if (!st->lib.f.clock_info)
        return metric_none(NO_SYMBOL);
    unsigned int v = 0;
    if (CALL(st, "nvmlDeviceGetClockInfo", st->lib.f.clock_info(h, type, &v)) != NVML_SUCCESS)
        return metric_none(nvml_rc_reason(st->rc));
    return metric_direct(v);
}

/* Memory: _v2 with NVIDIA's struct version (0x02000028), else v1. _v2's
 * `used` excludes the driver-reserved part, as nvidia-smi shows it since 510;
 * v1's `used` includes it, and only _v2 gives `reserved` (a MIG handle's is
 * its instance's own). */
static void read_memory(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h,
                        struct device *d)
{
    const struct nvml_fns *f = &st->lib.f;
    nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
    if (d->mig_enabled && st->tick < c->mem_denied_until) {
        rc = NVML_ERROR_NO_PERMISSION; /* asked recently; privilege rarely changes */
        goto fail;
    }
    if (f->memory_v2 && !st->mem_v2_broken && !memo_known(c, MC_MEM_V2)) {
        nvmlMemory_v2_t m2;
        memset(&m2, 0, sizeof(m2));
        m2.version = nvmlMemory_v2;
        rc = CALL(st, "nvmlDeviceGetMemoryInfo_v2", f->memory_v2(h, &m2));
        if (rc == NVML_SUCCESS) {
            d->m[M_MEM_USED] = metric_direct((double)m2.used);
            d->m[M_MEM_TOTAL] = metric_direct((double)m2.total);
            d->m[M_MEM_RESERVED] = metric_direct((double)m2.reserved);
            return;
        }
        if (rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH)
            st->mem_v2_broken = true;
        else
            memo_note(c, MC_MEM_V2, rc);
        if (rc == NVML_ERROR_NO_PERMISSION || rc == NVML_ERROR_GPU_IS_LOST)
            goto fail; /* v1 will say the same; don't ask twice */
    }
    if (f->memory_v1) {
        nvmlMemory_t m1;
        rc = CALL(st, "nvmlDeviceGetMemoryInfo", f->memory_v1(h, &m1));
        if (rc == NVML_SUCCESS) {
            d->m[M_MEM_USED] = metric_direct((double)m1.used);
            d->m[M_MEM_TOTAL] = metric_direct((double)m1.total);
            d->m[M_MEM_RESERVED] = metric_none("reserved memory needs nvmlDeviceGetMemoryInfo_v2 "
                                               "(this read used v1)");
            return;
        }
    }
fail:
    if (rc == NVML_ERROR_NO_PERMISSION && d->mig_enabled && st->tick >= c->mem_denied_until)
        c->mem_denied_until = st->tick + st->slow_every;
    if (rc == NVML_ERROR_NO_PERMISSION && d->mig_enabled)
        d->m[M_MEM_USED] = metric_none("aggregate memory of a MIG-enabled GPU needs privilege "
                                       "(NVML_ERROR_NO_PERMISSION); see the MIG devices");
    else
        d->m[M_MEM_USED] = metric_none(f->memory_v1 || f->memory_v2 ? nvml_rc_reason(rc)
                                                                    : NO_SYMBOL);
    d->m[M_MEM_TOTAL] = d->m[M_MEM_RESERVED] = d->m[M_MEM_USED];
}

/* ------------------------------------------------------------ GPU metrics */

/* A failed read of a static fact worth asking again: anything but "this
 * device or library will never answer". */
static bool transient(nvmlReturn_t rc)
{
    return rc != NVML_SUCCESS && rc != NVML_ERROR_NOT_SUPPORTED &&
           rc != NVML_ERROR_FUNCTION_NOT_FOUND;
}

/* After a read of static facts: when one failed for a passing reason, all
 * are read again after a gap of the slow cadence, doubling to 12 times it;
 * otherwise never. */
static void static_backoff(struct nvml_state *st, struct dev_cache *c, bool again)
{
    if (again) {
        unsigned long gap = c->static_gap ? c->static_gap * 2 : st->slow_every;
        if (gap > 12ul * st->slow_every)
            gap = 12ul * st->slow_every;
        c->static_gap = gap;
        c->static_retry = st->tick + gap;
    } else {
        c->static_retry = 0;
    }
}

/* A device's static facts are due: never read, or a retry's tick reached. */
bool nvml_static_due(const struct nvml_state *st, const struct dev_cache *c)
{
    return !c->have_static || (c->static_retry && st->tick >= c->static_retry);
}

/* The device's name into c; true when the read failed for a passing reason. */
static bool read_name(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h)
{
    const struct nvml_fns *f = &st->lib.f;
    char name[MIGMON_NAME_LEN];
    if (f->name && CALL(st, "nvmlDeviceGetName", f->name(h, name, sizeof(name))) == 0) {
        text_clean(name, sizeof(name)); /* bounded, terminated, no controls */
        snprintf(c->name, sizeof(c->name), "%s", name);
        return false;
    }
    return f->name && transient(st->rc);
}

/* Static facts: read once, but a read that failed for a passing reason is
 * retried with backoff (static_backoff), so one UNKNOWN at start does not
 * leave a name or threshold N/A for the run. */
void nvml_read_gpu_static(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h)
{
    const struct nvml_fns *f = &st->lib.f;
    bool again = false;
    again |= read_name(st, c, h);
    /* NVML_DEVICE_SERIAL_BUFFER_SIZE is 30; GeForce boards have none
     * (NOT_SUPPORTED, not asked again) */
    char serial[32];
    if (f->serial &&
        CALL(st, "nvmlDeviceGetSerial", f->serial(h, serial, sizeof(serial))) == NVML_SUCCESS) {
        text_clean(serial, sizeof(serial));
        snprintf(c->serial, sizeof(c->serial), "%s", serial);
    } else {
        again |= f->serial && transient(st->rc);
    }
    nvmlPciInfo_t pci;
    if (f->pci_info && CALL(st, "nvmlDeviceGetPciInfo", f->pci_info(h, &pci)) == NVML_SUCCESS) {
        text_clean(pci.busId, sizeof(pci.busId));
        snprintf(c->pci, sizeof(c->pci), "%s", pci.busId);
    } else {
        again |= f->pci_info && transient(st->rc);
    }
    unsigned int a = 0;
    if (f->arch && CALL(st, "nvmlDeviceGetArchitecture", f->arch(h, &a)) == NVML_SUCCESS) {
        snprintf(c->arch, sizeof(c->arch), "%s", arch_name(a));
        c->arch_id = a;
    } else
        again |= f->arch && transient(st->rc);
    int ma = 0, mi = 0;
    if (f->cuda_cc &&
        CALL(st, "nvmlDeviceGetCudaComputeCapability", f->cuda_cc(h, &ma, &mi)) == 0) {
        /* Every CUDA capability so far is one digit after the point (1.0 to
         * 12.1); major 1-99, minor 0-9 is the simulator's plausible range
         * too. Anything else is a driver answering garbage: treated as a
         * failed read (unknown, or what an earlier read gave) and asked
         * again like a passing failure. */
        if (ma >= 1 && ma <= 99 && mi >= 0 && mi <= 9) {
            c->cc_major = ma;
            c->cc_minor = mi;
        } else {
            debuglog_printf("nvmlDeviceGetCudaComputeCapability dev=%s: driver returned %d.%d, "
                            "taken as unknown", st->label, ma, mi);
            again = true;
        }
    } else {
        again |= f->cuda_cc && transient(st->rc);
    }
    /* Each threshold is its own call, and each failure its own reason to
     * ask again: an UNKNOWN slowdown read is retried even when the
     * shutdown read after it works. A success is kept over a later
     * failure. */
    static const nvmlTemperatureThresholds_t thr[2] = {NVML_TEMPERATURE_THRESHOLD_SLOWDOWN,
                                                       NVML_TEMPERATURE_THRESHOLD_SHUTDOWN};
    struct metric *thm[2] = {&c->temp_slowdown, &c->temp_shutdown};
    for (int k = 0; k < 2; k++) {
        unsigned int t = 0;
        if (!f->temp_threshold)
            *thm[k] = metric_none(NO_SYMBOL);
        else if (CALL(st, "nvmlDeviceGetTemperatureThreshold", f->temp_threshold(h, thr[k], &t)) ==
                 NVML_SUCCESS)
            *thm[k] = metric_direct(t);
        else if (!c->have_static || !metric_ok(thm[k]))
            *thm[k] = metric_none(nvml_rc_reason(st->rc));
        again |= f->temp_threshold && transient(st->rc);
    }
    c->have_static = true;
    static_backoff(st, c, again);
}

/* The GPU's slice total from its GPU-instance profiles (the largest
 * sliceCount, 7 on A100/H100/H200) — not GetMaxMigDeviceCount, which counts
 * devices (seed-errata). */
int nvml_read_slices_total(struct nvml_state *st, nvmlDevice_t h)
{
    if (!st->lib.f.gi_profile_info)
        return -1;
    int best = -1;
    for (unsigned int p = 0; p < NVML_GPU_INSTANCE_PROFILE_COUNT; p++) {
        nvmlGpuInstanceProfileInfo_t info;
        memset(&info, 0, sizeof(info));
        nvmlReturn_t rc = CALL(st, "nvmlDeviceGetGpuInstanceProfileInfo",
                               st->lib.f.gi_profile_info(h, p, &info));
        if (rc == NVML_ERROR_INVALID_ARGUMENT)
            break; /* past the last profile index this driver knows */
        if (rc == NVML_SUCCESS && (int)info.sliceCount > best)
            best = (int)info.sliceCount;
    }
    return best;
}

void nvml_read_gpu_dynamic(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h,
                             struct device *d)
{
    const struct nvml_fns *f = &st->lib.f;
    read_memory(st, c, h, d);

    /* Utilisation: documented as unsupported on MIG-enabled GPUs; ask once. */
    if (!f->utilization)
        d->m[M_GPU_UTIL] = metric_none(NO_SYMBOL);
    else if (memo_known(c, MC_UTIL))
        d->m[M_GPU_UTIL] = memo_none(c, MC_UTIL);
    else {
        nvmlUtilization_t u;
        if (CALL(st, "nvmlDeviceGetUtilizationRates", f->utilization(h, &u)) == NVML_SUCCESS) {
            d->m[M_GPU_UTIL] = metric_direct(u.gpu);
            d->m[M_MEM_UTIL] = metric_direct(u.memory);
        } else {
            memo_note(c, MC_UTIL, st->rc);
            if (d->mig_enabled && st->rc == NVML_ERROR_NOT_SUPPORTED)
                c->memo_why[MC_UTIL] = "NVML does not report utilisation while MIG mode is "
                                       "enabled (NVML_ERROR_NOT_SUPPORTED)";
            d->m[M_GPU_UTIL] = metric_none(memo_known(c, MC_UTIL) ? c->memo_why[MC_UTIL]
                                                                   : nvml_rc_reason(st->rc));
        }
    }
    if (!metric_ok(&d->m[M_GPU_UTIL]))
        d->m[M_MEM_UTIL] = d->m[M_GPU_UTIL];

    /* SM utilisation of a full GPU: aggregated per-process samples. */
    d->m[M_SM_UTIL] = metric_none("needs per-process samples or GPM");
    if (!d->mig_enabled && f->process_util && !memo_known(c, MC_PROC_UTIL)) {
        double sm, mem;
        nvmlReturn_t rc = nvml_process_util(st, c, h, false, &sm, &mem);
        /* The driver samples processes at its own cadence (up to 1 s): a
         * tick without a new sample is not an idle GPU. The last sum is
         * carried for about 2 s (at least 3 ticks), then none; never 0. */
        unsigned long carry = st->slow_every * 2 / 5 > 3 ? st->slow_every * 2 / 5 : 3;
        if (rc == NVML_SUCCESS) {
            d->m[M_SM_UTIL] = (struct metric){.value = sm, .src = MSRC_PROCESS};
            c->sm_last = d->m[M_SM_UTIL];
            c->sm_last_tick = st->tick;
        } else if (rc == NVML_ERROR_NOT_FOUND && metric_ok(&c->sm_last) &&
                   st->tick - c->sm_last_tick <= carry) {
            d->m[M_SM_UTIL] = c->sm_last;
            d->m[M_SM_UTIL].src = MSRC_CARRIED;
        } else if (rc == NVML_ERROR_NOT_FOUND) {
            d->m[M_SM_UTIL] = metric_none("no new per-process sample from the driver");
        } else if (!memo_note(c, MC_PROC_UTIL, rc)) {
            d->m[M_SM_UTIL] = metric_none(nvml_rc_reason(rc));
        }
    }
    if (memo_known(c, MC_PROC_UTIL))
        d->m[M_SM_UTIL] = memo_none(c, MC_PROC_UTIL);

    unsigned int v = 0;
    /* nvmlDeviceGetTemperatureV, else the deprecated call (nvml_compat.c) */
    d->m[M_TEMP] = nvml_compat_temperature(st, c, h);
    d->m[M_TEMP_SLOWDOWN] = c->temp_slowdown;
    d->m[M_TEMP_SHUTDOWN] = c->temp_shutdown;

    d->m[M_POWER] = read_uint(st, "nvmlDeviceGetPowerUsage", f->power_usage, h, 1e-3);
    /* Settings that change only by an administrator's action (power limit,
     * ECC mode) are re-read at the slow cadence, not every tick. */
    bool settings = !c->settings_tick || st->tick - c->settings_tick >= st->slow_every;
    if (settings) {
        c->settings_tick = st->tick ? st->tick : 1;
        c->power_limit =
            read_uint(st, "nvmlDeviceGetEnforcedPowerLimit", f->power_limit_enforced, h, 1e-3);
        if (!metric_ok(&c->power_limit))
            c->power_limit =
                read_uint(st, "nvmlDeviceGetPowerManagementLimit", f->power_limit_mgmt, h, 1e-3);
    }
    d->m[M_POWER_LIMIT] = c->power_limit;

    /* The health counters of rare events: at the same slow cadence. */
    nvml_health_read(st, c, h, settings, d);

    unsigned long long ull = 0;
    /* Energy, the volatile and aggregate ECC counts, memory temperature and
     * NVLink traffic in one nvmlDeviceGetFieldValues call (nvml_health.c;
     * fields 83, 3-6, 82, 138-139: the same counters as the individual
     * calls); an energy or ECC entry the driver does not answer falls back
     * to its own call. */
    struct nvml_fields fv;
    bool ecc_on = !memo_known(c, MC_ECC) && metric_ok(&c->ecc_mode) && c->ecc_mode.value == 1;
    nvml_fields_read(st, c, h, ecc_on, &fv);
    nvml_health_fields_apply(&fv, d);
    if (!fv.why[NF_ENERGY])
        d->m[M_ENERGY] = metric_direct(fv.v[NF_ENERGY] / 1000.0); /* mJ -> J */
    else if (fv.rc[NF_ENERGY] == NVML_ERROR_NOT_SUPPORTED)
        d->m[M_ENERGY] = metric_none(nvml_rc_reason(NVML_ERROR_NOT_SUPPORTED));
    else if (!f->energy)
        d->m[M_ENERGY] = metric_none(NO_SYMBOL);
    else if (memo_known(c, MC_ENERGY))
        d->m[M_ENERGY] = memo_none(c, MC_ENERGY);
    else if (CALL(st, "nvmlDeviceGetTotalEnergyConsumption", f->energy(h, &ull)) == 0)
        d->m[M_ENERGY] = metric_direct((double)ull / 1000.0); /* mJ -> J */
    else {
        memo_note(c, MC_ENERGY, st->rc);
        d->m[M_ENERGY] = metric_none(nvml_rc_reason(st->rc));
    }

    d->m[M_CLK_GFX] = read_clock(st, h, NVML_CLOCK_GRAPHICS);
    d->m[M_CLK_SM] = read_clock(st, h, NVML_CLOCK_SM);
    d->m[M_CLK_MEM] = read_clock(st, h, NVML_CLOCK_MEM);

    nvmlPstates_t ps = NVML_PSTATE_UNKNOWN;
    if (!f->pstate)
        d->m[M_PSTATE] = metric_none(NO_SYMBOL);
    else if (CALL(st, "nvmlDeviceGetPerformanceState", f->pstate(h, &ps)) != NVML_SUCCESS)
        d->m[M_PSTATE] = metric_none(nvml_rc_reason(st->rc));
    else if (ps < 0 || ps > 15)
        d->m[M_PSTATE] = metric_none("P-state unknown");
    else
        d->m[M_PSTATE] = metric_direct(ps);

    /* The link retrains rarely (power states): read at the slow cadence. */
    if (settings) {
        c->pcie_gen = read_uint(st, "nvmlDeviceGetCurrPcieLinkGeneration", f->pcie_gen, h, 1);
        c->pcie_width = read_uint(st, "nvmlDeviceGetCurrPcieLinkWidth", f->pcie_width, h, 1);
    }
    d->m[M_PCIE_GEN] = c->pcie_gen;
    d->m[M_PCIE_WIDTH] = c->pcie_width;
    if (!f->pcie_throughput) {
        d->m[M_PCIE_TX] = d->m[M_PCIE_RX] = metric_none(NO_SYMBOL);
    } else if (memo_known(c, MC_PCIE_TP)) {
        d->m[M_PCIE_TX] = d->m[M_PCIE_RX] = memo_none(c, MC_PCIE_TP);
    } else {
        /* NVML reports KB/s over a 20 ms window; KB taken as 1024 bytes
         * (docs/decisions.md). */
        static const nvmlPcieUtilCounter_t ctr[2] = {NVML_PCIE_UTIL_TX_BYTES,
                                                     NVML_PCIE_UTIL_RX_BYTES};
        static const enum metric_id id[2] = {M_PCIE_TX, M_PCIE_RX};
        for (int k = 0; k < 2; k++) {
            if (CALL(st, "nvmlDeviceGetPcieThroughput", f->pcie_throughput(h, ctr[k], &v)) == 0)
                d->m[id[k]] = metric_direct((double)v * 1024.0);
            else {
                memo_note(c, MC_PCIE_TP, st->rc);
                d->m[id[k]] = metric_none(nvml_rc_reason(st->rc));
            }
        }
    }

    /* Encoder/decoder: not supported on MIG-enabled GPUs (header note). */
    unsigned int period = 0;
    static const enum memo_call codec_mc[2] = {MC_ENC, MC_DEC};
    static const enum metric_id codec_id[2] = {M_ENC_UTIL, M_DEC_UTIL};
    nvml_fn_dev_codec codec_fn[2] = {f->encoder_util, f->decoder_util};
    static const char *const codec_sym[2] = {"nvmlDeviceGetEncoderUtilization",
                                             "nvmlDeviceGetDecoderUtilization"};
    for (int k = 0; k < 2; k++) {
        if (!codec_fn[k])
            d->m[codec_id[k]] = metric_none(NO_SYMBOL);
        else if (memo_known(c, codec_mc[k]))
            d->m[codec_id[k]] = memo_none(c, codec_mc[k]);
        else if (CALL(st, codec_sym[k], codec_fn[k](h, &v, &period)) == NVML_SUCCESS)
            d->m[codec_id[k]] = metric_direct(v);
        else {
            memo_note(c, codec_mc[k], st->rc);
            d->m[codec_id[k]] = metric_none(nvml_rc_reason(st->rc));
        }
    }

    /* ECC: mode, then the volatile (since driver load) and aggregate (the
     * GPU's life) counts when enabled. */
    static const enum metric_id eid[4] = {M_ECC_CORR, M_ECC_UNCORR, M_ECC_CORR_AGG,
                                          M_ECC_UNCORR_AGG};
    for (int k = 0; k < 4; k++)
        d->m[eid[k]] = metric_none(NO_SYMBOL);
    d->m[M_ECC_MODE] = metric_none(NO_SYMBOL);
    if (f->ecc_mode && memo_known(c, MC_ECC)) {
        d->m[M_ECC_MODE] = memo_none(c, MC_ECC);
        for (int k = 0; k < 4; k++)
            d->m[eid[k]] = d->m[M_ECC_MODE];
    } else if (f->ecc_mode) {
        nvmlEnableState_t cur = 0, pend = 0;
        if (settings) {
            if (CALL(st, "nvmlDeviceGetEccMode", f->ecc_mode(h, &cur, &pend)) != NVML_SUCCESS) {
                memo_note(c, MC_ECC, st->rc);
                c->ecc_mode = metric_none(nvml_rc_reason(st->rc));
            } else {
                c->ecc_mode = metric_direct(cur == NVML_FEATURE_ENABLED ? 1 : 0);
            }
        }
        d->m[M_ECC_MODE] = c->ecc_mode;
        if (!metric_ok(&c->ecc_mode)) {
            for (int k = 0; k < 4; k++)
                d->m[eid[k]] = c->ecc_mode;
        } else if (c->ecc_mode.value == 0) {
            for (int k = 0; k < 4; k++)
                d->m[eid[k]] = metric_none("ECC is disabled");
        } else {
            /* An entry that failed is asked by its own call, except an
             * aggregate count the driver said it does not keep. */
            static const nvmlMemoryErrorType_t et[4] = {
                NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_MEMORY_ERROR_TYPE_UNCORRECTED};
            static const nvmlEccCounterType_t ct[4] = {NVML_VOLATILE_ECC, NVML_VOLATILE_ECC,
                                                       NVML_AGGREGATE_ECC, NVML_AGGREGATE_ECC};
            static const enum nvml_field_slot slot[4] = {NF_SBE_VOL, NF_DBE_VOL, NF_SBE_AGG,
                                                         NF_DBE_AGG};
            for (int k = 0; k < 4; k++) {
                if (!fv.why[slot[k]])
                    d->m[eid[k]] = metric_direct(fv.v[slot[k]]);
                else if (k >= 2 && fv.rc[slot[k]] == NVML_ERROR_NOT_SUPPORTED)
                    d->m[eid[k]] = metric_none(fv.why[slot[k]]);
                else if (!f->ecc_count)
                    d->m[eid[k]] = metric_none(NO_SYMBOL);
                else
                    d->m[eid[k]] =
                        CALL(st, "nvmlDeviceGetTotalEccErrors",
                             f->ecc_count(h, et[k], ct[k], &ull)) == NVML_SUCCESS
                            ? metric_direct((double)ull)
                            : metric_none(nvml_rc_reason(st->rc));
            }
        }
    }

    if (!f->fan_speed)
        d->m[M_FAN] = metric_none(NO_SYMBOL);
    else if (memo_known(c, MC_FAN))
        d->m[M_FAN] = metric_none("no fan reported (passively cooled?)");
    else if (CALL(st, "nvmlDeviceGetFanSpeed", f->fan_speed(h, &v)) == NVML_SUCCESS)
        d->m[M_FAN] = metric_direct(v); /* intended speed; may exceed 100 */
    else {
        memo_note(c, MC_FAN, st->rc);
        d->m[M_FAN] = metric_none(memo_known(c, MC_FAN) ? "no fan reported (passively cooled?)"
                                                        : nvml_rc_reason(st->rc));
    }

    d->throttle_valid = false;
    d->throttle_why = NULL;
    if (!memo_known(c, MC_THROTTLE)) {
        uint64_t mask = 0;
        const char *why = NULL;
        if (nvml_compat_throttle(st, c, h, &mask, &why)) {
            d->throttle_mask = mask;
            d->throttle_valid = true;
            d->throttle_why = why; /* the entry point's note, NULL when none */
        } else if (c->compat_path[CC_THROTTLE] == CP_NONE) {
            d->throttle_why = why;
        } else if (why == nvml_rc_reason(NVML_ERROR_NOT_SUPPORTED)) {
            memo_note(c, MC_THROTTLE, NVML_ERROR_NOT_SUPPORTED);
        }
    }
}

/* ------------------------------------------------------------ MIG devices */

/* A MIG device's static facts, read once and, like a GPU's, read again
 * with backoff while one failed for a passing reason; a success is kept. */
void nvml_read_mig_static(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h)
{
    const struct nvml_fns *f = &st->lib.f;
    bool again = false;
    again |= read_name(st, c, h);
    unsigned int id = 0;
    if (f->gpu_instance_id && CALL(st, "nvmlDeviceGetGpuInstanceId", f->gpu_instance_id(h, &id)) == 0)
        c->gi_id = (int)id;
    else
        again |= f->gpu_instance_id && transient(st->rc);
    if (f->compute_instance_id &&
        CALL(st, "nvmlDeviceGetComputeInstanceId", f->compute_instance_id(h, &id)) == 0)
        c->ci_id = (int)id;
    else
        again |= f->compute_instance_id && transient(st->rc);
    nvmlDeviceAttributes_t at;
    memset(&at, 0, sizeof(at));
    bool attrs = false;
    if (f->attributes && CALL(st, "nvmlDeviceGetAttributes_v2", f->attributes(h, &at)) == 0) {
        c->slices = (int)at.gpuInstanceSliceCount;
        c->ci_slices = (int)at.computeInstanceSliceCount;
        attrs = true;
    } else {
        again |= f->attributes && transient(st->rc);
    }
    /* The MIG device name carries NVIDIA's own profile name ("NVIDIA H100
     * PCIe MIG 3g.40gb"); derive one from the attributes only without it,
     * and keep an earlier one when neither was read this time. */
    if (mig_profile_from_name(c->name, c->profile, sizeof(c->profile), &c->slices) != 0 &&
        (attrs || !c->profile[0]))
        mig_profile_name(c->profile, sizeof(c->profile), c->slices, c->ci_slices,
                         attrs ? at.memorySizeMB : 0);
    c->have_static = true;
    static_backoff(st, c, again);
}

void nvml_read_mig(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h,
                     const struct device *parent, struct device *d)
{
    const struct nvml_fns *f = &st->lib.f;
    read_memory(st, c, h, d);

    /* GPU-wide values are the parent's (temperature, power, clocks, PCIe, ECC,
     * fan, throttle): MIG handles answer 2/3 for them (535 tables). */
    for (int k = 0; k < M_COUNT; k++) {
        if (metric_info((enum metric_id)k)->gpu_wide)
            d->m[k] = parent->m[k];
    }
    d->throttle_mask = parent->throttle_mask;
    d->throttle_valid = parent->throttle_valid;
    d->throttle_why = parent->throttle_why;

    struct mig_util_in in = {
        .arch = parent->arch,
        .slices = c->slices,
        .slices_total = parent->slices_total,
        .parent_gpu_util = parent->m[M_GPU_UTIL],
        .parent_mem_util = parent->m[M_MEM_UTIL],
        .direct_rc = NVML_ERROR_FUNCTION_NOT_FOUND,
        .proc_rc = NVML_ERROR_FUNCTION_NOT_FOUND,
    };

    /* Tier 1: the direct call on the MIG handle, expected NOT_SUPPORTED. */
    if (f->utilization && !memo_known(c, MC_UTIL)) {
        nvmlUtilization_t u;
        in.direct_rc = CALL(st, "nvmlDeviceGetUtilizationRates", f->utilization(h, &u));
        in.direct = u;
        memo_note(c, MC_UTIL, in.direct_rc);
    } else if (f->utilization) {
        in.direct_rc = NVML_ERROR_NOT_SUPPORTED;
    }
    /* Tier 2: per-process samples on the MIG handle (535: fetch gives 2).
     * NVIDIA documents them as unsupported on MIG; any other failure (no
     * sample yet) is asked again only at the slow cadence. */
    if (in.direct_rc != NVML_SUCCESS && f->process_util && !memo_known(c, MC_PROC_UTIL) &&
        st->tick >= c->proc_util_quiet_until) {
        in.proc_rc = nvml_process_util(st, c, h, true, &in.proc_sm, &in.proc_mem);
        if (in.proc_rc == NVML_ERROR_INVALID_ARGUMENT) {
            /* MIG handles reject the data call outright on 535; it will not change. */
            c->memo |= 1u << MC_PROC_UTIL;
            c->memo_why[MC_PROC_UTIL] = nvml_rc_reason(in.proc_rc);
        } else if (!memo_note(c, MC_PROC_UTIL, in.proc_rc) && in.proc_rc != NVML_SUCCESS) {
            c->proc_util_quiet_until = st->tick + st->slow_every;
        }
    } else if (memo_known(c, MC_PROC_UTIL)) {
        in.proc_rc = NVML_ERROR_NOT_SUPPORTED;
    }
    /* The estimate tier and the reasons are decided in mig_util.c; GPM's
     * values are applied after the merge (nvml_gpm_apply). */
    mig_util_resolve(&in, &d->m[M_GPU_UTIL], &d->m[M_MEM_UTIL], &d->m[M_SM_UTIL]);
}
