/*
 * widgets.c — boxes, text, sparklines, CPU core bars, memory bar, RAM chart,
 * and the frame they draw into.
 *
 * Every cell goes through put_cell() (or one of its fast forms), which drops
 * anything outside the widget's rectangle (already clipped to the window), so
 * no widget can write outside its rectangle whatever its arithmetic. Cells
 * carry their own attributes and pair.
 *
 * While a frame is open on a window (tui_frame_begin .. tui_frame_end) the
 * cells go into the frame's back buffer, and tui_frame_end hands curses only
 * the cells that differ from what the previous frame left in the window:
 * ncurses' per-cell work (wadd_wch, setcchar, wcwidth) and doupdate's then
 * scale with what changed, not with the screen. Outside a frame they are
 * written to the window at once; the window's current attributes are set to
 * normal meanwhile (curses merges them into every cell) and restored
 * afterwards. Both ways leave the same cells in the window.
 *
 * While termout is on (the interactive monitor), tui_frame_end writes the
 * changed cells to the terminal through termout instead of into the
 * window, and curses' copy of the screen is not kept.
 */
#include "tui/widgets.h"
#include "tui/fmt.h"
#include "tui/termout.h"

#include <langinfo.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the frame ---------------------------------------------------------- */

#define COMB_MAX (CCHARW_MAX - 1) /* combining characters a cell holds */

/*
 * One cell as a widget wrote it: the character before curses renders it
 * (a blank with no attributes and pair 0 is the window's background). ext
 * follows ncurses' own cells: 0 a one-column character, 1 the left half of
 * a two-column one, 2 its right half (holding the same character), so the
 * frame can apply ncurses' rules where a wide character is partly
 * overwritten and end up with the cells ncurses would have. Eight bytes
 * and no padding: a 200x60 frame is blanked, written and compared with
 * memcmp on every tick, so its size is most of a frame's memory traffic.
 */
struct gcell {
    uint16_t hattr;     /* the attribute bits (16-31 of attr_t), shifted down */
    short pair;
    uint32_t wc : 24;   /* a character: Unicode ends at U+10FFFF */
    uint32_t ext : 2;
    uint32_t ncomb : 3; /* combining characters, in the frame's comb[] */
    uint32_t spare : 3; /* always 0 */
};
_Static_assert(sizeof(struct gcell) == 8,
               "struct gcell must have no padding: rows are compared with memcmp");
/* Attributes other than the colour live in attr_t's bits 16-31. */
_Static_assert((A_ATTRIBUTES & ~A_COLOR & 0xFFFFu) == 0, "attribute bits below bit 16");
_Static_assert(((A_ATTRIBUTES & ~A_COLOR) >> 16) <= 0xFFFFu, "attribute bits above bit 31");
_Static_assert(COMB_MAX < 8, "ncomb holds 0..7");

static attr_t gattr(const struct gcell *c)
{
    return (attr_t)c->hattr << 16;
}

#define BLANK_CELL ((struct gcell){.wc = L' '})

/* One frame's cells (rows x cols) and what only some cells have. */
struct gframe {
    struct gcell *cell;
    wchar_t (*comb)[COMB_MAX];  /* per cell; read only where ncomb > 0 */
    unsigned char *row_special; /* rows with a wide or combining character */
};

/*
 * The frame buffer: what the open frame draws (cur) and what the previous
 * frame left in the window (prev). One per process, owned by the UI thread
 * (the only thread that draws; the sampling threads never reach here), so
 * it needs no lock. Allocated on the first frame and when the window's
 * size changes, never per frame; tui_frame_free releases it.
 */
static struct {
    WINDOW *open_win;  /* the window of the open frame; NULL when none is open */
    WINDOW *shown_win; /* the window prev describes; NULL when it describes none */
    int rows, cols;
    struct gframe cur, prev;
    void *mem;
    int last_y, last_xe; /* the last cell written: row, column after it */
} G;

/* Display width of a spacing character as curses will place it: 2 or 1
 * (widgets only put printable characters). Non-ASCII glyphs repeat a lot
 * (bars, blocks, lines): a small cache spares wcwidth() for them; the
 * locale is set once, before the first frame. */
static int cell_width(wchar_t wc)
{
    if (wc >= 0x20 && wc < 0x7f)
        return 1;
    static struct {
        wchar_t wc;
        signed char w;
    } cache[256]; /* by the low byte: lines, blocks and bars do not collide */
    unsigned k = (unsigned)wc & 255u;
    if (cache[k].wc != wc || cache[k].w == 0) {
        int w = wcwidth(wc);
        cache[k].wc = wc;
        cache[k].w = (signed char)(w == 2 ? 2 : 1);
    }
    return cache[k].w;
}

static void frame_release(void)
{
    free(G.mem);
    memset(&G, 0, sizeof(G));
}

void tui_frame_free(void)
{
    frame_release();
}

void tui_frame_invalidate(void)
{
    G.shown_win = NULL;
}

/* Cells of rows x cols for cur and prev in one block; false when out of
 * memory (the frame is then drawn straight into the window). */
static bool frame_alloc(int rows, int cols)
{
    frame_release();
    size_t n = (size_t)rows * (size_t)cols;
    size_t cells = n * sizeof(struct gcell), comb = n * sizeof(wchar_t[COMB_MAX]);
    size_t total = 2 * (comb + cells) + 2 * (size_t)rows;
    char *m = calloc(1, total); /* combining arrays stay untouched pages */
    if (!m)
        return false;
    G.mem = m;
    G.cur.comb = (wchar_t(*)[COMB_MAX])m;
    G.prev.comb = (wchar_t(*)[COMB_MAX])(m + comb);
    G.cur.cell = (struct gcell *)(m + 2 * comb);
    G.prev.cell = (struct gcell *)(m + 2 * comb + cells);
    G.cur.row_special = (unsigned char *)(m + 2 * (comb + cells));
    G.prev.row_special = G.cur.row_special + rows;
    G.rows = rows;
    G.cols = cols;
    return true;
}

/* n copies of c from dst: one cell, then copies of what is there, doubling
 * (a plain loop of 12-byte stores is several times slower). */
static void cells_fill(struct gcell *dst, size_t n, struct gcell c)
{
    if (n == 0)
        return;
    dst[0] = c;
    for (size_t done = 1; done < n;) {
        size_t k = done < n - done ? done : n - done;
        memcpy(dst + done, dst, k * sizeof(*dst));
        done += k;
    }
}

/* Every cell of f blank: what werase() leaves. */
static void frame_blank(struct gframe *f)
{
    cells_fill(f->cell, (size_t)G.rows * (size_t)G.cols, BLANK_CELL);
    memset(f->row_special, 0, (size_t)G.rows);
}

void tui_frame_begin(WINDOW *win)
{
    G.open_win = NULL;
    int rows = getmaxy(win), cols = getmaxx(win);
    if (!win || rows <= 0 || cols <= 0)
        return;
    if (rows != G.rows || cols != G.cols || !G.mem) {
        if (!frame_alloc(rows, cols)) {
            werase(win); /* drawn straight into the window, as a frame starts */
            return;
        }
    }
    if (G.shown_win != win) {
        /* a new window or size, or the window was drawn otherwise: start
         * from a blank window, as the frame does */
        werase(win);
        frame_blank(&G.prev);
        G.shown_win = win;
        termout_reset();
    }
    frame_blank(&G.cur);
    G.last_y = G.last_xe = 0;
    G.open_win = win;
}

/* The frame's cells of win, or NULL when no frame is open on it. */
static struct gframe *frame_of(WINDOW *win)
{
    return G.open_win && G.open_win == win ? &G.cur : NULL;
}

/*
 * Write a character into the open frame at (y, x), as wadd_wch would into
 * the window: a one-column character replaces the cell alone (a wide
 * character it half covers keeps its other half); a two-column one first
 * blanks the right halves it would orphan, like ncurses' wadd_wch_literal.
 * The caller has checked that (y, x) .. (y, x + w - 1) is in the window.
 */
static void frame_put(struct gframe *f, int y, int x, int w, struct gcell c, const wchar_t *comb)
{
    struct gcell *row = f->cell + (size_t)y * G.cols;
    size_t at = (size_t)y * G.cols + (size_t)x;
    if (c.ncomb > 0) {
        memcpy(f->comb[at], comb, c.ncomb * sizeof(wchar_t));
        f->row_special[y] = 1;
    }
    G.last_y = y;
    G.last_xe = x + w;
    if (w == 1) {
        c.ext = 0;
        row[x] = c;
        return;
    }
    f->row_special[y] = 1;
    for (int i = 0; i < 2; i++) {
        if (row[x + i].ext == 1)
            break;
        if (row[x + i].ext == 2) {
            for (int j = i; x + j < G.cols; j++)
                if (row[x + j].ext != 2) {
                    for (int k = 0; k < j; k++)
                        row[x + k] = BLANK_CELL;
                    break;
                }
            break;
        }
    }
    c.ext = 1;
    row[x] = c;
    c.ext = 2;
    row[x + 1] = c;
    if (c.ncomb > 0)
        memcpy(f->comb[at + 1], comb, c.ncomb * sizeof(wchar_t));
}

/* A cell of f as curses' cchar_t; false when setcchar refuses it. */
static bool to_cchar(const struct gframe *f, size_t at, cchar_t *cc)
{
    const struct gcell *c = &f->cell[at];
    wchar_t wcs[CCHARW_MAX + 1];
    wcs[0] = c->wc;
    for (int i = 0; i < c->ncomb; i++)
        wcs[1 + i] = f->comb[at][i];
    wcs[1 + c->ncomb] = L'\0';
    return setcchar(cc, wcs, gattr(c), c->pair, NULL) == OK;
}

static unsigned long hand_cell(WINDOW *win, const struct gframe *f, int y, int x)
{
    cchar_t cc;
    if (!to_cchar(f, (size_t)y * G.cols + (size_t)x, &cc))
        return 0;
    mvwadd_wch(win, y, x, &cc); /* ERR at the bottom-right cell, after writing it */
    return 1;
}

/* Same cells (and combining characters) in row y of the two frames. */
static bool row_same(int y)
{
    size_t at = (size_t)y * G.cols;
    if (memcmp(G.cur.cell + at, G.prev.cell + at, (size_t)G.cols * sizeof(struct gcell)) != 0)
        return false;
    if (!G.cur.row_special[y] && !G.prev.row_special[y])
        return true;
    for (int x = 0; x < G.cols; x++) {
        int n = G.cur.cell[at + x].ncomb;
        if (n > 0 && memcmp(G.cur.comb[at + x], G.prev.comb[at + x], n * sizeof(wchar_t)) != 0)
            return false;
    }
    return true;
}

/*
 * Row y of the window as the frame has it, where wide characters are (or
 * were) involved. Every write reaches only its own cell and those right of
 * it, so the row is cleared and then written left to right, each cell final
 * once written. A right half of a wide character is made by writing its
 * character at the cell before; right halves whose left half was
 * overwritten can follow each other, so a run of them is made right to left
 * (a wide character written just left of another's left half leaves that
 * one alone), and then the cell before the run gets its own character.
 */
static unsigned long hand_row_replay(WINDOW *win, int y)
{
    const struct gcell *row = G.cur.cell + (size_t)y * G.cols;
    size_t at = (size_t)y * G.cols;
    unsigned long n = 0;
    wmove(win, y, 0);
    wclrtoeol(win);
    int x = 0;
    while (x < G.cols && row[x].ext == 2)
        x++; /* a right half at the left edge cannot be made (nor drawn) */
    while (x < G.cols) {
        int k = 0;
        while (x + 1 + k < G.cols && row[x + 1 + k].ext == 2)
            k++;
        for (int i = k - 1; i >= 0; i--) {
            cchar_t cc;
            if (to_cchar(&G.cur, at + (size_t)(x + 1 + i), &cc)) {
                mvwadd_wch(win, y, x + i, &cc);
                n++;
            }
        }
        if (k == 0 || row[x].ext == 0)
            n += hand_cell(win, &G.cur, y, x);
        x += k + 1;
    }
    return n;
}

/* Where curses leaves the cursor after writing the frame's last cell. */
static void frame_cursor(WINDOW *win)
{
    int y = G.last_y, x = G.last_xe;
    if (x >= G.cols) {
        if (y + 1 < G.rows) {
            y++;
            x = 0;
        } else {
            x = G.cols - 1;
        }
    }
    wmove(win, y, x);
}

/* Cell x of row y of the open frame to the terminal (termout). A right
 * half whose left half is not before it shows blank, as in curses. */
static void emit_cell(int y, int x)
{
    size_t at = (size_t)y * G.cols + (size_t)x;
    const struct gcell *c = &G.cur.cell[at];
    if (c->ext == 2) {
        if (x > 0 && c[-1].ext == 1)
            return; /* written with its left half */
        termout_cell(y, x, G.rows, G.cols, L' ', 1, NULL, 0, gattr(c), c->pair);
        return;
    }
    termout_cell(y, x, G.rows, G.cols, c->wc, c->ext == 1 ? 2 : 1, G.cur.comb[at], c->ncomb,
                 gattr(c), c->pair);
}

/* The changed cells of row y to the terminal, in order. A gap of one or
 * two unchanged cells of the same attributes is written again: fewer
 * bytes than a cursor address. A row with wide or combining characters
 * goes whole. */
static unsigned long emit_row(int y, bool special)
{
    if (special) {
        for (int x = 0; x < G.cols; x++)
            emit_cell(y, x);
        return (unsigned long)G.cols;
    }
    unsigned long n = 0;
    const struct gcell *c = G.cur.cell + (size_t)y * G.cols;
    const struct gcell *o = G.prev.cell + (size_t)y * G.cols;
    int end = -1; /* the column after the last cell written */
    for (int x = 0; x < G.cols; x++) {
        if (memcmp(&c[x], &o[x], sizeof(c[x])) == 0)
            continue;
        if (end >= 0 && x - end <= 2 && x > end) {
            bool same = true;
            for (int g = end; g < x && same; g++)
                same = c[g].hattr == c[x].hattr && c[g].pair == c[x].pair;
            for (int g = end; same && g < x; g++)
                emit_cell(y, g);
        }
        emit_cell(y, x);
        end = x + 1;
        n++;
    }
    return n;
}

static bool last_emitted; /* the UI thread's, as G */

bool tui_frame_emitted(void)
{
    return last_emitted;
}

unsigned long tui_frame_end(WINDOW *win)
{
    struct gframe *f = frame_of(win);
    G.open_win = NULL;
    last_emitted = false;
    if (!f)
        return 0;
    attr_t a = 0;
    short p = 0;
    wattr_get(win, &a, &p, NULL);
    wattr_set(win, A_NORMAL, 0, NULL);
    unsigned long n = 0;
    bool direct = termout_active();
    for (int y = 0; y < G.rows; y++) {
        if (row_same(y))
            continue;
        if (direct) { /* to the terminal; the window is not kept */
            n += emit_row(y, G.cur.row_special[y] || G.prev.row_special[y]);
            continue;
        }
        if (G.cur.row_special[y] || G.prev.row_special[y]) {
            n += hand_row_replay(win, y);
            continue;
        }
        /* only one-column characters, in both frames: each cell is its own */
        const struct gcell *c = G.cur.cell + (size_t)y * G.cols;
        const struct gcell *o = G.prev.cell + (size_t)y * G.cols;
        for (int x = 0; x < G.cols; x++)
            if (memcmp(&c[x], &o[x], sizeof(c[x])) != 0)
                n += hand_cell(win, &G.cur, y, x);
    }
    if (!direct)
        frame_cursor(win); /* the terminal's cursor is termout's */
    last_emitted = direct;
    wattr_set(win, a, p, NULL);
    struct gframe t = G.cur;
    G.cur = G.prev;
    G.prev = t;
    return n;
}

/* ---- cells -------------------------------------------------------------- */

/* The window's attributes, saved while a widget draws straight into it. */
struct saved_attr {
    attr_t a;
    short pair;
};

/* What every widget needs while drawing. */
struct theme_ctx {
    const struct tui_theme *t;
    struct rect clip;
    WINDOW *win;
    struct gframe *f; /* the open frame on win, or NULL: write to win */
    struct saved_attr sa;
};

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

static struct theme_ctx ctx_make(WINDOW *win, const struct tui_theme *t, struct rect r)
{
    struct theme_ctx ctx = {t, clip_rect(win, r), win, frame_of(win), {0, 0}};
    return ctx;
}

/* Start drawing: outside a frame the window's attributes are set aside. */
static void ctx_begin(struct theme_ctx *ctx)
{
    if (ctx->f)
        return;
    wattr_get(ctx->win, &ctx->sa.a, &ctx->sa.pair, NULL);
    wattr_set(ctx->win, A_NORMAL, 0, NULL);
}

static void ctx_end(struct theme_ctx *ctx)
{
    if (!ctx->f)
        wattr_set(ctx->win, ctx->sa.a, ctx->sa.pair, NULL);
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

static struct gcell cell_of(wchar_t wc, attr_t attr, short pair)
{
    return (struct gcell){.hattr = (uint16_t)(attr >> 16), .pair = pair, .wc = (uint32_t)wc};
}

static struct gcell role_cell(const struct tui_theme *t, wchar_t wc, enum tui_role role)
{
    return cell_of(wc, role_attr(t, role), role_pair(t, role));
}

/*
 * One spacing character c (plus c.ncomb combining ones) at window (y, x),
 * when all its columns fall in the clip. Its width is the character's own
 * (what curses gives it), so not even a wide glyph can reach outside.
 */
static void put_full(const struct theme_ctx *ctx, int y, int x, struct gcell c,
                     const wchar_t *comb)
{
    int w = cell_width(c.wc);
    if (!in_clip(&ctx->clip, y, x, w))
        return;
    if (ctx->f) {
        frame_put(ctx->f, y, x, w, c, comb);
        return;
    }
    wchar_t wcs[CCHARW_MAX + 1];
    wcs[0] = c.wc;
    for (int i = 0; i < c.ncomb; i++)
        wcs[1 + i] = comb[i];
    wcs[1 + c.ncomb] = L'\0';
    cchar_t cc;
    if (setcchar(&cc, wcs, gattr(&c), c.pair, NULL) == OK)
        mvwadd_wch(ctx->win, y, x, &cc); /* ERR at the bottom-right cell, after writing it */
}

static void put_cell(const struct theme_ctx *ctx, int y, int x, struct gcell c)
{
    put_full(ctx, y, x, c, NULL);
}

/* n copies of the one-column cell c from (y, x) rightwards, clipped. */
static void put_run(const struct theme_ctx *ctx, int y, int x, long n, struct gcell c)
{
    if (!ctx->f || cell_width(c.wc) != 1 || y < ctx->clip.y || y >= ctx->clip.y + ctx->clip.h) {
        for (long i = 0; i < n; i++)
            put_cell(ctx, y, (int)(x + i), c);
        return;
    }
    long x0 = x, x1 = (long)x + n;
    if (x0 < ctx->clip.x)
        x0 = ctx->clip.x;
    if (x1 > (long)ctx->clip.x + ctx->clip.w)
        x1 = (long)ctx->clip.x + ctx->clip.w;
    if (x1 <= x0)
        return;
    cells_fill(ctx->f->cell + (size_t)y * G.cols + x0, (size_t)(x1 - x0), c);
    G.last_y = y;
    G.last_xe = (int)x1;
}

static void put_role(const struct theme_ctx *ctx, int y, int x, wchar_t wc, enum tui_role role)
{
    put_cell(ctx, y, x, role_cell(ctx->t, wc, role));
}

static void clear_clip(const struct theme_ctx *ctx)
{
    for (int y = ctx->clip.y; y < ctx->clip.y + ctx->clip.h; y++)
        put_run(ctx, y, ctx->clip.x, ctx->clip.w, BLANK_CELL);
}

/* The locale's codeset, looked at once (it is set before anything is
 * drawn): 1 UTF-8, 2 ASCII, 0 another. In the first two, printable ASCII
 * bytes are those characters, one column each, and need no decoding. */
static int codeset_kind(void)
{
    static int kind = -1;
    if (kind < 0) {
        const char *cs = nl_langinfo(CODESET);
        kind = !cs ? 0 : strcmp(cs, "UTF-8") == 0 ? 1 : strcmp(cs, "ANSI_X3.4-1968") == 0 ? 2 : 0;
    }
    return kind;
}

/* wcwidth() of wc, remembered for the characters a frame uses again and
 * again (bars, blocks, box lines, the degree sign). */
static int wc_width(wchar_t wc)
{
    static struct {
        wchar_t wc;
        signed char w;
        bool set;
    } cache[256];
    unsigned k = ((unsigned)wc ^ ((unsigned)wc >> 8)) & 255u;
    if (!cache[k].set || cache[k].wc != wc) {
        cache[k].wc = wc;
        cache[k].w = (signed char)wcwidth(wc);
        cache[k].set = true;
    }
    return cache[k].w;
}

/* One UTF-8 sequence at s (len bytes, len >= 1) as glibc's mbrtowc reads
 * it: the shortest form only, no surrogates, nothing above U+10FFFF.
 * Returns its length, or 0 when it is not one. */
static size_t utf8_decode(const unsigned char *s, size_t len, wchar_t *wc)
{
    unsigned b = s[0];
    size_t n;
    unsigned v, lo = 0x80, hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) {
        n = 2;
        v = b & 0x1f;
    } else if (b >= 0xe0 && b <= 0xef) {
        n = 3;
        v = b & 0x0f;
        if (b == 0xe0)
            lo = 0xa0; /* overlong */
        else if (b == 0xed)
            hi = 0x9f; /* surrogates */
    } else if (b >= 0xf0 && b <= 0xf4) {
        n = 4;
        v = b & 0x07;
        if (b == 0xf0)
            lo = 0x90;
        else if (b == 0xf4)
            hi = 0x8f; /* above U+10FFFF */
    } else {
        return 0;
    }
    if (len < n || s[1] < lo || s[1] > hi)
        return 0;
    v = (v << 6) | (s[1] & 0x3f);
    for (size_t i = 2; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3f);
    }
    *wc = (wchar_t)v;
    return n;
}

/*
 * Decode the next character of UTF-8 (or the locale's multibyte) text.
 * Undecodable bytes and unprintable characters become '?' of width 1, so a
 * bad byte costs one column and never stalls the loop. Returns bytes used.
 * UTF-8 is decoded here (mbrtowc and its conversion machinery were a tenth
 * of a frame on a 64-device screen); other codesets go through mbrtowc.
 */
static size_t next_char(const char *s, size_t len, mbstate_t *st, wchar_t *wc, int *width)
{
    unsigned char b = (unsigned char)s[0];
    int kind = codeset_kind();
    if (b >= 0x20 && b < 0x7f && kind != 0) {
        *wc = b;
        *width = 1;
        return 1;
    }
    size_t n;
    if (kind == 1) {
        n = b >= 0x80 ? utf8_decode((const unsigned char *)s, len, wc) : 0;
        if (n == 0) { /* a control, a stray or cut byte */
            *wc = L'?';
            *width = 1;
            return 1;
        }
    } else {
        n = mbrtowc(wc, s, len, st);
        if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
            memset(st, 0, sizeof(*st));
            *wc = L'?';
            *width = 1;
            return 1;
        }
    }
    int w = wc_width(*wc);
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

/* Declared in fmt.h, for the panels' own layout arithmetic. */
int tui_text_width(const char *s)
{
    return text_width(s, INT_MAX);
}

/*
 * Write s at window (y, x) with at most maxw columns, clipped to ctx->clip.
 * Combining characters join the preceding cell. Returns the column after
 * the last character (x + columns used).
 */
static int draw_text(const struct theme_ctx *ctx, int y, int x, int maxw, enum tui_role role,
                     const char *s)
{
    if (!s)
        return x;
    struct gcell cell = role_cell(ctx->t, L' ', role);
    mbstate_t st;
    memset(&st, 0, sizeof(st));
    size_t len = strlen(s);
    int col = x, used = 0;
    wchar_t comb[COMB_MAX];
    bool pending = false;
    int cellx = x;

    while (len > 0) {
        wchar_t wc;
        int cw;
        size_t n = next_char(s, len, &st, &wc, &cw);
        s += n;
        len -= n;
        if (cw == 0) {
            /* combining: attach to the pending cell, if there is room */
            if (pending && cell.ncomb < COMB_MAX)
                comb[cell.ncomb++] = wc;
            continue;
        }
        if (used + cw > maxw) {
            break;
        }
        if (pending)
            put_full(ctx, y, cellx, cell, comb);
        cell.wc = wc;
        cell.ncomb = 0;
        pending = true;
        cellx = col;
        col += cw;
        used += cw;
    }
    if (pending)
        put_full(ctx, y, cellx, cell, comb);
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
    struct theme_ctx ctx = ctx_make(win, t, r);
    if (y < r.y || y >= r.y + r.h || x >= r.x + r.w || ctx.clip.w == 0)
        return x;
    ctx_begin(&ctx);
    /* Text starting left of r is drawn from x: put_full drops the cells
     * left of the rectangle. Text that does not fit ends in an ellipsis. */
    int room = room_right(r, x), end;
    if (s && room > 1 && text_width(s, room) > room) {
        int ew = text_width(t->g.ellipsis, 8);
        end = draw_text(&ctx, y, x, room - ew, role, s);
        end = draw_text(&ctx, y, end, ew, role, t->g.ellipsis);
    } else {
        end = draw_text(&ctx, y, x, room, role, s);
    }
    ctx_end(&ctx);
    return end;
}

int tui_glyph_run(WINDOW *win, const struct tui_theme *t, struct rect r, int y, int x,
                  enum tui_role role, wchar_t wc, const char *utf8, int n)
{
    if (n <= 0)
        return x;
    if (cell_width(wc) != 1 || wc_width(wc) != 1 || wc < 0x20 || (wc >= 0x7f && wc < 0xa0)) {
        char buf[256];
        size_t bl = strlen(utf8), k = 0;
        for (int i = 0; i < n && k + bl < sizeof(buf); i++, k += bl)
            memcpy(buf + k, utf8, bl);
        buf[k] = '\0';
        return tui_text(win, t, r, y, x, role, buf);
    }
    struct theme_ctx ctx = ctx_make(win, t, r);
    if (y < r.y || y >= r.y + r.h || x >= r.x + r.w || ctx.clip.w == 0)
        return x;
    ctx_begin(&ctx);
    /* as tui_text: cut at r's right edge, the last columns an ellipsis */
    int room = room_right(r, x), end;
    struct gcell c = role_cell(t, wc, role);
    if (room > 1 && n > room) {
        int ew = text_width(t->g.ellipsis, 8);
        int k = room - ew > 0 ? room - ew : 0;
        put_run(&ctx, y, x, k, c);
        end = draw_text(&ctx, y, x + k, ew, role, t->g.ellipsis);
    } else {
        int k = n < room ? n : room;
        put_run(&ctx, y, x, k, c);
        end = x + k;
    }
    ctx_end(&ctx);
    return end;
}

void tui_fill(WINDOW *win, const struct tui_theme *t, struct rect r, enum tui_role role)
{
    struct theme_ctx ctx = ctx_make(win, t, r);
    if (ctx.clip.w == 0)
        return;
    ctx_begin(&ctx);
    struct gcell c = role_cell(t, L' ', role);
    for (int y = ctx.clip.y; y < ctx.clip.y + ctx.clip.h; y++)
        put_run(&ctx, y, ctx.clip.x, ctx.clip.w, c);
    ctx_end(&ctx);
}

struct rect tui_box(WINDOW *win, const struct tui_theme *t, struct rect r, const char *title,
                    enum tui_role title_role)
{
    struct rect inner = {r.y + 1, r.x + 1, r.h - 2, r.w - 2};
    struct theme_ctx ctx = ctx_make(win, t, r);
    if (ctx.clip.w == 0)
        return inner;
    ctx_begin(&ctx);
    if (r.h >= 2 && r.w >= 2) {
        const struct tui_glyphs *g = &t->g;
        int y0 = r.y, y1 = r.y + r.h - 1, x0 = r.x, x1 = r.x + r.w - 1;
        struct gcell h = role_cell(t, g->hline, R_NORMAL), v = role_cell(t, g->vline, R_NORMAL);
        /* the border, with the inside cleared; row by row, left to right */
        put_role(&ctx, y0, x0, g->ul, R_NORMAL);
        put_run(&ctx, y0, x0 + 1, (long)r.w - 2, h);
        put_role(&ctx, y0, x1, g->ur, R_NORMAL);
        for (int y = y0 + 1; y < y1; y++) {
            put_cell(&ctx, y, x0, v);
            put_run(&ctx, y, x0 + 1, (long)r.w - 2, BLANK_CELL);
            put_cell(&ctx, y, x1, v);
        }
        put_role(&ctx, y1, x0, g->ll, R_NORMAL);
        put_run(&ctx, y1, x0 + 1, (long)r.w - 2, h);
        put_role(&ctx, y1, x1, g->lr, R_NORMAL);

        /* " title " between the corners; cut as " tit… " when too long. */
        int avail = r.w - 2;
        if (title && title[0] && avail >= 3) {
            int tw = text_width(title, avail);
            int x = x0 + 1;
            x = draw_text(&ctx, y0, x, 1, title_role, " ");
            if (tw + 2 <= avail) {
                x = draw_text(&ctx, y0, x, tw, title_role, title);
            } else {
                int ew = text_width(g->ellipsis, 8);
                int keep = avail - 2 - ew;
                if (keep > 0)
                    x = draw_text(&ctx, y0, x, keep, title_role, title);
                x = draw_text(&ctx, y0, x, ew, title_role, g->ellipsis);
            }
            draw_text(&ctx, y0, x, 1, title_role, " ");
        }
    } else {
        clear_clip(&ctx);
    }
    ctx_end(&ctx);
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

#define SPARK_COLS_MAX 4096

/*
 * tui_sparkline into the open frame, when every glyph is one column wide:
 * the ring is walked once, newest first, for the visible columns' levels,
 * and each row is then written left to right (a chart is redrawn on every
 * frame; cell by cell, with a clip test and a ring lookup per cell, the
 * sparklines were about a seventh of a 200x60 frame). Same cells as the
 * general path.
 */
static void spark_fast(const struct theme_ctx *ctx, struct rect r, const struct hist_series *s,
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
        struct gcell *row = ctx->f->cell + (size_t)y * G.cols + x0;
        for (int c = 0; c < w; c++)
            row[c] = lv[dim[c]][row_eighths(level[c], bottom - y)];
    }
    G.last_y = ctx->clip.y + ctx->clip.h - 1;
    G.last_xe = x0 + w;
}

void tui_sparkline(WINDOW *win, const struct tui_theme *t, struct rect r,
                   const struct hist_series *s, double scale_max, enum tui_role role)
{
    struct theme_ctx ctx = ctx_make(win, t, r);
    if (!(scale_max > 0) || ctx.clip.w == 0)
        return;
    ctx_begin(&ctx);
    attr_t a = role_attr(t, role);
    short p = role_pair(t, role);
    /* the cells of each level, plain and dim; [0] blank */
    struct gcell lv[2][9];
    for (int e = 0; e <= 8; e++) {
        lv[0][e] = e == 0 ? BLANK_CELL : cell_of(t->g.spark[e], a, p);
        lv[1][e] = e == 0 ? BLANK_CELL : cell_of(t->g.spark[e], a | A_DIM, p);
    }
    int bottom = r.y + r.h - 1;
    bool narrow = true; /* every glyph one column: written straight into the frame */
    for (int e = 1; e <= 8; e++)
        narrow = narrow && cell_width(t->g.spark[e]) == 1;
    if (ctx.f && narrow && ctx.clip.w <= SPARK_COLS_MAX) {
        spark_fast(&ctx, r, s, scale_max, lv);
        ctx_end(&ctx);
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
            put_cell(&ctx, y, x, cells[row_eighths(level, bottom - y)]);
    }
    ctx_end(&ctx);
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
    struct theme_ctx ctx = ctx_make(win, t, r);
    if (ctx.clip.w == 0)
        return 0;
    ctx_begin(&ctx);
    clear_clip(&ctx);
    if (!cores || ncores == 0) {
        ctx_end(&ctx);
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
        x = draw_text(&ctx, y, x, cut, R_NORMAL, buf);
        bool has = core_has(c);
        double pct = has ? c->pct.value : 0;
        enum tui_role role = has ? tui_role_load(pct) : R_FREE;
        long on = has ? lround(pct / 100.0 * (double)barw) : 0;
        if (on < 0)
            on = 0;
        if (on > barw)
            on = (long)barw;
        put_run(&ctx, y, x, on, role_cell(t, t->g.bar_on, role));
        put_run(&ctx, y, (int)(x + on), barw - on, role_cell(t, t->g.bar_off, R_FREE));
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
        draw_text(&ctx, y, x, room_right(r, x), role, buf);
    }
    if (more) {
        long long col = (long long)show / r.h, row = (long long)show % r.h;
        long long xl = r.x + col * pitch;
        if (xl < (long long)r.x + r.w) {
            snprintf(buf, sizeof(buf), "+%zu more", ncores - show);
            draw_text(&ctx, r.y + (int)row, (int)xl, room_right(r, (int)xl), R_FREE, buf);
        }
    }
    ctx_end(&ctx);
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
    struct theme_ctx ctx = ctx_make(win, t, r);
    if (ctx.clip.w == 0)
        return;
    ctx_begin(&ctx);
    clear_clip(&ctx);
    int x = r.x;
    if (label && label[0]) {
        x = draw_text(&ctx, r.y, x, room_right(r, x), R_NORMAL, label);
        x = draw_text(&ctx, r.y, x, room_right(r, x), R_NORMAL, " ");
    }
    /* Swap has no cached part: callers may pass none for it. */
    if (swap && !metric_ok(&cached))
        cached = metric_direct(0);
    if (!metric_ok(&used) || !metric_ok(&cached) || !metric_ok(&total) ||
        !(total.value > 0) || isnan(used.value) || isnan(cached.value)) {
        draw_text(&ctx, r.y, x, room_right(r, x), R_FREE, "N/A");
        ctx_end(&ctx);
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
    put_run(&ctx, r.y, x, u, role_cell(t, t->g.bar_on, urole));
    put_run(&ctx, r.y, (int)(x + u), uc - u, role_cell(t, cached_glyph, R_CACHED));
    put_run(&ctx, r.y, (int)(x + uc), n - uc, role_cell(t, t->g.bar_off, R_FREE));
    ctx_end(&ctx);
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
    struct theme_ctx ctx = ctx_make(win, t, r);
    if (!(total > 0) || ctx.clip.w == 0)
        return;
    ctx_begin(&ctx);
    /* the cells of each level: cached alone, and used in each load role
     * (alone and over cached) */
    static const enum tui_role used_roles[] = {R_NORMAL, R_GOOD, R_WARN, R_ALARM};
    enum { NUR = sizeof(used_roles) / sizeof(used_roles[0]) };
    struct gcell ccell[9], ucell[NUR][2][9];
    for (int e = 0; e <= 8; e++) {
        ccell[e] = role_cell(t, t->g.spark[e], R_CACHED);
        for (int k = 0; k < NUR; k++) {
            ucell[k][0][e] = role_cell(t, t->g.spark[e], used_roles[k]);
            ucell[k][1][e] = role_cell(t, t->g.spark[e], on_cached(used_roles[k]));
        }
    }
    struct gcell shade = role_cell(t, t->g.shade, R_CACHED);
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
        int k = 0;
        while (k < NUR - 1 && used_roles[k] != urole)
            k++;
        /* a role without cells here (tui_role_load gives none) is drawn as is */
        struct gcell uother[2][9];
        const struct gcell(*uc)[9] = ucell[k];
        if (used_roles[k] != urole) {
            for (int e = 0; e <= 8; e++) {
                uother[0][e] = role_cell(t, t->g.spark[e], urole);
                uother[1][e] = role_cell(t, t->g.spark[e], on_cached(urole));
            }
            uc = uother;
        }
        for (int y = ctx.clip.y; y < ctx.clip.y + ctx.clip.h; y++) {
            int row = bottom - y;
            int ue = row_eighths(ul, row);
            int ce = row_eighths(cl, row);
            if (ue == 8)
                put_cell(&ctx, y, x, uc[0][8]);
            else if (ue > 0)
                put_cell(&ctx, y, x, uc[cl > ul][ue]);
            else if (ce > 0 && t->color)
                put_cell(&ctx, y, x, ccell[ce]);
            else if (ce >= 4)
                put_cell(&ctx, y, x, shade);
            else
                put_cell(&ctx, y, x, BLANK_CELL);
        }
    }
    ctx_end(&ctx);
}
