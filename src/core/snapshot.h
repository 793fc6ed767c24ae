/*
 * snapshot.h — everything known at one tick: host sample plus devices.
 */
#ifndef MIGMON_SNAPSHOT_H
#define MIGMON_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/model.h"

/* One sample of the host: system/host.c reads it, system/meminfo.c derives
 * its memory with htop's definitions (docs/host-metrics.md). */

/* Byte counts; every field none when it cannot be derived honestly. */
struct mem_metrics {
    struct metric total;      /* MemTotal */
    struct metric used;       /* MemTotal - MemFree - Buffers - cached */
    struct metric cached;     /* Cached + SReclaimable - Shmem */
    struct metric buffers;    /* Buffers */
    struct metric free;       /* MemFree */
    struct metric available;  /* MemAvailable */
    struct metric swap_total; /* SwapTotal */
    struct metric swap_used;  /* SwapTotal - SwapFree */
};

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

/* The type bit of a GPU operational event (nvmlEventSetWait_v3's
 * structured records): not an NVML event bit, far above all of them; the
 * backend's MIGMON_EVENT_TYPE_OPERATIONAL. */
#define GPU_EVENT_OPERATIONAL (1ULL << 63)

/* One NVML health event (an Xid, an ECC error), as the events helper got
 * it (backend/events/events.h). */
struct gpu_event {
    uint64_t elapsed_ns; /* when the helper received it, on the snapshot timeline */
    int64_t wall_ns;
    char gpu_uuid[MIGMON_UUID_LEN];
    /* The device it belongs to in snapshot.devices: the MIG device whose
     * GPU and compute instance it names, else its GPU; -1 when the GPU is
     * not in this snapshot. */
    int device_pos;
    int gi_id, ci_id; /* -1: not attributed to an instance */
    unsigned xid;     /* the Xid code (999: one the driver cannot name); 0 for ECC events;
                       * an operational event's legacy Xid, 0 when it has none */
    unsigned long long type; /* NVML event type bits, or MIGMON_EVENT_TYPE_OPERATIONAL */
    unsigned severity, category; /* an operational event's, as NVML gave them */
};

struct snapshot {
    uint64_t elapsed_ns; /* since the one reference instant taken at start */
    int64_t wall_ns;     /* CLOCK_REALTIME at the sample */
    char driver_version[80];
    char nvml_version[80];
    int cuda_driver_version; /* nvmlSystemGetCudaDriverVersion_v2: 12040 = 12.4; 0 unknown */
    /* Where DCGM's values come from ("DCGM via nv-hostengine unix:/tmp/
     * nv-hostengine, watched every 1 s") or why there are none; "" when no
     * backend said. */
    char dcgm_info[256];
    bool gpu_ok;         /* false: gpu_error says why there are no devices */
    char gpu_error[2048];
    size_t ndevices;
    size_t cap;
    struct device *devices; /* owned; grown by snapshot_reserve() */
    size_t nprocs;          /* processes of all devices, grouped by device */
    size_t proc_cap;
    struct gpu_process *procs; /* owned; grown by snapshot_reserve_procs() */
    bool host_ok;           /* false: host_error says why */
    char host_error[256];
    struct host_sample host; /* host.cores points at core_buf */
    struct host_core *core_buf; /* owned copy of the host's cores */
    size_t core_cap;
    /* Some device's sampling did not finish in time: its values are
     * carried or none, and say so. partial_why: why, when it is not a
     * driver's call that did not finish within the deadline (a fleet's
     * failed queries; in the notes), else NULL. */
    bool partial;
    const char *partial_why;
    /* Reasons composed at sampling time ("stalled 12 s in
     * nvmlDeviceGetPowerUsage"); metric.why and device.stall may point here.
     * Owned, emptied at the start of every tick, never moved while the
     * snapshot is filled, so the pointers stay valid as the snapshot is
     * handed from the sampling thread to a front end. */
    char *notes;
    size_t notes_len, notes_cap;
    /* Health events: the most recent (at most 64), oldest first, and how
     * many arrived since start; events_why says why there are none to be
     * had (a static string), NULL while they flow. Written by the backend's
     * sampling thread like every other field (events_apply), read by front
     * ends from the published snapshot. events is owned. */
    struct gpu_event *events;
    size_t nevents, events_cap;
    uint64_t events_total;
    const char *events_why;
    /* The backend gave each device's health verdict itself (the fleet's
     * exporters decided it on their nodes): health_evaluate is not run. */
    bool health_given;
    /* A fleet (the fleet view, --prometheus): its nodes, in the order of
     * their names, each with its aggregates (model.h); every node, or under
     * a device filter those with a device it matches. Owned, grown by
     * snapshot_reserve_nodes; nnodes 0 for this host's own devices.
     * fleet_filter: the filter the nodes were counted under ("" none);
     * nodes_why: why nodes or their figures are missing (a failed query,
     * the cap on nodes held), NULL when the list is whole. */
    bool fleet;
    size_t nnodes, nodes_cap;
    struct node_summary *nodes;
    char fleet_filter[64];
    const char *nodes_why;
};

/* A fleet of at most this many nodes is shown with every node unfolded,
 * and its devices read before the monitor first asks (backend/prometheus/prom_backend.c). */
#define FLEET_OPEN_NODES_MAX 16

int snapshot_reserve(struct snapshot *s, size_t n);
int snapshot_reserve_procs(struct snapshot *s, size_t n);
int snapshot_reserve_nodes(struct snapshot *s, size_t n);
/* Copy the host's borrowed core array into the snapshot's own buffer. */
void snapshot_own_cores(struct snapshot *s);
/* A formatted reason stored in the snapshot; a static fallback when the
 * pool is full. */
const char *snapshot_note(struct snapshot *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void snapshot_notes_reset(struct snapshot *s);
void snapshot_free(struct snapshot *s);
/* Device i of s is a MIG-enabled GPU whose own VRAM is unknown (NVML gives
 * a parent's memory in MIG mode only with privilege) and every one of its
 * MIG instances has its used and total memory: their sums, carried when
 * one of them is. False otherwise. For display only, marked as a sum
 * ("Σ" on screen, "S" in the table), never as the GPU's own figure: the
 * memory outside the instances is not in it. */
bool snapshot_mig_vram_sum(const struct snapshot *s, size_t i, struct metric *used,
                           struct metric *total);

#endif
