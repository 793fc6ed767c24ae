/*
 * json.h — the snapshot as one JSON document (schema 1, docs/json.md).
 */
#ifndef MIGMON_JSON_H
#define MIGMON_JSON_H

#include <stdbool.h>
#include <stdio.h>

#include "snapshot.h"

#define MIGMON_JSON_SCHEMA 1

void json_write_snapshot(FILE *f, const struct snapshot *s, bool pretty);

struct jsonw;
/* The members of a process object of devices[].processes[] (docs/json.md),
 * into an object the caller opened (--once --all-processes adds its own). */
void json_process_members(struct jsonw *w, const struct gpu_process *p);

#endif
