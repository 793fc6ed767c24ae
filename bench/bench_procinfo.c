/*
 * bench_procinfo — the /proc side of a tick for GPU processes that exist on
 * this host (the simulator scenarios' PIDs do not, so bench_tick and
 * bench_scale measure only the remembered miss).
 *
 *   build/bench_procinfo [PROCESSES] [TICKS]
 *
 * Forks PROCESSES children that sleep (default 100), then runs TICKS ticks
 * (default 2000) of procinfo_begin / procinfo_fill of every child /
 * procinfo_end on the real /proc, back to back, with the clock handed to
 * procinfo advancing 1 s a tick: what the monitor does at its default
 * interval, including whatever procinfo does only every few seconds.
 * Prints the first tick (first sight of every process), the median, p90 and
 * mean of the others, per tick and per process. The median is the steady
 * tick; the mean also carries the periodic work.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "system/procinfo.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int nproc = argc > 1 ? atoi(argv[1]) : 100;
    int ticks = argc > 2 ? atoi(argv[2]) : 2000;
    if (nproc < 1 || ticks < 10) {
        fprintf(stderr, "usage: bench_procinfo [PROCESSES >= 1] [TICKS >= 10]\n");
        return 2;
    }
    pid_t *kids = calloc((size_t)nproc, sizeof(*kids));
    struct gpu_process *p = calloc((size_t)nproc, sizeof(*p));
    uint64_t *ns = calloc((size_t)ticks, sizeof(*ns));
    if (!kids || !p || !ns)
        return 1;
    int n = 0;
    for (; n < nproc; n++) {
        pid_t k = fork();
        if (k < 0)
            break;
        if (k == 0) {
            for (;;)
                pause();
        }
        kids[n] = k;
    }
    struct procinfo *pi = NULL;
    int rc = 1;
    if (n < nproc) {
        fprintf(stderr, "bench_procinfo: fork failed after %d children\n", n);
        goto out;
    }
    if (procinfo_open(&pi, NULL) != 0)
        goto out;
    uint64_t first = 0;
    for (int t = 0; t <= ticks; t++) {
        uint64_t t0 = clock_mono_ns();
        procinfo_begin(pi, (uint64_t)(t + 1) * 1000000000ull);
        for (int i = 0; i < n; i++) {
            p[i].pid = (uint32_t)kids[i];
            procinfo_fill(pi, &p[i]);
        }
        procinfo_end(pi);
        uint64_t d = clock_mono_ns() - t0;
        if (t == 0)
            first = d;
        else
            ns[t - 1] = d;
    }
    for (int i = 0; i < n; i++) {
        if (p[i].start_time == 0) {
            fprintf(stderr, "bench_procinfo: PID %d not read\n", (int)kids[i]);
            goto out;
        }
    }
    double sum = 0;
    for (int t = 0; t < ticks; t++)
        sum += (double)ns[t];
    qsort(ns, (size_t)ticks, sizeof(*ns), cmp_u64);
    double med = (double)ns[ticks / 2] / 1e3, p90 = (double)ns[ticks * 9 / 10] / 1e3;
    double mean = sum / ticks / 1e3;
    printf("%d live processes, %d ticks (1 s apart on procinfo's clock)\n", n, ticks);
    printf("  first tick: %.1f us (%.2f us per process)\n", (double)first / 1e3,
           (double)first / 1e3 / n);
    printf("  per tick: median %.1f us, p90 %.1f us, mean %.1f us\n", med, p90, mean);
    printf("  per process: median %.2f us, mean %.2f us\n", med / n, mean / n);
    rc = 0;
out:
    procinfo_close(pi);
    for (int i = 0; i < n; i++)
        kill(kids[i], SIGKILL);
    for (int i = 0; i < n; i++)
        waitpid(kids[i], NULL, 0);
    free(kids);
    free(p);
    free(ns);
    return rc;
}
