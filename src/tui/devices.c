/*
 * devices.c — the device list: GPUs with their MIG instances beneath
 * (folded or not), inline utilisation and VRAM gauges, and the movement
 * keys over the list as shown (arrows, PgUp/PgDn, Home/End, digits, Enter).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/fmt.h"
#include "tui/panels.h"

/* ---- the list as shown ---- */

static bool is_child_of(const struct snapshot *s, size_t i, size_t g)
{
    return i < s->ndevices && s->devices[i].kind == DEV_MIG && s->devices[i].parent_pos >= 0 &&
           (size_t)s->devices[i].parent_pos == g;
}

/* Instances following GPU g in the snapshot (the backend lists each GPU's
 * instances right after it). */
static size_t nchildren(const struct snapshot *s, size_t g)
{
    size_t n = 0;
    while (is_child_of(s, g + 1 + n, g))
        n++;
    return n;
}

static enum tui_fold fold_of(const struct tui_view *v, const struct device *d)
{
    if (d->index < 0 || d->index >= TUI_FOLD_MAX)
        return FOLD_AUTO;
    return (enum tui_fold)v->fold[d->index];
}

/* The GPU (position) of device i: itself, or its parent. */
static size_t gpu_of(const struct snapshot *s, size_t i)
{
    const struct device *d = &s->devices[i];
    if (d->kind == DEV_MIG && d->parent_pos >= 0 && (size_t)d->parent_pos < i)
        return (size_t)d->parent_pos;
    return i;
}

/* Rows of the list with every automatic GPU unfolded (returned) and with
 * every one folded (*base); a GPU the user folded is one row in both. */
static size_t count_rows(const struct tui_view *v, size_t *base)
{
    const struct snapshot *s = v->snap;
    size_t all = 0;
    *base = 0;
    for (size_t i = 0; s && i < s->ndevices;) {
        const struct device *d = &s->devices[i];
        size_t k = d->kind == DEV_GPU ? nchildren(s, i) : 0;
        enum tui_fold f = fold_of(v, d);
        *base += 1 + (f == FOLD_OPEN ? k : 0);
        all += 1 + (f == FOLD_CLOSED ? 0 : k);
        i += 1 + k;
    }
    return all;
}

size_t tui_view_rows_wanted(const struct tui_view *v)
{
    size_t base;
    return count_rows(v, &base);
}

void tui_view_build_rows(struct tui_view *v, int room)
{
    const struct snapshot *s = v->snap;
    v->ndrow = 0;
    if (!s || s->ndevices == 0)
        return;
    if (v->drow_cap < s->ndevices) {
        size_t *p = realloc(v->drow, s->ndevices * sizeof(*p));
        if (!p)
            return; /* an empty list; the next draw tries again */
        v->drow = p;
        v->drow_cap = s->ndevices;
    }
    size_t sel_gpu = v->sel < s->ndevices ? gpu_of(s, v->sel) : (size_t)-1;
    size_t base, all = count_rows(v, &base);
    bool everything = room <= 0 || all <= (size_t)room;
    size_t budget = room > 0 && (size_t)room > base ? (size_t)room - base : 0;
    /* the selected device's GPU first, then the others in order */
    bool sel_open = false;
    if (!everything && sel_gpu < s->ndevices && s->devices[sel_gpu].kind == DEV_GPU &&
        fold_of(v, &s->devices[sel_gpu]) == FOLD_AUTO) {
        size_t k = nchildren(s, sel_gpu);
        sel_open = true;
        budget = budget > k ? budget - k : 0;
    }
    for (size_t i = 0; i < s->ndevices;) {
        const struct device *d = &s->devices[i];
        size_t k = d->kind == DEV_GPU ? nchildren(s, i) : 0;
        enum tui_fold f = fold_of(v, d);
        bool open = f == FOLD_OPEN;
        if (f == FOLD_AUTO) {
            if (everything || (i == sel_gpu && sel_open)) {
                open = true;
            } else if (k <= budget) {
                open = true;
                budget -= k;
            }
        }
        v->drow[v->ndrow++] = i;
        if (open)
            for (size_t c = 0; c < k; c++)
                v->drow[v->ndrow++] = i + 1 + c;
        i += 1 + k;
    }
}

/* Row of device position i in the list as shown, or -1. */
static long row_of(const struct tui_view *v, size_t i)
{
    for (size_t r = 0; r < v->ndrow; r++)
        if (v->drow[r] == i)
            return (long)r;
    return -1;
}

static void select_row(struct tui_view *v, long r)
{
    if (v->ndrow == 0)
        return;
    if (r < 0)
        r = 0;
    if ((size_t)r >= v->ndrow)
        r = (long)v->ndrow - 1;
    tui_view_select_abs(v, v->drow[r]);
}

/* The row of the selection; a selection hidden in a folded GPU is moved
 * to that GPU. */
static long current_row(struct tui_view *v)
{
    tui_view_build_rows(v, v->dev_room);
    long r = row_of(v, v->sel);
    if (r < 0 && v->snap && v->sel < v->snap->ndevices) {
        r = row_of(v, gpu_of(v->snap, v->sel));
        if (r >= 0)
            select_row(v, r);
    }
    return r < 0 ? 0 : r;
}

void tui_view_select(struct tui_view *v, long delta)
{
    if (!v->snap || v->snap->ndevices == 0)
        return;
    select_row(v, current_row(v) + delta);
}

void tui_view_select_home(struct tui_view *v)
{
    tui_view_build_rows(v, v->dev_room);
    select_row(v, 0);
}

void tui_view_select_end(struct tui_view *v)
{
    /* the last device; its GPU unfolds unless folded by hand (then the GPU) */
    if (!v->snap || v->snap->ndevices == 0)
        return;
    tui_view_select_abs(v, v->snap->ndevices - 1);
    current_row(v);
}

void tui_view_page(struct tui_view *v, int dir)
{
    int page = v->dev_room > 1 ? v->dev_room - 1 : 1;
    tui_view_select(v, (long)dir * page);
}

void tui_view_toggle_fold(struct tui_view *v)
{
    const struct snapshot *s = v->snap;
    if (!s || v->sel >= s->ndevices)
        return;
    size_t g = gpu_of(s, v->sel);
    const struct device *d = &s->devices[g];
    if (d->kind != DEV_GPU || nchildren(s, g) == 0 || d->index < 0 || d->index >= TUI_FOLD_MAX)
        return;
    tui_view_build_rows(v, v->dev_room);
    bool open = row_of(v, g + 1) >= 0;
    v->fold[d->index] = open ? FOLD_CLOSED : FOLD_OPEN;
    if (open)
        tui_view_select_abs(v, g);
}

void tui_view_jump_digit(struct tui_view *v, int digit, uint64_t now_ns)
{
    const struct snapshot *s = v->snap;
    if (!s || digit < 0 || digit > 9)
        return;
    int want = digit;
    if (v->jump_ns && now_ns - v->jump_ns < 1000000000ull && v->jump_num < 100000)
        want = v->jump_num * 10 + digit;
    size_t found = (size_t)-1, first = (size_t)-1;
    for (size_t i = 0; i < s->ndevices; i++) {
        if (s->devices[i].kind != DEV_GPU)
            continue;
        if (s->devices[i].index == want)
            found = i;
        if (s->devices[i].index == digit)
            first = i;
    }
    if (found == (size_t)-1) { /* 1 then 9 without a GPU 19: GPU 9 */
        want = digit;
        found = first;
    }
    v->jump_num = want;
    v->jump_ns = now_ns;
    if (found != (size_t)-1)
        tui_view_select_abs(v, found);
    else
        snprintf(v->status, sizeof(v->status), "no GPU %d", want);
}

long tui_view_device_at(const struct tui_view *v, int y, int x)
{
    struct rect r = v->lay.devices;
    if (v->lay.too_small || !v->snap || y <= r.y || y >= r.y + r.h - 1 || x <= r.x ||
        x >= r.x + r.w - 1)
        return -1;
    long row = (long)v->dev_scroll + (y - r.y - 1);
    if (row < 0 || (size_t)row >= v->ndrow)
        return -1;
    return (long)v->drow[row];
}

/* ---- drawing ---- */

/* Width of the gauges for a list inner width w whose labels want lw
 * columns: 3 to 12 cells, 0 when even 3 do not fit. */
static int gauge_cells(int w, int lw)
{
    int g = (w - 3 - lw - DEV_FIG_FIXED) / 2;
    if (g > 12)
        g = 12;
    return g < 3 ? 0 : g;
}

static void row_label(char *out, size_t len, const struct tui_view *v, size_t i, long row,
                      const char **suffix)
{
    const struct snapshot *s = v->snap;
    const struct device *d = &s->devices[i];
    const struct tui_glyphs *g = &v->theme.g;
    static char more[32];
    *suffix = "";
    if (d->kind == DEV_GPU) {
        size_t k = nchildren(s, i);
        bool open = k > 0 && (size_t)row + 1 < v->ndrow && v->drow[row + 1] == i + 1;
        const char *mark = k == 0 ? " " : open ? g->fold_open : g->fold_closed;
        char name[MIGMON_NAME_LEN + 8];
        tui_device_name(name, sizeof(name), d, true);
        snprintf(out, len, "%s GPU %d %s", mark, d->index, name);
        if (k > 0 && !open) {
            snprintf(more, sizeof(more), " +%zu MIG", k);
            *suffix = more;
        }
        return;
    }
    const char *profile = d->profile[0] ? d->profile : "?";
    /* Under its GPU when that row is on screen; else the GPU is named. */
    long prow = d->parent_pos >= 0 ? row_of(v, (size_t)d->parent_pos) : -1;
    if (prow >= 0 && prow >= v->dev_scroll) {
        bool last = (size_t)row + 1 >= v->ndrow ||
                    !is_child_of(s, v->drow[row + 1], (size_t)d->parent_pos);
        snprintf(out, len, "  %s MIG %d %s", last ? g->tree_last : g->tree_mid, d->mig_index,
                 profile);
    } else {
        snprintf(out, len, "  GPU %d/MIG %d %s", d->index, d->mig_index, profile);
    }
}

void tui_draw_devices(WINDOW *win, struct tui_view *v)
{
    const struct snapshot *s = v->snap;
    struct rect in = tui_box(win, &v->theme, v->lay.devices, "Devices", R_TITLE);
    if (in.h <= 0 || in.w <= 0 || !s || s->ndevices == 0)
        return;
    v->dev_room = in.h;
    tui_view_build_rows(v, in.h);
    long sel_row = row_of(v, v->sel);
    if (sel_row < 0 && v->sel < s->ndevices) { /* hidden in a folded GPU */
        sel_row = row_of(v, gpu_of(s, v->sel));
        if (sel_row >= 0)
            tui_view_select_abs(v, v->drow[sel_row]);
    }
    if (sel_row >= 0 && sel_row < v->dev_scroll)
        v->dev_scroll = (int)sel_row;
    if (sel_row >= v->dev_scroll + in.h)
        v->dev_scroll = (int)sel_row - in.h + 1;
    if (v->dev_scroll > (int)v->ndrow - in.h)
        v->dev_scroll = (int)v->ndrow - in.h;
    if (v->dev_scroll < 0)
        v->dev_scroll = 0;

    /* the labels first: their width decides the gauges' */
    enum { LBL = 160 };
    char labels[64][LBL];
    const char *suffix[64];
    int rows = in.h < 64 ? in.h : 64, lw = 0;
    for (int r = 0; r < rows && (size_t)(v->dev_scroll + r) < v->ndrow; r++) {
        long row = v->dev_scroll + r;
        row_label(labels[r], LBL, v, v->drow[row], row, &suffix[r]);
        int w = tui_text_width(labels[r]) + tui_text_width(suffix[r]);
        const struct device *d = &s->devices[v->drow[row]];
        if (d->lost || d->stall)
            w += 8;
        if (w > lw)
            lw = w;
    }
    /* whole names when the gauges keep 6 cells; else names are cut at 2/5
     * of the width: the gauges matter more */
    int lw_cap = in.w * 2 / 5;
    int g = gauge_cells(in.w, lw);
    if (g < 6)
        g = gauge_cells(in.w, lw < lw_cap ? lw : lw_cap);
    int figw = tui_dev_figures_width(g);
    /* a narrow list keeps ten columns of label: utilisation alone */
    if (in.w - 3 - figw < 10) {
        g = -1;
        figw = tui_dev_figures_width(g);
    }
    int fx = in.x + in.w - figw;
    if (fx < in.x + 2)
        fx = in.x + 2;
    /* column names over the gauges, on the top border */
    if (g >= 0) {
        tui_text(win, &v->theme, v->lay.devices, v->lay.devices.y, fx + 1, R_TITLE, " util ");
        tui_text(win, &v->theme, v->lay.devices, v->lay.devices.y,
                 fx + 1 + g + 1 + DEV_VAL_W + DEV_TAG_W, R_TITLE, " VRAM ");
    }
    for (int r = 0; r < rows && (size_t)(v->dev_scroll + r) < v->ndrow; r++) {
        size_t i = v->drow[v->dev_scroll + r];
        const struct device *d = &s->devices[i];
        bool sel = i == v->sel;
        int y = in.y + r;
        enum tui_role lrole = d->lost ? R_ALARM : sel ? R_SELECTED : R_NORMAL;
        int x = tui_text(win, &v->theme, in, y, in.x, lrole, sel ? v->theme.g.sel : " ");
        /* the state tag is never cut: the name gives way to it */
        char tag[48] = "";
        if (d->lost)
            snprintf(tag, sizeof(tag), " LOST %.0fs", d->lost_for_s);
        else if (d->stall)
            snprintf(tag, sizeof(tag), " STALLED");
        int tw = tui_text_width(tag);
        struct rect lab = {y, in.x + 2, 1, fx - 1 - (in.x + 2)};
        struct rect name = lab;
        if (name.w - tw >= 6)
            name.w -= tw;
        x = tui_text(win, &v->theme, name, y, lab.x, lrole, labels[r]);
        if (suffix[r][0])
            x = tui_text(win, &v->theme, name, y, x, R_FREE, suffix[r]);
        if (tag[0])
            tui_text(win, &v->theme, lab, y, x, R_ALARM, tag);
        tui_dev_figures(win, v, (struct rect){y, fx, 1, in.x + in.w - fx}, i, g);
    }
    /* scroll marks and the position on the bottom border */
    struct rect b = v->lay.devices;
    if (v->dev_scroll > 0)
        tui_text(win, &v->theme, b, b.y, b.x + b.w - 3, R_FREE, v->theme.g.utf8 ? "\u25b2" : "^");
    if ((size_t)(v->dev_scroll + in.h) < v->ndrow) {
        char pos[64];
        snprintf(pos, sizeof(pos), " %d-%d of %zu rows %s ", v->dev_scroll + 1,
                 v->dev_scroll + in.h, v->ndrow, v->theme.g.utf8 ? "\u25bc" : "v");
        int pw = tui_text_width(pos);
        tui_text(win, &v->theme, b, b.y + b.h - 1, b.x + b.w - 1 - pw, R_FREE, pos);
    }
}
