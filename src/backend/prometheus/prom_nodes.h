/*
 * prom_nodes.h — a fleet's nodes from the node round's answers
 * (prom_query.h's PQ_*): every target, its name, whether it is up, and
 * what Prometheus aggregated over its devices. Pure: series in, node
 * summaries (model.h) out.
 */
#ifndef MIGMON_PROM_NODES_H
#define MIGMON_PROM_NODES_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/prometheus/prom_query.h"
#include "backend/prometheus/prom_stream.h"
#include "core/model.h"

/* Nodes held at most, whatever Prometheus answers: a fleet past it is
 * cut there, and says so (nodes_finish's why). */
#define FLEET_NODES_MAX 20000

struct node_raw;

struct node_table {
    struct node_summary *v; /* nodes_finish puts them in name order */
    struct node_raw *raw;   /* what the answers said of each, in v's order until finish */
    size_t n, cap;
    size_t *slot; /* by instance, open addressing over nslots */
    size_t nslots;
    bool full;    /* a node past FLEET_NODES_MAX was left out */
    bool nomem;
};

void nodes_init(struct node_table *t);
/* One series of query q's answer. Returns 0 (the callback's convention:
 * never stops the read; a node past the cap is counted as left out). */
int nodes_read(struct node_table *t, enum promq_node q, const struct prom_item *it);
/*
 * After the round: names (the host name, else the instance when none or
 * when two nodes share it), down times (now: Unix seconds), every figure
 * that did not come none with its reason; why[q] says why query q failed
 * (NULL: it answered). filter: the device filter the aggregates were
 * counted under ("" none): a node with no device it matches is left out
 * (a target never seen is kept when every word is in its instance). The
 * nodes in name order (then instance). *why_out: why the list is not
 * whole (static), NULL when it is.
 */
void nodes_finish(struct node_table *t, double now, const char *const why[PQ_COUNT],
                  const char *filter, const char **why_out);
/* After the targets query: the instances of the targets that are down
 * (borrowed from t) into out[0..max); how many. */
size_t nodes_down(const struct node_table *t, const char **out, size_t max);
/* After the summary query: the instances whose exporters gave no summary
 * (promq_scope's legacy; borrowed) into out[0..max); how many. */
size_t nodes_legacy(const struct node_table *t, const char **out, size_t max);
/* After the targets query: the instances whose instance label or host
 * name has word (ignoring case; borrowed) into out[0..max); how many. */
size_t nodes_with_word(const struct node_table *t, const char *word, const char **out,
                       size_t max);
/* The node of instance after nodes_finish, or NULL. */
struct node_summary *nodes_find(const struct node_table *t, const char *instance);
void nodes_free(struct node_table *t);

#endif
