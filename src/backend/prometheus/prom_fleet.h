/*
 * prom_fleet.h — a fleet's devices from the answers of the detail queries
 * (prom_query.h's PD_*): our exporter's migmon_* series and
 * dcgm-exporter's DCGM_FI_*, of the nodes registered with the build.
 *
 * Pure: series in as they are read (prom_stream.h), devices out; no I/O
 * (prom_backend.c runs the queries). The answers of several pages of
 * nodes go into one build. Bounded whatever the answers: series of a node
 * not registered are not read, a build holds at most max_devices devices
 * (the rest are counted and said, fleet.capped) and FLEET_PROCS_PER_DEVICE
 * processes a device. docs/fleet.md lists the series read.
 * The processes are read in prom_fleet_procs.c.
 */
#ifndef MIGMON_PROM_FLEET_H
#define MIGMON_PROM_FLEET_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/prometheus/fleet_model.h"
#include "backend/prometheus/prom_query.h"
#include "backend/prometheus/prom_stream.h"

/* The devices one build holds at most: --once and record read every node
 * of a fleet into one (about 2.5 KiB a device: 80 MiB). A fleet past it is
 * read in part, and says so; --prometheus-match reads a part of it. */
#define FLEET_DEVICES_MAX 32768

struct build;

/* A build holding at most max_devices devices; NULL out of memory. */
struct build *fleet_build_new(size_t max_devices);
/*
 * A node whose devices are read: its instance label (its identity), the
 * name it is shown by, whether its target is up (1, 0 down, -1 unknown)
 * and its exporter's last sample (Unix seconds, 0 unknown). 0, or -1 out
 * of memory.
 */
int fleet_build_node(struct build *b, const char *instance, const char *name, int up,
                     double last_sample);
/* The nodes registered: how many, the k-th's instance, whether instance is one. */
size_t fleet_build_nnodes(const struct build *b);
const char *fleet_build_instance(const struct build *b, size_t k);
bool fleet_build_node_known(struct build *b, const char *instance);
/* Query q failed for the node of instance: what it would have given is
 * none with why (a string that lives as long as the fleet built). */
void fleet_build_node_why(struct build *b, const char *instance, enum promq_detail q,
                          const char *why);
/* One series of query q's answer (a prom_item_fn: always 0). */
int fleet_build_read(struct build *b, enum promq_detail q, const struct prom_item *it);
/* The devices in node order (nodes by name, a node's GPUs by index, each
 * followed by its instances), with their processes, into f (the caller's:
 * fleet_free). now: Unix time. 0, or -1 out of memory (f then empty). */
int fleet_build_finish(struct build *b, struct fleet *f, double now);
void fleet_build_free(struct build *b);
void fleet_free(struct fleet *f);

#endif
