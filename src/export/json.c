#include "export/json.h"
#include "export/json_nodes.h"

#include <string.h>

#include "backend/events/xid.h"
#include "core/clock.h"
#include "core/health_rules.h"
#include "export/json_host.h"
#include "export/jsonw.h"

static void str_or_null(struct jsonw *w, const char *key, const char *v)
{
    jsonw_key(w, key);
    jsonw_str(w, v && v[0] ? v : NULL);
}

/* A ", "-joined list of modes as an array; null and a reason when it
 * could not be read. */
static void modes_list(struct jsonw *w, const char *key, const char *list, const char *why)
{
    jsonw_key(w, key);
    if (why) {
        jsonw_null(w);
        char k[64];
        snprintf(k, sizeof(k), "%s_reason", key);
        jsonw_key(w, k);
        jsonw_str(w, why);
        return;
    }
    jsonw_arr_open(w);
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        char one[32];
        const char *b = p;
        while (n && *b == ' ')
            b++, n--;
        snprintf(one, sizeof(one), "%.*s", (int)(n < 31 ? n : 31), b);
        if (one[0])
            jsonw_str(w, one);
        p += (size_t)(b - p) + n;
        if (*p == ',')
            p++;
    }
    jsonw_arr_close(w);
}

/* An AMD GPU's partition modes: current, and those the driver lists as
 * ones it can be switched to (docs/amdgpu.md); null on a GPU without. */
static void write_part_modes(struct jsonw *w, const struct device *d)
{
    jsonw_key(w, "partition_modes");
    if (!d->has_part_modes) {
        jsonw_null(w);
        return;
    }
    jsonw_obj_open(w);
    str_or_null(w, "compute", d->part_compute);
    modes_list(w, "compute_available", d->part_compute_avail, d->part_compute_why);
    str_or_null(w, "memory", d->part_memory);
    modes_list(w, "memory_available", d->part_memory_avail, d->part_memory_why);
    jsonw_obj_close(w);
}

static void int_or_null(struct jsonw *w, const char *key, int v)
{
    jsonw_key(w, key);
    if (v < 0)
        jsonw_null(w);
    else
        jsonw_int(w, v);
}

/* A metric object; on a MIG device a GPU-wide metric is marked as read from
 * the parent GPU ("scope": "parent"). */
void json_write_metric(struct jsonw *w, const struct device *d, enum metric_id id)
{
    const struct metric *m = &d->m[id];
    jsonw_obj_open(w);
    jsonw_key(w, "value");
    if (metric_ok(m))
        jsonw_double(w, m->value);
    else
        jsonw_null(w);
    jsonw_key(w, "source");
    jsonw_str(w, metric_source_name(m->src));
    if (d->kind == DEV_MIG && metric_info(id)->gpu_wide) {
        jsonw_key(w, "scope");
        jsonw_str(w, "parent");
    } else if (m->scope == MSCOPE_GPU_INSTANCE) {
        jsonw_key(w, "scope");
        jsonw_str(w, "gpu_instance");
    }
    if (m->why) {
        jsonw_key(w, "reason");
        jsonw_str(w, m->why);
    }
    jsonw_obj_close(w);
}

/* A plain number, or null when the metric is none (process fields are
 * values, not metric objects: the list is long and a process-level reason
 * would repeat on every entry). */
static void value_or_null(struct jsonw *w, const char *key, const struct metric *m)
{
    jsonw_key(w, key);
    if (metric_ok(m))
        jsonw_double(w, m->value);
    else
        jsonw_null(w);
}

void json_process_members(struct jsonw *w, const struct gpu_process *p)
{
    jsonw_key(w, "pid");
    jsonw_uint(w, p->pid);
    jsonw_key(w, "local_pid");
    if (p->local_pid >= 0)
        jsonw_int(w, p->local_pid);
    else
        jsonw_null(w);
    str_or_null(w, "name", p->name);
    str_or_null(w, "user", p->user);
    jsonw_key(w, "type");
    jsonw_str(w, proc_type_name(p->type));
    value_or_null(w, "memory_bytes", &p->mem_bytes);
    value_or_null(w, "sm_util_pct", &p->sm_util);
    value_or_null(w, "mem_util_pct", &p->mem_util);
    value_or_null(w, "enc_util_pct", &p->enc_util);
    value_or_null(w, "dec_util_pct", &p->dec_util);
    value_or_null(w, "cpu_pct", &p->cpu_pct);
    value_or_null(w, "rss_bytes", &p->rss_bytes);
    str_or_null(w, "command", p->command);
    int_or_null(w, "gpu_instance_id", p->gi_id);
    int_or_null(w, "compute_instance_id", p->ci_id);
    str_or_null(w, "container", p->container);
    jsonw_key(w, "unattributed");
    jsonw_bool(w, p->unattributed);
    jsonw_key(w, "carried");
    jsonw_bool(w, p->carried);
}

static void write_process(struct jsonw *w, const struct gpu_process *p)
{
    jsonw_obj_open(w);
    json_process_members(w, p);
    jsonw_obj_close(w);
}

static void write_processes(struct jsonw *w, const struct snapshot *s, const struct device *d)
{
    jsonw_key(w, "process_count");
    jsonw_metric(w, &d->process_count);
    jsonw_key(w, "processes");
    jsonw_arr_open(w);
    for (size_t i = 0; i < d->nprocs && d->proc_first + i < s->nprocs; i++)
        write_process(w, &s->procs[d->proc_first + i]);
    jsonw_arr_close(w);
}

/* The verdict and the rules that fired, in rule order (health.h). */
static void write_health(struct jsonw *w, const struct device *d)
{
    jsonw_key(w, "health");
    jsonw_obj_open(w);
    jsonw_key(w, "verdict");
    jsonw_str(w, health_level_name(d->health));
    jsonw_key(w, "rules");
    jsonw_arr_open(w);
    struct health_rule_info r[32];
    size_t n = health_rules_of(d->health_rules, r, 32);
    for (size_t i = 0; i < n; i++) {
        jsonw_obj_open(w);
        jsonw_key(w, "name");
        jsonw_str(w, r[i].name);
        jsonw_key(w, "level");
        jsonw_str(w, health_level_name(r[i].level));
        jsonw_key(w, "action");
        jsonw_str(w, r[i].action);
        jsonw_obj_close(w);
    }
    jsonw_arr_close(w);
    jsonw_obj_close(w);
}

void json_write_device(struct jsonw *w, const struct snapshot *s, const struct device *d)
{
    jsonw_obj_open(w);
    jsonw_key(w, "kind");
    jsonw_str(w, d->kind == DEV_MIG ? "mig" : "gpu");
    jsonw_key(w, "vendor");
    jsonw_str(w, device_vendor_name(d->vendor));
    jsonw_key(w, "index");
    jsonw_int(w, d->index);
    int_or_null(w, "mig_index", d->mig_index);
    str_or_null(w, "uuid", d->uuid);
    jsonw_key(w, "uuid_error");
    jsonw_str(w, d->uuid[0] ? NULL : d->uuid_why);
    str_or_null(w, "parent_uuid", d->parent_uuid);
    str_or_null(w, "name", d->name);
    str_or_null(w, "pci_bus_id", d->pci_bus_id);
    str_or_null(w, "serial", d->serial);
    str_or_null(w, "architecture", d->arch);
    jsonw_key(w, "compute_capability");
    if (d->cc_major >= 0) {
        char cc[16];
        snprintf(cc, sizeof(cc), "%d.%d", d->cc_major, d->cc_minor);
        jsonw_str(w, cc);
    } else {
        jsonw_null(w);
    }
    if (d->kind == DEV_GPU) {
        jsonw_key(w, "mig_enabled");
        if (d->inaccessible)
            jsonw_null(w);
        else
            jsonw_bool(w, d->mig_enabled);
    }
    if (d->node[0]) { /* a fleet's device (--prometheus) */
        jsonw_key(w, "node");
        jsonw_str(w, d->node);
        jsonw_key(w, "node_down");
        jsonw_bool(w, d->node_down);
        jsonw_key(w, "node_down_for_s");
        if (d->node_down && d->node_down_for_s >= 0)
            jsonw_double(w, d->node_down_for_s);
        else
            jsonw_null(w);
        jsonw_key(w, "pod"); /* the Kubernetes pod labelled on its series */
        if (d->pod.name[0]) {
            jsonw_obj_open(w);
            jsonw_key(w, "name");
            jsonw_str(w, d->pod.name);
            jsonw_key(w, "namespace");
            jsonw_str(w, d->pod.ns);
            jsonw_key(w, "container");
            jsonw_str(w, d->pod.container);
            jsonw_obj_close(w);
        } else {
            jsonw_null(w);
        }
    }
    jsonw_key(w, "lost");
    if (d->inaccessible)
        jsonw_null(w);
    else
        jsonw_bool(w, d->lost);
    jsonw_key(w, "lost_for_s");
    if (d->lost)
        jsonw_double(w, d->lost_for_s);
    else
        jsonw_null(w);
    jsonw_key(w, "stall");
    jsonw_str(w, d->stall);
    write_health(w, d);
    int_or_null(w, "gpu_instance_id", d->gi_id);
    int_or_null(w, "compute_instance_id", d->ci_id);
    str_or_null(w, "profile", d->profile);
    int_or_null(w, "slices", d->slices);
    int_or_null(w, "slices_total", d->slices_total);
    if (d->vendor == VENDOR_AMD && d->kind == DEV_GPU)
        write_part_modes(w, d);

    jsonw_key(w, "metrics");
    jsonw_obj_open(w);
    for (int k = 0; k < M_COUNT; k++) {
        jsonw_key(w, metric_info((enum metric_id)k)->name);
        json_write_metric(w, d, (enum metric_id)k);
    }
    jsonw_obj_close(w);

    jsonw_key(w, "throttle_reasons");
    if (d->throttle_valid) {
        const char *names[16];
        size_t n = throttle_reason_names(d->throttle_mask, names, 16);
        jsonw_arr_open(w);
        for (size_t i = 0; i < n; i++)
            jsonw_str(w, names[i]);
        jsonw_arr_close(w);
    } else {
        jsonw_null(w);
    }
    if (d->vendor == VENDOR_AMD) {
        jsonw_key(w, d->throttle_valid ? "throttle_reasons_source" : "throttle_reasons_reason");
        jsonw_str(w, d->throttle_valid ? "gpu_metrics residency counters" : d->throttle_why);
    } else if (d->throttle_why) {
        /* NVML's, where the entry point is news (a deprecated call's
         * replacement, or one refused): backend/nvml/nvml_compat.c */
        jsonw_key(w, d->throttle_valid ? "throttle_reasons_source" : "throttle_reasons_reason");
        jsonw_str(w, d->throttle_why);
    }
    write_processes(w, s, d);
    jsonw_obj_close(w);
}

/* The health events, oldest first: where each happened (the GPU, and the
 * MIG device when it names one), what it is and what to do about it. */
void json_write_events(struct jsonw *w, const struct snapshot *s)
{
    jsonw_key(w, "events_total");
    jsonw_uint(w, s->events_total);
    jsonw_key(w, "events_error");
    jsonw_str(w, s->events_why);
    jsonw_key(w, "events");
    jsonw_arr_open(w);
    for (size_t i = 0; i < s->nevents; i++) {
        const struct gpu_event *e = &s->events[i];
        const struct device *d =
            e->device_pos >= 0 && (size_t)e->device_pos < s->ndevices ? &s->devices[e->device_pos]
                                                                       : NULL;
        /* an operational event's legacy Xid reads as the Xid it is */
        bool ops = (e->type & GPU_EVENT_OPERATIONAL) != 0;
        bool xid = strcmp(xid_event_type_name(e->type), "xid") == 0 || (ops && e->xid);
        jsonw_obj_open(w);
        jsonw_key(w, "elapsed_ns");
        jsonw_uint(w, e->elapsed_ns);
        char ts[40];
        clock_rfc3339(e->wall_ns, ts, sizeof(ts));
        jsonw_key(w, "timestamp");
        jsonw_str(w, ts);
        int_or_null(w, "gpu", d ? d->index : -1);
        str_or_null(w, "uuid", e->gpu_uuid);
        int_or_null(w, "mig_index", d && d->kind == DEV_MIG ? d->mig_index : -1);
        int_or_null(w, "gi_id", e->gi_id);
        int_or_null(w, "ci_id", e->ci_id);
        jsonw_key(w, "type");
        jsonw_str(w, xid_event_type_name(e->type));
        jsonw_key(w, "xid");
        if (xid)
            jsonw_uint(w, e->xid);
        else
            jsonw_null(w);
        jsonw_key(w, "meaning");
        jsonw_str(w, xid ? xid_meaning(e->xid) : NULL);
        jsonw_key(w, "action");
        jsonw_str(w, xid ? xid_action(e->xid) : NULL);
        if (ops) { /* NVML's numbers, not interpreted (docs/health.md) */
            jsonw_key(w, "severity");
            jsonw_uint(w, e->severity);
            jsonw_key(w, "category");
            jsonw_uint(w, e->category);
        }
        jsonw_obj_close(w);
    }
    jsonw_arr_close(w);
}

void json_write_snapshot(FILE *f, const struct snapshot *s, bool pretty)
{
    json_write_snapshot_as(f, s, pretty, MIGMON_JSON_SCHEMA);
}

void json_write_snapshot_as(FILE *f, const struct snapshot *s, bool pretty, int schema)
{
    struct jsonw w;
    jsonw_init(&w, f, pretty);
    jsonw_obj_open(&w);
    jsonw_key(&w, "schema");
    jsonw_int(&w, schema);
    jsonw_key(&w, "generator");
    jsonw_str(&w, "mig-gpu-mon " MIGMON_VERSION);
    jsonw_key(&w, "elapsed_ns");
    jsonw_uint(&w, s->elapsed_ns);
    char ts[40];
    clock_rfc3339(s->wall_ns, ts, sizeof(ts));
    jsonw_key(&w, "timestamp");
    jsonw_str(&w, ts);
    str_or_null(&w, "driver_version", s->driver_version);
    str_or_null(&w, "nvml_version", s->nvml_version);
    char cuda[32] = "";
    if (s->cuda_driver_version > 0)
        snprintf(cuda, sizeof(cuda), "%d.%d", s->cuda_driver_version / 1000,
                 s->cuda_driver_version % 1000 / 10);
    str_or_null(&w, "cuda_driver_version", cuda);
    str_or_null(&w, "dcgm", s->dcgm_info);
    jsonw_key(&w, "host");
    if (s->host_ok)
        json_write_host(&w, &s->host);
    else
        jsonw_null(&w);
    if (!s->host_ok)
        str_or_null(&w, "host_error", s->host_error);
    jsonw_key(&w, "gpu_error");
    jsonw_str(&w, s->gpu_ok ? NULL : s->gpu_error);
    jsonw_key(&w, "partial");
    jsonw_bool(&w, s->partial);
    json_write_nodes(&w, s);
    jsonw_key(&w, "devices");
    jsonw_arr_open(&w);
    for (size_t i = 0; i < s->ndevices; i++)
        json_write_device(&w, s, &s->devices[i]);
    jsonw_arr_close(&w);
    json_write_events(&w, s);
    jsonw_obj_close(&w);
    jsonw_end(&w);
}
