/*
 * prom.c — the Prometheus text exposition of a snapshot (prom.h).
 *
 * The page is written family by family: a family's HELP and TYPE lines
 * come just before its first sample and only when it has one, and all of
 * its samples follow one another, as format 0.0.4 requires. A value that
 * is none is left out (never written as 0); every value read from a
 * struct metric carries a `source` label (docs/prometheus.md says why).
 *
 * Each device's label set is escaped once per render into scratch space
 * kept in struct prom_buf; a device whose label set repeats an earlier
 * one (two MIG devices whose instance ids could not be read) is left out,
 * so every name+labels pair on the page is unique.
 */
#include "export/prom.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NO_LABELS SIZE_MAX

struct ctx {
    struct prom_buf *b;
    const struct snapshot *s;
    bool oom;
    char name[96];
    const char *type, *help;
    bool header_done;
    bool any_label; /* the open sample has written '{' */
};

/* Room for more bytes (and a NUL) in *p; false after a failed allocation,
 * which sticks, so a render stops growing the page once memory ran out. */
static bool grow(char **p, size_t len, size_t *cap, size_t more, bool *oom)
{
    if (*oom)
        return false;
    if (len + more + 1 <= *cap)
        return true;
    size_t n = *cap ? *cap : 4096;
    while (n < len + more + 1)
        n *= 2;
    char *q = realloc(*p, n);
    if (!q) {
        *oom = true;
        return false;
    }
    *p = q;
    *cap = n;
    return true;
}

static void put(struct ctx *c, const char *s, size_t n)
{
    struct prom_buf *b = c->b;
    if (!grow(&b->p, b->len, &b->cap, n, &c->oom))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void puts_(struct ctx *c, const char *s)
{
    put(c, s, strlen(s));
}

static void putc_(struct ctx *c, char ch)
{
    put(c, &ch, 1);
}

__attribute__((format(printf, 2, 3))) static void putf(struct ctx *c, const char *fmt, ...)
{
    struct prom_buf *b = c->b;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!grow(&b->p, b->len, &b->cap, attempt ? 0 : 64, &c->oom))
            return;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        if (!grow(&b->p, b->len, &b->cap, (size_t)n, &c->oom))
            return;
    }
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when it is not one
 * (overlong forms and surrogates included). */
static size_t utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return (s[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80 ? 4
                                                                                       : 0;
    }
    return 0;
}

size_t prom_escape_label(const char *v, char *out, size_t outlen)
{
    size_t o = 0;
    if (outlen == 0)
        return 0;
    const unsigned char *s = (const unsigned char *)(v ? v : "");
    while (*s) {
        char tmp[4];
        size_t n = 1, take = 1;
        const char *src = tmp;
        if (*s == '\\' || *s == '"') {
            tmp[0] = '\\';
            tmp[1] = (char)*s;
            n = 2;
        } else if (*s == '\n') {
            tmp[0] = '\\';
            tmp[1] = 'n';
            n = 2;
        } else if (*s < 0x20 || *s == 0x7f) {
            tmp[0] = '?';
        } else if ((take = utf8_len(s)) == 0) {
            tmp[0] = '?';
            take = 1;
        } else {
            src = (const char *)s;
            n = take;
        }
        if (o + n >= outlen)
            break;
        memcpy(out + o, src, n);
        o += n;
        s += take;
    }
    out[o] = '\0';
    return o;
}

static void put_escaped(struct ctx *c, const char *v)
{
    struct prom_buf *b = c->b;
    size_t n = strlen(v ? v : "");
    if (!grow(&b->p, b->len, &b->cap, 2 * n + 1, &c->oom))
        return;
    b->len += prom_escape_label(v, b->p + b->len, b->cap - b->len);
}

static void put_value(struct ctx *c, double v)
{
    if (isnan(v))
        puts_(c, "NaN");
    else if (isinf(v))
        puts_(c, v > 0 ? "+Inf" : "-Inf");
    else
        putf(c, "%.15g", v);
}

/* ---- families and samples ------------------------------------------------ */

static void family(struct ctx *c, const char *name, const char *type, const char *help)
{
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->type = type;
    c->help = help;
    c->header_done = false;
}

static void sample_open(struct ctx *c)
{
    if (!c->header_done) {
        putf(c, "# HELP %s %s\n# TYPE %s %s\n", c->name, c->help, c->name, c->type);
        c->header_done = true;
    }
    puts_(c, c->name);
    c->any_label = false;
}

/* Labels already escaped: `k="v",k="v"` (may be ""). */
static void label_raw(struct ctx *c, const char *labels)
{
    if (!labels || !labels[0])
        return;
    putc_(c, c->any_label ? ',' : '{');
    puts_(c, labels);
    c->any_label = true;
}

static void label(struct ctx *c, const char *k, const char *v)
{
    putc_(c, c->any_label ? ',' : '{');
    puts_(c, k);
    puts_(c, "=\"");
    put_escaped(c, v);
    putc_(c, '"');
    c->any_label = true;
}

static void sample_close(struct ctx *c, double v)
{
    if (c->any_label)
        putc_(c, '}');
    putc_(c, ' ');
    put_value(c, v);
    putc_(c, '\n');
}

static void sample_plain(struct ctx *c, const char *labels, double v)
{
    sample_open(c);
    label_raw(c, labels);
    sample_close(c, v);
}

/* A metric's value times scale, with its source; nothing when none. */
static void sample_metric(struct ctx *c, const char *labels, const struct metric *m, double scale)
{
    if (!metric_ok(m))
        return;
    sample_open(c);
    label_raw(c, labels);
    label(c, "source", metric_source_name(m->src));
    sample_close(c, m->value * scale);
}

/* ---- per-device label sets ---------------------------------------------- */

enum { LAB_MIGMON, LAB_DCGM, LAB_N };

static const struct device *parent_of(const struct snapshot *s, const struct device *d)
{
    if (d->kind == DEV_MIG && d->parent_pos >= 0 && (size_t)d->parent_pos < s->ndevices)
        return &s->devices[d->parent_pos];
    return d;
}

/* Append `k="v"` (escaped) to the label scratch. */
static void lab_add(struct ctx *c, bool *first, const char *k, const char *v)
{
    struct prom_buf *b = c->b;
    size_t n = strlen(k) + 2 * strlen(v ? v : "") + 5;
    if (!grow(&b->lab, b->lab_len, &b->lab_cap, n, &c->oom))
        return;
    char *p = b->lab + b->lab_len;
    size_t o = (size_t)sprintf(p, "%s%s=\"", *first ? "" : ",", k);
    o += prom_escape_label(v, p + o, b->lab_cap - b->lab_len - o);
    p[o++] = '"';
    p[o] = '\0';
    b->lab_len += o;
    *first = false;
}

static void lab_add_int(struct ctx *c, bool *first, const char *k, int v)
{
    char t[16] = "";
    if (v >= 0)
        snprintf(t, sizeof(t), "%d", v);
    lab_add(c, first, k, t);
}

static void lab_end(struct ctx *c)
{
    struct prom_buf *b = c->b;
    if (grow(&b->lab, b->lab_len, &b->lab_cap, 0, &c->oom))
        b->lab[b->lab_len++] = '\0';
}

/* "1c.3g.40gb" (a compute instance's profile) -> "3g.40gb", the GPU
 * instance's, which is what dcgm-exporter's GPU_I_PROFILE holds. */
static const char *gi_profile(const char *p)
{
    const char *dot = strchr(p, '.');
    if (dot && dot > p && dot[-1] == 'c' && strchr(dot + 1, '.'))
        return dot + 1;
    return p;
}

static void build_labels(struct ctx *c)
{
    const struct snapshot *s = c->s;
    struct prom_buf *b = c->b;
    b->lab_len = 0;
    size_t need = s->ndevices * LAB_N;
    if (need > b->off_cap) {
        size_t *o = realloc(b->off, need * sizeof(*o));
        if (!o) {
            c->oom = true;
            return;
        }
        b->off = o;
        b->off_cap = need;
    }
    const char *host = s->host_ok ? s->host.hostname : "";
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i], *p = parent_of(s, d);
        bool first = true;
        b->off[i * LAB_N + LAB_MIGMON] = b->lab_len;
        lab_add_int(c, &first, "gpu", d->index);
        lab_add(c, &first, "uuid", d->kind == DEV_MIG ? d->parent_uuid : d->uuid);
        lab_add(c, &first, "pci_bus_id", d->pci_bus_id);
        lab_add(c, &first, "model", p->name);
        if (d->kind == DEV_MIG) {
            lab_add_int(c, &first, "gpu_instance_id", d->gi_id);
            lab_add_int(c, &first, "compute_instance_id", d->ci_id);
            lab_add(c, &first, "mig_profile", d->profile);
            lab_add(c, &first, "mig_uuid", d->uuid);
        }
        lab_end(c);
        first = true;
        b->off[i * LAB_N + LAB_DCGM] = b->lab_len;
        char dev[24];
        snprintf(dev, sizeof(dev), "nvidia%d", d->index);
        lab_add_int(c, &first, "gpu", d->index);
        lab_add(c, &first, "UUID", d->kind == DEV_MIG ? d->parent_uuid : d->uuid);
        lab_add(c, &first, "pci_bus_id", d->pci_bus_id);
        lab_add(c, &first, "device", dev);
        lab_add(c, &first, "modelName", p->name);
        lab_add(c, &first, "Hostname", host);
        if (d->kind == DEV_MIG) {
            lab_add(c, &first, "GPU_I_PROFILE", gi_profile(d->profile));
            lab_add_int(c, &first, "GPU_I_ID", d->gi_id);
        }
        lab_end(c);
    }
    if (c->oom)
        return;
    /* A repeated label set is left out. For dcgm that is every compute
     * instance after the first of a GPU instance: dcgm-exporter's labels
     * name GPU instances only. */
    for (size_t i = 0; i < s->ndevices; i++)
        for (int k = 0; k < LAB_N; k++) {
            const char *li = b->lab + b->off[i * LAB_N + k];
            for (size_t j = 0; j < i; j++) {
                size_t oj = b->off[j * LAB_N + k];
                if (oj != NO_LABELS && strcmp(li, b->lab + oj) == 0) {
                    b->off[i * LAB_N + k] = NO_LABELS;
                    break;
                }
            }
        }
}

/* The device's label set of kind k, or NULL when it is left out. */
static const char *labels_of(const struct ctx *c, size_t i, int k)
{
    size_t o = c->b->off[i * LAB_N + k];
    return o == NO_LABELS ? NULL : c->b->lab + o;
}

/* ---- the migmon_ series ------------------------------------------------- */

#define GAUGE "gauge"
#define COUNTER "counter"

struct fam {
    enum metric_id id;
    const char *suffix; /* after migmon_gpu_ / migmon_mig_ */
    const char *type;
    double scale; /* from the snapshot's unit to the base unit */
    const char *help;
};

/* Device metrics. On MIG devices only the ones that describe the instance
 * (not metric_info()->gpu_wide) are written, as migmon_mig_*; the parent's
 * values are on its migmon_gpu_* series. */
static const struct fam fams[] = {
    {M_GPU_UTIL, "utilization_ratio", GAUGE, 0.01,
     "Busy share, 0-1: NVML utilization, GPM graphics activity, or an estimate (see source)."},
    {M_MEM_UTIL, "memory_utilization_ratio", GAUGE, 0.01,
     "Memory busy share, 0-1: NVML memory controller or GPM DRAM bandwidth (see source)."},
    {M_SM_UTIL, "sm_utilization_ratio", GAUGE, 0.01, "SM activity, 0-1."},
    {M_MEM_USED, "memory_used_bytes", GAUGE, 1, "Frame buffer memory in use, bytes."},
    {M_MEM_TOTAL, "memory_total_bytes", GAUGE, 1, "Frame buffer memory, bytes."},
    {M_TEMP, "temperature_celsius", GAUGE, 1, "GPU core temperature, degrees Celsius."},
    {M_POWER, "power_watts", GAUGE, 1, "Power draw, watts."},
    {M_POWER_LIMIT, "power_limit_watts", GAUGE, 1, "Enforced power limit, watts."},
    {M_ENERGY, "energy_joules_total", COUNTER, 1,
     "Energy consumed since the driver was loaded, joules."},
    {M_CLK_GFX, "graphics_clock_hertz", GAUGE, 1e6, "Graphics clock, hertz."},
    {M_CLK_SM, "sm_clock_hertz", GAUGE, 1e6, "SM clock, hertz."},
    {M_CLK_MEM, "memory_clock_hertz", GAUGE, 1e6, "Memory clock, hertz."},
    {M_PSTATE, "performance_state", GAUGE, 1, "Performance state, 0 (P0, fastest) to 15."},
    {M_PCIE_GEN, "pcie_link_generation", GAUGE, 1, "Current PCIe link generation."},
    {M_PCIE_WIDTH, "pcie_link_width", GAUGE, 1, "Current PCIe link width, lanes."},
    {M_PCIE_TX, "pcie_tx_bytes_per_second", GAUGE, 1, "PCIe transmit throughput, bytes/s."},
    {M_PCIE_RX, "pcie_rx_bytes_per_second", GAUGE, 1, "PCIe receive throughput, bytes/s."},
    {M_ENC_UTIL, "encoder_utilization_ratio", GAUGE, 0.01, "Video encoder busy share, 0-1."},
    {M_DEC_UTIL, "decoder_utilization_ratio", GAUGE, 0.01, "Video decoder busy share, 0-1."},
    {M_ECC_MODE, "ecc_enabled", GAUGE, 1, "ECC mode: 1 enabled, 0 disabled."},
    {M_ECC_CORR, "ecc_corrected_errors_total", COUNTER, 1,
     "Corrected (single-bit) ECC errors since the driver was loaded."},
    {M_ECC_UNCORR, "ecc_uncorrected_errors_total", COUNTER, 1,
     "Uncorrected (double-bit) ECC errors since the driver was loaded."},
    {M_TEMP_SLOWDOWN, "slowdown_temperature_celsius", GAUGE, 1,
     "Temperature at which the GPU slows down, degrees Celsius."},
    {M_TEMP_SHUTDOWN, "shutdown_temperature_celsius", GAUGE, 1,
     "Temperature at which the GPU shuts down, degrees Celsius."},
    {M_FAN, "fan_speed_ratio", GAUGE, 0.01, "Fan speed as a share of its maximum."},
    {M_SM_OCCUPANCY, "sm_occupancy_ratio", GAUGE, 0.01,
     "Resident warps as a share of the maximum (GPM), 0-1."},
    {M_TENSOR_UTIL, "tensor_utilization_ratio", GAUGE, 0.01, "Tensor pipe activity (GPM), 0-1."},
    {M_DFMA_TENSOR_UTIL, "dfma_tensor_utilization_ratio", GAUGE, 0.01,
     "DFMA tensor pipe activity (GPM), 0-1."},
    {M_HMMA_TENSOR_UTIL, "hmma_tensor_utilization_ratio", GAUGE, 0.01,
     "HMMA tensor pipe activity (GPM), 0-1."},
    {M_IMMA_TENSOR_UTIL, "imma_tensor_utilization_ratio", GAUGE, 0.01,
     "IMMA tensor pipe activity (GPM), 0-1."},
    {M_FP64_UTIL, "fp64_utilization_ratio", GAUGE, 0.01, "FP64 pipe activity (GPM), 0-1."},
    {M_FP32_UTIL, "fp32_utilization_ratio", GAUGE, 0.01, "FP32 pipe activity (GPM), 0-1."},
    {M_FP16_UTIL, "fp16_utilization_ratio", GAUGE, 0.01, "FP16 pipe activity (GPM), 0-1."},
    {M_INT_UTIL, "integer_utilization_ratio", GAUGE, 0.01, "Integer pipe activity (GPM), 0-1."},
    {M_NVLINK_TX, "nvlink_tx_bytes_per_second", GAUGE, 1, "NVLink transmit throughput, bytes/s."},
    {M_NVLINK_RX, "nvlink_rx_bytes_per_second", GAUGE, 1, "NVLink receive throughput, bytes/s."},
};

static void write_exporter(struct ctx *c)
{
    const struct snapshot *s = c->s;
    family(c, "migmon_build_info", GAUGE, "mig-gpu-mon's version; value 1.");
    sample_open(c);
    label(c, "version", MIGMON_VERSION);
    sample_close(c, 1);

    family(c, "migmon_nvml_up", GAUGE,
           "1 when NVML answers (even with no GPU), 0 when it cannot be used.");
    sample_plain(c, NULL, s->gpu_ok ? 1 : 0);

    if (s->gpu_ok) {
        family(c, "migmon_driver_info", GAUGE, "Driver, NVML and CUDA driver versions; value 1.");
        char cuda[32] = "";
        if (s->cuda_driver_version > 0)
            snprintf(cuda, sizeof(cuda), "%d.%d", s->cuda_driver_version / 1000,
                     s->cuda_driver_version % 1000 / 10);
        sample_open(c);
        label(c, "driver_version", s->driver_version);
        label(c, "nvml_version", s->nvml_version);
        label(c, "cuda_driver_version", cuda);
        sample_close(c, 1);
    }

    family(c, "migmon_snapshot_partial", GAUGE,
           "1 when some device's driver calls did not finish in time (see "
           "migmon_gpu_sampling_stalled).");
    sample_plain(c, NULL, s->partial ? 1 : 0);

    family(c, "migmon_last_sample_timestamp_seconds", GAUGE,
           "When the values on this page were sampled, seconds since the epoch.");
    sample_plain(c, NULL, (double)s->wall_ns / 1e9);
}

static void write_host(struct ctx *c)
{
    const struct snapshot *s = c->s;
    if (!s->host_ok)
        return;
    const struct host_sample *h = &s->host;
    family(c, "migmon_host_info", GAUGE, "The host's name; value 1.");
    sample_open(c);
    label(c, "hostname", h->hostname);
    sample_close(c, 1);
    family(c, "migmon_host_cpu_utilization_ratio", GAUGE,
           "Busy share of all CPUs together since the previous sample, 0-1.");
    sample_metric(c, NULL, &h->cpu_total, 0.01);
    if (h->online >= 0) {
        family(c, "migmon_host_cpus_online", GAUGE, "CPUs online.");
        sample_plain(c, NULL, h->online);
    }
    static const struct {
        const char *name, *help;
        size_t off;
    } mem[] = {
        {"migmon_host_memory_total_bytes", "Physical memory, bytes.",
         offsetof(struct mem_metrics, total)},
        {"migmon_host_memory_used_bytes", "Memory in use (total - free - buffers - cache), bytes.",
         offsetof(struct mem_metrics, used)},
        {"migmon_host_memory_available_bytes", "Memory available to new programs, bytes.",
         offsetof(struct mem_metrics, available)},
        {"migmon_host_memory_cached_bytes", "Page cache, bytes.",
         offsetof(struct mem_metrics, cached)},
        {"migmon_host_memory_buffers_bytes", "Block device buffers, bytes.",
         offsetof(struct mem_metrics, buffers)},
        {"migmon_host_memory_free_bytes", "Unused memory, bytes.",
         offsetof(struct mem_metrics, free)},
        {"migmon_host_swap_total_bytes", "Swap space, bytes.",
         offsetof(struct mem_metrics, swap_total)},
        {"migmon_host_swap_used_bytes", "Swap in use, bytes.",
         offsetof(struct mem_metrics, swap_used)},
    };
    for (size_t i = 0; i < sizeof(mem) / sizeof(mem[0]); i++) {
        family(c, mem[i].name, GAUGE, mem[i].help);
        sample_metric(c, NULL, (const struct metric *)((const char *)&h->mem + mem[i].off), 1);
    }
    static const char *const load[3] = {"migmon_host_load1", "migmon_host_load5",
                                        "migmon_host_load15"};
    static const char *const load_help[3] = {"1-minute load average.", "5-minute load average.",
                                             "15-minute load average."};
    for (int i = 0; i < 3; i++) {
        family(c, load[i], GAUGE, load_help[i]);
        sample_metric(c, NULL, &h->loadavg[i], 1);
    }
    family(c, "migmon_host_uptime_seconds", GAUGE, "Seconds since the host booted.");
    sample_metric(c, NULL, &h->uptime_s, 1);
}

static void write_identity(struct ctx *c)
{
    const struct snapshot *s = c->s;
    family(c, "migmon_device_info", GAUGE,
           "One per GPU: identity, architecture, MIG mode and serial number; value 1.");
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        const char *l = labels_of(c, i, LAB_MIGMON);
        if (d->kind != DEV_GPU || !l)
            continue;
        char cc[24] = "";
        if (d->cc_major >= 0)
            snprintf(cc, sizeof(cc), "%d.%d", d->cc_major, d->cc_minor);
        sample_open(c);
        label_raw(c, l);
        label(c, "architecture", d->arch);
        label(c, "compute_capability", cc);
        label(c, "mig_mode", d->mig_enabled ? "enabled" : "disabled");
        if (d->serial[0]) /* what an RMA asks for; absent when unknown */
            label(c, "serial", d->serial);
        sample_close(c, 1);
    }
    family(c, "migmon_mig_info", GAUGE,
           "One per MIG device: its instance ids, profile and UUID with its parent's; value 1.");
    for (size_t i = 0; i < s->ndevices; i++) {
        const char *l = labels_of(c, i, LAB_MIGMON);
        if (s->devices[i].kind == DEV_MIG && l)
            sample_plain(c, l, 1);
    }
    /* The device states, 0 or 1 for every device of a kind. */
    static const struct {
        enum device_kind kind;
        bool lost; /* else: stalled */
        const char *name, *help;
    } states[] = {
        {DEV_GPU, false, "migmon_gpu_sampling_stalled",
         "1 while a driver call for this GPU has not returned: its values are absent or "
         "carried."},
        {DEV_MIG, false, "migmon_mig_sampling_stalled",
         "1 while a driver call for this MIG device has not returned."},
        {DEV_GPU, true, "migmon_gpu_lost",
         "1 when the GPU has fallen off the bus (NVML_ERROR_GPU_IS_LOST); its labels are the "
         "identity read before."},
        {DEV_MIG, true, "migmon_mig_lost", "1 when the MIG device's GPU has fallen off the bus."},
    };
    for (size_t k = 0; k < sizeof(states) / sizeof(states[0]); k++) {
        family(c, states[k].name, GAUGE, states[k].help);
        for (size_t i = 0; i < s->ndevices; i++) {
            const struct device *d = &s->devices[i];
            const char *l = labels_of(c, i, LAB_MIGMON);
            if (d->kind == states[k].kind && l)
                sample_plain(c, l, (states[k].lost ? d->lost : d->stall != NULL) ? 1 : 0);
        }
    }
    static const char *const pc[2] = {"migmon_gpu_processes", "migmon_mig_processes"};
    for (int k = 0; k < 2; k++) {
        family(c, pc[k], GAUGE, "Processes the driver lists on the device.");
        for (size_t i = 0; i < s->ndevices; i++) {
            const char *l = labels_of(c, i, LAB_MIGMON);
            if ((int)s->devices[i].kind == k && l)
                sample_metric(c, l, &s->devices[i].process_count, 1);
        }
    }
}

static void write_metrics(struct ctx *c)
{
    const struct snapshot *s = c->s;
    for (size_t f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
        const struct fam *fm = &fams[f];
        for (int k = DEV_GPU; k <= DEV_MIG; k++) {
            if (k == DEV_MIG && metric_info(fm->id)->gpu_wide)
                continue;
            char name[96];
            snprintf(name, sizeof(name), "migmon_%s_%s", k == DEV_MIG ? "mig" : "gpu",
                     fm->suffix);
            family(c, name, fm->type, fm->help);
            for (size_t i = 0; i < s->ndevices; i++) {
                const struct device *d = &s->devices[i];
                const char *l = labels_of(c, i, LAB_MIGMON);
                if ((int)d->kind == k && l)
                    sample_metric(c, l, &d->m[fm->id], fm->scale);
            }
        }
    }
}

/* ---- processes ------------------------------------------------------------ */

struct pfam {
    const char *name, *help;
    size_t off; /* of the struct metric in struct gpu_process */
    double scale;
};

static const struct pfam pfams[] = {
    {"migmon_process_gpu_memory_bytes", "GPU memory used by the process, bytes.",
     offsetof(struct gpu_process, mem_bytes), 1},
    {"migmon_process_sm_utilization_ratio", "SM share used by the process, 0-1.",
     offsetof(struct gpu_process, sm_util), 0.01},
    {"migmon_process_memory_utilization_ratio", "Memory controller share used, 0-1.",
     offsetof(struct gpu_process, mem_util), 0.01},
    {"migmon_process_cpu_ratio",
     "CPU time per second since the previous sample (1 = one CPU busy).",
     offsetof(struct gpu_process, cpu_pct), 0.01},
    {"migmon_process_resident_memory_bytes", "Resident host memory of the process, bytes.",
     offsetof(struct gpu_process, rss_bytes), 1},
};

/* Was pid listed earlier for the same device? NVML may list a process
 * twice (compute and graphics lists); one series each. */
static bool pid_seen(const struct snapshot *s, const struct device *d, size_t k)
{
    for (size_t j = 0; j < k; j++)
        if (s->procs[d->proc_first + j].pid == s->procs[d->proc_first + k].pid)
            return true;
    return false;
}

static void process_labels(struct ctx *c, const struct gpu_process *p)
{
    char pid[16];
    snprintf(pid, sizeof(pid), "%u", p->pid);
    label(c, "pid", pid);
    if (p->name[0])
        label(c, "process_name", p->name);
    /* "k8s:POD-UID/RUNTIME:ID", "k8s:POD-UID" or "RUNTIME:ID" (procinfo.c) */
    const char *ct = p->container;
    if (strncmp(ct, "k8s:", 4) == 0) {
        char pod[PROC_CONTAINER_LEN];
        snprintf(pod, sizeof(pod), "%s", ct + 4);
        char *slash = strchr(pod, '/');
        if (slash)
            *slash = '\0';
        label(c, "pod_uid", pod);
        ct = slash ? ct + 4 + (slash - pod) + 1 : "";
    }
    if (ct[0])
        label(c, "container", ct);
}

static void write_processes(struct ctx *c)
{
    const struct snapshot *s = c->s;
    for (size_t f = 0; f < sizeof(pfams) / sizeof(pfams[0]); f++) {
        family(c, pfams[f].name, GAUGE, pfams[f].help);
        for (size_t i = 0; i < s->ndevices; i++) {
            const struct device *d = &s->devices[i];
            const char *l = labels_of(c, i, LAB_MIGMON);
            if (!l)
                continue;
            for (size_t k = 0; k < d->nprocs && d->proc_first + k < s->nprocs; k++) {
                const struct gpu_process *p = &s->procs[d->proc_first + k];
                const struct metric *m =
                    (const struct metric *)((const char *)p + pfams[f].off);
                if (!metric_ok(m) || pid_seen(s, d, k))
                    continue;
                sample_open(c);
                label_raw(c, l);
                process_labels(c, p);
                label(c, "source", metric_source_name(m->src));
                sample_close(c, m->value * pfams[f].scale);
            }
        }
    }
}

/* ---- dcgm-exporter's names -------------------------------------------- */

enum dcgm_kind {
    DK_GPU,     /* on GPUs, any source but an estimate */
    DK_ANY,     /* on GPUs and MIG devices */
    DK_FB_FREE, /* total - used, on GPUs and MIG devices */
    DK_GPM,     /* on GPUs and MIG devices, GPM values only */
};

/* DCGM's int64 fields are written as whole numbers, as dcgm-exporter
 * writes them: framebuffer MiB rounded down (bytes / 2^20, as nvidia-smi
 * and DCGM have it), the others rounded (their sources are whole numbers;
 * rounding drops a conversion's float residue, e.g. J x 1000 to mJ). */
enum dcgm_whole {
    DW_NO,    /* a double in DCGM */
    DW_FLOOR, /* int64, rounded down */
    DW_ROUND, /* int64, rounded */
};

struct dcgm_fam {
    const char *name, *type, *help;
    enum metric_id id;
    enum dcgm_kind kind;
    double scale;
    enum dcgm_whole whole;
};

#define MIB (1.0 / 1048576.0)

static const struct dcgm_fam dcgm_fams[] = {
    {"DCGM_FI_DEV_GPU_UTIL", GAUGE, "GPU utilization (in %).", M_GPU_UTIL, DK_GPU, 1, DW_ROUND},
    {"DCGM_FI_DEV_FB_USED", GAUGE, "Framebuffer memory used (in MiB).", M_MEM_USED, DK_ANY, MIB,
     DW_FLOOR},
    {"DCGM_FI_DEV_FB_FREE", GAUGE, "Framebuffer memory free (in MiB).", M_MEM_USED, DK_FB_FREE,
     MIB, DW_FLOOR},
    {"DCGM_FI_DEV_GPU_TEMP", GAUGE, "GPU temperature (in C).", M_TEMP, DK_GPU, 1, DW_ROUND},
    {"DCGM_FI_DEV_POWER_USAGE", GAUGE, "Power draw (in W).", M_POWER, DK_GPU, 1, DW_NO},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", COUNTER,
     "Total energy consumption since boot (in mJ).", M_ENERGY, DK_GPU, 1000, DW_ROUND},
    {"DCGM_FI_DEV_SM_CLOCK", GAUGE, "SM clock frequency (in MHz).", M_CLK_SM, DK_GPU, 1,
     DW_ROUND},
    {"DCGM_FI_DEV_MEM_CLOCK", GAUGE, "Memory clock frequency (in MHz).", M_CLK_MEM, DK_GPU, 1,
     DW_ROUND},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", GAUGE, "Ratio of time the graphics engine is active.",
     M_GPU_UTIL, DK_GPM, 0.01, DW_NO},
    {"DCGM_FI_PROF_SM_ACTIVE", GAUGE, "The ratio of cycles an SM has at least 1 warp assigned.",
     M_SM_UTIL, DK_GPM, 0.01, DW_NO},
    {"DCGM_FI_PROF_SM_OCCUPANCY", GAUGE, "The ratio of number of warps resident on an SM.",
     M_SM_OCCUPANCY, DK_GPM, 0.01, DW_NO},
    {"DCGM_FI_PROF_DRAM_ACTIVE", GAUGE,
     "Ratio of cycles the device memory interface is active sending or receiving data.",
     M_MEM_UTIL, DK_GPM, 0.01, DW_NO},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", GAUGE, "Ratio of cycles the tensor (HMMA) pipe is active.",
     M_TENSOR_UTIL, DK_GPM, 0.01, DW_NO},
    {"DCGM_FI_PROF_PCIE_TX_BYTES", GAUGE,
     "The rate of data transmitted over the PCIe bus - including both protocol headers and data "
     "payloads - in bytes per second.",
     M_PCIE_TX, DK_GPU, 1, DW_ROUND},
    {"DCGM_FI_PROF_PCIE_RX_BYTES", GAUGE,
     "The rate of data received over the PCIe bus - including both protocol headers and data "
     "payloads - in bytes per second.",
     M_PCIE_RX, DK_GPU, 1, DW_ROUND},
};

static void write_dcgm(struct ctx *c)
{
    const struct snapshot *s = c->s;
    for (size_t f = 0; f < sizeof(dcgm_fams) / sizeof(dcgm_fams[0]); f++) {
        const struct dcgm_fam *fm = &dcgm_fams[f];
        family(c, fm->name, fm->type, fm->help);
        for (size_t i = 0; i < s->ndevices; i++) {
            const struct device *d = &s->devices[i];
            const char *l = labels_of(c, i, LAB_DCGM);
            const struct metric *m = &d->m[fm->id];
            if (!l || !metric_ok(m))
                continue;
            double v = m->value;
            switch (fm->kind) {
            case DK_GPU:
                if (d->kind != DEV_GPU || m->src == MSRC_ESTIMATE)
                    continue;
                break;
            case DK_ANY: break;
            case DK_FB_FREE: {
                const struct metric *t = &d->m[M_MEM_TOTAL];
                if (!metric_ok(t) || t->value < v)
                    continue;
                v = t->value - v;
                break;
            }
            case DK_GPM:
                if (m->src != MSRC_GPM)
                    continue;
                break;
            }
            v *= fm->scale;
            if (fm->whole == DW_FLOOR)
                v = floor(v);
            else if (fm->whole == DW_ROUND)
                v = round(v);
            sample_plain(c, l, v);
        }
    }
}

int prom_render(struct prom_buf *b, const struct snapshot *s, const struct prom_opts *o)
{
    struct ctx c = {.b = b, .s = s};
    b->len = 0;
    if (b->p)
        b->p[0] = '\0';
    build_labels(&c);
    if (c.oom)
        return -ENOMEM;
    write_exporter(&c);
    write_host(&c);
    write_identity(&c);
    write_metrics(&c);
    if (o && o->processes)
        write_processes(&c);
    if (o && o->dcgm)
        write_dcgm(&c);
    return c.oom ? -ENOMEM : 0;
}

void prom_buf_free(struct prom_buf *b)
{
    free(b->p);
    free(b->lab);
    free(b->off);
    memset(b, 0, sizeof(*b));
}

int prom_write(FILE *f, const struct snapshot *s, const struct prom_opts *o)
{
    struct prom_buf b = {0};
    int rc = prom_render(&b, s, o);
    if (rc == 0 && b.len && fwrite(b.p, 1, b.len, f) != b.len)
        rc = -1;
    prom_buf_free(&b);
    if (rc == -ENOMEM) {
        errno = ENOMEM;
        rc = -1;
    }
    return rc;
}
