/*
 * prom_backend_int.h — the fleet backend's state, shared by its two files:
 * prom_backend.c (the backend: open, sample, the front end's ask, the
 * charts' past, close) and prom_rounds.c (the query thread's rounds). Not
 * for other modules.
 */
#ifndef MIGMON_PROM_BACKEND_INT_H
#define MIGMON_PROM_BACKEND_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/prometheus/prom_client.h"
#include "backend/prometheus/prom_fleet.h"
#include "core/history.h"
#include "core/model.h"

/* A round of queries gets 90% of the interval, so the next round starts on
 * time, and at least a second (a round of a large fleet's queries takes a
 * Prometheus longer than a short interval: the rounds then follow one
 * another, each sample taking the last); --once gets 60 s (its --timeout
 * bounds the wait for it). */
#define ROUND_SHARE 0.9
#define ROUND_MIN_MS 1000u
#define ROUND_ONCE_MS 60000u
/* A round that asks aggregates over devices' series (under a device
 * filter, or of nodes whose exporters give no summaries): they cost
 * Prometheus a pass over every device's series they count (a few seconds
 * at 10,000 GPUs), more than a short interval; such a round gets this
 * long at least, the screen keeping the last result meanwhile */
#define AGGREGATES_ROUND_MS 15000u
/* close waits this long for the query threads, then leaves them behind */
#define CLOSE_WAIT_MS 300u
/* A range query for the charts' past gets this long (the screen never
 * waits for it) */
#define PAST_TIMEOUT_MS 5000u
/* The devices held for the monitor (the nodes it shows), at most: 64
 * nodes of 64 devices */
#define VIEW_DEVICES_MAX 4096u
/* The nodes whose devices the monitor may ask for at once */
#define ASK_NODES_MAX 64u
/* A page of the devices' queries: at most so many nodes, and about so
 * many devices (a node's count from its aggregates; 64 when unknown):
 * about 2.5 kB of answer a device */
#define PAGE_NODES 256u
#define PAGE_DEVICES 2048u
/* Bytes of one answer read at most (read as it comes: memory does not
 * grow with it; this bounds the time a hostile server can take) */
#define ANSWER_MAX PROMC_MAX_ANSWER
/* A chart's past: one device's twenty-odd series of at most 11,000
 * points is under 8 MiB; the answer is parsed whole (a tree several times
 * its size), so a larger one is refused rather than held */
#define PAST_ANSWER_MAX (8u << 20)
/* Targets down whose devices of the last 10 minutes are read, at most
 * (each is named in the aggregates' queries) */
#define DOWN_MAX 1024u
/* Reasons of one round (failed queries), kept with its result */
#define WHY_POOL 16384u

struct why_pool {
    char buf[WHY_POOL];
    size_t len;
};

struct prom_state {
    struct promc *pc;
    /* the URL as every message shows it: its userinfo redacted
     * (text_url_redact); the client alone holds the one it asks */
    char url[512];
    char match[2048]; /* --prometheus-match, as promq_match_parse wrote it */
    unsigned interval_ms, round_ms;
    bool one_shot;
    bool every_node; /* every node's devices each round (no front end asks) */
    uint64_t opened_ns;
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop, exited;
    bool interrupted;
    /* The front end's ask, under mu: the device filter and the nodes
     * whose devices it shows (instances); asked: it changed since the
     * last round began (a round starts at once). */
    struct {
        char filter[64];
        char (*inst)[128];
        size_t n;
        bool any;     /* an ask came at all */
        uint64_t gen; /* asks that wanted a round */
    } ask;
    bool asked;
    uint64_t answered; /* the gen of the ask the published result answers */
    /* The last round's result, under mu: the nodes (in name order, with
     * their devices' place in last), the devices of the nodes that were
     * wanted, the reasons both point into (pool[cur]). */
    struct node_summary *nodes;
    size_t nnodes;
    const char *nodes_why;
    char nodes_filter[64];
    uint64_t nodes_ns; /* when the node round was made */
    struct fleet last;
    struct why_pool pool[2];
    int cur;
    bool have;           /* a round has given nodes at least once */
    unsigned rounds;     /* rounds finished */
    const char *asking;  /* the query in flight (its name), NULL between rounds */
    char why[1024];      /* the last round's failure, "" when it was whole */
    uint64_t last_ok_ns; /* when a round last gave nodes */
    unsigned stale;      /* rounds since then */
    char err[1100];      /* last_error */
    uint64_t bytes;      /* answers read, every query */
    /* The charts' past (past_ask): asked from the front end's thread,
     * fetched by the past thread with a client of its own, started at the
     * first ask; the ask and the answer are handed over under pmu. */
    pthread_mutex_t pmu;
    pthread_cond_t pcv;
    struct promc *ppc; /* the past thread's client; NULL before the first ask */
    pthread_t pthread;
    bool pstop, pexited;
    bool pask; /* ask holds an ask the past thread has not taken */
    struct {
        char uuid[MIGMON_UUID_LEN];
        char node[64];
        unsigned points, interval_ms;
        uint64_t id;
        int64_t end_ms; /* the time of the ask: the past ends there */
    } past;
    int pans; /* 1: ans holds an answer to ans_id; -1: that ask failed (ans_err); 0 none */
    struct hist_past ans;
    uint64_t ans_id;
    char ans_err[512];
};

/* A reason into the pool (printf-like), or a fixed one when it is full. */
const char *prom_pool_put(struct why_pool *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* close or interrupt asked (mu taken). */
bool prom_stopping(struct prom_state *st);
/* The query thread (prom_rounds.c): rounds until close. */
void *prom_query_thread(void *arg);

#endif
