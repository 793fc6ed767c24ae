/*
 * xid_counts.h — the Xid events attributed to one device, per code, as
 * the exporters write them (docs/health.md, "Xid counts").
 *
 * The snapshot carries each device's count of Xid events since the monitor
 * started (M_XID_ERRORS), its per-code counts (device.xids, up to
 * DEVICE_XID_CODES codes) and the most recent events (at most 64, every
 * device together). The per-code table is used when it adds up to the
 * count. Otherwise (a hand-built snapshot, more codes than the table holds)
 * the counts are derived from the list, and only when it still holds every
 * Xid event the device's count covers: then they are exact. Once older
 * events have left the list the codes of those are unknown, and a count
 * built from what is left would fall as events leave (a counter that goes
 * down reads as a reset, and the next increase as new errors), so none is
 * given.
 */
#ifndef MIGMON_XID_COUNTS_H
#define MIGMON_XID_COUNTS_H

#include <stddef.h>

#include "core/snapshot.h"

struct xid_count {
    unsigned xid;   /* the Xid code (999: one the driver could not name) */
    unsigned count; /* events of that code attributed to the device */
};

/* The per-code counts of the Xid events attributed to device pos of s
 * (gpu_event.device_pos, the attribution M_XID_ERRORS counts), into out
 * in code order. Returns how many codes (0: no Xid on the device), or -1
 * when the counts are not all known: M_XID_ERRORS is none, the list no
 * longer holds all of the device's events, or they have more than max
 * codes. */
int xid_counts(const struct snapshot *s, size_t pos, struct xid_count *out, size_t max);

/* One line (no newline) saying on which devices of s Xid events are
 * watched, and for the others why not, each reason with the devices it
 * holds for: "events: Xid events watched on 1 of 2 GPUs and 0 of 0 MIG
 * devices; not on GPU 1: NVML_ERROR_NO_PERMISSION". The exporter's
 * /health gives it, since a device whose events are not watched has no
 * Xid series. Cut with "..." to fit len. */
void xid_watch_text(const struct snapshot *s, char *out, size_t len);

#endif
