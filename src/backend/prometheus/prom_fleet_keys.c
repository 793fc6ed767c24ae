/*
 * prom_fleet_keys.c — how a fleet's devices are named while the answers
 * are read (prom_fleet_int.h): a device's key from a series' labels, the
 * table of keys, the source a series' label names. Shared by the reader
 * of the instant queries (prom_fleet.c), of the processes
 * (prom_fleet_procs.c) and of the range query (prom_past.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backend/prometheus/prom_fleet_int.h"

uint64_t fleet_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

struct device *fleet_find(struct build *b, const char *key)
{
    if (!b->nslots)
        return NULL;
    for (size_t at = fleet_hash(key) % b->nslots; b->slot[at] != SIZE_MAX; at = (at + 1) % b->nslots)
        if (strcmp(b->keys[b->slot[at]], key) == 0)
            return &b->f->devs[b->slot[at]];
    return NULL;
}

void fleet_key_gpu(char *k, size_t n, const char *inst, const char *uuid)
{
    snprintf(k, n, "g\x1f%.100s\x1f%.100s", inst, uuid);
}

/* An NVIDIA MIG device by its GPU and compute instance ids, an AMD
 * partition by its partition_id (the exporter writes one or the other). */
void fleet_key_mig(char *k, size_t n, const struct prom_item *it)
{
    snprintf(k, n, "m\x1f%.100s\x1f%.90s\x1f%.8s\x1f%.8s\x1f%.8s", fleet_lab(it, "instance"),
             fleet_lab(it, "uuid"), fleet_lab(it, "gpu_instance_id"),
             fleet_lab(it, "compute_instance_id"), fleet_lab(it, "partition_id"));
}

void fleet_key_of(char *k, size_t n, const struct prom_item *it, bool mig)
{
    if (mig)
        fleet_key_mig(k, n, it);
    else
        fleet_key_gpu(k, n, fleet_lab(it, "instance"), fleet_lab(it, "uuid"));
}

enum metric_source fleet_source_of(const char *s)
{
    if (!strcmp(s, "gpm"))
        return MSRC_GPM;
    if (!strcmp(s, "process"))
        return MSRC_PROCESS;
    if (!strcmp(s, "estimate"))
        return MSRC_ESTIMATE;
    if (!strcmp(s, "carried"))
        return MSRC_CARRIED;
    if (!strcmp(s, "dcgm"))
        return MSRC_DCGM;
    return MSRC_DIRECT; /* "direct"; series with no source are read directly too */
}
