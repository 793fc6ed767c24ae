/*
 * lines.c — a recording's lines (lines.h): chunks from the source, a line
 * at a time, the bounds of the scan (reader.h), each line's kind.
 */
#include "backend/replay/lines.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK (64u * 1024u)

static uint64_t tell(const struct replay_file *f)
{
    return f->chunk_off + f->chunk_pos;
}

/* Whether the next chunk would pass a bound (reader.h). While the index is
 * built: a run of REPLAY_GAP_MAX bytes without a snapshot line, or content
 * over the ratio to the compressed bytes it came from; said in f->stopped,
 * and the scan ends there. Always: the end of the segment read. */
static bool past_bound(struct replay_file *f)
{
    uint64_t at = f->chunk_off;
    if (at >= f->u_stop)
        return true;
    if (!f->scanning)
        return false;
    if (f->stopped[0])
        return true;
    if (at - f->gap_from >= REPLAY_GAP_MAX) {
        if (f->count == 0)
            snprintf(f->stopped, sizeof(f->stopped), "no snapshot line in its first %u MiB",
                     REPLAY_GAP_MAX >> 20);
        else
            snprintf(f->stopped, sizeof(f->stopped),
                     "%u MiB without a snapshot line after snapshot %llu: not read past there",
                     REPLAY_GAP_MAX >> 20, (unsigned long long)f->count);
        return true;
    }
    uint64_t ratio = f->src.kind == RSRC_ZSTD ? REPLAY_RATIO_MAX_ZSTD : REPLAY_RATIO_MAX;
    uint64_t in = f->src.consumed;
    if (f->compressed && f->scan_u >= REPLAY_RATIO_FROM && in > 0 && f->scan_u / ratio > in) {
        snprintf(f->stopped, sizeof(f->stopped),
                 "its content is over %llu times its compressed size (%llu MiB from %llu KiB, "
                 "a compression bomb?): not read past there",
                 (unsigned long long)ratio, (unsigned long long)(f->scan_u >> 20),
                 (unsigned long long)in >> 10);
        return true;
    }
    return false;
}

/* The next chunk; false at the end, or at a bound (past_bound). */
static bool refill(struct replay_file *f)
{
    f->chunk_off += f->chunk_len;
    f->chunk_pos = 0;
    f->chunk_len = 0;
    if (past_bound(f))
        return false;
    size_t cap = f->u_stop - f->chunk_off < CHUNK ? (size_t)(f->u_stop - f->chunk_off) : CHUNK;
    uint64_t fc = 0;
    size_t n = rsrc_read(&f->src, f->chunk, cap, &fc);
    if (fc != f->chunk_c) { /* a frame begins with this chunk */
        f->chunk_c = fc;
        f->chunk_fu = f->chunk_off;
    }
    f->chunk_len = n;
    if (f->scanning)
        f->scan_u += n;
    return n > 0;
}

struct replay_pos replay_lines_here(const struct replay_file *f)
{
    uint64_t u = tell(f);
    if (!f->compressed)
        return (struct replay_pos){.c = u, .fu = u, .u = u};
    return (struct replay_pos){.c = f->chunk_c, .fu = f->chunk_fu, .u = u};
}

void replay_lines_seek(struct replay_file *f, const struct replay_pos *p, uint64_t c_end,
                       uint64_t u_end)
{
    f->u_stop = u_end;
    uint64_t here = tell(f);
    if (!f->compressed) {
        if (f->chunk_len > 0 && p->u >= f->chunk_off && p->u <= f->chunk_off + f->chunk_len &&
            f->src.stop == c_end) {
            f->chunk_pos = (size_t)(p->u - f->chunk_off);
            return;
        }
        rsrc_seek(&f->src, p->u, c_end);
        f->chunk_off = f->chunk_c = f->chunk_fu = p->u;
        f->chunk_len = f->chunk_pos = 0;
        return;
    }
    if (!(p->c == f->chunk_c && p->u >= here && f->src.stop == c_end)) {
        rsrc_seek(&f->src, p->c, c_end);
        f->chunk_off = f->chunk_fu = p->fu;
        f->chunk_c = p->c;
        f->chunk_len = f->chunk_pos = 0;
    }
    /* forward to the line, through what decodes before it in its frame */
    while (tell(f) < p->u) {
        if (f->chunk_pos >= f->chunk_len && !refill(f))
            return;
        uint64_t left = p->u - tell(f), have = f->chunk_len - f->chunk_pos;
        f->chunk_pos += (size_t)(left < have ? left : have);
    }
}

int replay_next_line(struct replay_file *f, bool *nl, bool *too_long, struct replay_pos *at)
{
    f->line_len = 0;
    *nl = false;
    *too_long = false;
    bool any = false;
    for (;;) {
        if (f->chunk_pos >= f->chunk_len && !refill(f))
            return any ? 1 : 0;
        if (!any && at)
            *at = replay_lines_here(f);
        any = true;
        const unsigned char *p = f->chunk + f->chunk_pos;
        size_t avail = f->chunk_len - f->chunk_pos;
        const unsigned char *end = memchr(p, '\n', avail);
        size_t take = end ? (size_t)(end - p) : avail;
        if (!*too_long) {
            if (f->line_len + take > REPLAY_LINE_MAX) {
                *too_long = true;
                f->line_len = 0;
            } else {
                if (f->line_len + take + 1 > f->line_cap) {
                    size_t cap = f->line_cap ? f->line_cap : 4096;
                    while (cap < f->line_len + take + 1)
                        cap *= 2;
                    char *nb = realloc(f->line, cap);
                    if (!nb) {
                        *too_long = true; /* out of memory: skipped as too long */
                        f->line_len = 0;
                    } else {
                        f->line = nb;
                        f->line_cap = cap;
                    }
                }
                if (!*too_long) {
                    memcpy(f->line + f->line_len, p, take);
                    f->line_len += take;
                    f->line[f->line_len] = '\0';
                }
            }
        }
        f->chunk_pos += take + (end ? 1 : 0);
        if (end) {
            *nl = true;
            return 1;
        }
    }
}

/* The number after key within the line's first bytes; false when absent. */
static bool head_num(const char *line, size_t len, const char *key, long long *out)
{
    size_t look = len < 512 ? len : 512;
    const char *k = memmem(line, look, key, strlen(key));
    if (!k)
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(k + strlen(key), &end, 10);
    if (errno || end == k + strlen(key) || (*end != ',' && *end != '}'))
        return false;
    *out = v;
    return true;
}

static enum replay_kind snapshot_kind(long long schema, bool delta)
{
    if (schema < REPLAY_SCHEMA || schema > REPLAY_SCHEMA_MAX)
        return RK_SCHEMA;
    return delta && schema >= 2 ? RK_DELTA : RK_FULL;
}

struct replay_head replay_classify(const char *line, size_t len)
{
    struct replay_head h = {.kind = RK_GARBAGE};
    long long schema, el;
    if (len > 11 && memcmp(line, "{\"schema\":", 10) == 0 &&
        head_num(line, len, "{\"schema\":", &schema) &&
        head_num(line, len, ",\"elapsed_ns\":", &el) && el >= 0 && line[len - 1] == '}') {
        const char *ts = memmem(line, len < 512 ? len : 512, ",\"timestamp\":\"", 14);
        char buf[40] = "";
        if (ts) {
            ts += 14;
            size_t i = 0;
            while (i + 1 < sizeof(buf) && ts + i < line + len && ts[i] != '"')
                buf[i] = ts[i], i++;
            buf[i] = '\0';
        }
        /* the writer's delta line: {"schema":2,"delta":true,… */
        bool delta = memmem(line, len < 64 ? len : 64, ",\"delta\":true,", 14) != NULL;
        h.schema = (long)schema;
        h.kind = snapshot_kind(schema, delta);
        h.elapsed = (uint64_t)el;
        h.wall = replay_parse_rfc3339(buf);
        return h;
    }
    if (len > 9 && memcmp(line, "{\"type\":\"", 9) == 0 && line[len - 1] == '}')
        return (struct replay_head){.kind = RK_OTHER};
    /* laid out otherwise (another writer): the whole line */
    json_t *root = json_loadb(line, len, 0, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        return h;
    }
    const json_t *sc = json_object_get(root, "schema");
    json_int_t e = json_integer_value(json_object_get(root, "elapsed_ns"));
    bool delta = json_is_true(json_object_get(root, "delta"));
    if (json_is_string(json_object_get(root, "type"))) {
        h.kind = RK_OTHER;
    } else if (json_is_integer(sc) && (delta || json_is_array(json_object_get(root, "devices")))) {
        h.schema = (long)json_integer_value(sc);
        h.kind = snapshot_kind(h.schema, delta);
        h.elapsed = e > 0 ? (uint64_t)e : 0;
        h.wall = replay_parse_rfc3339(json_string_value(json_object_get(root, "timestamp")));
    }
    json_decref(root);
    return h;
}
