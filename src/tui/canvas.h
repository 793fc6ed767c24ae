/*
 * canvas.h — the cell writer every widget draws with: cells and text put
 * into a rectangle of a window, clipped to it, into the open frame
 * (frame.h) or, outside a frame, straight into the window. Not part of the
 * TUI's interface: the widgets (widgets.c, sparkline.c, meters.c) use it.
 */
#ifndef MIGMON_TUI_CANVAS_H
#define MIGMON_TUI_CANVAS_H

#include <stdbool.h>

#include "tui/frame.h"
#include "tui/rect.h"
#include "tui/theme.h"

/* The window's attributes, saved while a widget draws straight into it. */
struct saved_attr {
    attr_t a;
    short pair;
};

/* What every widget needs while drawing. */
struct canvas {
    const struct tui_theme *t;
    struct rect clip;
    WINDOW *win;
    struct gframe *f; /* the open frame on win, or NULL: write to win */
    struct saved_attr sa;
};

/* A canvas for drawing r of win with theme t: r clipped to the window
 * (clip.w 0 when nothing of it is visible), writing into the frame open
 * on win, if any. Drawing goes between canvas_begin and canvas_end. */
struct canvas canvas_make(WINDOW *win, const struct tui_theme *t, struct rect r);
void canvas_begin(struct canvas *ctx);
void canvas_end(struct canvas *ctx);

/* One spacing character c (with c.ncomb combining characters from comb)
 * at window (y, x), when every column of it is inside the clip. */
void canvas_put_full(const struct canvas *ctx, int y, int x, struct gcell c, const wchar_t *comb);
/* n copies of the one-column cell c from (y, x) rightwards, clipped. */
void canvas_run(const struct canvas *ctx, int y, int x, long n, struct gcell c);
/* Blank every cell of the clip. */
void canvas_clear(const struct canvas *ctx);

/* s at window (y, x) in at most maxw columns, clipped; UTF-8 (or the
 * locale's codeset), undecodable bytes as '?'. Returns the column after
 * the last character. */
int canvas_text(const struct canvas *ctx, int y, int x, int maxw, enum tui_role role,
                const char *s);
/* Display width of s, counted until it exceeds limit. */
int canvas_text_width(const char *s, int limit);
/* Columns from window column x to the right edge of r. */
int canvas_room_right(struct rect r, int x);
/* Columns a spacing character takes as curses places it (1 or 2), and
 * wcwidth() of a character (-1 unprintable, 0 combining). */
int canvas_cell_width(wchar_t wc);
int canvas_wc_width(wchar_t wc);

static inline attr_t canvas_role_attr(const struct tui_theme *t, enum tui_role role)
{
    if ((int)role < 0 || role >= R_COUNT)
        role = R_NORMAL;
    return t->attr[role] & ~A_COLOR;
}

static inline short canvas_role_pair(const struct tui_theme *t, enum tui_role role)
{
    if ((int)role < 0 || role >= R_COUNT)
        role = R_NORMAL;
    return t->pair[role];
}

static inline struct gcell canvas_cell(wchar_t wc, attr_t attr, short pair)
{
    return (struct gcell){.hattr = (uint16_t)(attr >> 16), .pair = pair, .wc = (uint32_t)wc};
}

static inline struct gcell canvas_role_cell(const struct tui_theme *t, wchar_t wc,
                                            enum tui_role role)
{
    return canvas_cell(wc, canvas_role_attr(t, role), canvas_role_pair(t, role));
}

static inline void canvas_put(const struct canvas *ctx, int y, int x, struct gcell c)
{
    canvas_put_full(ctx, y, x, c, NULL);
}

static inline void canvas_put_role(const struct canvas *ctx, int y, int x, wchar_t wc,
                                   enum tui_role role)
{
    canvas_put(ctx, y, x, canvas_role_cell(ctx->t, wc, role));
}

#endif
