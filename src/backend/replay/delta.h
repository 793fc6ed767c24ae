/*
 * delta.h — a delta line of schema 2 applied to the snapshot before it
 * (docs/record.md, "Schema 2"; the writer is export/json_delta.c), on
 * jansson's objects: what the line holds replaces or merges into the
 * previous snapshot's object, which then reads as a full snapshot.
 */
#ifndef MIGMON_REPLAY_DELTA_H
#define MIGMON_REPLAY_DELTA_H

#include <jansson.h>

/* state: the previous snapshot's object (changed in place); d: the delta
 * line's object (its members are taken, shared). Its "schema" and "delta"
 * are not applied. */
void replay_delta_apply(json_t *state, json_t *d);

#endif
