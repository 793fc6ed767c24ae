/*
 * amdgpu.c — the amdgpu backend: AMD GPUs and their compute partitions
 * from the kernel's interfaces (amdgpu.h). A partitioned GPU's partitions
 * follow it as child devices, like MIG instances: profile "CPX/NPS4",
 * memory total from KFD, activity from gpu_metrics xcp_stats.
 */
#include "backend/amdgpu/amdgpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/clock.h"

/* A partition's VRAM in use: the kernel counts it for the whole GPU
 * (mem_info_vram_used) and for each DRM client (fdinfo's drm-memory-vram),
 * never for a partition. The clients' sum is not the partition's use: it
 * leaves out the processes this host cannot see (other PID namespaces,
 * hidepid) and the driver's own allocations, and the model has no way to
 * mark a value as a lower bound; so it is none, whether or not processes
 * are read (docs/decisions.md). */
static const char WHY_PART_VRAM[] =
    "the kernel reports VRAM in use per GPU only; a sum over the partition's visible "
    "processes (listed with their own VRAM) would not be its use";

static int amd_open(void **state, const struct backend_opts *o, char *err, size_t errlen)
{
    *state = NULL;
    struct amd_state *st = calloc(1, sizeof(*st));
    if (!st) {
        snprintf(err, errlen, "amdgpu: out of memory");
        return BACKEND_ERR_NOMEM;
    }
    snprintf(st->sysfs, sizeof(st->sysfs), "%s", o->sysfs_root ? o->sysfs_root : "/sys");
    snprintf(st->proc, sizeof(st->proc), "%s", o->proc_root ? o->proc_root : "/proc");
    st->no_procs = o->no_procs;
    if (amd_discover(st) == 0) {
        snprintf(err, errlen, "amdgpu: no GPU bound to the amdgpu driver under %s/class/drm",
                 st->sysfs);
        free(st);
        return BACKEND_ERR_INIT;
    }
    *state = st;
    return BACKEND_OK;
}

static struct device *add_device(struct snapshot *s)
{
    if (snapshot_reserve(s, s->ndevices + 1) != 0)
        return NULL;
    struct device *d = &s->devices[s->ndevices++];
    memset(d, 0, sizeof(*d));
    d->vendor = VENDOR_AMD;
    for (int k = 0; k < M_COUNT; k++)
        d->m[k] = metric_none("no amdgpu source for this value");
    d->mig_index = d->parent_pos = d->gi_id = d->ci_id = -1;
    d->cc_major = d->cc_minor = -1;
    d->slices = d->slices_total = -1;
    d->process_count = metric_none("not read");
    return d;
}

/* The GPU's partition modes, current and those it can be switched to. */
static void part_modes(struct snapshot *s, const struct amd_gpu *g, struct device *d)
{
    d->has_part_modes = g->compute_mode[0] != '\0';
    if (!d->has_part_modes)
        return;
    snprintf(d->part_compute, sizeof(d->part_compute), "%s", g->compute_mode);
    snprintf(d->part_memory, sizeof(d->part_memory), "%s", g->memory_mode);
    snprintf(d->part_compute_avail, sizeof(d->part_compute_avail), "%s", g->compute_avail);
    snprintf(d->part_memory_avail, sizeof(d->part_memory_avail), "%s", g->memory_avail);
    if (g->compute_avail_why[0])
        d->part_compute_why = snapshot_note(s, "%s", g->compute_avail_why);
    if (g->memory_avail_why[0])
        d->part_memory_why = snapshot_note(s, "%s", g->memory_avail_why);
}

static int amd_sample(void *state, struct snapshot *s, uint64_t deadline_ns)
{
    struct amd_state *st = state;
    size_t first = s->ndevices;
    int index = 0;
    for (size_t i = 0; i < s->ndevices; i++)
        index += s->devices[i].kind == DEV_GPU;
    for (int i = 0; i < st->ngpus; i++) {
        struct amd_gpu *g = &st->gpus[i];
        struct device *d = add_device(s);
        if (!d) {
            snprintf(st->err, sizeof(st->err), "amdgpu: out of memory for devices");
            return -1;
        }
        size_t pos = (size_t)(d - s->devices);
        d->kind = DEV_GPU;
        d->index = index + i;
        snprintf(d->uuid, sizeof(d->uuid), "%s", g->uuid);
        snprintf(d->name, sizeof(d->name), "%s", g->name);
        snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "%s", g->bus_id);
        snprintf(d->serial, sizeof(d->serial), "%s", g->serial);
        snprintf(d->arch, sizeof(d->arch), "%s", g->arch);
        d->mig_enabled = g->nparts > 0;
        d->slices_total = g->nparts > 0 ? g->nparts : -1;
        char mode[32] = "";
        if (g->compute_mode[0])
            snprintf(mode, sizeof(mode), "%s%s%.15s", g->compute_mode,
                     g->memory_mode[0] ? "/" : "", g->memory_mode);
        if (!g->nparts)
            snprintf(d->profile, sizeof(d->profile), "%s", mode);
        part_modes(s, g, d);
        struct amd_gpu_metrics gm;
        char why[AMD_WHY_LEN];
        amd_io_set_deadline(g->io, deadline_ns);
        amd_sample_gpu(s, g, d, &gm);
        /* a read that has not come back: the GPU is stalled, as an NVIDIA
         * GPU stuck in a driver call (its partitions with it) */
        if (amd_io_stalled(g->io, why, sizeof(why))) {
            d->stall = snapshot_note(s, "%s", why);
            s->partial = true;
        }
        for (int k = 0; k < g->nparts; k++) {
            const struct amd_part *p = &g->parts[k];
            struct device *c = add_device(s);
            if (!c) {
                snprintf(st->err, sizeof(st->err), "amdgpu: out of memory for devices");
                return -1;
            }
            d = &s->devices[pos]; /* the array may have moved */
            c->kind = DEV_MIG;
            c->index = d->index;
            c->mig_index = k;
            c->parent_pos = (int)pos;
            c->gi_id = p->xcp;
            snprintf(c->uuid, sizeof(c->uuid), "%s-P%d", g->uuid, p->xcp);
            snprintf(c->parent_uuid, sizeof(c->parent_uuid), "%s", g->uuid);
            snprintf(c->name, sizeof(c->name), "%s", g->name);
            snprintf(c->pci_bus_id, sizeof(c->pci_bus_id), "%s", g->bus_id);
            snprintf(c->serial, sizeof(c->serial), "%s", g->serial);
            snprintf(c->arch, sizeof(c->arch), "%s", g->arch);
            snprintf(c->profile, sizeof(c->profile), "%s", mode);
            c->slices = 1;
            c->m[M_MEM_TOTAL] = p->vram_total;
            if (!metric_ok(&p->vram_total) && p->vram_why[0])
                c->m[M_MEM_TOTAL] = metric_none(snapshot_note(s, "%s", p->vram_why));
            c->m[M_MEM_USED] = metric_none(WHY_PART_VRAM);
            if (k < gm.num_partition || (gm.format < 0 && gm.part_busy[k].why))
                c->m[M_GPU_UTIL] = gm.part_busy[k]; /* or why the table was not read */
            else if (gm.num_partition < 0)
                c->m[M_GPU_UTIL] = metric_none(snapshot_note(
                    s, "%s/gpu_metrics: %s", g->dev,
                    gm.why ? gm.why : "no per-partition stats before format 1.6"));
            else
                c->m[M_GPU_UTIL] = metric_none(snapshot_note(
                    s, "%s/gpu_metrics: num_partition is %d", g->dev, gm.num_partition));
            /* GPU-wide values, read from the parent as on a MIG device */
            c->stall = d->stall;
            c->throttle_mask = d->throttle_mask;
            c->throttle_valid = d->throttle_valid;
            c->throttle_why = d->throttle_why;
            for (int m = 0; m < M_COUNT; m++)
                if (metric_info((enum metric_id)m)->gpu_wide)
                    c->m[m] = d->m[m];
        }
    }
    if (!st->no_procs) {
        amd_scan_processes(st, s, first, clock_mono_ns());
    } else {
        /* Nothing shows processes (an export without --export-processes):
         * /proc is not walked. */
        static const char why[] = "processes not read (nothing shows them)";
        for (size_t k = first; k < s->ndevices; k++) {
            struct device *d = &s->devices[k];
            d->proc_first = s->nprocs;
            d->nprocs = 0;
            d->process_count = metric_none(why);
        }
    }
    /* what no file's own check caught (the gpu_metrics table's values,
     * fdinfo's process memory): outside its range is none, as from NVML */
    snapshot_check_ranges_from(s, first);
    if (!s->driver_version[0])
        snprintf(s->driver_version, sizeof(s->driver_version), "amdgpu");
    return 0;
}

static void amd_close(void *state)
{
    struct amd_state *st = state;
    if (!st)
        return;
    for (int i = 0; i < st->ngpus; i++)
        amd_io_close(st->gpus[i].io);
    free(st);
}

static const char *amd_last_error(void *state)
{
    return ((struct amd_state *)state)->err;
}

const struct backend_ops amdgpu_backend_ops = {
    .name = "amdgpu",
    .open = amd_open,
    .sample = amd_sample,
    .close = amd_close,
    .last_error = amd_last_error,
};
