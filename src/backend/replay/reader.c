/*
 * reader.c — random access to a recording's snapshots (reader.h): a
 * snapshot's line found from its segment, delta lines applied to the
 * snapshot before them. The index is built by scan.c.
 */
#include "backend/replay/reader.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/replay/delta.h"
#include "backend/replay/lines.h"

/* The segment rec is in; SIZE_MAX when none holds it. */
static size_t seg_of(const struct replay_file *f, uint64_t rec)
{
    if (f->nseg == 0 || f->seg[0].rec > rec)
        return SIZE_MAX;
    size_t lo = 0, hi = f->nseg;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (f->seg[mid].rec <= rec)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static void swap_buf(char **a, size_t *alen, size_t *acap, char **b, size_t *blen, size_t *bcap)
{
    char *p = *a;
    size_t l = *alen, c = *acap;
    *a = *b;
    *alen = *blen;
    *acap = *bcap;
    *b = p;
    *blen = l;
    *bcap = c;
}

/* Snapshot rec's line into f->line: from where the last one was read when
 * rec comes after it in its segment, else from the segment's start. */
static int locate(struct replay_file *f, uint64_t rec)
{
    if (rec == f->peek_rec && f->peek) { /* read ahead already */
        swap_buf(&f->line, &f->line_len, &f->line_cap, &f->peek, &f->peek_len, &f->peek_cap);
        f->peek_rec = UINT64_MAX;
        return 0;
    }
    size_t k = seg_of(f, rec);
    if (k == SIZE_MAX)
        return -1;
    const struct replay_seg *g = &f->seg[k];
    uint64_t at = g->rec;
    if (f->next_rec != UINT64_MAX && f->next_seg == k && rec >= f->next_rec) {
        at = f->next_rec; /* closer from where we are */
        replay_lines_seek(f, &f->next_pos, g->c_end, g->u_end);
    } else {
        replay_lines_seek(f, &g->pos, g->c_end, g->u_end);
    }
    f->next_rec = UINT64_MAX;
    struct replay_count cnt = replay_count_start(f, true);
    for (;;) {
        bool nl, too_long;
        if (replay_next_line(f, &nl, &too_long, NULL) == 0)
            return -1;
        if (too_long || !replay_counts(f, &cnt, replay_classify(f->line, f->line_len).kind))
            continue;
        if (at == rec)
            break;
        at++;
    }
    f->next_rec = rec + 1;
    f->next_pos = replay_lines_here(f);
    f->next_seg = k;
    return 0;
}

static void state_drop(struct replay_file *f)
{
    json_decref((json_t *)f->state);
    f->state = NULL;
    f->base_valid = false;
    f->state_rec = UINT64_MAX;
}

/*
 * The snapshot rec as a JSON object in f->state: from the one the last
 * read left when rec follows it in its segment, else from the segment's
 * full line; a full line is parsed only when it is rec or a delta line
 * needs it (it waits in f->base). 0, or -1 with err.
 */
static int bring(struct replay_file *f, uint64_t rec, char *why, size_t whylen)
{
    bool have = f->state || f->base_valid;
    if (have && f->state_rec == rec && f->state)
        return 0;
    size_t k = seg_of(f, rec);
    if (k == SIZE_MAX) {
        snprintf(why, whylen, "no full snapshot before it to start from");
        return -1;
    }
    uint64_t from = f->seg[k].rec;
    if (have && f->state_rec != UINT64_MAX && f->state_rec < rec && f->state_rec >= from)
        from = f->state_rec + 1;
    else
        state_drop(f);
    for (uint64_t r = from; r <= rec; r++) {
        if (locate(f, r) != 0) {
            state_drop(f);
            if (f->src.damaged)
                snprintf(why, whylen, "cannot be read: %s", f->src.damage);
            else
                snprintf(why, whylen, "cannot be read again (the file changed?)");
            return -1;
        }
        struct replay_head h = replay_classify(f->line, f->line_len);
        if (h.kind == RK_FULL) {
            json_decref((json_t *)f->state);
            f->state = NULL;
            f->base_valid = false;
            if (r == rec) {
                if (!(f->state = replay_parse_load(f->line, f->line_len, why, whylen)))
                    goto broken;
            } else {
                swap_buf(&f->base, &f->base_len, &f->base_cap, &f->line, &f->line_len,
                         &f->line_cap);
                f->base_valid = true;
            }
        } else {
            if (!f->state && f->base_valid) {
                f->base_valid = false;
                if (!(f->state = replay_parse_load(f->base, f->base_len, why, whylen))) {
                    snprintf(why, whylen, "the full snapshot it changes could not be read");
                    goto broken;
                }
            }
            if (!f->state) {
                snprintf(why, whylen, "the snapshot it changes could not be read");
                goto broken;
            }
            json_t *d = replay_parse_load(f->line, f->line_len, why, whylen);
            if (!d) {
                if (r != rec)
                    snprintf(why, whylen, "a change before it (snapshot %llu) is not JSON",
                             (unsigned long long)r + 1);
                goto broken;
            }
            replay_delta_apply((json_t *)f->state, d);
            json_decref(d);
        }
        f->state_rec = r;
    }
    return 0;
broken:
    state_drop(f);
    return -1;
}

int replay_file_read(struct replay_file *f, uint64_t rec, struct snapshot *s, char *err,
                     size_t errlen)
{
    if (rec >= f->count || f->src.fd < 0) {
        snprintf(err, errlen, "no snapshot %llu", (unsigned long long)rec + 1);
        return -1;
    }
    char why[256] = "";
    if (bring(f, rec, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "%s: snapshot %llu%s%s", f->path_shown,
                 (unsigned long long)rec + 1, strncmp(why, "cannot", 6) == 0 ? " " : ": ", why);
        return -1;
    }
    int rc = replay_parse_json((json_t *)f->state, s, &f->strs, why, sizeof(why));
    if (rc == REPLAY_LINE_SNAPSHOT)
        return 0;
    snprintf(err, errlen, "%s: snapshot %llu: %s", f->path_shown, (unsigned long long)rec + 1,
             why);
    return -1;
}

uint64_t replay_file_find(struct replay_file *f, int64_t t, bool wall)
{
    if (f->nseg == 0)
        return 0;
    size_t lo = 0, hi = f->nseg; /* the last segment at or before t */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        int64_t v = wall ? f->seg[mid].wall : (int64_t)f->seg[mid].elapsed;
        if (v <= t)
            lo = mid;
        else
            hi = mid;
    }
    const struct replay_seg *g = &f->seg[lo];
    uint64_t rec = g->rec, best = rec;
    f->next_rec = UINT64_MAX; /* the sequential position is lost */
    replay_lines_seek(f, &g->pos, g->c_end, g->u_end);
    struct replay_count cnt = replay_count_start(f, true);
    while (rec < f->count) {
        bool nl, too_long;
        if (replay_next_line(f, &nl, &too_long, NULL) == 0)
            break;
        if (too_long)
            continue;
        struct replay_head h = replay_classify(f->line, f->line_len);
        if (!replay_counts(f, &cnt, h.kind))
            continue;
        int64_t v = wall ? h.wall : (int64_t)h.elapsed;
        if (v > t)
            break;
        best = rec++;
    }
    return best;
}

bool replay_file_elapsed(struct replay_file *f, uint64_t rec, uint64_t *elapsed)
{
    if (rec >= f->count || f->src.fd < 0)
        return false;
    if (rec == f->peek_rec) {
        *elapsed = replay_classify(f->peek, f->peek_len).elapsed;
        return true;
    }
    /* the line read last (rec's, when it was just read) is kept */
    swap_buf(&f->line, &f->line_len, &f->line_cap, &f->peek, &f->peek_len, &f->peek_cap);
    f->line_len = 0;
    f->peek_rec = UINT64_MAX;
    bool ok = locate(f, rec) == 0;
    if (ok)
        *elapsed = replay_classify(f->line, f->line_len).elapsed;
    /* rec's line becomes the read-ahead one */
    swap_buf(&f->line, &f->line_len, &f->line_cap, &f->peek, &f->peek_len, &f->peek_cap);
    f->peek_rec = ok ? rec : UINT64_MAX;
    return ok;
}

void replay_file_close(struct replay_file *f)
{
    if (f->src.fd >= 0 || f->src.in || f->src.zd || f->src.zs)
        rsrc_close(&f->src);
    json_decref((json_t *)f->state);
    free(f->chunk);
    free(f->line);
    free(f->peek);
    free(f->base);
    free(f->seg);
    replay_strs_free(&f->strs);
    memset(f, 0, sizeof(*f));
    f->src.fd = -1;
}
