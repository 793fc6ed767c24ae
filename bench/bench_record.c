/*
 * bench_record — what a recording costs: bytes a snapshot, and the
 * writer's CPU against the tick it records.
 *
 *   build/bench_record cost SCENARIO.ini REC.jsonl [ROUNDS]
 *
 * cost: REC.jsonl is a plain recording of schema 1 of SCENARIO (record it
 * with the recorder: bench/bench_record.sh). Its snapshots are read back
 * (the reader's round trip is exact: tests/e2e/test_replay.sh) and written
 * again as the recorder writes them (src/app/record.c: rendered in memory, a
 * full line at each seek point, then recout), once for each of plain,
 * gzip and zstd, schema 1 and 2, each flushed after every snapshot as at
 * -i 1000, into a file in TMPDIR (else /tmp), ROUNDS times (default 3). Before each
 * snapshot written, one collector tick of SCENARIO, as bench_tick measures
 * them (the GPUs sampled on the calling thread, MIGMON_SIM_TIME=100+1), so
 * that the writer and the tick it records are measured in the same
 * minutes of a shared machine. Printed: bytes a snapshot and a day at one
 * a second, the writer's CPU a snapshot (its thread's CPU time), a tick's
 * (the process's), and the writer's share of the tick.
 * BENCH_RECORD_ONLY="zstd, schema 2" (a row's name) writes only that
 * variant, for a profiler.
 *
 *   build/bench_record live BIN SCENARIO [SECONDS]
 *
 * live: the recorder at work. BIN --demo=SCENARIO record -i 1000 writes
 * zstd of schema 2 into a file in TMPDIR (else /tmp); after 5 s, for
 * SECONDS (default 30), the CPU time each thread of it and each process
 * under it runs (schedstat, ns) is read. The recorder's main thread does
 * nothing but take each snapshot from the sampling thread and write it
 * (render, compress, flush: src/app/record.c); everything else in the
 * tree (the sampling and host threads, the DCGM and events helpers) makes
 * the snapshots it records. Printed: both a snapshot, and the writer's
 * share of the rest. Unlike cost, the caches are as a once-a-second
 * process finds them.
 *
 * The long recording that bench_record.sh times `replay --once --at` on is
 * made by tests/rec_synth.c.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proctree.h"

#include "app/recout.h"
#include "backend/replay/reader.h"
#include "core/clock.h"
#include "engine/collect.h"
#include "export/json.h"
#include "export/json_delta.h"

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double process_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The recorder's writing of one snapshot (record.c's emit, without the
 * event lines: the snapshots of a recording read back hold the events
 * already written): rendered into a memory stream kept from one snapshot
 * to the next, as record.c keeps it. */
static FILE *render;
static char *render_buf;
static size_t render_len;

static int write_one(struct recout *o, int fd, int schema, const struct snapshot *s,
                     const struct snapshot *prev)
{
    if (!render && !(render = open_memstream(&render_buf, &render_len)))
        return -1;
    rewind(render);
    bool key = recout_key_due(o, s->elapsed_ns);
    if (schema == 2)
        json_delta_write(render, s, key ? NULL : prev);
    else
        json_write_snapshot(render, s, false);
    if (fflush(render) != 0)
        return -1;
    struct recout_meta meta = {.snapshot = true, .elapsed = s->elapsed_ns, .wall = s->wall_ns};
    bool cut;
    return recout_put(o, fd, render_buf, render_len, &meta, key, &cut);
}

/* The snapshots of a recording, all in memory. */
struct snaps {
    struct snapshot *s;
    size_t n;
};

static int load(const char *path, struct snaps *out, size_t max)
{
    struct replay_file f;
    char err[1024];
    if (replay_file_open(&f, path, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench_record: %s\n", err);
        return -1;
    }
    size_t n = f.count < max ? (size_t)f.count : max;
    out->s = calloc(n, sizeof(*out->s));
    out->n = 0;
    for (size_t i = 0; out->s && i < n; i++) {
        if (replay_file_read(&f, i, &out->s[out->n], err, sizeof(err)) != 0)
            continue;
        /* a second apart, as record -i 1000 takes them (the recording was
         * made a simulated second a tick: MIGMON_SIM_TIME=0+1), so that a
         * frame holds a minute of them */
        out->s[out->n].elapsed_ns = out->s[0].elapsed_ns + out->n * 1000000000ull;
        out->s[out->n].wall_ns = out->s[0].wall_ns + (int64_t)out->n * 1000000000ll;
        out->n++;
    }
    /* the pool's strings must outlive the snapshots: the file stays open
     * (leaked on purpose for the life of the benchmark) */
    struct replay_file *keep = malloc(sizeof(*keep));
    if (keep)
        *keep = f;
    return out->n ? 0 : -1;
}

struct variant {
    enum rec_compress k;
    int schema;
    const char *name;
};

static const struct variant variants[] = {
    {REC_PLAIN, 1, "plain, schema 1"}, {REC_GZIP, 1, "gzip, schema 1"},
    {REC_ZSTD, 1, "zstd, schema 1"},   {REC_PLAIN, 2, "plain, schema 2"},
    {REC_GZIP, 2, "gzip, schema 2"},   {REC_ZSTD, 2, "zstd, schema 2"},
};

static void takeover(void *arg)
{
    (void)arg;
    fprintf(stderr, "bench_record: a driver call overran its tick; no figures\n");
    _exit(1);
}

/* The collector of a scenario, sampling the GPUs on the calling thread as
 * the engine does (bench_tick's way). */
static int tick_open(struct collector *c, const char *scenario)
{
    setenv("MIGMON_SIM_SCENARIO", scenario, 1);
    setenv("MIGMON_SIM_TIME", "100+1", 1);
    struct collect_opts o = {.nvml_path = getenv("MIGMON_SIM_LIB"), .interval_ms = 100};
    char err[2048];
    if (!o.nvml_path || collect_open(c, &o, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench_record: %s\n", o.nvml_path ? err : "set MIGMON_SIM_LIB");
        return -1;
    }
    collect_set_takeover(c, takeover, NULL);
    return 0;
}

/*
 * Writes every snapshot of sn with variant v, a collector tick before
 * each (so that the two are measured in the same minutes of a shared
 * machine): the bytes, the writer's CPU and the ticks' CPU, seconds.
 */
static int run_variant(const struct variant *v, const struct snaps *sn, struct collector *c,
                       struct snapshot *live, off_t *bytes, double *cpu, double *ticks)
{
    /* a file on the disk the recordings go to (TMPDIR, else /tmp), opened
     * as the recorder opens one: plain appended to, compressed written at
     * its place (src/app/record.c), a flush's calls its own */
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof(path), "%s/bench_record.XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    unlink(path);
    if (v->k == REC_PLAIN)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_APPEND);
    struct recout *o;
    char err[256];
    if (recout_open(&o, v->k, fd, err, sizeof(err)) != 0) {
        close(fd);
        return -1;
    }
    *cpu = *ticks = 0;
    int rc = 0;
    for (size_t i = 0; i < sn->n && rc == 0; i++) {
        double t0 = process_cpu();
        collect_tick(c, live);
        double t1 = process_cpu(), w0 = thread_cpu();
        rc = write_one(o, fd, v->schema, &sn->s[i], i ? &sn->s[i - 1] : NULL);
        bool cut;
        if (rc == 0)
            rc = recout_flush(o, fd, &cut); /* -i 1000: every snapshot */
        *cpu += thread_cpu() - w0;
        *ticks += t1 - t0;
    }
    double w0 = thread_cpu();
    if (rc == 0)
        rc = recout_finish(o, fd);
    *cpu += thread_cpu() - w0;
    recout_free(o);
    *bytes = lseek(fd, 0, SEEK_END);
    close(fd);
    return rc;
}

static int cost(const char *scenario, const char *rec, int rounds)
{
    struct snaps sn;
    if (load(rec, &sn, 100000) != 0)
        return 1;
    struct collector c;
    if (tick_open(&c, scenario) != 0)
        return 1;
    struct snapshot live;
    memset(&live, 0, sizeof(live));
    for (int i = 0; i < 5; i++)
        collect_tick(&c, &live);
    printf("%s: %zu snapshots (%zu devices), %d rounds\n", scenario, sn.n, sn.s[0].ndevices,
           rounds);
    printf("  %-16s %12s %14s %14s %10s %10s\n", "", "bytes/snap", "a day (1 s)",
           "writer us/snap", "tick us", "of a tick");
    const char *only = getenv("BENCH_RECORD_ONLY");
    for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
        if (only && *only && strcmp(only, variants[i].name) != 0)
            continue;
        off_t bytes = 0;
        double cpu = 0, ticks = 0;
        for (int r = 0; r < rounds; r++) {
            double c1, t1;
            if (run_variant(&variants[i], &sn, &c, &live, &bytes, &c1, &t1) != 0) {
                fprintf(stderr, "bench_record: %s: write failed\n", variants[i].name);
                return 1;
            }
            cpu += c1;
            ticks += t1;
        }
        double n = (double)sn.n * rounds, per = (double)bytes / (double)sn.n;
        printf("  %-16s %12.0f %11.1f MB %14.1f %10.1f %9.0f%%\n", variants[i].name, per,
               per * 86400 / 1e6, cpu / n * 1e6, ticks / n * 1e6, cpu / ticks * 100);
    }
    snapshot_free(&live);
    collect_close(&c);
    return 0;
}

/* The recorder in the tree of root: the process with a thread named
 * migmon-engine (--demo's launcher waits above it); 0 when none yet. */
static pid_t recorder_of(pid_t root)
{
    struct proctree t;
    proctree_read(root, false, &t);
    for (size_t i = 0; i < t.n; i++) {
        long tids[256];
        size_t n = proctree_tids(t.p[i].pid, tids, 256);
        for (size_t k = 0; k < n; k++) {
            char name[32];
            if (proctree_task_name(t.p[i].pid, tids[k], name, sizeof(name)) &&
                strcmp(name, "migmon-engine") == 0)
                return t.p[i].pid;
        }
    }
    return 0;
}

static uint64_t tree_ns(const struct proctree_ledger *l)
{
    uint64_t ns = 0;
    for (size_t i = 0; i < l->n; i++)
        if (l->p[i].last_ns >= l->p[i].first_ns)
            ns += l->p[i].last_ns - l->p[i].first_ns;
    return ns;
}

static int live(const char *bin, const char *scenario, int seconds)
{
    const char *dir = getenv("TMPDIR");
    char out[4096], demo[512];
    snprintf(out, sizeof(out), "%s/bench_record_live.%d.jsonl.zst", dir && *dir ? dir : "/tmp",
             (int)getpid());
    snprintf(demo, sizeof(demo), "--demo=%s", scenario);
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(nul, 2);
        execl(bin, bin, demo, "record", "-i", "1000", "--force", "-o", out, (char *)NULL);
        _exit(127);
    }
    sleep(5);
    pid_t rec = recorder_of(pid);
    struct proctree obs;
    struct proctree_ledger acct;
    memset(&acct, 0, sizeof(acct));
    uint64_t m0 = rec ? proctree_task_ns(rec, rec) : 0;
    proctree_read(pid, false, &obs);
    proctree_fold(&acct, &obs, true);
    double t0 = (double)clock_mono_ns();
    sleep((unsigned)seconds);
    uint64_t m1 = rec ? proctree_task_ns(rec, rec) : 0;
    proctree_read(pid, false, &obs);
    proctree_fold(&acct, &obs, false);
    double secs = ((double)clock_mono_ns() - t0) / 1e9;
    kill(pid, SIGTERM);
    int status;
    waitpid(pid, &status, 0);
    unlink(out);
    if (!rec || m1 <= m0) {
        fprintf(stderr, "bench_record: %s: no recorder found running\n", scenario);
        return 1;
    }
    double writer = (double)(m1 - m0) / 1e3 / secs, all = (double)tree_ns(&acct) / 1e3 / secs;
    printf("  recorder at work (zstd, schema 2, -i 1000, %.0f s): writer %.0f us a snapshot, "
           "the rest of the tree %.0f us: %.0f%%\n",
           secs, writer, all - writer, writer / (all - writer) * 100);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "cost") == 0)
        return cost(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 3);
    if (argc >= 4 && strcmp(argv[1], "live") == 0)
        return live(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 30);
    fprintf(stderr, "usage: bench_record cost SCENARIO.ini REC.jsonl [ROUNDS]\n"
                    "       bench_record live BIN SCENARIO [SECONDS]\n");
    return 2;
}
