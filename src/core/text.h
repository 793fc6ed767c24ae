/*
 * text.h — strings from outside (driver, /proc, sysfs, the kubelet,
 * Prometheus, the environment) made safe to show and export: valid UTF-8,
 * no terminal controls, no invisible or bidirectional format characters,
 * bounded.
 *
 * Every outside string goes through text_clean (or text_take, which also
 * cuts it to its buffer on a character boundary) where it enters the
 * program, once, before it is stored in a snapshot; every output (JSON,
 * table, CSV, line protocol, Prometheus, the screen) then writes only
 * cleaned strings. jsonw and the screen additionally replace what
 * text_is_control names on the way out, so a string that slipped through
 * still yields valid JSON and an intact terminal. docs/reliability.md
 * states the rule for users.
 */
#ifndef MIGMON_TEXT_H
#define MIGMON_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest names taken from outside where the name has a documented
 * bound (Kubernetes' "Object Names and IDs", RFC 1123): a pod's name is a
 * DNS subdomain of at most 253 characters (TEXT_NAME_MAX), a namespace's
 * or a container's a DNS label of at most 63 (TEXT_LABEL_MAX); they are
 * ASCII, so bytes. A longer string is no valid name and is cut to these,
 * which never cut a valid one. */
#define TEXT_NAME_MAX 253
#define TEXT_LABEL_MAX 63

/* Decode one UTF-8 sequence at s (at most n bytes). Returns its length and
 * the code point in *cp, or 0 for an invalid, overlong, surrogate or
 * truncated sequence (then *cp is undefined). */
size_t text_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/*
 * A character that is never shown or exported as it is:
 *  - a control a terminal would act on: C0 (U+0000-U+001F, tab and
 *    newline included), DEL (U+007F), C1 (U+0080-U+009F);
 *  - a character that is invisible or changes how text around it is
 *    ordered or joined: every format character of Unicode's general
 *    category Cf (soft hyphen U+00AD, U+0600-U+0605, the Arabic letter
 *    mark U+061C, U+06DD, U+070F, U+0890-U+0891, U+08E2, U+180E, the zero
 *    width space, non-joiner and joiner and the LRM/RLM marks
 *    U+200B-U+200F, the bidi embeddings and overrides U+202A-U+202E, the
 *    word joiner and invisible operators U+2060-U+2064, the bidi isolates
 *    and deprecated format characters U+2066-U+206F, the byte order mark
 *    U+FEFF, the interlinear annotations U+FFF9-U+FFFB, U+110BD, U+110CD,
 *    U+13430-U+1343F, U+1BCA0-U+1BCA3, U+1D173-U+1D17A, and the tags block
 *    U+E0000-U+E007F), the line separator U+2028 (Zl) and the paragraph
 *    separator U+2029 (Zp). The reserved U+2065 and U+E0000, U+E0002-
 *    U+E001F are in the blocks taken whole.
 * The list is Unicode 15's Cf, Zl and Zp, written out (not a library's
 * tables) so that it is the same on every system the binary runs on;
 * tests/unit/test_text.c checks it against Python's unicodedata.
 */
bool text_is_control(uint32_t cp);

/* In place, within cap bytes (cap includes the NUL; s need not be
 * terminated within cap, and is then cut to at most cap - 1 bytes, on a
 * character boundary): each byte of an invalid UTF-8 sequence and each
 * byte of a character text_is_control names becomes '?', so the length
 * never changes and the result is valid UTF-8 and NUL-terminated.
 * Returns true when anything was changed. */
bool text_clean(char *s, size_t cap);
/* The same for a message of several lines: newlines are kept. */
bool text_clean_lines(char *s, size_t cap);

/* The length of the longest start of s (n bytes) of at most max bytes that
 * does not end inside a UTF-8 sequence: a cut there leaves no half
 * character (an invalid byte counts as a character of its own). */
size_t text_utf8_cut(const char *s, size_t n, size_t max);

/* An outside string into a buffer, where it enters the program: src cut to
 * at most cap - 1 bytes on a character boundary (text_utf8_cut), then
 * cleaned as text_clean does. cap > 0. Returns true when src was cut or
 * anything in it replaced. */
bool text_take(char *dst, size_t cap, const char *src);

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

/*
 * A URL as it may be shown or stored anywhere but where it is used (JSON,
 * the table, the screen, recordings, the debug log, error messages): its
 * userinfo, the "user:password@" before the host, is redacted:
 * "http://user:secret@host/" becomes "http://user:xxx@host/" with the
 * password's place written "***", and a user part with no ':' (a token
 * given as the user name) is "***" whole.
 * A URL without "scheme://" is read from its start. The result is cleaned
 * (text_clean) and cut to cap - 1 bytes. cap > 0.
 */
void text_url_redact(char *dst, size_t cap, const char *url);

#endif
