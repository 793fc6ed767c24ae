/*
 * json.h — the snapshot as one JSON document (schema 1, docs/json.md).
 */
#ifndef MIGMON_JSON_H
#define MIGMON_JSON_H

#include <stdbool.h>
#include <stdio.h>

#include "core/snapshot.h"

#define MIGMON_JSON_SCHEMA 1

void json_write_snapshot(FILE *f, const struct snapshot *s, bool pretty);
/* The same object with another schema number: a recording's full line of
 * schema 2 (docs/record.md) is this object, numbered 2. */
void json_write_snapshot_as(FILE *f, const struct snapshot *s, bool pretty, int schema);

struct jsonw;
/* The members of a process object of devices[].processes[] (docs/json.md),
 * into an object the caller opened (--once --all-processes adds its own). */
void json_process_members(struct jsonw *w, const struct gpu_process *p);
/* A device's object, one of its metric objects (a value, its source, its
 * scope, the reason), and the snapshot's three event members
 * (events_total, events_error, events): the parts a delta line of schema
 * 2 writes whole (export/json_delta.h). */
void json_write_device(struct jsonw *w, const struct snapshot *s, const struct device *d);
void json_write_metric(struct jsonw *w, const struct device *d, enum metric_id id);
void json_write_events(struct jsonw *w, const struct snapshot *s);

#endif
