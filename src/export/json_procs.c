/*
 * json_procs.c — every GPU process once, as a JSON array (json_procs.h).
 * Each entry is a process object as devices[].processes[] writes it, with
 * the device it runs on first and, after it, the source of its SM share and
 * its elapsed time.
 */
#include "export/json_procs.h"

#include <errno.h>
#include <stdlib.h>

#include "engine/proclist.h"
#include "export/json.h"
#include "export/jsonw.h"

static void str_or_null(struct jsonw *w, const char *key, const char *v)
{
    jsonw_key(w, key);
    jsonw_str(w, v && v[0] ? v : NULL);
}

static void write_entry(struct jsonw *w, const struct snapshot *s, size_t i)
{
    const struct gpu_process *p = &s->procs[i];
    long di = proclist_device_of(s, i);
    const struct device *d = di >= 0 ? &s->devices[di] : NULL;
    jsonw_obj_open(w);
    char label[32] = "";
    if (d)
        proclist_device_label(label, sizeof(label), d);
    str_or_null(w, "device", label);
    if (d && d->node[0]) { /* a fleet's: the node it runs on, as its device's */
        jsonw_key(w, "node");
        jsonw_str(w, d->node);
    }
    jsonw_key(w, "gpu_index");
    if (d)
        jsonw_int(w, d->index);
    else
        jsonw_null(w);
    jsonw_key(w, "mig_index");
    if (d && d->kind == DEV_MIG)
        jsonw_int(w, d->mig_index);
    else
        jsonw_null(w);
    str_or_null(w, "device_uuid", d ? d->uuid : NULL);
    str_or_null(w, "gpu_uuid", d ? (d->kind == DEV_MIG ? d->parent_uuid : d->uuid) : NULL);
    json_process_members(w, p);
    jsonw_key(w, "sm_util_source");
    jsonw_str(w, metric_source_name(p->sm_util.src));
    jsonw_key(w, "sm_util_reason");
    jsonw_str(w, metric_ok(&p->sm_util) ? NULL : p->sm_util.why);
    struct metric el = proclist_elapsed(s, p, proclist_clk_tck());
    jsonw_key(w, "elapsed_s");
    if (metric_ok(&el))
        jsonw_double(w, el.value);
    else
        jsonw_null(w);
    jsonw_obj_close(w);
}

int json_write_all_processes(FILE *f, const struct snapshot *s, bool pretty)
{
    size_t n;
    errno = 0;
    size_t *rows = proclist_all_by_memory(s, &n);
    if (!rows && errno == ENOMEM)
        return -ENOMEM;
    struct jsonw w;
    jsonw_init(&w, f, pretty);
    jsonw_arr_open(&w);
    for (size_t k = 0; k < n; k++)
        write_entry(&w, s, rows[k]);
    jsonw_arr_close(&w);
    jsonw_end(&w);
    free(rows);
    return 0;
}
