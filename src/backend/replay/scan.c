/*
 * scan.c — a recording opened and indexed (reader.h): the seek index's
 * runs taken as they are, everything else read once.
 */
#include "backend/replay/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/replay/lines.h"
#include "backend/replay/rindex.h"
#include "core/text.h"

#define CHUNK (64u * 1024u)

/* The file at path opened once for the whole life of the reader: a pipe, a
 * FIFO or a device would give its bytes to the index scan and none to the
 * reads after it (or, a FIFO, block a second open), and a directory has no
 * lines. O_NONBLOCK: a FIFO's open does not wait for a writer. */
static int open_regular(const struct replay_file *f, const char *path, uint64_t *size, char *err,
                        size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: %s", f->path_shown, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen,
                 S_ISDIR(st.st_mode) ? "%s is a directory, not a recording"
                                     : "%s is not a regular file (a pipe, FIFO, socket or device): "
                                       "a recording is read twice, to index it and to show it; "
                                       "save it to a file first",
                 f->path_shown);
        close(fd);
        return -1;
    }
    *size = (uint64_t)st.st_size;
    return fd;
}

/* A segment more; when the index is full, every second one goes (each
 * taken into the one before it) and the stride of the scan doubles. */
static void seg_add(struct replay_file *f, const struct replay_seg *g, bool scanned)
{
    if (f->nseg == REPLAY_INDEX_MAX) {
        for (size_t i = 0; i < f->nseg / 2; i++) {
            struct replay_seg m = f->seg[2 * i];
            m.c_end = f->seg[2 * i + 1].c_end;
            m.u_end = f->seg[2 * i + 1].u_end;
            f->seg[i] = m;
        }
        f->nseg /= 2;
        f->stride *= 2;
        if (scanned && (f->full_seen - 1) % f->stride != 0) {
            /* this full line is no longer a segment's start: the last one
             * reaches over it */
            f->seg[f->nseg - 1].c_end = g->c_end;
            f->seg[f->nseg - 1].u_end = g->u_end;
            return;
        }
    }
    f->seg[f->nseg++] = *g;
}

/* A snapshot line more, counted with its times. */
static void count_line(struct replay_file *f, uint64_t elapsed, int64_t wall)
{
    if (f->count == 0) {
        f->first_elapsed = elapsed;
        f->first_wall = wall;
    }
    f->last_elapsed = elapsed;
    f->last_wall = wall;
    f->count++;
}

/* A run of the seek index: one segment, its snapshots counted unread. */
static void take_run(struct replay_file *f, const struct rindex_run *r, uint64_t u)
{
    if (r->count == 0)
        return;
    struct replay_seg g = {.pos = {.c = r->c_off, .fu = u, .u = u},
                           .rec = f->count,
                           .elapsed = r->first_elapsed,
                           .wall = r->first_wall,
                           .c_end = r->c_end,
                           .u_end = u + r->content};
    seg_add(f, &g, false);
    if (f->count == 0) {
        f->first_elapsed = r->first_elapsed;
        f->first_wall = r->first_wall;
    }
    f->last_elapsed = r->last_elapsed;
    f->last_wall = r->last_wall;
    f->count += r->count;
    f->indexed += r->count;
}

/* The bytes from c_from to c_to read line by line, their decompressed
 * offsets from *u on. 0, or -2 with err for a snapshot of another schema. */
static int scan_region(struct replay_file *f, uint64_t c_from, uint64_t c_to, uint64_t *u,
                       uint64_t *lineno, char *err, size_t errlen)
{
    struct replay_pos from = {.c = c_from, .fu = *u, .u = *u};
    f->chunk_c = UINT64_MAX; /* decoding starts afresh */
    replay_lines_seek(f, &from, c_to, UINT64_MAX);
    int rc = 0;
    struct replay_count cnt = replay_count_start(f, false);
    for (;;) {
        bool nl, too_long;
        struct replay_pos at;
        int got = replay_next_line(f, &nl, &too_long, &at);
        if (got == 0 || f->stopped[0])
            break; /* the end, or a bound: a line it cut is not one */
        ++*lineno;
        if (f->line_len == 0 && !too_long && nl)
            continue; /* an empty line */
        struct replay_head h = too_long ? (struct replay_head){.kind = RK_GARBAGE}
                                        : replay_classify(f->line, f->line_len);
        if (!nl && h.kind != RK_OTHER) {
            /* the last line, cut (a recorder killed mid-write): kept only
             * when it parses whole */
            json_t *j = json_loadb(f->line, f->line_len, 0, NULL);
            bool whole = j != NULL;
            json_decref(j);
            if (!whole) {
                f->cut_bytes = f->line_len;
                break;
            }
        }
        if (h.kind == RK_SCHEMA) {
            snprintf(err, errlen,
                     "%s line %llu: a snapshot of schema %ld; this mig-gpu-mon reads schema %d "
                     "and %d recordings",
                     f->path_shown, (unsigned long long)*lineno, h.schema, REPLAY_SCHEMA,
                     REPLAY_SCHEMA_MAX);
            rc = -2;
            break;
        }
        if (h.kind == RK_DELTA && !replay_counts(f, &cnt, h.kind))
            h.kind = RK_GARBAGE; /* a change of nothing in the file */
        else
            replay_counts(f, &cnt, h.kind);
        if (replay_kind_snapshot(h.kind)) {
            if (h.kind == RK_FULL && f->full_seen++ % f->stride == 0) {
                struct replay_seg g = {.pos = at, .rec = f->count, .elapsed = h.elapsed,
                                       .wall = h.wall, .c_end = c_to, .u_end = UINT64_MAX};
                seg_add(f, &g, true);
            }
            count_line(f, h.elapsed, h.wall);
            f->gap_from = replay_lines_here(f).u;
        } else if (h.kind == RK_OTHER) {
            f->others++;
        } else if (f->garbage++ == 0) {
            f->first_garbage_line = *lineno;
        }
    }
    *u = replay_lines_here(f).u;
    return rc;
}

int replay_file_open(struct replay_file *f, const char *path, char *err, size_t errlen)
{
    memset(f, 0, sizeof(*f));
    f->src.fd = -1;
    text_copy(f->path_shown, sizeof(f->path_shown), path);
    text_clean(f->path_shown, sizeof(f->path_shown));
    f->peek_rec = f->state_rec = f->next_rec = UINT64_MAX;
    f->stride = 1;
    f->u_stop = UINT64_MAX;
    uint64_t size = 0;
    int fd = open_regular(f, path, &size, err, errlen);
    if (fd < 0)
        return -1;
    int rc = -1;
    if (rsrc_open(&f->src, fd, size, err, errlen) != 0)
        return -1; /* fd closed */
    f->compressed = f->src.kind != RSRC_PLAIN;
    f->chunk = malloc(CHUNK);
    f->seg = malloc(REPLAY_INDEX_MAX * sizeof(*f->seg));
    if (!f->chunk || !f->seg) {
        snprintf(err, errlen, "%s: out of memory", f->path_shown);
        goto fail;
    }
    struct rindex_run *runs = NULL;
    size_t nruns = 0;
    if (f->compressed)
        rindex_load(fd, size, f->src.kind == RSRC_GZIP, &runs, &nruns);
    f->scanning = true;
    rc = 0;
    uint64_t c = 0, u = 0, lineno = 0;
    for (size_t i = 0; i <= nruns && !f->stopped[0]; i++) {
        uint64_t to = i < nruns ? runs[i].c_off : size;
        if (to > c && (rc = scan_region(f, c, to, &u, &lineno, err, errlen)) != 0)
            break;
        if (i < nruns) {
            take_run(f, &runs[i], u);
            u += runs[i].content;
            f->gap_from = u;
            c = runs[i].next;
        }
    }
    free(runs);
    f->scanning = false;
    if (rc != 0)
        goto fail;
    rc = -1;
    if (f->count == 0 && f->stopped[0]) {
        snprintf(err, errlen, "%s: %s", f->path_shown, f->stopped);
        goto fail;
    }
    if (f->count == 0 && f->src.damaged && !f->garbage) {
        snprintf(err, errlen, "%s: cannot be read (%s)", f->path_shown, f->src.damage);
        goto fail;
    }
    if (f->count == 0) {
        snprintf(err, errlen, "%s: no snapshot in it (%llu lines that are not one)", f->path_shown,
                 (unsigned long long)(f->garbage + f->others));
        goto fail;
    }
    /* the reads after the scan go no further than it did */
    if (f->stopped[0])
        for (size_t i = 0; i < f->nseg; i++)
            if (f->seg[i].u_end > u)
                f->seg[i].u_end = u;
    f->chunk_c = UINT64_MAX;
    f->chunk_off = f->chunk_len = f->chunk_pos = 0;
    return 0;
fail:
    replay_file_close(f);
    return rc;
}
