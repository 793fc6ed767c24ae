/*
 * widgets.c — boxes, text, sparklines, CPU core bars, memory bar, RAM chart.
 *
 * Every cell goes through put_cell(), which drops anything outside the
 * widget's rectangle (already clipped to the window), so no widget can write
 * outside its rectangle whatever its arithmetic. Cells are written with their
 * own attributes and pair; the window's current attributes are set to normal
 * while a widget draws (curses merges them into every cell) and restored
 * afterwards.
 */
#include "tui/widgets.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The window's attributes, saved while a widget draws. */
struct saved_attr {
    attr_t a;
    short pair;
};

static struct saved_attr attr_begin(WINDOW *win)
{
    struct saved_attr s = {0, 0};
    wattr_get(win, &s.a, &s.pair, NULL);
    wattr_set(win, A_NORMAL, 0, NULL);
    return s;
}

static void attr_end(WINDOW *win, struct saved_attr s)
{
    wattr_set(win, s.a, s.pair, NULL);
}

/* r intersected with the window; h or w 0 when nothing of it is visible. */
static struct rect clip_rect(WINDOW *win, struct rect r)
{
    int maxy = getmaxy(win), maxx = getmaxx(win);
    if (maxy < 0 || maxx < 0 || r.h <= 0 || r.w <= 0)
        return (struct rect){r.y, r.x, 0, 0};
    /* in long long: y + h may overflow int for absurd rectangles */
    long long y0 = r.y, x0 = r.x, y1 = (long long)r.y + r.h, x1 = (long long)r.x + r.w;
    if (y0 < 0)
        y0 = 0;
    if (x0 < 0)
        x0 = 0;
    if (y1 > maxy)
        y1 = maxy;
    if (x1 > maxx)
        x1 = maxx;
    if (y1 <= y0 || x1 <= x0)
        return (struct rect){r.y, r.x, 0, 0};
    return (struct rect){(int)y0, (int)x0, (int)(y1 - y0), (int)(x1 - x0)};
}

static bool in_clip(const struct rect *c, int y, int x, int width)
{
    return y >= c->y && y < c->y + c->h && x >= c->x && x + width <= c->x + c->w;
}

static attr_t role_attr(const struct tui_theme *t, enum tui_role role)
{
    if ((int)role < 0 || role >= R_COUNT)
        role = R_NORMAL;
    return t->attr[role] & ~A_COLOR;
}

static short role_pair(const struct tui_theme *t, enum tui_role role)
{
    if ((int)role < 0 || role >= R_COUNT)
        role = R_NORMAL;
    return t->pair[role];
}

/* One spacing character (plus up to 4 combining ones) at window (y, x). */
static void put_wcs(WINDOW *win, const struct rect *clip, int y, int x, const wchar_t *wcs,
                    int width, attr_t attr, short pair)
{
    if (!in_clip(clip, y, x, width < 1 ? 1 : width))
        return;
    cchar_t cc;
    if (setcchar(&cc, wcs, attr, pair, NULL) == OK)
        mvwadd_wch(win, y, x, &cc); /* ERR at the bottom-right cell, after writing it */
}

static void put_cell(WINDOW *win, const struct rect *clip, int y, int x, wchar_t wc, attr_t attr,
                     short pair)
{
    wchar_t wcs[2] = {wc, L'\0'};
    put_wcs(win, clip, y, x, wcs, 1, attr, pair);
}

/* What every widget needs while drawing. */
struct theme_ctx {
    const struct tui_theme *t;
    struct rect clip;
};

static void put_role(WINDOW *win, const struct theme_ctx *ctx, int y, int x, wchar_t wc,
                     enum tui_role role)
{
    put_cell(win, &ctx->clip, y, x, wc, role_attr(ctx->t, role), role_pair(ctx->t, role));
}

static void clear_clip(WINDOW *win, const struct theme_ctx *ctx)
{
    for (int y = ctx->clip.y; y < ctx->clip.y + ctx->clip.h; y++)
        for (int x = ctx->clip.x; x < ctx->clip.x + ctx->clip.w; x++)
            put_cell(win, &ctx->clip, y, x, L' ', A_NORMAL, 0);
}

/*
 * Decode the next character of UTF-8 (or the locale's multibyte) text.
 * Undecodable bytes and unprintable characters become '?' of width 1, so a
 * bad byte costs one column and never stalls the loop. Returns bytes used.
 */
static size_t next_char(const char *s, size_t len, mbstate_t *st, wchar_t *wc, int *width)
{
    size_t n = mbrtowc(wc, s, len, st);
    if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
        memset(st, 0, sizeof(*st));
        *wc = L'?';
        *width = 1;
        return 1;
    }
    int w = wcwidth(*wc);
    if (w < 0) {
        *wc = L'?';
        w = 1;
    }
    *width = w;
    return n;
}

/* Display width of s, stopping once it exceeds limit. */
static int text_width(const char *s, int limit)
{
    mbstate_t st;
    memset(&st, 0, sizeof(st));
    size_t len = strlen(s);
    int w = 0;
    while (len > 0 && w <= limit) {
        wchar_t wc;
        int cw;
        size_t n = next_char(s, len, &st, &wc, &cw);
        s += n;
        len -= n;
        w += cw;
    }
    return w;
}

/*
 * Write s at window (y, x) with at most maxw columns, clipped to ctx->clip.
 * Combining characters join the preceding cell. Returns the column after
 * the last character (x + columns used).
 */
static int draw_text(WINDOW *win, const struct theme_ctx *ctx, int y, int x, int maxw,
                     enum tui_role role, const char *s)
{
    if (!s)
        return x;
    attr_t a = role_attr(ctx->t, role);
    short p = role_pair(ctx->t, role);
    mbstate_t st;
    memset(&st, 0, sizeof(st));
    size_t len = strlen(s);
    int col = x, used = 0;
    wchar_t cell[CCHARW_MAX + 1];
    int ncell = 0, cellw = 0, cellx = x;

    while (len > 0) {
        wchar_t wc;
        int cw;
        size_t n = next_char(s, len, &st, &wc, &cw);
        if (cw == 0) {
            /* combining: attach to the pending cell, if there is room */
            if (ncell > 0 && ncell < CCHARW_MAX)
                cell[ncell++] = wc;
            s += n;
            len -= n;
            continue;
        }
        if (used + cw > maxw)
            break;
        if (ncell > 0) {
            cell[ncell] = L'\0';
            put_wcs(win, &ctx->clip, y, cellx, cell, cellw, a, p);
        }
        cell[0] = wc;
        ncell = 1;
        cellw = cw;
        cellx = col;
        col += cw;
        used += cw;
        s += n;
        len -= n;
    }
    if (ncell > 0) {
        cell[ncell] = L'\0';
        put_wcs(win, &ctx->clip, y, cellx, cell, cellw, a, p);
    }
    return col;
}

/* Columns from window column x to the right edge of r (not of the clip:
 * text is cut where the rectangle ends, even where the window ends first). */
static int room_right(struct rect r, int x)
{
    long long room = (long long)r.x + r.w - x;
    return room < 0 ? 0 : room > INT_MAX ? INT_MAX : (int)room;
}

int tui_text(WINDOW *win, const struct tui_theme *t, struct rect r, int y, int x,
             enum tui_role role, const char *s)
{
    struct theme_ctx ctx = {t, clip_rect(win, r)};
    if (y < r.y || y >= r.y + r.h || x >= r.x + r.w || ctx.clip.w == 0)
        return x;
    struct saved_attr sa = attr_begin(win);
    /* Text starting left of r is drawn from x: put_wcs drops the cells left
     * of the rectangle. Text that does not fit ends in an ellipsis. */
    int room = room_right(r, x), end;
    if (s && room > 1 && text_width(s, room) > room) {
        int ew = text_width(t->g.ellipsis, 8);
        end = draw_text(win, &ctx, y, x, room - ew, role, s);
        end = draw_text(win, &ctx, y, end, ew, role, t->g.ellipsis);
    } else {
        end = draw_text(win, &ctx, y, x, room, role, s);
    }
    attr_end(win, sa);
    return end;
}

void tui_frame_begin(WINDOW *win)
{
    werase(win);
}

void tui_frame_end(WINDOW *win)
{
    (void)win;
}

void tui_fill(WINDOW *win, const struct tui_theme *t, struct rect r, enum tui_role role)
{
    struct theme_ctx ctx = {t, clip_rect(win, r)};
    if (ctx.clip.w == 0)
        return;
    struct saved_attr sa = attr_begin(win);
    attr_t a = role_attr(t, role);
    short p = role_pair(t, role);
    for (int y = ctx.clip.y; y < ctx.clip.y + ctx.clip.h; y++)
        for (int x = ctx.clip.x; x < ctx.clip.x + ctx.clip.w; x++)
            put_cell(win, &ctx.clip, y, x, L' ', a, p);
    attr_end(win, sa);
}

struct rect tui_box(WINDOW *win, const struct tui_theme *t, struct rect r, const char *title,
                    enum tui_role title_role)
{
    struct rect inner = {r.y + 1, r.x + 1, r.h - 2, r.w - 2};
    struct theme_ctx ctx = {t, clip_rect(win, r)};
    if (ctx.clip.w == 0)
        return inner;
    struct saved_attr sa = attr_begin(win);
    clear_clip(win, &ctx);
    if (r.h >= 2 && r.w >= 2) {
        const struct tui_glyphs *g = &t->g;
        int y0 = r.y, y1 = r.y + r.h - 1, x0 = r.x, x1 = r.x + r.w - 1;
        for (int x = x0 + 1; x < x1; x++) {
            put_role(win, &ctx, y0, x, g->hline, R_NORMAL);
            put_role(win, &ctx, y1, x, g->hline, R_NORMAL);
        }
        for (int y = y0 + 1; y < y1; y++) {
            put_role(win, &ctx, y, x0, g->vline, R_NORMAL);
            put_role(win, &ctx, y, x1, g->vline, R_NORMAL);
        }
        put_role(win, &ctx, y0, x0, g->ul, R_NORMAL);
        put_role(win, &ctx, y0, x1, g->ur, R_NORMAL);
        put_role(win, &ctx, y1, x0, g->ll, R_NORMAL);
        put_role(win, &ctx, y1, x1, g->lr, R_NORMAL);

        /* " title " between the corners; cut as " tit… " when too long. */
        int avail = r.w - 2;
        if (title && title[0] && avail >= 3) {
            int tw = text_width(title, avail);
            int x = x0 + 1;
            x = draw_text(win, &ctx, y0, x, 1, title_role, " ");
            if (tw + 2 <= avail) {
                x = draw_text(win, &ctx, y0, x, tw, title_role, title);
            } else {
                int ew = text_width(g->ellipsis, 8);
                int keep = avail - 2 - ew;
                if (keep > 0)
                    x = draw_text(win, &ctx, y0, x, keep, title_role, title);
                x = draw_text(win, &ctx, y0, x, ew, title_role, g->ellipsis);
            }
            draw_text(win, &ctx, y0, x, 1, title_role, " ");
        }
    }
    attr_end(win, sa);
    return inner;
}

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

void tui_sparkline(WINDOW *win, const struct tui_theme *t, struct rect r,
                   const struct hist_series *s, double scale_max, enum tui_role role)
{
    struct theme_ctx ctx = {t, clip_rect(win, r)};
    if (!(scale_max > 0) || ctx.clip.w == 0)
        return;
    struct saved_attr sa = attr_begin(win);
    attr_t a = role_attr(t, role);
    short p = role_pair(t, role);
    int bottom = r.y + r.h - 1;
    /* Newest at the right edge (seed v0.3.5: the ring's oldest point was
     * drawn there). Only visible columns are walked. */
    for (int x = ctx.clip.x; x < ctx.clip.x + ctx.clip.w; x++) {
        size_t age = (size_t)((long long)r.x + r.w - 1 - x);
        struct hist_point pt = point_at(s, age);
        int level = pt.src == MSRC_NONE ? 0 : tui_spark_level(pt.v, scale_max, r.h);
        attr_t pa = a;
        if (pt.src == MSRC_CARRIED || pt.src == MSRC_ESTIMATE)
            pa |= A_DIM;
        for (int y = ctx.clip.y; y < ctx.clip.y + ctx.clip.h; y++) {
            int e = row_eighths(level, bottom - y);
            if (e == 0)
                put_cell(win, &ctx.clip, y, x, L' ', A_NORMAL, 0);
            else
                put_cell(win, &ctx.clip, y, x, t->g.spark[e], pa, p);
        }
    }
    attr_end(win, sa);
}

/* ---- CPU cores ---------------------------------------------------------- */

#define CORES_MAX 1024
#define CORE_BAR_MIN 5
#define CORE_BAR_MAX 10
#define CORE_GAP 2

static bool core_has(const struct host_core *c)
{
    return c->pct.src != MSRC_NONE && !isnan(c->pct.value);
}

/* True when a sorts before b: with a value first, higher first, then id. */
static bool core_before(const struct host_core *a, const struct host_core *b)
{
    bool ha = core_has(a), hb = core_has(b);
    if (ha != hb)
        return ha;
    if (ha && a->pct.value != b->pct.value)
        return a->pct.value > b->pct.value;
    return a->id < b->id;
}

/* The first k cores in display order into idx (k <= CORES_MAX), by binary
 * insertion into a bounded sorted array: no allocation, O(n·k) at worst. */
static size_t cores_top(const struct host_core *cores, size_t n, size_t k, uint32_t *idx)
{
    size_t len = 0;
    if (k == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (len == k && !core_before(&cores[i], &cores[idx[len - 1]]))
            continue;
        size_t lo = 0, hi = len;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (core_before(&cores[i], &cores[idx[mid]]))
                hi = mid;
            else
                lo = mid + 1;
        }
        size_t move = (len == k ? len - 1 : len) - lo;
        memmove(&idx[lo + 1], &idx[lo], move * sizeof(idx[0]));
        idx[lo] = (uint32_t)i;
        if (len < k)
            len++;
    }
    return len;
}

static int digits(int v)
{
    char buf[16];
    int n = snprintf(buf, sizeof(buf), "%d", v);
    return n > 0 ? n : 1;
}

/*
 * Layout: a cell is "id bar pct%" = idw + 1 + barw + 1 + 4 columns, cells
 * CORE_GAP apart. As many columns as fit with a CORE_BAR_MIN bar, but no more
 * than the cores need; the width left over lengthens the bars up to
 * CORE_BAR_MAX. A rectangle narrower than one cell gets one column, cut.
 */
size_t tui_cpu_cores(WINDOW *win, const struct tui_theme *t, struct rect r,
                     const struct host_core *cores, size_t ncores)
{
    struct theme_ctx ctx = {t, clip_rect(win, r)};
    if (ctx.clip.w == 0)
        return 0;
    struct saved_attr sa = attr_begin(win);
    clear_clip(win, &ctx);
    if (!cores || ncores == 0) {
        attr_end(win, sa);
        return 0;
    }

    int idw = 1;
    for (size_t i = 0; i < ncores; i++) {
        int d = digits(cores[i].id);
        if (d > idw)
            idw = d;
    }
    int fixed = idw + 1 + 1 + 4;
    long long cellmin = fixed + CORE_BAR_MIN;
    long long colmax = ((long long)r.w + CORE_GAP) / (cellmin + CORE_GAP);
    if (colmax < 1)
        colmax = 1;
    long long need = ((long long)ncores + r.h - 1) / r.h;
    long long ncols = need < colmax ? need : colmax;
    long long cellw = ((long long)r.w - (long long)CORE_GAP * (ncols - 1)) / ncols;
    /* below CORE_BAR_MIN only with one column in a narrow rectangle */
    long long barw = cellw - fixed;
    if (barw > CORE_BAR_MAX)
        barw = CORE_BAR_MAX;
    if (barw < 1)
        barw = 1;
    long long pitch = fixed + barw + CORE_GAP;

    long long cells = ncols * r.h;
    size_t show = ncores;
    bool more = false;
    if ((long long)ncores > cells) {
        show = (size_t)(cells - 1);
        more = true;
    }
    if (show > CORES_MAX) {
        show = CORES_MAX;
        more = true;
    }
    /* one cell past the cores shown holds "+N more" */
    uint32_t idx[CORES_MAX];
    show = cores_top(cores, ncores, show, idx);

    char buf[48];
    for (size_t k = 0; k < show; k++) {
        const struct host_core *c = &cores[idx[k]];
        long long col = (long long)k / r.h, row = (long long)k % r.h;
        long long xl = r.x + col * pitch;
        if (xl >= (long long)r.x + r.w)
            break;
        int x = (int)xl, y = r.y + (int)row;
        int cut = room_right(r, x);
        snprintf(buf, sizeof(buf), "%*d ", idw, c->id);
        x = draw_text(win, &ctx, y, x, cut, R_NORMAL, buf);
        bool has = core_has(c);
        double pct = has ? c->pct.value : 0;
        enum tui_role role = has ? tui_role_load(pct) : R_FREE;
        long on = has ? lround(pct / 100.0 * (double)barw) : 0;
        if (on < 0)
            on = 0;
        if (on > barw)
            on = (long)barw;
        for (long b = 0; b < barw; b++, x++)
            put_role(win, &ctx, y, x, b < on ? t->g.bar_on : t->g.bar_off,
                     b < on ? role : R_FREE);
        if (has) {
            long ip = lround(pct);
            if (ip < 0)
                ip = 0;
            if (ip > 999)
                ip = 999;
            snprintf(buf, sizeof(buf), " %3ld%%", ip);
        } else {
            snprintf(buf, sizeof(buf), "  N/A");
        }
        draw_text(win, &ctx, y, x, room_right(r, x), role, buf);
    }
    if (more) {
        long long col = (long long)show / r.h, row = (long long)show % r.h;
        long long xl = r.x + col * pitch;
        if (xl < (long long)r.x + r.w) {
            snprintf(buf, sizeof(buf), "+%zu more", ncores - show);
            draw_text(win, &ctx, r.y + (int)row, (int)xl, room_right(r, (int)xl), R_FREE,
                      buf);
        }
    }
    attr_end(win, sa);
    return show;
}

/* ---- memory bar and RAM chart ------------------------------------------- */

/* Cells of `part` out of `total` in a bar of n cells, rounded. */
static long cells_of(double part, double total, long n)
{
    if (!(part > 0) || !(total > 0))
        return 0;
    double f = part / total;
    if (f >= 1)
        return n;
    long c = lround(f * (double)n);
    return c > n ? n : c;
}

void tui_mem_bar(WINDOW *win, const struct tui_theme *t, struct rect r, const char *label,
                 struct metric used, struct metric cached, struct metric total, bool swap)
{
    struct theme_ctx ctx = {t, clip_rect(win, r)};
    if (ctx.clip.w == 0)
        return;
    struct saved_attr sa = attr_begin(win);
    clear_clip(win, &ctx);
    int x = r.x;
    if (label && label[0]) {
        x = draw_text(win, &ctx, r.y, x, room_right(r, x), R_NORMAL, label);
        x = draw_text(win, &ctx, r.y, x, room_right(r, x), R_NORMAL, " ");
    }
    /* Swap has no cached part: callers may pass none for it. */
    if (swap && !metric_ok(&cached))
        cached = metric_direct(0);
    if (!metric_ok(&used) || !metric_ok(&cached) || !metric_ok(&total) ||
        !(total.value > 0) || isnan(used.value) || isnan(cached.value)) {
        draw_text(win, &ctx, r.y, x, room_right(r, x), R_FREE, "N/A");
        attr_end(win, sa);
        return;
    }
    long n = room_right(r, x);
    /* Cumulative rounding: the boundaries are rounded, so the three parts
     * always add up to n. */
    long u = cells_of(used.value, total.value, n);
    long uc = cells_of(used.value + (cached.value > 0 ? cached.value : 0), total.value, n);
    if (uc < u)
        uc = u;
    double pct = used.value / total.value * 100.0;
    enum tui_role urole = swap ? tui_role_swap(pct) : tui_role_load(pct);
    /* Without colour cached must differ from used by glyph. */
    wchar_t cached_glyph = t->color ? t->g.bar_on : t->g.shade;
    for (long i = 0; i < n; i++, x++) {
        if (i < u)
            put_role(win, &ctx, r.y, x, t->g.bar_on, urole);
        else if (i < uc)
            put_role(win, &ctx, r.y, x, cached_glyph, R_CACHED);
        else
            put_role(win, &ctx, r.y, x, t->g.bar_off, R_FREE);
    }
    attr_end(win, sa);
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
    struct theme_ctx ctx = {t, clip_rect(win, r)};
    if (!(total > 0) || ctx.clip.w == 0)
        return;
    struct saved_attr sa = attr_begin(win);
    int bottom = r.y + r.h - 1;
    for (int x = ctx.clip.x; x < ctx.clip.x + ctx.clip.w; x++) {
        size_t age = (size_t)((long long)r.x + r.w - 1 - x);
        struct hist_point pu = point_at(used, age);
        struct hist_point pc = point_at(cached, age);
        double uv = pu.v > 0 ? pu.v : 0;
        double cv = pc.src != MSRC_NONE && pc.v > 0 ? pc.v : 0;
        int ul = 0, cl = 0;
        enum tui_role urole = R_NORMAL;
        if (pu.src != MSRC_NONE) {
            ul = tui_spark_level(uv, total, r.h);
            cl = tui_spark_level(uv + cv, total, r.h);
            if (cl < ul)
                cl = ul;
            urole = tui_role_load(uv / total * 100.0);
        }
        for (int y = ctx.clip.y; y < ctx.clip.y + ctx.clip.h; y++) {
            int row = bottom - y;
            int ue = row_eighths(ul, row);
            int ce = row_eighths(cl, row);
            if (ue == 8) {
                put_role(win, &ctx, y, x, t->g.spark[8], urole);
            } else if (ue > 0) {
                enum tui_role role = cl > ul ? on_cached(urole) : urole;
                put_role(win, &ctx, y, x, t->g.spark[ue], role);
            } else if (ce > 0 && t->color) {
                put_role(win, &ctx, y, x, t->g.spark[ce], R_CACHED);
            } else if (ce >= 4) {
                put_role(win, &ctx, y, x, t->g.shade, R_CACHED);
            } else {
                put_cell(win, &ctx.clip, y, x, L' ', A_NORMAL, 0);
            }
        }
    }
    attr_end(win, sa);
}
