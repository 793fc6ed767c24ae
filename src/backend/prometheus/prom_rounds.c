/*
 * prom_rounds.c — the fleet backend's rounds, on its query thread
 * (prom_backend_int.h): the node round (every target, the nodes' figures),
 * then the devices of the nodes wanted in pages, each result published
 * under the state's lock. docs/fleet.md.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/prometheus/prom_backend_int.h"
#include "backend/prometheus/prom_nodes.h"
#include "backend/prometheus/prom_query.h"
#include "core/clock.h"
#include "core/debuglog.h"

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
        if (q == PQ_SUMMARY + 1) {
            if (why[PQ_SUMMARY] || !legacy)
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
        else if (prom_stopping(st))
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
        why[q] = prom_pool_put(pool, "Prometheus: the %s query: %s", node_query_name[q], e);
        if (q == PQ_SUMMARY && !prom_stopping(st) && left >= 10)
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
        else if (prom_stopping(st))
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
        const char *w = prom_pool_put(pool, "Prometheus: the %s query: %s", detail_query_name[q], e);
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
        list_why = prom_pool_put(pool, "more than %u devices: %zu not read (--prometheus-match limits "
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

void *prom_query_thread(void *arg)
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
