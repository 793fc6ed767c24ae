/*
 * proctable.h — a process list drawn as a table: the device's process
 * panel (panels.c) and the all-processes view (allprocs.c) are two column
 * sets of it. Columns are as wide as what they hold this frame (at least
 * their minimum), the column the list is sorted by is marked in the header
 * (▼ largest or last first, ▲ smallest or first first; v ^ in ASCII) and
 * shown even when the set leaves it out otherwise, columns give way in the
 * set's order while the command would get fewer columns than the set's
 * minimum (never the sorted one), the command is scrolled sideways by v->cmd_hoff columns,
 * and the tree's lines (key t: headings, parents, "parent unknown") are
 * drawn with their guides. The lines are v->plines, the cursor v->proc_sel,
 * the first line shown v->proc_scroll.
 */
#ifndef MIGMON_TUI_PROCTABLE_H
#define MIGMON_TUI_PROCTABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "tui/rect.h"
#include "tui/view.h"

enum tui_pcol {
    PC_PID,
    PC_USER,
    PC_TYPE,
    PC_DEV,  /* the slice's ID: "0/1" (a fleet's: "h200:0/1") */
    PC_GICI, /* NVIDIA's GPU/compute instance ids: shown where a row is on a MIG device */
    PC_VRAM,
    PC_SM,
    PC_CPU,
    PC_RSS,
    PC_TIME,
    PC_CMD, /* always last */
    PC_COUNT
};

/* When a column of a set is shown. */
enum tui_pcol_when {
    PW_ALWAYS = 0,
    PW_SORTED, /* when the list is sorted by it */
    PW_SLICES, /* when a line is on a MIG device or an AMD partition, or on
                * the GPU of some */
    PW_NVMIG,  /* when a line is on an NVIDIA MIG device or MIG-enabled GPU */
};

struct tui_pcol_spec {
    unsigned char col;  /* enum tui_pcol */
    unsigned char minw; /* columns at least */
    unsigned char maxw; /* cells cut to this many columns; 0 no limit */
    unsigned char when; /* enum tui_pcol_when */
};

struct tui_ptable {
    const struct tui_pcol_spec *cols; /* left to right, PC_CMD last */
    size_t ncols;
    const unsigned char *drop; /* the columns that give way, first to last */
    size_t ndrop;
    int cmd_min; /* ... while the command would get fewer columns than this */
};

/* Draw the header line at in's first row and the lines below it from
 * v->proc_scroll (kept so that the cursor's line is shown when cursor);
 * the cursor's line drawn selected when cursor. */
void tui_ptable_draw(WINDOW *win, struct tui_view *v, struct rect in, const struct tui_ptable *t,
                     bool cursor);
/* The line at window row y of a table drawn in in, or -1 (the header, past
 * the last line, outside). */
long tui_ptable_line_at(const struct tui_view *v, struct rect in, int y, int x);

#endif
