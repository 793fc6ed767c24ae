/*
 * scenario_values.h — parsers for a scenario file's scalar values
 * (scenario_values.c). Each returns 0, or -1 on a value that is not one.
 */
#ifndef SIM_SCENARIO_VALUES_H
#define SIM_SCENARIO_VALUES_H

#include <stdbool.h>
#include <stddef.h>

#include "scenario.h"

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
