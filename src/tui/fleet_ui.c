#include "tui/fleet_ui.h"

#include <stdio.h>
#include <string.h>

#include "health.h"

/* Idle: utilisation read and under 1 %, or, where no utilisation is to be
 * had (an A100 without DCGM), no process on it by the driver's list. */
static bool idle(const struct device *d)
{
    const struct metric *u = &d->m[M_GPU_UTIL];
    if (metric_ok(u))
        return u->value < 1.0;
    return metric_ok(&d->process_count) && d->process_count.value == 0;
}

bool tui_fleet_totals(const struct snapshot *s, struct tui_fleet_totals *t)
{
    memset(t, 0, sizeof(*t));
    if (!s || s->ndevices == 0 || !s->devices[0].node[0])
        return false;
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        if (i == 0 || strcmp(s->devices[i - 1].node, d->node) != 0) {
            t->nodes++;
            t->nodes_down += d->node_down;
        }
        if (d->health == HEALTH_WARNING || d->health == HEALTH_ACTION)
            t->not_ok++;
        bool has_mig = d->kind == DEV_GPU && i + 1 < s->ndevices &&
                       s->devices[i + 1].kind == DEV_MIG && s->devices[i + 1].parent_pos == (int)i;
        if (d->kind == DEV_GPU) {
            t->gpus++;
        } else {
            t->mig++;
            t->mig_idle += !d->node_down && idle(d);
        }
        if (!has_mig && metric_ok(&d->m[M_MEM_USED]) && metric_ok(&d->m[M_MEM_TOTAL])) {
            t->mem_used += d->m[M_MEM_USED].value;
            t->mem_total += d->m[M_MEM_TOTAL].value;
            t->mem_known = true;
        }
    }
    return true;
}

static void bytes(char *out, size_t len, double used, double total)
{
    const char *u = "GiB";
    double div = 1073741824.0;
    if (total >= 1099511627776.0 * 10) {
        u = "TiB";
        div = 1099511627776.0;
    }
    snprintf(out, len, "%.1f/%.1f %s", used / div, total / div, u);
}

void tui_fleet_summary(char *out, size_t len, const struct tui_fleet_totals *t, bool brief)
{
    char down[32] = "", mem[48] = "N/A", bad[48] = "";
    if (t->mem_known)
        bytes(mem, sizeof(mem), t->mem_used, t->mem_total);
    if (brief) {
        if (t->nodes_down)
            snprintf(down, sizeof(down), " %zu down", t->nodes_down);
        if (t->not_ok)
            snprintf(bad, sizeof(bad), " %zu !", t->not_ok);
        snprintf(out, len, "%zu nodes%s %zu GPU %zu MIG %zu idle %s%s", t->nodes, down, t->gpus,
                 t->mig, t->mig_idle, mem, bad);
        return;
    }
    if (t->nodes_down)
        snprintf(down, sizeof(down), " (%zu down)", t->nodes_down);
    if (t->not_ok)
        snprintf(bad, sizeof(bad), "  %zu device%s not ok", t->not_ok, t->not_ok == 1 ? "" : "s");
    snprintf(out, len, "%zu node%s%s  %zu GPU%s  %zu MIG, %zu idle  VRAM %s%s", t->nodes,
             t->nodes == 1 ? "" : "s", down, t->gpus, t->gpus == 1 ? "" : "s", t->mig,
             t->mig_idle, mem, bad);
}
