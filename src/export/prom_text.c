/*
 * prom_text.c — the exposition's text (prom_text.h): a page that grows as
 * it is written (an allocation that fails sticks, so a render stops there
 * and reports it), label values escaped so the page stays valid UTF-8,
 * and a family's HELP and TYPE lines written just before its first sample.
 */
#include "export/prom_text.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for more bytes (and a NUL) in *p; false after a failed allocation,
 * which sticks, so a render stops growing the page once memory ran out. */
static bool grow(char **p, size_t len, size_t *cap, size_t more, bool *oom)
{
    if (*oom)
        return false;
    if (len + more + 1 <= *cap)
        return true;
    size_t n = *cap ? *cap : 4096;
    while (n < len + more + 1)
        n *= 2;
    char *q = realloc(*p, n);
    if (!q) {
        *oom = true;
        return false;
    }
    *p = q;
    *cap = n;
    return true;
}

static void put(struct prom_ctx *c, const char *s, size_t n)
{
    struct prom_buf *b = c->b;
    if (!grow(&b->p, b->len, &b->cap, n, &c->oom))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void puts_(struct prom_ctx *c, const char *s)
{
    put(c, s, strlen(s));
}

static void putc_(struct prom_ctx *c, char ch)
{
    put(c, &ch, 1);
}

__attribute__((format(printf, 2, 3))) static void putf(struct prom_ctx *c, const char *fmt, ...)
{
    struct prom_buf *b = c->b;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!grow(&b->p, b->len, &b->cap, attempt ? 0 : 64, &c->oom))
            return;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        if (!grow(&b->p, b->len, &b->cap, (size_t)n, &c->oom))
            return;
    }
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when it is not one
 * (overlong forms and surrogates included). */
static size_t utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return (s[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80 ? 4
                                                                                       : 0;
    }
    return 0;
}

size_t prom_escape_label(const char *v, char *out, size_t outlen)
{
    size_t o = 0;
    if (outlen == 0)
        return 0;
    const unsigned char *s = (const unsigned char *)(v ? v : "");
    while (*s) {
        char tmp[4];
        size_t n = 1, take = 1;
        const char *src = tmp;
        if (*s == '\\' || *s == '"') {
            tmp[0] = '\\';
            tmp[1] = (char)*s;
            n = 2;
        } else if (*s == '\n') {
            tmp[0] = '\\';
            tmp[1] = 'n';
            n = 2;
        } else if (*s < 0x20 || *s == 0x7f) {
            tmp[0] = '?';
        } else if ((take = utf8_len(s)) == 0) {
            tmp[0] = '?';
            take = 1;
        } else {
            src = (const char *)s;
            n = take;
        }
        if (o + n >= outlen)
            break;
        memcpy(out + o, src, n);
        o += n;
        s += take;
    }
    out[o] = '\0';
    return o;
}

static void put_escaped(struct prom_ctx *c, const char *v)
{
    struct prom_buf *b = c->b;
    size_t n = strlen(v ? v : "");
    if (!grow(&b->p, b->len, &b->cap, 2 * n + 1, &c->oom))
        return;
    b->len += prom_escape_label(v, b->p + b->len, b->cap - b->len);
}

static void put_value(struct prom_ctx *c, double v)
{
    if (isnan(v))
        puts_(c, "NaN");
    else if (isinf(v))
        puts_(c, v > 0 ? "+Inf" : "-Inf");
    else
        putf(c, "%.15g", v);
}

/* ---- families and samples ------------------------------------------------ */

void prom_family(struct prom_ctx *c, const char *name, const char *type, const char *help)
{
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->type = type;
    c->help = help;
    c->header_done = false;
}

void prom_sample_open(struct prom_ctx *c)
{
    if (!c->header_done) {
        putf(c, "# HELP %s %s\n# TYPE %s %s\n", c->name, c->help, c->name, c->type);
        c->header_done = true;
    }
    puts_(c, c->name);
    c->any_label = false;
}

void prom_label_raw(struct prom_ctx *c, const char *labels)
{
    if (!labels || !labels[0])
        return;
    putc_(c, c->any_label ? ',' : '{');
    puts_(c, labels);
    c->any_label = true;
}

void prom_label(struct prom_ctx *c, const char *k, const char *v)
{
    putc_(c, c->any_label ? ',' : '{');
    puts_(c, k);
    puts_(c, "=\"");
    put_escaped(c, v);
    putc_(c, '"');
    c->any_label = true;
}

void prom_sample_close(struct prom_ctx *c, double v)
{
    if (c->any_label)
        putc_(c, '}');
    putc_(c, ' ');
    put_value(c, v);
    putc_(c, '\n');
}

void prom_sample_plain(struct prom_ctx *c, const char *labels, double v)
{
    prom_sample_open(c);
    prom_label_raw(c, labels);
    prom_sample_close(c, v);
}

void prom_sample_metric(struct prom_ctx *c, const char *labels, const struct metric *m,
                        double scale)
{
    if (!metric_ok(m))
        return;
    prom_sample_open(c);
    prom_label_raw(c, labels);
    prom_label(c, "source", metric_source_name(m->src));
    prom_sample_close(c, m->value * scale);
}

void prom_lab_add(struct prom_ctx *c, bool *first, const char *k, const char *v)
{
    struct prom_buf *b = c->b;
    size_t n = strlen(k) + 2 * strlen(v ? v : "") + 5;
    if (!grow(&b->lab, b->lab_len, &b->lab_cap, n, &c->oom))
        return;
    char *p = b->lab + b->lab_len;
    size_t o = (size_t)sprintf(p, "%s%s=\"", *first ? "" : ",", k);
    o += prom_escape_label(v, p + o, b->lab_cap - b->lab_len - o);
    p[o++] = '"';
    p[o] = '\0';
    b->lab_len += o;
    *first = false;
}

void prom_lab_add_int(struct prom_ctx *c, bool *first, const char *k, int v)
{
    char t[16] = "";
    if (v >= 0)
        snprintf(t, sizeof(t), "%d", v);
    prom_lab_add(c, first, k, t);
}

void prom_lab_end(struct prom_ctx *c)
{
    struct prom_buf *b = c->b;
    if (grow(&b->lab, b->lab_len, &b->lab_cap, 0, &c->oom))
        b->lab[b->lab_len++] = '\0';
}

const char *prom_labels_of(const struct prom_ctx *c, size_t i, int k)
{
    size_t o = c->b->off[i * PROM_LAB_N + k];
    return o == PROM_NO_LABELS ? NULL : c->b->lab + o;
}

void prom_buf_free(struct prom_buf *b)
{
    free(b->p);
    free(b->lab);
    free(b->off);
    memset(b, 0, sizeof(*b));
}
