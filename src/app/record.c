#include "app/record.h"

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

#include "app/recout.h"
#include "core/clock.h"
#include "core/outfile.h"
#include "core/text.h"
#include "engine/engine.h"
#include "engine/eventlog.h"
#include "export/csv.h"
#include "export/influx.h"
#include "export/json.h"
#include "export/json_delta.h"
#include "export/json_events.h"

static volatile sig_atomic_t stop_signal;
/* SIGHUP asks for the output file to be opened again (log rotation) when
 * -o names a regular file: set by record_open, read by the handler. */
static volatile sig_atomic_t hup_reopens;
static volatile sig_atomic_t reopen_signal;

static void on_stop(int sig)
{
    if (sig == SIGHUP && hup_reopens)
        reopen_signal = 1;
    else
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

/* A path the user gave, made safe to print. */
static const char *shown(const char *path, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", path);
    text_clean_lines(buf, cap);
    return buf;
}

/* A regular file opened for appending that ends in a cut line (a recorder
 * killed mid-write by an older version, or another writer): the recording
 * starts on a new line, and the user is told what was left. */
static void end_fragment(int fd, const char *path)
{
    int rfd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (rfd < 0)
        return;
    struct stat a, b;
    long frag = -1;
    if (fstat(fd, &a) == 0 && fstat(rfd, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)
        frag = outfile_fragment(rfd);
    close(rfd);
    if (frag <= 0 || outfile_write(fd, "\n", 1, NULL) != 0)
        return;
    char p[512];
    fprintf(stderr,
            "mig-gpu-mon: %s ended in a cut line of %ld bytes, left as it was; the recording "
            "starts on a new line\n",
            shown(path, p, sizeof(p)), frag);
}

/* Compressed bytes are not for a terminal (they would garble it). */
static int not_a_terminal(const struct cli *c, int fd, char *err, size_t errlen)
{
    if (c->compress == REC_PLAIN || !isatty(fd))
        return 0;
    snprintf(err, errlen, "%.3000s is a terminal: a %s recording is written to a file or a "
             "pipe (-o FILE, or redirect standard output)",
             strcmp(c->output, "-") == 0 ? "standard output" : c->output,
             recout_name((enum rec_compress)c->compress));
    return -1;
}

int record_open(const struct cli *c, bool *header, char *err, size_t errlen)
{
    *header = true;
    hup_reopens = 0;
    if (strcmp(c->output, "-") == 0)
        return not_a_terminal(c, STDOUT_FILENO, err, errlen) == 0 ? STDOUT_FILENO : -1;
    /* stat follows a symlink: one to a stream (/dev/stdout) is that stream;
     * one to anything else is refused by outfile_open */
    struct stat st;
    bool stream = stat(c->output, &st) == 0 && outfile_is_stream(st.st_mode);
    int fd;
    if (stream && S_ISSOCK(st.st_mode)) {
        fd = socket_open(c->output, &st);
    } else {
        /* A regular file is always appended to (O_APPEND with O_TRUNC for
         * --force): a copytruncate rotation then leaves no hole, and a
         * failed write can be cut off at the end. A compressed one is
         * written at its place instead (recout.h: each flush over the end
         * the last one closed by hand), which is one call less; a
         * copytruncate breaks its stream anyway (docs/record.md). A stream
         * ignores the creation flags (outfile_open). */
        int flags = O_WRONLY | O_CREAT | (c->compress == REC_PLAIN ? O_APPEND : 0);
        if (c->force && !c->append)
            flags |= O_TRUNC;
        else if (!c->append)
            flags |= O_EXCL;
        fd = outfile_open(c->output, flags, 0644, &st);
    }
    if (fd < 0 && errno == EINTR && stop_signal)
        return -2; /* stopped while a FIFO waited for its reader: nothing to say */
    if (fd < 0) {
        if (errno == EEXIST)
            snprintf(err, errlen, "%.3000s exists: --append adds to it, --force replaces it",
                     c->output);
        else
            outfile_strerror(err, errlen, c->output, errno);
        return -1;
    }
    if (not_a_terminal(c, fd, err, errlen) != 0) {
        close(fd);
        return -1;
    }
    if (S_ISREG(st.st_mode)) {
        hup_reopens = 1;
        if (c->append && st.st_size > 0) {
            *header = false;
            if (c->compress == REC_PLAIN)
                end_fragment(fd, c->output);
        }
    }
    return fd;
}

/* One snapshot and the events new in it (b). CSV has no event rows: its
 * rows are devices, and a second kind of row would break the one header
 * (its xid_errors_total and last_xid columns count the Xids). */
static void format_batch(FILE *f, enum cli_format fmt, const struct snapshot *s, bool header,
                         const struct eventlog_batch *b, int schema, const struct snapshot *prev)
{
    switch (fmt) {
    case FMT_CSV:
        if (header)
            csv_write_header(f);
        csv_write_rows(f, s);
        break;
    case FMT_INFLUX:
        /* the events first: a batch ends with its migmon_host line */
        influx_write_events(f, s, b);
        influx_write_snapshot(f, s);
        break;
    default:
        if (schema == JSON_DELTA_SCHEMA)
            json_delta_write(f, s, prev);
        else
            json_write_snapshot(f, s, false);
        json_write_event_lines(f, s, b);
        break;
    }
}

void record_format(FILE *f, enum cli_format fmt, const struct snapshot *s, bool header)
{
    struct eventlog_batch b;
    eventlog_all(s, &b);
    format_batch(f, fmt, s, header, &b, 1, NULL);
}

/* The memory a snapshot is rendered into, kept from one snapshot to the
 * next (a memory stream rewound: no allocation once it has grown to the
 * largest line). Owned by the recorder's thread. */
struct render {
    FILE *m;
    char *buf;
    size_t len;
};

static void render_free(struct render *r)
{
    if (r->m)
        fclose(r->m);
    free(r->buf);
    memset(r, 0, sizeof(*r));
}

/* One snapshot rendered in memory, then handed to the output whole (plain:
 * written at once; compressed: at the next flush, recout.h): a pipe may
 * take a large batch in parts; a regular file that cannot take all of it
 * (a full disk) is cut back to the end of the last snapshot (*cut). The
 * events new since the last snapshot written go with it; a snapshot
 * written again (--trigger stdin) has none. Schema 2: a full line at each
 * seek point (a new frame), else the changes since prev. */
static int emit(int fd, const struct cli *c, struct recout *o, struct render *r,
                const struct snapshot *s, const struct snapshot *prev, struct eventlog *log,
                bool *header, bool *cut)
{
    *cut = false;
    if (!r->m && !(r->m = open_memstream(&r->buf, &r->len)))
        return -ENOMEM;
    rewind(r->m);
    bool key = recout_key_due(o, s->elapsed_ns);
    struct eventlog_batch b;
    eventlog_take(log, s, &b);
    format_batch(r->m, c->format, s, *header, &b, c->schema, key ? NULL : prev);
    /* the size a memory stream reports is where it stands (POSIX: the
     * smaller of its buffer's length and the position) */
    if (fflush(r->m) != 0 || ferror(r->m)) {
        render_free(r);
        return -ENOMEM;
    }
    struct recout_meta meta = {.snapshot = true, .elapsed = s->elapsed_ns, .wall = s->wall_ns};
    int rc = recout_put(o, fd, r->buf, r->len, &meta, key, cut);
    if (rc == 0)
        *header = false;
    return rc;
}

/* -o FILE, a regular file: what the recorder writes to, and whether the
 * path still names it. */
struct outpath {
    const char *path;
    bool reopenable; /* a regular file opened by its path */
    dev_t dev;
    ino_t ino;
};

static void outpath_note(struct outpath *o, int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0) {
        o->dev = st.st_dev;
        o->ino = st.st_ino;
    }
}

/* The path was removed or now names another file (a rotation that renamed
 * it, or rm): true. One stat a snapshot. */
static bool outpath_moved(const struct outpath *o)
{
    struct stat st;
    if (stat(o->path, &st) != 0)
        return errno == ENOENT;
    return st.st_dev != o->dev || st.st_ino != o->ino;
}

/* Opens the path again, appending (a file that rotation created is written
 * to, not refused): the new descriptor replaces *fd. *header: the new file
 * is empty. Returns 0, or -1 after saying why on stderr. */
static int outpath_reopen(struct outpath *o, int *fd, bool *header, const char *why)
{
    char p[512];
    struct stat st;
    /* O_NONBLOCK: a FIFO put at the path without a reader fails (ENXIO)
     * instead of blocking with the stop signals blocked */
    int nfd = outfile_open(o->path, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK, 0644, &st);
    if (nfd >= 0)
        fcntl(nfd, F_SETFL, fcntl(nfd, F_GETFL) & ~O_NONBLOCK);
    if (nfd < 0) {
        char e[3200];
        outfile_strerror(e, sizeof(e), o->path, errno);
        text_clean_lines(e, sizeof(e));
        fprintf(stderr, "mig-gpu-mon: reopening %s\n", e); /* e names the path */
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        /* a stream now: written to as such, never checked again */
        o->reopenable = false;
        hup_reopens = 0;
    }
    close(*fd);
    *fd = nfd;
    outpath_note(o, nfd);
    *header = !(S_ISREG(st.st_mode) && st.st_size > 0);
    if (!*header)
        end_fragment(nfd, o->path);
    fprintf(stderr, "mig-gpu-mon: %s %s: writing to the file now at that path%s\n",
            shown(o->path, p, sizeof(p)), why, *header ? " (new)" : "");
    return 0;
}

/* Two snapshot buffers: the newest taken from the engine, and the last
 * written (what a delta line of schema 2 is the change of). A take goes
 * into the buffer that is not the last written. */
struct snaps {
    struct snapshot buf[2];
    struct snapshot *latest, *written; /* NULL: none yet */
};

static bool snaps_take(struct snaps *p, struct engine *e)
{
    struct snapshot *into = p->latest && p->latest == p->written
                                ? (p->latest == &p->buf[0] ? &p->buf[1] : &p->buf[0])
                                : p->latest ? p->latest : &p->buf[0];
    if (!engine_acquire(e, into))
        return false;
    p->latest = into;
    return true;
}

/* The output opened again at its path (outpath_reopen), the recording in
 * the old file ended first (its frame and index whole), the next snapshot
 * a full line in the new one. */
static int reopen(struct outpath *op, struct recout *o, int *fd, bool *header, const char *why,
                  struct snaps *sn)
{
    if (recout_finish(o, *fd) != 0)
        recout_abandon(o, *fd);
    if (outpath_reopen(op, fd, header, why) != 0)
        return -1;
    sn->written = NULL;
    char err[256];
    if (recout_retarget(o, *fd, err, sizeof(err)) != 0) {
        char p[512];
        fprintf(stderr, "mig-gpu-mon: %s: %s\n", shown(op->path, p, sizeof(p)), err);
        return -1;
    }
    return 0;
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

/* A failed write said: the output and why; where bytes were taken back, so. */
static void say_failed(const struct cli *c, const char *what, int rc, bool cut)
{
    char path[512];
    fprintf(stderr, "mig-gpu-mon: %s %s: %s%s\n", what,
            strcmp(c->output, "-") == 0 ? "standard output" : shown(c->output, path, sizeof(path)),
            strerror(-rc),
            cut ? "; the part of the snapshot written was taken back, so the file ends with the "
                  "last whole one"
                : "");
}

/* Whether what waits in a compressed output is flushed now: it waited a
 * second, or will have by the next snapshot (interval_ns away; 0 with
 * --trigger stdin, whose next request may not come). */
static bool flush_now(const struct recout *o, uint64_t now, uint64_t interval_ns)
{
    uint64_t by = recout_flush_by(o);
    return by && now + interval_ns >= by;
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
    struct recout *o = NULL;
    struct render rend = {0};
    struct snaps sn;
    memset(&sn, 0, sizeof(sn));
    char oerr[256];
    if (recout_open(&o, (enum rec_compress)c->compress, fd, oerr, sizeof(oerr)) != 0) {
        char path[512];
        fprintf(stderr, "mig-gpu-mon: %s: %s\n",
                strcmp(c->output, "-") == 0 ? "standard output" : shown(c->output, path, sizeof(path)),
                oerr);
        status = 1;
        goto out;
    }
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
    uint64_t interval_ns = c->trigger_stdin ? 0 : (uint64_t)c->interval_ms * 1000000ull;
    struct eventlog log;
    eventlog_init(&log);
    long owed = 0; /* --trigger stdin: lines read before the first snapshot */
    unsigned long written = 0;
    bool watch_stdin = c->trigger_stdin || stdin_is_channel();
    /* Standard input has ended: the recording ends once every line read
     * has been answered, which for lines read before the first snapshot
     * is when that snapshot is there. */
    bool input_ended = false;
    bool open_line = false; /* --trigger stdin: a line begun, not yet ended */
    bool gone = false;      /* the reader of a pipe went away */
    struct outpath op = {.path = c->output, .reopenable = hup_reopens != 0};
    if (op.reopenable)
        outpath_note(&op, fd);
    while (!stop_signal) {
        if (reopen_signal && op.reopenable) {
            reopen_signal = 0;
            if (reopen(&op, o, &fd, &header, "reopened on SIGHUP", &sn) != 0) {
                status = 1;
                break;
            }
        }
        struct pollfd p[2] = {{.fd = engine_fd(e), .events = POLLIN},
                              {.fd = STDIN_FILENO, .events = POLLIN}};
        struct timespec ts, *tsp = NULL;
        uint64_t now = clock_mono_ns(), wake = recout_flush_by(o);
        if (end && now >= end)
            break;
        if (end && (!wake || end < wake))
            wake = end;
        if (wake) {
            uint64_t d = wake > now ? wake - now : 0;
            ts.tv_sec = (time_t)(d / 1000000000ull);
            ts.tv_nsec = (long)(d % 1000000000ull);
            tsp = &ts;
        }
        int n = ppoll(p, watch_stdin ? 2 : 1, tsp, &waitmask);
        if (n < 0 && errno != EINTR) {
            fprintf(stderr, "mig-gpu-mon: poll: %s\n", strerror(errno));
            status = 1;
            break;
        }
        long want = 0;
        if (n > 0 && p[0].revents && snaps_take(&sn, e)) {
            want = c->trigger_stdin ? owed : 1;
            owed = 0;
        }
        if (n > 0 && watch_stdin && !c->trigger_stdin && p[1].revents) {
            /* interval mode: what is written on stdin is read and dropped;
             * only its end matters */
            if (p[1].revents & POLLHUP)
                input_ended = true;
            else
                read_requests(&open_line, &input_ended);
        } else if (n > 0 && watch_stdin && p[1].revents) {
            long k = read_requests(&open_line, &input_ended);
            if (sn.latest)
                want += k;
            else
                owed += k;
        }
        if (input_ended)
            watch_stdin = false; /* an ended input polls readable for good */
        if (want > 0 && op.reopenable && outpath_moved(&op) &&
            reopen(&op, o, &fd, &header, "was removed or replaced", &sn) != 0) {
            status = 1;
            goto done;
        }
        bool cut = false;
        int rc = 0;
        for (; want > 0 && !stop_signal && rc == 0; want--) {
            rc = emit(fd, c, o, &rend, sn.latest, sn.written, &log, &header, &cut);
            if (rc == 0)
                sn.written = sn.latest;
            if (rc == 0 && c->count && ++written >= c->count)
                goto done;
        }
        if (rc == 0 && flush_now(o, clock_mono_ns(), interval_ns))
            rc = recout_flush(o, fd, &cut);
        if (rc == -EPIPE) { /* the reader is gone: a normal end */
            gone = true;
            goto done;
        }
        if (rc != 0) {
            say_failed(c, "writing", rc, cut);
            recout_abandon(o, fd);
            status = 1;
            goto done;
        }
        if (input_ended && owed == 0)
            break;
    }
done:
    if (status == 0 && !gone) {
        int rc = recout_finish(o, fd);
        if (rc != 0 && rc != -EPIPE) {
            say_failed(c, "ending", rc, false);
            recout_abandon(o, fd);
            status = 1;
        }
    }
    engine_stop(e);
out:
    snapshot_free(&sn.buf[0]);
    snapshot_free(&sn.buf[1]);
    recout_free(o);
    render_free(&rend);
    if (fd != STDOUT_FILENO && close(fd) != 0 && status == 0) {
        fprintf(stderr, "mig-gpu-mon: closing %s: %s\n", c->output, strerror(errno));
        status = 1;
    }
    hup_reopens = 0;
    sigprocmask(SIG_UNBLOCK, &stops, NULL);
    return status;
}
