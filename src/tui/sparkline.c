/*
 * sparkline.c — charts of history series (sparkline.h): the sparkline, in
 * eighths of a cell, and the RAM chart, used stacked under cached.
 */
#include "tui/sparkline.h"

#include <limits.h>
#include <math.h>

#include "tui/canvas.h"

int tui_spark_level(double v, double scale_max, int rows)
{
    if (!(scale_max > 0) || rows <= 0 || isnan(v))
        return 0;
    int levels = rows > INT_MAX / 8 ? INT_MAX : rows * 8;
    double f = v / scale_max;
    if (!(f > 0))
        return 0;
    if (f >= 1)
        return levels;
    /* Round, never truncate: 99.7 of 100 in one row is a full block, not
     * seven eighths (seed v0.3.5, "f32 truncation"). */
    long lv = lround(f * levels);
    return lv > levels ? levels : (int)lv;
}

/* Point at `age` of s, or a gap when s is NULL or holds fewer points. */
static struct hist_point point_at(const struct hist_series *s, size_t age)
{
    struct hist_point p = {0, MSRC_NONE};
    if (!s || !hist_get(s, age, &p))
        p.src = MSRC_NONE;
    if (p.src != MSRC_NONE && isnan(p.v))
        p.src = MSRC_NONE;
    return p;
}

/* Glyph of the part of `level` (in eighths) that falls in row `row` (0 is
 * the bottom row): 0 .. 8 eighths. */
static int row_eighths(int level, int row)
{
    long long e = (long long)level - (long long)row * 8;
    return e <= 0 ? 0 : e >= 8 ? 8 : (int)e;
}

#define SPARK_COLS_MAX 4096

/*
 * tui_sparkline into the open frame, when every glyph is one column wide:
 * the ring is walked once, newest first, for the visible columns' levels,
 * and each row is then written left to right (a chart is redrawn on every
 * frame; cell by cell, with a clip test and a ring lookup per cell, the
 * sparklines were about a seventh of a 200x60 frame). Same cells as the
 * general path.
 */
static void spark_fast(const struct canvas *ctx, struct rect r, const struct hist_series *s,
                       double scale_max, const struct gcell lv[2][9])
{
    int level[SPARK_COLS_MAX];
    unsigned char dim[SPARK_COLS_MAX];
    int x0 = ctx->clip.x, w = ctx->clip.w;
    /* age of the rightmost visible column; ages grow leftwards */
    size_t age = (size_t)((long long)r.x + r.w - 1 - (x0 + w - 1));
    size_t have = s ? s->len : 0, i = 0;
    if (age < have)
        i = s->head >= age ? s->head - age : s->head + s->cap - age;
    for (int c = w - 1; c >= 0; c--, age++) {
        level[c] = 0;
        dim[c] = 0;
        if (age >= have)
            continue;
        struct hist_point p = s->pts[i * s->stride];
        i = i == 0 ? s->cap - 1 : i - 1;
        if (p.src == MSRC_NONE || isnan(p.v))
            continue;
        level[c] = tui_spark_level(p.v, scale_max, r.h);
        dim[c] = p.src == MSRC_CARRIED || p.src == MSRC_ESTIMATE;
    }
    int bottom = r.y + r.h - 1;
    for (int y = ctx->clip.y; y < ctx->clip.y + ctx->clip.h; y++) {
        struct gcell *row = tui_frame_span(ctx->f, y, x0, w);
        for (int c = 0; c < w; c++)
            row[c] = lv[dim[c]][row_eighths(level[c], bottom - y)];
    }
}

void tui_sparkline(WINDOW *win, const struct tui_theme *t, struct rect r,
                   const struct hist_series *s, double scale_max, enum tui_role role)
{
    struct canvas ctx = canvas_make(win, t, r);
    if (!(scale_max > 0) || ctx.clip.w == 0)
        return;
    canvas_begin(&ctx);
    attr_t a = canvas_role_attr(t, role);
    short p = canvas_role_pair(t, role);
    /* the cells of each level, plain and dim; [0] blank. The blank carries
     * the chart's colour: it shows the background alone, as the terminal's
     * own blank does, and a row of bars and gaps is then written without a
     * colour change at every gap (a fifth of a 200x60 frame's bytes). A
     * role that makes a blank visible (reverse, standout, underline) keeps
     * the plain one. */
    struct gcell blank = (a & (A_REVERSE | A_STANDOUT | A_UNDERLINE))
                             ? BLANK_CELL
                             : canvas_cell(L' ', a & ~(attr_t)A_DIM, p);
    struct gcell lv[2][9];
    for (int e = 0; e <= 8; e++) {
        lv[0][e] = e == 0 ? blank : canvas_cell(t->g.spark[e], a, p);
        lv[1][e] = e == 0 ? blank : canvas_cell(t->g.spark[e], a | A_DIM, p);
    }
    int bottom = r.y + r.h - 1;
    bool narrow = true; /* every glyph one column: written straight into the frame */
    for (int e = 1; e <= 8; e++)
        narrow = narrow && canvas_cell_width(t->g.spark[e]) == 1;
    if (ctx.f && narrow && ctx.clip.w <= SPARK_COLS_MAX) {
        spark_fast(&ctx, r, s, scale_max, lv);
        canvas_end(&ctx);
        return;
    }
    /* Newest at the right edge (seed v0.3.5: the ring's oldest point was
     * drawn there). Only visible columns are walked. */
    for (int x = ctx.clip.x; x < ctx.clip.x + ctx.clip.w; x++) {
        size_t age = (size_t)((long long)r.x + r.w - 1 - x);
        struct hist_point pt = point_at(s, age);
        int level = pt.src == MSRC_NONE ? 0 : tui_spark_level(pt.v, scale_max, r.h);
        const struct gcell *cells = lv[pt.src == MSRC_CARRIED || pt.src == MSRC_ESTIMATE];
        for (int y = ctx.clip.y; y < ctx.clip.y + ctx.clip.h; y++)
            canvas_put(&ctx, y, x, cells[row_eighths(level, bottom - y)]);
    }
    canvas_end(&ctx);
}

static enum tui_role on_cached(enum tui_role used_role)
{
    switch (used_role) {
    case R_GOOD:
        return R_GOOD_ON_CACHED;
    case R_WARN:
        return R_WARN_ON_CACHED;
    case R_ALARM:
        return R_ALARM_ON_CACHED;
    default:
        return used_role;
    }
}

/* One column of the RAM chart: used fills [0, ul) eighths, cached [ul, cl). */
struct ram_col {
    int ul, cl;
    enum tui_role urole;
};

static struct ram_col ram_col_at(const struct hist_series *used, const struct hist_series *cached,
                                 size_t age, double total, int rows)
{
    struct hist_point pu = point_at(used, age);
    struct hist_point pc = point_at(cached, age);
    double uv = pu.v > 0 ? pu.v : 0;
    double cv = pc.src != MSRC_NONE && pc.v > 0 ? pc.v : 0;
    struct ram_col c = {0, 0, R_NORMAL};
    if (pu.src != MSRC_NONE) {
        c.ul = tui_spark_level(uv, total, rows);
        c.cl = tui_spark_level(uv + cv, total, rows);
        if (c.cl < c.ul)
            c.cl = c.ul;
        c.urole = tui_role_load(uv / total * 100.0);
    }
    return c;
}

/* The cell of a RAM chart column in `row` (0 is the bottom row). */
static inline struct gcell ram_cell(const struct tui_theme *t, const struct gcell uc[2][9],
                                    const struct gcell ccell[9], struct gcell shade, int ul,
                                    int cl, int row)
{
    int ue = row_eighths(ul, row);
    int ce = row_eighths(cl, row);
    if (ue == 8)
        return uc[0][8];
    if (ue > 0)
        return uc[cl > ul][ue];
    if (ce > 0 && t->color)
        return ccell[ce];
    if (ce >= 4)
        return shade;
    return BLANK_CELL;
}

/*
 * A column in eighths of a row: used fills [0, ul), cached [ul, cl). The row
 * where used ends part-way is drawn as a partial block in the used colour on
 * the cached background when the column has cached memory, and cached then
 * starts in the row above it: the two touch (seed v0.3.9). Without colour a
 * background cannot be shown; cached cells are the shade glyph, drawn where
 * cached covers at least half of the cell.
 */
void tui_ram_chart(WINDOW *win, const struct tui_theme *t, struct rect r,
                   const struct hist_series *used, const struct hist_series *cached,
                   double total)
{
    struct canvas ctx = canvas_make(win, t, r);
    if (!(total > 0) || ctx.clip.w == 0)
        return;
    canvas_begin(&ctx);
    /* the cells of each level: cached alone, and used in each load role
     * (alone and over cached) */
    static const enum tui_role used_roles[] = {R_NORMAL, R_GOOD, R_WARN, R_ALARM};
    enum { NUR = sizeof(used_roles) / sizeof(used_roles[0]) };
    struct gcell ccell[9], ucell[NUR][2][9];
    for (int e = 0; e <= 8; e++) {
        ccell[e] = canvas_role_cell(t, t->g.spark[e], R_CACHED);
        for (int k = 0; k < NUR; k++) {
            ucell[k][0][e] = canvas_role_cell(t, t->g.spark[e], used_roles[k]);
            ucell[k][1][e] = canvas_role_cell(t, t->g.spark[e], on_cached(used_roles[k]));
        }
    }
    struct gcell shade = canvas_role_cell(t, t->g.shade, R_CACHED);
    int bottom = r.y + r.h - 1;
    /* Each visible column's levels and role are found first (a ring lookup
     * a column); the rows are then written left to right straight into the
     * frame when every glyph is one column wide, as the sparkline does. */
    int x0 = ctx.clip.x, w = ctx.clip.w;
    bool fast = ctx.f && w <= SPARK_COLS_MAX && canvas_cell_width(t->g.shade) == 1;
    for (int e = 1; e <= 8; e++)
        fast = fast && canvas_cell_width(t->g.spark[e]) == 1;
    short ul[SPARK_COLS_MAX], cl[SPARK_COLS_MAX];
    unsigned char role_k[SPARK_COLS_MAX];
    for (int c = 0; fast && c < w; c++) {
        struct ram_col rc = ram_col_at(used, cached, (size_t)((long long)r.x + r.w - 1 - (x0 + c)),
                                       total, r.h);
        int k = 0;
        while (k < NUR - 1 && used_roles[k] != rc.urole)
            k++;
        /* a role without cells here (tui_role_load gives none) goes the
         * general way; levels too tall for the arrays likewise */
        if (used_roles[k] != rc.urole || rc.cl > SHRT_MAX)
            fast = false;
        ul[c] = (short)rc.ul;
        cl[c] = (short)rc.cl;
        role_k[c] = (unsigned char)k;
    }
    if (fast) {
        for (int y = ctx.clip.y; y < ctx.clip.y + ctx.clip.h; y++) {
            struct gcell *row = tui_frame_span(ctx.f, y, x0, w);
            for (int c = 0; c < w; c++)
                row[c] = ram_cell(t, ucell[role_k[c]], ccell, shade, ul[c], cl[c], bottom - y);
        }
        canvas_end(&ctx);
        return;
    }
    for (int x = ctx.clip.x; x < ctx.clip.x + ctx.clip.w; x++) {
        struct ram_col rc = ram_col_at(used, cached, (size_t)((long long)r.x + r.w - 1 - x), total,
                                       r.h);
        int k = 0;
        while (k < NUR - 1 && used_roles[k] != rc.urole)
            k++;
        /* a role without cells here (tui_role_load gives none) is drawn as is */
        struct gcell uother[2][9];
        const struct gcell(*uc)[9] = ucell[k];
        if (used_roles[k] != rc.urole) {
            for (int e = 0; e <= 8; e++) {
                uother[0][e] = canvas_role_cell(t, t->g.spark[e], rc.urole);
                uother[1][e] = canvas_role_cell(t, t->g.spark[e], on_cached(rc.urole));
            }
            uc = uother;
        }
        for (int y = ctx.clip.y; y < ctx.clip.y + ctx.clip.h; y++)
            canvas_put(&ctx, y, x, ram_cell(t, uc, ccell, shade, rc.ul, rc.cl, bottom - y));
    }
    canvas_end(&ctx);
}
