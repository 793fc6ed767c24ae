/*
 * json_procs.h — --once --all-processes --format json: every GPU process of
 * the snapshot once (proclist.h), as a JSON array (docs/json.md, "All
 * processes").
 */
#ifndef MIGMON_JSON_PROCS_H
#define MIGMON_JSON_PROCS_H

#include <stdbool.h>
#include <stdio.h>

#include "core/snapshot.h"

/* The array and a newline. Returns 0, or -ENOMEM (nothing written). */
int json_write_all_processes(FILE *f, const struct snapshot *s, bool pretty);

#endif
