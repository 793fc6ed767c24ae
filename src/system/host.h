/*
 * host.h — one sample of the host: CPUs, RAM, swap, load, uptime, name
 * (struct host_sample, in core/snapshot.h: the vocabulary has it).
 *
 * Reads <proc_root>/{stat,meminfo,loadavg,uptime}, each with one pread() into
 * a buffer owned by struct host; after the first sample or two (which size
 * the buffers) a sample allocates nothing. Definitions are in
 * docs/host-metrics.md.
 */
#ifndef MIGMON_HOST_H
#define MIGMON_HOST_H

#include <stddef.h>

#include "core/snapshot.h" /* struct host_sample, what a sample fills */

struct host;

/* proc_root: a directory laid out like /proc (NULL means "/proc"). Fails when
 * it is not a directory or has neither stat nor meminfo. Returns 0 or a
 * negative errno value with a one-line message in err. */
int host_open(struct host **out, const char *proc_root, char *err, size_t errlen);

/* Fill out. Whatever cannot be read is none in out, so out is always usable;
 * CPU percentages are deltas since the previous call (none on the first).
 * Returns 0, or -ENOMEM when growing a buffer failed (the metrics that needed
 * it are none). */
int host_sample(struct host *h, struct host_sample *out);

void host_close(struct host *h);

#endif
