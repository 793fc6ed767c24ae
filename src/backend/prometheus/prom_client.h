/*
 * prom_client.h — instant and range queries to Prometheus' HTTP API
 * (libcurl, jansson).
 *
 * One client per thread (it owns one curl handle). Every query has a
 * deadline and a bound on the answer's size; an answer past the bound is
 * cut off and refused, never parsed. TLS is verified against the system's
 * CA store (libcurl's default).
 */
#ifndef MIGMON_PROM_CLIENT_H
#define MIGMON_PROM_CLIENT_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/prometheus/prom_stream.h"

/* The largest answer read (bytes): the values query answers about 163 kB
 * a node of 8 GPUs and 56 MIG instances (bench/bench_fleet.c), so this
 * holds about 200 such nodes. */
#define PROMC_MAX_ANSWER (32u << 20)

struct promc;

/*
 * url: the server's base ("http://prom:9090", "https://host/prometheus");
 * auth_file NULL or a file whose first line is "Bearer TOKEN" (a bearer
 * token) or "USER:PASSWORD" (basic authentication). The file is read once,
 * here. Returns 0, or -1 with one line in err.
 */
int promc_open(struct promc **out, const char *url, const char *auth_file, char *err,
               size_t errlen);
/* https: trust the CA certificates of this PEM file (--prometheus-ca)
 * instead of the system's store; it must be readable now. Returns 0, or
 * -1 with one line in err. */
int promc_set_ca(struct promc *c, const char *ca_file, char *err, size_t errlen);
/* A second client (its own curl handle, for another thread) with the
 * URL and credentials of like; no file is read again. */
int promc_open_like(struct promc **out, const struct promc *like, char *err, size_t errlen);
/* From any thread: a query in progress ends within about 100 ms, and so do
 * the queries after it, failing. */
void promc_abort(struct promc *c);
/*
 * Runs promql (an instant query, /api/v1/query) with a deadline of
 * timeout_ms and returns the answer's data.result array (a vector) in
 * *result, owned by the caller (json_decref). -1 with one line in err: the
 * server unreachable, an HTTP error, an answer too large, not JSON, or an
 * error status (Prometheus' error message).
 */
int promc_query(struct promc *c, const char *promql, unsigned timeout_ms, size_t max_bytes,
                json_t **result, char *err, size_t errlen);
/*
 * Runs promql (an instant query, POSTed: a query of any length) and hands
 * every series of the answer to fn as it is read (prom_stream.h): nothing
 * of the answer is kept. A transfer past max_bytes is cut off. 0 when the
 * whole answer was read; -1 with one line in err (as promc_query; series
 * handed over before the failure were handed over).
 */
int promc_query_each(struct promc *c, const char *promql, unsigned timeout_ms, size_t max_bytes,
                     prom_item_fn fn, void *ctx, char *err, size_t errlen);
/* Bytes of answers this client has read since it was opened. */
uint64_t promc_bytes(const struct promc *c);
/*
 * A range query (/api/v1/query_range) evaluated at start_ms, start_ms +
 * step_ms, ... up to end_ms (Unix time in milliseconds; Prometheus refuses
 * more than 11,000 points a series): *result is data.result, a matrix
 * (an array of {metric, values: [[t, "v"], ...]}). As promc_query
 * otherwise.
 */
int promc_query_range(struct promc *c, const char *promql, int64_t start_ms, int64_t end_ms,
                      unsigned step_ms, unsigned timeout_ms, size_t max_bytes, json_t **result,
                      char *err, size_t errlen);
void promc_close(struct promc *c);

/* An answer's body (len bytes, HTTP status code) checked: "status":
 * "success" and data.resultType type_wanted ("vector", "matrix"); 0 with
 * data.result in *result (the caller's), or -1 with one line in err (not
 * JSON, Prometheus' error message, another type): the server's text in it
 * cleaned and cut (text_take), so err is safe to show. No I/O. */
int promc_parse(const char *buf, size_t len, long code, const char *type_wanted, json_t **result,
                char *err, size_t errlen);

/* s as a PromQL double-quoted string literal's contents (\\, \", \n and
 * other controls as \xHH), into out of cap bytes; cut at a whole escape.
 * Returns the length written. */
size_t promql_quote(char *out, size_t cap, const char *s);

#endif
