/*
 * recout.h — where a recording's batches go (docs/record.md): plain, or
 * compressed with gzip (zlib) or zstd (libzstd) in frames that decode
 * alone, each followed by its seek index entry (recindex.h).
 *
 * Plain: each batch is written whole at once (outfile_write), as before.
 * Compressed: batches go into the compressor, and what it gives is kept in
 * memory until the next flush, which ends a block (zstd's ZSTD_e_flush,
 * deflate's Z_SYNC_FLUSH: the window is kept, so compression stays good)
 * and writes what the block holds with one write. So the file always ends
 * at a flush: every byte in it decodes, up to whole lines, and a writer
 * killed loses what was not flushed yet (record.c flushes at least every
 * second). A regular file ends, after each flush, with its open frame
 * closed by hand and the frame's entry; the next flush writes over them
 * (pwrite at their place; a descriptor opened O_APPEND: ftruncate, then
 * write), so the file is whole for every decoder at every moment. A write
 * that fails part-way is taken back; the recording then ends, and the
 * frame is closed by hand again where that fits (recout_abandon). A new frame (a seek point) begins when a batch asks
 * for one (recout_put's key): the writer gives a full snapshot line first
 * in it, so that a reader can start there.
 *
 * Owned by the recording thread alone.
 */
#ifndef MIGMON_RECOUT_H
#define MIGMON_RECOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rec_compress { REC_PLAIN = 0, REC_GZIP, REC_ZSTD };

/* A frame spans about a minute of snapshots (a seek point each), and what
 * was put is flushed within a second. */
#define RECOUT_FRAME_NS (60ull * 1000000000ull)
#define RECOUT_FLUSH_NS (1000000000ull)

/* What a batch holds: a snapshot line first (then its time), or not (a
 * CSV header). */
struct recout_meta {
    bool snapshot;
    uint64_t elapsed;
    int64_t wall; /* -1 unknown */
};

struct recout;

/* The compression a file's name asks for: ".zst" zstd, ".gz" gzip, any
 * other plain. *other: the name ends in a compressor's suffix this writer
 * does not write (".xz", ".bz2", ".lz4", ".lzma", ".zip", ".Z", ".br",
 * ".sz", ".lz"), named in it ("" when none). */
enum rec_compress recout_by_name(const char *path, char *other, size_t otherlen);
const char *recout_name(enum rec_compress k);

/* A writer of kind k onto fd (borrowed: the caller opens and closes it).
 * A file that already holds a recording of that kind (--append, a file
 * rotation put back) is continued: its index goes on from its last entry,
 * and a frame a killed writer left open is closed first where it ended on
 * a whole block. 0, or -1 with one line in err. */
int recout_open(struct recout **o, enum rec_compress k, int fd, char *err, size_t errlen);

/* Whether the next batch should begin a frame: none is open yet, or the
 * open one began RECOUT_FRAME_NS or more before elapsed. */
bool recout_key_due(const struct recout *o, uint64_t elapsed);

/*
 * One batch (n bytes of whole lines). key: it begins a new frame (the
 * open one is ended, its entry written after it), and it begins with a
 * full line. Plain: written at once. Compressed: kept until recout_flush.
 * 0 or -errno (*cut: bytes written were taken back).
 */
int recout_put(struct recout *o, int fd, const char *b, size_t n, const struct recout_meta *m,
               bool key, bool *cut);

/* The monotonic time (ns) by which what was put must be flushed; 0 when
 * nothing waits. */
uint64_t recout_flush_by(const struct recout *o);

/* Ends a block and writes what waits, whole. 0 or -errno (*cut as above). */
int recout_flush(struct recout *o, int fd, bool *cut);

/* The end of a recording on fd: flushed, the frame ended and its entry
 * written. 0 or -errno. */
int recout_finish(struct recout *o, int fd);

/* After a failed write (the file ends at the last flush): the frame is
 * ended by hand there (zstd: an empty last block; gzip: an empty final
 * stored block and the trailer of what was written) with its entry, so
 * that every reader takes the file as whole; what does not fit on the
 * disk is taken back and the file stays readable as it was. */
void recout_abandon(struct recout *o, int fd);

/* The output is another file now (rotation): the next batch begins a new
 * frame in it, continuing a recording it holds (as recout_open). */
int recout_retarget(struct recout *o, int fd, char *err, size_t errlen);

void recout_free(struct recout *o);

#endif
