#include "fleet/prom_backend.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "debuglog.h"
#include "fleet/prom_client.h"
#include "fleet/prom_fleet.h"
#include "fleet/prom_past.h"
#include "history.h"
#include "text.h"

/* A round of queries gets 90% of the interval, so the next round starts on
 * time; --once gets 5 s (its --timeout still bounds the wait). */
#define ROUND_SHARE 0.9
#define ROUND_MIN_MS 200u
#define ROUND_ONCE_MS 5000u
/* close waits this long for the query threads, then leaves them behind */
#define CLOSE_WAIT_MS 300u
/* A range query for the charts' past gets this long (the screen never
 * waits for it) */
#define PAST_TIMEOUT_MS 5000u

struct prom_state {
    struct promc *pc;
    /* the URL as every message shows it: its userinfo redacted
     * (text_url_redact); the client alone holds the one it asks */
    char url[512];
    unsigned interval_ms, round_ms;
    bool one_shot;
    uint64_t opened_ns;
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop, exited;
    bool interrupted;
    /* the last round's result, under mu */
    struct fleet last;
    bool have;           /* a round has given devices at least once */
    unsigned rounds;     /* rounds finished */
    int asking;          /* the query in flight (enum fleet_query), -1 between them */
    char why[1024];      /* the last round's failure, "" when it was whole */
    uint64_t last_ok_ns; /* when a round last gave devices */
    unsigned stale;      /* rounds since then */
    char err[1100];      /* last_error */
    /* reasons kept for metric.why: one per query, rewritten only by the
     * query thread between rounds, read under mu */
    char qwhy[2][FQ_COUNT][300];
    int qwhy_cur;
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
        unsigned points, interval_ms;
        uint64_t id;
        int64_t end_ms; /* the time of the ask: the past ends there */
    } ask;
    int pans; /* 1: ans holds an answer to ans_id; -1: that ask failed (ans_err); 0 none */
    struct hist_past ans;
    uint64_t ans_id;
    char ans_err[512];
};

static uint64_t round_ms(const struct prom_state *st)
{
    return st->round_ms;
}

/* One round: every query once, within round_ms together. */
static void run_round(struct prom_state *st)
{
    json_t *res[FQ_COUNT] = {0};
    const char *why[FQ_COUNT] = {0};
    int slot = st->qwhy_cur ^ 1; /* the set not read by published devices */
    uint64_t end = clock_mono_ns() + round_ms(st) * 1000000ull;
    char first[300] = "", names[160] = "";
    unsigned failed = 0;
    for (int q = 0; q < FQ_COUNT; q++) {
        uint64_t now = clock_mono_ns();
        unsigned left = now < end ? (unsigned)((end - now) / 1000000ull) : 0;
        char e[256];
        pthread_mutex_lock(&st->mu);
        st->asking = q;
        pthread_mutex_unlock(&st->mu);
        if (left < 10) {
            snprintf(e, sizeof(e), "no time left in the round of %u ms", (unsigned)round_ms(st));
        } else if (promc_query(st->pc, fleet_query((enum fleet_query)q), left,
                               PROMC_MAX_ANSWER, &res[q], e, sizeof(e)) == 0) {
            continue;
        }
        /* e holds no text of the server's that was not cleaned (promc_parse) */
        snprintf(st->qwhy[slot][q], sizeof(st->qwhy[slot][q]), "Prometheus (%s): %s",
                 fleet_query_name((enum fleet_query)q), e);
        why[q] = st->qwhy[slot][q];
        failed++;
        if (!first[0])
            snprintf(first, sizeof(first), "%s", e);
        size_t at = strlen(names);
        snprintf(names + at, sizeof(names) - at, "%s%s", at ? ", " : "",
                 fleet_query_name((enum fleet_query)q));
    }
    struct fleet f;
    bool built = fleet_build(&f, res, why, (double)clock_wall_ns() / 1e9) == 0;
    for (int q = 0; q < FQ_COUNT; q++)
        json_decref(res[q]);
    bool idents = res[FQ_IDENT] || res[FQ_DCGM_IDENT];
    pthread_mutex_lock(&st->mu);
    st->rounds++;
    st->asking = -1;
    /* the queries that failed by name, the first one's reason */
    char why_now[sizeof(st->why)] = "";
    if (failed)
        snprintf(why_now, sizeof(why_now), "Prometheus %s: %u of %d queries failed (%s): %s",
                 st->url, failed, FQ_COUNT, names, first); /* it fits: no character cut */
    bool changed = strcmp(why_now, st->why) != 0;
    memcpy(st->why, why_now, sizeof(st->why));
    if (built && idents && (f.ndevs || failed == 0)) {
        fleet_free(&st->last);
        st->last = f;
        st->have = true;
        st->qwhy_cur = slot;
        st->last_ok_ns = clock_mono_ns();
        st->stale = 0;
    } else {
        if (built)
            fleet_free(&f);
        st->stale++;
    }
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
    if (changed) /* the log's write outside mu: a sample never waits on it */
        debuglog_printf("prometheus: %s", why_now[0] ? why_now : "every query answered");
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
        while (!st->stop && clock_mono_ns() < next) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            uint64_t left = next - clock_mono_ns();
            if (left > next)
                break;
            uint64_t at = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + left;
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

/* ---- the charts' past ---- */

/* The device of uuid in the last round, as its query names it; -1 when
 * the last round has no such device. */
static int past_dev_of(struct prom_state *st, const char *uuid, struct past_dev *pd)
{
    int rc = -1;
    pthread_mutex_lock(&st->mu);
    const struct fleet *f = &st->last;
    for (size_t i = 0; f->src && i < f->ndevs; i++) {
        const struct device *d = &f->devs[i];
        if (strcmp(d->uuid, uuid) != 0)
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
static int past_fetch(struct prom_state *st, const char *uuid, unsigned points,
                      unsigned interval_ms, int64_t end_ms, struct hist_past *p, char *err,
                      size_t errlen)
{
    struct past_dev pd;
    char q[2048], e[300];
    memset(p, 0, sizeof(*p));
    if (past_dev_of(st, uuid, &pd) != 0) {
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
                          PROMC_MAX_ANSWER, &res, e, sizeof(e)) != 0) {
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
        char uuid[MIGMON_UUID_LEN];
        snprintf(uuid, sizeof(uuid), "%s", st->ask.uuid);
        unsigned points = st->ask.points, interval_ms = st->ask.interval_ms;
        uint64_t id = st->ask.id;
        int64_t end_ms = st->ask.end_ms;
        st->pask = false;
        pthread_mutex_unlock(&st->pmu);
        struct hist_past p;
        char err[512];
        int rc = past_fetch(st, uuid, points, interval_ms, end_ms, &p, err, sizeof(err));
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
        snprintf(st->ask.uuid, sizeof(st->ask.uuid), "%s", a->uuid);
        st->ask.points = a->points;
        st->ask.interval_ms = a->interval_ms ? a->interval_ms : st->interval_ms;
        st->ask.id = a->id;
        st->ask.end_ms = clock_wall_ns() / 1000000;
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
    if (promc_open(&st->pc, o->prom_url, o->prom_auth_file, err, errlen) != 0 ||
        (o->prom_ca_file && promc_set_ca(st->pc, o->prom_ca_file, err, errlen) != 0)) {
        promc_close(st->pc); /* NULL when it did not open */
        free(st);
        return BACKEND_ERR_BAD_PATH; /* a bad credentials file: exit status 2 */
    }
    st->one_shot = o->one_shot;
    st->asking = -1;
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
    debuglog_printf("prometheus: %s, a round of queries every %u ms within %u ms", st->url,
                    st->interval_ms, st->round_ms);
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
    s->events_why = "health events are not read from Prometheus (the nodes' own monitors have them)";
    if (!st->have || st->last.ndevs == 0) {
        if (st->have && !st->why[0])
            snprintf(st->err, sizeof(st->err), "Prometheus %s has no migmon_* or DCGM_FI_* "
                     "series of the last 10 minutes (docs/fleet.md)", st->url);
        else if (st->rounds == 0) {
            /* as a driver that has not answered by the deadline: a partial
             * snapshot (--once: exit status 3), naming the query waited on */
            snprintf(st->err, sizeof(st->err), "Prometheus %s: no answer to the %s query within "
                     "%.1f s", st->url,
                     fleet_query_name(st->asking >= 0 ? (enum fleet_query)st->asking : FQ_UP),
                     (double)(clock_mono_ns() - st->opened_ns) / 1e9);
            s->partial = true;
            s->partial_why = snapshot_note(s, "%s", st->err);
        } else
            snprintf(st->err, sizeof(st->err), "%s", st->why);
        s->ndevices = 0;
        pthread_mutex_unlock(&st->mu);
        return -1;
    }
    const struct fleet *f = &st->last;
    if (snapshot_reserve(s, f->ndevs) != 0) {
        pthread_mutex_unlock(&st->mu);
        snprintf(st->err, sizeof(st->err), "out of memory");
        return -1;
    }
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
    }
    for (size_t i = 0; i < s->ndevices; i++) {
        struct device *d = &s->devices[i];
        const struct metric *pc = &d->process_count;
        if (!metric_ok(pc) && pc->why && pc->why >= st->qwhy[0][0] &&
            pc->why < st->qwhy[0][0] + sizeof(st->qwhy)) /* as the metrics' below */
            d->process_count.why = snapshot_note(s, "%s", pc->why);
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
            /* the reasons of the published round live in qwhy[qwhy_cur]:
             * copied, as the query thread rewrites the other set */
            if (!metric_ok(&d->m[k]) && d->m[k].why &&
                d->m[k].why >= st->qwhy[0][0] &&
                d->m[k].why < st->qwhy[0][0] + sizeof(st->qwhy))
                d->m[k].why = snapshot_note(s, "%s", d->m[k].why);
            if (st->stale && metric_ok(&d->m[k]))
                d->m[k] = st->stale <= carry_ticks()
                              ? (struct metric){.value = d->m[k].value, .src = MSRC_CARRIED,
                                                .why = "Prometheus did not answer"}
                              : metric_none("Prometheus did not answer");
        }
        if (note)
            d->stall = note;
        else if (d->stall)
            d->stall = snapshot_note(s, "%s", d->stall);
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
};
