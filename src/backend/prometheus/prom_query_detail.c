/*
 * prom_query_detail.c — the fleet view's PromQL for a set of nodes'
 * devices, and --prometheus-match (prom_query.h); the node round's
 * queries are prom_query.c's.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/prometheus/prom_client.h"
#include "backend/prometheus/prom_query.h"
#include "backend/prometheus/prom_query_int.h"

/* ---- a set of nodes' devices ---- */

#define MIGMON_VALUES                                                                        \
    "utilization_ratio|memory_utilization_ratio|sm_utilization_ratio|memory_used_bytes|"    \
    "memory_total_bytes|temperature_celsius|power_watts|power_limit_watts|"                 \
    "energy_joules_total|graphics_clock_hertz|sm_clock_hertz|memory_clock_hertz|"           \
    "fan_speed_ratio|performance_state|processes|health|lost|sampling_stalled"
#define DCGM_FIELDS                                                                          \
    "DCGM_FI_DEV_(FB_USED|FB_FREE|FB_RESERVED|GPU_TEMP|POWER_USAGE|GPU_UTIL|MEM_COPY_UTIL|" \
    "SM_CLOCK|MEM_CLOCK)|DCGM_FI_PROF_(GR_ENGINE_ACTIVE|SM_ACTIVE|DRAM_ACTIVE)"
#define MIGMON_PROCESS                                                                       \
    "gpu_memory_bytes|sm_utilization_ratio|memory_utilization_ratio|cpu_ratio|"             \
    "resident_memory_bytes"
#define DCGM_LABELS                                                                          \
    "instance, Hostname, hostname, gpu, UUID, modelName, pci_bus_id, GPU_I_ID, GPU_I_PROFILE"
#define IDENT_LABELS                                                                         \
    "__name__, instance, hostname, gpu, uuid, pci_bus_id, model, architecture, "            \
    "compute_capability, mig_mode, serial, vendor, gpu_instance_id, compute_instance_id, "  \
    "partition_id, mig_profile, mig_uuid, mig_index"

/* `instance=~"a|b"` for the nodes (their names matched literally). */
void pq_instances(struct sb *b, const char *const *inst, size_t n)
{
    struct sb re = {0};
    for (size_t i = 0; i < n; i++) {
        size_t cap = strlen(inst[i]) * 2 + 1;
        char *lit = malloc(cap);
        if (!lit) {
            re.bad = true;
            break;
        }
        promq_regex_quote(lit, cap, inst[i]);
        if (i)
            pq_put(&re, "|");
        pq_put(&re, lit);
        free(lit);
    }
    pq_put(b, "instance=~");
    if (re.bad || !re.p)
        b->bad = true;
    else
        pq_put_re(b, re.p);
    free(re.p);
}

/* The selector {names, instance=~set, match} into q->b. */
static void detail_sel(struct q *q, const char *names, const char *const *inst, size_t n)
{
    struct sb e = {0};
    pq_put(&e, names);
    pq_put(&e, ",");
    pq_instances(&e, inst, n);
    if (e.bad) {
        q->b.bad = true;
        free(e.p);
        return;
    }
    pq_sel(q, "", e.p);
    free(e.p);
}

/* agg (names now) of the up nodes, or agg (last_over_time(...[10m])) of the down ones. */
static void up_or_down(struct q *q, const char *agg, const char *names, const char *const *up,
                       size_t nup, const char *const *dn, size_t ndn)
{
    if (nup) {
        pq_putf(&q->b, "%s (", agg);
        detail_sel(q, names, up, nup);
        pq_put(&q->b, ")");
    }
    if (ndn) {
        pq_putf(&q->b, "%s%s (last_over_time(", nup ? " or " : "", agg);
        detail_sel(q, names, dn, ndn);
        pq_put(&q->b, "[10m]))");
    }
}

char *promq_detail(enum promq_detail which, const struct promq_scope *sc, const char *const *up,
                   size_t nup, const char *const *dn, size_t ndn)
{
    struct q q = {.match = sc && sc->match ? sc->match : "", .down = ""};
    if (nup + ndn == 0)
        return NULL;
    switch (which) {
    case PD_IDENT:
        up_or_down(&q, "max by (" IDENT_LABELS ")",
                   "__name__=~\"migmon_(host_info|device_info|mig_info|"
                   "last_sample_timestamp_seconds)\"",
                   up, nup, dn, ndn);
        break;
    case PD_DCGM_IDENT:
        up_or_down(&q, "count by (" DCGM_LABELS ")", "__name__=~\"" DCGM_FIELDS "\"", up, nup,
                   dn, ndn);
        break;
    case PD_VALUES:
        if (!nup)
            return NULL;
        pq_put(&q.b, "max by (__name__, instance, uuid, gpu_instance_id, compute_instance_id, "
                  "partition_id, source, state, pod, namespace, container) (");
        detail_sel(&q, "__name__=~\"migmon_(gpu|mig)_(" MIGMON_VALUES ")\"", up, nup);
        pq_put(&q.b, ")");
        break;
    case PD_DCGM_VALUES:
        if (!nup)
            return NULL;
        pq_put(&q.b, "max by (__name__, " DCGM_LABELS ", pod, namespace, container) (");
        detail_sel(&q, "__name__=~\"" DCGM_FIELDS "\"", up, nup);
        pq_put(&q.b, ")");
        break;
    case PD_PROCS:
        if (!nup)
            return NULL;
        pq_put(&q.b, "max by (__name__, instance, uuid, gpu_instance_id, compute_instance_id, "
                  "partition_id, pid, process_name, pod_uid, container, source) (");
        detail_sel(&q, "__name__=~\"migmon_process_(" MIGMON_PROCESS ")\"", up, nup);
        pq_put(&q.b, ")");
        break;
    default:
        return NULL;
    }
    return pq_done(&q.b);
}

/* ---- --prometheus-match ---- */

/* A PromQL string literal at *pp ("…" or '…', Go's escapes) into out. */
static int read_string(const char **pp, char *out, size_t cap)
{
    const char *p = *pp;
    char quote = *p;
    if (quote != '"' && quote != '\'')
        return -1;
    p++;
    size_t n = 0;
    while (*p && *p != quote) {
        char c = *p++;
        if (c == '\\') {
            char e = *p++;
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case '\\': case '"': case '\'': c = e; break;
            default:
                return -1; /* others are not needed in a label value here */
            }
        }
        if (n + 1 >= cap)
            return -1;
        out[n++] = c;
    }
    if (*p != quote)
        return -1;
    out[n] = '\0';
    *pp = p + 1;
    return 0;
}

int promq_match_parse(const char *s, char *out, size_t cap, char *err, size_t errlen)
{
    const char *p = s;
    struct sb b = {0};
    pq_put(&b, "");
    while (*p == ' ')
        p++;
    bool brace = *p == '{';
    if (brace)
        p++;
    int n = 0;
    for (;;) {
        while (*p == ' ')
            p++;
        if ((brace && *p == '}') || (!brace && !*p))
            break;
        char name[128];
        size_t k = 0;
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_'))
            goto bad;
        while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
               (*p >= '0' && *p <= '9')) {
            if (k + 1 >= sizeof(name))
                goto bad;
            name[k++] = *p++;
        }
        name[k] = '\0';
        if (strcmp(name, "__name__") == 0) {
            snprintf(err, errlen, "--prometheus-match: __name__ cannot be matched (the fleet "
                     "view names the series it reads)");
            free(b.p);
            return -1;
        }
        while (*p == ' ')
            p++;
        const char *op = NULL;
        if (strncmp(p, "=~", 2) == 0)
            op = "=~";
        else if (strncmp(p, "!~", 2) == 0)
            op = "!~";
        else if (strncmp(p, "!=", 2) == 0)
            op = "!=";
        else if (*p == '=')
            op = "=";
        else
            goto bad;
        p += strlen(op);
        while (*p == ' ')
            p++;
        char val[1024], quoted[4200];
        if (read_string(&p, val, sizeof(val)) != 0)
            goto bad;
        if (++n > PROMQ_MATCHERS_MAX) {
            snprintf(err, errlen, "--prometheus-match: more than %d matchers", PROMQ_MATCHERS_MAX);
            free(b.p);
            return -1;
        }
        promql_quote(quoted, sizeof(quoted), val);
        pq_putf(&b, "%s%s%s\"%s\"", n > 1 ? "," : "", name, op, quoted);
        while (*p == ' ')
            p++;
        if (*p == ',')
            p++;
        else if (!((brace && *p == '}') || (!brace && !*p)))
            goto bad;
    }
    if (brace) {
        p++;
        while (*p == ' ')
            p++;
        if (*p)
            goto bad;
    }
    if (b.bad || b.len + 1 > cap) {
        snprintf(err, errlen, "--prometheus-match: too long");
        free(b.p);
        return -1;
    }
    snprintf(out, cap, "%s", b.p);
    free(b.p);
    return 0;
bad:
    snprintf(err, errlen, "--prometheus-match %.200s: expected label matchers such as "
             "'{job=\"gpu\",cluster=~\"a|b\"}'", s);
    free(b.p);
    return -1;
}
