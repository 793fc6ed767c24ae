/*
 * widgets.h — the drawing primitives of the interactive UI: text, runs of
 * one glyph, filled rectangles and boxes. The charts of history series are
 * in sparkline.h, the host's meters in meters.h, the frame they all draw
 * into in frame.h.
 *
 * Each widget draws into a rectangle of a curses WINDOW with a theme and
 * touches nothing outside the rectangle; a rectangle too small for the widget
 * draws what fits (or nothing) and never writes outside. Widgets read only
 * their arguments (snapshot values, history rings) and allocate nothing.
 * Inside a frame (frame.h) they draw into the frame's cells, outside one
 * into the window; either way the window ends up with the same cells.
 */
#ifndef MIGMON_TUI_WIDGETS_H
#define MIGMON_TUI_WIDGETS_H

#include <stddef.h>

#include "tui/rect.h"
#include "tui/theme.h"

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

/* Display columns of UTF-8 text (as tui_text counts them). */
int tui_text_width(const char *s);

#endif
