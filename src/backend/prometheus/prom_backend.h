/*
 * prom_backend.h — the fleet backend (--prometheus URL): every node's GPUs
 * and MIG instances, read from Prometheus' query API in a thread of its
 * own (docs/fleet.md). Not in backend.c's registry: the public library
 * does not link libcurl; main names it to the collector.
 */
#ifndef MIGMON_PROM_BACKEND_H
#define MIGMON_PROM_BACKEND_H

#include "backend/backend.h"

extern const struct backend_ops prom_backend_ops;

#endif
