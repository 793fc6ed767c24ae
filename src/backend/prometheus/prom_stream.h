/*
 * prom_stream.h — an instant query's answer read as it arrives: each
 * series of the vector is handed to a callback as soon as its closing
 * brace is read, and then forgotten. Nothing of the answer is kept but
 * the series being read (bounded: PROM_ITEM_LABELS labels, PROM_ITEM_BYTES
 * of their text), so what a fleet view holds grows with what it keeps from
 * the series, never with the answer's size.
 *
 * The answer is Prometheus' HTTP API envelope
 * ({"status": "success", "data": {"resultType": "vector", "result": [...]}},
 * or {"status": "error", "errorType": ..., "error": ...}); its members may
 * come in any order and unknown ones ("warnings", "infos", "stats",
 * VictoriaMetrics' "isPartial") are skipped. Any JSON is read (every
 * escape, nesting up to PROM_STREAM_DEPTH); a series whose shape is not
 * {"metric": {"name": "value", ...}, "value": [time, "value"]} ends the
 * read with an error. Pure: no I/O; fed by the HTTP client (prom_client.h).
 */
#ifndef MIGMON_PROM_STREAM_H
#define MIGMON_PROM_STREAM_H

#include <stdbool.h>
#include <stddef.h>

#define PROM_ITEM_LABELS 64
#define PROM_ITEM_BYTES 65536
#define PROM_STREAM_DEPTH 32

/* One series: its labels and its sample. Every string is borrowed, valid
 * during the callback only; a label Prometheus did not send is absent. */
struct prom_item {
    size_t nlab;
    const char *key[PROM_ITEM_LABELS];
    const char *val[PROM_ITEM_LABELS];
    const char *value; /* the sample's value as written ("0.5", "NaN"); NULL: none */
    double t;          /* the sample's time (Unix seconds); 0 none */
};

/* Label k of it, "" when it has none. */
const char *prom_item_label(const struct prom_item *it, const char *k);
/* The sample's value; false when it has none or it is not a finite number. */
bool prom_item_value(const struct prom_item *it, double *out);

/* Called for every series, in the answer's order; a non-zero return stops
 * the read (prom_stream_feed then returns -1 with the callback's why). */
typedef int (*prom_item_fn)(void *ctx, const struct prom_item *it);

/* Internal state; in the caller's memory, no allocation but its buffer. */
struct prom_stream {
    prom_item_fn fn;
    void *ctx;
    /* the tokenizer */
    int lex;             /* what it is in the middle of (prom_stream.c) */
    unsigned esc_code;   /* \uXXXX being read */
    int esc_digits;
    unsigned hi_surrogate; /* a high surrogate waiting for its low half */
    char *tok;           /* the string or number being read */
    size_t tok_len, tok_cap;
    int depth;
    unsigned char kind[PROM_STREAM_DEPTH]; /* 'o' object, 'a' array */
    unsigned char want_key[PROM_STREAM_DEPTH];
    /* where the reader is: the member names of the levels that matter */
    char key1[16], key2[16], key4[16]; /* the envelope's, data's, the series' member */
    int pending_key;                  /* a key read, its value not yet */
    /* the envelope's scalars */
    char status[16], result_type[16], error[512], error_type[64];
    bool in_result, saw_result;
    long nitems;
    /* the series being read */
    struct prom_item item;
    char *arena; /* PROM_ITEM_BYTES */
    size_t arena_len;
    int value_pos; /* position in "value": [t, v] */
    bool item_bad;
    char why[256]; /* why the read failed; "" while it has not */
    bool failed, done;
};

/* fn, ctx: the callback. 0, or -1 out of memory. */
int prom_stream_init(struct prom_stream *ps, prom_item_fn fn, void *ctx);
/* n more bytes of the answer. 0, or -1 when the read has failed (the
 * callback stopped it, the JSON is broken or not an instant vector's
 * envelope); prom_stream_end then says why. */
int prom_stream_feed(struct prom_stream *ps, const char *p, size_t n);
/* The answer has ended (http_code: the HTTP status). 0 when it was a
 * whole "success" of resultType "vector"; -1 with one line in err
 * otherwise (Prometheus' own error message where it sent one). */
int prom_stream_end(struct prom_stream *ps, long http_code, char *err, size_t errlen);
/* Series read so far. */
long prom_stream_items(const struct prom_stream *ps);
void prom_stream_free(struct prom_stream *ps);

#endif
