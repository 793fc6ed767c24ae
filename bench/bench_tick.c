/*
 * bench_tick — the cost of one collector tick against the simulator.
 *
 *   build/bench_tick SCENARIO [TICKS]
 *
 *   MIGMON_BENCH_GPM_EXE=build/mig-gpu-mon build/bench_tick SCENARIO [TICKS]
 *
 * Prints the median and 90th-percentile wall time per tick, the CPU time per
 * tick (getrusage), heap calls and threads woken per steady-state tick (the
 * voluntary context switches of every thread of the process). The ticks are
 * the engine's: the collector may sample the GPUs on the calling thread
 * (a takeover is set; one that fires ends the benchmark, since a figure
 * with a stalled call in it says nothing). BENCH_NO_TAKEOVER=1 measures the
 * way of a caller that cannot be replaced (--once, profile): each GPU on
 * its own thread. With
 * MIGMON_BENCH_GPM_EXE the GPM helper runs (sampling every 100 ms, kept
 * in the helper as --gpm helper does: back-to-back ticks would take few
 * GPM samples on the sampling thread, which wants 95 ms between two): the
 * monitor's per-tick figures then include reading its pipe, and the
 * helper's own CPU time is reported per sampling round and per second
 * (bench_tui measures GPM on the sampling thread). The simulator's own
 * cost is included (it stands in for the driver), so the figure is an upper
 * bound of our share; compare runs as ratios, not absolutes.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "backend/gpm/gpm.h"
#include "core/clock.h"
#include "engine/collect.h"

static long heap_calls;
void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n) { __atomic_fetch_add(&heap_calls, 1, __ATOMIC_RELAXED); return __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) { __atomic_fetch_add(&heap_calls, 1, __ATOMIC_RELAXED); return __real_calloc(a, b); }
void *__wrap_realloc(void *p, size_t n) { __atomic_fetch_add(&heap_calls, 1, __ATOMIC_RELAXED); return __real_realloc(p, n); }

/* CPU time of a process, seconds: /proc/PID/schedstat's first field (ns),
 * finer than the 10 ms clock ticks of /proc/PID/stat. */
static double proc_cpu_s(int pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    unsigned long long ns = 0;
    int n = fscanf(f, "%llu", &ns);
    fclose(f);
    return n == 1 ? (double)ns / 1e9 : -1;
}

/* The GPM helper: our only child process (the backend keeps its client
 * private). -1 when there is none. */
static int helper_pid(void)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    int found = -1;
    struct dirent *e;
    while (found < 0 && (e = readdir(d))) {
        char path[300], buf[512];
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        const char *p = strrchr(buf, ')'); /* comm may hold spaces */
        int ppid;
        if (p && sscanf(p + 1, " %*c %d", &ppid) == 1 && ppid == (int)getpid())
            found = atoi(e->d_name);
    }
    closedir(d);
    return found;
}

/* Voluntary context switches of every thread of this process: each is a
 * thread that blocked and was woken again. */
static unsigned long long wakeups(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 0;
    unsigned long long sum = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300], line[128];
        snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        unsigned long long n = 0;
        while (fgets(line, sizeof(line), f))
            if (sscanf(line, "voluntary_ctxt_switches: %llu", &n) == 1)
                break;
        fclose(f);
        sum += n;
    }
    closedir(d);
    return sum;
}

static void takeover(void *arg)
{
    (void)arg;
    fprintf(stderr, "bench_tick: a driver call overran its tick; no figures\n");
    _exit(1);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_tick SCENARIO.ini [TICKS]\n");
        return 2;
    }
    int ticks = argc > 2 ? atoi(argv[2]) : 2000;
    if (ticks < 10)
        ticks = 10;
    const char *lib = getenv("MIGMON_SIM_LIB");
    if (!lib) {
        fprintf(stderr, "bench_tick: set MIGMON_SIM_LIB to the simulator library\n");
        return 2;
    }
    setenv("MIGMON_SIM_SCENARIO", argv[1], 1);
    setenv("MIGMON_SIM_TIME", "100+1", 1);
    struct collector c;
    const char *gpm_exe = getenv("MIGMON_BENCH_GPM_EXE");
    struct collect_opts o = {
        .nvml_path = lib, .gpm_exe = gpm_exe, .interval_ms = 100, .gpm_mode = GPM_HELPER};
    char err[2048];
    if (collect_open(&c, &o, err, sizeof(err)) != 0 || !c.be_state) {
        fprintf(stderr, "bench_tick: %s\n", err[0] ? err : c.gpu_error);
        return 1;
    }
    const char *nt = getenv("BENCH_NO_TAKEOVER");
    bool inline_ok = !(nt && *nt && strcmp(nt, "0") != 0);
    if (inline_ok)
        collect_set_takeover(&c, takeover, NULL);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    if (gpm_exe)
        collect_settle(&c, 3000);
    for (int i = 0; i < 5; i++)
        collect_tick(&c, &s);
    int hpid = gpm_exe ? helper_pid() : -1;
    uint64_t w0 = clock_mono_ns();
    uint64_t *ns = calloc((size_t)ticks, sizeof(*ns));
    long heap0 = heap_calls;
    unsigned long long wk0 = wakeups();
    double cpu0 = cpu_s();
    for (int i = 0; i < ticks; i++) {
        uint64_t t = clock_mono_ns();
        collect_tick(&c, &s);
        ns[i] = clock_mono_ns() - t;
    }
    double cpu = cpu_s() - cpu0;
    unsigned long long wk = wakeups() - wk0;
    long heap = heap_calls - heap0;
    (void)w0;
    /* The helper's cost: 5 s of real-time ticks at its 100 ms interval. */
    double h0 = hpid > 0 ? proc_cpu_s(hpid) : -1;
    uint64_t hw0 = clock_mono_ns();
    for (int i = 0; hpid > 0 && i < 50; i++) {
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
        collect_tick(&c, &s);
    }
    double wall = (double)(clock_mono_ns() - hw0) / 1e9;
    double h1 = hpid > 0 ? proc_cpu_s(hpid) : -1;
    qsort(ns, (size_t)ticks, sizeof(*ns), cmp_u64);
    printf("scenario %s: %zu devices, %d ticks%s\n", argv[1], s.ndevices, ticks,
           inline_ok ? "" : " (BENCH_NO_TAKEOVER: each GPU on its own thread)");
    printf("  wall per tick: median %.1f us, p90 %.1f us\n", (double)ns[ticks / 2] / 1e3,
           (double)ns[ticks * 9 / 10] / 1e3);
    printf("  cpu per tick:  %.1f us (at 1 s interval: %.4f %% of one core)\n",
           cpu / ticks * 1e6, cpu / ticks * 100.0);
    printf("  heap calls per steady-state tick: %.3f\n", (double)heap / ticks);
    printf("  threads woken per steady-state tick: %.2f\n", (double)wk / ticks);
    if (gpm_exe) {
        size_t ngpm = 0;
        for (size_t i = 0; i < s.ndevices; i++)
            ngpm += s.devices[i].m[M_SM_UTIL].src == MSRC_GPM;
        printf("  GPM: %zu devices with GPM values\n", ngpm);
        if (h0 >= 0 && h1 >= 0 && wall > 0)
            printf("  GPM helper (pid %d): %.1f ms CPU over %.2f s = %.3f %% of one core at a "
                   "100 ms interval, %.0f us per round\n",
                   hpid, (h1 - h0) * 1e3, wall, (h1 - h0) / wall * 100.0,
                   (h1 - h0) / (wall / 0.1) * 1e6);
    }
    free(ns);
    snapshot_free(&s);
    collect_close(&c);
    return 0;
}
