/*
 * prom_query_int.h — what prom_query.c and prom_query_detail.c share: a
 * growing string, the escaping of names into it, and the state of one
 * query being built. Not for other modules.
 */
#ifndef MIGMON_PROM_QUERY_INT_H
#define MIGMON_PROM_QUERY_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/prometheus/prom_query.h"

/* A growing string; bad after a failed allocation (pq_done gives NULL). */
struct sb {
    char *p;
    size_t len, cap;
    bool bad;
};

void pq_put(struct sb *b, const char *s);
void pq_putf(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The string (the caller's: free), or NULL when it went bad. */
char *pq_done(struct sb *b);
/* A regular expression as a PromQL string literal, with its quotes. */
void pq_put_re(struct sb *b, const char *re);
/* `instance=~"a|b"` for the nodes (their names matched literally). */
void pq_instances(struct sb *b, const char *const *inst, size_t n);

/* One query being built. */
struct q {
    struct sb b;
    const char *match; /* --prometheus-match's matchers, "" none */
    /* `instance=~"…"` of the targets that are down (their devices are
     * those of the last 10 minutes), "" when none is */
    const char *down;
    size_t nwords;
    char words[PROMQ_WORDS_MAX][PROMQ_WORD_LEN + 1];
    bool idle[PROMQ_WORDS_MAX]; /* the word is "idle": a rule, not a text */
    /* `instance=~"…"` of the nodes whose name has word w, "" none */
    char *wnodes[PROMQ_WORDS_MAX];
    bool any_idle, any_text;
    /* `instance=~"…"` of the nodes whose exporters give no summary
     * (migmon_node_*, migmon_*_idle), "" none; legacy_all: every node is
     * read so (the summaries are not known) */
    char *legacy;
    bool legacy_all;
    bool only_legacy; /* sel limits every selector to the legacy nodes */
};

/* name{extra,match}: name may be "" (extra then names the series). */
void pq_sel(struct q *q, const char *name, const char *extra);

#endif
