/*
 * widgets.c — the widgets of text: runs of text cut with the ellipsis,
 * runs of one glyph, filled rectangles and boxes with a title, drawn
 * through the cell writer (canvas.h).
 */
#include "tui/widgets.h"

#include <limits.h>
#include <string.h>

#include "tui/canvas.h"

int tui_text_width(const char *s)
{
    return canvas_text_width(s, INT_MAX);
}

int tui_text(WINDOW *win, const struct tui_theme *t, struct rect r, int y, int x,
             enum tui_role role, const char *s)
{
    struct canvas ctx = canvas_make(win, t, r);
    if (y < r.y || y >= r.y + r.h || x >= r.x + r.w || ctx.clip.w == 0)
        return x;
    canvas_begin(&ctx);
    /* Text starting left of r is drawn from x: put_full drops the cells
     * left of the rectangle. Text that does not fit ends in an ellipsis. */
    int room = canvas_room_right(r, x), end;
    if (s && room > 1 && canvas_text_width(s, room) > room) {
        int ew = canvas_text_width(t->g.ellipsis, 8);
        end = canvas_text(&ctx, y, x, room - ew, role, s);
        end = canvas_text(&ctx, y, end, ew, role, t->g.ellipsis);
    } else {
        end = canvas_text(&ctx, y, x, room, role, s);
    }
    canvas_end(&ctx);
    return end;
}

int tui_glyph_run(WINDOW *win, const struct tui_theme *t, struct rect r, int y, int x,
                  enum tui_role role, wchar_t wc, const char *utf8, int n)
{
    if (n <= 0)
        return x;
    if (canvas_cell_width(wc) != 1 || canvas_wc_width(wc) != 1 || wc < 0x20 ||
        (wc >= 0x7f && wc < 0xa0)) {
        char buf[256];
        size_t bl = strlen(utf8), k = 0;
        for (int i = 0; i < n && k + bl < sizeof(buf); i++, k += bl)
            memcpy(buf + k, utf8, bl);
        buf[k] = '\0';
        return tui_text(win, t, r, y, x, role, buf);
    }
    struct canvas ctx = canvas_make(win, t, r);
    if (y < r.y || y >= r.y + r.h || x >= r.x + r.w || ctx.clip.w == 0)
        return x;
    canvas_begin(&ctx);
    /* as tui_text: cut at r's right edge, the last columns an ellipsis */
    int room = canvas_room_right(r, x), end;
    struct gcell c = canvas_role_cell(t, wc, role);
    if (room > 1 && n > room) {
        int ew = canvas_text_width(t->g.ellipsis, 8);
        int k = room - ew > 0 ? room - ew : 0;
        canvas_run(&ctx, y, x, k, c);
        end = canvas_text(&ctx, y, x + k, ew, role, t->g.ellipsis);
    } else {
        int k = n < room ? n : room;
        canvas_run(&ctx, y, x, k, c);
        end = x + k;
    }
    canvas_end(&ctx);
    return end;
}

void tui_fill(WINDOW *win, const struct tui_theme *t, struct rect r, enum tui_role role)
{
    struct canvas ctx = canvas_make(win, t, r);
    if (ctx.clip.w == 0)
        return;
    canvas_begin(&ctx);
    struct gcell c = canvas_role_cell(t, L' ', role);
    for (int y = ctx.clip.y; y < ctx.clip.y + ctx.clip.h; y++)
        canvas_run(&ctx, y, ctx.clip.x, ctx.clip.w, c);
    canvas_end(&ctx);
}

struct rect tui_box(WINDOW *win, const struct tui_theme *t, struct rect r, const char *title,
                    enum tui_role title_role)
{
    struct rect inner = {r.y + 1, r.x + 1, r.h - 2, r.w - 2};
    struct canvas ctx = canvas_make(win, t, r);
    if (ctx.clip.w == 0)
        return inner;
    canvas_begin(&ctx);
    if (r.h >= 2 && r.w >= 2) {
        const struct tui_glyphs *g = &t->g;
        int y0 = r.y, y1 = r.y + r.h - 1, x0 = r.x, x1 = r.x + r.w - 1;
        struct gcell h = canvas_role_cell(t, g->hline, R_NORMAL);
        struct gcell v = canvas_role_cell(t, g->vline, R_NORMAL);
        /* the border, with the inside cleared; row by row, left to right */
        canvas_put_role(&ctx, y0, x0, g->ul, R_NORMAL);
        canvas_run(&ctx, y0, x0 + 1, (long)r.w - 2, h);
        canvas_put_role(&ctx, y0, x1, g->ur, R_NORMAL);
        for (int y = y0 + 1; y < y1; y++) {
            canvas_put(&ctx, y, x0, v);
            canvas_run(&ctx, y, x0 + 1, (long)r.w - 2, BLANK_CELL);
            canvas_put(&ctx, y, x1, v);
        }
        canvas_put_role(&ctx, y1, x0, g->ll, R_NORMAL);
        canvas_run(&ctx, y1, x0 + 1, (long)r.w - 2, h);
        canvas_put_role(&ctx, y1, x1, g->lr, R_NORMAL);

        /* " title " between the corners; cut as " tit… " when too long. */
        int avail = r.w - 2;
        if (title && title[0] && avail >= 3) {
            int tw = canvas_text_width(title, avail);
            int x = x0 + 1;
            x = canvas_text(&ctx, y0, x, 1, title_role, " ");
            if (tw + 2 <= avail) {
                x = canvas_text(&ctx, y0, x, tw, title_role, title);
            } else {
                int ew = canvas_text_width(g->ellipsis, 8);
                int keep = avail - 2 - ew;
                if (keep > 0)
                    x = canvas_text(&ctx, y0, x, keep, title_role, title);
                x = canvas_text(&ctx, y0, x, ew, title_role, g->ellipsis);
            }
            canvas_text(&ctx, y0, x, 1, title_role, " ");
        }
    } else {
        canvas_clear(&ctx);
    }
    canvas_end(&ctx);
    return inner;
}
