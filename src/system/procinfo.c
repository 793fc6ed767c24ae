#include "system/procinfo.h"

#include "core/text.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* /proc/self/ns/pid of the init PID namespace: the kernel's fixed
 * PROC_PID_INIT_INO (0xEFFFFFFC) since Linux 3.8. */
#define INIT_PID_NS "pid:[4026531836]"
#define NSPID_MAX 8
#define UID_CACHE 32

/* Open /proc/PID/stat descriptors kept for a pread per tick: at most this
 * many (and at most a quarter of RLIMIT_NOFILE); beyond, a process's stat is
 * opened and closed each tick. A kept descriptor also pins the identity: a
 * read after the process exited fails (ESRCH), even if the PID was reused. */
#define STAT_FD_MAX 1024

/* A PID with no /proc entry here (another PID namespace, hidepid, exited)
 * is looked up again only after this many ticks. */
#define ABSENT_RETRY_TICKS 5

#define REREAD_NS ((uint64_t)PROCINFO_REREAD_S * 1000000000ull)

struct pentry {
    uint32_t pid;
    int stat_fd;        /* /proc/PID/stat of this process, or -1 */
    uint64_t absent_until; /* tick: no /proc entry for this PID before it */
    uint64_t start_time;
    bool used;          /* filled or checked this tick */
    int64_t local_pid;
    uint64_t cpu_ticks; /* utime + stime at cpu_ns */
    uint64_t cpu_ns;
    bool have_cpu;
    uint64_t cpu_tick;  /* the tick cpu was computed in */
    struct metric cpu;
    char user[PROC_USER_LEN];
    char command[PROC_CMD_LEN];
    char container[PROC_CONTAINER_LEN];
    /* What the process was when user and command were read: the same start
     * time with another name or stack address is an exec. */
    char comm[PROC_NAME_LEN];
    uint64_t start_stack;
    uint64_t reread_ns; /* read them again at this monotonic time */
};

struct uid_name {
    long uid;
    char name[PROC_USER_LEN];
};

struct procinfo {
    char root[PATH_MAX];
    enum procinfo_ns mode;
    int self_level;          /* ancestor mode: our index in a process's NSpid */
    char self_ns[64];        /* our pid namespace link text, "" unknown */
    long clk_tck, page_size;
    uint64_t now_ns, tick;
    struct pentry *e;
    size_t n, cap;
    /* PID -> index into e + 1 (0 empty), open addressing; rebuilt when e
     * is compacted or grows. */
    uint32_t *idx;
    size_t idx_cap;          /* a power of two, >= 2 * cap */
    size_t nfds, fd_budget;
    struct uid_name uids[UID_CACHE];
    size_t nuids, uid_next;
    char buf[8192];          /* one /proc file at a time */
    char path[PATH_MAX + 64];
};

/* Read <root>/<pid>/<name> (pid 0: <root>/self/<name>) into pi->buf,
 * NUL-terminated. Returns the length or -1. */
static ssize_t read_pidfile(struct procinfo *pi, uint32_t pid, const char *name)
{
    if (pid)
        snprintf(pi->path, sizeof(pi->path), "%s/%u/%s", pi->root, pid, name);
    else
        snprintf(pi->path, sizeof(pi->path), "%s/self/%s", pi->root, name);
    int fd = open(pi->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got < sizeof(pi->buf) - 1) {
        ssize_t r = read(fd, pi->buf + got, sizeof(pi->buf) - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    pi->buf[got] = '\0';
    return (ssize_t)got;
}

/* The text of a namespace link, e.g. "pid:[4026531836]"; "" when unreadable.
 * A regular file holding that text is accepted too, so fixture trees need no
 * dangling symlinks. */
static void read_ns(struct procinfo *pi, uint32_t pid, char *out, size_t len)
{
    out[0] = '\0';
    if (pid)
        snprintf(pi->path, sizeof(pi->path), "%s/%u/ns/pid", pi->root, pid);
    else
        snprintf(pi->path, sizeof(pi->path), "%s/self/ns/pid", pi->root);
    ssize_t r = readlink(pi->path, out, len - 1);
    if (r >= 0) {
        out[r] = '\0';
        return;
    }
    if (errno != EINVAL)
        return;
    if (read_pidfile(pi, pid, "ns/pid") > 0) {
        snprintf(out, len, "%.*s", (int)strcspn(pi->buf, "\n"), pi->buf);
    }
}

void procinfo_sanitize(char *s)
{
    text_clean(s, strlen(s) + 1); /* controls, format characters, invalid UTF-8 (text.h) */
}

int procinfo_parse_stat(const char *buf, struct procinfo_stat *out)
{
    memset(out, 0, sizeof(*out));
    const char *open_paren = strchr(buf, '(');
    const char *close_paren = strrchr(buf, ')');
    if (!open_paren || !close_paren || close_paren < open_paren)
        return -1;
    size_t n = (size_t)(close_paren - open_paren - 1);
    if (n >= sizeof(out->comm))
        n = sizeof(out->comm) - 1;
    memcpy(out->comm, open_paren + 1, n);
    out->comm[n] = '\0';
    procinfo_sanitize(out->comm);
    /* Fields after comm, numbered as in proc(5): 3 state, 4 ppid … 14 utime,
     * 15 stime, 22 starttime, 24 rss, 28 startstack. */
    const char *p = close_paren + 1;
    int field = 2;
    unsigned long long v[29] = {0};
    bool have[29] = {false};
    while (*p && field < 28) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        field++;
        char *end;
        errno = 0;
        long long x = strtoll(p, &end, 10);
        if (end != p && errno == 0) {
            v[field] = (unsigned long long)x;
            have[field] = true;
        }
        while (*p && *p != ' ')
            p++;
    }
    if (!have[14] || !have[15] || !have[22])
        return -1;
    out->ppid = have[4] && v[4] <= INT32_MAX ? (int64_t)v[4] : -1;
    out->utime = v[14];
    out->stime = v[15];
    out->start_time = v[22];
    out->rss_pages = have[24] ? (int64_t)v[24] : -1;
    out->start_stack = have[28] ? v[28] : 0;
    return 0;
}

static const char *find_line(const char *text, const char *key)
{
    size_t k = strlen(key);
    const char *l = text;
    while (l && *l) {
        if (strncmp(l, key, k) == 0)
            return l + k;
        l = strchr(l, '\n');
        if (l)
            l++;
    }
    return NULL;
}

int procinfo_parse_nspid(const char *status, int64_t *out, int max)
{
    const char *p = find_line(status, "NSpid:");
    if (!p)
        return 0;
    int n = 0;
    while (n < max) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p < '0' || *p > '9')
            break;
        char *end;
        long long v = strtoll(p, &end, 10);
        if (v <= 0 || v > INT32_MAX) /* not a PID: 0 or a group target once cast */
            break;
        out[n++] = v;
        p = end;
    }
    return n;
}

long procinfo_parse_uid(const char *status)
{
    const char *p = find_line(status, "Uid:");
    if (!p)
        return -1;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p < '0' || *p > '9') /* strtol would take "-7" */
        return -1;
    char *end;
    long uid = strtol(p, &end, 10);
    return end == p || uid > UINT32_MAX - 1 ? -1 : uid;
}

static bool all_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    return n > 0;
}

/* A pod UID: 36 characters, dashes (cgroupfs driver) or underscores (systemd
 * driver) at 8, 13, 18, 23. */
static bool pod_uid(const char *s, size_t n, char *out)
{
    if (n < 36)
        return false;
    for (size_t i = 0; i < 36; i++) {
        char c = s[i];
        bool sep = i == 8 || i == 13 || i == 18 || i == 23;
        if (sep ? (c != '-' && c != '_') : !all_hex(&c, 1))
            return false;
        out[i] = sep ? '-' : c;
    }
    out[36] = '\0';
    return true;
}

void procinfo_parse_container(const char *cgroup, char *out, size_t len)
{
    static const struct {
        const char *prefix, *runtime;
    } scopes[] = {
        {"docker-", "docker"},
        {"cri-containerd-", "containerd"},
        {"crio-", "crio"},
        {"libpod-", "podman"},
    };
    char rt[16] = "", id[13] = "", pod[37] = "";
    const char *line = cgroup;
    while (line && *line) {
        const char *eol = strchr(line, '\n');
        size_t ll = eol ? (size_t)(eol - line) : strlen(line);
        /* hierarchy-id:controllers:path */
        const char *c1 = memchr(line, ':', ll);
        const char *c2 = c1 ? memchr(c1 + 1, ':', ll - (size_t)(c1 + 1 - line)) : NULL;
        const char *path = c2 ? c2 + 1 : line + ll;
        const char *end = line + ll;
        const char *prev = NULL;
        size_t prevlen = 0;
        while (path < end) {
            while (path < end && *path == '/')
                path++;
            const char *slash = memchr(path, '/', (size_t)(end - path));
            size_t cl = slash ? (size_t)(slash - path) : (size_t)(end - path);
            if (cl == 0)
                break;
            size_t base = cl;
            if (cl > 6 && (memcmp(path + cl - 6, ".scope", 6) == 0 ||
                           memcmp(path + cl - 6, ".slice", 6) == 0))
                base = cl - 6;
            if (!pod[0]) {
                /* "pod<uid>" (cgroupfs) or "kubepods-<qos>-pod<uid>.slice" */
                const char *q = NULL;
                if (base >= 39 && memcmp(path, "pod", 3) == 0)
                    q = path + 3;
                else if (base >= 40 && memcmp(path + base - 40, "-pod", 4) == 0)
                    q = path + base - 36;
                if (q && (size_t)(path + base - q) == 36)
                    pod_uid(q, 36, pod);
            }
            if (!id[0]) {
                for (size_t k = 0; k < sizeof(scopes) / sizeof(scopes[0]); k++) {
                    size_t pl = strlen(scopes[k].prefix);
                    if (base == pl + 64 && memcmp(path, scopes[k].prefix, pl) == 0 &&
                        all_hex(path + pl, 64)) {
                        snprintf(rt, sizeof(rt), "%s", scopes[k].runtime);
                        memcpy(id, path + pl, 12);
                        id[12] = '\0';
                    }
                }
                if (!id[0] && base == 64 && all_hex(path, 64)) {
                    /* cgroup v1 "/docker/<id>", or a pod's "/<id>" */
                    if (prev && prevlen == 6 && memcmp(prev, "docker", 6) == 0)
                        snprintf(rt, sizeof(rt), "docker");
                    memcpy(id, path, 12);
                    id[12] = '\0';
                }
            }
            prev = path;
            prevlen = cl;
            path += cl;
        }
        line = eol ? eol + 1 : NULL;
    }
    if (pod[0] && id[0])
        snprintf(out, len, "k8s:%s/%s:%s", pod, rt[0] ? rt : "cri", id);
    else if (pod[0])
        snprintf(out, len, "k8s:%s", pod);
    else if (id[0])
        snprintf(out, len, "%s:%s", rt[0] ? rt : "container", id);
    else if (len)
        out[0] = '\0';
}

int procinfo_open(struct procinfo **out, const char *proc_root)
{
    *out = NULL;
    struct procinfo *pi = calloc(1, sizeof(*pi));
    if (!pi)
        return -ENOMEM;
    snprintf(pi->root, sizeof(pi->root), "%s", proc_root ? proc_root : "/proc");
    pi->clk_tck = sysconf(_SC_CLK_TCK);
    pi->page_size = sysconf(_SC_PAGESIZE);
    if (pi->clk_tck <= 0)
        pi->clk_tck = 100;
    if (pi->page_size <= 0)
        pi->page_size = 4096;
    int64_t ns[NSPID_MAX];
    int self_n = read_pidfile(pi, 0, "status") > 0 ? procinfo_parse_nspid(pi->buf, ns, NSPID_MAX)
                                                   : 0;
    read_ns(pi, 0, pi->self_ns, sizeof(pi->self_ns));
    /* An unreadable namespace link (a kernel before 3.8, a bare fixture
     * tree) is taken as the host, as every monitor does. */
    if (!pi->self_ns[0] || strcmp(pi->self_ns, INIT_PID_NS) == 0)
        pi->mode = PROCINFO_NS_HOST;
    else if (self_n > 1)
        pi->mode = PROCINFO_NS_ANCESTOR;
    else
        pi->mode = PROCINFO_NS_OWN;
    pi->self_level = self_n > 1 ? self_n - 1 : 0;
    struct rlimit rl;
    pi->fd_budget = STAT_FD_MAX;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur / 4 < pi->fd_budget)
        pi->fd_budget = (size_t)(rl.rlim_cur / 4);
    *out = pi;
    return 0;
}

void procinfo_close(struct procinfo *pi)
{
    if (!pi)
        return;
    for (size_t i = 0; i < pi->n; i++) {
        if (pi->e[i].stat_fd >= 0)
            close(pi->e[i].stat_fd);
    }
    free(pi->e);
    free(pi->idx);
    free(pi);
}

static size_t idx_hash(uint32_t pid, size_t cap)
{
    return (size_t)(pid * 2654435761u) & (cap - 1);
}

static void idx_put(struct procinfo *pi, size_t i)
{
    size_t h = idx_hash(pi->e[i].pid, pi->idx_cap);
    while (pi->idx[h])
        h = (h + 1) & (pi->idx_cap - 1);
    pi->idx[h] = (uint32_t)i + 1;
}

/* Rebuild the index for e[0..n), growing it with the cache. -1 when it
 * cannot grow (lookups then fall back to a scan). */
static int idx_rebuild(struct procinfo *pi)
{
    size_t want = 64;
    while (want < 2 * pi->cap)
        want *= 2;
    if (want != pi->idx_cap) {
        uint32_t *n = realloc(pi->idx, want * sizeof(*n));
        if (!n)
            return -1;
        pi->idx = n;
        pi->idx_cap = want;
    }
    memset(pi->idx, 0, pi->idx_cap * sizeof(*pi->idx));
    for (size_t i = 0; i < pi->n; i++)
        idx_put(pi, i);
    return 0;
}

static struct pentry *find_pid(struct procinfo *pi, uint32_t pid)
{
    if (pi->idx_cap) {
        for (size_t h = idx_hash(pid, pi->idx_cap); pi->idx[h]; h = (h + 1) & (pi->idx_cap - 1)) {
            struct pentry *e = &pi->e[pi->idx[h] - 1];
            if (e->pid == pid)
                return e;
        }
        return NULL;
    }
    for (size_t i = 0; i < pi->n; i++) {
        if (pi->e[i].pid == pid)
            return &pi->e[i];
    }
    return NULL;
}

static void drop_fd(struct procinfo *pi, struct pentry *e)
{
    if (e->stat_fd >= 0) {
        close(e->stat_fd);
        e->stat_fd = -1;
        pi->nfds--;
    }
}

enum procinfo_ns procinfo_ns_mode(const struct procinfo *pi)
{
    return pi->mode;
}

void procinfo_begin(struct procinfo *pi, uint64_t now_ns)
{
    pi->now_ns = now_ns;
    pi->tick++;
}

void procinfo_end(struct procinfo *pi)
{
    size_t w = 0;
    for (size_t r = 0; r < pi->n; r++) {
        if (!pi->e[r].used) {
            drop_fd(pi, &pi->e[r]);
            continue;
        }
        pi->e[r].used = false;
        if (w != r)
            pi->e[w] = pi->e[r];
        w++;
    }
    bool moved = w != pi->n;
    pi->n = w;
    if (moved && idx_rebuild(pi) != 0) {
        free(pi->idx);
        pi->idx = NULL;
        pi->idx_cap = 0;
    }
}

static void user_name(struct procinfo *pi, long uid, char *out, size_t len)
{
    if (uid < 0) {
        out[0] = '\0';
        return;
    }
    for (size_t i = 0; i < pi->nuids; i++) {
        if (pi->uids[i].uid == uid) {
            snprintf(out, len, "%s", pi->uids[i].name);
            return;
        }
    }
    struct passwd pw, *res = NULL;
    char buf[1024];
    struct uid_name *u = &pi->uids[pi->nuids < UID_CACHE ? pi->nuids++ : pi->uid_next++ % UID_CACHE];
    u->uid = uid;
    /* Unknown to NSS (a container's user, say): the number, as ps shows it. */
    if (getpwuid_r((uid_t)uid, &pw, buf, sizeof(buf), &res) == 0 && res && res->pw_name)
        snprintf(u->name, sizeof(u->name), "%s", res->pw_name);
    else
        snprintf(u->name, sizeof(u->name), "%ld", uid);
    snprintf(out, len, "%s", u->name);
}

/* A cleared cache entry for pid (reusing the PID's old one: a reused PID
 * carries nothing over); NULL when the cache cannot grow. */
static struct pentry *entry_slot(struct procinfo *pi, uint32_t pid, uint64_t start_time)
{
    struct pentry *e = find_pid(pi, pid);
    if (e) {
        drop_fd(pi, e); /* PID reused: forget the old process */
    } else {
        if (pi->n == pi->cap) {
            size_t cap = pi->cap ? pi->cap * 2 : 32;
            struct pentry *ne = realloc(pi->e, cap * sizeof(*ne));
            if (!ne)
                return NULL;
            pi->e = ne;
            pi->cap = cap;
        }
        e = &pi->e[pi->n++];
        e->pid = pid;
        if (pi->idx_cap >= 2 * pi->cap)
            idx_put(pi, (size_t)(e - pi->e));
        else if (idx_rebuild(pi) != 0) {
            free(pi->idx);
            pi->idx = NULL;
            pi->idx_cap = 0;
        }
    }
    memset(e, 0, sizeof(*e));
    e->pid = pid;
    e->stat_fd = -1;
    e->start_time = start_time;
    e->local_pid = -1;
    return e;
}

/*
 * User (status) and command line of e; at first sight also the local PID
 * and the container (cgroup), which an exec does not change. On a re-read
 * what cannot be read now keeps what was read before: an exiting process
 * has an empty command line, and its status may be gone before its stat.
 */
static void read_facts(struct procinfo *pi, struct pentry *e, bool first)
{
    uint32_t pid = e->pid;
    long uid = -1;
    int64_t ns[NSPID_MAX] = {0};
    int nns = 0;
    if (read_pidfile(pi, pid, "status") > 0) {
        uid = procinfo_parse_uid(pi->buf);
        if (first)
            nns = procinfo_parse_nspid(pi->buf, ns, NSPID_MAX);
    }
    if (first && pi->mode == PROCINFO_NS_HOST) {
        e->local_pid = pid;
    } else if (first && nns > pi->self_level) {
        /* ancestor view: our level of its NSpid, if it is in our namespace */
        char their_ns[64];
        read_ns(pi, pid, their_ns, sizeof(their_ns));
        if (their_ns[0] && strcmp(their_ns, pi->self_ns) == 0)
            e->local_pid = ns[pi->self_level];
    }
    if (first || uid >= 0)
        user_name(pi, uid, e->user, sizeof(e->user));

    ssize_t n = read_pidfile(pi, pid, "cmdline");
    /* NUL-separated arguments; one trailing NUL */
    while (n > 0 && pi->buf[n - 1] == '\0')
        n--;
    if (n > 0) {
        for (ssize_t i = 0; i < n; i++) {
            if (pi->buf[i] == '\0' || pi->buf[i] == '\n')
                pi->buf[i] = ' ';
        }
        snprintf(e->command, sizeof(e->command), "%.*s", (int)n, pi->buf);
        procinfo_sanitize(e->command);
    }
    if (first && read_pidfile(pi, pid, "cgroup") > 0) {
        procinfo_parse_container(pi->buf, e->container, sizeof(e->container));
        procinfo_sanitize(e->container);
    }
}

/* What the facts of e were read with, and when to read them again. */
static void note_read(struct procinfo *pi, struct pentry *e, const struct procinfo_stat *st,
                      uint64_t after_ns)
{
    memcpy(e->comm, st->comm, sizeof(e->comm));
    e->start_stack = st->start_stack;
    e->reread_ns = pi->now_ns + after_ns;
}

/* The cache entry for the process st describes; *fresh when it was read
 * now (first sight, or the PID reused: another start time). NULL when the
 * cache cannot grow. */
static struct pentry *entry_get(struct procinfo *pi, uint32_t pid, const struct procinfo_stat *st,
                                bool *fresh)
{
    struct pentry *e = find_pid(pi, pid);
    *fresh = false;
    if (e && e->start_time == st->start_time && !e->absent_until)
        return e;
    e = entry_slot(pi, pid, st->start_time);
    if (!e)
        return NULL;
    *fresh = true;
    read_facts(pi, e, true);
    /* The first re-read comes between half the cadence and all of it after
     * first sight, spread by PID, so that processes seen together (all of
     * them when the monitor starts) are not all read again in one tick. */
    uint64_t spread = (uint64_t)((pid * 2654435761u) >> 22) * (REREAD_NS / 2) / 1024;
    note_read(pi, e, st, REREAD_NS / 2 + spread);
    e->cpu = metric_none("first sight: CPU % needs two samples");
    return e;
}

/*
 * A known process, once a tick: read its user and command line again when
 * it exec'd, or when they are PROCINFO_REREAD_S old. An exec shows in the
 * stat this tick read anyway: the kernel names the process after the file
 * it runs, and lays out the new stack at a new random address (ASLR), also
 * when python execs python. The stack address reads 0 in a process we may
 * not inspect (the access check that also guards /proc/PID/exe) and stays
 * put without ASLR; the time limit covers those, and a command line rewritten
 * in place (setproctitle). Not compared: the exe link. A stat() of it every
 * tick doubled the steady cost of a process (3.7 -> 7.2 us on the CI-class
 * VM, bench_procinfo), for nothing the stack address does not show.
 */
static void recheck(struct procinfo *pi, struct pentry *e, const struct procinfo_stat *st)
{
    if (pi->now_ns < e->reread_ns && st->start_stack == e->start_stack &&
        strcmp(st->comm, e->comm) == 0)
        return;
    read_facts(pi, e, false);
    note_read(pi, e, st, REREAD_NS);
}

static bool read_stat(struct procinfo *pi, uint32_t pid, struct procinfo_stat *st)
{
    return read_pidfile(pi, pid, "stat") > 0 && procinfo_parse_stat(pi->buf, st) == 0;
}

/* This tick's stat of a known process: one pread of its kept descriptor.
 * NULL-safe; false when it exited (or is not the process cached). */
static bool pread_stat(struct procinfo *pi, struct pentry *e, struct procinfo_stat *st)
{
    if (!e || e->stat_fd < 0)
        return false;
    ssize_t n = pread(e->stat_fd, pi->buf, sizeof(pi->buf) - 1, 0);
    if (n <= 0) {
        drop_fd(pi, e);
        return false;
    }
    pi->buf[n] = '\0';
    return procinfo_parse_stat(pi->buf, st) == 0 && st->start_time == e->start_time;
}

/* Keep the descriptor of a process seen for the first time, within budget. */
static void keep_fd(struct procinfo *pi, struct pentry *e)
{
    if (e->stat_fd >= 0 || pi->nfds >= pi->fd_budget)
        return;
    snprintf(pi->path, sizeof(pi->path), "%s/%u/stat", pi->root, e->pid);
    e->stat_fd = open(pi->path, O_RDONLY | O_CLOEXEC);
    if (e->stat_fd >= 0)
        pi->nfds++;
}

void procinfo_fill(struct procinfo *pi, struct gpu_process *p)
{
    p->local_pid = -1;
    p->name[0] = p->user[0] = p->command[0] = p->container[0] = '\0';
    if (pi->mode == PROCINFO_NS_OWN) {
        p->cpu_pct = p->rss_bytes =
            metric_none("not visible from this PID namespace (NVML lists host PIDs)");
        return;
    }
    struct procinfo_stat st;
    struct pentry *e = find_pid(pi, p->pid);
    static const char *const ABSENT = "no readable /proc entry (exited, or hidden by hidepid)";
    if (e && e->absent_until > pi->tick) {
        e->used = true;
        p->cpu_pct = p->rss_bytes = metric_none(ABSENT);
        return;
    }
    bool fresh = false;
    if (!pread_stat(pi, e, &st)) {
        if (!read_stat(pi, p->pid, &st)) {
            /* remember the miss for a few ticks: an open() per tick per
             * invisible process is most of the cost of a long list */
            e = entry_slot(pi, p->pid, 0);
            if (e) {
                e->used = true;
                e->absent_until = pi->tick + ABSENT_RETRY_TICKS;
            }
            p->cpu_pct = p->rss_bytes = metric_none(ABSENT);
            return;
        }
        e = entry_get(pi, p->pid, &st, &fresh);
        if (!e) {
            p->cpu_pct = p->rss_bytes = metric_none("out of memory");
            return;
        }
        keep_fd(pi, e);
    }
    e->used = true;
    if (e->cpu_tick != pi->tick) {
        if (!fresh)
            recheck(pi, e, &st);
        uint64_t ticks = st.utime + st.stime;
        if (e->have_cpu && pi->now_ns > e->cpu_ns && ticks >= e->cpu_ticks) {
            double secs = (double)(ticks - e->cpu_ticks) / (double)pi->clk_tck;
            double dt = (double)(pi->now_ns - e->cpu_ns) / 1e9;
            e->cpu = (struct metric){.value = secs / dt * 100.0, .src = MSRC_DIRECT};
        } else if (e->have_cpu) {
            e->cpu = metric_none("no time passed since the previous sample");
        }
        e->cpu_ticks = ticks;
        e->cpu_ns = pi->now_ns;
        e->have_cpu = true;
        e->cpu_tick = pi->tick;
    }
    p->start_time = st.start_time;
    p->local_pid = e->local_pid;
    p->cpu_pct = e->cpu;
    p->rss_bytes = st.rss_pages >= 0 ? metric_direct((double)st.rss_pages * (double)pi->page_size)
                                     : metric_none("no rss in stat");
    snprintf(p->name, sizeof(p->name), "%s", st.comm);
    snprintf(p->user, sizeof(p->user), "%s", e->user);
    snprintf(p->command, sizeof(p->command), "%s", e->command);
    snprintf(p->container, sizeof(p->container), "%s", e->container);
}

bool procinfo_alive(struct procinfo *pi, uint32_t pid, uint64_t start_time)
{
    if (pi->mode == PROCINFO_NS_OWN || start_time == 0)
        return false;
    struct procinfo_stat st;
    struct pentry *e = find_pid(pi, pid);
    if (e && e->start_time == start_time && pread_stat(pi, e, &st)) {
        e->used = true;
        return true;
    }
    if (!read_stat(pi, pid, &st) || st.start_time != start_time)
        return false;
    if (e && e->start_time == start_time)
        e->used = true;
    return true;
}
