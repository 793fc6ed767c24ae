/*
 * prom_fleet_procs.c — a fleet's processes from our exporter's
 * migmon_process_* series (export --export-processes): one entry per
 * device and PID, each value with the source its series names, on the
 * device its labels name.
 *
 * A PID is its node's: nothing about it is looked up on this host (no
 * local PID, no /proc facts; procpost.c leaves a fleet's processes as they
 * are read here).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/prometheus/prom_fleet_int.h"
#include "core/text.h"

static const char NOT_READ[] = "not read from Prometheus";
static const char NO_SERIES[] =
    "its node's exporter writes no processes (mig-gpu-mon export --export-processes)";

/* A family, the field of struct gpu_process it fills, and the scale from
 * the series' unit to the snapshot's. */
static const struct {
    const char *name;
    size_t off;
    double scale;
} pfams[] = {
    {"migmon_process_gpu_memory_bytes", offsetof(struct gpu_process, mem_bytes), 1},
    {"migmon_process_sm_utilization_ratio", offsetof(struct gpu_process, sm_util), 100},
    {"migmon_process_memory_utilization_ratio", offsetof(struct gpu_process, mem_util), 100},
    {"migmon_process_cpu_ratio", offsetof(struct gpu_process, cpu_pct), 100},
    {"migmon_process_resident_memory_bytes", offsetof(struct gpu_process, rss_bytes), 1},
};

static bool parse_pid(const char *s, uint32_t *out)
{
    if (*s < '0' || *s > '9')
        return false;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || v == 0 || v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

static size_t phash(size_t dev, uint32_t pid)
{
    uint64_t h = ((uint64_t)dev + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)pid * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ (h >> 29));
}

static void pslot_put(struct build *b, size_t k)
{
    size_t at = phash(b->pdev[k], b->procs[k].pid) % b->npslots;
    while (b->pslot[at] != SIZE_MAX)
        at = (at + 1) % b->npslots;
    b->pslot[at] = k;
}

static int prehash(struct build *b, size_t want)
{
    size_t *s = malloc(want * sizeof(*s));
    if (!s)
        return -1;
    for (size_t i = 0; i < want; i++)
        s[i] = SIZE_MAX;
    free(b->pslot);
    b->pslot = s;
    b->npslots = want;
    for (size_t k = 0; k < b->nprocs; k++)
        pslot_put(b, k);
    return 0;
}

static void init_proc(struct gpu_process *p, uint32_t pid)
{
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    p->local_pid = -1; /* its node's PID: never one of this host's */
    p->gi_id = p->ci_id = -1;
    p->mem_bytes = p->sm_util = p->mem_util = p->enc_util = p->dec_util = p->cpu_pct =
        p->rss_bytes = metric_none(NOT_READ);
}

/* The process pid on device dev, added when new; NULL when the device has
 * its FLEET_PROCS_PER_DEVICE already, the build its FLEET_PROCS_MAX, or
 * memory ran out (b->nomem). */
static struct gpu_process *proc_of(struct build *b, size_t dev, uint32_t pid)
{
    if (b->npslots)
        for (size_t at = phash(dev, pid) % b->npslots; b->pslot[at] != SIZE_MAX;
             at = (at + 1) % b->npslots) {
            size_t k = b->pslot[at];
            if (b->pdev[k] == dev && b->procs[k].pid == pid)
                return &b->procs[k];
        }
    if (b->dnprocs[dev] >= FLEET_PROCS_PER_DEVICE || b->nprocs >= FLEET_PROCS_MAX)
        return NULL;
    if (b->nprocs == b->pcap) {
        size_t cap = b->pcap ? b->pcap * 2 : 64;
        struct gpu_process *np = realloc(b->procs, cap * sizeof(*np));
        if (np)
            b->procs = np;
        size_t *nd = np ? realloc(b->pdev, cap * sizeof(*nd)) : NULL;
        if (nd)
            b->pdev = nd;
        if (!nd || prehash(b, cap * 2) != 0) {
            b->nomem = true;
            return NULL;
        }
        b->pcap = cap;
    }
    size_t k = b->nprocs++;
    init_proc(&b->procs[k], pid);
    b->pdev[k] = dev;
    b->dnprocs[dev]++;
    pslot_put(b, k);
    return &b->procs[k];
}

/* The container as procinfo.c names it: "k8s:POD-UID/RUNTIME:ID",
 * "k8s:POD-UID" or "RUNTIME:ID" (the exporter splits it into pod_uid and
 * container). */
static void set_container(struct gpu_process *p, const struct prom_item *it)
{
    const char *uid = fleet_lab(it, "pod_uid"), *ct = fleet_lab(it, "container");
    if (uid[0])
        snprintf(p->container, sizeof(p->container), "k8s:%.36s%s%.38s", uid, ct[0] ? "/" : "",
                 ct);
    else
        snprintf(p->container, sizeof(p->container), "%s", ct);
    text_clean(p->container, sizeof(p->container));
}

void fleet_read_proc(struct build *b, const struct prom_item *it)
{
    char key[FLEET_KEY_LEN];
    const char *name = fleet_lab(it, "__name__");
    size_t fam = 0, nfam = sizeof(pfams) / sizeof(pfams[0]);
    while (fam < nfam && strcmp(name, pfams[fam].name) != 0)
        fam++;
    uint32_t pid;
    if (b->nomem || fam == nfam || !parse_pid(fleet_lab(it, "pid"), &pid))
        return;
    bool mig = fleet_lab(it, "gpu_instance_id")[0] || fleet_lab(it, "compute_instance_id")[0] ||
               fleet_lab(it, "partition_id")[0];
    fleet_key_of(key, sizeof(key), it, mig);
    struct device *d = fleet_find(b, key);
    if (!d)
        return;
    size_t dev = (size_t)(d - b->f->devs);
    b->f->nodes[b->dnode[dev]].procs = true;
    struct gpu_process *p = proc_of(b, dev, pid);
    if (!p)
        return;
    if (!p->name[0]) {
        snprintf(p->name, sizeof(p->name), "%s", fleet_lab(it, "process_name"));
        text_clean(p->name, sizeof(p->name));
    }
    if (!p->container[0])
        set_container(p, it);
    double v;
    if (fleet_val(it, &v))
        *(struct metric *)((char *)p + pfams[fam].off) = (struct metric){
            .value = v * pfams[fam].scale, .src = fleet_source_of(fleet_lab(it, "source"))};
}

/* What the device says of the process: its instance's ids, or that a
 * MIG-enabled GPU's own list holds the processes none of its instances
 * was given (as NVML's backend places them). */
static void attach(struct gpu_process *p, const struct device *d)
{
    if (d->kind == DEV_MIG) {
        p->gi_id = d->gi_id;
        p->ci_id = d->ci_id;
    } else if (d->mig_enabled) {
        p->unattributed = true;
    }
}

int fleet_place_procs(struct build *b, const size_t *ord, struct device *out, size_t n)
{
    struct fleet *f = b->f;
    size_t *pos = malloc((n ? n : 1) * sizeof(*pos));
    size_t *first = calloc(n + 1, sizeof(*first));
    if (!pos || !first)
        goto fail;
    for (size_t i = 0; i < n; i++)
        pos[ord[i]] = i;
    size_t kept = 0;
    for (size_t k = 0; k < b->nprocs; k++) {
        size_t at = pos[b->pdev[k]];
        if (!out[at].node_down) { /* a down node's values are none; so are its processes */
            first[at + 1]++;
            kept++;
        }
    }
    for (size_t i = 0; i < n; i++)
        first[i + 1] += first[i];
    f->procs = malloc((kept ? kept : 1) * sizeof(*f->procs));
    if (!f->procs)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        out[i].proc_first = first[i];
        out[i].nprocs = 0;
    }
    for (size_t k = 0; k < b->nprocs; k++) {
        struct device *d = &out[pos[b->pdev[k]]];
        if (d->node_down)
            continue;
        struct gpu_process *p = &f->procs[d->proc_first + d->nprocs++];
        *p = b->procs[k];
        attach(p, d);
    }
    f->nprocs = kept;
    /* a count with no list to show: the list is not to be had */
    for (size_t i = 0; i < n; i++) {
        struct device *d = &out[i];
        if (!metric_ok(&d->process_count) || d->process_count.value <= 0)
            continue;
        const struct fleet_node *node = &f->nodes[b->dnode[ord[i]]];
        if (node->why[PD_PROCS])
            d->process_count = metric_none(node->why[PD_PROCS]);
        else if (!node->procs)
            d->process_count = metric_none(NO_SERIES);
    }
    free(pos);
    free(first);
    return 0;
fail:
    free(pos);
    free(first);
    return -1;
}

void fleet_free_procs(struct build *b)
{
    free(b->procs);
    free(b->pdev);
    free(b->pslot);
    b->procs = NULL;
    b->pdev = b->pslot = NULL;
    b->nprocs = b->pcap = b->npslots = 0;
}
