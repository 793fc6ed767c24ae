/*
 * prom_text.h — the text of a Prometheus exposition (prom_text.c): the
 * page's growable buffer, label escaping, and the writer that prom.c (the
 * migmon_* series) and prom_dcgm.c (dcgm-exporter's) put their families
 * and samples through. Format 0.0.4.
 */
#ifndef MIGMON_PROM_TEXT_H
#define MIGMON_PROM_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"

struct podres_list;

#define PROM_GAUGE "gauge"
#define PROM_COUNTER "counter"

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

void prom_buf_free(struct prom_buf *b);

/* A label value as the exposition format wants it: \\ \" \n escaped,
 * other control characters and invalid UTF-8 replaced by '?', so the page
 * stays valid UTF-8 whatever the driver returned. Writes at most outlen-1
 * bytes and a NUL; returns the length written. */
size_t prom_escape_label(const char *v, char *out, size_t outlen);

/* Each device's label sets, one of each kind, and an offset marking a set
 * that is left out (it repeats an earlier device's). PROC is MIGMON's
 * without the device's pod labels, for process series, which name the
 * process's own pod. */
enum { PROM_LAB_MIGMON, PROM_LAB_DCGM, PROM_LAB_PROC, PROM_LAB_N };
#define PROM_NO_LABELS SIZE_MAX

/* One render: the page being written and the family whose header is due. */
struct prom_ctx {
    struct prom_buf *b;
    const struct snapshot *s;
    bool oom;
    char name[96];
    const char *type, *help;
    bool header_done;
    bool any_label; /* the open sample has written '{' */
    const struct podres_list *pods; /* borrowed: who holds which device (prom_pods.h), or NULL */
    const struct podres_list *pod_logs; /* borrowed: pods by UID (prom_pods.h), or NULL */
};

/* ---- families and samples ---- */

/* The family the next samples belong to; its HELP and TYPE lines are
 * written before its first sample, and not at all without one. */
void prom_family(struct prom_ctx *c, const char *name, const char *type, const char *help);
void prom_sample_open(struct prom_ctx *c);
/* Labels already escaped: `k="v",k="v"` (may be ""). */
void prom_label_raw(struct prom_ctx *c, const char *labels);
void prom_label(struct prom_ctx *c, const char *k, const char *v);
void prom_sample_close(struct prom_ctx *c, double v);
/* A sample with the labels given and nothing else. */
void prom_sample_plain(struct prom_ctx *c, const char *labels, double v);
/* A metric's value times scale, with its source; nothing when none. */
void prom_sample_metric(struct prom_ctx *c, const char *labels, const struct metric *m,
                        double scale);

/* ---- label sets in the buffer's scratch ---- */

/* Append `k="v"` (escaped) to the label scratch; first: no comma before. */
void prom_lab_add(struct prom_ctx *c, bool *first, const char *k, const char *v);
/* The same for a number; a negative one (unknown) is written "". */
void prom_lab_add_int(struct prom_ctx *c, bool *first, const char *k, int v);
/* End the set being added to (a NUL). */
void prom_lab_end(struct prom_ctx *c);
/* The device's label set of kind k, or NULL when it is left out. */
const char *prom_labels_of(const struct prom_ctx *c, size_t i, int k);

#endif
