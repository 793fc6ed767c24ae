/*
 * prom_backend.c — the fleet backend (prom_backend.h): rounds of queries
 * in a thread of their own (prom_rounds.c), their result handed to the
 * sampling thread here.
 *
 * A round is the node round (every target and its figures, a few queries
 * whose answers grow with the number of nodes only) and then the devices
 * of the nodes wanted: the nodes the monitor shows (its ask,
 * backend_view_ask), or every node (--once, record: the monitor never
 * asks), in pages of nodes whose answers stay bounded. Here too: the
 * front end's ask, the charts' past (a thread and a client of its own).
 * docs/fleet.md.
 */
#include "backend/prometheus/prom_backend.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/prometheus/prom_backend_int.h"
#include "backend/prometheus/prom_client.h"
#include "backend/prometheus/prom_fleet.h"
#include "backend/prometheus/prom_nodes.h"
#include "backend/prometheus/prom_past.h"
#include "backend/prometheus/prom_query.h"
#include "core/clock.h"
#include "core/debuglog.h"
#include "core/history.h"
#include "core/text.h"

/* ---- the round's reasons ---- */

const char *prom_pool_put(struct why_pool *p, const char *fmt, ...)
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

bool prom_stopping(struct prom_state *st)
{
    pthread_mutex_lock(&st->mu);
    bool s = st->stop || st->interrupted;
    pthread_mutex_unlock(&st->mu);
    return s;
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
    if (pthread_create(&st->thread, NULL, prom_query_thread, st) != 0) {
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
        backend_left_behind_set();
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
