/*
 * proclist.c — every GPU process of a snapshot once (proclist.h).
 */
#include "engine/proclist.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

bool proclist_match(const struct snapshot *s, size_t i, const char *filter)
{
    if (!filter || !filter[0])
        return true;
    const struct gpu_process *p = &s->procs[i];
    if (strcasestr(p->command, filter) || strcasestr(p->name, filter) ||
        strcasestr(p->user, filter) || strcasestr(p->container, filter))
        return true;
    char buf[320];
    snprintf(buf, sizeof(buf), "%u", (unsigned)p->pid);
    if (strstr(buf, filter))
        return true;
    if (p->local_pid > 0) {
        snprintf(buf, sizeof(buf), "%lld", (long long)p->local_pid);
        if (strstr(buf, filter))
            return true;
    }
    long di = proclist_device_of(s, i);
    if (di < 0)
        return false;
    const struct device *d = &s->devices[di];
    proclist_device_node_label(buf, sizeof(buf), d);
    if (strcasestr(buf, filter))
        return true;
    proclist_slice_name(buf, sizeof(buf), d, PROCLIST_SLICE_FULL);
    if (strcasestr(buf, filter))
        return true;
    return strcasestr(d->pod.name, filter) || strcasestr(d->pod.ns, filter) ||
           strcasestr(d->pod.container, filter);
}

/* The same process: the same PID, and the same start time unless one of
 * the two entries could not read it (the same tick's lists: a PID reused
 * between them would need the process to exit and another to take its
 * number within one sample). */
static bool same_process(const struct gpu_process *a, const struct gpu_process *b)
{
    return a->pid == b->pid &&
           (a->start_time == b->start_time || a->start_time == 0 || b->start_time == 0);
}

/* The process at k of device di's list is listed elsewhere and kept there:
 * earlier in the same list, or by one of the MIG devices of di (a MIG-enabled
 * GPU lists the processes no instance could be given; one that an instance
 * lists as well is that instance's). */
static bool shadowed(const struct snapshot *s, size_t di, size_t k)
{
    const struct device *d = &s->devices[di];
    const struct gpu_process *p = &s->procs[d->proc_first + k];
    for (size_t j = 0; j < k; j++)
        if (same_process(&s->procs[d->proc_first + j], p))
            return true;
    if (d->kind != DEV_GPU || !d->mig_enabled)
        return false;
    for (size_t ci = 0; ci < s->ndevices; ci++) {
        const struct device *c = &s->devices[ci];
        if (c->kind != DEV_MIG || c->parent_pos != (int)di)
            continue;
        for (size_t j = 0; j < c->nprocs && c->proc_first + j < s->nprocs; j++)
            if (same_process(&s->procs[c->proc_first + j], p))
                return true;
    }
    return false;
}

size_t proclist_collect(const struct snapshot *s, const char *filter, size_t *out, size_t cap,
                        size_t *total)
{
    size_t n = 0, all = 0;
    for (size_t di = 0; s && di < s->ndevices; di++) {
        const struct device *d = &s->devices[di];
        for (size_t k = 0; k < d->nprocs && d->proc_first + k < s->nprocs; k++) {
            size_t i = d->proc_first + k;
            if (!proclist_match(s, i, filter) || shadowed(s, di, k))
                continue;
            all++;
            if (n < cap)
                out[n++] = i;
        }
    }
    if (total)
        *total = all;
    return n;
}

static const char *const key_names[PROCLIST_KEYS] = {
    "VRAM", "SM%", "CPU%", "RSS", "TIME", "PID", "USER", "COMMAND", "DEV",
};

const char *proclist_key_name(enum proclist_key key)
{
    return (unsigned)key < PROCLIST_KEYS ? key_names[key] : "?";
}

struct sort_ctx {
    const struct snapshot *s;
    enum proclist_key key;
    bool reverse;
    long hz;
};

/* A figure to sort by, largest first; false when it is unknown. */
static bool figure_of(const struct sort_ctx *c, const struct gpu_process *p, double *out)
{
    struct metric el;
    const struct metric *m;
    switch (c->key) {
    case PROCLIST_BY_SM: m = &p->sm_util; break;
    case PROCLIST_BY_CPU: m = &p->cpu_pct; break;
    case PROCLIST_BY_RSS: m = &p->rss_bytes; break;
    case PROCLIST_BY_TIME: /* as the TIME column shows it */
        el = proclist_elapsed(c->s, p, c->hz);
        m = &el;
        break;
    default: m = &p->mem_bytes; break;
    }
    *out = m->value;
    return metric_ok(m);
}

/* The key's order of a and b (negative: a first), before the direction;
 * *unknown: which of the two has no value to sort by (bit 0 a, bit 1 b). */
static int key_cmp(const struct sort_ctx *c, size_t ia, size_t ib, int *unknown)
{
    const struct gpu_process *a = &c->s->procs[ia], *b = &c->s->procs[ib];
    *unknown = 0;
    switch (c->key) {
    case PROCLIST_BY_PID: return a->pid < b->pid ? -1 : a->pid > b->pid;
    case PROCLIST_BY_USER:
    case PROCLIST_BY_COMMAND: {
        const char *ta = c->key == PROCLIST_BY_USER ? a->user : a->command;
        const char *tb = c->key == PROCLIST_BY_USER ? b->user : b->command;
        *unknown = (ta[0] ? 0 : 1) | (tb[0] ? 0 : 2);
        return *unknown ? 0 : strcasecmp(ta, tb);
    }
    case PROCLIST_BY_DEVICE: {
        long da = proclist_device_of(c->s, ia), db = proclist_device_of(c->s, ib);
        *unknown = (da < 0 ? 1 : 0) | (db < 0 ? 2 : 0);
        return *unknown ? 0 : da < db ? -1 : da > db;
    }
    default: {
        double ka = 0, kb = 0;
        *unknown = (figure_of(c, a, &ka) ? 0 : 1) | (figure_of(c, b, &kb) ? 0 : 2);
        return *unknown ? 0 : ka > kb ? -1 : ka < kb;
    }
    }
}

static int cmp_rows(const void *pa, const void *pb, void *arg)
{
    const struct sort_ctx *c = arg;
    size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb;
    const struct gpu_process *a = &c->s->procs[ia], *b = &c->s->procs[ib];
    int unknown, r = key_cmp(c, ia, ib, &unknown);
    if (unknown == 1 || unknown == 2) /* unknown last, in either direction */
        return unknown == 1 ? 1 : -1;
    if (r)
        return c->reverse ? -r : r;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    return ia < ib ? -1 : ia > ib;
}

void proclist_sort(const struct snapshot *s, size_t *rows, size_t n, enum proclist_key key,
                   bool reverse)
{
    struct sort_ctx c = {s, key, reverse, proclist_clk_tck()};
    if (n > 1)
        qsort_r(rows, n, sizeof(rows[0]), cmp_rows, &c);
}

long proclist_device_of(const struct snapshot *s, size_t i)
{
    for (size_t di = 0; di < s->ndevices; di++) {
        const struct device *d = &s->devices[di];
        if (i >= d->proc_first && i < d->proc_first + d->nprocs)
            return (long)di;
    }
    return -1;
}

void proclist_device_label(char *out, size_t len, const struct device *d)
{
    if (d->kind == DEV_MIG)
        snprintf(out, len, "%d/%d", d->index, d->mig_index);
    else
        snprintf(out, len, "%d", d->index);
}

void proclist_device_node_label(char *out, size_t len, const struct device *d)
{
    int n = d->node[0] ? snprintf(out, len, "%s:", d->node) : 0;
    if (n < 0 || (size_t)n >= len)
        n = 0;
    proclist_device_label(out + n, len - (size_t)n, d);
}

void proclist_slice_name(char *out, size_t len, const struct device *d,
                         enum proclist_slice_form form)
{
    if (d->kind != DEV_MIG) {
        snprintf(out, len, "GPU %d", d->index);
        return;
    }
    const char *prof = d->profile[0] ? d->profile : "?";
    const char *kind = d->vendor == VENDOR_AMD ? "Partition " : "MIG ";
    if (form == PROCLIST_SLICE_SHORT)
        kind = "";
    int n = snprintf(out, len, "%s%d/%d %s", kind, d->index, d->mig_index, prof);
    if (form != PROCLIST_SLICE_FULL || d->vendor == VENDOR_AMD || n < 0 || (size_t)n >= len)
        return;
    char gi[16] = "?", ci[16] = "?";
    if (d->gi_id >= 0)
        snprintf(gi, sizeof(gi), "%d", d->gi_id);
    if (d->ci_id >= 0)
        snprintf(ci, sizeof(ci), "%d", d->ci_id);
    snprintf(out + n, len - (size_t)n, " GI %s CI %s", gi, ci);
}

long proclist_clk_tck(void)
{
    static long hz; /* the same for the whole run: read once */
    if (hz <= 0) {
        long v = sysconf(_SC_CLK_TCK);
        hz = v > 0 ? v : 100;
    }
    return hz;
}

struct metric proclist_elapsed(const struct snapshot *s, const struct gpu_process *p, long hz)
{
    if (p->start_time == 0)
        return metric_none("start time unknown (not visible from here)");
    if (!s->host_ok || !metric_ok(&s->host.uptime_s))
        return metric_none("host uptime unknown");
    if (hz <= 0)
        hz = proclist_clk_tck();
    double e = s->host.uptime_s.value - (double)p->start_time / (double)hz;
    if (!isfinite(e) || e < -1.0)
        return metric_none("start time later than the host's uptime");
    return metric_direct(e < 0 ? 0 : e);
}

const char *proclist_fmt_elapsed(char *out, size_t len, const struct metric *m)
{
    if (!metric_ok(m) || !(m->value >= 0) || m->value > 1e12) {
        snprintf(out, len, "N/A");
        return out;
    }
    unsigned long long t = (unsigned long long)m->value; /* whole seconds, as ps */
    unsigned long long d = t / 86400, h = t / 3600 % 24, mi = t / 60 % 60, sec = t % 60;
    if (d)
        snprintf(out, len, "%llu-%02llu:%02llu:%02llu", d, h, mi, sec);
    else if (h)
        snprintf(out, len, "%02llu:%02llu:%02llu", h, mi, sec);
    else
        snprintf(out, len, "%02llu:%02llu", mi, sec);
    return out;
}

size_t *proclist_all_by_memory(const struct snapshot *s, size_t *n)
{
    size_t total = 0;
    *n = 0;
    proclist_collect(s, NULL, NULL, 0, &total);
    if (total == 0)
        return NULL;
    size_t *rows = malloc(total * sizeof(*rows));
    if (!rows) {
        errno = ENOMEM;
        return NULL;
    }
    *n = proclist_collect(s, NULL, rows, total, NULL);
    proclist_sort(s, rows, *n, PROCLIST_BY_MEMORY, false);
    return rows;
}
