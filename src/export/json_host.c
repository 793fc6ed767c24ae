#include "export/json_host.h"

static void json_metric_key(struct jsonw *w, const char *key, const struct metric *m)
{
    jsonw_key(w, key);
    jsonw_metric(w, m);
}

void json_write_host(struct jsonw *w, const struct host_sample *h)
{
    jsonw_obj_open(w);

    jsonw_key(w, "hostname");
    jsonw_str(w, h->hostname[0] ? h->hostname : NULL);

    jsonw_key(w, "cpu");
    jsonw_obj_open(w);
    json_metric_key(w, "total_pct", &h->cpu_total);
    jsonw_key(w, "online");
    if (h->online >= 0)
        jsonw_int(w, h->online);
    else
        jsonw_null(w);
    /* Online cores only, ascending id: an offline core has no line in
     * /proc/stat, so there is nothing to say about it but its absence. */
    jsonw_key(w, "cores");
    jsonw_arr_open(w);
    for (size_t i = 0; i < h->ncores; i++) {
        jsonw_obj_open(w);
        jsonw_key(w, "id");
        jsonw_int(w, h->cores[i].id);
        json_metric_key(w, "pct", &h->cores[i].pct);
        jsonw_obj_close(w);
    }
    jsonw_arr_close(w);
    jsonw_obj_close(w);

    jsonw_key(w, "memory");
    jsonw_obj_open(w);
    json_metric_key(w, "total_bytes", &h->mem.total);
    json_metric_key(w, "used_bytes", &h->mem.used);
    json_metric_key(w, "cached_bytes", &h->mem.cached);
    json_metric_key(w, "buffers_bytes", &h->mem.buffers);
    json_metric_key(w, "free_bytes", &h->mem.free);
    json_metric_key(w, "available_bytes", &h->mem.available);
    jsonw_obj_close(w);

    jsonw_key(w, "swap");
    jsonw_obj_open(w);
    json_metric_key(w, "total_bytes", &h->mem.swap_total);
    json_metric_key(w, "used_bytes", &h->mem.swap_used);
    jsonw_obj_close(w);

    jsonw_key(w, "loadavg");
    jsonw_obj_open(w);
    json_metric_key(w, "1m", &h->loadavg[0]);
    json_metric_key(w, "5m", &h->loadavg[1]);
    json_metric_key(w, "15m", &h->loadavg[2]);
    jsonw_obj_close(w);

    json_metric_key(w, "uptime_s", &h->uptime_s);

    jsonw_obj_close(w);
}
