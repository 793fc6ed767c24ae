/*
 * table.h — the snapshot as a compact human-readable table (--format table).
 * "N/A" for unknown, "~" before an estimate, "*" after a carried value.
 */
#ifndef MIGMON_TABLE_H
#define MIGMON_TABLE_H

#include <stdio.h>

#include "core/snapshot.h"

void table_write_snapshot(FILE *f, const struct snapshot *s);

/* --once --all-processes: every GPU process once (proclist.h), largest GPU
 * memory first, in columns as wide as their widest value; then the devices
 * whose list is N/A or was cut by --top. Returns 0, or -ENOMEM (nothing
 * written). */
int table_write_all_processes(FILE *f, const struct snapshot *s);

/* Format one metric: scale multiplies the value, decimals as printf's
 * precision, unit appended. "N/A" when none. Returns out. */
const char *table_fmt_metric(char *out, size_t len, const struct metric *m, double scale,
                             int decimals, const char *unit);

#endif
