/*
 * helper_proc.h — a source that runs in its own process (GPM, DCGM): the
 * record pipe both sides speak, the client's spawn / read / reap, and the
 * helper's send and wait.
 *
 * A helper is this binary started with a mode argument (`--gpm-helper`,
 * `--dcgm-helper`). It writes fixed-size records to its stdout, each with
 * one write(2) of at most PIPE_BUF bytes, so records never interleave or
 * tear; it leaves when its stdin reaches EOF (the monitor went away) or a
 * write fails. The client never blocks on it: a helper stuck in a vendor
 * call only goes silent, and the client's watchdog kills and restarts it.
 *
 * Owner: one struct helper_proc per client, used by the client's thread only.
 */
#ifndef MIGMON_HELPER_PROC_H
#define MIGMON_HELPER_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Every record starts with this header (native byte order). */
struct helper_rec_hdr {
    uint16_t magic; /* per protocol */
    uint8_t type;
    uint8_t pad;
    uint32_t len; /* of the whole record */
};

struct helper_proc {
    const char *tag; /* "gpm", "dcgm": names the helper in the debug log */
    pid_t pid;       /* -1: none running */
    int rfd, wfd;    /* from / to the helper */
    uint64_t started_ns, last_rx_ns;
    size_t nbuf;
    unsigned char buf[65536];
};

void helper_proc_init(struct helper_proc *p, const char *tag);
/* Starts argv[0] with argv: out of the terminal's process group, killed with
 * the monitor, stderr to /dev/null. 0, or -1 with errno. */
int helper_proc_spawn(struct helper_proc *p, char *const argv[]);
/* Closes the helper's stdin, which asks it to leave; its pipe is still
 * read, and EOF there says it has (then reap it). */
void helper_proc_ask_leave(struct helper_proc *p);
/* Ends the running helper and reaps it: a healthy one leaves within 100 ms
 * of its stdin closing; one that does not (or kill_it) gets SIGKILL and is
 * waited for 500 ms more at most (one in the driver may outlive it).
 * Bounded: 600 ms at most. */
void helper_proc_reap(struct helper_proc *p, bool kill_it);

/* The size of a record of this type, 0 for a type the protocol lacks. */
typedef size_t (*helper_rec_size_fn)(uint8_t type);
typedef void (*helper_rec_fn)(void *ctx, const unsigned char *rec, uint8_t type);
/* Reads what the helper sent and hands each whole record to on. false on
 * EOF or a stream that is not the protocol (a failed helper). */
bool helper_proc_drain(struct helper_proc *p, uint16_t magic, helper_rec_size_fn size,
                       helper_rec_fn on, void *ctx, uint64_t now);
/* Waits up to ms for the helper to have something to read. */
void helper_proc_wait(const struct helper_proc *p, int ms);

/* Restart delay after the n-th consecutive failure (n >= 1): base doubling,
 * at most max_ns. */
uint64_t helper_backoff_ns(unsigned n, uint64_t base_ns, uint64_t max_ns);

/* ---- the client's supervision: restart with backoff, the watchdog ---- */

enum helper_run { HELPER_OFF = 0, HELPER_RUNNING, HELPER_WAITING, HELPER_FINISHED };

struct helper_sup {
    enum helper_run run;
    uint64_t restart_at;
    unsigned fails; /* in a row; the client zeroes it once the helper serves */
};

/* A client's side of its protocol and lifecycle. */
struct helper_sup_ops {
    uint16_t magic;
    helper_rec_size_fn size;
    helper_rec_fn on;
    void (*spawn)(void *ctx); /* starts the helper; sets run */
    /* The helper went away, broke the protocol or (stalled) was silent past
     * the watchdog: the client says why and calls helper_sup_failed. */
    void (*failed)(void *ctx, bool stalled, uint64_t now);
};

/* Starts the helper again once its backoff is over, hands what it sent to
 * ops->on, and reports a failure to ops->failed. *done is the client's own
 * "the helper said it is done" flag, which ops->on sets: then the helper is
 * reaped, run is FINISHED and this returns true. */
bool helper_sup_poll(struct helper_sup *s, struct helper_proc *p, const struct helper_sup_ops *ops,
                     void *ctx, const bool *done, uint64_t watchdog_ns);
/* A helper that failed: killed, reaped and counted. False when that makes
 * max_fails in a row (run is OFF); else true, with a restart after the
 * backoff (base doubling to max_ns; run is WAITING). */
bool helper_sup_failed(struct helper_sup *s, struct helper_proc *p, unsigned max_fails,
                       uint64_t base_ns, uint64_t max_ns, uint64_t now);

/* ---- the helper's side ---- */

/* Writes one record to stdout (header filled in here); a monitor that went
 * away ends the helper. */
void helper_send(uint16_t magic, void *rec, uint8_t type, size_t len);
/* Sleeps until deadline (CLOCK_MONOTONIC ns); false when stdin says the
 * monitor is gone. */
bool helper_wait_until(uint64_t deadline);
/* The same, calling beat(ctx) every step_ns meanwhile: the heartbeat that
 * keeps the client's watchdog quiet while the helper waits to retry. */
bool helper_idle_until(uint64_t deadline, uint64_t step_ns, void (*beat)(void *ctx), void *ctx);

#endif
