/*
 * lines.h — the lines of a recording (reader.h), for its scan and its
 * reads: decompressed chunks, one line at a time, where each line is, and
 * what kind of line it is from its first bytes.
 */
#ifndef MIGMON_REPLAY_LINES_H
#define MIGMON_REPLAY_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/replay/reader.h"

enum replay_kind {
    RK_GARBAGE,
    RK_FULL,   /* a full snapshot, schema 1 or 2 */
    RK_DELTA,  /* a delta line of schema 2 */
    RK_OTHER,  /* an event line and the like */
    RK_SCHEMA, /* a snapshot of a schema this reader does not know */
};

struct replay_head {
    enum replay_kind kind;
    uint64_t elapsed;
    int64_t wall;
    long schema;
};

static inline bool replay_kind_snapshot(enum replay_kind k)
{
    return k == RK_FULL || k == RK_DELTA;
}

/* Which lines are snapshots, the same way in the scan and in the reads: a
 * full line always; a delta line when a full line came before it in the
 * part read, since the source last skipped damage (after which the
 * snapshot it changes is lost). */
struct replay_count {
    bool have_full;
    uint64_t damaged;
};

static inline struct replay_count replay_count_start(const struct replay_file *f, bool at_full)
{
    return (struct replay_count){.have_full = at_full, .damaged = f->src.damaged};
}

static inline bool replay_counts(const struct replay_file *f, struct replay_count *c,
                                 enum replay_kind k)
{
    if (f->src.damaged != c->damaged) {
        c->damaged = f->src.damaged;
        c->have_full = false;
    }
    if (k == RK_FULL)
        c->have_full = true;
    return k == RK_FULL || (k == RK_DELTA && c->have_full);
}

/* What a line is, from its head as our writer lays it out; else from
 * jansson (the whole line). Only the kind and the times. */
struct replay_head replay_classify(const char *line, size_t len);

/* The next line into f->line (without its newline). 1: a line; 0: the
 * end; *nl false when it ran to the end without a newline; *too_long
 * when it was longer than REPLAY_LINE_MAX (skipped: f->line is empty).
 * *at: where it is. */
int replay_next_line(struct replay_file *f, bool *nl, bool *too_long, struct replay_pos *at);

/* Reading goes on at p, within a segment that ends at c_end and u_end. */
void replay_lines_seek(struct replay_file *f, const struct replay_pos *p, uint64_t c_end,
                       uint64_t u_end);

/* Where the next line begins (the byte after the line read last). */
struct replay_pos replay_lines_here(const struct replay_file *f);

#endif
