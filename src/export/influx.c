#include "export/influx.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "backend/events/xid.h"
#include "core/text.h"
#include "export/numfmt.h"

size_t influx_escape(char *out, size_t cap, const char *s, enum influx_ctx ctx)
{
    size_t n = 0;
#define PUT(c)                                                                                     \
    do {                                                                                           \
        if (n + 1 < cap)                                                                           \
            out[n] = (c);                                                                          \
        n++;                                                                                       \
    } while (0)
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == 0x7f) {
            PUT('?');
            continue;
        }
        switch (ctx) {
        case INFLUX_MEASUREMENT:
            if (c == ',' || c == ' ')
                PUT('\\');
            PUT((char)c);
            break;
        case INFLUX_KEY:
            if (c == ',' || c == '=' || c == ' ') {
                PUT('\\');
                PUT((char)c);
            } else if (c == '\\' && (p[1] == '\0' || p[1] == ',' || p[1] == '=' || p[1] == ' ')) {
                PUT('?');
            } else {
                PUT((char)c);
            }
            break;
        case INFLUX_STRING:
            if (c == '"' || c == '\\')
                PUT('\\');
            PUT((char)c);
            break;
        }
    }
#undef PUT
    if (cap > 0)
        out[n < cap ? n : cap - 1] = '\0';
    return n;
}

/* A line under construction. Tag values are at most MIGMON_NAME_LEN or
 * MIGMON_UUID_LEN bytes and a process's command 512, so even escaped
 * (doubled) every line fits; one that did not would be dropped whole,
 * never written cut. */
#define LINE_MAX_BYTES 16384

struct line {
    char buf[LINE_MAX_BYTES];
    size_t len;
    bool overflow;
    unsigned nfields;
};

static void put(struct line *l, const char *s, size_t n)
{
    if (l->overflow || l->len + n >= sizeof(l->buf)) {
        l->overflow = true;
        return;
    }
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

static void put_escaped(struct line *l, const char *s, enum influx_ctx ctx)
{
    char tmp[2 * PROC_CMD_LEN + 8];
    size_t n = influx_escape(tmp, sizeof(tmp), s, ctx);
    if (n >= sizeof(tmp))
        l->overflow = true;
    else
        put(l, tmp, n);
}

static void line_start(struct line *l, const char *measurement)
{
    l->len = 0;
    l->overflow = false;
    l->nfields = 0;
    put_escaped(l, measurement, INFLUX_MEASUREMENT);
}

/* Tags come before any field. An empty value is not allowed: no tag. */
static void tag(struct line *l, const char *key, const char *v)
{
    if (!v || !*v)
        return;
    put(l, ",", 1);
    put_escaped(l, key, INFLUX_KEY);
    put(l, "=", 1);
    put_escaped(l, v, INFLUX_KEY);
}

static void tag_int(struct line *l, const char *key, int v)
{
    if (v < 0)
        return;
    char b[24];
    snprintf(b, sizeof(b), "%d", v);
    tag(l, key, b);
}

static void field_key(struct line *l, const char *key)
{
    put(l, l->nfields++ ? "," : " ", 1);
    put_escaped(l, key, INFLUX_KEY);
    put(l, "=", 1);
}

static void field_int(struct line *l, const char *key, int64_t v)
{
    char b[32];
    int n = snprintf(b, sizeof(b), "%" PRId64 "i", v);
    field_key(l, key);
    put(l, b, (size_t)n);
}

static void field_float(struct line *l, const char *key, double v)
{
    char b[64];
    if (!numfmt_double(b, sizeof(b), v))
        return;
    field_key(l, key);
    put(l, b, strlen(b));
}

static void field_str(struct line *l, const char *key, const char *v)
{
    if (!v || !*v)
        return;
    field_key(l, key);
    put(l, "\"", 1);
    put_escaped(l, v, INFLUX_STRING);
    put(l, "\"", 1);
}

/* Ends the line and writes it, unless it has no field (line protocol
 * requires one) or did not fit. */
static void line_end(FILE *f, struct line *l, int64_t ts)
{
    char b[32];
    int n = snprintf(b, sizeof(b), " %" PRId64 "\n", ts);
    put(l, b, (size_t)n);
    if (l->nfields == 0 || l->overflow)
        return;
    fwrite(l->buf, 1, l->len, f);
}

/* How a metric becomes a Telegraf field. */
enum conv {
    CONV_INT,     /* rounded to an integer field */
    CONV_FLOAT,   /* a float field */
    CONV_MIB,     /* bytes as whole MiB (rounded down, as nvidia-smi), integer */
};

struct fmap {
    enum metric_id id;
    const char *key;
    enum conv conv;
};

/* inputs.nvidia_smi's fields, by our metric. */
static const struct fmap gpu_fields[] = {
    {M_GPU_UTIL, "utilization_gpu", CONV_INT},
    {M_MEM_UTIL, "utilization_memory", CONV_INT},
    {M_ENC_UTIL, "utilization_encoder", CONV_INT},
    {M_DEC_UTIL, "utilization_decoder", CONV_INT},
    {M_MEM_USED, "memory_used", CONV_MIB},
    {M_MEM_TOTAL, "memory_total", CONV_MIB},
    {M_TEMP, "temperature_gpu", CONV_INT},
    {M_CLK_GFX, "clocks_current_graphics", CONV_INT},
    {M_CLK_SM, "clocks_current_sm", CONV_INT},
    {M_CLK_MEM, "clocks_current_memory", CONV_INT},
    {M_FAN, "fan_speed", CONV_INT},
    {M_PCIE_GEN, "pcie_link_gen_current", CONV_INT},
    {M_PCIE_WIDTH, "pcie_link_width_current", CONV_INT},
    {M_POWER, "power_draw", CONV_FLOAT},
    {M_POWER_LIMIT, "power_limit", CONV_FLOAT},
};

/* inputs.nvidia_smi's MIG fields, and our utilisation under the GPU's
 * names. */
static const struct fmap mig_fields[] = {
    {M_MEM_USED, "memory_fb_used", CONV_MIB},
    {M_MEM_TOTAL, "memory_fb_total", CONV_MIB},
    {M_GPU_UTIL, "utilization_gpu", CONV_INT},
    {M_MEM_UTIL, "utilization_memory", CONV_INT},
};

static void metric_field(struct line *l, const struct metric *m, const char *key, enum conv conv)
{
    switch (conv) {
    case CONV_INT: field_int(l, key, (int64_t)llround(m->value)); break;
    case CONV_FLOAT: field_float(l, key, m->value); break;
    case CONV_MIB: field_int(l, key, (int64_t)floor(m->value / 1048576.0)); break;
    }
}

static const struct fmap *find(const struct fmap *t, size_t n, enum metric_id id)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].id == id)
            return &t[i];
    return NULL;
}

/*
 * The fields of one device: the Telegraf ones of table t, every other
 * metric as a float under its JSON name (sm_util_pct, energy_j, …), then
 * "<json name>_source" for each value not read directly (gpm, process,
 * estimate, carried). A MIG device's GPU-wide metrics belong to its
 * parent's nvidia_smi line and are not repeated.
 */
static void device_fields(struct line *l, const struct device *d, const struct fmap *t, size_t n,
                          const char *free_key)
{
    const struct metric *m = d->m;
    for (size_t i = 0; i < n; i++)
        if (metric_ok(&m[t[i].id]))
            metric_field(l, &m[t[i].id], t[i].key, t[i].conv);
    if (metric_ok(&m[M_MEM_USED]) && metric_ok(&m[M_MEM_TOTAL]))
        field_int(l, free_key,
                  (int64_t)floor(m[M_MEM_TOTAL].value / 1048576.0) -
                      (int64_t)floor(m[M_MEM_USED].value / 1048576.0));
    for (int k = 0; k < M_COUNT; k++) {
        enum metric_id id = (enum metric_id)k;
        if (id == M_PSTATE || find(t, n, id) || !metric_ok(&m[id]))
            continue;
        if (d->kind == DEV_MIG && metric_info(id)->gpu_wide)
            continue;
        field_float(l, metric_info(id)->name, m[id].value);
    }
    if (metric_ok(&d->process_count))
        field_int(l, "process_count", (int64_t)llround(d->process_count.value));
    /* On every line written, so the series' last value is the truth after
     * a GPU comes back; a lost device's line is written for it alone (a
     * device with nothing read, not lost, still has no line). */
    if (d->lost || (l->nfields > 0 && !d->inaccessible))
        field_int(l, "lost", d->lost ? 1 : 0);
    if (d->lost)
        field_float(l, "lost_for_s", d->lost_for_s);
    for (int k = 0; k < M_COUNT; k++) {
        enum metric_id id = (enum metric_id)k;
        if (!metric_ok(&m[id]) || m[id].src == MSRC_DIRECT)
            continue;
        if (d->kind == DEV_MIG && metric_info(id)->gpu_wide)
            continue;
        char key[64];
        snprintf(key, sizeof(key), "%s_source", metric_info(id)->name);
        field_str(l, key, metric_source_name(m[id].src));
    }
}

/* The tags every line of a GPU and of its MIG devices carries; vendor
 * (nvidia, amd) is ours, beside Telegraf's nvidia_smi tags (docs/record.md). */
static void gpu_tags(struct line *l, const struct device *g)
{
    tag(l, "arch", g->arch);
    tag(l, "name", g->name);
    tag(l, "node", g->node); /* a fleet's device (--prometheus): its node */
    if (metric_ok(&g->m[M_PSTATE])) {
        char p[16];
        snprintf(p, sizeof(p), "P%.0f", g->m[M_PSTATE].value);
        tag(l, "pstate", p);
    }
    tag(l, "uuid", g->uuid);
    tag(l, "vendor", device_vendor_name(g->vendor));
}

static void write_gpu(FILE *f, struct line *l, const struct snapshot *s, const struct device *d)
{
    line_start(l, "nvidia_smi");
    gpu_tags(l, d);
    tag_int(l, "index", d->index);
    device_fields(l, d, gpu_fields, sizeof(gpu_fields) / sizeof(gpu_fields[0]), "memory_free");
    if (l->nfields == 0)
        return; /* nothing read of the GPU (one that cannot be opened): no line */
    field_str(l, "driver_version", s->driver_version);
    if (s->cuda_driver_version > 0) {
        char cuda[32];
        snprintf(cuda, sizeof(cuda), "%d.%d", s->cuda_driver_version / 1000,
                 s->cuda_driver_version % 1000 / 10);
        field_str(l, "cuda_version", cuda);
    }
    line_end(f, l, s->wall_ns);
}

static void write_mig(FILE *f, struct line *l, const struct snapshot *s, const struct device *d)
{
    line_start(l, "nvidia_smi_mig");
    if (d->parent_pos >= 0 && (size_t)d->parent_pos < s->ndevices)
        gpu_tags(l, &s->devices[d->parent_pos]);
    else
        tag(l, "uuid", d->parent_uuid);
    if (d->parent_pos < 0 || (size_t)d->parent_pos >= s->ndevices) {
        tag(l, "node", d->node);
        tag(l, "vendor", device_vendor_name(d->vendor));
    }
    tag_int(l, "index", d->mig_index);
    tag_int(l, "gpu_index", d->gi_id);
    tag_int(l, "compute_index", d->ci_id);
    tag_int(l, "parent_index", d->index);
    tag(l, "mig_uuid", d->uuid);
    tag(l, "profile", d->profile);
    device_fields(l, d, mig_fields, sizeof(mig_fields) / sizeof(mig_fields[0]), "memory_fb_free");
    line_end(f, l, s->wall_ns);
}

static void write_process(FILE *f, struct line *l, const struct snapshot *s,
                          const struct device *d, const struct gpu_process *p)
{
    line_start(l, "nvidia_smi_process");
    /* A process whose name is not visible from here (its own PID
     * namespace) is tagged by its PID: with no name tag, every such
     * process of one type on one device would be one series and one point
     * at each instant, and all but the last would be lost. */
    char unnamed[24];
    if (!p->name[0])
        snprintf(unnamed, sizeof(unnamed), "pid:%u", (unsigned)p->pid);
    tag(l, "name", p->name[0] ? p->name : unnamed);
    tag(l, "node", d->node);
    tag(l, "type", proc_type_name(p->type));
    tag(l, "uuid", d->uuid);
    tag(l, "vendor", device_vendor_name(d->vendor));
    field_int(l, "pid", p->pid);
    if (metric_ok(&p->mem_bytes))
        field_int(l, "used_memory", (int64_t)floor(p->mem_bytes.value / 1048576.0));
    static const struct {
        const char *key;
        size_t off;
    } extra[] = {
        {"sm_util_pct", offsetof(struct gpu_process, sm_util)},
        {"mem_util_pct", offsetof(struct gpu_process, mem_util)},
        {"enc_util_pct", offsetof(struct gpu_process, enc_util)},
        {"dec_util_pct", offsetof(struct gpu_process, dec_util)},
        {"cpu_pct", offsetof(struct gpu_process, cpu_pct)},
        {"rss_bytes", offsetof(struct gpu_process, rss_bytes)},
    };
    for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
        const struct metric *m = (const struct metric *)((const char *)p + extra[i].off);
        if (metric_ok(m))
            field_float(l, extra[i].key, m->value);
    }
    field_str(l, "user", p->user);
    field_str(l, "command", p->command);
    field_str(l, "container", p->container);
    line_end(f, l, s->wall_ns);
}

static void host_field(struct line *l, const char *key, const struct metric *m)
{
    if (metric_ok(m))
        field_float(l, key, m->value);
}

static void write_host(FILE *f, struct line *l, const struct snapshot *s)
{
    const struct host_sample *h = &s->host;
    line_start(l, "migmon_host");
    host_field(l, "cpu_total_pct", &h->cpu_total);
    if (h->online >= 0)
        field_int(l, "cpus_online", h->online);
    host_field(l, "memory_total_bytes", &h->mem.total);
    host_field(l, "memory_used_bytes", &h->mem.used);
    host_field(l, "memory_available_bytes", &h->mem.available);
    host_field(l, "memory_cached_bytes", &h->mem.cached);
    host_field(l, "memory_buffers_bytes", &h->mem.buffers);
    host_field(l, "memory_free_bytes", &h->mem.free);
    host_field(l, "swap_total_bytes", &h->mem.swap_total);
    host_field(l, "swap_used_bytes", &h->mem.swap_used);
    host_field(l, "load1", &h->loadavg[0]);
    host_field(l, "load5", &h->loadavg[1]);
    host_field(l, "load15", &h->loadavg[2]);
    host_field(l, "uptime_s", &h->uptime_s);
    line_end(f, l, s->wall_ns);
}

void influx_write_snapshot(FILE *f, const struct snapshot *s)
{
    struct line l;
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        if (d->kind == DEV_MIG)
            write_mig(f, &l, s, d);
        else
            write_gpu(f, &l, s, d);
    }
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        for (size_t j = 0; j < d->nprocs && d->proc_first + j < s->nprocs; j++)
            write_process(f, &l, s, d, &s->procs[d->proc_first + j]);
    }
    if (s->host_ok)
        write_host(f, &l, s);
}

/* One event, at its own wall clock: the GPU's UUID and index, the MIG
 * device it is attributed to, the instance ids, the type and the Xid as
 * tags (what a query groups by); the count (1), the Xid as an integer and
 * what it means and what to do as fields. */
static void write_event(FILE *f, struct line *l, const struct snapshot *s,
                        const struct gpu_event *e)
{
    struct eventlog_place p;
    eventlog_place(s, e, &p);
    /* the events helper's own reading of the UUID, not the cleaned one of
     * the snapshot's devices */
    char uuid[sizeof(e->gpu_uuid)];
    text_copy(uuid, sizeof(uuid), e->gpu_uuid);
    text_clean(uuid, sizeof(uuid));
    line_start(l, "migmon_event");
    tag(l, "uuid", uuid);
    tag(l, "vendor", device_vendor_name(VENDOR_NVIDIA)); /* only NVML has events */
    tag_int(l, "index", p.gpu);
    if (p.mig) {
        tag(l, "mig_uuid", p.device);
        tag_int(l, "mig_index", p.mig_index);
    }
    tag_int(l, "gi_id", e->gi_id);
    tag_int(l, "ci_id", e->ci_id);
    tag(l, "type", xid_event_type_name(e->type));
    bool xid = eventlog_is_xid(e);
    if (xid) {
        char code[16];
        snprintf(code, sizeof(code), "%u", e->xid);
        tag(l, "xid", code);
    }
    field_int(l, "count", 1);
    if (xid) {
        field_int(l, "code", e->xid);
        field_str(l, "meaning", xid_meaning(e->xid));
        field_str(l, "action", xid_action(e->xid));
    }
    line_end(f, l, e->wall_ns);
}

void influx_write_events(FILE *f, const struct snapshot *s, const struct eventlog_batch *b)
{
    struct line l;
    if (b->dropped) {
        /* events the ring no longer held: how many, at the snapshot that
         * counted them; what they were is not known */
        line_start(&l, "migmon_event");
        tag(&l, "type", "dropped");
        field_int(&l, "count", (int64_t)b->dropped);
        line_end(f, &l, s->wall_ns);
    }
    for (size_t i = 0; i < b->n; i++)
        write_event(f, &l, s, &b->ev[i]);
}
