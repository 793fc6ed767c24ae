/*
 * scenario_values.h — a scenario file's scalar values: the types they are
 * read into (driver versions, raw byte strings) and their parsers
 * (scenario_values.c). Each parser returns 0, or -1 on a value that is not
 * one. Below scenario.h, which builds the scenario from these.
 */
#ifndef SIM_SCENARIO_VALUES_H
#define SIM_SCENARIO_VALUES_H

#include <stdbool.h>
#include <stddef.h>

#define SIM_RAW_LEN 200 /* a raw string's bytes: more than an INI line can give */

/* Driver versions compare as (major, minor, patch); "535.129.03" = 535,129,3. */
typedef unsigned long long sim_version_t;
#define SIM_VERSION(a, b, c) (((sim_version_t)(a) << 32) | ((sim_version_t)(b) << 16) | (c))

/*
 * A hostile scenario's raw string ([system] hostile = true): the exact bytes
 * a call writes instead of the modelled text, after decoding the escapes
 * \xNN, \e, \a, \b, \t, \n, \r and \\. It may hold any byte, NUL
 * included. A caller's buffer of `length` bytes gets min(len, length) of
 * them, and a NUL only if there is room left (model_copy_raw).
 */
struct sim_raw {
    bool set;
    unsigned len;
    char bytes[SIM_RAW_LEN];
};

/* Parses "535.129.03" or "450.66"; returns 0 or -1. */
int sim_version_parse(const char *s, sim_version_t *out);
/* strtoull base 0 (decimal, 0x hex, 0 octal), the whole string; no sign. */
int scenario_parse_ull(const char *v, unsigned long long *out);
int scenario_parse_uint(const char *v, unsigned *out);
int scenario_parse_long(const char *v, long *out);
int scenario_parse_double(const char *v, double *out);
/* true/false, yes/no, on/off, 1/0 */
int scenario_parse_bool(const char *v, bool *out);
/* A raw byte string (see docs/simulator.md); a message in err on -1. */
int scenario_parse_raw(const char *v, struct sim_raw *out, char *err, size_t errlen);
/* on / off / unsupported, for MIG and ECC modes. */
int scenario_parse_mode(const char *v, int *out);
/* An architecture name (ampere, hopper, ...) as NVML's number. */
int scenario_parse_arch(const char *v, unsigned *out);

#endif
