/*
 * frame.c — the frame (frame.h): the back buffer the widgets draw into and
 * what hands its changed cells over.
 *
 * While a frame is open on a window (tui_frame_begin .. tui_frame_end) the
 * cells go into the frame's back buffer, and tui_frame_end hands curses only
 * the cells that differ from what the previous frame left in the window:
 * ncurses' per-cell work (wadd_wch, setcchar, wcwidth) and doupdate's then
 * scale with what changed, not with the screen.
 *
 * While termout is on (the interactive monitor), tui_frame_end writes the
 * changed cells to the terminal through termout instead of into the
 * window, and curses' copy of the screen is not kept.
 */
#include "tui/frame.h"

#include <stdlib.h>
#include <string.h>

#include "tui/termout.h"

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

struct gframe *tui_frame_of(WINDOW *win)
{
    return G.open_win && G.open_win == win ? &G.cur : NULL;
}

void tui_frame_put(struct gframe *f, int y, int x, int w, struct gcell c, const wchar_t *comb)
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

struct gcell *tui_frame_span(struct gframe *f, int y, int x, int n)
{
    G.last_y = y;
    G.last_xe = x + n;
    return f->cell + (size_t)y * G.cols + x;
}

void tui_frame_fill(struct gframe *f, int y, int x, int n, struct gcell c)
{
    cells_fill(tui_frame_span(f, y, x, n), (size_t)n, c);
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
    return setcchar(cc, wcs, gcell_attr(c), c->pair, NULL) == OK;
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
        termout_cell(y, x, G.rows, G.cols, L' ', 1, NULL, 0, gcell_attr(c), c->pair);
        return;
    }
    termout_cell(y, x, G.rows, G.cols, c->wc, c->ext == 1 ? 2 : 1, G.cur.comb[at], c->ncomb,
                 gcell_attr(c), c->pair);
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
    struct gframe *f = tui_frame_of(win);
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
