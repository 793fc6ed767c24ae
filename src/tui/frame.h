/*
 * frame.h — the frame: a screen drawn by the widgets into a back buffer of
 * cells, handed over as only the cells that differ from the previous frame.
 *
 * A screen is drawn as a frame: tui_frame_begin, the widgets, tui_frame_end.
 * The widgets then draw into the frame's own cells, and tui_frame_end hands
 * curses only the cells that differ from the previous frame, so the cost of
 * curses follows what changed. Outside a frame, widgets write to the window
 * directly. Either way the window ends up with the same cells. Frames are
 * drawn by one thread (the UI thread).
 */
#ifndef MIGMON_TUI_FRAME_H
#define MIGMON_TUI_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "tui/theme.h" /* curses, wide-character API */

/*
 * Start a frame on win: the frame starts blank (as after werase), widgets
 * drawing into win fill it, and nothing reaches the window before
 * tui_frame_end. Between frames the window's cells belong to the frame: a
 * caller that draws into win otherwise, or erases it, calls
 * tui_frame_invalidate first. A new window or a new size (a resized
 * terminal) is noticed here and the whole window rewritten. Allocates only
 * on the first frame and when the size changes; when that fails the frame
 * is drawn straight into the window.
 */
void tui_frame_begin(WINDOW *win);

/* End the frame on win: write the cells that changed since the previous
 * frame into the window (the caller refreshes), or, while termout is on,
 * to termout (the caller flushes it; the window is then not written).
 * Returns the number of cells handed over; 0 when no frame was open on
 * win. */
unsigned long tui_frame_end(WINDOW *win);

/* The last tui_frame_end also wrote its changed cells to the terminal
 * (termout is on and the frame had its buffer): the caller flushes termout
 * instead of refreshing curses. */
bool tui_frame_emitted(void);

/* Forget what the window holds: the next frame rewrites every cell. */
void tui_frame_invalidate(void);

/* Release the frame's memory (at exit, or before the window is deleted). */
void tui_frame_free(void);

/* ---- the frame's cells, for the cell writer (canvas.c) ---- */

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

static inline attr_t gcell_attr(const struct gcell *c)
{
    return (attr_t)c->hattr << 16;
}

#define BLANK_CELL ((struct gcell){.wc = L' '})

/* The cells of one frame (frame.c's). */
struct gframe;

/* The frame's cells of win, or NULL when no frame is open on it. */
struct gframe *tui_frame_of(WINDOW *win);

/*
 * Write a character into the open frame at (y, x), as wadd_wch would into
 * the window: a one-column character replaces the cell alone (a wide
 * character it half covers keeps its other half); a two-column one first
 * blanks the right halves it would orphan, like ncurses' wadd_wch_literal.
 * The caller has checked that (y, x) .. (y, x + w - 1) is in the window.
 */
void tui_frame_put(struct gframe *f, int y, int x, int w, struct gcell c, const wchar_t *comb);

/* The n cells of row y from column x, for the caller to write one-column
 * characters into (in the window, checked by the caller); they count as
 * the last cells written. */
struct gcell *tui_frame_span(struct gframe *f, int y, int x, int n);

/* n copies of the one-column cell c from (y, x) rightwards (in the
 * window, checked by the caller). */
void tui_frame_fill(struct gframe *f, int y, int x, int n, struct gcell c);

#endif
