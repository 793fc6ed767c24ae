/*
 * influx.h — the snapshot as InfluxDB line protocol, with the measurement,
 * tag and field names of Telegraf's inputs.nvidia_smi (docs/record.md).
 *
 * One batch per snapshot: a `nvidia_smi` line per GPU, `nvidia_smi_mig` per
 * MIG device, `nvidia_smi_process` per listed process, one `migmon_host`;
 * and a `migmon_event` line per health event, written once in a stream
 * (the caller's eventlog says which are new).
 * A value that could not be read is left out (never 0); a line that would
 * have no field is not written.
 */
#ifndef MIGMON_INFLUX_H
#define MIGMON_INFLUX_H

#include <stddef.h>
#include <stdio.h>

#include "core/snapshot.h"
#include "engine/eventlog.h"

enum influx_ctx {
    INFLUX_MEASUREMENT, /* escapes comma and space */
    INFLUX_KEY,         /* tag keys, tag values, field keys: comma, '=' and space */
    INFLUX_STRING,      /* inside a string field's quotes: '"' and '\' */
};

/*
 * s escaped for ctx into out (cap bytes, NUL-terminated, cut short when it
 * does not fit); returns the length the whole escaped text needs, like
 * snprintf. Line protocol has no escape for a line break, and InfluxDB 1.x
 * does not unescape a backslash in keys and tag values, so:
 *  - a control byte (C0, DEL) becomes '?' in every context;
 *  - in the key contexts a backslash that would escape what follows it (at
 *    the end, or before a comma, '=' or space) becomes '?'; any other
 *    backslash is written as it is and read back as itself.
 */
size_t influx_escape(char *out, size_t cap, const char *s, enum influx_ctx ctx);

/* Every line of one snapshot, timestamped with its wall clock (ns). */
void influx_write_snapshot(FILE *f, const struct snapshot *s);

/* The events of b (new in s) as `migmon_event` lines, each at its own wall
 * clock, after one line counting those dropped (type=dropped, at the
 * snapshot's wall clock) when there are any. */
void influx_write_events(FILE *f, const struct snapshot *s, const struct eventlog_batch *b);

#endif
