/*
 * model.c — scenario values at time t in NVML's units. See model.h.
 */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned model_uint(const struct valfn *f, double t, double lo, double hi)
{
    double v = valfn_eval(f, t);
    if (v < lo)
        v = lo;
    if (v > hi)
        v = hi;
    return (unsigned)llround(v);
}

nvmlReturn_t model_copy_string(char *buf, unsigned len, const char *s)
{
    size_t n = strlen(s);
    if (!buf)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (len < n + 1)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(buf, s, n + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t model_copy_raw(char *buf, unsigned len, const struct sim_raw *r)
{
    if (!buf)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (r->len >= len) {
        memcpy(buf, r->bytes, len); /* the whole buffer, no NUL */
        return NVML_SUCCESS;
    }
    memcpy(buf, r->bytes, r->len);
    buf[r->len] = '\0';
    return NVML_SUCCESS;
}

unsigned model_sat_u32(double x)
{
    if (!(x > 0))
        return 0;
    if (x >= MODEL_U32_MAX)
        return 0xFFFFFFFFu;
    return (unsigned)llround(x);
}

unsigned long long model_sat_u64(double x)
{
    if (!(x > 0))
        return 0;
    if (x >= 18446744073709551616.0) /* 2^64 */
        return 0xFFFFFFFFFFFFFFFFull;
    return (unsigned long long)round(x); /* llround stops at 2^63 */
}

static bool proc_live(const struct sim_proc *p, double t)
{
    return p->start <= t && t < p->end;
}

static unsigned long long proc_used(const struct sim_proc *p, double t)
{
    if (p->used_raw_set)
        return p->used_raw;
    if (!valfn_supported(&p->used_mib))
        return NVML_VALUE_NOT_AVAILABLE_ULL;
    return model_sat_u64(valfn_eval(&p->used_mib, t) * (double)MIB);
}

/*
 * Processes a test names at run time: MIGMON_SIM_PROC_FILE is a file of
 * lines "PID GPU MIB [SLOT]" (SLOT: the MIG slot, -1 or absent for the GPU
 * itself), read again at every call, so a test program can register itself
 * and its children (their real PIDs) as compute processes using MIB of GPU
 * memory, and change that while it runs by appending lines: a PID's last
 * line counts. Lines that do not parse are skipped. Test-only: without the
 * variable nothing is read.
 */
#define CTL_MAX 64
struct ctl_proc {
    unsigned pid;
    int gpu, slot;
    double mib;
};

static int ctl_procs(struct ctl_proc *out)
{
    const char *path = getenv("MIGMON_SIM_PROC_FILE");
    if (!path || !*path)
        return 0;
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    char line[256];
    int n = 0;
    while (n < CTL_MAX && fgets(line, sizeof(line), f)) {
        struct ctl_proc c = {0, 0, -1, 0};
        int got = sscanf(line, "%u %d %lf %d", &c.pid, &c.gpu, &c.mib, &c.slot);
        if (got < 3 || c.pid == 0 || !(c.mib >= 0))
            continue;
        int k = 0; /* a PID's later line replaces its earlier one */
        while (k < n && out[k].pid != c.pid)
            k++;
        out[k] = c;
        if (k == n)
            n++;
    }
    fclose(f);
    return n;
}

/* Sum of the known process memory on gpu/slot (slot -1: MIG off). */
static unsigned long long procs_used_sum(int gpu, int slot, double t)
{
    unsigned long long sum = 0;
    struct ctl_proc ctl[CTL_MAX];
    int nc = ctl_procs(ctl);
    for (int i = 0; i < nc; i++)
        if (ctl[i].gpu == gpu && ctl[i].slot == slot)
            sum += model_sat_u64(ctl[i].mib * (double)MIB);
    for (int i = 0; i < sim_scn->n_procs; i++) {
        const struct sim_proc *p = &sim_scn->procs[i];
        unsigned long long u;
        if (p->gpu != gpu || p->slot != slot || !proc_live(p, t))
            continue;
        u = proc_used(p, t);
        if (u != NVML_VALUE_NOT_AVAILABLE_ULL)
            sum = u > ~sum ? ~0ULL : sum + u; /* saturates: a hostile process's bytes */
    }
    return sum;
}

static unsigned long long mem_used(const struct valfn *f, int gpu, int slot, double t,
                                   unsigned long long usable)
{
    unsigned long long used;
    if (f->kind == VF_UNSET) {
        used = procs_used_sum(gpu, slot, t);
    } else {
        used = model_sat_u64(valfn_eval(f, t) * (double)MIB);
    }
    return used > usable ? usable : used;
}

void model_mig_memory(const struct sim_mig *m, double t, struct model_mem *out)
{
    out->total = m->profile->mem_mib * MIB;
    out->reserved = m->mem_reserved_mib * MIB;
    out->used = mem_used(&m->mem_used_mib, m->gpu, m->slot, t, out->total - out->reserved);
}

void model_gpu_memory(const struct sim_dev *d, double t, struct model_mem *out)
{
    const struct sim_gpu *g = d->g;
    out->total = g->mem_total_mib * MIB;
    out->reserved = g->mem_reserved_mib * MIB;
    if (!d->mig_on) {
        out->used = mem_used(&g->mem_used_mib, d->gpu, -1, t, out->total - out->reserved);
        return;
    }
    /* Aggregate over the MIG devices: their used and reserved memory. */
    out->used = 0;
    for (int s = 0; s < SIM_MAX_MIG_SLOTS; s++) {
        const struct sim_mig *m = sim_mig_live(d->gpu, s, t);
        struct model_mem mm;
        if (!m)
            continue;
        model_mig_memory(m, t, &mm);
        out->used += mm.used + mm.reserved;
    }
    if (out->used > out->total - out->reserved)
        out->used = out->total - out->reserved;
}

double model_power_w(const struct sim_gpu *g, double t)
{
    double w = valfn_eval(&g->power_w, t);
    return w < 0 ? 0 : w;
}

unsigned model_power_usage_mw(const struct sim_gpu *g, double t)
{
    double w;
    if (g->power_average)
        w = valfn_integral(&g->power_w, t) - valfn_integral(&g->power_w, t - 1.0);
    else
        w = model_power_w(g, t);
    return model_sat_u32(w * 1000.0); /* a hostile power saturates at 0xFFFFFFFF mW */
}

unsigned long long model_energy_mj(const struct sim_gpu *g, double t)
{
    double j;
    if (t < 0)
        t = 0;
    if (g->energy_j.kind != VF_UNSET)
        j = valfn_eval(&g->energy_j, t);
    else
        j = g->energy_base_j + valfn_integral(&g->power_w, t);
    return model_sat_u64(j * 1000.0);
}

int model_procs(const struct sim_dev *d, double t, unsigned kind, struct model_proc *out)
{
    int n = 0;
    for (int i = 0; i < sim_scn->n_procs; i++) {
        const struct sim_proc *p = &sim_scn->procs[i];
        const struct sim_mig *m = NULL;
        if (p->gpu != d->gpu || !proc_live(p, t) || (kind && !(p->types & kind)))
            continue;
        if (d->slot >= 0) {
            if (p->slot != d->slot)
                continue;
            m = d->m;
        } else if (d->mig_on) {
            m = p->slot >= 0 ? sim_mig_live(d->gpu, p->slot, t) : NULL;
            if (!m)
                continue;
        }
        out[n].pid = p->pid;
        out[n].used = proc_used(p, t);
        out[n].gi = m ? (unsigned)m->gi : NVML_INVALID_INSTANCE_ID;
        out[n].ci = m ? (unsigned)m->ci : NVML_INVALID_INSTANCE_ID;
        out[n].src = p;
        n++;
    }
    struct ctl_proc ctl[CTL_MAX];
    int nc = ctl_procs(ctl);
    for (int i = 0; i < nc && n < MODEL_MAX_PROCS - 1; i++) {
        const struct sim_mig *m = NULL;
        if (ctl[i].gpu != d->gpu || (kind && !(kind & SIM_PROC_COMPUTE)))
            continue;
        if (d->slot >= 0) {
            if (ctl[i].slot != d->slot)
                continue;
            m = d->m;
        } else if (d->mig_on) {
            m = ctl[i].slot >= 0 ? sim_mig_live(d->gpu, ctl[i].slot, t) : NULL;
            if (!m)
                continue;
        } else if (ctl[i].slot >= 0) {
            continue;
        }
        out[n].pid = ctl[i].pid;
        out[n].used = model_sat_u64(ctl[i].mib * (double)MIB);
        out[n].gi = m ? (unsigned)m->gi : NVML_INVALID_INSTANCE_ID;
        out[n].ci = m ? (unsigned)m->ci : NVML_INVALID_INSTANCE_ID;
        out[n].src = NULL;
        n++;
    }
    return n;
}

unsigned model_nvlinks_up(const struct sim_gpu *g, double t)
{
    return model_uint(&g->nvlinks_up, t, 0, (double)g->nvlinks);
}

unsigned long long model_nvlink_share(unsigned long long total, unsigned link, unsigned up)
{
    if (link >= up)
        return 0;
    return total / up + (link < total % up ? 1 : 0);
}

unsigned long long model_nvlink_kib(const struct sim_gpu *g, int dir, double t)
{
    const struct valfn *f = &g->nvlink_kib[dir];
    if (f->kind != VF_UNSET)
        return model_sat_u64(valfn_eval(f, t));
    const struct valfn *rate = &g->gpm[dir ? SIM_GPM_NVLINK_RX : SIM_GPM_NVLINK_TX];
    if (!valfn_supported(rate) || rate->kind == VF_NAN)
        return 0;
    return model_sat_u64(valfn_integral(rate, t) * 1024.0);
}

unsigned model_nvlink_max_links(void)
{
    if (sim_driver_at_least(580, 0, 0))
        return 36;
    if (sim_driver_at_least(520, 0, 0))
        return 18;
    return 12;
}
