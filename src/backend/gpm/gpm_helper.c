/*
 * gpm_helper.c — the GPM helper process: its own NVML session, GPM samples
 * of every GPU, GPU instance and (driver 595+) compute instance, metrics
 * between consecutive samples, sent as records over stdout (gpm.h).
 *
 * One round per interval on a fixed grid (after a first round 100 ms before
 * it: priming): every entity of a GPU is sampled back to back so their
 * windows line up; metrics come from the previous
 * round's sample and this one's (the interval is at least 100 ms, as NVIDIA
 * asks). Each sample object is allocated once and freed exactly once, also
 * when the MIG layout changes. Before every NVML call that can stall, a
 * progress record names the GPU and call, so the monitor can say where a
 * hung helper was stuck.
 *
 * A memory-read canary on each GPU detects a driver that corrupts the
 * session after GPM calls (the seed's 535.129.03 report): a read that worked
 * before the first GPM call and fails afterwards is reported; in auto mode
 * GPM then stops on that GPU (and the helper, with no GPU left to sample,
 * says it is done and leaves). A canary that passes after the first round
 * and again GPM_PROOF_ROUNDS rounds later proves the GPU (GPM_GPU_PROVEN):
 * the monitor may then sample it in its own session.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/gpm/gpm.h"
#include "backend/nvml/nvml_load.h"
#include "core/clock.h"

const unsigned gpm_metric_nvml_id[GPM_NMETRICS] = {
    [GPM_GRAPHICS] = NVML_GPM_METRIC_GRAPHICS_UTIL,
    [GPM_SM] = NVML_GPM_METRIC_SM_UTIL,
    [GPM_SM_OCC] = NVML_GPM_METRIC_SM_OCCUPANCY,
    [GPM_INT] = NVML_GPM_METRIC_INTEGER_UTIL,
    [GPM_TENSOR] = NVML_GPM_METRIC_ANY_TENSOR_UTIL,
    [GPM_DFMA] = NVML_GPM_METRIC_DFMA_TENSOR_UTIL,
    [GPM_HMMA] = NVML_GPM_METRIC_HMMA_TENSOR_UTIL,
    [GPM_IMMA] = NVML_GPM_METRIC_IMMA_TENSOR_UTIL,
    [GPM_DRAM] = NVML_GPM_METRIC_DRAM_BW_UTIL,
    [GPM_FP64] = NVML_GPM_METRIC_FP64_UTIL,
    [GPM_FP32] = NVML_GPM_METRIC_FP32_UTIL,
    [GPM_FP16] = NVML_GPM_METRIC_FP16_UTIL,
    [GPM_PCIE_TX] = NVML_GPM_METRIC_PCIE_TX_PER_SEC,
    [GPM_PCIE_RX] = NVML_GPM_METRIC_PCIE_RX_PER_SEC,
    [GPM_NVLINK_RX] = NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC,
    [GPM_NVLINK_TX] = NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC,
};

/* Re-walk the MIG slots this often, and at once when a GI sample says the
 * instance is gone. */
#define ENUM_PERIOD_NS (5ull * 1000000000ull)
/* Memory canary: right after the first GPM round, then every N rounds (the
 * second one passing proves the GPU). */
#define CANARY_EVERY GPM_PROOF_ROUNDS
#define MAX_ENTITIES 64 /* whole GPU + 7 GIs + up to 56 CIs is far below */
/* The second round's distance from the first (priming; gpm_helper_main). */
#define GPM_PRIME_NS (100ull * 1000000ull)

struct ent {
    enum gpm_scope scope;
    int gi_id;
    int nci;
    char mig_uuid[GPM_UUID_LEN];
    nvmlDevice_t mig_h;
    nvmlGpmSample_t s[2]; /* owned; freed exactly once in ent_free */
    int cur;              /* s[cur] receives the next sample */
    bool have_prev;       /* s[!cur] holds the previous round's sample */
    uint64_t t_prev;
    bool seen;            /* still present after re-enumeration */
};

struct hgpu {
    unsigned idx;
    nvmlDevice_t h;
    char uuid[GPM_UUID_LEN];
    bool active;       /* GPM sampled on this GPU */
    bool mig;
    int ci_sampling;   /* nvmlGpmSampleGet on MIG handles: -1 untried, 0 no, 1 yes */
    bool need_enum;
    uint64_t last_enum;
    struct ent ents[MAX_ENTITIES];
    size_t nents;
    nvmlDevice_t canary_h; /* a handle whose memory read worked before GPM */
    bool canary_ok;
    bool degraded_sent;
    bool proven_sent;
    unsigned rounds;
};

struct helper {
    struct nvml_lib lib;
    const struct nvml_fns *f;
    bool keep_degraded; /* --gpm on */
    struct hgpu *gpus;
    size_t ngpus;
    nvmlGpmMetricsGet_t *mg; /* one request, reused (13 KB) */
};

static void send_rec(void *rec, enum gpm_rec_type type, size_t len)
{
    helper_send(GPM_PROTO_MAGIC, rec, (uint8_t)type, len);
}

static void progress(unsigned gpu, enum gpm_call call)
{
    struct gpm_rec_progress r;
    memset(&r, 0, sizeof(r));
    r.gpu = (uint16_t)gpu;
    r.call = (uint16_t)call;
    send_rec(&r, GPM_REC_PROGRESS, sizeof(r));
}

static void send_gpu(const struct hgpu *g, enum gpm_gpu_state st, nvmlReturn_t rc,
                     unsigned arch, enum gpm_call call)
{
    struct gpm_rec_gpu r;
    memset(&r, 0, sizeof(r));
    r.gpu = (uint16_t)g->idx;
    r.state = (uint16_t)st;
    r.rc = rc;
    r.arch = arch;
    r.call = call;
    snprintf(r.uuid, sizeof(r.uuid), "%s", g->uuid);
    send_rec(&r, GPM_REC_GPU, sizeof(r));
}

static void ent_free(struct helper *hp, struct ent *e)
{
    for (int k = 0; k < 2; k++) {
        if (e->s[k])
            hp->f->gpm_sample_free(e->s[k]);
        e->s[k] = NULL;
    }
}

static bool same_ent(const struct ent *a, const struct ent *b)
{
    return a->scope == b->scope && a->gi_id == b->gi_id &&
           (a->scope != GPM_SCOPE_CI || strcmp(a->mig_uuid, b->mig_uuid) == 0);
}

/* Adds (or keeps, with its samples) an entity in the new list. */
static void ent_add(struct helper *hp, struct hgpu *g, struct ent *nw, size_t *n,
                    const struct ent *want)
{
    if (*n >= MAX_ENTITIES)
        return;
    for (size_t i = 0; i < g->nents; i++) {
        struct ent *old = &g->ents[i];
        if (!old->seen && same_ent(old, want)) {
            old->seen = true;
            nw[*n] = *old;
            nw[*n].nci = want->nci;
            nw[*n].mig_h = want->mig_h;
            (*n)++;
            return;
        }
    }
    struct ent e = *want;
    e.cur = 0;
    e.have_prev = false;
    e.s[0] = e.s[1] = NULL;
    if (hp->f->gpm_sample_alloc(&e.s[0]) != NVML_SUCCESS ||
        hp->f->gpm_sample_alloc(&e.s[1]) != NVML_SUCCESS) {
        ent_free(hp, &e);
        return;
    }
    nw[(*n)++] = e;
}

/* The GPU's entities: the whole GPU, then (MIG on) each GPU instance that
 * has a compute instance, then each compute instance where the driver
 * samples MIG handles. */
static void enumerate(struct helper *hp, struct hgpu *g)
{
    const struct nvml_fns *f = hp->f;
    struct ent nw[MAX_ENTITIES];
    size_t n = 0;
    memset(nw, 0, sizeof(nw));
    for (size_t i = 0; i < g->nents; i++)
        g->ents[i].seen = false;

    progress(g->idx, GPM_CALL_INIT);
    unsigned cur = 0, pend = 0;
    g->mig = f->mig_mode && f->mig_mode(g->h, &cur, &pend) == NVML_SUCCESS &&
             cur == NVML_DEVICE_MIG_ENABLE;
    struct ent want;
    memset(&want, 0, sizeof(want));
    want.scope = GPM_SCOPE_GPU;
    want.gi_id = -1;
    ent_add(hp, g, nw, &n, &want);

    unsigned max = 0;
    if (g->mig && f->max_mig_count && f->mig_handle_by_index &&
        f->max_mig_count(g->h, &max) == NVML_SUCCESS) {
        int gis[MAX_ENTITIES], ncis[MAX_ENTITIES];
        size_t ngis = 0;
        struct ent cis[MAX_ENTITIES];
        size_t ncis_total = 0;
        for (unsigned slot = 0; slot < max && slot < MAX_ENTITIES; slot++) {
            nvmlDevice_t mh = NULL;
            unsigned gi = 0;
            if (f->mig_handle_by_index(g->h, slot, &mh) != NVML_SUCCESS || !f->gpu_instance_id ||
                f->gpu_instance_id(mh, &gi) != NVML_SUCCESS)
                continue;
            size_t k = 0;
            while (k < ngis && gis[k] != (int)gi)
                k++;
            if (k == ngis) {
                gis[ngis] = (int)gi;
                ncis[ngis++] = 0;
            }
            ncis[k]++;
            struct ent ci;
            memset(&ci, 0, sizeof(ci));
            ci.scope = GPM_SCOPE_CI;
            ci.gi_id = (int)gi;
            ci.mig_h = mh;
            if (f->uuid && f->uuid(mh, ci.mig_uuid, sizeof(ci.mig_uuid)) == NVML_SUCCESS) {
                ci.mig_uuid[sizeof(ci.mig_uuid) - 1] = '\0';
                cis[ncis_total++] = ci;
            }
        }
        if (f->gpm_mig_sample_get) {
            for (size_t k = 0; k < ngis; k++) {
                memset(&want, 0, sizeof(want));
                want.scope = GPM_SCOPE_GI;
                want.gi_id = gis[k];
                want.nci = ncis[k];
                ent_add(hp, g, nw, &n, &want);
            }
        }
        if (g->ci_sampling != 0) {
            for (size_t k = 0; k < ncis_total; k++) {
                size_t gk = 0;
                while (gk < ngis && gis[gk] != cis[k].gi_id)
                    gk++;
                cis[k].nci = gk < ngis ? ncis[gk] : 1;
                ent_add(hp, g, nw, &n, &cis[k]);
            }
        }
    }
    for (size_t i = 0; i < g->nents; i++) {
        if (!g->ents[i].seen)
            ent_free(hp, &g->ents[i]);
    }
    memcpy(g->ents, nw, n * sizeof(nw[0]));
    g->nents = n;
    g->need_enum = false;
    g->last_enum = clock_mono_ns();
}

static nvmlReturn_t read_memory(struct helper *hp, nvmlDevice_t h)
{
    if (hp->f->memory_v2) {
        nvmlMemory_v2_t m;
        memset(&m, 0, sizeof(m));
        m.version = nvmlMemory_v2;
        nvmlReturn_t rc = hp->f->memory_v2(h, &m);
        if (rc != NVML_ERROR_ARGUMENT_VERSION_MISMATCH && rc != NVML_ERROR_FUNCTION_NOT_FOUND)
            return rc;
    }
    if (hp->f->memory_v1) {
        nvmlMemory_t m;
        return hp->f->memory_v1(h, &m);
    }
    return NVML_ERROR_FUNCTION_NOT_FOUND;
}

/* Before any GPM call: find a handle whose memory read works (the parent,
 * or, for an unprivileged MIG-enabled parent, a MIG device). It is kept
 * across the re-walks of the MIG slots: the parent of an unprivileged MIG
 * GPU answers NO_PERMISSION, before GPM calls as after, and is no canary. */
static void canary_baseline(struct helper *hp, struct hgpu *g)
{
    g->canary_ok = false;
    g->canary_h = NULL;
    progress(g->idx, GPM_CALL_MEMORY);
    if (read_memory(hp, g->h) == NVML_SUCCESS) {
        g->canary_h = g->h;
        g->canary_ok = true;
        return;
    }
    for (size_t i = 0; i < g->nents; i++) {
        if (g->ents[i].scope == GPM_SCOPE_CI && g->ents[i].mig_h &&
            read_memory(hp, g->ents[i].mig_h) == NVML_SUCCESS) {
            g->canary_h = g->ents[i].mig_h;
            g->canary_ok = true;
            return;
        }
    }
}

static void canary_check(struct helper *hp, struct hgpu *g)
{
    if (!g->canary_ok || g->degraded_sent)
        return;
    progress(g->idx, GPM_CALL_MEMORY);
    nvmlReturn_t rc = read_memory(hp, g->canary_h);
    if (rc == NVML_SUCCESS && g->rounds >= CANARY_EVERY && !g->proven_sent) {
        /* a read after the first GPM round and one ten rounds on */
        g->proven_sent = true;
        send_gpu(g, GPM_GPU_PROVEN, NVML_SUCCESS, 0, GPM_CALL_MEMORY);
    }
    if (rc == NVML_ERROR_INVALID_ARGUMENT || rc == NVML_ERROR_NOT_FOUND) {
        /* A MIG handle that went away with a reconfiguration: another
         * handle whose read works now (after GPM calls) takes its place;
         * with none, nothing is checked any more. */
        canary_baseline(hp, g);
        return;
    }
    if (rc == NVML_SUCCESS)
        return;
    g->degraded_sent = true;
    send_gpu(g, GPM_GPU_DEGRADED, rc, 0, GPM_CALL_MEMORY);
    if (!hp->keep_degraded) {
        g->active = false;
        for (size_t i = 0; i < g->nents; i++)
            ent_free(hp, &g->ents[i]);
        g->nents = 0;
    }
}

static void send_values(struct helper *hp, const struct hgpu *g, const struct ent *e,
                        double span_s)
{
    struct gpm_rec_values r;
    memset(&r, 0, sizeof(r));
    r.gpu = (uint16_t)g->idx;
    r.scope = (uint8_t)e->scope;
    r.nci = (uint8_t)(e->nci > 255 ? 255 : e->nci);
    r.gi_id = e->gi_id;
    snprintf(r.gpu_uuid, sizeof(r.gpu_uuid), "%s", g->uuid);
    if (e->scope == GPM_SCOPE_CI)
        snprintf(r.mig_uuid, sizeof(r.mig_uuid), "%s", e->mig_uuid);
    r.span_s = span_s;
    nvmlGpmMetricsGet_t *mg = hp->mg;
    for (int k = 0; k < GPM_NMETRICS; k++) {
        r.v[k] = 0;
        r.rc[k] = mg->metrics[k].nvmlReturn;
        if (mg->metrics[k].nvmlReturn == NVML_SUCCESS)
            r.v[k] = mg->metrics[k].value;
    }
    send_rec(&r, GPM_REC_VALUES, sizeof(r));
}

/* Sample one entity; metrics against its previous sample. Returns true
 * when values were sent. */
static bool sample_entity(struct helper *hp, struct hgpu *g, struct ent *e)
{
    const struct nvml_fns *f = hp->f;
    nvmlReturn_t rc;
    if (e->scope == GPM_SCOPE_GI) {
        progress(g->idx, GPM_CALL_MIG_SAMPLE);
        rc = f->gpm_mig_sample_get(g->h, (unsigned)e->gi_id, e->s[e->cur]);
    } else {
        progress(g->idx, GPM_CALL_SAMPLE);
        rc = f->gpm_sample_get(e->scope == GPM_SCOPE_CI ? e->mig_h : g->h, e->s[e->cur]);
    }
    uint64_t now = clock_mono_ns();
    if (rc != NVML_SUCCESS) {
        e->have_prev = false;
        if (e->scope == GPM_SCOPE_CI && g->ci_sampling < 0)
            g->ci_sampling = 0; /* drivers before 595 sample GIs only */
        else if (rc == NVML_ERROR_NOT_FOUND || rc == NVML_ERROR_INVALID_ARGUMENT)
            g->need_enum = true;
        return false;
    }
    if (e->scope == GPM_SCOPE_CI)
        g->ci_sampling = 1;
    bool sent = false;
    if (e->have_prev) {
        nvmlGpmMetricsGet_t *mg = hp->mg;
        mg->version = NVML_GPM_METRICS_GET_VERSION;
        mg->numMetrics = GPM_NMETRICS;
        mg->sample1 = e->s[!e->cur];
        mg->sample2 = e->s[e->cur];
        for (int k = 0; k < GPM_NMETRICS; k++) {
            memset(&mg->metrics[k], 0, sizeof(mg->metrics[k]));
            mg->metrics[k].metricId = gpm_metric_nvml_id[k];
        }
        progress(g->idx, GPM_CALL_METRICS);
        if (f->gpm_metrics_get(mg) == NVML_SUCCESS) {
            send_values(hp, g, e, (double)(now - e->t_prev) / 1e9);
            sent = true;
        }
    }
    e->t_prev = now;
    e->have_prev = true;
    e->cur = !e->cur;
    return sent;
}

static bool round_gpu(struct helper *hp, struct hgpu *g)
{
    if (!g->active)
        return false;
    if (g->need_enum || clock_mono_ns() - g->last_enum >= ENUM_PERIOD_NS) {
        enumerate(hp, g);
        if (g->rounds == 0)
            canary_baseline(hp, g);
    }
    bool sent = false;
    for (size_t i = 0; i < g->nents; i++) {
        if (sample_entity(hp, g, &g->ents[i]))
            sent = true;
    }
    if (g->ci_sampling == 0) {
        /* Drop the compute-instance entities this driver cannot sample. */
        size_t w = 0;
        for (size_t i = 0; i < g->nents; i++) {
            if (g->ents[i].scope == GPM_SCOPE_CI)
                ent_free(hp, &g->ents[i]);
            else
                g->ents[w++] = g->ents[i];
        }
        g->nents = w;
    }
    if (g->rounds == 0 || g->rounds % CANARY_EVERY == 0)
        canary_check(hp, g);
    g->rounds++;
    return sent;
}

static size_t active_gpus(const struct helper *hp)
{
    size_t n = 0;
    for (size_t i = 0; i < hp->ngpus; i++)
        n += hp->gpus[i].active;
    return n;
}

/* Every GPU's round, then the record that closes it. False when no GPU is
 * left to sample (a canary switched the last one off). */
static bool one_round(struct helper *hp)
{
    bool have = false;
    for (size_t i = 0; i < hp->ngpus; i++)
        have = round_gpu(hp, &hp->gpus[i]) || have;
    struct gpm_rec_cycle cyc;
    memset(&cyc, 0, sizeof(cyc));
    cyc.have_values = have;
    send_rec(&cyc, GPM_REC_CYCLE, sizeof(cyc));
    return active_gpus(hp) > 0;
}

static void setup_gpus(struct helper *hp, int nexcl, char **excl)
{
    const struct nvml_fns *f = hp->f;
    unsigned count = 0;
    progress(0xffff, GPM_CALL_INIT);
    if (f->device_count(&count) != NVML_SUCCESS || count == 0)
        return;
    if (count > 1024)
        count = 1024;
    hp->gpus = calloc(count, sizeof(*hp->gpus));
    if (!hp->gpus)
        return;
    hp->ngpus = count;
    bool api = f->gpm_query_support && f->gpm_sample_alloc && f->gpm_sample_free &&
               f->gpm_sample_get && f->gpm_metrics_get;
    for (unsigned i = 0; i < count; i++) {
        struct hgpu *g = &hp->gpus[i];
        g->idx = i;
        g->ci_sampling = -1;
        g->need_enum = true;
        progress(i, GPM_CALL_INIT);
        if (f->handle_by_index(i, &g->h) != NVML_SUCCESS || !f->uuid ||
            f->uuid(g->h, g->uuid, sizeof(g->uuid)) != NVML_SUCCESS)
            continue;
        g->uuid[sizeof(g->uuid) - 1] = '\0';
        bool excluded = false;
        for (int k = 0; k < nexcl; k++)
            excluded = excluded || strcmp(excl[k], g->uuid) == 0;
        if (excluded)
            continue;
        unsigned arch = 0xffffffffu;
        if (f->arch && f->arch(g->h, &arch) != NVML_SUCCESS)
            arch = 0xffffffffu;
        if (!api) {
            send_gpu(g, GPM_GPU_NO_API, NVML_ERROR_FUNCTION_NOT_FOUND, arch, GPM_CALL_SUPPORT);
            continue;
        }
        nvmlGpmSupport_t sup = {.version = NVML_GPM_SUPPORT_VERSION, .isSupportedDevice = 0};
        progress(i, GPM_CALL_SUPPORT);
        nvmlReturn_t rc = f->gpm_query_support(g->h, &sup);
        if (rc != NVML_SUCCESS || !sup.isSupportedDevice) {
            send_gpu(g, GPM_GPU_UNSUPPORTED, rc == NVML_SUCCESS ? NVML_ERROR_NOT_SUPPORTED : rc,
                     arch, GPM_CALL_SUPPORT);
            continue;
        }
        g->active = true;
        send_gpu(g, GPM_GPU_SUPPORTED, f->gpm_mig_sample_get ? NVML_SUCCESS
                                                              : NVML_ERROR_FUNCTION_NOT_FOUND,
                 arch, GPM_CALL_SUPPORT);
    }
}

int gpm_helper_main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s %s LIBRARY INTERVAL_MS auto|on [EXCLUDED_UUID...]\n",
                argv[0], GPM_HELPER_ARG);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    struct helper hp;
    memset(&hp, 0, sizeof(hp));
    hp.keep_degraded = strcmp(argv[4], "on") == 0;
    long ms = strtol(argv[3], NULL, 10);
    if (ms < 100)
        ms = 100; /* GPM samples must be at least 100 ms apart */
    uint64_t interval = (uint64_t)ms * 1000000ull;

    progress(0xffff, GPM_CALL_INIT);
    bool missing = false;
    char err[1024];
    if (nvml_lib_open(&hp.lib, argv[2], &missing, err, sizeof(err)) != 0)
        return 1;
    hp.f = &hp.lib.f;
    nvmlReturn_t rc = hp.f->init_with_flags ? hp.f->init_with_flags(NVML_INIT_FLAG_NO_GPUS)
                                            : hp.f->init();
    if (rc != NVML_SUCCESS) {
        nvml_lib_close(&hp.lib);
        return 1;
    }
    hp.mg = calloc(1, sizeof(*hp.mg));
    if (hp.mg)
        setup_gpus(&hp, argc - 5, argv + 5);
    if (active_gpus(&hp) > 0) {
        /* Priming: the first values need two rounds; the second comes
         * GPM_PRIME_NS after the first ends (never less: NVIDIA's minimum
         * between samples), not a whole interval later, so a long interval
         * does not leave every GPM value N/A for that long (the engine's
         * priming tick waits for it). The grid starts from the second. */
        bool more = true;
        if (interval > GPM_PRIME_NS) {
            more = one_round(&hp) && helper_wait_until(clock_mono_ns() + GPM_PRIME_NS);
        }
        uint64_t start = clock_mono_ns();
        for (uint64_t k = 1; more; k++) {
            if (!one_round(&hp))
                break;
            uint64_t next = start + k * interval;
            uint64_t now = clock_mono_ns();
            if (next <= now) /* a slow round: skip the missed grid points */
                next = start + ((now - start) / interval + 1) * interval;
            k = (next - start) / interval;
            if (!helper_wait_until(next))
                break;
        }
    }
    for (size_t i = 0; i < hp.ngpus; i++) {
        for (size_t e = 0; e < hp.gpus[i].nents; e++)
            ent_free(&hp, &hp.gpus[i].ents[e]);
    }
    /* Nothing (more) to sample: said after the cleanup, so the client may
     * kill the helper at once. A helper asked to leave (stdin at EOF) finds
     * nobody to read it. */
    if (active_gpus(&hp) == 0) {
        struct gpm_rec_cycle done;
        memset(&done, 0, sizeof(done));
        send_rec(&done, GPM_REC_DONE, sizeof(done));
    }
    free(hp.gpus);
    free(hp.mg);
    hp.f->shutdown();
    nvml_lib_close(&hp.lib);
    return 0;
}
