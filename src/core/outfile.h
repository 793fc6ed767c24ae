/*
 * outfile.h — files the program writes its output to (record -o, profile -o
 * and --timeline): never through a symbolic link to a file, and a line
 * reaches a regular file whole or not at all (docs/record.md).
 */
#ifndef MIGMON_OUTFILE_H
#define MIGMON_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* A character device (/dev/null, a terminal), a FIFO or a socket: written to
 * as it is, since it holds nothing a write could destroy. */
bool outfile_is_stream(mode_t m);

/*
 * Opens path for writing with flags (O_WRONLY and any of O_CREAT, O_TRUNC,
 * O_EXCL, O_APPEND; O_CLOEXEC and O_NOCTTY are added). The final component
 * is never followed when it is a symbolic link: such a path is refused
 * (errno ELOOP), unless the link names a character device, FIFO or socket
 * (/dev/stdout, /dev/fd/N), which is then opened without O_CREAT, O_TRUNC
 * and O_EXCL and checked to still be one after the open. A stream named
 * directly is opened the same way. A directory is refused at once
 * (EISDIR). Returns the descriptor, or -1 with errno set;
 * *st (optional) gets what the descriptor is.
 */
int outfile_open(const char *path, int flags, mode_t mode, struct stat *st);

/* The message for outfile_open's failure err on path (ELOOP: the symlink
 * rule; EISDIR: a directory), into out. */
void outfile_strerror(char *out, size_t cap, const char *path, int err);

/*
 * Writes all of b (n bytes) to fd. On a failure (ENOSPC, EIO, a short
 * write), what this call wrote to a regular file is cut off again, so the
 * file ends where it ended before: with the last whole batch. Returns 0 or
 * -errno; *cut (optional) is set when bytes were taken back.
 */
int outfile_write(int fd, const char *b, size_t n, bool *cut);

/*
 * The length of the cut line a regular file ends with (the bytes after its
 * last newline; at most the last 64 KiB are looked at, and a longer cut line
 * counts as 65,536), 0 when it is empty or ends in a newline, -1 when it
 * cannot be read.
 */
long outfile_fragment(int fd);

/*
 * Whether fd is a pipe or socket whose reader has gone (`| head -3` has
 * read its lines and exited): a write there fails with EPIPE, and that is
 * the normal end of a pipeline, not an error.
 */
bool outfile_reader_gone(int fd);

/*
 * The end of what a command printed on standard output: flushed, and
 * checked. 0 when it all reached it, and 0 too when the reader has gone (a
 * closed pipe ends the output quietly, as it ends a recording); otherwise
 * 1, the exit status, after one line on stderr: "WHO: writing the WHAT
 * failed: REASON".
 */
int outfile_stdout_done(const char *who, const char *what);

#endif
