/*
 * profiles.c — GPU-instance profile tables.
 *
 * Names, profile ids, slice and instance counts follow `nvidia-smi mig -lgip`
 * as NVIDIA's MIG User Guide lists it for each GPU ("Supported MIG
 * Profiles"); the profile index is the NVML_GPU_INSTANCE_PROFILE_* constant
 * of the slice count (REV1 = "+me", REV2 = the 1-slice profile with twice the
 * memory). SM, engine and MiB figures are close to the guide's, not copied
 * from a device: they only need to be plausible and self-consistent (the
 * 7-slice profile holds the most; memory never exceeds the GPU's).
 */
#include "profiles.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

/* Profile indices, nvml.h NVML_GPU_INSTANCE_PROFILE_*. */
enum {
    P_1 = 0x0,
    P_2 = 0x1,
    P_3 = 0x2,
    P_4 = 0x3,
    P_7 = 0x4,
    P_1_REV1 = 0x7, /* 1g.*+me: one slice with all media engines */
    P_2_REV1 = 0x8, /* 2g.*+me (A30) */
    P_1_REV2 = 0x9, /* 1g with two memory slices */
};

/*              name          index     id sl inst  SMs ce dec enc jpg ofa  MiB */
static const struct sim_profile a100_80gb[] = {
    {"1g.10gb", P_1, 19, 1, 7, 14, 1, 0, 0, 0, 0, 9728},
    {"2g.20gb", P_2, 14, 2, 3, 28, 2, 1, 0, 0, 0, 19968},
    {"3g.40gb", P_3, 9, 3, 2, 42, 3, 2, 0, 0, 0, 40192},
    {"4g.40gb", P_4, 5, 4, 1, 56, 4, 2, 0, 0, 0, 40192},
    {"7g.80gb", P_7, 0, 7, 1, 98, 7, 5, 0, 1, 1, 80640},
    {"1g.10gb+me", P_1_REV1, 20, 1, 1, 14, 1, 1, 0, 1, 1, 9728},
    {"1g.20gb", P_1_REV2, 15, 1, 4, 14, 1, 1, 0, 0, 0, 19968},
};

static const struct sim_profile a100_40gb[] = {
    {"1g.5gb", P_1, 19, 1, 7, 14, 1, 0, 0, 0, 0, 4864},
    {"2g.10gb", P_2, 14, 2, 3, 28, 2, 1, 0, 0, 0, 9856},
    {"3g.20gb", P_3, 9, 3, 2, 42, 3, 2, 0, 0, 0, 19968},
    {"4g.20gb", P_4, 5, 4, 1, 56, 4, 2, 0, 0, 0, 19968},
    {"7g.40gb", P_7, 0, 7, 1, 98, 7, 5, 0, 1, 1, 40192},
    {"1g.5gb+me", P_1_REV1, 20, 1, 1, 14, 1, 1, 0, 1, 1, 4864},
    {"1g.10gb", P_1_REV2, 15, 1, 4, 14, 1, 1, 0, 0, 0, 9856},
};

static const struct sim_profile a30_24gb[] = {
    {"1g.6gb", P_1, 14, 1, 4, 14, 1, 0, 0, 0, 0, 5888},
    {"2g.12gb", P_2, 5, 2, 2, 28, 2, 2, 0, 0, 0, 11904},
    {"4g.24gb", P_4, 0, 4, 1, 56, 4, 4, 0, 1, 1, 23936},
    {"1g.6gb+me", P_1_REV1, 21, 1, 1, 14, 1, 1, 0, 1, 1, 5888},
    {"2g.12gb+me", P_2_REV1, 6, 2, 1, 28, 2, 2, 0, 1, 1, 11904},
};

/* H100 PCIe: 114 SMs in the 7-slice profile. */
static const struct sim_profile h100_pcie_80gb[] = {
    {"1g.10gb", P_1, 19, 1, 7, 14, 1, 1, 0, 1, 0, 9984},
    {"2g.20gb", P_2, 14, 2, 3, 28, 2, 2, 0, 2, 0, 20096},
    {"3g.40gb", P_3, 9, 3, 2, 42, 3, 3, 0, 3, 0, 40320},
    {"4g.40gb", P_4, 5, 4, 1, 56, 4, 4, 0, 4, 0, 40320},
    {"7g.80gb", P_7, 0, 7, 1, 114, 8, 7, 0, 7, 1, 80896},
    {"1g.10gb+me", P_1_REV1, 20, 1, 1, 14, 1, 1, 0, 1, 1, 9984},
    {"1g.20gb", P_1_REV2, 15, 1, 4, 14, 1, 1, 0, 1, 0, 20096},
};

/* H100 SXM5: 132 SMs in the 7-slice profile. */
static const struct sim_profile h100_sxm_80gb[] = {
    {"1g.10gb", P_1, 19, 1, 7, 16, 1, 1, 0, 1, 0, 9984},
    {"2g.20gb", P_2, 14, 2, 3, 32, 2, 2, 0, 2, 0, 20096},
    {"3g.40gb", P_3, 9, 3, 2, 60, 3, 3, 0, 3, 0, 40320},
    {"4g.40gb", P_4, 5, 4, 1, 64, 4, 4, 0, 4, 0, 40320},
    {"7g.80gb", P_7, 0, 7, 1, 132, 8, 7, 0, 7, 1, 80896},
    {"1g.10gb+me", P_1_REV1, 20, 1, 1, 16, 1, 1, 0, 1, 1, 9984},
    {"1g.20gb", P_1_REV2, 15, 1, 4, 16, 1, 1, 0, 1, 0, 20096},
};

static const struct sim_profile h200_141gb[] = {
    {"1g.18gb", P_1, 19, 1, 7, 16, 1, 1, 0, 1, 0, 16384},
    {"2g.35gb", P_2, 14, 2, 3, 32, 2, 2, 0, 2, 0, 33280},
    {"3g.71gb", P_3, 9, 3, 2, 60, 3, 3, 0, 3, 0, 67840},
    {"4g.71gb", P_4, 5, 4, 1, 64, 4, 4, 0, 4, 0, 67840},
    {"7g.141gb", P_7, 0, 7, 1, 132, 8, 7, 0, 7, 1, 137216},
    {"1g.18gb+me", P_1_REV1, 20, 1, 1, 16, 1, 1, 0, 1, 1, 16384},
    {"1g.35gb", P_1_REV2, 15, 1, 4, 16, 1, 1, 0, 1, 0, 33280},
};

/*
 * B200 (HGX, 180 GB HBM3e). Names, profile ids and instance counts of the
 * first four rows, their SMs, engines and memory: the `nvidia-smi mig
 * -lgip` of a B200 posted by NVIDIA in NVIDIA/mig-parted#166 (1g.23gb 22.00
 * GiB, 1g.45gb and 2g.45gb 44.25 GiB; #187's listing from a later driver
 * gives 1g.23gb 20.50 GiB). The names 3g.90gb, 4g.90gb and 7g.180gb and the
 * 7-instance maximum: NVIDIA's MIG user guide (Supported GPUs: B200, 180GB,
 * compute capability 10.0, 7 instances) and mig-parted#187's title; their
 * ids (9, 5, 0) follow the pattern of every 7-slice GPU's list (H100,
 * H200). Their memory is derived (4 and 8 of the 1g.23gb's memory slices),
 * their SMs and engines are plausible values, not read from a device.
 */
static const struct sim_profile b200_180gb[] = {
    {"1g.23gb", P_1, 19, 1, 7, 18, 2, 1, 0, 1, 0, 22528},
    {"2g.45gb", P_2, 14, 2, 3, 36, 4, 2, 0, 2, 0, 45312},
    {"3g.90gb", P_3, 9, 3, 2, 60, 6, 3, 0, 3, 0, 90624},
    {"4g.90gb", P_4, 5, 4, 1, 72, 8, 4, 0, 4, 0, 90624},
    {"7g.180gb", P_7, 0, 7, 1, 148, 16, 7, 0, 7, 1, 181248},
    {"1g.23gb+me", P_1_REV1, 20, 1, 1, 18, 2, 1, 0, 1, 1, 22528},
    {"1g.45gb", P_1_REV2, 15, 1, 4, 30, 2, 1, 0, 1, 0, 45312},
};

#define SET(nm, max, arr) {nm, max, sizeof(arr) / sizeof(arr[0]), arr}
static const struct sim_profile_set sets[] = {
    SET("a100-80gb", 7, a100_80gb),
    SET("a100-40gb", 7, a100_40gb),
    SET("a30-24gb", 4, a30_24gb),
    SET("h100-pcie-80gb", 7, h100_pcie_80gb),
    SET("h100-sxm-80gb", 7, h100_sxm_80gb),
    SET("h200-141gb", 7, h200_141gb),
    SET("b200-180gb", 7, b200_180gb),
};
#define NSETS (sizeof(sets) / sizeof(sets[0]))

const char *profiles_set_names(void)
{
    return "a100-80gb, a100-40gb, a30-24gb, h100-pcie-80gb, h100-sxm-80gb, h200-141gb, "
           "b200-180gb";
}

const struct sim_profile_set *profiles_find_set(const char *name)
{
    for (size_t i = 0; i < NSETS; i++)
        if (!strcasecmp(sets[i].name, name))
            return &sets[i];
    return NULL;
}

const struct sim_profile_set *profiles_guess_set(const char *gpu_name)
{
    if (strstr(gpu_name, "A100"))
        return profiles_find_set(strstr(gpu_name, "80GB") ? "a100-80gb" : "a100-40gb");
    if (strstr(gpu_name, "A30"))
        return profiles_find_set("a30-24gb");
    if (strstr(gpu_name, "H100"))
        return profiles_find_set(strstr(gpu_name, "PCIe") ? "h100-pcie-80gb" : "h100-sxm-80gb");
    if (strstr(gpu_name, "H200"))
        return profiles_find_set("h200-141gb");
    /* "NVIDIA GB200" contains "B200", but its profiles differ (1g.24gb ...
     * in NVIDIA/gpu-operator#1303): not modelled. */
    if (strstr(gpu_name, "B200") && !strstr(gpu_name, "GB200"))
        return profiles_find_set("b200-180gb");
    return NULL;
}

const struct sim_profile *profiles_find(const struct sim_profile_set *set, const char *name)
{
    for (unsigned i = 0; set && i < set->n; i++)
        if (!strcasecmp(set->profiles[i].name, name))
            return &set->profiles[i];
    return NULL;
}

const struct sim_profile *profiles_by_index(const struct sim_profile_set *set, unsigned index)
{
    for (unsigned i = 0; set && i < set->n; i++)
        if (set->profiles[i].index == index)
            return &set->profiles[i];
    return NULL;
}
