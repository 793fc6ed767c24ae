/*
 * past_ui.c — the selected device's charts from the backend's past
 * (past_ui.h).
 */
#include "tui/past_ui.h"

#include <stdio.h>
#include <string.h>

void tui_past_update(struct tui_past *P)
{
    if (P->none)
        return;
    const struct device *d = tui_view_selected(P->v);
    const char *uuid = d ? d->uuid : "", *node = d ? d->node : "";
    if (strcmp(uuid, P->uuid) == 0 && strcmp(node, P->node) == 0 &&
        P->v->interval_ms == P->interval_ms)
        return;
    snprintf(P->uuid, sizeof(P->uuid), "%s", uuid);
    snprintf(P->node, sizeof(P->node), "%s", node);
    P->interval_ms = P->v->interval_ms;
    P->pending = false;
    if (!uuid[0] || !history_device(P->hist, node, uuid))
        return; /* nothing to fill: no identity, or no rings (yet) */
    struct backend_past_ask a = {.node = node,
                                 .uuid = uuid,
                                 .points = (unsigned)P->hist->points,
                                 .interval_ms = P->interval_ms,
                                 .id = ++P->id};
    if (collect_past_ask(P->col, &a) != 0) {
        P->none = true;
        return;
    }
    P->ticks = P->hist->ticks;
    P->pending = true;
}

bool tui_past_take(struct tui_past *P)
{
    if (!P->pending)
        return false;
    struct hist_past p;
    uint64_t id = 0;
    char err[512];
    memset(&p, 0, sizeof(p));
    int rc = collect_past_take(P->col, &p, &id, err, sizeof(err));
    if (rc == 0)
        return false;
    bool mine = id == P->id;
    if (mine) {
        P->pending = false;
        if (rc > 0) {
            /* -ENOENT: the device's rings were dropped meanwhile; nothing to fill */
            history_fill_past(P->hist, &p, (size_t)(P->hist->ticks - P->ticks));
        } else {
            snprintf(P->v->status, sizeof(P->v->status), "charts: no past from Prometheus: %.200s",
                     err);
        }
    }
    hist_past_free(&p);
    return mine;
}

int tui_past_poll_ms(const struct tui_past *P)
{
    return P->pending ? TUI_PAST_POLL_MS : -1;
}
