/*
 * replay.h — the replay backend: a recording (reader.h) as a GPU data
 * source. Each sample gives the snapshot at the replay's position (host,
 * devices, processes, health and events as recorded) and moves on one; a
 * front end moves the position (replay_seek) and reads where it is
 * (replay_where). The collector neither samples this host nor
 * post-processes such a snapshot (backend_ops.whole).
 */
#ifndef MIGMON_REPLAY_REPLAY_H
#define MIGMON_REPLAY_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/backend.h"

extern const struct backend_ops replay_backend_ops;

struct replay;

struct replay_where {
    uint64_t shown;          /* the snapshot the last sample gave (0-based) */
    uint64_t from, to;       /* the part replayed: snapshots from..to */
    uint64_t count;          /* snapshots in the file */
    uint64_t shown_elapsed;  /* its elapsed_ns */
    int64_t shown_wall;      /* its wall clock, ns */
    uint64_t from_elapsed, to_elapsed;
    bool has_next;           /* a snapshot follows within to */
    uint64_t next_elapsed;   /* its elapsed_ns */
    uint64_t garbage;        /* lines skipped: not JSON or not a snapshot */
    uint64_t damaged;        /* stretches of a compressed file that did not decode, skipped */
    const char *damage;      /* the first: where and why, "" none (borrowed) */
    size_t cut_bytes;        /* a cut last line's length, 0 none */
    const char *name;        /* the file's name (borrowed) */
    const char *stopped;     /* why the file was not read to its end, "" when it was (borrowed) */
    const char *skip_why;    /* why the first snapshot skipped could not be read, "" none
                              * (borrowed) */
    const char *failed;      /* why the last sample gave no snapshot, NULL when it gave one
                              * (borrowed, cleaned; the next sample rewrites it) */
};

/* The replay state of an open collector's backend state. */
static inline struct replay *replay_of(void *be_state)
{
    return (struct replay *)be_state;
}
/* The next sample gives snapshot rec (clamped to from..to). */
void replay_seek(struct replay *r, uint64_t rec);
/* Replay only snapshots from..to (inclusive, clamped to the file). */
void replay_set_range(struct replay *r, uint64_t from, uint64_t to);
void replay_where(struct replay *r, struct replay_where *w);
/* The snapshot that is the last at or before elapsed_ns t (the first when
 * t is before it), within from..to. */
uint64_t replay_find(struct replay *r, int64_t t);
/* The same for elapsed + d (saturated). */
uint64_t replay_find_from(struct replay *r, uint64_t elapsed, int64_t d);
/* A time on the command line (opt: the option that gave it, for the
 * message): "+90s", "+5m", "+1h", "+30" (seconds from the first snapshot),
 * "2026-12-02T03:12:00Z" or "03:12[:00]" (UTC, on the first snapshot's
 * day) or "-30s" (from the last): the snapshot that is the last at or
 * before it. -1 with one line in err when it is none of these, or when it
 * lies outside the recording: before its first snapshot, or after its last
 * by more than the recording's mean interval (unless end: the end of a
 * part, --to, may lie past the end). */
int replay_time(struct replay *r, const char *opt, const char *spec, bool end, uint64_t *rec,
                char *err, size_t errlen);

#endif
