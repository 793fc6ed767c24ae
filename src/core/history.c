/*
 * history.c — rings of past samples, the carry-forward policy, and the
 * mapping of snapshots onto per-device and host series.
 *
 * Invariants kept here:
 *   - every series of a history advances by exactly one point per
 *     history_push() for as long as it exists, so age N means "N ticks ago"
 *     for all of them (a device absent from a tick gets a gap for that tick);
 *   - a value is never invented: a series that never held a real value
 *     records gaps, and after carry_ticks() misses it records gaps again
 *     (seed v0.3.11 pushed a fake 0 instead; that reads as "idle", which is a
 *     lie, so we do not);
 *   - after a device has been seen, history_push() allocates nothing.
 */
#include "core/history.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * n gap points, written: a ring's memory is touched once here, not a page
 * at a time by the ticks that first reach it. calloc's fresh pages are the
 * kernel's zero page until written, and each first write is a page fault:
 * a tick writes 144 bytes of each device's ring, and the interactive
 * monitor on a 64-device dgx took 0.40 minor faults a tick (3-8 s after
 * start) until the rings had been written once, 30 s at 100 ms; now 0.02.
 * Here the dgx's 2.7 MB of rings cost one pass at the first sample.
 * malloc and a loop of stores: a compiler may drop a memset that follows
 * calloc.
 */
static struct hist_point *points_new(size_t n)
{
    if (n == 0 || n > SIZE_MAX / sizeof(struct hist_point))
        return NULL;
    struct hist_point *p = malloc(n * sizeof(*p));
    if (!p)
        return NULL;
    for (size_t i = 0; i < n; i++)
        p[i] = (struct hist_point){.v = 0, .src = MSRC_NONE};
    return p;
}

int hist_series_init(struct hist_series *s, size_t cap)
{
    memset(s, 0, sizeof(*s));
    if (cap == 0 || cap > HIST_POINTS_MAX)
        return -EINVAL;
    s->pts = points_new(cap);
    if (!s->pts)
        return -ENOMEM;
    s->stride = 1;
    s->owns = true;
    s->cap = (uint32_t)cap;
    s->last_real.src = MSRC_NONE;
    return 0;
}

void hist_series_free(struct hist_series *s)
{
    if (s->owns)
        free(s->pts);
    memset(s, 0, sizeof(*s));
}

static void ring_put(struct hist_series *s, struct hist_point p)
{
    if (s->len == 0)
        s->head = 0;
    else
        s->head = s->head + 1 == s->cap ? 0 : s->head + 1;
    s->pts[s->head * s->stride] = p;
    if (s->len < s->cap)
        s->len++;
}

/* One more consecutive miss. Saturates just past the TTL so that a series
 * failing for years never wraps back into the carry window. */
static void count_miss(struct hist_series *s)
{
    if (s->misses <= carry_ticks())
        s->misses++;
}

/*
 * A real value (direct, gpm, process, estimate) is stored as it is and
 * restarts the TTL. Anything else is a miss: none, and also a value the
 * collector itself marked carried — that is not a new observation, so it must
 * not restart the TTL either ("carried never re-carries"). A miss repeats the
 * last real value, marked carried, for misses 1..carry_ticks() and is a gap
 * from then on, or at once if the series was never seen.
 */
struct hist_point hist_push(struct hist_series *s, const struct metric *m)
{
    struct hist_point p = {.v = 0, .src = MSRC_NONE};
    if (m->src != MSRC_NONE && m->src != MSRC_CARRIED) {
        p.v = m->value;
        p.src = m->src;
        s->last_real = p;
        s->seen = true;
        s->misses = 0;
    } else {
        count_miss(s);
        if (s->seen && s->misses <= carry_ticks()) {
            p.v = s->last_real.v;
            p.src = MSRC_CARRIED;
        }
    }
    if (s->cap)
        ring_put(s, p);
    return p;
}

/* A tick with no sample at all for this series (its device was absent): a
 * gap, and no carrying across the hole afterwards — a device that vanished
 * and came back has not merely had a failed read. */
static void hist_push_gap(struct hist_series *s)
{
    s->misses = carry_ticks() + 1;
    if (s->cap)
        ring_put(s, (struct hist_point){.v = 0, .src = MSRC_NONE});
}

bool hist_get(const struct hist_series *s, size_t age, struct hist_point *out)
{
    if (age >= s->len)
        return false;
    size_t i = s->head >= age ? s->head - age : s->head + s->cap - age;
    *out = s->pts[i * s->stride];
    return true;
}

static void dev_free(struct hist_device *d)
{
    for (int k = 0; k < HS_DEV_COUNT; k++)
        hist_series_free(&d->s[k]);
}

int history_init(struct history *h, size_t points)
{
    memset(h, 0, sizeof(*h));
    h->points = points ? points : HIST_POINTS_DEFAULT;
    for (int k = 0; k < HH_COUNT; k++) {
        if (hist_series_init(&h->host[k], h->points) != 0)
            goto fail;
    }
    return 0;
fail:
    history_free(h);
    return -ENOMEM;
}

void history_free(struct history *h)
{
    for (size_t i = 0; i < h->ndevs; i++)
        dev_free(&h->devs[i]);
    free(h->devs);
    for (int k = 0; k < HH_COUNT; k++)
        hist_series_free(&h->host[k]);
    memset(h, 0, sizeof(*h));
}

static bool is_dev(const struct hist_device *d, const char *node, const char *uuid)
{
    return strcmp(d->uuid, uuid) == 0 && strcmp(d->node, node) == 0;
}

static struct hist_device *find_dev(const struct history *h, const char *node, const char *uuid,
                                    size_t hint)
{
    /* Between re-enumerations the snapshot order equals first-seen order,
     * so the device at the same position is usually the one. */
    if (hint < h->ndevs && is_dev(&h->devs[hint], node, uuid))
        return &h->devs[hint];
    for (size_t i = 0; i < h->ndevs; i++)
        if (is_dev(&h->devs[i], node, uuid))
            return &h->devs[i];
    return NULL;
}

const struct hist_device *history_device(const struct history *h, const char *node,
                                         const char *uuid)
{
    if (!uuid || !*uuid)
        return NULL;
    return find_dev(h, node ? node : "", uuid, 0);
}

/* Append a device with empty rings; NULL on allocation failure (nothing
 * changes then). */
static struct hist_device *add_dev(struct history *h, const char *node, const char *uuid)
{
    if (h->ndevs == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 8;
        struct hist_device *d = realloc(h->devs, cap * sizeof(*d));
        if (!d)
            return NULL;
        h->devs = d;
        h->cap = cap;
    }
    struct hist_device *d = &h->devs[h->ndevs];
    memset(d, 0, sizeof(*d));
    /* One block, the series interleaved: a tick's pushes for the device
     * land side by side (they were 9 separate rings, a cache miss each,
     * a tenth of a 64-device frame). The first series owns the block. */
    struct hist_point *block = points_new(h->points * HS_DEV_COUNT);
    if (!block)
        return NULL;
    for (int k = 0; k < HS_DEV_COUNT; k++) {
        struct hist_series *s = &d->s[k];
        s->pts = block + k;
        s->stride = HS_DEV_COUNT;
        s->owns = k == 0;
        s->cap = (uint32_t)h->points;
        s->last_real.src = MSRC_NONE;
    }
    snprintf(d->uuid, sizeof(d->uuid), "%s", uuid);
    snprintf(d->node, sizeof(d->node), "%s", node);
    h->ndevs++;
    return d;
}

static const enum metric_id dev_metric[HS_DEV_COUNT] = {
    [HS_GPU_UTIL] = M_GPU_UTIL,   [HS_MEM_UTIL] = M_MEM_UTIL, [HS_VRAM_USED] = M_MEM_USED,
    [HS_PCIE_TX] = M_PCIE_TX,     [HS_PCIE_RX] = M_PCIE_RX,   [HS_TEMP] = M_TEMP,
    [HS_POWER] = M_POWER,         [HS_CLK_SM] = M_CLK_SM,     [HS_CLK_MEM] = M_CLK_MEM,
};

/* Device i of s. A MIG-enabled GPU that cannot read its own VRAM records
 * its instances' sum instead (snapshot_mig_vram_sum; the chart's title
 * marks it). */
static void push_device(struct hist_device *hd, const struct snapshot *s, size_t i)
{
    const struct device *d = &s->devices[i];
    struct metric su, st;
    bool sum = snapshot_mig_vram_sum(s, i, &su, &st);
    for (int k = 0; k < HS_DEV_COUNT; k++)
        hist_push(&hd->s[k], k == HS_VRAM_USED && sum ? &su : &d->m[dev_metric[k]]);
    /* The total is a static fact: any real read replaces it, a failed read
     * keeps the old one forever. A total of 0 is not a real VRAM size and
     * would collapse the chart's scale just like a missing one. */
    const struct metric *t = sum ? &st : &d->m[M_MEM_TOTAL];
    if (metric_ok(t) && t->value > 0)
        hd->vram_total = t->value;
}

/*
 * The RAM chart's "cached" band is htop's: meminfo's cached (Cached +
 * SReclaimable - Shmem, which does NOT include Buffers) plus Buffers, so that
 * used + cached band + free == total. Both parts must be known; a sum with a
 * missing part would be a smaller, wrong number rather than an absent one.
 */
static struct metric ram_cached(const struct mem_metrics *mem)
{
    if (!metric_ok(&mem->cached) || !metric_ok(&mem->buffers))
        return metric_none("cached or buffers unknown");
    struct metric m = mem->cached;
    m.value = mem->cached.value + mem->buffers.value;
    /* If either part is only carried the sum is not a new observation. */
    if (mem->buffers.src == MSRC_CARRIED)
        m.src = MSRC_CARRIED;
    m.why = NULL;
    return m;
}

static void push_host(struct history *h, const struct snapshot *s)
{
    if (!s->host_ok) {
        struct metric none = metric_none("host sample failed");
        for (int k = 0; k < HH_COUNT; k++)
            hist_push(&h->host[k], &none);
        return;
    }
    struct metric cached = ram_cached(&s->host.mem);
    hist_push(&h->host[HH_CPU_TOTAL], &s->host.cpu_total);
    hist_push(&h->host[HH_RAM_USED], &s->host.mem.used);
    hist_push(&h->host[HH_RAM_CACHED], &cached);
    const struct metric *t = &s->host.mem.total;
    if (metric_ok(t) && t->value > 0)
        h->ram_total = t->value;
}

/*
 * Devices are matched by UUID, never by position: MIG re-enumeration may
 * reorder or replace instances, and a history must follow its instance. A
 * device without a UUID (the read failed) has no identity to follow and is
 * not recorded; a UUID listed twice in one snapshot is recorded once.
 */
int history_push(struct history *h, const struct snapshot *s)
{
    int rc = 0;
    /* Bounded by HIST_PRUNE_TICKS: a device that reaches it is dropped below. */
    for (size_t i = 0; i < h->ndevs; i++)
        h->devs[i].absent++;

    for (size_t i = 0; s->devices && i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        if (!d->uuid[0])
            continue;
        struct hist_device *hd = find_dev(h, d->node, d->uuid, i);
        if (hd && hd->absent == 0)
            continue; /* duplicate UUID in this snapshot */
        if (!hd) {
            hd = add_dev(h, d->node, d->uuid);
            if (!hd) {
                rc = -ENOMEM;
                continue;
            }
        }
        hd->absent = 0;
        push_device(hd, s, i);
    }

    size_t kept = 0;
    for (size_t i = 0; i < h->ndevs; i++) {
        struct hist_device *hd = &h->devs[i];
        if (hd->absent >= HIST_PRUNE_TICKS) {
            dev_free(hd);
            continue;
        }
        if (hd->absent > 0)
            for (int k = 0; k < HS_DEV_COUNT; k++)
                hist_push_gap(&hd->s[k]);
        if (kept != i)
            h->devs[kept] = *hd;
        kept++;
    }
    h->ndevs = kept;

    push_host(h, s);
    h->ticks++;
    return rc;
}

/* ---- a past from elsewhere ---- */

int hist_past_init(struct hist_past *p, size_t n)
{
    memset(p, 0, sizeof(*p));
    if (n == 0 || n > HIST_POINTS_MAX)
        return -EINVAL;
    p->pts = points_new(n * HS_DEV_COUNT);
    if (!p->pts)
        return -ENOMEM;
    p->n = n;
    return 0;
}

void hist_past_free(struct hist_past *p)
{
    free(p->pts);
    memset(p, 0, sizeof(*p));
}

static bool real_point(struct hist_point p)
{
    return p.src != MSRC_NONE && p.src != MSRC_CARRIED;
}

/* Series s made again: the last n of past (stride apart, oldest first),
 * then its own `live` newest points. */
static void refill(struct hist_series *s, const struct hist_point *past, size_t n, size_t stride,
                   size_t live)
{
    struct hist_point keep[64];
    struct hist_point *kp = live <= 64 ? keep : malloc(live * sizeof(*kp));
    if (!kp)
        return; /* the ring stays as it was */
    for (size_t j = 0; j < live; j++)
        hist_get(s, live - 1 - j, &kp[j]); /* oldest first */
    size_t skip = n + live > s->cap ? n + live - s->cap : 0;
    s->len = 0;
    s->head = 0;
    for (size_t j = skip; j < n; j++)
        ring_put(s, past[j * stride]);
    for (size_t j = 0; j < live; j++)
        ring_put(s, kp[j]);
    if (kp != keep)
        free(kp);
    /* the carry state as pushes of these points would have left it */
    s->seen = false;
    s->misses = 0;
    s->last_real.src = MSRC_NONE;
    for (size_t age = 0; age < s->len; age++) {
        struct hist_point p;
        hist_get(s, age, &p);
        if (real_point(p)) {
            s->seen = true;
            s->last_real = p;
            break;
        }
        if (s->misses <= carry_ticks())
            s->misses++;
    }
}

int history_fill_past(struct history *h, const struct hist_past *p, size_t live)
{
    struct hist_device *d = find_dev(h, p->node, p->uuid, 0);
    if (!d || !p->pts)
        return -ENOENT;
    size_t kept = live;
    for (int k = 0; k < HS_DEV_COUNT; k++) {
        struct hist_series *s = &d->s[k];
        if (!(p->given & (1u << k)))
            continue;
        size_t l = live < s->len ? live : s->len;
        kept = l;
        refill(s, &p->pts[k], p->n, HS_DEV_COUNT, l);
    }
    size_t room = h->points > kept ? h->points - kept : 0;
    d->past_end = h->ticks - kept;
    d->past_n = (uint32_t)(p->n < room ? p->n : room);
    return 0;
}

size_t history_past_points(const struct history *h, const struct hist_device *d, size_t age,
                           size_t n)
{
    if (!d->past_n || h->ticks < d->past_end)
        return 0;
    uint64_t lo = h->ticks - d->past_end, hi = lo + d->past_n; /* ages [lo, hi) */
    if (hi > h->points)
        hi = h->points; /* pushed out of the ring since */
    uint64_t a = age > lo ? age : lo, b = age + n < hi ? age + n : hi;
    return b > a ? (size_t)(b - a) : 0;
}
