/*
 * trust.h — whether a file may tell us what to do: the configuration
 * file and the fleet's credentials file (--prometheus-auth, auth_file).
 *
 * As ssh does for its own configuration: the file must be owned by the
 * user the program runs as (the effective uid) or by root, and writable
 * by no one else (no group or other write bit). Under sudo -E, $HOME is
 * the user's and the effective uid 0: a file of the user's is refused,
 * since whoever can write it could steer a root process. A group-writable
 * file is refused even when the group is the user's own (OpenSSH accepts
 * that after reading the group's members from the user database; we do
 * not read it). docs/config.md.
 */
#ifndef MIGMON_TRUST_H
#define MIGMON_TRUST_H

#include <stddef.h>
#include <sys/stat.h>

/* 0 when st's owner and mode can be trusted by a process running as euid;
 * else -EPERM with "owned by uid N, ..." or "writable by others than its
 * owner (mode 0NNN)" in why. */
int trust_check(const struct stat *st, unsigned euid, char *why, size_t whylen);

/* What st is, for a file that is not a regular one ("a FIFO"). */
const char *trust_kind(const struct stat *st);

/*
 * Open path for reading when it is a regular file (or a link to one) that
 * trust_check accepts for this process. Its kind is looked at before it is
 * opened (opening a device can act on it), the open never waits (a FIFO),
 * and what was opened is checked again. Returns the descriptor (blocking,
 * close-on-exec), or a negative errno with why: "no such file" style text
 * from strerror, "a FIFO, not a regular file" (-EINVAL, -EISDIR for a
 * directory), or trust_check's (-EPERM).
 */
int trust_open(const char *path, char *why, size_t whylen);

#endif
