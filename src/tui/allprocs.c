/*
 * allprocs.c — the "All processes" view (allprocs.h): entering and leaving
 * it, its footer, and its panel: a process table (proctable.h) of every
 * column, which give way, least needed first, to keep 16 columns of the
 * command line; its lines are the view's (view.c).
 */
#include "tui/allprocs.h"

#include <stdio.h>
#include <string.h>

#include "engine/proclist.h"
#include "tui/fmt.h"
#include "tui/proctable.h"

void tui_allprocs_toggle(struct tui_view *v)
{
    if (!v->all_procs && (!v->snap || v->snap->ndevices == 0)) {
        snprintf(v->status, sizeof(v->status), "no GPU: no processes to list");
        return;
    }
    v->all_procs = !v->all_procs;
    v->proc_focus = false;
    tui_view_proc_unpin(v);
}

/* Where the view goes: the device list, the detail and the process panels
 * together (the layout's rectangles for them, top to bottom). */
static struct rect panel_rect(const struct tui_view *v)
{
    const struct tui_layout *l = &v->lay;
    return (struct rect){l->devices.y, l->devices.x, l->procs.y + l->procs.h - l->devices.y,
                         l->devices.w};
}

/* The table inside the panel's border. */
static struct rect table_rect(const struct tui_view *v)
{
    struct rect r = panel_rect(v);
    return (struct rect){r.y + 1, r.x + 1, r.h - 2, r.w - 2};
}

long tui_allprocs_line_at(const struct tui_view *v, int y, int x)
{
    return tui_ptable_line_at(v, table_rect(v), y, x);
}

const char *tui_allprocs_footer(bool utf8)
{
    return utf8 ? " a Devices  \u2191\u2193 Process  Enter Command  k Signal  s Sort  / Filter  "
                  "t Tree  ? Help"
                : " a Devices  Up/Dn Process  Enter Command  k Signal  s Sort  / Filter  t Tree  "
                  "? Help";
}

/* ---- the panel ---- */

/* The columns that give way when the command would get fewer than 16
 * columns, first to last: the resident memory and the instance ids (the
 * device already names the MIG device), then the time, the user, the CPU
 * and SM shares. PID, device, VRAM and command stay. */
static const struct tui_pcol_spec cols[] = {
    {PC_PID, 0, 0, PW_ALWAYS},  {PC_DEV, 0, 0, PW_ALWAYS}, {PC_GICI, 0, 0, PW_NVMIG},
    {PC_VRAM, 0, 0, PW_ALWAYS}, {PC_SM, 0, 0, PW_ALWAYS},  {PC_CPU, 0, 0, PW_ALWAYS},
    {PC_RSS, 0, 0, PW_ALWAYS},  {PC_TIME, 0, 0, PW_ALWAYS}, {PC_USER, 0, 8, PW_ALWAYS},
    {PC_CMD, 0, 0, PW_ALWAYS},
};
static const unsigned char drop[] = {PC_RSS, PC_GICI, PC_TIME, PC_USER, PC_CPU, PC_SM};
static const struct tui_ptable table = {cols, sizeof(cols) / sizeof(cols[0]), drop, sizeof(drop),
                                        16};

/* Processes a list could not be read for, and processes beyond --top:
 * what the list does not hold, said in the title. */
static void tally(const struct snapshot *s, size_t *unread, double *beyond)
{
    *unread = 0;
    *beyond = 0;
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        if (d->kind == DEV_GPU && d->mig_enabled)
            continue; /* its count is its instances' too */
        if (!metric_ok(&d->process_count))
            (*unread)++;
        else if (d->process_count.value > (double)d->nprocs)
            *beyond += d->process_count.value - (double)d->nprocs;
    }
}

void tui_draw_allprocs(WINDOW *win, struct tui_view *v)
{
    size_t unread; /* v->plines: laid out by the frame (tui_draw), before the layout */
    double beyond;
    tally(v->snap, &unread, &beyond);
    char title[240], by[48];
    int off = snprintf(title, sizeof(title), "All processes (by %s%s)",
                       tui_view_sort_title(by, sizeof(by), v), v->proc_tree ? ", tree" : "");
    if (v->filter[0] && off > 0 && (size_t)off < sizeof(title))
        off += snprintf(title + off, sizeof(title) - (size_t)off, " /%s", v->filter);
    if (off > 0 && (size_t)off < sizeof(title))
        off += snprintf(title + off, sizeof(title) - (size_t)off, ": %zu", v->nrows);
    if (v->nrows_total > v->nrows && off > 0 && (size_t)off < sizeof(title))
        off += snprintf(title + off, sizeof(title) - (size_t)off, " of %zu", v->nrows_total);
    if (v->nlines_cut && off > 0 && (size_t)off < sizeof(title))
        off += snprintf(title + off, sizeof(title) - (size_t)off, ", %zu lines not shown",
                        v->nlines_cut);
    if (beyond > 0 && off > 0 && (size_t)off < sizeof(title))
        off += snprintf(title + off, sizeof(title) - (size_t)off, ", +%.0f past --top", beyond);
    if (unread && off > 0 && (size_t)off < sizeof(title))
        snprintf(title + off, sizeof(title) - (size_t)off, ", %zu list%s N/A", unread,
                 unread == 1 ? "" : "s");
    struct rect in = tui_box(win, &v->theme, panel_rect(v), title, R_SELECTED);
    if (in.h <= 0 || in.w <= 0)
        return;
    tui_ptable_draw(win, v, in, &table, true);
    if (v->nlines == 0) {
        const char *msg = v->filter[0] ? "No process matches the filter"
                          : unread     ? "No GPU process in the lists that could be read"
                                       : "No GPU processes";
        tui_text(win, &v->theme, in, in.y + 1, in.x, R_FREE, msg);
    }
}
