/*
 * numfmt.h — numbers as the text exports write them (CSV, line protocol):
 * the same shape as the JSON writer's, so one reading prints alike
 * everywhere.
 */
#ifndef MIGMON_NUMFMT_H
#define MIGMON_NUMFMT_H

#include <stdbool.h>
#include <stddef.h>

/* A finite double: integers below 2^53 without a fraction, others with up
 * to 6 decimals, trailing zeros trimmed; from 1e50 on in the exponent form
 * ("%.17g": 1.0000000000000001e+300), which JSON, CSV and line protocol
 * read. out: at least 64 bytes. Returns false (out = "") for NaN
 * and infinities, which have no text form in either format. */
bool numfmt_double(char *out, size_t len, double v);

#endif
