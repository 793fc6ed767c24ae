/*
 * devices.c — the device list drawn: GPUs with their MIG instances beneath
 * (folded or not), inline utilisation and VRAM gauges, scroll marks; in the
 * fleet view a row per node above its GPUs (folded or not), and the device
 * filter in the title. The list as shown and the movement over it are the
 * view's (view.c).
 */
#include "tui/devices.h"

#include <stdio.h>
#include <string.h>

#include "engine/proclist.h"
#include "tui/fleet_ui.h"
#include "tui/fmt.h"
#include "tui/health_ui.h"

/* Width of the gauges for a list inner width w whose labels want lw
 * columns: 3 to 12 cells, 0 when even 3 do not fit. */
static int gauge_cells(int w, int lw)
{
    int g = (w - 3 - lw - DEV_FIG_FIXED) / 2;
    if (g > 12)
        g = 12;
    return g < 3 ? 0 : g;
}

/* A node's row in w columns, the longest form that fits: "▾ dgx  8 GPU
 * 56 MIG 53 idle  251.6/532.0 GiB", "▾ dgx 8 GPU 56 MIG 53 idle 252/532G",
 * then without the memory (the VRAM column has its share), then the node
 * and its instances alone (cut at the end when even that does not fit).
 * The figures are the node's aggregates (under the filter, of the devices
 * it matches). */
static void node_label(char *out, size_t len, const struct tui_view *v, size_t k, long row, int w)
{
    const struct tui_glyphs *g = &v->theme.g;
    const struct node_summary *n = &v->snap->nodes[k];
    struct tui_fleet_totals t;
    tui_fleet_node_totals(n, &t);
    bool open = (size_t)row + 1 < v->ndrow && !(v->drow[row + 1] & TUI_DROW_NODE);
    const char *mark = open ? g->fold_open : g->fold_closed;
    char gpus[24] = "", mig[72] = "", mem[48] = "N/A", mem_s[32] = "N/A", idle[24] = "";
    if (metric_ok(&n->gpus))
        snprintf(gpus, sizeof(gpus), " %zu GPU", t.gpus);
    else
        snprintf(gpus, sizeof(gpus), " ? GPU");
    if (metric_ok(&n->idle))
        snprintf(idle, sizeof(idle), " %zu idle", t.idle);
    if (t.mig)
        snprintf(mig, sizeof(mig), " %zu MIG%s", t.mig, idle);
    else
        snprintf(mig, sizeof(mig), "%s", idle);
    if (t.mem_known) {
        tui_fleet_bytes(mem, sizeof(mem), t.mem_used, t.mem_total);
        snprintf(mem_s, sizeof(mem_s), "%.0f/%.0fG", t.mem_used / 1073741824.0,
                 t.mem_total / 1073741824.0);
    }
    snprintf(out, len, "%s %.40s %s%s  %s", mark, n->name, gpus, mig, mem);
    if (tui_text_width(out) <= w)
        return;
    snprintf(out, len, "%s %.40s%s%s %s", mark, n->name, gpus, mig, mem_s);
    if (tui_text_width(out) <= w)
        return;
    snprintf(out, len, "%s %.40s%s%s", mark, n->name, gpus, mig);
    if (tui_text_width(out) <= w || !t.mig)
        return;
    snprintf(out, len, "%s %.40s%s", mark, n->name, mig);
}

/* A device's label into out, and what follows it dimmed (" +7 MIG" on a
 * folded GPU) into suffix (DEV_SUFFIX bytes; one per row: the labels are
 * all made before any is drawn). A slice is named in the given form
 * (proclist.h): "├ MIG 0/1 2g.35gb GI 5 CI 0" under its GPU. */
enum { DEV_SUFFIX = 32 };
static void row_label(char *out, size_t len, const struct tui_view *v, size_t i, long row,
                      char *suffix, enum proclist_slice_form form)
{
    const struct snapshot *s = v->snap;
    const struct device *d = &s->devices[i];
    const struct tui_glyphs *g = &v->theme.g;
    suffix[0] = '\0';
    /* a fleet: GPUs under their node's row, named by node when that row is
     * scrolled off */
    bool fleet = d->node[0] != '\0';
    const char *ind = fleet ? "  " : "";
    if (d->kind == DEV_GPU) {
        size_t k = tui_dev_instances(s, i);
        bool open = k > 0 && (size_t)row + 1 < v->ndrow &&
                    tui_dev_is_instance_of(s, v->drow[row + 1], i);
        const char *mark = k == 0 ? " " : open ? g->fold_open : g->fold_closed;
        char name[MIGMON_NAME_LEN + 8];
        tui_device_name(name, sizeof(name), d, true);
        long nrow = -1;
        for (long r = row; fleet && r >= 0 && nrow < 0; r--)
            if (v->drow[r] & TUI_DROW_NODE)
                nrow = r;
        if (fleet && nrow < v->dev_scroll)
            snprintf(out, len, "%s%s %.40s GPU %d %s", ind, mark, d->node, d->index, name);
        else
            snprintf(out, len, "%s%s GPU %d %s", ind, mark, d->index, name);
        if (k > 0 && !open) {
            size_t kl = 0;
            for (size_t c = 0; c < k; c++)
                kl += !v->dshow_n || v->dshow[i + 1 + c];
            snprintf(suffix, DEV_SUFFIX, " +%zu MIG", kl);
        }
        return;
    }
    /* Under its GPU when that row is on screen (the name says which GPU
     * in either case) */
    char name[96];
    proclist_slice_name(name, sizeof(name), d, form);
    long prow = d->parent_pos >= 0 ? tui_view_row_of(v, (size_t)d->parent_pos) : -1;
    if (prow >= 0 && prow >= v->dev_scroll) {
        bool last = (size_t)row + 1 >= v->ndrow ||
                    !tui_dev_is_instance_of(s, v->drow[row + 1], (size_t)d->parent_pos);
        snprintf(out, len, "%s  %s %s", ind, last ? g->tree_last : g->tree_mid, name);
    } else {
        snprintf(out, len, "%s  %s", ind, name);
    }
}

/* A node row's figures: its VRAM used of total in the VRAM column. */
static void node_figures(WINDOW *win, const struct tui_view *v, struct rect r, size_t k,
                         int cells)
{
    if (cells < 0)
        return;
    struct tui_fleet_totals t;
    tui_fleet_node_totals(&v->snap->nodes[k], &t);
    struct metric vp = metric_none("no VRAM read");
    if (t.mem_known && t.mem_total > 0)
        vp = metric_direct(100.0 * t.mem_used / t.mem_total);
    char p[16], pct[24];
    snprintf(pct, sizeof(pct), "%s%s", v->theme.g.sum, tui_fmt_pct(p, sizeof(p), &vp, 0));
    int x = r.x + 1 + cells + (cells ? 1 : 0) + DEV_VAL_W + DEV_TAG_W + 1;
    enum tui_role role = metric_ok(&vp) ? tui_role_vram(vp.value) : R_FREE;
    x = tui_gauge(win, v, r, r.y, x, cells, &vp, role);
    x += cells ? 1 : 0;
    int w = tui_text_width(pct);
    tui_text(win, &v->theme, r, r.y, x + (w < DEV_VAL_W ? DEV_VAL_W - w : 0), role, pct);
}

/* A node's row: its label over the utilisation column too (a node has
 * none), "DOWN 12s" when its target is down (never cut: the label gives
 * way), its VRAM in the VRAM column. */
static void draw_node_row(WINDOW *win, const struct tui_view *v, struct rect in, int y, int fx,
                          size_t k, long row, int g)
{
    const struct node_summary *n = &v->snap->nodes[k];
    bool sel = v->sel_node && v->sel_nodei == k;
    enum tui_role role = sel ? R_SELECTED : R_TITLE;
    tui_text(win, &v->theme, in, y, in.x, role, sel ? v->theme.g.sel : " ");
    char tag[48] = "", label[256];
    if (n->up == 0 && n->down_for_s >= 0)
        snprintf(tag, sizeof(tag), " DOWN %.0fs", n->down_for_s);
    else if (n->up == 0)
        snprintf(tag, sizeof(tag), n->seen ? " DOWN" : " DOWN, never seen");
    int end = g < 0 ? in.x + in.w : fx + 1 + g + (g ? 1 : 0) + DEV_VAL_W + DEV_TAG_W;
    struct rect lab = {y, in.x + 2, 1, end - 1 - (in.x + 2)};
    int tw = tui_text_width(tag);
    node_label(label, sizeof(label), v, k, row, lab.w - tw);
    struct rect name = lab;
    if (name.w - tw >= 6)
        name.w -= tw;
    int x = tui_text(win, &v->theme, name, y, lab.x, role, label);
    if (tag[0])
        tui_text(win, &v->theme, lab, y, x, R_ALARM, tag);
    node_figures(win, v, (struct rect){y, fx, 1, in.x + in.w - fx}, k, g);
}

/* The row under an open node whose devices have not been read: why. */
static void draw_wait_row(WINDOW *win, const struct tui_view *v, struct rect in, int y, size_t k)
{
    const struct node_summary *n = &v->snap->nodes[k];
    bool sel = v->sel_node && v->sel_nodei == k;
    char text[200];
    const char *why = n->devs_why ? n->devs_why : "not read yet";
    if (!n->seen)
        why = "no series of it in the last 10 minutes";
    else if (!strcmp(why, "not asked for") || !strcmp(why, "not read yet"))
        why = "asking Prometheus…";
    snprintf(text, sizeof(text), "    its devices: %.180s", why);
    tui_text(win, &v->theme, in, y, in.x, sel ? R_SELECTED : R_FREE, " ");
    tui_text(win, &v->theme, in, y, in.x + 1, R_FREE, text);
}

void tui_draw_devices(WINDOW *win, struct tui_view *v)
{
    const struct snapshot *s = v->snap;
    /* the title says when the fleet's filter narrows the list */
    char title[128] = "Devices", by[32] = "";
    if (v->dsort != FSORT_NODE && tui_view_fleet(v))
        snprintf(by, sizeof(by), " (by %s)", tui_fleet_sort_name(v->dsort));
    if (v->dfilter[0] && tui_view_fleet(v))
        snprintf(title, sizeof(title), "Devices /%s%s", v->dfilter, by);
    else
        snprintf(title, sizeof(title), "Devices%s", by);
    struct rect in = tui_box(win, &v->theme, v->lay.devices, title, R_TITLE);
    if (in.h <= 0 || in.w <= 0 || !s || (s->ndevices == 0 && !s->fleet))
        return;
    v->dev_room = in.h;
    tui_view_build_rows(v, in.h);
    if (v->ndrow == 0 && (v->dshow_n || s->fleet_filter[0])) {
        tui_text(win, &v->theme, in, in.y, in.x + 2, R_FREE,
                 "No device matches the filter (Esc clears it)");
        return;
    }
    long sel_row = tui_view_place_sel(v); /* a hidden selection moves to its GPU or node */
    if (sel_row >= 0 && sel_row < v->dev_scroll)
        v->dev_scroll = (int)sel_row;
    if (sel_row >= v->dev_scroll + in.h)
        v->dev_scroll = (int)sel_row - in.h + 1;
    if (v->dev_scroll > (int)v->ndrow - in.h)
        v->dev_scroll = (int)v->ndrow - in.h;
    if (v->dev_scroll < 0)
        v->dev_scroll = 0;

    /* the labels first: their width decides the gauges'. Slices are named
     * in full (with their GI and CI ids) when the gauges keep 6 cells,
     * else without the ids, else in the short form: the same on every row */
    enum { LBL = 160 };
    char labels[64][LBL];
    char suffix[64][DEV_SUFFIX];
    int rows = in.h < 64 ? in.h : 64, lw = 0;
    for (int form = PROCLIST_SLICE_FULL; form <= PROCLIST_SLICE_SHORT; form++) {
        lw = 0;
        for (int r = 0; r < rows && (size_t)(v->dev_scroll + r) < v->ndrow; r++) {
            long row = v->dev_scroll + r;
            size_t e = v->drow[row];
            suffix[r][0] = '\0';
            labels[r][0] = '\0';
            if (e & (TUI_DROW_NODE | TUI_DROW_WAIT)) /* made to fit when drawn */
                continue;
            row_label(labels[r], LBL, v, e, row, suffix[r], (enum proclist_slice_form)form);
            int w = tui_text_width(labels[r]) + tui_text_width(suffix[r]);
            const struct device *d = &s->devices[e];
            if (d->lost || d->stall || d->node_down)
                w += 8;
            const char *hm = d->lost ? "" : tui_health_mark(d->health, NULL);
            w += tui_text_width(hm); /* " !!": the space is the gap's (below) */
            if (w > lw)
                lw = w;
        }
        if (gauge_cells(in.w, lw) >= 6)
            break;
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
        int y = in.y + r;
        if (i & TUI_DROW_NODE) {
            draw_node_row(win, v, in, y, fx, TUI_DROW_INDEX(i), v->dev_scroll + r, g);
            continue;
        }
        if (i & TUI_DROW_WAIT) {
            draw_wait_row(win, v, in, y, TUI_DROW_INDEX(i));
            continue;
        }
        const struct device *d = &s->devices[i];
        bool sel = i == v->sel && !v->sel_node;
        enum tui_role lrole = d->lost ? R_ALARM : sel ? R_SELECTED : R_NORMAL;
        int x = tui_text(win, &v->theme, in, y, in.x, lrole, sel ? v->theme.g.sel : " ");
        /* the health mark and the state tag are never cut: the name gives
         * way to them. A lost GPU's tag says its verdict. */
        char tag[48] = "", hmark[8] = "";
        enum tui_role hrole = R_NORMAL;
        if (d->node_down && d->kind == DEV_GPU && d->node_down_for_s >= 0)
            snprintf(tag, sizeof(tag), " DOWN %.0fs", d->node_down_for_s);
        else if (d->node_down && d->kind == DEV_GPU)
            snprintf(tag, sizeof(tag), " DOWN");
        else if (d->lost)
            snprintf(tag, sizeof(tag), " LOST %.0fs", d->lost_for_s);
        else if (d->stall)
            snprintf(tag, sizeof(tag), " STALLED");
        const char *hm = d->lost ? "" : tui_health_mark(d->health, &hrole);
        if (hm[0])
            snprintf(hmark, sizeof(hmark), " %s", hm);
        int tw = tui_text_width(tag) + tui_text_width(hmark);
        struct rect lab = {y, in.x + 2, 1, fx - 1 - (in.x + 2)};
        /* a health mark may take the first of the two blank columns
         * before the figures, so a name that fits keeps fitting */
        if (hmark[0])
            lab.w++;
        struct rect name = lab;
        if (name.w - tw >= 6)
            name.w -= tw;
        x = tui_text(win, &v->theme, name, y, lab.x, lrole, labels[r]);
        if (suffix[r][0])
            x = tui_text(win, &v->theme, name, y, x, R_FREE, suffix[r]);
        if (hmark[0])
            x = tui_text(win, &v->theme, lab, y, x, hrole, hmark);
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
