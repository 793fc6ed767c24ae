#include "export/jsonw.h"

#include "core/text.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* One writer owns its FILE while it writes a document (a memory stream, or
 * standard output of a mode that writes nothing else meanwhile): stdio's
 * lock on every character is a recording's largest cost otherwise. */
#define fputc fputc_unlocked
#define fputs fputs_unlocked
#define fwrite fwrite_unlocked

void jsonw_init(struct jsonw *w, FILE *f, bool pretty)
{
    memset(w, 0, sizeof(*w));
    w->f = f;
    w->pretty = pretty;
    w->first[0] = true;
}

static void indent(struct jsonw *w)
{
    if (!w->pretty)
        return;
    fputc('\n', w->f);
    for (int i = 0; i < w->depth; i++)
        fputs("  ", w->f);
}

/* Called before every value or key: writes the separating comma. */
static void sep(struct jsonw *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (!w->first[w->depth])
        fputc(',', w->f);
    w->first[w->depth] = false;
    if (w->depth > 0)
        indent(w);
}

static void open_(struct jsonw *w, char c)
{
    sep(w);
    fputc(c, w->f);
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
    fputc(c, w->f);
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

static void put_escaped(FILE *f, const char *s)
{
    fputc('"', f);
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        /* a run of printable ASCII that needs no escape, at once */
        size_t j = i;
        while (j < n && plain[p[j]])
            j++;
        if (j > i) {
            fwrite(p + i, 1, j - i, f);
            i = j;
            continue;
        }
        uint32_t cp;
        size_t len = text_utf8_decode(p + i, n - i, &cp);
        if (len == 0) {
            fputs("\xef\xbf\xbd", f);
            i++;
            continue;
        }
        switch (cp) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default:
            if (text_is_control(cp) && cp > 0xffff) /* a tag: as a surrogate pair */
                fprintf(f, "\\u%04x\\u%04x", 0xd800u + ((cp - 0x10000u) >> 10),
                        0xdc00u + ((cp - 0x10000u) & 0x3ffu));
            else if (text_is_control(cp))
                fprintf(f, "\\u%04x", (unsigned)cp);
            else
                fwrite(p + i, 1, len, f);
        }
        i += len;
    }
    fputc('"', f);
}

void jsonw_key(struct jsonw *w, const char *key)
{
    sep(w);
    put_escaped(w->f, key);
    fputs(w->pretty ? ": " : ":", w->f);
    w->after_key = true;
}

void jsonw_str(struct jsonw *w, const char *s)
{
    if (!s) {
        jsonw_null(w);
        return;
    }
    sep(w);
    put_escaped(w->f, s);
}

void jsonw_null(struct jsonw *w)
{
    sep(w);
    fputs("null", w->f);
}

void jsonw_bool(struct jsonw *w, bool b)
{
    sep(w);
    fputs(b ? "true" : "false", w->f);
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
    fputs(p, w->f);
}

void jsonw_uint(struct jsonw *w, uint64_t v)
{
    sep(w);
    char buf[24];
    fputs(put_u64(buf + sizeof(buf), v), w->f);
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
    /* Integers up to 2^53 are exact in a double: print them without a
     * fraction so byte counts stay byte counts. */
    char buf[64];
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        char *p = put_u64(buf + 24, (uint64_t)fabs(v));
        if (signbit(v))
            *--p = '-';
        fputs(p, w->f);
        return;
    }
    fixed6(buf, v);
    fputs(buf, w->f);
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
    fputc('\n', w->f);
}
