/*
 * reader.h — a recording on disk: plain, gzip or zstd JSON Lines of
 * schema 1 or 2 (backend/replay/source.h decompresses), with a sparse index of
 * places to start reading from, built on open.
 *
 * The index is a list of segments: runs of snapshots that begin with a
 * full snapshot line, each with where decoding starts for it. A
 * compressed recording with a seek index (recindex.h) gives them without
 * being decoded: one segment a frame, from its entry. What no entry
 * covers (a plain or an older file, a frame a killed writer left open) is
 * scanned: read once, line by line, each line's kind and times taken
 * from its first bytes as our writer lays them out ({"schema":N,…,
 * "elapsed_ns":N,"timestamp":"…"}; a line laid out otherwise is parsed
 * whole), a segment at every full line up to REPLAY_INDEX_MAX of them
 * (then every second one: the stride doubles).
 *
 * Memory is bounded whatever the file's length: the index, one line (at
 * most REPLAY_LINE_MAX bytes; a longer line is garbage), the line a delta
 * line applies to, and one parsed snapshot. A snapshot is parsed only
 * when it is asked for; a delta line (schema 2) is applied to the
 * snapshot before it, from the segment's full line on.
 */
#ifndef MIGMON_REPLAY_READER_H
#define MIGMON_REPLAY_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/replay/parse.h"
#include "backend/replay/source.h"
#include "core/snapshot.h"

#define REPLAY_INDEX_MAX 4096
#define REPLAY_LINE_MAX (16u << 20)
/* The bounds of the index scan, so that no file makes it endless (a sparse
 * file of zeros, /dev/zero saved) or makes a few MB read as gigabytes (a
 * compression bomb): it stops after REPLAY_GAP_MAX bytes without a
 * snapshot line (a snapshot line is at most REPLAY_LINE_MAX), and when the
 * content read passes REPLAY_RATIO_MAX times the compressed bytes it came
 * from (REPLAY_RATIO_MAX_ZSTD for zstd), once past REPLAY_RATIO_FROM. Even
 * identical snapshot lines compress far less in gzip (a deflate match is at
 * most 258 bytes and costs a distance of a line's length); a run of one
 * byte or of a short pattern comes near deflate's limit of 1,032. zstd's
 * matches are longer, but a recording of schema 1 whose values never change
 * stays under half its bound (tests/e2e/test_replay_compress.sh);
 * schema 2's lines hold little but what changed. The snapshots before
 * the stop are replayed; with none, the file is refused. */
#define REPLAY_GAP_MAX (64u << 20)
#define REPLAY_RATIO_MAX 512u
#define REPLAY_RATIO_MAX_ZSTD 8192u
#define REPLAY_RATIO_FROM (16u << 20)

/* Where a line is: decoding starts again at c (a frame's first byte;
 * plain: the line itself), whose first byte is the decompressed offset
 * fu; the line is at the decompressed offset u. */
struct replay_pos {
    uint64_t c, fu, u;
};

/* A run of snapshots read from one place: its first line is a full one. */
struct replay_seg {
    struct replay_pos pos;
    uint64_t rec;     /* the first line's snapshot number */
    uint64_t elapsed; /* its elapsed_ns */
    int64_t wall;     /* its timestamp, ns */
    uint64_t c_end;   /* no compressed byte at or past it belongs to it (UINT64_MAX) */
    uint64_t u_end;   /* nor a decompressed one (UINT64_MAX) */
};

struct replay_file {
    struct rsrc src;
    char path_shown[512];  /* the file's name as shown (cleaned) */
    bool compressed;
    /* the decompressed bytes read in chunks: chunk[0] is at chunk_off, of
     * the frame that begins at chunk_c (decompressed offset chunk_fu) */
    unsigned char *chunk;
    size_t chunk_len, chunk_pos;
    uint64_t chunk_off, chunk_c, chunk_fu;
    uint64_t u_stop;       /* no read gives a byte at or past it */
    char *line;            /* the line read last */
    size_t line_len, line_cap;
    /* index */
    struct replay_seg *seg;
    size_t nseg;
    uint64_t stride;       /* full lines per segment in a scan */
    uint64_t full_seen;    /* full lines the scan met */
    uint64_t count;        /* snapshot lines */
    uint64_t indexed;      /* of them, known from the seek index */
    uint64_t garbage;      /* lines that are neither a snapshot nor another known line */
    uint64_t others;       /* event lines and the like, not replayed on their own */
    uint64_t first_garbage_line; /* 1-based within the lines scanned; 0 none */
    size_t cut_bytes;      /* a last line without its newline that did not parse: its length */
    uint64_t first_elapsed, last_elapsed;
    int64_t first_wall, last_wall;
    /* the sequential position: the next snapshot line from next_pos is
     * next_rec, within segment next_seg */
    uint64_t next_rec;
    struct replay_pos next_pos;
    size_t next_seg;
    /* a snapshot's line read ahead (replay_file_elapsed), so that reading
     * it next needs no seek back */
    char *peek;
    size_t peek_len, peek_cap;
    uint64_t peek_rec; /* UINT64_MAX: none */
    /* the snapshot the last read left (schema 2 applies the next delta to
     * it): parsed (state), or a full line not parsed yet (base) */
    void *state;           /* json_t */
    char *base;
    size_t base_len, base_cap;
    bool base_valid;
    uint64_t state_rec;    /* the snapshot they hold; UINT64_MAX none */
    struct replay_strs strs;
    /* the bounds (above) */
    bool scanning;         /* the index is being built */
    uint64_t gap_from;     /* where the last snapshot line ended (the scan) */
    uint64_t scan_u;       /* bytes decoded by the scan */
    char stopped[200];     /* why the scan stopped before the end, "" when it did not */
};

/* Opens and indexes path, a regular file. 0 (f->stopped says why the scan
 * ended before the end of the file, when it did); or -1 with one line in
 * err (cannot open, not a regular file, no snapshot in it, a bound passed
 * before the first snapshot) or -2 (a snapshot of another schema: err
 * names it). */
int replay_file_open(struct replay_file *f, const char *path, char *err, size_t errlen);
/* Snapshot number rec (0-based) into s: 0, or -1 when it cannot be read
 * (err says why: the file changed under us, the line is garbage after all,
 * its frame is damaged, a delta line whose snapshot before could not be
 * read). */
int replay_file_read(struct replay_file *f, uint64_t rec, struct snapshot *s, char *err,
                     size_t errlen);
/* The snapshot that is the last at or before elapsed_ns (or, with wall,
 * the wall clock ns): its number; 0 when the time is before the first. */
uint64_t replay_file_find(struct replay_file *f, int64_t t, bool wall);
/* The elapsed_ns of snapshot rec without parsing it; false past the end.
 * Its line is kept for the read that follows. */
bool replay_file_elapsed(struct replay_file *f, uint64_t rec, uint64_t *elapsed);
/* Damaged stretches the source skipped so far, and the first one said. */
static inline uint64_t replay_file_damaged(const struct replay_file *f)
{
    return f->src.damaged;
}
void replay_file_close(struct replay_file *f);

#endif
