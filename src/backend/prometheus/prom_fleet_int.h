/*
 * prom_fleet_int.h — what prom_fleet.c (nodes, devices, values),
 * prom_fleet_procs.c (the processes on them) and prom_fleet_keys.c (the
 * devices' keys, the labels' sources) share while one fleet is built; the
 * range query's reader (prom_past.c) uses the label and value helpers.
 * Not for other modules: prom_fleet.h is the interface.
 */
#ifndef MIGMON_PROM_FLEET_INT_H
#define MIGMON_PROM_FLEET_INT_H

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "backend/prometheus/fleet_model.h"
#include "backend/prometheus/prom_stream.h"

/* A device's processes kept from Prometheus at most: the exporter writes
 * its --top (16 by default) per device; more are dropped here. */
#define FLEET_PROCS_PER_DEVICE 64
/* and a build's processes in all (about 1 KiB each), whatever the answer */
#define FLEET_PROCS_MAX 65536

#define FLEET_KEY_LEN 224

struct build {
    struct fleet *f;
    struct fleet fleet; /* what is built (f points here until finish) */
    size_t max_devices;
    size_t ncap, dcap;
    /* nodes by instance, open addressing over nnslots (ncap*2) slots;
     * whether each node has our migmon_* devices (dcgm-exporter's of the
     * same target are then not read) */
    size_t *nslot;
    size_t nnslots;
    bool *nmigmon;
    int *dnode;        /* node of each device */
    unsigned *dnprocs; /* processes kept on each device */
    /* devices by key, open addressing over dcap*2 slots */
    char (*keys)[FLEET_KEY_LEN];
    size_t *slot;
    size_t nslots;
    /* processes (prom_fleet_procs.c): procs[i] is on device pdev[i], an
     * index into f->devs before they are put in order; by device and PID
     * over pslots */
    struct gpu_process *procs;
    size_t *pdev;
    size_t nprocs, pcap;
    size_t *pslot;
    size_t npslots;
    bool nomem;
};

/* Label k of a series; "" when it has none. */
static inline const char *fleet_lab(const struct prom_item *it, const char *k)
{
    return prom_item_label(it, k);
}

/* Label k of a range query's series (a JSON item, prom_past.c). */
static inline const char *fleet_jlab(json_t *item, const char *k)
{
    const char *v = json_string_value(json_object_get(json_object_get(item, "metric"), k));
    return v ? v : "";
}

/* A sample's value as Prometheus writes it (a string); false when it is
 * none or not a finite number. */
static inline bool fleet_num(json_t *str, double *out)
{
    const char *v = json_string_value(str);
    if (!v)
        return false;
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end || !isfinite(d))
        return false;
    *out = d;
    return true;
}

/* The sample's value; false when it has none or it is not a number. */
static inline bool fleet_val(const struct prom_item *it, double *out)
{
    return prom_item_value(it, out);
}

uint64_t fleet_hash(const char *s);
/* The device of key, or NULL. */
struct device *fleet_find(struct build *b, const char *key);
/* The key of the device a migmon_* series is about: its instance's (mig:
 * by gpu_instance_id and compute_instance_id, an NVIDIA MIG device, or
 * partition_id, an AMD partition), else its GPU's (by uuid); both on the
 * series' target (instance). */
void fleet_key_of(char *k, size_t n, const struct prom_item *it, bool mig);
/* A GPU's key (its target and UUID); an instance's or partition's from
 * the labels of series it. */
void fleet_key_gpu(char *k, size_t n, const char *inst, const char *uuid);
void fleet_key_mig(char *k, size_t n, const struct prom_item *it);
/* The source a series' source label names. */
enum metric_source fleet_source_of(const char *s);

/* A migmon_process_* series into b's processes, on its device. */
void fleet_read_proc(struct build *b, const struct prom_item *it);
/*
 * After the devices are put in order (out[i] is device ord[i]): the
 * processes into f->procs grouped as out, each device's proc_first and
 * nprocs set; a down node's are dropped. The process counts of devices
 * whose processes were not to be had become none: their node's
 * why[PD_PROCS] (the processes query failed) or, where the node wrote no
 * process series, that reason. 0, or -1 out of memory.
 */
int fleet_place_procs(struct build *b, const size_t *ord, struct device *out, size_t n);
void fleet_free_procs(struct build *b);

#endif
