/*
 * json_delta.h — a recording's lines of schema 2 (docs/record.md, "Schema
 * 2"): a snapshot in full (the --once object numbered 2), or, after one,
 * only what changed since the snapshot before it ("delta": true).
 *
 * A delta line holds "schema", "delta", "elapsed_ns" and "timestamp", then
 * the members that changed, nested as in the full object. An object merges
 * into the one before it; a metric object (it has "source") and a device
 * object (it has "kind") are written whole when anything but the value
 * changed, and replace it; a metric whose value alone changed is that
 * value, bare. An array of objects of the same length merges element by
 * element ("devices": [{}, {"metrics": {"power_w": 96.2}}] changes the
 * second device's power); any other array replaces the one before. A
 * snapshot whose devices are not as many as before, or whose host part
 * appeared or went, is written in full.
 */
#ifndef MIGMON_JSON_DELTA_H
#define MIGMON_JSON_DELTA_H

#include <stdbool.h>
#include <stdio.h>

#include "core/snapshot.h"

#define JSON_DELTA_SCHEMA 2

/* s as one line of schema 2: in full when prev is NULL or s cannot be
 * said as a change of it (above), else the changes since prev. Returns
 * true when the line is a full one. */
bool json_delta_write(FILE *f, const struct snapshot *s, const struct snapshot *prev);

#endif
