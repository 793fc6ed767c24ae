/*
 * prom.h — a snapshot as a Prometheus text exposition (format 0.0.4), the
 * page `mig-gpu-mon export` serves on /metrics and `--once --format
 * prometheus` prints. Series, units and labels: docs/prometheus.md. The
 * page's buffer (struct prom_buf, prom_buf_free) and label escaping are
 * in prom_text.h.
 */
#ifndef MIGMON_PROM_H
#define MIGMON_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/snapshot.h"
#include "export/prom_text.h"

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct prom_opts {
    bool dcgm;      /* also the DCGM_FI_* series dcgm-exporter writes */
    bool processes; /* per-process series (pid labels: high cardinality) */
    bool no_host;   /* no migmon_host_* series (another page on the node has them) */
    /* Borrowed: the kubelet's device holders for the pod, namespace and
     * container labels (system/podres.h); NULL: none. */
    const struct podres_list *pods;
    /* Borrowed: the pods the kubelet's log directories name, for the pod
     * and namespace of a process whose cgroup gives its pod's UID; NULL. */
    const struct podres_list *pod_logs;
};

/* Replace b's contents with the page for s. Returns 0, or -ENOMEM (b then
 * holds a truncated page that must not be served). */
int prom_render(struct prom_buf *b, const struct snapshot *s, const struct prom_opts *o);

/* Render and write to f. Returns 0, or -1 with errno set. */
int prom_write(FILE *f, const struct snapshot *s, const struct prom_opts *o);

#endif
