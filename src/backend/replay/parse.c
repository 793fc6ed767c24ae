/*
 * parse.c — a recorded snapshot line back into struct snapshot (parse.h):
 * the inverse of export/json.c, with jansson doing the JSON.
 */
#include "backend/replay/parse.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/events/xid.h"
#include "core/health_rules.h"
#include "core/text.h"

/* Bounds on what one line may ask for, whatever its length. */
#define MAX_DEVICES 1024
#define MAX_PROCS 65536
#define MAX_CORES 4096
#define MAX_EVENTS 64

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The pool's copy of s (cleaned, at most 255 bytes); NULL when full. */
static const char *intern(struct replay_strs *p, const char *s)
{
    char buf[256];
    text_copy(buf, sizeof(buf), s);
    text_clean(buf, sizeof(buf));
    size_t cap = sizeof(p->slot) / sizeof(p->slot[0]);
    size_t i = (size_t)(str_hash(buf) % cap);
    for (size_t k = 0; k < cap; k++, i = (i + 1) % cap) {
        if (!p->slot[i]) {
            if (p->n >= REPLAY_STRS_MAX)
                return NULL;
            p->slot[i] = strdup(buf);
            if (p->slot[i])
                p->n++;
            return p->slot[i];
        }
        if (strcmp(p->slot[i], buf) == 0)
            return p->slot[i];
    }
    return NULL;
}

void replay_strs_free(struct replay_strs *pool)
{
    for (size_t i = 0; i < sizeof(pool->slot) / sizeof(pool->slot[0]); i++)
        free(pool->slot[i]);
    memset(pool, 0, sizeof(*pool));
}

struct ctx {
    struct snapshot *s;
    struct replay_strs *pool;
};

/* A borrowed reason for the snapshot: pooled, else in its notes. */
static const char *reason(struct ctx *c, const json_t *v)
{
    const char *str = json_string_value(v);
    if (!str)
        return NULL;
    const char *r = intern(c->pool, str);
    if (r)
        return r;
    char buf[256];
    text_copy(buf, sizeof(buf), str);
    text_clean(buf, sizeof(buf));
    return snapshot_note(c->s, "%s", buf);
}

static void copy_str(char *dst, size_t cap, const json_t *v)
{
    const char *str = json_string_value(v);
    text_copy(dst, cap, str ? str : "");
    text_clean(dst, cap);
}

static int get_int(const json_t *v, int dflt)
{
    if (!json_is_integer(v))
        return dflt;
    json_int_t i = json_integer_value(v);
    return i < -1000000000 || i > 1000000000 ? dflt : (int)i;
}

/* An unsigned 32-bit integer, else dflt. */
static unsigned get_u32(const json_t *v, unsigned dflt)
{
    if (!json_is_integer(v))
        return dflt;
    json_int_t i = json_integer_value(v);
    return i < 0 || i > 0xFFFFFFFF ? dflt : (unsigned)i;
}

/* A number that is finite, else false. */
static bool get_num(const json_t *v, double *out)
{
    if (!json_is_number(v))
        return false;
    double d = json_number_value(v);
    if (!isfinite(d))
        return false;
    *out = d;
    return true;
}

static enum metric_source source_of(const char *name)
{
    for (int k = MSRC_NONE; k <= MSRC_DCGM; k++)
        if (name && strcmp(name, metric_source_name((enum metric_source)k)) == 0)
            return (enum metric_source)k;
    return MSRC_NONE;
}

/* {"value": v, "source": "...", "reason": "...", "scope": "..."}. */
static struct metric metric_of(struct ctx *c, const json_t *o)
{
    if (!json_is_object(o))
        return metric_none("not in the recording");
    struct metric m = metric_none(reason(c, json_object_get(o, "reason")));
    const char *src = json_string_value(json_object_get(o, "source"));
    double v;
    if (get_num(json_object_get(o, "value"), &v)) {
        m.src = source_of(src);
        if (m.src == MSRC_NONE) { /* a source this version does not know */
            m.why = "recorded with a source this version does not know";
            return m;
        }
        m.value = v;
    } else if (!m.why) {
        m.why = "not read";
    }
    const char *scope = json_string_value(json_object_get(o, "scope"));
    if (scope && strcmp(scope, "gpu_instance") == 0)
        m.scope = MSCOPE_GPU_INSTANCE;
    return m;
}

/* A plain number or null (process fields). */
static struct metric value_of(const json_t *v)
{
    double d;
    if (get_num(v, &d))
        return metric_direct(d);
    return metric_none("not recorded");
}

static void parse_host(struct ctx *c, const json_t *h)
{
    struct snapshot *s = c->s;
    struct host_sample *o = &s->host;
    memset(o, 0, sizeof(*o));
    o->cores = s->core_buf;
    copy_str(o->hostname, sizeof(o->hostname), json_object_get(h, "hostname"));
    const json_t *cpu = json_object_get(h, "cpu");
    o->cpu_total = metric_of(c, json_object_get(cpu, "total_pct"));
    o->online = get_int(json_object_get(cpu, "online"), -1);
    const json_t *cores = json_object_get(cpu, "cores");
    size_t n = json_array_size(cores);
    if (n > MAX_CORES)
        n = MAX_CORES;
    if (n > s->core_cap) {
        struct host_core *nc = realloc(s->core_buf, n * sizeof(*nc));
        if (!nc)
            n = s->core_cap;
        else {
            s->core_buf = nc;
            s->core_cap = n;
        }
    }
    o->cores = s->core_buf;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(cores, i);
        s->core_buf[i].id = get_int(json_object_get(e, "id"), -1);
        s->core_buf[i].pct = metric_of(c, json_object_get(e, "pct"));
    }
    o->ncores = n;
    const json_t *mem = json_object_get(h, "memory");
    o->mem.total = metric_of(c, json_object_get(mem, "total_bytes"));
    o->mem.used = metric_of(c, json_object_get(mem, "used_bytes"));
    o->mem.cached = metric_of(c, json_object_get(mem, "cached_bytes"));
    o->mem.buffers = metric_of(c, json_object_get(mem, "buffers_bytes"));
    o->mem.free = metric_of(c, json_object_get(mem, "free_bytes"));
    o->mem.available = metric_of(c, json_object_get(mem, "available_bytes"));
    const json_t *swap = json_object_get(h, "swap");
    o->mem.swap_total = metric_of(c, json_object_get(swap, "total_bytes"));
    o->mem.swap_used = metric_of(c, json_object_get(swap, "used_bytes"));
    const json_t *la = json_object_get(h, "loadavg");
    o->loadavg[0] = metric_of(c, json_object_get(la, "1m"));
    o->loadavg[1] = metric_of(c, json_object_get(la, "5m"));
    o->loadavg[2] = metric_of(c, json_object_get(la, "15m"));
    o->uptime_s = metric_of(c, json_object_get(h, "uptime_s"));
}

static unsigned health_level_of(const char *name)
{
    for (unsigned l = HEALTH_UNKNOWN; l <= HEALTH_ACTION; l++)
        if (name && strcmp(name, health_level_name(l)) == 0)
            return l;
    return HEALTH_UNKNOWN;
}

static uint32_t health_rule_bit(const char *name)
{
    for (unsigned b = 0; b < 32 && name; b++) {
        struct health_rule_info r;
        if (health_rules_of(1u << b, &r, 1) == 1 && strcmp(r.name, name) == 0)
            return 1u << b;
    }
    return 0;
}

static uint64_t throttle_bit(const char *name)
{
    for (unsigned b = 0; b < 64 && name; b++) {
        const char *n[1];
        if (throttle_reason_names(1ull << b, n, 1) == 1 && strcmp(n[0], name) == 0)
            return 1ull << b;
    }
    return 0;
}

static unsigned proc_type_of(const char *name)
{
    for (unsigned t = 1; t < 8 && name; t++)
        if (strcmp(proc_type_name(t), name) == 0)
            return t;
    return 0;
}

static void parse_process(struct ctx *c, const json_t *o, struct gpu_process *p)
{
    memset(p, 0, sizeof(*p));
    json_int_t pid = json_integer_value(json_object_get(o, "pid"));
    p->pid = pid > 0 && pid <= UINT32_MAX ? (uint32_t)pid : 0;
    const json_t *lp = json_object_get(o, "local_pid");
    p->local_pid = json_is_integer(lp) && json_integer_value(lp) >= 0 ? json_integer_value(lp) : -1;
    copy_str(p->name, sizeof(p->name), json_object_get(o, "name"));
    copy_str(p->user, sizeof(p->user), json_object_get(o, "user"));
    p->type = proc_type_of(json_string_value(json_object_get(o, "type")));
    p->mem_bytes = value_of(json_object_get(o, "memory_bytes"));
    p->sm_util = value_of(json_object_get(o, "sm_util_pct"));
    p->mem_util = value_of(json_object_get(o, "mem_util_pct"));
    p->enc_util = value_of(json_object_get(o, "enc_util_pct"));
    p->dec_util = value_of(json_object_get(o, "dec_util_pct"));
    p->cpu_pct = value_of(json_object_get(o, "cpu_pct"));
    p->rss_bytes = value_of(json_object_get(o, "rss_bytes"));
    copy_str(p->command, sizeof(p->command), json_object_get(o, "command"));
    p->gi_id = get_int(json_object_get(o, "gpu_instance_id"), -1);
    p->ci_id = get_int(json_object_get(o, "compute_instance_id"), -1);
    copy_str(p->container, sizeof(p->container), json_object_get(o, "container"));
    p->unattributed = json_is_true(json_object_get(o, "unattributed"));
    p->carried = json_is_true(json_object_get(o, "carried"));
    (void)c;
}

static int parse_device(struct ctx *c, const json_t *o, struct device *d, size_t pos)
{
    struct snapshot *s = c->s;
    memset(d, 0, sizeof(*d));
    const char *kind = json_string_value(json_object_get(o, "kind"));
    d->kind = kind && strcmp(kind, "mig") == 0 ? DEV_MIG : DEV_GPU;
    d->index = get_int(json_object_get(o, "index"), -1);
    d->mig_index = get_int(json_object_get(o, "mig_index"), -1);
    d->parent_pos = -1;
    if (d->kind == DEV_MIG) /* its GPU is the last GPU before it */
        for (size_t i = pos; i-- > 0;)
            if (s->devices[i].kind == DEV_GPU) {
                d->parent_pos = (int)i;
                break;
            }
    copy_str(d->uuid, sizeof(d->uuid), json_object_get(o, "uuid"));
    d->uuid_why = d->uuid[0] ? NULL : reason(c, json_object_get(o, "uuid_error"));
    copy_str(d->parent_uuid, sizeof(d->parent_uuid), json_object_get(o, "parent_uuid"));
    copy_str(d->name, sizeof(d->name), json_object_get(o, "name"));
    copy_str(d->pci_bus_id, sizeof(d->pci_bus_id), json_object_get(o, "pci_bus_id"));
    copy_str(d->serial, sizeof(d->serial), json_object_get(o, "serial"));
    copy_str(d->arch, sizeof(d->arch), json_object_get(o, "architecture"));
    d->cc_major = d->cc_minor = -1;
    const char *cc = json_string_value(json_object_get(o, "compute_capability"));
    int ma, mi;
    if (cc && sscanf(cc, "%d.%d", &ma, &mi) == 2 && ma >= 1 && ma <= 99 && mi >= 0 && mi <= 9) {
        d->cc_major = ma;
        d->cc_minor = mi;
    }
    d->mig_enabled = json_is_true(json_object_get(o, "mig_enabled"));
    d->lost = json_is_true(json_object_get(o, "lost"));
    /* "lost": null is a GPU that could not be opened (json.c) */
    if (d->kind == DEV_GPU && json_is_null(json_object_get(o, "lost")))
        d->inaccessible = d->uuid_why ? d->uuid_why : "the GPU could not be opened";
    double lf = 0;
    if (d->lost && get_num(json_object_get(o, "lost_for_s"), &lf))
        d->lost_for_s = lf;
    d->stall = reason(c, json_object_get(o, "stall"));
    const json_t *h = json_object_get(o, "health");
    d->health = (unsigned char)health_level_of(json_string_value(json_object_get(h, "verdict")));
    const json_t *rules = json_object_get(h, "rules");
    for (size_t i = 0; i < json_array_size(rules) && i < 64; i++)
        d->health_rules |= health_rule_bit(
            json_string_value(json_object_get(json_array_get(rules, i), "name")));
    d->gi_id = get_int(json_object_get(o, "gpu_instance_id"), -1);
    d->ci_id = get_int(json_object_get(o, "compute_instance_id"), -1);
    copy_str(d->profile, sizeof(d->profile), json_object_get(o, "profile"));
    d->slices = get_int(json_object_get(o, "slices"), -1);
    d->slices_total = get_int(json_object_get(o, "slices_total"), -1);
    const json_t *ms = json_object_get(o, "metrics");
    for (int k = 0; k < M_COUNT; k++)
        d->m[k] = metric_of(c, json_object_get(ms, metric_info((enum metric_id)k)->name));
    const json_t *tr = json_object_get(o, "throttle_reasons");
    if (json_is_array(tr)) {
        d->throttle_valid = true;
        for (size_t i = 0; i < json_array_size(tr) && i < 64; i++)
            d->throttle_mask |= throttle_bit(json_string_value(json_array_get(tr, i)));
    }
    d->process_count = metric_of(c, json_object_get(o, "process_count"));
    const json_t *procs = json_object_get(o, "processes");
    size_t n = json_array_size(procs);
    if (s->nprocs + n > MAX_PROCS)
        n = s->nprocs < MAX_PROCS ? MAX_PROCS - s->nprocs : 0;
    if (snapshot_reserve_procs(s, s->nprocs + n) != 0)
        return -1;
    d->proc_first = s->nprocs;
    for (size_t i = 0; i < n; i++)
        parse_process(c, json_array_get(procs, i), &s->procs[s->nprocs + i]);
    s->nprocs += n;
    d->nprocs = n;
    return 0;
}

int64_t replay_parse_rfc3339(const char *ts)
{
    if (!ts)
        return -1;
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    int ms = 0, used = 0;
    if (sscanf(ts, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec, &used) != 6)
        return -1;
    const char *p = ts + used;
    int64_t frac = 0, scale = 1000000000;
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++)
            if (scale > 1) {
                scale /= 10;
                frac += (*p - '0') * scale;
            }
    }
    (void)ms;
    if (strcmp(p, "Z") != 0 || tm.tm_year < 1970 || tm.tm_year > 2261 || tm.tm_mon < 1 ||
        tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
        tm.tm_sec > 60)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return -1;
    return (int64_t)t * 1000000000 + frac;
}

static unsigned long long event_type_of(const char *name)
{
    for (unsigned b = 0; b < 64 && name; b++)
        if (strcmp(xid_event_type_name(1ull << b), name) == 0)
            return 1ull << b;
    return 0;
}

static void parse_events(struct ctx *c, const json_t *o)
{
    struct snapshot *s = c->s;
    json_int_t total = json_integer_value(json_object_get(o, "events_total"));
    s->events_total = total > 0 ? (uint64_t)total : 0;
    s->events_why = reason(c, json_object_get(o, "events_error"));
    const json_t *ev = json_object_get(o, "events");
    size_t n = json_array_size(ev);
    if (n > MAX_EVENTS)
        n = MAX_EVENTS;
    if (n > s->events_cap) {
        struct gpu_event *ne = realloc(s->events, MAX_EVENTS * sizeof(*ne));
        if (!ne)
            n = s->events_cap;
        else {
            s->events = ne;
            s->events_cap = MAX_EVENTS;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(ev, i);
        struct gpu_event *g = &s->events[i];
        memset(g, 0, sizeof(*g));
        json_int_t el = json_integer_value(json_object_get(e, "elapsed_ns"));
        g->elapsed_ns = el > 0 ? (uint64_t)el : 0;
        g->wall_ns = replay_parse_rfc3339(json_string_value(json_object_get(e, "timestamp")));
        copy_str(g->gpu_uuid, sizeof(g->gpu_uuid), json_object_get(e, "uuid"));
        g->gi_id = get_int(json_object_get(e, "gi_id"), -1);
        g->ci_id = get_int(json_object_get(e, "ci_id"), -1);
        int x = get_int(json_object_get(e, "xid"), 0);
        g->xid = x > 0 ? (unsigned)x : 0;
        g->type = event_type_of(json_string_value(json_object_get(e, "type")));
        /* an operational event's numbers, as recorded (json_events.c) */
        g->severity = get_u32(json_object_get(e, "severity"), 0);
        g->category = get_u32(json_object_get(e, "category"), 0);
        /* its device: the MIG device of its GPU with that slot, else the GPU */
        int gpu = get_int(json_object_get(e, "gpu"), -1);
        int mig = get_int(json_object_get(e, "mig_index"), -1);
        g->device_pos = -1;
        for (size_t k = 0; k < s->ndevices && gpu >= 0; k++) {
            const struct device *d = &s->devices[k];
            if (d->index == gpu && ((mig < 0 && d->kind == DEV_GPU) ||
                                    (mig >= 0 && d->kind == DEV_MIG && d->mig_index == mig))) {
                g->device_pos = (int)k;
                break;
            }
        }
    }
    s->nevents = n;
}

__attribute__((format(printf, 3, 4))) static void set_err(char *err, size_t errlen,
                                                          const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

json_t *replay_parse_load(const char *line, size_t len, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        set_err(err, errlen, "not JSON (%s, column %d)", je.text, je.column);
        /* jansson quotes up to 20 bytes of the line ("near '...'"): a
         * terminal control there reaches the screen otherwise */
        if (err && errlen)
            text_clean(err, errlen);
    }
    return root;
}

int replay_parse_line(const char *line, size_t len, struct snapshot *s, struct replay_strs *pool,
                      char *err, size_t errlen)
{
    json_t *root = replay_parse_load(line, len, err, errlen);
    if (!root)
        return REPLAY_LINE_GARBAGE;
    int rc = replay_parse_json(root, s, pool, err, errlen);
    json_decref(root);
    return rc;
}

int replay_parse_json(json_t *root, struct snapshot *s, struct replay_strs *pool, char *err,
                      size_t errlen)
{
    int rc = REPLAY_LINE_GARBAGE;
    const json_t *schema = json_object_get(root, "schema");
    if (!json_is_object(root)) {
        set_err(err, errlen, "not a JSON object");
    } else if (json_is_string(json_object_get(root, "type")) ||
               json_is_true(json_object_get(root, "delta"))) {
        rc = REPLAY_LINE_OTHER;
    } else if (!json_is_integer(schema)) {
        set_err(err, errlen, "a JSON object without a schema");
    } else if (json_integer_value(schema) < REPLAY_SCHEMA ||
               json_integer_value(schema) > REPLAY_SCHEMA_MAX) {
        json_int_t v = json_integer_value(schema);
        set_err(err, errlen, "schema %lld", (long long)v);
        rc = REPLAY_LINE_SCHEMA;
    } else if (!json_is_array(json_object_get(root, "devices"))) {
        set_err(err, errlen, "a snapshot without a devices array");
    } else {
        rc = REPLAY_LINE_SNAPSHOT;
    }
    if (rc != REPLAY_LINE_SNAPSHOT)
        return rc;
    struct ctx c = {.s = s, .pool = pool};
    snapshot_notes_reset(s);
    json_int_t el = json_integer_value(json_object_get(root, "elapsed_ns"));
    s->elapsed_ns = el > 0 ? (uint64_t)el : 0;
    int64_t wall = replay_parse_rfc3339(json_string_value(json_object_get(root, "timestamp")));
    s->wall_ns = wall > 0 ? wall : 0;
    copy_str(s->driver_version, sizeof(s->driver_version), json_object_get(root, "driver_version"));
    copy_str(s->nvml_version, sizeof(s->nvml_version), json_object_get(root, "nvml_version"));
    const char *cuda = json_string_value(json_object_get(root, "cuda_driver_version"));
    int ma, mi;
    s->cuda_driver_version = cuda && sscanf(cuda, "%d.%d", &ma, &mi) == 2 && ma > 0 && ma < 1000 &&
                                     mi >= 0 && mi < 100
                                 ? ma * 1000 + mi * 10
                                 : 0;
    copy_str(s->dcgm_info, sizeof(s->dcgm_info), json_object_get(root, "dcgm"));
    const json_t *host = json_object_get(root, "host");
    s->host_ok = json_is_object(host);
    if (s->host_ok) {
        parse_host(&c, host);
    } else {
        memset(&s->host, 0, sizeof(s->host));
        s->host.cores = s->core_buf;
        copy_str(s->host_error, sizeof(s->host_error), json_object_get(root, "host_error"));
        if (!s->host_error[0])
            snprintf(s->host_error, sizeof(s->host_error), "no host part in the recording");
    }
    const json_t *gerr = json_object_get(root, "gpu_error");
    s->gpu_ok = !json_is_string(gerr);
    copy_str(s->gpu_error, sizeof(s->gpu_error), gerr);
    text_clean_lines(s->gpu_error, sizeof(s->gpu_error));
    s->partial = json_is_true(json_object_get(root, "partial"));
    const json_t *devs = json_object_get(root, "devices");
    size_t n = json_array_size(devs);
    if (n > MAX_DEVICES)
        n = MAX_DEVICES;
    s->ndevices = 0;
    s->nprocs = 0;
    if (snapshot_reserve(s, n) != 0) {
        set_err(err, errlen, "out of memory");
        return REPLAY_LINE_GARBAGE;
    }
    for (size_t i = 0; i < n; i++) {
        if (parse_device(&c, json_array_get(devs, i), &s->devices[i], i) != 0)
            break;
        s->ndevices = i + 1;
    }
    parse_events(&c, root);
    return REPLAY_LINE_SNAPSHOT;
}
