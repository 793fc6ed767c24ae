/*
 * helper_proc.c — spawning, reading and reaping a helper process, and the
 * helper's own send and wait (helper_proc.h).
 */
#include "backend/helper_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/debuglog.h"

void helper_proc_init(struct helper_proc *p, const char *tag)
{
    p->tag = tag;
    p->pid = -1;
    p->rfd = p->wfd = -1;
    p->nbuf = 0;
    p->started_ns = p->last_rx_ns = 0;
}

static void close_pair(int fd[2])
{
    close(fd[0]);
    close(fd[1]);
}

int helper_proc_spawn(struct helper_proc *p, char *const argv[])
{
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0)
        return -1;
    if (pipe2(from_child, O_CLOEXEC) != 0) {
        int e = errno;
        close_pair(to_child);
        errno = e;
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        /* Only async-signal-safe calls here: the monitor has other threads.
         * Out of the terminal's process group (Ctrl-C is the monitor's to
         * handle), killed with the monitor even if the monitor crashes. */
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* A background source: the monitor's own sampling comes first
         * when the CPUs are busy (a profiled job's short life included). */
        setpriority(PRIO_PROCESS, 0, 10);
        if (getppid() != parent)
            _exit(0);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        dup2(to_child[0], 0);
        dup2(from_child[1], 1);
        int dn = open("/dev/null", O_WRONLY);
        if (dn >= 0)
            dup2(dn, 2);
        execv(argv[0], argv);
        _exit(127);
    }
    int e = errno;
    close(to_child[0]);
    close(from_child[1]);
    if (pid < 0) {
        close(to_child[1]);
        close(from_child[0]);
        errno = e;
        return -1;
    }
    fcntl(from_child[0], F_SETFL, O_NONBLOCK);
    p->pid = pid;
    p->rfd = from_child[0];
    p->wfd = to_child[1];
    p->started_ns = p->last_rx_ns = clock_mono_ns();
    p->nbuf = 0;
    debuglog_printf("%s: helper started, pid %d", p->tag, (int)pid);
    return 0;
}

void helper_proc_ask_leave(struct helper_proc *p)
{
    if (p->wfd >= 0)
        close(p->wfd);
    p->wfd = -1;
}

void helper_proc_reap(struct helper_proc *p, bool kill_it)
{
    if (p->pid <= 0)
        return;
    if (p->wfd >= 0)
        close(p->wfd);
    if (p->rfd >= 0)
        close(p->rfd);
    p->wfd = p->rfd = -1;
    int status = 0;
    pid_t r = waitpid(p->pid, &status, WNOHANG);
    if (r == 0 && !kill_it) {
        /* stdin is closed: a healthy helper leaves within its poll. */
        for (int i = 0; i < 50 && r == 0; i++) {
            struct timespec ts = {0, 2 * 1000000L};
            nanosleep(&ts, NULL);
            r = waitpid(p->pid, &status, WNOHANG);
        }
    }
    if (r == 0) {
        /* Killed, and waited for a while: one in an uninterruptible call
         * of the driver ends only when the call does, and is left then
         * (the process's child until it ends, never waited for again). */
        kill(p->pid, SIGKILL);
        for (int i = 0; i < 250 && r == 0; i++) {
            struct timespec ts = {0, 2 * 1000000L};
            nanosleep(&ts, NULL);
            r = waitpid(p->pid, &status, WNOHANG);
        }
        if (r == 0) {
            debuglog_printf("%s: helper %d does not end; left", p->tag, (int)p->pid);
            p->pid = -1;
            return;
        }
    }
    debuglog_printf("%s: helper %d ended", p->tag, (int)p->pid);
    p->pid = -1;
}

bool helper_proc_drain(struct helper_proc *p, uint16_t magic, helper_rec_size_fn size,
                       helper_rec_fn on, void *ctx, uint64_t now)
{
    for (;;) {
        ssize_t n = read(p->rfd, p->buf + p->nbuf, sizeof(p->buf) - p->nbuf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK;
        if (n == 0)
            return false;
        p->last_rx_ns = now;
        p->nbuf += (size_t)n;
        size_t off = 0;
        while (p->nbuf - off >= sizeof(struct helper_rec_hdr)) {
            struct helper_rec_hdr h;
            memcpy(&h, p->buf + off, sizeof(h));
            size_t want = size(h.type);
            if (h.magic != magic || want == 0 || h.len != want)
                return false; /* not our protocol: treat as a failed helper */
            if (p->nbuf - off < want)
                break;
            on(ctx, p->buf + off, h.type);
            off += want;
        }
        memmove(p->buf, p->buf + off, p->nbuf - off);
        p->nbuf -= off;
    }
}

void helper_proc_wait(const struct helper_proc *p, int ms)
{
    if (p->rfd < 0 || ms <= 0)
        return;
    struct pollfd pf = {.fd = p->rfd, .events = POLLIN};
    (void)poll(&pf, 1, ms);
}

uint64_t helper_backoff_ns(unsigned n, uint64_t base_ns, uint64_t max_ns)
{
    unsigned shift = n == 0 ? 0 : n > 6 ? 5 : n - 1;
    uint64_t b = base_ns << shift;
    return b > max_ns ? max_ns : b;
}

bool helper_sup_poll(struct helper_sup *s, struct helper_proc *p, const struct helper_sup_ops *ops,
                     void *ctx, const bool *done, uint64_t watchdog_ns)
{
    uint64_t now = clock_mono_ns();
    if (s->run == HELPER_WAITING && now >= s->restart_at) {
        ops->spawn(ctx);
        now = clock_mono_ns();
    }
    if (s->run != HELPER_RUNNING)
        return false;
    bool open = helper_proc_drain(p, ops->magic, ops->size, ops->on, ctx, now);
    if (*done) {
        /* It has said its last word (after its own cleanup) and only has
         * to exit, which under a leak checker can take long: not waited
         * for on the sampling thread. */
        helper_proc_reap(p, true);
        s->run = HELPER_FINISHED;
        return true;
    }
    if (!open) {
        ops->failed(ctx, false, now);
    } else if (now - p->last_rx_ns > watchdog_ns) {
        debuglog_printf("%s: helper silent for %.1f s: restarting", p->tag,
                        (double)(now - p->last_rx_ns) / 1e9);
        ops->failed(ctx, true, now);
    }
    return false;
}

bool helper_sup_failed(struct helper_sup *s, struct helper_proc *p, unsigned max_fails,
                       uint64_t base_ns, uint64_t max_ns, uint64_t now)
{
    helper_proc_reap(p, true);
    s->fails++;
    if (s->fails >= max_fails) {
        s->run = HELPER_OFF;
        debuglog_printf("%s: helper failed %u times: off", p->tag, s->fails);
        return false;
    }
    s->run = HELPER_WAITING;
    s->restart_at = now + helper_backoff_ns(s->fails, base_ns, max_ns);
    return true;
}

void helper_send(uint16_t magic, void *rec, uint8_t type, size_t len)
{
    struct helper_rec_hdr *h = rec;
    h->magic = magic;
    h->type = type;
    h->pad = 0;
    h->len = (uint32_t)len;
    const char *c = rec;
    while (len > 0) {
        ssize_t n = write(1, c, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            _exit(0); /* the monitor is gone */
        c += n;
        len -= (size_t)n;
    }
}

bool helper_wait_until(uint64_t deadline)
{
    for (;;) {
        uint64_t now = clock_mono_ns();
        if (now >= deadline)
            return true;
        struct pollfd p = {.fd = 0, .events = POLLIN};
        int ms = (int)((deadline - now + 999999) / 1000000);
        int r = poll(&p, 1, ms);
        if (r < 0 && errno != EINTR)
            return false;
        if (r > 0) {
            char buf[64];
            ssize_t n = read(0, buf, sizeof(buf));
            if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
                return false;
        }
    }
}

bool helper_idle_until(uint64_t deadline, uint64_t step_ns, void (*beat)(void *ctx), void *ctx)
{
    for (;;) {
        uint64_t now = clock_mono_ns();
        if (now >= deadline)
            return true;
        uint64_t next = now + step_ns < deadline ? now + step_ns : deadline;
        if (!helper_wait_until(next))
            return false;
        beat(ctx);
    }
}
