/*
 * prom_query.h — the PromQL the fleet view asks, built for the part of the
 * fleet wanted: the node round (every target and its aggregates, computed
 * by Prometheus with `by (instance)`), and the devices of a set of nodes.
 * The device filter (key /) and --prometheus-match become label matchers
 * and set operations in the queries, so what comes back is sized to what
 * is shown, never to the fleet.
 *
 * Every text from outside (a filter word, an instance, a --prometheus-match
 * value) is escaped for a PromQL string and, where it is matched as a
 * regular expression, for RE2 first: it is matched literally.
 * Pure: strings in, strings out (docs/fleet.md lists the queries).
 */
#ifndef MIGMON_PROM_QUERY_H
#define MIGMON_PROM_QUERY_H

#include <stdbool.h>
#include <stddef.h>

/* --prometheus-match: at most this many matchers; the filter: words. */
#define PROMQ_MATCHERS_MAX 16
#define PROMQ_WORDS_MAX 6
#define PROMQ_WORD_LEN 48

/* The queries of a node round. Each answers series by instance, tagged:
 * "a" the aggregation (up, name, last; count, sum, max, worst, pods), "f"
 * the family counted, summed or taken the maximum of (prom_nodes.c). */
enum promq_node {
    PQ_TARGETS,     /* each target's up, name and last sample */
    PQ_SUMMARY,     /* the nodes' own totals (migmon_node_*), by __name__ and instance;
                     * under a filter, which nodes give them */
    PQ_LEAVES,      /* our exporters' nodes over their leaves: MIG instances, idle,
                     * utilisation, VRAM, instances not ok */
    PQ_GPUS,        /* over their GPUs: GPUs, GPUs not ok and by worst verdict, pods */
    PQ_DCGM_LEAVES, /* dcgm-exporter's nodes (those without our series): the leaves */
    PQ_DCGM_GPUS,   /* their GPUs, pods (no health verdict) */
    PQ_COUNT
};

/* The queries of a node's devices (as struct fleet reads them). */
enum promq_detail {
    PD_IDENT,       /* migmon_*_info and the last sample time */
    PD_VALUES,      /* the migmon_* values */
    PD_DCGM_IDENT,  /* dcgm-exporter's devices */
    PD_DCGM_VALUES, /* its values */
    PD_PROCS,       /* the migmon_process_* values */
    PD_COUNT
};

/* Nodes named by their instance labels (borrowed). */
struct promq_nodes {
    const char *const *inst;
    size_t n;
};

/*
 * What every query is limited to: match, the matchers of --prometheus-match
 * as promq_match_parse wrote them ("" none); filter, the device filter's
 * words ("" none; at most PROMQ_WORDS_MAX, each cut at PROMQ_WORD_LEN
 * bytes: promq_filter_check says whether a filter fits); wnodes[w], the
 * nodes whose name (or instance) has word w of the filter (promq_words):
 * a word matches a device of theirs by its node's name; legacy, the nodes
 * whose exporters give no summary (PQ_SUMMARY named none of theirs: a
 * dcgm-exporter, an older migmon), or legacy_all when that is not known.
 * Without a filter the aggregates (PQ_LEAVES .. PQ_DCGM_GPUS) are asked
 * of the legacy nodes alone, the others' figures being their summaries;
 * under a filter of every node, the legacy ones judged idle by the rule
 * itself rather than by their exporters' migmon_*_idle.
 */
struct promq_scope {
    const char *match;
    const char *filter;
    struct promq_nodes wnodes[PROMQ_WORDS_MAX];
    struct promq_nodes legacy;
    bool legacy_all;
};

/* Whether query q is to be asked at all: not the aggregates of a round
 * with no filter and no legacy node. */
bool promq_node_wanted(enum promq_node q, const struct promq_scope *sc);

/* A node round's query q, in a new string (free), or NULL (no memory).
 * down[0..ndown): the instances of the targets that are down (the targets
 * query tells), whose devices are those of the last 10 minutes; PQ_TARGETS
 * takes none. */
char *promq_node(enum promq_node q, const struct promq_scope *sc, const char *const *down,
                 size_t ndown);
/*
 * The devices of the nodes named by their instance labels: up[0..nup)
 * as they are now, down[0..ndown) (targets that are down) as they were in
 * the last 10 minutes. A new string, or NULL (no memory, or no node).
 */
char *promq_detail(enum promq_detail q, const struct promq_scope *sc, const char *const *up,
                   size_t nup, const char *const *down, size_t ndown);

/*
 * --prometheus-match SELECTOR: `{job="gpu",cluster=~"a|b"}` (the braces
 * optional; strings in double or single quotes, Go's escapes) checked and
 * written again into out as `job="gpu",cluster=~"a|b"`. A label name is
 * [a-zA-Z_][a-zA-Z0-9_]*; the operators =, !=, =~, !~; __name__ is
 * refused (the queries name their series). 0, or -1 with one line in err.
 */
int promq_match_parse(const char *sel, char *out, size_t cap, char *err, size_t errlen);

/* Whether a device filter can be asked of Prometheus as it is: 0, or -1
 * with why in err (too many words, a word too long). */
int promq_filter_check(const char *filter, char *err, size_t errlen);
/* The filter's words, as the queries take them, into words[0..max); how
 * many (0 for a filter promq_filter_check refuses). */
size_t promq_words(const char *filter, char words[][PROMQ_WORD_LEN + 1], size_t max);

/* s with RE2's metacharacters escaped (Go's regexp.QuoteMeta), into out
 * of cap bytes; cut at a whole character. Returns the length written. */
size_t promq_regex_quote(char *out, size_t cap, const char *s);

#endif
