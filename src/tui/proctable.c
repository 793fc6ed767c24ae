/*
 * proctable.c — a process list drawn as a table (proctable.h): the cells
 * of a line, the columns a width keeps, the header with the sort mark,
 * the command scrolled sideways, the tree's lines.
 */
#include "tui/proctable.h"

#include <stdio.h>
#include <string.h>

#include "engine/proclist.h"
#include "tui/fmt.h"
#include "tui/proctree.h"

#define SHOWN_MAX 256 /* lines on screen at once; a taller list shows this many */
#define CELL_LEN (PROC_USER_LEN + 8) /* a whole user name and the ellipsis */
/* the command column's text: the tree's guides (3 columns a level, 3
 * bytes a glyph) and a command */
#define CMD_LEN (PROC_CMD_LEN + 32 * 10 + 64)

static const struct {
    const char *head;
    bool left; /* left-aligned (text), else right-aligned (figures) */
} heads[PC_COUNT] = {
    [PC_PID] = {"PID", false},  [PC_USER] = {"USER", true}, [PC_TYPE] = {"TYPE", true},
    [PC_DEV] = {"DEV", true},   [PC_GICI] = {"GI/CI", false}, [PC_VRAM] = {"VRAM", false},
    [PC_SM] = {"SM%", false},   [PC_CPU] = {"CPU%", false}, [PC_RSS] = {"RSS", false},
    [PC_TIME] = {"TIME", false}, [PC_CMD] = {"COMMAND", true},
};

/* The column of each sort key (enum proc_sort). */
static const unsigned char sort_col[PSORT_COUNT] = {
    [PSORT_MEMORY] = PC_VRAM, [PSORT_SM] = PC_SM,     [PSORT_CPU] = PC_CPU,
    [PSORT_RSS] = PC_RSS,     [PSORT_TIME] = PC_TIME, [PSORT_PID] = PC_PID,
    [PSORT_USER] = PC_USER,   [PSORT_COMMAND] = PC_CMD, [PSORT_DEVICE] = PC_DEV,
};

/* s cut to w columns (counted one per character: user names), its end
 * marked with the ellipsis. */
static void cut(char *s, size_t len, int w, const char *ellipsis)
{
    if (tui_text_width(s) <= w)
        return;
    int ew = tui_text_width(ellipsis);
    size_t i = 0;
    for (int keep = w - ew; s[i]; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80 && keep-- == 0)
            break;
    snprintf(s + i, len - i, "%s", ellipsis);
}

/* s after its first n characters (a command is cleaned UTF-8: a character
 * is a lead byte and its continuation bytes). */
static const char *skip_chars(const char *s, int n)
{
    while (*s && n > 0) {
        s++;
        while (((unsigned char)*s & 0xC0) == 0x80)
            s++;
        n--;
    }
    return s;
}

static const struct device *line_dev(const struct tui_view *v, const struct tui_pline *l)
{
    return l->dev < v->snap->ndevices ? &v->snap->devices[l->dev] : NULL;
}

/* The cells of line l (the figures' for a process; the PID alone for a
 * parent), its command column (the tree's guides, then the command,
 * scrolled) in cmd. */
static void fill_cells(const struct tui_view *v, const struct tui_pline *l,
                       char cell[PC_CMD][CELL_LEN], char *cmd, size_t cmdlen)
{
    const struct snapshot *s = v->snap;
    const struct tui_theme *t = &v->theme;
    for (int c = 0; c < PC_CMD; c++)
        cell[c][0] = '\0';
    char guides[32 * 10];
    tui_proctree_guides(guides, sizeof(guides), v, l);
    const char *text = "";
    char buf[160];
    if (l->kind == PL_PARENT) {
        const struct tui_tparent *e = l->idx < v->ntpar ? &v->tpar[l->idx] : NULL;
        snprintf(cell[PC_PID], CELL_LEN, "%u", e ? (unsigned)e->pid : 0u);
        text = e && e->comm[0] ? e->comm : "?";
    } else if (l->kind == PL_UNKNOWN) {
        snprintf(cell[PC_PID], CELL_LEN, "?");
        snprintf(buf, sizeof(buf), "parent: %s", tui_proctree_why_short(l->idx));
        snprintf(cmd, cmdlen, "%s%s", guides, buf);
        return; /* a reason, not a command: not scrolled */
    } else if (l->kind == PL_PROC) {
        const struct gpu_process *p = &s->procs[l->idx];
        const struct device *d = line_dev(v, l);
        snprintf(cell[PC_PID], CELL_LEN, "%u", (unsigned)p->pid);
        snprintf(cell[PC_USER], CELL_LEN, "%s", p->user[0] ? p->user : "N/A");
        snprintf(cell[PC_TYPE], CELL_LEN, "%s%s", proc_type_name(p->type),
                 p->unattributed ? "?" : "");
        if (d)
            proclist_device_node_label(cell[PC_DEV], CELL_LEN - 1, d);
        else
            snprintf(cell[PC_DEV], CELL_LEN, "?");
        if (p->unattributed) /* on a MIG GPU, in none of its instances: as TYPE's "?" */
            strcat(cell[PC_DEV], "?");
        bool nvmig = d && d->vendor != VENDOR_AMD && (d->kind == DEV_MIG || d->mig_enabled);
        if (nvmig && p->gi_id >= 0 && p->ci_id >= 0)
            snprintf(cell[PC_GICI], CELL_LEN, "%d/%d", p->gi_id, p->ci_id);
        else if (nvmig && p->gi_id >= 0)
            snprintf(cell[PC_GICI], CELL_LEN, "%d/?", p->gi_id);
        else
            snprintf(cell[PC_GICI], CELL_LEN, "%s", nvmig ? "?/?" : "-"); /* MIG off, AMD */
        tui_fmt_bytes(cell[PC_VRAM], CELL_LEN, &p->mem_bytes);
        tui_fmt_pct(cell[PC_SM], CELL_LEN, &p->sm_util, 0);
        tui_fmt_pct(cell[PC_CPU], CELL_LEN, &p->cpu_pct, 0);
        tui_fmt_bytes(cell[PC_RSS], CELL_LEN, &p->rss_bytes);
        struct metric el = proclist_elapsed(s, p, proclist_clk_tck());
        proclist_fmt_elapsed(cell[PC_TIME], CELL_LEN, &el);
        text = p->command[0]        ? p->command
               : p->name[0]         ? p->name
               : p->local_pid < 0   ? "N/A (not visible from here)"
                                    : "N/A";
    }
    if (v->cmd_hoff > 0 && text[0]) {
        const char *rest = skip_chars(text, v->cmd_hoff);
        snprintf(cmd, cmdlen, "%s%s%s", guides, t->g.cut_left, rest);
    } else {
        snprintf(cmd, cmdlen, "%s%s", guides, text);
    }
}

/* One line of the columns shown, each padded to its width (in columns:
 * a user name may be UTF-8), the command last. */
static void put_cols(char *out, size_t len, const bool on[PC_COUNT], const int w[PC_COUNT],
                     const char *const text[PC_COUNT], const unsigned char *order, size_t n_order)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t k = 0; k < n_order && n + 1 < len; k++) {
        int c = order[k];
        if (!on[c])
            continue;
        int pad = c == PC_CMD ? 0 : w[c] - tui_text_width(text[c]);
        if (pad < 0)
            pad = 0;
        const char *sep = n ? " " : "";
        int r = heads[c].left ? snprintf(out + n, len - n, "%s%s%*s", sep, text[c], pad, "")
                              : snprintf(out + n, len - n, "%s%*s%s", sep, pad, "", text[c]);
        if (r < 0)
            break;
        n += (size_t)r < len - n ? (size_t)r : len - n - 1;
    }
}

static int rows_of(struct rect in)
{
    int rows = in.h - 1;
    return rows > SHOWN_MAX ? SHOWN_MAX : rows;
}

/* The first line shown: the last draw's, moved so that the cursor's line
 * is on screen, and no further down than a full last screen. */
static size_t first_shown(struct tui_view *v, int rows, bool cursor)
{
    if (rows <= 0)
        return 0;
    long first = cursor ? v->proc_scroll : 0;
    if (cursor && (long)v->proc_sel < first)
        first = (long)v->proc_sel;
    if (cursor && (long)v->proc_sel >= first + rows)
        first = (long)v->proc_sel - rows + 1;
    if (first > (long)v->nlines - rows)
        first = (long)v->nlines - rows;
    if (first < 0)
        first = 0;
    v->proc_scroll = (int)first;
    return (size_t)first;
}

long tui_ptable_line_at(const struct tui_view *v, struct rect in, int y, int x)
{
    int rows = rows_of(in);
    if (x < in.x || x >= in.x + in.w || y < in.y + 1 || y >= in.y + 1 + rows)
        return -1;
    long k = (long)v->proc_scroll + (y - in.y - 1);
    return k >= 0 && (size_t)k < v->nlines ? k : -1;
}

void tui_ptable_draw(WINDOW *win, struct tui_view *v, struct rect in, const struct tui_ptable *t,
                     bool cursor)
{
    if (in.h <= 0 || in.w <= 0)
        return;
    int rows = rows_of(in);
    size_t first = first_shown(v, rows, cursor);
    size_t shown = v->nlines > first ? v->nlines - first : 0;
    if (shown > (size_t)(rows > 0 ? rows : 0))
        shown = (size_t)(rows > 0 ? rows : 0);

    /* which columns this list may show */
    bool slices = false, nvmig = false;
    for (size_t k = 0; k < v->nlines && !(slices && nvmig); k++) {
        const struct device *d = line_dev(v, &v->plines[k]);
        if (!d)
            continue;
        slices |= d->kind == DEV_MIG || d->mig_enabled;
        nvmig |= d->vendor != VENDOR_AMD && (d->kind == DEV_MIG || d->mig_enabled);
    }
    int sorted = sort_col[v->psort];
    bool on[PC_COUNT] = {false};
    int w[PC_COUNT] = {0};
    unsigned char order[PC_COUNT];
    size_t norder = 0;
    for (size_t k = 0; k < t->ncols && norder < PC_COUNT; k++) {
        const struct tui_pcol_spec *c = &t->cols[k];
        bool show = c->when == PW_ALWAYS || (c->when == PW_SORTED && c->col == sorted) ||
                    (c->when == PW_SLICES && slices) || (c->when == PW_NVMIG && nvmig);
        if (!show)
            continue;
        on[c->col] = true;
        order[norder++] = c->col;
    }
    /* the header, the sorted column marked */
    /* figures come largest first, names and numbers smallest first
     * (proclist.h), unless reversed */
    bool figure = sorted == PC_VRAM || sorted == PC_SM || sorted == PC_CPU || sorted == PC_RSS ||
                  sorted == PC_TIME;
    const char *mark = figure != v->psort_rev ? v->theme.g.sort_down : v->theme.g.sort_up;
    char head[PC_COUNT][24];
    const char *text[PC_COUNT];
    for (int c = 0; c < PC_COUNT; c++) {
        snprintf(head[c], sizeof(head[c]), "%s%s", heads[c].head, c == sorted ? mark : "");
        text[c] = head[c];
        w[c] = tui_text_width(head[c]);
    }
    for (size_t k = 0; k < t->ncols; k++)
        if (t->cols[k].minw > w[t->cols[k].col])
            w[t->cols[k].col] = t->cols[k].minw;

    static char cell[SHOWN_MAX][PC_CMD][CELL_LEN]; /* the UI thread's */
    static char cmd[SHOWN_MAX][CMD_LEN];
    for (size_t r = 0; r < shown; r++) {
        const struct tui_pline *l = &v->plines[first + r];
        fill_cells(v, l, cell[r], cmd[r], sizeof(cmd[r]));
        for (size_t k = 0; k < t->ncols; k++) {
            int c = t->cols[k].col;
            if (c == PC_CMD)
                continue;
            if (t->cols[k].maxw)
                cut(cell[r][c], CELL_LEN, t->cols[k].maxw, v->theme.g.ellipsis);
            int cw = tui_text_width(cell[r][c]);
            if (cw > w[c])
                w[c] = cw;
        }
    }
    int fixed = 0;
    for (size_t k = 0; k < norder; k++)
        if (order[k] != PC_CMD)
            fixed += w[order[k]] + 1;
    for (size_t k = 0; k < t->ndrop && fixed + t->cmd_min > in.w; k++) {
        int c = t->drop[k];
        if (!on[c] || c == sorted)
            continue;
        on[c] = false;
        fixed -= w[c] + 1;
    }

    char line[CMD_LEN + PC_COUNT * CELL_LEN];
    put_cols(line, sizeof(line), on, w, text, order, norder);
    tui_text(win, &v->theme, in, in.y, in.x, R_TITLE, line);
    for (size_t r = 0; r < shown; r++) {
        size_t k = first + r;
        const struct tui_pline *l = &v->plines[k];
        bool sel = cursor && k == v->proc_sel;
        int y = in.y + 1 + (int)r;
        if (l->kind == PL_SLICE) {
            char h[320];
            tui_proctree_heading(h, sizeof(h), v, l);
            tui_text(win, &v->theme, in, y, in.x, sel ? R_SELECTED : R_TITLE, h);
            continue;
        }
        for (int c = 0; c < PC_CMD; c++)
            text[c] = cell[r][c];
        text[PC_CMD] = cmd[r];
        put_cols(line, sizeof(line), on, w, text, order, norder);
        enum tui_role role = R_NORMAL;
        if (l->kind != PL_PROC || v->snap->procs[l->idx].carried)
            role = R_FREE; /* a parent holds no GPU memory: dim, as a carried row */
        if (sel)
            role = R_SELECTED;
        tui_text(win, &v->theme, in, y, in.x, role, line);
    }
}
