/*
 * prom_pods.h — the Kubernetes labels of a device's series (prom_pods.c):
 * pod, namespace and container of the one container the kubelet lists as
 * holding the device (system/podres.h), as dcgm-exporter writes them.
 * Called by prom.c where each device's label sets are made.
 */
#ifndef MIGMON_PROM_PODS_H
#define MIGMON_PROM_PODS_H

#include <stdbool.h>

#include "core/snapshot.h"
#include "export/prom_text.h"

/* d's pod, namespace and container into the label scratch (first: as
 * prom_lab_add's), from c->pods; nothing when no one container holds d,
 * and no label whose value is empty. */
void prom_pod_labels(struct prom_ctx *c, bool *first, const struct device *d);
/* The pod (and namespace) prom_pod_labels gives d; false when none. */
bool prom_pod_of(const struct prom_ctx *c, const struct device *d, const char **ns,
                 const char **pod);
/* The pod and namespace of the process series being written, whose
 * cgroup names pod UID uid, from c->pod_logs; nothing when they do not
 * name it. */
void prom_pod_process_labels(struct prom_ctx *c, const char *uid);

#endif
