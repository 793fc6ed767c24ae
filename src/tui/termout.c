/*
 * termout.c — writes the frame's changed cells to the terminal (see
 * termout.h for why and how this shares the terminal with curses).
 *
 * The output of a frame: for each cell handed in, a cursor move when the
 * cursor is not already there (the shortest of the absolute address and,
 * where the entry has the ANSI forms, a move along the row, along the
 * column, or both; a chart's column a row below the last one is "\E[B\E[D"
 * rather than an address twice as long), the attribute string when the cell's
 * attributes or colour pair differ from the last cell's, then the
 * character in the locale's encoding. An attribute string is the
 * terminal's "reset" (sgr0, and op for the colours) followed by each
 * attribute's own capability and setaf/setab of the pair's colours; each
 * combination is formatted once and kept. The bottom-right cell is left
 * alone on a terminal that would scroll after writing it (am without
 * xenl), as curses does when it cannot insert there.
 */
#include "tui/termout.h"

#include <errno.h>
#include <langinfo.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <term.h>
#include <unistd.h>

#define OUT_START (64 * 1024) /* a 200x60 repaint is about 40 KB; grows for larger screens */
#define NPAIR 256 /* pairs whose strings are kept; the UI uses a few dozen */

struct pair_fmt {
    bool known;
    short fg, bg; /* -1: the terminal's default */
    unsigned char flen, blen;
    char f[32], b[32];
};

static struct {
    bool on;
    int fd;
    /* capabilities (terminfo's strings; NULL when absent) */
    const char *cup, *clear, *sgr0, *op, *bold, *dim, *rev, *smul, *blink, *smso, *sitm;
    const char *setaf, *setab;
    bool ansi_cup; /* cup is "\E[%i%p1%d;%p2%dH": formatted here */
    /* the relative moves the entry has in their ANSI form ("\E[%p1%dC" for
     * cuf, and so on; hpa "\E[%i%p1%dG"), formatted here; false: not used */
    bool ansi_cuf, ansi_cub, ansi_cud, ansi_cuu, ansi_hpa;
    bool am, xenl;
    bool colors;
    /* the frame being written */
    bool need_clear;
    int cy, cx;      /* where the cursor is; cy -1: unknown */
    bool sgr_known;  /* the terminal's attributes are (ca, cpair) */
    attr_t ca;
    short cpair;
    char *out;
    size_t len, cap; /* grown as a frame needs, kept between frames */
    bool overflow;
    /* the strings, padding removed */
    char reset[96]; /* sgr0, and op when colours are used */
    size_t reset_len;
    char op_s[32];
    attr_t attr_bit[7];
    char attr_cap[7][32];
    struct pair_fmt pairs[NPAIR];
} T;

static const char *cap(const char *name)
{
    char *s = tigetstr(name);
    return s && s != (char *)-1 && *s ? s : NULL;
}

/* The entry's capability name is exactly s. */
static bool is_cap(const char *name, const char *s)
{
    const char *c = cap(name);
    return c && strcmp(c, s) == 0;
}

static void put(const char *s, size_t n)
{
    if (T.overflow)
        return;
    if (T.len + n > T.cap) {
        size_t cap = T.cap ? T.cap : OUT_START;
        while (T.len + n > cap)
            cap *= 2;
        char *m = realloc(T.out, cap);
        if (!m) {
            T.overflow = true; /* the frame is dropped; the next one repaints */
            return;
        }
        T.out = m;
        T.cap = cap;
    }
    memcpy(T.out + T.len, s, n);
    T.len += n;
}

/* A terminfo string's padding ("$<5>", "$<2*>") asks for delays on real
 * terminals at low baud rates; written as it is, it would print as text.
 * Terminal emulators need none. */
static size_t strip_padding(char *dst, size_t cap_len, const char *src)
{
    size_t n = 0;
    for (const char *p = src; *p && n + 1 < cap_len; p++) {
        if (p[0] == '$' && p[1] == '<') {
            const char *q = strchr(p, '>');
            if (q) {
                p = q;
                continue;
            }
        }
        dst[n++] = *p;
    }
    dst[n] = '\0';
    return n;
}

bool termout_open(int fd)
{
    T.on = false;
    T.fd = fd;
    T.cup = cap("cup");
    T.clear = cap("clear");
    T.sgr0 = cap("sgr0");
    if (!T.cup || !T.clear || !T.sgr0)
        return false;
    T.op = cap("op");
    T.bold = cap("bold");
    T.dim = cap("dim");
    T.rev = cap("rev");
    T.smul = cap("smul");
    T.blink = cap("blink");
    T.smso = cap("smso");
    T.sitm = cap("sitm");
    T.setaf = cap("setaf");
    T.setab = cap("setab");
    T.colors = has_colors() && T.setaf && T.setab;
    T.ansi_cup = strcmp(T.cup, "\033[%i%p1%d;%p2%dH") == 0;
    T.ansi_cuf = is_cap("cuf", "\033[%p1%dC");
    T.ansi_cub = is_cap("cub", "\033[%p1%dD");
    T.ansi_cud = is_cap("cud", "\033[%p1%dB");
    T.ansi_cuu = is_cap("cuu", "\033[%p1%dA");
    T.ansi_hpa = is_cap("hpa", "\033[%i%p1%dG");
    T.am = tigetflag("am") > 0;
    T.xenl = tigetflag("xenl") > 0;
    memset(T.pairs, 0, sizeof(T.pairs));
    T.op_s[0] = '\0';
    if (T.colors && T.op)
        strip_padding(T.op_s, sizeof(T.op_s), T.op);
    T.reset_len = strip_padding(T.reset, sizeof(T.reset), T.sgr0);
    T.reset_len += strip_padding(T.reset + T.reset_len, sizeof(T.reset) - T.reset_len, T.op_s);
    const struct {
        attr_t bit;
        const char *s;
    } attrs[7] = {
        {A_BOLD, T.bold}, {A_DIM, T.dim}, {A_REVERSE, T.rev}, {A_UNDERLINE, T.smul},
        {A_BLINK, T.blink}, {A_STANDOUT, T.smso},
#ifdef A_ITALIC
        {A_ITALIC, T.sitm},
#else
        {0, NULL},
#endif
    };
    for (int i = 0; i < 7; i++) {
        T.attr_bit[i] = attrs[i].bit;
        T.attr_cap[i][0] = '\0';
        if (attrs[i].s)
            strip_padding(T.attr_cap[i], sizeof(T.attr_cap[i]), attrs[i].s);
    }
    T.len = 0;
    T.overflow = false;
    T.need_clear = true;
    T.cy = -1;
    T.sgr_known = false;
    T.on = true;
    return true;
}

void termout_close(void)
{
    T.on = false;
    free(T.out);
    T.out = NULL;
    T.cap = T.len = 0;
}

bool termout_active(void)
{
    return T.on;
}

void termout_reset(void)
{
    T.need_clear = true;
}

/* A colour pair's colours and their setaf/setab strings, formatted once
 * (the pairs are defined before termout_open and not changed after). */
static const struct pair_fmt *pair_of(short pair)
{
    static struct pair_fmt spare;
    struct pair_fmt *e = pair >= 0 && pair < NPAIR ? &T.pairs[pair] : &spare;
    if (e->known && e != &spare)
        return e;
    memset(e, 0, sizeof(*e));
    e->known = true;
    e->fg = e->bg = -1;
    if (T.colors && pair > 0 && pair_content(pair, &e->fg, &e->bg) != OK)
        e->fg = e->bg = -1;
    if (e->fg >= 0)
        e->flen = (unsigned char)strip_padding(e->f, sizeof(e->f), tiparm(T.setaf, (int)e->fg));
    if (e->bg >= 0)
        e->blen = (unsigned char)strip_padding(e->b, sizeof(e->b), tiparm(T.setab, (int)e->bg));
    return e;
}

/* From the terminal's attributes to (a, pair) with what changes: the
 * attributes added and the colours that differ; a reset (sgr0, and op for
 * the colours) only when an attribute goes away, as there is no portable
 * way to end one alone. */
static void set_attr(attr_t a, short pair)
{
    if (T.sgr_known && T.ca == a && T.cpair == pair)
        return;
    attr_t have = T.ca;
    short ofg = -1, obg = -1;
    if (T.sgr_known) {
        const struct pair_fmt *o = pair_of(T.cpair);
        ofg = o->fg;
        obg = o->bg;
    }
    if (!T.sgr_known || (have & ~a) != 0) {
        put(T.reset, T.reset_len);
        have = A_NORMAL;
        ofg = obg = -1;
    }
    for (size_t i = 0; i < sizeof(T.attr_cap) / sizeof(T.attr_cap[0]); i++)
        if ((a & ~have & T.attr_bit[i]) && T.attr_cap[i][0])
            put(T.attr_cap[i], strlen(T.attr_cap[i]));
    const struct pair_fmt *np = pair_of(pair);
    if ((np->fg < 0 && ofg >= 0) || (np->bg < 0 && obg >= 0)) {
        put(T.op_s, strlen(T.op_s)); /* back to the default colours */
        ofg = obg = -1;
    }
    if (np->fg >= 0 && np->fg != ofg)
        put(np->f, np->flen);
    if (np->bg >= 0 && np->bg != obg)
        put(np->b, np->blen);
    T.sgr_known = true;
    T.ca = a;
    T.cpair = pair;
}

static char *put_uint(char *p, unsigned v)
{
    char tmp[12];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* "\E[" n final into p, n left out when it is 1 (the parameter's default);
 * returns the end. */
static char *put_csi(char *p, unsigned n, char final)
{
    *p++ = '\033';
    *p++ = '[';
    if (n != 1)
        p = put_uint(p, n);
    *p++ = final;
    return p;
}

/* The shortest relative move from the cursor to (y, x), into buf; 0 when
 * none can be made (the cursor's place unknown, or the entry lacks the
 * forms needed). */
static size_t rel_move(char *buf, int y, int x)
{
    if (T.cy < 0)
        return 0;
    char *p = buf;
    if (y > T.cy) {
        if (!T.ansi_cud)
            return 0;
        p = put_csi(p, (unsigned)(y - T.cy), 'B');
    } else if (y < T.cy) {
        if (!T.ansi_cuu)
            return 0;
        p = put_csi(p, (unsigned)(T.cy - y), 'A');
    }
    if (x != T.cx) {
        char h[16], *e = h;
        if (x > T.cx && T.ansi_cuf)
            e = put_csi(h, (unsigned)(x - T.cx), 'C');
        else if (x < T.cx && T.ansi_cub)
            e = put_csi(h, (unsigned)(T.cx - x), 'D');
        if (T.ansi_hpa) {
            char a[16];
            char *ae = put_csi(a, (unsigned)x + 1, 'G');
            if (e == h || ae - a < e - h) {
                memcpy(h, a, (size_t)(ae - a));
                e = h + (ae - a);
            }
        }
        if (e == h)
            return 0;
        memcpy(p, h, (size_t)(e - h));
        p += e - h;
    }
    return (size_t)(p - buf);
}

static void move_to(int y, int x)
{
    if (T.cy == y && T.cx == x)
        return;
    char rel[40];
    size_t rn = rel_move(rel, y, x);
    if (T.ansi_cup) {
        char buf[32], *p = buf;
        *p++ = '\033';
        *p++ = '[';
        p = put_uint(p, (unsigned)y + 1);
        *p++ = ';';
        p = put_uint(p, (unsigned)x + 1);
        *p++ = 'H';
        if (rn && rn < (size_t)(p - buf))
            put(rel, rn);
        else
            put(buf, (size_t)(p - buf));
    } else {
        char buf[128];
        size_t n = strip_padding(buf, sizeof(buf), tiparm(T.cup, y, x));
        put(rn && rn < n ? rel : buf, rn && rn < n ? rn : n);
    }
    T.cy = y;
    T.cx = x;
}

static void put_wc(wchar_t wc)
{
    if (wc >= 0x20 && wc < 0x7f) {
        char c = (char)wc;
        put(&c, 1);
        return;
    }
    char mb[MB_LEN_MAX];
    static int utf8 = -1; /* the locale is set once, before the first frame */
    if (utf8 < 0) {
        const char *cs = nl_langinfo(CODESET);
        utf8 = cs && strcmp(cs, "UTF-8") == 0;
    }
    uint32_t u = (uint32_t)wc;
    if (utf8 && u >= 0x80 && u < 0x110000 && (u < 0xd800 || u > 0xdfff)) {
        /* encoded here: wcrtomb's conversion machinery was a twentieth of
         * a frame's instructions */
        size_t n = 0;
        if (u < 0x800) {
            mb[n++] = (char)(0xc0 | (u >> 6));
        } else if (u < 0x10000) {
            mb[n++] = (char)(0xe0 | (u >> 12));
            mb[n++] = (char)(0x80 | ((u >> 6) & 0x3f));
        } else {
            mb[n++] = (char)(0xf0 | (u >> 18));
            mb[n++] = (char)(0x80 | ((u >> 12) & 0x3f));
            mb[n++] = (char)(0x80 | ((u >> 6) & 0x3f));
        }
        mb[n++] = (char)(0x80 | (u & 0x3f));
        put(mb, n);
        return;
    }
    mbstate_t st;
    memset(&st, 0, sizeof(st));
    size_t n = wcrtomb(mb, wc, &st);
    if (n == (size_t)-1) {
        put("?", 1);
        return;
    }
    put(mb, n);
}

/* Clear the screen, with the attributes reset first (a clear paints the
 * current background). */
static void screen_clear(void)
{
    T.need_clear = false;
    T.sgr_known = false;
    set_attr(A_NORMAL, 0);
    char buf[128];
    put(buf, strip_padding(buf, sizeof(buf), T.clear));
    T.cy = T.cx = 0;
}

void termout_cell(int y, int x, int rows, int cols, wchar_t wc, int w, const wchar_t *comb,
                  int n, attr_t a, short pair)
{
    if (!T.on || y < 0 || x < 0 || y >= rows || x + w > cols)
        return;
    if (T.need_clear)
        screen_clear();
    if (y == rows - 1 && x + w == cols && T.am && !T.xenl)
        return; /* writing it would scroll the screen */
    move_to(y, x);
    set_attr(a, pair);
    put_wc(wc);
    for (int i = 0; i < n; i++)
        put_wc(comb[i]);
    T.cx = x + w;
    if (T.cx >= cols)
        T.cy = -1; /* at the margin: where the cursor is depends on the terminal */
}

long termout_flush(void)
{
    if (!T.on)
        return 0;
    if (T.need_clear) /* a blank frame: nothing but the clear */
        screen_clear();
    if (T.overflow) {
        /* never a half frame: the whole screen again next time */
        T.len = 0;
        T.overflow = false;
        T.need_clear = true;
        return 0;
    }
    size_t off = 0;
    while (off < T.len) {
        ssize_t w = write(T.fd, T.out + off, T.len - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                /* a non-blocking terminal that is full: wait for room */
                fd_set wfds;
                FD_ZERO(&wfds);
                FD_SET(T.fd, &wfds);
                select(T.fd + 1, NULL, &wfds, NULL, NULL);
                continue;
            }
            T.len = 0;
            return -1;
        }
        off += (size_t)w;
    }
    long n = (long)T.len;
    T.len = 0;
    return n;
}
