/*
 * nvml_procs_util.c — per-process utilisation samples (docs/processes.md):
 * the newest sample of each PID since the last one seen, kept for the
 * process list, and their sum for the device's SM and memory utilisation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/nvml/nvml_procs_util.h"

static int pus_ix_fit(struct nvml_state *st, size_t n)
{
    int r = nvml_ix_reserve(&st->pus_ix, &st->pus_ixcap, n);
    for (size_t i = 0; r == 1 && i < st->npus; i++)
        nvml_ix_insert(st->pus_ix, st->pus_ixcap, st->pus[i].pid, i);
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
    if (nvml_table_trim((void **)&st->pus, &st->pus_cap, st->npus, sizeof(*st->pus), &st->pus_ix,
                   &st->pus_ixcap))
        for (size_t i = 0; i < st->npus; i++)
            nvml_ix_insert(st->pus_ix, st->pus_ixcap, st->pus[i].pid, i);
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
    size_t h = nvml_ix_slot(pid, st->pus_ixcap);
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

/* Grow a sample buffer to at least want entries, at most NVML_MAX_PROC_ENTRIES
 * (buf_shrink gives the room back). */
static int grow_buf(void **buf, size_t *cap, size_t want, size_t elem)
{
    if (want > NVML_MAX_PROC_ENTRIES)
        want = NVML_MAX_PROC_ENTRIES;
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
            if (st->pui_cap >= NVML_MAX_PROC_ENTRIES)
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
        nvml_buf_shrink((void **)&st->pui_buf, &st->pui_cap, n, sizeof(*st->pui_buf));
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
    nvml_buf_shrink((void **)&st->pu_buf, &st->pu_cap, got, sizeof(*st->pu_buf));
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

const struct nvml_pu *nvml_procs_util_find(const struct nvml_state *st, uint32_t pid)
{
    if (!st->pus_ixcap)
        return NULL;
    for (size_t h = nvml_ix_slot(pid, st->pus_ixcap); st->pus_ix[h];
         h = (h + 1) & (st->pus_ixcap - 1)) {
        if (st->pus[st->pus_ix[h] - 1].pid == pid)
            return &st->pus[st->pus_ix[h] - 1];
    }
    return NULL;
}
