/*
 * prom_dcgm.h — the series dcgm-exporter writes, under its names and
 * labels (prom_dcgm.c), for `--compat dcgm`: dashboards and alerts made for
 * dcgm-exporter read the same page. Called by prom.c.
 */
#ifndef MIGMON_PROM_DCGM_H
#define MIGMON_PROM_DCGM_H

#include "core/snapshot.h"
#include "export/prom_text.h"

/* Device d's dcgm-exporter label set (p: its GPU, d itself on a GPU;
 * host: the hostname, "" unknown) into the label scratch; the caller ends
 * the set. */
void prom_dcgm_labels(struct prom_ctx *c, const struct device *d, const struct device *p,
                      const char *host);
/* The node's name from NODE_NAME (Kubernetes' downward API), "" unset; read
 * once. */
const char *prom_node_name(void);
/* The DCGM_FI_* families, over the devices whose dcgm label set is not
 * left out. */
void prom_dcgm_write(struct prom_ctx *c);

#endif
