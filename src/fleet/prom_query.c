/*
 * prom_query.c — the fleet view's PromQL (prom_query.h).
 *
 * A device is a leaf when it is a MIG instance (or an AMD partition) or a
 * GPU without instances: the node's utilisation, VRAM and idle count are
 * over its leaves, as the monitor's totals are. A device of a target that
 * is down (up == 0) is one it had in the last 10 minutes; of a target that
 * is up, one whose series are there now (a device whose series went stale,
 * a MIG instance destroyed, a GPU an exporter no longer has, is gone).
 */
#include "fleet/prom_query.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/prom_client.h"

/* ---- a growing string ---- */

struct sb {
    char *p;
    size_t len, cap;
    bool bad;
};

static void put(struct sb *b, const char *s)
{
    size_t n = strlen(s);
    if (b->bad)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->bad = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

static void putf(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct sb *b, const char *fmt, ...)
{
    char tmp[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(tmp)) {
        b->bad = true;
        return;
    }
    put(b, tmp);
}

static char *done(struct sb *b)
{
    if (b->bad) {
        free(b->p);
        return NULL;
    }
    return b->p;
}

/* ---- escaping ---- */

size_t promq_regex_quote(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    if (!cap)
        return 0;
    for (; *s; s++) {
        bool meta = strchr("\\.+*?()|[]{}^$", *s) != NULL;
        size_t need = meta ? 2 : 1;
        /* a UTF-8 character is never cut: its continuation bytes go with it */
        if (!meta && ((unsigned char)*s & 0xC0) == 0xC0) {
            size_t k = 1;
            while (((unsigned char)s[k] & 0xC0) == 0x80)
                k++;
            need = k;
        }
        if (n + need + 1 > cap)
            break;
        if (meta)
            out[n++] = '\\';
        memcpy(out + n, s, need - (meta ? 1 : 0));
        n += need - (meta ? 1 : 0);
        s += need - (meta ? 2 : 1);
    }
    out[n] = '\0';
    return n;
}

/* A regular expression as a PromQL string literal, with its quotes. */
static void put_re(struct sb *b, const char *re)
{
    size_t cap = strlen(re) * 4 + 8;
    char *q = malloc(cap);
    if (!q) {
        b->bad = true;
        return;
    }
    promql_quote(q, cap, re);
    put(b, "\"");
    put(b, q);
    put(b, "\"");
    free(q);
}

/* ---- the building blocks ---- */

static void instance_matcher(struct sb *b, const char *const *inst, size_t n);

struct q {
    struct sb b;
    const char *match; /* --prometheus-match's matchers, "" none */
    /* `instance=~"…"` of the targets that are down (their devices are
     * those of the last 10 minutes), "" when none is */
    const char *down;
    size_t nwords;
    char words[PROMQ_WORDS_MAX][PROMQ_WORD_LEN + 1];
};

/* name{extra,match}: name may be "" (extra then names the series). */
static void sel(struct q *q, const char *name, const char *extra)
{
    put(&q->b, name);
    put(&q->b, "{");
    put(&q->b, extra);
    if (extra[0] && q->match[0])
        put(&q->b, ",");
    put(&q->b, q->match);
    put(&q->b, "}");
}

/* name{extra,more,match}: extra and more may be "". */
static void sel2(struct q *q, const char *name, const char *extra, const char *more)
{
    char e[2400];
    snprintf(e, sizeof(e), "%s%s%s", extra, extra[0] && more[0] ? "," : "", more);
    if (strlen(extra) + strlen(more) + 2 > sizeof(e)) {
        q->b.bad = true;
        return;
    }
    sel(q, name, e);
}

/* A family's series: those there now, and the down targets' of the last
 * 10 minutes (their series are stale now). The down targets are named (the
 * node round asked first): last_over_time reads every sample of its
 * window, so it is asked of those targets alone. */
static void info(struct q *q, const char *name, const char *extra)
{
    if (!q->down[0]) {
        sel(q, name, extra);
        return;
    }
    put(&q->b, "(");
    sel(q, name, extra);
    put(&q->b, " or last_over_time(");
    sel2(q, name, extra, q->down);
    put(&q->b, "[10m]))");
}

/* An extra matcher `label=~"(?is).*WORD.*"` for word w (a part of the
 * label's value, ignoring case, matched literally). */
static void word_matcher(char *out, size_t cap, const struct q *q, size_t w, const char *label)
{
    char lit[PROMQ_WORD_LEN * 2 + 1], re[PROMQ_WORD_LEN * 2 + 16], quoted[sizeof(re) * 4 + 4];
    promq_regex_quote(lit, sizeof(lit), q->words[w]);
    snprintf(re, sizeof(re), "(?is).*%s.*", lit);
    promql_quote(quoted, sizeof(quoted), re);
    snprintf(out, cap, "%s=~\"%s\"", label, quoted);
}

#define KEYS "instance, uuid, gpu_instance_id, compute_instance_id, partition_id"
#define DKEYS "instance, UUID, GPU_I_ID"
#define DROP "source, pod, namespace, container"

/* A value family of the leaves (x: the family's suffix, "utilization_ratio"). */
static void leaf(struct q *q, const char *x)
{
    char name[96];
    put(&q->b, "(max without (" DROP ") (");
    snprintf(name, sizeof(name), "migmon_mig_%s", x);
    sel(q, name, "");
    put(&q->b, ") or (max without (" DROP ") (");
    snprintf(name, sizeof(name), "migmon_gpu_%s", x);
    sel(q, name, "");
    put(&q->b, ") unless on (instance, uuid) ");
    sel(q, "migmon_device_info", "mig_mode=\"enabled\"");
    put(&q->b, "))");
}

/* The idle leaves: utilisation under 1 %, or none to be had and no process. */
static void idle(struct q *q)
{
    put(&q->b, "((");
    leaf(q, "utilization_ratio");
    put(&q->b, " < 0.01) or ((");
    leaf(q, "processes");
    put(&q->b, " == 0) unless on (" KEYS ") ");
    leaf(q, "utilization_ratio");
    put(&q->b, "))");
}

/* The nodes whose name or instance has word w. */
static void nodes_named(struct q *q, size_t w)
{
    char m[1024];
    put(&q->b, "(group by (instance) (");
    word_matcher(m, sizeof(m), q, w, "hostname");
    info(q, "migmon_host_info", m);
    put(&q->b, ") or group by (instance) (");
    word_matcher(m, sizeof(m), q, w, "instance");
    sel(q, "up", m);
    put(&q->b, "))");
}

#define INFOS "__name__=~\"migmon_(device|mig)_info\""

/* The devices (their *_info series: a GPU's, an instance's) that word w
 * matches: part of the node's name, the model, the PCI bus id, the GPU's
 * UUID, the MIG UUID, the profile, the pod's name, namespace or container;
 * "idle" the idle leaves. */
static void word_devices(struct q *q, size_t w)
{
    char m[1024], e[1200];
    if (strcasecmp(q->words[w], "idle") == 0) {
        put(&q->b, "(");
        info(q, "", INFOS);
        put(&q->b, " and on (" KEYS ") ");
        idle(q);
        put(&q->b, ")");
        return;
    }
    static const struct {
        const char *name, *label;
    } own[] = {{"", "model"},
               {"", "pci_bus_id"},
               {"migmon_device_info", "uuid"},
               {"migmon_mig_info", "mig_uuid"},
               {"migmon_mig_info", "mig_profile"}};
    put(&q->b, "(");
    for (size_t k = 0; k < sizeof(own) / sizeof(own[0]); k++) {
        word_matcher(m, sizeof(m), q, w, own[k].label);
        if (own[k].name[0]) {
            info(q, own[k].name, m);
        } else {
            snprintf(e, sizeof(e), INFOS ",%s", m);
            info(q, "", e);
        }
        put(&q->b, " or ");
    }
    put(&q->b, "(");
    info(q, "", INFOS);
    put(&q->b, " and on (instance) ");
    nodes_named(q, w);
    put(&q->b, ") or (");
    info(q, "", INFOS);
    put(&q->b, " and on (" KEYS ") group by (" KEYS ") (");
    static const char *const pod_labels[] = {"pod", "namespace", "container"};
    for (size_t k = 0; k < sizeof(pod_labels) / sizeof(pod_labels[0]); k++) {
        word_matcher(m, sizeof(m), q, w, pod_labels[k]);
        snprintf(e, sizeof(e), "__name__=~\"migmon_(gpu|mig)_(memory_total_bytes|memory_used_bytes|"
                 "utilization_ratio)\",%s", m);
        if (k)
            put(&q->b, " or ");
        sel(q, "", e);
    }
    put(&q->b, ")))");
}

/* The devices every word of the filter matches. */
static void matched(struct q *q)
{
    put(&q->b, "(");
    for (size_t w = 0; w < q->nwords; w++) {
        if (w)
            put(&q->b, " and on (" KEYS ") ");
        word_devices(q, w);
    }
    put(&q->b, ")");
}

/* " and on (ON) MATCHED" when a filter is on. */
static void if_matched(struct q *q, const char *on)
{
    if (!q->nwords)
        return;
    putf(&q->b, " and on (%s) ", on);
    matched(q);
}

/* label_replace(..., "lab", "val", "", ""): tags a vector (label lab set to val). */
static void tag_begin(struct q *q, bool first)
{
    put(&q->b, first ? "label_replace(" : " or label_replace(");
}

static void tag_end2(struct q *q, const char *lab, const char *val)
{
    putf(&q->b, ", \"%s\", \"%s\", \"\", \"\")", lab, val);
}

static void tag_end(struct q *q, const char *tag)
{
    tag_end2(q, "a", tag);
}

/* ---- dcgm-exporter ---- */

#define DCGM_ID_FIELDS "DCGM_FI_DEV_(FB_USED|GPU_TEMP)"

/* Its entities (GPUs and GPU instances) by (instance, UUID, GPU_I_ID):
 * there now, and a down target's of the last 10 minutes. */
static void dinfo(struct q *q, const char *extra)
{
    char e[1200];
    snprintf(e, sizeof(e), "__name__=~\"" DCGM_ID_FIELDS "\"%s%s", extra[0] ? "," : "", extra);
    put(&q->b, "group by (" DKEYS ") (");
    info(q, "", e);
    put(&q->b, ")");
}

/* A field of the leaves: the GPU instances, and GPUs without any. */
static void dleaf(struct q *q, const char *field)
{
    put(&q->b, "(max by (" DKEYS ") (");
    sel(q, field, "GPU_I_ID!=\"\"");
    put(&q->b, ") or (max by (" DKEYS ") (");
    sel(q, field, "GPU_I_ID=\"\"");
    put(&q->b, ") unless on (instance, UUID) group by (instance, UUID) (");
    sel(q, "DCGM_FI_DEV_FB_USED", "GPU_I_ID!=\"\"");
    put(&q->b, ")))");
}

/* A leaf's utilisation (0..1): the profiling field, else GPU_UTIL / 100. */
static void dutil(struct q *q)
{
    put(&q->b, "(");
    dleaf(q, "DCGM_FI_PROF_GR_ENGINE_ACTIVE");
    put(&q->b, " or ((");
    dleaf(q, "DCGM_FI_DEV_GPU_UTIL");
    put(&q->b, " / 100) unless on (" DKEYS ") ");
    dleaf(q, "DCGM_FI_PROF_GR_ENGINE_ACTIVE");
    put(&q->b, "))");
}

static void dword(struct q *q, size_t w)
{
    if (strcasecmp(q->words[w], "idle") == 0) {
        put(&q->b, "(");
        dinfo(q, "");
        put(&q->b, " and on (" DKEYS ") (");
        dutil(q);
        put(&q->b, " < 0.01))");
        return;
    }
    static const char *const labels[] = {"modelName", "GPU_I_PROFILE", "UUID", "pci_bus_id",
                                         "Hostname",  "hostname",      "instance", "pod",
                                         "namespace", "container"};
    put(&q->b, "(");
    for (size_t k = 0; k < sizeof(labels) / sizeof(labels[0]); k++) {
        char m[1024];
        word_matcher(m, sizeof(m), q, w, labels[k]);
        if (k)
            put(&q->b, " or ");
        dinfo(q, m);
    }
    put(&q->b, ")");
}

static void dmatched(struct q *q)
{
    put(&q->b, "(");
    for (size_t w = 0; w < q->nwords; w++) {
        if (w)
            put(&q->b, " and on (" DKEYS ") ");
        dword(q, w);
    }
    put(&q->b, ")");
}

static void d_if_matched(struct q *q, const char *on)
{
    if (!q->nwords)
        return;
    putf(&q->b, " and on (%s) ", on);
    dmatched(q);
}

/* Nodes that have our series: their dcgm-exporter series are not read. */
static void unless_ours(struct q *q)
{
    put(&q->b, " unless on (instance) group by (instance) (");
    info(q, "migmon_device_info", "");
    put(&q->b, ")");
}

/* ---- the queries ---- */

static int scope_words(struct q *q, const char *filter)
{
    q->nwords = 0;
    const char *p = filter ? filter : "";
    while (*p) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (n == 0)
            break;
        if (q->nwords == PROMQ_WORDS_MAX || n > PROMQ_WORD_LEN)
            return -1;
        memcpy(q->words[q->nwords], p, n);
        q->words[q->nwords][n] = '\0';
        q->nwords++;
        p += n;
    }
    return 0;
}

int promq_filter_check(const char *filter, char *err, size_t errlen)
{
    struct q q = {.match = "", .down = ""};
    if (scope_words(&q, filter) == 0)
        return 0;
    snprintf(err, errlen, "the filter has more than %d words or a word longer than %d bytes",
             PROMQ_WORDS_MAX, PROMQ_WORD_LEN);
    return -1;
}

static void targets(struct q *q)
{
    /* every target of a job that has (had, in the last 10 minutes) our or
     * dcgm-exporter's series on some target: so a target never up is listed */
    tag_begin(q, true);
    put(&q->b, "max by (instance) (");
    sel(q, "up", "");
    put(&q->b, " and on (job) (group by (job) (");
    sel(q, "", "__name__=~\"migmon_host_info|DCGM_FI_DEV_GPU_TEMP\"");
    put(&q->b, ") or group by (job) (last_over_time(");
    sel(q, "migmon_host_info", "");
    put(&q->b, "[10m]))))");
    tag_end(q, "up");
    tag_begin(q, false);
    put(&q->b, "max by (instance, hostname) (last_over_time(");
    sel(q, "migmon_host_info", "");
    put(&q->b, "[10m]))");
    tag_end(q, "name");
    tag_begin(q, false);
    put(&q->b, "group by (instance, Hostname, hostname) (last_over_time(");
    sel(q, "DCGM_FI_DEV_GPU_TEMP", "");
    put(&q->b, "[10m]))");
    tag_end(q, "dname");
    tag_begin(q, false);
    put(&q->b, "max by (instance) (last_over_time(");
    sel(q, "migmon_last_sample_timestamp_seconds", "");
    put(&q->b, "[10m]))");
    tag_end(q, "last");
}

/* The leaves' families, each tagged f (count, sum or max of them by node):
 * which go into each aggregation. */
enum { LT_COUNT = 1, LT_SUM = 2, LT_MAX = 4 };

static void leaf_tagged(struct q *q, unsigned agg)
{
    bool first = true;
    if (agg & LT_COUNT) {
        tag_begin(q, first);
        first = false;
        info(q, "migmon_mig_info", "");
        tag_end2(q, "f", "mig");
        tag_begin(q, false);
        idle(q);
        tag_end2(q, "f", "idle");
        tag_begin(q, false);
        sel(q, "migmon_mig_health", "state=~\"warning|action\"");
        put(&q->b, " == 1");
        tag_end2(q, "f", "mnotok");
    }
    tag_begin(q, first);
    leaf(q, "utilization_ratio");
    tag_end2(q, "f", "util");
    if (agg & LT_MAX)
        return;
    static const char *const mem[][3] = {{"memory_used_bytes", "memory_total_bytes", "mused"},
                                         {"memory_total_bytes", "memory_used_bytes", "mtotal"}};
    for (size_t k = 0; k < 2; k++) {
        if (k == 1 && !(agg & LT_SUM))
            break; /* counted once: the leaves with both */
        tag_begin(q, false);
        leaf(q, mem[k][0]);
        put(&q->b, " and on (" KEYS ") ");
        leaf(q, mem[k][1]);
        tag_end2(q, "f", mem[k][2]);
    }
}

/* Our exporters' nodes, over their leaves: a=count, sum, max by f. */
static void migmon_leaves(struct q *q)
{
    static const struct {
        const char *agg, *tag;
        unsigned fams;
    } aggs[] = {{"count", "count", LT_COUNT}, {"sum", "sum", LT_SUM}, {"max", "max", LT_MAX}};
    for (size_t k = 0; k < sizeof(aggs) / sizeof(aggs[0]); k++) {
        tag_begin(q, k == 0);
        putf(&q->b, "%s by (instance, f) ((", aggs[k].agg);
        leaf_tagged(q, aggs[k].fams);
        put(&q->b, ")");
        if_matched(q, KEYS);
        put(&q->b, ")");
        tag_end(q, aggs[k].tag);
    }
}

/* Each GPU's worst verdict, its own and its instances' (1 ok, 2 warning,
 * 3 action), by (instance, uuid). */
static void gpu_worst(struct q *q)
{
    static const char *const states[][2] = {{"action", "3"}, {"warning", "2"}, {"ok", "1"}};
    put(&q->b, "max by (instance, uuid) (");
    for (size_t s = 0; s < 3; s++)
        for (int mig = 0; mig < 2; mig++) {
            char st[64];
            snprintf(st, sizeof(st), "state=\"%s\"", states[s][0]);
            if (s || mig)
                put(&q->b, " or ");
            put(&q->b, "(");
            sel(q, mig ? "migmon_mig_health" : "migmon_gpu_health", st);
            putf(&q->b, " == 1) * 0 + %s", states[s][1]);
        }
    put(&q->b, ")");
}

/* Our exporters' nodes, over their GPUs (a GPU counts under the filter
 * when it or one of its instances matches): a=count by f (gpus, gnotok,
 * gact, gwarn), a=worst, a=pods. */
static void migmon_gpus(struct q *q)
{
    tag_begin(q, true);
    put(&q->b, "count by (instance, f) ((");
    tag_begin(q, true);
    info(q, "migmon_device_info", "");
    tag_end2(q, "f", "gpus");
    tag_begin(q, false);
    sel(q, "migmon_gpu_health", "state=~\"warning|action\"");
    put(&q->b, " == 1");
    tag_end2(q, "f", "gnotok");
    static const char *const gw[][2] = {{"3", "gact"}, {"2", "gwarn"}};
    for (size_t k = 0; k < 2; k++) {
        tag_begin(q, false);
        put(&q->b, "(");
        gpu_worst(q);
        putf(&q->b, " == %s)", gw[k][0]);
        tag_end2(q, "f", gw[k][1]);
    }
    put(&q->b, ")");
    if_matched(q, "instance, uuid");
    put(&q->b, ")");
    tag_end(q, "count");

    tag_begin(q, false);
    put(&q->b, "max by (instance) (");
    gpu_worst(q);
    if_matched(q, "instance, uuid");
    put(&q->b, ")");
    tag_end(q, "worst");

    tag_begin(q, false);
    put(&q->b, "count by (instance) (group by (instance, namespace, pod) (");
    sel(q, "", "__name__=~\"migmon_(gpu|mig)_memory_used_bytes\",pod!=\"\"");
    if_matched(q, KEYS);
    put(&q->b, "))");
    tag_end(q, "pods");
}

/* dcgm-exporter's nodes (those without our series), over their leaves:
 * a=count, sum, max by f, as ours. */
static void dcgm_leaves(struct q *q)
{
    static const char *const aggs[] = {"count", "sum", "max"};
    for (size_t k = 0; k < 3; k++) {
        tag_begin(q, k == 0);
        putf(&q->b, "%s by (instance, f) ((", aggs[k]);
        bool first = true;
        if (k == 0) {
            tag_begin(q, true);
            dinfo(q, "GPU_I_ID!=\"\"");
            tag_end2(q, "f", "mig");
            tag_begin(q, false);
            put(&q->b, "(");
            dutil(q);
            put(&q->b, " < 0.01)");
            tag_end2(q, "f", "idle");
            first = false;
        }
        tag_begin(q, first);
        dutil(q);
        tag_end2(q, "f", "util");
        if (k != 2) {
            tag_begin(q, false);
            put(&q->b, "(");
            dleaf(q, "DCGM_FI_DEV_FB_USED");
            put(&q->b, " and on (" DKEYS ") ");
            dleaf(q, "DCGM_FI_DEV_FB_FREE");
            put(&q->b, ") * 1048576");
            tag_end2(q, "f", "mused");
        }
        if (k == 1) {
            tag_begin(q, false);
            put(&q->b, "(");
            dleaf(q, "DCGM_FI_DEV_FB_USED");
            put(&q->b, " + on (" DKEYS ") ");
            dleaf(q, "DCGM_FI_DEV_FB_FREE");
            put(&q->b, " + on (" DKEYS ") (");
            dleaf(q, "DCGM_FI_DEV_FB_RESERVED");
            put(&q->b, " or ");
            dleaf(q, "DCGM_FI_DEV_FB_USED");
            put(&q->b, " * 0)) * 1048576");
            tag_end2(q, "f", "mtotal");
        }
        put(&q->b, ")");
        d_if_matched(q, DKEYS);
        unless_ours(q);
        put(&q->b, ")");
        tag_end(q, aggs[k]);
    }
}

/* dcgm-exporter's nodes over their GPUs: a=count f=gpus, a=pods. */
static void dcgm_gpus(struct q *q)
{
    tag_begin(q, true);
    put(&q->b, "count by (instance, f) (");
    tag_begin(q, true);
    put(&q->b, "group by (instance, UUID) (");
    dinfo(q, "");
    d_if_matched(q, DKEYS);
    put(&q->b, ")");
    tag_end2(q, "f", "gpus");
    unless_ours(q);
    put(&q->b, ")");
    tag_end(q, "count");

    tag_begin(q, false);
    put(&q->b, "count by (instance) (group by (instance, namespace, pod) (");
    sel(q, "DCGM_FI_DEV_FB_USED", "pod!=\"\"");
    d_if_matched(q, DKEYS);
    put(&q->b, ")");
    unless_ours(q);
    put(&q->b, ")");
    tag_end(q, "pods");
}

char *promq_node(enum promq_node which, const struct promq_scope *sc, const char *const *down,
                 size_t ndown)
{
    struct q q = {.match = sc && sc->match ? sc->match : "", .down = ""};
    struct sb dn = {0};
    if (ndown) {
        instance_matcher(&dn, down, ndown);
        if (dn.bad) {
            free(dn.p);
            return NULL;
        }
        q.down = dn.p;
    }
    if (scope_words(&q, sc ? sc->filter : "") != 0) {
        free(dn.p);
        return NULL;
    }
    switch (which) {
    case PQ_TARGETS:
        targets(&q);
        break;
    case PQ_LEAVES:
        migmon_leaves(&q);
        break;
    case PQ_GPUS:
        migmon_gpus(&q);
        break;
    case PQ_DCGM_LEAVES:
        dcgm_leaves(&q);
        break;
    case PQ_DCGM_GPUS:
        dcgm_gpus(&q);
        break;
    default:
        free(dn.p);
        return NULL;
    }
    free(dn.p);
    return done(&q.b);
}

/* ---- a set of nodes' devices ---- */

#define MIGMON_VALUES                                                                        \
    "utilization_ratio|memory_utilization_ratio|sm_utilization_ratio|memory_used_bytes|"    \
    "memory_total_bytes|temperature_celsius|power_watts|power_limit_watts|"                 \
    "energy_joules_total|graphics_clock_hertz|sm_clock_hertz|memory_clock_hertz|"           \
    "fan_speed_ratio|performance_state|processes|health|lost|sampling_stalled"
#define DCGM_FIELDS                                                                          \
    "DCGM_FI_DEV_(FB_USED|FB_FREE|FB_RESERVED|GPU_TEMP|POWER_USAGE|GPU_UTIL|MEM_COPY_UTIL|" \
    "SM_CLOCK|MEM_CLOCK)|DCGM_FI_PROF_(GR_ENGINE_ACTIVE|SM_ACTIVE|DRAM_ACTIVE)"
#define MIGMON_PROCESS                                                                       \
    "gpu_memory_bytes|sm_utilization_ratio|memory_utilization_ratio|cpu_ratio|"             \
    "resident_memory_bytes"
#define DCGM_LABELS                                                                          \
    "instance, Hostname, hostname, gpu, UUID, modelName, pci_bus_id, GPU_I_ID, GPU_I_PROFILE"
#define IDENT_LABELS                                                                         \
    "__name__, instance, hostname, gpu, uuid, pci_bus_id, model, architecture, "            \
    "compute_capability, mig_mode, serial, vendor, gpu_instance_id, compute_instance_id, "  \
    "partition_id, mig_profile, mig_uuid, mig_index"

/* `instance=~"a|b"` for the nodes (their names matched literally). */
static void instance_matcher(struct sb *b, const char *const *inst, size_t n)
{
    struct sb re = {0};
    for (size_t i = 0; i < n; i++) {
        size_t cap = strlen(inst[i]) * 2 + 1;
        char *lit = malloc(cap);
        if (!lit) {
            re.bad = true;
            break;
        }
        promq_regex_quote(lit, cap, inst[i]);
        if (i)
            put(&re, "|");
        put(&re, lit);
        free(lit);
    }
    put(b, "instance=~");
    if (re.bad || !re.p)
        b->bad = true;
    else
        put_re(b, re.p);
    free(re.p);
}

/* The selector {names, instance=~set, match} into q->b. */
static void detail_sel(struct q *q, const char *names, const char *const *inst, size_t n)
{
    struct sb e = {0};
    put(&e, names);
    put(&e, ",");
    instance_matcher(&e, inst, n);
    if (e.bad) {
        q->b.bad = true;
        free(e.p);
        return;
    }
    sel(q, "", e.p);
    free(e.p);
}

/* agg (names now) of the up nodes, or agg (last_over_time(...[10m])) of the down ones. */
static void up_or_down(struct q *q, const char *agg, const char *names, const char *const *up,
                       size_t nup, const char *const *dn, size_t ndn)
{
    if (nup) {
        putf(&q->b, "%s (", agg);
        detail_sel(q, names, up, nup);
        put(&q->b, ")");
    }
    if (ndn) {
        putf(&q->b, "%s%s (last_over_time(", nup ? " or " : "", agg);
        detail_sel(q, names, dn, ndn);
        put(&q->b, "[10m]))");
    }
}

char *promq_detail(enum promq_detail which, const struct promq_scope *sc, const char *const *up,
                   size_t nup, const char *const *dn, size_t ndn)
{
    struct q q = {.match = sc && sc->match ? sc->match : "", .down = ""};
    if (nup + ndn == 0)
        return NULL;
    switch (which) {
    case PD_IDENT:
        up_or_down(&q, "max by (" IDENT_LABELS ")",
                   "__name__=~\"migmon_(host_info|device_info|mig_info|"
                   "last_sample_timestamp_seconds)\"",
                   up, nup, dn, ndn);
        break;
    case PD_DCGM_IDENT:
        up_or_down(&q, "count by (" DCGM_LABELS ")", "__name__=~\"" DCGM_FIELDS "\"", up, nup,
                   dn, ndn);
        break;
    case PD_VALUES:
        if (!nup)
            return NULL;
        put(&q.b, "max by (__name__, instance, uuid, gpu_instance_id, compute_instance_id, "
                  "partition_id, source, state, pod, namespace, container) (");
        detail_sel(&q, "__name__=~\"migmon_(gpu|mig)_(" MIGMON_VALUES ")\"", up, nup);
        put(&q.b, ")");
        break;
    case PD_DCGM_VALUES:
        if (!nup)
            return NULL;
        put(&q.b, "max by (__name__, " DCGM_LABELS ", pod, namespace, container) (");
        detail_sel(&q, "__name__=~\"" DCGM_FIELDS "\"", up, nup);
        put(&q.b, ")");
        break;
    case PD_PROCS:
        if (!nup)
            return NULL;
        put(&q.b, "max by (__name__, instance, uuid, gpu_instance_id, compute_instance_id, "
                  "partition_id, pid, process_name, pod_uid, container, source) (");
        detail_sel(&q, "__name__=~\"migmon_process_(" MIGMON_PROCESS ")\"", up, nup);
        put(&q.b, ")");
        break;
    default:
        return NULL;
    }
    return done(&q.b);
}

/* ---- --prometheus-match ---- */

/* A PromQL string literal at *pp ("…" or '…', Go's escapes) into out. */
static int read_string(const char **pp, char *out, size_t cap)
{
    const char *p = *pp;
    char quote = *p;
    if (quote != '"' && quote != '\'')
        return -1;
    p++;
    size_t n = 0;
    while (*p && *p != quote) {
        char c = *p++;
        if (c == '\\') {
            char e = *p++;
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case '\\': case '"': case '\'': c = e; break;
            default:
                return -1; /* others are not needed in a label value here */
            }
        }
        if (n + 1 >= cap)
            return -1;
        out[n++] = c;
    }
    if (*p != quote)
        return -1;
    out[n] = '\0';
    *pp = p + 1;
    return 0;
}

int promq_match_parse(const char *s, char *out, size_t cap, char *err, size_t errlen)
{
    const char *p = s;
    struct sb b = {0};
    put(&b, "");
    while (*p == ' ')
        p++;
    bool brace = *p == '{';
    if (brace)
        p++;
    int n = 0;
    for (;;) {
        while (*p == ' ')
            p++;
        if ((brace && *p == '}') || (!brace && !*p))
            break;
        char name[128];
        size_t k = 0;
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_'))
            goto bad;
        while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
               (*p >= '0' && *p <= '9')) {
            if (k + 1 >= sizeof(name))
                goto bad;
            name[k++] = *p++;
        }
        name[k] = '\0';
        if (strcmp(name, "__name__") == 0) {
            snprintf(err, errlen, "--prometheus-match: __name__ cannot be matched (the fleet "
                     "view names the series it reads)");
            free(b.p);
            return -1;
        }
        while (*p == ' ')
            p++;
        const char *op = NULL;
        if (strncmp(p, "=~", 2) == 0)
            op = "=~";
        else if (strncmp(p, "!~", 2) == 0)
            op = "!~";
        else if (strncmp(p, "!=", 2) == 0)
            op = "!=";
        else if (*p == '=')
            op = "=";
        else
            goto bad;
        p += strlen(op);
        while (*p == ' ')
            p++;
        char val[1024], quoted[4200];
        if (read_string(&p, val, sizeof(val)) != 0)
            goto bad;
        if (++n > PROMQ_MATCHERS_MAX) {
            snprintf(err, errlen, "--prometheus-match: more than %d matchers", PROMQ_MATCHERS_MAX);
            free(b.p);
            return -1;
        }
        promql_quote(quoted, sizeof(quoted), val);
        putf(&b, "%s%s%s\"%s\"", n > 1 ? "," : "", name, op, quoted);
        while (*p == ' ')
            p++;
        if (*p == ',')
            p++;
        else if (!((brace && *p == '}') || (!brace && !*p)))
            goto bad;
    }
    if (brace) {
        p++;
        while (*p == ' ')
            p++;
        if (*p)
            goto bad;
    }
    if (b.bad || b.len + 1 > cap) {
        snprintf(err, errlen, "--prometheus-match: too long");
        free(b.p);
        return -1;
    }
    snprintf(out, cap, "%s", b.p);
    free(b.p);
    return 0;
bad:
    snprintf(err, errlen, "--prometheus-match %.200s: expected label matchers such as "
             "'{job=\"gpu\",cluster=~\"a|b\"}'", s);
    free(b.p);
    return -1;
}
