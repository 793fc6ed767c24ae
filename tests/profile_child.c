/*
 * profile_child — a job for the profile mode's tests. It registers itself
 * (and a child it forks) with the simulator as GPU processes through the
 * file named by MIGMON_SIM_PROC_FILE (lines "PID GPU MIB SLOT", a PID's
 * last line counts), allocates CPU memory, and ends as asked:
 *
 *   profile_child GPU STEP_MIB STEPS CHILD_MIB RSS_MIB STEP_MS EXIT
 *
 * GPU: N for GPU N, or N:S for the MIG device in slot S of GPU N.
 * GPU memory: STEPS steps of STEP_MIB, STEP_MS apart; then a child holding
 * CHILD_MIB for 4 x STEP_MS while the parent keeps its own; then 0. The
 * GPU peak is STEP_MIB x STEPS + CHILD_MIB. CPU memory: RSS_MIB touched
 * before the steps. EXIT: a number to exit with, or "sigN" to die of
 * signal N, or "wait" to sleep until a signal comes (SIGTERM: exit 143
 * after writing "got SIGTERM" on stderr).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *ctl;
static int gpu, slot = -1; /* slot -1: the GPU itself */

static void reg(double mib)
{
    FILE *f = fopen(ctl, "a");
    if (!f) {
        perror(ctl);
        exit(99);
    }
    fprintf(f, "%d %d %.0f %d\n", (int)getpid(), gpu, mib, slot);
    fclose(f);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static volatile sig_atomic_t got_term;

static void on_term(int sig)
{
    (void)sig;
    got_term = 1;
}

int main(int argc, char **argv)
{
    if (argc != 8 || !(ctl = getenv("MIGMON_SIM_PROC_FILE"))) {
        fprintf(stderr, "usage: MIGMON_SIM_PROC_FILE=F profile_child GPU STEP_MIB STEPS "
                        "CHILD_MIB RSS_MIB STEP_MS EXIT\n");
        return 99;
    }
    gpu = atoi(argv[1]);
    if (strchr(argv[1], ':'))
        slot = atoi(strchr(argv[1], ':') + 1);
    int steps = atoi(argv[3]);
    double step = atof(argv[2]), child_mib = atof(argv[4]);
    size_t rss = (size_t)atol(argv[5]) << 20;
    long step_ms = atol(argv[6]);
    const char *how = argv[7];

    char *cpu = rss ? malloc(rss) : NULL;
    if (cpu)
        memset(cpu, 1, rss); /* resident, not just reserved */
    for (int i = 1; i <= steps; i++) {
        reg(step * i);
        sleep_ms(step_ms);
    }
    if (child_mib > 0) {
        pid_t c = fork();
        if (c == 0) {
            reg(child_mib);
            sleep_ms(4 * step_ms);
            reg(0);
            _exit(0);
        }
        waitpid(c, NULL, 0);
    }
    reg(0);
    sleep_ms(step_ms);
    free(cpu);
    if (strncmp(how, "sig", 3) == 0) {
        fflush(NULL);
        signal(atoi(how + 3), SIG_DFL);
        raise(atoi(how + 3));
    }
    if (strcmp(how, "wait") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_term;
        sigaction(SIGTERM, &sa, NULL);
        while (!got_term)
            pause();
        fprintf(stderr, "got SIGTERM\n");
        return 143;
    }
    return atoi(how);
}
