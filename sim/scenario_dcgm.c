/*
 * scenario_dcgm.c — the [dcgm] section of a scenario file. See
 * scenario_dcgm.h; docs/simulator.md lists the keys.
 */
#include "scenario_dcgm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario_values.h"

#define DCGM_DEFAULT_PORT 5555 /* DCGM_HE_PORT_NUMBER */

/* A key whose value is one of names[] (n of them): its index into *out, or
 * -1 with "[dcgm] KEY: expected a, b or c, got 'x'". */
static int one_of(const char *key, const char *value, const char *const *names, int n, int *out,
                  char *err, size_t errlen)
{
    size_t len;
    for (int i = 0; i < n; i++)
        if (!strcmp(value, names[i])) {
            *out = i;
            return 0;
        }
    len = (size_t)snprintf(err, errlen, "[dcgm] %s: expected", key);
    for (int i = 0; i < n && len < errlen; i++)
        len += (size_t)snprintf(err + len, errlen - len, "%s %s",
                                i == 0       ? ""
                                : i == n - 1 ? " or"
                                             : ",",
                                names[i]);
    if (len < errlen)
        snprintf(err + len, errlen - len, ", got '%s'", value);
    return -1;
}

/* "unix:PATH", "tcp:HOST" or "tcp:HOST:PORT", or "none". */
static int hostengine_key(struct sim_dcgm *d, const char *value)
{
    if (!strcmp(value, "none")) {
        d->hostengine = SIM_DCGM_HE_NONE;
        return 0;
    }
    if (!strncmp(value, "unix:", 5)) {
        const char *path = value + 5;
        if (path[0] != '/' || strlen(path) >= sizeof(d->he_path))
            return -1;
        snprintf(d->he_path, sizeof(d->he_path), "%s", path);
        d->hostengine = SIM_DCGM_HE_UNIX;
        return 0;
    }
    if (!strncmp(value, "tcp:", 4)) {
        const char *host = value + 4, *colon = strrchr(host, ':');
        size_t n = colon ? (size_t)(colon - host) : strlen(host);
        unsigned port = DCGM_DEFAULT_PORT;
        if (n == 0 || n >= sizeof(d->he_host))
            return -1;
        if (colon && (scenario_parse_uint(colon + 1, &port) != 0 || port == 0 || port > 65535))
            return -1;
        memcpy(d->he_host, host, n);
        d->he_host[n] = '\0';
        d->he_port = port;
        d->hostengine = SIM_DCGM_HE_TCP;
        return 0;
    }
    return -1;
}

/* "A-B": two times in seconds with A < B (A may be negative: "-5-10"). */
static int window_key(const char *value, double *from, double *until)
{
    char *end;
    double a = strtod(value, &end), b;
    if (end == value || *end != '-' || !isfinite(a))
        return -1;
    const char *s = end + 1;
    b = strtod(s, &end);
    if (end == s || *end || !isfinite(b) || !(a < b))
        return -1;
    *from = a;
    *until = b;
    return 0;
}

int scenario_dcgm_key(struct sim_dcgm *d, const char *name, const char *value, char *err,
                      size_t errlen)
{
    static const char *const embedded[] = {"ok", "requires_root", "profiling_held",
                                           "module_not_loaded"};
    static const char *const hang[] = {"none", "connect", "watch", "read"};
    if (!strcmp(name, "hostengine")) {
        if (hostengine_key(d, value) == 0)
            return 0;
        snprintf(err, errlen,
                 "[dcgm] hostengine: expected none, unix:/PATH, tcp:HOST or "
                 "tcp:HOST:PORT, "
                 "got '%s'",
                 value);
        return -1;
    }
    if (!strcmp(name, "hostengine_down")) {
        if (window_key(value, &d->down_from, &d->down_until) == 0) {
            d->down = true;
            return 0;
        }
        snprintf(err, errlen,
                 "[dcgm] hostengine_down: expected FROM-UNTIL in seconds with "
                 "FROM < UNTIL, got '%s'",
                 value);
        return -1;
    }
    if (!strcmp(name, "embedded"))
        return one_of(name, value, embedded, 4, &d->embedded, err, errlen);
    if (!strcmp(name, "multi_pass")) {
        if (scenario_parse_bool(value, &d->multi_pass) == 0)
            return 0;
        snprintf(err, errlen, "[dcgm] multi_pass: expected yes or no, got '%s'", value);
        return -1;
    }
    if (!strcmp(name, "hang"))
        return one_of(name, value, hang, 4, &d->hang, err, errlen);
    if (!strcmp(name, "hang_after")) {
        if (scenario_parse_double(value, &d->hang_after) == 0 && isfinite(d->hang_after))
            return 0;
        snprintf(err, errlen, "[dcgm] hang_after: expected seconds, got '%s'", value);
        return -1;
    }
    snprintf(err, errlen, "[dcgm] unknown key '%s'", name);
    return -1;
}
