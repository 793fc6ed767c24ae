#include "core/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool outfile_is_stream(mode_t m)
{
    return S_ISCHR(m) || S_ISFIFO(m) || S_ISSOCK(m);
}

int outfile_open(const char *path, int flags, mode_t mode, struct stat *st)
{
    struct stat l, t, own;
    if (!st)
        st = &own;
    bool link = lstat(path, &l) == 0 && S_ISLNK(l.st_mode);
    bool there = stat(path, &t) == 0;
    bool stream = there && outfile_is_stream(t.st_mode);
    if (there && !link && S_ISDIR(t.st_mode)) {
        /* said as such at once, not as "exists" (O_EXCL) first; a link
         * to one falls under the link rule below */
        errno = EISDIR;
        return -1;
    }
    if (link && !stream) {
        errno = ELOOP;
        return -1;
    }
    int fd;
    if (stream) {
        /* Nothing to create, truncate or refuse; and a regular file put in
         * the stream's place since the stat is refused as one would be
         * without --append or --force, and left as it was. */
        fd = open(path, (flags & ~(O_CREAT | O_TRUNC | O_EXCL)) | O_CLOEXEC | O_NOCTTY);
        if (fd >= 0 && (fstat(fd, st) != 0 || !outfile_is_stream(st->st_mode))) {
            close(fd);
            errno = EEXIST;
            return -1;
        }
        return fd;
    }
    /* O_NOFOLLOW: a link put in place since the lstat is not followed
     * either (ELOOP; with O_EXCL the kernel answers EEXIST). */
    fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode);
    if (fd >= 0 && fstat(fd, st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

void outfile_strerror(char *out, size_t cap, const char *path, int err)
{
    if (err == ELOOP)
        snprintf(out, cap,
                 "%.3000s is a symbolic link: output is never written through one (name the "
                 "file it points to)",
                 path);
    else if (err == EISDIR)
        snprintf(out, cap, "%.3000s is a directory, not a file", path);
    else
        snprintf(out, cap, "%.3000s: %s", path, strerror(err));
}

/* What the failed write added to a regular file taken back. */
static bool take_back(int fd, size_t done)
{
    struct stat st;
    if (done == 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    int fl = fcntl(fd, F_GETFL);
    bool append = fl >= 0 && (fl & O_APPEND);
    off_t end = append ? st.st_size : lseek(fd, 0, SEEK_CUR);
    if (end < 0 || (uint64_t)end < done || ftruncate(fd, end - (off_t)done) != 0)
        return false;
    if (!append)
        lseek(fd, end - (off_t)done, SEEK_SET);
    return true;
}

int outfile_write(int fd, const char *b, size_t n, bool *cut)
{
    size_t done = 0;
    if (cut)
        *cut = false;
    while (done < n) {
        ssize_t w = write(fd, b + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            bool c = take_back(fd, done);
            if (cut)
                *cut = c;
            return -e;
        }
        done += (size_t)w;
    }
    return 0;
}

long outfile_fragment(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return -1;
    if (st.st_size == 0)
        return 0;
    enum { LOOK = 65536 };
    char *buf = malloc(LOOK);
    if (!buf)
        return -1;
    off_t from = st.st_size > LOOK ? st.st_size - LOOK : 0;
    ssize_t n = pread(fd, buf, (size_t)(st.st_size - from), from);
    long frag = -1;
    if (n > 0) {
        frag = (long)n;
        for (ssize_t i = n; i > 0; i--)
            if (buf[i - 1] == '\n') {
                frag = (long)(n - i);
                break;
            }
    }
    free(buf);
    return frag;
}

bool outfile_reader_gone(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
        return false;
    /* a pipe without a reader polls POLLERR for its writer; a stream
     * socket whose peer closed, POLLHUP */
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

int outfile_stdout_done(const char *who, const char *what)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    /* errno is fflush's when the last write failed; an earlier failed write
     * (the stream's error flag) left none to trust, so the pipe is asked */
    int e = errno;
    if (e == EPIPE || outfile_reader_gone(STDOUT_FILENO))
        return 0;
    fprintf(stderr, "%s: writing the %s failed: %s\n", who, what, strerror(e));
    return 1;
}
