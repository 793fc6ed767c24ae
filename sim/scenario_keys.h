/*
 * scenario_keys.h — the table-driven keys of a scenario's sections, for the
 * loader (scenario.c).
 */
#ifndef SIM_SCENARIO_KEYS_H
#define SIM_SCENARIO_KEYS_H

#include <stddef.h>

/* Which struct a section's keys fill: struct sim_gpu, sim_mig, sim_proc
 * or sim_fault (scenario.h). */
enum scenario_table {
    SCENARIO_KEYS_GPU,
    SCENARIO_KEYS_MIG,
    SCENARIO_KEYS_PROC,
    SCENARIO_KEYS_FAULT,
};

/* Applies name = value from table to obj, a struct of the table's type.
 * Returns 1 if applied, 0 on a bad value (one line naming [section] and
 * the key in err), -1 if the key is not in the table. */
int scenario_keys_apply(enum scenario_table table, void *obj, const char *section,
                        const char *name, const char *value, char *err, size_t errlen);

/* The index of a GPM key (sim_gpm_keys, scenario.h), or -1. */
int scenario_gpm_key_index(const char *name);

#endif
