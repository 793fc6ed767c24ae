/*
 * jsonw.h — a tiny streaming JSON writer onto a FILE *.
 *
 * Why not jansson: the exporters write one document per tick and must not
 * allocate in the steady state; a streaming writer with a fixed nesting stack
 * does that in ~150 lines, and jq parses every output in the tests.
 * Commas are placed automatically; the caller only opens, keys and closes.
 *
 * The text is gathered in the writer's own buffer and handed to the FILE
 * in blocks (stdio's per-call cost was most of a recording's): it reaches
 * the FILE when the buffer fills, at jsonw_end and at jsonw_flush, so a
 * caller writes nothing to the FILE itself between jsonw_init and those.
 * A writer is used by one thread (it lives on that thread's stack).
 */
#ifndef MIGMON_JSONW_H
#define MIGMON_JSONW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/model.h"

#define JSONW_MAX_DEPTH 16
#define JSONW_BUF 4096

struct jsonw {
    FILE *f;        /* borrowed */
    int depth;
    bool first[JSONW_MAX_DEPTH]; /* no member written yet at this level */
    bool after_key;              /* a key was written; next value needs no comma */
    bool pretty;
    size_t n;                    /* bytes in buf not yet handed to f */
    char buf[JSONW_BUF];
};

void jsonw_init(struct jsonw *w, FILE *f, bool pretty);
void jsonw_obj_open(struct jsonw *w);
void jsonw_obj_close(struct jsonw *w);
void jsonw_arr_open(struct jsonw *w);
void jsonw_arr_close(struct jsonw *w);
void jsonw_key(struct jsonw *w, const char *key);
void jsonw_str(struct jsonw *w, const char *s);   /* NULL writes null */
void jsonw_null(struct jsonw *w);
void jsonw_bool(struct jsonw *w, bool b);
void jsonw_int(struct jsonw *w, int64_t v);
void jsonw_uint(struct jsonw *w, uint64_t v);
/* Finite doubles with up to 6 significant decimals, trailing zeros trimmed;
 * NaN and infinities (not JSON) are written as null. */
void jsonw_double(struct jsonw *w, double v);
/* jsonw_double's text of a finite v that is not an integer, into buf (64
 * bytes): for the tests. */
void jsonw_fixed6(char *buf, double v);
/* {"value": v|null, "source": "...", "reason": "..."?} */
void jsonw_metric(struct jsonw *w, const struct metric *m);
/* Finish the document with a newline, and hand what is buffered to the
 * FILE. */
void jsonw_end(struct jsonw *w);
/* Hand what is buffered to the FILE (a document that ends without
 * jsonw_end). */
void jsonw_flush(struct jsonw *w);

#endif
