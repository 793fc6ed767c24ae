/*
 * rindex.h — a compressed recording's seek index read back (recindex.h):
 * the runs of frames its entries describe, found from the end of the file
 * backwards, one read an entry. What the index does not cover (a frame a
 * killed writer left open, one written before an --append without an
 * entry, anything before an entry that is damaged) is left to a scan.
 */
#ifndef MIGMON_REPLAY_RINDEX_H
#define MIGMON_REPLAY_RINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Frames that follow each other with their entries, taken together. */
struct rindex_run {
    uint64_t c_off;   /* where its first frame begins */
    uint64_t c_end;   /* where its last frame ends (its entry begins) */
    uint64_t next;    /* where its last entry ends: the next byte after the run */
    uint64_t content; /* decompressed bytes */
    uint64_t count;   /* snapshot lines */
    uint64_t first_elapsed, last_elapsed;
    int64_t first_wall, last_wall;
};

/* At most this many runs are kept: adjacent ones are merged when more. */
#define RINDEX_RUNS_MAX 4096
/* An entry whose frame would decompress to more than this many times its
 * compressed length (plus 16 MiB) is not believed, nor the entries before
 * it (a bomb's claim). */
#define RINDEX_RATIO_MAX 4096u

/* The runs of the file fd (size bytes), in file order, into *runs
 * (malloc'd, the caller frees; NULL and 0 when there is no index). */
void rindex_load(int fd, uint64_t size, bool gzip, struct rindex_run **runs, size_t *n);

#endif
