/*
 * debuglog.h — the --debug log: one line per NVML call and loader attempt.
 *
 * The seed's log grew ~250 MB/day on a DGX (30 lines per tick, no rotation).
 * Ours is size-capped with one rotation (FILE -> FILE.1), created with mode
 * 0600 without following a symlink at the final component, and written one
 * line per write(2) so a crash loses nothing already logged.
 */
#ifndef MIGMON_DEBUGLOG_H
#define MIGMON_DEBUGLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DEBUGLOG_DEFAULT_MAX_BYTES (8u * 1024u * 1024u)

/* Resolve the default path: $XDG_STATE_HOME/mig-gpu-mon/debug.log, falling
 * back to $HOME/.local/state/mig-gpu-mon/debug.log. Creates the directory
 * (0700). Returns 0 or -1 with a message in err. */
int debuglog_default_path(char *out, size_t outlen, char *err, size_t errlen);

/* Open (append) the log. max_bytes 0 means the default cap. */
int debuglog_open(const char *path, uint64_t max_bytes, char *err, size_t errlen);
void debuglog_close(void);
bool debuglog_enabled(void);
const char *debuglog_path(void);

/* Append one line (a newline is added). No-op when disabled. */
void debuglog_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Monotonic nanoseconds, for call latencies. */
uint64_t debuglog_now_ns(void);

#endif
