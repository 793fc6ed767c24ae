/*
 * procinfo.h — what /proc says about the processes NVML lists: name, command
 * line, user, CPU %, RSS, container, and the PID as seen from here.
 *
 * NVML reports host (init-namespace) PIDs. How they map onto the procfs at
 * proc_root is decided once, at open, from <proc_root>/self (docs/processes.md):
 *   host      we are in the init PID namespace: a host PID is a local PID;
 *   ancestor  the procfs belongs to an ancestor namespace (NSpid of self has
 *             more than one entry, e.g. the host's /proc mounted into a
 *             container): facts are read at the host PID, and the local PID is
 *             the process's NSpid entry at our level when it shares our
 *             namespace;
 *   own       the procfs is our own, non-init namespace: a host PID cannot be
 *             looked up (the same number may be another process), so nothing
 *             is read and local_pid is -1.
 *
 * Facts are cached per (PID, start time) so a reused PID is never mistaken
 * for the old process; entries not used during a tick are dropped at its end.
 * An exec keeps both, so user and command line are read again at the next
 * tick when the name or the stack address in stat changed since they were
 * read, and at least every PROCINFO_REREAD_S seconds otherwise
 * (docs/processes.md).
 * After warm-up a tick allocates nothing.
 */
#ifndef MIGMON_PROCINFO_H
#define MIGMON_PROCINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/model.h"

enum procinfo_ns { PROCINFO_NS_HOST, PROCINFO_NS_ANCESTOR, PROCINFO_NS_OWN };

struct procinfo;

/* The longest a cached user and command line go without being read again,
 * in seconds of the clock given to procinfo_begin: an exec that changes
 * neither the name nor the stack address in stat (python exec'ing python
 * without ASLR, or in a process we may not inspect) shows within it. */
#define PROCINFO_REREAD_S 5

/* proc_root NULL means "/proc". Returns 0 or -ENOMEM. */
int procinfo_open(struct procinfo **out, const char *proc_root);
void procinfo_close(struct procinfo *pi);

enum procinfo_ns procinfo_ns_mode(const struct procinfo *pi);

/* Start a tick at monotonic time now_ns (CPU % is a delta between ticks). */
void procinfo_begin(struct procinfo *pi, uint64_t now_ns);
/* Fill p's host facts (name, user, command, container, cpu_pct, rss_bytes,
 * local_pid, start_time) for its host PID p->pid. What cannot be read is
 * none / "" / -1. Calling it twice for one PID in a tick gives the same CPU %. */
void procinfo_fill(struct procinfo *pi, struct gpu_process *p);
/* True when host PID pid is still the process that started at start_time
 * (clock ticks after boot, field 22 of stat); false when it exited, was
 * reused, or cannot be seen from here. Keeps its cache entry alive. */
bool procinfo_alive(struct procinfo *pi, uint32_t pid, uint64_t start_time);
/* End the tick: forget processes not filled or checked since begin. */
void procinfo_end(struct procinfo *pi);

/* ---- parsers, exposed for the unit tests ---- */

struct procinfo_stat {
    char comm[PROC_NAME_LEN];
    int64_t ppid;          /* field 4, in the procfs's PID namespace; -1 absent */
    uint64_t utime, stime; /* clock ticks */
    uint64_t start_time;   /* clock ticks after boot */
    int64_t rss_pages;
    /* field 28, the address of the stack's start: new at every exec (ASLR);
     * 0 when absent or when the process is not ours to inspect */
    uint64_t start_stack;
};
/* Any user can put terminal escape sequences in a process name or argv.
 * Replace C0 controls, DEL and UTF-8-encoded C1 controls with '?' in place, so
 * the table, the TUI and logs print names and command lines inertly. */
void procinfo_sanitize(char *s);
/* /proc/<pid>/stat. comm may contain spaces and ')'; the fields after it are
 * found from the last ')'. comm comes out sanitised. Returns 0 or -1. */
int procinfo_parse_stat(const char *buf, struct procinfo_stat *out);
/* "NSpid:" of /proc/<pid>/status: up to max entries, outermost first.
 * Returns the count (0 when absent: a kernel before 4.1). */
int procinfo_parse_nspid(const char *status, int64_t *out, int max);
/* Real UID from "Uid:"; -1 when absent. */
long procinfo_parse_uid(const char *status);
/* The container of a /proc/<pid>/cgroup text: "docker:<12 hex>",
 * "containerd:…", "crio:…", "podman:…", "k8s:<pod uid>/<runtime>:<id>" or
 * "k8s:<pod uid>"; "" outside a container. */
void procinfo_parse_container(const char *cgroup, char *out, size_t len);

#endif
