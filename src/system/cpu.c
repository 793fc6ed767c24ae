/*
 * cpu.c — parse /proc/stat and derive busy percentages.
 *
 * Line format (fs/proc/stat.c): "cpu" or "cpuN", then the jiffy counters
 *   user nice system idle iowait irq softirq steal guest guest_nice
 * Kernels before 2.6.11 lack steal, before 2.6.24 guest, before 2.6.33
 * guest_nice: counters a kernel does not print count as 0. Fewer than the
 * four fields every 2.6 kernel prints makes the line malformed. Fields after
 * the tenth (none today) are ignored.
 *
 * iowait counts as idle, as in htop: it is time the CPU had nothing to run,
 * and the kernel moves time between idle and iowait after the fact under
 * NOHZ, which also makes iowait alone go backwards on some kernels. Comparing
 * idle+iowait as one sum keeps those reshuffles from blanking a tick.
 */
#include "system/cpu.h"

#include <string.h>

/* Counter positions in a cpu line. */
enum { F_USER, F_NICE, F_SYSTEM, F_IDLE, F_IOWAIT, F_IRQ, F_SOFTIRQ, F_STEAL, F_NFOLD };
#define CPU_MIN_FIELDS 4
#define CPU_MAX_FIELDS 10

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Parse one unsigned decimal at *p (stopping at end); advances *p. Fails on no
 * digits or on overflow of uint64_t. */
static bool parse_u64(const char **p, const char *end, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    if (s == end || *s < '0' || *s > '9')
        return false;
    while (s < end && *s >= '0' && *s <= '9') {
        if (__builtin_mul_overflow(v, 10, &v) ||
            __builtin_add_overflow(v, (uint64_t)(*s - '0'), &v))
            return false;
        s++;
    }
    *p = s;
    *out = v;
    return true;
}

/* Fill t from the counters in [p, end) (end is the '\n'). */
static void parse_counters(const char *p, const char *end, struct cpu_times *t)
{
    uint64_t f[F_NFOLD] = {0};
    int n = 0;
    *t = (struct cpu_times){.id = t->id, .ok = false};
    for (;;) {
        while (p < end && is_blank(*p))
            p++;
        if (p == end)
            break;
        uint64_t v;
        if (!parse_u64(&p, end, &v))
            return; /* a sign, a letter, an overflow: the whole line is suspect */
        if (p < end && !is_blank(*p))
            return;
        if (n < F_NFOLD)
            f[n] = v;
        n++;
    }
    if (n < CPU_MIN_FIELDS)
        return;
    uint64_t busy = 0, idle = 0;
    static const int busy_f[] = {F_USER, F_NICE, F_SYSTEM, F_IRQ, F_SOFTIRQ, F_STEAL};
    for (size_t i = 0; i < sizeof(busy_f) / sizeof(busy_f[0]); i++)
        if (__builtin_add_overflow(busy, f[busy_f[i]], &busy))
            return;
    if (__builtin_add_overflow(f[F_IDLE], f[F_IOWAIT], &idle))
        return;
    /* busy + idle is the denominator of every later delta: it must fit too. */
    uint64_t sum;
    if (__builtin_add_overflow(busy, idle, &sum))
        return;
    t->busy = busy;
    t->idle = idle;
    t->ok = true;
}

/* "cpu" followed by a blank: -1. "cpuN" followed by a blank: N. Anything
 * else (other lines, ids out of range, "cpu" at end of line): -2. *p is left
 * after the name. */
static int parse_cpu_name(const char **p, const char *end)
{
    const char *s = *p;
    if (end - s < 3 || memcmp(s, "cpu", 3) != 0)
        return -2;
    s += 3;
    if (s < end && is_blank(*s)) {
        *p = s;
        return -1;
    }
    int id = 0;
    const char *digits = s;
    while (s < end && *s >= '0' && *s <= '9') {
        id = id * 10 + (*s - '0');
        if (id >= CPU_MAX_ID)
            return -2;
        s++;
    }
    if (s == digits || s == end || !is_blank(*s))
        return -2;
    *p = s;
    return id;
}

void cpu_parse_stat(const char *buf, size_t len, struct cpu_stat *st)
{
    st->total = (struct cpu_times){.id = -1, .ok = false};
    st->total_seen = false;
    st->ncores = 0;
    st->needed = 0;
    int last_id = -1;
    const char *p = buf, *end = buf + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            break; /* a fragment: the read was cut short */
        const char *s = p;
        p = nl + 1;
        int id = parse_cpu_name(&s, nl);
        if (id == -2)
            continue;
        if (id == -1) {
            if (st->total_seen)
                continue; /* the kernel prints one; keep the first */
            st->total_seen = true;
            parse_counters(s, nl, &st->total);
            continue;
        }
        if (id <= last_id)
            continue;
        last_id = id;
        st->needed++;
        if (st->ncores < st->cap) {
            struct cpu_times *t = &st->cores[st->ncores++];
            t->id = id;
            parse_counters(s, nl, t);
        }
    }
}

struct metric cpu_busy_pct(const struct cpu_times *prev, const struct cpu_times *cur)
{
    if (!prev)
        return metric_none("first sample: no delta yet");
    if (!prev->ok || !cur->ok)
        return metric_none("malformed /proc/stat line");
    /* 64-bit jiffy counters do not wrap in practice; going backwards means a
     * hotplug reset, a kernel accounting quirk or a different machine. */
    if (cur->busy < prev->busy || cur->idle < prev->idle)
        return metric_none("counter went backwards");
    uint64_t db = cur->busy - prev->busy;
    /* Cannot overflow: it is at most cur->busy + cur->idle, which
     * parse_counters() checked fits. */
    uint64_t dt = db + (cur->idle - prev->idle);
    if (dt == 0)
        return metric_none("no clock ticks elapsed");
    /* Divide first: db <= dt, and rounding is monotonic, so the quotient is
     * at most 1 and the result at most 100. 100.0 * db / dt could round
     * past 100 once counters exceed 2^53 (found by fuzz/fuzz_procstat). */
    return metric_direct(100.0 * ((double)db / (double)dt));
}

void cpu_deltas(const struct cpu_stat *prev, const struct cpu_stat *cur, struct metric *total,
                struct metric *pct)
{
    if (!prev) {
        *total = cpu_busy_pct(NULL, &cur->total);
        for (size_t i = 0; i < cur->ncores; i++)
            pct[i] = metric_none("first sample: no delta yet");
        return;
    }
    if (!prev->total_seen || !cur->total_seen)
        *total = metric_none("no aggregate cpu line in /proc/stat");
    else
        *total = cpu_busy_pct(&prev->total, &cur->total);
    /* Both lists ascend by id: one merge pass matches them. */
    size_t j = 0;
    for (size_t i = 0; i < cur->ncores; i++) {
        int id = cur->cores[i].id;
        while (j < prev->ncores && prev->cores[j].id < id)
            j++;
        if (j < prev->ncores && prev->cores[j].id == id)
            pct[i] = cpu_busy_pct(&prev->cores[j], &cur->cores[i]);
        else
            pct[i] = metric_none("core was offline at the previous sample");
    }
}
