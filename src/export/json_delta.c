/*
 * json_delta.c — schema 2's lines (json_delta.h): the changes since the
 * snapshot before, found by comparing the two snapshots' structures (no
 * rendering of what did not change: the recorder's cost is what changed),
 * written with the same writers as the full object (export/json.c).
 *
 * Every member json.c writes is compared here: the hot ones (metrics,
 * process values, the host's figures) one by one, the rest of a device
 * (its identity, health, state, throttle reasons) together, which writes
 * the device whole when any of it changed. tests/unit/test_json_delta.c
 * applies the lines to the full objects for every simulated scenario and
 * checks that they give json.c's object member for member.
 */
#include "export/json_delta.h"

#include <math.h>
#include <string.h>

#include "core/clock.h"
#include "export/json.h"
#include "export/json_host.h"
#include "export/jsonw.h"

/* Containers written only when something under them changed: declared
 * with lz_push, opened (with the {} of the array elements before them) by
 * lz_need, closed by lz_pop when they were opened. Level 0 is the line's
 * object, open from the start. */
#define LZ_MAX 8
struct lz {
    struct jsonw *w;
    int n, opened;
    struct {
        const char *key; /* member name; NULL for an array's element */
        bool arr;
        size_t idx;      /* an element: its place in the array */
        size_t next;     /* an array: the next element to write */
    } l[LZ_MAX];
};

static void lz_push(struct lz *z, const char *key, bool arr, size_t idx)
{
    z->l[z->n].key = key;
    z->l[z->n].arr = arr;
    z->l[z->n].idx = idx;
    z->l[z->n].next = 0;
    z->n++;
}

/* The unchanged elements of array level a before idx, as {}. */
static void lz_fill(struct lz *z, int a, size_t idx)
{
    for (; z->l[a].next < idx; z->l[a].next++) {
        jsonw_obj_open(z->w);
        jsonw_obj_close(z->w);
    }
}

static void lz_need(struct lz *z)
{
    for (int i = z->opened; i < z->n; i++) {
        if (z->l[i - 1].arr) {
            lz_fill(z, i - 1, z->l[i].idx);
            z->l[i - 1].next = z->l[i].idx + 1;
        } else {
            jsonw_key(z->w, z->l[i].key);
        }
        if (z->l[i].arr)
            jsonw_arr_open(z->w);
        else
            jsonw_obj_open(z->w);
    }
    z->opened = z->n;
}

/* A member of the innermost level about to be written: its key. */
static void lz_key(struct lz *z, const char *key)
{
    lz_need(z);
    jsonw_key(z->w, key);
}

/* Element idx of the innermost level (an array) about to be written whole. */
static void lz_elem(struct lz *z, size_t idx)
{
    lz_need(z);
    lz_fill(z, z->n - 1, idx);
    z->l[z->n - 1].next = idx + 1;
}

/* Closes the innermost level; an array gets {} for its elements after
 * the last written (len in all). */
static void lz_pop(struct lz *z, size_t len)
{
    int top = z->n - 1;
    if (top < z->opened) {
        if (z->l[top].arr) {
            lz_fill(z, top, len);
            jsonw_arr_close(z->w);
        } else {
            jsonw_obj_close(z->w);
        }
        z->opened = top;
    }
    z->n = top;
}

static bool str_eq(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool num_eq(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

enum { M_SAME, M_VALUE, M_WHOLE };

static int metric_cmp(const struct metric *a, const struct metric *b)
{
    if (a->src != b->src || a->scope != b->scope || !str_eq(a->why, b->why))
        return M_WHOLE;
    if (metric_ok(b) && !num_eq(a->value, b->value))
        return M_VALUE;
    return M_SAME;
}

static void bare(struct jsonw *w, const struct metric *m)
{
    if (metric_ok(m))
        jsonw_double(w, m->value);
    else
        jsonw_null(w);
}

/* A metric of the host or a process count (jsonw_metric's object). */
static void metric_patch(struct lz *z, const char *key, const struct metric *a,
                         const struct metric *b)
{
    int c = metric_cmp(a, b);
    if (c == M_SAME)
        return;
    lz_key(z, key);
    if (c == M_VALUE)
        bare(z->w, b);
    else
        jsonw_metric(z->w, b);
}

static bool host_cold_same(const struct host_sample *a, const struct host_sample *b)
{
    if (strcmp(a->hostname, b->hostname) != 0 || a->online != b->online || a->ncores != b->ncores)
        return false;
    for (size_t i = 0; i < a->ncores; i++)
        if (a->cores[i].id != b->cores[i].id)
            return false;
    return true;
}

static void host_patch(struct lz *z, const struct host_sample *a, const struct host_sample *b)
{
    if (!host_cold_same(a, b)) {
        lz_key(z, "host");
        json_write_host(z->w, b);
        return;
    }
    lz_push(z, "host", false, 0);
    lz_push(z, "cpu", false, 0);
    metric_patch(z, "total_pct", &a->cpu_total, &b->cpu_total);
    lz_push(z, "cores", true, 0);
    for (size_t i = 0; i < b->ncores; i++) {
        lz_push(z, NULL, false, i);
        metric_patch(z, "pct", &a->cores[i].pct, &b->cores[i].pct);
        lz_pop(z, 0);
    }
    lz_pop(z, b->ncores);
    lz_pop(z, 0);
    lz_push(z, "memory", false, 0);
    metric_patch(z, "total_bytes", &a->mem.total, &b->mem.total);
    metric_patch(z, "used_bytes", &a->mem.used, &b->mem.used);
    metric_patch(z, "cached_bytes", &a->mem.cached, &b->mem.cached);
    metric_patch(z, "buffers_bytes", &a->mem.buffers, &b->mem.buffers);
    metric_patch(z, "free_bytes", &a->mem.free, &b->mem.free);
    metric_patch(z, "available_bytes", &a->mem.available, &b->mem.available);
    lz_pop(z, 0);
    lz_push(z, "swap", false, 0);
    metric_patch(z, "total_bytes", &a->mem.swap_total, &b->mem.swap_total);
    metric_patch(z, "used_bytes", &a->mem.swap_used, &b->mem.swap_used);
    lz_pop(z, 0);
    lz_push(z, "loadavg", false, 0);
    metric_patch(z, "1m", &a->loadavg[0], &b->loadavg[0]);
    metric_patch(z, "5m", &a->loadavg[1], &b->loadavg[1]);
    metric_patch(z, "15m", &a->loadavg[2], &b->loadavg[2]);
    lz_pop(z, 0);
    metric_patch(z, "uptime_s", &a->uptime_s, &b->uptime_s);
    lz_pop(z, 0);
}

/* Everything json.c writes of a device but its metrics and processes. */
static bool device_cold_same(const struct device *a, const struct device *b)
{
    if (a->kind != b->kind || a->vendor != b->vendor || a->index != b->index ||
        a->mig_index != b->mig_index || strcmp(a->uuid, b->uuid) != 0 ||
        (!b->uuid[0] && !str_eq(a->uuid_why, b->uuid_why)) ||
        strcmp(a->parent_uuid, b->parent_uuid) != 0 || strcmp(a->name, b->name) != 0 ||
        strcmp(a->pci_bus_id, b->pci_bus_id) != 0 || strcmp(a->serial, b->serial) != 0 ||
        strcmp(a->arch, b->arch) != 0 || a->cc_major != b->cc_major ||
        a->cc_minor != b->cc_minor || a->mig_enabled != b->mig_enabled ||
        !a->inaccessible != !b->inaccessible || a->lost != b->lost ||
        (b->lost && !num_eq(a->lost_for_s, b->lost_for_s)) || !str_eq(a->stall, b->stall) ||
        a->health != b->health || a->health_rules != b->health_rules || a->gi_id != b->gi_id ||
        a->ci_id != b->ci_id || strcmp(a->profile, b->profile) != 0 ||
        a->slices != b->slices || a->slices_total != b->slices_total ||
        a->throttle_valid != b->throttle_valid ||
        (b->throttle_valid && a->throttle_mask != b->throttle_mask) ||
        !str_eq(a->throttle_why, b->throttle_why))
        return false;
    if (strcmp(a->node, b->node) != 0 ||
        (b->node[0] && (a->node_down != b->node_down ||
                        !num_eq(a->node_down_for_s, b->node_down_for_s) ||
                        strcmp(a->pod.name, b->pod.name) != 0 || strcmp(a->pod.ns, b->pod.ns) != 0 ||
                        strcmp(a->pod.container, b->pod.container) != 0)))
        return false;
    if (a->has_part_modes != b->has_part_modes)
        return false;
    return !b->has_part_modes ||
           (strcmp(a->part_compute, b->part_compute) == 0 &&
            strcmp(a->part_memory, b->part_memory) == 0 &&
            strcmp(a->part_compute_avail, b->part_compute_avail) == 0 &&
            strcmp(a->part_memory_avail, b->part_memory_avail) == 0 &&
            str_eq(a->part_compute_why, b->part_compute_why) &&
            str_eq(a->part_memory_why, b->part_memory_why));
}

/* Process i of device d (json.c's bound), or NULL. */
static const struct gpu_process *proc_of(const struct snapshot *s, const struct device *d, size_t i)
{
    return i < d->nprocs && d->proc_first + i < s->nprocs ? &s->procs[d->proc_first + i] : NULL;
}

static size_t procs_shown(const struct snapshot *s, const struct device *d)
{
    size_t n = 0;
    while (proc_of(s, d, n))
        n++;
    return n;
}

static bool proc_cold_same(const struct gpu_process *a, const struct gpu_process *b)
{
    return a->pid == b->pid && a->local_pid == b->local_pid && a->type == b->type &&
           a->gi_id == b->gi_id && a->ci_id == b->ci_id && a->unattributed == b->unattributed &&
           a->carried == b->carried && strcmp(a->name, b->name) == 0 &&
           strcmp(a->user, b->user) == 0 && strcmp(a->command, b->command) == 0 &&
           strcmp(a->container, b->container) == 0;
}

/* A process's value (json.c's value_or_null): a number or null. */
static void value_patch(struct lz *z, const char *key, const struct metric *a,
                        const struct metric *b)
{
    if (metric_ok(a) == metric_ok(b) && (!metric_ok(b) || num_eq(a->value, b->value)))
        return;
    lz_key(z, key);
    bare(z->w, b);
}

static void procs_patch(struct lz *z, const struct snapshot *sa, const struct device *a,
                        const struct snapshot *sb, const struct device *b)
{
    size_t n = procs_shown(sb, b);
    bool same = n == procs_shown(sa, a);
    for (size_t i = 0; same && i < n; i++)
        same = proc_cold_same(proc_of(sa, a, i), proc_of(sb, b, i));
    if (!same) {
        lz_key(z, "processes");
        jsonw_arr_open(z->w);
        for (size_t i = 0; i < n; i++) {
            jsonw_obj_open(z->w);
            json_process_members(z->w, proc_of(sb, b, i));
            jsonw_obj_close(z->w);
        }
        jsonw_arr_close(z->w);
        return;
    }
    lz_push(z, "processes", true, 0);
    for (size_t i = 0; i < n; i++) {
        const struct gpu_process *p = proc_of(sa, a, i), *q = proc_of(sb, b, i);
        lz_push(z, NULL, false, i);
        value_patch(z, "memory_bytes", &p->mem_bytes, &q->mem_bytes);
        value_patch(z, "sm_util_pct", &p->sm_util, &q->sm_util);
        value_patch(z, "mem_util_pct", &p->mem_util, &q->mem_util);
        value_patch(z, "enc_util_pct", &p->enc_util, &q->enc_util);
        value_patch(z, "dec_util_pct", &p->dec_util, &q->dec_util);
        value_patch(z, "cpu_pct", &p->cpu_pct, &q->cpu_pct);
        value_patch(z, "rss_bytes", &p->rss_bytes, &q->rss_bytes);
        lz_pop(z, 0);
    }
    lz_pop(z, n);
}

/* A MIG device's metric of its whole GPU ("scope": "parent") the same as
 * its GPU's g: the reader takes the GPU's when the line says the GPU's. */
static bool same_as_gpu(const struct metric *m, const struct metric *g)
{
    return m->src == g->src && str_eq(m->why, g->why) && (!metric_ok(m) || num_eq(m->value, g->value));
}

/* Device i. Its GPU (the last GPU before it; pb NULL: none) and, by
 * metric, whether this line says the GPU's (gpu_said). Returns whether it
 * was written whole. */
static bool device_patch(struct lz *z, size_t i, const struct snapshot *sa,
                         const struct snapshot *sb, const struct device *pb,
                         const bool *gpu_said)
{
    const struct device *a = &sa->devices[i], *b = &sb->devices[i];
    if (!device_cold_same(a, b)) {
        lz_elem(z, i);
        json_write_device(z->w, sb, b);
        return true;
    }
    bool follows = pb && b->kind == DEV_MIG;
    lz_push(z, NULL, false, i);
    lz_push(z, "metrics", false, 0);
    for (int k = 0; k < M_COUNT; k++) {
        int c = metric_cmp(&a->m[k], &b->m[k]);
        bool said = follows && gpu_said[k] && metric_info((enum metric_id)k)->gpu_wide;
        if (said && same_as_gpu(&b->m[k], &pb->m[k]))
            continue; /* the reader takes the GPU's */
        if (c == M_SAME && !said)
            continue;
        lz_key(z, metric_info((enum metric_id)k)->name);
        if (c == M_VALUE)
            bare(z->w, &b->m[k]);
        else /* changed whole, or the same while its GPU's changed: said, whole */
            json_write_metric(z->w, b, (enum metric_id)k);
    }
    lz_pop(z, 0);
    metric_patch(z, "process_count", &a->process_count, &b->process_count);
    procs_patch(z, sa, a, sb, b);
    lz_pop(z, 0);
    return false;
}

static bool events_same(const struct snapshot *a, const struct snapshot *b)
{
    if (a->events_total != b->events_total || !str_eq(a->events_why, b->events_why) ||
        a->nevents != b->nevents)
        return false;
    for (size_t i = 0; i < b->nevents; i++) {
        const struct gpu_event *x = &a->events[i], *y = &b->events[i];
        if (x->elapsed_ns != y->elapsed_ns || x->wall_ns != y->wall_ns ||
            x->device_pos != y->device_pos || x->gi_id != y->gi_id || x->ci_id != y->ci_id ||
            x->xid != y->xid || x->type != y->type || strcmp(x->gpu_uuid, y->gpu_uuid) != 0)
            return false;
    }
    return true;
}

static void str_patch(struct lz *z, const char *key, const char *a, const char *b)
{
    if (strcmp(a, b) == 0)
        return;
    lz_key(z, key);
    jsonw_str(z->w, b[0] ? b : NULL);
}

static void top_patch(struct lz *z, const struct snapshot *a, const struct snapshot *b)
{
    str_patch(z, "driver_version", a->driver_version, b->driver_version);
    str_patch(z, "nvml_version", a->nvml_version, b->nvml_version);
    if (a->cuda_driver_version != b->cuda_driver_version) {
        char cuda[32] = "";
        if (b->cuda_driver_version > 0)
            snprintf(cuda, sizeof(cuda), "%d.%d", b->cuda_driver_version / 1000,
                     b->cuda_driver_version % 1000 / 10);
        lz_key(z, "cuda_driver_version");
        jsonw_str(z->w, cuda[0] ? cuda : NULL);
    }
    str_patch(z, "dcgm", a->dcgm_info, b->dcgm_info);
    if (!b->host_ok)
        str_patch(z, "host_error", a->host_error, b->host_error);
    if (a->gpu_ok != b->gpu_ok || (!b->gpu_ok && strcmp(a->gpu_error, b->gpu_error) != 0)) {
        lz_key(z, "gpu_error");
        jsonw_str(z->w, b->gpu_ok ? NULL : b->gpu_error);
    }
    if (a->partial != b->partial) {
        lz_key(z, "partial");
        jsonw_bool(z->w, b->partial);
    }
}

bool json_delta_write(FILE *f, const struct snapshot *s, const struct snapshot *prev)
{
    if (!prev || prev->ndevices != s->ndevices || prev->host_ok != s->host_ok) {
        json_write_snapshot_as(f, s, false, JSON_DELTA_SCHEMA);
        return true;
    }
    struct jsonw w;
    jsonw_init(&w, f, false);
    jsonw_obj_open(&w);
    jsonw_key(&w, "schema");
    jsonw_int(&w, JSON_DELTA_SCHEMA);
    jsonw_key(&w, "delta");
    jsonw_bool(&w, true);
    jsonw_key(&w, "elapsed_ns");
    jsonw_uint(&w, s->elapsed_ns);
    char ts[40];
    clock_rfc3339(s->wall_ns, ts, sizeof(ts));
    jsonw_key(&w, "timestamp");
    jsonw_str(&w, ts);
    struct lz z = {.w = &w, .n = 1, .opened = 1};
    top_patch(&z, prev, s);
    if (s->host_ok)
        host_patch(&z, &prev->host, &s->host);
    lz_push(&z, "devices", true, 0);
    const struct device *gpu = NULL; /* the GPU of the MIG devices after it */
    bool said[M_COUNT];              /* the metrics of it this line says */
    for (size_t i = 0; i < s->ndevices; i++) {
        bool whole = device_patch(&z, i, prev, s, gpu, said);
        if (s->devices[i].kind == DEV_GPU) {
            gpu = &s->devices[i];
            for (int k = 0; k < M_COUNT; k++)
                said[k] = whole || metric_cmp(&prev->devices[i].m[k], &gpu->m[k]) != M_SAME;
        }
    }
    lz_pop(&z, s->ndevices);
    if (!events_same(prev, s))
        json_write_events(&w, s);
    jsonw_obj_close(&w);
    jsonw_end(&w);
    return false;
}
