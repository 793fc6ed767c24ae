/*
 * node_detail.c — a fleet node's aggregates in the detail panel
 * (node_detail.h).
 */
#include "tui/node_detail.h"

#include <stdio.h>

#include "core/health_rules.h"
#include "tui/fleet_ui.h"
#include "tui/widgets.h"

/* "8", or "N/A" for a count none. */
static const char *count(char *out, size_t len, const struct metric *m)
{
    if (metric_ok(m))
        snprintf(out, len, "%.0f", m->value);
    else
        snprintf(out, len, "N/A");
    return out;
}

static const char *pct(char *out, size_t len, const struct metric *m)
{
    if (metric_ok(m))
        snprintf(out, len, "%.0f %%", m->value);
    else
        snprintf(out, len, "N/A");
    return out;
}

void tui_draw_node_detail(WINDOW *win, const struct tui_view *v, struct rect in,
                          const struct node_summary *n)
{
    char line[512], a[32], b[32], c[32], d[32], e[32], mem[64] = "N/A";
    int y = in.y;
    const char *state = n->up == 1 ? "up" : n->up == 0 ? "DOWN" : "up unknown";
    if (n->up == 0 && n->down_for_s >= 0)
        snprintf(a, sizeof(a), "DOWN for %.0f s", n->down_for_s);
    else
        snprintf(a, sizeof(a), "%s", state);
    snprintf(line, sizeof(line), "Node %s  target %s  %s%s", n->name, n->instance, a,
             n->seen ? "" : ", never seen");
    if (y < in.y + in.h)
        tui_text(win, &v->theme, in, y++, in.x, n->up == 0 ? R_ALARM : R_TITLE, line);
    snprintf(line, sizeof(line), "GPUs %s  MIG %s  idle %s  utilisation mean %s  max %s",
             count(a, sizeof(a), &n->gpus), count(b, sizeof(b), &n->mig),
             count(c, sizeof(c), &n->idle), pct(d, sizeof(d), &n->util_mean),
             pct(e, sizeof(e), &n->util_max));
    if (y < in.y + in.h)
        tui_text(win, &v->theme, in, y++, in.x, R_NORMAL, line);
    if (metric_ok(&n->mem_used) && metric_ok(&n->mem_total))
        tui_fleet_bytes(mem, sizeof(mem), n->mem_used.value, n->mem_total.value);
    snprintf(line, sizeof(line), "VRAM %s (%s devices read)  health %s, %s not ok  pods %s", mem,
             count(a, sizeof(a), &n->mem_devices), health_level_name(n->health),
             count(b, sizeof(b), &n->not_ok), count(c, sizeof(c), &n->pods));
    if (y < in.y + in.h)
        tui_text(win, &v->theme, in, y++, in.x, R_NORMAL, line);
    /* the first reason a figure is N/A, and why the devices are not listed */
    const struct metric *ms[] = {&n->gpus, &n->idle, &n->util_max, &n->mem_used, &n->not_ok};
    for (size_t k = 0; k < sizeof(ms) / sizeof(ms[0]); k++)
        if (!metric_ok(ms[k]) && ms[k]->why) {
            snprintf(line, sizeof(line), "N/A: %s", ms[k]->why);
            if (y < in.y + in.h)
                tui_text(win, &v->theme, in, y++, in.x, R_FREE, line);
            break;
        }
    snprintf(line, sizeof(line), "Its devices: %s (Enter unfolds the node)",
             n->devs_read ? "read" : n->devs_why ? n->devs_why : "not read yet");
    if (y < in.y + in.h)
        tui_text(win, &v->theme, in, y, in.x, R_FREE, line);
}
