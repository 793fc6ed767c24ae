/*
 * engine.h — the sampling engine: a thread that ticks the collector on a
 * drift-corrected grid and publishes each complete snapshot, so a front end
 * never waits for the driver. While the driver is quick that thread makes
 * the driver calls itself; when one stalls, the backend's watchdog has the
 * engine carry the ticking on in another thread (collect_set_takeover), and
 * the stuck one is left in the driver.
 *
 * Hand-off is by swapping whole snapshots (triple buffering): the engine
 * fills its own, then swaps it with the "ready" slot under a mutex; a front
 * end swaps its own snapshot with "ready" when there is a newer one. No
 * snapshot is ever shared: each is owned by exactly one side at a time, so
 * the pointers inside (devices, processes, cores, reasons in the notes)
 * stay valid for whoever holds it.
 *
 * Ticks: the first at once, the second ~200 ms later whatever the interval
 * (priming: CPU % and GPM values need two samples; engine.c), then one per
 * interval from that one on. docs/engine.md.
 */
#ifndef MIGMON_ENGINE_H
#define MIGMON_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/collect.h"

struct engine;

struct engine_opts {
    unsigned interval_ms;
    /* Tests: no timer; one tick per engine_request_tick(), and the engine
     * waits until the front end has taken each snapshot before the next,
     * so none is skipped. */
    bool manual;
};

/* Starts the thread. The collector is the engine's from now until
 * engine_stop returns (no other thread may use it but for what collect.h
 * says any thread may call). */
int engine_start(struct engine **out, struct collector *col, const struct engine_opts *o);
/* Readable when a new snapshot is waiting (for poll). */
int engine_fd(const struct engine *e);
/* If a newer snapshot than the caller's last is ready, swap it into *s
 * (the caller's previous one goes back to the engine for reuse) and return
 * true. Never blocks on the driver. */
bool engine_acquire(struct engine *e, struct snapshot *s);
/* A new sampling interval (ms, at least 100): the next tick comes one new
 * interval after the last one. */
void engine_set_interval(struct engine *e, unsigned interval_ms);
/* Manual mode: take one more sample now. */
void engine_request_tick(struct engine *e, unsigned n);
/* A sample now, what the front end waits for having come (a fleet's
 * nodes it asked for): manual mode, one more tick; else one tick at once,
 * off the grid, which goes on as it was. */
void engine_tick_now(struct engine *e);
/* Stops the sampling (bounded: the sampling thread is waited for at most
 * 0.3 s, one stuck in the driver not at all) and frees the engine's
 * snapshots, or leaves them to a thread still in the driver; the collector
 * is the caller's again (that thread never touches it). */
void engine_stop(struct engine *e);

#endif
