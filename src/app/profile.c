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
#include "app/profile.h"

#include "app/profile_cli.h"
#include "app/profile_job.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

#include "app/cli.h"
#include "app/demo.h"
#include "app/demo_amd.h"
#include "app/recstream.h"
#include "app/watch.h"
#include "backend/events/xid.h"
#include "core/clock.h"
#include "core/outfile.h"
#include "core/text.h"
#include "core/units.h"
#include "engine/collect.h"
#include "engine/eventlog.h"
#include "engine/proclist.h"
#include "export/json.h"
#include "export/json_events.h"
#include "export/jsonw.h"

#define MIB_D (1024.0 * 1024.0)

/* The most events a report lists; more are counted. */
#define PROF_EVENTS_MAX 256

/* A health event on one of COMMAND's devices while it ran. */
struct prof_event {
    struct gpu_event e;
    struct eventlog_place where; /* resolved in the sample it came in */
    double at_s;                 /* since COMMAND started */
};

struct prof_events {
    struct eventlog log;
    struct prof_event ev[PROF_EVENTS_MAX];
    size_t n;
    uint64_t unlisted; /* COMMAND's past PROF_EVENTS_MAX */
    uint64_t dropped;  /* lost to the ring during the run: whose is not known */
    bool flowed;       /* events were watched at some sample of the run */
    const char *why;      /* the last sample's reason there were none to be had */
    const char *gap_why;  /* why they were not, after they had been (incomplete) */
};

struct prof {
    struct prof_opts o;
    struct profjob job; /* COMMAND */
    uint64_t t0;
    FILE *timeline;
    struct watch w;
    struct prof_events ev;
};

static void sleep_until(uint64_t t)
{
    uint64_t now = clock_mono_ns();
    if (now >= t)
        return;
    struct timespec ts = {.tv_sec = (time_t)((t - now) / 1000000000ull),
                          .tv_nsec = (long)((t - now) % 1000000000ull)};
    nanosleep(&ts, NULL); /* a signal ends it early: it is forwarded at once */
}

/* ---- health events ---- */

/* The event's device is one the report counts (watch.h's visible: the
 * devices CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES admit, a listed
 * MIG instance with its GPU). An event attributed to a MIG device is that
 * device's; one of a whole GPU, its GPU's. */
static bool job_device(const struct prof *P, const struct gpu_event *e,
                       const struct eventlog_place *p)
{
    const char *uuid = p->gpu >= 0 ? p->device : e->gpu_uuid;
    if (!uuid[0])
        return false; /* a device whose UUID could not be read: not known to be the job's */
    for (size_t i = 0; i < P->w.ndev; i++)
        if (strcmp(P->w.dev[i].uuid, uuid) == 0)
            return P->w.dev[i].visible;
    return false;
}

/* Why a sample of the run had no events to give. */
static const char *events_why(const struct prof *P, const struct snapshot *s)
{
    if (!P->w.col.be_state)
        return P->w.col.nextra ? "no events: only NVML has an event source (amdgpu has none)"
                               : "no NVML library: no events";
    if (!s->gpu_ok)
        return "the GPU sample failed: events not read";
    if (s->events_why)
        return s->events_why;
    /* A device of the job whose own Xid events are not watched (a GPU the
     * events helper could not register, a MIG instance of an unprivileged
     * monitor): an Xid there would not be seen, so "none" is not known. */
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        const struct metric *x = &d->m[M_XID_ERRORS];
        if (d->uuid[0] && !d->lost && !metric_ok(x) && x->why)
            for (size_t k = 0; k < P->w.ndev; k++)
                if (P->w.dev[k].visible && strcmp(P->w.dev[k].uuid, d->uuid) == 0)
                    return x->why;
    }
    return NULL;
}

/* The events new in s that happened on COMMAND's devices since it
 * started. profile_main's loop samples before it looks whether COMMAND
 * ended, so an event received by the end (an Xid that ended the job) is
 * in the last sample; the run ends, for events as for the wall time, when
 * the end was seen. */
static void events_take(struct prof *P, const struct snapshot *s)
{
    struct prof_events *v = &P->ev;
    struct eventlog_batch b;
    eventlog_take(&v->log, s, &b);
    const char *why = events_why(P, s);
    if (!why)
        v->flowed = true;
    else if (v->flowed && !v->gap_why)
        v->gap_why = why;
    v->why = why;
    v->dropped += b.dropped;
    uint64_t t0 = P->w.col.t0_ns;
    for (size_t i = 0; i < b.n; i++) {
        const struct gpu_event *e = &b.ev[i];
        uint64_t at = t0 + e->elapsed_ns;
        if (at < P->t0)
            continue; /* between the sample before COMMAND and its start */
        struct eventlog_place where;
        eventlog_place(s, e, &where);
        if (!job_device(P, e, &where))
            continue;
        if (v->n == PROF_EVENTS_MAX) {
            v->unlisted++;
            continue;
        }
        struct prof_event *x = &v->ev[v->n++];
        x->e = *e;
        x->where = where;
        x->at_s = (double)(at - P->t0) / 1e9;
    }
}

/* Events were had at some sample of the run, or some came in one that
 * said they had stopped (a helper that delivered, then died): what is
 * listed is true. Otherwise there is no list to give, not an empty one. */
static bool events_known(const struct prof_events *v)
{
    return v->flowed || v->n || v->unlisted;
}

/* Why the list is not, or may not be, complete; NULL when it is. */
static const char *events_gap(const struct prof_events *v)
{
    if (v->flowed)
        return v->gap_why;
    return v->why ? v->why : "no sample of the run";
}

static void report_events_json(struct jsonw *w, const struct prof *P)
{
    const struct prof_events *v = &P->ev;
    jsonw_key(w, "events");
    if (!events_known(v)) {
        jsonw_null(w);
    } else {
        jsonw_arr_open(w);
        for (size_t i = 0; i < v->n; i++) {
            const struct prof_event *x = &v->ev[i];
            char ts[40];
            jsonw_obj_open(w);
            jsonw_key(w, "at_s");
            jsonw_double(w, round(x->at_s * 1000) / 1000);
            jsonw_key(w, "elapsed_ns");
            jsonw_uint(w, x->e.elapsed_ns);
            clock_rfc3339(x->e.wall_ns, ts, sizeof(ts));
            jsonw_key(w, "timestamp");
            jsonw_str(w, ts);
            jsonw_key(w, "type");
            jsonw_str(w, xid_event_type_name(x->e.type));
            json_event_members(w, &x->e, &x->where);
            jsonw_obj_close(w);
        }
        jsonw_arr_close(w);
    }
    jsonw_key(w, "events_unlisted");
    jsonw_uint(w, v->unlisted);
    jsonw_key(w, "events_dropped");
    jsonw_uint(w, v->dropped);
    jsonw_key(w, "events_error");
    jsonw_str(w, events_gap(v));
}

static void report_events_text(FILE *f, const struct prof *P)
{
    const struct prof_events *v = &P->ev;
    if (!events_known(v)) {
        fprintf(f, "Events: N/A (%s)\n", events_gap(v));
        return;
    }
    if (v->n == 0 && !v->unlisted)
        fprintf(f, "Events: none on the command's devices\n");
    else
        fprintf(f, "Events: %llu on the command's devices\n",
                (unsigned long long)(v->n + v->unlisted));
    for (size_t i = 0; i < v->n; i++) {
        const struct prof_event *x = &v->ev[i];
        char what[64], where[160];
        eventlog_what(what, sizeof(what), &x->e);
        eventlog_where(where, sizeof(where), &x->e, &x->where);
        if (eventlog_is_xid(&x->e))
            fprintf(f, "  %s on %s at %.1f s: %s \u2014 %s\n", what, where, x->at_s,
                    xid_meaning(x->e.xid), xid_action(x->e.xid));
        else
            fprintf(f, "  %s on %s at %.1f s\n", what, where, x->at_s);
    }
    if (v->unlisted)
        fprintf(f, "  (%llu more not listed)\n", (unsigned long long)v->unlisted);
    if (v->dropped)
        fprintf(f, "Events dropped: %llu (%s; on which devices is not known)\n",
                (unsigned long long)v->dropped, JSON_EVENTS_DROPPED_WHY);
    if (events_gap(v))
        fprintf(f, "Events incomplete: %s\n", events_gap(v));
}

/* ---- the report ---- */

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
    profjob_report_json(&w, &P->job);
    jsonw_key(&w, "wall_seconds");
    jsonw_double(&w, wall_s);
    jsonw_key(&w, "samples");
    jsonw_uint(&w, P->w.samples);
    jsonw_key(&w, "interval_ms");
    jsonw_uint(&w, P->o.interval_ms);
    jsonw_key(&w, "gpu_memory_metric");
    jsonw_str(&w, watch_metric_name(&P->w));
    bool gok = P->w.any_alloc || P->w.any_delta;
    json_num_or_null(&w, "peak_gpu_memory_bytes", gok, round(watch_peak_gpu(&P->w)));
    json_num_or_null(&w, "peak_gpu_memory_mb", gok, round(watch_peak_gpu(&P->w) / MIB_D * 10) / 10);
    json_num_or_null(&w, "peak_cpu_memory_bytes", true, round(P->w.peak_rss));
    json_num_or_null(&w, "peak_cpu_memory_mb", true, round(P->w.peak_rss / MIB_D * 10) / 10);
    jsonw_key(&w, "peak_cpu_memory_metric");
    jsonw_str(&w, "process_tree_rss");
    json_num_or_null(&w, "ru_maxrss_bytes", ru != NULL, ru ? (double)ru->ru_maxrss * 1024.0 : 0);
    jsonw_key(&w, "devices");
    jsonw_arr_open(&w);
    for (size_t i = 0; i < P->w.ndev; i++) {
        const struct watch_dev *x = &P->w.dev[i];
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
            jsonw_key(&w, "parent_uuid");
            jsonw_str(&w, x->parent_uuid);
        } else {
            jsonw_key(&w, "name");
            jsonw_str(&w, x->name);
        }
        json_num_or_null(&w, "peak_gpu_memory_bytes", x->alloc_seen, x->peak_alloc);
        json_num_or_null(&w, "peak_used_growth_bytes", x->delta_ok, x->peak_delta);
        /* the device's activity, every process on it counted: NVML and GPM
         * have no per-process utilisation of a GPU or MIG instance */
        jsonw_key(&w, "util_scope");
        jsonw_str(&w, x->mig ? "instance" : "gpu");
        json_num_or_null(&w, "util_peak_pct", x->util_n > 0, x->util_peak);
        json_num_or_null(&w, "util_mean_pct", x->util_n > 0,
                         x->util_n ? round(x->util_sum / x->util_n * 10) / 10 : 0);
        jsonw_key(&w, "util_source");
        jsonw_str(&w, metric_source_name(x->util_src));
        if (x->mig) { /* no energy, temperature or throttling of its own */
            jsonw_obj_close(&w);
            continue;
        }
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
    report_events_json(&w, P);
    jsonw_key(&w, "failed_samples");
    jsonw_uint(&w, P->w.failed);
    jsonw_key(&w, "first_error");
    if (P->w.first_error[0])
        jsonw_str(&w, P->w.first_error);
    else
        jsonw_null(&w);
    jsonw_key(&w, "note");
    if (P->w.visible_note[0])
        jsonw_str(&w, P->w.visible_note);
    else
        jsonw_null(&w);
    jsonw_obj_close(&w);
    jsonw_end(&w);
}

/* A job's energy: joules below 1 Wh (a short job's 211 J is not "0.1 Wh"),
 * then Wh and kWh; the JSON's energy_joules is the same figure unrounded. */
/* A MIG device's or an AMD partition's name in the monitor's one form
 * (proclist_slice_name): "MIG 0/1 2g.35gb GI 5 CI 0", "Partition 0/3
 * CPX/NPS4". */
static void prof_slice_name(char *out, size_t len, const struct watch_dev *x)
{
    struct device d;
    memset(&d, 0, sizeof(d));
    d.kind = DEV_MIG;
    d.vendor = x->amd ? VENDOR_AMD : VENDOR_NVIDIA;
    d.index = x->index;
    d.mig_index = x->mig_index;
    d.gi_id = x->gi_id;
    d.ci_id = x->ci_id;
    snprintf(d.profile, sizeof(d.profile), "%s", x->profile);
    proclist_slice_name(out, len, &d, PROCLIST_SLICE_FULL);
}

static const char *prof_energy(char *out, size_t len, double joules)
{
    if (!isfinite(joules) || joules < 0)
        snprintf(out, len, "N/A");
    else if (joules < 9.95)
        snprintf(out, len, "%.1f J", joules);
    else if (joules < 3599.5)
        snprintf(out, len, "%.0f J", joules);
    else
        units_energy(out, len, joules);
    return out;
}

static void report_text(FILE *f, const struct prof *P, int status, double wall_s,
                        const struct rusage *ru)
{
    char a[48], b[48];
    bool gok = P->w.any_alloc || P->w.any_delta;
    fprintf(f, "Peak GPU Memory: %s%s\n", gok ? units_bytes(a, sizeof(a), watch_peak_gpu(&P->w)) : "N/A",
            P->w.any_alloc ? "" : gok ? " (device-level, approximate)" : "");
    fprintf(f, "Peak CPU Memory: %s (process tree RSS; ru_maxrss %s)\n",
            units_bytes(a, sizeof(a), P->w.peak_rss),
            ru ? units_bytes(b, sizeof(b), (double)ru->ru_maxrss * 1024.0) : "N/A");
    fprintf(f, "GPU Memory Metric: %s\n", watch_metric_name(&P->w));
    fprintf(f, "Wall time: %.2f s, %lu samples every %u ms, exit status %d\n", wall_s,
            P->w.samples, P->o.interval_ms, status);
    profjob_report_text(f, &P->job);
    for (size_t i = 0; i < P->w.ndev; i++) {
        const struct watch_dev *x = &P->w.dev[i];
        if (!x->visible)
            continue;
        char id[96], mem[48], util[128], en[48], tmp[32], thr[256] = "none";
        if (x->mig)
            prof_slice_name(id, sizeof(id), x);
        else
            snprintf(id, sizeof(id), "GPU %d %s", x->index, x->name);
        if (x->alloc_seen)
            units_bytes(mem, sizeof(mem), x->peak_alloc);
        else
            snprintf(mem, sizeof(mem), "N/A");
        /* The activity is the whole device's or instance's, the command's
         * and everyone else's on it: said so, beside the command's own
         * memory (util_scope in JSON). */
        const char *scope = !x->mig ? "whole GPU" : x->amd ? "whole partition" : "whole instance";
        if (x->util_n)
            snprintf(util, sizeof(util), "activity (%s, all its processes) peak %.0f%% mean %.0f%% (%s)",
                     scope, x->util_peak, x->util_sum / x->util_n, metric_source_name(x->util_src));
        else
            snprintf(util, sizeof(util), "activity (%s, all its processes) N/A", scope);
        if (x->mig) { /* no energy, temperature or throttling of its own */
            fprintf(f, "  %s: GPU memory %s, %s; energy, temp, throttle: see GPU %d\n", id, mem,
                    util, x->index);
            continue;
        }
        if (x->energy0_ok)
            prof_energy(en, sizeof(en), x->energy1 - x->energy0);
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
        fprintf(f, "  %s: GPU memory %s, %s, energy %s, temp peak %s, throttle %s\n", id, mem,
                util, en, tmp, thr);
    }
    report_events_text(f, P);
    if (P->w.visible_note[0])
        fprintf(f, "Note: %s\n", P->w.visible_note);
    /* the first one's reason was said on stderr when it failed: a report
     * there says it once */
    if (P->w.failed && f == stderr && !P->w.quiet)
        fprintf(f, "Failed samples: %lu (the first one's reason is above)\n", P->w.failed);
    else if (P->w.failed)
        fprintf(f, "Failed samples: %lu (first: %s)\n", P->w.failed, P->w.first_error);
}

/* Flushes f and closes it (stderr only flushed). A write that failed, now
 * or earlier (err: its errno, 0: none known), is said once, naming the
 * file. Returns whether what was written is all there. */
static bool output_close(FILE *f, const char *what, const char *path, int err)
{
    if (!err && (fflush(f) != 0 || ferror(f)))
        err = errno ? errno : EIO;
    if (f != stderr && fclose(f) != 0 && !err)
        err = errno;
    if (err)
        fprintf(stderr, "mig-gpu-mon profile: writing the %s to %s failed: %s\n", what, path,
                strerror(err));
    return !err;
}


/* A report or timeline file: replaced when it exists, never written through
 * a symbolic link (outfile.h); NULL after saying why. */
static FILE *output_open(const char *path)
{
    int fd = outfile_open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644, NULL);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        char e[3200];
        outfile_strerror(e, sizeof(e), path, errno);
        if (fd >= 0)
            close(fd);
        text_clean_lines(e, sizeof(e));
        fprintf(stderr, "mig-gpu-mon profile: %s\n", e);
    }
    return f;
}

/* The timeline: compressed by its name as record's output is (recstream.h),
 * a name of another compressor refused; NULL after saying why. */
static FILE *timeline_open(const char *path, unsigned interval_ms)
{
    char other[16], e[3200];
    enum rec_compress k = recout_by_name(path, other, sizeof(other));
    if (other[0]) {
        snprintf(e, sizeof(e), "--timeline %.3000s: %s compression is not written; name the file "
                 ".zst (zstd) or .gz (gzip), or without %s for plain text", path, other, other);
        text_clean_lines(e, sizeof(e));
        fprintf(stderr, "mig-gpu-mon profile: %s\n", e);
        return NULL;
    }
    if (k == REC_PLAIN)
        return output_open(path);
    int fd = outfile_open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644, NULL);
    FILE *f = NULL;
    char why[256] = "";
    if (fd >= 0 && !(f = recstream_open(fd, k, (uint64_t)interval_ms * 1000000ull, why,
                                        sizeof(why))))
        close(fd);
    if (!f) {
        if (fd < 0)
            outfile_strerror(e, sizeof(e), path, errno);
        else
            snprintf(e, sizeof(e), "%.2900s: %.250s", path, why);
        text_clean_lines(e, sizeof(e));
        fprintf(stderr, "mig-gpu-mon profile: %s\n", e);
    }
    return f;
}

/* --demo mi300x: the simulated sysfs tree, removed at exit. */
static struct demo_amd *prof_amd;

static void prof_amd_end(void)
{
    demo_amd_stop(prof_amd);
    prof_amd = NULL;
}

int profile_main(int argc, char **argv, int at, const char *self_exe)
{
    static struct prof P; /* large (devices, tree); one per process */
    memset(&P, 0, sizeof(P));
    int rc = profile_parse(&P.o, argc, argv, at);
    if (rc >= 0)
        return rc;
    char demo_lib[4096], demo_label[160];
    static char demo_sysfs[256];
    if (P.o.demo && P.o.demo_scenario && strcmp(P.o.demo_scenario, DEMO_AMD_SCENARIO) == 0) {
        /* an MI300X for the amdgpu backend, as in the other modes */
        char derr[512];
        /* its writer thread never takes the signals passed on to COMMAND
         * (the engine's threads block them all): only the main thread
         * runs on_signal */
        sigset_t old;
        profjob_block_signals(&old);
        prof_amd = demo_amd_start(P.o.interval_ms, demo_sysfs, sizeof(demo_sysfs), derr,
                                  sizeof(derr));
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (!prof_amd) {
            fprintf(stderr, "mig-gpu-mon profile: %s\n", derr);
            return 2;
        }
        atexit(prof_amd_end);
        P.o.backends = "amdgpu";
        P.o.sysfs_root = demo_sysfs;
    } else if (P.o.demo) {
        if (demo_setup(self_exe, P.o.demo_scenario, demo_lib, sizeof(demo_lib), demo_label,
                       sizeof(demo_label)) != 0)
            return 2;
        P.o.nvml_path = demo_lib;
        /* the simulator's DCGM too, serving the same scenario */
        static char demo_dcgm[4096 + 16];
        if (!P.o.dcgm_lib)
            P.o.dcgm_lib = demo_dcgm_lib(demo_lib, demo_dcgm, sizeof(demo_dcgm));
    }
    if (P.o.dcgm_lib && access(P.o.dcgm_lib, R_OK) != 0) {
        int e = errno;
        char v[4096];
        snprintf(v, sizeof(v), "%s", P.o.dcgm_lib);
        text_clean(v, sizeof(v));
        fprintf(stderr, "mig-gpu-mon profile: --dcgm-lib %s: %s\n", v, strerror(e));
        return 2;
    }
    FILE *report = stderr;
    if (P.o.report && !(report = output_open(P.o.report)))
        return 2;
    if (P.o.timeline && !(P.timeline = timeline_open(P.o.timeline, P.o.interval_ms))) {
        if (report != stderr)
            fclose(report);
        return 2;
    }
    struct watch_opts wo = {.nvml_path = P.o.nvml_path,
                            .proc_root = P.o.proc_root,
                            .backends = P.o.backends,
                            .sysfs_root = P.o.sysfs_root,
                            .gpm_exe = self_exe,
                            .interval_ms = P.o.interval_ms,
                            .timeline = P.timeline,
                            .dcgm_mode = P.o.dcgm,
                            .dcgm_addr = P.o.dcgm_addr,
                            .dcgm_lib = P.o.dcgm_lib};
    char err[2048];
    if (watch_open(&P.w, &wo, err, sizeof(err)) != 0) {
        text_clean_lines(err, sizeof(err));
        fprintf(stderr, "mig-gpu-mon profile: %s\n", err);
        return 2;
    }
    if (!P.w.col.be_state && !P.w.col.nextra) /* no GPU source: the report says unavailable,
                                                * CPU figures still come */
        fprintf(stderr, "mig-gpu-mon profile: no GPU figures: %s\n", P.w.col.gpu_error);
    /* the events of the sample before COMMAND are not its own */
    struct eventlog_batch before;
    eventlog_take(&P.ev.log, &P.w.s, &before);

    profjob_handle_signals();
    signal(SIGPIPE, SIG_IGN);

    P.t0 = clock_mono_ns();
    int e = profjob_start(&P.job, P.o.cmd);
    watch_set_root(&P.w, P.job.child);
    if (e) {
        fprintf(stderr, "mig-gpu-mon profile: cannot run '%s': %s\n", P.o.cmd[0], strerror(e));
        watch_close(&P.w);
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
        profjob_take_signals(&P.job);
        /* A sample first: a command that ends at once (a crash) still gets
         * one sample after it started, not only the one from before. */
        watch_sample(&P.w);
        events_take(&P, &P.w.s);
        pid_t w = wait4(P.job.child, &status, WNOHANG, &ru);
        if (w == P.job.child) {
            have_ru = true;
            break;
        }
        if (w < 0 && errno != EINTR)
            break;
        uint64_t next = P.t0 + (k + 1) * period;
        if (next < clock_mono_ns()) /* a slow sample: skip the missed points */
            k = (clock_mono_ns() - P.t0) / period;
        sleep_until(P.t0 + (k + 1) * period);
    }
    double wall_s = (double)(clock_mono_ns() - P.t0) / 1e9;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    /* The report's own writes are judged: not an earlier failure on
     * stderr, not a stale errno. */
    clearerr(report);
    errno = 0;
    if (P.o.format == PF_JSON)
        report_json(report, &P, code, wall_s, have_ru ? &ru : NULL);
    else
        report_text(report, &P, code, wall_s, have_ru ? &ru : NULL);
    bool whole = output_close(report, "report", P.o.report ? P.o.report : "standard error", 0);
    if (P.timeline)
        whole = output_close(P.timeline, "timeline", P.o.timeline, P.w.timeline_errno) && whole;
    watch_close(&P.w);
    /* A lost report or timeline never passes for success; a command's own
     * failure stays what a script sees (the message says the rest). */
    return code == 0 && !whole ? 1 : code;
}
