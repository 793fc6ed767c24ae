/*
 * procpost.c — what the collector does with the process lists a backend
 * read: per device, sort (memory descending, unknown last, ties by PID),
 * cut to --top, add the /proc facts of what is shown, and carry a failed
 * list forward for a bounded number of ticks (only processes that still
 * exist with the same start time). A fleet's processes (a device with a
 * node) are only sorted and cut: their PIDs are other hosts'.
 */
#include "engine/procpost.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/text.h"

/* Grow *buf to hold want elements of size elem (grow-only). */
static int grow(void **buf, size_t *cap, size_t want, size_t elem)
{
    if (want <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < want)
        n *= 2;
    void *b = realloc(*buf, n * elem);
    if (!b)
        return -1;
    *buf = b;
    *cap = n;
    return 0;
}

/* Memory descending; unknown memory after every known value; ties by PID. */
static bool proc_before(const struct gpu_process *a, const struct gpu_process *b)
{
    bool ka = metric_ok(&a->mem_bytes), kb = metric_ok(&b->mem_bytes);
    if (ka != kb)
        return ka;
    if (ka && a->mem_bytes.value != b->mem_bytes.value)
        return a->mem_bytes.value > b->mem_bytes.value;
    return a->pid < b->pid;
}

/* Heapsort of indices by proc_before: O(n log n) with no allocation
 * (glibc's qsort may malloc a merge buffer, which a steady tick must not
 * do; insertion sort was O(n^2) on a busy GPU). */
static void sift(uint32_t *o, size_t root, size_t n, const struct gpu_process *base)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n)
            return;
        /* a max-heap of "after": the root is the one sorted last */
        if (child + 1 < n && proc_before(&base[o[child]], &base[o[child + 1]]))
            child++;
        if (!proc_before(&base[o[root]], &base[o[child]]))
            return;
        uint32_t t = o[root];
        o[root] = o[child];
        o[child] = t;
        root = child;
    }
}

static void sort_order(uint32_t *o, size_t n, const struct gpu_process *base)
{
    if (n < 2)
        return;
    for (size_t i = n / 2; i-- > 0;)
        sift(o, i, n, base);
    for (size_t end = n - 1; end > 0; end--) {
        uint32_t t = o[0];
        o[0] = o[end];
        o[end] = t;
        sift(o, 0, end, base);
    }
}

static void fill_host_facts(struct procpost *c, struct gpu_process *p)
{
    if (c->pinfo) {
        procinfo_fill(c->pinfo, p);
    } else {
        p->local_pid = -1;
        p->cpu_pct = p->rss_bytes = metric_none("/proc facts unavailable (out of memory)");
    }
}

/* This tick's list of device d: sorted, cut to --top, /proc facts added. */
static size_t take_fresh(struct procpost *c, const struct snapshot *s, const struct device *d,
                         size_t out)
{
    size_t n = d->nprocs;
    if (grow((void **)&c->order, &c->order_cap, n, sizeof(*c->order)) != 0)
        return out;
    const struct gpu_process *base = &s->procs[d->proc_first];
    for (size_t i = 0; i < n; i++)
        c->order[i] = (uint32_t)i;
    sort_order(c->order, n, base);
    size_t keep = c->top && n > c->top ? c->top : n;
    if (grow((void **)&c->pbuf, &c->pbuf_cap, out + keep, sizeof(*c->pbuf)) != 0)
        return out;
    for (size_t i = 0; i < keep; i++) {
        struct gpu_process *p = &c->pbuf[out++];
        *p = base[c->order[i]];
        /* a fleet's process (--prometheus) runs on its device's node: its
         * PID means nothing in this host's /proc */
        if (!d->node[0])
            fill_host_facts(c, p);
    }
    return out;
}

static const struct procpost_list *prev_list(const struct procpost *c, const char *uuid)
{
    for (size_t i = 0; i < c->nprev_plists; i++) {
        if (strcmp(c->prev_plists[i].uuid, uuid) == 0)
            return &c->prev_plists[i];
    }
    return NULL;
}

/* A failed list: last tick's processes that still exist (same PID and start
 * time, seen from here), for at most PROCPOST_CARRY_TICKS ticks (the seed's
 * v0.3.4 flicker fix, without its v0.3.6 "stale forever" bug). */
static size_t take_carried(struct procpost *c, struct device *d, size_t out, unsigned *ticks)
{
    const struct procpost_list *pl = prev_list(c, d->uuid);
    *ticks = 0;
    if (!pl || pl->carried >= carry_ticks() || !c->pinfo)
        return out;
    if (grow((void **)&c->pbuf, &c->pbuf_cap, out + pl->n, sizeof(*c->pbuf)) != 0)
        return out;
    size_t first = out;
    for (size_t i = 0; i < pl->n; i++) {
        const struct gpu_process *old = &c->prev[pl->first + i];
        if (!procinfo_alive(c->pinfo, old->pid, old->start_time))
            continue;
        struct gpu_process *p = &c->pbuf[out++];
        *p = *old;
        p->carried = true;
        fill_host_facts(c, p);
    }
    if (out > first) {
        *ticks = pl->carried + 1;
        d->process_count = (struct metric){
            .value = (double)(out - first),
            .src = MSRC_CARRIED,
            .why = d->process_count.why,
        };
    }
    return out;
}

/*
 * After the backend: per device, the list it read (sorted, cut to --top) or,
 * where the read failed, the carried previous list; /proc facts for what is
 * shown; then the shown lists are remembered for the next tick. A MIG-enabled
 * GPU's own list is derived from its instances' and is never carried.
 */
void procpost_run(struct procpost *c, struct procinfo *pinfo, unsigned top, struct snapshot *s)
{
    c->pinfo = pinfo;
    c->top = top;
    if (c->pinfo)
        procinfo_begin(c->pinfo, clock_mono_ns());
    size_t out = 0, np = 0;
    for (size_t i = 0; i < s->ndevices; i++) {
        struct device *d = &s->devices[i];
        size_t first = out;
        unsigned ticks = 0;
        bool fresh = metric_ok(&d->process_count);
        if (fresh)
            out = take_fresh(c, s, d, out);
        else if ((d->kind == DEV_MIG || !d->mig_enabled) && !d->node[0])
            out = take_carried(c, d, out, &ticks); /* a fleet's backend carries its own */
        d->proc_first = first;
        d->nprocs = out - first;
        if ((fresh || ticks > 0) && d->uuid[0] &&
            grow((void **)&c->plists, &c->plists_cap, np + 1, sizeof(*c->plists)) == 0) {
            struct procpost_list *pl = &c->plists[np++];
            text_copy(pl->uuid, sizeof(pl->uuid), d->uuid);
            pl->first = first;
            pl->n = d->nprocs;
            pl->carried = ticks;
        }
    }
    if (c->pinfo)
        procinfo_end(c->pinfo);
    if (snapshot_reserve_procs(s, out) != 0) {
        out = 0;
        for (size_t i = 0; i < s->ndevices; i++)
            s->devices[i].nprocs = 0;
    }
    if (out)
        memcpy(s->procs, c->pbuf, out * sizeof(*s->procs));
    s->nprocs = out;
    /* This tick's lists become the previous ones: swap, don't copy. */
    struct gpu_process *tp = c->prev;
    size_t tcap = c->prev_cap;
    c->prev = c->pbuf;
    c->prev_cap = c->pbuf_cap;
    c->nprev = out;
    c->pbuf = tp;
    c->pbuf_cap = tcap;
    struct procpost_list *tl = c->prev_plists;
    tcap = c->prev_plists_cap;
    c->prev_plists = c->plists;
    c->prev_plists_cap = c->plists_cap;
    c->nprev_plists = np;
    c->plists = tl;
    c->plists_cap = tcap;
}


void procpost_free(struct procpost *c)
{
    free(c->pbuf);
    free(c->prev);
    free(c->plists);
    free(c->prev_plists);
    free(c->order);
    memset(c, 0, sizeof(*c));
}

static bool first_sight(const struct gpu_process *p)
{
    return p->start_time != 0 && !metric_ok(&p->cpu_pct);
}

size_t procpost_first_sight(const struct snapshot *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nprocs; i++)
        n += first_sight(&s->procs[i]);
    return n;
}

/* Only the CPU % (and the RSS read with it) of a process that is still the
 * one listed; everything else stays as the tick read it. */
void procpost_second_look(struct procinfo *pinfo, struct snapshot *s, uint64_t now_ns)
{
    if (!pinfo)
        return;
    procinfo_begin(pinfo, now_ns);
    for (size_t i = 0; i < s->nprocs; i++) {
        struct gpu_process *p = &s->procs[i];
        if (!first_sight(p))
            continue;
        struct gpu_process t = *p;
        procinfo_fill(pinfo, &t);
        if (t.start_time == p->start_time && metric_ok(&t.cpu_pct)) {
            p->cpu_pct = t.cpu_pct;
            p->rss_bytes = t.rss_bytes;
        }
    }
    procinfo_end(pinfo);
}
