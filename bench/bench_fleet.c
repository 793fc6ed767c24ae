/*
 * bench_fleet — the cost of the fleet view's model (--prometheus) at scale.
 *
 *   build/bench_fleet [-r ROUNDS] NODES...
 *
 * The devices' queries' answers (prom_query.h's PD_*), generated in memory
 * for NODES nodes of 8 GPUs with 7 MIG instances each (our exporter's
 * series; then every other node dcgm-exporter's), serialized once for
 * their size: what --once and record read of a whole fleet. Per round: the
 * nodes registered, the answers read as they stream (prom_stream.h) into
 * one build, tui_fleet_order for every key and the filter on the devices
 * built, the frees. Medians, sizes and each size's peak RSS (a child
 * process each). No HTTP, no query evaluation (bench_fleet_prom.sh has a
 * real Prometheus). The fleet is checked: a mismatch exits 1, so a broken
 * generator gives no figures. bench/README.md says more.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/prometheus/prom_client.h"
#include "backend/prometheus/prom_fleet.h"
#include "backend/prometheus/prom_stream.h"
#include "core/clock.h"
#include "core/health_rules.h"
#include "core/snapshot.h"
#include "tui/fleet_ui.h"

#define GPUS 8
#define MIGS 7
#define NOW 1764765000.0
#define FILTER "idle 1g"
#define MAX_SIZES 8

/* The answers generated: the up answer names the nodes; the others are
 * the devices' queries. */
enum { FQ_UP, FQ_IDENT, FQ_VALUES, FQ_DCGM_IDENT, FQ_DCGM_VALUES, FQ_PROCS, FQ_COUNT };
static const enum promq_detail fq_detail[FQ_COUNT] = {
    [FQ_IDENT] = PD_IDENT,           [FQ_VALUES] = PD_VALUES, [FQ_DCGM_IDENT] = PD_DCGM_IDENT,
    [FQ_DCGM_VALUES] = PD_DCGM_VALUES, [FQ_PROCS] = PD_PROCS};

enum step { S_PARSE, S_BUILD, S_ORDER, S_FILTER = S_ORDER + FSORT_COUNT, S_FREE, S_COUNT };

struct result {
    size_t ndevs, bytes[FQ_COUNT];
    double us[S_COUNT]; /* medians */
    long maxrss_kib;
};

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench_fleet: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

/* ---- the answers ---- */

static void sample(json_t *arr, json_t *metric, double v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%.15g", v); /* Prometheus writes values as strings */
    if (!metric || json_array_append_new(arr, json_pack("{s:o,s:[f,s]}", "metric", metric,
                                                         "value", NOW, buf)) != 0)
        die("out of memory generating the answers");
}

struct ids {
    char inst[32], host[32], uuid[48], mig_uuid[48], pci[24], gi[8];
};

static void ids_of(struct ids *x, int n, int g, int j)
{
    snprintf(x->inst, sizeof(x->inst), "10.%d.%d.%d:9400", n / 65536, n / 256 % 256, n % 256);
    snprintf(x->host, sizeof(x->host), "gpu-node-%04d", n);
    snprintf(x->uuid, sizeof(x->uuid), "GPU-5f3a9c1e-%04x-4%03x-8000-0000deadbeef", n & 0xffff, g);
    snprintf(x->mig_uuid, sizeof(x->mig_uuid), "MIG-7b2e44d0-%04x-5%03x-9%03x-0000cafef00d",
             n & 0xffff, g, j);
    snprintf(x->pci, sizeof(x->pci), "00000000:%02X:00.0", 0x18 + g * 0x10);
    snprintf(x->gi, sizeof(x->gi), "%d", 7 + j); /* H200's 1g.18gb instances: GI 7..13 */
}

/* A migmon_* value series of GPU g (j < 0) or its instance j. */
static json_t *vlab(const struct ids *x, int j, const char *name, const char *src)
{
    char full[96];
    snprintf(full, sizeof(full), "migmon_%s_%s", j < 0 ? "gpu" : "mig", name);
    json_t *m = json_pack("{s:s,s:s,s:s}", "__name__", full, "instance", x->inst, "uuid", x->uuid);
    if (m && j >= 0) {
        json_object_set_new(m, "gpu_instance_id", json_string(x->gi));
        json_object_set_new(m, "compute_instance_id", json_string("0"));
    }
    if (m && src)
        json_object_set_new(m, "source", json_string(src));
    return m;
}

/* What a device writes besides its gauges: health (one series per state),
 * lost, sampling_stalled, processes. */
static void vstates(json_t *vals, const struct ids *x, int j)
{
    static const char *const st[] = {"ok", "warning", "action"};
    for (int k = 0; k < 3; k++) {
        json_t *m = vlab(x, j, "health", NULL);
        json_object_set_new(m, "state", json_string(st[k]));
        sample(vals, m, k == 0);
    }
    sample(vals, vlab(x, j, "lost", NULL), 0);
    sample(vals, vlab(x, j, "sampling_stalled", NULL), 0);
    sample(vals, vlab(x, j, "processes", "direct"), 1);
}

static void gen_migmon(json_t *res[FQ_COUNT], int n)
{
    struct ids x;
    ids_of(&x, n, 0, 0);
    sample(res[FQ_IDENT], json_pack("{s:s,s:s,s:s}", "__name__", "migmon_host_info", "instance",
                                    x.inst, "hostname", x.host), 1);
    sample(res[FQ_IDENT], json_pack("{s:s,s:s}", "__name__", "migmon_last_sample_timestamp_seconds",
                                    "instance", x.inst), NOW - 1);
    for (int g = 0; g < GPUS; g++) {
        char gpu[8], serial[24];
        snprintf(gpu, sizeof(gpu), "%d", g);
        snprintf(serial, sizeof(serial), "16522%03d%05d", g, n);
        ids_of(&x, n, g, 0);
        sample(res[FQ_IDENT],
               json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "__name__",
                         "migmon_device_info", "instance", x.inst, "gpu", gpu, "uuid", x.uuid,
                         "pci_bus_id", x.pci, "model", "NVIDIA H200", "architecture", "hopper",
                         "compute_capability", "9.0", "mig_mode", "enabled", "serial", serial),
               1);
        static const struct { const char *name; double v; } gv[] = {
            {"utilization_ratio", 0.5},          {"memory_utilization_ratio", 0.2},
            {"sm_utilization_ratio", 0.45},      {"memory_used_bytes", 60e9},
            {"memory_total_bytes", 150754820096}, {"temperature_celsius", 41},
            {"power_watts", 312.5},              {"power_limit_watts", 700},
            {"energy_joules_total", 8.1e9},      {"graphics_clock_hertz", 1.98e9},
            {"sm_clock_hertz", 1.98e9},          {"memory_clock_hertz", 3.201e9},
            {"performance_state", 0},
        };
        for (size_t k = 0; k < sizeof(gv) / sizeof(gv[0]); k++)
            sample(res[FQ_VALUES], vlab(&x, -1, gv[k].name, "direct"), gv[k].v);
        vstates(res[FQ_VALUES], &x, -1);
        for (int j = 0; j < MIGS; j++) {
            ids_of(&x, n, g, j);
            sample(res[FQ_IDENT],
                   json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "__name__",
                             "migmon_mig_info", "instance", x.inst, "gpu", gpu, "uuid", x.uuid,
                             "pci_bus_id", x.pci, "model", "NVIDIA H200", "gpu_instance_id", x.gi,
                             "compute_instance_id", "0", "mig_profile", "1g.18gb", "mig_uuid",
                             x.mig_uuid),
                   1);
            /* instance 0 of each GPU idle, the others busy */
            sample(res[FQ_VALUES], vlab(&x, j, "utilization_ratio", "gpm"), j ? 0.1 * j : 0);
            sample(res[FQ_VALUES], vlab(&x, j, "sm_utilization_ratio", "gpm"), 0.09 * j);
            sample(res[FQ_VALUES], vlab(&x, j, "memory_utilization_ratio", "gpm"), 0.05 * j);
            sample(res[FQ_VALUES], vlab(&x, j, "memory_used_bytes", "direct"), 1e9 * (j + 1));
            sample(res[FQ_VALUES], vlab(&x, j, "memory_total_bytes", "direct"), 17716740096);
            vstates(res[FQ_VALUES], &x, j);
        }
    }
}

static void gen_dcgm(json_t *res[FQ_COUNT], int n)
{
    static const struct { const char *name; double v; } fv[] = {
        {"DEV_FB_USED", 1000},       {"DEV_FB_FREE", 15800},         {"DEV_FB_RESERVED", 96},
        {"DEV_GPU_TEMP", 41},        {"DEV_POWER_USAGE", 312.5},     {"DEV_GPU_UTIL", 0},
        {"DEV_MEM_COPY_UTIL", 0},    {"DEV_SM_CLOCK", 1980},         {"DEV_MEM_CLOCK", 3201},
        {"PROF_GR_ENGINE_ACTIVE", 0}, {"PROF_SM_ACTIVE", 0},         {"PROF_DRAM_ACTIVE", 0},
    };
    struct ids x;
    for (int g = 0; g < GPUS; g++) {
        char gpu[8];
        snprintf(gpu, sizeof(gpu), "%d", g);
        for (int j = 0; j < MIGS; j++) {
            ids_of(&x, n, g, j);
            /* DCGM_LABELS, as dcgm-exporter names them */
            json_t *lab = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "instance", x.inst,
                                    "Hostname", x.host, "gpu", gpu, "UUID", x.uuid, "modelName",
                                    "NVIDIA H200", "pci_bus_id", x.pci, "GPU_I_ID", x.gi,
                                    "GPU_I_PROFILE", "1g.18gb");
            for (size_t k = 0; k < sizeof(fv) / sizeof(fv[0]); k++) {
                char name[64];
                snprintf(name, sizeof(name), "DCGM_FI_%s", fv[k].name);
                json_t *m = json_deep_copy(lab);
                if (m)
                    json_object_set_new(m, "__name__", json_string(name));
                /* instance 0 idle, as in the migmon_ nodes */
                double v = fv[k].v;
                if (strstr(fv[k].name, "UTIL") || strstr(fv[k].name, "ACTIVE"))
                    v = j ? (fv[k].name[0] == 'P' ? 0.1 * j : 10.0 * j) : 0;
                sample(res[FQ_DCGM_VALUES], m, v);
            }
            sample(res[FQ_DCGM_IDENT], lab, (double)(sizeof(fv) / sizeof(fv[0])));
        }
    }
}

/* The answers as Prometheus sends them: text[q], len[q] (the caller's). */
static void generate(int nodes, bool mixed, char *text[FQ_COUNT], size_t len[FQ_COUNT])
{
    json_t *res[FQ_COUNT];
    for (int q = 0; q < FQ_COUNT; q++)
        res[q] = json_array();
    for (int n = 0; n < nodes; n++) {
        struct ids x;
        ids_of(&x, n, 0, 0);
        sample(res[FQ_UP], json_pack("{s:s}", "instance", x.inst), 1);
        if (mixed && n % 2)
            gen_dcgm(res, n);
        else
            gen_migmon(res, n);
    }
    for (int q = 0; q < FQ_COUNT; q++) {
        json_t *root = json_pack("{s:s,s:{s:s,s:o}}", "status", "success", "data", "resultType",
                                 "vector", "result", res[q]);
        text[q] = root ? json_dumps(root, JSON_COMPACT) : NULL;
        if (!text[q])
            die("out of memory serializing the answers");
        len[q] = strlen(text[q]);
        json_decref(root);
    }
}

/* ---- checks ---- */

static void check(const struct fleet *f, const struct snapshot *s, int nodes, bool mixed,
                  size_t shown, size_t *const order[FSORT_COUNT])
{
    size_t gpus = 0, migs = 0, dcgm = 0, want_dcgm = mixed ? (size_t)nodes / 2 * GPUS * (MIGS + 1) : 0;
    for (size_t i = 0; i < f->ndevs; i++) {
        const struct device *d = &f->devs[i];
        gpus += d->kind == DEV_GPU;
        migs += d->kind == DEV_MIG;
        dcgm += f->src[i].dcgm;
        if (d->kind == DEV_MIG && (d->parent_pos < 0 || !metric_ok(&d->m[M_GPU_UTIL]) ||
                                   !metric_ok(&d->m[M_MEM_USED]) || !metric_ok(&d->m[M_MEM_TOTAL])))
            die("device %zu (%s): an instance without its GPU or its values", i, d->uuid);
        if (d->kind == DEV_GPU && !metric_ok(&d->m[M_TEMP]))
            die("device %zu (%s): a GPU without its temperature", i, d->uuid);
        if (!f->src[i].dcgm && d->health != HEALTH_OK)
            die("device %zu (%s): health not read", i, d->uuid);
    }
    size_t N = (size_t)nodes;
    if (f->nnodes != N || gpus != N * GPUS || migs != N * GPUS * MIGS || dcgm != want_dcgm)
        die("%d nodes: built %zu nodes, %zu GPUs, %zu instances (%zu from DCGM); want %zu, %zu, "
            "%zu (%zu)", nodes, f->nnodes, gpus, migs, dcgm, N, N * GPUS, N * GPUS * MIGS,
            want_dcgm);
    /* the idle instance of every GPU and, for the tree, the GPU */
    if (shown != 2 * N * GPUS)
        die("%d nodes: filter \"%s\" shows %zu devices, want %zu", nodes, FILTER, shown,
            2 * N * GPUS);
    unsigned char *seen = calloc(s->ndevices, 1);
    for (int k = 0; k < FSORT_COUNT; k++) {
        memset(seen, 0, s->ndevices);
        for (size_t i = 0; i < s->ndevices; i++)
            if (order[k][i] >= s->ndevices || seen[order[k][i]]++)
                die("order %s is no permutation of the devices", tui_fleet_sort_name(k));
    }
    free(seen);
}

/* ---- measuring ---- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The time since *t0, which becomes now. */
static uint64_t lap(uint64_t *t0)
{
    uint64_t now = clock_mono_ns(), d = now - *t0;
    *t0 = now;
    return d;
}

struct feed {
    struct build *b;
    enum promq_detail q;
};

static int on_item(void *ctx, const struct prom_item *it)
{
    struct feed *fd = ctx;
    return fleet_build_read(fd->b, fd->q, it);
}

static void measure(int nodes, bool mixed, int rounds, struct result *r)
{
    char *text[FQ_COUNT];
    generate(nodes, mixed, text, r->bytes);
    size_t ndevs = (size_t)nodes * GPUS * (MIGS + 1);
    uint64_t *t = calloc((size_t)rounds * S_COUNT, sizeof(*t)), *col = calloc((size_t)rounds, 8);
    size_t *order[FSORT_COUNT];
    for (int k = 0; k < FSORT_COUNT; k++)
        order[k] = malloc(ndevs * sizeof(size_t));
    unsigned char *shown = malloc(ndevs);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    for (int i = 0; i < rounds; i++) {
        uint64_t *ti = &t[(size_t)i * S_COUNT], t0 = clock_mono_ns();
        char err[256];
        /* the nodes, as the node round gives them to the build */
        struct build *b = fleet_build_new(FLEET_DEVICES_MAX);
        if (!b)
            die("out of memory");
        for (int n = 0; n < nodes; n++) {
            struct ids x;
            ids_of(&x, n, 0, 0);
            if (fleet_build_node(b, x.inst, mixed && n % 2 ? "" : x.host, 1, 0) != 0)
                die("out of memory");
        }
        ti[S_PARSE] = lap(&t0);
        for (int q = FQ_IDENT; q < FQ_COUNT; q++) {
            struct feed fd = {.b = b, .q = fq_detail[q]};
            struct prom_stream ps;
            if (prom_stream_init(&ps, on_item, &fd) != 0)
                die("out of memory");
            /* in the client's pieces of 16 KiB */
            for (size_t off = 0; off < r->bytes[q]; off += 16384)
                if (prom_stream_feed(&ps, text[q] + off,
                                     r->bytes[q] - off < 16384 ? r->bytes[q] - off : 16384) != 0)
                    break;
            if (prom_stream_end(&ps, 200, err, sizeof(err)) != 0)
                die("answer %d: %s", q, err);
            prom_stream_free(&ps);
        }
        struct fleet f;
        if (fleet_build_finish(b, &f, NOW) != 0)
            die("fleet_build_finish: out of memory");
        fleet_build_free(b);
        ti[S_BUILD] = lap(&t0);
        /* what prom_sample hands the front end, not measured */
        if (f.ndevs != ndevs || snapshot_reserve(&s, f.ndevs) != 0)
            die("%d nodes: %zu devices built, want %zu", nodes, f.ndevs, ndevs);
        memcpy(s.devices, f.devs, f.ndevs * sizeof(*f.devs));
        s.ndevices = r->ndevs = f.ndevs;
        t0 = clock_mono_ns();
        for (int k = 0; k < FSORT_COUNT; k++) {
            tui_fleet_order(&s, (enum tui_fleet_sort)k, order[k]);
            ti[S_ORDER + k] = lap(&t0);
        }
        size_t nshown = tui_fleet_filter(&s, FILTER, shown);
        ti[S_FILTER] = lap(&t0);
        if (i == 0)
            check(&f, &s, nodes, mixed, nshown, order);
        t0 = clock_mono_ns();
        fleet_free(&f);
        ti[S_FREE] = lap(&t0);
    }
    for (int k = 0; k < S_COUNT; k++) {
        for (int i = 0; i < rounds; i++)
            col[i] = t[(size_t)i * S_COUNT + k];
        qsort(col, (size_t)rounds, sizeof(*col), cmp_u64);
        r->us[k] = col[rounds / 2] / 1000.0;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    r->maxrss_kib = ru.ru_maxrss;
    /* the child exits: its memory goes with it */
}

/* In a child process, so that its peak RSS is this fleet size's alone. */
static void measure_apart(int nodes, bool mixed, int rounds, struct result *r)
{
    int p[2];
    if (pipe(p) != 0)
        die("pipe");
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        close(p[0]);
        measure(nodes, mixed, rounds, r);
        _exit(write(p[1], r, sizeof(*r)) == (ssize_t)sizeof(*r) ? 0 : 1);
    }
    close(p[1]);
    ssize_t got = read(p[0], r, sizeof(*r));
    close(p[0]);
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) || got != sizeof(*r))
        exit(1); /* the child said why */
}

static void table(const char *title, const int *sizes, int nsizes, const struct result *r,
                  int rounds)
{
    static const char *const qname[FQ_COUNT] = {"up", "ident", "values", "dcgm ident",
                                                "dcgm values", "procs"};
    static const char *const step[S_COUNT] = {
        "the nodes registered",    "5 answers streamed, built", "tui_fleet_order node",
        "tui_fleet_order util",    "tui_fleet_order mem",       "tui_fleet_order idle",
        "tui_fleet_order health",  "tui_fleet_filter \"" FILTER "\"", "fleet_free"};
    printf("== %s: %d GPUs x %d MIG per node; median us of %d rounds\n  %-28s", title, GPUS,
           MIGS, rounds, "");
    for (int c = 0; c < nsizes; c++)
        printf(" %10d", sizes[c]);
    printf("  nodes\n  %-28s", "devices");
    for (int c = 0; c < nsizes; c++)
        printf(" %10zu", r[c].ndevs);
    for (int q = 0; q < FQ_COUNT; q++) {
        printf("\n  answer bytes: %-14s", qname[q]);
        for (int c = 0; c < nsizes; c++)
            printf(" %10zu", r[c].bytes[q]);
    }
    for (int k = 0; k < S_COUNT; k++) {
        printf("\n  %-28s", step[k]);
        for (int c = 0; c < nsizes; c++)
            printf(" %10.1f", r[c].us[k]);
    }
    printf("\n  %-28s", "peak RSS (KiB)");
    for (int c = 0; c < nsizes; c++)
        printf(" %10ld", r[c].maxrss_kib);
    /* the largest answer, linear in the devices: a page of the backend's
     * (PAGE_DEVICES, 2048 devices) against the client's bound */
    const struct result *big = &r[nsizes - 1];
    size_t top = 0;
    for (int q = 1; q < FQ_COUNT; q++)
        if (big->bytes[q] > big->bytes[top])
            top = (size_t)q;
    double per_dev = (double)big->bytes[top] / (double)big->ndevs;
    printf("\n  largest answer: %s, %.0f bytes a device: %.1f MiB a page of 2048 devices "
           "(PROMC_MAX_ANSWER %u MiB)\n\n",
           qname[top], per_dev, per_dev * 2048 / 1048576.0, PROMC_MAX_ANSWER >> 20);
}

/* The node table's orders (tui_fleet_order_nodes, every key): nodes node
 * summaries as a node round gives them, figures varied per node; the
 * median of rounds, in us, for each key, and a check that each order is a
 * permutation sorted by its key. */
static void node_orders(size_t nodes, int rounds)
{
    struct node_summary *v = calloc(nodes, sizeof(*v));
    size_t *order = malloc(nodes * sizeof(*order));
    uint64_t *t = calloc((size_t)rounds, sizeof(*t));
    if (!v || !order || !t)
        die("out of memory");
    for (size_t i = 0; i < nodes; i++) {
        struct node_summary *n = &v[i];
        snprintf(n->instance, sizeof(n->instance), "10.%zu.%zu.%zu:9400", i / 65536,
                 i / 256 % 256, i % 256);
        snprintf(n->name, sizeof(n->name), "gpu-node-%05zu", i);
        n->up = i % 97 == 5 ? 0 : 1;
        n->seen = true;
        size_t h = i * 2654435761u;
        n->util_max = metric_direct((double)(h % 1000) / 10);
        n->mem_used = metric_direct((double)(h % 640) * 1e9);
        n->idle = metric_direct((double)(h % 57));
        n->health = (unsigned char)(h % 3 + HEALTH_OK);
    }
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    s.fleet = true;
    s.nodes = v;
    s.nnodes = nodes;
    printf("== tui_fleet_order_nodes: %zu nodes; median us of %d rounds\n", nodes, rounds);
    for (int k = FSORT_UTIL; k < FSORT_COUNT; k++) {
        for (int i = 0; i < rounds; i++) {
            uint64_t t0 = clock_mono_ns();
            tui_fleet_order_nodes(&s, (enum tui_fleet_sort)k, order);
            t[i] = clock_mono_ns() - t0;
        }
        unsigned char *seen = calloc(nodes, 1);
        for (size_t i = 0; seen && i < nodes; i++) {
            if (order[i] >= nodes || seen[order[i]]++)
                die("order %s is no permutation of the nodes", tui_fleet_sort_name(k));
        }
        free(seen);
        qsort(t, (size_t)rounds, sizeof(*t), cmp_u64);
        printf("  %-28s %10.1f\n", tui_fleet_sort_name((enum tui_fleet_sort)k),
               t[rounds / 2] / 1000.0);
    }
    printf("\n");
    free(v);
    free(order);
    free(t);
}

int main(int argc, char **argv)
{
    int rounds = 11, sizes[MAX_SIZES], nsizes = 0, o;
    while ((o = getopt(argc, argv, "r:")) != -1)
        if (o != 'r' || (rounds = atoi(optarg)) < 1)
            die("usage: bench_fleet [-r ROUNDS] NODES...");
    for (int i = optind; i < argc && nsizes < MAX_SIZES; i++)
        if ((sizes[nsizes++] = atoi(argv[i])) < 2)
            die("NODES: %s: want a number of nodes from 2", argv[i]);
    if (!nsizes)
        die("usage: bench_fleet [-r ROUNDS] NODES...");
    /* every node a node round can hold (FLEET_NODES_MAX) */
    node_orders(20000, rounds);
    struct result r[MAX_SIZES];
    for (int v = 0; v < 2; v++) {
        memset(r, 0, sizeof(r));
        for (int c = 0; c < nsizes; c++)
            measure_apart(sizes[c], v == 1, rounds, &r[c]);
        table(v ? "every other node dcgm-exporter only" : "our exporter on every node", sizes,
              nsizes, r, rounds);
    }
    return 0;
}
