/*
 * meminfo.c — parse /proc/meminfo and derive htop's RAM breakdown.
 *
 * Lines look like "MemTotal:       24683620 kB" (fs/proc/meminfo.c,
 * show_val_kb). Every field we read is in kB; a line without the unit, with a
 * sign, or with more digits than fit is BAD, and so is a key that appears
 * twice, since we could not tell which one to believe.
 */
#include "system/meminfo.h"

#include <string.h>

/* clang-format off */
static const struct {
    const char *key;
    size_t len;
} mi_keys[MI_COUNT] = {
#define K(e, s) [e] = {s, sizeof(s) - 1}
    K(MI_MEM_TOTAL, "MemTotal"),
    K(MI_MEM_FREE, "MemFree"),
    K(MI_MEM_AVAILABLE, "MemAvailable"),
    K(MI_BUFFERS, "Buffers"),
    K(MI_CACHED, "Cached"),
    K(MI_SRECLAIMABLE, "SReclaimable"),
    K(MI_SHMEM, "Shmem"),
    K(MI_SWAP_TOTAL, "SwapTotal"),
    K(MI_SWAP_FREE, "SwapFree"),
#undef K
};
/* clang-format on */

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* The value part of a line, [p, end) after the colon: blanks, digits, blanks,
 * "kB", blanks. */
static bool parse_kb(const char *p, const char *end, uint64_t *out)
{
    while (p < end && is_blank(*p))
        p++;
    if (p == end || *p < '0' || *p > '9')
        return false;
    uint64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > MEMINFO_MAX_KB) /* checked per digit, so v*10 never overflows */
            return false;
        p++;
    }
    if (p == end || !is_blank(*p))
        return false;
    while (p < end && is_blank(*p))
        p++;
    if (end - p < 2 || p[0] != 'k' || p[1] != 'B')
        return false;
    p += 2;
    while (p < end && is_blank(*p))
        p++;
    if (p != end)
        return false;
    *out = v;
    return true;
}

void meminfo_parse(const char *buf, size_t len, struct meminfo_raw *out)
{
    memset(out, 0, sizeof(*out));
    const char *p = buf, *end = buf + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            break; /* a fragment: the read was cut short */
        const char *line = p;
        p = nl + 1;
        const char *colon = memchr(line, ':', (size_t)(nl - line));
        if (!colon)
            continue;
        size_t klen = (size_t)(colon - line);
        for (int f = 0; f < MI_COUNT; f++) {
            if (klen != mi_keys[f].len || memcmp(line, mi_keys[f].key, klen) != 0)
                continue;
            uint64_t v;
            if (out->state[f] != MI_ABSENT || !parse_kb(colon + 1, nl, &v)) {
                out->state[f] = MI_BAD;
            } else {
                out->kb[f] = v;
                out->state[f] = MI_OK;
            }
            break;
        }
    }
}

static const char *why_not(const struct meminfo_raw *raw, enum meminfo_field f)
{
    if (raw->state[f] == MI_OK)
        return NULL;
    if (raw->state[f] == MI_ABSENT)
        return f == MI_MEM_AVAILABLE ? "no MemAvailable in /proc/meminfo (kernel before 3.14)"
                                     : "field missing from /proc/meminfo";
    return "malformed /proc/meminfo line";
}

static struct metric kb_metric(uint64_t kb)
{
    return metric_direct((double)(kb * 1024));
}

void meminfo_none(struct mem_metrics *out, const char *why)
{
    struct metric n = metric_none(why);
    *out = (struct mem_metrics){n, n, n, n, n, n, n, n};
}

void meminfo_derive(const struct meminfo_raw *raw, struct mem_metrics *out)
{
    static const char *const too_big = "larger than MemTotal";
    meminfo_none(out, NULL);
    const uint64_t *kb = raw->kb;
    const char *why;

    /* RAM: without MemTotal nothing can be checked for sanity. */
    if ((why = why_not(raw, MI_MEM_TOTAL)) || kb[MI_MEM_TOTAL] == 0) {
        meminfo_none(out, why ? why : "MemTotal is 0");
    } else {
        uint64_t total = kb[MI_MEM_TOTAL];
        out->total = kb_metric(total);

        /* Each part: present and not above total. */
        struct {
            enum meminfo_field f;
            struct metric *m;
        } parts[] = {
            {MI_MEM_FREE, &out->free},
            {MI_MEM_AVAILABLE, &out->available},
            {MI_BUFFERS, &out->buffers},
        };
        for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
            enum meminfo_field f = parts[i].f;
            if ((why = why_not(raw, f)))
                *parts[i].m = metric_none(why);
            else if (kb[f] > total)
                *parts[i].m = metric_none(too_big);
            else
                *parts[i].m = kb_metric(kb[f]);
        }

        /* cached = Cached + SReclaimable - Shmem: page cache plus reclaimable
         * slab, minus tmpfs/shared memory, which sits in Cached but cannot be
         * dropped. No term fits over 2^43, so the sum cannot overflow. */
        uint64_t cached = 0;
        bool cached_ok = false;
        if ((why = why_not(raw, MI_CACHED)) || (why = why_not(raw, MI_SRECLAIMABLE)) ||
            (why = why_not(raw, MI_SHMEM))) {
            out->cached = metric_none(why);
        } else if (kb[MI_CACHED] + kb[MI_SRECLAIMABLE] < kb[MI_SHMEM]) {
            out->cached = metric_none("Shmem larger than Cached + SReclaimable");
        } else if ((cached = kb[MI_CACHED] + kb[MI_SRECLAIMABLE] - kb[MI_SHMEM]) > total) {
            out->cached = metric_none(too_big);
        } else {
            out->cached = kb_metric(cached);
            cached_ok = true;
        }

        /* used = MemTotal - MemFree - Buffers - cached */
        if (!metric_ok(&out->free) || !metric_ok(&out->buffers) || !cached_ok) {
            out->used = metric_none("needs MemFree, Buffers and cached");
        } else {
            uint64_t parts_sum = kb[MI_MEM_FREE] + kb[MI_BUFFERS] + cached;
            if (parts_sum > total)
                out->used = metric_none("MemFree + Buffers + cached larger than MemTotal");
            else
                out->used = kb_metric(total - parts_sum);
        }
    }

    /* Swap: SwapTotal 0 with SwapFree 0 is a real "no swap", reported as 0. */
    if ((why = why_not(raw, MI_SWAP_TOTAL))) {
        out->swap_total = metric_none(why);
        out->swap_used = metric_none(why);
        return;
    }
    out->swap_total = kb_metric(kb[MI_SWAP_TOTAL]);
    if ((why = why_not(raw, MI_SWAP_FREE)))
        out->swap_used = metric_none(why);
    else if (kb[MI_SWAP_FREE] > kb[MI_SWAP_TOTAL])
        out->swap_used = metric_none("SwapFree larger than SwapTotal");
    else
        out->swap_used = kb_metric(kb[MI_SWAP_TOTAL] - kb[MI_SWAP_FREE]);
}
