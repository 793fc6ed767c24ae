#include "fleet/prom_backend.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "fleet/prom_client.h"
#include "fleet/prom_fleet.h"

/* A round of queries gets 90% of the interval, so the next round starts on
 * time; --once gets 5 s (its --timeout still bounds the wait). */
#define ROUND_SHARE 0.9
#define ROUND_MIN_MS 200u
#define ROUND_ONCE_MS 5000u
/* close waits this long for the query thread, then leaves it behind */
#define CLOSE_WAIT_MS 300u

struct prom_state {
    struct promc *pc;
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
    char why[512];       /* the last round's failure, "" when it was whole */
    uint64_t last_ok_ns; /* when a round last gave devices */
    unsigned stale;      /* rounds since then */
    char err[600];       /* last_error */
    /* reasons kept for metric.why: one per query, rewritten only by the
     * query thread between rounds, read under mu */
    char qwhy[2][FQ_COUNT][300];
    int qwhy_cur;
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
    char first[400] = "";
    unsigned failed = 0;
    for (int q = 0; q < FQ_COUNT; q++) {
        uint64_t now = clock_mono_ns();
        unsigned left = now < end ? (unsigned)((end - now) / 1000000ull) : 0;
        char e[256];
        if (left < 10) {
            snprintf(e, sizeof(e), "no time left in the round of %u ms", (unsigned)round_ms(st));
        } else if (promc_query(st->pc, fleet_query((enum fleet_query)q), left,
                               PROMC_MAX_ANSWER, &res[q], e, sizeof(e)) == 0) {
            continue;
        }
        snprintf(st->qwhy[slot][q], sizeof(st->qwhy[slot][q]), "Prometheus: %s", e);
        why[q] = st->qwhy[slot][q];
        failed++;
        if (!first[0])
            snprintf(first, sizeof(first), "%s", e);
    }
    struct fleet f;
    bool built = fleet_build(&f, res, why, (double)clock_wall_ns() / 1e9) == 0;
    for (int q = 0; q < FQ_COUNT; q++)
        json_decref(res[q]);
    bool idents = res[FQ_IDENT] || res[FQ_DCGM_IDENT];
    pthread_mutex_lock(&st->mu);
    st->rounds++;
    if (failed)
        snprintf(st->why, sizeof(st->why), "Prometheus %.200s: %u of %d queries failed: %.250s",
                 st->url, failed, FQ_COUNT, first);
    else
        st->why[0] = '\0';
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
    snprintf(st->url, sizeof(st->url), "%s", o->prom_url);
    if (promc_open(&st->pc, o->prom_url, o->prom_auth_file, err, errlen) != 0) {
        free(st);
        return BACKEND_ERR_BAD_PATH; /* a bad credentials file: exit status 2 */
    }
    st->one_shot = o->one_shot;
    st->opened_ns = clock_mono_ns();
    st->interval_ms = o->interval_ms ? o->interval_ms : 1000;
    unsigned r = (unsigned)(st->interval_ms * ROUND_SHARE);
    st->round_ms = o->one_shot ? ROUND_ONCE_MS : r < ROUND_MIN_MS ? ROUND_MIN_MS : r;
    pthread_mutex_init(&st->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&st->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&st->thread, NULL, query_thread, st) != 0) {
        promc_close(st->pc);
        free(st);
        snprintf(err, errlen, "cannot start the query thread");
        return BACKEND_ERR_INIT;
    }
    st->started = true;
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
    snprintf(s->dcgm_info, sizeof(s->dcgm_info), "from Prometheus %.200s", st->url);
    s->health_given = true;
    s->partial = false;
    s->nprocs = 0;
    s->nevents = 0;
    s->events_why = "health events are not read from Prometheus (the nodes' own monitors have them)";
    if (!st->have || st->last.ndevs == 0) {
        if (st->have && !st->why[0])
            snprintf(st->err, sizeof(st->err), "Prometheus %.300s has no migmon_* or DCGM_FI_* "
                     "series of the last 10 minutes (docs/fleet.md)", st->url);
        else if (st->rounds == 0)
            snprintf(st->err, sizeof(st->err), "Prometheus %.300s: no answer within %.1f s",
                     st->url, (double)(clock_mono_ns() - st->opened_ns) / 1e9);
        else
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
    promc_abort(st->pc);
    pthread_mutex_lock(&st->mu);
    st->stop = true;
    pthread_cond_broadcast(&st->cv);
    uint64_t end = clock_mono_ns() + CLOSE_WAIT_MS * 1000000ull;
    while (!st->exited && clock_mono_ns() < end) {
        struct timespec ts;
        deadline_ts(&ts, end);
        pthread_cond_timedwait(&st->cv, &st->mu, &ts);
    }
    bool exited = st->exited;
    pthread_mutex_unlock(&st->mu);
    if (!exited) {
        /* still in a transfer that has not seen the abort: left behind
         * with its memory, as the program is ending */
        pthread_detach(st->thread);
        return;
    }
    pthread_join(st->thread, NULL);
    promc_close(st->pc);
    fleet_free(&st->last);
    pthread_mutex_destroy(&st->mu);
    pthread_cond_destroy(&st->cv);
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
};
