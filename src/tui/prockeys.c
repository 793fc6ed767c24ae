/*
 * prockeys.c — the keys of the process lists (the device's process panel
 * focused with p, the all-processes view) and the mouse outside popups
 * (prockeys.h).
 */
#include "tui/prockeys.h"

#include <stdio.h>

#include "tui/allprocs.h"
#include "tui/overlays.h"
#include "tui/panels.h"
#include "tui/proctree.h"

/* Columns the commands move sideways per <- or ->. */
#define HSCROLL_STEP 8

/* Enter on the process cursor's line: a process's whole command line, a
 * slice's heading folded or unfolded (the tree), what a parent is. */
static void proc_enter(struct tui_view *v)
{
    if (v->nlines == 0 || v->proc_sel >= v->nlines)
        return;
    const struct tui_pline *l = &v->plines[v->proc_sel];
    if (l->kind == PL_SLICE) {
        tui_proctree_toggle_fold(v);
        tui_view_sort_procs(v);
    } else if (l->kind == PL_PARENT && l->idx < v->ntpar) {
        snprintf(v->status, sizeof(v->status), "PID %u %s: a parent, without GPU memory",
                 (unsigned)v->tpar[l->idx].pid, v->tpar[l->idx].comm);
    } else if (l->kind == PL_UNKNOWN) {
        snprintf(v->status, sizeof(v->status), "parent unknown: %s", tui_proctree_why(l->idx));
    } else if (tui_view_selected_proc(v)) {
        v->modal = MODAL_PROC_DETAIL;
        /* a recorded PID, or a fleet node's, is no process of this host's */
        if (!v->procs_recorded && !tui_view_selected_proc_node(v))
            tui_view_load_cmdline(v, v->proc_root);
    }
}

bool tui_proc_key(struct tui_view *v, int key)
{
    int page = (v->all_procs ? v->lay.devices.h + v->lay.procs.h : v->lay.procs.h) - 3;
    long step = page > 1 ? page : 1;
    switch (key) {
    case KEY_DOWN:
    case 'j': tui_view_proc_move(v, 1); return true;
    case KEY_UP: tui_view_proc_move(v, -1); return true;
    case KEY_NPAGE: tui_view_proc_move(v, step); return true;
    case KEY_PPAGE: tui_view_proc_move(v, -step); return true;
    case KEY_HOME: tui_view_proc_goto(v, 0); return true;
    case KEY_END: tui_view_proc_goto(v, v->nlines ? v->nlines - 1 : 0); return true;
    case KEY_RIGHT:
        if (v->cmd_hoff + HSCROLL_STEP < PROC_CMD_LEN)
            v->cmd_hoff += HSCROLL_STEP;
        return true;
    case KEY_LEFT:
        v->cmd_hoff = v->cmd_hoff > HSCROLL_STEP ? v->cmd_hoff - HSCROLL_STEP : 0;
        return true;
    case '\n':
    case '\r':
    case KEY_ENTER: proc_enter(v); return true;
    case 'k': {
        if (v->procs_recorded) {
            snprintf(v->status, sizeof(v->status), "a recorded process: not signalled");
            return true;
        }
        const struct gpu_process *p = tui_view_selected_proc(v);
        const char *node = tui_view_selected_proc_node(v);
        if (p && node) {
            snprintf(v->status, sizeof(v->status),
                     "PID %u runs on node %s: not signalled from here", (unsigned)p->pid, node);
            return true;
        }
        if (!p && v->nlines) {
            snprintf(v->status, sizeof(v->status), "k signals a GPU process: not this line");
            return true;
        }
        /* no prompt for a process that cannot be signalled */
        if (p && tui_proc_signalable(p, v->proc_root, v->status, sizeof(v->status)))
            v->modal = MODAL_KILL_CONFIRM;
        return true;
    }
    default: return false;
    }
}

void tui_mouse(struct tui_view *v, const MEVENT *ev)
{
    int wheel = (ev->bstate & BUTTON4_PRESSED) ? -1 : (ev->bstate & BUTTON5_PRESSED) ? 1 : 0;
    bool click = (ev->bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) != 0;
    struct rect pr = v->lay.procs, dr = v->lay.devices;
    bool in_procs = ev->y >= pr.y && ev->y < pr.y + pr.h && ev->x >= pr.x && ev->x < pr.x + pr.w;
    bool in_devs = ev->y >= dr.y && ev->y < dr.y + dr.h && ev->x >= dr.x && ev->x < dr.x + dr.w;
    if (v->lay.too_small || (!wheel && !click))
        return;
    if (v->all_procs) {
        long k = tui_allprocs_line_at(v, ev->y, ev->x);
        if (wheel)
            tui_view_proc_move(v, wheel);
        else if (k >= 0)
            tui_view_proc_goto(v, (size_t)k);
        return;
    }
    if (in_procs) {
        long k = tui_procs_line_at(v, ev->y, ev->x);
        if (wheel || k >= 0)
            v->proc_focus = true;
        if (wheel)
            tui_view_proc_move(v, wheel);
        else if (k >= 0)
            tui_view_proc_goto(v, (size_t)k);
        return;
    }
    if (in_devs && wheel) {
        v->proc_focus = false;
        tui_view_select(v, wheel);
    } else if (click && tui_view_select_at(v, ev->y, ev->x)) {
        v->proc_focus = false;
    }
}
