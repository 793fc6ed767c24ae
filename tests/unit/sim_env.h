/*
 * sim_env.h — point the NVML simulator at a scenario of sim/scenarios/ on a
 * fixed simulated clock, for the unit tests that drive the collector.
 * Header-only (static): each test file gets its own copy.
 */
#ifndef MIGMON_TEST_SIM_ENV_H
#define MIGMON_TEST_SIM_ENV_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* simtime: MIGMON_SIM_TIME, "T0" or "T0+STEP" */
static void use_scenario(const char *name, const char *simtime)
{
    static char scen[PATH_MAX];
    const char *src = getenv("MIGMON_SRC");
    assert_non_null(src);
    snprintf(scen, sizeof(scen), "%s/sim/scenarios/%s", src, name);
    setenv("MIGMON_SIM_SCENARIO", scen, 1);
    setenv("MIGMON_SIM_TIME", simtime, 1);
}

#endif
