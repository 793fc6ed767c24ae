/*
 * collect.h — the one sampling path every front end uses.
 *
 * A collector owns the GPU backend state and the host sampler, and fills a
 * snapshot per tick. A GPU source that cannot be opened is not fatal: the
 * snapshot says why (gpu_error) and the host part keeps working — except an
 * explicitly named library (--nvml-path) that does not exist, which the
 * caller turns into exit status 2.
 */
#ifndef MIGMON_COLLECT_H
#define MIGMON_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "core/snapshot.h"
#include "engine/procpost.h"
#include "system/procinfo.h"

struct collect_opts {
    const char *nvml_path; /* NULL: search */
    const char *proc_root; /* NULL: /proc */
    bool no_gpu;           /* skip the GPU backend entirely */
    unsigned top;          /* processes kept per device, by memory; 0 = all */
    int gpm_mode;          /* enum gpm_mode: auto, on, off, helper */
    unsigned interval_ms;  /* the tick period (the GPM helper samples at it) */
    const char *gpm_exe;   /* the GPM and DCGM helper binary (this one); NULL: neither */
    int dcgm_mode;         /* enum dcgm_mode: auto, addr, embedded, off */
    const char *dcgm_addr; /* host:port or unix:PATH for DCGM_MODE_ADDR */
    const char *dcgm_lib;  /* NULL: search libdcgm.so.4, then .so.3 */
    unsigned dcgm_interval_ms; /* DCGM's watch period; 0: interval_ms, at least 1 s
                                * (one_shot: interval_ms) */
    unsigned budget_ms;    /* collect_tick's wait for the driver; 0: COLLECT_BUDGET_MS */
    bool one_shot;         /* one snapshot (--once): messages promise no retry */
    /* Another GPU source than NVML, borrowed: the replay backend
     * (src/backend/replay/) or the Prometheus one (--prometheus); NULL: NVML, and
     * the other registered backends (--backend) */
    const struct backend_ops *backend;
    const char *source;         /* what the replay backend reads */
    const char *prom_url;       /* --prometheus URL */
    const char *prom_auth_file; /* --prometheus-auth FILE, or NULL */
    const char *prom_ca_file;   /* --prometheus-ca FILE, or NULL */
    const char *prom_match;     /* --prometheus-match SELECTOR, or NULL */
    bool prom_view;             /* the monitor shows the fleet: it says what it shows */
    /* --backend: "nvml,amdgpu" (comma-separated registry names); NULL:
     * NVML as always, and every other backend that finds a device */
    const char *backends;
    const char *sysfs_root; /* --sysfs-root; NULL: /sys */
    bool no_procs;          /* processes are not shown (export without --export-processes) */
};

/* The backends after the first (NVML), whose devices follow its own. */
#define COLLECT_MAX_EXTRA 4

/* How long collect_tick waits for a slow or stuck driver before it returns
 * what it has (the stuck devices carried, then none). */
#define COLLECT_BUDGET_MS 10000u

/* Ticks a failed read is carried (process lists, stalled devices) before
 * it is dropped. */
#define COLLECT_CARRY_TICKS PROCPOST_CARRY_TICKS

struct collector {
    const struct backend_ops *be;
    void *be_state;          /* owned; NULL when the backend did not open */
    char gpu_error[2048];    /* why be_state is NULL */
    /* Further backends (amdgpu), sampled after the first, their devices
     * appended; each state owned, never NULL for i < nextra. */
    const struct backend_ops *extra[COLLECT_MAX_EXTRA];
    void *extra_state[COLLECT_MAX_EXTRA];
    size_t nextra;
    char extra_error[512];   /* an explicitly selected backend that did not open */
    struct host *host;       /* owned; NULL when /proc could not be opened */
    char host_error[256];
    uint64_t t0_ns;          /* the reference instant */
    uint64_t budget_ns;      /* collect_tick's deadline, from the start of the tick */
    unsigned top;            /* processes kept per device; 0 = all */
    struct procinfo *pinfo;  /* owned; NULL: no /proc facts for processes */
    struct procpost pp;      /* sort, --top, carry-forward, /proc facts */
};

#define COLLECT_ERR_BAD_NVML_PATH (-2)
/* collect_tick_until: another thread carries the tick on (collect_set_takeover);
 * the caller must not touch the collector or the snapshot again. */
#define COLLECT_TAKEN_OVER 1

/* Returns 0, or COLLECT_ERR_BAD_NVML_PATH with a message in err, or
 * COLLECT_ERR_BAD_BACKEND (--backend names no backend). */
#define COLLECT_ERR_BAD_BACKEND (-3)
/* Whether the --backend list s names only registered backends (else -1
 * with one line in err). */
int collect_check_backends(const char *s, char *err, size_t errlen);
int collect_open(struct collector *c, const struct collect_opts *o, char *err, size_t errlen);
/* Any thread: make a collect_tick that waits for the driver return now
 * (the program is stopping). */
void collect_interrupt(struct collector *c);
/* Wait at most timeout_ms for sources that need two samples (GPM), so a
 * one-shot snapshot has their values. */
void collect_settle(struct collector *c, unsigned timeout_ms);
/* Fill s for this tick, returning by deadline_ns (CLOCK_MONOTONIC) whatever
 * the driver does (s->partial tells). Always leaves s consistent; returns 0,
 * or COLLECT_TAKEN_OVER (only with a takeover set): the tick was given to
 * another thread while this one was stuck in a driver call, and this
 * thread must touch neither c nor s again. Owner: one thread at a time
 * (the sampling engine, or --once). */
int collect_tick_until(struct collector *c, struct snapshot *s, uint64_t deadline_ns);
/* The same with the deadline the collector's budget gives. */
int collect_tick(struct collector *c, struct snapshot *s);
/* A one-shot snapshot's processes seen for the first time: true when s has
 * some. collect_second_look, called a moment later on the same thread,
 * gives them their CPU % over that moment. */
bool collect_first_sight(const struct snapshot *s);
void collect_second_look(struct collector *c, struct snapshot *s);
/* The calling thread can be replaced (the engine): with fn set, the
 * backend may make quick driver calls on the thread that ticks, and calls
 * fn(arg) from a thread of its own when one of them stalls; fn must start
 * another thread that carries the ticking on (backend_ops.set_takeover).
 * NULL clears it; once this returns, fn is not running and will not run. */
void collect_set_takeover(struct collector *c, void (*fn)(void *arg), void *arg);
/* Any thread, the takeover cleared: the thread ticking is given up on. True
 * when it was in a driver call: from then on it touches neither the
 * collector nor its snapshot (collect_tick_until returns
 * COLLECT_TAKEN_OVER); false when it was not, and will end its tick. */
bool collect_abandon(struct collector *c);
/* The sampling thread is about to end (the collector lives on): see
 * backend_ops.detach. */
void collect_detach(struct collector *c);
void collect_close(struct collector *c);
/* Any thread (the engine owns the collector, but these touch only the
 * backend's own hand-off, under its lock): the past of a device's charts
 * where the backend keeps one (backend_ops.past_ask, past_take; the fleet
 * view). collect_past_ask: 0 asked, -1 none to be had; collect_past_take:
 * 1 an answer in *out (the caller's), -1 the ask failed (err), 0 none. */
int collect_past_ask(struct collector *c, const struct backend_past_ask *a);
/* What the front end shows of a fleet (backend_ops.view_ask): 1 (a round
 * is asked: collect_view_answered reaches *gen when it is done), 0 (the
 * last round has it), -1 when the backend reads everything anyway, -2 when
 * the filter cannot be asked (why in err). */
int collect_view_ask(struct collector *c, const struct backend_view_ask *a, uint64_t *gen,
                     char *err, size_t errlen);
uint64_t collect_view_answered(struct collector *c);
int collect_past_take(struct collector *c, struct hist_past *out, uint64_t *id, char *err,
                      size_t errlen);

#endif
