/*
 * backend.c — the replay backend (replay.h): the collector's GPU source
 * when a recording is replayed. The sampling thread calls sample; the front
 * end seeks and asks where it is; one mutex guards the file and the place.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/replay/reader.h"
#include "backend/replay/replay.h"
#include "core/text.h"

struct replay {
    pthread_mutex_t mu;
    struct replay_file f;
    uint64_t next;  /* what the next sample gives */
    uint64_t shown; /* what the last one gave */
    uint64_t from, to;
    uint64_t from_elapsed, to_elapsed; /* read once: a seek in gzip is slow */
    uint64_t shown_elapsed;
    int64_t shown_wall;
    uint64_t unreadable; /* snapshots that failed to parse when read */
    char skip_why[512];  /* why the first of them could not be read */
    bool failed;         /* the last sample gave no snapshot: err says why */
    char err[512];
};

static int rp_open(void **state, const struct backend_opts *o, char *err, size_t errlen)
{
    *state = NULL;
    struct replay *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return BACKEND_ERR_NOMEM;
    }
    if (replay_file_open(&r->f, o->source ? o->source : "", err, errlen) != 0) {
        free(r);
        return BACKEND_ERR_BAD_PATH; /* the caller exits with status 2 */
    }
    pthread_mutex_init(&r->mu, NULL);
    r->to = r->f.count - 1;
    r->from_elapsed = r->f.first_elapsed;
    r->to_elapsed = r->f.last_elapsed;
    *state = r;
    return BACKEND_OK;
}

static int rp_sample(void *state, struct snapshot *s, uint64_t deadline_ns)
{
    (void)deadline_ns;
    struct replay *r = state;
    pthread_mutex_lock(&r->mu);
    int rc = -1;
    /* a line that fails to parse after all is skipped (counted): the next */
    for (uint64_t rec = r->next; rec <= r->to; rec++) {
        if (replay_file_read(&r->f, rec, s, r->err, sizeof(r->err)) == 0) {
            r->shown = rec;
            r->shown_elapsed = s->elapsed_ns;
            r->shown_wall = s->wall_ns;
            r->next = rec < r->to ? rec + 1 : rec;
            rc = 0;
            break;
        }
        if (r->unreadable++ == 0)
            snprintf(r->skip_why, sizeof(r->skip_why), "%s", r->err);
        r->f.garbage++;
    }
    r->failed = rc != 0;
    pthread_mutex_unlock(&r->mu);
    return rc;
}

static void rp_close(void *state)
{
    struct replay *r = state;
    if (!r)
        return;
    replay_file_close(&r->f);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

static const char *rp_last_error(void *state)
{
    return ((struct replay *)state)->err;
}

const struct backend_ops replay_backend_ops = {
    .name = "replay",
    .whole = true,
    .open = rp_open,
    .sample = rp_sample,
    .close = rp_close,
    .last_error = rp_last_error,
};

void replay_seek(struct replay *r, uint64_t rec)
{
    pthread_mutex_lock(&r->mu);
    r->next = rec < r->from ? r->from : rec > r->to ? r->to : rec;
    pthread_mutex_unlock(&r->mu);
}

void replay_set_range(struct replay *r, uint64_t from, uint64_t to)
{
    pthread_mutex_lock(&r->mu);
    r->to = to < r->f.count ? to : r->f.count - 1;
    r->from = from <= r->to ? from : r->to;
    r->next = r->from;
    replay_file_elapsed(&r->f, r->from, &r->from_elapsed);
    replay_file_elapsed(&r->f, r->to, &r->to_elapsed);
    pthread_mutex_unlock(&r->mu);
}

void replay_where(struct replay *r, struct replay_where *w)
{
    pthread_mutex_lock(&r->mu);
    memset(w, 0, sizeof(*w));
    w->shown = r->shown;
    w->from = r->from;
    w->to = r->to;
    w->count = r->f.count;
    w->shown_elapsed = r->shown_elapsed;
    w->shown_wall = r->shown_wall;
    w->garbage = r->f.garbage;
    w->damaged = replay_file_damaged(&r->f);
    w->damage = r->f.src.damage;
    w->cut_bytes = r->f.cut_bytes;
    w->name = r->f.path_shown;
    w->stopped = r->f.stopped;
    w->failed = r->failed ? r->err : NULL;
    w->skip_why = r->skip_why;
    w->from_elapsed = r->from_elapsed;
    w->to_elapsed = r->to_elapsed;
    w->has_next = r->shown < r->to && replay_file_elapsed(&r->f, r->shown + 1, &w->next_elapsed);
    pthread_mutex_unlock(&r->mu);
}

/* a + b within int64 */
static int64_t sat_add(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

uint64_t replay_find_from(struct replay *r, uint64_t elapsed, int64_t d)
{
    int64_t t = sat_add(elapsed > INT64_MAX ? INT64_MAX : (int64_t)elapsed, d);
    return replay_find(r, t);
}

uint64_t replay_find(struct replay *r, int64_t t)
{
    pthread_mutex_lock(&r->mu);
    uint64_t rec = replay_file_find(&r->f, t, false);
    rec = rec < r->from ? r->from : rec > r->to ? r->to : rec;
    pthread_mutex_unlock(&r->mu);
    return rec;
}

/* "90", "90s", "5m", "1h", "250ms" as ns; -1 when not such a duration. */
static int64_t duration_ns(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0 || v > 1e9)
        return -1;
    double mul = 1e9;
    if (!strcmp(end, "ms"))
        mul = 1e6;
    else if (!strcmp(end, "m") || !strcmp(end, "min"))
        mul = 60e9;
    else if (!strcmp(end, "h"))
        mul = 3600e9;
    else if (*end && strcmp(end, "s"))
        return -1;
    return llround(v * mul); /* "+0.403454086s" is 403454086 ns, not one short */
}

/* ns since the epoch as 2026-12-02T03:12:00.000Z */
static void wall_str(char *out, size_t cap, int64_t ns)
{
    time_t t = (time_t)(ns / 1000000000);
    struct tm tm;
    if (ns < 0 || !gmtime_r(&t, &tm)) {
        snprintf(out, cap, "an unknown time");
        return;
    }
    char b[32];
    strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, cap, "%s.%03dZ", b, (int)(ns % 1000000000 / 1000000));
}

/* Whether t (wall clock ns, or elapsed ns) lies within the recording: from
 * its first snapshot to its last one plus the recording's mean interval
 * (a snapshot stands for the time until the next would have been taken);
 * or, for the end of the part replayed (end), anywhere after its start.
 * err says which side and the recording's span otherwise. */
static bool within(const struct replay_file *f, const char *opt, const char *spec, int64_t t,
                   bool wall, bool end, char *err, size_t errlen)
{
    int64_t first = wall ? f->first_wall : (int64_t)f->first_elapsed;
    int64_t last = wall ? f->last_wall : (int64_t)f->last_elapsed;
    int64_t slack = f->count > 1 ? (int64_t)((f->last_elapsed - f->first_elapsed) / (f->count - 1))
                                 : 0;
    bool before = t < first, after = !end && t > sat_add(last, slack);
    if (!before && !after)
        return true;
    char a[40], b[40], taken[48] = "";
    wall_str(a, sizeof(a), f->first_wall);
    wall_str(b, sizeof(b), f->last_wall);
    if (wall && !strchr(spec, 'T')) { /* what a bare 03:12 was taken as: that day's */
        char w[40];
        wall_str(w, sizeof(w), t);
        snprintf(taken, sizeof(taken), " (%s)", w);
    }
    snprintf(err, errlen,
             "%s %.64s%s is %s the recording, which runs from %s to %s (+0s to +%.3fs): no "
             "snapshot then",
             opt, spec, taken, before ? "before" : "after", a, b,
             (double)(f->last_elapsed - f->first_elapsed) / 1e9);
    return false;
}

int replay_time(struct replay *r, const char *opt, const char *spec, bool end, uint64_t *rec,
                char *err, size_t errlen)
{
    pthread_mutex_lock(&r->mu);
    struct replay_file *f = &r->f;
    int rc = 0;
    bool wall = false;
    int64_t t = -1;
    if (spec[0] == '+' || spec[0] == '-') {
        int64_t d = duration_ns(spec + 1);
        if (d >= 0)
            t = spec[0] == '+' ? sat_add((int64_t)f->first_elapsed, d)
                               : sat_add((int64_t)f->last_elapsed, -d);
        else
            rc = -1;
    } else {
        wall = true;
        t = replay_parse_rfc3339(spec);
        int h, m, sec = 0, n = 0;
        if (t < 0 && (sscanf(spec, "%d:%d:%d%n", &h, &m, &sec, &n) == 3 ||
                      sscanf(spec, "%d:%d%n", &h, &m, &n) == 2) &&
            spec[n] == '\0' && h >= 0 && h < 24 && m >= 0 && m < 60 && sec >= 0 && sec < 61) {
            int64_t day = f->first_wall - f->first_wall % (86400ll * 1000000000ll);
            t = sat_add(day, ((int64_t)h * 3600 + m * 60 + sec) * 1000000000ll);
        }
        if (t < 0)
            rc = -1;
    }
    if (rc != 0) {
        snprintf(err, errlen,
                 "%s '%.64s' is no time: +90s, +5m, -30s (from the end), 03:12, 03:12:30 or "
                 "2026-12-02T03:12:00Z (UTC)",
                 opt, spec);
    } else if (wall && f->first_wall < 0) {
        snprintf(err, errlen, "%s %.64s: the recording's snapshots have no timestamp; give the "
                 "time from its start (+90s) or end (-30s)", opt, spec);
        rc = -1;
    } else if (!within(f, opt, spec, t, wall, end, err, errlen)) {
        rc = -1;
    } else {
        *rec = replay_file_find(f, t, wall);
    }
    if (rc != 0)
        text_clean(err, errlen); /* it quotes what was typed */
    pthread_mutex_unlock(&r->mu);
    return rc;
}
