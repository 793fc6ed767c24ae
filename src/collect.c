#include "collect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

int collect_open(struct collector *c, const struct collect_opts *o, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    c->t0_ns = clock_mono_ns();
    c->top = o->top;
    c->budget_ns = (o->budget_ms ? o->budget_ms : COLLECT_BUDGET_MS) * 1000000ull;
    if (procinfo_open(&c->pinfo, o->proc_root) != 0)
        c->pinfo = NULL;
    if (host_open(&c->host, o->proc_root, c->host_error, sizeof(c->host_error)) != 0)
        c->host = NULL;
    if (o->no_gpu) {
        snprintf(c->gpu_error, sizeof(c->gpu_error), "GPU sampling disabled (--no-gpu)");
        return 0;
    }
    c->be = backend_find("nvml");
    if (!c->be) {
        snprintf(c->gpu_error, sizeof(c->gpu_error), "no NVML backend registered");
        return 0;
    }
    struct backend_opts bo = {.nvml_path = o->nvml_path,
                              .gpm_mode = o->gpm_mode,
                              .interval_ms = o->interval_ms,
                              .gpm_exe = o->gpm_exe};
    int rc = c->be->open(&c->be_state, &bo, c->gpu_error, sizeof(c->gpu_error));
    if (rc == BACKEND_ERR_BAD_PATH) {
        snprintf(err, errlen, "%s", c->gpu_error);
        collect_close(c);
        return COLLECT_ERR_BAD_NVML_PATH;
    }
    if (rc != BACKEND_OK)
        c->be_state = NULL;
    return 0;
}

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

static void fill_host_facts(struct collector *c, struct gpu_process *p)
{
    if (c->pinfo) {
        procinfo_fill(c->pinfo, p);
    } else {
        p->local_pid = -1;
        p->cpu_pct = p->rss_bytes = metric_none("/proc facts unavailable (out of memory)");
    }
}

/* This tick's list of device d: sorted, cut to --top, /proc facts added. */
static size_t take_fresh(struct collector *c, const struct snapshot *s, const struct device *d,
                         size_t out)
{
    size_t n = d->nprocs;
    if (grow((void **)&c->order, &c->order_cap, n, sizeof(*c->order)) != 0)
        return out;
    const struct gpu_process *base = &s->procs[d->proc_first];
    /* Insertion sort of indices: lists are short, and glibc's qsort may
     * malloc a merge buffer, which a steady tick must not do. */
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        while (j > 0 && proc_before(&base[i], &base[c->order[j - 1]])) {
            c->order[j] = c->order[j - 1];
            j--;
        }
        c->order[j] = (uint32_t)i;
    }
    size_t keep = c->top && n > c->top ? c->top : n;
    if (grow((void **)&c->pbuf, &c->pbuf_cap, out + keep, sizeof(*c->pbuf)) != 0)
        return out;
    for (size_t i = 0; i < keep; i++) {
        struct gpu_process *p = &c->pbuf[out++];
        *p = base[c->order[i]];
        fill_host_facts(c, p);
    }
    return out;
}

static const struct collect_plist *prev_list(const struct collector *c, const char *uuid)
{
    for (size_t i = 0; i < c->nprev_plists; i++) {
        if (strcmp(c->prev_plists[i].uuid, uuid) == 0)
            return &c->prev_plists[i];
    }
    return NULL;
}

/* A failed list: last tick's processes that still exist (same PID and start
 * time, seen from here), for at most COLLECT_CARRY_TICKS ticks (the seed's
 * v0.3.4 flicker fix, without its v0.3.6 "stale forever" bug). */
static size_t take_carried(struct collector *c, struct device *d, size_t out, unsigned *ticks)
{
    const struct collect_plist *pl = prev_list(c, d->uuid);
    *ticks = 0;
    if (!pl || pl->carried >= COLLECT_CARRY_TICKS || !c->pinfo)
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
static void procs_post(struct collector *c, struct snapshot *s)
{
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
        else if (d->kind == DEV_MIG || !d->mig_enabled)
            out = take_carried(c, d, out, &ticks);
        d->proc_first = first;
        d->nprocs = out - first;
        if ((fresh || ticks > 0) && d->uuid[0] &&
            grow((void **)&c->plists, &c->plists_cap, np + 1, sizeof(*c->plists)) == 0) {
            struct collect_plist *pl = &c->plists[np++];
            snprintf(pl->uuid, sizeof(pl->uuid), "%s", d->uuid);
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
    struct collect_plist *tl = c->prev_plists;
    tcap = c->prev_plists_cap;
    c->prev_plists = c->plists;
    c->prev_plists_cap = c->plists_cap;
    c->nprev_plists = np;
    c->plists = tl;
    c->plists_cap = tcap;
}

void collect_interrupt(struct collector *c)
{
    if (c->be && c->be_state && c->be->interrupt)
        c->be->interrupt(c->be_state);
}

void collect_settle(struct collector *c, unsigned timeout_ms)
{
    if (c->be && c->be_state && c->be->settle)
        c->be->settle(c->be_state, timeout_ms);
}

int collect_tick(struct collector *c, struct snapshot *s)
{
    return collect_tick_until(c, s, clock_mono_ns() + c->budget_ns);
}

int collect_tick_until(struct collector *c, struct snapshot *s, uint64_t deadline_ns)
{
    s->elapsed_ns = clock_mono_ns() - c->t0_ns;
    s->wall_ns = clock_wall_ns();

    if (c->host) {
        s->host_ok = true;
        s->host_error[0] = '\0';
        host_sample(c->host, &s->host);
        snapshot_own_cores(s);
    } else {
        s->host_ok = false;
        snprintf(s->host_error, sizeof(s->host_error), "%s", c->host_error);
    }

    if (!c->be_state) {
        s->gpu_ok = false;
        s->ndevices = 0;
        snprintf(s->gpu_error, sizeof(s->gpu_error), "%s", c->gpu_error);
        return 0;
    }
    if (c->be->sample(c->be_state, s, deadline_ns) != 0) {
        s->gpu_ok = false;
        snprintf(s->gpu_error, sizeof(s->gpu_error), "%s",
                 backend_last_error(c->be, c->be_state));
        return 0;
    }
    s->gpu_ok = true;
    s->gpu_error[0] = '\0';
    procs_post(c, s);
    return 0;
}

void collect_close(struct collector *c)
{
    if (c->be && c->be_state)
        c->be->close(c->be_state);
    c->be_state = NULL;
    if (c->host)
        host_close(c->host);
    c->host = NULL;
    procinfo_close(c->pinfo);
    c->pinfo = NULL;
    free(c->pbuf);
    free(c->prev);
    free(c->plists);
    free(c->prev_plists);
    free(c->order);
    c->pbuf = c->prev = NULL;
    c->plists = c->prev_plists = NULL;
    c->order = NULL;
    c->pbuf_cap = c->prev_cap = c->nprev = c->order_cap = 0;
    c->plists_cap = c->prev_plists_cap = c->nprev_plists = 0;
}
