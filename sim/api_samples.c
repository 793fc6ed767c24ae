/*
 * api_samples.c — sample buffers, per-process utilisation and field values
 * (docs/nvml-facts.md §5 and §8).
 *
 * Sample timestamps are SIM_EPOCH_US + simulated time, on a fixed grid per
 * sampling type, so two calls at the same simulated time return the same
 * samples and lastSeenTimeStamp filtering is exact.
 */
#include <math.h>
#include <string.h>

#include "model.h"

/* The driver keeps about 120 samples per type; power and clock samples come
 * every 20 ms (seed README: "~119개 샘플, 20ms 간격"), utilisation every 1/6 s. */
#define SAMPLE_BUF 120
#define FAST_PERIOD_US 20000LL
#define UTIL_PERIOD_US 166667LL

/* Process utilisation samples are taken once per second. */
#define PROC_PERIOD_US 1000000LL

static long long floor_div(long long a, long long b)
{
    long long q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static long long now_us(double t)
{
    return llround(t * 1e6);
}

struct sampler {
    const struct valfn *f;
    double scale, hi;
    long long period;
};

/*
 * What a sampling type measures on this GPU. Returns SUCCESS, or the code
 * for an unknown or unsupported type. *util says whether it is one of the
 * utilisation types NVIDIA documents as unsupported on MIG-enabled GPUs.
 */
static nvmlReturn_t sampler_for(const struct sim_call *c, int type, struct sampler *s, bool *util)
{
    static const struct valfn zero = {.kind = VF_CONST};
    const struct sim_gpu *g = c->d.g;
    *util = (type >= NVML_GPU_UTILIZATION_SAMPLES && type <= NVML_DEC_UTILIZATION_SAMPLES) ||
            type == NVML_JPG_UTILIZATION_SAMPLES || type == NVML_OFA_UTILIZATION_SAMPLES;
    s->scale = 1;
    s->hi = model_hi(100);
    s->period = *util ? UTIL_PERIOD_US : FAST_PERIOD_US;
    switch (type) {
    case NVML_TOTAL_POWER_SAMPLES: /* milliwatts, like GetPowerUsage: not utilisation */
        s->f = &g->power_w;
        s->scale = 1000;
        s->hi = MODEL_U32_MAX;
        return NVML_SUCCESS;
    case NVML_GPU_UTILIZATION_SAMPLES:
        s->f = &g->util_gpu;
        return NVML_SUCCESS;
    case NVML_MEMORY_UTILIZATION_SAMPLES:
        s->f = &g->util_mem;
        return NVML_SUCCESS;
    case NVML_ENC_UTILIZATION_SAMPLES:
        s->f = &g->enc_util;
        return NVML_SUCCESS;
    case NVML_DEC_UTILIZATION_SAMPLES:
        s->f = &g->dec_util;
        return NVML_SUCCESS;
    case NVML_PROCESSOR_CLK_SAMPLES:
        s->f = &g->clock[NVML_CLOCK_GRAPHICS];
        s->hi = model_hi(g->max_clock[NVML_CLOCK_GRAPHICS]);
        return NVML_SUCCESS;
    case NVML_MEMORY_CLK_SAMPLES:
        s->f = &g->clock[NVML_CLOCK_MEM];
        s->hi = model_hi(g->max_clock[NVML_CLOCK_MEM]);
        return NVML_SUCCESS;
    case NVML_MODULE_POWER_SAMPLES: /* Grace Hopper modules only */
        return NVML_ERROR_NOT_SUPPORTED;
    case NVML_JPG_UTILIZATION_SAMPLES:
    case NVML_OFA_UTILIZATION_SAMPLES:
        if (!sim_driver_at_least(550, 0, 0)) /* the 535 enum stops at 7 */
            return NVML_ERROR_INVALID_ARGUMENT;
        s->f = &zero;
        return NVML_SUCCESS;
    default:
        return NVML_ERROR_INVALID_ARGUMENT;
    }
}

static nvmlReturn_t get_samples(struct sim_call *c, int type, unsigned long long last_seen,
                                nvmlValueType_t *vtype, unsigned *count, nvmlSample_t *out)
{
    struct sampler s;
    bool util;
    nvmlReturn_t r;
    long long k_last, k_first;
    unsigned avail = 0, n, i;

    if (!vtype || !count)
        return NVML_ERROR_INVALID_ARGUMENT;
    /* 535.129.03 measured InvalidArg for GetSamples on MIG device handles. */
    if (c->d.m)
        return NVML_ERROR_INVALID_ARGUMENT;
    if ((r = sampler_for(c, type, &s, &util)) != NVML_SUCCESS)
        return r;
    if (!valfn_supported(s.f))
        return NVML_ERROR_NOT_SUPPORTED;

    k_last = floor_div(now_us(c->t), s.period);
    for (k_first = k_last; k_first > k_last - SAMPLE_BUF + 1; k_first--)
        if (SIM_EPOCH_US + (k_first - 1) * s.period <= last_seen)
            break;
    if (SIM_EPOCH_US + k_first * s.period > last_seen)
        avail = (unsigned)(k_last - k_first + 1);
    if (avail == 0)
        return NVML_ERROR_NOT_FOUND;
    *vtype = NVML_VALUE_TYPE_UNSIGNED_INT;
    if (!out) {
        *count = avail;
        return NVML_SUCCESS;
    }
    /* A MIG-enabled parent sizes utilisation buffers but will not fill
     * them: "size query OK (72개) -> data fetch NOT_SUPPORTED (ret=3)"
     * (seed README, 535.129.03); hdr: types 1-4 unsupported on MIG. */
    if (util && c->d.mig_on)
        return NVML_ERROR_NOT_SUPPORTED;
    n = *count < avail ? *count : avail;
    for (i = 0; i < n; i++) {
        long long k = k_last - (long long)n + 1 + i;
        double v = valfn_eval(s.f, (double)(k * s.period) / 1e6) * s.scale;
        out[i].timeStamp = SIM_EPOCH_US + (unsigned long long)(k * s.period);
        memset(&out[i].sampleValue, 0, sizeof(out[i].sampleValue));
        out[i].sampleValue.uiVal = (unsigned)llround(fmin(fmax(v, 0), s.hi));
    }
    *count = n;
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetSamples,
              (nvmlDevice_t device, nvmlSamplingType_t type, unsigned long long lastSeenTimeStamp,
               nvmlValueType_t *sampleValType, unsigned int *sampleCount, nvmlSample_t *samples),
              get_samples(&c, type, lastSeenTimeStamp, sampleValType, sampleCount, samples))

/* ---- per-process utilisation ---- */

struct proc_sample {
    unsigned pid;
    unsigned long long ts;
    unsigned sm, mem, enc, dec;
};

/* The latest per-second sample of each process newer than last_seen. */
static unsigned proc_samples(struct sim_call *c, unsigned long long last_seen,
                             struct proc_sample *out)
{
    struct model_proc procs[MODEL_MAX_PROCS];
    long long k = floor_div(now_us(c->t), PROC_PERIOD_US);
    double ts_t = (double)k * (PROC_PERIOD_US / 1e6);
    unsigned long long ts = SIM_EPOCH_US + (unsigned long long)(k * PROC_PERIOD_US);
    int n = model_procs(&c->d, c->t, 0, procs);
    unsigned m = 0;
    if (ts <= last_seen)
        return 0;
    for (int i = 0; i < n; i++) {
        const struct sim_proc *p = procs[i].src;
        if (!p || p->start > ts_t)
            continue; /* a test's process: no samples; or started after the last sampling instant */
        out[m].pid = p->pid;
        out[m].ts = ts;
        out[m].sm = model_uint(&p->sm_util, ts_t, 0, 100);
        out[m].mem = model_uint(&p->mem_util, ts_t, 0, 100);
        out[m].enc = model_uint(&p->enc_util, ts_t, 0, 100);
        out[m].dec = model_uint(&p->dec_util, ts_t, 0, 100);
        m++;
    }
    return m;
}

/*
 * 535.129.03, seed README: "size query OK -> fetch NotSupported" on the
 * MIG-enabled parent, "size query OK -> fetch InvalidArg (ret=2)" on a MIG
 * device. The size query (NULL buffer) answers INSUFFICIENT_SIZE with the
 * count, as nvtop and the Rust version rely on.
 */
static nvmlReturn_t process_util(struct sim_call *c, nvmlProcessUtilizationSample_t *out,
                                 unsigned *count, unsigned long long last_seen)
{
    struct proc_sample s[MODEL_MAX_PROCS];
    unsigned n;
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (c->d.mig_on) {
        struct model_proc procs[MODEL_MAX_PROCS];
        if (out)
            return c->d.m ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_NOT_SUPPORTED;
        *count = (unsigned)model_procs(&c->d, c->t, 0, procs);
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    n = proc_samples(c, last_seen, s);
    if (n == 0)
        return NVML_ERROR_NOT_FOUND; /* nothing newer than lastSeenTimeStamp */
    if (!out || *count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof(out[i]));
        out[i].pid = s[i].pid;
        out[i].timeStamp = s[i].ts;
        out[i].smUtil = s[i].sm;
        out[i].memUtil = s[i].mem;
        out[i].encUtil = s[i].enc;
        out[i].decUtil = s[i].dec;
    }
    *count = n;
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetProcessUtilization,
              (nvmlDevice_t device, nvmlProcessUtilizationSample_t *utilization,
               unsigned int *processSamplesCount, unsigned long long lastSeenTimeStamp),
              process_util(&c, utilization, processSamplesCount, lastSeenTimeStamp))

/* Driver 550+; "MIG not supported" on either kind of handle. */
static nvmlReturn_t processes_util_info(struct sim_call *c, nvmlProcessesUtilizationInfo_v1_t *info)
{
    struct proc_sample s[MODEL_MAX_PROCS];
    unsigned n;
    if (!info)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (info->version != nvmlProcessesUtilizationInfo_v1)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (c->d.mig_on)
        return NVML_ERROR_NOT_SUPPORTED;
    n = proc_samples(c, info->lastSeenTimeStamp, s);
    if (n == 0)
        return NVML_ERROR_NOT_FOUND;
    if (!info->procUtilArray || info->processSamplesCount < n) {
        info->processSamplesCount = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned i = 0; i < n; i++) {
        nvmlProcessUtilizationInfo_v1_t *o = &info->procUtilArray[i];
        memset(o, 0, sizeof(*o));
        o->timeStamp = s[i].ts;
        o->pid = s[i].pid;
        o->smUtil = s[i].sm;
        o->memUtil = s[i].mem;
        o->encUtil = s[i].enc;
        o->decUtil = s[i].dec;
    }
    info->processSamplesCount = n;
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetProcessesUtilizationInfo,
              (nvmlDevice_t device, nvmlProcessesUtilizationInfo_v1_t *procesesUtilInfo),
              processes_util_info(&c, procesesUtilInfo))

/* ---- field values ---- */

/* NVML_FI_MAX of the driver's header: ids at or above it are unknown to it.
 * The 12.9 and 13.0 headers (drivers 575, 580) end at the power-smoothing
 * fields (274), 13.1 (590) at 289, 13.2 and 13.3 (595 and later) at 303. */
static unsigned field_max(void)
{
    if (sim_driver_at_least(595, 0, 0))
        return 303;
    if (sim_driver_at_least(590, 0, 0))
        return 289;
    if (sim_driver_at_least(575, 0, 0))
        return 274;
    if (sim_driver_at_least(570, 0, 0))
        return 269;
    if (sim_driver_at_least(550, 0, 0))
        return 228;
    if (sim_driver_at_least(530, 0, 0))
        return 197;
    if (sim_driver_at_least(520, 0, 0))
        return 173;
    return 160;
}

static nvmlReturn_t put_u(nvmlFieldValue_t *v, unsigned x)
{
    v->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
    v->value.uiVal = x;
    return NVML_SUCCESS;
}

static nvmlReturn_t put_ull(nvmlFieldValue_t *v, unsigned long long x)
{
    v->valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
    v->value.ullVal = x;
    return NVML_SUCCESS;
}

/*
 * The time clocks were held down, ns, as nvmlDeviceGetViolationStatus
 * reports it (its deprecation note in nvml.h 13.x names these fields as its
 * replacement): the violation_*_s keys, answering what the call would.
 */
static nvmlReturn_t violation_field(struct sim_call *c, nvmlFieldValue_t *v, bool thermal)
{
    const struct sim_gpu *g = c->d.g;
    if (g->rc[SIM_HRC_VIOLATION])
        return g->rc[SIM_HRC_VIOLATION];
    if (!valfn_supported(&g->violation_s[thermal]))
        return NVML_ERROR_NOT_SUPPORTED;
    return put_ull(v, model_sat_u64(valfn_eval(&g->violation_s[thermal], c->t) * 1e9));
}

static nvmlReturn_t field(struct sim_call *c, nvmlFieldValue_t *v)
{
    const struct sim_gpu *g = c->d.g;
    unsigned id = v->fieldId;
    int ecc_type = -1, ecc_counter = 0;

    if (id == 0 || id >= field_max()) {
        /* 535.129.03 on a MIG device answered ids 203/204 "OK" with value 0
         * (seed README); the parent answered INVALID_ARGUMENT. */
        if (c->d.m && !sim_driver_at_least(536, 0, 0) && sim_driver_at_least(535, 0, 0))
            return put_ull(v, 0);
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (c->d.m)
        return NVML_ERROR_NOT_SUPPORTED; /* the fields below are GPU-wide */
    switch (id) {
    case NVML_FI_DEV_ECC_CURRENT:
    case NVML_FI_DEV_ECC_PENDING:
        if (g->ecc_mode == SIM_ECC_UNSUPPORTED)
            return NVML_ERROR_NOT_SUPPORTED;
        return put_u(v, (unsigned)(id == NVML_FI_DEV_ECC_CURRENT ? g->ecc_mode : g->ecc_pending));
    case NVML_FI_DEV_ECC_SBE_VOL_TOTAL:
        ecc_type = 0;
        break;
    case NVML_FI_DEV_ECC_DBE_VOL_TOTAL:
        ecc_type = 1;
        break;
    case NVML_FI_DEV_ECC_SBE_AGG_TOTAL:
        ecc_type = 0;
        ecc_counter = 1;
        if (g->rc[SIM_HRC_ECC_AGG])
            return g->rc[SIM_HRC_ECC_AGG];
        break;
    case NVML_FI_DEV_ECC_DBE_AGG_TOTAL:
        ecc_type = 1;
        ecc_counter = 1;
        if (g->rc[SIM_HRC_ECC_AGG])
            return g->rc[SIM_HRC_ECC_AGG];
        break;
    case NVML_FI_DEV_MEMORY_TEMP:
        if (g->rc[SIM_HRC_MEM_TEMP])
            return g->rc[SIM_HRC_MEM_TEMP];
        if (!valfn_supported(&g->mem_temp_c))
            return NVML_ERROR_NOT_SUPPORTED;
        return put_u(v, model_uint(&g->mem_temp_c, c->t, 0, model_hi(200)));
    case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX:
    case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX: {
        /* KiB since init; scopeId a link, or UINT_MAX for every link (hdr) */
        unsigned long long kib;
        if (g->rc[SIM_HRC_NVLINK_TP])
            return g->rc[SIM_HRC_NVLINK_TP];
        if (g->nvlinks == 0)
            return NVML_ERROR_NOT_SUPPORTED;
        kib = model_nvlink_kib(g, id == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, c->t);
        if (v->scopeId == NVML_FI_SCOPE_ALL_LINKS)
            return put_ull(v, kib);
        if (v->scopeId >= (unsigned)g->nvlinks)
            return NVML_ERROR_INVALID_ARGUMENT;
        return put_ull(v, model_nvlink_share(kib, v->scopeId, model_nvlinks_up(g, c->t)));
    }
    case NVML_FI_DEV_PERF_POLICY_POWER:   /* = CLOCKS_EVENT_REASON_SW_POWER_CAP */
    case NVML_FI_DEV_PERF_POLICY_THERMAL: /* ViolationStatus' policies, ns */
        return violation_field(c, v, id == NVML_FI_DEV_PERF_POLICY_THERMAL);
    case NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN_R575: /* 251 in 575 and 580 */
        if (!sim_driver_at_least(575, 0, 0) || sim_driver_at_least(590, 0, 0))
            return NVML_ERROR_NOT_SUPPORTED; /* power smoothing from 590: not modelled */
        return violation_field(c, v, true);
    case NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN: /* 269 from 590 */
        if (!sim_driver_at_least(590, 0, 0))
            return NVML_ERROR_NOT_SUPPORTED; /* 580: a power-smoothing field */
        return violation_field(c, v, true);
    case NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION:
        if (g->arch < 5 || g->energy_j.kind == VF_NONE ||
            (g->energy_j.kind == VF_UNSET && !valfn_supported(&g->power_w)))
            return NVML_ERROR_NOT_SUPPORTED;
        return put_ull(v, model_energy_mj(g, c->t));
    case NVML_FI_DEV_POWER_AVERAGE: /* Ampere except GA100, and later */
        if (!g->power_average || !valfn_supported(&g->power_w))
            return NVML_ERROR_NOT_SUPPORTED;
        return put_u(v, model_power_usage_mw(g, c->t));
    case NVML_FI_DEV_POWER_INSTANT:
        if (!valfn_supported(&g->power_w))
            return NVML_ERROR_NOT_SUPPORTED;
        return put_u(v, model_sat_u32(model_power_w(g, c->t) * 1000.0));
    case NVML_FI_DEV_POWER_MIN_LIMIT:
        return put_u(v, g->power_min_mw);
    case NVML_FI_DEV_POWER_MAX_LIMIT:
        return put_u(v, g->power_max_mw);
    case NVML_FI_DEV_POWER_DEFAULT_LIMIT:
        return put_u(v, g->power_default_mw);
    case NVML_FI_DEV_POWER_CURRENT_LIMIT:
        return put_u(v, g->power_limit_mw);
    case NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT:
        return put_u(v, g->temp_shutdown);
    case NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT:
        return put_u(v, g->temp_slowdown);
    case NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT:
        return put_u(v, g->temp_mem_max);
    case NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT:
        return put_u(v, g->temp_gpu_max);
    default:
        return NVML_ERROR_NOT_SUPPORTED;
    }
    if (g->ecc_mode != SIM_ECC_ON || !valfn_supported(&g->ecc[ecc_type][ecc_counter]))
        return NVML_ERROR_NOT_SUPPORTED;
    return put_ull(v, model_sat_u64(valfn_eval(&g->ecc[ecc_type][ecc_counter], c->t)));
}

/* Returns SUCCESS if any entry was filled; otherwise the first entry's code
 * (so a lone unknown id reads as the 535 table's "FAIL (ret=2)"). */
static nvmlReturn_t field_values(struct sim_call *c, int count, nvmlFieldValue_t *values)
{
    nvmlReturn_t first = NVML_SUCCESS;
    bool any = false;
    if (count <= 0 || !values)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (int i = 0; i < count; i++) {
        nvmlFieldValue_t *v = &values[i];
        memset(&v->value, 0, sizeof(v->value));
        v->timestamp = (long long)sim_timestamp_us(c->t);
        v->latencyUsec = 0;
        v->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
        v->nvmlReturn = field(c, v);
        if (v->nvmlReturn == NVML_SUCCESS)
            any = true;
        else if (i == 0)
            first = v->nvmlReturn;
    }
    return any ? NVML_SUCCESS : first;
}

SIM_DEVICE_FN(nvmlDeviceGetFieldValues,
              (nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values),
              field_values(&c, valuesCount, values))
