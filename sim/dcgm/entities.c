/*
 * entities.c — the simulated DCGM's entities: a GPU in MIG mode has its GPU
 * instances numbered in the order of their first MIG device (slot order),
 * and its compute instances (the simulator's MIG devices) in slot order;
 * DCGM's entity id of either is gpuId * DCGM_MAX_INSTANCES_PER_GPU + that
 * index, as DCGM numbers them. See dcgm_sim.h.
 */
#include "dcgm_sim.h"

/* The GIs (gi true) or CIs of gpu at t in DCGM's order; returns the count. */
int dcgm_layout(int gpu, double t, bool gi, struct dcgm_inst out[SIM_MAX_MIG_SLOTS])
{
    long gis[SIM_MAX_MIG_SLOTS];
    int ngi = 0, n = 0;
    if (gpu < 0 || gpu >= sim_scn->n_gpus || sim_scn->gpus[gpu].mig_mode != SIM_MIG_ON ||
        !sim_scn->gpus[gpu].accessible)
        return 0;
    for (int slot = 0; slot < SIM_MAX_MIG_SLOTS; slot++) {
        const struct sim_mig *m = sim_mig_live(gpu, slot, t);
        int k = 0;
        if (!m)
            continue;
        while (k < ngi && gis[k] != m->gi)
            k++;
        if (k == ngi) {
            gis[ngi++] = m->gi;
            if (gi)
                out[n++] = (struct dcgm_inst){m->gi, (unsigned)k, m};
        }
        if (!gi)
            out[n++] = (struct dcgm_inst){m->gi, (unsigned)k, m};
    }
    return n;
}

int dcgm_entity_gpu(dcgmGroupEntityPair_t e)
{
    if (e.entityGroupId == DCGM_FE_GPU)
        return (int)e.entityId;
    if (e.entityGroupId == DCGM_FE_GPU_I || e.entityGroupId == DCGM_FE_GPU_CI)
        return (int)(e.entityId / DCGM_MAX_INSTANCES_PER_GPU);
    return -1;
}

bool dcgm_entity_resolve(const struct dcgm_conn *c, dcgmGroupEntityPair_t e, double t,
                         struct gpm_target *out)
{
    struct dcgm_inst in[SIM_MAX_MIG_SLOTS];
    int gpu = dcgm_entity_gpu(e), n;
    unsigned local = e.entityId % DCGM_MAX_INSTANCES_PER_GPU;
    if (gpu < 0 || gpu >= sim_scn->n_gpus || !sim_scn->gpus[gpu].accessible)
        return false;
    if (e.entityGroupId == DCGM_FE_GPU) {
        *out = (struct gpm_target){GPM_GPU, gpu, -1, -1};
        return true;
    }
    if (dcgm_mig_denied(c))
        return false;
    n = dcgm_layout(gpu, t, e.entityGroupId == DCGM_FE_GPU_I, in);
    if ((int)local >= n)
        return false;
    if (e.entityGroupId == DCGM_FE_GPU_I)
        *out = (struct gpm_target){GPM_GI, gpu, in[local].gi, -1};
    else
        *out = (struct gpm_target){GPM_CI, gpu, in[local].gi, (int)(in[local].m - sim_scn->migs)};
    return true;
}

int dcgm_instances(bool gi, double t, dcgmGroupEntityPair_t *out, int max)
{
    int n = 0;
    for (int gpu = 0; gpu < sim_scn->n_gpus; gpu++) {
        struct dcgm_inst in[SIM_MAX_MIG_SLOTS];
        int k = dcgm_layout(gpu, t, gi, in);
        for (int i = 0; i < k && n < max; i++)
            out[n++] =
                (dcgmGroupEntityPair_t){gi ? DCGM_FE_GPU_I : DCGM_FE_GPU_CI,
                                        (dcgm_field_eid_t)(gpu * DCGM_MAX_INSTANCES_PER_GPU + i)};
    }
    return n;
}

bool dcgm_is_prof_field(unsigned short f)
{
    return f >= DCGM_FI_PROF_GR_ENGINE_ACTIVE && f <= DCGM_FI_PROF_NVLINK_RX_BYTES;
}

/* Under multi_pass: tensor and the FP pipes in pass 1, the rest in pass 0. */
int dcgm_prof_pass(unsigned short f)
{
    return f == DCGM_FI_PROF_PIPE_TENSOR_ACTIVE || f == DCGM_FI_PROF_PIPE_FP64_ACTIVE ||
           f == DCGM_FI_PROF_PIPE_FP32_ACTIVE || f == DCGM_FI_PROF_PIPE_FP16_ACTIVE;
}
