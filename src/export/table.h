/*
 * table.h — the snapshot as a compact human-readable table (--format table).
 * "N/A" for unknown, "~" before an estimate, "*" after a carried value.
 */
#ifndef MIGMON_TABLE_H
#define MIGMON_TABLE_H

#include <stdio.h>

#include "snapshot.h"

void table_write_snapshot(FILE *f, const struct snapshot *s);

/* Format one metric: scale multiplies the value, decimals as printf's
 * precision, unit appended. "N/A" when none. Returns out. */
const char *table_fmt_metric(char *out, size_t len, const struct metric *m, double scale,
                             int decimals, const char *unit);

#endif
