/*
 * fleet_view.h — the fleet's device list (the fleet view, view.h): a row
 * per node in the order chosen (key o), the node's devices under it when
 * it is open and they were read, a row that says they are coming (or why
 * not) when they were not; what the list wants read, so that only the
 * nodes on screen have their devices asked of Prometheus
 * (backend_view_ask). No curses calls; UI thread only.
 */
#ifndef MIGMON_TUI_FLEET_VIEW_H
#define MIGMON_TUI_FLEET_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "tui/view.h"

/* Recompute for this snapshot: each device's node (v->dnode), the nodes'
 * order (v->norder), what the device filter leaves (v->dshow), the
 * devices' order within their nodes (v->dorder). */
void tui_fleet_refresh(struct tui_view *v);
/* The node (its index in snap->nodes) of device i; SIZE_MAX none. */
size_t tui_fleet_dev_node(const struct tui_view *v, size_t i);
/* Node k is open: folded or unfolded by the user, else open when the
 * fleet has at most FLEET_OPEN_NODES_MAX nodes. */
bool tui_fleet_node_open(const struct tui_view *v, size_t k);
void tui_fleet_node_fold_set(struct tui_view *v, size_t k, enum tui_fold f);
/* A fleet GPU's fold state, kept by its node and UUID. */
enum tui_fold tui_fleet_gpu_fold(const struct tui_view *v, const struct device *d);
void tui_fleet_gpu_fold_set(struct tui_view *v, const struct device *d, enum tui_fold f);
/* Rows of the list with every automatic GPU unfolded (returned) and with
 * every one folded (*base). */
size_t tui_fleet_count_rows(const struct tui_view *v, size_t *base);
/* v->drow for a list of `room` rows (0: unlimited): automatic GPUs
 * unfolded when everything fits, else the selected device's GPU and then
 * the others in order while they fit. */
void tui_fleet_build_rows(struct tui_view *v, int room);
/* The nodes whose devices the list wants read, their instance labels into
 * out[0..max) (borrowed from the snapshot): every node of a fleet of at
 * most FLEET_OPEN_NODES_MAX nodes; else the open nodes whose rows are on
 * screen or a screen away, and the selected node. Returns how many. */
size_t tui_fleet_wanted(const struct tui_view *v, const char **out, size_t max);
/* Where the selection is among the fleet's devices (its nodes' counts, in
 * the list's order), for the footer's [i/n]: *i 1-based, 0 none. */
void tui_fleet_position(const struct tui_view *v, size_t *i, size_t *n);
/* The selected node's summary, when the selection is on a node's row (or
 * the row waiting for its devices); NULL otherwise. */
const struct node_summary *tui_fleet_selected_node(const struct tui_view *v);

#endif
