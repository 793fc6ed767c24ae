/*
 * proctree.c — see proctree.h. The tree comes from each thread's
 * /proc/PID/task/TID/children (a helper is the child of whichever thread
 * forked it), or, on a kernel built without CONFIG_PROC_CHILDREN, from a
 * scan of /proc for parent links. CPU comes from the process CPU-time clock
 * (clock_getcpuclockid: utime + stime of every thread, in ns) rather than
 * /proc/PID/stat's utime and stime, the same sum in 10 ms clock ticks: too
 * coarse against the 40-60 ms a monitor uses in a 10 s window.
 */
#include "proctree.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The number after key at the start of a line of a status file; false when
 * the file or the line is missing. */
static bool status_field(const char *path, const char *key, unsigned long long *v)
{
    FILE *st = fopen(path, "r");
    if (!st)
        return false;
    char line[128];
    size_t klen = strlen(key);
    bool found = false;
    while (!found && fgets(line, sizeof(line), st))
        found = strncmp(line, key, klen) == 0 && sscanf(line + klen, "%llu", v) == 1;
    fclose(st);
    return found;
}

size_t proctree_tids(pid_t pid, long *tids, size_t max)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        long tid = atol(e->d_name);
        if (tid > 0)
            tids[n++] = tid;
    }
    closedir(d);
    return n;
}

uint64_t proctree_task_wakes(pid_t pid, long tid)
{
    char f[96];
    unsigned long long n = 0;
    snprintf(f, sizeof(f), "/proc/%d/task/%ld/status", (int)pid, tid);
    return status_field(f, "voluntary_ctxt_switches:", &n) ? n : 0;
}

uint64_t proctree_task_ns(pid_t pid, long tid)
{
    char f[96];
    unsigned long long ns = 0;
    snprintf(f, sizeof(f), "/proc/%d/task/%ld/schedstat", (int)pid, tid);
    FILE *st = fopen(f, "r");
    if (!st)
        return 0;
    if (fscanf(st, "%llu", &ns) != 1)
        ns = 0;
    fclose(st);
    return ns;
}

bool proctree_task_name(pid_t pid, long tid, char *out, size_t len)
{
    char f[96];
    snprintf(f, sizeof(f), "/proc/%d/task/%ld/comm", (int)pid, tid);
    FILE *c = fopen(f, "r");
    bool ok = c && fgets(out, (int)len, c) != NULL;
    if (c)
        fclose(c);
    out[ok ? strcspn(out, "\n") : 0] = '\0';
    return ok;
}

/* /proc/PID/stat's parent (field 4) and start time (field 22), read after
 * the last ')' since the name may hold spaces or parentheses. */
static bool stat_read(pid_t pid, pid_t *ppid, unsigned long long *start)
{
    char f[64], buf[1024];
    snprintf(f, sizeof(f), "/proc/%d/stat", (int)pid);
    FILE *st = fopen(f, "r");
    if (!st)
        return false;
    size_t n = fread(buf, 1, sizeof(buf) - 1, st);
    fclose(st);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    int pp = 0;
    unsigned long long st22 = 0;
    /* after ')': state (3), ppid (4), 17 fields, starttime (22) */
    if (!p || sscanf(p + 1,
                     " %*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d "
                     "%llu",
                     &pp, &st22) != 2)
        return false;
    *ppid = pp;
    *start = st22;
    return true;
}

static size_t children_of(pid_t pid, pid_t *out, size_t max)
{
    char path[96];
    size_t n = 0;
    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
    if (access(path, R_OK) == 0) {
        long tids[256];
        size_t nt = proctree_tids(pid, tids, sizeof(tids) / sizeof(tids[0]));
        for (size_t i = 0; i < nt && n < max; i++) {
            snprintf(path, sizeof(path), "/proc/%d/task/%ld/children", (int)pid, tids[i]);
            FILE *c = fopen(path, "r");
            if (!c)
                continue;
            int child;
            while (n < max && fscanf(c, "%d", &child) == 1)
                out[n++] = child;
            fclose(c);
        }
        return n;
    }
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        pid_t q = (pid_t)atol(e->d_name), pp;
        unsigned long long start;
        if (q > 0 && stat_read(q, &pp, &start) && pp == pid)
            out[n++] = q;
    }
    closedir(d);
    return n;
}

/* A helper's label: its mode argument without the dashes (the helpers are
 * the monitor's binary run as "--gpm-helper", "--dcgm-helper"), else its
 * comm. */
static void label_read(pid_t pid, char *out, size_t len)
{
    char f[64], buf[256];
    snprintf(f, sizeof(f), "/proc/%d/cmdline", (int)pid);
    FILE *c = fopen(f, "r");
    size_t n = 0;
    if (c) {
        n = fread(buf, 1, sizeof(buf) - 1, c);
        fclose(c);
    }
    buf[n] = '\0';
    size_t a0 = strnlen(buf, n);
    if (a0 + 3 < n && strncmp(buf + a0 + 1, "--", 2) == 0) {
        snprintf(out, len, "%.15s", buf + a0 + 3);
        return;
    }
    snprintf(f, sizeof(f), "/proc/%d/comm", (int)pid);
    c = fopen(f, "r");
    bool ok = c && fgets(buf, sizeof(buf), c);
    if (c)
        fclose(c);
    buf[ok ? strcspn(buf, "\n") : 0] = '\0';
    snprintf(out, len, "%.15s", ok ? buf : "?");
}

void proctree_read(pid_t root, bool with_rss, struct proctree *o)
{
    pid_t queue[PROCTREE_MAX];
    size_t head = 0, tail = 0;
    queue[tail++] = root;
    o->n = 0;
    while (head < tail && o->n < PROCTREE_MAX) {
        pid_t pid = queue[head++];
        struct proctree_obs *p = &o->p[o->n];
        pid_t ppid;
        clockid_t clk;
        struct timespec ts;
        if (!stat_read(pid, &ppid, &p->start) || clock_getcpuclockid(pid, &clk) != 0 ||
            clock_gettime(clk, &ts) != 0)
            continue;
        p->pid = pid;
        p->ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        long tids[256];
        size_t nt = proctree_tids(pid, tids, sizeof(tids) / sizeof(tids[0]));
        p->wakes = 0;
        for (size_t i = 0; i < nt; i++)
            p->wakes += proctree_task_wakes(pid, tids[i]);
        p->rss_kb = -1;
        char f[64];
        unsigned long long kb;
        snprintf(f, sizeof(f), "/proc/%d/status", (int)pid);
        if (with_rss && status_field(f, "VmRSS:", &kb))
            p->rss_kb = (long)kb;
        p->pss_kb = -1;
        snprintf(f, sizeof(f), "/proc/%d/smaps_rollup", (int)pid);
        if (with_rss && status_field(f, "Pss:", &kb))
            p->pss_kb = (long)kb;
        if (pid == root)
            snprintf(p->label, sizeof(p->label), "main");
        else
            label_read(pid, p->label, sizeof(p->label));
        o->n++;
        tail += children_of(pid, queue + tail, PROCTREE_MAX - tail);
    }
}

void proctree_fold(struct proctree_ledger *l, const struct proctree *o, bool begin)
{
    if (begin)
        l->n = 0;
    for (size_t i = 0; i < l->n; i++)
        l->p[i].rss_kb = l->p[i].pss_kb = -1;
    for (size_t i = 0; i < o->n; i++) {
        const struct proctree_obs *r = &o->p[i];
        size_t k = 0;
        while (k < l->n && !(l->p[k].pid == r->pid && l->p[k].start == r->start))
            k++;
        if (k == l->n) {
            if (k == PROCTREE_MAX)
                continue;
            l->n++;
            l->p[k] = (struct proctree_entry){.pid = r->pid, .start = r->start};
            snprintf(l->p[k].label, sizeof(l->p[k].label), "%s", r->label);
            if (begin) {
                l->p[k].first_ns = r->ns;
                l->p[k].first_wk = r->wakes;
            }
        }
        l->p[k].last_ns = r->ns;
        l->p[k].last_wk = r->wakes;
        l->p[k].rss_kb = r->rss_kb;
        l->p[k].pss_kb = r->pss_kb;
    }
}
