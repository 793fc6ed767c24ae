/*
 * fuzz_replay_check.h — what the recording reader (src/backend/replay/) promises
 * for any file, checked the same way by fuzz/fuzz_replay.c and by the
 * corpus regression test (tests/unit/test_fuzz_corpus.c): it opens or
 * refuses the input with a message, never crashes; every snapshot it
 * indexed reads back (or fails with a message) into a snapshot whose
 * counts, positions and strings are within bounds; a time lookup gives a
 * snapshot of the file. The input is the file's bytes (plain or gzip).
 */
#ifndef MIGMON_FUZZ_REPLAY_CHECK_H
#define MIGMON_FUZZ_REPLAY_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend/replay/reader.h"

static inline const char *fuzz_replay_snapshot(const struct snapshot *s)
{
    if (s->ndevices > 1024 || s->nprocs > 65536 || s->nevents > 64)
        return "replay: counts out of bounds";
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        if (d->parent_pos >= (int)i || (d->kind == DEV_GPU && d->parent_pos != -1) ||
            (d->parent_pos >= 0 && s->devices[d->parent_pos].kind != DEV_GPU))
            return "replay: a parent that is not a GPU before its device";
        if (d->proc_first + d->nprocs > s->nprocs)
            return "replay: a device's processes beyond the list";
        if (memchr(d->uuid, 0, sizeof(d->uuid)) == NULL || memchr(d->name, 0, sizeof(d->name)) == NULL)
            return "replay: a string not terminated";
        for (int k = 0; k < M_COUNT; k++)
            if (d->m[k].src != MSRC_NONE && !isfinite(d->m[k].value))
                return "replay: a metric that is not finite";
    }
    for (size_t i = 0; i < s->nevents; i++)
        if (s->events[i].device_pos >= (int)s->ndevices)
            return "replay: an event on a device not in the snapshot";
    if (s->host.ncores > 4096)
        return "replay: too many cores";
    return NULL;
}

static inline const char *fuzz_check_replay(const uint8_t *data, size_t size)
{
    int fd = memfd_create("replay", 0);
    if (fd < 0)
        return NULL; /* no memfd here: nothing to check */
    const char *why = NULL;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return NULL;
    }
    char path[64], err[1024] = "";
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    struct replay_file f;
    int rc = replay_file_open(&f, path, err, sizeof(err));
    if (rc != 0) {
        if (!err[0])
            why = "replay: refused without a message";
        close(fd);
        return why;
    }
    if (f.count == 0 || f.nseg == 0 || f.nseg > REPLAY_INDEX_MAX)
        why = "replay: an open file without an index";
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    for (uint64_t r = 0; !why && r < f.count && r < 64; r++) {
        err[0] = '\0';
        if (replay_file_read(&f, r, &s, err, sizeof(err)) != 0) {
            if (!err[0])
                why = "replay: a read failed without a message";
            continue;
        }
        why = fuzz_replay_snapshot(&s);
        uint64_t el; /* the next one read ahead, as the replay does */
        if (r % 2 == 0 && r + 1 < f.count && !replay_file_elapsed(&f, r + 1, &el))
            why = "replay: an indexed snapshot that cannot be read ahead";
    }
    if (!why && f.count > 1 && replay_file_read(&f, 0, &s, err, sizeof(err)) == 0)
        why = fuzz_replay_snapshot(&s); /* back to the start */
    uint64_t at = replay_file_find(&f, (int64_t)(f.first_elapsed + f.last_elapsed) / 2, false);
    if (!why && at >= f.count)
        why = "replay: a time found outside the file";
    snapshot_free(&s);
    replay_file_close(&f);
    close(fd);
    return why;
}

#endif
