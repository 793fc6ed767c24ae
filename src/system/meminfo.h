/*
 * meminfo.h — RAM and swap from /proc/meminfo, with htop's definitions.
 *
 * meminfo_parse() picks the raw kB counters out of the text; meminfo_derive()
 * turns them into byte metrics. Both are pure; system/host.c reads the file.
 * The formulas and why they are htop's are in docs/host-metrics.md.
 */
#ifndef MIGMON_MEMINFO_H
#define MIGMON_MEMINFO_H

#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h" /* struct mem_metrics */

/* The /proc/meminfo lines we use. */
enum meminfo_field {
    MI_MEM_TOTAL,
    MI_MEM_FREE,
    MI_MEM_AVAILABLE, /* since Linux 3.14 */
    MI_BUFFERS,
    MI_CACHED,
    MI_SRECLAIMABLE, /* since 2.6.19 */
    MI_SHMEM,        /* since 2.6.32 */
    MI_SWAP_TOTAL,
    MI_SWAP_FREE,
    MI_COUNT
};

enum meminfo_state {
    MI_ABSENT = 0, /* no such line */
    MI_OK,
    MI_BAD, /* present but unparsable, absurd, or present twice */
};

/* Values above this many kB (8 PiB, 2^53 bytes) are rejected as absurd: every
 * byte count below it is exact in the double of a struct metric. */
#define MEMINFO_MAX_KB (UINT64_C(1) << 43)

struct meminfo_raw {
    uint64_t kb[MI_COUNT];
    enum meminfo_state state[MI_COUNT];
};

/* Parse the text of /proc/meminfo. Only complete lines ("Key: N kB\n") count;
 * unknown keys are skipped. Never fails. */
void meminfo_parse(const char *buf, size_t len, struct meminfo_raw *out);

/* Derive the byte metrics. Every value that is not none lies in
 * [0, MEMINFO_MAX_KB * 1024]; memory parts never exceed total and
 * used + cached + buffers + free == total whenever all five are known. */
void meminfo_derive(const struct meminfo_raw *raw, struct mem_metrics *out);

/* Mark every metric none with the same reason (file unreadable). */
void meminfo_none(struct mem_metrics *out, const char *why);

#endif
