/*
 * scenario_events.c — reads [events] (scenario-wide switches of the event
 * API) and [event.NAME] (one event the simulated driver reports) into
 * struct sim_events, and checks them once the whole file is read.
 */
#include "scenario_events.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend/nvml/nvml_api.h"
#include "scenario_values.h"

static const struct {
    const char *name;
    unsigned long long bit;
} types[] = {
    {"xid", NVML_EVENT_TYPE_XID},
    {"sbe", NVML_EVENT_TYPE_SINGLE_BIT_ECC},
    {"dbe", NVML_EVENT_TYPE_DOUBLE_BIT_ECC},
    {"pstate", NVML_EVENT_TYPE_PSTATE},
    {"clock", NVML_EVENT_TYPE_CLOCK},
    {"operational", SIM_EVENT_OPERATIONAL},
};

static int errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int errf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static struct sim_event *event_at(struct sim_events *e, const char *name)
{
    for (int i = 0; i < e->n; i++)
        if (!strcmp(e->ev[i].name, name))
            return &e->ev[i];
    if (e->n == SIM_MAX_EVENTS)
        return NULL;
    if (e->n == e->cap) {
        int cap = e->cap ? 2 * e->cap : 8;
        struct sim_event *n = realloc(e->ev, (size_t)cap * sizeof(*n));
        if (!n)
            return NULL;
        e->ev = n;
        e->cap = cap;
    }
    struct sim_event *v = &e->ev[e->n++];
    memset(v, 0, sizeof(*v));
    snprintf(v->name, sizeof(v->name), "%s", name);
    v->t = -HUGE_VAL;
    v->slot = -1;
    v->type = NVML_EVENT_TYPE_XID;
    v->xid = -1;
    v->legacy_xid = -1;
    return v;
}

static int switch_key(struct sim_events *e, const char *name, const char *value, char *err,
                      size_t errlen)
{
    if (!strcmp(name, "event_wait")) {
        if (!strcasecmp(value, "ok"))
            e->wait = SIM_EVENT_WAIT_OK;
        else if (!strcasecmp(value, "fail"))
            e->wait = SIM_EVENT_WAIT_FAIL;
        else if (!strcasecmp(value, "hang"))
            e->wait = SIM_EVENT_WAIT_HANG;
        else
            return errf(err, errlen, "[events] event_wait: expected ok, fail or hang, got '%s'",
                            value);
        return 0;
    }
    if (!strcmp(name, "events_api")) {
        bool on;
        if (scenario_parse_bool(value, &on) != 0)
            return errf(err, errlen, "[events] events_api: expected yes or no, got '%s'",
                            value);
        e->api_off = !on;
        return 0;
    }
    return errf(err, errlen, "[events] unknown key '%s'", name);
}

static int event_key(struct sim_event *v, const char *section, const char *name,
                     const char *value, char *err, size_t errlen)
{
    long n;
    if (!strcmp(name, "t")) {
        if (scenario_parse_double(value, &v->t) != 0 || !isfinite(v->t) || v->t < 0)
            return errf(err, errlen, "[%s] t: expected seconds >= 0, got '%s'", section,
                            value);
        return 0;
    }
    if (!strcmp(name, "gpu") || !strcmp(name, "mig")) {
        bool gpu = name[0] == 'g';
        if (scenario_parse_long(value, &n) != 0 || n < 0 ||
            n >= (gpu ? SIM_MAX_GPUS : SIM_MAX_MIG_SLOTS))
            return errf(err, errlen, "[%s] %s: bad index '%s'", section, name, value);
        *(gpu ? &v->gpu : &v->slot) = (int)n;
        return 0;
    }
    if (!strcmp(name, "type")) {
        for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
            if (!strcasecmp(value, types[i].name)) {
                v->type = types[i].bit;
                return 0;
            }
        }
        return errf(err, errlen,
                    "[%s] type: expected xid, sbe, dbe, pstate, clock or operational, got '%s'",
                        section, value);
    }
    if (!strcmp(name, "xid")) {
        if (scenario_parse_long(value, &n) != 0 || n < 1 || n > 65535)
            return errf(err, errlen, "[%s] xid: expected a code 1-65535, got '%s'", section,
                            value);
        v->xid = n;
        return 0;
    }
    if (!strcmp(name, "legacy_xid")) {
        if (scenario_parse_long(value, &n) != 0 || n < 1 || n > 65535)
            return errf(err, errlen, "[%s] legacy_xid: expected a code 1-65535, got '%s'",
                        section, value);
        v->legacy_xid = n;
        return 0;
    }
    if (!strcmp(name, "severity") || !strcmp(name, "category") || !strcmp(name, "module_code")) {
        if (scenario_parse_long(value, &n) != 0 || n < 0 || n > 0xFFFFFFFFL)
            return errf(err, errlen, "[%s] %s: expected a number 0-4294967295, got '%s'",
                        section, name, value);
        *(name[0] == 's' ? &v->severity : name[0] == 'c' ? &v->category : &v->module_code) =
            (unsigned)n;
        return 0;
    }
    return errf(err, errlen, "[%s] unknown key '%s'", section, name);
}

int scenario_events_key(struct sim_scenario *s, const char *section, const char *name,
                        const char *value, char *err, size_t errlen)
{
    if (!strcmp(section, "events"))
        return switch_key(&s->events, name, value, err, errlen);
    const char *nm = section + 6; /* "event." */
    if (!*nm || strlen(nm) >= sizeof(s->events.ev[0].name))
        return errf(err, errlen, "[%s] the name after the dot must be 1-31 characters",
                        section);
    struct sim_event *v = event_at(&s->events, nm);
    if (!v)
        return errf(err, errlen, "[%s] too many event sections (at most %d)", section,
                        SIM_MAX_EVENTS);
    return event_key(v, section, name, value, err, errlen);
}

int scenario_events_finish(struct sim_scenario *s, char *err, size_t errlen)
{
    struct sim_events *e = &s->events;
    for (int i = 0; i < e->n; i++) {
        struct sim_event *v = &e->ev[i];
        if (v->t == -HUGE_VAL)
            return errf(err, errlen, "[event.%s] t is required", v->name);
        if (v->gpu >= s->n_gpus || !s->gpus[v->gpu].defined)
            return errf(err, errlen, "[event.%s] gpu %d is not defined", v->name, v->gpu);
        if (v->type == NVML_EVENT_TYPE_XID && v->xid < 0)
            return errf(err, errlen, "[event.%s] xid is required for an Xid event",
                            v->name);
        if (v->type != NVML_EVENT_TYPE_XID && v->xid >= 0)
            return errf(err, errlen, "[event.%s] xid is only for type = xid", v->name);
        if (v->type != SIM_EVENT_OPERATIONAL &&
            (v->legacy_xid >= 0 || v->severity || v->category || v->module_code))
            return errf(err, errlen, "[event.%s] legacy_xid, severity, category and "
                        "module_code are only for type = operational", v->name);
        if (v->slot >= 0) {
            bool live = false;
            for (int k = 0; k < s->n_migs && !live; k++) {
                const struct sim_mig *m = &s->migs[k];
                live = m->gpu == v->gpu && m->slot == v->slot && m->from <= v->t && v->t < m->until;
            }
            if (s->gpus[v->gpu].mig_mode != SIM_MIG_ON || !live)
                return errf(err, errlen, "[event.%s] gpu %d has no MIG device in slot %d at "
                                "t = %g", v->name, v->gpu, v->slot, v->t);
        }
    }
    /* Insertion sort: stable (events at the same t keep the file's order),
     * and there are at most SIM_MAX_EVENTS. */
    for (int i = 1; i < e->n; i++) {
        for (int j = i; j > 0 && e->ev[j - 1].t > e->ev[j].t; j--) {
            struct sim_event x = e->ev[j];
            e->ev[j] = e->ev[j - 1];
            e->ev[j - 1] = x;
        }
    }
    return 0;
}
