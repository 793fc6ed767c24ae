/*
 * recindex.h — the seek index of a compressed recording (docs/record.md,
 * "Compressed recordings"): one entry after each frame, in a frame that
 * every zstd or gzip reader skips, so the file stays a plain .zst or .gz.
 *
 * A zstd recording is a run of zstd frames; after each comes a skippable
 * frame (magic RECINDEX_ZSTD_MAGIC, RFC 8878 section 3.1.2) holding the
 * entry. A gzip recording is a run of gzip members; after each comes an
 * empty member whose header's extra field (RFC 1952 section 2.3.1.1,
 * subfield "Mg") holds the entry. The entry says where its frame lies and
 * what it holds (its snapshots' count and times), where the entry before
 * it lies, and where it lies itself, with a CRC-32: so the entries are
 * found from the end of the file backwards, one read each, and one that
 * was damaged or is not ours is never taken for one.
 */
#ifndef MIGMON_RECINDEX_H
#define MIGMON_RECINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RECINDEX_ZSTD_MAGIC 0x184D2A5Bu /* a skippable frame's (0x184D2A50..5F) */
#define RECINDEX_NONE UINT64_MAX        /* prev_off of the first entry */

/* What a frame holds and where it lies (offsets in the file's bytes). */
struct recindex {
    uint64_t self_off;      /* where this entry's frame begins */
    uint64_t prev_off;      /* where the entry before it begins; RECINDEX_NONE */
    uint64_t frame_off;     /* where the frame it describes begins */
    uint64_t frame_len;     /* its compressed length */
    uint64_t content;       /* its decompressed length */
    uint32_t count;         /* snapshot lines in it (the first a full one) */
    uint64_t first_elapsed, last_elapsed; /* elapsed_ns of its first and last */
    int64_t first_wall, last_wall;        /* their timestamps, ns; -1 unknown */
};

/* The bytes of an entry's frame: zstd (a skippable frame) or gzip (an
 * empty member). */
#define RECINDEX_PAYLOAD 88
#define RECINDEX_ZSTD_LEN (8 + RECINDEX_PAYLOAD)
#define RECINDEX_GZIP_LEN (10 + 2 + 4 + RECINDEX_PAYLOAD + 2 + 8)
#define RECINDEX_MAX_LEN RECINDEX_GZIP_LEN

/* e as its frame into out (RECINDEX_MAX_LEN bytes): its length. */
size_t recindex_encode(const struct recindex *e, bool gzip, unsigned char *out);

/* The entry whose frame begins at b (n bytes there), found at file offset
 * at: true when b holds one whole (the magic, the length, our tag, the
 * CRC) and it says it lies at at. */
bool recindex_decode(const unsigned char *b, size_t n, uint64_t at, bool gzip,
                     struct recindex *e);

/* The length of an entry's frame. */
static inline size_t recindex_len(bool gzip)
{
    return gzip ? RECINDEX_GZIP_LEN : RECINDEX_ZSTD_LEN;
}

/* The last entry in the file fd (size bytes), looked for in its last
 * back bytes (a killed writer's open frame comes after it): true and *e;
 * false when there is none there. */
bool recindex_find_last(int fd, uint64_t size, uint64_t back, bool gzip, struct recindex *e);

#endif
