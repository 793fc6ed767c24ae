/*
 * json_nodes.c — a fleet's nodes in the JSON snapshot (json_nodes.h).
 */
#include "export/json_nodes.h"

#include <stdio.h>

#include "core/health_rules.h"
#include "core/text.h"

/* A figure: its number, or null (its reason goes in "reasons"). */
static void figure(struct jsonw *w, const char *key, const struct metric *m)
{
    jsonw_key(w, key);
    if (metric_ok(m))
        jsonw_double(w, m->value);
    else
        jsonw_null(w);
}

static void write_node(struct jsonw *w, const struct node_summary *n)
{
    char inst[sizeof(n->instance)];
    snprintf(inst, sizeof(inst), "%s", n->instance);
    text_clean(inst, sizeof(inst)); /* another host's label */
    jsonw_obj_open(w);
    jsonw_key(w, "name");
    jsonw_str(w, n->name);
    jsonw_key(w, "instance");
    jsonw_str(w, inst);
    jsonw_key(w, "up");
    if (n->up < 0)
        jsonw_null(w);
    else
        jsonw_bool(w, n->up == 1);
    jsonw_key(w, "seen");
    jsonw_bool(w, n->seen);
    jsonw_key(w, "down_for_s");
    if (n->up == 0 && n->down_for_s >= 0)
        jsonw_double(w, n->down_for_s);
    else
        jsonw_null(w);
    jsonw_key(w, "exporter");
    jsonw_str(w, n->dcgm ? "dcgm-exporter" : "mig-gpu-mon");
    static const struct {
        const char *key;
        size_t off;
    } figs[] = {
        {"gpus", offsetof(struct node_summary, gpus)},
        {"mig_devices", offsetof(struct node_summary, mig)},
        {"idle", offsetof(struct node_summary, idle)},
        {"util_max_pct", offsetof(struct node_summary, util_max)},
        {"util_mean_pct", offsetof(struct node_summary, util_mean)},
        {"memory_used_bytes", offsetof(struct node_summary, mem_used)},
        {"memory_total_bytes", offsetof(struct node_summary, mem_total)},
        {"memory_devices", offsetof(struct node_summary, mem_devices)},
        {"devices_not_ok", offsetof(struct node_summary, not_ok)},
        {"gpus_action", offsetof(struct node_summary, gpus_action)},
        {"gpus_warning", offsetof(struct node_summary, gpus_warning)},
        {"pods", offsetof(struct node_summary, pods)},
    };
    size_t nfig = sizeof(figs) / sizeof(figs[0]);
    for (size_t k = 0; k < nfig; k++)
        figure(w, figs[k].key, (const struct metric *)((const char *)n + figs[k].off));
    jsonw_key(w, "health");
    jsonw_str(w, health_level_name(n->health));
    jsonw_key(w, "devices_read");
    jsonw_bool(w, n->devs_read);
    jsonw_key(w, "devices_why");
    jsonw_str(w, n->devs_read ? NULL : n->devs_why);
    jsonw_key(w, "reasons");
    jsonw_obj_open(w);
    for (size_t k = 0; k < nfig; k++) {
        const struct metric *m = (const struct metric *)((const char *)n + figs[k].off);
        if (!metric_ok(m)) {
            jsonw_key(w, figs[k].key);
            jsonw_str(w, m->why ? m->why : "unknown");
        }
    }
    jsonw_obj_close(w);
    jsonw_obj_close(w);
}

void json_write_nodes(struct jsonw *w, const struct snapshot *s)
{
    if (!s->fleet)
        return;
    jsonw_key(w, "nodes");
    jsonw_arr_open(w);
    for (size_t k = 0; k < s->nnodes; k++)
        write_node(w, &s->nodes[k]);
    jsonw_arr_close(w);
    jsonw_key(w, "nodes_why");
    jsonw_str(w, s->nodes_why);
    jsonw_key(w, "filter");
    jsonw_str(w, s->fleet_filter[0] ? s->fleet_filter : NULL);
}
