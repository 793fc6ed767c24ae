/*
 * scenario_values.c — the scalar values of a scenario file: numbers,
 * booleans, raw byte strings, modes, architectures and driver versions.
 * Each parser takes the value's text and returns 0 or -1; the section and
 * key that a message names are the caller's (scenario.c).
 */
#include "scenario_values.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int scenario_parse_ull(const char *v, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 0);
    if (end == v || *end || errno || *v == '-')
        return -1;
    *out = x;
    return 0;
}

int scenario_parse_uint(const char *v, unsigned *out)
{
    unsigned long long x;
    if (scenario_parse_ull(v, &x) != 0 || x > 0xFFFFFFFFull)
        return -1;
    *out = (unsigned)x;
    return 0;
}

int scenario_parse_long(const char *v, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 0);
    if (end == v || *end || errno)
        return -1;
    *out = x;
    return 0;
}

int scenario_parse_double(const char *v, double *out)
{
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || isnan(x))
        return -1;
    *out = x;
    return 0;
}

int scenario_parse_bool(const char *v, bool *out)
{
    static const char *yes[] = {"true", "yes", "on", "1"}, *no[] = {"false", "no", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (!strcasecmp(v, yes[i])) {
            *out = true;
            return 0;
        }
        if (!strcasecmp(v, no[i])) {
            *out = false;
            return 0;
        }
    }
    return -1;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/*
 * A raw string (struct sim_raw): the text with C-style escapes decoded.
 * \xNN takes exactly two hex digits; \e is ESC (0x1b), \a BEL, \b BS,
 * \t, \n, \r, and \\ a backslash. Any other byte stands for itself (inih
 * has trimmed the ends and cut a " ;" comment: write \x20 or \x3b for them).
 */
int scenario_parse_raw(const char *v, struct sim_raw *out, char *err, size_t errlen)
{
    unsigned n = 0;
    while (*v) {
        int ch = (unsigned char)*v++;
        if (ch == '\\') {
            int e = (unsigned char)*v++, hi, lo;
            switch (e) {
            case 'x':
                if ((hi = hexval(v[0])) < 0 || (lo = hexval(v[1])) < 0) {
                    snprintf(err, errlen, "\\x needs two hex digits");
                    return -1;
                }
                ch = hi * 16 + lo;
                v += 2;
                break;
            case 'e':
                ch = 0x1b;
                break;
            case 'a':
                ch = '\a';
                break;
            case 'b':
                ch = '\b';
                break;
            case 't':
                ch = '\t';
                break;
            case 'n':
                ch = '\n';
                break;
            case 'r':
                ch = '\r';
                break;
            case '\\':
                ch = '\\';
                break;
            default:
                snprintf(err, errlen, "unknown escape (known: \\xNN \\e \\a \\b \\t \\n \\r \\\\)");
                return -1;
            }
        }
        if (n == sizeof(out->bytes)) {
            snprintf(err, errlen, "longer than %zu bytes", sizeof(out->bytes));
            return -1;
        }
        out->bytes[n++] = (char)ch;
    }
    out->set = true;
    out->len = n;
    return 0;
}

/* on / off / unsupported, for MIG and ECC modes. */
int scenario_parse_mode(const char *v, int *out)
{
    bool b;
    if (!strcasecmp(v, "unsupported") || !strcasecmp(v, "none")) {
        *out = -1;
        return 0;
    }
    if (scenario_parse_bool(v, &b) != 0)
        return -1;
    *out = b ? 1 : 0;
    return 0;
}

int scenario_parse_arch(const char *v, unsigned *out)
{
    static const struct {
        const char *name;
        unsigned arch;
    } archs[] = {{"kepler", 2}, {"maxwell", 3}, {"pascal", 4},     {"volta", 5},  {"turing", 6},
                 {"ampere", 7}, {"ada", 8},     {"hopper", 9},     {"blackwell", 10},
                 {"rubin", 13}, {"unknown", 0xffffffffu}};
    for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++) {
        if (!strcasecmp(v, archs[i].name)) {
            *out = archs[i].arch;
            return 0;
        }
    }
    return scenario_parse_uint(v, out);
}

/* "535.129.03" or "450.66": two or three dot-separated decimal parts. */
int sim_version_parse(const char *s, sim_version_t *out)
{
    unsigned long part[3] = {0, 0, 0};
    int n = 0;
    for (;;) {
        char *end;
        if (*s < '0' || *s > '9')
            return -1;
        part[n] = strtoul(s, &end, 10);
        if (part[n] > 65535)
            return -1;
        n++;
        s = end;
        if (*s == '\0')
            break;
        if (*s != '.' || n == 3)
            return -1;
        s++;
    }
    if (n < 2)
        return -1;
    *out = SIM_VERSION(part[0], part[1], part[2]);
    return 0;
}
