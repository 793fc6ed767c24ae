/*
 * nvml.c — one GPU's sample: the GPU, its MIG slots and their devices, one
 * struct device each, with the identity a lost GPU keeps; the values come
 * from nvml_read.c, the process lists from nvml_procs.c, each device's
 * cached facts and remembered answers from its entry in the context's
 * cache (nvml_state.c).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/gpm/gpm.h"
#include "backend/nvml/mig_util.h"
#include "backend/nvml/nvml.h"
#include "backend/nvml/nvml_load.h"
#include "backend/nvml/nvml_procs.h"
#include "backend/nvml/nvml_read.h"
#include "backend/nvml/nvml_state.h"
#include "core/clock.h"
#include "core/debuglog.h"
#include "core/text.h"

/* ------------------------------------------------------------ GPM values */

/* The GPM-only metrics of a device (occupancy, tensor and FP pipes, and on
 * a physical GPU NVLink); none with GPM's reason when it has no value. */
static void apply_gpm_extras(const struct gpm_view *gv, struct device *d, bool gpu)
{
    static const struct {
        enum metric_id id;
        enum gpm_metric k;
    } map[] = {
        {M_SM_OCCUPANCY, GPM_SM_OCC},   {M_TENSOR_UTIL, GPM_TENSOR}, {M_DFMA_TENSOR_UTIL, GPM_DFMA},
        {M_HMMA_TENSOR_UTIL, GPM_HMMA}, {M_IMMA_TENSOR_UTIL, GPM_IMMA}, {M_FP64_UTIL, GPM_FP64},
        {M_FP32_UTIL, GPM_FP32},        {M_FP16_UTIL, GPM_FP16},     {M_INT_UTIL, GPM_INT},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        d->m[map[i].id] = gpm_metric(gv, map[i].k);
    if (gpu) {
        d->m[M_NVLINK_TX] = gpm_metric(gv, GPM_NVLINK_TX);
        d->m[M_NVLINK_RX] = gpm_metric(gv, GPM_NVLINK_RX);
        /* GPM's PCIe rates only where NVML's direct counter is missing. */
        struct metric tx = gpm_metric(gv, GPM_PCIE_TX), rx = gpm_metric(gv, GPM_PCIE_RX);
        if (!metric_ok(&d->m[M_PCIE_TX]) && metric_ok(&tx))
            d->m[M_PCIE_TX] = tx;
        if (!metric_ok(&d->m[M_PCIE_RX]) && metric_ok(&rx))
            d->m[M_PCIE_RX] = rx;
    }
}

/* ------------------------------------------------------------ the backend */

/* A device with nothing read yet: one copy of it per device and tick (a
 * memset and a loop over the metrics cost 5 % of a DGX tick). Written once,
 * under pthread_once; read-only after. */
static struct device blank_device;
static pthread_once_t blank_once = PTHREAD_ONCE_INIT;

static void blank_init(void)
{
    struct device *d = &blank_device;
    memset(d, 0, sizeof(*d));
    for (int k = 0; k < M_COUNT; k++)
        d->m[k] = metric_none("not read");
    d->m[M_GTT_USED] = d->m[M_GTT_TOTAL] = metric_none("GTT is amdgpu's: NVIDIA GPUs have none");
    d->mig_index = d->parent_pos = d->gi_id = d->ci_id = -1;
    d->cc_major = d->cc_minor = -1;
    d->slices = d->slices_total = -1;
    d->process_count = metric_none("not read");
}

static struct device *next_device(struct nvml_state *st, struct snapshot *s)
{
    if (snapshot_reserve(s, s->ndevices + 1) != 0) {
        snprintf(st->err, sizeof(st->err), "out of memory for %zu devices", s->ndevices + 1);
        return NULL;
    }
    pthread_once(&blank_once, blank_init);
    struct device *d = &s->devices[s->ndevices++];
    memcpy(d, &blank_device, sizeof(*d));
    return d;
}

/* Walk the MIG slots of a MIG-enabled GPU: handle and UUID of every
 * occupied slot (empty slots answer NOT_FOUND). */
static void walk_migs(struct nvml_state *st, nvmlDevice_t parent_h, const char *parent_uuid)
{
    const struct nvml_fns *f = &st->lib.f;
    st->nslots = 0;
    st->slots_valid = true;
    st->slots_tick = st->tick;
    unsigned int max = 0;
    if (!f->max_mig_count || !f->mig_handle_by_index ||
        CALL(st, "nvmlDeviceGetMaxMigDeviceCount", f->max_mig_count(parent_h, &max)) != 0)
        return;
    if (max > 64)
        max = 64; /* seven on every GPU so far; more is a driver error */
    if (max > st->slots_cap) {
        struct mig_slot *n = realloc(st->slots, max * sizeof(*n));
        if (!n)
            return;
        st->slots = n;
        st->slots_cap = max;
    }
    for (unsigned int slot = 0; slot < max; slot++) {
        struct mig_slot *m = &st->slots[st->nslots];
        m->slot = slot;
        m->h = NULL;
        m->uuid[0] = '\0';
        m->uuid_why = NULL;
        if (CALL(st, "nvmlDeviceGetMigDeviceHandleByIndex",
                 f->mig_handle_by_index(parent_h, slot, &m->h)) != NVML_SUCCESS)
            continue; /* NOT_FOUND: empty slot */
        /* A device whose UUID cannot be read is still listed, with the
         * reason; the next walk (slow cadence) tries again. */
        if (!f->uuid)
            m->uuid_why = nvml_rc_reason(NVML_ERROR_FUNCTION_NOT_FOUND);
        else if (CALL(st, "nvmlDeviceGetUUID", f->uuid(m->h, m->uuid, sizeof(m->uuid))) != 0)
            m->uuid_why = nvml_rc_reason(st->rc);
        else
            text_clean(m->uuid, sizeof(m->uuid));
        if (m->uuid_why)
            m->uuid[0] = '\0';
        else if (!m->uuid[0])
            m->uuid_why = "driver returned an empty UUID";
        /* A UUID is an identity: one given twice (or the parent's) is not. */
        for (size_t k = 0; !m->uuid_why && k < st->nslots; k++)
            if (strcmp(st->slots[k].uuid, m->uuid) == 0)
                m->uuid_why = "driver returned the same UUID for two MIG devices";
        if (!m->uuid_why && strcmp(m->uuid, parent_uuid) == 0)
            m->uuid_why = "driver returned the GPU's UUID for a MIG device";
        if (m->uuid_why)
            m->uuid[0] = '\0';
        st->nslots++;
    }
}

/* A MIG handle's answer that means the device behind it is gone. */
static bool mig_gone(const struct device *d)
{
    const char *w = d->m[M_MEM_USED].why;
    return !metric_ok(&d->m[M_MEM_USED]) &&
           (w == nvml_rc_reason(NVML_ERROR_INVALID_ARGUMENT) ||
            w == nvml_rc_reason(NVML_ERROR_NOT_FOUND) ||
            w == nvml_rc_reason(NVML_ERROR_GPU_IS_LOST));
}

/* The MIG devices of a MIG-enabled GPU, from the cached slots; false when
 * a cached handle turned out to be stale (the caller re-walks and retries). */
static bool sample_migs(struct nvml_state *st, struct snapshot *s, nvmlDevice_t parent_h,
                        size_t parent_pos)
{
    /* The label names the device in --debug lines only. */
    bool label = debuglog_enabled();
    char parent_label[16] = "";
    if (label)
        snprintf(parent_label, sizeof(parent_label), "%.15s", st->label);
    nvml_procs_mig_begin(st, parent_h);
    bool fresh = true;
    for (size_t k = 0; k < st->nslots; k++) {
        const struct mig_slot *m = &st->slots[k];
        if (label)
            snprintf(st->label, sizeof(st->label), "%.15s/MIG%u", parent_label, m->slot);
        /* Static facts are cached by UUID; without one, by parent and slot
         * (a key no UUID can take: UUIDs start with "GPU-" or "MIG-"). */
        char key[MIGMON_UUID_LEN];
        if (m->uuid[0])
            text_copy(key, sizeof(key), m->uuid);
        else
            snprintf(key, sizeof(key), "?%u@%.*s", m->slot, (int)sizeof(key) - 16,
                     s->devices[parent_pos].uuid);
        struct dev_cache *c = nvml_cache_get(st, key, true);
        struct device *d = next_device(st, s);
        if (!c || !d)
            break;
        const struct device *parent = &s->devices[parent_pos];
        c->seen = true;
        if (nvml_static_due(st, c))
            nvml_read_mig_static(st, c, m->h);
        d->kind = DEV_MIG;
        d->index = parent->index;
        d->mig_index = (int)m->slot;
        d->parent_pos = (int)parent_pos;
        text_copy(d->uuid, sizeof(d->uuid), m->uuid);
        d->uuid_why = m->uuid_why;
        text_copy(d->parent_uuid, sizeof(d->parent_uuid), parent->uuid);
        text_copy(d->name, sizeof(d->name), c->name);
        text_copy(d->pci_bus_id, sizeof(d->pci_bus_id), parent->pci_bus_id);
        text_copy(d->serial, sizeof(d->serial), parent->serial);
        text_copy(d->arch, sizeof(d->arch), parent->arch);
        text_copy(d->profile, sizeof(d->profile), c->profile);
        d->cc_major = parent->cc_major;
        d->cc_minor = parent->cc_minor;
        d->gi_id = c->gi_id;
        d->ci_id = c->ci_id;
        d->slices = c->slices;
        d->slices_total = parent->slices_total;
        nvml_read_mig(st, c, m->h, parent, d);
        if (mig_gone(d)) {
            fresh = false;
            break;
        }
        nvml_procs_mig(st, c, m->h, s, (size_t)(d - s->devices));
    }
    if (label)
        snprintf(st->label, sizeof(st->label), "%s", parent_label);
    return fresh;
}

/* The part's devices as this GPU's identity (a sample that read it). */
static void ident_save(struct nvml_state *st, const struct snapshot *part)
{
    if (part->ndevices > st->ident_cap) {
        struct device *n = realloc(st->ident, part->ndevices * sizeof(*n));
        if (!n) {
            st->nident = 0; /* an identity half saved is worse than none */
            return;
        }
        st->ident = n;
        st->ident_cap = part->ndevices;
    }
    memcpy(st->ident, part->devices, part->ndevices * sizeof(*part->devices));
    st->nident = part->ndevices;
}

/* The part as the identity last read: the same devices (GPU, MIG devices)
 * with every metric none for why and no processes. False when there is no
 * identity to give. */
static bool ident_replay(struct nvml_state *st, struct snapshot *part, const char *why)
{
    if (!st->nident)
        return false;
    part->ndevices = 0;
    part->nprocs = 0;
    for (size_t k = 0; k < st->nident; k++) {
        struct device *d = next_device(st, part);
        if (!d)
            break;
        *d = st->ident[k];
        for (int j = 0; j < M_COUNT; j++)
            d->m[j] = metric_none(why);
        d->process_count = metric_none(why);
        d->throttle_mask = 0;
        d->throttle_valid = false;
        d->proc_first = 0;
        d->nprocs = 0;
        d->stall = NULL; /* pointed into an older snapshot's notes */
    }
    return true;
}

/* Every device of the part marked lost (or not), with how long ago. */
static void mark_lost(struct nvml_state *st, struct snapshot *part)
{
    uint64_t now = clock_mono_ns();
    if (st->lost && !st->lost_since_ns)
        st->lost_since_ns = now;
    else if (!st->lost)
        st->lost_since_ns = 0;
    for (size_t k = 0; k < part->ndevices; k++) {
        part->devices[k].lost = st->lost;
        part->devices[k].lost_for_s = st->lost ? (double)(now - st->lost_since_ns) / 1e9 : 0;
    }
}

void nvml_sample_gpu(struct nvml_state *st, unsigned int i, nvmlDevice_t h, nvmlReturn_t hrc,
                     const char *uuid, struct snapshot *part)
{
    const struct nvml_fns *f = &st->lib.f;
    part->ndevices = 0;
    part->nprocs = 0;
    st->err[0] = '\0';
    st->tick++;
    if (!st->slow_every)
        st->slow_every = 5;
    if (debuglog_enabled()) /* names the device in --debug lines only */
        snprintf(st->label, sizeof(st->label), "GPU%u", i);
    struct device *d = next_device(st, part);
    if (!d)
        return;
    d->kind = DEV_GPU;
    d->index = (int)i;
    /* _v2 counts GPUs we may not open: show them, say why. The UUID comes
     * with the enumeration; read it here only when that failed. */
    st->rc = NVML_SUCCESS;
    if (uuid && uuid[0])
        text_copy(d->uuid, sizeof(d->uuid), uuid);
    if (hrc != NVML_SUCCESS ||
        (!d->uuid[0] && f->uuid &&
         CALL(st, "nvmlDeviceGetUUID", f->uuid(h, d->uuid, sizeof(d->uuid))) != 0)) {
        const char *why = nvml_rc_reason(hrc != NVML_SUCCESS ? hrc : st->rc);
        st->lost = hrc == NVML_ERROR_GPU_IS_LOST || st->rc == NVML_ERROR_GPU_IS_LOST;
        /* A GPU read before keeps what it was: which GPU died is what an
         * operator needs to drain the node or return the board. */
        if (!ident_replay(st, part, why)) {
            d->uuid[0] = '\0';
            d->uuid_why = why;
            d->inaccessible = st->lost ? NULL : why;
            for (int k = 0; k < M_COUNT; k++)
                d->m[k] = metric_none(why);
            d->process_count = metric_none(why);
        }
        mark_lost(st, part);
        nvml_cache_prune(st);
        return;
    }
    text_clean(d->uuid, sizeof(d->uuid));
    struct dev_cache *c = nvml_cache_get(st, d->uuid, false);
    if (!c)
        return;
    c->seen = true;
    if (nvml_static_due(st, c))
        nvml_read_gpu_static(st, c, h);

    /* MIG mode: at the slow cadence, and at once when a MIG handle turned
     * out stale (a mode change destroys every instance). A transient error
     * keeps the last known mode. */
    unsigned int cur = 0, pend = 0;
    int mig = c->mig_mode < 0 ? 0 : c->mig_mode;
    if (c->mig_mode < 0 || !st->slots_valid || st->tick - c->mig_mode_tick >= st->slow_every) {
        c->mig_mode_tick = st->tick;
        if (f->mig_mode && CALL(st, "nvmlDeviceGetMigMode", f->mig_mode(h, &cur, &pend)) == 0)
            mig = cur == NVML_DEVICE_MIG_ENABLE;
        else if (!f->mig_mode || st->rc == NVML_ERROR_NOT_SUPPORTED || c->mig_mode < 0)
            mig = 0;
    }
    if (mig != c->mig_mode) {
        /* MIG mode changed: what was unsupported may now work and v.v.;
         * the slots and the way processes are read start over. */
        c->memo = 0;
        c->settings_tick = 0;
        c->mem_denied_until = 0;
        st->slots_valid = false;
        st->proc_mode = PM_UNKNOWN;
        c->slices_total = mig ? nvml_read_slices_total(st, h) : -1;
        c->mig_mode = mig;
    }
    d->mig_enabled = mig;
    text_copy(d->name, sizeof(d->name), c->name);
    text_copy(d->pci_bus_id, sizeof(d->pci_bus_id), c->pci);
    text_copy(d->serial, sizeof(d->serial), c->serial);
    text_copy(d->arch, sizeof(d->arch), c->arch);
    d->cc_major = c->cc_major;
    d->cc_minor = c->cc_minor;
    d->slices_total = c->slices_total;
    st->pus_dev = NULL; /* set by this device's nvml_process_util, if it runs */
    nvml_read_gpu_dynamic(st, c, h, d);
    if (mig) {
        if (!st->slots_valid || st->tick - st->slots_tick >= st->slow_every)
            walk_migs(st, h, part->devices[0].uuid);
        size_t nprocs0 = part->nprocs;
        st->npending = 0;
        if (!sample_migs(st, part, h, 0)) {
            /* a MIG device was destroyed: walk again and redo the instances */
            part->ndevices = 1;
            part->nprocs = nprocs0;
            st->npending = 0;
            walk_migs(st, h, part->devices[0].uuid);
            sample_migs(st, part, h, 0);
        }
        nvml_procs_mig_done(st, h, part, 0);
    } else {
        nvml_procs_gpu(st, c, h, part, 0);
    }
    /* Calls on a GPU that fell off the bus answer GPU_IS_LOST; it keeps
     * its identity (cached) and is marked lost. */
    const char *lost_why = nvml_rc_reason(NVML_ERROR_GPU_IS_LOST);
    st->lost = part->devices[0].m[M_TEMP].why == lost_why &&
               part->devices[0].m[M_MEM_USED].why == lost_why;
    /* Its MIG devices, whose handles now fail, stay listed as they were. */
    if (!st->lost || !ident_replay(st, part, lost_why))
        ident_save(st, part);
    mark_lost(st, part);
    nvml_cache_prune(st);
}

void nvml_gpm_client_view(const void *src, const struct device *d, struct gpm_view *out)
{
    const struct gpm_client *g = src;
    if (d->kind == DEV_GPU)
        gpm_client_gpu(g, d->uuid, out);
    else
        gpm_client_mig(g, d->parent_uuid, d->gi_id, d->uuid, out);
}

void nvml_gpm_apply(struct snapshot *s, size_t first, size_t end, nvml_gpm_view_fn view,
                    const void *src)
{
    for (size_t i = first; i < end && i < s->ndevices; i++) {
        struct device *d = &s->devices[i];
        /* A MIG device without a readable UUID can still take its GPU
         * instance's values (found by parent and GI id). */
        if (!d->uuid[0] && (d->kind == DEV_GPU || d->gi_id < 0 || !d->parent_uuid[0]))
            continue;
        /* A GPU the driver calls lost has no activity to show, whatever the
         * helper last read (its own calls may not have failed yet). */
        if (d->lost)
            continue;
        struct gpm_view gv;
        view(src, d, &gv);
        if (d->kind == DEV_GPU) {
            /* Whole-GPU activity. SM utilisation from GPM replaces the
             * per-process upper bound; a MIG-enabled GPU, for which NVML has
             * no utilisation, gets GPM's graphics and DRAM figures (without
             * a GPM value it keeps NVML's reason; its MIG devices carry
             * GPM's). */
            apply_gpm_extras(&gv, d, true);
            struct metric gsm = gpm_metric(&gv, GPM_SM);
            if (metric_ok(&gsm))
                d->m[M_SM_UTIL] = gsm;
            if (d->mig_enabled && !metric_ok(&d->m[M_GPU_UTIL])) {
                struct metric gg = gpm_metric(&gv, GPM_GRAPHICS), gm = gpm_metric(&gv, GPM_DRAM);
                if (metric_ok(&gg))
                    d->m[M_GPU_UTIL] = gg;
                if (metric_ok(&gm))
                    d->m[M_MEM_UTIL] = gm;
                /* NVML's reason alone hides why GPM has no figure either
                 * (off, stalled, a driver it is disabled on): both said */
                for (int k = 0; k < 2; k++) {
                    struct metric *m = &d->m[k ? M_MEM_UTIL : M_GPU_UTIL];
                    const struct metric *gv_k = k ? &gm : &gg;
                    if (!metric_ok(m))
                        m->why = metric_why_join(m->why, gv_k->why);
                }
            }
        } else {
            /* The compute instance's own values where the driver samples MIG
             * handles (595+), else its GPU instance's; GPU-wide GPM values
             * (NVLink) were copied from the parent. */
            mig_util_apply_gpm(d->arch, gpm_metric(&gv, GPM_GRAPHICS), gpm_metric(&gv, GPM_DRAM),
                               gpm_metric(&gv, GPM_SM), &d->m[M_GPU_UTIL], &d->m[M_MEM_UTIL],
                               &d->m[M_SM_UTIL]);
            apply_gpm_extras(&gv, d, false);
            if (d->parent_pos >= 0 && (size_t)d->parent_pos < s->ndevices) {
                d->m[M_NVLINK_TX] = s->devices[d->parent_pos].m[M_NVLINK_TX];
                d->m[M_NVLINK_RX] = s->devices[d->parent_pos].m[M_NVLINK_RX];
            }
        }
    }
}
