/*
 * trust.c — owner and mode checks of a file that steers the program
 * (trust.h).
 */
#include "core/trust.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int trust_check(const struct stat *st, unsigned euid, char *why, size_t whylen)
{
    if (st->st_uid != 0 && st->st_uid != euid) {
        snprintf(why, whylen, "owned by uid %u, neither root nor the user running mig-gpu-mon "
                              "(uid %u); not read",
                 (unsigned)st->st_uid, euid);
        return -EPERM;
    }
    if (st->st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(why, whylen, "writable by others than its owner (mode %04o); not read",
                 (unsigned)(st->st_mode & 07777));
        return -EPERM;
    }
    return 0;
}

const char *trust_kind(const struct stat *st)
{
    return S_ISDIR(st->st_mode)    ? "a directory"
           : S_ISFIFO(st->st_mode) ? "a FIFO"
           : S_ISCHR(st->st_mode)  ? "a character device"
           : S_ISBLK(st->st_mode)  ? "a block device"
           : S_ISSOCK(st->st_mode) ? "a socket"
                                   : "an unknown kind of file";
}

int trust_open(const char *path, char *why, size_t whylen)
{
    struct stat st;
    int fd = -1, rc;
    if (stat(path, &st) != 0)
        goto sys;
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: the name; pass 1: what the open gave */
        if (!S_ISREG(st.st_mode)) {
            snprintf(why, whylen, "%s, not a regular file", trust_kind(&st));
            rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
            goto fail;
        }
        if ((rc = trust_check(&st, (unsigned)geteuid(), why, whylen)) != 0)
            goto fail;
        if (pass == 1)
            break;
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 || fstat(fd, &st) != 0)
            goto sys;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK); /* a regular file: plain reads from here */
    return fd;
sys:
    rc = -errno;
    snprintf(why, whylen, "%s", strerror(errno));
fail:
    if (fd >= 0)
        close(fd);
    return rc;
}
