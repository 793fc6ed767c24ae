/* A recording's output (src/app/recout.c, src/app/recout_tail.c, src/core/recindex.c):
 * after every flush the file decodes whole with zstd's and zlib's own
 * decoders and holds everything put; the index entries read back and
 * chain; a file that lost its end (a writer killed between taking the
 * tail off and writing) is closed when continued; a failed write leaves
 * the file as it was, closed; an entry never matches bytes that only look
 * like one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <zlib.h>
#include <zstd.h>

#include "app/recout.h"
#include "core/recindex.h"

/* A new file, appended to (O_APPEND: the tail taken off with ftruncate)
 * or not (written over at its place). */
static int tmpfile_fd(char *path, bool append)
{
    strcpy(path, "/tmp/migmon-recout-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    if (append)
        assert_int_equal(fcntl(fd, F_SETFL, O_APPEND), 0);
    return fd;
}

static size_t file_bytes(const char *path, unsigned char **out)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *out = malloc((size_t)n + 1);
    assert_int_equal(fread(*out, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return (size_t)n;
}

/* The whole file decoded by the library's own decoder: -1 when it is not
 * whole (an error, or input that ends inside a frame). */
static long decode(const char *path, enum rec_compress k, char *out, size_t cap)
{
    unsigned char *in;
    size_t n = file_bytes(path, &in);
    long got = -1;
    if (k == REC_ZSTD) {
        ZSTD_DCtx *d = ZSTD_createDCtx();
        ZSTD_inBuffer ib = {in, n, 0};
        ZSTD_outBuffer ob = {out, cap, 0};
        size_t r = 1;
        while (ib.pos < ib.size) {
            r = ZSTD_decompressStream(d, &ob, &ib);
            if (ZSTD_isError(r))
                break;
        }
        if (!ZSTD_isError(r) && r == 0)
            got = (long)ob.pos;
        ZSTD_freeDCtx(d);
    } else {
        z_stream z;
        memset(&z, 0, sizeof(z));
        inflateInit2(&z, 16 + 15);
        z.next_in = in;
        z.avail_in = (uInt)n;
        z.next_out = (unsigned char *)out;
        z.avail_out = (uInt)cap;
        int r = Z_OK;
        while (z.avail_in > 0) {
            r = inflate(&z, Z_NO_FLUSH);
            if (r == Z_STREAM_END && z.avail_in > 0)
                r = inflateReset(&z) == Z_OK ? Z_OK : Z_DATA_ERROR;
            else if (r != Z_OK)
                break;
        }
        if (r == Z_STREAM_END)
            got = (long)(cap - z.avail_out);
        inflateEnd(&z);
    }
    free(in);
    return got;
}

static void line(char *buf, size_t cap, int i)
{
    snprintf(buf, cap,
             "{\"schema\":2,\"elapsed_ns\":%lld,\"timestamp\":\"2026-12-02T00:%02d:%02d.000Z\","
             "\"devices\":[{\"kind\":\"gpu\",\"index\":%d}]}\n",
             (long long)i * 1000000000ll, i / 60 % 60, i % 60, i % 7);
}

/* n snapshots a second apart, flushed each; after each flush the file
 * decodes whole to everything put so far. */
static void write_and_check(enum rec_compress k, int n, int fd, const char *path, char *expect,
                            size_t *elen)
{
    struct recout *o;
    char err[256];
    assert_int_equal(recout_open(&o, k, fd, err, sizeof(err)), 0);
    static char got[1 << 20];
    for (int i = 0; i < n; i++) {
        char l[256];
        line(l, sizeof(l), i);
        struct recout_meta m = {.snapshot = true, .elapsed = (uint64_t)i * 1000000000ull,
                                .wall = 1796169600000000000ll + (int64_t)i * 1000000000ll};
        bool cut;
        assert_int_equal(recout_put(o, fd, l, strlen(l), &m, recout_key_due(o, m.elapsed), &cut),
                         0);
        assert_int_equal(recout_flush(o, fd, &cut), 0);
        memcpy(expect + *elen, l, strlen(l));
        *elen += strlen(l);
        long d = decode(path, k, got, sizeof(got));
        assert_int_equal(d, (long)*elen);
        assert_memory_equal(got, expect, *elen);
    }
    assert_int_equal(recout_finish(o, fd), 0);
    recout_free(o);
    assert_int_equal(decode(path, k, got, sizeof(got)), (long)*elen);
}

static void test_whole_after_every_flush(void **st)
{
    (void)st;
    for (int v = 0; v < 4; v++) {
        int k = v % 2 ? REC_ZSTD : REC_GZIP;
        char path[64];
        int fd = tmpfile_fd(path, v >= 2);
        static char expect[1 << 20];
        size_t elen = 0;
        write_and_check((enum rec_compress)k, 150, fd, path, expect, &elen); /* 3 frames */
        /* the entries: 3, chained, each where it says, counting 60, 60, 30 */
        struct recindex e;
        struct stat sb;
        fstat(fd, &sb);
        assert_true(recindex_find_last(fd, (uint64_t)sb.st_size, 1 << 20, k == REC_GZIP, &e));
        assert_int_equal(e.self_off + recindex_len(k == REC_GZIP), (uint64_t)sb.st_size);
        uint32_t counts[3];
        int found = 0;
        for (;;) {
            counts[found++] = e.count;
            if (e.prev_off == RECINDEX_NONE)
                break;
            unsigned char b[RECINDEX_MAX_LEN];
            assert_int_equal(pread(fd, b, recindex_len(k == REC_GZIP), (off_t)e.prev_off),
                             (ssize_t)recindex_len(k == REC_GZIP));
            uint64_t at = e.prev_off;
            assert_true(recindex_decode(b, sizeof(b), at, k == REC_GZIP, &e));
            assert_true(found < 3);
        }
        assert_int_equal(found, 3);
        assert_int_equal(counts[0], 30);
        assert_int_equal(counts[1], 60);
        assert_int_equal(counts[2], 60);
        assert_int_equal(e.frame_off, 0);
        assert_int_equal(e.first_elapsed, 0);
        assert_int_equal(e.last_elapsed, 59000000000ull);
        /* continued (--append): 20 more, one stream, its index chained on */
        write_and_check((enum rec_compress)k, 20, fd, path, expect, &elen);
        fstat(fd, &sb);
        assert_true(recindex_find_last(fd, (uint64_t)sb.st_size, 1 << 20, k == REC_GZIP, &e));
        assert_int_equal(e.count, 20);
        assert_true(e.prev_off != RECINDEX_NONE);
        close(fd);
        unlink(path);
    }
}

/* A file whose frame lost its end (the writer killed after taking the
 * tail off, before writing): continuing it closes the frame first. */
static void test_open_frame_closed_when_continued(void **st)
{
    (void)st;
    for (int v = 0; v < 4; v++) {
        int k = v % 2 ? REC_ZSTD : REC_GZIP;
        char path[64];
        int fd = tmpfile_fd(path, v >= 2);
        struct recout *o;
        char err[256];
        assert_int_equal(recout_open(&o, (enum rec_compress)k, fd, err, sizeof(err)), 0);
        static char expect[1 << 16];
        size_t elen = 0;
        for (int i = 0; i < 5; i++) {
            char l[256];
            line(l, sizeof(l), i);
            struct recout_meta m = {.snapshot = true, .elapsed = (uint64_t)i * 1000000000ull};
            bool cut;
            assert_int_equal(recout_put(o, fd, l, strlen(l), &m, i == 0, &cut), 0);
            assert_int_equal(recout_flush(o, fd, &cut), 0);
            memcpy(expect + elen, l, strlen(l));
            elen += strlen(l);
        }
        recout_free(o); /* killed: no finish */
        struct stat sb;
        fstat(fd, &sb);
        size_t tail = (k == REC_GZIP ? 13 : 3) + recindex_len(k == REC_GZIP);
        assert_int_equal(ftruncate(fd, sb.st_size - (off_t)tail), 0);
        static char got[1 << 16];
        assert_int_equal(decode(path, (enum rec_compress)k, got, sizeof(got)), -1); /* open */
        assert_int_equal(recout_open(&o, (enum rec_compress)k, fd, err, sizeof(err)), 0);
        assert_int_equal(recout_finish(o, fd), 0);
        recout_free(o);
        assert_int_equal(decode(path, (enum rec_compress)k, got, sizeof(got)), (long)elen);
        assert_memory_equal(got, expect, elen);
        close(fd);
        unlink(path);
    }
}

/* A write that fails part-way (the file may not grow: RLIMIT_FSIZE, as a
 * full disk) is said, taken back, and the file left as the last flush
 * left it: whole, closed by hand again. */
static void test_failed_write(void **st)
{
    (void)st;
    for (int v = 0; v < 4; v++) {
        int k = v % 2 ? REC_ZSTD : REC_GZIP;
        char path[64];
        int fd = tmpfile_fd(path, v >= 2);
        struct recout *o;
        char err[256];
        assert_int_equal(recout_open(&o, (enum rec_compress)k, fd, err, sizeof(err)), 0);
        char l[256], first[256];
        line(first, sizeof(first), 0);
        struct recout_meta m = {.snapshot = true};
        bool cut;
        assert_int_equal(recout_put(o, fd, first, strlen(first), &m, true, &cut), 0);
        assert_int_equal(recout_flush(o, fd, &cut), 0);
        struct stat sb;
        fstat(fd, &sb);
        struct rlimit old, lim;
        getrlimit(RLIMIT_FSIZE, &old);
        lim = old;
        lim.rlim_cur = (rlim_t)sb.st_size + 8; /* 8 bytes more, then EFBIG */
        signal(SIGXFSZ, SIG_IGN);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
        for (int i = 1; i < 20; i++) { /* incompressible enough to pass 8 bytes */
            line(l, sizeof(l), i * 7919);
            m.elapsed = (uint64_t)i * 1000000000ull;
            assert_int_equal(recout_put(o, fd, l, strlen(l), &m, false, &cut), 0);
        }
        assert_int_equal(recout_flush(o, fd, &cut), -EFBIG);
        assert_true(cut);
        assert_int_equal(recout_put(o, fd, l, strlen(l), &m, false, &cut), -EIO); /* no more */
        setrlimit(RLIMIT_FSIZE, &old);
        recout_abandon(o, fd);
        recout_free(o);
        static char got[4096];
        assert_int_equal(decode(path, (enum rec_compress)k, got, sizeof(got)), (long)strlen(first));
        assert_memory_equal(got, first, strlen(first));
        close(fd);
        unlink(path);
    }
}

/* Bytes that begin like an entry but do not hold one, an entry that says
 * it lies elsewhere, one with a bad CRC: none is taken. */
static void test_entries_only_whole(void **st)
{
    (void)st;
    for (int gz = 0; gz <= 1; gz++) {
        struct recindex e = {.self_off = 1000, .prev_off = 100, .frame_off = 400, .frame_len = 600,
                             .content = 5000, .count = 7, .first_elapsed = 1, .last_elapsed = 2,
                             .first_wall = 3, .last_wall = 4},
                        d;
        unsigned char b[RECINDEX_MAX_LEN];
        size_t n = recindex_encode(&e, gz, b);
        assert_int_equal(n, recindex_len(gz));
        assert_true(recindex_decode(b, n, 1000, gz, &d));
        assert_true(d.self_off == e.self_off && d.prev_off == e.prev_off &&
                    d.frame_off == e.frame_off && d.frame_len == e.frame_len &&
                    d.content == e.content && d.count == e.count &&
                    d.first_elapsed == e.first_elapsed && d.last_elapsed == e.last_elapsed &&
                    d.first_wall == e.first_wall && d.last_wall == e.last_wall);
        assert_false(recindex_decode(b, n, 1001, gz, &d)); /* not where it says */
        assert_false(recindex_decode(b, n - 1, 1000, gz, &d));
        b[n / 2] ^= 1;
        assert_false(recindex_decode(b, n, 1000, gz, &d)); /* the CRC */
        e.prev_off = 450; /* the entry before inside the frame */
        n = recindex_encode(&e, gz, b);
        assert_false(recindex_decode(b, n, 1000, gz, &d));
    }
}

static void test_names(void **st)
{
    (void)st;
    char other[16];
    assert_int_equal(recout_by_name("a.jsonl.zst", other, sizeof(other)), REC_ZSTD);
    assert_string_equal(other, "");
    assert_int_equal(recout_by_name("a.csv.gz", other, sizeof(other)), REC_GZIP);
    assert_int_equal(recout_by_name("a.jsonl", other, sizeof(other)), REC_PLAIN);
    assert_string_equal(other, "");
    assert_int_equal(recout_by_name("a.jsonl.bz2", other, sizeof(other)), REC_PLAIN);
    assert_string_equal(other, ".bz2");
    assert_int_equal(recout_by_name(".zst", other, sizeof(other)), REC_PLAIN); /* a name, no suffix */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_after_every_flush),
        cmocka_unit_test(test_open_frame_closed_when_continued),
        cmocka_unit_test(test_failed_write),
        cmocka_unit_test(test_entries_only_whole),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
