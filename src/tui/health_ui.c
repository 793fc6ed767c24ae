/*
 * health_ui.c — the row mark, the header's summary and the events
 * overlay's text (health_ui.h).
 */
#include "tui/health_ui.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backend/events/xid.h"
#include "core/health_rules.h"
#include "engine/proclist.h"

const char *tui_health_mark(unsigned level, enum tui_role *role)
{
    enum tui_role r = R_NORMAL;
    const char *mark = "";
    if (level == HEALTH_ACTION) {
        r = R_ALARM;
        mark = "!!";
    } else if (level == HEALTH_WARNING) {
        r = R_WARN;
        mark = "!";
    }
    if (role)
        *role = r;
    return mark;
}

bool tui_health_summary(char *out, size_t len, const struct snapshot *s,
                        enum tui_health_form form, enum tui_role *role)
{
    size_t action = 0, warning = 0;
    if (len > 0)
        out[0] = '\0';
    if (role)
        *role = R_WARN;
    if (!s)
        return false;
    /* a fleet: every node's GPUs, as Prometheus counted them */
    for (size_t k = 0; s->fleet && k < s->nnodes; k++) {
        const struct node_summary *n = &s->nodes[k];
        action += metric_ok(&n->gpus_action) ? (size_t)n->gpus_action.value : 0;
        warning += metric_ok(&n->gpus_warning) ? (size_t)n->gpus_warning.value : 0;
    }
    for (size_t i = 0; !s->fleet && i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        bool own_gpu = d->kind == DEV_MIG && d->parent_pos >= 0 &&
                       (size_t)d->parent_pos < s->ndevices;
        if (own_gpu)
            continue; /* counted with its GPU */
        unsigned worst = d->health;
        for (size_t k = i + 1; d->kind == DEV_GPU && k < s->ndevices; k++) {
            const struct device *m = &s->devices[k];
            if (m->kind == DEV_MIG && m->parent_pos == (int)i && m->health > worst)
                worst = m->health;
        }
        action += worst == HEALTH_ACTION;
        warning += worst == HEALTH_WARNING;
    }
    if (action == 0 && warning == 0)
        return false;
    char a[32] = "", w[32] = "";
    if (action)
        snprintf(a, sizeof(a), "%zu action", action);
    if (warning)
        snprintf(w, sizeof(w), "%zu warning", warning);
    bool brief = form != TUI_HEALTH_FULL;
    if (form == TUI_HEALTH_TINY)
        snprintf(out, len, "health %s", action ? "!!" : "!");
    else
        snprintf(out, len, "%s%s%s%s%s", brief ? "health: " : "GPU health: ", a,
                 action && warning ? ", " : "", w, brief ? "" : " (e: events)");
    if (role)
        *role = action ? R_ALARM : R_WARN;
    return true;
}

const char *tui_fmt_duration(char *out, size_t len, double seconds)
{
    /* whole units, cut down: 179 s is "2 min" (ago), as a clock would say */
    if (!(seconds >= 0))
        seconds = 0;
    if (seconds > 1e12)
        seconds = 1e12;
    unsigned long long t = (unsigned long long)seconds;
    if (t < 120)
        snprintf(out, len, "%llu s", t);
    else if (t < 120 * 60)
        snprintf(out, len, "%llu min", t / 60);
    else if (t < 48 * 3600)
        snprintf(out, len, "%llu h", t / 3600);
    else
        snprintf(out, len, "%llu d", t / 86400);
    return out;
}

/* Where an event happened: "GPU 5", "MIG 0/1 2g.35gb GI 5 CI 0" (the
 * slice's name, proclist.h), or, for a GPU that is not in this snapshot,
 * the start of its UUID. */
static void event_device(char *out, size_t len, const struct snapshot *s,
                         const struct gpu_event *e)
{
    if (e->device_pos < 0 || (size_t)e->device_pos >= s->ndevices) {
        snprintf(out, len, "%.12s", e->gpu_uuid[0] ? e->gpu_uuid : "GPU ?");
        return;
    }
    const struct device *d = &s->devices[e->device_pos];
    if (d->kind == DEV_MIG)
        proclist_slice_name(out, len, d, PROCLIST_SLICE_FULL);
    else if (e->gi_id >= 0) /* an instance this snapshot does not list */
        snprintf(out, len, "GPU %d GI %d CI %d", d->index, e->gi_id, e->ci_id);
    else
        snprintf(out, len, "GPU %d", d->index);
}

/* The code, what it means and what to do. An ECC event carries no Xid:
 * its type says what it is. */
static void event_code(char *code, size_t len, const char **meaning, const char **action,
                       const struct gpu_event *e)
{
    const char *type = xid_event_type_name(e->type);
    if (strcmp(type, "xid") == 0) {
        snprintf(code, len, "Xid %u", e->xid);
        *meaning = xid_meaning(e->xid);
        *action = xid_action(e->xid);
    } else if (strcmp(type, "dbe") == 0) {
        snprintf(code, len, "ECC DBE");
        *meaning = "double-bit ECC error (uncorrectable memory error)";
        *action = "restart the jobs on this GPU; watch the remapped rows (detail panel)";
    } else if (strcmp(type, "sbe") == 0) {
        snprintf(code, len, "ECC SBE");
        *meaning = "single-bit ECC error (corrected by the hardware)";
        *action = "none now; a rising count is worth a look at the ECC counters";
    } else {
        snprintf(code, len, "%s", type);
        *meaning = "an NVML event";
        *action = "none";
    }
}

size_t tui_events_text(char *out, size_t len, const struct snapshot *s)
{
    size_t off = 0, n = 0;
#define ADD(...)                                                                                   \
    do {                                                                                           \
        if (off < len)                                                                             \
            off += (size_t)snprintf(out + off, len - off, __VA_ARGS__);                            \
    } while (0)
    if (len > 0)
        out[0] = '\0';
    if (!s)
        return 0;
    if (s->events_why)
        ADD("no health events: %s\n", s->events_why);
    uint64_t total = s->events_total > s->nevents ? s->events_total : s->nevents;
    if (total == 0) {
        if (!s->events_why)
            ADD("No health event since the monitor started.\n");
        return 0;
    }
    ADD("%llu event%s since the monitor started, newest first", (unsigned long long)total,
        total == 1 ? "" : "s");
    if (total > s->nevents)
        ADD("; the %zu newest kept, %llu older not shown", s->nevents,
            (unsigned long long)(total - s->nevents));
    ADD("\n");
    /* the devices' column as wide as its widest name, at least 15 */
    int devw = 15;
    for (size_t k = 0; k < s->nevents; k++) {
        char dev[64];
        event_device(dev, sizeof(dev), s, &s->events[k]);
        if ((int)strlen(dev) > devw)
            devw = (int)strlen(dev);
    }
    for (size_t k = s->nevents; k-- > 0;) {
        const struct gpu_event *e = &s->events[k];
        char clock[16] = "--:--:--", age[24], dev[64], code[24];
        if (e->wall_ns > 0) {
            time_t t = (time_t)(e->wall_ns / 1000000000);
            struct tm tm;
            if (localtime_r(&t, &tm))
                strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
        }
        double ago = s->elapsed_ns > e->elapsed_ns ? (double)(s->elapsed_ns - e->elapsed_ns) / 1e9
                                                   : 0;
        tui_fmt_duration(age, sizeof(age), ago);
        event_device(dev, sizeof(dev), s, e);
        const char *meaning, *action;
        event_code(code, sizeof(code), &meaning, &action, e);
        ADD("%-8s %7s ago  %-*s  %-7s  %s\n", clock, age, devw, dev, code, meaning);
        ADD("    action: %s\n", action);
        if (off < len)
            n++;
    }
#undef ADD
    return n;
}
