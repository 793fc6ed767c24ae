/*
 * recout.c — a recording's output: plain, gzip or zstd in frames with a
 * seek index (recout.h). Continuing a file that holds a recording is in
 * recout_tail.c.
 */
#include "app/recout.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "app/recout_tail.h"
#include "core/clock.h"
#include "core/outfile.h"
#include "core/recindex.h"

/* zstd's default level (3) and gzip's (6): bench/README.md ("bench_record")
 * has what they give and cost against the tick they record. */
#define ZSTD_LEVEL 3
#define GZIP_LEVEL 6

/* What a frame holds so far: its entry without the offsets of where it
 * lies (those are known when it is written). */
struct frame {
    bool open;
    uint64_t start;        /* where it begins in the stream (bytes produced) */
    struct recindex e;     /* count, content, times */
    uint32_t crc;          /* gzip: CRC-32 of its content */
};

struct recout {
    enum rec_compress kind;
    ZSTD_CCtx *zc;
    z_stream zs;
    bool zs_ready;
    /* compressed bytes produced and not yet written */
    unsigned char *pend;
    size_t pend_len, pend_cap;
    uint64_t stream;       /* bytes produced since the open (written + pend) */
    int64_t file_base;     /* the file offset of stream byte 0 */
    uint64_t prev_entry;   /* the file offset of the last entry written; RECINDEX_NONE */
    uint64_t prev_pend;    /* of one in pend (committed at the write); RECINDEX_NONE */
    struct frame fr;       /* the open frame, with everything put */
    struct frame done;     /* the frame open at the end of what was written */
    uint64_t first_unflushed; /* monotonic ns of the first batch put since the last flush; 0 */
    bool broken;           /* a write failed: the compressor is ahead of the file */
    /* A regular file ends, after each flush, with the open frame ended by
     * hand and its entry (the tail): the file is whole at every moment for
     * every decoder, and its index complete. The next write takes it off
     * first (ftruncate: tail_at, tail_len bytes). */
    bool regular;
    bool append; /* opened O_APPEND; else the offset is moved back with the tail */
    uint64_t tail_at, tail_len;
};

enum rec_compress recout_by_name(const char *path, char *other, size_t otherlen)
{
    static const char *const others[] = {".xz", ".bz2", ".lz4", ".lzma", ".zip", ".Z",
                                          ".br", ".sz", ".lz", ".7z", NULL};
    size_t n = strlen(path);
    if (otherlen)
        other[0] = '\0';
    if (n > 4 && strcmp(path + n - 4, ".zst") == 0)
        return REC_ZSTD;
    if (n > 3 && strcmp(path + n - 3, ".gz") == 0)
        return REC_GZIP;
    for (int i = 0; others[i]; i++) {
        size_t m = strlen(others[i]);
        if (n > m && strcmp(path + n - m, others[i]) == 0) {
            snprintf(other, otherlen, "%s", others[i]);
            break;
        }
    }
    return REC_PLAIN;
}

const char *recout_name(enum rec_compress k)
{
    return k == REC_ZSTD ? "zstd" : k == REC_GZIP ? "gzip" : "none";
}

/* Room for at least want more bytes in pend. */
static int pend_room(struct recout *o, size_t want)
{
    if (o->pend_cap - o->pend_len >= want)
        return 0;
    size_t cap = o->pend_cap ? o->pend_cap : 65536;
    while (cap - o->pend_len < want)
        cap *= 2;
    unsigned char *p = realloc(o->pend, cap);
    if (!p)
        return -ENOMEM;
    o->pend = p;
    o->pend_cap = cap;
    return 0;
}

/* n bytes into the compressor, with the directive (zstd's ZSTD_e_*,
 * deflate's Z_*: the same three steps), what it gives into pend. */
static int squeeze(struct recout *o, const char *b, size_t n, int step)
{
    if (o->kind == REC_ZSTD) {
        ZSTD_inBuffer in = {b, n, 0};
        for (;;) {
            int rc = pend_room(o, ZSTD_CStreamOutSize());
            if (rc)
                return rc;
            ZSTD_outBuffer out = {o->pend, o->pend_cap, o->pend_len};
            size_t left = ZSTD_compressStream2(o->zc, &out, &in, (ZSTD_EndDirective)step);
            o->stream += out.pos - o->pend_len;
            o->pend_len = out.pos;
            if (ZSTD_isError(left))
                return -EIO;
            if (in.pos == in.size && (step == ZSTD_e_continue || left == 0))
                return 0;
        }
    }
    int flush = step == ZSTD_e_continue ? Z_NO_FLUSH : step == ZSTD_e_flush ? Z_SYNC_FLUSH
                                                                            : Z_FINISH;
    o->zs.next_in = (unsigned char *)(uintptr_t)b;
    o->zs.avail_in = (uInt)n;
    for (;;) {
        int rc = pend_room(o, 65536);
        if (rc)
            return rc;
        o->zs.next_out = o->pend + o->pend_len;
        o->zs.avail_out = (uInt)(o->pend_cap - o->pend_len);
        uInt before = o->zs.avail_out;
        int z = deflate(&o->zs, flush);
        size_t made = before - o->zs.avail_out;
        o->pend_len += made;
        o->stream += made;
        if (z == Z_STREAM_END)
            return deflateReset(&o->zs) == Z_OK ? 0 : -EIO;
        if (z != Z_OK && z != Z_BUF_ERROR)
            return -EIO;
        if (o->zs.avail_in == 0 && o->zs.avail_out != 0 && flush != Z_FINISH)
            return 0;
    }
}

/* The open frame's entry after it in pend. */
static int put_entry(struct recout *o)
{
    int rc = pend_room(o, RECINDEX_MAX_LEN);
    if (rc)
        return rc;
    struct recindex e = o->fr.e;
    e.frame_off = (uint64_t)o->file_base + o->fr.start;
    e.frame_len = o->stream - o->fr.start;
    e.self_off = (uint64_t)o->file_base + o->stream;
    e.prev_off = o->prev_pend != RECINDEX_NONE ? o->prev_pend : o->prev_entry;
    size_t n = recindex_encode(&e, o->kind == REC_GZIP, o->pend + o->pend_len);
    o->pend_len += n;
    o->stream += n;
    o->prev_pend = e.self_off;
    return 0;
}

/* Ends the open frame (the compressor's end, then its entry). */
static int end_frame(struct recout *o)
{
    if (!o->fr.open)
        return 0;
    int rc = squeeze(o, NULL, 0, ZSTD_e_end);
    if (rc == 0)
        rc = put_entry(o);
    o->fr.open = false;
    return rc;
}

/* Frame f ended by hand where the stream is now (zstd: an empty last
 * block, RFC 8878 section 3.1.1.2; gzip: an empty final stored block and
 * the trailer of f's content, RFC 1951 and 1952), then its entry: into b
 * (13 + RECINDEX_MAX_LEN bytes), its length. It holds only because f ends
 * on a flush (a whole block, byte-aligned), as everything written does. */
static size_t hand_end(const struct recout *o, const struct frame *f, unsigned char *b)
{
    bool gz = o->kind == REC_GZIP;
    static const unsigned char end[5] = {0x01, 0x00, 0x00, 0xff, 0xff};
    size_t n = gz ? 5 : 3;
    memcpy(b, end, n);
    if (gz) {
        uint32_t isize = (uint32_t)f->e.content;
        for (int i = 0; i < 4; i++) {
            b[n + (size_t)i] = (unsigned char)(f->crc >> (8 * i));
            b[n + 4 + (size_t)i] = (unsigned char)(isize >> (8 * i));
        }
        n += 8;
    }
    struct recindex e = f->e;
    e.frame_off = (uint64_t)o->file_base + f->start;
    e.self_off = (uint64_t)o->file_base + o->stream + n;
    e.frame_len = e.self_off - e.frame_off;
    e.prev_off = o->prev_pend != RECINDEX_NONE ? o->prev_pend : o->prev_entry;
    return n + recindex_encode(&e, gz, b + n);
}

/* All of b (n bytes) at the file offset at. When it fails part-way, the
 * file is cut at at again (*cut): it ends where the last whole write
 * ended, without the tail that lay there. 0 or -errno; *over: bytes of
 * what lay at at were written over. */
static int write_at(int fd, const unsigned char *b, size_t n, uint64_t at, bool *cut, bool *over)
{
    size_t done = 0;
    *over = false;
    while (done < n) {
        ssize_t w = pwrite(fd, b + done, n - done, (off_t)(at + done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            if (done) {
                *over = true;
                if (ftruncate(fd, (off_t)at) == 0 && cut)
                    *cut = true;
            }
            return -e;
        }
        done += (size_t)w;
    }
    return 0;
}

/* Where this writer left the file's end (tail_at + tail_len) is its end:
 * true; false when another changed it (a copytruncate rotation emptied
 * it, another writer appended). */
static bool as_left(const struct recout *o, int fd, uint64_t *size)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return false;
    *size = (uint64_t)st.st_size;
    return *size == o->tail_at + o->tail_len;
}

/* pend to the file, whole, and after it the open frame's tail. A file
 * opened for appending (O_APPEND: --append's reopen, a shell's >>) has its
 * tail taken off (ftruncate) and the rest appended; another is written at
 * its place (pwrite over the tail), one call less. The place of what is
 * written is taken from the file when another changed it. */
static int write_pend(struct recout *o, int fd, bool *cut)
{
    if (o->pend_len == 0 && !(o->regular && o->fr.open))
        return 0;
    uint64_t size = 0;
    bool left = !o->regular || as_left(o, fd, &size);
    if (o->regular && !left) /* offsets from the end it has now */
        o->file_base = (int64_t)size - (int64_t)(o->stream - o->pend_len);
    size_t tl = 0;
    if (o->regular && o->fr.open) {
        int rc = pend_room(o, 13 + RECINDEX_MAX_LEN);
        if (rc)
            return rc;
        tl = hand_end(o, &o->fr, o->pend + o->pend_len);
    }
    uint64_t at = (uint64_t)o->file_base + (o->stream - o->pend_len);
    int rc = 0;
    bool over = true;
    if (o->regular && !o->append) {
        rc = write_at(fd, o->pend, o->pend_len + tl, at, cut, &over);
        /* shorter than the tail it wrote over (gzip's own end is 3 bytes
         * less than ours): the rest of that tail cut off */
        uint64_t end = at + o->pend_len + tl;
        if (rc == 0 && left && end < o->tail_at + o->tail_len && ftruncate(fd, (off_t)end) != 0)
            rc = -errno;
    } else {
        if (o->regular && left && o->tail_len && ftruncate(fd, (off_t)o->tail_at) != 0) {
            rc = -errno; /* the file stays closed and whole; the recording ends */
            over = false;
        }
        if (rc == 0)
            rc = outfile_write(fd, (const char *)o->pend, o->pend_len + tl, cut);
    }
    if (rc != 0) {
        if (!over)
            o->done.open = false; /* its tail is still there: nothing to close */
        o->stream -= o->pend_len;
        o->pend_len = 0;
        o->prev_pend = RECINDEX_NONE;
        o->broken = true;
        return rc;
    }
    o->pend_len = 0;
    if (o->prev_pend != RECINDEX_NONE)
        o->prev_entry = o->prev_pend;
    o->prev_pend = RECINDEX_NONE;
    o->done = o->fr;
    o->tail_len = tl;
    o->tail_at = (uint64_t)o->file_base + o->stream;
    return 0;
}

static void frame_note(struct frame *f, bool gzip, const char *b, size_t n,
                       const struct recout_meta *m)
{
    f->e.content += n;
    if (gzip)
        f->crc = (uint32_t)crc32(f->crc, (const unsigned char *)b, (uInt)n);
    if (!m->snapshot)
        return;
    if (f->e.count == 0) {
        f->e.first_elapsed = m->elapsed;
        f->e.first_wall = m->wall;
    }
    f->e.last_elapsed = m->elapsed;
    f->e.last_wall = m->wall;
    f->e.count++;
}

/* The writer set for a new file, continuing a recording it holds. */
static int start_file(struct recout *o, int fd, char *err, size_t errlen)
{
    o->pend_len = 0;
    o->stream = 0;
    o->prev_entry = o->prev_pend = RECINDEX_NONE;
    memset(&o->fr, 0, sizeof(o->fr));
    memset(&o->done, 0, sizeof(o->done));
    o->first_unflushed = 0;
    o->broken = false;
    if (o->kind == REC_ZSTD)
        ZSTD_CCtx_reset(o->zc, ZSTD_reset_session_only);
    else if (o->kind == REC_GZIP)
        deflateReset(&o->zs);
    if (o->kind != REC_PLAIN) {
        int rc = rectail_continue(fd, o->kind == REC_GZIP, &o->prev_entry);
        if (rc < 0) {
            snprintf(err, errlen, "closing the frame left open at its end: %s", strerror(-rc));
            return -1;
        }
    }
    struct stat st;
    off_t at = lseek(fd, 0, SEEK_CUR);
    o->regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    int fl = fcntl(fd, F_GETFL);
    o->append = fl >= 0 && (fl & O_APPEND);
    if (o->regular)
        at = st.st_size; /* the recording goes on at the end */
    o->file_base = at > 0 ? (int64_t)at : 0;
    o->tail_at = (uint64_t)o->file_base;
    o->tail_len = 0;
    return 0;
}

int recout_open(struct recout **out, enum rec_compress k, int fd, char *err, size_t errlen)
{
    *out = NULL;
    struct recout *o = calloc(1, sizeof(*o));
    if (!o) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    o->kind = k;
    if (k == REC_ZSTD) {
        o->zc = ZSTD_createCCtx();
        /* no content checksum: a frame left open by a killed writer or a
         * full disk is closed by an empty last block (recout_abandon,
         * recout_tail.c), which a checksum over what the compressor took
         * in would contradict */
        if (!o->zc || ZSTD_isError(ZSTD_CCtx_setParameter(o->zc, ZSTD_c_compressionLevel,
                                                          ZSTD_LEVEL)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(o->zc, ZSTD_c_checksumFlag, 0))) {
            snprintf(err, errlen, "zstd: cannot start its compressor");
            goto fail;
        }
    } else if (k == REC_GZIP) {
        if (deflateInit2(&o->zs, GZIP_LEVEL, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            snprintf(err, errlen, "zlib: cannot start its compressor");
            goto fail;
        }
        o->zs_ready = true;
    }
    if (start_file(o, fd, err, errlen) != 0)
        goto fail;
    *out = o;
    return 0;
fail:
    recout_free(o);
    return -1;
}

int recout_retarget(struct recout *o, int fd, char *err, size_t errlen)
{
    return start_file(o, fd, err, errlen);
}

bool recout_key_due(const struct recout *o, uint64_t elapsed)
{
    if (!o->fr.open || o->fr.e.count == 0)
        return true;
    return elapsed < o->fr.e.first_elapsed || elapsed - o->fr.e.first_elapsed >= RECOUT_FRAME_NS;
}

int recout_put(struct recout *o, int fd, const char *b, size_t n, const struct recout_meta *m,
               bool key, bool *cut)
{
    if (cut)
        *cut = false;
    if (o->broken)
        return -EIO;
    int rc = 0;
    if (key || !o->fr.open) {
        if (o->kind != REC_PLAIN && (rc = end_frame(o)) != 0)
            return rc;
        memset(&o->fr, 0, sizeof(o->fr));
        o->fr.open = true;
        o->fr.start = o->stream;
    }
    frame_note(&o->fr, o->kind == REC_GZIP, b, n, m);
    if (o->kind == REC_PLAIN) {
        rc = outfile_write(fd, b, n, cut);
        if (rc == 0)
            o->done = o->fr;
        return rc;
    }
    if (!o->first_unflushed)
        o->first_unflushed = clock_mono_ns();
    return squeeze(o, b, n, ZSTD_e_continue);
}

uint64_t recout_flush_by(const struct recout *o)
{
    return o->first_unflushed ? o->first_unflushed + RECOUT_FLUSH_NS : 0;
}

int recout_flush(struct recout *o, int fd, bool *cut)
{
    if (cut)
        *cut = false;
    if (o->kind == REC_PLAIN || o->broken || (!o->first_unflushed && o->pend_len == 0))
        return 0;
    int rc = 0;
    if (o->first_unflushed && o->fr.open)
        rc = squeeze(o, NULL, 0, ZSTD_e_flush);
    o->first_unflushed = 0;
    if (rc == 0)
        rc = write_pend(o, fd, cut);
    return rc;
}

int recout_finish(struct recout *o, int fd)
{
    if (o->kind == REC_PLAIN || o->broken)
        return 0;
    int rc = end_frame(o);
    o->first_unflushed = 0;
    if (rc == 0)
        rc = write_pend(o, fd, NULL);
    if (rc == 0)
        memset(&o->done, 0, sizeof(o->done));
    return rc;
}

void recout_abandon(struct recout *o, int fd)
{
    if (o->kind == REC_PLAIN || !o->done.open)
        return;
    /* the file ends where the last write ended (stream is rolled back to
     * it), its tail taken off before the write that failed */
    unsigned char b[13 + RECINDEX_MAX_LEN];
    size_t n = hand_end(o, &o->done, b), end = o->kind == REC_GZIP ? 13 : 3;
    bool over;
    if (o->regular && !o->append) {
        uint64_t at = (uint64_t)o->file_base + o->stream;
        if (write_at(fd, b, n, at, NULL, &over) != 0)
            write_at(fd, b, end, at, NULL, &over);
    } else if (outfile_write(fd, (const char *)b, n, NULL) != 0) {
        outfile_write(fd, (const char *)b, end, NULL);
    }
    o->done.open = false;
}

void recout_free(struct recout *o)
{
    if (!o)
        return;
    ZSTD_freeCCtx(o->zc);
    if (o->zs_ready)
        deflateEnd(&o->zs);
    free(o->pend);
    free(o);
}
