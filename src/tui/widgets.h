/*
 * widgets.h — the drawing primitives of the interactive UI.
 *
 * Each widget draws into a rectangle of a curses WINDOW with a theme and
 * touches nothing outside the rectangle; a rectangle too small for the widget
 * draws what fits (or nothing) and never writes outside. Widgets read only
 * their arguments (snapshot values, history rings) and allocate nothing.
 *
 * A screen is drawn as a frame: tui_frame_begin, the widgets, tui_frame_end.
 * The widgets then draw into the frame's own cells, and tui_frame_end hands
 * curses only the cells that differ from the previous frame, so the cost of
 * curses follows what changed. Outside a frame, widgets write to the window
 * directly. Either way the window ends up with the same cells. Frames are
 * drawn by one thread (the UI thread).
 */
#ifndef MIGMON_TUI_WIDGETS_H
#define MIGMON_TUI_WIDGETS_H

#include <stddef.h>

#include "history.h"
#include "system/host.h"
#include "tui/theme.h"

struct rect {
    int y, x, h, w;
};

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

/* Blank cells of role (its colours: a coloured bar) over r. */
void tui_fill(WINDOW *win, const struct tui_theme *t, struct rect r, enum tui_role role);

/* Clear r and draw a border around it with " title " in the top edge at
 * column 1 (cut with the ellipsis glyph when too long). Returns the inner
 * rectangle (h and w may be <= 0 when r is too small). */
struct rect tui_box(WINDOW *win, const struct tui_theme *t, struct rect r, const char *title,
                    enum tui_role title_role);

/* Text at window coordinates (y, x), drawn only where it falls inside r and
 * cut at r's right edge, where the last column shows the ellipsis glyph
 * (a wide character that does not fit is left out);
 * returns the window column after the last character (x when y is outside r
 * or x is right of it). UTF-8 input; undecodable bytes show as '?'. */
int tui_text(WINDOW *win, const struct tui_theme *t, struct rect r, int y, int x,
             enum tui_role role, const char *s);
/* tui_text of n copies of the glyph wc (utf8: the same glyph as UTF-8), the
 * cells written directly when it is one column wide (a gauge's bars). */
int tui_glyph_run(WINDOW *win, const struct tui_theme *t, struct rect r, int y, int x,
                  enum tui_role role, wchar_t wc, const char *utf8, int n);

/*
 * A sparkline of series s in r, scaled 0..scale_max (values above are drawn
 * full, below 0 empty). Newest point in the rightmost column, older to the
 * left, as many points as r.w; r.h rows give r.h*8 levels, value rounded to
 * the nearest level (not truncated). A gap (none) leaves the column blank;
 * carried and estimate points are drawn dim. scale_max <= 0 draws nothing.
 */
void tui_sparkline(WINDOW *win, const struct tui_theme *t, struct rect r,
                   const struct hist_series *s, double scale_max, enum tui_role role);

/* Level of a value in a sparkline of `rows` rows: 0 .. rows*8, rounded to
 * the nearest eighth of a row. Exposed for tests. */
int tui_spark_level(double v, double scale_max, int rows);

/*
 * CPU cores sorted by load (highest first, cores without a value last, ties
 * by id), laid out in as many columns as r.w allows, each cell
 * "id ▮▮▮▯▯ pct%" coloured by tui_role_load; columns fill top to bottom.
 * When not all cores fit the last cell says "+N more".
 * Returns the number of cores drawn.
 */
size_t tui_cpu_cores(WINDOW *win, const struct tui_theme *t, struct rect r,
                     const struct host_core *cores, size_t ncores);

/*
 * One-row segmented bar: "LBL" then used (role by used %), cached (R_CACHED)
 * and free (R_FREE) cells, proportional to total, rounded so the three add
 * up to the bar's width. Any value none or total <= 0: the bar shows N/A.
 */
void tui_mem_bar(WINDOW *win, const struct tui_theme *t, struct rect r, const char *label,
                 struct metric used, struct metric cached, struct metric total, bool swap);

/*
 * The RAM chart: one column per tick (newest right), used stacked under
 * cached, scaled to total bytes over r.h rows with eighth-of-a-row
 * precision. The cell where used ends is drawn in the used colour over a
 * cached background when the column has cached memory, so the two touch
 * (seed v0.3.9); used is coloured by that column's used %. Columns with a
 * gap are blank. total <= 0 draws nothing.
 */
void tui_ram_chart(WINDOW *win, const struct tui_theme *t, struct rect r,
                   const struct hist_series *used, const struct hist_series *cached,
                   double total);

#endif
