/*
 * api_gpm.c — GPU Performance Monitoring (docs/nvml-facts.md §9).
 *
 * A GPM sample records which entity it was taken on (a whole GPU, a GPU
 * instance through nvmlGpmMigSampleGet, or a compute instance through a MIG
 * handle on drivers 595+) and the simulated time. nvmlGpmMetricsGet then
 * reports, per metric, the average of the scenario's rate function over the
 * two samples' interval, computed in closed form from valfn_integral, so the
 * value does not depend on how often the caller samples. Aggregates follow
 * the hardware: a GPU instance is the slice-weighted mean of its compute
 * instances, a MIG-enabled GPU the slice-weighted mean of its GPU instances
 * with empty slices idle; PCIe and NVLink rates exist only per GPU (DCGM's
 * granularity for them), computed in gpm_rates.c, which the simulated DCGM
 * shares.
 *
 * The scenario switch gpm_corrupts_session reproduces a field report on
 * driver 535.129.03: once a process has taken a GPM sample, its NVML memory
 * reads fail with IN_USE for good (even across shutdown and init). That is
 * why the monitor samples GPM in a helper process; other processes load
 * their own copy of this library and are unaffected.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpm_rates.h"
#include "model.h"

#define SAMPLE_MAGIC 0x47504d53u /* "GPMS" */

struct nvmlGpmSample_st {
    unsigned magic;
    struct nvmlGpmSample_st *next; /* the registry of live samples */
    bool taken;                    /* a SampleGet has filled it */
    unsigned long long session;    /* sim_session() when taken: t is only comparable within one */
    enum gpm_entity kind;
    int gpu;
    long gi;  /* GPM_GI, GPM_CI */
    int mig;  /* GPM_CI: the compute instance, an index into sim_scn->migs */
    double t; /* simulated time of the sample */
};

/* Every sample allocated and not yet freed, so that a stale or foreign
 * pointer (a double free) is recognised without being dereferenced. Read
 * and written under the simulator's lock (every call runs in sim_enter). */
static struct nvmlGpmSample_st *samples;

/* Set for the rest of the process by the first GPM sample taken under a
 * scenario with gpm_corrupts_session. */
static bool corrupted;

bool gpm_session_corrupted(void)
{
    return corrupted;
}

static bool sample_live(const struct nvmlGpmSample_st *s)
{
    for (const struct nvmlGpmSample_st *p = samples; p; p = p->next)
        if (p == s)
            return s->magic == SAMPLE_MAGIC;
    return false;
}

static bool gpm_capable(const struct sim_gpu *g)
{
    return g->arch >= NVML_DEVICE_ARCH_HOPPER && g->arch != NVML_DEVICE_ARCH_UNKNOWN;
}

/* ---- the support query ---- */

/* Hopper and later. Docs of driver 595+ accept a MIG handle too; older
 * drivers were called that way by the Rust version without an error, so a
 * MIG handle answers for its parent. */
static nvmlReturn_t gpm_support(struct sim_call *c, nvmlGpmSupport_t *s)
{
    if (!s)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (s->version != NVML_GPM_SUPPORT_VERSION)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    s->isSupportedDevice = gpm_capable(c->d.g);
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlGpmQueryDeviceSupport, (nvmlDevice_t device, nvmlGpmSupport_t *gpmSupport),
              gpm_support(&c, gpmSupport))

/* ---- samples ---- */

/* The sample bookkeeping, for tests of a caller's frees: with
 * MIGMON_SIM_GPM_STATS set, after every alloc and free the file it names
 * holds one line "live L allocs A frees F bad B" (bad: frees of a pointer
 * that is not a live sample, such as a second free). A GPM caller runs in
 * its own process (the monitor's helper), so a file is how a test sees it. */
static unsigned long n_live, n_allocs, n_frees, n_bad;

static void stats_write(void)
{
    const char *path = getenv("MIGMON_SIM_GPM_STATS");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "we");
    if (!f)
        return;
    fprintf(f, "live %lu allocs %lu frees %lu bad %lu\n", n_live, n_allocs, n_frees, n_bad);
    fclose(f);
}

static nvmlReturn_t sample_alloc(nvmlGpmSample_t *out)
{
    struct nvmlGpmSample_st *s;
    if (!out)
        return NVML_ERROR_INVALID_ARGUMENT;
    s = calloc(1, sizeof(*s));
    if (!s)
        return NVML_ERROR_MEMORY;
    s->magic = SAMPLE_MAGIC;
    s->next = samples;
    samples = s;
    *out = s;
    n_live++;
    n_allocs++;
    stats_write();
    return NVML_SUCCESS;
}

static nvmlReturn_t sample_free(nvmlGpmSample_t s)
{
    struct nvmlGpmSample_st **pp = &samples;
    while (*pp && *pp != s)
        pp = &(*pp)->next;
    if (!s || !*pp || s->magic != SAMPLE_MAGIC) {
        n_bad++;
        stats_write();
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *pp = s->next;
    s->magic = 0; /* a caller that kept the pointer cannot pass it off as live */
    free(s);
    n_live--;
    n_frees++;
    stats_write();
    return NVML_SUCCESS;
}

SIM_SYSTEM_FN(nvmlGpmSampleAlloc, (nvmlGpmSample_t *gpmSample), sample_alloc(gpmSample))
SIM_SYSTEM_FN(nvmlGpmSampleFree, (nvmlGpmSample_t gpmSample), sample_free(gpmSample))

static nvmlReturn_t record(struct sim_call *c, nvmlGpmSample_t s, enum gpm_entity kind, long gi,
                           int mig)
{
    s->taken = true;
    s->session = sim_session();
    s->kind = kind;
    s->gpu = c->d.gpu;
    s->gi = gi;
    s->mig = mig;
    s->t = c->t;
    if (sim_scn->sys.gpm_corrupts_session)
        corrupted = true;
    return NVML_SUCCESS;
}

/* A physical GPU: the whole GPU, MIG on or off. A MIG handle: its compute
 * instance, which the docs of NVML 13.2 (driver 595) are the first to allow
 * ("supports the device handle and MIG device handle"). */
static nvmlReturn_t sample_get(struct sim_call *c, nvmlGpmSample_t s)
{
    if (!sample_live(s))
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!gpm_capable(c->d.g))
        return NVML_ERROR_NOT_SUPPORTED;
    if (!c->d.m)
        return record(c, s, GPM_GPU, -1, -1);
    if (!sim_driver_at_least(595, 0, 0))
        return NVML_ERROR_NOT_SUPPORTED;
    return record(c, s, GPM_CI, c->d.m->gi, (int)(c->d.m - sim_scn->migs));
}

SIM_DEVICE_FN(nvmlGpmSampleGet, (nvmlDevice_t device, nvmlGpmSample_t gpmSample),
              sample_get(&c, gpmSample))

/* One GPU instance, through its parent: the GI exists while any of its
 * compute instances (MIG devices) does. */
static nvmlReturn_t mig_sample_get(struct sim_call *c, unsigned gi, nvmlGpmSample_t s)
{
    if (c->d.m || !sample_live(s))
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!gpm_capable(c->d.g) || !c->d.mig_on)
        return NVML_ERROR_NOT_SUPPORTED;
    for (int slot = 0; slot < SIM_MAX_MIG_SLOTS; slot++) {
        const struct sim_mig *m = sim_mig_live(c->d.gpu, slot, c->t);
        if (m && m->gi == (long)gi)
            return record(c, s, GPM_GI, (long)gi, -1);
    }
    return NVML_ERROR_NOT_FOUND;
}

SIM_DEVICE_FN(nvmlGpmMigSampleGet,
              (nvmlDevice_t device, unsigned int gpuInstanceId, nvmlGpmSample_t gpmSample),
              mig_sample_get(&c, gpuInstanceId, gpmSample))

/* ---- metrics ---- */

static const struct metric_def {
    unsigned id;
    int rate; /* enum sim_gpm_rate */
    const char *name, *desc, *unit;
} metric_defs[] = {
    {NVML_GPM_METRIC_GRAPHICS_UTIL, SIM_GPM_GRAPHICS, "GRAPHICS_UTIL",
     "Percentage of time any compute/graphics app was active on the GPU", "%"},
    {NVML_GPM_METRIC_SM_UTIL, SIM_GPM_SM, "SM_UTIL", "Percentage of SMs that were busy", "%"},
    {NVML_GPM_METRIC_SM_OCCUPANCY, SIM_GPM_SM_OCCUPANCY, "SM_OCCUPANCY",
     "Percentage of warps that were active vs theoretical maximum", "%"},
    {NVML_GPM_METRIC_INTEGER_UTIL, SIM_GPM_INTEGER, "INTEGER_UTIL",
     "Percentage of time the GPU's SMs were doing integer operations", "%"},
    {NVML_GPM_METRIC_ANY_TENSOR_UTIL, SIM_GPM_TENSOR, "ANY_TENSOR_UTIL",
     "Percentage of time the GPU's SMs were doing ANY tensor operations", "%"},
    {NVML_GPM_METRIC_DFMA_TENSOR_UTIL, SIM_GPM_DFMA_TENSOR, "DFMA_TENSOR_UTIL",
     "Percentage of time the GPU's SMs were doing DFMA tensor operations", "%"},
    {NVML_GPM_METRIC_HMMA_TENSOR_UTIL, SIM_GPM_HMMA_TENSOR, "HMMA_TENSOR_UTIL",
     "Percentage of time the GPU's SMs were doing HMMA tensor operations", "%"},
    {NVML_GPM_METRIC_IMMA_TENSOR_UTIL, SIM_GPM_IMMA_TENSOR, "IMMA_TENSOR_UTIL",
     "Percentage of time the GPU's SMs were doing IMMA tensor operations", "%"},
    {NVML_GPM_METRIC_DRAM_BW_UTIL, SIM_GPM_DRAM_BW, "DRAM_BW_UTIL",
     "Percentage of DRAM bw used vs theoretical maximum", "%"},
    {NVML_GPM_METRIC_FP64_UTIL, SIM_GPM_FP64, "FP64_UTIL",
     "Percentage of time the GPU's SMs were doing non-tensor FP64 math", "%"},
    {NVML_GPM_METRIC_FP32_UTIL, SIM_GPM_FP32, "FP32_UTIL",
     "Percentage of time the GPU's SMs were doing non-tensor FP32 math", "%"},
    {NVML_GPM_METRIC_FP16_UTIL, SIM_GPM_FP16, "FP16_UTIL",
     "Percentage of time the GPU's SMs were doing non-tensor FP16 math", "%"},
    {NVML_GPM_METRIC_PCIE_TX_PER_SEC, SIM_GPM_PCIE_TX, "PCIE_TX_PER_SEC",
     "PCIe traffic from this GPU in MiB/sec", "MiB/s"},
    {NVML_GPM_METRIC_PCIE_RX_PER_SEC, SIM_GPM_PCIE_RX, "PCIE_RX_PER_SEC",
     "PCIe traffic to this GPU in MiB/sec", "MiB/s"},
    {NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, SIM_GPM_NVLINK_RX, "NVLINK_TOTAL_RX_PER_SEC",
     "NvLink read bandwidth for all links in MiB/sec", "MiB/s"},
    {NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, SIM_GPM_NVLINK_TX, "NVLINK_TOTAL_TX_PER_SEC",
     "NvLink write bandwidth for all links in MiB/sec", "MiB/s"},
};

/* NVML_GPM_METRIC_MAX of the scenario's driver: ids at or past it are
 * invalid, and so is a request for more metrics than its array holds. */
static unsigned metric_max(void)
{
    if (sim_driver_at_least(595, 0, 0))
        return NVML_GPM_METRIC_MAX_R595;
    if (sim_driver_at_least(575, 0, 0))
        return NVML_GPM_METRIC_MAX_R590;
    return NVML_GPM_METRIC_MAX_R570;
}

static void metric_fill(nvmlGpmMetric_t *out, const struct nvmlGpmSample_st *s1,
                        const struct nvmlGpmSample_st *s2, unsigned max)
{
    const struct metric_def *d = NULL;
    out->value = 0;
    out->metricInfo.shortName = out->metricInfo.longName = out->metricInfo.unit = NULL;
    if (out->metricId >= max) {
        out->nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
        return;
    }
    for (size_t i = 0; i < sizeof(metric_defs) / sizeof(metric_defs[0]) && !d; i++)
        if (metric_defs[i].id == out->metricId)
            d = &metric_defs[i];
    if (!d) {
        out->nvmlReturn = NVML_ERROR_NOT_SUPPORTED; /* a metric this simulator does not model */
        return;
    }
    /* The strings belong to the library; nvml.h declares them char *. */
    out->metricInfo.shortName = (char *)d->name;
    out->metricInfo.longName = (char *)d->desc;
    out->metricInfo.unit = (char *)d->unit;
    struct gpm_target e = {s1->kind, s1->gpu, s1->gi, s1->mig};
    out->nvmlReturn = gpm_rate_mean(&e, d->rate, s1->t, s2->t, &out->value);
}

static bool same_entity(const struct nvmlGpmSample_st *a, const struct nvmlGpmSample_st *b)
{
    return a->kind == b->kind && a->gpu == b->gpu && a->gi == b->gi && a->mig == b->mig;
}

/*
 * Fills metrics[0 .. numMetrics-1] and nothing past them: the caller's
 * array may be shorter than this driver's NVML_GPM_METRIC_MAX. The call
 * succeeds when its arguments are valid, whatever each metric's nvmlReturn.
 * Both samples must be taken, in this session, on the same entity, sample2
 * no earlier than sample1.
 */
static nvmlReturn_t metrics_get(nvmlGpmMetricsGet_t *mg)
{
    const struct nvmlGpmSample_st *s1, *s2;
    unsigned max = metric_max();
    if (!mg)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (mg->version != NVML_GPM_METRICS_GET_VERSION)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (mg->numMetrics > max)
        return NVML_ERROR_INVALID_ARGUMENT;
    s1 = mg->sample1;
    s2 = mg->sample2;
    if (!sample_live(s1) || !sample_live(s2) || !s1->taken || !s2->taken)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (s1->session != sim_session() || s2->session != sim_session() || !same_entity(s1, s2) ||
        s2->t < s1->t)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < mg->numMetrics; i++)
        metric_fill(&mg->metrics[i], s1, s2, max);
    return NVML_SUCCESS;
}

SIM_SYSTEM_FN(nvmlGpmMetricsGet, (nvmlGpmMetricsGet_t *metricsGet), metrics_get(metricsGet))
