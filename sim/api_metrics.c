/*
 * api_metrics.c — per-device readings (docs/nvml-facts.md §4).
 *
 * Three kinds of handle behave differently:
 *   a GPU with MIG off   everything below works;
 *   a MIG-enabled parent utilisation (GPU, memory, encoder, decoder) is not
 *                        supported (hdr: "On MIG-enabled GPUs, querying device
 *                        utilization rates is not currently supported");
 *                        framebuffer memory needs privilege (else
 *                        NO_PERMISSION); the GPU-wide readings work;
 *   a MIG device handle  memory is per instance; GPU-wide readings fail with
 *                        the codes driver 535.129.03 was measured to return
 *                        (seed README, "디바이스별 메트릭 가용성"): temperature
 *                        and PCIe throughput INVALID_ARGUMENT, power and
 *                        clocks NOT_SUPPORTED; other GPU-wide calls
 *                        NOT_SUPPORTED.
 * Memory reads fail with IN_USE in a process whose NVML session a GPM sample
 * has corrupted (gpm_corrupts_session, api_gpm.c).
 *
 * In a hostile scenario the readings are clamped only to what their C type
 * holds (model_hi / model_lo), and a GPU's raw memory keys replace the
 * modelled bytes exactly.
 */
#include <math.h>
#include <string.h>

#include "model.h"

/* Codes a MIG device handle returns for GPU-wide readings (535.129.03 table). */
#define MIG_TEMP_RC NVML_ERROR_INVALID_ARGUMENT
#define MIG_PCIE_TP_RC NVML_ERROR_INVALID_ARGUMENT
#define MIG_OTHER_RC NVML_ERROR_NOT_SUPPORTED

static nvmlReturn_t out_u(unsigned *p, unsigned v)
{
    if (!p)
        return NVML_ERROR_INVALID_ARGUMENT;
    *p = v;
    return NVML_SUCCESS;
}

static nvmlReturn_t out_ull(unsigned long long *p, unsigned long long v)
{
    if (!p)
        return NVML_ERROR_INVALID_ARGUMENT;
    *p = v;
    return NVML_SUCCESS;
}

/* f(t) clamped to [lo, hi]; NOT_SUPPORTED where the scenario says "none". */
static nvmlReturn_t read_fn(const struct valfn *f, double t, double lo, double hi, unsigned *out)
{
    if (!out)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!valfn_supported(f))
        return NVML_ERROR_NOT_SUPPORTED;
    *out = model_uint(f, t, lo, hi);
    return NVML_SUCCESS;
}

/* ---- utilisation ---- */

static nvmlReturn_t utilization(struct sim_call *c, nvmlUtilization_t *u)
{
    if (!u)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.mig_on || !valfn_supported(&c->d.g->util_gpu) ||
        !valfn_supported(&c->d.g->util_mem))
        return NVML_ERROR_NOT_SUPPORTED;
    u->gpu = model_uint(&c->d.g->util_gpu, c->t, 0, model_hi(100));
    u->memory = model_uint(&c->d.g->util_mem, c->t, 0, model_hi(100));
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetUtilizationRates, (nvmlDevice_t device, nvmlUtilization_t *utilization_),
              utilization(&c, utilization_))

/* Encoder/decoder utilisation over NVML's 1/6 s sampling period. */
#define CODEC_PERIOD_US 166667u

static nvmlReturn_t codec(struct sim_call *c, const struct valfn *f, unsigned *util,
                          unsigned *period)
{
    if (!util || !period)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.mig_on || !valfn_supported(f))
        return NVML_ERROR_NOT_SUPPORTED;
    *util = model_uint(f, c->t, 0, model_hi(100));
    *period = CODEC_PERIOD_US;
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetEncoderUtilization,
              (nvmlDevice_t device, unsigned int *utilization_, unsigned int *samplingPeriodUs),
              codec(&c, &c.d.g->enc_util, utilization_, samplingPeriodUs))
SIM_DEVICE_FN(nvmlDeviceGetDecoderUtilization,
              (nvmlDevice_t device, unsigned int *utilization_, unsigned int *samplingPeriodUs),
              codec(&c, &c.d.g->dec_util, utilization_, samplingPeriodUs))

/* ---- memory ---- */

static nvmlReturn_t read_memory(struct sim_call *c, struct model_mem *mm)
{
    if (c->d.m) {
        model_mig_memory(c->d.m, c->t, mm);
        return NVML_SUCCESS;
    }
    /* hdr: the parent gives the aggregate "only if the caller has appropriate
     * privileges"; measured NoPermission on 535.129.03 + H100 PCIe. */
    if (c->d.mig_on && !sim_scn->sys.privileged)
        return NVML_ERROR_NO_PERMISSION;
    model_gpu_memory(&c->d, c->t, mm);
    return NVML_SUCCESS;
}

/*
 * A hostile GPU's raw memory keys, on its own handle (MIG off, or the
 * privileged parent's aggregate): total and used exactly as given, and free
 * as given or else total - reserved - used, modulo 2^64, as a driver that
 * subtracts without checking would report it. reserved is 0 for v1.
 */
static void raw_memory(const struct sim_call *c, unsigned long long reserved,
                       unsigned long long *total, unsigned long long *used,
                       unsigned long long *free_)
{
    const struct sim_gpu *g = c->d.g;
    if (c->d.m || !(g->mem_total_raw_set || g->mem_used_raw_set || g->mem_free_raw_set))
        return;
    if (g->mem_total_raw_set)
        *total = g->mem_total_raw;
    if (g->mem_used_raw_set)
        *used = g->mem_used_raw;
    *free_ = g->mem_free_raw_set ? g->mem_free_raw : *total - reserved - *used;
}

/* v1: used = reserved + allocated (hdr), free = total - used. */
static nvmlReturn_t memory_v1(struct sim_call *c, nvmlMemory_t *mem)
{
    struct model_mem mm;
    nvmlReturn_t r;
    if (gpm_session_corrupted())
        return NVML_ERROR_IN_USE;
    if (!mem)
        return NVML_ERROR_INVALID_ARGUMENT;
    if ((r = read_memory(c, &mm)) != NVML_SUCCESS)
        return r;
    mem->total = mm.total;
    mem->used = mm.reserved + mm.used;
    mem->free = mm.total - mem->used;
    raw_memory(c, 0, &mem->total, &mem->used, &mem->free);
    return NVML_SUCCESS;
}

/* v2 reports reserved separately: total = reserved + used + free, as
 * nvidia-smi (which uses v2) shows it. The version must be the macro value
 * nvmlMemory_v2 = 0x02000028, not 2 (NVIDIA/nvidia-settings#78). */
static nvmlReturn_t memory_v2(struct sim_call *c, nvmlMemory_v2_t *mem)
{
    struct model_mem mm;
    nvmlReturn_t r;
    if (gpm_session_corrupted())
        return NVML_ERROR_IN_USE;
    if (!mem)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (mem->version != nvmlMemory_v2)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if ((r = read_memory(c, &mm)) != NVML_SUCCESS)
        return r;
    mem->total = mm.total;
    mem->reserved = mm.reserved;
    mem->used = mm.used;
    mem->free = mm.total - mm.reserved - mm.used;
    raw_memory(c, mm.reserved, &mem->total, &mem->used, &mem->free);
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetMemoryInfo, (nvmlDevice_t device, nvmlMemory_t *memory),
              memory_v1(&c, memory))
SIM_DEVICE_FN(nvmlDeviceGetMemoryInfo_v2, (nvmlDevice_t device, nvmlMemory_v2_t *memory),
              memory_v2(&c, memory))

/* ---- temperature ---- */

static nvmlReturn_t temperature(struct sim_call *c, int sensor, unsigned *temp)
{
    if (!temp)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.m || sensor != NVML_TEMPERATURE_GPU)
        return MIG_TEMP_RC; /* INVALID_ARGUMENT either way */
    return read_fn(&c->d.g->temp_c, c->t, 0, model_hi(200), temp);
}

static nvmlReturn_t temperature_v(struct sim_call *c, nvmlTemperature_t *t)
{
    unsigned v;
    nvmlReturn_t r;
    if (!t)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (t->version != nvmlTemperature_v1)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if ((r = temperature(c, t->sensorType, &v)) != NVML_SUCCESS)
        return r;
    t->temperature = (int)v;
    return NVML_SUCCESS;
}

static nvmlReturn_t threshold(struct sim_call *c, int type, unsigned *temp)
{
    const struct sim_gpu *g = c->d.g;
    if (!temp)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.m)
        return MIG_OTHER_RC;
    switch (type) {
    case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN:
        return out_u(temp, g->temp_shutdown);
    case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN:
        return out_u(temp, g->temp_slowdown);
    case NVML_TEMPERATURE_THRESHOLD_MEM_MAX:
        return out_u(temp, g->temp_mem_max);
    case NVML_TEMPERATURE_THRESHOLD_GPU_MAX:
        return out_u(temp, g->temp_gpu_max);
    case 4: /* ACOUSTIC_MIN/CURR/MAX and GPS_CURR: GeForce/workstation features */
    case 5:
    case 6:
    case 7:
        return NVML_ERROR_NOT_SUPPORTED;
    default:
        return NVML_ERROR_INVALID_ARGUMENT;
    }
}

SIM_DEVICE_FN(nvmlDeviceGetTemperature,
              (nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int *temp),
              temperature(&c, sensorType, temp))
SIM_DEVICE_FN(nvmlDeviceGetTemperatureV, (nvmlDevice_t device, nvmlTemperature_t *temperature_),
              temperature_v(&c, temperature_))
SIM_DEVICE_FN(nvmlDeviceGetTemperatureThreshold,
              (nvmlDevice_t device, nvmlTemperatureThresholds_t thresholdType, unsigned int *temp),
              threshold(&c, thresholdType, temp))

/* ---- power and energy ---- */

SIM_DEVICE_FN(nvmlDeviceGetPowerUsage, (nvmlDevice_t device, unsigned int *power),
              c.d.m                                ? MIG_OTHER_RC
              : !valfn_supported(&c.d.g->power_w) ? NVML_ERROR_NOT_SUPPORTED
                                                   : out_u(power, model_power_usage_mw(c.d.g, c.t)))
SIM_DEVICE_FN(nvmlDeviceGetPowerManagementLimit, (nvmlDevice_t device, unsigned int *limit),
              c.d.m ? MIG_OTHER_RC : out_u(limit, c.d.g->power_limit_mw))
SIM_DEVICE_FN(nvmlDeviceGetEnforcedPowerLimit, (nvmlDevice_t device, unsigned int *limit),
              c.d.m ? MIG_OTHER_RC : out_u(limit, c.d.g->power_enforced_mw))

/* Volta and later; "none" in the scenario models an older board. */
static nvmlReturn_t energy(struct sim_call *c, unsigned long long *mj)
{
    if (!mj)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.m || c->d.g->arch < 5 || c->d.g->energy_j.kind == VF_NONE ||
        (c->d.g->energy_j.kind == VF_UNSET && !valfn_supported(&c->d.g->power_w)))
        return NVML_ERROR_NOT_SUPPORTED;
    *mj = model_energy_mj(c->d.g, c->t);
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetTotalEnergyConsumption,
              (nvmlDevice_t device, unsigned long long *energy_), energy(&c, energy_))

/* ---- clocks, P-state, clock event reasons ---- */

static nvmlReturn_t clock(struct sim_call *c, int type, unsigned *mhz, bool max)
{
    if (!mhz)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.m)
        return MIG_OTHER_RC;
    if (type < NVML_CLOCK_GRAPHICS || type > NVML_CLOCK_VIDEO)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (max)
        return out_u(mhz, c->d.g->max_clock[type]);
    return read_fn(&c->d.g->clock[type], c->t, 0, model_hi(c->d.g->max_clock[type]), mhz);
}

SIM_DEVICE_FN(nvmlDeviceGetClockInfo,
              (nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock_),
              clock(&c, type, clock_, false))
SIM_DEVICE_FN(nvmlDeviceGetMaxClockInfo,
              (nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock_),
              clock(&c, type, clock_, true))

static nvmlReturn_t pstate(struct sim_call *c, nvmlPstates_t *p)
{
    if (!p)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.m)
        return MIG_OTHER_RC;
    /* a board without P-state reporting says UNKNOWN (32) */
    *p = valfn_supported(&c->d.g->pstate)
             ? (nvmlPstates_t)model_uint(&c->d.g->pstate, c->t, 0, model_hi(15))
             : NVML_PSTATE_UNKNOWN;
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetPerformanceState, (nvmlDevice_t device, nvmlPstates_t *pState),
              pstate(&c, pState))
static nvmlReturn_t event_reasons(struct sim_call *c, unsigned long long *mask)
{
    unsigned v;
    nvmlReturn_t r;
    if (c->d.m)
        return MIG_OTHER_RC;
    if ((r = read_fn(&c->d.g->event_reasons, c->t, 0, model_hi(0x1FF), &v)) != NVML_SUCCESS)
        return mask ? r : NVML_ERROR_INVALID_ARGUMENT;
    return out_ull(mask, v);
}

/* The same reading under its 535+ name and its older, deprecated one. */
SIM_DEVICE_FN(nvmlDeviceGetCurrentClocksEventReasons,
              (nvmlDevice_t device, unsigned long long *clocksEventReasons),
              event_reasons(&c, clocksEventReasons))
SIM_DEVICE_FN(nvmlDeviceGetCurrentClocksThrottleReasons,
              (nvmlDevice_t device, unsigned long long *clocksThrottleReasons),
              event_reasons(&c, clocksThrottleReasons))

/* The reasons this GPU can report: every bit the scenario's mask may hold
 * (0x1FF, NVML_CLOCKS_EVENT_REASON_ALL), under both names. */
static nvmlReturn_t supported_reasons(struct sim_call *c, unsigned long long *mask)
{
    if (!mask)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.m)
        return MIG_OTHER_RC;
    if (!valfn_supported(&c->d.g->event_reasons))
        return NVML_ERROR_NOT_SUPPORTED;
    return out_ull(mask, NVML_CLOCKS_EVENT_REASON_ALL);
}

SIM_DEVICE_FN(nvmlDeviceGetSupportedClocksEventReasons,
              (nvmlDevice_t device, unsigned long long *supportedReasons),
              supported_reasons(&c, supportedReasons))
SIM_DEVICE_FN(nvmlDeviceGetSupportedClocksThrottleReasons,
              (nvmlDevice_t device, unsigned long long *supportedReasons),
              supported_reasons(&c, supportedReasons))

/* ---- PCIe ---- */

static nvmlReturn_t pcie_throughput(struct sim_call *c, int counter, unsigned *kbps)
{
    if (!kbps)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.m)
        return MIG_PCIE_TP_RC;
    if (counter == NVML_PCIE_UTIL_TX_BYTES)
        return read_fn(&c->d.g->pcie_tx_kbps, c->t, 0, model_hi(4e9), kbps);
    if (counter == NVML_PCIE_UTIL_RX_BYTES)
        return read_fn(&c->d.g->pcie_rx_kbps, c->t, 0, model_hi(4e9), kbps);
    return NVML_ERROR_INVALID_ARGUMENT;
}

SIM_DEVICE_FN(nvmlDeviceGetPcieThroughput,
              (nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int *value),
              pcie_throughput(&c, counter, value))
SIM_DEVICE_FN(nvmlDeviceGetCurrPcieLinkGeneration, (nvmlDevice_t device, unsigned int *currLinkGen),
              c.d.m ? MIG_OTHER_RC
                    : read_fn(&c.d.g->pcie_gen, c.t, model_lo(1), model_hi(c.d.g->pcie_max_gen),
                              currLinkGen))
SIM_DEVICE_FN(nvmlDeviceGetCurrPcieLinkWidth, (nvmlDevice_t device, unsigned int *currLinkWidth),
              c.d.m ? MIG_OTHER_RC
                    : read_fn(&c.d.g->pcie_width, c.t, model_lo(1), model_hi(c.d.g->pcie_max_width),
                              currLinkWidth))
SIM_DEVICE_FN(nvmlDeviceGetMaxPcieLinkGeneration, (nvmlDevice_t device, unsigned int *maxLinkGen),
              c.d.m ? MIG_OTHER_RC : out_u(maxLinkGen, c.d.g->pcie_max_gen))
SIM_DEVICE_FN(nvmlDeviceGetMaxPcieLinkWidth, (nvmlDevice_t device, unsigned int *maxLinkWidth),
              c.d.m ? MIG_OTHER_RC : out_u(maxLinkWidth, c.d.g->pcie_max_width))

/* ---- ECC and fan ---- */

static nvmlReturn_t ecc_mode(struct sim_call *c, nvmlEnableState_t *cur, nvmlEnableState_t *pend)
{
    if (!cur || !pend)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.m || c->d.g->ecc_mode == SIM_ECC_UNSUPPORTED)
        return NVML_ERROR_NOT_SUPPORTED;
    *cur = c->d.g->ecc_mode;
    *pend = c->d.g->ecc_pending;
    return NVML_SUCCESS;
}

/* The counters exist only while ECC is enabled. */
static nvmlReturn_t ecc_errors(struct sim_call *c, int type, int counter, unsigned long long *n)
{
    if (!n || type < 0 || type > 1 || counter < 0 || counter > 1)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.m || c->d.g->ecc_mode != SIM_ECC_ON || !valfn_supported(&c->d.g->ecc[type][counter]))
        return NVML_ERROR_NOT_SUPPORTED;
    *n = model_sat_u64(valfn_eval(&c->d.g->ecc[type][counter], c->t));
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetEccMode,
              (nvmlDevice_t device, nvmlEnableState_t *current, nvmlEnableState_t *pending),
              ecc_mode(&c, current, pending))
SIM_DEVICE_FN(nvmlDeviceGetTotalEccErrors,
              (nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
               nvmlEccCounterType_t counterType, unsigned long long *eccCounts),
              ecc_errors(&c, errorType, counterType, eccCounts))

/* Passively cooled boards (the A100/H100/H200 modules) have no fan: 3. */
SIM_DEVICE_FN(nvmlDeviceGetFanSpeed, (nvmlDevice_t device, unsigned int *speed),
              c.d.m ? MIG_OTHER_RC : read_fn(&c.d.g->fan_pct, c.t, 0, model_hi(200), speed))
