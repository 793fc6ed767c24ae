/*
 * nvml_compat.c — one rule for the values NVML serves through a deprecated
 * and a replacement entry point.
 *
 * NVIDIA's NVML reference ("Deprecation and/or Removal Notices") deprecates
 * in CUDA 13.0, and says it will remove in CUDA 14.0, calls the monitor
 * makes every tick; a removed call answers NVML_ERROR_DEPRECATED. The rule
 * (docs/nvml.md, "Deprecated calls"):
 *
 *   - ask the replacement where the library exports it (and, for the field
 *     values that replace nvmlDeviceGetViolationStatus, where the driver's
 *     header defines them: 580 and later); else the old call;
 *   - an answer of DEPRECATED or FUNCTION_NOT_FOUND (or, for the versioned
 *     struct, ARGUMENT_VERSION_MISMATCH; for a field, INVALID_ARGUMENT, an
 *     id the driver does not know) is a refusal of that entry point, not a
 *     missing value: the other one is asked, once, and which one answers
 *     is remembered per device (dev_cache.compat_path);
 *   - the value's reason says which entry point gave it where that is news:
 *     on a driver of the deprecation era (the 580 branch and later, whose
 *     header marks the old calls DEPRECATED(13.0)) it names the
 *     replacement, and wherever one was refused it names the refused call
 *     and its answer. A driver before 580 reading the calls it always read
 *     carries no such note.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/nvml/nvml_compat.h"
#include "backend/nvml/nvml_load.h"

static const char *const NO_SYMBOL = NVML_NO_SYMBOL;

/* ------------------------------------------------------------ notes */

/*
 * The reasons are composed of a few names and codes; the metrics borrow
 * them for the program's life, so each distinct text is kept once in this
 * table (a handful per driver: a pair of calls times the codes they
 * answer). Past its room, a fixed text stands in.
 */
#define NOTES 48
#define NOTE_LEN 200
static char notes[NOTES][NOTE_LEN];
static size_t nnotes;
static pthread_mutex_t notes_mu = PTHREAD_MUTEX_INITIALIZER;

static const char *note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *note(const char *fmt, ...)
{
    char buf[NOTE_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    const char *out = "an NVML entry point was refused (see --debug)";
    pthread_mutex_lock(&notes_mu);
    for (size_t i = 0; i < nnotes; i++) {
        if (strcmp(notes[i], buf) == 0) {
            out = notes[i];
            goto done;
        }
    }
    if (nnotes < NOTES) {
        memcpy(notes[nnotes], buf, sizeof(buf));
        out = notes[nnotes++];
    }
done:
    pthread_mutex_unlock(&notes_mu);
    return out;
}

/* ------------------------------------------------------------ the driver */

int nvml_driver_branch(struct nvml_state *st)
{
    if (st->drv_branch)
        return st->drv_branch;
    char v[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = "";
    st->drv_branch = -1;
    if (st->lib.f.driver_version &&
        CALL(st, "nvmlSystemGetDriverVersion", st->lib.f.driver_version(v, sizeof(v))) ==
            NVML_SUCCESS) {
        v[sizeof(v) - 1] = '\0';
        char *end = NULL;
        long b = strtol(v, &end, 10);
        if (end != v && b > 0 && b < 100000)
            st->drv_branch = (int)b;
    }
    return st->drv_branch;
}

/* The 580 branch and later: NVML 13, whose header marks the old calls
 * DEPRECATED(13.0). */
static bool era(struct nvml_state *st)
{
    return nvml_driver_branch(st) >= 580;
}

/* An answer that refuses the entry point, not the value. */
static bool refused(nvmlReturn_t rc)
{
    return rc == NVML_ERROR_DEPRECATED || rc == NVML_ERROR_FUNCTION_NOT_FOUND ||
           rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
}

/* ------------------------------------------------------------ the pairs */

/*
 * One value with two entry points. newer/older: the names; has_new /
 * has_old: the library exports them; prefer_new: ask the replacement
 * first. call(which) makes the call (0 the replacement, 1 the old one) and
 * returns its code, the value in the caller's closure.
 */
struct pair {
    const char *newer, *older;
    bool has_new, has_old, prefer_new;
    const char *era_note; /* the reason of the replacement's value in the era */
};

typedef nvmlReturn_t (*pair_call)(struct nvml_state *st, nvmlDevice_t h, int which, void *out);

/*
 * Runs the rule for one value: the entry point remembered in c
 * (compat_path[k]), else the preferred one, and when that refuses, the
 * other, which is remembered whatever it answers. On SUCCESS *why is the
 * value's reason (NULL: none); otherwise the return code is the failure
 * and *why its reason (NOT_SUPPORTED when both refused).
 */
static nvmlReturn_t run_pair(struct nvml_state *st, struct dev_cache *c, enum compat_call k,
                             const struct pair *p, pair_call call, nvmlDevice_t h, void *out,
                             const char **why)
{
    unsigned char *path = &c->compat_path[k];
    if (*path == CP_NONE) {
        *why = c->compat_why[k];
        return NVML_ERROR_NOT_SUPPORTED;
    }
    bool known = *path != CP_UNKNOWN;
    /* the replacement first where the old call is deprecated (from 580),
     * or is not there; before, the old call as it always was (its
     * unsigned reading keeps a driver's all-ones answer out of range) */
    bool new_first = p->prefer_new && p->has_new && (era(st) || !p->has_old);
    int which = *path == CP_OLD ? 1 : *path == CP_NEW ? 0 : new_first ? 0 : 1;
    bool has = which == 0 ? p->has_new : p->has_old;
    nvmlReturn_t rc = has ? call(st, h, which, out) : NVML_ERROR_FUNCTION_NOT_FOUND;
    if (rc == NVML_SUCCESS) {
        if (!known) {
            *path = which == 0 ? CP_NEW : CP_OLD;
            c->compat_why[k] = which == 0 && era(st) ? p->era_note : NULL;
        }
        *why = c->compat_why[k];
        return NVML_SUCCESS;
    }
    if (known || !refused(rc)) {
        *why = has ? nvml_rc_reason(rc) : NO_SYMBOL;
        return rc;
    }
    /* The first entry point refused: the other, once, and from now on. */
    nvmlReturn_t first_rc = rc;
    const char *first_name = which == 0 ? p->newer : p->older;
    const char *first_why = has ? nvml_rc_reason(first_rc) : NO_SYMBOL;
    which = !which;
    has = which == 0 ? p->has_new : p->has_old;
    const char *name = which == 0 ? p->newer : p->older;
    *path = which == 0 ? CP_NEW : CP_OLD;
    /* A replacement the driver lacks (FUNCTION_NOT_FOUND: a library
     * exporting names its driver has not) leaves the old call as it
     * always was: nothing to say. Any other refusal is news. */
    if (which == 1 && first_rc == NVML_ERROR_FUNCTION_NOT_FOUND)
        c->compat_why[k] = NULL;
    else
        c->compat_why[k] = note("read with %s (%s: %s)", name, first_name, first_why);
    rc = has ? call(st, h, which, out) : NVML_ERROR_FUNCTION_NOT_FOUND;
    if (rc == NVML_SUCCESS) {
        *why = c->compat_why[k];
        return NVML_SUCCESS;
    }
    if (!refused(rc)) {
        *why = nvml_rc_reason(rc);
        return rc;
    }
    /* Both refused (or the other is not exported): none, for good. */
    *path = CP_NONE;
    c->compat_why[k] = note("%s: %s; %s: %s", first_name, first_why, name,
                            has ? nvml_rc_reason(rc) : NO_SYMBOL);
    *why = c->compat_why[k];
    return NVML_ERROR_NOT_SUPPORTED;
}

/* ------------------------------------------------------------ temperature */

/* The reading as a double: the old call's unsigned value stays as the
 * driver gave it (an all-ones answer is then out of range, not -1). */
static nvmlReturn_t temp_call(struct nvml_state *st, nvmlDevice_t h, int which, void *out)
{
    const struct nvml_fns *f = &st->lib.f;
    double *t = out;
    if (which == 0) {
        nvmlTemperature_t v;
        memset(&v, 0, sizeof(v));
        v.version = nvmlTemperature_v1;
        v.sensorType = NVML_TEMPERATURE_GPU;
        nvmlReturn_t rc = CALL(st, "nvmlDeviceGetTemperatureV", f->temperature_v(h, &v));
        *t = (double)v.temperature;
        return rc;
    }
    unsigned int u = 0;
    nvmlReturn_t rc =
        CALL(st, "nvmlDeviceGetTemperature", f->temperature(h, NVML_TEMPERATURE_GPU, &u));
    *t = (double)u;
    return rc;
}

struct metric nvml_compat_temperature(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h)
{
    const struct nvml_fns *f = &st->lib.f;
    static const struct pair p = {
        .newer = "nvmlDeviceGetTemperatureV",
        .older = "nvmlDeviceGetTemperature",
        .prefer_new = true,
        .era_note = "read with nvmlDeviceGetTemperatureV (nvmlDeviceGetTemperature is "
                    "deprecated from CUDA 13.0)",
    };
    struct pair q = p;
    q.has_new = f->temperature_v != NULL;
    q.has_old = f->temperature != NULL;
    if (!q.has_new && !q.has_old)
        return metric_none(NO_SYMBOL);
    double t = 0;
    const char *why = NULL;
    if (run_pair(st, c, CC_TEMP, &q, temp_call, h, &t, &why) != NVML_SUCCESS)
        return metric_none(why);
    struct metric m = metric_direct(t);
    m.why = why;
    return m;
}

/* ------------------------------------------------------------ clock event reasons */

static nvmlReturn_t throttle_call(struct nvml_state *st, nvmlDevice_t h, int which, void *out)
{
    const struct nvml_fns *f = &st->lib.f;
    unsigned long long *mask = out;
    return which == 0 ? CALL(st, "nvmlDeviceGetCurrentClocksEventReasons",
                             f->clock_event_reasons(h, mask))
                      : CALL(st, "nvmlDeviceGetCurrentClocksThrottleReasons",
                             f->clock_throttle_reasons(h, mask));
}

bool nvml_compat_throttle(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h,
                          uint64_t *mask, const char **why)
{
    const struct nvml_fns *f = &st->lib.f;
    static const struct pair p = {
        .newer = "nvmlDeviceGetCurrentClocksEventReasons",
        .older = "nvmlDeviceGetCurrentClocksThrottleReasons",
        .prefer_new = true,
        .era_note = "read with nvmlDeviceGetCurrentClocksEventReasons "
                    "(nvmlDeviceGetCurrentClocksThrottleReasons is deprecated from CUDA 13.0)",
    };
    struct pair q = p;
    q.has_new = f->clock_event_reasons != NULL;
    q.has_old = f->clock_throttle_reasons != NULL;
    *why = NO_SYMBOL;
    if (!q.has_new && !q.has_old)
        return false;
    unsigned long long m = 0;
    if (run_pair(st, c, CC_THROTTLE, &q, throttle_call, h, &m, why) != NVML_SUCCESS)
        return false;
    *mask = m;
    return true;
}

/* ------------------------------------------------------------ held-down time */

/* The field that replaces a policy's ViolationStatus (nvml.h 13.x's
 * translation; nvml_api.h): power 74 in every header; thermal
 * SW_THERM_SLOWDOWN, 251 for 575 to 589 and 269 from 590. Before 575 the
 * perf-policy counter of the same name, 75, asked only after the call
 * itself was refused. */
static unsigned violation_field_id(struct nvml_state *st, int thermal)
{
    if (!thermal)
        return NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP;
    int b = nvml_driver_branch(st);
    return b >= 590   ? NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN
           : b >= 575 ? NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN_R575
                      : NVML_FI_DEV_PERF_POLICY_THERMAL;
}

struct viol_out {
    int thermal;
    double seconds;
};

static nvmlReturn_t viol_call(struct nvml_state *st, nvmlDevice_t h, int which, void *out)
{
    const struct nvml_fns *f = &st->lib.f;
    struct viol_out *o = out;
    if (which == 0) {
        nvmlFieldValue_t fv;
        memset(&fv, 0, sizeof(fv));
        fv.fieldId = violation_field_id(st, o->thermal);
        nvmlReturn_t rc = CALL(st, "nvmlDeviceGetFieldValues", f->field_values(h, 1, &fv));
        if (rc == NVML_SUCCESS)
            rc = fv.nvmlReturn;
        /* An id the driver's header does not define: the entry point is
         * not there for it. */
        if (rc == NVML_ERROR_INVALID_ARGUMENT)
            rc = NVML_ERROR_FUNCTION_NOT_FOUND;
        if (rc == NVML_SUCCESS && fv.valueType != NVML_VALUE_TYPE_UNSIGNED_LONG_LONG &&
            fv.valueType != NVML_VALUE_TYPE_UNSIGNED_LONG)
            return NVML_ERROR_UNKNOWN; /* ns counters are unsigned long long (hdr) */
        o->seconds = (double)fv.value.ullVal / 1e9;
        return rc;
    }
    nvmlViolationTime_t vt;
    memset(&vt, 0, sizeof(vt));
    nvmlReturn_t rc = CALL(st, "nvmlDeviceGetViolationStatus",
                           f->violation(h, o->thermal ? NVML_PERF_POLICY_THERMAL
                                                      : NVML_PERF_POLICY_POWER,
                                        &vt));
    o->seconds = (double)vt.violationTime / 1e9; /* ns (hdr) */
    return rc;
}

void nvml_compat_violation(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h,
                           struct metric out[2])
{
    const struct nvml_fns *f = &st->lib.f;
    static const struct pair p[2] = {
        {.newer = "NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP",
         .older = "nvmlDeviceGetViolationStatus",
         .era_note = "read with the field NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP "
                     "(nvmlDeviceGetViolationStatus is deprecated from CUDA 13.0)"},
        {.newer = "NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN",
         .older = "nvmlDeviceGetViolationStatus",
         .era_note = "read with the field NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN "
                     "(nvmlDeviceGetViolationStatus is deprecated from CUDA 13.0)"},
    };
    static const enum compat_call cc[2] = {CC_VIOL_POWER, CC_VIOL_THERMAL};
    static const enum memo_call mc[2] = {MC_VIOL_POWER, MC_VIOL_THERMAL};
    for (int k = 0; k < 2; k++) {
        struct pair q = p[k];
        q.has_new = f->field_values != NULL;
        q.has_old = f->violation != NULL;
        q.prefer_new = era(st);
        if (!q.has_new && !q.has_old) {
            out[k] = metric_none(NO_SYMBOL);
            continue;
        }
        if (memo_known(c, mc[k])) {
            out[k] = memo_none(c, mc[k]);
            continue;
        }
        struct viol_out o = {.thermal = k, .seconds = 0};
        const char *why = NULL;
        nvmlReturn_t rc = run_pair(st, c, cc[k], &q, viol_call, h, &o, &why);
        if (rc == NVML_SUCCESS) {
            out[k] = metric_direct(o.seconds);
            out[k].why = why;
            continue;
        }
        /* NOT_SUPPORTED from the entry point that answers: this GPU does
         * not count it; not asked again. */
        if (rc == NVML_ERROR_NOT_SUPPORTED && c->compat_path[cc[k]] != CP_NONE &&
            memo_note(c, mc[k], rc))
            why = memo_none(c, mc[k]).why;
        out[k] = metric_none(why);
    }
}
