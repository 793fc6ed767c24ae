/*
 * xid_counts.c — per-code Xid counts from the snapshot's events list
 * (xid_counts.h).
 */
#include "export/xid_counts.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "backend/events/xid.h"

int xid_counts(const struct snapshot *s, size_t pos, struct xid_count *out, size_t max)
{
    if (pos >= s->ndevices)
        return -1;
    const struct device *d = &s->devices[pos];
    const struct metric *total = &d->m[M_XID_ERRORS];
    if (!metric_ok(total))
        return -1;
    /* The events client's own per-code counts, exact whatever the list
     * still holds, when they add up to the device's count. */
    if (!d->xids_overflow && d->nxids <= max) {
        double sum = 0;
        for (size_t k = 0; k < d->nxids; k++)
            sum += d->xids[k].count;
        if (d->nxids > 0 && sum == total->value) {
            for (size_t k = 0; k < d->nxids; k++)
                out[k] = (struct xid_count){.xid = d->xids[k].xid, .count = d->xids[k].count};
            return (int)d->nxids;
        }
    }
    size_t n = 0, seen = 0;
    for (size_t i = 0; i < s->nevents; i++) {
        const struct gpu_event *e = &s->events[i];
        if (e->device_pos != (int)pos || strcmp(xid_event_type_name(e->type), "xid") != 0)
            continue;
        seen++;
        size_t k = 0;
        while (k < n && out[k].xid < e->xid)
            k++;
        if (k < n && out[k].xid == e->xid) {
            out[k].count++;
            continue;
        }
        if (n == max)
            return -1;
        memmove(&out[k + 1], &out[k], (n - k) * sizeof(*out));
        out[k] = (struct xid_count){.xid = e->xid, .count = 1};
        n++;
    }
    /* Exact only when the list holds every event the device's count has. */
    if ((double)seen != total->value)
        return -1;
    return (int)n;
}

/* A bounded line: appends stop at the end, which then reads "...". */
struct line {
    char *p;
    size_t len, off;
    bool cut;
};

__attribute__((format(printf, 2, 3))) static void add(struct line *l, const char *fmt, ...)
{
    if (l->cut)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(l->p + l->off, l->len - l->off, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= l->len - l->off) {
        l->cut = true;
        if (l->len >= 4)
            memcpy(l->p + l->len - 4, "...", 4);
        return;
    }
    l->off += (size_t)n;
}

/* The devices of kind k whose Xid count is none for reason why, named
 * "GPU 1, 3" or "the MIG devices of GPU 0, 2" (each GPU once). */
static void add_devices(struct line *l, const struct snapshot *s, enum device_kind k,
                        const char *why)
{
    int last = -1;
    bool first = true;
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        const struct metric *m = &d->m[M_XID_ERRORS];
        if (d->kind != k || metric_ok(m) || m->why != why || d->index == last)
            continue;
        add(l, "%s%d", first ? (k == DEV_MIG ? "the MIG devices of GPU " : "GPU ") : ", ",
            d->index);
        first = false;
        last = d->index;
    }
}

void xid_watch_text(const struct snapshot *s, char *out, size_t len)
{
    if (!len)
        return;
    struct line l = {.p = out, .len = len};
    out[0] = '\0';
    size_t n[2] = {0, 0}, seen[2] = {0, 0};
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        if (d->vendor != VENDOR_NVIDIA)
            continue;
        n[d->kind == DEV_MIG]++;
        seen[d->kind == DEV_MIG] += metric_ok(&d->m[M_XID_ERRORS]);
    }
    if (s->events_why && !seen[0] && !seen[1]) {
        add(&l, "events: no Xid series: %s", s->events_why);
        return;
    }
    add(&l, "events: Xid events watched on %zu of %zu GPUs and %zu of %zu MIG devices", seen[0],
        n[0], seen[1], n[1]);
    /* Each reason once, with the devices it holds for, GPUs first. */
    const char *said[8];
    size_t nsaid = 0;
    for (int k = DEV_GPU; k <= DEV_MIG; k++) {
        for (size_t i = 0; i < s->ndevices && nsaid < 8; i++) {
            const struct device *d = &s->devices[i];
            const struct metric *m = &d->m[M_XID_ERRORS];
            if ((int)d->kind != k || d->vendor != VENDOR_NVIDIA || metric_ok(m))
                continue;
            const char *why = m->why ? m->why : "not read";
            bool dup = false;
            for (size_t j = 0; j < nsaid && !dup; j++)
                dup = said[j] == why;
            if (dup)
                continue;
            said[nsaid] = why;
            add(&l, "; %s", nsaid++ ? "" : "not on ");
            add_devices(&l, s, (enum device_kind)k, m->why);
            add(&l, ": %s", why);
        }
    }
}
