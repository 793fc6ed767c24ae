/*
 * prom_node.h — the node's own figures on the exporter's page
 * (prom_node.c): each leaf's idleness and the node's totals, what a
 * fleet's view reads of a node instead of its devices' series.
 */
#ifndef MIGMON_PROM_NODE_H
#define MIGMON_PROM_NODE_H

#include "export/prom_text.h"

/* migmon_gpu_idle, migmon_mig_idle and the migmon_node_* families, after
 * the devices' label sets are made (prom.c's build_labels). */
void prom_node_write(struct prom_ctx *c);

#endif
