/*
 * recindex.c — the seek index's entries as bytes (recindex.h): little
 * endian, fixed length, a tag and a CRC-32 (zlib's).
 */
#include "core/recindex.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static const unsigned char tag[8] = {'M', 'G', 'M', 'I', 'D', 'X', '1', 0};

static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* The 88 bytes: the tag, the offsets and lengths, the count, the times,
 * the CRC-32 of what comes before it. */
static void payload(const struct recindex *e, unsigned char *p)
{
    memcpy(p, tag, 8);
    put_le(p + 8, e->self_off, 8);
    put_le(p + 16, e->prev_off, 8);
    put_le(p + 24, e->frame_off, 8);
    put_le(p + 32, e->frame_len, 8);
    put_le(p + 40, e->content, 8);
    put_le(p + 48, e->count, 4);
    put_le(p + 52, e->first_elapsed, 8);
    put_le(p + 60, e->last_elapsed, 8);
    put_le(p + 68, (uint64_t)e->first_wall, 8);
    put_le(p + 76, (uint64_t)e->last_wall, 8);
    put_le(p + 84, crc32(0, p, 84), 4);
}

static bool unpayload(const unsigned char *p, struct recindex *e)
{
    if (memcmp(p, tag, 8) != 0 || get_le(p + 84, 4) != crc32(0, p, 84))
        return false;
    e->self_off = get_le(p + 8, 8);
    e->prev_off = get_le(p + 16, 8);
    e->frame_off = get_le(p + 24, 8);
    e->frame_len = get_le(p + 32, 8);
    e->content = get_le(p + 40, 8);
    e->count = (uint32_t)get_le(p + 48, 4);
    e->first_elapsed = get_le(p + 52, 8);
    e->last_elapsed = get_le(p + 60, 8);
    e->first_wall = (int64_t)get_le(p + 68, 8);
    e->last_wall = (int64_t)get_le(p + 76, 8);
    return true;
}

/* An empty gzip member (RFC 1952): the header with FEXTRA, the extra
 * field's one subfield "Mg", an empty final deflate block, CRC-32 and
 * ISIZE of no data. */
static const unsigned char gz_head[10] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 255};
static const unsigned char gz_tail[10] = {0x03, 0x00, 0, 0, 0, 0, 0, 0, 0, 0};

size_t recindex_encode(const struct recindex *e, bool gzip, unsigned char *out)
{
    unsigned char *p = out;
    if (gzip) {
        memcpy(p, gz_head, 10);
        put_le(p + 10, 4 + RECINDEX_PAYLOAD, 2);
        p[12] = 'M';
        p[13] = 'g';
        put_le(p + 14, RECINDEX_PAYLOAD, 2);
        payload(e, p + 16);
        memcpy(p + 16 + RECINDEX_PAYLOAD, gz_tail, 10);
        return RECINDEX_GZIP_LEN;
    }
    put_le(p, RECINDEX_ZSTD_MAGIC, 4);
    put_le(p + 4, RECINDEX_PAYLOAD, 4);
    payload(e, p + 8);
    return RECINDEX_ZSTD_LEN;
}

bool recindex_decode(const unsigned char *b, size_t n, uint64_t at, bool gzip, struct recindex *e)
{
    if (n < recindex_len(gzip))
        return false;
    const unsigned char *p;
    if (gzip) {
        if (memcmp(b, gz_head, 10) != 0 || get_le(b + 10, 2) != 4 + RECINDEX_PAYLOAD ||
            b[12] != 'M' || b[13] != 'g' || get_le(b + 14, 2) != RECINDEX_PAYLOAD ||
            memcmp(b + 16 + RECINDEX_PAYLOAD, gz_tail, 10) != 0)
            return false;
        p = b + 16;
    } else {
        if (get_le(b, 4) != RECINDEX_ZSTD_MAGIC || get_le(b + 4, 4) != RECINDEX_PAYLOAD)
            return false;
        p = b + 8;
    }
    struct recindex t;
    /* it lies where it says, after its frame, and the entry before it
     * lies before that frame */
    if (!unpayload(p, &t) || t.self_off != at || t.frame_off > at || t.frame_len > at - t.frame_off ||
        (t.prev_off != RECINDEX_NONE && (t.frame_off < recindex_len(gzip) ||
                                          t.prev_off > t.frame_off - recindex_len(gzip))))
        return false;
    *e = t;
    return true;
}

bool recindex_find_last(int fd, uint64_t size, uint64_t back, bool gzip, struct recindex *e)
{
    enum { WIN = 65536 };
    size_t len = recindex_len(gzip);
    unsigned char *buf = malloc(WIN + RECINDEX_MAX_LEN);
    if (!buf)
        return false;
    /* the bytes an entry's frame begins with */
    unsigned char m[4];
    if (gzip)
        memcpy(m, gz_head, 4);
    else
        put_le(m, RECINDEX_ZSTD_MAGIC, 4);
    bool found = false;
    uint64_t stop = size > back ? size - back : 0;
    /* windows from the end: [from, from + got), each overlapping the next
     * by an entry's length so that one across the border is seen whole */
    uint64_t end = size;
    while (!found && end > stop && end >= len) {
        uint64_t from = end > WIN ? end - WIN : 0;
        if (from < stop)
            from = stop;
        uint64_t want = size - from < WIN + len ? size - from : WIN + len;
        ssize_t got = pread(fd, buf, (size_t)want, (off_t)from);
        if (got < (ssize_t)len)
            break;
        for (size_t i = (size_t)got - len + 1; i-- > 0;) {
            if (memcmp(buf + i, m, 4) == 0 &&
                recindex_decode(buf + i, (size_t)got - i, from + i, gzip, e)) {
                found = true;
                break;
            }
        }
        if (from == stop)
            break;
        end = from;
    }
    free(buf);
    return found;
}
