/*
 * main.c — parse the command line, open the collector, run one front end.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "collect.h"
#include "debuglog.h"
#include "export/json.h"
#include "export/table.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static int open_debug(const struct cli *c)
{
    char path[4096], err[512];
    const char *p = c->debug_file;
    if (!p) {
        if (debuglog_default_path(path, sizeof(path), err, sizeof(err)) != 0) {
            fprintf(stderr, "mig-gpu-mon: %s\n", err);
            return -1;
        }
        p = path;
    }
    if (debuglog_open(p, 0, err, sizeof(err)) != 0) {
        fprintf(stderr, "mig-gpu-mon: %s\n", err);
        return -1;
    }
    debuglog_printf("mig-gpu-mon %s started, pid %d", MIGMON_VERSION, (int)getpid());
    return 0;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !stop_requested)
        ;
}

static int run_once(struct collector *col, const struct cli *c)
{
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    /* CPU % is a delta: prime the host counters, wait briefly, then sample,
     * so a one-shot snapshot has real CPU figures instead of N/A. */
    struct snapshot prime;
    memset(&prime, 0, sizeof(prime));
    if (col->host) {
        host_sample(col->host, &prime.host);
        sleep_ms(200);
    }
    collect_tick(col, &s);
    if (c->format == FMT_JSON)
        json_write_snapshot(stdout, &s, false);
    else
        table_write_snapshot(stdout, &s);
    snapshot_free(&s);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "mig-gpu-mon: writing the snapshot failed: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}

/* A refreshing table until Ctrl-C: the interim monitor until the ncurses UI
 * lands. Ticks stay on a fixed grid (drift-corrected). */
static int run_watch(struct collector *col, const struct cli *c)
{
    if (!isatty(STDOUT_FILENO)) {
        fprintf(stderr, "mig-gpu-mon: standard output is not a terminal; "
                        "use --once --format json|table for a snapshot\n");
        return 2;
    }
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    uint64_t start = clock_mono_ns();
    uint64_t interval = (uint64_t)c->interval_ms * 1000000ull;
    while (!stop_requested) {
        collect_tick(col, &s);
        fputs("\033[H\033[2J", stdout);
        table_write_snapshot(stdout, &s);
        fprintf(stdout, "\nrefresh every %u ms; Ctrl-C quits\n", c->interval_ms);
        fflush(stdout);
        int wait = clock_ms_until_next(start, interval, clock_mono_ns());
        struct pollfd none[1];
        poll(none, 0, wait);
    }
    snapshot_free(&s);
    return 0;
}

int main(int argc, char **argv)
{
    struct cli c;
    char err[512];
    if (cli_parse(&c, argc, argv, err, sizeof(err)) != 0) {
        fprintf(stderr, "mig-gpu-mon: %s\n", err);
        return 2;
    }
    if (c.help) {
        cli_usage(stdout);
        return 0;
    }
    if (c.version) {
        printf("mig-gpu-mon %s\n", MIGMON_VERSION);
        return 0;
    }
    if (c.debug && open_debug(&c) != 0)
        return 2;

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    struct collector col;
    struct collect_opts co = {.nvml_path = c.nvml_path, .proc_root = c.proc_root, .top = c.top};
    char cerr[2048];
    if (collect_open(&col, &co, cerr, sizeof(cerr)) != 0) {
        fprintf(stderr, "mig-gpu-mon: %s\n", cerr);
        debuglog_close();
        return 2;
    }
    int rc = c.once ? run_once(&col, &c) : run_watch(&col, &c);
    collect_close(&col);
    debuglog_close();
    return rc;
}
