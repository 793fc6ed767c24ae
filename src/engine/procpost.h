/*
 * procpost.h — process post-processing after the backend: sort, --top,
 * /proc facts, bounded carry-forward of failed lists. Owned by the
 * collector (one thread); all buffers grow only, so a steady tick
 * allocates nothing.
 */
#ifndef MIGMON_PROCPOST_H
#define MIGMON_PROCPOST_H

#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"
#include "system/procinfo.h"

/* Ticks a failed process list is replaced by the previous one (only its
 * processes that still exist with the same start time) before it is dropped. */
#define PROCPOST_CARRY_TICKS 3

/* One device's shown processes, kept for the next tick's carry-forward. */
struct procpost_list {
    char uuid[MIGMON_UUID_LEN];
    size_t first, n;   /* range in prev */
    unsigned carried;  /* consecutive ticks this list has been carried */
};

struct procpost {
    struct procinfo *pinfo; /* borrowed for one procpost_run */
    unsigned top;
    /* this tick's shown lists, the previous tick's, sort scratch */
    struct gpu_process *pbuf, *prev;
    size_t pbuf_cap, nprev, prev_cap;
    struct procpost_list *plists, *prev_plists;
    size_t plists_cap, nprev_plists, prev_plists_cap;
    uint32_t *order;
    size_t order_cap;
};

/* Per device of s: the list the backend read (sorted, cut to top, 0 = all)
 * or, where the read failed, the carried previous list; /proc facts (pinfo
 * may be NULL) for what is shown. */
void procpost_run(struct procpost *c, struct procinfo *pinfo, unsigned top, struct snapshot *s);
void procpost_free(struct procpost *c);
/* Processes of s seen from here for the first time: their CPU % is not
 * known yet (it is a delta between two reads of /proc/PID/stat). */
size_t procpost_first_sight(const struct snapshot *s);
/* A second read of those processes' /proc/PID/stat at now_ns
 * (CLOCK_MONOTONIC): their CPU % over the time since the tick, and the RSS
 * read with it (a one-shot snapshot waits a moment, then calls it). A
 * process that exited or whose PID was reused keeps what the tick read. */
void procpost_second_look(struct procinfo *pinfo, struct snapshot *s, uint64_t now_ns);

#endif
