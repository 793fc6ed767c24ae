/*
 * meters.c — the host's meters (meters.h): the CPU core grid, sorted by
 * load, and the segmented memory bar (RAM, swap).
 */
#include "tui/meters.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tui/canvas.h"

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
    struct canvas ctx = canvas_make(win, t, r);
    if (ctx.clip.w == 0)
        return 0;
    canvas_begin(&ctx);
    canvas_clear(&ctx);
    if (!cores || ncores == 0) {
        canvas_end(&ctx);
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
        int cut = canvas_room_right(r, x);
        snprintf(buf, sizeof(buf), "%*d ", idw, c->id);
        x = canvas_text(&ctx, y, x, cut, R_NORMAL, buf);
        bool has = core_has(c);
        double pct = has ? c->pct.value : 0;
        enum tui_role role = has ? tui_role_load(pct) : R_FREE;
        long on = has ? lround(pct / 100.0 * (double)barw) : 0;
        if (on < 0)
            on = 0;
        if (on > barw)
            on = (long)barw;
        canvas_run(&ctx, y, x, on, canvas_role_cell(t, t->g.bar_on, role));
        canvas_run(&ctx, y, (int)(x + on), barw - on, canvas_role_cell(t, t->g.bar_off, R_FREE));
        x += (int)barw;
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
        canvas_text(&ctx, y, x, canvas_room_right(r, x), role, buf);
    }
    if (more) {
        long long col = (long long)show / r.h, row = (long long)show % r.h;
        long long xl = r.x + col * pitch;
        if (xl < (long long)r.x + r.w) {
            snprintf(buf, sizeof(buf), "+%zu more", ncores - show);
            canvas_text(&ctx, r.y + (int)row, (int)xl, canvas_room_right(r, (int)xl), R_FREE, buf);
        }
    }
    canvas_end(&ctx);
    return show;
}

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
    struct canvas ctx = canvas_make(win, t, r);
    if (ctx.clip.w == 0)
        return;
    canvas_begin(&ctx);
    canvas_clear(&ctx);
    int x = r.x;
    if (label && label[0]) {
        x = canvas_text(&ctx, r.y, x, canvas_room_right(r, x), R_NORMAL, label);
        x = canvas_text(&ctx, r.y, x, canvas_room_right(r, x), R_NORMAL, " ");
    }
    /* Swap has no cached part: callers may pass none for it. */
    if (swap && !metric_ok(&cached))
        cached = metric_direct(0);
    if (!metric_ok(&used) || !metric_ok(&cached) || !metric_ok(&total) ||
        !(total.value > 0) || isnan(used.value) || isnan(cached.value)) {
        canvas_text(&ctx, r.y, x, canvas_room_right(r, x), R_FREE, "N/A");
        canvas_end(&ctx);
        return;
    }
    long n = canvas_room_right(r, x);
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
    canvas_run(&ctx, r.y, x, u, canvas_role_cell(t, t->g.bar_on, urole));
    canvas_run(&ctx, r.y, (int)(x + u), uc - u, canvas_role_cell(t, cached_glyph, R_CACHED));
    canvas_run(&ctx, r.y, (int)(x + uc), n - uc, canvas_role_cell(t, t->g.bar_off, R_FREE));
    canvas_end(&ctx);
}
