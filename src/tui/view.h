/*
 * view.h — the view of the interactive monitor: what the user chose
 * (selection, folds, scroll, the process cursor, pause, popups, filter) and
 * what the last draw computed (the device list as shown, the process rows),
 * with the movement over them. Every pane reads it; tui.c's keys change it;
 * panels.c's draw fills it. No curses calls and no drawing here.
 */
#ifndef MIGMON_TUI_VIEW_H
#define MIGMON_TUI_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/history.h"
#include "core/snapshot.h"
#include "tui/fleet_ui.h"
#include "tui/layout.h"
#include "tui/theme.h"

/* Process sort keys (s, S cycle them; r reverses): proclist.h's. */
enum proc_sort {
    PSORT_MEMORY = 0,
    PSORT_SM,
    PSORT_CPU,
    PSORT_RSS,
    PSORT_TIME,
    PSORT_PID,
    PSORT_USER,
    PSORT_COMMAND,
    PSORT_DEVICE,
    PSORT_COUNT
};

/* Rows of a process list: the selected device's, or every device's in the
 * all-processes view (key a), which says when there were more. */
#define TUI_PROC_ROWS_MAX 4096
/* Lines of a process list: a row per process, or in the tree (key t) the
 * slices' headings, the processes and their parents. */
#define TUI_PROC_LINES_MAX 8192

/* A line of a process list (v->plines). */
enum tui_pline_kind {
    PL_PROC = 0, /* a GPU process: idx in snap->procs */
    PL_SLICE,    /* the tree: a slice's heading (its device) */
    PL_PARENT,   /* the tree: a CPU-only parent read from /proc: idx in v->tpar */
    PL_UNKNOWN,  /* the tree: "parent unknown", over the processes whose parent
                  * could not be read (idx: its reason, in tui_proctree_why) */
};
struct tui_pline {
    unsigned char kind;  /* enum tui_pline_kind */
    unsigned char depth; /* the tree: 0 a heading or a root, 1 a root's child, … */
    bool last;           /* the tree: the last of its siblings */
    uint32_t cont;       /* the tree: bit k set when the line's ancestor at
                          * depth k has siblings after it (a "│" there) */
    uint32_t n;  /* a heading: its slice's processes */
    size_t idx;
    size_t dev; /* the device (position in snap->devices) of its slice */
};

/* A process's parent as /proc says it (the tree, key t): read from the
 * UI thread once per snapshot shown (proctree.c). */
struct tui_tparent {
    uint32_t pid;
    bool ok;             /* its stat could be read */
    int64_t ppid;        /* -1 unknown */
    uint64_t start_time; /* clock ticks after boot */
    char comm[PROC_NAME_LEN];
};

enum tui_modal {
    MODAL_NONE = 0,
    MODAL_HELP,
    MODAL_PROC_DETAIL,  /* full command line of the selected process */
    MODAL_KILL_CONFIRM, /* "signal PID n: t TERM  i INT  k KILL  Esc" */
    MODAL_REASONS,      /* every N/A of the selected device with its full reason */
    MODAL_EVENTS,       /* the recent health events, newest first (key e) */
};

/* Collapse state of a GPU's MIG instances in the device list. */
enum tui_fold { FOLD_AUTO = 0, FOLD_OPEN, FOLD_CLOSED };
#define TUI_FOLD_MAX 1024 /* GPU indexes with a fold state of their own */
#define TUI_NODE_FOLD_MAX 256 /* fleet nodes (and their GPUs) with a fold state of their own */

/* A row of the device list (v->drow): a device's position in snap->devices,
 * or, in the fleet view, a node's row: TUI_DROW_NODE with the node's index
 * in snap->nodes; an open node whose devices have not been read has a row
 * that says so under it: TUI_DROW_WAIT with the node's index. */
#define TUI_DROW_NODE ((size_t)1 << (sizeof(size_t) * 8 - 1))
#define TUI_DROW_WAIT ((size_t)1 << (sizeof(size_t) * 8 - 2))
#define TUI_DROW_INDEX(e) ((e) & ~(TUI_DROW_NODE | TUI_DROW_WAIT))

/* Lower chart set, switched with c. */
enum tui_charts { CHARTS_ACTIVITY = 0, CHARTS_THERMAL, CHARTS_COUNT };

/*
 * The view: what the user chose (selection, scroll, folds, pause, overlays,
 * filter) and what the last draw computed. Owned by the UI thread alone
 * (tui.c's loop); the sampling engine never sees it.
 */
struct tui_view {
    struct tui_theme theme;
    unsigned interval_ms;
    const char *demo_label; /* "DEMO h200-mig" in the header, or NULL */
    const char *debug_path; /* --debug's file, shown in the header, or NULL */
    bool fahrenheit;        /* temperatures shown in °F (stored and coloured in °C) */

    /* data, borrowed for one draw */
    const struct snapshot *snap;
    const struct history *hist;
    size_t hist_age; /* chart offset: ticks recorded since the display froze */

    /* selection: the UUID is the identity; sel is its position this tick */
    char sel_uuid[MIGMON_UUID_LEN];
    size_t sel;
    int dev_scroll; /* first row of the device list shown */
    /* The device list as shown: positions in snap->devices, GPUs followed
     * by their instances unless folded. Rebuilt by every draw and by the
     * movement functions; owned (grown, never shrunk). */
    size_t *drow;
    size_t ndrow, drow_cap;
    int dev_room; /* device rows the last layout had room for; 0 unknown */
    unsigned char fold[TUI_FOLD_MAX]; /* enum tui_fold by GPU index */
    /* The fleet view (snap->fleet, fleet_view.h): the selection is on a
     * node's row (sel_node: node sel_nodei of snap->nodes, whose identity
     * is sel_inst, its instance) rather than on a device; a device's
     * identity is its node's name (sel_dnode) with its UUID. The nodes
     * the user folded or unfolded, by instance (a node is open when the
     * fleet is small, FLEET_OPEN_NODES_MAX, else folded); the fleet's GPUs
     * folded or unfolded, by node and UUID. The device filter (key /,
     * fleet_ui.h; Prometheus applies it to the nodes, the list to the
     * devices it has) and what it leaves shown, by position in
     * snap->devices (owned, rebuilt with the list; dshow_n entries); the
     * list's order (key o): norder the nodes' (owned; nnorder entries),
     * dorder the devices' within each node (owned; dorder_n entries, none
     * in node order); dnode each device's node (owned, dnode_n entries).
     * ask_sum: what was last asked of the backend (a checksum). */
    bool sel_node;
    size_t sel_nodei;
    char sel_inst[128];
    char sel_dnode[64];
    struct tui_node_fold {
        char node[128];
        unsigned char fold; /* enum tui_fold */
    } node_fold[TUI_NODE_FOLD_MAX];
    size_t nnode_fold;
    struct tui_gpu_fold {
        char node[64];
        char uuid[MIGMON_UUID_LEN];
        unsigned char fold; /* enum tui_fold */
    } gpu_fold[TUI_NODE_FOLD_MAX];
    size_t ngpu_fold;
    char dfilter[64];
    bool dfilter_edit;
    unsigned char *dshow;
    size_t dshow_n, dshow_cap, dshown;
    enum tui_fleet_sort dsort;
    size_t *dorder;
    size_t dorder_n, dorder_cap;
    size_t *norder;
    size_t nnorder, norder_cap;
    size_t *dnode;
    size_t dnode_n, dnode_cap;
    uint64_t ask_sum;
    /* digits typed to jump to a GPU: the number so far and when */
    int jump_num;
    uint64_t jump_ns;

    bool paused;
    enum tui_modal modal;
    bool proc_focus;      /* arrows move in the process list */
    bool all_procs;       /* key a: every device's processes in one list (allprocs.h) */
    bool gpm_page;        /* the detail panel shows every GPM metric (key g) */
    enum tui_charts charts; /* key c */
    size_t proc_sel;      /* line of the process list (v->plines) */
    int proc_scroll;      /* the first line shown (the last draw's) */
    enum proc_sort psort;
    bool psort_rev;       /* key r: the other way round */
    bool proc_tree;       /* key t: processes with their parents, per slice */
    int cmd_hoff;         /* keys <- ->: the commands scrolled sideways by as many columns */
    /* What the process cursor is on, kept across new lists: the kind of
     * line, its PID (0: none; a PID on a process or a parent), the UUID of
     * its slice (a heading, "parent unknown") */
    unsigned char proc_sel_kind;
    uint32_t proc_sel_pid;
    char proc_sel_uuid[MIGMON_UUID_LEN];
    /* The tree's folded slices, by node and UUID (the fleet's devices are
     * its nodes'); and its parents: read once per snapshot shown (snap_gen,
     * counted by tui_view_follow), owned, grown; a hash of PIDs into them. */
    struct tui_tfold {
        char node[64];
        char uuid[MIGMON_UUID_LEN];
    } tfold[64];
    size_t ntfold;
    struct tui_tparent *tpar;
    size_t ntpar, tpar_cap;
    uint32_t *tpar_idx; /* index + 1, 0 empty; tpar_idx_cap entries, a power of two */
    size_t tpar_idx_cap;
    unsigned long snap_gen, tpar_gen;
    void *tree_scratch; /* proctree.c's, owned */
    /* Where the processes' parents are read (--proc-root; NULL: /proc),
     * borrowed; procs_recorded: a recording's processes (replay), not this
     * host's, never looked up. */
    const char *proc_root;
    bool procs_recorded;
    /* process filter (key /): rows whose command, name or user contain it */
    char filter[64];
    bool filter_edit;     /* typing into the filter */
    char status[256];     /* one-line message in the footer; "" none */
    /* Replaying a recording: the footer's position bar (tui.c fills it). */
    struct tui_replay_bar {
        bool on, playing;
        double speed;
        int64_t wall_ns;      /* the shown snapshot's recorded wall clock */
        double frac;          /* where it is in from..to, 0..1 */
        unsigned long long pos, count; /* 1-based position among count */
        unsigned long long skipped;    /* lines skipped (garbage, a cut last line) */
    } replay;
    /* The process popup: the whole command line, read from /proc when the
     * popup opens (a snapshot keeps only its first PROC_CMD_LEN bytes);
     * owned by the view, freed by tui_view_free_cmdline. */
    char *full_cmd;
    size_t full_cmd_len;
    int cmd_scroll; /* first wrapped line shown (also the reasons and events popups) */

    struct tui_layout lay;
    /* filled by the draw: process rows of the selected device (for a MIG
     * parent, of all its instances too), or in the all-processes view of
     * every device, each process once; sorted; indexes in snap->procs.
     * nrows_total: the all-processes view's count before the cut at
     * TUI_PROC_ROWS_MAX. */
    size_t nrows, nrows_total;
    size_t rows[TUI_PROC_ROWS_MAX];
    /* the list's lines as shown: a line per row, or the tree's (key t);
     * nlines_cut: lines the tree had past TUI_PROC_LINES_MAX */
    size_t nlines, nlines_cut;
    struct tui_pline plines[TUI_PROC_LINES_MAX];
};

/* Read the selected process's whole command line into v->full_cmd (up to
 * the kernel's limit for what /proc shows, cleaned of controls); falls back
 * to the snapshot's shortened copy. */
void tui_view_load_cmdline(struct tui_view *v, const char *proc_root);
void tui_view_free_cmdline(struct tui_view *v);

/* Re-find the selected device by UUID in v->snap (selection follows the
 * device across re-enumeration; a vanished device leaves the cursor at the
 * same position). Call after every new snapshot. */
void tui_view_follow(struct tui_view *v);
/* Move the selection by delta rows of the device list as shown (clamped),
 * or select the device at position index in snap->devices. */
void tui_view_select(struct tui_view *v, long delta);
void tui_view_select_abs(struct tui_view *v, size_t index);
/* The first / last row of the device list; a page up or down. */
void tui_view_select_home(struct tui_view *v);
void tui_view_select_end(struct tui_view *v);
void tui_view_page(struct tui_view *v, int dir);
/* Fold or unfold the selected GPU's instances (on an instance: its GPU's,
 * and the GPU becomes the selection). In the fleet view, on a node row:
 * the node's GPUs; on a GPU without instances: its node's (the node row
 * becomes the selection). */
void tui_view_toggle_fold(struct tui_view *v);
/* A digit typed: jump to GPU n (digits typed within a second add up:
 * 1 then 2 is GPU 12 when there is one). now_ns: a monotonic clock. */
void tui_view_jump_digit(struct tui_view *v, int digit, uint64_t now_ns);
/* Rebuild v->drow for a list of `room` rows (0: unlimited): folded GPUs
 * hide their instances; GPUs in FOLD_AUTO are unfolded when everything
 * fits, else the selected device's GPU is and then the others in order
 * while they fit. */
void tui_view_build_rows(struct tui_view *v, int room);
/* Device rows the list takes with nothing folded but what the user folded:
 * the rows the layout is asked for. */
size_t tui_view_rows_wanted(struct tui_view *v);
/* Device (position in snap->devices) at screen row y in the devices panel,
 * or -1 (also on a node row). */
long tui_view_device_at(const struct tui_view *v, int y, int x);
/* A click at y, x: select the device or node row there; false when none. */
bool tui_view_select_at(struct tui_view *v, int y, int x);
/* The row of the selection in the list as built (v->drow); a selection
 * the list hides (in a folded GPU or node, or left out by the filter) is
 * moved to its GPU's row, else its node's; -1 when none is shown. */
long tui_view_place_sel(struct tui_view *v);
/* The fleet view: the snapshot is a fleet's (fleet_view.h). */
bool tui_view_fleet(const struct tui_view *v);
/* Sort the selected device's processes into v->rows by v->psort (in the
 * all-processes view every device's; the selection then follows the device
 * of the process under the cursor), and lay out their lines (v->plines: the
 * tree's with key t), the cursor kept on what it was on. */
void tui_view_sort_procs(struct tui_view *v);
/* The process cursor back to the first line, on nothing in particular. */
void tui_view_proc_unpin(struct tui_view *v);
/* Move the process cursor by delta lines, or to line k (clamped). */
void tui_view_proc_move(struct tui_view *v, long delta);
void tui_view_proc_goto(struct tui_view *v, size_t k);
/* The next (dir > 0) or previous sort key; the other way round (key r). */
void tui_view_sort_next(struct tui_view *v, int dir);
void tui_view_sort_reverse(struct tui_view *v);
/* The sort key's title: "VRAM", "VRAM, reversed". */
const char *tui_view_sort_title(char *out, size_t len, const struct tui_view *v);
/* Free what the view owns (the device list, the popup's command line). */
void tui_view_free(struct tui_view *v);

/* The process under the cursor of the process list, or NULL (also on a
 * tree's heading or a parent). */
const struct gpu_process *tui_view_selected_proc(const struct tui_view *v);
/* The node the selected process runs on in a fleet (--prometheus), else
 * NULL: its PID is that node's, not one to look up or signal here. */
const char *tui_view_selected_proc_node(const struct tui_view *v);

/* The selected device, or NULL. */
const struct device *tui_view_selected(const struct tui_view *v);

/* Row of device position i in the device list as shown (v->drow), or -1. */
long tui_view_row_of(const struct tui_view *v, size_t i);
/* The device tree of a snapshot, as the list shows it: the MIG instances
 * that follow GPU g (the backend lists each GPU's instances right after
 * it), whether device i is one of them, and the GPU (position) of device
 * i: itself, or its parent. */
size_t tui_dev_instances(const struct snapshot *s, size_t g);
bool tui_dev_is_instance_of(const struct snapshot *s, size_t i, size_t g);
size_t tui_dev_gpu_of(const struct snapshot *s, size_t i);

#endif
