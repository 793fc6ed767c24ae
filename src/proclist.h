/*
 * proclist.h — every GPU process of a snapshot once, across all GPUs and MIG
 * devices: the list behind the interactive monitor's "All processes" view
 * (key a) and --once --all-processes.
 *
 * Pure functions of a snapshot (no /proc, no NVML, no curses), so the
 * dedupe, the sort and the elapsed time are unit tested
 * (tests/unit/test_proclist.c). A list is a run of indexes into
 * snapshot.procs; nothing is copied.
 */
#ifndef MIGMON_PROCLIST_H
#define MIGMON_PROCLIST_H

#include <stdbool.h>
#include <stddef.h>

#include "snapshot.h"

/* Sort keys, in the order the TUI's s key cycles them (enum proc_sort). */
enum proclist_key { PROCLIST_BY_MEMORY = 0, PROCLIST_BY_SM, PROCLIST_BY_CPU, PROCLIST_BY_PID };

/*
 * The processes of every device of s, each once, into out (at most cap
 * indexes into s->procs), in the order of s->devices; returns how many were
 * written, and in *total (when not NULL) how many there were before cap.
 *
 * Once: one process (the same PID, and the same start time where both
 * entries know it) listed both by a MIG-enabled GPU and by one of its MIG
 * devices is kept on the MIG device, the more specific of the two; listed
 * twice by one device, it is kept once. A process on two GPUs, or on two MIG
 * devices, is two entries: it holds memory on each.
 *
 * filter: only processes whose command, name or user contain it, ignoring
 * case (the TUI's key /); NULL or "" for all.
 */
size_t proclist_collect(const struct snapshot *s, const char *filter, size_t *out, size_t cap,
                        size_t *total);

/* Sort rows (indexes into s->procs) by key, largest first; a value that is
 * unknown sorts after every known one; ties by PID, then by position in
 * s->procs. PROCLIST_BY_PID: ascending PID. */
void proclist_sort(const struct snapshot *s, size_t *rows, size_t n, enum proclist_key key);

/* Every process of s once, by VRAM, in a new array of *n indexes (the
 * caller frees it); NULL with *n = 0 when there is none or, with errno
 * ENOMEM, when the array could not be had. */
size_t *proclist_all_by_memory(const struct snapshot *s, size_t *n);

/* Whether p's command, name or user contains filter, ignoring case (an
 * empty or NULL filter matches every process). */
bool proclist_match(const struct gpu_process *p, const char *filter);

/* The position in s->devices of the device whose list holds s->procs[i],
 * or -1. */
long proclist_device_of(const struct snapshot *s, size_t i);

/* The device's short name, as the --once table's ID column writes it: "0"
 * for GPU 0, "0/3" for the MIG device in slot 3 of GPU 0. */
void proclist_device_label(char *out, size_t len, const struct device *d);
/* The same after the device's node in a fleet (--prometheus): "h200:0/3";
 * a process list of several nodes names each process's. */
void proclist_device_node_label(char *out, size_t len, const struct device *d);

/*
 * Seconds since p started: the host's uptime in s minus p's start time
 * (clock ticks after boot, /proc/<pid>/stat field 22) over hz, the clock
 * ticks per second (sysconf(_SC_CLK_TCK); proclist_clk_tck()). none when the
 * start time or the uptime is unknown, or when the start time is more than
 * a second past the uptime (files that do not belong together); a start up
 * to a second past it (both are rounded) is 0 s.
 */
struct metric proclist_elapsed(const struct snapshot *s, const struct gpu_process *p, long hz);
long proclist_clk_tck(void);

/* An elapsed time as ps -o etime writes it, [[DD-]hh:]mm:ss ("05:03",
 * "01:02:03", "3-04:05:06"); "N/A" when m is none. Returns out. */
const char *proclist_fmt_elapsed(char *out, size_t len, const struct metric *m);

#endif
