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

#include "core/snapshot.h"

/* Sort keys, in the order the TUI's s key cycles them (enum proc_sort):
 * VRAM, SM %, CPU %, resident host memory and elapsed time largest first;
 * PID, user, command and device (the slices in the device list's order)
 * smallest first, as a reader expects of numbers and names. */
enum proclist_key {
    PROCLIST_BY_MEMORY = 0,
    PROCLIST_BY_SM,
    PROCLIST_BY_CPU,
    PROCLIST_BY_RSS,
    PROCLIST_BY_TIME,
    PROCLIST_BY_PID,
    PROCLIST_BY_USER,
    PROCLIST_BY_COMMAND,
    PROCLIST_BY_DEVICE,
    PROCLIST_KEYS
};

/* The key's name as its column's header says it: "VRAM", "SM%", "CPU%",
 * "RSS", "TIME", "PID", "USER", "COMMAND", "DEV". */
const char *proclist_key_name(enum proclist_key key);

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
 * filter: only the processes proclist_match keeps (the TUI's key /); NULL
 * or "" for all.
 */
size_t proclist_collect(const struct snapshot *s, const char *filter, size_t *out, size_t cap,
                        size_t *total);

/* Sort rows (indexes into s->procs) by key in its own direction (above),
 * or the other way round when reverse; a value that is unknown (a figure
 * N/A, a user or command line not readable) sorts after every known one
 * either way; ties by PID, then by position in s->procs. */
void proclist_sort(const struct snapshot *s, size_t *rows, size_t n, enum proclist_key key,
                   bool reverse);

/* Every process of s once, by VRAM, in a new array of *n indexes (the
 * caller frees it); NULL with *n = 0 when there is none or, with errno
 * ENOMEM, when the array could not be had. */
size_t *proclist_all_by_memory(const struct snapshot *s, size_t *n);

/* Whether process i of s matches filter, ignoring case: its command, name,
 * user, PID (as NVML gives it, and as seen from here) or container
 * contains it, or its device's names do (its ID "0/1", its slice's full
 * name "MIG 0/1 2g.35gb GI 5 CI 0", a fleet's node, the Kubernetes pod,
 * namespace and container the device is labelled with). An empty or NULL
 * filter matches every process. */
bool proclist_match(const struct snapshot *s, size_t i, const char *filter);

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
 * A slice's name, one form wherever the monitor names it (docs/tui.md):
 * its kind, its ID (as above), what it is, shortened from the end.
 *   FULL   "MIG 0/1 2g.35gb GI 5 CI 0": an NVIDIA MIG device (GPU 0's in
 *          slot 1) with its profile and its GPU and compute instance ids
 *          ("?" unknown); "Partition 0/1 CPX/NPS4": an AMD partition
 *          (partition index 1 of GPU 0) with its GPU's compute and memory
 *          partition modes;
 *   MID    without the ids: "MIG 0/1 2g.35gb" (an AMD partition as FULL);
 *   SHORT  the ID and what it is alone: "0/1 2g.35gb", "0/1 CPX/NPS4";
 * a process list's DEV column has the ID alone. A GPU is "GPU 0".
 */
enum proclist_slice_form { PROCLIST_SLICE_FULL = 0, PROCLIST_SLICE_MID, PROCLIST_SLICE_SHORT };
void proclist_slice_name(char *out, size_t len, const struct device *d,
                         enum proclist_slice_form form);

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
