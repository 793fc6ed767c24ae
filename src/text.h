/*
 * text.h — strings from outside (driver, /proc, environment) made safe to
 * show and export: valid UTF-8, no terminal controls.
 *
 * Every outside string goes through text_clean before it is stored in a
 * snapshot, and every output (JSON, table, TUI) writes only cleaned
 * strings; jsonw additionally replaces invalid UTF-8 on the way out, so a
 * string that slipped through still yields valid JSON.
 */
#ifndef MIGMON_TEXT_H
#define MIGMON_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decode one UTF-8 sequence at s (at most n bytes). Returns its length and
 * the code point in *cp, or 0 for an invalid, overlong, surrogate or
 * truncated sequence (then *cp is undefined). */
size_t text_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/* A control a terminal would act on or that reorders text: C0 (except
 * none: tab and newline are controls too), DEL, C1 (U+0080-U+009F), and the
 * bidirectional embeddings, overrides and isolates (U+202A-U+202E,
 * U+2066-U+2069). */
bool text_is_control(uint32_t cp);

/* In place, within cap bytes (cap includes the NUL; s need not be
 * terminated within cap, and is cut to cap - 1 bytes): each byte of an
 * invalid UTF-8 sequence and each byte of a control becomes '?', so the
 * length never changes and the result is valid UTF-8 and NUL-terminated.
 * Returns true when anything was changed. */
bool text_clean(char *s, size_t cap);
/* The same for a message of several lines: newlines are kept. */
bool text_clean_lines(char *s, size_t cap);

/* The edit distance from a to b in bytes: insertions, deletions,
 * substitutions and swaps of neighbours (the optimal string alignment
 * distance: "recrod" is 1 from "record"). For names: a string over
 * TEXT_DISTANCE_LEN bytes is TEXT_DISTANCE_FAR from anything. */
#define TEXT_DISTANCE_LEN 64u
#define TEXT_DISTANCE_FAR 1000u
unsigned text_distance(const char *a, const char *b);

/* snprintf(dst, cap, "%s", src) without the formatting machinery (cap > 0):
 * at most cap - 1 bytes, always terminated. For copies made every tick. */
void text_copy(char *dst, size_t cap, const char *src);

#endif
