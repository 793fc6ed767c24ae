/*
 * host.c — sample the host from a procfs tree.
 *
 * Each file stays open and is re-read with one pread() at offset 0 into one
 * shared buffer. That is valid for procfs: these are seq_files, which restart
 * from the first record when read at offset 0 and produce the whole text in
 * one read when the buffer is large enough. A read that fills the buffer may
 * have been cut short, so the buffer doubles and the read repeats; this only
 * happens while warming up (the buffer starts at a size estimated from the CPU
 * count, since /proc/stat grows ~150 bytes per CPU). Per-core storage grows
 * the same way. After that a sample makes two reads (stat, meminfo), a
 * gethostname(), a sysinfo() and a clock read, and allocates nothing.
 *
 * On a real procfs three files are answered without reading them, with the
 * value the kernel would print: sys/kernel/hostname shows the reading
 * task's UTS name, which is what gethostname() returns (a tenth of the cost
 * of opening and reading the sysctl); /proc/uptime prints CLOCK_BOOTTIME to
 * the hundredth, truncated; /proc/loadavg prints the kernel's fixed-point
 * averages rounded to the hundredth, which sysinfo() gives exactly (at less
 * than half the cost of the read). Which file is procfs is asked of the
 * file itself (fstatfs), because a container may bind-mount its own over
 * /proc/uptime or /proc/loadavg (LXCFS); that one is read like any file,
 * and so is every file of a fixture tree.
 */
#include "system/host.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>

#include "system/cpu.h"
#include "system/meminfo.h"

enum { PF_STAT, PF_MEMINFO, PF_LOADAVG, PF_UPTIME, PF_COUNT };

static const char *const pf_names[PF_COUNT] = {"stat", "meminfo", "loadavg", "uptime"};

/* Past this the text is treated as truncated (the parsers drop the partial
 * last line) rather than growing without bound. */
#define HOST_BUF_MAX ((size_t)64 << 20)

/* Sanity bounds for the decimal files: a load of ten million runnable tasks or
 * an uptime of three centuries is a corrupt file, not a machine. */
#define LOADAVG_MAX 1e7
#define UPTIME_MAX  1e10

struct host {
    int dirfd;
    int fd[PF_COUNT]; /* -1 until opened; reopened after a read error */
    char *buf;        /* owned: the text of the file being parsed */
    size_t bufcap;
    /* Two parses of /proc/stat, the newest at stat[cur]; their core storage
     * is times[0] and times[1]. All per-core arrays hold cap entries. */
    struct cpu_stat stat[2];
    struct cpu_times *times[2];
    struct metric *pct;
    struct host_core *cores;
    size_t cap;
    int cur;
    bool have_prev; /* stat[cur] holds a parse to take deltas against */
    bool uts_name;  /* the root is a procfs: the host name is gethostname()'s */
    bool boot_clock; /* uptime is the kernel's own: read CLOCK_BOOTTIME instead */
    bool kernel_load; /* loadavg is the kernel's own: ask sysinfo() instead */
};

/* "host: PROC_ROOT: what went wrong" */
static void set_err(char *err, size_t errlen, const char *root, const char *msg)
{
    if (err && errlen)
        snprintf(err, errlen, "host: %s: %s", root, msg);
}

/* Grow every per-core array to hold n entries (n <= CPU_MAX_ID). realloc
 * keeps the previous parse intact; its pointer is refreshed here. */
static int host_grow_cores(struct host *h, size_t n)
{
    size_t cap = h->cap ? h->cap : 1;
    while (cap < n)
        cap *= 2;
    if (cap > CPU_MAX_ID)
        cap = CPU_MAX_ID;
    if (cap <= h->cap)
        return 0;
    for (int i = 0; i < 2; i++) {
        struct cpu_times *t = realloc(h->times[i], cap * sizeof(*t));
        if (!t)
            return -ENOMEM;
        h->times[i] = t;
        h->stat[i].cores = t;
    }
    struct metric *pct = realloc(h->pct, cap * sizeof(*pct));
    if (!pct)
        return -ENOMEM;
    h->pct = pct;
    struct host_core *cores = realloc(h->cores, cap * sizeof(*cores));
    if (!cores)
        return -ENOMEM;
    h->cores = cores;
    h->cap = cap;
    for (int i = 0; i < 2; i++)
        h->stat[i].cap = cap;
    return 0;
}

/* Read one whole file into h->buf. Returns its length or a negative errno. */
static ssize_t host_read(struct host *h, int which)
{
    if (h->fd[which] < 0) {
        h->fd[which] = openat(h->dirfd, pf_names[which], O_RDONLY | O_CLOEXEC);
        if (h->fd[which] < 0)
            return -errno;
    }
    for (;;) {
        ssize_t n = pread(h->fd[which], h->buf, h->bufcap, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(h->fd[which]);
            h->fd[which] = -1;
            return -e;
        }
        if ((size_t)n < h->bufcap || h->bufcap >= HOST_BUF_MAX)
            return n;
        char *b = realloc(h->buf, h->bufcap * 2);
        if (!b)
            return -ENOMEM;
        h->buf = b;
        h->bufcap *= 2;
    }
}

static bool is_procfs(int fd)
{
    struct statfs sf;
    return fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

/* Whether <root>/NAME is the kernel's own file (then not kept open); a
 * file of another kind stays open for host_read. */
static bool kernel_file(struct host *h, int which)
{
    int fd = openat(h->dirfd, pf_names[which], O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    if (is_procfs(fd)) {
        close(fd);
        return true;
    }
    h->fd[which] = fd;
    return false;
}

int host_open(struct host **out, const char *proc_root, char *err, size_t errlen)
{
    *out = NULL;
    if (!proc_root)
        proc_root = "/proc";
    struct host *h = calloc(1, sizeof(*h));
    if (!h) {
        set_err(err, errlen, proc_root, strerror(ENOMEM));
        return -ENOMEM;
    }
    int rc;
    h->dirfd = -1;
    for (int i = 0; i < PF_COUNT; i++)
        h->fd[i] = -1;
    h->dirfd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (h->dirfd < 0) {
        rc = -errno;
        set_err(err, errlen, proc_root, strerror(errno));
        goto fail;
    }

    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    if (ncpu < 1)
        ncpu = 1;
    if (ncpu > CPU_MAX_ID)
        ncpu = CPU_MAX_ID;
    h->bufcap = 8192 + 160 * (size_t)ncpu;
    h->buf = malloc(h->bufcap);
    if (!h->buf || host_grow_cores(h, (size_t)ncpu) < 0) {
        rc = -ENOMEM;
        set_err(err, errlen, proc_root, strerror(ENOMEM));
        goto fail;
    }

    h->uts_name = is_procfs(h->dirfd);
    h->boot_clock = kernel_file(h, PF_UPTIME);
    h->kernel_load = kernel_file(h, PF_LOADAVG);

    /* A directory with neither file is almost certainly a wrong --proc-root. */
    h->fd[PF_STAT] = openat(h->dirfd, "stat", O_RDONLY | O_CLOEXEC);
    h->fd[PF_MEMINFO] = openat(h->dirfd, "meminfo", O_RDONLY | O_CLOEXEC);
    if (h->fd[PF_STAT] < 0 && h->fd[PF_MEMINFO] < 0) {
        rc = -ENOENT;
        set_err(err, errlen, proc_root,
                "neither stat nor meminfo is readable there; expected a procfs like /proc");
        goto fail;
    }
    *out = h;
    return 0;
fail:
    host_close(h);
    return rc;
}

void host_close(struct host *h)
{
    if (!h)
        return;
    for (int i = 0; i < PF_COUNT; i++)
        if (h->fd[i] >= 0)
            close(h->fd[i]);
    if (h->dirfd >= 0)
        close(h->dirfd);
    free(h->buf);
    free(h->times[0]);
    free(h->times[1]);
    free(h->pct);
    free(h->cores);
    free(h);
}

/* Parse "D" or "D.D" (no sign, no exponent, no locale: strtod would take the
 * decimal separator from LC_NUMERIC, which a front end may set). */
static bool parse_decimal(const char **pp, const char *end, double *out)
{
    const char *p = *pp;
    double v = 0;
    int ndig = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        if (++ndig > 15) /* beyond exact doubles and beyond any sane bound */
            return false;
        v = v * 10 + (*p++ - '0');
    }
    if (ndig == 0)
        return false;
    if (p < end && *p == '.') {
        p++;
        double scale = 0.1;
        const char *frac = p;
        while (p < end && *p >= '0' && *p <= '9') {
            v += (*p++ - '0') * scale;
            scale /= 10;
        }
        if (p == frac)
            return false;
    }
    *pp = p;
    *out = v;
    return true;
}

/* "L1 L5 L15 R/T PID\n" */
static void parse_loadavg(const char *buf, size_t len, struct metric out[3])
{
    const char *p = buf, *nl = memchr(buf, '\n', len);
    for (int i = 0; i < 3; i++)
        out[i] = metric_none("malformed /proc/loadavg");
    if (!nl)
        return;
    for (int i = 0; i < 3; i++) {
        double v;
        if (!parse_decimal(&p, nl, &v) || (p < nl && *p != ' ') || v > LOADAVG_MAX)
            return;
        p++;
        out[i] = metric_direct(v);
    }
}

/* "UP IDLE\n" */
static struct metric parse_uptime(const char *buf, size_t len)
{
    const char *p = buf, *nl = memchr(buf, '\n', len);
    double v;
    if (!nl || !parse_decimal(&p, nl, &v) || (p < nl && *p != ' ') || v > UPTIME_MAX)
        return metric_none("malformed /proc/uptime");
    return metric_direct(v);
}

/* /proc/uptime as the kernel prints it ("%lu.%02lu" of CLOCK_BOOTTIME, the
 * hundredths truncated), parsed with the same arithmetic as parse_decimal so
 * the value is bit for bit the one the file would give. */
static struct metric boot_uptime(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
        return metric_none("/proc/uptime unreadable");
    long cs = ts.tv_nsec / 10000000;
    double v = (double)ts.tv_sec, scale = 0.1;
    v += (double)(cs / 10) * scale;
    scale /= 10;
    v += (double)(cs % 10) * scale;
    if (v > UPTIME_MAX)
        return metric_none("malformed /proc/uptime");
    return metric_direct(v);
}

/* /proc/loadavg as the kernel prints it: LOAD_INT and LOAD_FRAC of
 * avenrun + FIXED_1/200 (FSHIFT 11), which sysinfo() hands out shifted to
 * SI_LOAD_SHIFT (16); parsed with parse_decimal's arithmetic. */
static void kernel_loadavg(struct metric out[3])
{
    struct sysinfo si;
    if (sysinfo(&si) != 0) {
        for (int i = 0; i < 3; i++)
            out[i] = metric_none("/proc/loadavg unreadable");
        return;
    }
    for (int i = 0; i < 3; i++) {
        unsigned long a = (si.loads[i] >> (SI_LOAD_SHIFT - 11)) + 2048 / 200;
        unsigned long ip = a >> 11, cs = ((a & 2047) * 100) >> 11;
        double v = (double)ip, scale = 0.1;
        v += (double)(cs / 10) * scale;
        scale /= 10;
        v += (double)(cs % 10) * scale;
        out[i] = v > LOADAVG_MAX ? metric_none("malformed /proc/loadavg") : metric_direct(v);
    }
}

static const char *const unreadable[PF_COUNT] = {
    "/proc/stat unreadable", "/proc/meminfo unreadable", "/proc/loadavg unreadable",
    "/proc/uptime unreadable"};

static int host_sample_cpu(struct host *h, struct host_sample *out)
{
    out->online = -1;
    out->ncores = 0;
    out->cores = h->cores; /* set again below: growing moves it */
    ssize_t n = host_read(h, PF_STAT);
    if (n < 0) {
        out->cpu_total = metric_none(unreadable[PF_STAT]);
        h->have_prev = false; /* the next good read re-primes */
        return n == -ENOMEM ? -ENOMEM : 0;
    }
    int c = h->have_prev ? h->cur ^ 1 : h->cur;
    struct cpu_stat *st = &h->stat[c];
    cpu_parse_stat(h->buf, (size_t)n, st);
    if (st->needed > st->cap) {
        if (host_grow_cores(h, st->needed) < 0) {
            out->cpu_total = metric_none("out of memory");
            h->have_prev = false;
            return -ENOMEM;
        }
        cpu_parse_stat(h->buf, (size_t)n, st);
    }
    cpu_deltas(h->have_prev ? &h->stat[h->cur] : NULL, st, &out->cpu_total, h->pct);
    for (size_t i = 0; i < st->ncores; i++)
        h->cores[i] = (struct host_core){.id = st->cores[i].id, .pct = h->pct[i]};
    out->cores = h->cores;
    out->ncores = st->ncores;
    /* A running machine has a CPU: no cpuN line at all is a broken file. */
    out->online = st->ncores ? (int)st->ncores : -1;
    h->cur = c;
    h->have_prev = true;
    return 0;
}

/* The UTS host name as <proc_root>/sys/kernel/hostname shows it (the same
 * value gethostname() returns on any procfs, since the sysctl shows the
 * reader's UTS namespace; a fixture tree can name its own host, which keeps
 * screen tests independent of the machine), else gethostname(). */
static void host_hostname(struct host *h, char *out, size_t len)
{
    int fd = h->uts_name ? -1 : openat(h->dirfd, "sys/kernel/hostname", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = pread(fd, out, len - 1, 0);
        close(fd);
        if (n > 0) {
            out[n] = '\0';
            out[strcspn(out, "\n")] = '\0';
            if (out[0])
                return;
        }
    }
    if (gethostname(out, len) != 0)
        out[0] = '\0';
    out[len - 1] = '\0'; /* not terminated when truncated */
}

int host_sample(struct host *h, struct host_sample *out)
{
    int rc = 0;

    host_hostname(h, out->hostname, sizeof(out->hostname));

    if (host_sample_cpu(h, out) < 0)
        rc = -ENOMEM;

    ssize_t n = host_read(h, PF_MEMINFO);
    if (n >= 0) {
        struct meminfo_raw raw;
        meminfo_parse(h->buf, (size_t)n, &raw);
        meminfo_derive(&raw, &out->mem);
    } else {
        meminfo_none(&out->mem, unreadable[PF_MEMINFO]);
        if (n == -ENOMEM)
            rc = -ENOMEM;
    }

    if (h->kernel_load) {
        kernel_loadavg(out->loadavg);
    } else if ((n = host_read(h, PF_LOADAVG)) >= 0) {
        parse_loadavg(h->buf, (size_t)n, out->loadavg);
    } else {
        for (int i = 0; i < 3; i++)
            out->loadavg[i] = metric_none(unreadable[PF_LOADAVG]);
        if (n == -ENOMEM)
            rc = -ENOMEM;
    }

    if (h->boot_clock) {
        out->uptime_s = boot_uptime();
        return rc;
    }
    n = host_read(h, PF_UPTIME);
    if (n >= 0) {
        out->uptime_s = parse_uptime(h->buf, (size_t)n);
    } else {
        out->uptime_s = metric_none(unreadable[PF_UPTIME]);
        if (n == -ENOMEM)
            rc = -ENOMEM;
    }
    return rc;
}
