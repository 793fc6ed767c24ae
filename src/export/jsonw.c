#include "export/jsonw.h"

#include "text.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

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
static void put_escaped(FILE *f, const char *s)
{
    fputc('"', f);
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
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

void jsonw_int(struct jsonw *w, int64_t v)
{
    sep(w);
    fprintf(w->f, "%" PRId64, v);
}

void jsonw_uint(struct jsonw *w, uint64_t v)
{
    sep(w);
    fprintf(w->f, "%" PRIu64, v);
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
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        fprintf(w->f, "%.0f", v);
        return;
    }
    char buf[64];
    snprintf(buf, sizeof(buf), "%.6f", v);
    char *dot = strchr(buf, '.');
    if (dot) {
        char *end = buf + strlen(buf) - 1;
        while (end > dot && *end == '0')
            *end-- = '\0';
        if (end == dot)
            *end = '\0';
    }
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
