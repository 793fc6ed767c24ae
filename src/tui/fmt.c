/*
 * fmt.c — the TUI's formatting and drawing helpers shared by the pane files:
 * values with their markers, runs of coloured text, a device row's figures.
 * Depends on the widgets and the view only, so the pane files do not
 * depend on each other.
 */
#include "tui/fmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"

/* Append s to out (len bytes, *at used), cut as snprintf cuts. */
static void put_str(char *out, size_t len, size_t *at, const char *s)
{
    while (*s && *at + 1 < len)
        out[(*at)++] = *s++;
}

/*
 * pre, v as "%.0f" writes it, then post, into out as snprintf would: the
 * nearest whole number, a tie to the even one (printf rounds the exact
 * binary value in the current rounding mode, as nearbyint does), and "-0"
 * for a negative value that rounds to zero. Most figures on the screen
 * are whole, and snprintf was about a tenth of a 64-device frame. False, with nothing written, when v is not finite or beyond
 * 10^15: the caller prints it with printf.
 */
bool tui_fmt_whole(char *out, size_t len, const char *pre, double v, const char *post)
{
    if (!(fabs(v) < 1e15) || len == 0)
        return false;
    unsigned long long u = (unsigned long long)fabs(nearbyint(v));
    char d[24];
    size_t n = 0;
    do {
        d[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t at = 0;
    put_str(out, len, &at, pre);
    if (signbit(v))
        put_str(out, len, &at, "-");
    while (n > 0 && at + 1 < len)
        out[at++] = d[--n];
    put_str(out, len, &at, post);
    out[at] = '\0';
    return true;
}

/* "45%", "~45%", "45%*" or "N/A" */
const char *tui_fmt_pct(char *out, size_t len, const struct metric *m, int decimals)
{
    const char *pre = m->src == MSRC_ESTIMATE ? "~" : "";
    if (!metric_ok(m))
        snprintf(out, len, "N/A");
    else if (decimals != 0 ||
             !tui_fmt_whole(out, len, pre, m->value, m->src == MSRC_CARRIED ? "%*" : "%"))
        snprintf(out, len, "%s%.*f%%%s", pre, decimals, m->value,
                 m->src == MSRC_CARRIED ? "*" : "");
    return out;
}

const char *tui_fmt_num(char *out, size_t len, const struct metric *m, double scale,
                           int decimals)
{
    const char *pre = m->src == MSRC_ESTIMATE ? "~" : "", *post = m->src == MSRC_CARRIED ? "*" : "";
    if (!metric_ok(m))
        snprintf(out, len, "N/A");
    else if (decimals != 0 || !tui_fmt_whole(out, len, pre, m->value * scale, post))
        snprintf(out, len, "%s%.*f%s", pre, decimals, m->value * scale, post);
    return out;
}

void tui_line(WINDOW *win, const struct tui_view *v, struct rect r, int y,
                 const struct piece *p, size_t n)
{
    int x = r.x;
    for (size_t i = 0; i < n && x < r.x + r.w; i++)
        if (p[i].s && *p[i].s)
            x = tui_text(win, &v->theme, r, y, x, p[i].role, p[i].s);
}

struct metric tui_vram_pct(const struct device *d)
{
    const struct metric *u = &d->m[M_MEM_USED], *t = &d->m[M_MEM_TOTAL];
    if (!metric_ok(u) || !metric_ok(t) || t->value <= 0)
        return metric_none("VRAM not read");
    struct metric m = metric_direct(100.0 * u->value / t->value);
    if (u->src == MSRC_CARRIED || t->src == MSRC_CARRIED)
        m.src = MSRC_CARRIED;
    return m;
}


const char *tui_src_tag(const struct metric *m)
{
    switch (m->src) {
    case MSRC_GPM: return " gpm";
    case MSRC_DCGM: return " dcgm";
    case MSRC_PROCESS: return " proc";
    default: return "";
    }
}

enum tui_role tui_na_or(const struct metric *m, enum tui_role role)
{
    return metric_ok(m) ? role : R_FREE;
}

void tui_device_name(char *out, size_t len, const struct device *d, bool short_name)
{
    if (!d->name[0]) {
        const char *why = "name not readable";
        for (int i = 0; i < M_COUNT; i++)
            if (!metric_ok(&d->m[i]) && d->m[i].why) {
                why = d->m[i].why;
                break;
            }
        snprintf(out, len, "(%s)", why);
        return;
    }
    const char *n = d->name;
    if (short_name && strncmp(n, "NVIDIA ", 7) == 0 && n[7])
        n += 7;
    snprintf(out, len, "%s", n);
}

static const char *marked(char *out, size_t len, const struct metric *m, const char *body)
{
    snprintf(out, len, "%s%s%s", m->src == MSRC_ESTIMATE ? "~" : "", body,
             m->src == MSRC_CARRIED ? "*" : "");
    return out;
}

const char *tui_fmt_bytes(char *out, size_t len, const struct metric *m)
{
    char b[32];
    if (!metric_ok(m)) {
        snprintf(out, len, "N/A");
        return out;
    }
    return marked(out, len, m, units_bytes(b, sizeof(b), m->value));
}

const char *tui_fmt_rate(char *out, size_t len, const struct metric *m)
{
    char b[32];
    if (!metric_ok(m)) {
        snprintf(out, len, "N/A");
        return out;
    }
    return marked(out, len, m, units_rate(b, sizeof(b), m->value));
}

int tui_gauge(WINDOW *win, const struct tui_view *v, struct rect r, int y, int x, int cells,
              const struct metric *pct, enum tui_role role)
{
    if (cells <= 0)
        return x;
    const struct tui_glyphs *g = &v->theme.g;
    int on = 0;
    if (metric_ok(pct)) {
        double f = pct->value / 100.0 * cells;
        on = f <= 0 ? 0 : f >= cells ? cells : (int)(f + 0.5);
        if (on == 0 && pct->value > 0)
            on = 1; /* busy at all: one cell, never an empty gauge */
    }
    enum tui_role onr = pct->src == MSRC_CARRIED || pct->src == MSRC_ESTIMATE ? R_FREE : role;
    x = tui_glyph_run(win, &v->theme, r, y, x, onr, g->bar_on, g->bar_on_s, on);
    return tui_glyph_run(win, &v->theme, r, y, x, R_FREE, g->bar_off, g->bar_off_s, cells - on);
}

int tui_dev_figures_width(int gauge_cells)
{
    return gauge_cells < 0 ? 1 + DEV_VAL_W : 2 * gauge_cells + DEV_FIG_FIXED;
}

/* a value right-aligned in w columns; returns the column after */
static int value_at(WINDOW *win, const struct tui_view *v, struct rect r, int y, int x, int w,
                    enum tui_role role, const char *s)
{
    int sw = tui_text_width(s), off = sw < w ? w - sw : 0;
    tui_text(win, &v->theme, r, y, x + off, role, s);
    return x + off + sw;
}

void tui_dev_figures(WINDOW *win, const struct tui_view *v, struct rect r, size_t i, int cells)
{
    char util[32], vram[32];
    const struct device *d = &v->snap->devices[i];
    const struct metric *u = &d->m[M_GPU_UTIL];
    struct metric vp = tui_vram_pct(d), su, st;
    tui_fmt_pct(util, sizeof(util), u, 0);
    if (snapshot_mig_vram_sum(v->snap, i, &su, &st)) {
        vp = metric_direct(100.0 * su.value / st.value);
        vp.src = su.src;
        char p[24];
        snprintf(vram, sizeof(vram), "%s%s", v->theme.g.sum, tui_fmt_pct(p, sizeof(p), &vp, 0));
    } else {
        tui_fmt_pct(vram, sizeof(vram), &vp, 0);
    }
    int x = r.x + 1, y = r.y;
    if (cells < 0) { /* utilisation only */
        value_at(win, v, r, y, x, DEV_VAL_W, tui_na_or(u, R_NORMAL), util);
        return;
    }
    x = tui_gauge(win, v, r, y, x, cells, u, R_GPU);
    x = value_at(win, v, r, y, x + (cells ? 1 : 0), DEV_VAL_W, tui_na_or(u, R_NORMAL), util);
    tui_text(win, &v->theme, r, y, x, R_FREE, tui_src_tag(u));
    x += DEV_TAG_W + 1;
    x = tui_gauge(win, v, r, y, x, cells, &vp,
                  metric_ok(&vp) ? tui_role_vram(vp.value) : R_FREE);
    value_at(win, v, r, y, x + (cells ? 1 : 0), DEV_VAL_W,
             metric_ok(&vp) ? tui_role_vram(vp.value) : R_FREE, vram);
}

const char *tui_fmt_temp(char *out, size_t len, const struct tui_view *v, const struct metric *m)
{
    if (!metric_ok(m)) {
        snprintf(out, len, "N/A");
        return out;
    }
    double t = v->fahrenheit ? m->value * 9.0 / 5.0 + 32.0 : m->value;
    snprintf(out, len, "%s%.0f%s%s%s", m->src == MSRC_ESTIMATE ? "~" : "", t, v->theme.g.deg,
             v->fahrenheit ? "F" : "C", m->src == MSRC_CARRIED ? "*" : "");
    return out;
}

size_t tui_wrap_take(const char *s, size_t len, int w)
{
    if (w <= 0 || len <= (size_t)w)
        return len;
    size_t take = (size_t)w, sp = take;
    while (sp > 0 && s[sp] != ' ')
        sp--;
    return sp > 0 ? sp : take;
}
