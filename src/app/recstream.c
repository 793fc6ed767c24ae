/*
 * recstream.c — a recording through a stdio stream (recstream.h), with
 * glibc's fopencookie: the stream's writes are gathered into lines, each
 * line handed to recout with its times (read from its head, as the
 * recorder lays it out: {"schema":N,…,"elapsed_ns":N,"timestamp":"…"}).
 */
#include "app/recstream.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"

struct rs {
    int fd;
    struct recout *o;
    uint64_t interval_ns;
    char *line;
    size_t len, cap;
    int err; /* the first failure: nothing is written after it */
};

/* The number after key in the line's first bytes, or -1. */
static int64_t head_num(const char *l, size_t n, const char *key)
{
    size_t look = n < 256 ? n : 256, k = strlen(key);
    const char *p = memmem(l, look, key, k);
    if (!p)
        return -1;
    return strtoll(p + k, NULL, 10);
}

/* "2026-12-02T05:55:43.591Z" in the line's head as ns, or -1. */
static int64_t head_wall(const char *l, size_t n)
{
    size_t look = n < 256 ? n : 256;
    const char *p = memmem(l, look, "\"timestamp\":\"", 13);
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    int ms = 0;
    if (!p || sscanf(p + 13, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                     &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    return t == (time_t)-1 ? -1 : (int64_t)t * 1000000000 + (int64_t)ms * 1000000;
}

/* One whole line (with its newline) to the recording. */
static int put_line(struct rs *r, const char *l, size_t n)
{
    struct recout_meta m = {.snapshot = n > 10 && memcmp(l, "{\"schema\":", 10) == 0};
    int64_t el = m.snapshot ? head_num(l, n, "\"elapsed_ns\":") : -1;
    m.snapshot = el >= 0;
    m.elapsed = el >= 0 ? (uint64_t)el : 0;
    m.wall = m.snapshot ? head_wall(l, n) : -1;
    bool cut;
    int rc = recout_put(r->o, r->fd, l, n, &m, m.snapshot && recout_key_due(r->o, m.elapsed), &cut);
    uint64_t by = recout_flush_by(r->o);
    if (rc == 0 && by && clock_mono_ns() + r->interval_ns >= by)
        rc = recout_flush(r->o, r->fd, &cut);
    return rc;
}

static ssize_t rs_write(void *c, const char *buf, size_t size)
{
    struct rs *r = c;
    if (r->err) {
        errno = r->err;
        return -1;
    }
    for (size_t i = 0; i < size;) {
        const char *nl = memchr(buf + i, '\n', size - i);
        size_t take = nl ? (size_t)(nl - (buf + i)) + 1 : size - i;
        if (r->len + take > r->cap) {
            size_t cap = r->cap ? r->cap : 65536;
            while (cap < r->len + take)
                cap *= 2;
            char *p = realloc(r->line, cap);
            if (!p) {
                r->err = ENOMEM;
                errno = ENOMEM;
                return -1;
            }
            r->line = p;
            r->cap = cap;
        }
        memcpy(r->line + r->len, buf + i, take);
        r->len += take;
        i += take;
        if (nl) {
            int rc = put_line(r, r->line, r->len);
            r->len = 0;
            if (rc != 0) {
                r->err = -rc;
                recout_abandon(r->o, r->fd);
                errno = r->err;
                return -1;
            }
        }
    }
    return (ssize_t)size;
}

static int rs_close(void *c)
{
    struct rs *r = c;
    int rc = r->err ? -r->err : 0;
    if (rc == 0 && r->len) /* a last line without its newline */
        rc = put_line(r, r->line, r->len);
    if (rc == 0)
        rc = recout_finish(r->o, r->fd);
    else if (!r->err)
        recout_abandon(r->o, r->fd);
    recout_free(r->o);
    if (close(r->fd) != 0 && rc == 0)
        rc = -errno;
    free(r->line);
    free(r);
    if (rc != 0) {
        errno = -rc;
        return -1;
    }
    return 0;
}

FILE *recstream_open(int fd, enum rec_compress k, uint64_t interval_ns, char *err, size_t errlen)
{
    struct rs *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    r->fd = fd;
    r->interval_ns = interval_ns;
    if (recout_open(&r->o, k, fd, err, errlen) != 0) {
        free(r);
        return NULL;
    }
    cookie_io_functions_t io = {.write = rs_write, .close = rs_close};
    FILE *f = fopencookie(r, "w", io);
    if (!f) {
        snprintf(err, errlen, "%s", strerror(errno));
        recout_free(r->o);
        free(r);
    }
    return f;
}
