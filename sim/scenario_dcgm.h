/*
 * scenario_dcgm.h — a scenario's [dcgm] section: the DCGM set-up of the
 * simulated node, which only the simulated libdcgm reads (sim/dcgm/). Keys
 * and meanings: docs/simulator.md, "Simulated DCGM".
 */
#ifndef SIM_SCENARIO_DCGM_H
#define SIM_SCENARIO_DCGM_H

#include <stdbool.h>
#include <stddef.h>

enum sim_dcgm_engine { SIM_DCGM_HE_NONE, SIM_DCGM_HE_UNIX, SIM_DCGM_HE_TCP };
enum sim_dcgm_embedded {
    SIM_DCGM_EMB_OK,
    SIM_DCGM_EMB_REQUIRES_ROOT,
    SIM_DCGM_EMB_PROFILING_HELD,
    SIM_DCGM_EMB_MODULE_NOT_LOADED,
};
enum sim_dcgm_hang {
    SIM_DCGM_HANG_NONE,
    SIM_DCGM_HANG_CONNECT,
    SIM_DCGM_HANG_WATCH,
    SIM_DCGM_HANG_READ
};

/* All zero is the default: no host engine, embedded mode works, one pass. */
struct sim_dcgm {
    enum sim_dcgm_engine hostengine;
    char he_path[108]; /* HE_UNIX: the socket path (sun_path holds 108 bytes) */
    char he_host[64];  /* HE_TCP */
    unsigned he_port;  /* HE_TCP */
    bool down;         /* the host engine is gone for down_from <= t < down_until */
    double down_from, down_until;
    int embedded; /* enum sim_dcgm_embedded */
    bool multi_pass;
    int hang;          /* enum sim_dcgm_hang */
    double hang_after; /* the hang applies from t >= hang_after */
};

/* Applies one key of [dcgm]: 0, or -1 with "[dcgm] KEY: what" in err. */
int scenario_dcgm_key(struct sim_dcgm *d, const char *name, const char *value, char *err,
                      size_t errlen);

#endif
