/*
 * prom_past.h — a fleet device's chart series over the chart's window,
 * from one Prometheus range query (/api/v1/query_range): the query, and
 * the series built from its answer (a matrix).
 *
 * Pure: the answer in, points out; no I/O (prom_backend.c runs the query
 * in a thread of its own). The series and label matching are the instant
 * queries' (prom_fleet.c, docs/fleet.md): our exporter's migmon_* series,
 * or dcgm-exporter's DCGM_FI_* for a node that has only those.
 */
#ifndef MIGMON_PROM_PAST_H
#define MIGMON_PROM_PAST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/history.h"

/* Prometheus refuses a range query of more than 11,000 points a series. */
#define PROM_PAST_MAX_POINTS 11000u
/* MIG instances of one GPU summed into its VRAM chart, at the most. */
#define PROM_PAST_MAX_INSTANCES 64

/* The device whose past is asked for, as the fleet read it. */
struct past_dev {
    char instance[128];        /* its target's instance label */
    char uuid[MIGMON_UUID_LEN]; /* its GPU's UUID (a MIG instance's parent's) */
    int gi, ci;                /* a MIG instance's GPU / compute instance ids; -1: a GPU */
    bool dcgm;                 /* read from DCGM_FI_* (else migmon_*) */
    bool mig_enabled;          /* a GPU with instances: its VRAM may be their sum */
};

/* The points asked for: n, step_ms apart, the first at start_ms (Unix
 * time, milliseconds). */
struct past_grid {
    int64_t start_ms;
    unsigned step_ms;
    size_t n;
};

/* The grid of `points` points (at most PROM_PAST_MAX_POINTS) step_ms
 * apart whose last is at end_ms. */
struct past_grid prom_past_grid(int64_t end_ms, unsigned step_ms, size_t points);

/* The range query of d's chart series into out (cap bytes), label values
 * quoted (promql_quote). 0, or -1 when it does not fit or d cannot be
 * named (a migmon_* MIG instance without its ids, no UUID). */
int prom_past_query(char *out, size_t cap, const struct past_dev *d);

/*
 * p (initialised here, n = g->n; the caller frees it: hist_past_free) from
 * the matrix res answered to d's query over g: GPU (or instance)
 * utilisation with the series' source, memory bandwidth utilisation, VRAM
 * used (a MIG-enabled GPU without its own: the sum of its instances', at
 * a point where every one has a value), temperature, power and the SM and
 * memory clocks, as the instant queries read them. A point is placed at
 * its timestamp's place on the grid (one off the grid by more than a
 * millisecond is dropped, as is a value that is not a finite number); a
 * place without a point stays a gap. 0, or -1 with one line in err (res is
 * not an array, out of memory).
 */
int prom_past_build(struct hist_past *p, json_t *res, const struct past_dev *d,
                    const struct past_grid *g, char *err, size_t errlen);

#endif
