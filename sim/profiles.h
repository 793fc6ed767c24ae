/*
 * profiles.h — GPU-instance profiles per MIG-capable GPU model, as
 * `nvidia-smi mig -lgip` lists them, and what nvmlDeviceGetGpuInstanceProfileInfo
 * and nvmlDeviceGetAttributes_v2 report from them.
 */
#ifndef SIM_PROFILES_H
#define SIM_PROFILES_H

#include <stdbool.h>

struct sim_profile {
    const char *name;  /* "3g.40gb" */
    unsigned index;    /* the NVML_GPU_INSTANCE_PROFILE_* index callers pass */
    unsigned id;       /* the profile id (nvidia-smi mig -lgip "ID") */
    unsigned slices;   /* GPU-instance (compute) slices */
    unsigned instances; /* how many of this profile fit on the GPU */
    unsigned sms;
    unsigned ce, dec, enc, jpg, ofa;
    unsigned long long mem_mib;
};

struct sim_profile_set {
    const char *name;         /* "a100-80gb" */
    unsigned max_mig_devices; /* nvmlDeviceGetMaxMigDeviceCount with MIG on */
    unsigned n;
    const struct sim_profile *profiles;
};

const struct sim_profile_set *profiles_find_set(const char *name);
/* The set a GPU of this marketing name has, or NULL (not MIG-capable). */
const struct sim_profile_set *profiles_guess_set(const char *gpu_name);
const struct sim_profile *profiles_find(const struct sim_profile_set *set, const char *name);
const struct sim_profile *profiles_by_index(const struct sim_profile_set *set, unsigned index);
/* One-line list of the set names, for error messages. */
const char *profiles_set_names(void);

#endif
