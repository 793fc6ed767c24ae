/*
 * fuzz_check.h — what the /proc parsers promise for any input, checked the
 * same way by the fuzz targets (fuzz/fuzz_*.c) and by the corpus regression
 * test (tests/unit/test_fuzz_corpus.c). Each check returns NULL when every
 * promise held, else a static description of the first broken one.
 *
 * procstat inputs hold two samples: the bytes before the first NUL are the
 * previous /proc/stat, the bytes after it the current one; an input without a
 * NUL is compared with itself.
 */
#ifndef MIGMON_FUZZ_CHECK_H
#define MIGMON_FUZZ_CHECK_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <stdlib.h>

#include "system/cpu.h"
#include "system/meminfo.h"
#include "system/procinfo.h"

static inline int fuzz_metric_bad(const struct metric *m, double lo, double hi)
{
    if (m->src == MSRC_NONE)
        return 0;
    return m->src != MSRC_DIRECT || !isfinite(m->value) || m->value < lo || m->value > hi;
}

static inline const char *fuzz_check_stat_shape(const struct cpu_stat *st)
{
    if (st->ncores > st->cap || st->ncores > st->needed || st->needed > CPU_MAX_ID)
        return "procstat: core counts out of range";
    if (st->ncores < st->cap && st->ncores != st->needed)
        return "procstat: cores dropped although storage was left";
    for (size_t i = 0; i < st->ncores; i++) {
        const struct cpu_times *t = &st->cores[i];
        if (t->id < 0 || t->id >= CPU_MAX_ID || (i > 0 && t->id <= st->cores[i - 1].id))
            return "procstat: core ids not strictly ascending within [0, CPU_MAX_ID)";
        if (t->ok && t->busy + t->idle < t->busy)
            return "procstat: busy + idle overflows";
    }
    if (st->total.id != -1 || (st->total.ok && !st->total_seen))
        return "procstat: bad aggregate line state";
    return NULL;
}

static inline const char *fuzz_check_procstat(const uint8_t *data, size_t size)
{
    static struct cpu_times prev_t[CPU_MAX_ID], cur_t[CPU_MAX_ID], small_t[8];
    static struct metric pct[CPU_MAX_ID];
    const char *buf = (const char *)data;
    const char *nul = memchr(buf, '\0', size);
    size_t plen = nul ? (size_t)(nul - buf) : size;
    const char *cbuf = nul ? nul + 1 : buf;
    size_t clen = nul ? size - plen - 1 : size;

    struct cpu_stat prev = {.cores = prev_t, .cap = CPU_MAX_ID};
    struct cpu_stat cur = {.cores = cur_t, .cap = CPU_MAX_ID};
    cpu_parse_stat(buf, plen, &prev);
    cpu_parse_stat(cbuf, clen, &cur);
    const char *why;
    if ((why = fuzz_check_stat_shape(&prev)) || (why = fuzz_check_stat_shape(&cur)))
        return why;

    /* Too little storage: the same leading cores, and needed tells the truth. */
    struct cpu_stat small = {.cores = small_t, .cap = size % 9};
    cpu_parse_stat(cbuf, clen, &small);
    if ((why = fuzz_check_stat_shape(&small)))
        return why;
    if (small.needed != cur.needed ||
        small.ncores != (cur.needed < small.cap ? cur.needed : small.cap))
        return "procstat: small storage changed the count";
    for (size_t i = 0; i < small.ncores; i++) {
        const struct cpu_times *a = &small.cores[i], *b = &cur.cores[i];
        if (a->id != b->id || a->ok != b->ok ||
            (a->ok && (a->busy != b->busy || a->idle != b->idle)))
            return "procstat: small storage changed a core";
    }

    struct metric total;
    cpu_deltas(NULL, &cur, &total, pct);
    if (metric_ok(&total))
        return "procstat: first sample has a value";
    for (size_t i = 0; i < cur.ncores; i++)
        if (metric_ok(&pct[i]))
            return "procstat: first sample has a core value";
    cpu_deltas(&prev, &cur, &total, pct);
    if (fuzz_metric_bad(&total, 0, 100))
        return "procstat: total busy % outside [0, 100]";
    for (size_t i = 0; i < cur.ncores; i++)
        if (fuzz_metric_bad(&pct[i], 0, 100))
            return "procstat: core busy % outside [0, 100]";
    /* A sample against itself has no elapsed time: never a number. */
    cpu_deltas(&cur, &cur, &total, pct);
    if (metric_ok(&total))
        return "procstat: zero interval gave a total";
    for (size_t i = 0; i < cur.ncores; i++)
        if (metric_ok(&pct[i]))
            return "procstat: zero interval gave a core value";
    return NULL;
}

static inline const char *fuzz_check_meminfo(const uint8_t *data, size_t size)
{
    struct meminfo_raw raw;
    struct mem_metrics m;
    meminfo_parse((const char *)data, size, &raw);
    for (int f = 0; f < MI_COUNT; f++) {
        if (raw.state[f] != MI_ABSENT && raw.state[f] != MI_OK && raw.state[f] != MI_BAD)
            return "meminfo: bad field state";
        if (raw.state[f] == MI_OK && raw.kb[f] > MEMINFO_MAX_KB)
            return "meminfo: accepted an absurd value";
    }
    meminfo_derive(&raw, &m);
    const double max = (double)(MEMINFO_MAX_KB * 1024);
    const struct metric *all[] = {&m.total, &m.used,      &m.cached,     &m.buffers,
                                  &m.free,  &m.available, &m.swap_total, &m.swap_used};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        if (fuzz_metric_bad(all[i], 0, max))
            return "meminfo: value outside [0, 8 PiB]";
        if (!metric_ok(all[i]) && !all[i]->why)
            return "meminfo: none without a reason";
    }
    if (metric_ok(&m.total)) {
        if (m.total.value <= 0)
            return "meminfo: total of 0 reported";
        for (size_t i = 1; i < 6; i++)
            if (metric_ok(all[i]) && all[i]->value > m.total.value)
                return "meminfo: a part exceeds total";
        if (metric_ok(&m.used) && metric_ok(&m.cached) && metric_ok(&m.buffers) &&
            metric_ok(&m.free) &&
            m.used.value + m.cached.value + m.buffers.value + m.free.value != m.total.value)
            return "meminfo: used + cached + buffers + free != total";
    } else {
        for (size_t i = 1; i < 6; i++)
            if (metric_ok(all[i]))
                return "meminfo: RAM part without a total";
    }
    if (metric_ok(&m.swap_used) &&
        (!metric_ok(&m.swap_total) || m.swap_used.value > m.swap_total.value))
        return "meminfo: swap used exceeds swap total";
    return NULL;
}

/* Any C0 control, DEL or UTF-8 C1 control left in s. */
static inline int fuzz_has_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
            return 1;
    return 0;
}

/*
 * The per-process /proc parsers (src/system/procinfo.c) on one text used as
 * stat, status and cgroup at once: a stat parse names a comm that fits and
 * holds no control character; NSpid gives 0..max real PIDs (1..INT32_MAX:
 * a 0 or negative value would make kill() signal a group); the UID is -1 or
 * a number; the container fits and, sanitised, is inert; sanitising the
 * whole text leaves no control character and keeps its length.
 */
static inline const char *fuzz_check_procinfo(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return NULL;
    memcpy(text, data, size);
    text[size] = '\0';
    const char *why = NULL;
    struct procinfo_stat st;
    if (procinfo_parse_stat(text, &st) == 0 &&
        (strlen(st.comm) >= sizeof(st.comm) || fuzz_has_control(st.comm)))
        why = "procinfo: comm too long or with a control character";
    int64_t ns[8];
    int n = procinfo_parse_nspid(text, ns, 8);
    if (!why && (n < 0 || n > 8))
        why = "procinfo: NSpid count outside 0..8";
    for (int i = 0; !why && i < n; i++)
        if (ns[i] < 1 || ns[i] > INT32_MAX)
            why = "procinfo: NSpid entry that is not a PID";
    if (!why && procinfo_parse_uid(text) < -1)
        why = "procinfo: negative UID";
    char cont[PROC_CONTAINER_LEN + 8];
    memset(cont, 'X', sizeof(cont));
    procinfo_parse_container(text, cont, PROC_CONTAINER_LEN);
    if (!why && (memchr(cont, '\0', PROC_CONTAINER_LEN) == NULL ||
                 cont[PROC_CONTAINER_LEN] != 'X'))
        why = "procinfo: container id not terminated within its buffer";
    if (!why) {
        procinfo_sanitize(cont);
        if (fuzz_has_control(cont))
            why = "procinfo: control character left in a sanitised container id";
    }
    size_t len = strlen(text);
    procinfo_sanitize(text);
    if (!why && (fuzz_has_control(text) || strlen(text) != len))
        why = "procinfo: sanitize left a control character or changed the length";
    free(text);
    return why;
}

#endif
