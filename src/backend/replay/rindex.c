/*
 * rindex.c — the seek index read back (rindex.h).
 */
#include "backend/replay/rindex.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/recindex.h"

/* How far from the end the last entry is looked for: after it can come
 * only the frame a killed writer left open, about a minute. */
#define LAST_BACK (64ull << 20)

/* An entry's claims are believable: a line is at least 16 bytes, and the
 * content is within the ratio of its compressed length. */
static bool believable(const struct recindex *e)
{
    return e->content / 16 >= e->count &&
           e->content <= (uint64_t)RINDEX_RATIO_MAX * e->frame_len + (16ull << 20) &&
           e->first_elapsed <= e->last_elapsed;
}

static struct rindex_run run_of(const struct recindex *e, bool gzip)
{
    return (struct rindex_run){.c_off = e->frame_off,
                               .c_end = e->self_off,
                               .next = e->self_off + recindex_len(gzip),
                               .content = e->content,
                               .count = e->count,
                               .first_elapsed = e->first_elapsed,
                               .last_elapsed = e->last_elapsed,
                               .first_wall = e->first_wall,
                               .last_wall = e->last_wall};
}

/* Runs r[0..n) newest first: adjacent ones that follow each other merged
 * in pairs, to make room. */
static size_t squeeze(struct rindex_run *r, size_t n)
{
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && r[i + 1].next == r[i].c_off) { /* r[i + 1] comes just before r[i] */
            struct rindex_run m = r[i + 1];
            m.c_end = r[i].c_end;
            m.next = r[i].next;
            m.content += r[i].content;
            m.count += r[i].count;
            m.last_elapsed = r[i].last_elapsed;
            m.last_wall = r[i].last_wall;
            r[out++] = m;
            i++;
        } else {
            r[out++] = r[i];
        }
    }
    return out;
}

void rindex_load(int fd, uint64_t size, bool gzip, struct rindex_run **runs, size_t *n)
{
    *runs = NULL;
    *n = 0;
    struct recindex e;
    if (!recindex_find_last(fd, size, LAST_BACK, gzip, &e) || !believable(&e))
        return;
    struct rindex_run *r = malloc(RINDEX_RUNS_MAX * sizeof(*r));
    if (!r)
        return;
    size_t k = 0;
    r[k++] = run_of(&e, gzip);
    unsigned char b[RECINDEX_MAX_LEN];
    size_t len = recindex_len(gzip);
    while (e.prev_off != RECINDEX_NONE) {
        struct recindex p;
        if (pread(fd, b, len, (off_t)e.prev_off) != (ssize_t)len ||
            !recindex_decode(b, len, e.prev_off, gzip, &p) || !believable(&p))
            break; /* damaged: what comes before is scanned */
        if (k == RINDEX_RUNS_MAX && (k = squeeze(r, k)) == RINDEX_RUNS_MAX)
            break;
        r[k++] = run_of(&p, gzip);
        e = p;
    }
    /* file order */
    for (size_t i = 0; i < k / 2; i++) {
        struct rindex_run t = r[i];
        r[i] = r[k - 1 - i];
        r[k - 1 - i] = t;
    }
    *runs = r;
    *n = k;
}
