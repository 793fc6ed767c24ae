/*
 * bench_tui — what the interactive monitor costs a machine, whole process
 * tree.
 *
 *   build/bench_tui BINARY [SECONDS] [SCENARIO...]
 *
 * Runs BINARY --demo=SCENARIO -i 100 in a pseudo-terminal (TERM
 * xterm-256color, C.UTF-8) of 200x60, 120x40 and 80x24, reads everything it
 * writes to the terminal as a terminal would, lets it warm up for 2 s, then
 * measures SECONDS (default 10), a tick being one 100 ms interval of wall
 * time (the monitor draws one frame per sample). Then it sends 'q' and reaps
 * the monitor. Each figure is the median of 3 runs. Default scenarios:
 * a100-sxm4-80gb, dgx-a100-8x7 and h100-pcie-mig-535 (GPM on Hopper in MIG
 * mode: the GPM helper until it has proved the driver, then the sampling
 * thread).
 *
 * CPU, the headline figure ("tree"): the monitor and every process under it
 * (its helpers: this binary run as --gpm-helper, --dcgm-helper). The tree is
 * found from each thread's /proc/PID/task/TID/children (a helper is the
 * child of whichever thread forked it), or, on a kernel without that file,
 * by a scan of /proc for parent links; it is read at the window's start,
 * every 500 ms in it and at its end. Each process's CPU is its CPU-time
 * clock (clock_getcpuclockid: utime + stime of every thread, those that
 * exited included, in ns; /proc/PID/stat gives the same sum in 10 ms
 * clock ticks, too coarse against a window's 40-60 ms), keyed by PID and
 * start time so a reused PID is another process. A process counts its last
 * reading minus its first; one that started in the window counts from 0
 * (a new process's clock starts there), one that ended counts up to its
 * last reading (at most 500 ms of its use is lost; one that lived less than
 * that between two readings is not seen). "monitor alone" is the monitor's
 * process by itself. nvtop (no helpers) is measured by the same code.
 *
 * RSS: VmRSS (/proc/PID/status, kB) at the window's end, of the monitor
 * ("main") and of the processes under it alive then ("helpers", summed).
 * A sum of VmRSS counts pages the processes share (the binary, libc) once
 * per process; PSS (Pss of /proc/PID/smaps_rollup, summed over the tree)
 * splits each shared page among the processes that map it, so a tree's
 * PSS is what it adds to the machine.
 *
 * Bytes: what was read from the terminal per tick. Threads woken: the
 * voluntary context switches of every thread in the tree
 * (/proc/PID/task/TID/status), a thread that blocks and is woken again
 * being one.
 *
 * The simulator stands in for the driver and runs inside the monitor (and
 * inside the GPM helper), so its cost is included.
 *
 * With BENCH_NVTOP (the path of an nvtop binary), MIGMON_SIM_LIB (the
 * simulator's libnvidia-ml.so.1) and MIGMON_SIM_SCENARIOS (the scenario
 * directory) set, nvtop -d 1 (10 refreshes a second) runs on the same
 * simulator, in the same terminal sizes, its runs interleaved with ours, and
 * each figure also gives nvtop's median and ours / nvtop: the machine's
 * speed changes from minute to minute, the ratio much less.
 *
 * With BENCH_BASE (the path of another build of mig-gpu-mon, e.g. a clone of
 * an older commit, whose --demo finds its own simulator as usual), that
 * build's runs are interleaved with ours as well and a line gives its
 * tree median and ours / base, and its split by thread and process: a
 * before/after comparison in the same minutes. BENCH_RUNS (1..15, default
 * 3) sets the runs per figure and BENCH_SIZES the terminal sizes
 * ("200x60,80x24"; default 200x60, 120x40 and 80x24).
 *
 * A last line splits the monitor's CPU and wake-ups by thread name (the
 * front end is mig-gpu-mon, then migmon-engine, migmon-system,
 * migmon-watchdog and the GPUs' own migmon-gpuN together; from
 * /proc/PID/task/TID/schedstat and status), then the processes under it by
 * mode, the mean of the runs.
 *
 * First it prints what one wake-up of an idle thread costs this machine
 * (a thread sleeping to a 100 ms grid, its CPU time per wake): the floor
 * under every thread the monitor or nvtop wakes each tick.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proctree.h"

#define RUNS_MAX 15
#define WARMUP_MS 2000
#define INTERVAL_MS 100

#define NAMES_MAX 8
#define HELPERS_MAX 4

struct result {
    double tree_us_per_tick; /* the monitor and every process under it */
    double cpu_us_per_tick;  /* the monitor's process alone */
    double bytes_per_tick;
    double wakeups_per_tick;  /* every thread's voluntary context switches, the tree's */
    double rss_main_kb;       /* VmRSS at the end of the window */
    double rss_helpers_kb;    /* the processes under it alive then, summed */
    double pss_tree_kb;       /* Pss of the monitor and of those, summed */
    char name[NAMES_MAX][16]; /* the monitor's threads by name; "" unused */
    double name_us[NAMES_MAX];
    double name_wk[NAMES_MAX];    /* wake-ups per tick by name */
    char helper[HELPERS_MAX][16]; /* the processes under it by label; "" unused */
    double helper_us[HELPERS_MAX];
    double helper_wk[HELPERS_MAX];
};

struct task_cpu {
    long tid;
    char name[16];
    uint64_t ns;
    uint64_t wakes; /* voluntary context switches: each is a sleep, then a wake-up */
};

#define TASKS_MAX 256

/* Every thread of pid: its id, its name (the GPUs' threads under one name),
 * the CPU time it has run (schedstat's first field, ns) and its wake-ups. */
static size_t tasks_read(pid_t pid, struct task_cpu *t)
{
    static long tids[TASKS_MAX];
    size_t nt = proctree_tids(pid, tids, TASKS_MAX), n = 0;
    for (size_t i = 0; i < nt; i++) {
        long tid = tids[i];
        char buf[64];
        if (!proctree_task_name(pid, tid, buf, sizeof(buf)))
            continue;
        if (strncmp(buf, "migmon-gpu", 10) == 0)
            snprintf(buf, sizeof(buf), "migmon-gpuN");
        uint64_t ns = proctree_task_ns(pid, tid);
        if (!ns)
            continue;
        t[n].tid = tid;
        snprintf(t[n].name, sizeof(t[n].name), "%.15s", buf);
        t[n].ns = ns;
        t[n].wakes = proctree_task_wakes(pid, tid);
        n++;
    }
    return n;
}

/* CPU per tick by thread name between two readings into out. */
static void tasks_split(const struct task_cpu *a, size_t na, const struct task_cpu *b, size_t nb,
                        double ticks, struct result *out)
{
    memset(out->name, 0, sizeof(out->name));
    memset(out->name_us, 0, sizeof(out->name_us));
    memset(out->name_wk, 0, sizeof(out->name_wk));
    out->wakeups_per_tick = 0;
    for (size_t i = 0; i < nb; i++) {
        uint64_t before = 0, wbefore = 0;
        for (size_t j = 0; j < na; j++)
            if (a[j].tid == b[i].tid) {
                before = a[j].ns;
                wbefore = a[j].wakes;
            }
        if (b[i].ns < before || b[i].wakes < wbefore)
            continue;
        double wk = (double)(b[i].wakes - wbefore) / ticks;
        out->wakeups_per_tick += wk;
        int k = 0;
        while (k < NAMES_MAX && out->name[k][0] && strcmp(out->name[k], b[i].name) != 0)
            k++;
        if (k == NAMES_MAX)
            continue;
        snprintf(out->name[k], sizeof(out->name[k]), "%s", b[i].name);
        out->name_us[k] += (double)(b[i].ns - before) / 1e3 / ticks;
        out->name_wk[k] += wk;
    }
}

/* How often the tree is read during a window: a helper that starts in the
 * window is first seen then, one that ends is last read then. */
#define TREE_POLL_MS 500

/* The tree's figures from one window's ledger into out: the root's own
 * thread split is tasks_split's; the processes under it are summed by label. */
static void acct_result(const struct proctree_ledger *a, pid_t root, double ticks,
                        struct result *out)
{
    memset(out->helper, 0, sizeof(out->helper));
    memset(out->helper_us, 0, sizeof(out->helper_us));
    memset(out->helper_wk, 0, sizeof(out->helper_wk));
    out->tree_us_per_tick = 0;
    out->rss_main_kb = out->rss_helpers_kb = out->pss_tree_kb = 0;
    for (size_t i = 0; i < a->n; i++) {
        const struct proctree_entry *p = &a->p[i];
        double us =
            p->last_ns >= p->first_ns ? (double)(p->last_ns - p->first_ns) / 1e3 / ticks : 0;
        double wk = p->last_wk >= p->first_wk ? (double)(p->last_wk - p->first_wk) / ticks : 0;
        out->tree_us_per_tick += us;
        if (p->pss_kb > 0)
            out->pss_tree_kb += (double)p->pss_kb;
        if (p->pid == root) {
            out->rss_main_kb = p->rss_kb > 0 ? (double)p->rss_kb : 0;
            continue;
        }
        if (p->rss_kb > 0)
            out->rss_helpers_kb += (double)p->rss_kb;
        out->wakeups_per_tick += wk;
        int k = 0;
        while (k < HELPERS_MAX && out->helper[k][0] && strcmp(out->helper[k], p->label) != 0)
            k++;
        if (k == HELPERS_MAX)
            continue;
        snprintf(out->helper[k], sizeof(out->helper[k]), "%s", p->label);
        out->helper_us[k] += us;
        out->helper_wk[k] += wk;
    }
}

static uint64_t now_ns(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Read whatever the monitor wrote until deadline (CLOCK_MONOTONIC ns);
 * returns the bytes read, or -1 when the terminal closed. */
static long long drain_until(int fd, uint64_t deadline)
{
    static char buf[1 << 16];
    long long total = 0;
    for (;;) {
        uint64_t t = now_ns(CLOCK_MONOTONIC);
        if (t >= deadline)
            return total;
        int ms = (int)((deadline - t + 999999) / 1000000);
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int pr = poll(&pfd, 1, ms);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            return -1;
        if (pr == 0)
            continue;
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n > 0)
            total += n;
        else if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        else
            return -1; /* EIO: the slave side closed */
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* nvtop on the simulator, when asked for (see the top of the file) */
static const char *nvtop_bin, *sim_lib, *sim_dir;

/* BENCH_SIZES: "COLSxROWS" separated by commas; false when malformed. */
static bool parse_sizes(const char *spec, int sizes[][2], int max, int *n)
{
    *n = 0;
    for (const char *p = spec; *p;) {
        char *end;
        long c = strtol(p, &end, 10);
        if (end == p || *end != 'x' || c < 20 || c > 1000)
            return false;
        p = end + 1;
        long r = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',') || r < 5 || r > 1000 || *n >= max)
            return false;
        sizes[*n][0] = (int)c;
        sizes[*n][1] = (int)r;
        (*n)++;
        p = *end ? end + 1 : end;
    }
    return *n > 0;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
    return v[n / 2];
}

static double thread_cpu_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* The machine's price of a wake-up: the CPU time of a thread that does
 * nothing but sleep to the next 100 ms and wake, per wake (median of 3
 * rounds of 10). Every thread woken in a tick pays it, so on a machine
 * where this is tens of microseconds (a VM whose guest switches trap to
 * the hypervisor) it is a large part of both figures and of their ratio. */
static double wake_floor_us(void)
{
    double round[3];
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (int r = 0; r < 3; r++) {
        double t0 = thread_cpu_us();
        for (int i = 0; i < 10; i++) {
            next.tv_nsec += INTERVAL_MS * 1000000L;
            if (next.tv_nsec >= 1000000000L) {
                next.tv_nsec -= 1000000000L;
                next.tv_sec++;
            }
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
                ;
        }
        round[r] = (thread_cpu_us() - t0) / 10;
    }
    return median(round, 3);
}

/* The median over n results of one double field (its offsetof); lo and
 * hi, where given, get the range. */
static double res_median(const struct result *r, int n, size_t off, double *lo, double *hi)
{
    double v[RUNS_MAX];
    for (int i = 0; i < n; i++)
        memcpy(&v[i], (const char *)&r[i] + off, sizeof(v[i]));
    double m = median(v, n);
    if (lo)
        *lo = v[0];
    if (hi)
        *hi = v[n - 1];
    return m;
}

/* One name's mean over the runs, us and wake-ups per tick. */
static void split_mean(const struct result *by, int n, bool helper, const char *name, double *us,
                       double *wk)
{
    *us = *wk = 0;
    for (int r = 0; r < n; r++) {
        int max = helper ? HELPERS_MAX : NAMES_MAX;
        for (int j = 0; j < max; j++) {
            const char *nm = helper ? by[r].helper[j] : by[r].name[j];
            if (strcmp(nm, name) == 0) {
                *us += helper ? by[r].helper_us[j] : by[r].name_us[j];
                *wk += helper ? by[r].helper_wk[j] : by[r].name_wk[j];
            }
        }
    }
    *us /= n;
    *wk /= n;
}

/* The monitor's CPU and wake-ups by thread name, then by helper process;
 * who: "" for ours, else a label ("base"). */
static void print_split(const struct result *by, int n, const char *who)
{
    printf("\n    %sby thread (us/tick and woken/tick, mean of %d):", who, n);
    for (int k = 0; k < NAMES_MAX && by[0].name[k][0]; k++) {
        double us, wk;
        split_mean(by, n, false, by[0].name[k], &us, &wk);
        printf(" %s %.0f/%.1f", by[0].name[k], us, wk);
    }
    if (by[0].helper[0][0])
        printf("; processes under it:");
    for (int k = 0; k < HELPERS_MAX && by[0].helper[k][0]; k++) {
        double us, wk;
        split_mean(by, n, true, by[0].helper[k], &us, &wk);
        printf(" %s %.0f/%.1f", by[0].helper[k], us, wk);
    }
    printf("\n");
}

static int run_once(const char *bin, const char *scenario, int cols, int rows, int seconds,
                    bool nvtop, struct result *out)
{
    struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
    int master;
    pid_t pid = forkpty(&master, NULL, NULL, &ws);
    if (pid < 0) {
        perror("bench_tui: forkpty");
        return -1;
    }
    if (pid == 0) {
        char demo[512];
        snprintf(demo, sizeof(demo), "--demo=%s", scenario);
        setenv("TERM", "xterm-256color", 1);
        setenv("LC_ALL", "C.UTF-8", 1);
        unsetenv("NO_COLOR");
        if (nvtop) {
            char scn[4096], dir[4096];
            snprintf(scn, sizeof(scn), "%s/%s.ini", sim_dir, scenario);
            snprintf(dir, sizeof(dir), "%s", sim_lib);
            char *slash = strrchr(dir, '/');
            if (slash)
                *slash = '\0';
            setenv("MIGMON_SIM_SCENARIO", scn, 1);
            setenv("LD_LIBRARY_PATH", dir, 1);
            execl(nvtop_bin, nvtop_bin, "-d", "1", (char *)NULL);
        }
        execl(bin, bin, demo, "-i", "100", (char *)NULL);
        perror("bench_tui: exec");
        _exit(127);
    }
    int rc = -1;
    clockid_t cpu;
    if (clock_getcpuclockid(pid, &cpu) != 0) {
        fprintf(stderr, "bench_tui: no CPU-time clock for the monitor\n");
        goto out;
    }
    uint64_t t = now_ns(CLOCK_MONOTONIC);
    if (drain_until(master, t + (uint64_t)WARMUP_MS * 1000000u) < 0) {
        fprintf(stderr, "bench_tui: the monitor exited during warm-up (%s)\n", scenario);
        goto out;
    }
    static struct task_cpu ta[TASKS_MAX], tb[TASKS_MAX];
    static struct proctree obs;
    static struct proctree_ledger acct;
    proctree_read(pid, false, &obs);
    proctree_fold(&acct, &obs, true);
    size_t na = tasks_read(pid, ta);
    uint64_t c0 = now_ns(cpu), w0 = now_ns(CLOCK_MONOTONIC);
    uint64_t end = w0 + (uint64_t)seconds * 1000000000u;
    long long bytes = 0;
    for (;;) {
        uint64_t next = now_ns(CLOCK_MONOTONIC) + (uint64_t)TREE_POLL_MS * 1000000u;
        long long n = drain_until(master, next < end ? next : end);
        if (n < 0) {
            bytes = -1;
            break;
        }
        bytes += n;
        if (next >= end)
            break;
        proctree_read(pid, false, &obs);
        proctree_fold(&acct, &obs, false);
    }
    uint64_t c1 = now_ns(cpu), w1 = now_ns(CLOCK_MONOTONIC);
    size_t nb = tasks_read(pid, tb);
    proctree_read(pid, true, &obs);
    proctree_fold(&acct, &obs, false);
    if (bytes < 0 || c1 < c0) {
        fprintf(stderr, "bench_tui: the monitor exited while measured (%s)\n", scenario);
        goto out;
    }
    double ticks = (double)(w1 - w0) / 1e6 / INTERVAL_MS;
    out->cpu_us_per_tick = (double)(c1 - c0) / 1e3 / ticks;
    out->bytes_per_tick = (double)bytes / ticks;
    tasks_split(ta, na, tb, nb, ticks, out);
    acct_result(&acct, pid, ticks, out);
    rc = 0;
out:
    if (write(master, "q", 1) != 1)
        kill(pid, SIGTERM);
    /* keep draining so the monitor never blocks on a full terminal */
    for (int i = 0; i < 30; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            close(master);
            return rc;
        }
        drain_until(master, now_ns(CLOCK_MONOTONIC) + 100000000u);
        if (i == 20)
            kill(pid, SIGTERM);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(master);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_tui BINARY [SECONDS] [SCENARIO...]\n");
        return 2;
    }
    const char *bin = argv[1];
    int seconds = argc > 2 ? atoi(argv[2]) : 10;
    if (seconds < 1)
        seconds = 1;
    static const char *const dflt[] = {"a100-sxm4-80gb", "dgx-a100-8x7", "h100-pcie-mig-535"};
    const char *const *scen = argc > 3 ? (const char *const *)&argv[3] : dflt;
    int nscen = argc > 3 ? argc - 3 : (int)(sizeof(dflt) / sizeof(dflt[0]));
    int sizes[8][2] = {{200, 60}, {120, 40}, {80, 24}}, nsizes = 3;
    const char *sz = getenv("BENCH_SIZES");
    if (sz && *sz && !parse_sizes(sz, sizes, 8, &nsizes)) {
        fprintf(stderr, "bench_tui: BENCH_SIZES=%s: expected COLSxROWS[,COLSxROWS...]\n", sz);
        return 2;
    }
    int runs = 3;
    const char *rs = getenv("BENCH_RUNS");
    if (rs && *rs) {
        char *end;
        long v = strtol(rs, &end, 10);
        if (*end || v < 1 || v > RUNS_MAX) {
            fprintf(stderr, "bench_tui: BENCH_RUNS=%s: expected 1 to %d\n", rs, RUNS_MAX);
            return 2;
        }
        runs = (int)v;
    }
    const char *base = getenv("BENCH_BASE");
    if (base && *base && access(base, X_OK) != 0) {
        fprintf(stderr, "bench_tui: BENCH_BASE=%s: not an executable\n", base);
        return 2;
    }
    if (base && !*base)
        base = NULL;
    signal(SIGPIPE, SIG_IGN);

    nvtop_bin = getenv("BENCH_NVTOP");
    sim_lib = getenv("MIGMON_SIM_LIB");
    sim_dir = getenv("MIGMON_SIM_SCENARIOS");
    bool cmp = nvtop_bin && *nvtop_bin && sim_lib && *sim_lib && sim_dir && *sim_dir &&
               access(nvtop_bin, X_OK) == 0;
    printf("bench_tui: %s --demo=SCENARIO -i 100 in a pty, %d s measured after %d s, "
           "median of %d runs%s\n",
           bin, seconds, WARMUP_MS / 1000, runs,
           cmp ? "; nvtop -d 1 on the same simulator, runs interleaved" : "");
    if (base)
        printf("  base: %s, runs interleaved\n", base);
    printf("  this machine: a thread woken every %d ms costs %.1f us of CPU a wake\n",
           INTERVAL_MS, wake_floor_us());
    fflush(stdout);
    int failed = 0;
    for (int s = 0; s < nscen; s++) {
        for (int z = 0; z < nsizes; z++) {
            static struct result by[RUNS_MAX], nv[RUNS_MAX], bs[RUNS_MAX];
            int ok = 0, nok = 0, bok = 0;
            for (int r = 0; r < runs; r++) {
                if (cmp &&
                    run_once(bin, scen[s], sizes[z][0], sizes[z][1], seconds, true, &nv[nok]) == 0)
                    nok++;
                if (base && run_once(base, scen[s], sizes[z][0], sizes[z][1], seconds, false,
                                     &bs[bok]) == 0)
                    bok++;
                if (run_once(bin, scen[s], sizes[z][0], sizes[z][1], seconds, false, &by[ok]) == 0)
                    ok++;
            }
            printf("  %-16s %3dx%-3d", scen[s], sizes[z][0], sizes[z][1]);
            if (ok == 0) {
                printf(" failed\n");
                failed = 1;
                continue;
            }
            double lo, hi;
            double tree = res_median(by, ok, offsetof(struct result, tree_us_per_tick), &lo, &hi);
            double alone = res_median(by, ok, offsetof(struct result, cpu_us_per_tick), NULL, NULL);
            double rmain = res_median(by, ok, offsetof(struct result, rss_main_kb), NULL, NULL);
            double rhelp = res_median(by, ok, offsetof(struct result, rss_helpers_kb), NULL, NULL);
            double blo, bhi;
            double bytes = res_median(by, ok, offsetof(struct result, bytes_per_tick), &blo, &bhi);
            double wk = res_median(by, ok, offsetof(struct result, wakeups_per_tick), NULL, NULL);
            static struct result rss_sum[RUNS_MAX];
            for (int r = 0; r < ok; r++)
                rss_sum[r].rss_main_kb = by[r].rss_main_kb + by[r].rss_helpers_kb;
            double rss = res_median(rss_sum, ok, offsetof(struct result, rss_main_kb), NULL, NULL);
            double pss = res_median(by, ok, offsetof(struct result, pss_tree_kb), NULL, NULL);
            printf("\n    CPU us/tick  tree %7.1f (%.1f..%.1f), monitor alone %.1f", tree, lo, hi,
                   alone);
            double ntree = 0, nrss = 0, npss = 0, nbytes = 0, nwk = 0;
            if (nok > 0) {
                ntree = res_median(nv, nok, offsetof(struct result, tree_us_per_tick), &lo, &hi);
                nrss = res_median(nv, nok, offsetof(struct result, rss_main_kb), NULL, NULL) +
                       res_median(nv, nok, offsetof(struct result, rss_helpers_kb), NULL, NULL);
                npss = res_median(nv, nok, offsetof(struct result, pss_tree_kb), NULL, NULL);
                nbytes = res_median(nv, nok, offsetof(struct result, bytes_per_tick), NULL, NULL);
                nwk = res_median(nv, nok, offsetof(struct result, wakeups_per_tick), NULL, NULL);
                printf(" | nvtop %7.1f (%.1f..%.1f) | ours/nvtop %.2f", ntree, lo, hi,
                       tree / ntree);
            } else if (cmp) {
                printf(" | nvtop failed");
            }
            printf("\n    RSS kB       %7.0f = main %.0f + helpers %.0f", rss, rmain, rhelp);
            if (nok > 0)
                printf(" | nvtop %7.0f | ours/nvtop %.2f", nrss, rss / nrss);
            printf("\n    PSS kB       %7.0f", pss);
            if (nok > 0 && npss > 0)
                printf(" | nvtop %7.0f | ours/nvtop %.2f", npss, pss / npss);
            printf("\n    bytes/tick   %7.0f (%.0f..%.0f)", bytes, blo, bhi);
            if (nok > 0)
                printf(" | nvtop %7.0f | ours/nvtop %.2f", nbytes,
                       nbytes > 0 ? bytes / nbytes : 0.0);
            printf("\n    woken/tick   %7.1f", wk);
            if (nok > 0)
                printf(" | nvtop %7.1f", nwk);
            if (bok > 0) {
                double b = res_median(bs, bok, offsetof(struct result, tree_us_per_tick), &lo, &hi);
                printf("\n    base         tree %7.1f us/tick (%.1f..%.1f), ours/base %.2f, "
                       "woken/tick %.1f",
                       b, lo, hi, tree / b,
                       res_median(bs, bok, offsetof(struct result, wakeups_per_tick), NULL, NULL));
            } else if (base) {
                printf("\n    base failed");
            }
            print_split(by, ok, "");
            if (bok > 0) {
                printf("    base: RSS kB %.0f = main %.0f + helpers %.0f, PSS kB %.0f",
                       res_median(bs, bok, offsetof(struct result, rss_main_kb), NULL, NULL) +
                           res_median(bs, bok, offsetof(struct result, rss_helpers_kb), NULL,
                                      NULL),
                       res_median(bs, bok, offsetof(struct result, rss_main_kb), NULL, NULL),
                       res_median(bs, bok, offsetof(struct result, rss_helpers_kb), NULL, NULL),
                       res_median(bs, bok, offsetof(struct result, pss_tree_kb), NULL, NULL));
                print_split(bs, bok, "base ");
            }
            fflush(stdout);
        }
    }
    return failed;
}
