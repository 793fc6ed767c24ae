/*
 * serve.h — `mig-gpu-mon export`: /metrics and /health over HTTP
 * (libmicrohttpd), docs/prometheus.md.
 *
 * The page is rendered once per sampling tick, by the thread that takes
 * the engine's snapshot, and published whole; a request only takes a
 * reference to the latest published page. So a scrape never waits for the
 * driver, the collector or the renderer, and a device stuck in a driver
 * call shows up on the page as migmon_gpu_sampling_stalled 1 with its
 * values absent or carried.
 */
#ifndef MIGMON_SERVE_H
#define MIGMON_SERVE_H

#include <stddef.h>

#include "engine/collect.h"
#include "export/prom.h"

struct serve_opts {
    const char *listen;     /* "ADDR:PORT", ":PORT", "[V6]:PORT"; port 0: any free */
    unsigned interval_ms;   /* sampling interval */
    struct prom_opts page;
    /* Bounds on request handling (connlimit.h); 0 takes the default (serve.c). */
    unsigned conn_limit;      /* connections open at once; over it the oldest waiting one closes */
    unsigned conn_per_client; /* the same from one client address (IPv6: one /64) */
    unsigned timeout_s;       /* a request's deadline, from accept or the answer before it */
    size_t conn_memory;       /* per connection, headers included: larger requests get 431 */
    /* The kubelet's pod-resources socket for the pod labels (system/podres.h),
     * asked every kubelet_refresh_ms (0: its default); NULL: no pod labels.
     * pod_logs: its pod log directories, read as often, naming the pods of
     * processes (--export-processes); NULL: not read. */
    const char *kubelet_socket;
    const char *pod_logs;
    unsigned kubelet_refresh_ms;
};

struct server;

/* Listen and start the HTTP thread. Until the first serve_publish,
 * /metrics answers 503. Returns 0, or -1 with one line in err. */
int serve_start(struct server **out, const struct serve_opts *o, char *err, size_t errlen);
/* The port listened on (useful after port 0). */
int serve_port(const struct server *srv);
/* Render s and make it the page every later request gets. Called by one
 * thread at a time (the front end's); s is only read. Returns 0 or
 * -ENOMEM (the previous page stays). */
int serve_publish(struct server *srv, const struct snapshot *s);
/* Stop serving (open connections are closed) and free the server. */
void serve_stop(struct server *srv);

/* The export mode: sample with the engine, publish each snapshot, serve
 * until SIGINT, SIGTERM or SIGHUP. The collector is used by the engine
 * until this returns. Returns the exit status. */
int serve_run(struct collector *col, const struct serve_opts *o);

#endif
