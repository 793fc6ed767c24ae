/*
 * profile.c — run one command and report what it used: peak GPU memory
 * (NVML's per-process allocation summed over the command's process tree,
 * per device and MIG instance; or, where no process list can be read, the
 * growth of the devices' used memory, labelled as such), peak CPU memory
 * (the tree's RSS, sampled, and the child's ru_maxrss), wall time,
 * utilisation peak and mean with sources, energy, peak temperature and the
 * throttle reasons seen. docs/profile.md.
 *
 * One thread: the collector is ticked here at the sampling interval with a
 * deadline, so a stuck driver costs a late sample, never a stuck profile.
 */
#include "profile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "collect.h"
#include "demo.h"
#include "export/json.h"
#include "export/jsonw.h"
#include "text.h"
#include "units.h"

#define PROF_INTERVAL_DEFAULT_MS 50u
#define PROF_INTERVAL_MIN_MS 10u
#define PROF_TREE_MAX 4096
#define PROF_DEV_MAX 1024
#define MIB_D (1024.0 * 1024.0)

enum prof_format { PF_TEXT, PF_JSON };

struct prof_opts {
    unsigned interval_ms;
    const char *report;   /* -o */
    const char *timeline; /* --timeline */
    enum prof_format format;
    const char *nvml_path;
    const char *proc_root;
    bool demo;
    const char *demo_scenario;
    char **cmd;
};

/* What is known of one device over the run, matched by UUID. */
struct prof_dev {
    char uuid[MIGMON_UUID_LEN];
    char name[MIGMON_NAME_LEN];
    char profile[32];
    int index, mig_index;
    bool mig;
    bool visible; /* among the devices the command may use */
    bool used0_ok;
    double used0;          /* VRAM used before the command started */
    double peak_alloc;     /* NVML per-process allocation of the tree, peak */
    bool alloc_seen;       /* a process list of this device was read */
    double peak_delta;     /* used - used0, peak (>= 0) */
    bool delta_ok;
    double util_peak, util_sum;
    unsigned util_n;
    enum metric_source util_src;
    bool energy0_ok;
    double energy0, energy1;
    double temp_peak;
    bool temp_ok;
    uint64_t throttle;
};

struct prof {
    struct prof_opts o;
    pid_t child;
    uint64_t t0;
    size_t ndev;
    struct prof_dev dev[PROF_DEV_MAX];
    pid_t tree[PROF_TREE_MAX];
    size_t ntree;
    bool children_files; /* /proc/PID/task/TID/children exists */
    double peak_gpu;     /* the metric's total over devices, peak */
    bool any_alloc;      /* some device's process list was read */
    double peak_delta_total;
    bool any_delta;
    double peak_rss;
    unsigned long samples, failed;
    char first_error[512];
    FILE *timeline;
    char visible_note[256];
};

static volatile sig_atomic_t pending_sig;

static void on_signal(int sig)
{
    pending_sig = sig;
}

static void usage(FILE *f)
{
    fputs("Usage: mig-gpu-mon profile [OPTIONS] -- COMMAND [ARGS...]\n"
          "Run COMMAND and report its peak GPU and CPU memory, energy and activity.\n"
          "\n"
          "  -i, --interval MS     sample every MS milliseconds (default 50, min 10)\n"
          "  -o, --output FILE     write the report to FILE instead of stderr\n"
          "  -f, --format FMT      report as text (default) or json\n"
          "      --timeline FILE   one JSON snapshot per sample (JSON Lines)\n"
          "      --nvml-path PATH  load this libnvidia-ml\n"
          "      --demo[=SCENARIO] on the bundled NVML simulator\n"
          "  -h, --help            this help\n"
          "\n"
          "The exit status is COMMAND's (128+N when it died of signal N; 127 when it\n"
          "cannot be run). SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed on to it.\n",
          f);
}

static int parse(struct prof_opts *o, int argc, char **argv)
{
    enum { O_TIMELINE = 256, O_NVML, O_DEMO, O_PROC_ROOT };
    static const struct option longopts[] = {
        {"interval", required_argument, NULL, 'i'},
        {"output", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, 'f'},
        {"timeline", required_argument, NULL, O_TIMELINE},
        {"nvml-path", required_argument, NULL, O_NVML},
        {"demo", optional_argument, NULL, O_DEMO},
        {"proc-root", required_argument, NULL, O_PROC_ROOT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof(*o));
    o->interval_ms = PROF_INTERVAL_DEFAULT_MS;
    optind = 1;
    opterr = 0;
    int opt;
    /* '+': options end at COMMAND, so its own options stay its own */
    while ((opt = getopt_long(argc, argv, "+:i:o:f:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'i': {
            char *end;
            errno = 0;
            unsigned long v = strtoul(optarg, &end, 10);
            if (errno || *end || !*optarg || v < PROF_INTERVAL_MIN_MS || v > 60000) {
                fprintf(stderr, "mig-gpu-mon profile: --interval %s: expected %u to 60000 ms\n",
                        optarg, PROF_INTERVAL_MIN_MS);
                return 2;
            }
            o->interval_ms = (unsigned)v;
            break;
        }
        case 'o': o->report = optarg; break;
        case 'f':
            if (strcmp(optarg, "text") == 0)
                o->format = PF_TEXT;
            else if (strcmp(optarg, "json") == 0)
                o->format = PF_JSON;
            else {
                fprintf(stderr, "mig-gpu-mon profile: --format %s: expected text or json\n", optarg);
                return 2;
            }
            break;
        case O_TIMELINE: o->timeline = optarg; break;
        case O_NVML: o->nvml_path = optarg; break;
        case O_DEMO: o->demo = true; o->demo_scenario = optarg; break;
        case O_PROC_ROOT: o->proc_root = optarg; break;
        case 'h': usage(stdout); return 0;
        case ':':
            fprintf(stderr, "mig-gpu-mon profile: %s: missing argument\n", argv[optind - 1]);
            return 2;
        default:
            fprintf(stderr, "mig-gpu-mon profile: %s: unknown option (see profile --help)\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc && strcmp(argv[optind], "--") == 0)
        optind++;
    if (optind >= argc) {
        fprintf(stderr, "mig-gpu-mon profile: no command given (profile -- COMMAND ARGS...)\n");
        return 2;
    }
    if (o->demo && o->nvml_path) {
        fprintf(stderr, "mig-gpu-mon profile: --demo and --nvml-path exclude each other\n");
        return 2;
    }
    o->cmd = argv + optind;
    return -1; /* go on */
}

/* ---- the command's process tree ---- */

static void tree_add(struct prof *P, pid_t pid)
{
    for (size_t i = 0; i < P->ntree; i++)
        if (P->tree[i] == pid)
            return;
    if (P->ntree < PROF_TREE_MAX)
        P->tree[P->ntree++] = pid;
}

static bool in_tree(const struct prof *P, int64_t pid)
{
    for (size_t i = 0; i < P->ntree; i++)
        if (P->tree[i] == pid)
            return true;
    return false;
}

static const char *proc_dir(const struct prof *P)
{
    return P->o.proc_root ? P->o.proc_root : "/proc";
}

static ssize_t read_small(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n >= 0)
        buf[n] = '\0';
    return n;
}

/* The children of every thread of pid, from /proc/PID/task/TID/children. */
static bool add_children(struct prof *P, pid_t pid)
{
    char path[4608], buf[8192];
    snprintf(path, sizeof(path), "%s/%d/task", proc_dir(P), (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return true; /* gone: nothing to add */
    struct dirent *e;
    bool ok = true;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "%s/%d/task/%s/children", proc_dir(P), (int)pid, e->d_name);
        ssize_t n = read_small(path, buf, sizeof(buf));
        if (n < 0) {
            ok = errno != ENOENT; /* ENOENT: the kernel has no children files */
            continue;
        }
        for (char *s = buf, *end; *s; s = end) {
            long c = strtol(s, &end, 10);
            if (end == s)
                break;
            if (c > 0)
                tree_add(P, (pid_t)c);
        }
    }
    closedir(d);
    return ok;
}

/* Without children files: every process whose parent is in the tree. */
static void scan_proc(struct prof *P)
{
    DIR *d = opendir(proc_dir(P));
    if (!d)
        return;
    struct dirent *e;
    char path[4608], buf[1024];
    for (bool grew = true; grew;) {
        grew = false;
        rewinddir(d);
        while ((e = readdir(d))) {
            if (e->d_name[0] < '1' || e->d_name[0] > '9')
                continue;
            snprintf(path, sizeof(path), "%s/%s/stat", proc_dir(P), e->d_name);
            if (read_small(path, buf, sizeof(buf)) <= 0)
                continue;
            const char *rp = strrchr(buf, ')');
            int ppid;
            if (!rp || sscanf(rp + 1, " %*c %d", &ppid) != 1)
                continue;
            pid_t pid = (pid_t)atoi(e->d_name);
            if (in_tree(P, ppid) && !in_tree(P, pid)) {
                tree_add(P, pid);
                grew = true;
            }
        }
    }
    closedir(d);
}

static void tree_refresh(struct prof *P)
{
    P->ntree = 0;
    tree_add(P, P->child);
    if (P->children_files) {
        for (size_t i = 0; i < P->ntree; i++) /* the list grows as it is walked */
            if (!add_children(P, P->tree[i])) {
                P->children_files = false;
                break;
            }
    }
    if (!P->children_files)
        scan_proc(P);
}

/* Resident memory of the tree, bytes. */
static double tree_rss(const struct prof *P)
{
    static long page;
    if (!page)
        page = sysconf(_SC_PAGESIZE);
    double sum = 0;
    char path[4608], buf[256];
    for (size_t i = 0; i < P->ntree; i++) {
        snprintf(path, sizeof(path), "%s/%d/statm", proc_dir(P), (int)P->tree[i]);
        unsigned long size, res;
        if (read_small(path, buf, sizeof(buf)) > 0 && sscanf(buf, "%lu %lu", &size, &res) == 2)
            sum += (double)res * (double)page;
    }
    return sum;
}

/* ---- devices ---- */

/* CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES as UUIDs: the devices the
 * command may use. Ordinals are CUDA's numbering, not NVML's: they are not
 * mapped (every device is counted, and the report says so). */
static bool visible(struct prof *P, const struct device *d)
{
    const char *names[] = {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"};
    for (int k = 0; k < 2; k++) {
        const char *v = getenv(names[k]);
        if (!v || !*v || strcmp(v, "all") == 0)
            continue;
        bool uuids = strstr(v, "GPU-") || strstr(v, "MIG-");
        if (!uuids) {
            snprintf(P->visible_note, sizeof(P->visible_note),
                     "%s=%s names CUDA ordinals, which are not NVML indices: every device counted",
                     names[k], v);
            continue;
        }
        if (!d->uuid[0])
            return false;
        if (strstr(v, d->uuid))
            return true;
        /* a listed MIG device makes its GPU's figures relevant, and a
         * listed GPU its instances' */
        if (d->kind == DEV_MIG && d->parent_uuid[0] && strstr(v, d->parent_uuid))
            return true;
        return false;
    }
    return true;
}

static struct prof_dev *dev_of(struct prof *P, const struct device *d)
{
    for (size_t i = 0; i < P->ndev; i++)
        if (strcmp(P->dev[i].uuid, d->uuid) == 0)
            return &P->dev[i];
    if (P->ndev >= PROF_DEV_MAX || !d->uuid[0])
        return NULL;
    struct prof_dev *x = &P->dev[P->ndev++];
    memset(x, 0, sizeof(*x));
    snprintf(x->uuid, sizeof(x->uuid), "%s", d->uuid);
    snprintf(x->name, sizeof(x->name), "%s", d->name);
    snprintf(x->profile, sizeof(x->profile), "%s", d->profile);
    x->index = d->index;
    x->mig_index = d->mig_index;
    x->mig = d->kind == DEV_MIG;
    x->visible = visible(P, d);
    const struct metric *u = &d->m[M_MEM_USED];
    x->used0_ok = metric_ok(u) && u->src != MSRC_CARRIED;
    x->used0 = x->used0_ok ? u->value : 0;
    return x;
}

static void note_error(struct prof *P, const char *what)
{
    P->failed++;
    if (P->first_error[0])
        return;
    snprintf(P->first_error, sizeof(P->first_error), "%.500s", what);
    text_clean_lines(P->first_error, sizeof(P->first_error));
    fprintf(stderr, "mig-gpu-mon profile: a sample failed (later failures not shown): %s\n",
            P->first_error);
}

/* One sample: the tree, its RSS, and every device's figures. */
static void take_sample(struct prof *P, struct collector *col, struct snapshot *s)
{
    uint64_t budget = (uint64_t)P->o.interval_ms * 750000ull;
    collect_tick_until(col, s, clock_mono_ns() + budget);
    P->samples++;
    tree_refresh(P);
    double rss = tree_rss(P);
    if (rss > P->peak_rss)
        P->peak_rss = rss;
    if (!s->gpu_ok && col->be_state)
        note_error(P, s->gpu_error);
    if (P->timeline) {
        json_write_snapshot(P->timeline, s, false);
        fflush(P->timeline);
    }
    double alloc_total = 0, delta_total = 0;
    bool alloc_any = false, delta_any = false;
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        struct prof_dev *x = dev_of(P, d);
        if (!x || !x->visible)
            continue;
        /* the tree's allocation, where the list could be read: a process
         * not listed (yet) counts 0, not as a reason to fall back */
        if (metric_ok(&d->process_count)) {
            double a = 0;
            for (size_t k = 0; k < d->nprocs && d->proc_first + k < s->nprocs; k++) {
                const struct gpu_process *p = &s->procs[d->proc_first + k];
                int64_t pid = p->local_pid > 0 ? p->local_pid : (int64_t)p->pid;
                if (in_tree(P, pid) && metric_ok(&p->mem_bytes))
                    a += p->mem_bytes.value;
            }
            x->alloc_seen = true;
            if (a > x->peak_alloc)
                x->peak_alloc = a;
            alloc_total += a;
            alloc_any = true;
        }
        const struct metric *u = &d->m[M_MEM_USED];
        if (x->used0_ok && metric_ok(u)) {
            double dl = u->value > x->used0 ? u->value - x->used0 : 0;
            if (dl > x->peak_delta)
                x->peak_delta = dl;
            x->delta_ok = true;
            /* a MIG parent's used memory includes its instances' */
            if (!(d->kind == DEV_GPU && d->mig_enabled))
                delta_total += dl;
            delta_any = true;
        }
        const struct metric *g = &d->m[M_GPU_UTIL];
        if (metric_ok(g)) {
            if (g->value > x->util_peak || x->util_n == 0)
                x->util_peak = g->value;
            x->util_sum += g->value;
            x->util_n++;
            if (x->util_src == MSRC_NONE || g->src != MSRC_CARRIED)
                x->util_src = g->src;
        }
        const struct metric *e = &d->m[M_ENERGY];
        if (metric_ok(e) && e->src != MSRC_CARRIED) {
            if (!x->energy0_ok) {
                x->energy0 = e->value;
                x->energy0_ok = true;
            }
            x->energy1 = e->value;
        }
        const struct metric *t = &d->m[M_TEMP];
        if (metric_ok(t) && (!x->temp_ok || t->value > x->temp_peak)) {
            x->temp_peak = t->value;
            x->temp_ok = true;
        }
        if (d->throttle_valid)
            x->throttle |= d->throttle_mask & ~(uint64_t)1; /* idle is no slowdown */
    }
    if (alloc_any) {
        P->any_alloc = true;
        if (alloc_total > P->peak_gpu)
            P->peak_gpu = alloc_total;
    }
    if (delta_any) {
        P->any_delta = true;
        if (delta_total > P->peak_delta_total)
            P->peak_delta_total = delta_total;
    }
}

/* ---- running the command ---- */

/* Fork and exec; an exec failure comes back through a close-on-exec pipe.
 * Returns the errno of a failed exec (0: started). */
static int start(struct prof *P)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return errno;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return e;
    }
    if (pid == 0) {
        /* default dispositions and mask for the command */
        signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execvp(P->o.cmd[0], P->o.cmd);
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
    P->child = pid;
    if (n == (ssize_t)sizeof(e)) {
        waitpid(pid, NULL, 0);
        return e ? e : ENOEXEC;
    }
    return 0;
}

static void sleep_until(uint64_t t)
{
    uint64_t now = clock_mono_ns();
    if (now >= t)
        return;
    struct timespec ts = {.tv_sec = (time_t)((t - now) / 1000000000ull),
                          .tv_nsec = (long)((t - now) % 1000000000ull)};
    nanosleep(&ts, NULL); /* a signal ends it early: it is forwarded at once */
}

/* ---- the report ---- */

static const char *metric_name(const struct prof *P)
{
    return P->any_alloc ? "nvml_process_allocation" : P->any_delta ? "device_memory_delta"
                                                                   : "unavailable";
}

static double peak_gpu(const struct prof *P)
{
    return P->any_alloc ? P->peak_gpu : P->peak_delta_total;
}

static void json_num_or_null(struct jsonw *w, const char *key, bool ok, double v)
{
    jsonw_key(w, key);
    if (ok)
        jsonw_double(w, v);
    else
        jsonw_null(w);
}

static void report_json(FILE *f, const struct prof *P, int status, double wall_s,
                        const struct rusage *ru)
{
    struct jsonw w;
    jsonw_init(&w, f, true);
    jsonw_obj_open(&w);
    jsonw_key(&w, "command");
    jsonw_arr_open(&w);
    for (char **a = P->o.cmd; *a; a++)
        jsonw_str(&w, *a);
    jsonw_arr_close(&w);
    jsonw_key(&w, "exit_status");
    jsonw_int(&w, status);
    jsonw_key(&w, "wall_seconds");
    jsonw_double(&w, wall_s);
    jsonw_key(&w, "samples");
    jsonw_uint(&w, P->samples);
    jsonw_key(&w, "interval_ms");
    jsonw_uint(&w, P->o.interval_ms);
    jsonw_key(&w, "gpu_memory_metric");
    jsonw_str(&w, metric_name(P));
    bool gok = P->any_alloc || P->any_delta;
    json_num_or_null(&w, "peak_gpu_memory_bytes", gok, round(peak_gpu(P)));
    json_num_or_null(&w, "peak_gpu_memory_mb", gok, round(peak_gpu(P) / MIB_D * 10) / 10);
    json_num_or_null(&w, "peak_cpu_memory_bytes", true, round(P->peak_rss));
    json_num_or_null(&w, "peak_cpu_memory_mb", true, round(P->peak_rss / MIB_D * 10) / 10);
    jsonw_key(&w, "peak_cpu_memory_metric");
    jsonw_str(&w, "process_tree_rss");
    json_num_or_null(&w, "ru_maxrss_bytes", ru != NULL, ru ? (double)ru->ru_maxrss * 1024.0 : 0);
    jsonw_key(&w, "devices");
    jsonw_arr_open(&w);
    for (size_t i = 0; i < P->ndev; i++) {
        const struct prof_dev *x = &P->dev[i];
        if (!x->visible)
            continue;
        jsonw_obj_open(&w);
        jsonw_key(&w, "uuid");
        jsonw_str(&w, x->uuid);
        jsonw_key(&w, "kind");
        jsonw_str(&w, x->mig ? "mig" : "gpu");
        jsonw_key(&w, "index");
        jsonw_int(&w, x->index);
        if (x->mig) {
            jsonw_key(&w, "mig_index");
            jsonw_int(&w, x->mig_index);
            jsonw_key(&w, "profile");
            jsonw_str(&w, x->profile);
        } else {
            jsonw_key(&w, "name");
            jsonw_str(&w, x->name);
        }
        json_num_or_null(&w, "peak_gpu_memory_bytes", x->alloc_seen, x->peak_alloc);
        json_num_or_null(&w, "peak_used_growth_bytes", x->delta_ok, x->peak_delta);
        json_num_or_null(&w, "util_peak_pct", x->util_n > 0, x->util_peak);
        json_num_or_null(&w, "util_mean_pct", x->util_n > 0,
                         x->util_n ? round(x->util_sum / x->util_n * 10) / 10 : 0);
        jsonw_key(&w, "util_source");
        jsonw_str(&w, metric_source_name(x->util_src));
        json_num_or_null(&w, "energy_joules", x->energy0_ok, x->energy1 - x->energy0);
        json_num_or_null(&w, "temp_peak_c", x->temp_ok, x->temp_peak);
        jsonw_key(&w, "throttle_reasons");
        jsonw_arr_open(&w);
        const char *words[16];
        size_t n = units_throttle_words(x->throttle, words, 16);
        for (size_t k = 0; k < n; k++)
            jsonw_str(&w, words[k]);
        jsonw_arr_close(&w);
        jsonw_obj_close(&w);
    }
    jsonw_arr_close(&w);
    jsonw_key(&w, "failed_samples");
    jsonw_uint(&w, P->failed);
    jsonw_key(&w, "first_error");
    if (P->first_error[0])
        jsonw_str(&w, P->first_error);
    else
        jsonw_null(&w);
    jsonw_key(&w, "note");
    if (P->visible_note[0])
        jsonw_str(&w, P->visible_note);
    else
        jsonw_null(&w);
    jsonw_obj_close(&w);
    jsonw_end(&w);
}

static void report_text(FILE *f, const struct prof *P, int status, double wall_s,
                        const struct rusage *ru)
{
    char a[48], b[48];
    bool gok = P->any_alloc || P->any_delta;
    fprintf(f, "Peak GPU Memory: %s%s\n", gok ? units_bytes(a, sizeof(a), peak_gpu(P)) : "N/A",
            P->any_alloc ? "" : gok ? " (device-level, approximate)" : "");
    fprintf(f, "Peak CPU Memory: %s (process tree RSS; ru_maxrss %s)\n",
            units_bytes(a, sizeof(a), P->peak_rss),
            ru ? units_bytes(b, sizeof(b), (double)ru->ru_maxrss * 1024.0) : "N/A");
    fprintf(f, "GPU Memory Metric: %s\n", metric_name(P));
    fprintf(f, "Wall time: %.2f s, %lu samples every %u ms, exit status %d\n", wall_s,
            P->samples, P->o.interval_ms, status);
    for (size_t i = 0; i < P->ndev; i++) {
        const struct prof_dev *x = &P->dev[i];
        if (!x->visible)
            continue;
        char id[64], mem[48], util[64], en[48], tmp[32], thr[256] = "none";
        if (x->mig)
            snprintf(id, sizeof(id), "GPU %d MIG %d %s", x->index, x->mig_index, x->profile);
        else
            snprintf(id, sizeof(id), "GPU %d %s", x->index, x->name);
        if (x->alloc_seen)
            units_bytes(mem, sizeof(mem), x->peak_alloc);
        else
            snprintf(mem, sizeof(mem), "N/A");
        if (x->util_n)
            snprintf(util, sizeof(util), "peak %.0f%% mean %.0f%% (%s)", x->util_peak,
                     x->util_sum / x->util_n, metric_source_name(x->util_src));
        else
            snprintf(util, sizeof(util), "N/A");
        if (x->energy0_ok)
            units_energy(en, sizeof(en), x->energy1 - x->energy0);
        else
            snprintf(en, sizeof(en), "N/A");
        if (x->temp_ok)
            snprintf(tmp, sizeof(tmp), "%.0f C", x->temp_peak);
        else
            snprintf(tmp, sizeof(tmp), "N/A");
        const char *words[16];
        size_t n = units_throttle_words(x->throttle, words, 16), off = 0;
        for (size_t k = 0; k < n && off < sizeof(thr); k++)
            off += (size_t)snprintf(thr + off, sizeof(thr) - off, "%s%s", k ? ", " : "", words[k]);
        fprintf(f, "  %s: GPU memory %s, util %s, energy %s, temp peak %s, throttle %s\n", id,
                mem, util, en, tmp, thr);
    }
    if (P->visible_note[0])
        fprintf(f, "Note: %s\n", P->visible_note);
    if (P->failed)
        fprintf(f, "Failed samples: %lu (first: %s)\n", P->failed, P->first_error);
}

int profile_main(int argc, char **argv, const char *self_exe)
{
    static struct prof P; /* large (devices, tree); one per process */
    memset(&P, 0, sizeof(P));
    int rc = parse(&P.o, argc, argv);
    if (rc >= 0)
        return rc;
    char demo_lib[4096], demo_label[160];
    if (P.o.demo) {
        if (demo_setup(self_exe, P.o.demo_scenario, demo_lib, sizeof(demo_lib), demo_label,
                       sizeof(demo_label)) != 0)
            return 2;
        P.o.nvml_path = demo_lib;
    }
    FILE *report = stderr;
    if (P.o.report && !(report = fopen(P.o.report, "we"))) {
        fprintf(stderr, "mig-gpu-mon profile: %s: %s\n", P.o.report, strerror(errno));
        return 2;
    }
    if (P.o.timeline && !(P.timeline = fopen(P.o.timeline, "we"))) {
        fprintf(stderr, "mig-gpu-mon profile: %s: %s\n", P.o.timeline, strerror(errno));
        if (report != stderr)
            fclose(report);
        return 2;
    }
    struct collector col;
    struct collect_opts co = {.nvml_path = P.o.nvml_path,
                              .proc_root = P.o.proc_root,
                              .top = 0,
                              .interval_ms = P.o.interval_ms < 100 ? 100 : P.o.interval_ms,
                              .gpm_exe = self_exe};
    char err[2048];
    if (collect_open(&col, &co, err, sizeof(err)) != 0) {
        text_clean_lines(err, sizeof(err));
        fprintf(stderr, "mig-gpu-mon profile: %s\n", err);
        return 2;
    }
    if (!col.be_state) /* no driver: the report says unavailable, CPU figures still come */
        fprintf(stderr, "mig-gpu-mon profile: no GPU figures: %s\n", col.gpu_error);
    P.children_files = true; /* until a read says the kernel has none */

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal; /* no SA_RESTART: the sleep ends, the signal goes on */
    const int fwd[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++)
        sigaction(fwd[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    /* the devices' used memory before the command: the fallback's baseline */
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick_until(&col, &s, clock_mono_ns() + (uint64_t)co.interval_ms * 750000ull);
    for (size_t i = 0; i < s.ndevices; i++)
        dev_of(&P, &s.devices[i]);

    P.t0 = clock_mono_ns();
    int e = start(&P);
    if (e) {
        fprintf(stderr, "mig-gpu-mon profile: cannot run '%s': %s\n", P.o.cmd[0], strerror(e));
        collect_close(&col);
        snapshot_free(&s);
        if (P.timeline)
            fclose(P.timeline);
        if (report != stderr)
            fclose(report);
        return e == EACCES || e == ENOEXEC ? 126 : 127;
    }
    int status = 0;
    struct rusage ru;
    bool have_ru = false;
    uint64_t period = (uint64_t)P.o.interval_ms * 1000000ull;
    for (uint64_t k = 0;; k++) {
        if (pending_sig) {
            int sig = pending_sig;
            pending_sig = 0;
            kill(P.child, sig);
        }
        pid_t w = wait4(P.child, &status, WNOHANG, &ru);
        if (w == P.child) {
            have_ru = true;
            break;
        }
        if (w < 0 && errno != EINTR)
            break;
        take_sample(&P, &col, &s);
        uint64_t next = P.t0 + (k + 1) * period;
        if (next < clock_mono_ns()) /* a slow sample: skip the missed points */
            k = (clock_mono_ns() - P.t0) / period;
        sleep_until(P.t0 + (k + 1) * period);
    }
    double wall_s = (double)(clock_mono_ns() - P.t0) / 1e9;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    if (P.o.format == PF_JSON)
        report_json(report, &P, code, wall_s, have_ru ? &ru : NULL);
    else
        report_text(report, &P, code, wall_s, have_ru ? &ru : NULL);
    if (report != stderr)
        fclose(report);
    if (P.timeline)
        fclose(P.timeline);
    collect_close(&col);
    snapshot_free(&s);
    return code;
}
