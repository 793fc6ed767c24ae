/*
 * nvml.c — the NVML backend: enumerate GPUs and MIG devices every tick and
 * fill one struct device per device.
 *
 * Static facts are cached per UUID (a MIG handle may be reused with other
 * properties after reconfiguration, a UUID may not). Calls that a device has
 * answered with NOT_SUPPORTED / FUNCTION_NOT_FOUND are remembered per device
 * so a failing call (~200 µs on MIG) is not repeated every tick.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/gpm.h"
#include "backend/mig_util.h"
#include "backend/nvml_internal.h"
#include "backend/nvml_load.h"
#include "clock.h"
#include "debuglog.h"
#include "text.h"

static const char *const NO_SYMBOL = NVML_NO_SYMBOL;

static struct dev_cache *cache_get(struct nvml_state *st, const char *uuid, bool mig)
{
    /* A tick looks up its GPU and then its instances in the enumeration's
     * order, which is the entries' order: the one after the last found is
     * usually the one (an entry is 672 bytes: a cold line a comparison). */
    size_t h = st->cache_next;
    if (h < st->ncache && st->cache[h].mig == mig && strcmp(st->cache[h].uuid, uuid) == 0) {
        st->cache_next = h + 1;
        return &st->cache[h];
    }
    for (size_t i = 0; i < st->ncache; i++) {
        if (st->cache[i].mig == mig && strcmp(st->cache[i].uuid, uuid) == 0) {
            st->cache_next = i + 1;
            return &st->cache[i];
        }
    }
    if (st->ncache == st->capcache) {
        size_t cap = st->capcache ? st->capcache * 2 : 16;
        struct dev_cache *n = realloc(st->cache, cap * sizeof(*n));
        if (!n)
            return NULL;
        st->cache = n;
        st->capcache = cap;
    }
    struct dev_cache *c = &st->cache[st->ncache++];
    st->cache_next = st->ncache;
    memset(c, 0, sizeof(*c));
    snprintf(c->uuid, sizeof(c->uuid), "%s", uuid);
    c->mig = mig;
    c->mig_mode = -1;
    c->cc_major = c->cc_minor = -1;
    c->slices_total = c->gi_id = c->ci_id = c->slices = c->ci_slices = -1;
    return c;
}

/* Drop entries for devices that disappeared (MIG reconfiguration, GPU loss). */
static void cache_prune(struct nvml_state *st)
{
    size_t w = 0;
    for (size_t r = 0; r < st->ncache; r++) {
        if (st->cache[r].seen) {
            st->cache[r].seen = false;
            if (w != r)
                st->cache[w] = st->cache[r];
            w++;
        }
    }
    st->ncache = w;
}

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

/* A field value as an unsigned 64-bit count; false for a type we cannot
 * take as one. */
static bool field_ull(const nvmlFieldValue_t *v, unsigned long long *out)
{
    switch (v->valueType) {
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: *out = v->value.ullVal; return true;
    case NVML_VALUE_TYPE_UNSIGNED_LONG: *out = v->value.ulVal; return true;
    case NVML_VALUE_TYPE_UNSIGNED_INT: *out = v->value.uiVal; return true;
    default: return false;
    }
}


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
 * v1's `used` includes it. */
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
    d->m[M_MEM_TOTAL] = d->m[M_MEM_USED];
}

/* ------------------------------------------------------------ GPM values */

/* The GPM-only metrics of a device (occupancy, tensor and FP pipes, and on
 * a physical GPU NVLink); none with GPM's reason when it has no value. */
static void apply_gpm_extras(const struct gpm_view *gv, struct device *d, bool gpu)
{
    static const struct {
        enum metric_id id;
        enum gpm_metric k;
    } map[] = {
        {M_SM_OCCUPANCY, GPM_SM_OCC},   {M_TENSOR_UTIL, GPM_TENSOR}, {M_DFMA_TENSOR_UTIL, GPM_DFMA},
        {M_HMMA_TENSOR_UTIL, GPM_HMMA}, {M_IMMA_TENSOR_UTIL, GPM_IMMA}, {M_FP64_UTIL, GPM_FP64},
        {M_FP32_UTIL, GPM_FP32},        {M_FP16_UTIL, GPM_FP16},     {M_INT_UTIL, GPM_INT},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        d->m[map[i].id] = gpm_metric(gv, map[i].k);
    if (gpu) {
        d->m[M_NVLINK_TX] = gpm_metric(gv, GPM_NVLINK_TX);
        d->m[M_NVLINK_RX] = gpm_metric(gv, GPM_NVLINK_RX);
        /* GPM's PCIe rates only where NVML's direct counter is missing. */
        struct metric tx = gpm_metric(gv, GPM_PCIE_TX), rx = gpm_metric(gv, GPM_PCIE_RX);
        if (!metric_ok(&d->m[M_PCIE_TX]) && metric_ok(&tx))
            d->m[M_PCIE_TX] = tx;
        if (!metric_ok(&d->m[M_PCIE_RX]) && metric_ok(&rx))
            d->m[M_PCIE_RX] = rx;
    }
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
static bool static_due(const struct nvml_state *st, const struct dev_cache *c)
{
    return !c->have_static || (c->static_retry && st->tick >= c->static_retry);
}

/* Static facts: read once, but a read that failed for a passing reason is
 * retried with backoff (static_backoff), so one UNKNOWN at start does not
 * leave a name or threshold N/A for the run. */
static void read_gpu_static(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h)
{
    const struct nvml_fns *f = &st->lib.f;
    bool again = false;
    char name[MIGMON_NAME_LEN];
    if (f->name && CALL(st, "nvmlDeviceGetName", f->name(h, name, sizeof(name))) == 0) {
        text_clean(name, sizeof(name)); /* bounded, terminated, no controls */
        snprintf(c->name, sizeof(c->name), "%s", name);
    } else {
        again |= f->name && transient(st->rc);
    }
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
    if (f->arch && CALL(st, "nvmlDeviceGetArchitecture", f->arch(h, &a)) == NVML_SUCCESS)
        snprintf(c->arch, sizeof(c->arch), "%s", arch_name(a));
    else
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
static int read_slices_total(struct nvml_state *st, nvmlDevice_t h)
{
    if (!st->lib.f.gi_profile_info)
        return -1;
    int best = -1;
    for (unsigned int p = 0; p < 0x12; p++) {
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

static void read_gpu_dynamic(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h,
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
    if (!f->temperature)
        d->m[M_TEMP] = metric_none(NO_SYMBOL);
    else if (CALL(st, "nvmlDeviceGetTemperature",
                  f->temperature(h, NVML_TEMPERATURE_GPU, &v)) == NVML_SUCCESS)
        d->m[M_TEMP] = metric_direct(v);
    else
        d->m[M_TEMP] = metric_none(nvml_rc_reason(st->rc));
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

    unsigned long long ull = 0;
    /* Energy and the volatile ECC counts in one nvmlDeviceGetFieldValues
     * call (fields 83, 3 and 4: the same counters as the individual calls);
     * an entry the driver does not answer falls back to its own call. */
    nvmlFieldValue_t fv[3];
    int nfv = 0;
    bool ecc_on = !memo_known(c, MC_ECC) && metric_ok(&c->ecc_mode) && c->ecc_mode.value == 1;
    if (f->field_values && !memo_known(c, MC_FIELDS)) {
        memset(fv, 0, sizeof(fv));
        fv[nfv++].fieldId = NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION;
        if (ecc_on) {
            fv[nfv++].fieldId = NVML_FI_DEV_ECC_SBE_VOL_TOTAL;
            fv[nfv++].fieldId = NVML_FI_DEV_ECC_DBE_VOL_TOTAL;
        }
        nvmlReturn_t frc = CALL(st, "nvmlDeviceGetFieldValues", f->field_values(h, nfv, fv));
        if (frc != NVML_SUCCESS) {
            memo_note(c, MC_FIELDS, frc);
            for (int k = 0; k < nfv; k++)
                fv[k].nvmlReturn = frc;
        }
    }
    for (int k = nfv; k < 3; k++)
        fv[k].nvmlReturn = NVML_ERROR_FUNCTION_NOT_FOUND;
    if (nfv > 0 && fv[0].nvmlReturn == NVML_SUCCESS && field_ull(&fv[0], &ull))
        d->m[M_ENERGY] = metric_direct((double)ull / 1000.0); /* mJ -> J */
    else if (nfv > 0 && fv[0].nvmlReturn == NVML_ERROR_NOT_SUPPORTED)
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

    /* ECC: mode, then volatile (since driver load) counts when enabled. */
    d->m[M_ECC_MODE] = d->m[M_ECC_CORR] = d->m[M_ECC_UNCORR] = metric_none(NO_SYMBOL);
    if (f->ecc_mode && memo_known(c, MC_ECC)) {
        d->m[M_ECC_MODE] = d->m[M_ECC_CORR] = d->m[M_ECC_UNCORR] = memo_none(c, MC_ECC);
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
        if (!metric_ok(&c->ecc_mode)) {
            d->m[M_ECC_MODE] = d->m[M_ECC_CORR] = d->m[M_ECC_UNCORR] = c->ecc_mode;
        } else {
            d->m[M_ECC_MODE] = c->ecc_mode;
            if (c->ecc_mode.value == 0) {
                d->m[M_ECC_CORR] = d->m[M_ECC_UNCORR] = metric_none("ECC is disabled");
            } else if (f->ecc_count) {
                static const nvmlMemoryErrorType_t et[2] = {NVML_MEMORY_ERROR_TYPE_CORRECTED,
                                                            NVML_MEMORY_ERROR_TYPE_UNCORRECTED};
                static const enum metric_id eid[2] = {M_ECC_CORR, M_ECC_UNCORR};
                for (int k = 0; k < 2; k++) {
                    if (fv[1 + k].nvmlReturn == NVML_SUCCESS && field_ull(&fv[1 + k], &ull))
                        d->m[eid[k]] = metric_direct((double)ull);
                    else
                        d->m[eid[k]] =
                            CALL(st, "nvmlDeviceGetTotalEccErrors",
                                 f->ecc_count(h, et[k], NVML_VOLATILE_ECC, &ull)) == NVML_SUCCESS
                                ? metric_direct((double)ull)
                                : metric_none(nvml_rc_reason(st->rc));
                }
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
    if (f->clock_event_reasons && !memo_known(c, MC_THROTTLE)) {
        if (CALL(st, "nvmlDeviceGetCurrentClocksEventReasons",
                 f->clock_event_reasons(h, &ull)) == NVML_SUCCESS) {
            d->throttle_mask = ull;
            d->throttle_valid = true;
        } else {
            memo_note(c, MC_THROTTLE, st->rc);
        }
    }

}

/* ------------------------------------------------------------ MIG devices */

/* A MIG device's static facts, read once and, like a GPU's, read again
 * with backoff while one failed for a passing reason; a success is kept. */
static void read_mig_static(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h)
{
    const struct nvml_fns *f = &st->lib.f;
    bool again = false;
    char name[MIGMON_NAME_LEN];
    if (f->name && CALL(st, "nvmlDeviceGetName", f->name(h, name, sizeof(name))) == 0) {
        text_clean(name, sizeof(name)); /* bounded, terminated, no controls */
        snprintf(c->name, sizeof(c->name), "%s", name);
    } else {
        again |= f->name && transient(st->rc);
    }
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

static void fill_mig(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h,
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

/* ------------------------------------------------------------ the backend */

/* A device with nothing read yet: one copy of it per device and tick (a
 * memset and a loop over the metrics cost 5 % of a DGX tick). Written once,
 * under pthread_once; read-only after. */
static struct device blank_device;
static pthread_once_t blank_once = PTHREAD_ONCE_INIT;

static void blank_init(void)
{
    struct device *d = &blank_device;
    memset(d, 0, sizeof(*d));
    for (int k = 0; k < M_COUNT; k++)
        d->m[k] = metric_none("not read");
    d->mig_index = d->parent_pos = d->gi_id = d->ci_id = -1;
    d->cc_major = d->cc_minor = -1;
    d->slices = d->slices_total = -1;
    d->process_count = metric_none("not read");
}

static struct device *next_device(struct nvml_state *st, struct snapshot *s)
{
    if (snapshot_reserve(s, s->ndevices + 1) != 0) {
        snprintf(st->err, sizeof(st->err), "out of memory for %zu devices", s->ndevices + 1);
        return NULL;
    }
    pthread_once(&blank_once, blank_init);
    struct device *d = &s->devices[s->ndevices++];
    memcpy(d, &blank_device, sizeof(*d));
    return d;
}

/* Walk the MIG slots of a MIG-enabled GPU: handle and UUID of every
 * occupied slot (empty slots answer NOT_FOUND). */
static void walk_migs(struct nvml_state *st, nvmlDevice_t parent_h, const char *parent_uuid)
{
    const struct nvml_fns *f = &st->lib.f;
    st->nslots = 0;
    st->slots_valid = true;
    st->slots_tick = st->tick;
    unsigned int max = 0;
    if (!f->max_mig_count || !f->mig_handle_by_index ||
        CALL(st, "nvmlDeviceGetMaxMigDeviceCount", f->max_mig_count(parent_h, &max)) != 0)
        return;
    if (max > 64)
        max = 64; /* seven on every GPU so far; more is a driver error */
    if (max > st->slots_cap) {
        struct mig_slot *n = realloc(st->slots, max * sizeof(*n));
        if (!n)
            return;
        st->slots = n;
        st->slots_cap = max;
    }
    for (unsigned int slot = 0; slot < max; slot++) {
        struct mig_slot *m = &st->slots[st->nslots];
        m->slot = slot;
        m->h = NULL;
        m->uuid[0] = '\0';
        m->uuid_why = NULL;
        if (CALL(st, "nvmlDeviceGetMigDeviceHandleByIndex",
                 f->mig_handle_by_index(parent_h, slot, &m->h)) != NVML_SUCCESS)
            continue; /* NOT_FOUND: empty slot */
        /* A device whose UUID cannot be read is still listed, with the
         * reason; the next walk (slow cadence) tries again. */
        if (!f->uuid)
            m->uuid_why = nvml_rc_reason(NVML_ERROR_FUNCTION_NOT_FOUND);
        else if (CALL(st, "nvmlDeviceGetUUID", f->uuid(m->h, m->uuid, sizeof(m->uuid))) != 0)
            m->uuid_why = nvml_rc_reason(st->rc);
        else
            text_clean(m->uuid, sizeof(m->uuid));
        if (m->uuid_why)
            m->uuid[0] = '\0';
        else if (!m->uuid[0])
            m->uuid_why = "driver returned an empty UUID";
        /* A UUID is an identity: one given twice (or the parent's) is not. */
        for (size_t k = 0; !m->uuid_why && k < st->nslots; k++)
            if (strcmp(st->slots[k].uuid, m->uuid) == 0)
                m->uuid_why = "driver returned the same UUID for two MIG devices";
        if (!m->uuid_why && strcmp(m->uuid, parent_uuid) == 0)
            m->uuid_why = "driver returned the GPU's UUID for a MIG device";
        if (m->uuid_why)
            m->uuid[0] = '\0';
        st->nslots++;
    }
}

/* A MIG handle's answer that means the device behind it is gone. */
static bool mig_gone(const struct device *d)
{
    const char *w = d->m[M_MEM_USED].why;
    return !metric_ok(&d->m[M_MEM_USED]) &&
           (w == nvml_rc_reason(NVML_ERROR_INVALID_ARGUMENT) ||
            w == nvml_rc_reason(NVML_ERROR_NOT_FOUND) ||
            w == nvml_rc_reason(NVML_ERROR_GPU_IS_LOST));
}

/* The MIG devices of a MIG-enabled GPU, from the cached slots; false when
 * a cached handle turned out to be stale (the caller re-walks and retries). */
static bool sample_migs(struct nvml_state *st, struct snapshot *s, nvmlDevice_t parent_h,
                        size_t parent_pos)
{
    /* The label names the device in --debug lines only. */
    bool label = debuglog_enabled();
    char parent_label[16] = "";
    if (label)
        snprintf(parent_label, sizeof(parent_label), "%.15s", st->label);
    nvml_procs_mig_begin(st, parent_h);
    bool fresh = true;
    for (size_t k = 0; k < st->nslots; k++) {
        const struct mig_slot *m = &st->slots[k];
        if (label)
            snprintf(st->label, sizeof(st->label), "%.15s/MIG%u", parent_label, m->slot);
        /* Static facts are cached by UUID; without one, by parent and slot
         * (a key no UUID can take: UUIDs start with "GPU-" or "MIG-"). */
        char key[MIGMON_UUID_LEN];
        if (m->uuid[0])
            text_copy(key, sizeof(key), m->uuid);
        else
            snprintf(key, sizeof(key), "?%u@%.*s", m->slot, (int)sizeof(key) - 16,
                     s->devices[parent_pos].uuid);
        struct dev_cache *c = cache_get(st, key, true);
        struct device *d = next_device(st, s);
        if (!c || !d)
            break;
        const struct device *parent = &s->devices[parent_pos];
        c->seen = true;
        if (static_due(st, c))
            read_mig_static(st, c, m->h);
        d->kind = DEV_MIG;
        d->index = parent->index;
        d->mig_index = (int)m->slot;
        d->parent_pos = (int)parent_pos;
        text_copy(d->uuid, sizeof(d->uuid), m->uuid);
        d->uuid_why = m->uuid_why;
        text_copy(d->parent_uuid, sizeof(d->parent_uuid), parent->uuid);
        text_copy(d->name, sizeof(d->name), c->name);
        text_copy(d->pci_bus_id, sizeof(d->pci_bus_id), parent->pci_bus_id);
        text_copy(d->serial, sizeof(d->serial), parent->serial);
        text_copy(d->arch, sizeof(d->arch), parent->arch);
        text_copy(d->profile, sizeof(d->profile), c->profile);
        d->cc_major = parent->cc_major;
        d->cc_minor = parent->cc_minor;
        d->gi_id = c->gi_id;
        d->ci_id = c->ci_id;
        d->slices = c->slices;
        d->slices_total = parent->slices_total;
        fill_mig(st, c, m->h, parent, d);
        if (mig_gone(d)) {
            fresh = false;
            break;
        }
        nvml_procs_mig(st, c, m->h, s, (size_t)(d - s->devices));
    }
    if (label)
        snprintf(st->label, sizeof(st->label), "%s", parent_label);
    return fresh;
}

void nvml_state_init(struct nvml_state *st, const struct nvml_lib *lib)
{
    memset(st, 0, sizeof(*st));
    st->lib = *lib; /* a copy of the entry points; the root owns the handle */
    st->inited = true;
    snprintf(st->label, sizeof(st->label), "-");
}

void nvml_state_free(struct nvml_state *st)
{
    free(st->cache);
    free(st->pu_buf);
    free(st->pui_buf);
    free(st->pus);
    free(st->pus_ix);
    free(st->ident);
    st->ident = NULL;
    st->nident = st->ident_cap = 0;
    st->pus_ix = NULL;
    st->pus_ixcap = 0;
    nvml_procs_free(st);
    st->cache = NULL;
    st->pu_buf = NULL;
    st->pui_buf = NULL;
    st->pus = NULL;
    st->ncache = st->capcache = st->cache_next = st->pu_cap = st->pui_cap = st->npus = st->pus_cap = 0;
}

/* The part's devices as this GPU's identity (a sample that read it). */
static void ident_save(struct nvml_state *st, const struct snapshot *part)
{
    if (part->ndevices > st->ident_cap) {
        struct device *n = realloc(st->ident, part->ndevices * sizeof(*n));
        if (!n) {
            st->nident = 0; /* an identity half saved is worse than none */
            return;
        }
        st->ident = n;
        st->ident_cap = part->ndevices;
    }
    memcpy(st->ident, part->devices, part->ndevices * sizeof(*part->devices));
    st->nident = part->ndevices;
}

/* The part as the identity last read: the same devices (GPU, MIG devices)
 * with every metric none for why and no processes. False when there is no
 * identity to give. */
static bool ident_replay(struct nvml_state *st, struct snapshot *part, const char *why)
{
    if (!st->nident)
        return false;
    part->ndevices = 0;
    part->nprocs = 0;
    for (size_t k = 0; k < st->nident; k++) {
        struct device *d = next_device(st, part);
        if (!d)
            break;
        *d = st->ident[k];
        for (int j = 0; j < M_COUNT; j++)
            d->m[j] = metric_none(why);
        d->process_count = metric_none(why);
        d->throttle_mask = 0;
        d->throttle_valid = false;
        d->proc_first = 0;
        d->nprocs = 0;
        d->stall = NULL; /* pointed into an older snapshot's notes */
    }
    return true;
}

/* Every device of the part marked lost (or not), with how long ago. */
static void mark_lost(struct nvml_state *st, struct snapshot *part)
{
    uint64_t now = clock_mono_ns();
    if (st->lost && !st->lost_since_ns)
        st->lost_since_ns = now;
    else if (!st->lost)
        st->lost_since_ns = 0;
    for (size_t k = 0; k < part->ndevices; k++) {
        part->devices[k].lost = st->lost;
        part->devices[k].lost_for_s = st->lost ? (double)(now - st->lost_since_ns) / 1e9 : 0;
    }
}

void nvml_sample_gpu(struct nvml_state *st, unsigned int i, nvmlDevice_t h, nvmlReturn_t hrc,
                     const char *uuid, struct snapshot *part)
{
    const struct nvml_fns *f = &st->lib.f;
    part->ndevices = 0;
    part->nprocs = 0;
    st->err[0] = '\0';
    st->tick++;
    if (!st->slow_every)
        st->slow_every = 5;
    if (debuglog_enabled()) /* names the device in --debug lines only */
        snprintf(st->label, sizeof(st->label), "GPU%u", i);
    struct device *d = next_device(st, part);
    if (!d)
        return;
    d->kind = DEV_GPU;
    d->index = (int)i;
    /* _v2 counts GPUs we may not open: show them, say why. The UUID comes
     * with the enumeration; read it here only when that failed. */
    st->rc = NVML_SUCCESS;
    if (uuid && uuid[0])
        text_copy(d->uuid, sizeof(d->uuid), uuid);
    if (hrc != NVML_SUCCESS ||
        (!d->uuid[0] && f->uuid &&
         CALL(st, "nvmlDeviceGetUUID", f->uuid(h, d->uuid, sizeof(d->uuid))) != 0)) {
        const char *why = nvml_rc_reason(hrc != NVML_SUCCESS ? hrc : st->rc);
        st->lost = hrc == NVML_ERROR_GPU_IS_LOST || st->rc == NVML_ERROR_GPU_IS_LOST;
        /* A GPU read before keeps what it was: which GPU died is what an
         * operator needs to drain the node or return the board. */
        if (!ident_replay(st, part, why)) {
            d->uuid[0] = '\0';
            d->uuid_why = why;
            for (int k = 0; k < M_COUNT; k++)
                d->m[k] = metric_none(why);
            d->process_count = metric_none(why);
        }
        mark_lost(st, part);
        cache_prune(st);
        return;
    }
    text_clean(d->uuid, sizeof(d->uuid));
    struct dev_cache *c = cache_get(st, d->uuid, false);
    if (!c)
        return;
    c->seen = true;
    if (static_due(st, c))
        read_gpu_static(st, c, h);

    /* MIG mode: at the slow cadence, and at once when a MIG handle turned
     * out stale (a mode change destroys every instance). A transient error
     * keeps the last known mode. */
    unsigned int cur = 0, pend = 0;
    int mig = c->mig_mode < 0 ? 0 : c->mig_mode;
    if (c->mig_mode < 0 || !st->slots_valid || st->tick - c->mig_mode_tick >= st->slow_every) {
        c->mig_mode_tick = st->tick;
        if (f->mig_mode && CALL(st, "nvmlDeviceGetMigMode", f->mig_mode(h, &cur, &pend)) == 0)
            mig = cur == NVML_DEVICE_MIG_ENABLE;
        else if (!f->mig_mode || st->rc == NVML_ERROR_NOT_SUPPORTED || c->mig_mode < 0)
            mig = 0;
    }
    if (mig != c->mig_mode) {
        /* MIG mode changed: what was unsupported may now work and v.v.;
         * the slots and the way processes are read start over. */
        c->memo = 0;
        c->settings_tick = 0;
        c->mem_denied_until = 0;
        st->slots_valid = false;
        st->proc_mode = PM_UNKNOWN;
        c->slices_total = mig ? read_slices_total(st, h) : -1;
        c->mig_mode = mig;
    }
    d->mig_enabled = mig;
    text_copy(d->name, sizeof(d->name), c->name);
    text_copy(d->pci_bus_id, sizeof(d->pci_bus_id), c->pci);
    text_copy(d->serial, sizeof(d->serial), c->serial);
    text_copy(d->arch, sizeof(d->arch), c->arch);
    d->cc_major = c->cc_major;
    d->cc_minor = c->cc_minor;
    d->slices_total = c->slices_total;
    st->pus_dev = NULL; /* set by this device's process_util, if it runs */
    read_gpu_dynamic(st, c, h, d);
    if (mig) {
        if (!st->slots_valid || st->tick - st->slots_tick >= st->slow_every)
            walk_migs(st, h, part->devices[0].uuid);
        size_t nprocs0 = part->nprocs;
        st->npending = 0;
        if (!sample_migs(st, part, h, 0)) {
            /* a MIG device was destroyed: walk again and redo the instances */
            part->ndevices = 1;
            part->nprocs = nprocs0;
            st->npending = 0;
            walk_migs(st, h, part->devices[0].uuid);
            sample_migs(st, part, h, 0);
        }
        nvml_procs_mig_done(st, h, part, 0);
    } else {
        nvml_procs_gpu(st, c, h, part, 0);
    }
    /* Calls on a GPU that fell off the bus answer GPU_IS_LOST; it keeps
     * its identity (cached) and is marked lost. */
    const char *lost_why = nvml_rc_reason(NVML_ERROR_GPU_IS_LOST);
    st->lost = part->devices[0].m[M_TEMP].why == lost_why &&
               part->devices[0].m[M_MEM_USED].why == lost_why;
    /* Its MIG devices, whose handles now fail, stay listed as they were. */
    if (!st->lost || !ident_replay(st, part, lost_why))
        ident_save(st, part);
    mark_lost(st, part);
    cache_prune(st);
}

void nvml_gpm_apply(const struct gpm_client *g, struct snapshot *s)
{
    for (size_t i = 0; i < s->ndevices; i++) {
        struct device *d = &s->devices[i];
        /* A MIG device without a readable UUID can still take its GPU
         * instance's values (found by parent and GI id). */
        if (!d->uuid[0] && (d->kind == DEV_GPU || d->gi_id < 0 || !d->parent_uuid[0]))
            continue;
        /* A GPU the driver calls lost has no activity to show, whatever the
         * helper last read (its own calls may not have failed yet). */
        if (d->lost)
            continue;
        struct gpm_view gv;
        if (d->kind == DEV_GPU) {
            /* Whole-GPU activity. SM utilisation from GPM replaces the
             * per-process upper bound; a MIG-enabled GPU, for which NVML has
             * no utilisation, gets GPM's graphics and DRAM figures (without
             * a GPM value it keeps NVML's reason; its MIG devices carry
             * GPM's). */
            gpm_client_gpu(g, d->uuid, &gv);
            apply_gpm_extras(&gv, d, true);
            struct metric gsm = gpm_metric(&gv, GPM_SM);
            if (metric_ok(&gsm))
                d->m[M_SM_UTIL] = gsm;
            if (d->mig_enabled && !metric_ok(&d->m[M_GPU_UTIL])) {
                struct metric gg = gpm_metric(&gv, GPM_GRAPHICS), gm = gpm_metric(&gv, GPM_DRAM);
                if (metric_ok(&gg))
                    d->m[M_GPU_UTIL] = gg;
                if (metric_ok(&gm))
                    d->m[M_MEM_UTIL] = gm;
                /* NVML's reason alone hides why GPM has no figure either
                 * (off, stalled, a driver it is disabled on): both said */
                for (int k = 0; k < 2; k++) {
                    struct metric *m = &d->m[k ? M_MEM_UTIL : M_GPU_UTIL];
                    const struct metric *gv_k = k ? &gm : &gg;
                    if (!metric_ok(m))
                        m->why = metric_why_join(m->why, gv_k->why);
                }
            }
        } else {
            /* The compute instance's own values where the driver samples MIG
             * handles (595+), else its GPU instance's; GPU-wide GPM values
             * (NVLink) were copied from the parent. */
            gpm_client_mig(g, d->parent_uuid, d->gi_id, d->uuid, &gv);
            mig_util_apply_gpm(d->arch, gpm_metric(&gv, GPM_GRAPHICS), gpm_metric(&gv, GPM_DRAM),
                               gpm_metric(&gv, GPM_SM), &d->m[M_GPU_UTIL], &d->m[M_MEM_UTIL],
                               &d->m[M_SM_UTIL]);
            apply_gpm_extras(&gv, d, false);
            if (d->parent_pos >= 0 && (size_t)d->parent_pos < s->ndevices) {
                d->m[M_NVLINK_TX] = s->devices[d->parent_pos].m[M_NVLINK_TX];
                d->m[M_NVLINK_RX] = s->devices[d->parent_pos].m[M_NVLINK_RX];
            }
        }
    }
}
