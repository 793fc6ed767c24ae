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
#include "backend/prometheus/prom_query.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/prometheus/prom_client.h"
#include "backend/prometheus/prom_query_int.h"

/* ---- a growing string ---- */

void pq_put(struct sb *b, const char *s)
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

void pq_putf(struct sb *b, const char *fmt, ...)
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
    pq_put(b, tmp);
}

char *pq_done(struct sb *b)
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
void pq_put_re(struct sb *b, const char *re)
{
    size_t cap = strlen(re) * 4 + 8;
    char *q = malloc(cap);
    if (!q) {
        b->bad = true;
        return;
    }
    promql_quote(q, cap, re);
    pq_put(b, "\"");
    pq_put(b, q);
    pq_put(b, "\"");
    free(q);
}

/* ---- the building blocks ---- */

/* name{extra,match}: name may be "" (extra then names the series). */
void pq_sel(struct q *q, const char *name, const char *extra)
{
    pq_put(&q->b, name);
    pq_put(&q->b, "{");
    pq_put(&q->b, extra);
    if (extra[0] && q->match[0])
        pq_put(&q->b, ",");
    pq_put(&q->b, q->match);
    if (q->only_legacy && q->legacy[0]) {
        if (extra[0] || q->match[0])
            pq_put(&q->b, ",");
        pq_put(&q->b, q->legacy);
    }
    pq_put(&q->b, "}");
}

/* name{extra,more,match}, or its last 10 minutes (range10m: a down
 * target's, last_over_time(...[10m])): extra and more may be "". */
static void sel2(struct q *q, const char *name, const char *extra, const char *more, bool range10m)
{
    struct sb e = {0};
    pq_put(&e, extra);
    if (extra[0] && more[0])
        pq_put(&e, ",");
    pq_put(&e, more);
    if (range10m) {
        if (e.p && e.p[0])
            pq_put(&e, ",");
        pq_put(&e, q->down);
        pq_put(&q->b, "last_over_time(");
    }
    if (e.bad)
        q->b.bad = true;
    else
        pq_sel(q, name, e.p ? e.p : "");
    if (range10m)
        pq_put(&q->b, "[10m])");
    free(e.p);
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

/* What a series is the series of, for the labels a word is looked for in:
 * a GPU's, a MIG instance's (or an AMD partition's), dcgm-exporter's. */
enum kind { K_GPU, K_MIG, K_DGPU, K_DMIG };

static const char *const kind_labels[][8] = {
    [K_GPU] = {"model", "pci_bus_id", "uuid", "pod", "namespace", "container", NULL},
    [K_MIG] = {"model", "pci_bus_id", "mig_uuid", "mig_profile", "pod", "namespace", "container",
               NULL},
    [K_DGPU] = {"modelName", "pci_bus_id", "UUID", "pod", "namespace", "container", NULL},
    [K_DMIG] = {"modelName", "pci_bus_id", "GPU_I_PROFILE", "pod", "namespace", "container", NULL},
};

/*
 * The series name{extra} (their last 10 minutes with range10m) that every
 * word of the filter but "idle" matches: the word in one of the labels
 * the series' kind is looked for in, or in its node's name (the nodes
 * whose name has it, named by instance). Each word's alternatives are
 * selectors with the word as a label matcher, so Prometheus' index finds
 * the series that match: the cost grows with them, not with the fleet.
 */
static void fam(struct q *q, const char *name, const char *extra, enum kind k, bool range10m)
{
    if (!q->any_text) {
        sel2(q, name, extra, "", range10m);
        return;
    }
    char m[1024];
    pq_put(&q->b, "(");
    bool first_word = true;
    for (size_t w = 0; w < q->nwords; w++) {
        if (q->idle[w])
            continue;
        pq_put(&q->b, first_word ? "(" : " and (");
        first_word = false;
        for (size_t l = 0; kind_labels[k][l]; l++) {
            word_matcher(m, sizeof(m), q, w, kind_labels[k][l]);
            if (l)
                pq_put(&q->b, " or ");
            sel2(q, name, extra, m, range10m);
        }
        if (q->wnodes[w][0]) {
            pq_put(&q->b, " or ");
            sel2(q, name, extra, q->wnodes[w], range10m);
        }
        pq_put(&q->b, ")");
    }
    pq_put(&q->b, ")");
}

/* A family's series as fam gives them: those there now, and the down
 * targets' of the last 10 minutes (their series are stale now). The down
 * targets are named (the targets query asked first): last_over_time reads
 * every sample of its window, so it is asked of those targets alone. */
static void info(struct q *q, const char *name, const char *extra, enum kind k)
{
    if (!q->down[0]) {
        fam(q, name, extra, k, false);
        return;
    }
    pq_put(&q->b, "(");
    fam(q, name, extra, k, false);
    pq_put(&q->b, " or ");
    fam(q, name, extra, k, true);
    pq_put(&q->b, ")");
}

static void idle(struct q *q);

/* " and on (ON) IDLE" when the filter has the word idle: the idle leaves,
 * every one of them (the other words' matches are the caller's). */
static void if_idle(struct q *q, const char *on)
{
    if (!q->any_idle)
        return;
    bool text = q->any_text;
    q->any_idle = q->any_text = false;
    pq_putf(&q->b, " and on (%s) ", on);
    idle(q);
    q->any_idle = true;
    q->any_text = text;
}

/* A value family of the leaves (x: the family's suffix, "utilization_ratio"),
 * as the filter leaves it. */
static void leaf(struct q *q, const char *x)
{
    char name[96];
    pq_put(&q->b, "((");
    snprintf(name, sizeof(name), "migmon_mig_%s", x);
    fam(q, name, "", K_MIG, false);
    pq_put(&q->b, " or (");
    snprintf(name, sizeof(name), "migmon_gpu_%s", x);
    fam(q, name, "", K_GPU, false);
    pq_put(&q->b, " unless on (instance, uuid) ");
    pq_sel(q, "migmon_device_info", "mig_mode=\"enabled\"");
    pq_put(&q->b, "))");
    if_idle(q, KEYS);
    pq_put(&q->b, ")");
}

/* The idle leaves: utilisation under 1 %, or none to be had and no process. */
/* The idle rule over the leaves' own figures: utilisation under 1 %, or
 * none to be had and no process (a node whose exporter gives no idle
 * series). */
static void idle_rule(struct q *q)
{
    pq_put(&q->b, "((");
    leaf(q, "utilization_ratio");
    pq_put(&q->b, " < 0.01) or ((");
    leaf(q, "processes");
    pq_put(&q->b, " == 0) unless on (" KEYS ") ");
    leaf(q, "utilization_ratio");
    pq_put(&q->b, "))");
}

/* The idle leaves: as their exporters say (migmon_*_idle, the same rule),
 * and by the rule itself on the nodes whose exporters do not say. */
static void idle(struct q *q)
{
    pq_put(&q->b, "((");
    fam(q, "migmon_mig_idle", "", K_MIG, false);
    pq_put(&q->b, " == 1) or (");
    fam(q, "migmon_gpu_idle", "", K_GPU, false);
    pq_put(&q->b, " == 1)");
    if (q->legacy_all || q->legacy[0]) {
        bool only = q->only_legacy;
        q->only_legacy = !q->legacy_all;
        pq_put(&q->b, " or ");
        idle_rule(q);
        q->only_legacy = only;
    }
    pq_put(&q->b, ")");
}

/* label_replace(..., "lab", "val", "", ""): tags a vector (label lab set to val). */
static void tag_begin(struct q *q, bool first)
{
    pq_put(&q->b, first ? "label_replace(" : " or label_replace(");
}

static void tag_end2(struct q *q, const char *lab, const char *val)
{
    pq_putf(&q->b, ", \"%s\", \"%s\", \"\", \"\")", lab, val);
}

static void tag_end(struct q *q, const char *tag)
{
    tag_end2(q, "a", tag);
}

/* ---- dcgm-exporter ---- */

#define DCGM_ID_FIELDS "DCGM_FI_DEV_(FB_USED|GPU_TEMP)"

/* Its entities of a kind (GPUs, GPU instances) by (instance, UUID,
 * GPU_I_ID): there now, and a down target's of the last 10 minutes. */
static void dinfo(struct q *q, enum kind k)
{
    pq_put(&q->b, "group by (" DKEYS ") (");
    info(q, "", k == K_DMIG ? "__name__=~\"" DCGM_ID_FIELDS "\",GPU_I_ID!=\"\""
                            : "__name__=~\"" DCGM_ID_FIELDS "\",GPU_I_ID=\"\"",
         k);
    pq_put(&q->b, ")");
}

/* A field of the leaves: the GPU instances, and GPUs without any. */
static void dleaf(struct q *q, const char *field)
{
    pq_put(&q->b, "(max by (" DKEYS ") (");
    fam(q, field, "GPU_I_ID!=\"\"", K_DMIG, false);
    pq_put(&q->b, ") or (max by (" DKEYS ") (");
    fam(q, field, "GPU_I_ID=\"\"", K_DGPU, false);
    pq_put(&q->b, ") unless on (instance, UUID) group by (instance, UUID) (");
    pq_sel(q, "DCGM_FI_DEV_FB_USED", "GPU_I_ID!=\"\"");
    pq_put(&q->b, ")))");
}

/* A leaf's utilisation (0..1): the profiling field, else GPU_UTIL / 100. */
static void dutil(struct q *q)
{
    pq_put(&q->b, "(");
    dleaf(q, "DCGM_FI_PROF_GR_ENGINE_ACTIVE");
    pq_put(&q->b, " or ((");
    dleaf(q, "DCGM_FI_DEV_GPU_UTIL");
    pq_put(&q->b, " / 100) unless on (" DKEYS ") ");
    dleaf(q, "DCGM_FI_PROF_GR_ENGINE_ACTIVE");
    pq_put(&q->b, "))");
}

/* " and on (DKEYS) IDLE" when the filter has the word idle. */
static void d_if_idle(struct q *q)
{
    if (!q->any_idle)
        return;
    bool text = q->any_text;
    q->any_text = false; /* the rule, of every leaf */
    pq_put(&q->b, " and on (" DKEYS ") (");
    dutil(q);
    pq_put(&q->b, " < 0.01)");
    q->any_text = text;
}

/* ---- the queries ---- */

static int scope_words(struct q *q, const struct promq_scope *sc)
{
    q->nwords = 0;
    const char *p = sc && sc->filter ? sc->filter : "";
    while (*p) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (n == 0)
            break;
        if (q->nwords == PROMQ_WORDS_MAX || n > PROMQ_WORD_LEN)
            return -1;
        size_t w = q->nwords++;
        memcpy(q->words[w], p, n);
        q->words[w][n] = '\0';
        q->idle[w] = strcasecmp(q->words[w], "idle") == 0;
        q->any_idle |= q->idle[w];
        q->any_text |= !q->idle[w];
        p += n;
    }
    return 0;
}

/* For each word, the nodes whose name or instance has it (sc->wnodes). */
static int scope_nodes(struct q *q, const struct promq_scope *sc)
{
    for (size_t w = 0; w < q->nwords; w++) {
        struct sb b = {0};
        pq_put(&b, "");
        const struct promq_nodes *wn = sc && w < PROMQ_WORDS_MAX ? &sc->wnodes[w] : NULL;
        if (!q->idle[w] && wn && wn->n)
            pq_instances(&b, wn->inst, wn->n);
        if (b.bad) {
            free(b.p);
            return -1;
        }
        q->wnodes[w] = b.p;
    }
    struct sb b = {0};
    pq_put(&b, "");
    if (sc && sc->legacy.n)
        pq_instances(&b, sc->legacy.inst, sc->legacy.n);
    if (b.bad) {
        free(b.p);
        return -1;
    }
    q->legacy = b.p;
    q->legacy_all = sc && sc->legacy_all;
    return 0;
}

static void scope_free(struct q *q)
{
    for (size_t w = 0; w < PROMQ_WORDS_MAX; w++)
        free(q->wnodes[w]);
    free(q->legacy);
}

int promq_filter_check(const char *filter, char *err, size_t errlen)
{
    struct q q = {.match = "", .down = ""};
    struct promq_scope sc = {.filter = filter};
    if (scope_words(&q, &sc) == 0)
        return 0;
    snprintf(err, errlen, "the filter has more than %d words or a word longer than %d bytes",
             PROMQ_WORDS_MAX, PROMQ_WORD_LEN);
    return -1;
}

size_t promq_words(const char *filter, char words[][PROMQ_WORD_LEN + 1], size_t max)
{
    struct q q = {.match = "", .down = ""};
    struct promq_scope sc = {.filter = filter};
    if (scope_words(&q, &sc) != 0)
        return 0;
    size_t n = 0;
    for (size_t w = 0; w < q.nwords && n < max; w++)
        memcpy(words[n++], q.words[w], sizeof(q.words[w]));
    return n;
}

/* The nodes' summaries as their exporters give them (prom_node.c): every
 * migmon_node_* series by (__name__, instance), and the GPU and instance
 * counts of the down targets' last 10 minutes. Under a filter only which
 * nodes give them (the figures are of every device): by instance alone. */
static void summary(struct q *q)
{
    static const char *const down_fams[] = {"migmon_node_gpus", "migmon_node_mig_devices"};
    if (q->nwords) {
        pq_put(&q->b, "group by (instance) (");
        pq_sel(q, "migmon_node_gpus", "");
        if (q->down[0]) {
            pq_put(&q->b, " or last_over_time(");
            pq_sel(q, "migmon_node_gpus", q->down);
            pq_put(&q->b, "[10m])");
        }
        pq_put(&q->b, ")");
        return;
    }
    pq_put(&q->b, "max by (__name__, instance) (");
    pq_sel(q, "", "__name__=~\"migmon_node_.+\"");
    pq_put(&q->b, ")");
    /* the name set again (a function drops it) and as f too: `or` tells
     * series apart by their labels without the name */
    for (size_t k = 0; q->down[0] && k < 2; k++) {
        pq_put(&q->b, " or max by (__name__, instance, f) (label_replace(label_replace("
                   "last_over_time(");
        pq_sel(q, down_fams[k], q->down);
        pq_putf(&q->b, "[10m]), \"__name__\", \"%s\", \"\", \"\"), \"f\", \"%s\", \"\", \"\"))",
             down_fams[k], down_fams[k]);
    }
}

static void targets(struct q *q)
{
    /* every target of a job that has (had, in the last 10 minutes) our or
     * dcgm-exporter's series on some target: so a target never up is listed */
    tag_begin(q, true);
    pq_put(&q->b, "max by (instance) (");
    pq_sel(q, "up", "");
    pq_put(&q->b, " and on (job) (group by (job) (");
    pq_sel(q, "", "__name__=~\"migmon_host_info|DCGM_FI_DEV_GPU_TEMP\"");
    pq_put(&q->b, ") or group by (job) (last_over_time(");
    pq_sel(q, "migmon_host_info", "");
    pq_put(&q->b, "[10m]))))");
    tag_end(q, "up");
    tag_begin(q, false);
    pq_put(&q->b, "max by (instance, hostname) (last_over_time(");
    pq_sel(q, "migmon_host_info", "");
    pq_put(&q->b, "[10m]))");
    tag_end(q, "name");
    tag_begin(q, false);
    pq_put(&q->b, "group by (instance, Hostname, hostname) (last_over_time(");
    pq_sel(q, "DCGM_FI_DEV_GPU_TEMP", "");
    pq_put(&q->b, "[10m]))");
    tag_end(q, "dname");
    tag_begin(q, false);
    pq_put(&q->b, "max by (instance) (last_over_time(");
    pq_sel(q, "migmon_last_sample_timestamp_seconds", "");
    pq_put(&q->b, "[10m]))");
    tag_end(q, "last");
}

/* One aggregate by node, tagged a=A,f=F: agg by (instance) (expr). The
 * aggregates are unioned (or) as their small results, one series a node:
 * a union of the devices' series themselves would cost Prometheus a hash
 * of every series' labels. */
static void agg_begin(struct q *q, bool first, const char *agg)
{
    tag_begin(q, first);
    tag_begin(q, true);
    pq_putf(&q->b, "%s by (instance) (", agg);
}

static void agg_end(struct q *q, const char *a, const char *f)
{
    pq_put(&q->b, ")");
    tag_end2(q, "a", a);
    tag_end2(q, "f", f);
}

/* Our exporters' nodes, over their leaves: the instances, utilisation
 * (count, sum, max), idle ones, VRAM (the leaves with a used figure and
 * with a total: counted apart), the instances not ok. */
static void migmon_leaves(struct q *q)
{
    agg_begin(q, true, "count");
    info(q, "migmon_mig_info", "", K_MIG);
    if_idle(q, KEYS);
    agg_end(q, "count", "mig");
    static const char *const util[] = {"count", "sum", "max"};
    for (size_t k = 0; k < 3; k++) {
        agg_begin(q, false, util[k]);
        leaf(q, "utilization_ratio");
        agg_end(q, util[k], "util");
    }
    agg_begin(q, false, "count");
    bool any_idle = q->any_idle; /* the idle leaves are idle: no join */
    q->any_idle = false;
    idle(q);
    q->any_idle = any_idle;
    agg_end(q, "count", "idle");
    static const char *const mem[][2] = {{"memory_used_bytes", "mused"},
                                         {"memory_total_bytes", "mtotal"}};
    for (size_t k = 0; k < 2; k++)
        for (int c = 0; c < 2; c++) {
            agg_begin(q, false, c ? "count" : "sum");
            leaf(q, mem[k][0]);
            agg_end(q, c ? "count" : "sum", mem[k][1]);
        }
    agg_begin(q, false, "count");
    pq_put(&q->b, "(");
    fam(q, "migmon_mig_health", "state=~\"warning|action\"", K_MIG, false);
    pq_put(&q->b, " == 1)");
    if_idle(q, KEYS);
    agg_end(q, "count", "mnotok");
}

/* The GPUs the filter leaves, by (instance, uuid): one that matches or
 * has an instance that matches. */
static void gpus_matched(struct q *q)
{
    pq_put(&q->b, "group by (instance, uuid) ((");
    info(q, "migmon_device_info", "", K_GPU);
    pq_put(&q->b, " or ");
    info(q, "migmon_mig_info", "", K_MIG);
    pq_put(&q->b, ")");
    if_idle(q, KEYS);
    pq_put(&q->b, ")");
}

/* " and on (instance, uuid) GPUS" when there is a filter. */
static void if_gpus(struct q *q)
{
    if (!q->nwords)
        return;
    pq_put(&q->b, " and on (instance, uuid) ");
    gpus_matched(q);
}

/* A GPU's flag of state s (1 when the GPU or one of its instances is in
 * it: the GPU's verdict), by (instance, uuid), of the GPUs the filter
 * leaves. */
static void gpu_flag(struct q *q, const char *state)
{
    char st[64];
    snprintf(st, sizeof(st), "state=\"%s\"", state);
    pq_put(&q->b, "((max by (instance, uuid) (");
    pq_sel(q, "migmon_gpu_health", st);
    pq_put(&q->b, " or ");
    pq_sel(q, "migmon_mig_health", st);
    pq_put(&q->b, ") == 1)");
    if_gpus(q);
    pq_put(&q->b, ")");
}

/* Our exporters' nodes, over the GPUs the filter leaves: GPUs, GPUs not
 * ok (the GPU itself; its instances are the leaves'), GPUs by their
 * verdict (action, warning; with a verdict at all), pods. */
static void migmon_gpus(struct q *q)
{
    agg_begin(q, true, "count");
    if (q->nwords)
        gpus_matched(q);
    else
        info(q, "migmon_device_info", "", K_GPU);
    agg_end(q, "count", "gpus");
    agg_begin(q, false, "count");
    pq_put(&q->b, "(");
    pq_sel(q, "migmon_gpu_health", "state=~\"warning|action\"");
    pq_put(&q->b, " == 1)");
    if_gpus(q);
    agg_end(q, "count", "gnotok");
    agg_begin(q, false, "count");
    gpu_flag(q, "action");
    agg_end(q, "count", "gact");
    agg_begin(q, false, "count");
    gpu_flag(q, "warning");
    pq_put(&q->b, " unless on (instance, uuid) ");
    gpu_flag(q, "action");
    agg_end(q, "count", "gwarn");
    agg_begin(q, false, "count");
    pq_put(&q->b, "(");
    pq_sel(q, "migmon_gpu_health", "state=\"ok\"");
    if_gpus(q);
    pq_put(&q->b, ")");
    agg_end(q, "count", "gverdict");
    agg_begin(q, false, "count");
    pq_put(&q->b, "group by (instance, namespace, pod) (");
    fam(q, "migmon_gpu_memory_used_bytes", "pod!=\"\"", K_GPU, false);
    pq_put(&q->b, " or ");
    fam(q, "migmon_mig_memory_used_bytes", "pod!=\"\"", K_MIG, false);
    pq_put(&q->b, ")");
    agg_end(q, "pods", "");
}

/* dcgm-exporter's nodes, over their leaves: a=count, sum, max by f, as
 * ours. A node that has our series too is read from ours (prom_nodes.c
 * leaves these out for it). */
static void dcgm_leaves(struct q *q)
{
    agg_begin(q, true, "count");
    dinfo(q, K_DMIG);
    d_if_idle(q);
    agg_end(q, "count", "mig");
    static const char *const util[] = {"count", "sum", "max"};
    for (size_t k = 0; k < 3; k++) {
        agg_begin(q, false, util[k]);
        dutil(q);
        d_if_idle(q);
        agg_end(q, util[k], "util");
    }
    agg_begin(q, false, "count");
    pq_put(&q->b, "(");
    dutil(q);
    pq_put(&q->b, " < 0.01)");
    agg_end(q, "count", "idle");
    for (int c = 0; c < 2; c++) {
        agg_begin(q, false, c ? "count" : "sum");
        pq_put(&q->b, "(");
        dleaf(q, "DCGM_FI_DEV_FB_USED");
        pq_put(&q->b, " and on (" DKEYS ") ");
        dleaf(q, "DCGM_FI_DEV_FB_FREE");
        pq_put(&q->b, ") * 1048576");
        d_if_idle(q);
        agg_end(q, c ? "count" : "sum", "mused");
    }
    agg_begin(q, false, "sum");
    pq_put(&q->b, "(");
    dleaf(q, "DCGM_FI_DEV_FB_USED");
    pq_put(&q->b, " + on (" DKEYS ") ");
    dleaf(q, "DCGM_FI_DEV_FB_FREE");
    pq_put(&q->b, " + on (" DKEYS ") (");
    dleaf(q, "DCGM_FI_DEV_FB_RESERVED");
    pq_put(&q->b, " or ");
    dleaf(q, "DCGM_FI_DEV_FB_USED");
    pq_put(&q->b, " * 0)) * 1048576");
    d_if_idle(q);
    agg_end(q, "sum", "mtotal");
}

/* dcgm-exporter's nodes over their GPUs (one that matches or has a GPU
 * instance that matches), and pods. */
static void dcgm_gpus(struct q *q)
{
    agg_begin(q, true, "count");
    pq_put(&q->b, "group by (instance, UUID) (");
    dinfo(q, K_DGPU);
    d_if_idle(q);
    pq_put(&q->b, " or ");
    dinfo(q, K_DMIG);
    d_if_idle(q);
    pq_put(&q->b, ")");
    agg_end(q, "count", "gpus");
    agg_begin(q, false, "count");
    pq_put(&q->b, "group by (instance, namespace, pod) (");
    fam(q, "DCGM_FI_DEV_FB_USED", "pod!=\"\"", K_DMIG, false);
    pq_put(&q->b, " or ");
    fam(q, "DCGM_FI_DEV_FB_USED", "pod!=\"\",GPU_I_ID=\"\"", K_DGPU, false);
    pq_put(&q->b, ")");
    agg_end(q, "pods", "");
}

bool promq_node_wanted(enum promq_node which, const struct promq_scope *sc)
{
    bool filtered = false;
    for (const char *p = sc && sc->filter ? sc->filter : ""; *p && !filtered; p++)
        filtered = *p != ' ';
    return which <= PQ_SUMMARY || filtered || (sc && (sc->legacy_all || sc->legacy.n));
}

char *promq_node(enum promq_node which, const struct promq_scope *sc, const char *const *down,
                 size_t ndown)
{
    struct q q = {.match = sc && sc->match ? sc->match : "", .down = ""};
    struct sb dn = {0};
    if (ndown) {
        pq_instances(&dn, down, ndown);
        if (dn.bad) {
            free(dn.p);
            return NULL;
        }
        q.down = dn.p;
    }
    if (scope_words(&q, sc) != 0 || scope_nodes(&q, sc) != 0) {
        scope_free(&q);
        free(dn.p);
        return NULL;
    }
    /* with no filter, the aggregates are of the nodes without summaries */
    q.only_legacy = which > PQ_SUMMARY && !q.nwords && !q.legacy_all;
    switch (which) {
    case PQ_TARGETS:
        targets(&q);
        break;
    case PQ_SUMMARY:
        summary(&q);
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
        q.b.bad = true;
        break;
    }
    scope_free(&q);
    free(dn.p);
    return pq_done(&q.b);
}
