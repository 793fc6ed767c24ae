/*
 * host.h — one sample of the host: CPUs, RAM, swap, load, uptime, name.
 *
 * Reads <proc_root>/{stat,meminfo,loadavg,uptime}, each with one pread() into
 * a buffer owned by struct host; after the first sample or two (which size
 * the buffers) a sample allocates nothing. Definitions are in
 * docs/host-metrics.md.
 */
#ifndef MIGMON_HOST_H
#define MIGMON_HOST_H

#include <stddef.h>

#include "core/model.h"
#include "system/meminfo.h"

#define HOST_NAME_LEN 256

struct host_core {
    int id;            /* N of cpuN; ids may be sparse */
    struct metric pct; /* busy % of this core since the previous sample */
};

struct host_sample {
    char hostname[HOST_NAME_LEN]; /* gethostname(); "" when unknown */
    int online;                   /* CPUs online now (cpuN lines of /proc/stat); -1 unknown */
    /* Online cores in ascending id; offline cores are not listed. Borrowed
     * from struct host: valid until the next host_sample() or host_close(). */
    size_t ncores;
    const struct host_core *cores;
    struct metric cpu_total;  /* busy % of all CPUs together, 0..100 */
    struct mem_metrics mem;   /* bytes: total, used, cached, buffers, free, available, swap */
    struct metric loadavg[3]; /* 1, 5 and 15 minute load averages */
    struct metric uptime_s;   /* seconds since boot */
};

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
