/*
 * json_nodes.h — a fleet's nodes in the JSON snapshot (docs/json.md,
 * "nodes"): each scrape target with what Prometheus aggregated over its
 * devices (struct node_summary).
 */
#ifndef MIGMON_JSON_NODES_H
#define MIGMON_JSON_NODES_H

#include "core/snapshot.h"
#include "export/jsonw.h"

/* "nodes": [...] when s is a fleet's; nothing otherwise. */
void json_write_nodes(struct jsonw *w, const struct snapshot *s);

#endif
