/*
 * prom.h — a snapshot as a Prometheus text exposition (format 0.0.4), the
 * page `mig-gpu-mon export` serves on /metrics and `--once --format
 * prometheus` prints. Series, units and labels: docs/prometheus.md.
 */
#ifndef MIGMON_PROM_H
#define MIGMON_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "snapshot.h"

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct prom_opts {
    bool dcgm;      /* also the DCGM_FI_* series dcgm-exporter writes */
    bool processes; /* per-process series (pid labels: high cardinality) */
};

/* A growable text buffer. Owned by whoever declared it; prom_buf_free
 * releases it. A render reuses the capacity of the previous one, so a
 * render of a snapshot no bigger than the last allocates nothing. */
struct prom_buf {
    char *p; /* the page, NUL-terminated; len bytes */
    size_t len, cap;
    /* Scratch kept between renders: each device's escaped label sets. */
    char *lab;
    size_t lab_len, lab_cap;
    size_t *off;
    size_t off_cap;
};

/* Replace b's contents with the page for s. Returns 0, or -ENOMEM (b then
 * holds a truncated page that must not be served). */
int prom_render(struct prom_buf *b, const struct snapshot *s, const struct prom_opts *o);
void prom_buf_free(struct prom_buf *b);

/* Render and write to f. Returns 0, or -1 with errno set. */
int prom_write(FILE *f, const struct snapshot *s, const struct prom_opts *o);

/* A label value as the exposition format wants it: \\ \" \n escaped,
 * other control characters and invalid UTF-8 replaced by '?', so the page
 * stays valid UTF-8 whatever the driver returned. Writes at most outlen-1
 * bytes and a NUL; returns the length written. */
size_t prom_escape_label(const char *v, char *out, size_t outlen);

#endif
