/*
 * events.h — NVML health events (Xid, ECC single and double bit errors),
 * read in a helper process.
 *
 * nvmlEventSetWait_v2 (v3 where the GPU operational events are registered)
 * blocks by design and may never return on a sick driver, so it is never
 * called on a monitor thread: the helper is this
 * binary started as `mig-gpu-mon --events-helper LIBRARY`, with an NVML
 * session of its own. It registers, on one event set, the Xid and ECC
 * events each GPU supports and waits with a 1 s timeout, sending a
 * progress record before each wait and a heartbeat after it; the client's
 * watchdog (at least 3 s) kills a helper stuck in the wait and restarts it
 * with backoff. Each event is sent with the GPU's UUID, the GPU and compute
 * instance it is attributed to, and the helper's monotonic and wall time
 * at receipt.
 *
 * events_helper.c is the helper; events.c is the client the NVML backend
 * owns; xid.h says what an Xid means.
 */
#ifndef MIGMON_EVENTS_H
#define MIGMON_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/helper_proc.h"
#include "core/model.h"

/* ---- the pipe protocol (helper -> client; framing in helper_proc.h) ---- */

#define EVENTS_PROTO_MAGIC 0x4556u /* "EV" */

enum events_rec_type {
    EVENTS_REC_STATE = 1, /* what is watched, or why nothing is (on change) */
    EVENTS_REC_EVENT,     /* one event */
    EVENTS_REC_PROGRESS,  /* about to make an NVML call (stall attribution) */
    EVENTS_REC_BEAT,      /* a call returned (heartbeat) */
    EVENTS_REC_DONE,      /* events cannot be had (stated in the last STATE): exiting */
    EVENTS_REC_GPU,       /* one GPU the helper opened: whether its Xid events are watched */
};

/* The NVML calls the helper can be in. */
enum events_call {
    EVENTS_CALL_NONE = 0,
    EVENTS_CALL_INIT,     /* loading libnvidia-ml, nvmlInit */
    EVENTS_CALL_SETUP,    /* handles, UUIDs, supported types, the set, registration */
    EVENTS_CALL_WAIT,     /* nvmlEventSetWait_v2 */
    EVENTS_CALL_WAIT_V3,  /* nvmlEventSetWait_v3: operational events are registered */
    EVENTS_CALL_COUNT
};

enum events_state {
    EVENTS_STATE_STARTING = 0,
    EVENTS_STATE_NO_API,      /* the library lacks the event functions (or FUNCTION_NOT_FOUND) */
    EVENTS_STATE_UNSUPPORTED, /* no GPU supports Xid events */
    EVENTS_STATE_FAILED,      /* a call failed: rc at call; see retry */
    EVENTS_STATE_WATCHING,    /* registered; events flow */
};

#define EVENTS_UUID_LEN 96

/* Whether a MIG instance's own events reach this caller. nvml.h
 * (nvmlEventSetWait_v2): in MIG mode the events of the instances are
 * reported "only if the caller has appropriate privileges"; without them,
 * only the events of the whole GPU. The helper asks the same question
 * nvml.h words the same way for a MIG-enabled GPU's aggregate memory
 * (nvmlDeviceGetMemoryInfo: SUCCESS or NO_PERMISSION). */
enum events_mig {
    EVENTS_MIG_UNKNOWN = 0, /* no GPU was in MIG mode when the events were registered */
    EVENTS_MIG_SEEN,        /* privileged: an instance's own events are reported */
    EVENTS_MIG_HIDDEN,      /* unprivileged: only whole-GPU events are */
};

struct events_rec_state {
    struct helper_rec_hdr h;
    uint16_t state; /* enum events_state */
    uint16_t call;  /* enum events_call the state came from */
    int32_t rc;     /* the NVML answer behind it */
    uint16_t retry; /* the helper tries again by itself */
    uint16_t ngpus, nwatched;
    uint16_t mig;   /* enum events_mig */
    char detail[160];
};

/* Sent for each GPU the helper opened (by UUID), before the state that
 * says watching: the GPUs of one registration are the records numbered
 * 0 .. count-1. A GPU the helper could not open has none. */
enum events_gpu_state {
    EVENTS_GPU_WATCHED = 1, /* its Xid events are registered on the set */
    EVENTS_GPU_NO_XID,      /* nvmlDeviceGetSupportedEventTypes: no Xid events */
    EVENTS_GPU_FAILED,      /* asking or registering failed: rc */
};

struct events_rec_gpu {
    struct helper_rec_hdr h;
    char gpu_uuid[EVENTS_UUID_LEN];
    uint16_t index, count; /* this record's place among the registration's GPUs */
    uint16_t state;        /* enum events_gpu_state */
    uint16_t pad;
    int32_t rc;            /* the NVML answer behind a FAILED */
};

struct events_rec_event {
    struct helper_rec_hdr h;
    char gpu_uuid[EVENTS_UUID_LEN];
    uint64_t type;  /* NVML_EVENT_TYPE_* bits */
    uint32_t xid;   /* the Xid for an Xid event, else 0 */
    int32_t gi_id;  /* -1: not attributed to a GPU instance */
    int32_t ci_id;  /* -1: not attributed to a compute instance */
    /* An operational event (type MIGMON_EVENT_TYPE_OPERATIONAL): its
     * severity and category as nvmlEventSetWait_v3 gave them; xid is its
     * legacy-Xid context (0: none). 0 for an event bit. */
    uint32_t severity;
    uint32_t category;
    uint32_t pad;
    uint64_t mono_ns; /* the helper's CLOCK_MONOTONIC at receipt */
    int64_t wall_ns;  /* and CLOCK_REALTIME */
};

struct events_rec_progress {
    struct helper_rec_hdr h;
    uint16_t call; /* enum events_call */
    uint16_t pad;
    int32_t rc;    /* BEAT: what the call returned */
};

/* The helper's entry point: argv = {exe, "--events-helper", LIBRARY|""}. */
int events_helper_main(int argc, char **argv);
#define EVENTS_HELPER_ARG "--events-helper"

/* ---- the client (owned by the NVML backend) ---- */

/* The most recent events kept, and the distinct (GPU, GI, CI, Xid) counted. */
#define EVENTS_RING 64
#define EVENTS_MAX_KEYS 512

struct events_client;

struct events_client_opts {
    const char *exe;      /* the binary to run as helper (this one); NULL: no events */
    const char *lib_path; /* the NVML library the monitor loaded */
    uint64_t t0_ns;       /* the monitor's reference instant: elapsed_ns = mono - t0_ns */
    unsigned backoff_ms, watchdog_ms; /* 0: defaults (1 s doubling to 30 s; 3 s) */
};

/* One event as the client keeps it. */
struct events_item {
    uint64_t elapsed_ns; /* on the monitor's timeline */
    int64_t wall_ns;
    char gpu_uuid[EVENTS_UUID_LEN];
    int gi_id, ci_id; /* -1: not attributed */
    unsigned xid;
    unsigned long long type;
    unsigned severity, category; /* an operational event's (events_rec_event) */
};

/* Starts the helper. NULL only out of memory. */
struct events_client *events_client_open(const struct events_client_opts *o);
/* Reads what the helper sent, runs the watchdog. Never blocks. */
void events_client_poll(struct events_client *c);
/* Waits up to timeout_ms (at most 400 ms) for the helper's first state:
 * "watching" comes once the events already pending have been sent, so
 * they are in the next snapshot. */
void events_client_wait_state(struct events_client *c, unsigned timeout_ms);
void events_client_close(struct events_client *c);
int events_client_helper_pid(const struct events_client *c);

/* NULL while events can flow; else why there are none (a static string). */
const char *events_client_why(const struct events_client *c);
/* NULL while the Xid events of the GPU with this UUID are watched; else why
 * not (a static string): events_client_why, or the GPU's own reason. */
const char *events_client_gpu_why(const struct events_client *c, const char *gpu_uuid);
/* NULL while the own events of a MIG instance of that GPU are watched;
 * else why not (a static string). */
const char *events_client_mig_why(const struct events_client *c, const char *gpu_uuid);
/* Events received since start (the ring keeps the last EVENTS_RING). */
uint64_t events_client_total(const struct events_client *c);
/* The n-th most recent event (0 = newest), NULL past the ring. */
const struct events_item *events_client_recent(const struct events_client *c, unsigned n);
struct snapshot;
/* The recent events into a merged snapshot, with the device each belongs
 * to, and every device's xid_errors_total and last_xid (events_apply.c). */
void events_apply(const struct events_client *c, struct snapshot *s);

#endif
