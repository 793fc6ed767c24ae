/*
 * nvml_procs_read.c — one handle's process lists as NVML gives them
 * (docs/processes.md).
 *
 * The compute, graphics and MPS-compute lists are merged into one list keyed
 * by (PID, GPU instance, compute instance), the type bits OR-ed. Each symbol
 * writes its own entry stride (nvml_load.c decides it per driver,
 * nvml-facts §6). Where the entries go is nvml_procs.c's business.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/nvml/nvml_procs_read.h"

/* The widest entry any process-list symbol writes (the 535.43–535.86 "v3"). */
#define MAX_STRIDE sizeof(nvmlProcessInfo_535cc_t)
/* INSUFFICIENT_SIZE answers tolerated in a row before giving up. */
#define MAX_ATTEMPTS 4

static uint64_t proc_key(const struct nvml_proc *p)
{
    return (uint64_t)p->pid ^ ((uint64_t)p->gi << 32) ^ ((uint64_t)p->ci * 0x100000001b3ull);
}

static int list_ix_fit(struct nvml_proc_list *l, size_t n)
{
    int r = nvml_ix_reserve(&l->ix, &l->ixcap, n);
    for (size_t i = 0; r == 1 && i < l->n; i++)
        nvml_ix_insert(l->ix, l->ixcap, proc_key(&l->e[i]), i);
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
    size_t h = nvml_ix_slot(proc_key(p), l->ixcap);
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
            if (want > NVML_MAX_PROC_ENTRIES) {
                if (st->raw_cap >= NVML_MAX_PROC_ENTRIES)
                    break;
                want = NVML_MAX_PROC_ENTRIES;
            }
            if (raw_reserve(st, want) != 0)
                return NVML_ERROR_MEMORY;
            continue;
        }
        if (rc != NVML_SUCCESS)
            return rc;
        /* Give back a buffer a storm of INSUFFICIENT_SIZE grew, once the
         * lists are short again. */
        nvml_buf_shrink((void **)&st->raw, &st->raw_cap, count, MAX_STRIDE);
        for (unsigned int i = 0; i < count && i < st->raw_cap; i++) {
            const unsigned char *e = st->raw + (size_t)i * stride;
            struct nvml_proc p = {.gi = NVML_NO_ID, .ci = NVML_NO_ID, .type = type};
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
    if (nvml_table_trim((void **)&l->e, &l->cap, l->n, sizeof(*l->e), &l->ix, &l->ixcap))
        for (size_t i = 0; i < l->n; i++)
            nvml_ix_insert(l->ix, l->ixcap, proc_key(&l->e[i]), i);
    return NVML_SUCCESS;
}
