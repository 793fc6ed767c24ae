/*
 * eventlog.h — the health events of a stream of snapshots, each handed out
 * once (docs/record.md, "Events").
 *
 * A snapshot holds the most recent events (at most 64, oldest first) and
 * how many arrived since the events client started (events_total). A
 * writer that sees snapshot after snapshot would see the same events again
 * and again; an eventlog remembers how far it got, so each event is
 * written once: `record` (JSON Lines, line protocol), and `profile`.
 *
 * The events new in a snapshot are the last (total now - total before) of
 * its ring. More than the ring holds (more than 64 arrived between two
 * snapshots taken, or snapshots were skipped) cannot be had: how many is
 * said (dropped), never made up. The count going back, or the event the
 * log handed out last no longer being at its place in the ring, means the
 * count started again (the backend's events client was started anew): the
 * ring then holds only new events. A restarted count that has already
 * grown past the old one with the last event handed out outside the ring
 * cannot be told from a continued one; the events client keeps its count
 * across restarts of the events helper, so only a new collector makes one.
 *
 * One owner; no allocation.
 */
#ifndef MIGMON_EVENTLOG_H
#define MIGMON_EVENTLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"

struct eventlog {
    uint64_t total;         /* events_total of the last snapshot taken */
    bool have_last;
    struct gpu_event last;  /* the newest event handed out */
};

/* The events of one snapshot not handed out before. */
struct eventlog_batch {
    const struct gpu_event *ev; /* borrowed from the snapshot: ev[0..n), oldest first */
    size_t n;
    /* Events counted since the last snapshot taken that its ring no
     * longer holds: lost to this writer, their contents unknown. */
    uint64_t dropped;
    bool restarted; /* the count started again (see above) */
};

void eventlog_init(struct eventlog *l);
/* The new events of s into *b, and s marked as seen. */
void eventlog_take(struct eventlog *l, const struct snapshot *s, struct eventlog_batch *b);

/* Every event of s as new (dropped: those counted the ring lost), for a
 * stream of one snapshot (--once). */
void eventlog_all(const struct snapshot *s, struct eventlog_batch *b);

/* The device of s an event belongs to (a MIG device or a GPU), NULL when
 * its GPU is not in s. */
const struct device *eventlog_device(const struct snapshot *s, const struct gpu_event *e);

/* Where an event happened, resolved against the snapshot it came in, so it
 * can be told after that snapshot is gone. */
struct eventlog_place {
    int gpu;       /* the GPU's index; -1 when the GPU is not in the snapshot */
    int mig_index; /* the MIG device's slot; -1: a GPU's event, or an instance not there */
    bool mig;      /* attributed to a MIG device of the snapshot */
    char device[MIGMON_UUID_LEN]; /* the UUID of that MIG device or GPU; "" when unknown */
    char slice[96]; /* that MIG device's name (proclist_slice_name); "" for a GPU */
};
void eventlog_place(const struct snapshot *s, const struct gpu_event *e, struct eventlog_place *p);

/* An Xid event (xid_meaning and xid_action say what it is). */
bool eventlog_is_xid(const struct gpu_event *e);
/* What happened, in words: "Xid 43", "single-bit ECC error", "double-bit
 * ECC error", or "<type> event". */
void eventlog_what(char *out, size_t len, const struct gpu_event *e);
/* Where, as the monitor names devices: "MIG 0/2 1g.18gb GI 3 CI 0", "GPU
 * 5", "GPU 0 (GI 5, CI 0)" (an instance not in the snapshot), "GPU GPU-…
 * (not present)". */
void eventlog_where(char *out, size_t len, const struct gpu_event *e,
                    const struct eventlog_place *p);

#endif
