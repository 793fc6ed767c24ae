/*
 * scenario_check.h — cross-field defaults and checks of a parsed scenario
 * (scenario_check.c), run by scenario_load once every section is read.
 */
#ifndef SIM_SCENARIO_CHECK_H
#define SIM_SCENARIO_CHECK_H

#include <stddef.h>

#include "scenario.h"

/* Fills the defaults and checks the scenario as a whole; 0, or -1 with a
 * message in err. */
int scenario_finish(struct sim_scenario *s, const char *driver_override, char *err,
                    size_t errlen);
/* The CUDA version a driver branch ships (535 -> 12020). */
int scenario_default_cuda(sim_version_t drv);

#endif
