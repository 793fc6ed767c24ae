/* The recording reader (src/backend/replay/): the sparse index stays bounded
 * however many snapshots a file holds, every snapshot reads back by number
 * from it (forward, back, after event lines and garbage), time lookups give
 * the last snapshot at or before a time, and RFC 3339 times parse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "backend/replay/reader.h"
#include "backend/replay/replay.h"

#define N 10000

/* N snapshots 1 s apart, an event line after every 100th, a garbage line
 * after every 1000th. */
static void write_file(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < N; i++) {
        fprintf(f,
                "{\"schema\":1,\"generator\":\"t\",\"elapsed_ns\":%lld,\"timestamp\":"
                "\"2026-12-02T%02d:%02d:%02d.000Z\",\"devices\":[{\"kind\":\"gpu\",\"index\":%d,"
                "\"metrics\":{\"power_w\":{\"value\":%d,\"source\":\"direct\"}}}]}\n",
                (long long)i * 1000000000ll, i / 3600, i / 60 % 60, i % 60, i % 8, i);
        if (i % 100 == 0)
            fprintf(f, "{\"type\":\"event\",\"elapsed_ns\":1}\n");
        if (i % 1000 == 999)
            fprintf(f, "garbage %d\n", i);
    }
    fclose(f);
}

static void test_index_bounded_and_random_access(void **state)
{
    (void)state;
    char path[] = "/tmp/migmon-replay-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_file(path);
    struct replay_file f;
    char err[512];
    assert_int_equal(replay_file_open(&f, path, err, sizeof(err)), 0);
    assert_int_equal(f.count, N);
    assert_int_equal(f.garbage, N / 1000);
    assert_int_equal(f.others, N / 100);
    assert_true(f.nseg <= REPLAY_INDEX_MAX);
    assert_int_equal(f.stride, 4); /* 10000 snapshots: 4096 entries hold every 4th */
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    const uint64_t recs[] = {0, 1, 2, 9999, 5001, 5002, 4096, 3, 7777};
    for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
        assert_int_equal(replay_file_read(&f, recs[i], &s, err, sizeof(err)), 0);
        assert_int_equal(s.elapsed_ns, recs[i] * 1000000000ull);
        assert_int_equal(s.ndevices, 1);
        assert_int_equal(s.devices[0].index, (int)(recs[i] % 8));
        assert_true(s.devices[0].m[M_POWER].value == (double)recs[i]);
        assert_int_equal(s.devices[0].m[M_TEMP].src, MSRC_NONE); /* not recorded: none */
    }
    assert_int_equal(replay_file_read(&f, N, &s, err, sizeof(err)), -1);
    assert_int_equal(replay_file_find(&f, 1234500000000ll, false), 1234);
    assert_int_equal(replay_file_find(&f, -5, false), 0);
    assert_int_equal(replay_file_find(&f, INT64_MAX, false), N - 1);
    int64_t t = replay_parse_rfc3339("2026-12-02T01:00:00.000Z");
    assert_int_equal(replay_file_find(&f, t, true), 3600);
    uint64_t el = 0;
    assert_true(replay_file_elapsed(&f, 42, &el));
    assert_int_equal(el, 42000000000ull);
    snapshot_free(&s);
    replay_file_close(&f);
    unlink(path);
}

static void test_rfc3339(void **state)
{
    (void)state;
    assert_int_equal(replay_parse_rfc3339("1970-01-01T00:00:01.5Z"), 1500000000ll);
    assert_int_equal(replay_parse_rfc3339("2026-12-02T05:55:43.591Z"), 1796190943591000000ll);
    assert_int_equal(replay_parse_rfc3339("2026-12-02T05:55:43Z"), 1796190943000000000ll);
    assert_int_equal(replay_parse_rfc3339("2026-12-02 05:55:43Z"), -1);
    assert_int_equal(replay_parse_rfc3339("2026-12-02T05:55:43+01:00"), -1);
    assert_int_equal(replay_parse_rfc3339("2826-12-02T05:55:43Z"), -1); /* past int64 ns */
    assert_int_equal(replay_parse_rfc3339(NULL), -1);
}

/* An offset on the command line names the snapshot at it to the
 * nanosecond: 0.403454086 s is not taken for 403454085 ns (the double's
 * rounding), which would give the snapshot before. */
static void test_offsets_exact(void **state)
{
    (void)state;
    char path[] = "/tmp/migmon-replay-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char text[] =
        "{\"schema\":1,\"elapsed_ns\":1000,\"timestamp\":\"2026-12-02T03:12:00.000Z\",\"devices\":[]}\n"
        "{\"schema\":1,\"elapsed_ns\":403455086,\"timestamp\":\"2026-12-02T03:12:00.403Z\",\"devices\":[]}\n"
        "{\"schema\":1,\"elapsed_ns\":503061865,\"timestamp\":\"2026-12-02T03:12:30.000Z\",\"devices\":[]}\n";
    assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
    close(fd);
    void *st;
    char err[512];
    struct backend_opts bo = {.source = path};
    assert_int_equal(replay_backend_ops.open(&st, &bo, err, sizeof(err)), BACKEND_OK);
    struct replay *r = replay_of(st);
    uint64_t rec = 99;
    assert_int_equal(replay_time(r, "--at", "+0.403454086s", false, &rec, err, sizeof(err)), 0);
    assert_int_equal(rec, 1);
    assert_int_equal(replay_time(r, "--at", "+0.503060865s", false, &rec, err, sizeof(err)), 0);
    assert_int_equal(rec, 2);
    assert_int_equal(replay_time(r, "--at", "+0.503060864s", false, &rec, err, sizeof(err)), 0);
    assert_int_equal(rec, 1);
    assert_int_equal(replay_time(r, "--at", "-0", false, &rec, err, sizeof(err)), 0);
    assert_int_equal(rec, 2);
    assert_int_equal(replay_time(r, "--at", "03:12:29", false, &rec, err, sizeof(err)), 0);
    assert_int_equal(rec, 1);
    assert_int_equal(replay_time(r, "--at", "03:12", false, &rec, err, sizeof(err)), 0);
    assert_int_equal(rec, 0);
    /* outside the recording: before its first snapshot, or after its last
     * by more than its mean interval (0.251 s here); --to may pass the end */
    rec = 99;
    assert_int_equal(replay_time(r, "--at", "+5m", false, &rec, err, sizeof(err)), -1);
    assert_int_equal(rec, 99);
    assert_non_null(strstr(err, "--at +5m is after the recording, which runs from "
                                "2026-12-02T03:12:00.000Z to 2026-12-02T03:12:30.000Z "
                                "(+0s to +0.503s): no snapshot then"));
    assert_int_equal(replay_time(r, "--to", "+5m", true, &rec, err, sizeof(err)), 0);
    assert_int_equal(rec, 2);
    assert_int_equal(replay_time(r, "--at", "+0.754s", false, &rec, err, sizeof(err)), 0);
    assert_int_equal(rec, 2);
    assert_int_equal(replay_time(r, "--at", "+0.755s", false, &rec, err, sizeof(err)), -1);
    assert_int_equal(replay_time(r, "--from", "03:11:59", false, &rec, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "--from 03:11:59 (2026-12-02T03:11:59.000Z) is before"));
    assert_int_equal(replay_time(r, "--to", "03:11:59", true, &rec, err, sizeof(err)), -1);
    assert_int_equal(replay_time(r, "--at", "soon", false, &rec, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "is no time"));
    replay_backend_ops.close(st);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_bounded_and_random_access),
        cmocka_unit_test(test_rfc3339),
        cmocka_unit_test(test_offsets_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
