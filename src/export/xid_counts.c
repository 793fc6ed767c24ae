/*
 * xid_counts.c — per-code Xid counts from the snapshot's events list
 * (xid_counts.h).
 */
#include "export/xid_counts.h"

#include <string.h>

#include "backend/xid.h"

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
