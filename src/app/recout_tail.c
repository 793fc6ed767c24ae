/*
 * recout_tail.c — continuing a compressed recording (recout_tail.h).
 *
 * zstd frames are walked by their headers (RFC 8878 section 3.1.1: the
 * frame header, then blocks of 3-byte headers), without decoding; a gzip
 * member has no lengths, so the last one is inflated to learn where and
 * how it ends.
 */
#include "app/recout_tail.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/recindex.h"

/* How far back from the end the last entry is looked for, and how much of
 * a gzip file after it is inflated to close its last member: a killed
 * writer's open frame is about a minute of recording. */
#define TAIL_BACK (64ull << 20)

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

enum walk { W_CLEAN, W_OPEN, W_OTHER };

/* zstd frames from off to size: W_OPEN when the last one ends after a
 * whole block that is not its last, and has no checksum (ours: an end
 * block added makes it whole); W_CLEAN when the file ends at a frame's
 * end; W_OTHER for anything else (cut in a header or a block, not zstd). */
static enum walk zstd_walk(int fd, uint64_t off, uint64_t size)
{
    unsigned char h[18];
    while (off < size) {
        if (pread(fd, h, 8, (off_t)off) != 8)
            return W_OTHER;
        uint32_t magic = le32(h);
        if ((magic & 0xFFFFFFF0u) == 0x184D2A50u) { /* skippable */
            off += 8 + (uint64_t)le32(h + 4);
            continue;
        }
        if (magic != 0xFD2FB528u)
            return W_OTHER;
        unsigned fhd = h[4];
        bool single = fhd & 0x20, checksum = fhd & 0x04;
        static const unsigned did[4] = {0, 1, 2, 4}, fcs[4] = {0, 2, 4, 8};
        unsigned fcs_len = (fhd >> 6) == 0 ? (single ? 1 : 0) : fcs[fhd >> 6];
        off += 5 + (single ? 0 : 1) + did[fhd & 3] + fcs_len;
        for (;;) {
            if (off == size)
                return checksum ? W_OTHER : W_OPEN;
            if (pread(fd, h, 3, (off_t)off) != 3)
                return W_OTHER;
            uint32_t bh = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16;
            unsigned type = (bh >> 1) & 3;
            if (type == 3)
                return W_OTHER;
            off += 3 + (type == 1 ? 1 : (bh >> 3));
            if (off > size)
                return W_OTHER;
            if (bh & 1)
                break;
        }
        off += checksum ? 4 : 0;
    }
    return off == size ? W_CLEAN : W_OTHER;
}

/* gzip members from off to size: W_OPEN when the last one's deflate data
 * ends at a sync flush (an empty stored block) without its final block
 * and trailer; *crc and *isize of its content then. */
static enum walk gzip_walk(int fd, uint64_t off, uint64_t size, uint32_t *crc, uint32_t *isize)
{
    enum { IN = 65536, OUT = 262144 };
    unsigned char *in = malloc(IN), *out = malloc(OUT);
    z_stream z;
    memset(&z, 0, sizeof(z));
    enum walk w = W_OTHER;
    if (!in || !out || inflateInit2(&z, 16 + 15) != Z_OK)
        goto done;
    uLong c = crc32(0, NULL, 0), n = 0;
    bool at_start = true, ended = false;
    unsigned char last4[4] = {0, 0, 0, 0};
    while (off < size) {
        ssize_t got = pread(fd, in, IN, (off_t)off);
        if (got <= 0)
            break;
        off += (uint64_t)got;
        if (got >= 4)
            memcpy(last4, in + got - 4, 4);
        z.next_in = in;
        z.avail_in = (uInt)got;
        while (z.avail_in > 0) {
            z.next_out = out;
            z.avail_out = OUT;
            int rc = inflate(&z, Z_NO_FLUSH);
            c = crc32(c, out, (uInt)(OUT - z.avail_out));
            n += OUT - z.avail_out;
            at_start = false;
            if (rc == Z_STREAM_END) { /* a member whole: the next from scratch */
                c = crc32(0, NULL, 0);
                n = 0;
                at_start = true;
                if (inflateReset(&z) != Z_OK)
                    goto done;
                continue;
            }
            if (rc != Z_OK && rc != Z_BUF_ERROR)
                goto done; /* not gzip, or damaged: left alone */
            if (rc == Z_BUF_ERROR && z.avail_in > 0)
                goto done;
        }
    }
    ended = off == size;
    if (ended && at_start) {
        w = W_CLEAN;
    } else if (ended && last4[0] == 0 && last4[1] == 0 && last4[2] == 0xff && last4[3] == 0xff) {
        /* the deflate stream ends on a sync flush's empty stored block */
        w = W_OPEN;
        *crc = (uint32_t)c;
        *isize = (uint32_t)n;
    }
done:
    inflateEnd(&z);
    free(in);
    free(out);
    return w;
}

int rectail_continue(int fd, bool gzip, uint64_t *prev_entry)
{
    *prev_entry = RECINDEX_NONE;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
        return 0;
    uint64_t size = (uint64_t)st.st_size, from = 0;
    struct recindex e;
    if (recindex_find_last(fd, size, TAIL_BACK, gzip, &e)) {
        *prev_entry = e.self_off;
        from = e.self_off + recindex_len(gzip);
    }
    if (size - from > TAIL_BACK)
        return 0; /* not ours, or too far to walk: as it is */
    unsigned char end[13] = {0x01, 0x00, 0x00, 0xff, 0xff};
    size_t n = 3;
    if (gzip) {
        uint32_t crc = 0, isize = 0;
        if (gzip_walk(fd, from, size, &crc, &isize) != W_OPEN)
            return 0;
        for (int i = 0; i < 4; i++) {
            end[5 + i] = (unsigned char)(crc >> (8 * i));
            end[9 + i] = (unsigned char)(isize >> (8 * i));
        }
        n = 13;
    } else if (zstd_walk(fd, from, size) != W_OPEN) {
        return 0;
    }
    /* at the end, whether fd appends or not (pwrite on an O_APPEND
     * descriptor appends) */
    for (size_t done = 0; done < n;) {
        ssize_t w = pwrite(fd, end + done, n - done, (off_t)(size + done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int err = w < 0 ? errno : EIO;
            if (done && ftruncate(fd, (off_t)size) != 0)
                return -err; /* the end cut: a reader stops at the last whole block */
            return -err;
        }
        done += (size_t)w;
    }
    return 1;
}
