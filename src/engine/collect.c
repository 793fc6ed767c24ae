#include "engine/collect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/text.h"
#include "engine/health.h"
#include "engine/procpost.h"
#include "system/host.h"

/* Whether the comma-separated list names name; NULL lists all. */
static bool listed(const char *list, const char *name)
{
    if (!list)
        return true;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        size_t w = strcspn(p, ",");
        if (w == n && strncmp(p, name, n) == 0)
            return true;
        p += w;
        if (*p == ',')
            p++;
    }
    return false;
}

int collect_check_backends(const char *s, char *err, size_t errlen)
{
    if (!s)
        return 0;
    for (const char *p = s;;) {
        size_t w = strcspn(p, ",");
        char name[32];
        snprintf(name, sizeof(name), "%.*s", (int)(w < 31 ? w : 31), p);
        if (!w || w > 31 || !backend_find(name)) {
            snprintf(err, errlen, "--backend: \"%.*s\" is not a backend (expected nvml, amdgpu)",
                     (int)(w < 64 ? w : 64), p);
            return -1;
        }
        p += w;
        if (!*p)
            return 0;
        p++;
    }
}

/* The backends after NVML: those listed, or (no list) those that open. */
static void open_extras(struct collector *c, const struct collect_opts *o)
{
    for (size_t i = 1; backend_at(i) && c->nextra < COLLECT_MAX_EXTRA; i++) {
        const struct backend_ops *ops = backend_at(i);
        if (!listed(o->backends, ops->name) || backend_check(ops) != 0)
            continue;
        struct backend_opts bo = {.interval_ms = o->interval_ms,
                                  .one_shot = o->one_shot,
                                  .t0_ns = c->t0_ns,
                                  .sysfs_root = o->sysfs_root,
                                  .proc_root = o->proc_root,
                                  .no_procs = o->no_procs};
        void *st = NULL;
        char e[512];
        if (ops->open(&st, &bo, e, sizeof(e)) == BACKEND_OK && st) {
            c->extra[c->nextra] = ops;
            c->extra_state[c->nextra++] = st;
        } else if (o->backends && !c->extra_error[0]) {
            snprintf(c->extra_error, sizeof(c->extra_error), "%s", e);
        }
    }
}

int collect_open(struct collector *c, const struct collect_opts *o, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    c->t0_ns = clock_mono_ns();
    c->top = o->top;
    c->budget_ns = (o->budget_ms ? o->budget_ms : COLLECT_BUDGET_MS) * 1000000ull;
    if (procinfo_open(&c->pinfo, o->proc_root) != 0)
        c->pinfo = NULL;
    if (host_open(&c->host, o->proc_root, c->host_error, sizeof(c->host_error)) != 0)
        c->host = NULL;
    if (o->no_gpu) {
        snprintf(c->gpu_error, sizeof(c->gpu_error), "GPU sampling disabled (--no-gpu)");
        return 0;
    }
    if (o->backend) { /* a backend of its own (replay, --prometheus; not in the
                       * library's registry): nothing else is opened */
        c->be = o->backend;
    } else {
        if (collect_check_backends(o->backends, err, errlen) != 0) {
            collect_close(c);
            return COLLECT_ERR_BAD_BACKEND;
        }
        open_extras(c, o);
        if (!listed(o->backends, "nvml")) {
            snprintf(c->gpu_error, sizeof(c->gpu_error), "%s",
                     c->extra_error[0] ? c->extra_error : "NVML not selected (--backend)");
            return 0;
        }
        c->be = backend_find("nvml");
    }
    if (!c->be) {
        snprintf(c->gpu_error, sizeof(c->gpu_error), "no NVML backend registered");
        return 0;
    }
    struct backend_opts bo = {.nvml_path = o->nvml_path,
                              .gpm_mode = o->gpm_mode,
                              .interval_ms = o->interval_ms,
                              .gpm_exe = o->gpm_exe,
                              .dcgm_mode = o->dcgm_mode,
                              .dcgm_addr = o->dcgm_addr,
                              .dcgm_lib = o->dcgm_lib,
                              .dcgm_interval_ms = o->dcgm_interval_ms,
                              .one_shot = o->one_shot,
                              .t0_ns = c->t0_ns,
                              .source = o->source,
                              .sysfs_root = o->sysfs_root,
                              .proc_root = o->proc_root,
                              .no_procs = o->no_procs,
                              .prom_url = o->prom_url,
                              .prom_auth_file = o->prom_auth_file,
                              .prom_ca_file = o->prom_ca_file,
                              .prom_match = o->prom_match,
                              .prom_view = o->prom_view};
    int rc = c->be->open(&c->be_state, &bo, c->gpu_error, sizeof(c->gpu_error));
    if (rc == BACKEND_ERR_BAD_PATH) {
        snprintf(err, errlen, "%s", c->gpu_error);
        collect_close(c);
        return COLLECT_ERR_BAD_NVML_PATH;
    }
    if (rc != BACKEND_OK)
        c->be_state = NULL;
    return 0;
}

void collect_interrupt(struct collector *c)
{
    if (c->be && c->be_state && c->be->interrupt)
        c->be->interrupt(c->be_state);
}

void collect_settle(struct collector *c, unsigned timeout_ms)
{
    if (c->be && c->be_state && c->be->settle)
        c->be->settle(c->be_state, timeout_ms);
}

int collect_tick(struct collector *c, struct snapshot *s)
{
    return collect_tick_until(c, s, clock_mono_ns() + c->budget_ns);
}

int collect_tick_until(struct collector *c, struct snapshot *s, uint64_t deadline_ns)
{
    s->elapsed_ns = clock_mono_ns() - c->t0_ns;
    s->wall_ns = clock_wall_ns();
    s->partial_why = NULL; /* a backend that knows why sets it */

    /* The driver work runs in the backend's threads while we read /proc. */
    if (c->be_state && c->be->start)
        c->be->start(c->be_state);
    if (c->be_state && c->be->whole) { /* a recording: everything as it was */
        int rc = c->be->sample(c->be_state, s, deadline_ns);
        if (rc != 0) {
            /* no snapshot: nothing of an earlier one left in s to be shown
             * as this one's */
            s->gpu_ok = false;
            snprintf(s->gpu_error, sizeof(s->gpu_error), "%s",
                     backend_last_error(c->be, c->be_state));
            s->ndevices = s->nprocs = s->nevents = 0;
            s->driver_version[0] = s->nvml_version[0] = s->host.hostname[0] = '\0';
            s->cuda_driver_version = 0;
            s->host_ok = false;
            snprintf(s->host_error, sizeof(s->host_error), "no snapshot could be read here");
        }
        return 0;
    }
    if (c->host) {
        s->host_ok = true;
        s->host_error[0] = '\0';
        host_sample(c->host, &s->host);
        snapshot_own_cores(s);
        text_clean(s->host.hostname, sizeof(s->host.hostname));
    } else {
        s->host_ok = false;
        snprintf(s->host_error, sizeof(s->host_error), "%s", c->host_error);
    }

    bool ok = false;
    s->fleet = false; /* a fleet's backend says otherwise */
    s->nnodes = 0;
    s->nodes_why = NULL;
    s->fleet_filter[0] = '\0';
    if (!c->be_state) {
        s->ndevices = 0;
        snprintf(s->gpu_error, sizeof(s->gpu_error), "%s", c->gpu_error);
    } else {
        int rc = c->be->sample(c->be_state, s, deadline_ns);
        if (rc == BACKEND_TAKEN_OVER)
            return COLLECT_TAKEN_OVER; /* c and s are another thread's now */
        if (rc != 0) {
            s->ndevices = 0;
            snprintf(s->gpu_error, sizeof(s->gpu_error), "%s",
                     backend_last_error(c->be, c->be_state));
            text_clean_lines(s->gpu_error, sizeof(s->gpu_error)); /* paths from the environment */
        } else {
            ok = true;
        }
    }
    if (!ok) /* the extras' processes are grouped from here */
        s->nprocs = 0;
    for (size_t i = 0; i < c->nextra; i++) {
        if (c->extra[i]->sample(c->extra_state[i], s, deadline_ns) == 0)
            ok = true;
    }
    if (!ok) {
        s->gpu_ok = false;
        return 0;
    }
    s->gpu_ok = true;
    s->gpu_error[0] = '\0';
    procpost_run(&c->pp, c->pinfo, c->top, s);
    if (!s->health_given)
        health_evaluate(s);
    return 0;
}

bool collect_first_sight(const struct snapshot *s)
{
    return s->gpu_ok && procpost_first_sight(s) > 0;
}

void collect_second_look(struct collector *c, struct snapshot *s)
{
    procpost_second_look(c->pinfo, s, clock_mono_ns());
}

void collect_set_takeover(struct collector *c, void (*fn)(void *arg), void *arg)
{
    if (c->be && c->be_state && c->be->set_takeover)
        c->be->set_takeover(c->be_state, fn, arg);
}

bool collect_abandon(struct collector *c)
{
    return c->be && c->be_state && c->be->abandon && c->be->abandon(c->be_state);
}

void collect_detach(struct collector *c)
{
    if (c->be && c->be_state && c->be->detach)
        c->be->detach(c->be_state);
}

void collect_close(struct collector *c)
{
    if (c->be && c->be_state)
        c->be->close(c->be_state);
    c->be_state = NULL;
    for (size_t i = 0; i < c->nextra; i++)
        c->extra[i]->close(c->extra_state[i]);
    c->nextra = 0;
    if (c->host)
        host_close(c->host);
    c->host = NULL;
    procinfo_close(c->pinfo);
    c->pinfo = NULL;
    procpost_free(&c->pp);
}

int collect_view_ask(struct collector *c, const struct backend_view_ask *a, uint64_t *gen,
                     char *err, size_t errlen)
{
    if (!c->be || !c->be_state || !c->be->view_ask)
        return -1;
    return c->be->view_ask(c->be_state, a, gen, err, errlen);
}

uint64_t collect_view_answered(struct collector *c)
{
    if (!c->be || !c->be_state || !c->be->view_answered)
        return 0;
    return c->be->view_answered(c->be_state);
}

int collect_past_ask(struct collector *c, const struct backend_past_ask *a)
{
    if (!c->be || !c->be_state || !c->be->past_ask || !c->be->past_take)
        return -1;
    return c->be->past_ask(c->be_state, a);
}

int collect_past_take(struct collector *c, struct hist_past *out, uint64_t *id, char *err,
                      size_t errlen)
{
    if (!c->be || !c->be_state || !c->be->past_take)
        return 0;
    return c->be->past_take(c->be_state, out, id, err, errlen);
}
