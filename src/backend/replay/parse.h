/*
 * parse.h — one line of a recording (docs/record.md, JSON Lines: the
 * snapshots of `record` and of `profile --timeline`) back into a snapshot,
 * with jansson. Reasons are kept in a bounded pool of strings that lives as
 * long as the pool (struct metric.why is borrowed).
 */
#ifndef MIGMON_REPLAY_PARSE_H
#define MIGMON_REPLAY_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/snapshot.h"

/* The schemas this reader understands: 1, every line a full snapshot
 * (export/json.h), and 2, full lines and delta lines (export/json_delta.h). */
#define REPLAY_SCHEMA 1
#define REPLAY_SCHEMA_MAX 2

/* Distinct reasons kept; further ones go to the snapshot's notes. */
#define REPLAY_STRS_MAX 2048

struct replay_strs {
    char *slot[REPLAY_STRS_MAX * 2]; /* open addressing; owned strings */
    size_t n;
};

enum replay_line {
    REPLAY_LINE_SNAPSHOT = 0, /* s holds it */
    REPLAY_LINE_OTHER = 1,    /* a line of another type ("event", "events_dropped") */
    REPLAY_LINE_GARBAGE = -1, /* not JSON, or not a snapshot of this shape; err says why */
    REPLAY_LINE_SCHEMA = -2,  /* a snapshot of another schema; err says which */
};

/* Parse len bytes (one line, without its newline) into s (its previous
 * devices, processes, cores and events are replaced; its buffers reused).
 * Unknown members are ignored; a member of the wrong type is a value
 * that could not be read (none), never a crash. */
int replay_parse_line(const char *line, size_t len, struct snapshot *s, struct replay_strs *pool,
                      char *err, size_t errlen);

/* The same for a line already parsed (a full snapshot's object, or the
 * object a delta line was applied to: backend/replay/delta.h); root is the
 * caller's. A delta line itself is REPLAY_LINE_OTHER. */
int replay_parse_json(json_t *root, struct snapshot *s, struct replay_strs *pool, char *err,
                      size_t errlen);

/* The JSON of one line; NULL with err when it is none. */
json_t *replay_parse_load(const char *line, size_t len, char *err, size_t errlen);

/* "2026-12-02T05:55:43.591Z" as nanoseconds since the epoch; -1 when it
 * is not RFC 3339 UTC between 1970 and 2261 (what int64 ns hold). */
int64_t replay_parse_rfc3339(const char *ts);

void replay_strs_free(struct replay_strs *pool);

#endif
