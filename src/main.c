/*
 * main.c — parse the command line, open the collector, run one front end.
 */
#include <errno.h>
#include <sys/stat.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app/cli.h"
#include "app/config.h"
#include "app/demo.h"
#include "app/demo_amd.h"
#include "app/profile.h"
#include "app/record.h"
#include "app/replay_mode.h"
#include "backend/dcgm/dcgm.h"
#include "backend/events/events.h"
#include "backend/gpm/gpm.h"
#include "backend/prometheus/prom_backend.h"
#include "core/clock.h"
#include "core/debuglog.h"
#include "core/outfile.h"
#include "core/text.h"
#include "engine/collect.h"
#include "engine/proclist.h"
#include "export/json.h"
#include "export/json_procs.h"
#include "export/prom.h"
#include "export/table.h"
#include "serve/serve.h"
#include "system/host.h"
#include "tui/theme.h"
#include "tui/tui.h"
#include "version.h"

static volatile sig_atomic_t stop_requested;

#define ONCE_GPM_INTERVAL_MS 110u
_Static_assert((int)CLI_DCGM_OFF == (int)DCGM_MODE_OFF && (int)CLI_DCGM_ADDR == (int)DCGM_MODE_ADDR &&
                   (int)CLI_DCGM_EMBEDDED == (int)DCGM_MODE_EMBEDDED,
               "--dcgm's values are enum dcgm_mode's");
/* How long --once waits for the GPM helper's first values (its NVML init
 * may take a while on a large machine). */
#define ONCE_GPM_WAIT_MS 3000u
/* --once: how long the processes listed are watched for their CPU %. */
#define ONCE_PROC_CPU_MS 200u

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

/* Whether what was printed on standard output (what: "snapshot") reached
 * it, or its reader closed the pipe: 0; else 1 (the exit status) after
 * saying why on stderr (outfile.h). */
static int stdout_written(const char *what)
{
    return outfile_stdout_done("mig-gpu-mon", what);
}

/* --all-processes --format json: the array holds what is known; what it
 * does not hold (no driver, a list that could not be read, --top's cut) is
 * said on stderr, one line each, so stdout stays one JSON value. */
static void all_processes_notes(const struct snapshot *s)
{
    if (!s->gpu_ok) {
        size_t n = strcspn(s->gpu_error, "\n");
        fprintf(stderr, "mig-gpu-mon: no GPU data: %.*s\n", (int)n, s->gpu_error);
        return;
    }
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        if (d->kind == DEV_GPU && d->mig_enabled)
            continue; /* its list is its instances' */
        char id[96];
        proclist_device_node_label(id, sizeof(id), d);
        if (!metric_ok(&d->process_count))
            fprintf(stderr, "mig-gpu-mon: device %s: processes N/A (%s)\n", id,
                    d->process_count.why ? d->process_count.why : "not read");
        else if (d->process_count.value > (double)d->nprocs)
            fprintf(stderr, "mig-gpu-mon: device %s: %.0f more processes (--top)\n", id,
                    d->process_count.value - (double)d->nprocs);
    }
}

/* Exit status of a snapshot in which some device did not answer in time. */
#define EXIT_PARTIAL 3

static int run_once(struct collector *col, const struct cli *c)
{
    uint64_t deadline = clock_mono_ns() + (uint64_t)c->timeout_ms * 1000000ull;
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
    /* GPM values need two samples in the helper: usually there by now. The
     * wait for them takes at most half of what --timeout leaves, so the
     * driver's own sample always has time. */
    uint64_t now = clock_mono_ns();
    unsigned left = now < deadline ? (unsigned)((deadline - now) / 2000000ull) : 0;
    collect_settle(col, left < ONCE_GPM_WAIT_MS ? left : ONCE_GPM_WAIT_MS);
    collect_tick_until(col, &s, deadline);
    /* A process's CPU % is a delta too, and which processes to look at is
     * known only now: a second look at them after a moment (within
     * --timeout), so the processes listed have real CPU figures. */
    if (collect_first_sight(&s)) {
        now = clock_mono_ns();
        uint64_t ms = now < deadline ? (deadline - now) / 1000000ull : 0;
        if (ms > ONCE_PROC_CPU_MS)
            ms = ONCE_PROC_CPU_MS;
        if (ms > 0 && !stop_requested) {
            sleep_ms((long)ms);
            collect_second_look(col, &s);
        }
    }
    struct prom_opts po = {
        .dcgm = c->compat_dcgm, .processes = c->export_processes, .no_host = c->no_host};
    int wrc = 0;
    if (c->all_processes && c->format == FMT_JSON) {
        wrc = json_write_all_processes(stdout, &s, false);
        if (wrc == 0)
            all_processes_notes(&s);
    } else if (c->all_processes)
        wrc = table_write_all_processes(stdout, &s);
    else if (c->format == FMT_JSON)
        json_write_snapshot(stdout, &s, false);
    else if (c->format == FMT_PROM)
        prom_write(stdout, &s, &po);
    else if (c->format == FMT_CSV || c->format == FMT_INFLUX)
        record_format(stdout, c->format, &s, true);
    else
        table_write_snapshot(stdout, &s);
    bool partial = s.partial;
    char partial_why[1024] = "";
    if (partial && s.partial_why)
        snprintf(partial_why, sizeof(partial_why), "%s", s.partial_why);
    snapshot_free(&s);
    if (wrc != 0) {
        fprintf(stderr, "mig-gpu-mon: out of memory for the process list\n");
        return 1;
    }
    if (stdout_written("snapshot") != 0)
        return 1;
    if (partial && partial_why[0]) /* a fleet: the queries that failed, and why */
        fprintf(stderr, "mig-gpu-mon: partial snapshot: %s\n", partial_why);
    else if (partial)
        fprintf(stderr, "mig-gpu-mon: partial snapshot: the driver did not answer within %.1f s "
                        "(see the stalled devices)\n", c->timeout_ms / 1000.0);
    return partial ? EXIT_PARTIAL : 0;
}

/*
 * The configuration file under the command line: what a flag did not set
 * comes from the file (docs/config.md). Bad lines were reported and
 * skipped. A --config FILE that cannot be read is an error: 2, after one
 * line. The default file is optional: missing, nothing is said; there but
 * unreadable (a directory, a FIFO), it is reported and the defaults apply;
 * there but not trusted (another user's, writable by others: trust.h), it
 * is an error like --config's. --write-config reports nothing here: a missing file is what it is about
 * to write, and it names whatever is in the way.
 */
static int apply_config(struct cli *c, struct config *cfg)
{
    config_defaults(cfg);
    if (!c->no_config) {
        char path[4096], why[4 * 4096 + 256];
        const char *p = c->config_file;
        if (!p && config_default_path(path, sizeof(path)) == 0)
            p = path;
        int rc = p ? config_load(cfg, p, stderr, why, sizeof(why)) : 0;
        if (rc < 0 && !c->write_config) {
            if (c->config_file) {
                fprintf(stderr, "mig-gpu-mon: --config %s\n", why);
                return 2;
            }
            /* a file that is not ours (another user's under sudo -E,
             * writable by others) is no missing file: the program does not
             * run without what its owner meant it to say */
            if (rc == -EPERM) {
                fprintf(stderr, "mig-gpu-mon: %s\n", why);
                return 2;
            }
            if (rc != -ENOENT)
                fprintf(stderr, "mig-gpu-mon: %s; the defaults apply\n", why);
        }
    }
    if (!c->interval_given)
        c->interval_ms = cfg->interval_ms;
    if (!c->top_given)
        c->top = cfg->top;
    if (!c->gpm_given)
        c->gpm = cfg->gpm;
    if (!c->dcgm_given) {
        c->dcgm = cfg->dcgm;
        snprintf(c->dcgm_addr, sizeof(c->dcgm_addr), "%s", cfg->dcgm_addr);
    }
    /* the fleet's settings: a flag wins over the file, and the file's
     * copy is kept in step for --write-config (never copied onto itself) */
    if (!c->prometheus && cfg->prometheus[0])
        c->prometheus = cfg->prometheus;
    else if (c->prometheus)
        snprintf(cfg->prometheus, sizeof(cfg->prometheus), "%s", c->prometheus);
    if (!c->prometheus_auth && cfg->prometheus_auth[0])
        c->prometheus_auth = cfg->prometheus_auth;
    else if (c->prometheus_auth)
        snprintf(cfg->prometheus_auth, sizeof(cfg->prometheus_auth), "%s", c->prometheus_auth);
    if (!c->prometheus_match && cfg->prometheus_match[0])
        c->prometheus_match = cfg->prometheus_match;
    else if (c->prometheus_match)
        snprintf(cfg->prometheus_match, sizeof(cfg->prometheus_match), "%s", c->prometheus_match);
    if (!c->prometheus_ca && cfg->prometheus_ca[0])
        c->prometheus_ca = cfg->prometheus_ca;
    else if (c->prometheus_ca)
        snprintf(cfg->prometheus_ca, sizeof(cfg->prometheus_ca), "%s", c->prometheus_ca);
    carry_ticks_set(cfg->carry);
    if (!cfg->color)
        c->no_color = true;
    if (c->exporter && !c->listen)
        c->listen = cfg->listen;
    if (c->exporter && !c->kubelet_socket)
        c->kubelet_socket = cfg->kubelet_socket;
    if ((c->exporter || (c->once && c->format == FMT_PROM)) && !strcmp(cfg->compat, "dcgm"))
        c->compat_dcgm = true;
    /* the file's view of what is in force now, for --write-config */
    cfg->interval_ms = c->interval_ms;
    cfg->top = c->top;
    cfg->gpm = c->gpm;
    cfg->dcgm = c->dcgm;
    snprintf(cfg->dcgm_addr, sizeof(cfg->dcgm_addr), "%s", c->dcgm_addr);
    cfg->color = !c->no_color;
    struct tui_thresholds th = {cfg->load_warn_pct, cfg->load_alarm_pct, cfg->vram_warn_pct,
                                cfg->vram_alarm_pct, cfg->temp_warn_c, cfg->temp_alarm_c};
    tui_set_thresholds(&th);
    return 0;
}

/* mkdir dir (mode 0700) unless it is a directory already: 0, or -1 with
 * errno from mkdir. */
static int make_dir(const char *dir)
{
    if (mkdir(dir, 0700) == 0 || errno == EEXIST)
        return 0; /* an existing non-directory: the open after names it */
    int e = errno;
    struct stat st;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    errno = e;
    return -1;
}

/* --write-config: the settings in force, into the configuration file
 * (never over an existing one). */
static int write_config(const struct cli *c, const struct config *cfg)
{
    char path[4096];
    const char *p = c->config_file;
    if (!p) {
        if (config_default_path(path, sizeof(path)) != 0) {
            fprintf(stderr, "mig-gpu-mon: --write-config: neither XDG_CONFIG_HOME nor HOME is set; "
                            "name a file with --config\n");
            return 2;
        }
        p = path;
        /* its directory, $XDG_CONFIG_HOME/mig-gpu-mon, and that one's
         * parent (~/.config may not exist yet); nothing above it */
        char dir[4096];
        snprintf(dir, sizeof(dir), "%s", p);
        char *slash = strrchr(dir, '/');
        if (slash) {
            *slash = '\0';
            char *parent = strrchr(dir, '/');
            int rc = 0;
            if (parent && parent != dir) {
                *parent = '\0';
                rc = make_dir(dir);
                if (rc == 0)
                    *parent = '/';
            }
            if (rc == 0)
                rc = make_dir(dir);
            if (rc != 0) {
                int e = errno;
                char shown[4 * sizeof(dir)];
                cli_escape(shown, sizeof(shown), dir);
                fprintf(stderr, "mig-gpu-mon: --write-config: cannot create %s: %s\n", shown,
                        strerror(e));
                return 2;
            }
        }
    }
    char shown[4 * sizeof(path)];
    cli_escape(shown, sizeof(shown), p);
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0600);
    if (fd < 0) {
        int e = errno;
        fprintf(stderr, "mig-gpu-mon: --write-config: %s: %s%s\n", shown, strerror(e),
                e == EEXIST ? " (remove it first, or name another file with --config)" : "");
        return 2;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        fprintf(stderr, "mig-gpu-mon: --write-config: %s: %s\n", shown, strerror(errno));
        close(fd);
        return 1;
    }
    config_write(cfg, f);
    bool failed = ferror(f) != 0;
    if (fclose(f) != 0 || failed) {
        fprintf(stderr, "mig-gpu-mon: --write-config: %s: %s\n", shown, strerror(errno));
        return 1;
    }
    printf("wrote %s\n", shown);
    return 0;
}

/* --demo mi300x: its tree, removed at exit. */
static struct demo_amd *demo_amd;

static void demo_amd_end(void)
{
    demo_amd_stop(demo_amd);
    demo_amd = NULL;
}

/* --demo: the bundled simulator and the scenario to run (demo.h). */
int main(int argc, char **argv)
{
#ifdef __GLIBC__
    /* A fixed threshold: every block of 256 KiB or more (a fleet's node
     * table, a page of its devices) is mapped and given back when freed.
     * glibc's default raises the threshold to the largest block freed,
     * after which such blocks are carved from the heap of the thread that
     * asks and stay there (docs/decisions.md, the fleet at cluster
     * scale). */
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
    /* The GPM helper: this binary in a hidden mode (backend/gpm/gpm.h). */
    if (argc >= 2 && strcmp(argv[1], GPM_HELPER_ARG) == 0)
        return gpm_helper_main(argc, argv);
    /* The DCGM helper likewise (backend/dcgm/dcgm.h). */
    if (argc >= 2 && strcmp(argv[1], DCGM_HELPER_ARG) == 0)
        return dcgm_helper_main(argc, argv);
    /* The events helper likewise (backend/events/events.h). */
    if (argc >= 2 && strcmp(argv[1], EVENTS_HELPER_ARG) == 0)
        return events_helper_main(argc, argv);
    /* profile -- CMD: a mode with options of its own (profile.c) */
    int at = cli_mode_index(argc, argv);
    if (at && strcmp(argv[at], "profile") == 0) {
        static char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        exe[n > 0 ? n : 0] = '\0';
        return profile_main(argc, argv, at, exe);
    }
    /* A reader that closes the pipe (| head) ends the output: the write
     * fails with EPIPE and the program exits 0 (outfile_stdout_done), as a
     * recording does, instead of dying of SIGPIPE. Set after profile, whose
     * COMMAND would inherit it. */
    signal(SIGPIPE, SIG_IGN);
    /* replay FILE: a mode with options of its own (app/replay_mode.c) */
    if (at && strcmp(argv[at], "replay") == 0)
        return replay_main(argc, argv, at);
    struct cli c;
    char err[512];
    if (cli_parse(&c, argc, argv, err, sizeof(err)) != 0) {
        fprintf(stderr, "mig-gpu-mon: %s\n", err);
        return 2;
    }
    if (c.help) {
        cli_usage(stdout);
        return stdout_written("help");
    }
    if (c.version) {
#ifdef MIGMON_PORTABLE
        printf("mig-gpu-mon %s (git %s, portable)\n", MIGMON_VERSION, MIGMON_GIT_REV);
#else
        printf("mig-gpu-mon %s (git %s)\n", MIGMON_VERSION, MIGMON_GIT_REV);
#endif
        return stdout_written("version");
    }
    struct config cfg;
    if (apply_config(&c, &cfg) != 0)
        return 2;
    if (c.write_config)
        return write_config(&c, &cfg);
    /* every process is what --all-processes is for: no --top cut unless
     * asked for on the command line (the file's top is for device lists) */
    if (c.all_processes && !c.top_given)
        c.top = 0;
    if (c.debug && open_debug(&c) != 0)
        return 2;

    /* --once keeps the default dispositions: Ctrl-C or SIGTERM end it at
     * once, even while a driver call hangs (the GPM helper dies with it).
     * The interactive monitor installs its own handlers. */
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    if (!c.once) {
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
    }

    /* This binary: the GPM helper, and where --demo finds the simulator. */
    static char self_exe[4096];
    ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
    self_exe[n > 0 ? n : 0] = '\0';

    char demo_lib[4096], demo_label[160];
    static char demo_sysfs[256];
    if (c.demo && c.demo_scenario && strcmp(c.demo_scenario, DEMO_AMD_SCENARIO) == 0) {
        /* An MI300X for the amdgpu backend: a simulated sysfs tree. */
        char derr[512];
        demo_amd = demo_amd_start(c.interval_ms, demo_sysfs, sizeof(demo_sysfs), derr,
                                  sizeof(derr));
        if (!demo_amd) {
            fprintf(stderr, "mig-gpu-mon: %s\n", derr);
            debuglog_close();
            return 2;
        }
        atexit(demo_amd_end);
        c.backends = "amdgpu";
        c.sysfs_root = demo_sysfs;
        snprintf(demo_label, sizeof(demo_label), "DEMO (simulated sysfs: MI300X CPX/NPS4)");
    } else if (c.demo) {
        if (demo_setup(self_exe, c.demo_scenario, demo_lib, sizeof(demo_lib), demo_label,
                       sizeof(demo_label)) != 0) {
            debuglog_close();
            return 2;
        }
        c.nvml_path = demo_lib;
        /* The bundled simulator's DCGM beside its NVML, serving the same
         * scenario, unless another was named. */
        static char demo_dcgm[4096 + 16];
        if (!c.dcgm_lib)
            c.dcgm_lib = demo_dcgm_lib(demo_lib, demo_dcgm, sizeof(demo_dcgm));
    }
    if (c.dcgm_lib && access(c.dcgm_lib, R_OK) != 0) {
        fprintf(stderr, "mig-gpu-mon: --dcgm-lib %s: %s\n", c.dcgm_lib, strerror(errno));
        debuglog_close();
        return 2;
    }

    /* A recording's file first: refusing to overwrite needs no driver. */
    int rec_fd = -1;
    bool rec_header = false;
    if (c.record)
        record_catch_signals();
    if (c.record && (rec_fd = record_open(&c, &rec_header, err, sizeof(err))) == -2) {
        debuglog_close();
        return 0;
    }
    if (c.record && rec_fd < 0) {
        text_clean_lines(err, sizeof(err)); /* it names a path the user gave */
        fprintf(stderr, "mig-gpu-mon: %s\n", err);
        debuglog_close();
        return 2;
    }

    struct collector col;
    /* The GPM helper is this binary; --once has it sample twice 110 ms
     * apart (NVIDIA asks for more than 100 ms). */
    struct collect_opts co = {.nvml_path = c.nvml_path,
                              .proc_root = c.proc_root,
                              .top = c.top,
                              .gpm_mode = c.gpm,
                              .interval_ms = c.once ? ONCE_GPM_INTERVAL_MS : c.interval_ms,
                              .gpm_exe = self_exe,
                              .dcgm_mode = c.dcgm,
                              .dcgm_addr = c.dcgm_addr,
                              .dcgm_lib = c.dcgm_lib,
                              .dcgm_interval_ms = c.dcgm_interval_ms,
                              .one_shot = c.once,
                              .backends = c.backends,
                              .no_procs = c.exporter && !c.export_processes,
                              .sysfs_root = c.sysfs_root,
                              .backend = c.prometheus ? &prom_backend_ops : NULL,
                              .prom_url = c.prometheus,
                              .prom_auth_file = c.prometheus_auth,
                              .prom_ca_file = c.prometheus_ca,
                              .prom_match = c.prometheus_match,
                              .prom_view = !c.once && !c.exporter && !c.record};
    char cerr[2048];
    if (collect_open(&col, &co, cerr, sizeof(cerr)) != 0) {
        text_clean_lines(cerr, sizeof(cerr)); /* it names a path the user gave */
        fprintf(stderr, "mig-gpu-mon: %s\n", cerr);
        debuglog_close();
        if (rec_fd > STDOUT_FILENO)
            close(rec_fd);
        return 2;
    }
    int rc;
    if (c.once) {
        rc = run_once(&col, &c);
    } else if (c.exporter) {
        struct serve_opts so = {.listen = c.listen ? c.listen : CLI_LISTEN_DEFAULT,
                                .interval_ms = c.interval_ms,
                                .page = {.dcgm = c.compat_dcgm,
                                         .processes = c.export_processes,
                                         .no_host = c.no_host},
                                .kubelet_socket = strcmp(c.kubelet_socket, "off") != 0
                                                      ? c.kubelet_socket
                                                      : NULL,
                                .pod_logs = strcmp(cfg.pod_logs, "off") != 0 ? cfg.pod_logs
                                                                             : NULL,
                                .kubelet_refresh_ms = cfg.kubelet_refresh_ms};
        rc = serve_run(&col, &so);
    } else if (c.record) {
        rc = record_run(&col, &c, rec_fd, rec_header);
    } else {
        struct tui_opts to = {.interval_ms = c.interval_ms, .no_color = c.no_color,
                              .demo_label = c.demo ? demo_label : NULL,
                              .proc_root = c.proc_root,
                              .history = cfg.history,
                              .fahrenheit = cfg.fahrenheit,
                              .thermal_charts = cfg.thermal_charts};
        rc = tui_run(&col, &to);
    }
    collect_close(&col);
    debuglog_close();
    if (backend_left_behind()) {
        /* a thread is still inside a library call: that library's exit
         * handlers must not run under it (backend.h) */
        if (demo_amd)
            demo_amd_end();
        fflush(NULL);
        _exit(rc);
    }
    return rc;
}
