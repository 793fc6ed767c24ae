/*
 * jsonw.h — a tiny streaming JSON writer onto a FILE *.
 *
 * Why not jansson: the exporters write one document per tick and must not
 * allocate in the steady state; a streaming writer with a fixed nesting stack
 * does that in ~150 lines, and jq parses every output in the tests.
 * Commas are placed automatically; the caller only opens, keys and closes.
 */
#ifndef MIGMON_JSONW_H
#define MIGMON_JSONW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/model.h"

#define JSONW_MAX_DEPTH 16

struct jsonw {
    FILE *f;        /* borrowed */
    int depth;
    bool first[JSONW_MAX_DEPTH]; /* no member written yet at this level */
    bool after_key;              /* a key was written; next value needs no comma */
    bool pretty;
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
/* Finish the document with a newline. */
void jsonw_end(struct jsonw *w);

#endif
