/*
 * valfn.c — parsing and closed-form evaluation of the simulator's value
 * functions (see valfn.h for the syntax).
 */
#include "valfn.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TWO_PI 6.283185307179586476925

void valfn_set_const(struct valfn *f, double v)
{
    memset(f, 0, sizeof(*f));
    f->kind = VF_CONST;
    f->a = v;
}

void valfn_set_nan(struct valfn *f)
{
    memset(f, 0, sizeof(*f));
    f->kind = VF_NAN;
}

static const char *skip_ws(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    return s;
}

/* Parses one number ending at a separator (',', ':', ')' or the end). */
static int parse_num(const char **sp, double *out)
{
    const char *s = skip_ws(*sp);
    char *end;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v))
        return -1;
    *sp = skip_ws(end);
    *out = v;
    return 0;
}

/* Parses "name(" ... ")" argument lists of plain numbers. */
static int parse_args(const char *s, double *args, int max, int *n)
{
    *n = 0;
    s = skip_ws(s);
    if (*s == ')')
        return 0;
    for (;;) {
        if (*n == max)
            return -1;
        if (parse_num(&s, &args[*n]) != 0)
            return -1;
        (*n)++;
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == ')' && *skip_ws(s + 1) == '\0')
            return 0;
        return -1;
    }
}

static int parse_steps(struct valfn *f, const char *s)
{
    f->n = 0;
    for (;;) {
        if (f->n == VALFN_MAX_POINTS)
            return -1;
        if (parse_num(&s, &f->t[f->n]) != 0 || *s != ':')
            return -1;
        s++;
        if (parse_num(&s, &f->v[f->n]) != 0)
            return -1;
        if (f->n > 0 && f->t[f->n] <= f->t[f->n - 1])
            return -2;
        f->n++;
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == ')' && *skip_ws(s + 1) == '\0')
            return 0;
        return -1;
    }
}

static bool starts_fn(const char *s, const char *name, const char **args)
{
    size_t n = strlen(name);
    if (strncasecmp(s, name, n) != 0)
        return false;
    s = skip_ws(s + n);
    if (*s != '(')
        return false;
    *args = s + 1;
    return true;
}

int valfn_parse(struct valfn *f, const char *text, char *err, size_t errlen)
{
    double args[VALFN_MAX_POINTS + 1];
    const char *s = skip_ws(text);
    const char *a;
    int n;

    memset(f, 0, sizeof(*f));
    if (!strcasecmp(s, "none") || !strcasecmp(s, "na") || !strcasecmp(s, "n/a")) {
        f->kind = VF_NONE;
        return 0;
    }
    if (starts_fn(s, "wave", &a)) {
        if (parse_args(a, args, 4, &n) != 0 || n < 3 || args[2] <= 0)
            goto bad;
        f->kind = VF_WAVE;
        f->a = args[0];
        f->b = args[1];
        f->c = args[2];
        f->d = n > 3 ? args[3] : 0;
        return 0;
    }
    if (starts_fn(s, "ramp", &a)) {
        if (parse_args(a, args, 3, &n) != 0 || n < 2)
            goto bad;
        f->kind = VF_RAMP;
        f->a = args[0];
        f->b = args[1];
        f->has_limit = n > 2;
        f->c = n > 2 ? args[2] : 0;
        if (f->has_limit && (f->b == 0 || (f->c - f->a) / f->b < 0)) {
            snprintf(err, errlen, "ramp(): the limit must lie in the direction of the rate");
            return -1;
        }
        return 0;
    }
    if (starts_fn(s, "steps", &a)) {
        int rc = parse_steps(f, a);
        if (rc == -2) {
            snprintf(err, errlen, "steps(): times must increase");
            return -1;
        }
        if (rc != 0 || f->n == 0)
            goto bad;
        f->kind = VF_STEPS;
        return 0;
    }
    if (starts_fn(s, "cycle", &a)) {
        if (parse_args(a, args, VALFN_MAX_POINTS + 1, &n) != 0 || n < 2 || args[0] <= 0)
            goto bad;
        f->kind = VF_CYCLE;
        f->a = args[0];
        f->n = n - 1;
        memcpy(f->v, args + 1, sizeof(double) * (size_t)f->n);
        return 0;
    }
    {
        char *end;
        double v = strtod(s, &end);
        if (end != s && isfinite(v) && *skip_ws(end) == '\0') {
            valfn_set_const(f, v);
            return 0;
        }
    }
bad:
    snprintf(err, errlen,
             "bad value '%s' (expected a number, none, wave(base, amp, period[, phase]), "
             "ramp(start, rate[, limit]), steps(t:v, ...) or cycle(dwell, v, ...), "
             "at most %d points)",
             text, VALFN_MAX_POINTS);
    return -1;
}

/* Time at which a limited ramp reaches its limit (HUGE_VAL if never). */
static double ramp_saturation(const struct valfn *f)
{
    if (!f->has_limit || f->b == 0)
        return HUGE_VAL;
    return (f->c - f->a) / f->b;
}

/* Index of the step in force at t. */
static int step_index(const struct valfn *f, double t)
{
    int i = 0;
    while (i + 1 < f->n && t >= f->t[i + 1])
        i++;
    return i;
}

double valfn_eval(const struct valfn *f, double t)
{
    switch (f->kind) {
    case VF_CONST:
        return f->a;
    case VF_WAVE:
        return f->a + f->b * sin(TWO_PI * (t + f->d) / f->c);
    case VF_RAMP: {
        double ts = ramp_saturation(f);
        if (t <= 0)
            return f->a;
        return t >= ts ? f->c : f->a + f->b * t;
    }
    case VF_STEPS:
        return f->v[step_index(f, t)];
    case VF_CYCLE: {
        double k = floor(t / f->a);
        long idx = (long)fmod(k, (double)f->n);
        if (idx < 0)
            idx += f->n;
        return f->v[idx];
    }
    case VF_NAN:
        return NAN;
    case VF_UNSET:
    case VF_NONE:
        break;
    }
    return 0;
}

/* Antiderivative of a steps() function, anchored at t[0]. The first value
 * extends to -infinity, so G is linear there. */
static double steps_antideriv(const struct valfn *f, double x)
{
    double g = 0;
    int i;
    if (f->n == 1 || x <= f->t[1])
        return f->v[0] * (x - f->t[0]);
    for (i = 0; i + 1 < f->n && x > f->t[i + 1]; i++)
        g += f->v[i] * (f->t[i + 1] - f->t[i]);
    return g + f->v[i] * (x - f->t[i]);
}

static double cycle_antideriv(const struct valfn *f, double x)
{
    double period = f->a * f->n, sum = 0, k, y, g;
    int i, whole;
    for (i = 0; i < f->n; i++)
        sum += f->v[i] * f->a;
    k = floor(x / period);
    y = x - k * period;
    whole = (int)floor(y / f->a);
    if (whole >= f->n) /* rounding at the period's end */
        whole = f->n - 1;
    g = k * sum;
    for (i = 0; i < whole; i++)
        g += f->v[i] * f->a;
    return g + f->v[whole] * (y - whole * f->a);
}

double valfn_integral(const struct valfn *f, double t)
{
    switch (f->kind) {
    case VF_CONST:
        return f->a * t;
    case VF_WAVE: {
        double w = TWO_PI / f->c;
        return f->a * t - f->b / w * (cos(w * (t + f->d)) - cos(w * f->d));
    }
    case VF_RAMP: {
        double ts = ramp_saturation(f);
        if (t <= 0)
            return f->a * t;
        if (t <= ts)
            return f->a * t + f->b * t * t / 2;
        return f->a * ts + f->b * ts * ts / 2 + f->c * (t - ts);
    }
    case VF_STEPS:
        return steps_antideriv(f, t) - steps_antideriv(f, 0);
    case VF_CYCLE:
        return cycle_antideriv(f, t) - cycle_antideriv(f, 0);
    case VF_NAN:
        return NAN;
    case VF_UNSET:
    case VF_NONE:
        break;
    }
    return 0;
}

void valfn_range(const struct valfn *f, double *lo, double *hi)
{
    int i;
    switch (f->kind) {
    case VF_CONST:
        *lo = *hi = f->a;
        return;
    case VF_WAVE:
        *lo = f->a - fabs(f->b);
        *hi = f->a + fabs(f->b);
        return;
    case VF_RAMP: {
        double end = f->has_limit ? f->c : (f->b > 0 ? HUGE_VAL : -HUGE_VAL);
        if (f->b == 0)
            end = f->a;
        *lo = fmin(f->a, end);
        *hi = fmax(f->a, end);
        return;
    }
    case VF_STEPS:
    case VF_CYCLE:
        *lo = *hi = f->v[0];
        for (i = 1; i < f->n; i++) {
            *lo = fmin(*lo, f->v[i]);
            *hi = fmax(*hi, f->v[i]);
        }
        return;
    case VF_UNSET:
    case VF_NONE:
    case VF_NAN:
        break;
    }
    *lo = *hi = 0;
}

bool valfn_nondecreasing(const struct valfn *f)
{
    int i;
    switch (f->kind) {
    case VF_CONST:
    case VF_UNSET:
    case VF_NONE:
        return true;
    case VF_WAVE:
        return f->b == 0;
    case VF_RAMP:
        return f->b >= 0;
    case VF_STEPS:
        for (i = 1; i < f->n; i++)
            if (f->v[i] < f->v[i - 1])
                return false;
        return true;
    case VF_CYCLE:
        for (i = 1; i < f->n; i++)
            if (f->v[i] != f->v[0])
                return false;
        return true;
    case VF_NAN:
        break;
    }
    return false;
}
