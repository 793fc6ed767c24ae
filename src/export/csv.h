/*
 * csv.h — the snapshot as CSV rows (RFC 4180): one row per device, the
 * columns of csv_write_header (docs/record.md). Every value has a source
 * column after it. An unknown value is an empty field, never 0; a MIG row
 * leaves the parent GPU's values to the GPU row.
 */
#ifndef MIGMON_CSV_H
#define MIGMON_CSV_H

#include <stddef.h>
#include <stdio.h>

#include "core/snapshot.h"

/*
 * s as one CSV field into out (cap bytes, NUL-terminated, cut short when it
 * does not fit); returns the length the whole field needs, like snprintf.
 * Quoted, with '"' doubled, when it holds a comma, a quote, a line break or
 * starts or ends with a space; else as it is. A field that starts with
 * '=', '+', '-', '@', a tab or a carriage return (a formula to a
 * spreadsheet) gets a leading "'" and is quoted, so it is read as text.
 */
size_t csv_quote(char *out, size_t cap, const char *s);

/* The header line; the column set is fixed for a version of the program. */
void csv_write_header(FILE *f);
/* One row per device of s. */
void csv_write_rows(FILE *f, const struct snapshot *s);

#endif
