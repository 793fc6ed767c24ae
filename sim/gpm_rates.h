/*
 * gpm_rates.h — the activity the simulated hardware shows, per GPU, GPU
 * instance or compute instance, over an interval of simulated time: the
 * scenario's gpm_* rate functions aggregated the way the hardware counts
 * (gpm_rates.c). NVML's GPM (api_gpm.c) and the simulated DCGM both report
 * from here, so the two agree for the same entity and time.
 */
#ifndef SIM_GPM_RATES_H
#define SIM_GPM_RATES_H

#include "state.h"

enum gpm_entity { GPM_GPU, GPM_GI, GPM_CI };

struct gpm_target {
    enum gpm_entity kind;
    int gpu;
    long gi; /* GPM_GI, GPM_CI: the NVML GPU-instance id */
    int mig; /* GPM_CI: the compute instance, an index into sim_scn->migs */
};

/*
 * The mean of one rate (enum sim_gpm_rate) of e over [t1, t2], or its value
 * at t1 when t1 == t2, into *out (NaN where the scenario says nan).
 * NVML_ERROR_NOT_SUPPORTED where the scenario says none, and for the PCIe
 * and NVLink rates of anything but a whole GPU.
 */
nvmlReturn_t gpm_rate_mean(const struct gpm_target *e, int rate, double t1, double t2, double *out);

#endif
