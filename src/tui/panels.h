/*
 * panels.h — the screen of the interactive monitor, drawn from one snapshot
 * and the history rings. The state here is what the user chose (selection,
 * scroll, pause, overlays); tui.c owns the loop and feeds the data.
 */
#ifndef MIGMON_TUI_PANELS_H
#define MIGMON_TUI_PANELS_H

#include <stdbool.h>
#include <stddef.h>

#include "history.h"
#include "snapshot.h"
#include "tui/layout.h"
#include "tui/theme.h"

enum proc_sort { PSORT_MEMORY = 0, PSORT_SM, PSORT_CPU, PSORT_PID, PSORT_COUNT };

#define TUI_PROC_ROWS_MAX 512

enum tui_modal {
    MODAL_NONE = 0,
    MODAL_HELP,
    MODAL_PROC_DETAIL,  /* full command line of the selected process */
    MODAL_KILL_CONFIRM, /* "send SIGTERM to PID n? y/n" */
};

struct tui_view {
    struct tui_theme theme;
    unsigned interval_ms;
    const char *demo_label; /* "DEMO h200-mig" in the header, or NULL */

    /* data, borrowed for one draw */
    const struct snapshot *snap;
    const struct history *hist;
    size_t hist_age; /* chart offset: ticks recorded since the display froze */

    /* selection: the UUID is the identity; sel is its position this tick */
    char sel_uuid[MIGMON_UUID_LEN];
    size_t sel;
    int dev_scroll; /* first device row shown */

    bool paused;
    enum tui_modal modal;
    bool proc_focus;      /* arrows move in the process list */
    bool gpm_page;        /* the detail panel shows every GPM metric (key g) */
    size_t proc_sel;      /* row in the sorted process list */
    enum proc_sort psort;
    uint32_t proc_sel_pid; /* the PID the process cursor is on */
    char status[256];     /* one-line message in the footer; "" none */
    /* The process popup: the whole command line, read from /proc when the
     * popup opens (a snapshot keeps only its first PROC_CMD_LEN bytes);
     * owned by the view, freed by tui_view_free_cmdline. */
    char *full_cmd;
    size_t full_cmd_len;
    int cmd_scroll; /* first wrapped line shown */

    struct tui_layout lay;
    /* filled by the draw: process rows of the selected device, sorted */
    size_t nrows;
    size_t rows[TUI_PROC_ROWS_MAX];
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
/* Move the selection by delta devices (clamped) or to the first/last. */
void tui_view_select(struct tui_view *v, long delta);
void tui_view_select_abs(struct tui_view *v, size_t index);
/* Device at screen row y in the devices panel, or -1. */
long tui_view_device_at(const struct tui_view *v, int y, int x);
/* Sort the selected device's processes into v->rows by v->psort. */
void tui_view_sort_procs(struct tui_view *v);

/* The process under the cursor of the process list, or NULL. */
const struct gpu_process *tui_view_selected_proc(const struct tui_view *v);
/* The device has PCIe throughput figures (the PCIe chart is shown). */
bool tui_device_has_pcie(const struct device *d);

/* Draw everything into win (erase first). */
void tui_draw(WINDOW *win, struct tui_view *v);

#endif
