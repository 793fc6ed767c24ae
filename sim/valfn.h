/*
 * valfn.h — the simulator's value functions: a metric as a deterministic
 * function of the simulated time t (seconds since the nvmlInit that loaded
 * the scenario). Written in scenario files as
 *
 *   42                                constant
 *   wave(base, amplitude, period_s[, phase_s])
 *                                     base + amplitude * sin(2π (t + phase) / period)
 *   ramp(start, rate_per_s[, limit])  start + rate * t, held at limit once reached
 *   steps(t0:v0, t1:v1, ...)          v_i from t_i on; v0 before t0 too
 *   cycle(dwell_s, v0, v1, ...)       each value for dwell_s seconds, repeating
 *   none                              the quantity does not exist (NOT_SUPPORTED,
 *                                     or NVML_VALUE_NOT_AVAILABLE for process memory)
 *   nan                               only where a key allows it (GPM metrics): the
 *                                     quantity exists but reads as NaN
 *
 * Negative t (samples taken before init) is allowed: ramps and steps hold
 * their first value, waves and cycles continue.
 */
#ifndef SIM_VALFN_H
#define SIM_VALFN_H

#include <stdbool.h>
#include <stddef.h>

#define VALFN_MAX_POINTS 16

enum valfn_kind {
    VF_UNSET = 0, /* not given in the scenario: a default applies */
    VF_NONE,      /* "none": unsupported / not available */
    VF_NAN,       /* "nan": supported, but the value is NaN (valfn_set_nan; not parsed) */
    VF_CONST,
    VF_WAVE,
    VF_RAMP,
    VF_STEPS,
    VF_CYCLE,
};

struct valfn {
    enum valfn_kind kind;
    int n;          /* points of steps(), values of cycle() */
    bool has_limit; /* ramp() */
    /* const: a. wave: base a, amplitude b, period c, phase d.
     * ramp: start a, rate b, limit c. cycle: dwell a. */
    double a, b, c, d;
    double t[VALFN_MAX_POINTS];
    double v[VALFN_MAX_POINTS];
};

/* Parses text into *f. Returns 0, or -1 with a message in err. */
int valfn_parse(struct valfn *f, const char *text, char *err, size_t errlen);
void valfn_set_const(struct valfn *f, double v);
/* A function that is NaN everywhere. valfn_parse never produces it: a key
 * that allows "nan" (the GPM metrics) sets it. It has no range (0..0 for
 * valfn_range) and its integral is NaN. */
void valfn_set_nan(struct valfn *f);

double valfn_eval(const struct valfn *f, double t);
/* The integral of f from 0 to t (negative for t < 0), in closed form, so
 * energy = integral of power is exact and independent of the call pattern. */
double valfn_integral(const struct valfn *f, double t);
/* The smallest and largest value f takes over all t (±HUGE_VAL if unbounded). */
void valfn_range(const struct valfn *f, double *lo, double *hi);
bool valfn_nondecreasing(const struct valfn *f);

static inline bool valfn_supported(const struct valfn *f)
{
    return f->kind > VF_NONE;
}

#endif
