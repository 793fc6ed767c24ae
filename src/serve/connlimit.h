/*
 * connlimit.h — the bounds on the exporter's HTTP connections
 * (docs/prometheus.md, "Bounds"): every request has a deadline counted
 * from the accept (or from the answer before it on a kept-alive
 * connection), a client (a source address: IPv4, or an IPv6 /64) holds
 * at most max_per_client connections and all together at most max_conns.
 * A new connection is always let in: when it goes over a bound, one of the
 * bound's older connections is chosen to be closed, the oldest of the
 * first kind there is: kept alive after an answer and waiting for another
 * request; waiting for its first request (slow or idle); being answered.
 * So connections held open, by another client or by the scraper's own
 * address, never keep a new one out, and a scraper, whose request comes
 * at once and is answered from memory, is done before it is the oldest.
 * A connection waiting for its first request is spared for its first
 * CONNLIMIT_GRACE_NS while there is one being answered to close instead
 * (a flood of back-to-back requests from the scraper's own address), and
 * after it too when the caller's has_request says its request has come
 * and is only not yet read (a server kept busy past the grace by such a
 * flood): it is then closed only after those being answered.
 *
 * Bookkeeping only: the caller embeds a struct connlimit_conn in each of
 * its connections and closes those it is told to. One thread owns a
 * struct connlimit and every conn listed in it (no lock inside).
 */
#ifndef MIGMON_CONNLIMIT_H
#define MIGMON_CONNLIMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

struct connlimit_client;

struct connlimit_conn {
    struct connlimit_conn *prev, *next;   /* every listed conn, oldest deadline first */
    struct connlimit_conn *cprev, *cnext; /* its client's, in the same order */
    struct connlimit_client *client;      /* NULL once unlisted */
    uint64_t deadline_ns;                 /* CLOCK_MONOTONIC */
    bool answering;                       /* its request is in and being answered */
    bool answered;                        /* a request before was answered (kept alive) */
};

#define CONNLIMIT_BUCKETS 256
#define CONNLIMIT_GRACE_NS (100ull * 1000000ull) /* 100 ms */

struct connlimit {
    unsigned max_conns, max_per_client;
    uint64_t deadline_ns; /* what each request gets */
    unsigned n;           /* listed conns */
    unsigned clients;     /* distinct clients among them */
    struct connlimit_conn *head, *tail;
    struct connlimit_client *bucket[CONNLIMIT_BUCKETS];
    /* Optional (NULL: never): the bytes of c's request have come, unread
     * (the caller peeks at its socket); asked only of a conn past its
     * grace that would otherwise be closed. */
    bool (*has_request)(struct connlimit_conn *c);
};

void connlimit_init(struct connlimit *l, unsigned max_conns, unsigned max_per_client,
                    uint64_t deadline_ns);
/* List c, a connection from sa (an AF_INET or AF_INET6 address as accept
 * gives it; NULL or another family: one client for all of them) accepted
 * at now, waiting for its request. *victim: a listed conn that is now
 * unlisted and must be closed, or NULL. Returns 0, or -1 when out of
 * memory (c is not listed; close it). */
int connlimit_add(struct connlimit *l, struct connlimit_conn *c, const struct sockaddr *sa,
                  uint64_t now, struct connlimit_conn **victim);
/* c's request is in: it is being answered (its deadline stays). */
void connlimit_answering(struct connlimit_conn *c);
/* c's answer is sent and it stays open for another request, which gets a
 * new deadline from now. */
void connlimit_answered(struct connlimit *l, struct connlimit_conn *c, uint64_t now);
/* Is c's client at its bound, or are all together? Then c had better be
 * closed after its answer rather than kept alive: its next request would
 * be answered ahead of the connections still waiting to be accepted,
 * while a connection opened again waits its turn behind them. */
bool connlimit_crowded(const struct connlimit *l, const struct connlimit_conn *c);
/* A listed conn whose deadline is past at now, unlisted (close it), or
 * NULL. Call until NULL. */
struct connlimit_conn *connlimit_expired(struct connlimit *l, uint64_t now);
/* The earliest deadline of a listed conn, or 0 when none is listed. */
uint64_t connlimit_next_deadline(const struct connlimit *l);
/* c is closed: unlist it if it still is (an unlisted conn is left alone). */
void connlimit_remove(struct connlimit *l, struct connlimit_conn *c);

#endif
