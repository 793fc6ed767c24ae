/*
 * reader.h — a recording on disk: plain or gzip-compressed JSON Lines
 * (zlib reads both), with a sparse index of line offsets built on open.
 *
 * Memory is bounded whatever the file's length: the index keeps at most
 * REPLAY_INDEX_MAX entries (every stride-th snapshot; the stride doubles
 * when it fills), one line is read at a time (at most REPLAY_LINE_MAX
 * bytes; a longer line is garbage), and a snapshot is parsed only when it
 * is asked for. The index takes each line's kind and times from its first
 * bytes as our writer lays them out ({"schema":1,…,"elapsed_ns":N,
 * "timestamp":"…"}); a line laid out otherwise is parsed whole (jansson)
 * to find them.
 */
#ifndef MIGMON_REPLAY_READER_H
#define MIGMON_REPLAY_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "replay/parse.h"
#include "snapshot.h"

#define REPLAY_INDEX_MAX 4096
#define REPLAY_LINE_MAX (16u << 20)
/* The bounds of the index scan, so that no file makes it endless (a sparse
 * file of zeros, /dev/zero saved) or makes a few MB read as gigabytes (a
 * gzip bomb): it stops after REPLAY_GAP_MAX bytes without a snapshot line
 * (a snapshot line is at most REPLAY_LINE_MAX), and when the content read
 * passes REPLAY_RATIO_MAX times the compressed bytes it came from, once
 * past REPLAY_RATIO_FROM. Even identical snapshot lines compress far less
 * in gzip (a deflate match is at most 258 bytes and costs a distance of a
 * line's length); a run of one byte or of a short pattern comes near
 * deflate's limit of 1,032. The snapshots before the stop are replayed;
 * with none, the file is refused. */
#define REPLAY_GAP_MAX (64u << 20)
#define REPLAY_RATIO_MAX 512u
#define REPLAY_RATIO_FROM (16u << 20)

struct replay_ix {
    uint64_t off;     /* where the snapshot's line starts (uncompressed bytes) */
    uint64_t elapsed; /* its elapsed_ns */
    int64_t wall;     /* its timestamp, ns */
};

struct replay_file {
    void *gz;              /* gzFile */
    char path_shown[512];  /* the file's name as shown (cleaned) */
    bool compressed;
    /* the file read in chunks: chunk[0] is at chunk_off */
    unsigned char *chunk;
    size_t chunk_len, chunk_pos;
    uint64_t chunk_off;
    char *line;            /* the line read last */
    size_t line_len, line_cap;
    /* index */
    struct replay_ix *ix;
    size_t nix;
    uint64_t stride;       /* snapshots per index entry */
    uint64_t count;        /* snapshot lines */
    uint64_t garbage;      /* lines that are neither a snapshot nor another known line */
    uint64_t others;       /* event lines and the like, not replayed on their own */
    uint64_t first_garbage_line; /* 1-based; 0 none */
    size_t cut_bytes;      /* a last line without its newline that did not parse: its length */
    uint64_t first_elapsed, last_elapsed;
    int64_t first_wall, last_wall;
    /* the position of the next sequential read */
    uint64_t next_rec, next_off;
    /* a snapshot's line read ahead (replay_file_elapsed), so that reading
     * it next needs no seek back (slow in a gzip stream) */
    char *peek;
    size_t peek_len, peek_cap;
    uint64_t peek_rec; /* UINT64_MAX: none */
    struct replay_strs strs;
    /* the bounds (above) */
    bool scanning;         /* the index is being built */
    uint64_t gap_from;     /* where the last snapshot line ended (the scan) */
    uint64_t limit;        /* where the scan ended: no read goes past it */
    char stopped[200];     /* why the scan stopped before the end, "" when it did not */
};

/* Opens and indexes path, a regular file. 0 (f->stopped says why the scan
 * ended before the end of the file, when it did); or -1 with one line in
 * err (cannot open, not a regular file, no snapshot in it, a bound passed
 * before the first snapshot) or -2 (a snapshot of another schema: err
 * names it). */
int replay_file_open(struct replay_file *f, const char *path, char *err, size_t errlen);
/* Snapshot number rec (0-based) into s: 0, or -1 when it cannot be read
 * again (err says why; the file changed under us, or the line is garbage
 * after all: it is counted then). */
int replay_file_read(struct replay_file *f, uint64_t rec, struct snapshot *s, char *err,
                     size_t errlen);
/* The snapshot that is the last at or before elapsed_ns (or, with wall,
 * the wall clock ns): its number; 0 when the time is before the first. */
uint64_t replay_file_find(struct replay_file *f, int64_t t, bool wall);
/* The elapsed_ns of snapshot rec without parsing it; false past the end.
 * Its line is kept for the read that follows. */
bool replay_file_elapsed(struct replay_file *f, uint64_t rec, uint64_t *elapsed);
void replay_file_close(struct replay_file *f);

#endif
