/*
 * nvml_procs.c — who runs on each GPU and MIG device (docs/processes.md).
 *
 * Per device, its merged list (nvml_procs_read.c) is placed into the
 * snapshot, each process with its utilisation sample where the device has
 * them (nvml_procs_util.c). On MIG, each MIG handle is asked first; the MIG
 * devices whose own lists fail are filled from the parent's aggregate list
 * by gpuInstanceId/computeInstanceId; what cannot be placed is shown once,
 * on the parent, as unattributed — never copied under every instance (the
 * Rust version's bug, seed-errata last row).
 *
 * Everything is written straight into snapshot.procs; sorting, the --top cut,
 * /proc facts and the carry-forward of failed lists happen in collect.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/nvml/nvml_procs.h"
#include "backend/nvml/nvml_procs_read.h"
#include "backend/nvml/nvml_procs_util.h"

static const char *const MIG_UTIL_WHY =
    "NVML does not report per-process utilisation on MIG devices";
static const char *const NO_SAMPLE_WHY = "no utilisation sample for this process since the "
                                         "previous tick";

/* Append one process to s->procs; NULL when the array cannot grow. */
static struct gpu_process *emit(struct snapshot *s, const struct nvml_proc *e)
{
    if (snapshot_reserve_procs(s, s->nprocs + 1) != 0)
        return NULL;
    struct gpu_process *p = &s->procs[s->nprocs++];
    memset(p, 0, sizeof(*p));
    p->pid = e->pid;
    p->local_pid = -1;
    p->type = e->type;
    p->gi_id = e->gi == NVML_NO_ID ? -1 : (int)e->gi;
    p->ci_id = e->ci == NVML_NO_ID ? -1 : (int)e->ci;
    p->mem_bytes = e->mem == NVML_VALUE_NOT_AVAILABLE_ULL
                       ? metric_none("NVML_VALUE_NOT_AVAILABLE")
                       : metric_direct((double)e->mem);
    p->cpu_pct = p->rss_bytes = metric_none("not read");
    return p;
}

static void set_util(struct gpu_process *p, const struct nvml_pu *u, const char *why)
{
    if (u) {
        p->sm_util = metric_direct(u->sm);
        p->mem_util = metric_direct(u->mem);
        p->enc_util = metric_direct(u->enc);
        p->dec_util = metric_direct(u->dec);
    } else {
        p->sm_util = p->mem_util = p->enc_util = p->dec_util = metric_none(why);
    }
}

void nvml_procs_gpu(struct nvml_state *st, const struct dev_cache *c, nvmlDevice_t h,
                    struct snapshot *s, size_t pos)
{
    s->devices[pos].proc_first = s->nprocs;
    s->devices[pos].nprocs = 0;
    nvmlReturn_t rc = nvml_procs_read(st, h);
    struct device *d = &s->devices[pos];
    if (rc != NVML_SUCCESS) {
        d->process_count = metric_none(nvml_rc_reason(rc));
        return;
    }
    /* Samples were read for this device by nvml_process_util() this tick. */
    bool have_pu = st->pus_dev == c;
    const char *why = have_pu ? NO_SAMPLE_WHY
                      : (!metric_ok(&d->m[M_SM_UTIL]) && d->m[M_SM_UTIL].why)
                          ? d->m[M_SM_UTIL].why
                          : "per-process utilisation not available";
    for (size_t i = 0; i < st->list.n; i++) {
        struct gpu_process *p = emit(s, &st->list.e[i]);
        if (!p)
            break;
        set_util(p, have_pu ? nvml_procs_util_find(st, p->pid) : NULL, why);
    }
    d->nprocs = s->nprocs - d->proc_first;
    d->process_count = metric_direct((double)st->list.n);
}

void nvml_procs_mig_begin(struct nvml_state *st, nvmlDevice_t parent_h)
{
    st->parent_read = false;
    /* One list per GPU where the privileged aggregate works: cheaper than
     * three calls on every instance. Re-checked at the slow cadence, since
     * privilege and the driver's answer may change. */
    bool recheck = st->proc_mode == PM_UNKNOWN ||
                   (st->proc_mode == PM_PER_MIG && st->tick - st->proc_mode_tick >= 12 * st->slow_every);
    if (st->proc_mode != PM_PARENT && !recheck)
        return;
    st->parent_rc = nvml_procs_read(st, parent_h);
    if (st->parent_rc == NVML_SUCCESS) {
        struct nvml_proc_list tmp = st->parent;
        st->parent = st->list;
        st->list = tmp;
        st->parent_read = true;
        st->proc_mode = PM_PARENT;
    } else {
        st->proc_mode = PM_PER_MIG;
    }
    st->proc_mode_tick = st->tick;
}

static void queue_pending(struct nvml_state *st, size_t pos, nvmlReturn_t rc)
{
    if (st->npending == st->pending_cap) {
        size_t cap = st->pending_cap ? st->pending_cap * 2 : 8;
        size_t *n = realloc(st->pending, cap * sizeof(*n));
        if (!n)
            return;
        st->pending = n;
        st->pending_cap = cap;
    }
    st->pending[st->npending++] = pos;
    st->pending_rc = rc;
}

void nvml_procs_mig(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t mh,
                    struct snapshot *s, size_t pos)
{
    s->devices[pos].proc_first = s->nprocs;
    s->devices[pos].nprocs = 0;
    struct device *d = &s->devices[pos];
    if (st->parent_read) {
        /* the parent's list, read once for the GPU, places this device's */
        d->process_count = metric_none("not read");
        queue_pending(st, pos, NVML_SUCCESS);
        return;
    }
    /* The graphics and MPS lists of an instance: every tick while they list
     * something, else at the slow cadence (graphics contexts are rare on
     * MIG; an MPS server shows in the compute list at once). */
    bool optional = c->opt_lists_busy || st->tick >= c->opt_lists_next;
    nvmlReturn_t rc = nvml_procs_read_lists(st, mh, optional);
    if (rc == NVML_SUCCESS && optional) {
        bool busy = false;
        for (size_t i = 0; i < st->list.n; i++)
            busy = busy || (st->list.e[i].type & (PROC_GRAPHICS | PROC_MPS));
        c->opt_lists_busy = busy;
        c->opt_lists_next = st->tick + st->slow_every;
        c->opt_type_mask = 0;
        for (size_t i = 0; i < st->list.n; i++)
            c->opt_type_mask |= st->list.e[i].type & (PROC_GRAPHICS | PROC_MPS);
    }
    if (rc == NVML_SUCCESS) {
        for (size_t i = 0; i < st->list.n; i++) {
            struct gpu_process *p = emit(s, &st->list.e[i]);
            if (!p)
                break;
            /* Listed by this MIG handle: it is in this instance. */
            if (p->gi_id < 0)
                p->gi_id = d->gi_id;
            if (p->ci_id < 0)
                p->ci_id = d->ci_id;
            set_util(p, NULL, MIG_UTIL_WHY);
        }
        d->nprocs = s->nprocs - d->proc_first;
        d->process_count = metric_direct((double)st->list.n);
        return;
    }
    /* Provisional: the parent's list may still place this device's processes. */
    d->process_count = metric_none(nvml_rc_reason(rc));
    queue_pending(st, pos, rc);
}

static bool is_pending(const struct nvml_state *st, size_t pos)
{
    for (size_t i = 0; i < st->npending; i++) {
        if (st->pending[i] == pos)
            return true;
    }
    return false;
}

static bool listed_in(const struct snapshot *s, const struct device *d, uint32_t pid)
{
    for (size_t i = 0; i < d->nprocs; i++) {
        if (s->procs[d->proc_first + i].pid == pid)
            return true;
    }
    return false;
}

#define ATTR_NONE ((size_t)-1) /* place on the parent, unattributed */
#define ATTR_SKIP ((size_t)-2) /* a MIG device that read its own list owns it */

/*
 * Where a parent-list entry goes: the one MIG device of this GPU whose GPU
 * instance (and compute instance, when both sides know it) matches. A match
 * on a device that read its own list means the process is already shown
 * there. No match, or several, cannot be placed.
 */
static size_t attribute(const struct nvml_state *st, const struct snapshot *s, size_t parent_pos,
                        const struct nvml_proc *e)
{
    size_t hit = ATTR_NONE;
    int nhit = 0;
    for (size_t pos = parent_pos + 1; pos < s->ndevices; pos++) {
        const struct device *d = &s->devices[pos];
        if (d->parent_pos != (int)parent_pos)
            continue;
        bool match = e->gi != NVML_NO_ID && d->gi_id >= 0 && (unsigned)d->gi_id == e->gi &&
                     (e->ci == NVML_NO_ID || d->ci_id < 0 || (unsigned)d->ci_id == e->ci);
        bool unknown = e->gi == NVML_NO_ID || d->gi_id < 0;
        if ((match || unknown) && !is_pending(st, pos) && listed_in(s, d, e->pid))
            return ATTR_SKIP;
        if (match) {
            hit = pos;
            nhit++;
        }
    }
    if (nhit != 1)
        return ATTR_NONE;
    return is_pending(st, hit) ? hit : ATTR_SKIP;
}

static bool seen_pid(const struct snapshot *s, size_t from, size_t to, uint32_t pid)
{
    for (size_t i = from; i < to; i++) {
        if (s->procs[i].pid == pid)
            return true;
    }
    return false;
}

/* Distinct PIDs over the parent and its MIG devices; -1 when a MIG device's
 * list is unknown (a partial sum would be a made-up number). */
static long parent_count(const struct snapshot *s, size_t parent_pos)
{
    long n = 0;
    for (size_t pos = parent_pos; pos < s->ndevices; pos++) {
        const struct device *d = &s->devices[pos];
        if (pos != parent_pos && d->parent_pos != (int)parent_pos)
            continue;
        if (pos != parent_pos && !metric_ok(&d->process_count))
            return -1;
        for (size_t i = 0; i < d->nprocs; i++) {
            uint32_t pid = s->procs[d->proc_first + i].pid;
            bool dup = false;
            for (size_t q = parent_pos; q < pos && !dup; q++) {
                const struct device *o = &s->devices[q];
                if (q == parent_pos || o->parent_pos == (int)parent_pos)
                    dup = listed_in(s, o, pid);
            }
            dup = dup || seen_pid(s, d->proc_first, d->proc_first + i, pid);
            n += !dup;
        }
    }
    return n;
}

void nvml_procs_mig_done(struct nvml_state *st, nvmlDevice_t parent_h, struct snapshot *s,
                         size_t parent_pos)
{
    s->devices[parent_pos].proc_first = s->nprocs;
    s->devices[parent_pos].nprocs = 0;
    nvmlReturn_t prc = NVML_SUCCESS;
    /* The parent's aggregate needs privilege (NO_PERMISSION otherwise): read
     * already (nvml_procs_mig_begin), or asked only when a MIG device could
     * not answer for itself (and not again this tick if it just failed). */
    if (st->parent_read) {
        prc = NVML_SUCCESS;
    } else if (st->npending > 0 && st->proc_mode == PM_PER_MIG) {
        prc = st->parent_rc; /* failed at the last check: not asked every tick */
    } else if (st->npending > 0) {
        prc = nvml_procs_read(st, parent_h);
        if (prc == NVML_SUCCESS) {
            struct nvml_proc_list tmp = st->parent;
            st->parent = st->list;
            st->list = tmp;
        }
    }
    if (st->npending > 0 && prc == NVML_SUCCESS) {
        for (size_t k = 0; k < st->npending; k++) {
            size_t pos = st->pending[k];
            s->devices[pos].proc_first = s->nprocs;
            for (size_t i = 0; i < st->parent.n; i++) {
                const struct nvml_proc *e = &st->parent.e[i];
                if (attribute(st, s, parent_pos, e) != pos)
                    continue;
                struct gpu_process *p = emit(s, e);
                if (!p)
                    break;
                set_util(p, NULL, MIG_UTIL_WHY);
            }
            struct device *d = &s->devices[pos];
            d->nprocs = s->nprocs - d->proc_first;
            if (d->gi_id < 0)
                d->process_count = metric_none("the MIG device's GPU instance id is unknown, so "
                                               "the parent's list cannot be split; see the "
                                               "parent's unattributed processes");
            else
                d->process_count = (struct metric){
                    .value = (double)d->nprocs,
                    .src = MSRC_DIRECT,
                    .why = "from the parent GPU's list, by GPU/compute instance id",
                };
        }
        s->devices[parent_pos].proc_first = s->nprocs;
        for (size_t i = 0; i < st->parent.n; i++) {
            const struct nvml_proc *e = &st->parent.e[i];
            if (attribute(st, s, parent_pos, e) != ATTR_NONE)
                continue;
            struct gpu_process *p = emit(s, e);
            if (!p)
                break;
            p->unattributed = true;
            set_util(p, NULL, MIG_UTIL_WHY);
        }
        struct device *pd = &s->devices[parent_pos];
        pd->nprocs = s->nprocs - pd->proc_first;
    } else if (st->npending > 0) {
        const char *why =
            prc == NVML_ERROR_NO_PERMISSION
                ? "the MIG device's own process list failed and the parent's aggregate list "
                  "needs privilege (NVML_ERROR_NO_PERMISSION)"
                : nvml_rc_reason(st->pending_rc);
        for (size_t k = 0; k < st->npending; k++)
            s->devices[st->pending[k]].process_count = metric_none(why);
    }
    long n = parent_count(s, parent_pos);
    if (st->npending > 0 && prc == NVML_SUCCESS) {
        /* the aggregate list itself: every process on the GPU, once */
        n = 0;
        for (size_t i = 0; i < st->parent.n; i++) {
            bool dup = false;
            for (size_t j = 0; j < i && !dup; j++)
                dup = st->parent.e[j].pid == st->parent.e[i].pid;
            n += !dup;
        }
    }
    struct device *pd = &s->devices[parent_pos];
    pd->process_count = n < 0 ? metric_none("a MIG device's process list could not be read")
                              : metric_direct((double)n);
    st->npending = 0;
}
