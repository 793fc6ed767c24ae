/*
 * reader.c — a recording's lines, its sparse index and random access to
 * its snapshots (reader.h).
 */
#include "replay/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "text.h"

#define CHUNK (64u * 1024u)

/* Whether the next chunk would pass a bound (reader.h). While the index is
 * built: a run of REPLAY_GAP_MAX bytes without a snapshot line, or content
 * over REPLAY_RATIO_MAX times the compressed bytes it came from; said in
 * f->stopped, and the scan ends there. After it: where the scan ended, so
 * that no read goes further than the index did. */
static bool past_bound(struct replay_file *f)
{
    uint64_t at = f->chunk_off;
    if (!f->scanning)
        return at >= f->limit;
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
    /* gzoffset: the compressed bytes consumed, not those buffered ahead */
    z_off_t in = gzoffset((gzFile)f->gz);
    if (f->compressed && at >= REPLAY_RATIO_FROM && in > 0 &&
        at / REPLAY_RATIO_MAX > (uint64_t)in) {
        snprintf(f->stopped, sizeof(f->stopped),
                 "its content is over %u times its compressed size (%llu MiB from %llu KiB, "
                 "a compression bomb?): not read past there",
                 REPLAY_RATIO_MAX, (unsigned long long)(at >> 20),
                 (unsigned long long)in >> 10);
        return true;
    }
    return false;
}

/* Fill the chunk from the file's current position; false at the end, or
 * at a bound (past_bound). */
static bool refill(struct replay_file *f)
{
    f->chunk_off += f->chunk_len;
    f->chunk_pos = 0;
    f->chunk_len = 0;
    if (past_bound(f))
        return false;
    int n = gzread((gzFile)f->gz, f->chunk, CHUNK);
    f->chunk_len = n > 0 ? (size_t)n : 0;
    return f->chunk_len > 0;
}

static int seek_to(struct replay_file *f, uint64_t off)
{
    if (off >= f->chunk_off && off <= f->chunk_off + f->chunk_len) {
        f->chunk_pos = (size_t)(off - f->chunk_off);
        return 0;
    }
    if (gzseek((gzFile)f->gz, (z_off_t)off, SEEK_SET) < 0)
        return -1;
    f->chunk_off = off;
    f->chunk_len = f->chunk_pos = 0;
    return 0;
}

static uint64_t tell(const struct replay_file *f)
{
    return f->chunk_off + f->chunk_pos;
}

/* The next line into f->line (without its newline). 1: a line; 0: the
 * end; *nl false when the line ran to the end of the file without a
 * newline; *too_long when it was longer than REPLAY_LINE_MAX (its bytes
 * are skipped and f->line is empty). */
static int next_line(struct replay_file *f, bool *nl, bool *too_long)
{
    f->line_len = 0;
    *nl = false;
    *too_long = false;
    bool any = false;
    for (;;) {
        if (f->chunk_pos >= f->chunk_len && !refill(f))
            return any ? 1 : 0;
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

enum kind { K_GARBAGE, K_SNAPSHOT, K_OTHER, K_SCHEMA };

struct head {
    enum kind kind;
    uint64_t elapsed;
    int64_t wall;
    long schema;
};

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

/* What a line is, from its head as our writer lays it out; else from
 * jansson. Only the kind and the times: the snapshot itself is parsed when
 * shown. */
static struct head classify(const char *line, size_t len)
{
    struct head h = {.kind = K_GARBAGE};
    long long schema, el;
    if (len > 11 && memcmp(line, "{\"schema\":", 10) == 0 && head_num(line, len, "{\"schema\":", &schema) &&
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
        h.schema = (long)schema;
        h.kind = schema == REPLAY_SCHEMA ? K_SNAPSHOT : K_SCHEMA;
        h.elapsed = (uint64_t)el;
        h.wall = replay_parse_rfc3339(buf);
        return h;
    }
    if (len > 9 && memcmp(line, "{\"type\":\"", 9) == 0 && line[len - 1] == '}')
        return (struct head){.kind = K_OTHER};
    /* laid out otherwise (another writer): the whole line */
    json_t *root = json_loadb(line, len, 0, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        return h;
    }
    const json_t *sc = json_object_get(root, "schema");
    json_int_t e = json_integer_value(json_object_get(root, "elapsed_ns"));
    if (json_is_string(json_object_get(root, "type"))) {
        h.kind = K_OTHER;
    } else if (json_is_integer(sc) && json_is_array(json_object_get(root, "devices"))) {
        h.schema = (long)json_integer_value(sc);
        h.kind = h.schema == REPLAY_SCHEMA ? K_SNAPSHOT : K_SCHEMA;
        h.elapsed = e > 0 ? (uint64_t)e : 0;
        h.wall = replay_parse_rfc3339(json_string_value(json_object_get(root, "timestamp")));
    }
    json_decref(root);
    return h;
}

static void index_add(struct replay_file *f, uint64_t off, const struct head *h)
{
    if (f->count % f->stride == 0) {
        if (f->nix == REPLAY_INDEX_MAX) { /* full: every other entry, twice the stride */
            for (size_t i = 0; i < f->nix / 2; i++)
                f->ix[i] = f->ix[2 * i];
            f->nix /= 2;
            f->stride *= 2;
        }
        if (f->count % f->stride == 0)
            f->ix[f->nix++] = (struct replay_ix){.off = off, .elapsed = h->elapsed, .wall = h->wall};
    }
    if (f->count == 0) {
        f->first_elapsed = h->elapsed;
        f->first_wall = h->wall;
    }
    f->last_elapsed = h->elapsed;
    f->last_wall = h->wall;
    f->count++;
}

/* The file at path opened once for the whole life of the reader: a pipe, a
 * FIFO or a device would give its bytes to the index scan and none to the
 * reads after it (or, a FIFO, block a second open), and a directory has no
 * lines. O_NONBLOCK: a FIFO's open does not wait for a writer. */
static int open_regular(const struct replay_file *f, const char *path, char *err, size_t errlen)
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
    return fd;
}

int replay_file_open(struct replay_file *f, const char *path, char *err, size_t errlen)
{
    memset(f, 0, sizeof(*f));
    text_copy(f->path_shown, sizeof(f->path_shown), path);
    text_clean(f->path_shown, sizeof(f->path_shown));
    int rc = -1, again = -1;
    int fd = open_regular(f, path, err, errlen);
    if (fd < 0)
        return -1;
    /* the same file again for the random reads after the scan (gzseek over
     * what gzread consumed): a second descriptor of it, not a second open
     * of the path */
    again = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    unsigned char magic[2] = {0, 0};
    f->compressed = pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    f->gz = again >= 0 ? gzdopen(fd, "rb") : NULL;
    f->chunk = malloc(CHUNK);
    f->ix = malloc(REPLAY_INDEX_MAX * sizeof(*f->ix));
    f->stride = 1;
    f->limit = UINT64_MAX;
    if (!f->gz || !f->chunk || !f->ix) {
        if (!f->gz)
            close(fd);
        snprintf(err, errlen, "%s: out of memory", f->path_shown);
        goto fail;
    }
    gzbuffer((gzFile)f->gz, 128 * 1024);
    uint64_t lineno = 0;
    f->scanning = true;
    for (;;) {
        uint64_t off = tell(f);
        bool nl, too_long;
        int got = next_line(f, &nl, &too_long);
        if (got == 0 || f->stopped[0])
            break; /* the end, or a bound: a line it cut is not one */
        lineno++;
        if (f->line_len == 0 && !too_long && nl)
            continue; /* an empty line */
        struct head h = too_long ? (struct head){.kind = K_GARBAGE} : classify(f->line, f->line_len);
        if (!nl && h.kind != K_OTHER) {
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
        if (h.kind == K_SCHEMA) {
            snprintf(err, errlen,
                     "%s line %llu: a snapshot of schema %ld; this mig-gpu-mon reads schema %d "
                     "recordings",
                     f->path_shown, (unsigned long long)lineno, h.schema, REPLAY_SCHEMA);
            rc = -2;
            goto fail;
        }
        if (h.kind == K_SNAPSHOT) {
            index_add(f, off, &h);
            f->gap_from = tell(f);
        } else if (h.kind == K_OTHER) {
            f->others++;
        } else if (f->garbage++ == 0) {
            f->first_garbage_line = lineno;
        }
    }
    f->scanning = false;
    if (gzclose_r((gzFile)f->gz) != Z_OK && f->count == 0 && !f->stopped[0]) {
        f->gz = NULL;
        snprintf(err, errlen, "%s: cannot be read (a damaged gzip stream)", f->path_shown);
        goto fail;
    }
    f->gz = NULL;
    if (f->count == 0 && f->stopped[0]) {
        snprintf(err, errlen, "%s: %s", f->path_shown, f->stopped);
        goto fail;
    }
    if (f->count == 0) {
        snprintf(err, errlen, "%s: no snapshot in it (%llu lines that are not one)", f->path_shown,
                 (unsigned long long)(f->garbage + f->others));
        goto fail;
    }
    /* the reads after the scan go no further than it did */
    f->limit = f->chunk_off + f->chunk_len;
    f->gz = lseek(again, 0, SEEK_SET) == 0 ? gzdopen(again, "rb") : NULL;
    if (!f->gz) {
        snprintf(err, errlen, "%s: cannot be read again: %s", f->path_shown, strerror(errno));
        goto fail;
    }
    again = -1; /* the gzFile's */
    gzbuffer((gzFile)f->gz, 128 * 1024);
    f->chunk_off = f->chunk_len = f->chunk_pos = 0;
    f->next_rec = 0;
    f->next_off = f->ix[0].off;
    f->peek_rec = UINT64_MAX;
    return 0;
fail:
    if (again >= 0)
        close(again);
    replay_file_close(f);
    return rc;
}

/* Snapshot rec's line into f->line. A position and a number go together:
 * the next snapshot line from the position is that number (an index entry;
 * the place after the line read last). */
static int locate(struct replay_file *f, uint64_t rec)
{
    if (rec == f->peek_rec && f->peek) { /* read ahead already */
        char *l = f->line;
        size_t c = f->line_cap;
        f->line = f->peek;
        f->line_cap = f->peek_cap;
        f->line_len = f->peek_len;
        f->peek = l;
        f->peek_cap = c;
        f->peek_rec = UINT64_MAX;
        return 0;
    }
    size_t e = (size_t)(rec / f->stride);
    if (e >= f->nix)
        return -1;
    uint64_t at = e * f->stride, off = f->ix[e].off;
    if (f->next_rec != (uint64_t)-1 && rec >= f->next_rec && f->next_rec >= at) {
        at = f->next_rec; /* closer from where we are */
        off = f->next_off;
    }
    if (seek_to(f, off) != 0)
        return -1;
    for (;;) {
        bool nl, too_long;
        if (next_line(f, &nl, &too_long) == 0)
            return -1;
        if (too_long || classify(f->line, f->line_len).kind != K_SNAPSHOT)
            continue;
        if (at == rec)
            break;
        at++;
    }
    f->next_rec = rec + 1;
    f->next_off = tell(f);
    return 0;
}

int replay_file_read(struct replay_file *f, uint64_t rec, struct snapshot *s, char *err,
                     size_t errlen)
{
    if (rec >= f->count || !f->gz) {
        snprintf(err, errlen, "no snapshot %llu", (unsigned long long)rec + 1);
        return -1;
    }
    if (locate(f, rec) != 0) {
        f->next_rec = (uint64_t)-1;
        snprintf(err, errlen, "%s: snapshot %llu cannot be read again (the file changed?)",
                 f->path_shown, (unsigned long long)rec + 1);
        return -1;
    }
    char why[256] = "";
    int rc = replay_parse_line(f->line, f->line_len, s, &f->strs, why, sizeof(why));
    if (rc == REPLAY_LINE_SNAPSHOT)
        return 0;
    snprintf(err, errlen, "%s: snapshot %llu: %s", f->path_shown, (unsigned long long)rec + 1,
             why);
    return -1;
}

uint64_t replay_file_find(struct replay_file *f, int64_t t, bool wall)
{
    size_t lo = 0, hi = f->nix; /* the last entry at or before t */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        int64_t v = wall ? f->ix[mid].wall : (int64_t)f->ix[mid].elapsed;
        if (v <= t)
            lo = mid;
        else
            hi = mid;
    }
    uint64_t rec = lo * f->stride, best = rec;
    if (seek_to(f, f->ix[lo].off) != 0)
        return best;
    f->next_rec = (uint64_t)-1; /* the sequential position is lost */
    while (rec < f->count) {
        bool nl, too_long;
        if (next_line(f, &nl, &too_long) == 0)
            break;
        if (too_long)
            continue;
        struct head h = classify(f->line, f->line_len);
        if (h.kind != K_SNAPSHOT)
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
    if (rec >= f->count || !f->gz)
        return false;
    if (rec == f->peek_rec) {
        *elapsed = classify(f->peek, f->peek_len).elapsed;
        return true;
    }
    /* the line read last (rec's, when it was just read) is kept */
    char *l = f->line;
    size_t len = f->line_len, cap = f->line_cap;
    f->line = f->peek;
    f->line_cap = f->peek_cap;
    f->line_len = 0;
    f->peek_rec = UINT64_MAX;
    bool ok = locate(f, rec) == 0;
    if (ok)
        *elapsed = classify(f->line, f->line_len).elapsed;
    /* rec's line becomes the read-ahead one */
    f->peek = f->line;
    f->peek_cap = f->line_cap;
    f->peek_len = f->line_len;
    f->peek_rec = ok ? rec : UINT64_MAX;
    f->line = l;
    f->line_len = len;
    f->line_cap = cap;
    return ok;
}

void replay_file_close(struct replay_file *f)
{
    if (f->gz)
        gzclose_r((gzFile)f->gz);
    free(f->chunk);
    free(f->line);
    free(f->peek);
    free(f->ix);
    replay_strs_free(&f->strs);
    memset(f, 0, sizeof(*f));
}
