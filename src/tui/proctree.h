/*
 * proctree.h — the process tree (key t), as nvitop and htop draw one: a
 * list's GPU processes under their parents, per slice (a heading for each
 * MIG device, AMD partition or GPU, which Enter folds), the parents that
 * hold no GPU memory read from /proc by the UI thread, once per snapshot
 * shown, at the PIDs the procfs at --proc-root uses (docs/tui.md).
 *
 * Truth: a parent is only what /proc says now. A process whose stat cannot
 * be read (not visible from this PID namespace, exited), another node's
 * (a fleet's), a recording's, or whose parent's stat cannot be read or
 * started after it (its PID is another process's now), hangs under a
 * "parent unknown" line that says why; nothing is made up.
 */
#ifndef MIGMON_TUI_PROCTREE_H
#define MIGMON_TUI_PROCTREE_H

#include <stdbool.h>
#include <stddef.h>

#include "tui/view.h"

/* Parents followed up from a process at most; past that "parent unknown". */
#define TUI_PROCTREE_DEPTH 16

/* v->plines from v->rows (sorted): a heading per slice in the device list's
 * order, under it its processes' trees, siblings in the order of their
 * first process in v->rows (the sort key's). */
void tui_proctree_build(struct tui_view *v);
/* Fold or unfold the slice of the line under the cursor (its heading
 * becomes the cursor's line); false when the list has no such line. */
bool tui_proctree_toggle_fold(struct tui_view *v);
bool tui_proctree_folded(const struct tui_view *v, size_t dev);
/* Why a "parent unknown" line's parents are not known (its idx): in a
 * sentence, and in the line's few words. */
const char *tui_proctree_why(size_t why);
const char *tui_proctree_why_short(size_t why);
/* The guides before line l's text ("│  ├─ "), in the view's glyphs. */
void tui_proctree_guides(char *out, size_t len, const struct tui_view *v,
                         const struct tui_pline *l);
/* A heading's text: "▾ MIG 0/1 2g.35gb GI 5 CI 0  2 processes". */
void tui_proctree_heading(char *out, size_t len, const struct tui_view *v,
                          const struct tui_pline *l);
/* Free what the tree holds in the view (its scratch and its parents). */
void tui_proctree_free(struct tui_view *v);

#endif
