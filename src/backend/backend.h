/*
 * backend.h — the interface every GPU data source implements.
 *
 * A backend fills snapshots and never draws; it returns negative codes and
 * keeps a message, and never exits. Backends are registered in one explicit
 * table (backend.c); mandatory hooks are checked there.
 */
#ifndef MIGMON_BACKEND_H
#define MIGMON_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"

struct backend_opts {
    const char *nvml_path; /* --nvml-path, or NULL to search */
    int gpm_mode;          /* enum gpm_mode (backend/gpm/gpm.h): auto, on, off, helper */
    unsigned interval_ms;  /* the sampling period, for sources with their own cadence */
    const char *gpm_exe;   /* binary run as the GPM and DCGM helpers; NULL: neither */
    int dcgm_mode;         /* enum dcgm_mode (backend/dcgm/dcgm.h): auto, addr, embedded, off */
    const char *dcgm_addr; /* the hostengine for DCGM_MODE_ADDR */
    const char *dcgm_lib;  /* --dcgm-lib, or NULL to search libdcgm.so.4 / .so.3 */
    unsigned dcgm_interval_ms; /* --dcgm-interval; 0: interval_ms, at least 1 s */
    bool one_shot;         /* one snapshot (--once): no retry is promised */
    uint64_t t0_ns;        /* the collector's reference instant (CLOCK_MONOTONIC); 0 unknown */
    const char *source;    /* what a backend that reads a file reads (replay: the recording) */
    const char *sysfs_root; /* --sysfs-root, or NULL for /sys (amdgpu) */
    const char *proc_root;  /* --proc-root, or NULL for /proc (amdgpu's fdinfo) */
    bool no_procs;          /* no front end shows processes: a backend that must scan
                             * for them (amdgpu's fdinfo) does not */
    const char *prom_url;       /* the Prometheus backend: the server's base URL */
    const char *prom_auth_file; /* its credentials (backend/prometheus/prom_client.h), or NULL */
    const char *prom_ca_file;   /* the CA certificates its https trusts, or NULL */
    const char *prom_match;     /* --prometheus-match: the selector every query is limited
                                 * to, or NULL */
    /* A front end that shows part of a fleet and says which (the
     * monitor: view_ask); else every node's devices are read. */
    bool prom_view;
};

struct hist_past; /* history.h */

/* What the front end asks a backend with a past of its own for: the chart
 * series of device uuid, `points` points interval_ms apart, up to now. */
struct backend_past_ask {
    const char *node; /* its node in a fleet, "" or NULL on one host */
    const char *uuid;
    unsigned points, interval_ms;
    uint64_t id; /* the asker's, given back with the answer */
};

/* What the front end shows of a fleet (the fleet view): the device filter
 * and the nodes whose devices are on its screen (their instance labels,
 * struct node_summary). Borrowed for the call. */
struct backend_view_ask {
    const char *filter;
    const char *const *nodes;
    size_t nnodes;
};

enum backend_err {
    BACKEND_OK = 0,
    BACKEND_ERR_NO_LIBRARY = -2,  /* nothing to load: report, keep running */
    BACKEND_ERR_BAD_PATH = -3,    /* an explicitly named library is missing: exit 2 */
    BACKEND_ERR_INIT = -4,        /* library loaded but init failed (driver, permission) */
    BACKEND_ERR_NOMEM = -5,
    /* sample: the tick was given to another thread while this one was in a
     * driver call (see set_takeover); not an error */
    BACKEND_TAKEN_OVER = 1,
};

struct backend_ops {
    const char *name;
    /* True: sample fills the whole snapshot (host, processes, health, the
     * clocks), as a recording holds it; the collector then neither samples
     * this host nor post-processes the snapshot. */
    bool whole;
    /* Mandatory. On failure *state is NULL and err holds one message. */
    int (*open)(void **state, const struct backend_opts *o, char *err, size_t errlen);
    /* Optional (NULL: sample does all the work). Starts a tick's driver
     * work in the backend's own threads and returns at once, so it runs
     * while the caller samples the host; the next sample collects it. */
    void (*start)(void *state);
    /* Mandatory. Fills s->devices, driver/NVML versions. Returns by
     * deadline_ns (CLOCK_MONOTONIC) whatever the driver does: a device whose
     * sampling has not finished by then is reported from its last sample
     * (carried, then none, naming the call it is stuck in) and s->partial
     * is set. 0, or negative with last_error (e.g. no driver yet). */
    int (*sample)(void *state, struct snapshot *s, uint64_t deadline_ns);
    /* Mandatory. Accepts NULL. Bounded in time: a thread stuck in the
     * driver is abandoned (and its memory with it), never waited for. */
    void (*close)(void *state);
    /* Optional (NULL: ""). Message of the last failure; borrowed. */
    const char *(*last_error)(void *state);
    /* Optional (NULL: nothing to wait for). Waits at most timeout_ms until
     * sources that need two samples (GPM) have a first value; for one-shot
     * snapshots. */
    void (*settle)(void *state, unsigned timeout_ms);
    /* Optional. From any thread: a sample waiting for the driver returns at
     * once (partial), now and from now on; used when the program stops. */
    void (*interrupt)(void *state);
    /* Optional. The thread that has been sampling is about to end: what
     * is tied to that thread is ended now, while it can still end cleanly
     * (the GPM helper is killed when the thread that started it ends, so
     * it is asked to leave first). A later sample starts it again. */
    void (*detach)(void *state);
    /* Optional (NULL: the caller is never replaced). The calling thread can
     * be replaced: while the driver is quick, sample may make the tick's
     * driver calls on the calling thread itself. When one of them runs past
     * the tick's rescue point, the backend calls takeover(arg) from a
     * thread of its own; takeover must start another thread that carries
     * the caller's role on (it calls start and sample for the tick, with
     * the same deadline). The stuck sample, once its call comes back,
     * returns BACKEND_TAKEN_OVER having touched nothing but the device it
     * was in: neither the snapshot nor anything else of the caller's. fn
     * NULL clears it; when it returns no takeover is running or will run. */
    void (*set_takeover)(void *state, void (*takeover)(void *arg), void *arg);
    /* Optional (NULL: false). From any thread, once the takeover is
     * cleared: the thread sampling on its own thread is given up on (the
     * program is stopping and will not wait for it). True when it was in a
     * driver call: it then returns BACKEND_TAKEN_OVER when the call comes
     * back, touching nothing of the caller's. */
    bool (*abandon)(void *state);
    /* Optional (NULL: the front end's charts have only what it has read;
     * past_take is then NULL too). From any thread, without waiting for
     * I/O: fetch the past of a device's chart series, from the backend's
     * own store (the fleet view: a Prometheus range query, in a thread of
     * its own). A new ask replaces one not yet answered. 0 asked, -1 the
     * backend has no past of that device. */
    int (*past_ask)(void *state, const struct backend_past_ask *a);
    /* From any thread, without waiting for I/O: the answer to the last
     * ask, once, when it has come: 1 with *out filled (the caller's:
     * hist_past_free) and *id the ask's; -1 the ask failed (*id set, one
     * line in err); 0 no answer (yet). */
    int (*past_take)(void *state, struct hist_past *out, uint64_t *id, char *err, size_t errlen);
    /* Optional (NULL: everything is read). From any thread, without
     * waiting for I/O: what the front end shows of a fleet (opts.prom_view),
     * so that only that is read. 1 when what it shows is not read yet: a
     * round starts at once, and view_answered reaches *gen when its result
     * is there to be sampled; 0 when the last result has it; -1 (out of
     * memory; the last ask stays); -2 when the filter cannot be asked (one
     * line in err; the last ask stays). */
    int (*view_ask)(void *state, const struct backend_view_ask *a, uint64_t *gen, char *err,
                    size_t errlen);
    /* The ask whose result is there to be sampled (its gen); any thread. */
    uint64_t (*view_answered)(void *state);
};

extern const struct backend_ops nvml_backend_ops;
extern const struct backend_ops amdgpu_backend_ops;

/* Look a backend up by name in the registry; NULL if unknown or invalid. */
const struct backend_ops *backend_find(const char *name);
/* The registry's i-th backend, NULL past the end (the default set: every
 * backend that finds a device). */
const struct backend_ops *backend_at(size_t i);
/* 0 when the mandatory hooks are present. */
int backend_check(const struct backend_ops *ops);
const char *backend_last_error(const struct backend_ops *ops, void *state);

/* A backend's close that gives up waiting for one of its threads (stuck in
 * a driver call, or in a library's transfer that has not yet seen the
 * abort) says so here. The program then ends without running the exit
 * handlers of the libraries that thread is still inside (OpenSSL's, the
 * driver's destructors would free what it uses): main flushes its own
 * output and calls _exit. One process-wide flag, atomic, set by any thread,
 * read by main after the collector is closed. */
void backend_left_behind_set(void);
bool backend_left_behind(void);

#endif
