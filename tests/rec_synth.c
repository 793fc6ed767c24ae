/*
 * rec_synth — a long recording made quickly, for the tests and the
 * benchmark (tests/e2e/test_replay_compress.sh, bench/bench_record.sh):
 * the snapshots of a recording over and over, STEP seconds apart, written
 * as the recorder writes them (src/app/record.c: a full line at each seek
 * point, else what changed; src/app/recout.c: compressed by OUT's name, flushed
 * after each snapshot as at -i 1000, a frame about a minute).
 *
 *   rec_synth IN.jsonl OUT N [STEP_S]
 *
 * OUT is written by its name: .zst zstd, .gz gzip, else plain; schema 2
 * when compressed (the recorder's default), 1 when plain.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/recout.h"
#include "backend/replay/reader.h"
#include "export/json.h"
#include "export/json_delta.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: rec_synth IN.jsonl OUT N [STEP_S]\n");
        return 2;
    }
    long count = atol(argv[3]);
    double step = argc > 4 ? atof(argv[4]) : 1.0;
    struct replay_file f;
    char err[1024];
    if (replay_file_open(&f, argv[1], err, sizeof(err)) != 0) {
        fprintf(stderr, "rec_synth: %s\n", err);
        return 1;
    }
    size_t n = f.count < 600 ? (size_t)f.count : 600;
    struct snapshot *s = calloc(n, sizeof(*s));
    size_t have = 0;
    for (size_t i = 0; s && i < n; i++)
        if (replay_file_read(&f, i, &s[have], err, sizeof(err)) == 0)
            have++;
    if (!have) {
        fprintf(stderr, "rec_synth: %s: no snapshot to repeat\n", argv[1]);
        return 1;
    }
    char other[16];
    enum rec_compress k = recout_by_name(argv[2], other, sizeof(other));
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (k == REC_PLAIN ? O_APPEND : 0),
                  0644);
    struct recout *o;
    if (fd < 0 || recout_open(&o, k, fd, err, sizeof(err)) != 0) {
        fprintf(stderr, "rec_synth: %s: cannot be written\n", argv[2]);
        return 1;
    }
    uint64_t el0 = s[0].elapsed_ns;
    int64_t wall0 = s[0].wall_ns;
    const struct snapshot *prev = NULL;
    for (long i = 0; i < count; i++) {
        struct snapshot *c = &s[(size_t)i % have];
        c->elapsed_ns = el0 + (uint64_t)((double)i * step * 1e9);
        c->wall_ns = wall0 + (int64_t)((double)i * step * 1e9);
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        bool key = recout_key_due(o, c->elapsed_ns);
        if (k != REC_PLAIN)
            json_delta_write(m, c, key ? NULL : prev);
        else
            json_write_snapshot(m, c, false);
        fclose(m);
        struct recout_meta meta = {.snapshot = true, .elapsed = c->elapsed_ns, .wall = c->wall_ns};
        bool cut;
        int rc = recout_put(o, fd, buf, len, &meta, key, &cut);
        free(buf);
        if (rc == 0)
            rc = recout_flush(o, fd, &cut);
        if (rc != 0) {
            fprintf(stderr, "rec_synth: %s: write failed\n", argv[2]);
            return 1;
        }
        prev = c;
    }
    int rc = recout_finish(o, fd);
    recout_free(o);
    close(fd);
    for (size_t i = 0; i < have; i++)
        snapshot_free(&s[i]);
    free(s);
    replay_file_close(&f);
    return rc != 0;
}
