/*
 * model.h — what the simulated hardware reads at time t: scenario value
 * functions turned into the units and invariants NVML reports (bytes with
 * used <= total, mW, monotonic mJ, live process lists), plus the wrapper
 * macros the API files use to define exported functions.
 */
#ifndef SIM_MODEL_H
#define SIM_MODEL_H

#include "exports.h"
#include "state.h"

#define MIB 1048576ULL

/* Defines an exported function whose device parameter is named `device`:
 * enters the simulator (init, driver version, handle, faults), then
 * evaluates `impl` (an expression using `c`, the struct sim_call). */
#define SIM_DEVICE_FN(name, params, impl)                                                         \
    nvmlReturn_t name params                                                                       \
    {                                                                                              \
        struct sim_call c;                                                                         \
        nvmlReturn_t r = sim_enter_dev(&c, SYM_##name, device);                                    \
        if (r == NVML_SUCCESS)                                                                     \
            r = (impl);                                                                            \
        return sim_leave(r);                                                                       \
    }

/* The same for functions without a device ("system" fault target). */
#define SIM_SYSTEM_FN(name, params, impl)                                                         \
    nvmlReturn_t name params                                                                       \
    {                                                                                              \
        struct sim_call c;                                                                         \
        nvmlReturn_t r = sim_enter(&c, SYM_##name);                                                \
        if (r == NVML_SUCCESS)                                                                     \
            r = sim_fault(&c, -1, -1);                                                             \
        if (r == NVML_SUCCESS)                                                                     \
            r = (impl);                                                                            \
        return sim_leave(r);                                                                       \
    }

/* f(t) clamped to [lo, hi] and rounded. */
unsigned model_uint(const struct valfn *f, double t, double lo, double hi);
/* Copies s into buf: 2 if buf is NULL, 7 if it does not fit (with the NUL). */
nvmlReturn_t model_copy_string(char *buf, unsigned len, const char *s);
/* A hostile raw string: min(r->len, len) bytes of it, then a NUL only if
 * there is room; SUCCESS whatever the length (2 if buf is NULL). */
nvmlReturn_t model_copy_raw(char *buf, unsigned len, const struct sim_raw *r);

/* The bounds a reading is clamped to: the plausible ones, or in a hostile
 * scenario whatever an unsigned int holds. */
#define MODEL_U32_MAX 4294967295.0
static inline double model_hi(double hi)
{
    return sim_scn->sys.hostile ? MODEL_U32_MAX : hi;
}
static inline double model_lo(double lo)
{
    return sim_scn->sys.hostile ? 0 : lo;
}
/* x rounded and saturated to 0..UINT_MAX / 0..ULLONG_MAX (no overflow). */
unsigned model_sat_u32(double x);
unsigned long long model_sat_u64(double x);

struct model_mem {
    unsigned long long total, reserved, used; /* bytes; used excludes reserved */
};
/* A physical GPU with MIG off, or (aggregate) with MIG on. */
void model_gpu_memory(const struct sim_dev *d, double t, struct model_mem *out);
void model_mig_memory(const struct sim_mig *m, double t, struct model_mem *out);

/* Instantaneous board power in W. */
double model_power_w(const struct sim_gpu *g, double t);
/* What nvmlDeviceGetPowerUsage reports: a 1 s average, or instantaneous on
 * GA100 and older (docs/nvml-facts.md §4). */
unsigned model_power_usage_mw(const struct sim_gpu *g, double t);
/* Energy since the driver loaded, mJ: monotonic by construction. */
unsigned long long model_energy_mj(const struct sim_gpu *g, double t);

/* NVLink (api_health.c, api_samples.c). The links up at t (links 0 ..
 * up-1 are the active ones); a GPU-wide total spread over them, link i
 * getting total/up plus one for i < total % up, so the links' values add up
 * to the total exactly (0 for a link that is down); the data bytes (KiB)
 * sent (dir 0) or received (1) since init: the nvlink_data_*_kib key, or
 * the integral of the GPM NVLink rate (MiB/s x 1024). */
unsigned model_nvlinks_up(const struct sim_gpu *g, double t);
unsigned long long model_nvlink_share(unsigned long long total, unsigned link, unsigned up);
unsigned long long model_nvlink_kib(const struct sim_gpu *g, int dir, double t);
/* NVML_NVLINK_MAX_LINKS of the scenario's driver. */
unsigned model_nvlink_max_links(void);

/* True once this process has taken a GPM sample under a scenario with
 * gpm_corrupts_session (api_gpm.c): its memory reads fail from then on. */
bool gpm_session_corrupted(void);

struct model_proc {
    unsigned pid;
    unsigned long long used; /* bytes or NVML_VALUE_NOT_AVAILABLE_ULL */
    unsigned gi, ci;         /* NVML_INVALID_INSTANCE_ID when MIG is off */
    const struct sim_proc *src; /* NULL for the injected "grow" process */
};

#define MODEL_MAX_PROCS (SIM_MAX_PROCS + 1 + 64) /* + the grow process, + a test's (model.c) */
/*
 * The processes of one kind (SIM_PROC_*) on device d at time t. On a
 * MIG-enabled parent this is the aggregate of its MIG devices (the caller
 * checks privilege). kind 0 lists every process once (for utilisation).
 */
int model_procs(const struct sim_dev *d, double t, unsigned kind, struct model_proc *out);

#endif
