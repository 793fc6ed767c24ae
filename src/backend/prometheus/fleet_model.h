/*
 * fleet_model.h — a fleet as read from Prometheus: its nodes (scrape
 * targets) and their devices in the device model, with the processes on
 * them. Built by fleet_build_* (prom_fleet.h) and its readers
 * (prom_fleet_int.h); read by the Prometheus backend.
 */
#ifndef MIGMON_FLEET_MODEL_H
#define MIGMON_FLEET_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/prometheus/prom_query.h"
#include "core/model.h"

struct fleet_node {
    char instance[128]; /* the target's instance label */
    char name[64];      /* what the screen calls it (struct device.node) */
    int up;             /* 1, 0 (down), -1 not in up's answer */
    double last_sample; /* Unix time of its exporter's last sample; 0 unknown */
    unsigned ngpus, nmig;
    bool procs; /* its exporter wrote migmon_process_* series (--export-processes) */
    /* why a detail query failed for it (borrowed), NULL when it answered */
    const char *why[PD_COUNT];
    size_t dev_first, ndev; /* its devices in devs */
};

struct fleet {
    struct fleet_node *nodes;
    size_t nnodes;
    struct device *devs; /* in node, GPU, instance order; node set */
    size_t ndevs;
    /* the processes on devs, grouped as devs (device.proc_first, nprocs);
     * a PID is its node's: local_pid is -1, no host facts */
    struct gpu_process *procs;
    size_t nprocs;
    /* where each device of devs is read: its node in nodes, and whether
     * from dcgm-exporter's DCGM_FI_* series (else migmon_*) */
    struct fleet_src {
        unsigned node;
        bool dcgm;
    } *src;
    /* metric.why and device.uuid_why of devs and procs are static strings
     * or the nodes' why (borrowed) */
    /* devices the build did not hold (past its max_devices) */
    size_t capped;
};

#endif
