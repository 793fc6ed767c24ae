/*
 * prom_backend.c — the fleet backend (prom_backend.h): rounds of queries
 * in a thread of their own, their result handed to the sampling thread.
 *
 * A round is the node round (every target and its aggregates, a few
 * queries whose answers grow with the number of nodes only) and then the
 * devices of the nodes wanted: the nodes the monitor shows (its ask,
 * backend_view_ask), or every node (--once, record: the monitor never
 * asks), in pages of nodes whose answers stay bounded. docs/fleet.md.
 */
#include "fleet/prom_backend.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "debuglog.h"
#include "fleet/prom_client.h"
#include "fleet/prom_fleet.h"
#include "fleet/prom_nodes.h"
#include "fleet/prom_past.h"
#include "fleet/prom_query.h"
#include "history.h"
#include "text.h"

/* A round of queries gets 90% of the interval, so the next round starts on
 * time, and at least a second (a round of a large fleet's queries takes a
 * Prometheus longer than a short interval: the rounds then follow one
 * another, each sample taking the last); --once gets 60 s (its --timeout
 * bounds the wait for it). */
#define ROUND_SHARE 0.9
#define ROUND_MIN_MS 1000u
#define ROUND_ONCE_MS 60000u
/* A round that asks aggregates over devices' series (under a device
 * filter, or of nodes whose exporters give no summaries): they cost
 * Prometheus a pass over every device's series they count (a few seconds
 * at 10,000 GPUs), more than a short interval; such a round gets this
 * long at least, the screen keeping the last result meanwhile */
#define AGGREGATES_ROUND_MS 15000u
/* close waits this long for the query threads, then leaves them behind */
#define CLOSE_WAIT_MS 300u
/* A range query for the charts' past gets this long (the screen never
 * waits for it) */
#define PAST_TIMEOUT_MS 5000u
/* The devices held for the monitor (the nodes it shows), at most: 64
 * nodes of 64 devices */
#define VIEW_DEVICES_MAX 4096u
/* The nodes whose devices the monitor may ask for at once */
#define ASK_NODES_MAX 64u
/* A page of the devices' queries: at most so many nodes, and about so
 * many devices (a node's count from its aggregates; 64 when unknown):
 * about 2.5 kB of answer a device */
#define PAGE_NODES 256u
#define PAGE_DEVICES 2048u
/* Bytes of one answer read at most (read as it comes: memory does not
 * grow with it; this bounds the time a hostile server can take) */
#define ANSWER_MAX PROMC_MAX_ANSWER
/* A chart's past: one device's twenty-odd series of at most 11,000
 * points is under 8 MiB; the answer is parsed whole (a tree several times
 * its size), so a larger one is refused rather than held */
#define PAST_ANSWER_MAX (8u << 20)
/* Targets down whose devices of the last 10 minutes are read, at most
 * (each is named in the aggregates' queries) */
#define DOWN_MAX 1024u
/* Reasons of one round (failed queries), kept with its result */
#define WHY_POOL 16384u

struct why_pool {
    char buf[WHY_POOL];
    size_t len;
};

struct prom_state {
    struct promc *pc;
    /* the URL as every message shows it: its userinfo redacted
     * (text_url_redact); the client alone holds the one it asks */
    char url[512];
    char match[2048]; /* --prometheus-match, as promq_match_parse wrote it */
    unsigned interval_ms, round_ms;
    bool one_shot;
    bool every_node; /* every node's devices each round (no front end asks) */
    uint64_t opened_ns;
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop, exited;
    bool interrupted;
    /* The front end's ask, under mu: the device filter and the nodes
     * whose devices it shows (instances); asked: it changed since the
     * last round began (a round starts at once). */
    struct {
        char filter[64];
        char (*inst)[128];
        size_t n;
        bool any;     /* an ask came at all */
        uint64_t gen; /* asks that wanted a round */
    } ask;
    bool asked;
    uint64_t answered; /* the gen of the ask the published result answers */
    /* The last round's result, under mu: the nodes (in name order, with
     * their devices' place in last), the devices of the nodes that were
     * wanted, the reasons both point into (pool[cur]). */
    struct node_summary *nodes;
    size_t nnodes;
    const char *nodes_why;
    char nodes_filter[64];
    uint64_t nodes_ns; /* when the node round was made */
    struct fleet last;
    struct why_pool pool[2];
    int cur;
    bool have;           /* a round has given nodes at least once */
    unsigned rounds;     /* rounds finished */
    const char *asking;  /* the query in flight (its name), NULL between rounds */
    char why[1024];      /* the last round's failure, "" when it was whole */
    uint64_t last_ok_ns; /* when a round last gave nodes */
    unsigned stale;      /* rounds since then */
    char err[1100];      /* last_error */
    uint64_t bytes;      /* answers read, every query */
    /* The charts' past (past_ask): asked from the front end's thread,
     * fetched by the past thread with a client of its own, started at the
     * first ask; the ask and the answer are handed over under pmu. */
    pthread_mutex_t pmu;
    pthread_cond_t pcv;
    struct promc *ppc; /* the past thread's client; NULL before the first ask */
    pthread_t pthread;
    bool pstop, pexited;
    bool pask; /* ask holds an ask the past thread has not taken */
    struct {
        char uuid[MIGMON_UUID_LEN];
        char node[64];
        unsigned points, interval_ms;
        uint64_t id;
        int64_t end_ms; /* the time of the ask: the past ends there */
    } past;
    int pans; /* 1: ans holds an answer to ans_id; -1: that ask failed (ans_err); 0 none */
    struct hist_past ans;
    uint64_t ans_id;
    char ans_err[512];
};

static const char *pool_put(struct why_pool *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static const char *pool_put(struct why_pool *p, const char *fmt, ...)
{
    size_t room = sizeof(p->buf) - p->len;
    if (room < 64)
        return "Prometheus: a query failed (more reasons than are kept)";
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p->buf + p->len, room, fmt, ap);
    va_end(ap);
    const char *s = p->buf + p->len;
    p->len += (n < 0 ? 0 : (size_t)n >= room ? room - 1 : (size_t)n) + 1;
    return s;
}

static bool in_pool(const struct prom_state *st, const char *s)
{
    return s && s >= st->pool[0].buf && s < st->pool[0].buf + sizeof(st->pool);
}

static bool stopping(struct prom_state *st)
{
    pthread_mutex_lock(&st->mu);
    bool s = st->stop || st->interrupted;
    pthread_mutex_unlock(&st->mu);
    return s;
}

static unsigned ms_left(uint64_t end)
{
    uint64_t now = clock_mono_ns();
    return now < end ? (unsigned)((end - now) / 1000000ull) : 0;
}

/* The query in flight, for the message when the first round has not
 * answered by --once's deadline. */
static void asking(struct prom_state *st, const char *name)
{
    pthread_mutex_lock(&st->mu);
    st->asking = name;
    pthread_mutex_unlock(&st->mu);
}

/* ---- the node round ---- */

struct node_cb {
    struct node_table *t;
    enum promq_node q;
};

static int on_node(void *ctx, const struct prom_item *it)
{
    struct node_cb *c = ctx;
    return nodes_read(c->t, c->q, it);
}

static const char *const node_query_name[PQ_COUNT] = {
    [PQ_TARGETS] = "targets",
    [PQ_SUMMARY] = "nodes' summaries",
    [PQ_LEAVES] = "nodes' instances",
    [PQ_GPUS] = "nodes' GPUs",
    [PQ_DCGM_LEAVES] = "dcgm-exporter nodes' instances",
    [PQ_DCGM_GPUS] = "dcgm-exporter nodes' GPUs"};
static const char *const detail_query_name[PD_COUNT] = {
    [PD_IDENT] = "devices", [PD_VALUES] = "values", [PD_DCGM_IDENT] = "dcgm-exporter devices",
    [PD_DCGM_VALUES] = "dcgm-exporter values", [PD_PROCS] = "processes"};

/* The node round into t; the number of its queries that failed (why[q]
 * in pool), the first failure's text in first. */
static unsigned node_round(struct prom_state *st, struct node_table *t, const char *filter,
                           uint64_t start, uint64_t *end, struct why_pool *pool,
                           const char *why[PQ_COUNT], char *first, size_t firstlen)
{
    struct promq_scope sc = {.match = st->match, .filter = filter};
    unsigned failed = 0;
    /* the down targets', the legacy nodes' and each word's instances:
     * borrowed from t */
    const char **down = malloc(DOWN_MAX * sizeof(*down));
    const char **legacy = malloc(FLEET_NODES_MAX * sizeof(*legacy));
    char words[PROMQ_WORDS_MAX][PROMQ_WORD_LEN + 1];
    size_t ndown = 0, nwords = promq_words(filter, words, PROMQ_WORDS_MAX);
    const char **wn = malloc((nwords ? nwords : 1) * (size_t)FLEET_NODES_MAX * sizeof(*wn));
    for (int q = 0; q < PQ_COUNT; q++) {
        char e[400];
        why[q] = NULL;
        if (q == PQ_SUMMARY && down && wn) {
            /* the targets are known: the aggregates read the down ones'
             * last devices, and a word matches the nodes it names */
            ndown = nodes_down(t, down, DOWN_MAX);
            for (size_t w = 0; w < nwords; w++) {
                const char **o = wn + w * FLEET_NODES_MAX;
                sc.wnodes[w] = (struct promq_nodes){
                    .inst = o, .n = nodes_with_word(t, words[w], o, FLEET_NODES_MAX)};
            }
        }
        if (q == PQ_SUMMARY + 1 && legacy) {
            if (why[PQ_SUMMARY])
                sc.legacy_all = true; /* not known: every node's aggregates */
            else
                sc.legacy = (struct promq_nodes){
                    .inst = legacy, .n = nodes_legacy(t, legacy, FLEET_NODES_MAX)};
        }
        if (!promq_node_wanted((enum promq_node)q, &sc))
            continue;
        if (q > PQ_SUMMARY && *end < start + AGGREGATES_ROUND_MS * 1000000ull)
            *end = start + AGGREGATES_ROUND_MS * 1000000ull;
        bool mem = down && legacy && wn;
        char *promql = mem || q == PQ_TARGETS ? promq_node((enum promq_node)q, &sc, down, ndown)
                                              : NULL;
        unsigned left = ms_left(*end);
        int rc = -1;
        if (!promql)
            snprintf(e, sizeof(e), "out of memory for the query");
        else if (left < 10)
            snprintf(e, sizeof(e), "no time left in the round of %.0f ms",
                     (double)(*end - start) / 1e6);
        else if (stopping(st))
            snprintf(e, sizeof(e), "stopped");
        else {
            struct node_cb cb = {.t = t, .q = (enum promq_node)q};
            asking(st, node_query_name[q]);
            uint64_t t0 = clock_mono_ns(), b0 = promc_bytes(st->pc);
            rc = promc_query_each(st->pc, promql, left, ANSWER_MAX, on_node, &cb, e, sizeof(e));
            debuglog_printf("prometheus: the %s query (%zu bytes): %s, %.1f ms, %llu bytes read",
                            node_query_name[q], strlen(promql), rc == 0 ? "ok" : e,
                            (double)(clock_mono_ns() - t0) / 1e6,
                            (unsigned long long)(promc_bytes(st->pc) - b0));
        }
        free(promql);
        if (rc == 0)
            continue;
        why[q] = pool_put(pool, "Prometheus: the %s query: %s", node_query_name[q], e);
        if (q == PQ_SUMMARY && !stopping(st) && left >= 10)
            continue; /* the aggregates of every node stand in: said if they fail too */
        if (!failed++)
            snprintf(first, firstlen, "%.300s (the %s query)", e, node_query_name[q]);
        if (q == PQ_TARGETS) { /* the others would fail alike, or name no node */
            for (int k = q + 1; k < PQ_COUNT; k++)
                why[k] = why[q];
            failed = PQ_COUNT;
            break;
        }
    }
    free(down);
    free(legacy);
    free(wn);
    return failed;
}

/* ---- the devices of the nodes wanted ---- */

struct build_cb {
    struct build *b;
    enum promq_detail q;
};

static int on_build(void *ctx, const struct prom_item *it)
{
    struct build_cb *c = ctx;
    return fleet_build_read(c->b, c->q, it);
}

/* One page's queries, its nodes wanted[0..n). Failures name their nodes. */
static unsigned page(struct prom_state *st, struct build *b, struct node_summary *const *wanted,
                     size_t n, uint64_t end, struct why_pool *pool, char *first,
                     size_t firstlen)
{
    const char **up = malloc((n ? n : 1) * sizeof(*up));
    const char **dn = malloc((n ? n : 1) * sizeof(*dn));
    unsigned failed = 0;
    if (!up || !dn) {
        free(up);
        free(dn);
        return PD_COUNT;
    }
    size_t nup = 0, ndn = 0;
    for (size_t i = 0; i < n; i++) {
        if (wanted[i]->up == 0)
            dn[ndn++] = wanted[i]->instance;
        else
            up[nup++] = wanted[i]->instance;
    }
    struct promq_scope sc = {.match = st->match, .filter = ""};
    for (int q = 0; q < PD_COUNT; q++) {
        char *promql = promq_detail((enum promq_detail)q, &sc, up, nup, dn, ndn);
        if (!promql)
            continue; /* nothing to ask (no node up for the values) */
        char e[400];
        unsigned left = ms_left(end);
        int rc = -1;
        if (left < 10)
            snprintf(e, sizeof(e), "no time left in the round of %u ms", st->round_ms);
        else if (stopping(st))
            snprintf(e, sizeof(e), "stopped");
        else {
            struct build_cb cb = {.b = b, .q = (enum promq_detail)q};
            asking(st, detail_query_name[q]);
            uint64_t t0 = clock_mono_ns(), b0 = promc_bytes(st->pc);
            rc = promc_query_each(st->pc, promql, left, ANSWER_MAX, on_build, &cb, e, sizeof(e));
            debuglog_printf("prometheus: the %s query of %zu nodes: %s, %.1f ms, %llu bytes read",
                            detail_query_name[q], n, rc == 0 ? "ok" : e,
                            (double)(clock_mono_ns() - t0) / 1e6,
                            (unsigned long long)(promc_bytes(st->pc) - b0));
        }
        free(promql);
        if (rc == 0)
            continue;
        const char *w = pool_put(pool, "Prometheus: the %s query: %s", detail_query_name[q], e);
        for (size_t i = 0; i < n; i++)
            fleet_build_node_why(b, wanted[i]->instance, (enum promq_detail)q, w);
        if (!failed++ && !first[0])
            snprintf(first, firstlen, "%.300s (the %s query)", e, detail_query_name[q]);
    }
    free(up);
    free(dn);
    return failed;
}

/* A node's devices, as its aggregates count them (64 when unknown). */
static size_t devices_of(const struct node_summary *n)
{
    double d = (metric_ok(&n->gpus) ? n->gpus.value : 0) + (metric_ok(&n->mig) ? n->mig.value : 0);
    return metric_ok(&n->gpus) ? (size_t)d : 64;
}

/* The devices of wanted[0..n) into f, page by page. */
static unsigned devices_round(struct prom_state *st, struct node_summary *const *wanted,
                              size_t n, size_t max_devices, uint64_t end, struct why_pool *pool,
                              struct fleet *f, char *first, size_t firstlen)
{
    memset(f, 0, sizeof(*f));
    struct build *b = fleet_build_new(max_devices);
    if (!b)
        return PD_COUNT;
    double now = (double)clock_wall_ns() / 1e9;
    for (size_t i = 0; i < n; i++) {
        const struct node_summary *s = wanted[i];
        double last = s->down_for_s >= 0 ? now - s->down_for_s : 0;
        fleet_build_node(b, s->instance, s->name, s->up, last);
    }
    unsigned failed = 0;
    for (size_t i = 0; i < n;) {
        size_t k = i, devs = 0;
        while (k < n && k - i < PAGE_NODES && (k == i || devs + devices_of(wanted[k]) <= PAGE_DEVICES))
            devs += devices_of(wanted[k++]);
        failed += page(st, b, wanted + i, k - i, end, pool, first, firstlen);
        i = k;
    }
    if (fleet_build_finish(b, f, now) != 0)
        failed++;
    fleet_build_free(b);
    return failed;
}

/* Each node's devices in f (by instance): where they are, or why not. */
static void link_devices(struct node_summary *nodes, size_t n, const struct fleet *f,
                         bool asked)
{
    for (size_t i = 0; i < n; i++) {
        nodes[i].devs_read = false;
        nodes[i].dev_first = nodes[i].ndev = 0;
        nodes[i].devs_why = asked ? "not asked for" : "not read yet";
    }
    if (!f->nnodes)
        return;
    /* both by instance: the nodes are few or sorted, the fleet's nodes few */
    size_t nslots = f->nnodes * 2;
    size_t *slot = malloc(nslots * sizeof(*slot));
    if (!slot)
        return;
    for (size_t s = 0; s < nslots; s++)
        slot[s] = SIZE_MAX;
    for (size_t k = 0; k < f->nnodes; k++) {
        size_t at = 0;
        for (const char *p = f->nodes[k].instance; *p; p++)
            at = at * 131 + (unsigned char)*p;
        at %= nslots;
        while (slot[at] != SIZE_MAX)
            at = (at + 1) % nslots;
        slot[at] = k;
    }
    for (size_t i = 0; i < n; i++) {
        size_t at = 0;
        for (const char *p = nodes[i].instance; *p; p++)
            at = at * 131 + (unsigned char)*p;
        at %= nslots;
        for (; slot[at] != SIZE_MAX; at = (at + 1) % nslots) {
            const struct fleet_node *fn = &f->nodes[slot[at]];
            if (strcmp(fn->instance, nodes[i].instance) != 0)
                continue;
            if (fn->why[PD_IDENT] && fn->why[PD_DCGM_IDENT]) {
                nodes[i].devs_why = fn->why[PD_IDENT];
            } else {
                nodes[i].devs_read = true;
                nodes[i].devs_why = NULL;
                nodes[i].dev_first = fn->dev_first;
                nodes[i].ndev = fn->ndev;
            }
            break;
        }
    }
    free(slot);
}

/* The nodes whose devices this round reads: every node (--once, record),
 * or those the front end asked for; before its first ask, every node of
 * a fleet small enough to start unfolded, else the first. */
static size_t wanted_nodes(struct prom_state *st, struct node_table *t, char (*ask)[128],
                           size_t nask, bool any_ask, struct node_summary ***out)
{
    *out = malloc((t->n ? t->n : 1) * sizeof(**out));
    if (!*out)
        return 0;
    size_t n = 0;
    if (st->every_node || (!any_ask && t->n <= FLEET_OPEN_NODES_MAX)) {
        for (size_t i = 0; i < t->n; i++)
            if (t->v[i].seen)
                (*out)[n++] = &t->v[i];
    } else if (!any_ask) {
        for (size_t i = 0; i < t->n && n < 1; i++)
            if (t->v[i].seen)
                (*out)[n++] = &t->v[i];
    } else {
        for (size_t k = 0; k < nask; k++) {
            struct node_summary *s = nodes_find(t, ask[k]);
            if (s && s->seen)
                (*out)[n++] = s;
        }
    }
    return n;
}

/* The node round's nodes, published before their devices are read: with
 * the devices of the last round (linked by instance) until this round's
 * are, so the list and the header never wait for the devices. The reasons
 * are in the pool this round writes; its strings are not moved. */
static void publish_nodes(struct prom_state *st, const struct node_table *t, const char *why,
                          const char *filter, uint64_t start, bool any_ask)
{
    struct node_summary *copy = malloc((t->n ? t->n : 1) * sizeof(*copy));
    if (!copy)
        return; /* published with the devices at the end */
    if (t->n)
        memcpy(copy, t->v, t->n * sizeof(*copy));
    link_devices(copy, t->n, &st->last, any_ask && !st->every_node); /* last: this thread's */
    pthread_mutex_lock(&st->mu);
    free(st->nodes);
    st->nodes = copy;
    st->nnodes = t->n;
    st->nodes_why = why;
    snprintf(st->nodes_filter, sizeof(st->nodes_filter), "%s", filter);
    st->nodes_ns = start;
    st->have = true;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
}

/* One round: the node round (when due), then the devices wanted. */
static void run_round(struct prom_state *st)
{
    uint64_t start = clock_mono_ns();
    int slot = st->cur ^ 1; /* the pool not read by the published result */
    struct why_pool *pool = &st->pool[slot];
    pool->len = 0;
    /* what the front end asked for */
    char filter[64];
    char(*ask)[128] = NULL;
    size_t nask = 0;
    pthread_mutex_lock(&st->mu);
    st->asked = false;
    uint64_t gen = st->ask.gen;
    snprintf(filter, sizeof(filter), "%s", st->ask.filter);
    bool any_ask = st->ask.any;
    if (st->ask.n) {
        ask = malloc(st->ask.n * sizeof(*ask));
        if (ask) {
            memcpy(ask, st->ask.inst, st->ask.n * sizeof(*ask));
            nask = st->ask.n;
        }
    }
    pthread_mutex_unlock(&st->mu);
    /* a round that asks aggregates gets longer (node_round) */
    uint64_t end = start + st->round_ms * 1000000ull;

    char first[400] = "";
    const char *nwhy[PQ_COUNT] = {0};
    struct node_table t;
    nodes_init(&t);
    unsigned failed = node_round(st, &t, filter, start, &end, pool, nwhy, first, sizeof(first));
    const char *list_why = NULL;
    nodes_finish(&t, (double)clock_wall_ns() / 1e9, nwhy, filter, &list_why);
    if (list_why == NULL && nwhy[PQ_TARGETS])
        list_why = nwhy[PQ_TARGETS];

    struct node_summary **wanted = NULL;
    size_t nwanted = wanted_nodes(st, &t, ask, nask, any_ask, &wanted);
    struct fleet f;
    memset(&f, 0, sizeof(f));
    bool nodes_ok = failed < PQ_COUNT && (t.n > 0 || failed == 0);
    if (nodes_ok)
        publish_nodes(st, &t, list_why, filter, start, any_ask);
    if (nodes_ok && nwanted)
        failed += devices_round(st, wanted, nwanted,
                                st->every_node ? FLEET_DEVICES_MAX : VIEW_DEVICES_MAX, end, pool,
                                &f, first, sizeof(first));
    free(wanted);
    free(ask);
    if (f.capped && !list_why)
        list_why = pool_put(pool, "more than %u devices: %zu not read (--prometheus-match limits "
                            "the view to part of the fleet)",
                            st->every_node ? FLEET_DEVICES_MAX : VIEW_DEVICES_MAX, f.capped);
    link_devices(t.v, t.n, &f, any_ask && !st->every_node);

    pthread_mutex_lock(&st->mu);
    st->rounds++;
    st->asking = NULL;
    st->bytes = promc_bytes(st->pc);
    if (failed == 1 || nwhy[PQ_TARGETS]) /* without the targets the round stopped there */
        snprintf(st->why, sizeof(st->why), "Prometheus %s: %s", st->url, first);
    else if (failed)
        snprintf(st->why, sizeof(st->why), "Prometheus %s: %s; %u queries failed",
                 st->url, first, failed);
    else
        st->why[0] = '\0';
    if (nodes_ok) {
        free(st->nodes);
        st->nodes = t.v;
        st->nnodes = t.n;
        t.v = NULL;
        st->nodes_why = list_why;
        snprintf(st->nodes_filter, sizeof(st->nodes_filter), "%s", filter);
        st->nodes_ns = start;
        fleet_free(&st->last);
        st->last = f;
        st->have = true;
        st->cur = slot;
        st->last_ok_ns = clock_mono_ns();
        st->stale = 0;
    }
    st->answered = gen; /* answered, whole or not: the front end samples it */
    if (!nodes_ok) {
        fleet_free(&f);
        st->stale++;
    }
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
    nodes_free(&t);
}

static void *query_thread(void *arg)
{
    struct prom_state *st = arg;
    pthread_mutex_lock(&st->mu);
    while (!st->stop) {
        pthread_mutex_unlock(&st->mu);
        uint64_t t = clock_mono_ns();
        run_round(st);
        pthread_mutex_lock(&st->mu);
        uint64_t next = t + st->interval_ms * 1000000ull;
        /* the next round at the interval, or at once when the front end
         * asks for something else (a node unfolded, a filter typed) */
        while (!st->stop && !st->asked && clock_mono_ns() < next) {
            struct timespec ts;
            uint64_t at = next;
            ts.tv_sec = (time_t)(at / 1000000000ull);
            ts.tv_nsec = (long)(at % 1000000000ull);
            pthread_cond_timedwait(&st->cv, &st->mu, &ts);
        }
    }
    st->exited = true;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
    return NULL;
}

/* ---- the front end's ask ---- */

/* Whether the published result has what a shows (mu held): its filter,
 * and each node's devices read (or the node not listed). */
static bool answered_by_last(const struct prom_state *st, const struct backend_view_ask *a,
                             const char *filter)
{
    if (!st->have || strcmp(st->nodes_filter, filter) != 0)
        return false;
    for (size_t i = 0; i < a->nnodes; i++)
        for (size_t k = 0; k < st->nnodes; k++)
            if (strcmp(st->nodes[k].instance, a->nodes[i]) == 0) {
                if (!st->nodes[k].devs_read)
                    return false;
                break;
            }
    return true;
}

static uint64_t prom_view_answered(void *state)
{
    struct prom_state *st = state;
    pthread_mutex_lock(&st->mu);
    uint64_t g = st->answered;
    pthread_mutex_unlock(&st->mu);
    return g;
}

static int prom_view_ask(void *state, const struct backend_view_ask *a, uint64_t *gen,
                         char *err, size_t errlen)
{
    struct prom_state *st = state;
    if (st->every_node)
        return -1;
    size_t n = a->nnodes < ASK_NODES_MAX ? a->nnodes : ASK_NODES_MAX;
    const char *filter = a->filter ? a->filter : "";
    if (promq_filter_check(filter, err, errlen) != 0)
        return -2;
    pthread_mutex_lock(&st->mu);
    bool same = st->ask.any && strcmp(st->ask.filter, filter) == 0 && st->ask.n == n;
    for (size_t i = 0; same && i < n; i++)
        same = strncmp(st->ask.inst[i], a->nodes[i], sizeof(st->ask.inst[i]) - 1) == 0;
    int rc = 0;
    if (!same) {
        char(*inst)[128] = n ? malloc(n * sizeof(*inst)) : NULL;
        if (n && !inst) {
            rc = -1;
        } else {
            for (size_t i = 0; i < n; i++)
                snprintf(inst[i], sizeof(inst[i]), "%s", a->nodes[i]);
            free(st->ask.inst);
            st->ask.inst = inst;
            st->ask.n = n;
            snprintf(st->ask.filter, sizeof(st->ask.filter), "%s", filter);
            st->ask.any = true;
            if (!answered_by_last(st, a, filter)) { /* a round, at once */
                st->asked = true;
                *gen = ++st->ask.gen;
                rc = 1;
                pthread_cond_broadcast(&st->cv);
            }
        }
    }
    pthread_mutex_unlock(&st->mu);
    return rc;
}

/* ---- the charts' past ---- */

/* The device of uuid on node in the last round, as its query names it;
 * -1 when the last round has no such device. */
static int past_dev_of(struct prom_state *st, const char *node, const char *uuid,
                       struct past_dev *pd)
{
    int rc = -1;
    pthread_mutex_lock(&st->mu);
    const struct fleet *f = &st->last;
    for (size_t i = 0; f->src && i < f->ndevs; i++) {
        const struct device *d = &f->devs[i];
        if (strcmp(d->uuid, uuid) != 0 || (node[0] && strcmp(d->node, node) != 0))
            continue;
        memset(pd, 0, sizeof(*pd));
        snprintf(pd->instance, sizeof(pd->instance), "%s", f->nodes[f->src[i].node].instance);
        bool mig = d->kind == DEV_MIG;
        snprintf(pd->uuid, sizeof(pd->uuid), "%s", mig ? d->parent_uuid : d->uuid);
        pd->gi = mig ? d->gi_id : -1;
        pd->ci = mig ? d->ci_id : -1;
        pd->dcgm = f->src[i].dcgm;
        pd->mig_enabled = !mig && d->mig_enabled;
        rc = 0;
        break;
    }
    pthread_mutex_unlock(&st->mu);
    return rc;
}

/* One range query over the ask's window, its answer built into *p. */
static int past_fetch(struct prom_state *st, const char *node, const char *uuid,
                      unsigned points, unsigned interval_ms, int64_t end_ms, struct hist_past *p,
                      char *err, size_t errlen)
{
    struct past_dev pd;
    char q[2048], e[300];
    memset(p, 0, sizeof(*p));
    if (past_dev_of(st, node, uuid, &pd) != 0) {
        snprintf(err, errlen, "%.80s is not in Prometheus' last answer", uuid);
        return -1;
    }
    if (prom_past_query(q, sizeof(q), &pd) != 0) {
        snprintf(err, errlen, "%.80s cannot be named in a query", uuid);
        return -1;
    }
    struct past_grid g = prom_past_grid(end_ms, interval_ms, points);
    json_t *res = NULL;
    if (promc_query_range(st->ppc, q, g.start_ms, end_ms, g.step_ms, PAST_TIMEOUT_MS,
                          PAST_ANSWER_MAX, &res, e, sizeof(e)) != 0) {
        snprintf(err, errlen, "%s", e);
        return -1;
    }
    int rc = prom_past_build(p, res, &pd, &g, e, sizeof(e));
    json_decref(res);
    if (rc != 0) {
        snprintf(err, errlen, "%s", e);
        return -1;
    }
    snprintf(p->uuid, sizeof(p->uuid), "%s", uuid);
    snprintf(p->node, sizeof(p->node), "%s", node);
    return 0;
}

static void *past_thread(void *arg)
{
    struct prom_state *st = arg;
    pthread_mutex_lock(&st->pmu);
    while (!st->pstop) {
        if (!st->pask) {
            pthread_cond_wait(&st->pcv, &st->pmu);
            continue;
        }
        char uuid[MIGMON_UUID_LEN], node[64];
        snprintf(uuid, sizeof(uuid), "%s", st->past.uuid);
        snprintf(node, sizeof(node), "%s", st->past.node);
        unsigned points = st->past.points, interval_ms = st->past.interval_ms;
        uint64_t id = st->past.id;
        int64_t end_ms = st->past.end_ms;
        st->pask = false;
        pthread_mutex_unlock(&st->pmu);
        struct hist_past p;
        char err[512];
        int rc = past_fetch(st, node, uuid, points, interval_ms, end_ms, &p, err, sizeof(err));
        pthread_mutex_lock(&st->pmu);
        if (st->pask) { /* asked again meanwhile: this answer is for nobody */
            hist_past_free(&p);
            continue;
        }
        hist_past_free(&st->ans);
        st->ans = p;
        st->ans_id = id;
        st->pans = rc == 0 ? 1 : -1;
        if (rc != 0)
            snprintf(st->ans_err, sizeof(st->ans_err), "%s", err);
    }
    st->pexited = true;
    pthread_cond_broadcast(&st->pcv);
    pthread_mutex_unlock(&st->pmu);
    return NULL;
}

static int prom_past_ask(void *state, const struct backend_past_ask *a)
{
    struct prom_state *st = state;
    if (st->one_shot || !a->uuid || !a->uuid[0] || !a->points)
        return -1;
    int rc = 0;
    pthread_mutex_lock(&st->pmu);
    if (!st->ppc && !st->pstop) {
        char e[200];
        if (promc_open_like(&st->ppc, st->pc, e, sizeof(e)) != 0) {
            rc = -1;
        } else if (pthread_create(&st->pthread, NULL, past_thread, st) != 0) {
            promc_close(st->ppc);
            st->ppc = NULL;
            rc = -1;
        }
    }
    if (rc == 0 && st->ppc && !st->pstop) {
        snprintf(st->past.uuid, sizeof(st->past.uuid), "%s", a->uuid);
        snprintf(st->past.node, sizeof(st->past.node), "%s", a->node ? a->node : "");
        st->past.points = a->points;
        st->past.interval_ms = a->interval_ms ? a->interval_ms : st->interval_ms;
        st->past.id = a->id;
        st->past.end_ms = clock_wall_ns() / 1000000;
        st->pask = true;
        if (st->pans) { /* an answer to an older ask, not taken: no longer wanted */
            hist_past_free(&st->ans);
            st->pans = 0;
        }
        pthread_cond_broadcast(&st->pcv);
    } else {
        rc = -1;
    }
    pthread_mutex_unlock(&st->pmu);
    return rc;
}

static int prom_past_take(void *state, struct hist_past *out, uint64_t *id, char *err,
                          size_t errlen)
{
    struct prom_state *st = state;
    pthread_mutex_lock(&st->pmu);
    int rc = st->pans;
    if (rc) {
        *id = st->ans_id;
        *out = st->ans;
        memset(&st->ans, 0, sizeof(st->ans));
        if (rc < 0)
            snprintf(err, errlen, "%s", st->ans_err);
        st->pans = 0;
    }
    pthread_mutex_unlock(&st->pmu);
    return rc;
}

/* ---- the backend ---- */

static int prom_open(void **out, const struct backend_opts *o, char *err, size_t errlen)
{
    *out = NULL;
    if (!o->prom_url || !*o->prom_url) {
        snprintf(err, errlen, "--prometheus: no URL");
        return BACKEND_ERR_INIT;
    }
    struct prom_state *st = calloc(1, sizeof(*st));
    if (!st) {
        snprintf(err, errlen, "out of memory");
        return BACKEND_ERR_NOMEM;
    }
    text_url_redact(st->url, sizeof(st->url), o->prom_url);
    if (o->prom_match && o->prom_match[0] &&
        promq_match_parse(o->prom_match, st->match, sizeof(st->match), err, errlen) != 0) {
        free(st);
        return BACKEND_ERR_BAD_PATH; /* bad input: exit status 2 */
    }
    if (promc_open(&st->pc, o->prom_url, o->prom_auth_file, err, errlen) != 0 ||
        (o->prom_ca_file && promc_set_ca(st->pc, o->prom_ca_file, err, errlen) != 0)) {
        promc_close(st->pc); /* NULL when it did not open */
        free(st);
        return BACKEND_ERR_BAD_PATH; /* a bad credentials file: exit status 2 */
    }
    st->one_shot = o->one_shot;
    st->every_node = !o->prom_view;
    st->opened_ns = clock_mono_ns();
    st->interval_ms = o->interval_ms ? o->interval_ms : 1000;
    unsigned r = (unsigned)(st->interval_ms * ROUND_SHARE);
    st->round_ms = o->one_shot ? ROUND_ONCE_MS : r < ROUND_MIN_MS ? ROUND_MIN_MS : r;
    pthread_mutex_init(&st->mu, NULL);
    pthread_mutex_init(&st->pmu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&st->cv, &ca);
    pthread_cond_init(&st->pcv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&st->thread, NULL, query_thread, st) != 0) {
        promc_close(st->pc);
        free(st);
        snprintf(err, errlen, "cannot start the query thread");
        return BACKEND_ERR_INIT;
    }
    st->started = true;
    debuglog_printf("prometheus: %s, a round of queries every %u ms within %u ms%s%s", st->url,
                    st->interval_ms, st->round_ms, st->match[0] ? ", limited to " : "",
                    st->match);
    *out = st;
    return BACKEND_OK;
}

static void deadline_ts(struct timespec *ts, uint64_t deadline_ns)
{
    ts->tv_sec = (time_t)(deadline_ns / 1000000000ull);
    ts->tv_nsec = (long)(deadline_ns % 1000000000ull);
}

/* A process of a round that failed: its last values, marked carried. */
static void carry_proc(struct gpu_process *p)
{
    struct metric *m[] = {&p->mem_bytes, &p->sm_util, &p->mem_util, &p->cpu_pct, &p->rss_bytes};
    p->carried = true;
    for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
        if (metric_ok(m[i]))
            *m[i] = (struct metric){
                .value = m[i]->value, .src = MSRC_CARRIED, .why = "Prometheus did not answer"};
}

/* The reasons of the published round live in its pool, which the query
 * thread reuses two rounds on: each one a snapshot keeps is copied into
 * its notes, once (the same reason is shared by many devices). */
struct why_map {
    const char *from[32], *to[32];
    size_t n;
};

static const char *own_why(struct prom_state *st, struct snapshot *s, struct why_map *m,
                           const char *w)
{
    if (!in_pool(st, w))
        return w;
    for (size_t i = 0; i < m->n; i++)
        if (m->from[i] == w)
            return m->to[i];
    const char *c = snapshot_note(s, "%s", w);
    if (m->n < 32) {
        m->from[m->n] = w;
        m->to[m->n++] = c;
    }
    return c;
}

static void own_metric(struct prom_state *st, struct snapshot *s, struct why_map *m,
                       struct metric *x)
{
    if (!metric_ok(x))
        x->why = own_why(st, s, m, x->why);
}

static int prom_sample(void *state, struct snapshot *s, uint64_t deadline_ns)
{
    struct prom_state *st = state;
    pthread_mutex_lock(&st->mu);
    /* the first round: wait for it (up to the deadline), then never again */
    while (st->rounds == 0 && !st->interrupted && clock_mono_ns() < deadline_ns) {
        struct timespec ts;
        deadline_ts(&ts, deadline_ns);
        pthread_cond_timedwait(&st->cv, &st->mu, &ts);
    }
    snprintf(s->driver_version, sizeof(s->driver_version), "Prometheus");
    s->nvml_version[0] = '\0';
    s->cuda_driver_version = 0;
    char info[sizeof(st->url) + 32];
    snprintf(info, sizeof(info), "from Prometheus %s", st->url);
    text_take(s->dcgm_info, sizeof(s->dcgm_info), info); /* cut on a character boundary */
    s->health_given = true;
    s->partial = false;
    s->partial_why = NULL;
    s->nprocs = 0;
    s->nevents = 0;
    s->ndevices = 0;
    s->nnodes = 0;
    s->fleet = true;
    s->nodes_why = NULL;
    s->fleet_filter[0] = '\0';
    s->events_why = "health events are not read from Prometheus (the nodes' own monitors have them)";
    if (!st->have) {
        if (st->rounds == 0) {
            /* as a driver that has not answered by the deadline: a partial
             * snapshot (--once: exit status 3), naming the query waited on */
            snprintf(st->err, sizeof(st->err), "Prometheus %s: no answer to the %s query within "
                     "%.1f s", st->url, st->asking ? st->asking : "targets",
                     (double)(clock_mono_ns() - st->opened_ns) / 1e9);
            s->partial = true;
            s->partial_why = snapshot_note(s, "%s", st->err);
        } else {
            snprintf(st->err, sizeof(st->err), "%s", st->why);
        }
        pthread_mutex_unlock(&st->mu);
        return -1;
    }
    if (st->nnodes == 0 && !st->why[0] && !st->nodes_filter[0]) {
        snprintf(st->err, sizeof(st->err), "Prometheus %s has no migmon_* or DCGM_FI_* "
                 "series of the last 10 minutes (docs/fleet.md)", st->url);
        pthread_mutex_unlock(&st->mu);
        return -1;
    }
    struct why_map wm = {.n = 0};
    const struct fleet *f = &st->last;
    if (snapshot_reserve(s, f->ndevs ? f->ndevs : 1) != 0 ||
        snapshot_reserve_nodes(s, st->nnodes ? st->nnodes : 1) != 0) {
        pthread_mutex_unlock(&st->mu);
        snprintf(st->err, sizeof(st->err), "out of memory");
        return -1;
    }
    if (st->nnodes)
        memcpy(s->nodes, st->nodes, st->nnodes * sizeof(*st->nodes));
    s->nnodes = st->nnodes;
    snprintf(s->fleet_filter, sizeof(s->fleet_filter), "%s", st->nodes_filter);
    s->nodes_why = own_why(st, s, &wm, st->nodes_why);
    for (size_t i = 0; i < s->nnodes; i++) {
        struct node_summary *n = &s->nodes[i];
        struct metric *ms[] = {&n->gpus,        &n->mig,        &n->idle,
                               &n->not_ok,      &n->pods,       &n->util_max,
                               &n->util_mean,   &n->mem_used,   &n->mem_total,
                               &n->mem_devices, &n->gpus_action, &n->gpus_warning};
        for (size_t k = 0; k < sizeof(ms) / sizeof(ms[0]); k++)
            own_metric(st, s, &wm, ms[k]);
        n->devs_why = own_why(st, s, &wm, n->devs_why);
    }
    if (f->ndevs)
        memcpy(s->devices, f->devs, f->ndevs * sizeof(*f->devs));
    s->ndevices = f->ndevs;
    /* the processes, carried with the devices' values while a failed round
     * allows (their PIDs are their nodes': procpost.c looks nothing up
     * here for them) */
    const char *procs_why = st->stale > carry_ticks() ? "Prometheus did not answer" : NULL;
    if (!procs_why && f->nprocs) {
        if (snapshot_reserve_procs(s, f->nprocs) == 0) {
            memcpy(s->procs, f->procs, f->nprocs * sizeof(*f->procs));
            s->nprocs = f->nprocs;
        } else {
            procs_why = "out of memory for the processes";
        }
    }
    /* a round that failed: the last devices, carried while carry_ticks
     * allows, then none; every device says why */
    const char *note = NULL;
    if (st->why[0]) {
        double age = (double)(clock_mono_ns() - st->last_ok_ns) / 1e9;
        note = snapshot_note(s, "%s (devices from %.0f s ago)", st->why, age);
        s->partial = true;
        s->partial_why = snapshot_note(s, "%s", st->why);
    } else if (st->rounds == 0) {
        /* the nodes are in, their devices not yet: --once's deadline came */
        s->partial = true;
        s->partial_why = snapshot_note(s, "Prometheus %s: no answer to the %s query within %.1f s",
                                       st->url, st->asking ? st->asking : "devices",
                                       (double)(clock_mono_ns() - st->opened_ns) / 1e9);
    }
    for (size_t i = 0; i < s->ndevices; i++) {
        struct device *d = &s->devices[i];
        own_metric(st, s, &wm, &d->process_count);
        if (procs_why) {
            d->proc_first = d->nprocs = 0;
            d->process_count = metric_none(procs_why);
        } else if (st->stale) {
            if (metric_ok(&d->process_count))
                d->process_count = (struct metric){.value = d->process_count.value,
                                                   .src = MSRC_CARRIED,
                                                   .why = "Prometheus did not answer"};
            for (size_t k = d->proc_first; k < d->proc_first + d->nprocs; k++)
                carry_proc(&s->procs[k]);
        }
        for (int k = 0; k < M_COUNT; k++) {
            own_metric(st, s, &wm, &d->m[k]);
            if (st->stale && metric_ok(&d->m[k]))
                d->m[k] = st->stale <= carry_ticks()
                              ? (struct metric){.value = d->m[k].value, .src = MSRC_CARRIED,
                                                .why = "Prometheus did not answer"}
                              : metric_none("Prometheus did not answer");
        }
        if (note)
            d->stall = note;
    }
    pthread_mutex_unlock(&st->mu);
    return 0;
}

static const char *prom_last_error(void *state)
{
    return ((struct prom_state *)state)->err;
}

static void prom_settle(void *state, unsigned timeout_ms)
{
    struct prom_state *st = state;
    uint64_t end = clock_mono_ns() + timeout_ms * 1000000ull;
    pthread_mutex_lock(&st->mu);
    while (st->rounds == 0 && !st->interrupted && clock_mono_ns() < end) {
        struct timespec ts;
        deadline_ts(&ts, end);
        pthread_cond_timedwait(&st->cv, &st->mu, &ts);
    }
    pthread_mutex_unlock(&st->mu);
}

static void prom_interrupt(void *state)
{
    struct prom_state *st = state;
    promc_abort(st->pc);
    pthread_mutex_lock(&st->pmu);
    promc_abort(st->ppc);
    pthread_mutex_unlock(&st->pmu);
    pthread_mutex_lock(&st->mu);
    st->interrupted = true;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
}

static void prom_close(void *state)
{
    struct prom_state *st = state;
    if (!st)
        return;
    uint64_t end = clock_mono_ns() + CLOSE_WAIT_MS * 1000000ull;
    struct timespec ts;
    deadline_ts(&ts, end);
    promc_abort(st->pc);
    pthread_mutex_lock(&st->pmu);
    promc_abort(st->ppc);
    st->pstop = true;
    bool past = st->ppc != NULL; /* its thread was started */
    pthread_cond_broadcast(&st->pcv);
    pthread_mutex_unlock(&st->pmu);
    pthread_mutex_lock(&st->mu);
    st->stop = true;
    pthread_cond_broadcast(&st->cv);
    while (!st->exited && clock_mono_ns() < end)
        pthread_cond_timedwait(&st->cv, &st->mu, &ts);
    bool exited = st->exited;
    pthread_mutex_unlock(&st->mu);
    pthread_mutex_lock(&st->pmu);
    while (past && !st->pexited && clock_mono_ns() < end)
        pthread_cond_timedwait(&st->pcv, &st->pmu, &ts);
    bool pexited = !past || st->pexited;
    pthread_mutex_unlock(&st->pmu);
    if (!exited || !pexited) {
        /* one is still in a transfer that has not seen the abort: both
         * left behind with their memory, as the program is ending */
        if (exited)
            pthread_join(st->thread, NULL);
        else
            pthread_detach(st->thread);
        if (past && pexited)
            pthread_join(st->pthread, NULL);
        else if (past)
            pthread_detach(st->pthread);
        return;
    }
    pthread_join(st->thread, NULL);
    if (past)
        pthread_join(st->pthread, NULL);
    promc_close(st->pc);
    promc_close(st->ppc);
    fleet_free(&st->last);
    free(st->nodes);
    free(st->ask.inst);
    hist_past_free(&st->ans);
    pthread_mutex_destroy(&st->mu);
    pthread_cond_destroy(&st->cv);
    pthread_mutex_destroy(&st->pmu);
    pthread_cond_destroy(&st->pcv);
    free(st);
}

const struct backend_ops prom_backend_ops = {
    .name = "prometheus",
    .open = prom_open,
    .sample = prom_sample,
    .close = prom_close,
    .last_error = prom_last_error,
    .settle = prom_settle,
    .interrupt = prom_interrupt,
    .past_ask = prom_past_ask,
    .past_take = prom_past_take,
    .view_ask = prom_view_ask,
    .view_answered = prom_view_answered,
};
