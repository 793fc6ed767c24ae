/*
 * amdgpu_sysfs.c — a GPU's metrics from amdgpu's sysfs files, hwmon and
 * the gpu_metrics table (docs/metrics.md lists what each file feeds).
 * A file that is missing, unreadable or not a number as the kernel prints
 * one gives none with its path; the reads go through the GPU's reader
 * (amdgpu_io.c), bounded by the tick's deadline.
 */
#include "backend/amdgpu/amdgpu.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void amd_fmt(char *out, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, len, fmt, ap);
    va_end(ap);
}

/* Decimal digits at *p into *v; *p moves past them. 0, -1 when there is
 * no digit, -2 past 2^64 - 1. */
static int digits(const char **p, uint64_t *v)
{
    const char *q = *p;
    uint64_t x = 0;
    if (*q < '0' || *q > '9')
        return -1;
    for (; *q >= '0' && *q <= '9'; q++) {
        unsigned d = (unsigned)(*q - '0');
        if (x > (UINT64_MAX - d) / 10)
            return -2;
        x = x * 10 + d;
    }
    *p = q;
    *v = x;
    return 0;
}

/* What may follow a number in a sysfs file: the newline the kernel ends
 * it with (and spaces). */
static bool only_space(const char *p)
{
    while (*p == '\n' || *p == ' ' || *p == '\t')
        p++;
    return *p == '\0';
}

static const char WHY_EMPTY[] = "is empty";
static const char WHY_NAN[] = "is not a number";
static const char WHY_NEG[] = "is negative (only 0 and up)";

int amd_parse_u64(const char *text, uint64_t *v, const char **why)
{
    const char *p = text;
    uint64_t x;
    int rc = only_space(p) ? -3 : *p == '-' ? -4 : digits(&p, &x);
    if (rc == 0 && !only_space(p))
        rc = -1;
    if (rc == 0) {
        *v = x;
        return 0;
    }
    *why = rc == -3   ? WHY_EMPTY
           : rc == -4 ? WHY_NEG
           : rc == -2 ? "is out of range (past 2^64 - 1)"
                      : WHY_NAN;
    return -1;
}

int amd_parse_i64(const char *text, int64_t *v, const char **why)
{
    bool neg = *text == '-';
    const char *p = text + neg;
    uint64_t x;
    int rc = only_space(text) ? -3 : digits(&p, &x);
    if (rc == 0 && !only_space(p))
        rc = -1;
    if (rc == 0 && x > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
        rc = -2;
    if (rc == 0) {
        *v = neg ? (int64_t)(0 - x) : (int64_t)x;
        return 0;
    }
    *why = rc == -3 ? WHY_EMPTY : rc == -2 ? "is out of range (past 2^63)" : WHY_NAN;
    return -1;
}

/* The text of a refused number, for its reason: printable ASCII only,
 * cut at 24 bytes. */
static void shown(char *out, size_t len, const char *text)
{
    size_t n = 0;
    for (const char *p = text; *p && n + 1 < len; p++, n++)
        out[n] = *p >= 0x20 && *p < 0x7f && *p != '"' ? *p : '?';
    out[n] = '\0';
    if (n + 1 == len && n >= 3)
        memcpy(out + n - 3, "...", 3);
}

struct metric amd_file_metric(struct snapshot *s, struct amd_io *io, const char *dir,
                              const char *name, double scale, enum metric_id id)
{
    char path[AMD_PATH_LEN + 64], buf[64], txt[28], why_rd[AMD_WHY_LEN];
    amd_fmt(path, sizeof(path), "%s/%s", dir, name);
    if (amd_read_text(io, path, buf, sizeof(buf), why_rd, sizeof(why_rd)) != AMD_READ_OK)
        return metric_none(snapshot_note(s, "%s", why_rd));
    const struct metric_info *mi = metric_info(id);
    const char *why = NULL;
    double v = 0;
    /* hwmon's temperatures are signed (millidegrees); every other value is
     * a count, a size or a share, and a minus sign there is an error, not
     * the 2^64 - 5 strtoull would make of it */
    if (mi->min < 0) {
        int64_t x;
        if (amd_parse_i64(buf, &x, &why) == 0)
            v = (double)x * scale;
    } else {
        uint64_t x;
        if (amd_parse_u64(buf, &x, &why) == 0)
            v = (double)x * scale;
    }
    shown(txt, sizeof(txt), buf);
    if (why)
        return metric_none(snapshot_note(s, "%s: \"%s\" %s", path, txt, why));
    if (!(v >= mi->min && v <= mi->max))
        return metric_none(snapshot_note(s, "%s: \"%s\" is out of range (%s %g to %g %s)", path,
                                         txt, mi->name, mi->min, mi->max, mi->unit));
    return metric_direct(v);
}

/* The current level of a pp_dpm_* file: the line ending in '*'. */
static struct metric dpm_clock(struct snapshot *s, struct amd_io *io, const char *dir,
                               const char *name, enum metric_id id)
{
    char path[AMD_PATH_LEN + 64], buf[1024], why[AMD_WHY_LEN];
    amd_fmt(path, sizeof(path), "%s/%s", dir, name);
    if (amd_read_text(io, path, buf, sizeof(buf), why, sizeof(why)) != AMD_READ_OK)
        return metric_none(snapshot_note(s, "%s", why));
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        size_t n = strlen(line);
        while (n > 0 && line[n - 1] == ' ')
            n--;
        if (n == 0 || line[n - 1] != '*')
            continue;
        /* "1: 1420Mhz *": the level, the clock in whole MHz, the mark */
        const char *p = strchr(line, ':');
        uint64_t mhz;
        if (!p)
            break;
        for (p++; *p == ' '; p++)
            ;
        if (digits(&p, &mhz) != 0 || strncasecmp(p, "mhz", 3) != 0 ||
            !only_space(p + 3 + strspn(p + 3, " *")) || (double)mhz > metric_info(id)->max)
            break;
        return metric_direct((double)mhz);
    }
    return metric_none(snapshot_note(s, "%s: no current level (a line \"N: <MHz>Mhz *\")", path));
}

/* hwmon's temperature whose label is label, in °C. */
static struct metric hwmon_temp(struct snapshot *s, const struct amd_gpu *g, const char *label,
                                enum metric_id id)
{
    if (!g->hwmon[0])
        return metric_none(snapshot_note(s, "%s/hwmon: no hwmon directory", g->dev));
    char why[AMD_WHY_LEN] = "";
    for (int i = 1; i <= 8; i++) {
        char path[AMD_PATH_LEN + 32], buf[32], e[AMD_WHY_LEN];
        amd_fmt(path, sizeof(path), "%s/temp%d_label", g->hwmon, i);
        int rc = amd_read_text(g->io, path, buf, sizeof(buf), e, sizeof(e));
        if (rc == AMD_READ_STALLED)
            return metric_none(snapshot_note(s, "%s", e));
        if (rc != AMD_READ_OK && errno != ENOENT && !why[0])
            memcpy(why, e, sizeof(why)); /* a label there but unreadable: say so */
        if (rc != AMD_READ_OK || strcmp(buf, label) != 0)
            continue;
        char name[32];
        snprintf(name, sizeof(name), "temp%d_input", i);
        return amd_file_metric(s, g->io, g->hwmon, name, 0.001, id);
    }
    if (why[0])
        return metric_none(snapshot_note(s, "%s: no temp*_label \"%s\" read (%s)", g->hwmon,
                                         label, why));
    return metric_none(snapshot_note(s, "%s: no temp*_label \"%s\"", g->hwmon, label));
}

/* "16.0 GT/s PCIe" (or "16 GT/s" before 5.7) → the PCIe generation. */
static struct metric link_gen(struct snapshot *s, struct amd_io *io, const char *dir)
{
    char path[AMD_PATH_LEN + 32], buf[64], why[AMD_WHY_LEN];
    amd_fmt(path, sizeof(path), "%s/current_link_speed", dir);
    if (amd_read_text(io, path, buf, sizeof(buf), why, sizeof(why)) != AMD_READ_OK)
        return metric_none(snapshot_note(s, "%s", why));
    /* whole GT/s, then ".N" where the kernel prints a fraction, then " GT/s" */
    const char *p = buf;
    uint64_t whole = 0, tenth = 0;
    bool ok = digits(&p, &whole) == 0 && whole < 1000;
    if (ok && *p == '.') {
        p++;
        ok = *p >= '0' && *p <= '9';
        tenth = ok ? (uint64_t)(*p++ - '0') : 0;
    }
    if (ok && strncmp(p, " GT/s", 5) == 0) {
        static const unsigned speed10[] = {25, 50, 80, 160, 320, 640};
        for (int i = 0; i < 6; i++)
            if (whole * 10 + tenth == speed10[i])
                return metric_direct(i + 1);
    }
    return metric_none(snapshot_note(s, "%s: \"%s\" is no PCIe speed", path, buf));
}

/* m when it has a value, else the table's, else m (its reason). */
static struct metric either(struct metric m, struct metric alt)
{
    return metric_ok(&m) || !metric_ok(&alt) ? m : alt;
}

static struct metric with_path(struct snapshot *s, const char *path, struct metric m)
{
    if (!metric_ok(&m) && m.why)
        m.why = snapshot_note(s, "%s: %s", path, m.why);
    return m;
}

/* The clock-event reasons from two reads' residency counters
 * (amd_throttle_between): known from the second read of a table that has
 * them. */
static void throttle(struct snapshot *s, struct amd_gpu *g, struct device *d, const char *path,
                     const struct amd_gpu_metrics *gm)
{
    d->throttle_valid = false;
    d->throttle_mask = 0;
    if (!gm->res.ok)
        d->throttle_why = snapshot_note(
            s, "%s: %s", path,
            gm->why ? gm->why
                    : gm->format == 1 && gm->content >= 6
                          ? "throttle residencies not reported (all ones)"
                          : "no throttle residencies before format 1.6");
    else if (!g->res_prev.ok)
        d->throttle_why = "gpu_metrics throttle residencies: first read (the reasons need two)";
    else {
        d->throttle_valid = true;
        d->throttle_why = NULL;
        d->throttle_mask = amd_throttle_between(&g->res_prev, &gm->res);
    }
    g->res_prev = gm->res;
}

void amd_sample_gpu(struct snapshot *s, struct amd_gpu *g, struct device *d,
                    struct amd_gpu_metrics *gm)
{
    const char *dev = g->dev;
    char path[AMD_PATH_LEN + 32];
    amd_fmt(path, sizeof(path), "%s/gpu_metrics", dev);
    /* One read: the kernel returns at most a page. */
    static __thread unsigned char blob[8192];
    char rwhy[AMD_WHY_LEN];
    size_t n;
    if (amd_io_read(g->io, path, blob, sizeof(blob), &n, rwhy, sizeof(rwhy)) != AMD_READ_OK) {
        amd_metrics_decode(blob, 0, gm);
        const char *why = snapshot_note(s, "%s", rwhy);
        for (int k = 0; k < AMD_NUM_XCP; k++)
            gm->part_busy[k] = metric_none(why);
        gm->gfx_pct = gm->umc_pct = gm->power_w = gm->energy_j = gm->mem_c =
            gm->hbm_max_c = gm->hotspot_c = metric_none(why);
    } else {
        amd_metrics_decode(blob, n, gm);
        struct metric *all[] = {&gm->hotspot_c, &gm->mem_c, &gm->hbm_max_c, &gm->power_w,
                                &gm->gfx_pct, &gm->umc_pct, &gm->energy_j};
        for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
            *all[i] = with_path(s, path, *all[i]);
        for (int k = 0; k < AMD_NUM_XCP; k++)
            gm->part_busy[k] = with_path(s, path, gm->part_busy[k]);
    }

    struct amd_io *io = g->io;
    d->m[M_GPU_UTIL] =
        either(amd_file_metric(s, io, dev, "gpu_busy_percent", 1, M_GPU_UTIL), gm->gfx_pct);
    d->m[M_MEM_UTIL] =
        either(amd_file_metric(s, io, dev, "mem_busy_percent", 1, M_MEM_UTIL), gm->umc_pct);
    d->m[M_MEM_USED] = amd_file_metric(s, io, dev, "mem_info_vram_used", 1, M_MEM_USED);
    d->m[M_MEM_TOTAL] = amd_file_metric(s, io, dev, "mem_info_vram_total", 1, M_MEM_TOTAL);
    d->m[M_GTT_USED] = amd_file_metric(s, io, dev, "mem_info_gtt_used", 1, M_GTT_USED);
    d->m[M_GTT_TOTAL] = amd_file_metric(s, io, dev, "mem_info_gtt_total", 1, M_GTT_TOTAL);
    /* Multi-die parts (MI300) hide temp1 (edge): the hotspot stands in. */
    struct metric edge = hwmon_temp(s, g, "edge", M_TEMP);
    d->m[M_TEMP] = either(either(edge, hwmon_temp(s, g, "junction", M_TEMP)), gm->hotspot_c);
    d->m[M_MEM_TEMP] =
        either(either(hwmon_temp(s, g, "mem", M_MEM_TEMP), gm->mem_c), gm->hbm_max_c);
    if (g->hwmon[0]) {
        const char *hw = g->hwmon;
        struct metric avg = amd_file_metric(s, io, hw, "power1_average", 1e-6, M_POWER);
        struct metric in = amd_file_metric(s, io, hw, "power1_input", 1e-6, M_POWER);
        d->m[M_POWER] = either(either(avg, in), gm->power_w);
        d->m[M_POWER_LIMIT] = amd_file_metric(s, io, hw, "power1_cap", 1e-6, M_POWER_LIMIT);
        struct metric pwm = amd_file_metric(s, io, hw, "pwm1", 100.0 / 255.0, M_FAN);
        d->m[M_FAN] = pwm;
    } else {
        d->m[M_POWER] = gm->power_w;
        d->m[M_POWER_LIMIT] = d->m[M_FAN] =
            metric_none(snapshot_note(s, "%s/hwmon: no hwmon directory", dev));
    }
    d->m[M_ENERGY] = gm->energy_j;
    d->m[M_CLK_GFX] = dpm_clock(s, io, dev, "pp_dpm_sclk", M_CLK_GFX);
    d->m[M_CLK_MEM] = dpm_clock(s, io, dev, "pp_dpm_mclk", M_CLK_MEM);
    d->m[M_PCIE_GEN] = link_gen(s, io, dev);
    d->m[M_PCIE_WIDTH] = amd_file_metric(s, io, dev, "current_link_width", 1, M_PCIE_WIDTH);
    throttle(s, g, d, path, gm);
}
