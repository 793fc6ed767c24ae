/*
 * profile_job.c — COMMAND's life under the profiler (profile_job.h).
 */
#include "app/profile_job.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static const int passed_on[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NPASSED (sizeof(passed_on) / sizeof(passed_on[0]))

/*
 * Only the main thread takes the four signals (the engine's threads block
 * every signal, the demo's writer these four: profjob_block_signals). The
 * handler puts each in a small ring, and the sampling loop acts on them
 * in order. sig_count is the number received; a ring slot is written
 * before the count that publishes it, and the handler, which blocks the
 * four while it runs, is its one writer.
 */
#define SIG_RING 16
static volatile sig_atomic_t sig_ring[SIG_RING], sig_ring_tty[SIG_RING];
static atomic_uint sig_count;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    unsigned i = atomic_load(&sig_count);
    sig_ring[i % SIG_RING] = sig;
    /* Ctrl-C and Ctrl-\ go to the terminal's whole foreground process
     * group, ours: the kernel sends them (SI_KERNEL). Not a hangup's
     * SIGHUP, which a session leader may get alone. */
    sig_ring_tty[i % SIG_RING] =
        si && si->si_code == SI_KERNEL && (sig == SIGINT || sig == SIGQUIT);
    atomic_fetch_add(&sig_count, 1);
}

void profjob_block_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < NPASSED; i++)
        sigaddset(&set, passed_on[i]);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

void profjob_handle_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_signal; /* no SA_RESTART: the sleep ends, the signal goes on */
    sa.sa_flags = SA_SIGINFO;
    for (size_t i = 0; i < NPASSED; i++)
        sigaddset(&sa.sa_mask, passed_on[i]); /* one handler at a time: one writer */
    for (size_t i = 0; i < NPASSED; i++)
        sigaction(passed_on[i], &sa, NULL);
}

static const char *sig_name(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    default: return "a signal";
    }
}

/* An exec failure comes back through a close-on-exec pipe. */
int profjob_start(struct profjob *j, char *const *cmd)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return errno;
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return e;
    }
    if (pid == 0) {
        /* COMMAND dies with the profiler (SIGKILL, a crash, a signal it
         * does not pass on) rather than run on unwatched. The death
         * signal follows the thread that forked: profile_main's, the
         * main thread, which lives as long as the process. A profiler
         * that died before the prctl took effect shows as a new parent.
         * The kernel clears the setting at the exec of a set-user-ID or
         * file-capability program (docs/profile.md). */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 && getppid() != parent)
            _exit(128 + SIGKILL);
        /* default dispositions and mask for the command (a caught
         * signal is reset by the exec itself) */
        signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execvp(cmd[0], cmd);
        int e = errno;
        ssize_t n = write(fds[1], &e, sizeof(e));
        (void)n;
        _exit(127);
    }
    close(fds[1]);
    int e = 0;
    ssize_t n;
    while ((n = read(fds[0], &e, sizeof(e))) < 0 && errno == EINTR)
        ;
    close(fds[0]);
    j->child = pid;
    if (n == (ssize_t)sizeof(e)) {
        waitpid(pid, NULL, 0);
        return e ? e : ENOEXEC;
    }
    return 0;
}

/*
 * One signal for COMMAND, as timeout(1) with --kill-after handles one, but
 * on the second signal rather than after a delay: the first is passed on;
 * a second while COMMAND still runs (it ignored or caught the first) sends
 * it SIGKILL. A first Ctrl-C (or Ctrl-\) the terminal sent to its
 * foreground process group is not sent again while COMMAND is still in
 * ours: it has it already, and a handler in it would run twice.
 */
static void take(struct profjob *j, int sig, bool from_tty)
{
    if (j->nsigs < PROFJOB_SIGS_MAX)
        j->sigs[j->nsigs] = sig;
    if (j->nsigs++ == 0) {
        if (from_tty && getpgid(j->child) == getpgrp())
            j->first_from_tty = true;
        else
            kill(j->child, sig);
        return;
    }
    /* not when it has ended already (its status is its own): looked at
     * without reaping it, which the sampling loop does */
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    if (!j->killed &&
        !(waitid(P_PID, (id_t)j->child, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid)) {
        kill(j->child, SIGKILL);
        j->killed = true;
    }
}

void profjob_take_signals(struct profjob *j)
{
    for (unsigned got = atomic_load(&sig_count); j->taken < got; j->taken++)
        take(j, sig_ring[j->taken % SIG_RING], sig_ring_tty[j->taken % SIG_RING]);
}

void profjob_report_json(struct jsonw *w, const struct profjob *j)
{
    jsonw_key(w, "signals");
    jsonw_arr_open(w);
    for (unsigned i = 0; i < j->nsigs && i < PROFJOB_SIGS_MAX; i++)
        jsonw_str(w, sig_name(j->sigs[i]));
    jsonw_arr_close(w);
    jsonw_key(w, "signals_received");
    jsonw_uint(w, j->nsigs);
    jsonw_key(w, "killed_by_profiler");
    jsonw_bool(w, j->killed);
}

void profjob_report_text(FILE *f, const struct profjob *j)
{
    if (!j->nsigs)
        return;
    fprintf(f, "Signals: %s %s", sig_name(j->sigs[0]),
            j->first_from_tty ? "from the terminal, which sent it to the command too"
                              : "passed on to the command");
    if (j->killed)
        fprintf(f, "; a second, %s, sent it SIGKILL", sig_name(j->sigs[1]));
    unsigned rest = j->nsigs - (j->killed ? 2 : 1);
    if (rest)
        fprintf(f, "; %u more after %s", rest, j->killed ? "that" : "it");
    fputc('\n', f);
}
