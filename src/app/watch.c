/*
 * watch.c — a process tree watched over time: its devices' figures and
 * peaks (watch.h, docs/profile.md).
 */
#include "app/watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/text.h"
#include "export/json.h"

/* ---- the command's process tree ---- */

static void tree_add(struct watch *W, pid_t pid)
{
    for (size_t i = 0; i < W->ntree; i++)
        if (W->tree[i] == pid)
            return;
    if (W->ntree < WATCH_TREE_MAX)
        W->tree[W->ntree++] = pid;
}

static bool in_tree(const struct watch *W, int64_t pid)
{
    for (size_t i = 0; i < W->ntree; i++)
        if (W->tree[i] == pid)
            return true;
    return false;
}

static const char *proc_dir(const struct watch *W)
{
    return W->proc_root ? W->proc_root : "/proc";
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
static bool add_children(struct watch *W, pid_t pid)
{
    char path[4608], buf[8192];
    snprintf(path, sizeof(path), "%s/%d/task", proc_dir(W), (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return true; /* gone: nothing to add */
    struct dirent *e;
    bool ok = true;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "%s/%d/task/%s/children", proc_dir(W), (int)pid, e->d_name);
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
                tree_add(W, (pid_t)c);
        }
    }
    closedir(d);
    return ok;
}

/* Without children files: every process whose parent is in the tree. */
static void scan_proc(struct watch *W)
{
    DIR *d = opendir(proc_dir(W));
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
            snprintf(path, sizeof(path), "%s/%s/stat", proc_dir(W), e->d_name);
            if (read_small(path, buf, sizeof(buf)) <= 0)
                continue;
            const char *rp = strrchr(buf, ')');
            int ppid;
            if (!rp || sscanf(rp + 1, " %*c %d", &ppid) != 1)
                continue;
            pid_t pid = (pid_t)atoi(e->d_name);
            if (in_tree(W, ppid) && !in_tree(W, pid)) {
                tree_add(W, pid);
                grew = true;
            }
        }
    }
    closedir(d);
}

static void tree_refresh(struct watch *W)
{
    W->ntree = 0;
    if (W->root <= 0)
        return;
    tree_add(W, W->root);
    if (W->children_files) {
        for (size_t i = 0; i < W->ntree; i++) /* the list grows as it is walked */
            if (!add_children(W, W->tree[i])) {
                W->children_files = false;
                break;
            }
    }
    if (!W->children_files)
        scan_proc(W);
}

/* Resident memory of the tree, bytes. */
static double tree_rss(const struct watch *W)
{
    static long page;
    if (!page)
        page = sysconf(_SC_PAGESIZE);
    double sum = 0;
    char path[4608], buf[256];
    for (size_t i = 0; i < W->ntree; i++) {
        snprintf(path, sizeof(path), "%s/%d/statm", proc_dir(W), (int)W->tree[i]);
        unsigned long size, res;
        if (read_small(path, buf, sizeof(buf)) > 0 && sscanf(buf, "%lu %lu", &size, &res) == 2)
            sum += (double)res * (double)page;
    }
    return sum;
}

/* ---- devices ---- */

/*
 * The devices the command may use: CUDA_VISIBLE_DEVICES, and the container
 * runtime's NVIDIA_VISIBLE_DEVICES; a device is counted when every one of
 * them that is set admits it. A value is
 *   - "all" (or unset): every device;
 *   - empty, or the runtime's "none" / "void": no GPU (CUDA reads an empty
 *     list as no device; the runtime mounts none);
 *   - UUIDs, comma-separated (GPU-..., MIG-...), each whole or a prefix
 *     that names one device, as CUDA accepts: those devices. A listed GPU
 *     brings its MIG instances; a listed MIG instance its parent GPU, whose
 *     row holds the figures NVML has only there (energy, temperature,
 *     throttling). An entry that names no device, or several, counts
 *     nothing and is named in the note;
 *   - anything else (ordinals): CUDA's numbering (the runtime's: the host's),
 *     not NVML's; not mapped: every device is counted, and the note says so.
 */
static const char *const vis_vars[] = {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"};
#define VIS_NVARS (sizeof(vis_vars) / sizeof(vis_vars[0]))

enum vis_mode { VIS_EVERY, VIS_NO_GPU, VIS_UUIDS, VIS_UNMAPPED };

/* Steps *p over one entry of a comma-separated list; *e and the return
 * value: the entry without the spaces around it (possibly empty). */
static size_t vis_entry(const char **p, const char **e)
{
    const char *s = *p;
    size_t n = strcspn(s, ",");
    *p = s[n] ? s + n + 1 : s + n;
    while (n && (*s == ' ' || *s == '\t'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    *e = s;
    return n;
}

static bool vis_is_uuid(const char *e, size_t n)
{
    return n >= 4 && (strncasecmp(e, "GPU-", 4) == 0 || strncasecmp(e, "MIG-", 4) == 0);
}

static enum vis_mode vis_mode(size_t k, const char *v)
{
    if (!v || strcmp(v, "all") == 0)
        return VIS_EVERY;
    if (!*v || (k == 1 && (strcmp(v, "none") == 0 || strcmp(v, "void") == 0)))
        return VIS_NO_GPU;
    for (const char *p = v; *p;) {
        const char *e;
        size_t n = vis_entry(&p, &e);
        if (n && !vis_is_uuid(e, n))
            return VIS_UNMAPPED;
    }
    return VIS_UUIDS;
}

/* How many devices of s have a UUID that begins with the entry; *one: the
 * last of them. */
static int vis_matches(const struct snapshot *s, const char *e, size_t n,
                       const struct device **one)
{
    int c = 0;
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        if (d->uuid[0] && strncasecmp(d->uuid, e, n) == 0) {
            *one = d;
            c++;
        }
    }
    return c;
}

/* A UUID list admits d: d is listed, or its parent GPU is, or it is the
 * parent GPU of a listed instance. */
static bool vis_admits(const struct snapshot *s, const char *v, const struct device *d)
{
    for (const char *p = v; *p;) {
        const char *e;
        size_t n = vis_entry(&p, &e);
        const struct device *m = NULL;
        if (!n || vis_matches(s, e, n, &m) != 1)
            continue;
        if (strcmp(m->uuid, d->uuid) == 0)
            return true;
        if (d->kind == DEV_MIG && strcmp(d->parent_uuid, m->uuid) == 0)
            return true;
        if (d->kind == DEV_GPU && m->kind == DEV_MIG && strcmp(m->parent_uuid, d->uuid) == 0)
            return true;
    }
    return false;
}

/* d is one of s's devices. */
static bool visible(const struct snapshot *s, const struct device *d)
{
    if (!d->uuid[0])
        return false;
    for (size_t k = 0; k < VIS_NVARS; k++) {
        const char *v = getenv(vis_vars[k]);
        enum vis_mode mode = vis_mode(k, v);
        if (mode == VIS_NO_GPU || (mode == VIS_UUIDS && !vis_admits(s, v, d)))
            return false;
    }
    return true;
}

static void note_add(struct watch *W, size_t *off, const char *part)
{
    size_t len = sizeof(W->visible_note);
    if (*off >= len)
        return;
    int n = snprintf(W->visible_note + *off, len - *off, "%s%s", *off ? "; " : "", part);
    *off += n > 0 ? (size_t)n : 0;
}

/* What the report's note says of the variables above, against the devices
 * of W->s: an ordinal list, no GPU, an entry that names no device or
 * several; "" when there is nothing to say. */
static void vis_note(struct watch *W)
{
    size_t off = 0;
    char part[256];
    W->visible_note[0] = '\0';
    for (size_t k = 0; k < VIS_NVARS; k++) {
        const char *name = vis_vars[k], *v = getenv(name);
        switch (vis_mode(k, v)) {
        case VIS_EVERY:
            break;
        case VIS_NO_GPU:
            if (*v)
                snprintf(part, sizeof(part), "%s=%.64s: no GPU visible to the command", name, v);
            else
                snprintf(part, sizeof(part), "%s is empty: no GPU visible to the command", name);
            note_add(W, &off, part);
            break;
        case VIS_UNMAPPED:
            if (k == 0)
                snprintf(part, sizeof(part),
                         "%s=%.64s names CUDA ordinals, which are not NVML indices: every device "
                         "counted",
                         name, v);
            else
                snprintf(part, sizeof(part),
                         "%s=%.64s names devices by host index, which is not matched: every "
                         "device counted",
                         name, v);
            note_add(W, &off, part);
            break;
        case VIS_UUIDS:
            for (const char *p = v; *p;) {
                const char *e;
                size_t n = vis_entry(&p, &e);
                const struct device *m = NULL;
                int c = n ? vis_matches(&W->s, e, n, &m) : 1;
                int shown = n > 96 ? 96 : (int)n;
                if (c == 0)
                    snprintf(part, sizeof(part), "%s: %.*s names no device", name, shown, e);
                else if (c > 1)
                    snprintf(part, sizeof(part), "%s: %.*s names %d devices, not one", name,
                             shown, e, c);
                else
                    continue;
                note_add(W, &off, part);
            }
            break;
        }
    }
    text_clean(W->visible_note, sizeof(W->visible_note));
}

static struct watch_dev *dev_of(struct watch *W, const struct device *d)
{
    for (size_t i = 0; i < W->ndev; i++)
        if (strcmp(W->dev[i].uuid, d->uuid) == 0)
            return &W->dev[i];
    if (W->ndev >= WATCH_DEV_MAX || !d->uuid[0])
        return NULL;
    struct watch_dev *x = &W->dev[W->ndev++];
    memset(x, 0, sizeof(*x));
    snprintf(x->uuid, sizeof(x->uuid), "%s", d->uuid);
    snprintf(x->parent_uuid, sizeof(x->parent_uuid), "%s", d->parent_uuid);
    snprintf(x->name, sizeof(x->name), "%s", d->name);
    snprintf(x->profile, sizeof(x->profile), "%s", d->profile);
    x->index = d->index;
    x->mig_index = d->mig_index;
    x->gi_id = d->gi_id;
    x->ci_id = d->ci_id;
    x->mig = d->kind == DEV_MIG;
    x->amd = d->vendor == VENDOR_AMD;
    x->visible = visible(&W->s, d);
    const struct metric *u = &d->m[M_MEM_USED];
    x->used0_ok = metric_ok(u) && u->src != MSRC_CARRIED;
    x->used0 = x->used0_ok ? u->value : 0;
    return x;
}

static void note_error(struct watch *W, const char *what)
{
    W->failed++;
    if (W->first_error[0])
        return;
    snprintf(W->first_error, sizeof(W->first_error), "%s", what); /* whole: as big as gpu_error */
    text_clean_lines(W->first_error, sizeof(W->first_error));
    if (!W->quiet)
        fprintf(stderr, "mig-gpu-mon profile: a sample failed (later failures not shown): %s\n",
                W->first_error);
}

/* One sample: the tree, its RSS, and every device's figures. */
int watch_sample(struct watch *W)
{
    struct collector *col = &W->col;
    struct snapshot *s = &W->s;
    uint64_t budget = (uint64_t)W->interval_ms * 750000ull;
    if (W->eng) {
        /* The engine publishes by its deadline, the same budget; a little
         * more for the hand-off. A tick not back by then leaves s as it
         * was (the next request waits for this one to be taken). */
        engine_request_tick(W->eng, 1);
        uint64_t until = clock_mono_ns() + budget + 200000000ull;
        for (;;) {
            if (engine_acquire(W->eng, s))
                break;
            uint64_t now = clock_mono_ns();
            if (now >= until)
                break;
            struct pollfd p = {.fd = engine_fd(W->eng), .events = POLLIN};
            poll(&p, 1, (int)((until - now) / 1000000ull) + 1);
        }
    } else {
        collect_tick_until(col, s, clock_mono_ns() + budget);
    }
    W->samples++;
    tree_refresh(W);
    double rss = tree_rss(W);
    if (rss > W->peak_rss)
        W->peak_rss = rss;
    W->error[0] = '\0';
    if (!s->gpu_ok) {
        snprintf(W->error, sizeof(W->error), "%s", s->gpu_error);
        text_clean_lines(W->error, sizeof(W->error));
        if (col->be_state || col->nextra) /* without a backend, the opener said why once */
            note_error(W, s->gpu_error);
    }
    if (W->timeline && !W->timeline_errno) {
        json_write_snapshot(W->timeline, s, false);
        if (fflush(W->timeline) != 0 || ferror(W->timeline))
            W->timeline_errno = errno ? errno : EIO;
    }
    double alloc_total = 0, delta_total = 0;
    bool alloc_any = false, delta_any = false;
    size_t ndev = W->ndev;
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        struct watch_dev *x = dev_of(W, d);
        if (!x || !x->visible)
            continue;
        /* the tree's allocation, where the list could be read: a process
         * not listed (yet) counts 0, not as a reason to fall back */
        if (metric_ok(&d->process_count)) {
            double a = 0;
            for (size_t k = 0; k < d->nprocs && d->proc_first + k < s->nprocs; k++) {
                const struct gpu_process *p = &s->procs[d->proc_first + k];
                int64_t pid = p->local_pid > 0 ? p->local_pid : (int64_t)p->pid;
                if (in_tree(W, pid) && metric_ok(&p->mem_bytes))
                    a += p->mem_bytes.value;
            }
            x->alloc_seen = true;
            W->alloc_vendors |= 1u << (d->vendor & 7);
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
        if (x->mig)
            continue; /* energy, temperature, throttling: the parent's */
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
    if (W->ndev != ndev) /* new devices: the note is made again against them */
        vis_note(W);
    if (alloc_any) {
        W->any_alloc = true;
        if (alloc_total > W->peak_gpu)
            W->peak_gpu = alloc_total;
    }
    if (delta_any) {
        W->any_delta = true;
        if (delta_total > W->peak_delta_total)
            W->peak_delta_total = delta_total;
    }
    return s->gpu_ok ? 0 : -1;
}

const char *watch_metric_name(const struct watch *W)
{
    if (W->any_alloc)
        return W->alloc_vendors == 1u << VENDOR_AMD ? "drm_fdinfo_vram"
               : W->alloc_vendors & 1u << VENDOR_AMD ? "process_allocation"
                                                     : "nvml_process_allocation";
    return W->any_delta ? "device_memory_delta" : "unavailable";
}

double watch_peak_gpu(const struct watch *W)
{
    return W->any_alloc ? W->peak_gpu : W->peak_delta_total;
}


/* The longest the first sample may wait for the driver. */
#define WATCH_PRIME_MS 3000ull

int watch_open(struct watch *w, const struct watch_opts *o, char *err, size_t errlen)
{
    memset(w, 0, sizeof(*w));
    w->proc_root = o->proc_root;
    w->interval_ms = o->interval_ms ? o->interval_ms : 50;
    w->quiet = o->quiet;
    w->timeline = o->timeline;
    w->children_files = true; /* until a read says the kernel has none */
    struct collect_opts co = {.nvml_path = o->nvml_path,
                              .proc_root = o->proc_root,
                              .top = 0,
                              .interval_ms = w->interval_ms < 100 ? 100 : w->interval_ms,
                              .gpm_exe = o->gpm_exe,
                              .dcgm_mode = o->dcgm_mode,
                              .dcgm_addr = o->dcgm_addr,
                              .dcgm_lib = o->dcgm_lib,
                              .backends = o->backends,
                              .sysfs_root = o->sysfs_root};
    if (collect_open(&w->col, &co, err, errlen) != 0)
        return -1;
    /* The first sample comes before the command starts: it may take as
     * long as a slow driver needs to list every device and MIG instance
     * (a short command may end before the next one), up to a bound. */
    collect_tick_until(&w->col, &w->s, clock_mono_ns() + WATCH_PRIME_MS * 1000000ull);
    for (size_t i = 0; i < w->s.ndevices; i++)
        dev_of(w, &w->s.devices[i]);
    vis_note(w);
    struct engine_opts eo = {.interval_ms = w->interval_ms, .manual = true};
    if (engine_start(&w->eng, &w->col, &eo) != 0)
        w->eng = NULL; /* the ticks on the caller's thread, as the first */
    return 0;
}

void watch_set_root(struct watch *w, pid_t root)
{
    w->root = root;
}

void watch_close(struct watch *w)
{
    engine_stop(w->eng);
    w->eng = NULL;
    collect_close(&w->col);
    snapshot_free(&w->s);
}
