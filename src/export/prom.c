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
 *
 * This file writes the migmon_* series and puts the page together; the
 * text writer is prom_text.c, the dcgm-exporter compatible series
 * (--compat dcgm) are prom_dcgm.c.
 */
#include "export/prom.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/health_rules.h"
#include "export/prom_dcgm.h"
#include "export/prom_node.h"
#include "export/prom_pods.h"
#include "export/prom_text.h"
#include "export/xid_counts.h"

/* ---- per-device label sets ---------------------------------------------- */

static const struct device *parent_of(const struct snapshot *s, const struct device *d)
{
    if (d->kind == DEV_MIG && d->parent_pos >= 0 && (size_t)d->parent_pos < s->ndevices)
        return &s->devices[d->parent_pos];
    return d;
}

/* Device d's migmon_ labels (p: its GPU) into the label scratch. */
static void migmon_labels(struct prom_ctx *c, bool *first, const struct device *d,
                          const struct device *p, const char *node)
{
    prom_lab_add_int(c, first, "gpu", d->index);
    prom_lab_add(c, first, "uuid", d->kind == DEV_MIG ? d->parent_uuid : d->uuid);
    prom_lab_add(c, first, "pci_bus_id", d->pci_bus_id);
    prom_lab_add(c, first, "model", p->name);
    if (node[0])
        prom_lab_add(c, first, "node", node);
    /* NVIDIA's label sets stay as they were; other vendors say theirs. */
    if (d->vendor != VENDOR_NVIDIA)
        prom_lab_add(c, first, "vendor", device_vendor_name(d->vendor));
    if (d->kind == DEV_MIG && d->vendor == VENDOR_AMD) {
        /* an amdgpu compute partition: its index on the GPU and the modes */
        prom_lab_add_int(c, first, "partition_id", d->gi_id);
        prom_lab_add(c, first, "mig_profile", d->profile);
        prom_lab_add(c, first, "mig_uuid", d->uuid);
    } else if (d->kind == DEV_MIG) {
        prom_lab_add_int(c, first, "gpu_instance_id", d->gi_id);
        prom_lab_add_int(c, first, "compute_instance_id", d->ci_id);
        prom_lab_add(c, first, "mig_profile", d->profile);
        prom_lab_add(c, first, "mig_uuid", d->uuid);
    }
}

/* Each device's label sets, migmon_'s and dcgm-exporter's, escaped once
 * into the buffer's scratch; a set that repeats an earlier device's is
 * marked left out. */
static void build_labels(struct prom_ctx *c)
{
    const struct snapshot *s = c->s;
    struct prom_buf *b = c->b;
    b->lab_len = 0;
    size_t need = s->ndevices * PROM_LAB_N;
    if (need > b->off_cap) {
        size_t *o = realloc(b->off, need * sizeof(*o));
        if (!o) {
            c->oom = true;
            return;
        }
        b->off = o;
        b->off_cap = need;
    }
    /* Under Kubernetes the pod's host name is the pod's: the node's name
     * comes from NODE_NAME (the downward API), as dcgm-exporter takes it. */
    const char *node = prom_node_name();
    const char *host = node[0] ? node : s->host_ok ? s->host.hostname : "";
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i], *p = parent_of(s, d);
        /* a fleet's device (--prometheus) is named by its own node */
        const char *dn = d->node[0] ? d->node : node, *dh = d->node[0] ? d->node : host;
        bool first = true;
        b->off[i * PROM_LAB_N + PROM_LAB_PROC] = b->lab_len;
        migmon_labels(c, &first, d, p, dn);
        prom_lab_end(c);
        b->off[i * PROM_LAB_N + PROM_LAB_MIGMON] = b->lab_len;
        first = true;
        migmon_labels(c, &first, d, p, dn);
        prom_pod_labels(c, &first, d);
        prom_lab_end(c);
        b->off[i * PROM_LAB_N + PROM_LAB_DCGM] = b->lab_len;
        prom_dcgm_labels(c, d, p, dh);
        bool dcgm_first = false; /* the dcgm set always has labels before */
        prom_pod_labels(c, &dcgm_first, d);
        prom_lab_end(c);
    }
    if (c->oom)
        return;
    /* A repeated label set is left out. For dcgm that is every compute
     * instance after the first of a GPU instance: dcgm-exporter's labels
     * name GPU instances only. */
    for (size_t i = 0; i < s->ndevices; i++)
        for (int k = 0; k < PROM_LAB_N; k++) {
            const char *li = b->lab + b->off[i * PROM_LAB_N + k];
            for (size_t j = 0; j < i; j++) {
                size_t oj = b->off[j * PROM_LAB_N + k];
                if (oj != PROM_NO_LABELS && strcmp(li, b->lab + oj) == 0) {
                    b->off[i * PROM_LAB_N + k] = PROM_NO_LABELS;
                    break;
                }
            }
        }
}

/* ---- the migmon_ series ------------------------------------------------- */

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
    {M_GPU_UTIL, "utilization_ratio", PROM_GAUGE, 0.01,
     "Busy share, 0-1: NVML utilization, GPM graphics activity, or an estimate (see source)."},
    {M_MEM_UTIL, "memory_utilization_ratio", PROM_GAUGE, 0.01,
     "Memory busy share, 0-1: NVML memory controller or GPM DRAM bandwidth (see source)."},
    {M_SM_UTIL, "sm_utilization_ratio", PROM_GAUGE, 0.01, "SM activity, 0-1."},
    {M_MEM_USED, "memory_used_bytes", PROM_GAUGE, 1, "Frame buffer memory in use, bytes."},
    {M_MEM_TOTAL, "memory_total_bytes", PROM_GAUGE, 1, "Frame buffer memory, bytes."},
    {M_TEMP, "temperature_celsius", PROM_GAUGE, 1, "GPU core temperature, degrees Celsius."},
    {M_POWER, "power_watts", PROM_GAUGE, 1, "Power draw, watts."},
    {M_POWER_LIMIT, "power_limit_watts", PROM_GAUGE, 1, "Enforced power limit, watts."},
    {M_ENERGY, "energy_joules_total", PROM_COUNTER, 1,
     "Energy consumed since the driver was loaded, joules."},
    {M_CLK_GFX, "graphics_clock_hertz", PROM_GAUGE, 1e6, "Graphics clock, hertz."},
    {M_CLK_SM, "sm_clock_hertz", PROM_GAUGE, 1e6, "SM clock, hertz."},
    {M_CLK_MEM, "memory_clock_hertz", PROM_GAUGE, 1e6, "Memory clock, hertz."},
    {M_PSTATE, "performance_state", PROM_GAUGE, 1, "Performance state, 0 (P0, fastest) to 15."},
    {M_PCIE_GEN, "pcie_link_generation", PROM_GAUGE, 1, "Current PCIe link generation."},
    {M_PCIE_WIDTH, "pcie_link_width", PROM_GAUGE, 1, "Current PCIe link width, lanes."},
    {M_PCIE_TX, "pcie_tx_bytes_per_second", PROM_GAUGE, 1, "PCIe transmit throughput, bytes/s."},
    {M_PCIE_RX, "pcie_rx_bytes_per_second", PROM_GAUGE, 1, "PCIe receive throughput, bytes/s."},
    {M_ENC_UTIL, "encoder_utilization_ratio", PROM_GAUGE, 0.01, "Video encoder busy share, 0-1."},
    {M_DEC_UTIL, "decoder_utilization_ratio", PROM_GAUGE, 0.01, "Video decoder busy share, 0-1."},
    {M_ECC_MODE, "ecc_enabled", PROM_GAUGE, 1, "ECC mode: 1 enabled, 0 disabled."},
    {M_ECC_CORR, "ecc_corrected_errors_total", PROM_COUNTER, 1,
     "Corrected (single-bit) ECC errors since the driver was loaded."},
    {M_ECC_UNCORR, "ecc_uncorrected_errors_total", PROM_COUNTER, 1,
     "Uncorrected (double-bit) ECC errors since the driver was loaded."},
    {M_TEMP_SLOWDOWN, "slowdown_temperature_celsius", PROM_GAUGE, 1,
     "Temperature at which the GPU slows down, degrees Celsius."},
    {M_TEMP_SHUTDOWN, "shutdown_temperature_celsius", PROM_GAUGE, 1,
     "Temperature at which the GPU shuts down, degrees Celsius."},
    {M_FAN, "fan_speed_ratio", PROM_GAUGE, 0.01, "Fan speed as a share of its maximum."},
    {M_SM_OCCUPANCY, "sm_occupancy_ratio", PROM_GAUGE, 0.01,
     "Resident warps as a share of the maximum (GPM), 0-1."},
    {M_TENSOR_UTIL, "tensor_utilization_ratio", PROM_GAUGE, 0.01, "Tensor pipe activity (GPM), 0-1."},
    {M_DFMA_TENSOR_UTIL, "dfma_tensor_utilization_ratio", PROM_GAUGE, 0.01,
     "DFMA tensor pipe activity (GPM), 0-1."},
    {M_HMMA_TENSOR_UTIL, "hmma_tensor_utilization_ratio", PROM_GAUGE, 0.01,
     "HMMA tensor pipe activity (GPM), 0-1."},
    {M_IMMA_TENSOR_UTIL, "imma_tensor_utilization_ratio", PROM_GAUGE, 0.01,
     "IMMA tensor pipe activity (GPM), 0-1."},
    {M_FP64_UTIL, "fp64_utilization_ratio", PROM_GAUGE, 0.01, "FP64 pipe activity (GPM), 0-1."},
    {M_FP32_UTIL, "fp32_utilization_ratio", PROM_GAUGE, 0.01, "FP32 pipe activity (GPM), 0-1."},
    {M_FP16_UTIL, "fp16_utilization_ratio", PROM_GAUGE, 0.01, "FP16 pipe activity (GPM), 0-1."},
    {M_INT_UTIL, "integer_utilization_ratio", PROM_GAUGE, 0.01, "Integer pipe activity (GPM), 0-1."},
    {M_NVLINK_TX, "nvlink_tx_bytes_per_second", PROM_GAUGE, 1, "NVLink transmit throughput, bytes/s."},
    {M_NVLINK_RX, "nvlink_rx_bytes_per_second", PROM_GAUGE, 1, "NVLink receive throughput, bytes/s."},
    {M_LAST_XID, "last_xid", PROM_GAUGE, 1,
     "Code of the device's most recent Xid event since the monitor started (docs/health.md)."},
    /* The health counters (docs/health.md). */
    {M_MEM_TEMP, "memory_temperature_celsius", PROM_GAUGE, 1,
     "Memory (HBM) temperature, degrees Celsius."},
    {M_PCIE_REPLAY, "pcie_replays_total", PROM_COUNTER, 1,
     "PCIe replays (link-level retransmissions) since the driver was loaded."},
    {M_ECC_CORR_AGG, "ecc_aggregate_corrected_errors_total", PROM_COUNTER, 1,
     "Corrected (single-bit) ECC errors over the GPU's life (aggregate count)."},
    {M_ECC_UNCORR_AGG, "ecc_aggregate_uncorrected_errors_total", PROM_COUNTER, 1,
     "Uncorrected (double-bit) ECC errors over the GPU's life (aggregate count)."},
    {M_REMAP_CORR, "remapped_rows_correctable_total", PROM_COUNTER, 1,
     "Memory rows remapped for correctable errors."},
    {M_REMAP_UNCORR, "remapped_rows_uncorrectable_total", PROM_COUNTER, 1,
     "Memory rows remapped for uncorrectable errors."},
    {M_REMAP_PENDING, "row_remap_pending", PROM_GAUGE, 1,
     "1 while a row remap waits for a GPU reset, else 0."},
    {M_REMAP_FAILURE, "row_remap_failure", PROM_GAUGE, 1,
     "1 when a row remap failed (replace the GPU), else 0."},
    {M_RETIRED_SBE, "retired_pages_sbe_total", PROM_COUNTER, 1,
     "Memory pages retired for single-bit ECC errors (before Ampere)."},
    {M_RETIRED_DBE, "retired_pages_dbe_total", PROM_COUNTER, 1,
     "Memory pages retired for double-bit ECC errors (before Ampere)."},
    {M_RETIRED_PENDING, "retired_pages_pending", PROM_GAUGE, 1,
     "1 while a page retirement waits for a GPU reset, else 0."},
    {M_MEM_RESERVED, "memory_reserved_bytes", PROM_GAUGE, 1,
     "Frame buffer memory the driver reserves, bytes."},
    {M_NVLINK_LINKS_UP, "nvlink_links_up", PROM_GAUGE, 1, "NVLink links active."},
    {M_NVLINK_CRC_ERRORS, "nvlink_crc_errors_total", PROM_COUNTER, 1,
     "NVLink FLIT and data CRC errors since the driver was loaded, every link."},
    {M_NVLINK_REPLAY_ERRORS, "nvlink_replay_errors_total", PROM_COUNTER, 1,
     "NVLink replays since the driver was loaded, every link."},
    {M_NVLINK_RECOVERY_ERRORS, "nvlink_recovery_errors_total", PROM_COUNTER, 1,
     "NVLink recoveries since the driver was loaded, every link."},
    {M_NVLINK_DATA_BYTES, "nvlink_data_bytes_total", PROM_COUNTER, 1,
     "NVLink data bytes sent and received, every link (the driver's running count)."},
    {M_THROTTLE_POWER_S, "power_throttle_seconds_total", PROM_COUNTER, 1,
     "Time the clocks were held down by the power limit since the driver was loaded, seconds."},
    {M_THROTTLE_THERMAL_S, "thermal_throttle_seconds_total", PROM_COUNTER, 1,
     "Time the clocks were held down by temperature since the driver was loaded, seconds."},
    {M_REMAP_INACTIVE, "remapped_rows_inactive", PROM_GAUGE, 1,
     "Row remaps no longer active, correctable and uncorrectable (remapped rows v2)."},
    {M_UNREPAIRABLE_MEM, "unrepairable_memory", PROM_GAUGE, 1,
     "1 when the GPU has memory errors it can no longer repair (replace it), else 0."},
    {M_BANK_REMAPS, "bank_remaps_active", PROM_GAUGE, 1, "HBM bank remaps active."},
    {M_BANK_REMAP_PENDING, "bank_remap_pending", PROM_GAUGE, 1,
     "1 while an HBM bank remap waits for a GPU reset, else 0."},
    {M_BANK_NO_SPARE, "bank_remap_no_spare_groups", PROM_GAUGE, 1,
     "HBM bank groups with no spare left for another remap."},
    {M_GTT_USED, "gtt_used_bytes", PROM_GAUGE, 1,
     "GTT (system memory mapped for the GPU) in use, bytes (amdgpu mem_info_gtt_used)."},
    {M_GTT_TOTAL, "gtt_total_bytes", PROM_GAUGE, 1,
     "GTT (system memory mapped for the GPU), bytes (amdgpu mem_info_gtt_total)."},
};

static void write_exporter(struct prom_ctx *c)
{
    const struct snapshot *s = c->s;
    prom_family(c, "migmon_build_info", PROM_GAUGE, "mig-gpu-mon's version; value 1.");
    prom_sample_open(c);
    prom_label(c, "version", MIGMON_VERSION);
    prom_sample_close(c, 1);

    prom_family(c, "migmon_nvml_up", PROM_GAUGE,
           "1 when NVML answers (even with no GPU), 0 when it cannot be used.");
    prom_sample_plain(c, NULL, s->gpu_ok ? 1 : 0);

    if (s->gpu_ok) {
        prom_family(c, "migmon_driver_info", PROM_GAUGE, "Driver, NVML and CUDA driver versions; value 1.");
        char cuda[32] = "";
        if (s->cuda_driver_version > 0)
            snprintf(cuda, sizeof(cuda), "%d.%d", s->cuda_driver_version / 1000,
                     s->cuda_driver_version % 1000 / 10);
        prom_sample_open(c);
        prom_label(c, "driver_version", s->driver_version);
        prom_label(c, "nvml_version", s->nvml_version);
        prom_label(c, "cuda_driver_version", cuda);
        prom_sample_close(c, 1);
    }

    prom_family(c, "migmon_snapshot_partial", PROM_GAUGE,
           "1 when some device's driver calls did not finish in time (see "
           "migmon_gpu_sampling_stalled).");
    prom_sample_plain(c, NULL, s->partial ? 1 : 0);

    prom_family(c, "migmon_last_sample_timestamp_seconds", PROM_GAUGE,
           "When the values on this page were sampled, seconds since the epoch.");
    prom_sample_plain(c, NULL, (double)s->wall_ns / 1e9);
}

static void write_host(struct prom_ctx *c)
{
    const struct snapshot *s = c->s;
    if (!s->host_ok)
        return;
    const struct host_sample *h = &s->host;
    prom_family(c, "migmon_host_info", PROM_GAUGE, "The host's name; value 1.");
    prom_sample_open(c);
    prom_label(c, "hostname", h->hostname);
    prom_sample_close(c, 1);
    prom_family(c, "migmon_host_cpu_utilization_ratio", PROM_GAUGE,
           "Busy share of all CPUs together since the previous sample, 0-1.");
    prom_sample_metric(c, NULL, &h->cpu_total, 0.01);
    if (h->online >= 0) {
        prom_family(c, "migmon_host_cpus_online", PROM_GAUGE, "CPUs online.");
        prom_sample_plain(c, NULL, h->online);
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
        prom_family(c, mem[i].name, PROM_GAUGE, mem[i].help);
        prom_sample_metric(c, NULL, (const struct metric *)((const char *)&h->mem + mem[i].off), 1);
    }
    static const char *const load[3] = {"migmon_host_load1", "migmon_host_load5",
                                        "migmon_host_load15"};
    static const char *const load_help[3] = {"1-minute load average.", "5-minute load average.",
                                             "15-minute load average."};
    for (int i = 0; i < 3; i++) {
        prom_family(c, load[i], PROM_GAUGE, load_help[i]);
        prom_sample_metric(c, NULL, &h->loadavg[i], 1);
    }
    prom_family(c, "migmon_host_uptime_seconds", PROM_GAUGE, "Seconds since the host booted.");
    prom_sample_metric(c, NULL, &h->uptime_s, 1);
}

static void write_identity(struct prom_ctx *c)
{
    const struct snapshot *s = c->s;
    prom_family(c, "migmon_device_info", PROM_GAUGE,
           "One per GPU: identity, architecture, MIG mode and serial number; value 1.");
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        const char *l = prom_labels_of(c, i, PROM_LAB_MIGMON);
        if (d->kind != DEV_GPU || !l)
            continue;
        char cc[24] = "";
        if (d->cc_major >= 0)
            snprintf(cc, sizeof(cc), "%d.%d", d->cc_major, d->cc_minor);
        prom_sample_open(c);
        prom_label_raw(c, l);
        prom_label(c, "architecture", d->arch);
        prom_label(c, "compute_capability", cc);
        if (!d->inaccessible) /* a GPU that cannot be opened: its mode is not known */
            prom_label(c, "mig_mode", d->mig_enabled ? "enabled" : "disabled");
        if (d->serial[0]) /* what an RMA asks for; absent when unknown */
            prom_label(c, "serial", d->serial);
        prom_sample_close(c, 1);
    }
    prom_family(c, "migmon_mig_info", PROM_GAUGE,
           "One per MIG device: its instance ids, profile and UUID with its parent's, its "
           "place under its GPU (mig_index); value 1.");
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        const char *l = prom_labels_of(c, i, PROM_LAB_MIGMON);
        if (d->kind != DEV_MIG || !l)
            continue;
        /* the index the monitor shows ("0/4"): a fleet view shows the same */
        char mi[16] = "";
        if (d->mig_index >= 0)
            snprintf(mi, sizeof(mi), "%d", d->mig_index);
        prom_sample_open(c);
        prom_label_raw(c, l);
        if (mi[0])
            prom_label(c, "mig_index", mi);
        prom_sample_close(c, 1);
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
        prom_family(c, states[k].name, PROM_GAUGE, states[k].help);
        for (size_t i = 0; i < s->ndevices; i++) {
            const struct device *d = &s->devices[i];
            const char *l = prom_labels_of(c, i, PROM_LAB_MIGMON);
            if (d->kind != states[k].kind || !l || (states[k].lost && d->inaccessible))
                continue;
            prom_sample_plain(c, l, (states[k].lost ? d->lost : d->stall != NULL) ? 1 : 0);
        }
    }
    static const char *const pc[2] = {"migmon_gpu_processes", "migmon_mig_processes"};
    for (int k = 0; k < 2; k++) {
        prom_family(c, pc[k], PROM_GAUGE, "Processes the driver lists on the device.");
        for (size_t i = 0; i < s->ndevices; i++) {
            const char *l = prom_labels_of(c, i, PROM_LAB_MIGMON);
            if ((int)s->devices[i].kind == k && l)
                prom_sample_metric(c, l, &s->devices[i].process_count, 1);
        }
    }
}

static void write_metrics(struct prom_ctx *c)
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
            prom_family(c, name, fm->type, fm->help);
            for (size_t i = 0; i < s->ndevices; i++) {
                const struct device *d = &s->devices[i];
                const char *l = prom_labels_of(c, i, PROM_LAB_MIGMON);
                if ((int)d->kind == k && l)
                    prom_sample_metric(c, l, &d->m[fm->id], fm->scale);
            }
        }
    }
}

/* ---- health --------------------------------------------------------------- */

/* The verdict in the state-label pattern of an enum (one series per state,
 * 1 for the one the device is in): `== 1` selects, and a series per state
 * keeps its history apart. Nothing while the verdict is unknown. */
static void write_health(struct prom_ctx *c)
{
    const struct snapshot *s = c->s;
    static const char *const name[2] = {"migmon_gpu_health", "migmon_mig_health"};
    static const unsigned states[] = {HEALTH_OK, HEALTH_WARNING, HEALTH_ACTION};
    for (int k = DEV_GPU; k <= DEV_MIG; k++) {
        prom_family(c, name[k], PROM_GAUGE,
                    "Health verdict (docs/health.md): 1 for the state the device is in "
                    "(ok, warning, action), 0 for the others; absent while unknown.");
        for (size_t i = 0; i < s->ndevices; i++) {
            const struct device *d = &s->devices[i];
            const char *l = prom_labels_of(c, i, PROM_LAB_MIGMON);
            if ((int)d->kind != k || !l || d->health == HEALTH_UNKNOWN)
                continue;
            for (size_t j = 0; j < sizeof(states) / sizeof(states[0]); j++) {
                prom_sample_open(c);
                prom_label_raw(c, l);
                prom_label(c, "state", health_level_name(states[j]));
                prom_sample_close(c, d->health == states[j] ? 1 : 0);
            }
        }
    }
}

/* The Xid events per device and code, exact or not at all (xid_counts.h).
 * A device whose events are watched and that has had none has one series
 * at 0 without the xid label, so `> 0` alerts and panels have data on a
 * healthy node; it ends when the device's first Xid starts a series of
 * that code. A device whose events are not watched has none (/health
 * says why): 0 there would say that no Xid happened. */
static void write_xids(struct prom_ctx *c)
{
    const struct snapshot *s = c->s;
    static const char *const name[2] = {"migmon_gpu_xid_errors_total",
                                        "migmon_mig_xid_errors_total"};
    for (int k = DEV_GPU; k <= DEV_MIG; k++) {
        prom_family(c, name[k], PROM_COUNTER,
                    "Xid events attributed to the device since the monitor started, per Xid "
                    "code (0 without an xid label while it has had none); absent where its "
                    "events are not watched, and for a device with more than 8 codes once "
                    "the last 64 events no longer hold all of them (docs/health.md).");
        for (size_t i = 0; i < s->ndevices; i++) {
            const struct device *d = &s->devices[i];
            const char *l = prom_labels_of(c, i, PROM_LAB_MIGMON);
            struct xid_count xc[64];
            int n = (int)d->kind == k && l ? xid_counts(s, i, xc, 64) : -1;
            if (n == 0) {
                prom_sample_open(c);
                prom_label_raw(c, l);
                prom_label(c, "source", metric_source_name(d->m[M_XID_ERRORS].src));
                prom_sample_close(c, 0);
            }
            for (int j = 0; j < n; j++) {
                char code[16];
                snprintf(code, sizeof(code), "%u", xc[j].xid);
                prom_sample_open(c);
                prom_label_raw(c, l);
                prom_label(c, "xid", code);
                prom_label(c, "source", metric_source_name(d->m[M_XID_ERRORS].src));
                prom_sample_close(c, xc[j].count);
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

static void process_labels(struct prom_ctx *c, const struct gpu_process *p)
{
    char pid[16];
    snprintf(pid, sizeof(pid), "%u", p->pid);
    prom_label(c, "pid", pid);
    if (p->name[0])
        prom_label(c, "process_name", p->name);
    /* "k8s:POD-UID/RUNTIME:ID", "k8s:POD-UID" or "RUNTIME:ID" (procinfo.c) */
    const char *ct = p->container;
    if (strncmp(ct, "k8s:", 4) == 0) {
        char pod[PROC_CONTAINER_LEN];
        snprintf(pod, sizeof(pod), "%s", ct + 4);
        char *slash = strchr(pod, '/');
        if (slash)
            *slash = '\0';
        prom_label(c, "pod_uid", pod);
        prom_pod_process_labels(c, pod);
        ct = slash ? ct + 4 + (slash - pod) + 1 : "";
    }
    if (ct[0])
        prom_label(c, "container", ct);
}

static void write_processes(struct prom_ctx *c)
{
    const struct snapshot *s = c->s;
    for (size_t f = 0; f < sizeof(pfams) / sizeof(pfams[0]); f++) {
        prom_family(c, pfams[f].name, PROM_GAUGE, pfams[f].help);
        for (size_t i = 0; i < s->ndevices; i++) {
            const struct device *d = &s->devices[i];
            const char *l = prom_labels_of(c, i, PROM_LAB_PROC);
            if (!l)
                continue;
            for (size_t k = 0; k < d->nprocs && d->proc_first + k < s->nprocs; k++) {
                const struct gpu_process *p = &s->procs[d->proc_first + k];
                const struct metric *m =
                    (const struct metric *)((const char *)p + pfams[f].off);
                if (!metric_ok(m) || pid_seen(s, d, k))
                    continue;
                prom_sample_open(c);
                prom_label_raw(c, l);
                process_labels(c, p);
                prom_label(c, "source", metric_source_name(m->src));
                prom_sample_close(c, m->value * pfams[f].scale);
            }
        }
    }
}
int prom_render(struct prom_buf *b, const struct snapshot *s, const struct prom_opts *o)
{
    struct prom_ctx c = {
        .b = b, .s = s, .pods = o ? o->pods : NULL, .pod_logs = o ? o->pod_logs : NULL};
    b->len = 0;
    if (b->p)
        b->p[0] = '\0';
    build_labels(&c);
    if (c.oom)
        return -ENOMEM;
    write_exporter(&c);
    if (!o || !o->no_host)
        write_host(&c);
    write_identity(&c);
    write_metrics(&c);
    write_health(&c);
    write_xids(&c);
    prom_node_write(&c);
    if (o && o->processes)
        write_processes(&c);
    if (o && o->dcgm)
        prom_dcgm_write(&c);
    return c.oom ? -ENOMEM : 0;
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
