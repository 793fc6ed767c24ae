/*
 * prom_dcgm.c — dcgm-exporter's series (prom_dcgm.h): DCGM_FI_* names, its
 * units (MiB, mJ, %) and whole numbers where DCGM's fields are int64, on
 * its labels (UUID, modelName, Hostname, GPU_I_PROFILE, GPU_I_ID), which
 * name GPU instances only. docs/prometheus.md lists the series.
 */
#include "export/prom_dcgm.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/events/xid.h"

/* "1c.3g.40gb" (a compute instance's profile) -> "3g.40gb", the GPU
 * instance's, which is what dcgm-exporter's GPU_I_PROFILE holds. */
static const char *gi_profile(const char *p)
{
    const char *dot = strchr(p, '.');
    if (dot && dot > p && dot[-1] == 'c' && strchr(dot + 1, '.'))
        return dot + 1;
    return p;
}

static pthread_once_t node_once = PTHREAD_ONCE_INIT;
static char node_buf[256];

static void node_read(void)
{
    const char *n = getenv("NODE_NAME");
    snprintf(node_buf, sizeof(node_buf), "%s", n ? n : "");
}

const char *prom_node_name(void)
{
    pthread_once(&node_once, node_read);
    return node_buf;
}

void prom_dcgm_labels(struct prom_ctx *c, const struct device *d, const struct device *p,
                      const char *host)
{
    bool first = true;
    char dev[24];
    snprintf(dev, sizeof(dev), "nvidia%d", d->index);
    prom_lab_add_int(c, &first, "gpu", d->index);
    prom_lab_add(c, &first, "UUID", d->kind == DEV_MIG ? d->parent_uuid : d->uuid);
    prom_lab_add(c, &first, "pci_bus_id", d->pci_bus_id);
    prom_lab_add(c, &first, "device", dev);
    prom_lab_add(c, &first, "modelName", p->name);
    prom_lab_add(c, &first, "Hostname", host);
    /* dcgm-exporter renamed Hostname to hostname; both, so dashboards of
     * either generation work. */
    prom_lab_add(c, &first, "hostname", host);
    prom_lab_add(c, &first, "DCGM_FI_DRIVER_VERSION", c->s->driver_version);
    if (d->kind == DEV_MIG) {
        prom_lab_add(c, &first, "GPU_I_PROFILE", gi_profile(d->profile));
        prom_lab_add_int(c, &first, "GPU_I_ID", d->gi_id);
    }
}

/* ---- dcgm-exporter's names -------------------------------------------- */

enum dcgm_kind {
    DK_GPU,     /* on GPUs, any source but an estimate */
    DK_WIDE,    /* GPU-wide: on GPUs, and on each GPU instance of a MIG GPU */
    DK_ANY,     /* on GPUs and MIG devices */
    DK_FB_FREE, /* total - used, on GPUs and MIG devices */
    DK_PROF,    /* on GPUs and MIG devices, profiling values only (GPM or DCGM) */
    DK_NVML,    /* on GPUs outside MIG mode, NVML's own reading (not GPM's, DCGM's, an estimate) */
    DK_NVLINK,  /* GPU-wide, TX + RX throughput in DCGM's unit */
    DK_XID,     /* the last Xid (last_xid_of) */
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
    {"DCGM_FI_DEV_GPU_UTIL", PROM_GAUGE, "GPU utilization (in %).", M_GPU_UTIL, DK_GPU, 1, DW_ROUND},
    {"DCGM_FI_DEV_FB_USED", PROM_GAUGE, "Framebuffer memory used (in MiB).", M_MEM_USED, DK_ANY, MIB,
     DW_FLOOR},
    {"DCGM_FI_DEV_FB_FREE", PROM_GAUGE, "Framebuffer memory free (in MiB).", M_MEM_USED, DK_FB_FREE,
     MIB, DW_FLOOR},
    {"DCGM_FI_DEV_GPU_TEMP", PROM_GAUGE, "GPU temperature (in C).", M_TEMP, DK_WIDE, 1, DW_ROUND},
    {"DCGM_FI_DEV_POWER_USAGE", PROM_GAUGE, "Power draw (in W).", M_POWER, DK_WIDE, 1, DW_NO},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", PROM_COUNTER,
     "Total energy consumption since boot (in mJ).", M_ENERGY, DK_WIDE, 1000, DW_ROUND},
    {"DCGM_FI_DEV_SM_CLOCK", PROM_GAUGE, "SM clock frequency (in MHz).", M_CLK_SM, DK_WIDE, 1,
     DW_ROUND},
    {"DCGM_FI_DEV_MEM_CLOCK", PROM_GAUGE, "Memory clock frequency (in MHz).", M_CLK_MEM, DK_WIDE, 1,
     DW_ROUND},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", PROM_GAUGE, "Ratio of time the graphics engine is active.",
     M_GPU_UTIL, DK_PROF, 0.01, DW_NO},
    {"DCGM_FI_PROF_SM_ACTIVE", PROM_GAUGE, "The ratio of cycles an SM has at least 1 warp assigned.",
     M_SM_UTIL, DK_PROF, 0.01, DW_NO},
    {"DCGM_FI_PROF_SM_OCCUPANCY", PROM_GAUGE, "The ratio of number of warps resident on an SM.",
     M_SM_OCCUPANCY, DK_PROF, 0.01, DW_NO},
    {"DCGM_FI_PROF_DRAM_ACTIVE", PROM_GAUGE,
     "Ratio of cycles the device memory interface is active sending or receiving data.",
     M_MEM_UTIL, DK_PROF, 0.01, DW_NO},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", PROM_GAUGE, "Ratio of cycles the tensor (HMMA) pipe is active.",
     M_TENSOR_UTIL, DK_PROF, 0.01, DW_NO},
    {"DCGM_FI_PROF_PCIE_TX_BYTES", PROM_GAUGE,
     "The rate of data transmitted over the PCIe bus - including both protocol headers and data "
     "payloads - in bytes per second.",
     M_PCIE_TX, DK_GPU, 1, DW_ROUND},
    {"DCGM_FI_PROF_PCIE_RX_BYTES", PROM_GAUGE,
     "The rate of data received over the PCIe bus - including both protocol headers and data "
     "payloads - in bytes per second.",
     M_PCIE_RX, DK_GPU, 1, DW_ROUND},
    /* The rest of dcgm-exporter's default counters (etc/default-counters.csv)
     * whose data the monitor has; DCGM keeps each as an int64. */
    {"DCGM_FI_DEV_MEMORY_TEMP", PROM_GAUGE, "Memory temperature (in C).", M_MEM_TEMP, DK_WIDE, 1,
     DW_ROUND},
    {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", PROM_COUNTER, "Total number of PCIe retries.",
     M_PCIE_REPLAY, DK_WIDE, 1, DW_ROUND},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", PROM_GAUGE, "Memory utilization (in %).", M_MEM_UTIL, DK_NVML, 1,
     DW_ROUND},
    {"DCGM_FI_DEV_ENC_UTIL", PROM_GAUGE, "Encoder utilization (in %).", M_ENC_UTIL, DK_WIDE, 1,
     DW_ROUND},
    {"DCGM_FI_DEV_DEC_UTIL", PROM_GAUGE, "Decoder utilization (in %).", M_DEC_UTIL, DK_WIDE, 1,
     DW_ROUND},
    {"DCGM_FI_DEV_XID_ERRORS", PROM_GAUGE, "Value of the last XID error encountered.", M_LAST_XID,
     DK_XID, 1, DW_ROUND},
    {"DCGM_FI_DEV_FB_RESERVED", PROM_GAUGE, "Framebuffer memory reserved (in MiB).", M_MEM_RESERVED,
     DK_ANY, MIB, DW_FLOOR},
    /* DCGM's field 449: the change of NVML's KiB counters of data sent and
     * received (every link) per second, divided by 1000, truncated
     * (DcgmCacheManager::ReadAndCacheNvLinkBandwidth); a rate, whatever
     * the TYPE dcgm-exporter gives it. Here from the GPU's TX and RX
     * throughput in bytes/s. */
    {"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", PROM_COUNTER,
     "Total number of NVLink bandwidth counters for all lanes.", M_NVLINK_TX, DK_NVLINK,
     1.0 / 1024 / 1000, DW_FLOOR},
    {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", PROM_COUNTER,
     "Number of remapped rows for uncorrectable errors", M_REMAP_UNCORR, DK_WIDE, 1, DW_ROUND},
    {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", PROM_COUNTER,
     "Number of remapped rows for correctable errors", M_REMAP_CORR, DK_WIDE, 1, DW_ROUND},
    {"DCGM_FI_DEV_ROW_REMAP_FAILURE", PROM_GAUGE, "Whether remapping of rows has failed",
     M_REMAP_FAILURE, DK_WIDE, 1, DW_ROUND},
};

/* dcgm-exporter's MIG model: a MIG-mode GPU with instances is represented
 * by its GPU instances only (so sums over devices count memory once), each
 * carrying the GPU-wide values. */
static bool via_instances(const struct snapshot *s, size_t i)
{
    const struct device *d = &s->devices[i];
    if (d->kind != DEV_GPU || !d->mig_enabled)
        return false;
    for (size_t j = i + 1; j < s->ndevices && s->devices[j].kind == DEV_MIG; j++) {
        if (s->devices[j].parent_pos == (int)i)
            return true;
    }
    return false;
}

static bool is_xid(const struct gpu_event *e)
{
    return strcmp(xid_event_type_name(e->type), "xid") == 0;
}

/* The last Xid that hit device i. DCGM keeps an Xid on the entity NVML
 * attributes it to, and dcgm-exporter reads a MIG GPU's instances only, so
 * a GPU-wide Xid (every Xid, for a monitor without privilege) would be on
 * no series: an instance here also carries its GPU's, as the other GPU-wide
 * values (what hits the GPU hits what runs on it). Of the instance's own
 * last Xid and the GPU's, the newer is the one later in the events list;
 * when the list holds neither any more, the instance's own. With none, 0
 * as dcgm-exporter writes it, where the device's own events are watched
 * (xid_errors_total is a count): elsewhere, and on an instance whose own
 * events do not reach the monitor, an Xid could have gone unseen, and no
 * series is written. False when there is no value. */
static bool last_xid_of(const struct snapshot *s, size_t i, double *v)
{
    const struct device *d = &s->devices[i];
    const struct metric *own = &d->m[M_LAST_XID];
    const struct metric *gpu = NULL;
    if (d->kind == DEV_MIG && d->parent_pos >= 0 && (size_t)d->parent_pos < s->ndevices)
        gpu = &s->devices[d->parent_pos].m[M_LAST_XID];
    if (!gpu || !metric_ok(gpu) || !metric_ok(own)) {
        const struct metric *m = metric_ok(own) ? own : gpu && metric_ok(gpu) ? gpu : NULL;
        if (m)
            *v = m->value;
        else if (metric_ok(&d->m[M_XID_ERRORS]))
            *v = 0;
        return m != NULL || metric_ok(&d->m[M_XID_ERRORS]);
    }
    *v = own->value;
    for (size_t k = s->nevents; k-- > 0;) {
        const struct gpu_event *e = &s->events[k];
        if (!is_xid(e))
            continue;
        if (e->device_pos == (int)i)
            break;
        if (e->device_pos == d->parent_pos) {
            *v = gpu->value;
            break;
        }
    }
    return true;
}

void prom_dcgm_write(struct prom_ctx *c)
{
    const struct snapshot *s = c->s;
    for (size_t f = 0; f < sizeof(dcgm_fams) / sizeof(dcgm_fams[0]); f++) {
        const struct dcgm_fam *fm = &dcgm_fams[f];
        prom_family(c, fm->name, fm->type, fm->help);
        for (size_t i = 0; i < s->ndevices; i++) {
            const struct device *d = &s->devices[i];
            const char *l = prom_labels_of(c, i, PROM_LAB_DCGM);
            const struct metric *m = &d->m[fm->id];
            if (!l || via_instances(s, i))
                continue;
            double v = m->value;
            if (fm->kind == DK_XID) {
                if (!last_xid_of(s, i, &v))
                    continue;
            } else if (!metric_ok(m)) {
                continue;
            }
            switch (fm->kind) {
            case DK_GPU:
                if (d->kind != DEV_GPU || m->src == MSRC_ESTIMATE)
                    continue;
                break;
            case DK_WIDE:
                if (m->src == MSRC_ESTIMATE)
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
            case DK_PROF:
                if (m->src != MSRC_GPM && m->src != MSRC_DCGM)
                    continue;
                break;
            case DK_NVML:
                if (d->kind != DEV_GPU || d->mig_enabled ||
                    (m->src != MSRC_DIRECT && m->src != MSRC_CARRIED))
                    continue;
                break;
            case DK_NVLINK: {
                const struct metric *rx = &d->m[M_NVLINK_RX];
                if (!metric_ok(rx) || m->src == MSRC_ESTIMATE || rx->src == MSRC_ESTIMATE)
                    continue;
                v += rx->value;
                break;
            }
            case DK_XID: break;
            }
            v *= fm->scale;
            if (fm->whole == DW_FLOOR)
                v = floor(v);
            else if (fm->whole == DW_ROUND)
                v = round(v);
            prom_sample_plain(c, l, v);
        }
    }
}
