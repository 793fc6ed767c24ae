/*
 * fleet_ui.h — the fleet view's own rules (--prometheus): the totals for
 * the header and the node rows (nodes, GPUs, MIG instances and the idle
 * ones, memory used, health not ok), and the device filter (key / in the
 * fleet's device list).
 */
#ifndef MIGMON_TUI_FLEET_UI_H
#define MIGMON_TUI_FLEET_UI_H

#include <stdbool.h>
#include <stddef.h>

#include "core/snapshot.h"

/* A fleet's totals, summed over its nodes' aggregates (struct
 * node_summary: Prometheus counted them, under the device filter when one
 * is on). idle: the idle leaves (MIG instances, partitions, GPUs without
 * either). A count a node could not give is left out and said: unknown
 * (the header writes what the others gave and "+", or "?"). */
struct tui_fleet_totals {
    size_t nodes, nodes_down, gpus, mig, idle;
    size_t not_ok;            /* GPUs and instances whose verdict is warning or action */
    double mem_used, mem_total; /* bytes: the leaves with both */
    bool mem_known;           /* some node gave both */
    bool idle_known;          /* every node up gave its idle count */
    bool gpus_known, mig_known; /* every node seen gave its count */
};

/* False when s is no fleet. */
bool tui_fleet_totals(const struct snapshot *s, struct tui_fleet_totals *t);
/* One node's. */
void tui_fleet_node_totals(const struct node_summary *n, struct tui_fleet_totals *t);
/* The totals as a header text: long ("3 nodes (1 down)  10 GPUs  64 MIG,
 * 12 idle  VRAM 1.2/4.5 TiB  2 not ok") or short. */
void tui_fleet_summary(char *out, size_t len, const struct tui_fleet_totals *t, bool brief);
/* VRAM used of total as the header writes it ("367.1/793.5 GiB"). */
void tui_fleet_bytes(char *out, size_t len, double used, double total);

/* Idle by the rule of device_idle (model.h); a device whose node is down,
 * or with no figure to judge by, is not idle (nothing is known of it). */
bool tui_fleet_idle(const struct device *d);
/* Whether device d (at position i of s) matches the device filter: every
 * word of it (words are split at spaces) must match. The word "idle"
 * matches an idle MIG instance and an idle GPU without instances
 * (tui_fleet_idle); any other word matches, case-insensitively, part of the
 * device's node, name (model), MIG profile, UUID or PCI bus id. An empty
 * filter matches everything. */
bool tui_fleet_match(const struct snapshot *s, size_t i, const char *filter);
/* What the list shows under the filter, into shown[0..s->ndevices): the
 * devices that match, and the GPU of every instance that matches (the tree
 * keeps its parents). Returns how many devices are shown. */
size_t tui_fleet_filter(const struct snapshot *s, const char *filter, unsigned char *shown);

/* The orders of the fleet's device list (key o). The tree stays a tree:
 * nodes are ordered by the key's aggregate over their devices, GPUs within
 * a node by theirs (the GPU's and its instances'), instances within a GPU
 * by their own. Busiest, most memory used, most idle, worst health first;
 * a device (or group) with no known value sorts after every known one, ties
 * keep the order Prometheus gave (node name, then GPU index). */
enum tui_fleet_sort {
    FSORT_NODE,   /* as Prometheus names the nodes; GPUs by index */
    FSORT_UTIL,   /* utilisation, a group by its maximum */
    FSORT_MEM,    /* memory used, a group by its maximum */
    FSORT_IDLE,   /* idle first, a group by how many idle devices it has */
    FSORT_HEALTH, /* action, warning, ok; a group by its worst */
    FSORT_COUNT
};
/* The word the list's title shows ("node", "util", "mem", "idle", "health"). */
const char *tui_fleet_sort_name(enum tui_fleet_sort k);
/* The devices' order within their nodes under key k: order[0..s->ndevices)
 * gets the positions in s->devices in the order they are to be shown; a
 * node's devices stay in the node's range (the nodes move by
 * tui_fleet_order_nodes). */
void tui_fleet_order(const struct snapshot *s, enum tui_fleet_sort k, size_t *order);
/* The nodes' order under key k, from their aggregates (struct
 * node_summary: every node of the fleet, whatever the monitor read of its
 * devices): order[0..s->nnodes) gets indexes into s->nodes. */
void tui_fleet_order_nodes(const struct snapshot *s, enum tui_fleet_sort k, size_t *order);

#endif
