/*
 * source.c — a recording's bytes, decompressed frame by frame (source.h).
 */
#include "backend/replay/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define IN_CAP (128u * 1024u)

static bool is_zstd_magic(const unsigned char *p)
{
    return (p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd) ||
           ((p[0] & 0xf0) == 0x50 && p[1] == 0x2a && p[2] == 0x4d && p[3] == 0x18);
}

static bool is_gzip_magic(const unsigned char *p)
{
    return p[0] == 0x1f && p[1] == 0x8b && p[2] == 8;
}

static uint64_t end_of(const struct rsrc *s)
{
    return s->stop < s->size ? s->stop : s->size;
}

static void decoder_reset(struct rsrc *s)
{
    if (s->kind == RSRC_ZSTD)
        ZSTD_DCtx_reset((ZSTD_DCtx *)s->zd, ZSTD_reset_session_only);
    else if (s->kind == RSRC_GZIP)
        inflateReset((z_stream *)s->zs);
    s->frame_start = true;
}

int rsrc_open(struct rsrc *s, int fd, uint64_t size, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    s->fd = fd;
    s->size = size;
    s->stop = UINT64_MAX;
    s->frame_start = true;
    unsigned char m[4] = {0, 0, 0, 0};
    ssize_t got = pread(fd, m, 4, 0);
    if (got >= 3 && is_gzip_magic(m))
        s->kind = RSRC_GZIP;
    else if (got == 4 && is_zstd_magic(m))
        s->kind = RSRC_ZSTD;
    else
        s->kind = RSRC_PLAIN;
    if (s->kind != RSRC_PLAIN && !(s->in = malloc(IN_CAP)))
        goto nomem;
    if (s->kind == RSRC_ZSTD) {
        ZSTD_DCtx *zd = ZSTD_createDCtx();
        if (!zd)
            goto nomem;
        s->zd = zd;
        ZSTD_DCtx_setParameter(zd, ZSTD_d_windowLogMax, RSRC_WINDOW_LOG_MAX);
    } else if (s->kind == RSRC_GZIP) {
        z_stream *zs = calloc(1, sizeof(*zs));
        if (!zs || inflateInit2(zs, 16 + 15) != Z_OK) {
            free(zs);
            goto nomem;
        }
        s->zs = zs;
    }
    return 0;
nomem:
    snprintf(err, errlen, "out of memory");
    rsrc_close(s);
    return -1;
}

void rsrc_seek(struct rsrc *s, uint64_t c, uint64_t stop)
{
    s->in_off = c;
    s->in_len = s->in_pos = 0;
    s->stop = stop;
    s->owe_newline = false;
    s->frame_c = c;
    decoder_reset(s);
}

/* More input when what was read is used up: false at the end or stop. */
static bool fill(struct rsrc *s)
{
    if (s->in_pos < s->in_len)
        return true;
    uint64_t off = s->in_off + s->in_len, lim = end_of(s);
    if (off >= lim)
        return false;
    size_t want = lim - off < IN_CAP ? (size_t)(lim - off) : IN_CAP;
    ssize_t got = pread(s->fd, s->in, want, (off_t)off);
    if (got <= 0)
        return false;
    s->in_off = off;
    s->in_len = (size_t)got;
    s->in_pos = 0;
    return true;
}

/* A frame that does not decode: said (the first), counted, and decoding
 * goes on at the next frame's first byte after where it began. */
static void damaged(struct rsrc *s, const char *why)
{
    if (s->damaged++ == 0)
        snprintf(s->damage, sizeof(s->damage), "the frame at byte %llu does not decode (%s)",
                 (unsigned long long)s->frame_c, why);
    unsigned char buf[4096];
    uint64_t at = s->frame_c + 1, lim = end_of(s);
    while (at < lim) {
        size_t want = lim - at < sizeof(buf) ? (size_t)(lim - at) : sizeof(buf);
        ssize_t got = pread(s->fd, buf, want, (off_t)at);
        if (got < 4)
            break;
        for (ssize_t i = 0; i + 4 <= got; i++) {
            if (s->kind == RSRC_ZSTD ? is_zstd_magic(buf + i) : is_gzip_magic(buf + i)) {
                s->in_off = at + (uint64_t)i;
                s->in_len = s->in_pos = 0;
                decoder_reset(s);
                return;
            }
        }
        at += (uint64_t)got - 3; /* a magic across the border is seen in the next */
    }
    s->in_off = lim;
    s->in_len = s->in_pos = 0;
    decoder_reset(s);
}

/* One step of the decoder: 0 more to do, 1 its frame ended, -1 damaged. */
static int step(struct rsrc *s, unsigned char *buf, size_t cap, size_t *got)
{
    size_t before = s->in_pos;
    int rc = 0;
    if (s->kind == RSRC_ZSTD) {
        ZSTD_inBuffer in = {s->in, s->in_len, s->in_pos};
        ZSTD_outBuffer out = {buf, cap, *got};
        size_t r = ZSTD_decompressStream((ZSTD_DCtx *)s->zd, &out, &in);
        s->in_pos = in.pos;
        *got = out.pos;
        if (ZSTD_isError(r)) {
            damaged(s, ZSTD_getErrorName(r));
            return -1;
        }
        rc = r == 0;
    } else {
        z_stream *z = s->zs;
        z->next_in = s->in + s->in_pos;
        z->avail_in = (uInt)(s->in_len - s->in_pos);
        z->next_out = buf + *got;
        z->avail_out = (uInt)(cap - *got);
        int r = inflate(z, Z_NO_FLUSH);
        s->in_pos = s->in_len - z->avail_in;
        *got = cap - z->avail_out;
        if (r == Z_STREAM_END) {
            inflateReset(z);
            rc = 1;
        } else if (r != Z_OK && r != Z_BUF_ERROR) {
            damaged(s, z->msg ? z->msg : "not deflate data");
            return -1;
        }
    }
    s->consumed += s->in_pos >= before ? s->in_pos - before : 0;
    return rc;
}

size_t rsrc_read(struct rsrc *s, unsigned char *buf, size_t cap, uint64_t *frame_c)
{
    if (cap == 0)
        return 0;
    if (s->kind == RSRC_PLAIN) {
        uint64_t lim = end_of(s);
        *frame_c = s->in_off;
        if (s->in_off >= lim)
            return 0;
        size_t want = lim - s->in_off < cap ? (size_t)(lim - s->in_off) : cap;
        ssize_t got = pread(s->fd, buf, want, (off_t)s->in_off);
        if (got <= 0)
            return 0;
        s->in_off += (uint64_t)got;
        s->consumed += (uint64_t)got;
        return (size_t)got;
    }
    size_t got = 0;
    if (s->owe_newline) {
        s->owe_newline = false;
        buf[got++] = '\n';
    }
    *frame_c = s->frame_c;
    while (got < cap) {
        if (!fill(s))
            break;
        if (s->frame_start) {
            if (got)
                break; /* a read gives one frame's bytes */
            s->frame_c = *frame_c = s->in_off + s->in_pos;
            s->frame_start = false;
        }
        int rc = step(s, buf, cap, &got);
        if (rc < 0) {
            /* the cut line ends here, not glued to the next frame's first */
            if (got < cap)
                buf[got++] = '\n';
            else
                s->owe_newline = true;
            break;
        }
        if (rc == 1) {
            s->frame_start = true;
            if (got)
                break;
        }
    }
    return got;
}

void rsrc_close(struct rsrc *s)
{
    if (s->zd)
        ZSTD_freeDCtx((ZSTD_DCtx *)s->zd);
    if (s->zs) {
        inflateEnd((z_stream *)s->zs);
        free(s->zs);
    }
    free(s->in);
    if (s->fd >= 0)
        close(s->fd);
    memset(s, 0, sizeof(*s));
    s->fd = -1;
}
