/*
 * proctree.h — a process and every process under it, read from /proc: each
 * one's CPU time, its threads' wake-ups and its RSS, and a ledger of them
 * across a measured window (a process that starts or ends inside it
 * included). Linux only. The benchmarks' own; nothing is allocated, the
 * caller owns every struct.
 */
#ifndef MIGMON_BENCH_PROCTREE_H
#define MIGMON_BENCH_PROCTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROCTREE_MAX 64

/* One process as read once: its CPU time (ns, from its process CPU-time
 * clock: every thread, those that exited included), its threads' wake-ups,
 * its VmRSS (kB, -1 unread). start (stat's field 22, clock ticks since
 * boot) tells a PID reused within a window from the process it was. */
struct proctree_obs {
    pid_t pid;
    unsigned long long start;
    char label[16]; /* "main" for the root; a helper's mode ("gpm-helper") or comm */
    uint64_t ns;
    uint64_t wakes;
    long rss_kb;
    long pss_kb; /* Pss of /proc/PID/smaps_rollup: shared pages split among their users */
};

struct proctree {
    size_t n;
    struct proctree_obs p[PROCTREE_MAX];
};

/* Every process seen in one window: its first reading (0 for one that
 * started in the window: a new process's CPU clock starts there) and its
 * last. */
struct proctree_entry {
    pid_t pid;
    unsigned long long start;
    char label[16];
    uint64_t first_ns, last_ns, first_wk, last_wk;
    long rss_kb; /* from the last reading that had it; -1: not in that reading */
    long pss_kb; /* likewise */
};

struct proctree_ledger {
    size_t n;
    struct proctree_entry p[PROCTREE_MAX];
};

/* The thread ids of pid (/proc/PID/task), at most max; 0 when it is gone. */
size_t proctree_tids(pid_t pid, long *tids, size_t max);

/* A thread's voluntary context switches (its status file): a thread that
 * blocks, in poll, a futex or a sleep, switches out voluntarily once and is
 * woken once, so their count is the wake-ups it cost. 0 when gone. */
uint64_t proctree_task_wakes(pid_t pid, long tid);

/* A thread's CPU time, ns (schedstat's first field); 0 when gone. */
uint64_t proctree_task_ns(pid_t pid, long tid);

/* A thread's name (its comm, no newline) into out; false ("") when gone. */
bool proctree_task_name(pid_t pid, long tid, char *out, size_t len);

/* Reads root and every process under it, breadth first, root first. A
 * process gone by the time it is read is left out. with_rss reads VmRSS
 * too. */
void proctree_read(pid_t root, bool with_rss, struct proctree *o);

/* Folds one reading into the ledger; begin starts a window with it. */
void proctree_fold(struct proctree_ledger *l, const struct proctree *o, bool begin);

#endif
