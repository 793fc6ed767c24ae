/*
 * canvas.c — the cell writer (canvas.h).
 *
 * Every cell goes through canvas_put_full() (or one of its fast forms),
 * which drops anything outside the widget's rectangle (already clipped to
 * the window), so no widget can write outside its rectangle whatever its
 * arithmetic. Cells carry their own attributes and pair.
 *
 * While a frame is open on the window the cells go into the frame
 * (frame.h). Outside a frame they are written to the window at once; the
 * window's current attributes are set to normal meanwhile (curses merges
 * them into every cell) and restored afterwards. Both ways leave the same
 * cells in the window.
 */
#include "tui/canvas.h"

#include <langinfo.h>
#include <limits.h>
#include <string.h>

#include "core/text.h"

/* Display width of a spacing character as curses will place it: 2 or 1
 * (widgets only put printable characters). Non-ASCII glyphs repeat a lot
 * (bars, blocks, lines): a small cache spares wcwidth() for them; the
 * locale is set once, before the first frame. */
int canvas_cell_width(wchar_t wc)
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

struct canvas canvas_make(WINDOW *win, const struct tui_theme *t, struct rect r)
{
    struct canvas ctx = {t, clip_rect(win, r), win, tui_frame_of(win), {0, 0}};
    return ctx;
}

/* Start drawing: outside a frame the window's attributes are set aside. */
void canvas_begin(struct canvas *ctx)
{
    if (ctx->f)
        return;
    wattr_get(ctx->win, &ctx->sa.a, &ctx->sa.pair, NULL);
    wattr_set(ctx->win, A_NORMAL, 0, NULL);
}

void canvas_end(struct canvas *ctx)
{
    if (!ctx->f)
        wattr_set(ctx->win, ctx->sa.a, ctx->sa.pair, NULL);
}

static bool in_clip(const struct rect *c, int y, int x, int width)
{
    return y >= c->y && y < c->y + c->h && x >= c->x && x + width <= c->x + c->w;
}

/*
 * One spacing character c (plus c.ncomb combining ones) at window (y, x),
 * when all its columns fall in the clip. Its width is the character's own
 * (what curses gives it), so not even a wide glyph can reach outside.
 */
void canvas_put_full(const struct canvas *ctx, int y, int x, struct gcell c,
                     const wchar_t *comb)
{
    int w = canvas_cell_width(c.wc);
    if (!in_clip(&ctx->clip, y, x, w))
        return;
    if (ctx->f) {
        tui_frame_put(ctx->f, y, x, w, c, comb);
        return;
    }
    wchar_t wcs[CCHARW_MAX + 1];
    wcs[0] = c.wc;
    for (int i = 0; i < c.ncomb; i++)
        wcs[1 + i] = comb[i];
    wcs[1 + c.ncomb] = L'\0';
    cchar_t cc;
    if (setcchar(&cc, wcs, gcell_attr(&c), c.pair, NULL) == OK)
        mvwadd_wch(ctx->win, y, x, &cc); /* ERR at the bottom-right cell, after writing it */
}

/* n copies of the one-column cell c from (y, x) rightwards, clipped. */
void canvas_run(const struct canvas *ctx, int y, int x, long n, struct gcell c)
{
    if (!ctx->f || canvas_cell_width(c.wc) != 1 || y < ctx->clip.y ||
        y >= ctx->clip.y + ctx->clip.h) {
        for (long i = 0; i < n; i++)
            canvas_put(ctx, y, (int)(x + i), c);
        return;
    }
    long x0 = x, x1 = (long)x + n;
    if (x0 < ctx->clip.x)
        x0 = ctx->clip.x;
    if (x1 > (long)ctx->clip.x + ctx->clip.w)
        x1 = (long)ctx->clip.x + ctx->clip.w;
    if (x1 <= x0)
        return;
    tui_frame_fill(ctx->f, y, (int)x0, (int)(x1 - x0), c);
}

void canvas_clear(const struct canvas *ctx)
{
    for (int y = ctx->clip.y; y < ctx->clip.y + ctx->clip.h; y++)
        canvas_run(ctx, y, ctx->clip.x, ctx->clip.w, BLANK_CELL);
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
int canvas_wc_width(wchar_t wc)
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
    /* wcwidth gives the bidi and zero-width format characters 0, not -1:
     * they are replaced as controls are (text.h), should one reach here */
    int w = canvas_wc_width(*wc);
    if (w < 0 || text_is_control((uint32_t)*wc)) {
        *wc = L'?';
        w = 1;
    }
    *width = w;
    return n;
}

/* Display width of s, stopping once it exceeds limit. */
int canvas_text_width(const char *s, int limit)
{
    mbstate_t st;
    memset(&st, 0, sizeof(st));
    size_t len = strlen(s);
    int w = 0;
    bool ascii = codeset_kind() != 0; /* printable ASCII: a column a byte */
    while (len > 0 && w <= limit) {
        if (ascii && (unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f) {
            s++;
            len--;
            w++;
            continue;
        }
        wchar_t wc;
        int cw;
        size_t n = next_char(s, len, &st, &wc, &cw);
        s += n;
        len -= n;
        w += cw;
    }
    return w;
}

/* How many of s's first bytes (at most room) are printable ASCII that no
 * combining character follows: one column each, nothing to decode. The
 * last of them is left out when a multibyte character comes next (it may
 * combine with it). */
static size_t ascii_run(const char *s, size_t len, int room)
{
    size_t k = 0, max = room > 0 ? (size_t)room : 0;
    while (k < len && k < max && (unsigned char)s[k] >= 0x20 && (unsigned char)s[k] < 0x7f)
        k++;
    if (k > 0 && k < len && (unsigned char)s[k] >= 0x80)
        k--;
    return k;
}

/* n printable ASCII bytes from window (y, x) into the open frame: the
 * cells canvas_put_full() writes one at a time, clipped alike. */
static void put_ascii(const struct canvas *ctx, int y, int x, const char *s, size_t n,
                      struct gcell cell)
{
    const struct rect *c = &ctx->clip;
    if (y < c->y || y >= c->y + c->h)
        return;
    long x0 = x, x1 = (long)x + (long)n;
    if (x0 < c->x)
        x0 = c->x;
    if (x1 > (long)c->x + c->w)
        x1 = (long)c->x + c->w;
    if (x0 >= x1)
        return;
    struct gcell *row = tui_frame_span(ctx->f, y, (int)x0, (int)(x1 - x0));
    const char *p = s + (x0 - x);
    for (long i = 0; i < x1 - x0; i++) {
        cell.wc = (unsigned char)p[i];
        row[i] = cell;
    }
}

/*
 * Write s at window (y, x) with at most maxw columns, clipped to ctx->clip.
 * Combining characters join the preceding cell. Returns the column after
 * the last character (x + columns used).
 */
int canvas_text(const struct canvas *ctx, int y, int x, int maxw, enum tui_role role,
                const char *s)
{
    if (!s)
        return x;
    struct gcell cell = canvas_role_cell(ctx->t, L' ', role);
    mbstate_t st;
    memset(&st, 0, sizeof(st));
    size_t len = strlen(s);
    int col = x, used = 0;
    wchar_t comb[COMB_MAX];
    bool pending = false;
    int cellx = x;
    bool runs = ctx->f && codeset_kind() != 0;

    while (len > 0) {
        if (runs) {
            size_t k = ascii_run(s, len, maxw - used);
            if (k > 0) {
                if (pending)
                    canvas_put_full(ctx, y, cellx, cell, comb);
                pending = false;
                cell.ncomb = 0;
                put_ascii(ctx, y, col, s, k, cell);
                s += k;
                len -= k;
                col += (int)k;
                used += (int)k;
                continue;
            }
        }
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
            canvas_put_full(ctx, y, cellx, cell, comb);
        cell.wc = wc;
        cell.ncomb = 0;
        pending = true;
        cellx = col;
        col += cw;
        used += cw;
    }
    if (pending)
        canvas_put_full(ctx, y, cellx, cell, comb);
    return col;
}

/* Columns from window column x to the right edge of r (not of the clip:
 * text is cut where the rectangle ends, even where the window ends first). */
int canvas_room_right(struct rect r, int x)
{
    long long room = (long long)r.x + r.w - x;
    return room < 0 ? 0 : room > INT_MAX ? INT_MAX : (int)room;
}
