/*
 * prom_client.h — instant queries to Prometheus' HTTP API (libcurl, jansson).
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

/* The largest answer read (bytes): a fleet of 1,000 nodes of 8 GPUs and
 * 56 MIG instances answers the largest query in about 10 MiB. */
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
void promc_close(struct promc *c);

/* s as a PromQL double-quoted string literal's contents (\\, \", \n and
 * other controls as \xHH), into out of cap bytes; cut at a whole escape.
 * Returns the length written. */
size_t promql_quote(char *out, size_t cap, const char *s);

#endif
