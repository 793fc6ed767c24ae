/*
 * cpu.h — per-core and total CPU busy % from /proc/stat.
 *
 * Pure functions over a buffer: cpu_parse_stat() turns the text of /proc/stat
 * into jiffy counters, cpu_deltas() turns two such parses into percentages.
 * Reading the file, keeping the previous parse and owning the storage is the
 * caller's job (system/host.c), so the fuzzer and the tests call these
 * directly.
 */
#ifndef MIGMON_CPU_H
#define MIGMON_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/model.h"

/* Core ids at or above this are rejected as absurd: it is the largest NR_CPUS
 * a mainline kernel can be built with (x86-64 CONFIG_MAXSMP). It also bounds
 * the storage a caller ever needs: ids are strictly ascending, so there are at
 * most CPU_MAX_ID core lines. */
#define CPU_MAX_ID 8192

/* The counters of one "cpu" or "cpuN" line, folded the way htop folds them:
 *   busy = user + nice + system + irq + softirq + steal
 *   idle = idle + iowait
 * guest and guest_nice are not added: the kernel already counts them in user
 * and nice. */
struct cpu_times {
    int id;  /* N of "cpuN"; -1 for the aggregate "cpu" line */
    bool ok; /* false: the line was malformed, busy/idle are meaningless */
    uint64_t busy;
    uint64_t idle;
};

struct cpu_stat {
    struct cpu_times total;  /* total.ok is false when the "cpu" line is missing or bad */
    bool total_seen;         /* a "cpu" line was present (bad or not) */
    struct cpu_times *cores; /* borrowed storage for cap entries, filled in ascending id */
    size_t cap;
    size_t ncores; /* entries written, at most cap */
    size_t needed; /* core lines found; more than cap means the storage was too small
                    * and the caller should grow it and parse the same buffer again */
};

/*
 * Parse the text of /proc/stat. The caller sets st->cores and st->cap; every
 * other field is overwritten. Only complete lines (ending in '\n') count: a
 * read cut short leaves a fragment that could hold a truncated number. Core
 * lines must come in strictly ascending id order, as the kernel prints them;
 * a line whose id is not above the previous one is ignored. Never fails:
 * anything unparsable is marked !ok or skipped.
 */
void cpu_parse_stat(const char *buf, size_t len, struct cpu_stat *st);

/* Busy % of cur relative to prev (0..100), or none with the reason. */
struct metric cpu_busy_pct(const struct cpu_times *prev, const struct cpu_times *cur);

/*
 * Percentages for the total and for every entry of cur->cores (pct must hold
 * cur->ncores metrics, parallel to cur->cores). prev == NULL means this is
 * the first sample: everything is none. A core absent from prev (offline at
 * the previous sample, or beyond prev's storage) is none.
 */
void cpu_deltas(const struct cpu_stat *prev, const struct cpu_stat *cur, struct metric *total,
                struct metric *pct);

#endif
