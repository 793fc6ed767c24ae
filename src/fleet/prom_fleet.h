/*
 * prom_fleet.h — a fleet's devices from the answers of a few Prometheus
 * queries: our exporter's migmon_* series and dcgm-exporter's DCGM_FI_*.
 *
 * Pure: the answers in, devices out; no I/O (prom_backend.c runs the
 * queries). docs/fleet.md lists the queries and the series they read.
 * The processes are read in prom_fleet_procs.c.
 */
#ifndef MIGMON_PROM_FLEET_H
#define MIGMON_PROM_FLEET_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "fleet/fleet_model.h"

enum fleet_query {
    FQ_UP,          /* every target's up */
    FQ_IDENT,       /* migmon_*_info and last sample times, over the last 10 minutes */
    FQ_VALUES,      /* the migmon_* values, as they are now */
    FQ_DCGM_IDENT,  /* dcgm-exporter's devices, over the last 10 minutes */
    FQ_DCGM_VALUES, /* its values, as they are now */
    FQ_PROCS,       /* the migmon_process_* values, as they are now */
    FQ_COUNT
};

/* The queries, in enum fleet_query order; static strings. */
const char *fleet_query(enum fleet_query q);
/* Its short name for messages ("migmon_process_*"); a static string. */
const char *fleet_query_name(enum fleet_query q);

/*
 * res[q]: query q's result array, or NULL when it failed (why[q] says
 * why; values it would have given are none with that reason, which must
 * live as long as f: a static string or one the caller keeps). now: Unix
 * time. Returns 0, or -1 out of memory (f then empty).
 */
int fleet_build(struct fleet *f, json_t *const res[FQ_COUNT], const char *const why[FQ_COUNT],
                double now);
void fleet_free(struct fleet *f);

#endif
