/*
 * source.h — a recording's bytes, decompressed: plain, gzip (zlib's
 * inflate, member after member) or zstd (libzstd's streaming decoder,
 * frame after frame). Decoding starts at a frame's first byte (a gzip
 * member, a zstd frame; anywhere in a plain file) and each read gives the
 * bytes of one frame, so a reader knows where to start again for any line.
 *
 * Damage is skipped: a frame that does not decode (a flipped byte, a cut
 * in the middle, a frame that needs a window over RSRC_WINDOW_LOG_MAX) is
 * given up to where it failed, then a newline (so that the cut line is one
 * line, not glued to the next), and decoding resumes at the next frame's
 * magic; each is counted. A frame whose end is missing (a writer killed,
 * or still writing) gives what its whole blocks hold. Memory is the
 * decoder's, bounded by the window limit, and one input buffer.
 */
#ifndef MIGMON_REPLAY_SOURCE_H
#define MIGMON_REPLAY_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rsrc_kind { RSRC_PLAIN, RSRC_GZIP, RSRC_ZSTD };

/* zstd frames that need a larger window (a frame header can ask for up to
 * 3.75 TB) are refused: 2^24 = 16 MiB. Ours use zstd's level 3, 2 MiB. */
#define RSRC_WINDOW_LOG_MAX 24

struct rsrc {
    int fd;                 /* owned */
    enum rsrc_kind kind;
    uint64_t size;          /* the file's length when opened: nothing past it is read */
    unsigned char *in;      /* compressed input: in[0] is at file offset in_off */
    size_t in_len, in_pos;
    uint64_t in_off;
    void *zd;               /* ZSTD_DCtx */
    void *zs;               /* z_stream */
    bool frame_start;       /* the next byte decoded begins a frame */
    uint64_t frame_c;       /* where the frame being decoded began */
    uint64_t stop;          /* no compressed byte at or past it is read */
    bool owe_newline;       /* damage was met: a newline is given first */
    uint64_t consumed;      /* compressed bytes decoded since rsrc_open */
    uint64_t damaged;       /* stretches skipped */
    char damage[200];       /* the first one: where and why, "" none */
};

/* The kind by the file's first bytes; fd is the caller's until
 * rsrc_close. 0, or -1 with err (out of memory). */
int rsrc_open(struct rsrc *s, int fd, uint64_t size, char *err, size_t errlen);

/* Decoding begins afresh at c (a frame's first byte; any byte of a plain
 * file) and reads nothing at or past stop (UINT64_MAX: the end). */
void rsrc_seek(struct rsrc *s, uint64_t c, uint64_t stop);

/* Up to cap decompressed bytes into buf, all of one frame; *frame_c:
 * where that frame begins (plain: where the first byte lies). 0 at the
 * end or at stop. */
size_t rsrc_read(struct rsrc *s, unsigned char *buf, size_t cap, uint64_t *frame_c);

void rsrc_close(struct rsrc *s);

#endif
