#include "core/debuglog.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Written from every NVML worker thread: fd, size and rotation are under
 * mu; fd is also atomic so debuglog_enabled() may read it without the lock
 * (a stale answer only logs or skips one line around open/close). */
static struct {
    _Atomic int fd;
    char path[PATH_MAX];
    uint64_t max_bytes;
    uint64_t size;
    pthread_mutex_t mu;
} dlog = {.fd = -1, .mu = PTHREAD_MUTEX_INITIALIZER};

uint64_t debuglog_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int mkdir_p(char *path, mode_t mode)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(path, mode);
        *p = '/';
        if (rc != 0 && errno != EEXIST)
            return -1;
    }
    if (mkdir(path, mode) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

int debuglog_default_path(char *out, size_t outlen, char *err, size_t errlen)
{
    const char *xdg = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    char dir[PATH_MAX];
    int n;
    /* XDG Base Directory spec: a relative XDG_STATE_HOME is invalid, ignore it. */
    if (xdg && xdg[0] == '/')
        n = snprintf(dir, sizeof(dir), "%s/mig-gpu-mon", xdg);
    else if (home && home[0] == '/')
        n = snprintf(dir, sizeof(dir), "%s/.local/state/mig-gpu-mon", home);
    else {
        snprintf(err, errlen, "--debug: neither XDG_STATE_HOME nor HOME is an absolute path; "
                              "give the log file explicitly: --debug=FILE");
        return -1;
    }
    if (n < 0 || (size_t)n >= sizeof(dir)) {
        snprintf(err, errlen, "--debug: state directory path too long");
        return -1;
    }
    if (mkdir_p(dir, 0700) != 0) {
        snprintf(err, errlen, "--debug: cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    n = snprintf(out, outlen, "%s/debug.log", dir);
    if (n < 0 || (size_t)n >= outlen) {
        snprintf(err, errlen, "--debug: log path too long");
        return -1;
    }
    return 0;
}

static int open_file(const char *path, char *err, size_t errlen)
{
    /* O_NONBLOCK: a FIFO at the path must not block the start (it is
     * refused below); O_NOFOLLOW: nor may a link redirect the writes. Then,
     * as ssh does for its files: a regular file owned by us that nobody
     * else may write to (appending to another user's file in /tmp, as root,
     * would be writing where they choose). */
    int fd = open(path,
                  O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
                  0600);
    if (fd < 0) {
        if (errno == ELOOP)
            snprintf(err, errlen, "--debug: %s is a symbolic link; refusing to follow it", path);
        else if (errno == ENXIO)
            snprintf(err, errlen, "--debug: %s is not a regular file", path);
        else
            snprintf(err, errlen, "--debug: cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "--debug: %s is not a regular file", path);
        close(fd);
        return -1;
    }
    if (st.st_uid != geteuid()) {
        snprintf(err, errlen, "--debug: %s belongs to another user (uid %u); refusing to write "
                              "to it", path, (unsigned)st.st_uid);
        close(fd);
        return -1;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(err, errlen, "--debug: %s is writable by group or others (mode %03o); "
                              "refusing to write to it (chmod go-w it)", path,
                 (unsigned)(st.st_mode & 0777));
        close(fd);
        return -1;
    }
    /* back to blocking writes: each line goes out whole */
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    dlog.size = (uint64_t)st.st_size;
    return fd;
}

int debuglog_open(const char *path, uint64_t max_bytes, char *err, size_t errlen)
{
    debuglog_close();
    if (strlen(path) >= sizeof(dlog.path) - 3) {
        snprintf(err, errlen, "--debug: log path too long");
        return -1;
    }
    pthread_mutex_lock(&dlog.mu);
    int fd = open_file(path, err, errlen);
    if (fd < 0) {
        pthread_mutex_unlock(&dlog.mu);
        return -1;
    }
    strcpy(dlog.path, path);
    dlog.max_bytes = max_bytes ? max_bytes : DEBUGLOG_DEFAULT_MAX_BYTES;
    dlog.fd = fd;
    pthread_mutex_unlock(&dlog.mu);
    return 0;
}

void debuglog_close(void)
{
    pthread_mutex_lock(&dlog.mu);
    if (dlog.fd >= 0)
        close(dlog.fd);
    dlog.fd = -1;
    pthread_mutex_unlock(&dlog.mu);
}

bool debuglog_enabled(void)
{
    return dlog.fd >= 0;
}

const char *debuglog_path(void)
{
    return dlog.fd >= 0 ? dlog.path : NULL;
}

/* Keep at most two files: the live one and FILE.1. */
static void rotate(void)
{
    char old[PATH_MAX + 2];
    snprintf(old, sizeof(old), "%s.1", dlog.path);
    close(dlog.fd);
    dlog.fd = -1;
    if (rename(dlog.path, old) != 0)
        unlink(dlog.path);
    char err[256];
    int fd = open_file(dlog.path, err, sizeof(err));
    dlog.fd = fd; /* -1 disables logging rather than failing the monitor */
    dlog.size = 0;
}

void debuglog_printf(const char *fmt, ...)
{
    if (dlog.fd < 0)
        return;
    char line[1024];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    int n = (int)strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
    n += snprintf(line + n, sizeof(line) - (size_t)n, ".%06ldZ ", ts.tv_nsec / 1000);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        return;
    n += m;
    if ((size_t)n > sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    pthread_mutex_lock(&dlog.mu);
    if (dlog.fd >= 0 && dlog.size + (uint64_t)n > dlog.max_bytes)
        rotate();
    if (dlog.fd >= 0) {
        ssize_t w = write(dlog.fd, line, (size_t)n);
        if (w > 0)
            dlog.size += (uint64_t)w;
    }
    pthread_mutex_unlock(&dlog.mu);
}
