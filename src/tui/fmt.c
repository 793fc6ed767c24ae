/*
 * fmt.c — the TUI's formatting and drawing helpers shared by panels.c and
 * charts.c: values with their markers, runs of coloured text, the selected
 * device. Depends on the widgets and the view only, so the panel files do
 * not depend on each other.
 */
#include "tui/fmt.h"

#include <stdio.h>

/* "45%", "~45%", "45%*" or "N/A" */
const char *tui_fmt_pct(char *out, size_t len, const struct metric *m, int decimals)
{
    if (!metric_ok(m))
        snprintf(out, len, "N/A");
    else
        snprintf(out, len, "%s%.*f%%%s", m->src == MSRC_ESTIMATE ? "~" : "", decimals, m->value,
                 m->src == MSRC_CARRIED ? "*" : "");
    return out;
}

const char *tui_fmt_num(char *out, size_t len, const struct metric *m, double scale,
                           int decimals)
{
    if (!metric_ok(m))
        snprintf(out, len, "N/A");
    else
        snprintf(out, len, "%s%.*f%s", m->src == MSRC_ESTIMATE ? "~" : "", decimals,
                 m->value * scale, m->src == MSRC_CARRIED ? "*" : "");
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

const struct device *tui_view_selected(const struct tui_view *v)
{
    const struct snapshot *s = v->snap;
    if (!s || s->ndevices == 0 || v->sel >= s->ndevices)
        return NULL;
    return &s->devices[v->sel];
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

