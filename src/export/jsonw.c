#include "export/jsonw.h"

#include "core/text.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* One writer owns its FILE while it writes a document (a memory stream, or
 * standard output of a mode that writes nothing else meanwhile), and hands
 * it the text in blocks of up to JSONW_BUF bytes. */

void jsonw_init(struct jsonw *w, FILE *f, bool pretty)
{
    w->f = f;
    w->depth = 0;
    memset(w->first, 0, sizeof(w->first));
    w->first[0] = true;
    w->after_key = false;
    w->pretty = pretty;
    w->n = 0;
}

void jsonw_flush(struct jsonw *w)
{
    if (w->n)
        fwrite_unlocked(w->buf, 1, w->n, w->f);
    w->n = 0;
}

static void put(struct jsonw *w, const void *p, size_t len)
{
    if (len > JSONW_BUF - w->n) {
        jsonw_flush(w);
        if (len >= JSONW_BUF) {
            fwrite_unlocked(p, 1, len, w->f);
            return;
        }
    }
    memcpy(w->buf + w->n, p, len);
    w->n += len;
}

static void putch(struct jsonw *w, char c)
{
    if (w->n == JSONW_BUF)
        jsonw_flush(w);
    w->buf[w->n++] = c;
}

static void puts_(struct jsonw *w, const char *s)
{
    put(w, s, strlen(s));
}

static void indent(struct jsonw *w)
{
    if (!w->pretty)
        return;
    putch(w, '\n');
    for (int i = 0; i < w->depth; i++)
        puts_(w, "  ");
}

/* Called before every value or key: writes the separating comma. */
static void sep(struct jsonw *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (!w->first[w->depth])
        putch(w, ',');
    w->first[w->depth] = false;
    if (w->depth > 0)
        indent(w);
}

static void open_(struct jsonw *w, char c)
{
    sep(w);
    putch(w, c);
    if (w->depth < JSONW_MAX_DEPTH - 1)
        w->depth++;
    w->first[w->depth] = true;
}

static void close_(struct jsonw *w, char c)
{
    bool empty = w->first[w->depth];
    if (w->depth > 0)
        w->depth--;
    if (!empty)
        indent(w);
    putch(w, c);
}

void jsonw_obj_open(struct jsonw *w) { open_(w, '{'); }
void jsonw_obj_close(struct jsonw *w) { close_(w, '}'); }
void jsonw_arr_open(struct jsonw *w) { open_(w, '['); }
void jsonw_arr_close(struct jsonw *w) { close_(w, ']'); }

/* Always valid JSON and valid UTF-8: invalid sequences become U+FFFD,
 * controls and format characters (text_is_control) are written as \\u
 * escapes. */
/* The bytes written as they are: printable ASCII but the quote and the
 * backslash. */
static const bool plain[256] = {
    [' '] = 1, ['!'] = 1, ['#'... '['] = 1, [']' ... '~'] = 1,
};

static void put_escaped(struct jsonw *w, const char *s)
{
    putch(w, '"');
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        /* a run of printable ASCII that needs no escape, at once */
        size_t j = i;
        while (j < n && plain[p[j]])
            j++;
        if (j > i) {
            put(w, p + i, j - i);
            i = j;
            continue;
        }
        uint32_t cp;
        size_t len = text_utf8_decode(p + i, n - i, &cp);
        if (len == 0) {
            puts_(w, "\xef\xbf\xbd");
            i++;
            continue;
        }
        switch (cp) {
        case '"': puts_(w, "\\\""); break;
        case '\\': puts_(w, "\\\\"); break;
        case '\n': puts_(w, "\\n"); break;
        case '\r': puts_(w, "\\r"); break;
        case '\t': puts_(w, "\\t"); break;
        case '\b': puts_(w, "\\b"); break;
        case '\f': puts_(w, "\\f"); break;
        default:
            if (text_is_control(cp) && cp > 0xffff) { /* a tag: as a surrogate pair */
                char e[16];
                snprintf(e, sizeof(e), "\\u%04x\\u%04x", 0xd800u + ((cp - 0x10000u) >> 10),
                         0xdc00u + ((cp - 0x10000u) & 0x3ffu));
                puts_(w, e);
            } else if (text_is_control(cp)) {
                char e[8];
                snprintf(e, sizeof(e), "\\u%04x", (unsigned)cp);
                puts_(w, e);
            } else
                put(w, p + i, len);
        }
        i += len;
    }
    putch(w, '"');
}

void jsonw_key(struct jsonw *w, const char *key)
{
    sep(w);
    put_escaped(w, key);
    puts_(w, w->pretty ? ": " : ":");
    w->after_key = true;
}

void jsonw_str(struct jsonw *w, const char *s)
{
    if (!s) {
        jsonw_null(w);
        return;
    }
    sep(w);
    put_escaped(w, s);
}

void jsonw_null(struct jsonw *w)
{
    sep(w);
    puts_(w, "null");
}

void jsonw_bool(struct jsonw *w, bool b)
{
    sep(w);
    puts_(w, b ? "true" : "false");
}

/* v in decimal at the end of buf (24 bytes): where it begins. */
static char *put_u64(char *end, uint64_t v)
{
    *--end = '\0';
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return end;
}

void jsonw_int(struct jsonw *w, int64_t v)
{
    sep(w);
    char buf[24], *p = put_u64(buf + sizeof(buf), v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
    if (v < 0)
        *--p = '-';
    puts_(w, p);
}

void jsonw_uint(struct jsonw *w, uint64_t v)
{
    sep(w);
    char buf[24];
    puts_(w, put_u64(buf + sizeof(buf), v));
}

/*
 * v as "%.6f" with the trailing zeros (and a bare point) taken off, into
 * buf (64 bytes). A value below 10^7 is rounded in integers: v * 10^6 is
 * within 0.002 of its exact value there, so unless that lies within 0.01
 * of a half the integer rounding is the one printf makes of the exact
 * value; the rest goes through snprintf. tests/unit/test_jsonw.c compares
 * the two on many values.
 */
static void fixed6(char *buf, double v)
{
    double a = fabs(v);
    if (a < 1e7) {
        double r = a * 1e6, fl = floor(r), frac = r - fl;
        if (fabs(frac - 0.5) > 0.01) {
            uint64_t n = (uint64_t)fl + (frac > 0.5);
            char digits[24], *p = put_u64(digits + sizeof(digits), n / 1000000);
            char *o = buf;
            if (signbit(v))
                *o++ = '-';
            size_t len = strlen(p);
            memcpy(o, p, len);
            o += len;
            unsigned f = (unsigned)(n % 1000000);
            if (f) {
                char fr[7];
                for (int i = 5; i >= 0; i--, f /= 10)
                    fr[i] = (char)('0' + f % 10);
                int last = 5;
                while (fr[last] == '0')
                    last--;
                *o++ = '.';
                memcpy(o, fr, (size_t)last + 1);
                o += last + 1;
            }
            *o = '\0';
            return;
        }
    }
    if (a >= 1e50) { /* "%.6f" would need up to 316 bytes: the shortest exact form */
        snprintf(buf, 64, "%.17g", v);
        return;
    }
    snprintf(buf, 64, "%.6f", v);
    char *dot = strchr(buf, '.');
    if (dot) {
        char *end = buf + strlen(buf) - 1;
        while (end > dot && *end == '0')
            *end-- = '\0';
        if (end == dot)
            *end = '\0';
    }
}

void jsonw_fixed6(char *buf, double v)
{
    fixed6(buf, v);
}

void jsonw_double(struct jsonw *w, double v)
{
    if (!isfinite(v)) {
        jsonw_null(w);
        return;
    }
    sep(w);
    /* written straight into the buffer: 64 bytes hold any number */
    if (JSONW_BUF - w->n < 64)
        jsonw_flush(w);
    char *out = w->buf + w->n;
    /* Integers up to 2^53 are exact in a double: print them without a
     * fraction so byte counts stay byte counts. */
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        char digits[24], *p = put_u64(digits + sizeof(digits), (uint64_t)fabs(v));
        if (signbit(v))
            *--p = '-';
        size_t len = (size_t)(digits + sizeof(digits) - 1 - p);
        memcpy(out, p, len);
        w->n += len;
        return;
    }
    fixed6(out, v);
    w->n += strlen(out);
}

void jsonw_metric(struct jsonw *w, const struct metric *m)
{
    jsonw_obj_open(w);
    jsonw_key(w, "value");
    if (metric_ok(m))
        jsonw_double(w, m->value);
    else
        jsonw_null(w);
    jsonw_key(w, "source");
    jsonw_str(w, metric_source_name(m->src));
    if (m->why) {
        jsonw_key(w, "reason");
        jsonw_str(w, m->why);
    }
    jsonw_obj_close(w);
}

void jsonw_end(struct jsonw *w)
{
    putch(w, '\n');
    jsonw_flush(w);
}
