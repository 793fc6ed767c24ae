/*
 * json_events.h — health events as JSON: the event lines of a JSON Lines
 * recording and the members an event object shares wherever it is written
 * (docs/record.md, "Events"; docs/profile.md).
 */
#ifndef MIGMON_JSON_EVENTS_H
#define MIGMON_JSON_EVENTS_H

#include <stdio.h>

#include "core/snapshot.h"
#include "engine/eventlog.h"
#include "export/jsonw.h"

#define JSON_EVENTS_DROPPED_WHY                                                                    \
    "more events arrived between two snapshots than the 64 a snapshot keeps"

/* The members naming where e happened (p) and what it is, with the names
 * of the --once JSON's events array: gpu, uuid (the GPU's), device (the
 * UUID of the MIG device or GPU it is attributed to, null when its GPU was
 * not in the snapshot), mig_index, gi_id, ci_id, xid, meaning, action
 * (null for a non-Xid event). Inside an object the caller opened. */
void json_event_members(struct jsonw *w, const struct gpu_event *e, const struct eventlog_place *p);

/* One line per event of b ({"type":"event", ...}), after one
 * {"type":"events_dropped", ...} line when b dropped some. */
void json_write_event_lines(FILE *f, const struct snapshot *s, const struct eventlog_batch *b);

#endif
