/*
 * fleet_ui.h — the fleet's totals for the header (--prometheus): nodes,
 * GPUs, MIG instances and the idle ones, memory used, health not ok.
 */
#ifndef MIGMON_TUI_FLEET_UI_H
#define MIGMON_TUI_FLEET_UI_H

#include <stdbool.h>
#include <stddef.h>

#include "snapshot.h"

struct tui_fleet_totals {
    size_t nodes, nodes_down, gpus, mig, mig_idle;
    size_t not_ok;            /* GPUs and instances whose verdict is warning or action */
    double mem_used, mem_total; /* bytes: instances, and GPUs without instances */
    bool mem_known;           /* some device gave both */
};

/* False when s is no fleet (no device has a node). */
bool tui_fleet_totals(const struct snapshot *s, struct tui_fleet_totals *t);
/* The totals as a header text: long ("3 nodes (1 down)  10 GPUs  64 MIG,
 * 12 idle  VRAM 1.2/4.5 TiB  2 not ok") or short. */
void tui_fleet_summary(char *out, size_t len, const struct tui_fleet_totals *t, bool brief);

#endif
