/*
 * prom_node.c — the node's own figures on the exporter's page (prom.c):
 * each leaf's idleness (migmon_gpu_idle, migmon_mig_idle) and the node's
 * totals over its devices (migmon_node_*), so that a fleet's view reads a
 * dozen series a node from Prometheus instead of aggregating every
 * device's series each round (docs/fleet.md).
 *
 * The totals follow the rules the fleet view applies to the devices'
 * series when a node has none of these (backend/prometheus/prom_query.c): a leaf is a
 * MIG instance (or an AMD partition) or a GPU not split into instances;
 * utilisation and VRAM are over the leaves that have them; a GPU's verdict
 * is the worst of its own and its instances'. A figure that cannot be
 * given is absent, never 0.
 */
#include "export/prom_node.h"

#include <string.h>

#include "core/health_rules.h"
#include "export/prom_pods.h"

/* A device the fleet counts: one whose series are on the page. */
static bool listed(const struct prom_ctx *c, size_t i)
{
    return prom_labels_of(c, i, PROM_LAB_MIGMON) != NULL;
}

static bool is_leaf(const struct device *d)
{
    return d->kind == DEV_MIG || !d->mig_enabled || d->inaccessible;
}

static void write_idle(struct prom_ctx *c)
{
    const struct snapshot *s = c->s;
    static const char *const name[2] = {"migmon_gpu_idle", "migmon_mig_idle"};
    for (int k = DEV_GPU; k <= DEV_MIG; k++) {
        prom_family(c, name[k], PROM_GAUGE,
                    k == DEV_GPU
                        ? "1 when the GPU (one not split into MIG instances) is idle: "
                          "utilisation under 1 %, or with none to be had, no process; 0 when "
                          "not; absent when unknown."
                        : "1 when the MIG device is idle: utilisation under 1 %, or with none "
                          "to be had, no process; 0 when not; absent when unknown.");
        for (size_t i = 0; i < s->ndevices; i++) {
            const struct device *d = &s->devices[i];
            const char *l = prom_labels_of(c, i, PROM_LAB_MIGMON);
            int idle = device_idle(d);
            if ((int)d->kind == k && l && is_leaf(d) && idle >= 0)
                prom_sample_plain(c, l, idle);
        }
    }
}

/* Device i's pod when its memory used is on the page (its series carry
 * the pod labels the fleet counts pods by). */
static bool pod_at(const struct prom_ctx *c, size_t i, const char **ns, const char **pod)
{
    const struct device *d = &c->s->devices[i];
    return listed(c, i) && metric_ok(&d->m[M_MEM_USED]) && prom_pod_of(c, d, ns, pod);
}

/* The pods named, each once. */
static size_t count_pods(const struct prom_ctx *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->s->ndevices; i++) {
        const char *ns, *pod, *ns2, *pod2;
        if (!pod_at(c, i, &ns, &pod))
            continue;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = pod_at(c, j, &ns2, &pod2) && !strcmp(ns, ns2) && !strcmp(pod, pod2);
        n += !seen;
    }
    return n;
}

struct totals {
    size_t gpus, mig, idle, idle_known, util_n, used_n, total_n, both_n, notok, verdict, act,
        warn;
    double util_sum, util_max, used, total;
};

static void count(const struct prom_ctx *c, struct totals *t)
{
    const struct snapshot *s = c->s;
    memset(t, 0, sizeof(*t));
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        if (!listed(c, i))
            continue;
        if (d->kind == DEV_GPU)
            t->gpus++;
        else
            t->mig++;
        if (d->health == HEALTH_WARNING || d->health == HEALTH_ACTION)
            t->notok++;
        const struct metric *used = &d->m[M_MEM_USED], *total = &d->m[M_MEM_TOTAL];
        if (d->kind == DEV_GPU) {
            /* the GPU's verdict: the worst of its own and its instances' */
            unsigned worst = d->health;
            for (size_t j = i + 1; j < s->ndevices; j++)
                if (s->devices[j].kind == DEV_MIG && s->devices[j].parent_pos == (int)i &&
                    listed(c, j) && s->devices[j].health > worst)
                    worst = s->devices[j].health;
            t->verdict += d->health != HEALTH_UNKNOWN;
            t->act += worst == HEALTH_ACTION;
            t->warn += worst == HEALTH_WARNING;
        }
        if (!is_leaf(d))
            continue;
        int idle = device_idle(d);
        t->idle_known += idle >= 0;
        t->idle += idle == 1;
        const struct metric *u = &d->m[M_GPU_UTIL];
        if (metric_ok(u)) {
            double r = u->value / 100;
            t->util_sum += r;
            if (!t->util_n++ || r > t->util_max)
                t->util_max = r;
        }
        t->used_n += metric_ok(used);
        t->total_n += metric_ok(total);
        if (metric_ok(used) && metric_ok(total)) {
            t->both_n++;
            t->used += used->value;
            t->total += total->value;
        }
    }
}

static void one(struct prom_ctx *c, const char *name, const char *help, double v)
{
    prom_family(c, name, PROM_GAUGE, help);
    prom_sample_plain(c, "", v);
}

void prom_node_write(struct prom_ctx *c)
{
    write_idle(c);
    struct totals t;
    count(c, &t);
    size_t pods = count_pods(c);
    one(c, "migmon_node_gpus", "GPUs the monitor lists on this node.", (double)t.gpus);
    one(c, "migmon_node_mig_devices", "MIG devices (and AMD compute partitions) on this node.",
        (double)t.mig);
    if (t.idle_known)
        one(c, "migmon_node_idle_devices",
            "Idle leaves (MIG devices, and GPUs not split into them) by migmon_*_idle; absent "
            "when the idleness of none is known.",
            (double)t.idle);
    if (t.util_n) {
        one(c, "migmon_node_utilization_ratio_mean",
            "Mean utilisation of the leaves that have one, 0-1; absent when none has.",
            t.util_sum / (double)t.util_n);
        one(c, "migmon_node_utilization_ratio_max",
            "Highest utilisation of a leaf, 0-1; absent when none has one.", t.util_max);
    }
    /* used and total of the same leaves, or no figure: a sum of the used
     * of some and the totals of others would be no share */
    if (t.both_n && t.used_n == t.both_n && t.total_n == t.both_n) {
        one(c, "migmon_node_memory_used_bytes",
            "Frame buffer memory in use over the leaves, bytes; absent unless every leaf "
            "with a total has its used figure and the other way round.",
            t.used);
        one(c, "migmon_node_memory_total_bytes", "Frame buffer memory of the same leaves, bytes.",
            t.total);
        one(c, "migmon_node_memory_devices", "The leaves those two sums are over.",
            (double)t.both_n);
    }
    if (t.verdict) {
        one(c, "migmon_node_devices_not_ok",
            "GPUs and MIG devices whose own verdict is warning or action; absent while no "
            "GPU has a verdict.",
            (double)t.notok);
        one(c, "migmon_node_gpus_action",
            "GPUs whose verdict, or one of their MIG devices', is action.", (double)t.act);
        one(c, "migmon_node_gpus_warning",
            "GPUs whose worst verdict (theirs or a MIG device's) is warning.", (double)t.warn);
        one(c, "migmon_node_gpus_verdict", "GPUs with a health verdict.", (double)t.verdict);
    }
    if (pods)
        one(c, "migmon_node_pods",
            "Pods named on this node's devices' series (pod and namespace labels); absent "
            "when none is.",
            (double)pods);
}
