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
            if (!l || !metric_ok(m) || via_instances(s, i))
                continue;
            double v = m->value;
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
