/*
 * nvml_procs.c — who runs on each GPU and MIG device (docs/processes.md).
 *
 * Per device, the compute, graphics and MPS-compute lists are merged into one
 * list keyed by (PID, GPU instance, compute instance), the type bits OR-ed.
 * Each symbol writes its own entry stride (nvml_load.c decides it per driver,
 * nvml-facts §6). On MIG, each MIG handle is asked first; the MIG devices
 * whose own lists fail are filled from the parent's aggregate list by
 * gpuInstanceId/computeInstanceId; what cannot be placed is shown once, on
 * the parent, as unattributed — never copied under every instance (the Rust
 * version's bug, seed-errata last row).
 *
 * Everything is written straight into snapshot.procs; sorting, the --top cut,
 * /proc facts and the carry-forward of failed lists happen in collect.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/nvml_internal.h"

/* The widest entry any process-list symbol writes (the 535.43–535.86 "v3"). */
#define MAX_STRIDE sizeof(nvmlProcessInfo_535cc_t)
#define INVALID_ID 0xFFFFFFFFu
/* INSUFFICIENT_SIZE answers tolerated in a row before giving up. */
#define MAX_ATTEMPTS 4
/* The most entries one list may take (2 MiB at the widest stride): a driver
 * that keeps asking for more is answered with its own INSUFFICIENT_SIZE,
 * never with unbounded memory. Far above any real GPU's process count. */
#define MAX_PROC_ENTRIES 65536u
/* The most per-process utilisation samples one answer may take (2.5 MiB at
 * 40 bytes), for the same reason: the count is the driver's word, up to
 * 2^32-1. The list cap is already far above any real GPU's processes, and
 * a driver that keeps few samples per process stays well under it. */
#define MAX_UTIL_SAMPLES MAX_PROC_ENTRIES
/* A buffer grown past SHRINK_ABOVE entries is given back once an answer
 * uses under an eighth of it: down to twice that answer, SHRINK_KEEP at
 * least, so a storm of INSUFFICIENT_SIZE does not hold its peak for good. */
#define SHRINK_ABOVE 4096u
#define SHRINK_KEEP 1024u

static const char *const MIG_UTIL_WHY =
    "NVML does not report per-process utilisation on MIG devices";
static const char *const NO_SAMPLE_WHY = "no utilisation sample for this process since the "
                                         "previous tick";

/* ---- open-addressing indexes (position + 1 per slot, 0 empty) ---- */

static size_t ix_slot(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

static uint64_t proc_key(const struct nvml_proc *p)
{
    return (uint64_t)p->pid ^ ((uint64_t)p->gi << 32) ^ ((uint64_t)p->ci * 0x100000001b3ull);
}

/* Room for n entries, at most half full. 1: reallocated and cleared (the
 * caller re-inserts its entries); 0: it fits; -1: out of memory. */
static int ix_reserve(uint32_t **ix, size_t *cap, size_t n)
{
    if (*cap >= 2 * n && *cap)
        return 0;
    size_t c = 64;
    while (c < 2 * n)
        c *= 2;
    uint32_t *x = realloc(*ix, c * sizeof(*x));
    if (!x)
        return -1;
    memset(x, 0, c * sizeof(*x));
    *ix = x;
    *cap = c;
    return 1;
}

static void ix_insert(uint32_t *ix, size_t cap, uint64_t key, size_t pos)
{
    size_t h = ix_slot(key, cap);
    while (ix[h])
        h = (h + 1) & (cap - 1);
    ix[h] = (uint32_t)pos + 1;
}

static int list_ix_fit(struct nvml_proc_list *l, size_t n)
{
    int r = ix_reserve(&l->ix, &l->ixcap, n);
    for (size_t i = 0; r == 1 && i < l->n; i++)
        ix_insert(l->ix, l->ixcap, proc_key(&l->e[i]), i);
    return r < 0 ? -1 : 0;
}

void nvml_proc_list_clear(struct nvml_proc_list *l)
{
    l->n = 0;
    if (l->ix)
        memset(l->ix, 0, l->ixcap * sizeof(*l->ix));
}

static int list_add(struct nvml_proc_list *l, const struct nvml_proc *p)
{
    if (list_ix_fit(l, l->n + 1) != 0)
        return -1;
    size_t h = ix_slot(proc_key(p), l->ixcap);
    for (; l->ix[h]; h = (h + 1) & (l->ixcap - 1)) {
        struct nvml_proc *e = &l->e[l->ix[h] - 1];
        if (e->pid != p->pid || e->gi != p->gi || e->ci != p->ci)
            continue;
        /* The same process in two lists (compute + graphics): one entry.
         * Each list reports the process's memory; keep a known value. */
        e->type |= p->type;
        if (e->mem == NVML_VALUE_NOT_AVAILABLE_ULL ||
            (p->mem != NVML_VALUE_NOT_AVAILABLE_ULL && p->mem > e->mem))
            e->mem = p->mem;
        return 0;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 32;
        struct nvml_proc *n = realloc(l->e, cap * sizeof(*n));
        if (!n)
            return -1;
        l->e = n;
        l->cap = cap;
    }
    l->e[l->n] = *p;
    l->ix[h] = (uint32_t)++l->n;
    return 0;
}

/* Shrink *buf (*cap entries of elem bytes) after an answer of count
 * entries, as SHRINK_ABOVE says; a failed realloc keeps the old buffer. */
static void buf_shrink(void **buf, size_t *cap, size_t count, size_t elem)
{
    if (*cap <= SHRINK_ABOVE || count * 8 >= *cap)
        return;
    size_t keep = count * 2 > SHRINK_KEEP ? count * 2 : SHRINK_KEEP;
    void *b = realloc(*buf, keep * elem);
    if (b) {
        *buf = b;
        *cap = keep;
    }
}

/*
 * A table (entries and their index) after a tick that used n of its *cap
 * entries: grown past SHRINK_ABOVE and now under an eighth full, it is cut
 * like a sample buffer, and a new index sized for n replaces the old one
 * (the caller re-inserts its entries). False when nothing changed: small
 * enough already, or an allocation failed (the old table stays whole).
 */
static bool table_trim(void **e, size_t *cap, size_t n, size_t elem, uint32_t **ix, size_t *ixcap)
{
    if (*cap <= SHRINK_ABOVE || n * 8 >= *cap)
        return false;
    size_t c = 64;
    while (c < 2 * n)
        c *= 2;
    uint32_t *x = calloc(c, sizeof(*x));
    if (!x)
        return false;
    size_t keep = *cap;
    buf_shrink(e, &keep, n, elem);
    if (keep == *cap) {
        free(x);
        return false;
    }
    *cap = keep;
    free(*ix);
    *ix = x;
    *ixcap = c;
    return true;
}

static int raw_reserve(struct nvml_state *st, size_t entries)
{
    if (entries <= st->raw_cap)
        return 0;
    unsigned char *b = realloc(st->raw, entries * MAX_STRIDE);
    if (!b)
        return -1;
    st->raw = b;
    st->raw_cap = entries;
    return 0;
}

nvmlReturn_t nvml_procs_read_kind(struct nvml_state *st, nvmlDevice_t h, nvml_fn_dev_procs fn,
                                  size_t stride, unsigned type, const char *sym)
{
    if (!fn || stride < sizeof(nvmlProcessInfo_v1_t) || stride > MAX_STRIDE)
        return NVML_ERROR_FUNCTION_NOT_FOUND;
    nvmlReturn_t rc = NVML_ERROR_INSUFFICIENT_SIZE;
    /* With no buffer yet the first call is NVIDIA's size query (count 0,
     * NULL); later ticks pass the buffer straight away. The list can grow
     * between a size answer and the next call, so every answer of 7 is
     * over-allocated by a quarter and retried. */
    for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        unsigned int count = (unsigned int)st->raw_cap;
        rc = CALL(st, sym, fn(h, &count, st->raw_cap ? (void *)st->raw : NULL));
        if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
            size_t want = (size_t)count + count / 4 + 4;
            if (want <= st->raw_cap)
                want = st->raw_cap * 2; /* "too small" yet the count fits: grow anyway */
            if (want > MAX_PROC_ENTRIES) {
                if (st->raw_cap >= MAX_PROC_ENTRIES)
                    break;
                want = MAX_PROC_ENTRIES;
            }
            if (raw_reserve(st, want) != 0)
                return NVML_ERROR_MEMORY;
            continue;
        }
        if (rc != NVML_SUCCESS)
            return rc;
        /* Give back a buffer a storm of INSUFFICIENT_SIZE grew, once the
         * lists are short again. */
        buf_shrink((void **)&st->raw, &st->raw_cap, count, MAX_STRIDE);
        for (unsigned int i = 0; i < count && i < st->raw_cap; i++) {
            const unsigned char *e = st->raw + (size_t)i * stride;
            struct nvml_proc p = {.gi = INVALID_ID, .ci = INVALID_ID, .type = type};
            /* Offsets of nvmlProcessInfo_v1/_v2 (nvml_api.h asserts them). */
            memcpy(&p.pid, e + offsetof(nvmlProcessInfo_v2_t, pid), sizeof(p.pid));
            memcpy(&p.mem, e + offsetof(nvmlProcessInfo_v2_t, usedGpuMemory), sizeof(p.mem));
            if (stride >= sizeof(nvmlProcessInfo_v2_t)) {
                memcpy(&p.gi, e + offsetof(nvmlProcessInfo_v2_t, gpuInstanceId), sizeof(p.gi));
                memcpy(&p.ci, e + offsetof(nvmlProcessInfo_v2_t, computeInstanceId),
                       sizeof(p.ci));
            }
            if (p.pid == 0) { /* not a process: never shown as one (nor as us) */
                debuglog_printf("%s dev=%s: PID 0 in the list, dropped", sym, st->label);
                continue;
            }
            if (list_add(&st->list, &p) != 0)
                return NVML_ERROR_MEMORY;
        }
        return NVML_SUCCESS;
    }
    return rc;
}

nvmlReturn_t nvml_procs_read(struct nvml_state *st, nvmlDevice_t h)
{
    return nvml_procs_read_lists(st, h, true);
}

nvmlReturn_t nvml_procs_read_lists(struct nvml_state *st, nvmlDevice_t h, bool optional)
{
    const struct nvml_fns *f = &st->lib.f;
    const size_t *stride = st->lib.proc_stride;
    nvml_proc_list_clear(&st->list);
    nvmlReturn_t rc =
        nvml_procs_read_kind(st, h, f->procs_compute, stride[NVML_PROCS_COMPUTE], PROC_COMPUTE,
                             "nvmlDeviceGetComputeRunningProcesses");
    if (rc != NVML_SUCCESS || !optional)
        return rc;
    /* Optional: graphics is not supported on MIG devices, MPS needs Volta;
     * their failure leaves the compute list standing. */
    if (f->procs_graphics)
        (void)nvml_procs_read_kind(st, h, f->procs_graphics, stride[NVML_PROCS_GRAPHICS],
                                   PROC_GRAPHICS, "nvmlDeviceGetGraphicsRunningProcesses");
    if (f->procs_mps)
        (void)nvml_procs_read_kind(st, h, f->procs_mps, stride[NVML_PROCS_MPS], PROC_MPS,
                                   "nvmlDeviceGetMPSComputeRunningProcesses");
    struct nvml_proc_list *l = &st->list;
    if (table_trim((void **)&l->e, &l->cap, l->n, sizeof(*l->e), &l->ix, &l->ixcap))
        for (size_t i = 0; i < l->n; i++)
            ix_insert(l->ix, l->ixcap, proc_key(&l->e[i]), i);
    return NVML_SUCCESS;
}

/* ---------------------------------------------- per-process utilisation */

static int pus_ix_fit(struct nvml_state *st, size_t n)
{
    int r = ix_reserve(&st->pus_ix, &st->pus_ixcap, n);
    for (size_t i = 0; r == 1 && i < st->npus; i++)
        ix_insert(st->pus_ix, st->pus_ixcap, st->pus[i].pid, i);
    return r < 0 ? -1 : 0;
}

static void pus_clear(struct nvml_state *st)
{
    st->npus = 0;
    if (st->pus_ix)
        memset(st->pus_ix, 0, st->pus_ixcap * sizeof(*st->pus_ix));
}

/* The table of one answer, given back once answers are far shorter than
 * its peak (table_trim). */
static void pus_trim(struct nvml_state *st)
{
    if (table_trim((void **)&st->pus, &st->pus_cap, st->npus, sizeof(*st->pus), &st->pus_ix,
                   &st->pus_ixcap))
        for (size_t i = 0; i < st->npus; i++)
            ix_insert(st->pus_ix, st->pus_ixcap, st->pus[i].pid, i);
}

/* Keep the newest sample of each PID in st->pus (NVML's buffer may hold
 * several per process). Samples above 100 % or not newer than lastSeen are
 * discarded (nvtop #110), and so are PID 0's: it is dropped from the
 * process lists, so its share must not count in the device's sum either.
 * Returns -1 when the table cannot grow. */
static int pus_note(struct nvml_state *st, unsigned long long last_seen, unsigned long long ts,
                    uint32_t pid, unsigned sm, unsigned mem, unsigned enc, unsigned dec)
{
    if (ts <= last_seen || sm > 100 || mem > 100 || enc > 100 || dec > 100)
        return 0;
    if (pid == 0) {
        debuglog_printf("per-process utilisation dev=%s: PID 0's sample, dropped", st->label);
        return 0;
    }
    if (pus_ix_fit(st, st->npus + 1) != 0)
        return -1;
    size_t h = ix_slot(pid, st->pus_ixcap);
    for (; st->pus_ix[h]; h = (h + 1) & (st->pus_ixcap - 1)) {
        struct nvml_pu *u = &st->pus[st->pus_ix[h] - 1];
        if (u->pid == pid) {
            if (ts > u->ts)
                *u = (struct nvml_pu){pid, sm, mem, enc, dec, ts};
            return 0;
        }
    }
    if (st->npus == st->pus_cap) {
        size_t cap = st->pus_cap ? st->pus_cap * 2 : 32;
        struct nvml_pu *n = realloc(st->pus, cap * sizeof(*n));
        if (!n)
            return -1;
        st->pus = n;
        st->pus_cap = cap;
    }
    st->pus[st->npus] = (struct nvml_pu){pid, sm, mem, enc, dec, ts};
    st->pus_ix[h] = (uint32_t)++st->npus;
    return 0;
}

/* Grow a sample buffer to at least want entries, at most MAX_UTIL_SAMPLES
 * (buf_shrink gives the room back). */
static int grow_buf(void **buf, size_t *cap, size_t want, size_t elem)
{
    if (want > MAX_UTIL_SAMPLES)
        want = MAX_UTIL_SAMPLES;
    if (want <= *cap)
        return 0;
    void *b = realloc(*buf, want * elem);
    if (!b)
        return -1;
    *buf = b;
    *cap = want;
    return 0;
}

/* nvmlDeviceGetProcessesUtilizationInfo (550+): the same samples with the
 * JPEG/OFA engines added; a NULL or short array answers INSUFFICIENT_SIZE. */
static nvmlReturn_t util_info(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h)
{
    nvmlProcessesUtilizationInfo_v1_t info;
    for (int attempt = 0; attempt < 3; attempt++) {
        memset(&info, 0, sizeof(info));
        info.version = nvmlProcessesUtilizationInfo_v1;
        info.lastSeenTimeStamp = c->proc_util_last_seen;
        info.processSamplesCount = (unsigned int)st->pui_cap;
        info.procUtilArray = st->pui_cap ? st->pui_buf : NULL;
        nvmlReturn_t rc = CALL(st, "nvmlDeviceGetProcessesUtilizationInfo",
                               st->lib.f.processes_util_info(h, &info));
        if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
            /* More than the cap holds: no samples this time, rather than
             * the memory the driver asks for. */
            if (st->pui_cap >= MAX_UTIL_SAMPLES)
                return rc;
            /* the list may grow between the two calls: over-allocate */
            if (grow_buf((void **)&st->pui_buf, &st->pui_cap,
                         (size_t)info.processSamplesCount + 8, sizeof(*st->pui_buf)) != 0)
                return NVML_ERROR_MEMORY;
            continue;
        }
        if (rc != NVML_SUCCESS)
            return rc;
        size_t n = info.processSamplesCount < st->pui_cap ? info.processSamplesCount : st->pui_cap;
        for (size_t i = 0; i < n; i++) {
            const nvmlProcessUtilizationInfo_v1_t *p = &st->pui_buf[i];
            if (pus_note(st, c->proc_util_last_seen, p->timeStamp, p->pid, p->smUtil, p->memUtil,
                         p->encUtil, p->decUtil) != 0)
                return NVML_ERROR_MEMORY;
        }
        buf_shrink((void **)&st->pui_buf, &st->pui_cap, n, sizeof(*st->pui_buf));
        return NVML_SUCCESS;
    }
    return NVML_ERROR_INSUFFICIENT_SIZE;
}

/* nvmlDeviceGetProcessUtilization: size query (answers 7 with the count in
 * practice, nvml-facts §5), then the data. */
static nvmlReturn_t util_samples(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h)
{
    nvml_fn_dev_proc_util fn = st->lib.f.process_util;
    unsigned int n = 0;
    nvmlReturn_t rc = CALL(st, "nvmlDeviceGetProcessUtilization",
                           fn(h, NULL, &n, c->proc_util_last_seen));
    if (rc != NVML_SUCCESS && rc != NVML_ERROR_INSUFFICIENT_SIZE)
        return rc;
    if (n == 0)
        return NVML_ERROR_NOT_FOUND;
    /* the list may grow between the two calls; a count above the cap gets
     * the cap, and the driver's INSUFFICIENT_SIZE if it wants more */
    if (grow_buf((void **)&st->pu_buf, &st->pu_cap, (size_t)n + 8, sizeof(*st->pu_buf)) != 0)
        return NVML_ERROR_MEMORY;
    n = (unsigned int)st->pu_cap;
    rc = CALL(st, "nvmlDeviceGetProcessUtilization",
              fn(h, st->pu_buf, &n, c->proc_util_last_seen));
    if (rc != NVML_SUCCESS)
        return rc;
    size_t got = n < st->pu_cap ? n : st->pu_cap;
    for (size_t i = 0; i < got; i++) {
        const nvmlProcessUtilizationSample_t *p = &st->pu_buf[i];
        if (pus_note(st, c->proc_util_last_seen, p->timeStamp, p->pid, p->smUtil, p->memUtil,
                     p->encUtil, p->decUtil) != 0)
            return NVML_ERROR_MEMORY;
    }
    buf_shrink((void **)&st->pu_buf, &st->pu_cap, got, sizeof(*st->pu_buf));
    return NVML_SUCCESS;
}

nvmlReturn_t nvml_process_util(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h,
                               bool mig, double *sm, double *mem)
{
    /* NOT_FOUND means "no sample newer than lastSeen": on a full GPU that is
     * an idle interval (0 %). NVML documents the call as unsupported on
     * MIG-enabled GPUs, so on a MIG handle an empty answer proves nothing
     * and must not become a 0 (driver 535 answers INVALID_ARGUMENT as soon as
     * there is data to fetch). */
    pus_clear(st);
    st->pus_dev = NULL;
    nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
    /* The newer call is documented "MIG not supported" on either handle. */
    if (!mig && st->lib.f.processes_util_info && !memo_known(c, MC_PROC_UTIL_INFO)) {
        rc = util_info(st, c, h);
        if (rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH)
            rc = NVML_ERROR_NOT_SUPPORTED; /* a library older than its symbol table */
        if (memo_note(c, MC_PROC_UTIL_INFO, rc))
            rc = NVML_ERROR_FUNCTION_NOT_FOUND;
    }
    if (rc == NVML_ERROR_FUNCTION_NOT_FOUND) {
        if (!st->lib.f.process_util)
            return NVML_ERROR_FUNCTION_NOT_FOUND;
        rc = util_samples(st, c, h);
    }
    if (rc == NVML_ERROR_NOT_FOUND) {
        /* no sample newer than lastSeen: not a measured 0 (the caller
         * carries the last value for a while) */
        *sm = *mem = 0;
        pus_clear(st);
        pus_trim(st);
        st->pus_dev = c;
        return NVML_ERROR_NOT_FOUND;
    }
    if (rc != NVML_SUCCESS)
        return rc;
    double s = 0, m = 0;
    unsigned long long newest = c->proc_util_last_seen;
    for (size_t i = 0; i < st->npus; i++) {
        s += st->pus[i].sm;
        m += st->pus[i].mem;
        if (st->pus[i].ts > newest)
            newest = st->pus[i].ts;
    }
    c->proc_util_last_seen = newest;
    st->pus_dev = c;
    pus_trim(st);
    *sm = s > 100 ? 100 : s;
    *mem = m > 100 ? 100 : m;
    return NVML_SUCCESS;
}

/* ------------------------------------------------------ process lists */

static const struct nvml_pu *pu_find(const struct nvml_state *st, uint32_t pid)
{
    if (!st->pus_ixcap)
        return NULL;
    for (size_t h = ix_slot(pid, st->pus_ixcap); st->pus_ix[h];
         h = (h + 1) & (st->pus_ixcap - 1)) {
        if (st->pus[st->pus_ix[h] - 1].pid == pid)
            return &st->pus[st->pus_ix[h] - 1];
    }
    return NULL;
}

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
    p->gi_id = e->gi == INVALID_ID ? -1 : (int)e->gi;
    p->ci_id = e->ci == INVALID_ID ? -1 : (int)e->ci;
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
    /* Samples were read for this device by process_util() this tick. */
    bool have_pu = st->pus_dev == c;
    const char *why = have_pu ? NO_SAMPLE_WHY
                      : (!metric_ok(&d->m[M_SM_UTIL]) && d->m[M_SM_UTIL].why)
                          ? d->m[M_SM_UTIL].why
                          : "per-process utilisation not available";
    for (size_t i = 0; i < st->list.n; i++) {
        struct gpu_process *p = emit(s, &st->list.e[i]);
        if (!p)
            break;
        set_util(p, have_pu ? pu_find(st, p->pid) : NULL, why);
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
        bool match = e->gi != INVALID_ID && d->gi_id >= 0 && (unsigned)d->gi_id == e->gi &&
                     (e->ci == INVALID_ID || d->ci_id < 0 || (unsigned)d->ci_id == e->ci);
        bool unknown = e->gi == INVALID_ID || d->gi_id < 0;
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

void nvml_procs_free(struct nvml_state *st)
{
    free(st->raw);
    free(st->list.e);
    free(st->parent.e);
    free(st->pending);
    free(st->list.ix);
    free(st->parent.ix);
    st->list.ix = st->parent.ix = NULL;
    st->list.ixcap = st->parent.ixcap = 0;
    free(st->slots);
    st->slots = NULL;
    st->nslots = st->slots_cap = 0;
    st->raw = NULL;
    st->list.e = st->parent.e = NULL;
    st->pending = NULL;
    st->raw_cap = st->list.cap = st->parent.cap = st->pending_cap = 0;
    st->list.n = st->parent.n = st->npending = 0;
}
