/*
 * recout_tail.h — a compressed recording continued (record --append, a
 * file put back at the path after a rotation): where its index ends, and
 * its last frame closed when a killed writer left it open.
 */
#ifndef MIGMON_RECOUT_TAIL_H
#define MIGMON_RECOUT_TAIL_H

#include <stdbool.h>
#include <stdint.h>

/* fd is a file open for appending that may hold a recording of the kind
 * (gzip, else zstd). *prev_entry: the file offset of its last index entry
 * (RECINDEX_NONE: none). A frame left open (the file ends after a whole
 * block of it, without its end) is ended with an empty last block (zstd)
 * or an empty final stored block and the member's trailer (gzip), so that
 * the frames written after it are read by every decoder; a file that ends
 * inside a block is left as it is (a reader resumes at the next frame).
 * Returns 1 when it ended a frame, 0 when none needed it, -errno when the
 * end could not be written. */
int rectail_continue(int fd, bool gzip, uint64_t *prev_entry);

#endif
