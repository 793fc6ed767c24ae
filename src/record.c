#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "engine.h"
#include "export/csv.h"
#include "export/influx.h"
#include "export/json.h"

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
    stop_signal = sig;
}

void record_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* A character device (/dev/null, a terminal), a FIFO or a socket is
 * written to as it is: the exists/append/force rule protects what a
 * regular file (or a block device) holds, and these hold nothing to lose. */
static bool is_stream(mode_t m)
{
    return S_ISCHR(m) || S_ISFIFO(m) || S_ISSOCK(m);
}

/* A socket cannot be opened. One this process holds as standard output or
 * error (/dev/stdout under systemd's journal) is written through that
 * descriptor; another is connected to: a Unix stream socket something
 * listens on. */
static int socket_open(const char *path, const struct stat *st)
{
    for (int i = STDOUT_FILENO; i <= STDERR_FILENO; i++) {
        struct stat o;
        if (fstat(i, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino)
            return fcntl(i, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(a.sun_path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(a.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (const struct sockaddr *)&a, sizeof(a)) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        fd = -1;
    }
    return fd;
}

int record_open(const struct cli *c, bool *header, char *err, size_t errlen)
{
    *header = true;
    if (strcmp(c->output, "-") == 0)
        return STDOUT_FILENO;
    /* stat follows a symlink: one to a regular file is that file */
    struct stat st;
    bool stream = stat(c->output, &st) == 0 && is_stream(st.st_mode);
    int fd;
    if (stream && S_ISSOCK(st.st_mode)) {
        fd = socket_open(c->output, &st);
    } else {
        /* Linux ignores O_TRUNC on a device or FIFO; O_EXCL it does not */
        int flags = O_WRONLY | O_CLOEXEC | O_NOCTTY;
        if (c->append)
            flags |= O_CREAT | O_APPEND;
        else if (c->force)
            flags |= O_CREAT | O_TRUNC;
        else if (!stream)
            flags |= O_CREAT | O_EXCL;
        fd = open(c->output, flags, 0644);
        /* A regular file put in the device's place since the stat is
         * refused as any other, and left as it was: nothing created,
         * truncated or written. */
        if (fd >= 0 && !(flags & O_CREAT) && (fstat(fd, &st) != 0 || !is_stream(st.st_mode))) {
            close(fd);
            fd = -1;
            errno = EEXIST;
        }
    }
    if (fd < 0 && errno == EINTR && stop_signal)
        return -2; /* stopped while a FIFO waited for its reader: nothing to say */
    if (fd < 0) {
        if (errno == EEXIST)
            snprintf(err, errlen, "%.3000s exists: --append adds to it, --force replaces it",
                     c->output);
        else
            snprintf(err, errlen, "%.3000s: %s", c->output, strerror(errno));
        return -1;
    }
    if (c->append && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        *header = false;
    return fd;
}

void record_format(FILE *f, enum cli_format fmt, const struct snapshot *s, bool header)
{
    switch (fmt) {
    case FMT_CSV:
        if (header)
            csv_write_header(f);
        csv_write_rows(f, s);
        break;
    case FMT_INFLUX: influx_write_snapshot(f, s); break;
    default: json_write_snapshot(f, s, false); break;
    }
}

/* Everything or an error: a regular file takes a write whole; a pipe may
 * take a large batch in parts. */
static int write_all(int fd, const char *b, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/* One snapshot rendered in memory, then one write. */
static int emit(int fd, enum cli_format fmt, const struct snapshot *s, bool *header)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return -ENOMEM;
    record_format(m, fmt, s, *header);
    if (fclose(m) != 0) {
        free(buf);
        return -ENOMEM;
    }
    int rc = write_all(fd, buf, len);
    free(buf);
    if (rc == 0)
        *header = false;
    return rc;
}

/* The lines stdin has completed now. *open_line: bytes of a line not yet
 * ended are pending; at the end of input (*ended set) that last line
 * counts as one, as a shell's read would take it. */
static long read_requests(bool *open_line, bool *ended)
{
    char b[4096];
    ssize_t n = read(STDIN_FILENO, b, sizeof(b));
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        *ended = true;
        long k = *open_line;
        *open_line = false;
        return k;
    }
    long k = 0;
    for (ssize_t i = 0; i < n; i++)
        k += b[i] == '\n';
    if (n > 0)
        *open_line = b[n - 1] != '\n';
    return k;
}

/* Whether the end of standard input ends an interval recording. A pipe,
 * FIFO or socket is how a supervisor talks to its child, and closing it is
 * how Telegraf's inputs.execd (signal = "none") stops one. /dev/null and a
 * regular file read as ended at once, and a terminal is the user's: those
 * are left alone, so `record -o FILE` from a shell keeps running. */
static bool stdin_is_channel(void)
{
    struct stat st;
    if (fstat(STDIN_FILENO, &st) != 0)
        return false;
    return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
}

int record_run(struct collector *col, const struct cli *c, int fd, bool header)
{
    /* The stop signals are blocked but in ppoll, so one that arrives
     * between the check and the wait is not lost; one that came while the
     * collector opened has set the flag already. */
    record_catch_signals();
    sigset_t stops, waitmask;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGHUP);
    sigprocmask(SIG_BLOCK, &stops, &waitmask);
    sigdelset(&waitmask, SIGINT);
    sigdelset(&waitmask, SIGTERM);
    sigdelset(&waitmask, SIGHUP);

    int status = 0;
    struct engine *e = NULL;
    struct engine_opts eo = {.interval_ms = c->interval_ms};
    int erc = engine_start(&e, col, &eo);
    if (erc != 0) {
        fprintf(stderr, "mig-gpu-mon: starting the sampling thread: %s\n", strerror(-erc));
        status = 1;
        goto out;
    }
    uint64_t end = c->duration_s > 0
                       ? clock_mono_ns() + (uint64_t)(c->duration_s * 1e9)
                       : 0;
    struct snapshot snap;
    memset(&snap, 0, sizeof(snap));
    bool have = false;
    long owed = 0; /* --trigger stdin: lines read before the first snapshot */
    unsigned long written = 0;
    bool watch_stdin = c->trigger_stdin || stdin_is_channel();
    /* Standard input has ended: the recording ends once every line read
     * has been answered, which for lines read before the first snapshot
     * is when that snapshot is there. */
    bool input_ended = false;
    bool open_line = false; /* --trigger stdin: a line begun, not yet ended */
    while (!stop_signal) {
        struct pollfd p[2] = {{.fd = engine_fd(e), .events = POLLIN},
                              {.fd = STDIN_FILENO, .events = POLLIN}};
        struct timespec ts, *tsp = NULL;
        if (end) {
            uint64_t now = clock_mono_ns();
            if (now >= end)
                break;
            ts.tv_sec = (time_t)((end - now) / 1000000000ull);
            ts.tv_nsec = (long)((end - now) % 1000000000ull);
            tsp = &ts;
        }
        int n = ppoll(p, watch_stdin ? 2 : 1, tsp, &waitmask);
        if (n < 0 && errno != EINTR) {
            fprintf(stderr, "mig-gpu-mon: poll: %s\n", strerror(errno));
            status = 1;
            break;
        }
        if (n <= 0)
            continue;
        long want = 0;
        if (p[0].revents && engine_acquire(e, &snap)) {
            have = true;
            want = c->trigger_stdin ? owed : 1;
            owed = 0;
        }
        if (watch_stdin && !c->trigger_stdin && p[1].revents) {
            /* interval mode: what is written on stdin is read and dropped;
             * only its end matters */
            if (p[1].revents & POLLHUP)
                input_ended = true;
            else
                read_requests(&open_line, &input_ended);
        } else if (watch_stdin && p[1].revents) {
            long k = read_requests(&open_line, &input_ended);
            if (have)
                want += k;
            else
                owed += k;
        }
        if (input_ended)
            watch_stdin = false; /* an ended input polls readable for good */
        for (; want > 0 && !stop_signal; want--) {
            int rc = emit(fd, c->format, &snap, &header);
            if (rc == -EPIPE) /* the reader is gone: a normal end */
                goto done;
            if (rc != 0) {
                fprintf(stderr, "mig-gpu-mon: writing %s: %s\n",
                        strcmp(c->output, "-") == 0 ? "standard output" : c->output,
                        strerror(-rc));
                status = 1;
                goto done;
            }
            if (c->count && ++written >= c->count)
                goto done;
        }
        if (input_ended && owed == 0)
            break;
    }
done:
    engine_stop(e);
    snapshot_free(&snap);
out:
    if (fd != STDOUT_FILENO && close(fd) != 0 && status == 0) {
        fprintf(stderr, "mig-gpu-mon: closing %s: %s\n", c->output, strerror(errno));
        status = 1;
    }
    sigprocmask(SIG_UNBLOCK, &stops, NULL);
    return status;
}
