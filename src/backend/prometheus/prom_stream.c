/*
 * prom_stream.c — an instant query's answer read as it arrives
 * (prom_stream.h): a JSON tokenizer that keeps no more than the token it
 * is in, and a reader that follows the envelope's members and hands each
 * series of data.result to the callback.
 */
#include "backend/prometheus/prom_stream.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text.h"

/* What the tokenizer is in the middle of. */
enum { LEX_WS = 0, LEX_STR, LEX_ESC, LEX_HEX, LEX_LIT };

/* Where a container is in its grammar (want_key[] holds it). */
enum {
    G_START = 0, /* just opened: a key ('{') or a value ('['), or the close */
    G_COLON,     /* an object after a key: ':' */
    G_VALUE,     /* a value must come */
    G_NEXT,      /* ',' or the close */
    G_KEY,       /* an object after ',': a key (never the close) */
};

/* The longest string or number read. */
#define TOK_MAX PROM_ITEM_BYTES

const char *prom_item_label(const struct prom_item *it, const char *k)
{
    for (size_t i = 0; i < it->nlab; i++)
        if (strcmp(it->key[i], k) == 0)
            return it->val[i];
    return "";
}

bool prom_item_value(const struct prom_item *it, double *out)
{
    if (!it->value)
        return false;
    char *end;
    double d = strtod(it->value, &end);
    if (end == it->value || *end || !isfinite(d))
        return false;
    *out = d;
    return true;
}

int prom_stream_init(struct prom_stream *ps, prom_item_fn fn, void *ctx)
{
    memset(ps, 0, sizeof(*ps));
    ps->fn = fn;
    ps->ctx = ctx;
    ps->arena = malloc(PROM_ITEM_BYTES);
    ps->tok_cap = 256;
    ps->tok = malloc(ps->tok_cap);
    if (!ps->arena || !ps->tok) {
        prom_stream_free(ps);
        return -1;
    }
    return 0;
}

void prom_stream_free(struct prom_stream *ps)
{
    free(ps->arena);
    free(ps->tok);
    ps->arena = ps->tok = NULL;
}

long prom_stream_items(const struct prom_stream *ps)
{
    return ps->nitems;
}

static int fail(struct prom_stream *ps, const char *why)
{
    if (!ps->failed)
        snprintf(ps->why, sizeof(ps->why), "%s", why);
    ps->failed = true;
    return -1;
}

static int tok_put(struct prom_stream *ps, const char *p, size_t n)
{
    if (ps->tok_len + n + 1 > ps->tok_cap) {
        if (ps->tok_len + n + 1 > TOK_MAX)
            return fail(ps, "a string or number in the answer is longer than 64 KiB");
        size_t cap = ps->tok_cap * 2;
        while (cap < ps->tok_len + n + 1)
            cap *= 2;
        if (cap > TOK_MAX)
            cap = TOK_MAX;
        char *t = realloc(ps->tok, cap);
        if (!t)
            return fail(ps, "out of memory");
        ps->tok = t;
        ps->tok_cap = cap;
    }
    memcpy(ps->tok + ps->tok_len, p, n);
    ps->tok_len += n;
    ps->tok[ps->tok_len] = '\0';
    return 0;
}

/* A code point as UTF-8 into the token. */
static int put_cp(struct prom_stream *ps, unsigned cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return tok_put(ps, b, n);
}

/* ---- the reader: what the tokens mean ---- */

/* A string kept in the series' arena; NULL when it is full. */
static const char *arena_put(struct prom_stream *ps, const char *s, size_t n)
{
    if (ps->arena_len + n + 1 > PROM_ITEM_BYTES)
        return NULL;
    char *d = ps->arena + ps->arena_len;
    memcpy(d, s, n);
    d[n] = '\0';
    ps->arena_len += n + 1;
    return d;
}

static bool in_item(const struct prom_stream *ps)
{
    return ps->in_result && ps->depth >= 4;
}

static int on_key(struct prom_stream *ps, const char *k, size_t n)
{
    switch (ps->depth) {
    case 1:
        snprintf(ps->key1, sizeof(ps->key1), "%s", k);
        break;
    case 2:
        snprintf(ps->key2, sizeof(ps->key2), "%s", k);
        break;
    case 4:
        if (in_item(ps))
            snprintf(ps->key4, sizeof(ps->key4), "%s", k);
        break;
    case 5:
        if (in_item(ps) && strcmp(ps->key4, "metric") == 0) {
            if (ps->item.nlab == PROM_ITEM_LABELS)
                return fail(ps, "a series in the answer has more than 64 labels");
            const char *kk = arena_put(ps, k, n);
            if (!kk)
                return fail(ps, "a series' labels in the answer pass 64 KiB");
            ps->item.key[ps->item.nlab] = kk;
            ps->pending_key = 1;
        }
        break;
    default:
        break;
    }
    return 0;
}

/* A scalar value (a string when str, else a number or literal). */
static int on_scalar(struct prom_stream *ps, bool str, const char *v, size_t n)
{
    if (ps->depth == 1 && str) {
        if (!strcmp(ps->key1, "status"))
            snprintf(ps->status, sizeof(ps->status), "%s", v);
        else if (!strcmp(ps->key1, "error"))
            snprintf(ps->error, sizeof(ps->error), "%s", v);
        else if (!strcmp(ps->key1, "errorType"))
            snprintf(ps->error_type, sizeof(ps->error_type), "%s", v);
    } else if (ps->depth == 2 && str && !strcmp(ps->key1, "data") &&
               !strcmp(ps->key2, "resultType")) {
        snprintf(ps->result_type, sizeof(ps->result_type), "%s", v);
    } else if (ps->depth == 3 && ps->in_result) {
        return fail(ps, "the answer is not an instant vector (a result that is not a series)");
    } else if (ps->depth == 5 && in_item(ps)) {
        if (!strcmp(ps->key4, "metric")) {
            if (!str || !ps->pending_key)
                return fail(ps, "a series' label value in the answer is not a string");
            const char *vv = arena_put(ps, v, n);
            if (!vv)
                return fail(ps, "a series' labels in the answer pass 64 KiB");
            ps->item.val[ps->item.nlab++] = vv;
            ps->pending_key = 0;
        } else if (!strcmp(ps->key4, "value")) {
            if (ps->value_pos == 0 && !str) {
                ps->item.t = strtod(v, NULL);
            } else if (ps->value_pos == 1 && str) {
                ps->item.value = arena_put(ps, v, n);
                if (!ps->item.value)
                    return fail(ps, "a series' labels in the answer pass 64 KiB");
            } else {
                return fail(ps, "a sample in the answer is not [time, \"value\"]");
            }
            ps->value_pos++;
        }
    }
    return 0;
}

static int on_open(struct prom_stream *ps, unsigned char kind)
{
    int d = ps->depth; /* the level it opens at (its parent's depth) */
    /* the member names of the level it opens are its own */
    if (d == 0)
        ps->key1[0] = '\0';
    else if (d == 1)
        ps->key2[0] = '\0';
    if (d == 2 && ps->kind[1] == 'o' && !strcmp(ps->key1, "data") && !strcmp(ps->key2, "result")) {
        if (kind != 'a')
            return fail(ps, "the answer is not an instant vector (its result is not a list)");
        ps->in_result = true;
        ps->saw_result = true;
    } else if (d == 3 && ps->in_result) {
        if (kind != 'o')
            return fail(ps, "the answer is not an instant vector (a result that is not a series)");
        memset(&ps->item, 0, sizeof(ps->item));
        ps->arena_len = 0;
        ps->value_pos = 0;
        ps->key4[0] = '\0';
        ps->pending_key = 0;
    } else if (d == 4 && in_item(ps)) {
        if (!strcmp(ps->key4, "metric") && kind != 'o')
            return fail(ps, "a series' labels in the answer are not an object");
        if (!strcmp(ps->key4, "value") && kind != 'a')
            return fail(ps, "a sample in the answer is not [time, \"value\"]");
        if (!strcmp(ps->key4, "values"))
            return fail(ps, "the answer is a range vector, not an instant vector");
    } else if (d == 5 && in_item(ps) &&
               (!strcmp(ps->key4, "metric") || !strcmp(ps->key4, "value"))) {
        return fail(ps, "a series in the answer has a nested label or sample");
    }
    return 0;
}

/* The container at level ps->depth (before it is popped) has closed. */
static int on_close(struct prom_stream *ps)
{
    if (ps->depth == 4 && in_item(ps)) {
        ps->nitems++;
        int rc = ps->fn ? ps->fn(ps->ctx, &ps->item) : 0;
        if (rc != 0)
            return fail(ps, "stopped by its reader");
    } else if (ps->depth == 3 && ps->in_result) {
        ps->in_result = false;
    }
    return 0;
}

/* ---- the grammar ---- */

/* A value has begun at the current level: is one allowed there? */
static int value_begins(struct prom_stream *ps)
{
    if (ps->done)
        return fail(ps, "the answer goes on after its end");
    if (ps->depth == 0)
        return 0;
    unsigned char *g = &ps->want_key[ps->depth - 1];
    if (*g == G_VALUE || (*g == G_START && ps->kind[ps->depth - 1] == 'a'))
        return 0;
    return fail(ps, "the answer is not JSON (a value where none may be)");
}

/* A value has ended at the current level. */
static void value_ends(struct prom_stream *ps)
{
    if (ps->depth == 0)
        ps->done = true;
    else
        ps->want_key[ps->depth - 1] = G_NEXT;
}

static int string_done(struct prom_stream *ps)
{
    const char *s = ps->tok;
    size_t n = ps->tok_len;
    if (ps->hi_surrogate)
        return fail(ps, "the answer is not JSON (a lone surrogate)");
    if (ps->depth > 0 && ps->kind[ps->depth - 1] == 'o' &&
        (ps->want_key[ps->depth - 1] == G_START || ps->want_key[ps->depth - 1] == G_KEY)) {
        ps->want_key[ps->depth - 1] = G_COLON;
        return on_key(ps, s, n);
    }
    if (value_begins(ps) != 0)
        return -1;
    if (on_scalar(ps, true, s, n) != 0)
        return -1;
    value_ends(ps);
    return 0;
}

static int literal_done(struct prom_stream *ps)
{
    const char *s = ps->tok;
    bool ok = !strcmp(s, "true") || !strcmp(s, "false") || !strcmp(s, "null");
    if (!ok) {
        /* a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
        const char *p = s;
        if (*p == '-')
            p++;
        if (*p == '0')
            p++;
        else if (*p >= '1' && *p <= '9')
            while (*p >= '0' && *p <= '9')
                p++;
        else
            return fail(ps, "the answer is not JSON (a word that is no value)");
        if (*p == '.') {
            p++;
            if (!(*p >= '0' && *p <= '9'))
                return fail(ps, "the answer is not JSON (a number)");
            while (*p >= '0' && *p <= '9')
                p++;
        }
        if (*p == 'e' || *p == 'E') {
            p++;
            if (*p == '+' || *p == '-')
                p++;
            if (!(*p >= '0' && *p <= '9'))
                return fail(ps, "the answer is not JSON (a number)");
            while (*p >= '0' && *p <= '9')
                p++;
        }
        if (*p)
            return fail(ps, "the answer is not JSON (a word that is no value)");
    }
    if (value_begins(ps) != 0)
        return -1;
    if (on_scalar(ps, false, s, ps->tok_len) != 0)
        return -1;
    value_ends(ps);
    return 0;
}

static int structural(struct prom_stream *ps, char c)
{
    switch (c) {
    case '{':
    case '[': {
        if (value_begins(ps) != 0)
            return -1;
        if (ps->depth == PROM_STREAM_DEPTH)
            return fail(ps, "the answer nests deeper than 32 levels");
        unsigned char kind = c == '{' ? 'o' : 'a';
        if (on_open(ps, kind) != 0)
            return -1;
        ps->kind[ps->depth] = kind;
        ps->want_key[ps->depth] = G_START;
        ps->depth++;
        return 0;
    }
    case '}':
    case ']': {
        unsigned char kind = c == '}' ? 'o' : 'a';
        if (ps->depth == 0 || ps->kind[ps->depth - 1] != kind)
            return fail(ps, "the answer is not JSON (a close that matches no open)");
        unsigned char g = ps->want_key[ps->depth - 1];
        if (g != G_START && g != G_NEXT)
            return fail(ps, "the answer is not JSON (a member without its value)");
        if (on_close(ps) != 0)
            return -1;
        ps->depth--;
        value_ends(ps);
        return 0;
    }
    case ':':
        if (ps->depth == 0 || ps->want_key[ps->depth - 1] != G_COLON)
            return fail(ps, "the answer is not JSON (a ':' out of place)");
        ps->want_key[ps->depth - 1] = G_VALUE;
        return 0;
    case ',':
        if (ps->depth == 0 || ps->want_key[ps->depth - 1] != G_NEXT)
            return fail(ps, "the answer is not JSON (a ',' out of place)");
        ps->want_key[ps->depth - 1] = ps->kind[ps->depth - 1] == 'o' ? G_KEY : G_VALUE;
        return 0;
    default:
        return fail(ps, "the answer is not JSON");
    }
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool lit_char(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
           c == '+' || c == '.';
}

int prom_stream_feed(struct prom_stream *ps, const char *p, size_t n)
{
    if (ps->failed)
        return -1;
    size_t i = 0;
    while (i < n) {
        char c = p[i];
        switch (ps->lex) {
        case LEX_WS:
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                i++;
            } else if (ps->done) {
                return fail(ps, "the answer goes on after its end");
            } else if (c == '"') {
                ps->lex = LEX_STR;
                ps->tok_len = 0;
                ps->tok[0] = '\0';
                ps->hi_surrogate = 0;
                i++;
            } else if (lit_char(c)) {
                ps->lex = LEX_LIT;
                ps->tok_len = 0;
                ps->tok[0] = '\0';
            } else {
                if (structural(ps, c) != 0)
                    return -1;
                i++;
            }
            break;
        case LEX_STR: {
            /* a run of plain bytes at once */
            size_t j = i;
            while (j < n && p[j] != '"' && p[j] != '\\' && (unsigned char)p[j] >= 0x20)
                j++;
            if (j > i) {
                if (ps->hi_surrogate)
                    return fail(ps, "the answer is not JSON (a lone surrogate)");
                if (tok_put(ps, p + i, j - i) != 0)
                    return -1;
                i = j;
                break;
            }
            if (c == '"') {
                ps->lex = LEX_WS;
                i++;
                if (string_done(ps) != 0)
                    return -1;
            } else if (c == '\\') {
                ps->lex = LEX_ESC;
                i++;
            } else {
                return fail(ps, "the answer is not JSON (a control character in a string)");
            }
            break;
        }
        case LEX_ESC: {
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            const char *at = c ? strchr(from, c) : NULL;
            i++;
            if (c == 'u') {
                ps->lex = LEX_HEX;
                ps->esc_code = 0;
                ps->esc_digits = 0;
                break;
            }
            if (!at)
                return fail(ps, "the answer is not JSON (an unknown escape)");
            if (ps->hi_surrogate)
                return fail(ps, "the answer is not JSON (a lone surrogate)");
            if (tok_put(ps, &to[at - from], 1) != 0)
                return -1;
            ps->lex = LEX_STR;
            break;
        }
        case LEX_HEX: {
            int h = hexval(c);
            if (h < 0)
                return fail(ps, "the answer is not JSON (a \\u escape)");
            ps->esc_code = ps->esc_code * 16 + (unsigned)h;
            i++;
            if (++ps->esc_digits < 4)
                break;
            ps->lex = LEX_STR;
            unsigned cp = ps->esc_code;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (ps->hi_surrogate)
                    return fail(ps, "the answer is not JSON (a lone surrogate)");
                ps->hi_surrogate = cp;
                break;
            }
            if (cp >= 0xDC00 && cp <= 0xDFFF) {
                if (!ps->hi_surrogate)
                    return fail(ps, "the answer is not JSON (a lone surrogate)");
                cp = 0x10000 + ((ps->hi_surrogate - 0xD800) << 10) + (cp - 0xDC00);
                ps->hi_surrogate = 0;
            } else if (ps->hi_surrogate) {
                return fail(ps, "the answer is not JSON (a lone surrogate)");
            }
            if (put_cp(ps, cp) != 0)
                return -1;
            break;
        }
        case LEX_LIT: {
            size_t j = i;
            while (j < n && lit_char(p[j]))
                j++;
            if (tok_put(ps, p + i, j - i) != 0)
                return -1;
            i = j;
            if (j < n) { /* the literal ended before p[j] */
                ps->lex = LEX_WS;
                if (literal_done(ps) != 0)
                    return -1;
            }
            break;
        }
        default:
            return fail(ps, "internal error");
        }
    }
    return 0;
}

static int end_raw(struct prom_stream *ps, long http_code, char *err, size_t errlen);

int prom_stream_end(struct prom_stream *ps, long http_code, char *err, size_t errlen)
{
    int rc = end_raw(ps, http_code, err, errlen);
    if (rc != 0) /* Prometheus' own words, or a proxy's: another host's text */
        text_clean(err, errlen);
    return rc;
}

static int end_raw(struct prom_stream *ps, long http_code, char *err, size_t errlen)
{
    if (!ps->failed && ps->lex == LEX_LIT) { /* a bare literal ends at the end */
        ps->lex = LEX_WS;
        literal_done(ps);
    }
    if (!ps->failed && ps->status[0] && strcmp(ps->status, "success") != 0) {
        snprintf(err, errlen, "HTTP %ld: %.400s", http_code,
                 ps->error[0] ? ps->error : "no \"status\": \"success\"");
        return -1;
    }
    if (ps->failed) {
        snprintf(err, errlen, "HTTP %ld: %s", http_code, ps->why);
        return -1;
    }
    if (!ps->done || ps->lex != LEX_WS) {
        snprintf(err, errlen, "HTTP %ld: the answer ends before its JSON does", http_code);
        return -1;
    }
    if (strcmp(ps->status, "success") != 0) {
        snprintf(err, errlen, "HTTP %ld: %.400s", http_code,
                 ps->error[0] ? ps->error : "no \"status\": \"success\"");
        return -1;
    }
    if (strcmp(ps->result_type, "vector") != 0 || !ps->saw_result) {
        snprintf(err, errlen, "answer is not an instant vector (resultType %.40s)",
                 ps->result_type[0] ? ps->result_type : "missing");
        return -1;
    }
    return 0;
}
