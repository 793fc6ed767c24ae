/*
 * nvml_state.c — one GPU's sampling context: its lifetime, the per-device
 * caches (static facts cached per UUID, since a MIG handle may be reused
 * with other properties after reconfiguration and a UUID may not), and the
 * grow-and-give-back tables its scratch buffers are kept in. Calls that a
 * device has answered with NOT_SUPPORTED / FUNCTION_NOT_FOUND are
 * remembered in its cache entry (memo_note, nvml_state.h), so a failing
 * call (~200 µs on MIG) is not repeated every tick.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/nvml/nvml_state.h"

/* A buffer grown past SHRINK_ABOVE entries is given back once an answer
 * uses under an eighth of it: down to twice that answer, SHRINK_KEEP at
 * least. */
#define SHRINK_ABOVE 4096u
#define SHRINK_KEEP 1024u

void nvml_state_init(struct nvml_state *st, const struct nvml_lib *lib)
{
    memset(st, 0, sizeof(*st));
    st->lib = *lib; /* a copy of the entry points; the root owns the handle */
    st->inited = true;
    snprintf(st->label, sizeof(st->label), "-");
}

/* Every buffer the context's files grew: the device caches and the
 * identity (nvml.c), the MIG slots, the process lists' scratch
 * (nvml_procs_read.c, nvml_procs.c) and the per-process samples
 * (nvml_procs_util.c). */
void nvml_state_free(struct nvml_state *st)
{
    free(st->cache);
    free(st->ident);
    free(st->slots);
    free(st->pu_buf);
    free(st->pui_buf);
    free(st->pus);
    free(st->pus_ix);
    free(st->raw);
    free(st->list.e);
    free(st->list.ix);
    free(st->parent.e);
    free(st->parent.ix);
    free(st->pending);
    st->cache = NULL;
    st->ncache = st->capcache = st->cache_next = 0;
    st->ident = NULL;
    st->nident = st->ident_cap = 0;
    st->slots = NULL;
    st->nslots = st->slots_cap = 0;
    st->pu_buf = NULL;
    st->pui_buf = NULL;
    st->pu_cap = st->pui_cap = 0;
    st->pus = NULL;
    st->npus = st->pus_cap = 0;
    st->pus_ix = NULL;
    st->pus_ixcap = 0;
    st->raw = NULL;
    st->raw_cap = 0;
    st->list.e = st->parent.e = NULL;
    st->list.ix = st->parent.ix = NULL;
    st->list.n = st->parent.n = 0;
    st->list.cap = st->parent.cap = 0;
    st->list.ixcap = st->parent.ixcap = 0;
    st->pending = NULL;
    st->npending = st->pending_cap = 0;
}

struct dev_cache *nvml_cache_get(struct nvml_state *st, const char *uuid, bool mig)
{
    /* A tick looks up its GPU and then its instances in the enumeration's
     * order, which is the entries' order: the one after the last found is
     * usually the one (an entry is 1,232 bytes: cold lines a comparison). */
    size_t h = st->cache_next;
    if (h < st->ncache && st->cache[h].mig == mig && strcmp(st->cache[h].uuid, uuid) == 0) {
        st->cache_next = h + 1;
        return &st->cache[h];
    }
    for (size_t i = 0; i < st->ncache; i++) {
        if (st->cache[i].mig == mig && strcmp(st->cache[i].uuid, uuid) == 0) {
            st->cache_next = i + 1;
            return &st->cache[i];
        }
    }
    if (st->ncache == st->capcache) {
        size_t cap = st->capcache ? st->capcache * 2 : 16;
        struct dev_cache *n = realloc(st->cache, cap * sizeof(*n));
        if (!n)
            return NULL;
        st->cache = n;
        st->capcache = cap;
    }
    struct dev_cache *c = &st->cache[st->ncache++];
    st->cache_next = st->ncache;
    memset(c, 0, sizeof(*c));
    snprintf(c->uuid, sizeof(c->uuid), "%s", uuid);
    c->mig = mig;
    c->mig_mode = -1;
    c->cc_major = c->cc_minor = -1;
    c->slices_total = c->gi_id = c->ci_id = c->slices = c->ci_slices = -1;
    c->nvl_links = -1;
    return c;
}

void nvml_cache_prune(struct nvml_state *st)
{
    size_t w = 0;
    for (size_t r = 0; r < st->ncache; r++) {
        if (st->cache[r].seen) {
            st->cache[r].seen = false;
            if (w != r)
                st->cache[w] = st->cache[r];
            w++;
        }
    }
    st->ncache = w;
}

/* ---- tables ---- */

/* Room for n entries, at most half full. 1: reallocated and cleared (the
 * caller re-inserts its entries); 0: it fits; -1: out of memory. */
int nvml_ix_reserve(uint32_t **ix, size_t *cap, size_t n)
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

/* Shrink *buf (*cap entries of elem bytes) after an answer of count
 * entries, as SHRINK_ABOVE says; a failed realloc keeps the old buffer. */
void nvml_buf_shrink(void **buf, size_t *cap, size_t count, size_t elem)
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
bool nvml_table_trim(void **e, size_t *cap, size_t n, size_t elem, uint32_t **ix, size_t *ixcap)
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
    nvml_buf_shrink(e, &keep, n, elem);
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
