/*
 * nvml_merge.c — a tick's GPU parts into the snapshot: a finished part as
 * it is (its reasons copied into the snapshot's notes), and the part of a
 * GPU whose sample has not come back aged like a failed read (carried for
 * carry_ticks() ticks, then none with "stalled N s in <call>").
 */
#include <stdio.h>
#include <string.h>

#include "backend/nvml/nvml_root.h"
#include "core/model.h"

int nvml_merge_part(struct snapshot *s, const struct snapshot *p)
{
    if (snapshot_reserve(s, s->ndevices + p->ndevices) != 0 ||
        snapshot_reserve_procs(s, s->nprocs + p->nprocs) != 0)
        return -1;
    size_t base = s->ndevices, pbase = s->nprocs;
    if (p->ndevices)
        memcpy(s->devices + base, p->devices, p->ndevices * sizeof(*p->devices));
    if (p->nprocs)
        memcpy(s->procs + pbase, p->procs, p->nprocs * sizeof(*p->procs));
    for (size_t i = 0; i < p->ndevices; i++) {
        struct device *d = &s->devices[base + i];
        if (d->parent_pos >= 0)
            d->parent_pos += (int)base;
        d->proc_first += pbase;
        d->stall = NULL;
        /* reasons in the part's notes: copy them into ours */
        for (int k = 0; k < M_COUNT; k++) {
            const char *w = d->m[k].why;
            if (w && p->notes && w >= p->notes && w < p->notes + p->notes_cap)
                d->m[k].why = snapshot_note(s, "%s", w);
        }
    }
    s->ndevices += p->ndevices;
    s->nprocs += p->nprocs;
    return 0;
}

/* A worker that has not finished: its last part, aged (carried for
 * COLLECT_CARRY_TICKS ticks, then none), or a placeholder. */
void nvml_merge_stalled(const struct nvml_root *r, struct worker *w, struct snapshot *s,
                        uint64_t now)
{
    const char *sym = atomic_load_explicit(&w->st.cur_sym, memory_order_relaxed);
    uint64_t t0 = atomic_load(&w->tick_start_ns);
    double secs = t0 && now > t0 ? (double)(now - t0) / 1e9 : 0;
    const char *note = snapshot_note(s, "stalled %.0f s in %s", secs,
                                     sym ? sym : "an NVML call");
    size_t first = s->ndevices;
    if (w->have_last) {
        if (nvml_merge_part(s, w->last) != 0)
            return;
    } else {
        if (snapshot_reserve(s, s->ndevices + 1) != 0)
            return;
        struct device *d = &s->devices[s->ndevices++];
        memset(d, 0, sizeof(*d));
        d->kind = DEV_GPU;
        d->index = (int)w->index;
        d->mig_index = d->parent_pos = d->gi_id = d->ci_id = -1;
        d->cc_major = d->cc_minor = -1;
        d->slices = d->slices_total = -1;
        snprintf(d->uuid, sizeof(d->uuid), "%s", w->uuid);
        snprintf(d->name, sizeof(d->name), "%s", w->name);
        for (int k = 0; k < M_COUNT; k++)
            d->m[k] = metric_none(note);
        d->process_count = metric_none(note);
        d->proc_first = s->nprocs;
    }
    bool carry = w->late <= carry_ticks();
    uint64_t interval = (uint64_t)(r->o.interval_ms ? r->o.interval_ms : 1000) * 1000000ull;
    bool say = t0 && now - t0 > 2 * interval;
    for (size_t i = first; i < s->ndevices; i++) {
        struct device *d = &s->devices[i];
        for (int k = 0; k < M_COUNT; k++) {
            struct metric *m = &d->m[k];
            if (metric_ok(m) && carry)
                m->src = MSRC_CARRIED;
            else
                *m = metric_none(note);
        }
        /* the collector carries the process list itself (bounded) */
        d->process_count = metric_none(note);
        d->nprocs = 0;
        d->stall = say || !carry ? note : NULL;
    }
    s->partial = true;
}
