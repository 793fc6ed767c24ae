/*
 * node_detail.h — the detail panel of a fleet's node row whose devices
 * have not been read (the fleet view): the node's aggregates as
 * Prometheus gave them.
 */
#ifndef MIGMON_TUI_NODE_DETAIL_H
#define MIGMON_TUI_NODE_DETAIL_H

#include "tui/view.h"

void tui_draw_node_detail(WINDOW *win, const struct tui_view *v, struct rect in,
                          const struct node_summary *n);

#endif
