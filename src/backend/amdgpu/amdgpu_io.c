/*
 * amdgpu_io.c — reading amdgpu's files without hanging on them.
 *
 * sysfs attributes (and /proc's fdinfo) are regular files: anything else
 * under --sysfs-root — a FIFO, a device node, a socket — is refused before
 * a byte is read, and every open is O_NONBLOCK, so that not even the open
 * of a FIFO with no writer waits.
 *
 * A regular attribute's read goes into the driver (gpu_metrics and the
 * *_busy_percent files ask the SMU firmware); on a hung GPU it may not
 * come back, in an uninterruptible sleep that no signal ends. So each
 * GPU's reads are made by a thread of its own (struct amd_io) while the
 * sampling thread waits for them until the tick's deadline, the one the
 * NVML backend's calls have. A read not back by then leaves that thread in
 * it: the read is none ("stalled N s reading PATH"), every later read of
 * that GPU fails at once with the same reason until it comes back, and the
 * GPU is reported stalled, as an NVIDIA GPU stuck in a driver call is.
 */
#include "backend/amdgpu/amdgpu.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"

/* A read waits at least this long, even past the deadline: a tick that
 * spent its time on one GPU still gives the next one's quick reads the
 * time they need (and a GPU that is really stuck costs it once). */
#define AMD_IO_MIN_WAIT_NS 100000000ull
#define AMD_IO_BUF 8192

/*
 * Shared by the owner (the sampling thread) and the reader thread; mu
 * guards every field but the job's, and the job's (path .. buf) belong to
 * the reader thread while busy, to the owner otherwise.
 */
struct amd_io {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a job asked, a job done, quit (CLOCK_MONOTONIC) */
    pthread_t thread;
    bool asked;        /* a job waits for the reader */
    bool busy;         /* from the ask until the reader is done with it */
    bool quit;         /* the owner let go */
    bool orphan;       /* ... while the reader was busy: the reader frees io */
    uint64_t since_ns; /* when the job in hand was asked */
    uint64_t deadline_ns; /* the owner's, for its next reads */
    /* the job */
    char path[AMD_PATH_LEN + 128];
    size_t cap;
    ssize_t n;
    int err; /* errno, or -1: not a regular file (mode in mode) */
    mode_t mode;
    unsigned char buf[AMD_IO_BUF];
};

/* One bounded-kind read: open without waiting, refuse what is not a
 * regular file, one read() (sysfs gives an attribute in one). */
static ssize_t read_once(const char *path, void *buf, size_t cap, int *err, mode_t *mode)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        *err = errno;
        return -1;
    }
    struct stat st;
    ssize_t n = -1;
    if (fstat(fd, &st) != 0) {
        *err = errno;
    } else if (!S_ISREG(st.st_mode)) {
        *err = -1;
        *mode = st.st_mode;
    } else {
        n = read(fd, buf, cap);
        *err = n < 0 ? errno : 0;
    }
    close(fd);
    return n;
}

static const char *kind_of(mode_t m)
{
    return S_ISFIFO(m)   ? "a FIFO"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
           : S_ISDIR(m)  ? "a directory"
                         : "not a plain file";
}

static void failed(char *why, size_t whylen, const char *path, int err, mode_t mode)
{
    if (err == -1)
        amd_fmt(why, whylen, "%s: not a regular file (%s; sysfs attributes are regular files)",
                path, kind_of(mode));
    else
        amd_fmt(why, whylen, "%s: %s", path, strerror(err));
}

static void *reader_main(void *arg)
{
    struct amd_io *io = arg;
    pthread_mutex_lock(&io->mu);
    for (;;) {
        while (!io->asked && !io->quit)
            pthread_cond_wait(&io->cv, &io->mu);
        if (!io->asked)
            break; /* quit, nothing in hand */
        io->asked = false;
        pthread_mutex_unlock(&io->mu);
        int err = 0;
        mode_t mode = 0;
        ssize_t n = read_once(io->path, io->buf, io->cap, &err, &mode);
        pthread_mutex_lock(&io->mu);
        io->n = n;
        io->err = err;
        io->mode = mode;
        io->busy = false;
        pthread_cond_broadcast(&io->cv);
    }
    bool mine = io->orphan;
    pthread_mutex_unlock(&io->mu);
    if (mine) {
        pthread_cond_destroy(&io->cv);
        pthread_mutex_destroy(&io->mu);
        free(io);
    }
    return NULL;
}

struct amd_io *amd_io_open(void)
{
    struct amd_io *io = calloc(1, sizeof(*io));
    if (!io)
        return NULL;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&io->mu, NULL);
    pthread_cond_init(&io->cv, &ca);
    pthread_condattr_destroy(&ca);
    /* the default stack: a smaller one must still hold the program's
     * static TLS, which is not ours to size; and no signal the front end
     * handles is ever delivered to the reader */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&io->thread, NULL, reader_main, io);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        pthread_cond_destroy(&io->cv);
        pthread_mutex_destroy(&io->mu);
        free(io);
        return NULL;
    }
    return io;
}

void amd_io_close(struct amd_io *io)
{
    if (!io)
        return;
    pthread_mutex_lock(&io->mu);
    io->quit = true;
    io->orphan = io->busy; /* stuck in the driver: it frees io when it returns */
    bool orphan = io->orphan;
    pthread_t t = io->thread; /* read under the lock: an orphan may free io once it is let go */
    pthread_cond_broadcast(&io->cv);
    pthread_mutex_unlock(&io->mu);
    if (orphan) {
        pthread_detach(t);
        return;
    }
    pthread_join(io->thread, NULL);
    pthread_cond_destroy(&io->cv);
    pthread_mutex_destroy(&io->mu);
    free(io);
}

void amd_io_set_deadline(struct amd_io *io, uint64_t deadline_ns)
{
    if (!io)
        return;
    pthread_mutex_lock(&io->mu);
    io->deadline_ns = deadline_ns;
    pthread_mutex_unlock(&io->mu);
}

/* With mu held: the read in hand as a reason. */
static void stalled_why(const struct amd_io *io, char *why, size_t whylen)
{
    uint64_t now = clock_mono_ns();
    double s = now > io->since_ns ? (double)(now - io->since_ns) / 1e9 : 0;
    amd_fmt(why, whylen, "stalled %.0f s reading %s", s, io->path);
}

bool amd_io_stalled(struct amd_io *io, char *why, size_t whylen)
{
    if (!io)
        return false;
    pthread_mutex_lock(&io->mu);
    bool busy = io->busy;
    if (busy)
        stalled_why(io, why, whylen);
    pthread_mutex_unlock(&io->mu);
    return busy;
}

int amd_io_read(struct amd_io *io, const char *path, void *out, size_t len, size_t *got,
                char *why, size_t whylen)
{
    *got = 0;
    if (!io) { /* on the calling thread: its kind checked, its time not bounded */
        int err = 0;
        mode_t mode = 0;
        ssize_t n = read_once(path, out, len, &err, &mode);
        if (n < 0) {
            failed(why, whylen, path, err, mode);
            errno = err == -1 ? EINVAL : err;
            return AMD_READ_ERR;
        }
        *got = (size_t)n;
        return AMD_READ_OK;
    }
    if (strlen(path) >= sizeof(io->path)) {
        failed(why, whylen, path, ENAMETOOLONG, 0);
        errno = ENAMETOOLONG;
        return AMD_READ_ERR;
    }
    pthread_mutex_lock(&io->mu);
    if (io->busy) { /* the last read has not come back: nothing more is asked */
        stalled_why(io, why, whylen);
        pthread_mutex_unlock(&io->mu);
        return AMD_READ_STALLED;
    }
    uint64_t now = clock_mono_ns();
    uint64_t until = io->deadline_ns > now + AMD_IO_MIN_WAIT_NS ? io->deadline_ns
                                                                 : now + AMD_IO_MIN_WAIT_NS;
    memcpy(io->path, path, strlen(path) + 1);
    io->cap = len < sizeof(io->buf) ? len : sizeof(io->buf);
    io->since_ns = now;
    io->asked = io->busy = true;
    pthread_cond_broadcast(&io->cv);
    struct timespec ts = {.tv_sec = (time_t)(until / 1000000000ull),
                          .tv_nsec = (long)(until % 1000000000ull)};
    while (io->busy)
        if (pthread_cond_timedwait(&io->cv, &io->mu, &ts) == ETIMEDOUT && io->busy) {
            stalled_why(io, why, whylen);
            pthread_mutex_unlock(&io->mu);
            return AMD_READ_STALLED;
        }
    int rc = AMD_READ_OK, err = io->err;
    if (io->n < 0) {
        failed(why, whylen, path, io->err, io->mode);
        rc = AMD_READ_ERR;
    } else {
        memcpy(out, io->buf, (size_t)io->n);
        *got = (size_t)io->n;
    }
    pthread_mutex_unlock(&io->mu);
    if (rc == AMD_READ_ERR)
        errno = err == -1 ? EINVAL : err;
    return rc;
}

int amd_read_text(struct amd_io *io, const char *path, char *out, size_t len, char *why,
                  size_t whylen)
{
    size_t n;
    int rc = amd_io_read(io, path, out, len - 1, &n, why, whylen);
    if (rc != AMD_READ_OK) {
        out[0] = '\0';
        return rc;
    }
    out[n] = '\0';
    while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' '))
        out[--n] = '\0';
    return AMD_READ_OK;
}
