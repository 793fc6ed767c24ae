/*
 * gpm_rates.c — the scenario's activity rates per entity and interval. See
 * gpm_rates.h.
 */
#include "gpm_rates.h"

#include <math.h>

#include "scenario.h"

/* A weighted sum of rate functions, each counted only while its device exists. */
struct agg {
    double t1, t2;
    double sum;
    bool none, nan;
};

/* Adds w × (the mean of f over [t1, t2] ∩ [from, until)), normalised by the
 * whole interval: a device absent for part of it counts as idle then. With
 * t1 == t2 (a fixed clock), the value at t1. */
static void agg_add(struct agg *a, const struct valfn *f, double w, double from, double until)
{
    double lo = fmax(a->t1, from), hi = fmin(a->t2, until);
    if (a->t2 > a->t1 ? !(lo < hi) : !(from <= a->t1 && a->t1 < until))
        return;
    if (f->kind == VF_NAN) {
        a->nan = true;
        return;
    }
    if (!valfn_supported(f)) {
        a->none = true;
        return;
    }
    if (a->t2 > a->t1)
        a->sum += w * (valfn_integral(f, hi) - valfn_integral(f, lo)) / (a->t2 - a->t1);
    else
        a->sum += w * valfn_eval(f, a->t1);
}

/* The GPU's slices: those of its largest profile (7 on A100/H100/H200). */
static unsigned gpu_slices(const struct sim_gpu *g)
{
    unsigned n = 1;
    for (unsigned p = 0; p < g->profiles->n; p++)
        if (g->profiles->profiles[p].slices > n)
            n = g->profiles->profiles[p].slices;
    return n;
}

/*
 * The value of one rate of the entity over [t1, t2]. MIG devices
 * are compute instances; their rates are % of their own capacity, so
 *   GI  = Σ rate_ci × ci_slices / gi_slices   (its CIs)
 *   GPU = Σ rate_gi × gi_slices / gpu_slices  = Σ rate_ci × ci_slices / gpu_slices
 * and a CI's DRAM bandwidth is its GI's (memory belongs to the GI).
 */
nvmlReturn_t gpm_rate_mean(const struct gpm_target *s, int rate, double t1, double t2,
                           double *out)
{
    const struct sim_gpu *g = &sim_scn->gpus[s->gpu];
    struct agg a = {.t1 = t1, .t2 = t2};
    if (rate >= SIM_GPM_N_UTIL && s->kind != GPM_GPU)
        return NVML_ERROR_NOT_SUPPORTED; /* PCIe and NVLink are per GPU */
    if (rate >= SIM_GPM_N_UTIL || g->mig_mode != SIM_MIG_ON) {
        agg_add(&a, &g->gpm[rate], 1.0, -HUGE_VAL, HUGE_VAL);
    } else if (s->kind == GPM_CI && rate != SIM_GPM_DRAM_BW) {
        const struct sim_mig *m = &sim_scn->migs[s->mig];
        agg_add(&a, &m->gpm[rate], 1.0, m->from, m->until);
    } else {
        for (int i = 0; i < sim_scn->n_migs; i++) {
            const struct sim_mig *m = &sim_scn->migs[i];
            double w;
            if (m->gpu != s->gpu)
                continue;
            if (s->kind == GPM_GPU) {
                w = (double)m->ci_slices / gpu_slices(g);
            } else {
                if (m->gi != s->gi)
                    continue;
                w = (double)m->ci_slices / m->profile->slices;
            }
            agg_add(&a, &m->gpm[rate], w, m->from, m->until);
        }
    }
    if (a.none)
        return NVML_ERROR_NOT_SUPPORTED;
    *out = a.nan ? NAN : a.sum;
    return NVML_SUCCESS;
}
