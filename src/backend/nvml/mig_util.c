#include "backend/nvml/mig_util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const WHY_AMPERE =
    "needs Hopper or later (GPM) or DCGM profiling: NVML has no per-MIG utilisation before "
    "Hopper";
static const char *const WHY_HOPPER =
    "NVML reports no per-MIG utilisation through the standard calls (NVML_ERROR_NOT_SUPPORTED) "
    "and GPM gave no value";
static const char *const WHY_ESTIMATE =
    "parent GPU utilisation scaled by total/instance slices; assumes all of the parent's "
    "activity is in this instance";
static const char *const WHY_PROCESS = "sum of per-process samples on this instance (max 100)";

static bool hopper_or_later(const char *arch)
{
    return arch && (strcmp(arch, "Hopper") == 0 || strcmp(arch, "Blackwell") == 0 ||
                    strcmp(arch, "Rubin") == 0);
}

static struct metric scaled(const struct metric *parent, int slices, int total)
{
    double v = parent->value * (double)total / (double)slices;
    if (v > 100)
        v = 100;
    return (struct metric){.value = v, .src = MSRC_ESTIMATE, .why = WHY_ESTIMATE};
}

void mig_util_resolve(const struct mig_util_in *in, struct metric *gpu, struct metric *mem,
                      struct metric *sm)
{
    const char *why = hopper_or_later(in->arch) ? WHY_HOPPER : WHY_AMPERE;
    *gpu = *mem = *sm = metric_none(why);

    if (in->direct_rc == NVML_SUCCESS) {
        *gpu = metric_direct(in->direct.gpu);
        *mem = metric_direct(in->direct.memory);
    } else if (in->proc_rc == NVML_SUCCESS) {
        *gpu = (struct metric){.value = in->proc_sm, .src = MSRC_PROCESS, .why = WHY_PROCESS};
        *mem = (struct metric){.value = in->proc_mem, .src = MSRC_PROCESS, .why = WHY_PROCESS};
    } else if (in->slices > 0 && in->slices_total >= in->slices) {
        /* Only a real utilisation reading of the parent may be scaled. */
        if (in->parent_gpu_util.src == MSRC_DIRECT)
            *gpu = scaled(&in->parent_gpu_util, in->slices, in->slices_total);
        if (in->parent_mem_util.src == MSRC_DIRECT)
            *mem = scaled(&in->parent_mem_util, in->slices, in->slices_total);
    }

    if (in->proc_rc == NVML_SUCCESS)
        *sm = (struct metric){.value = in->proc_sm, .src = MSRC_PROCESS, .why = WHY_PROCESS};
}

static void gpm_over(bool hopper, struct metric g, struct metric *m)
{
    if (m->src == MSRC_DIRECT)
        return;
    if (metric_ok(&g))
        *m = g;
    else if (!metric_ok(m) && hopper && g.why)
        m->why = g.why;
}

void mig_util_apply_gpm(const char *arch, struct metric gpm_gpu, struct metric gpm_mem,
                        struct metric gpm_sm, struct metric *gpu, struct metric *mem,
                        struct metric *sm)
{
    bool hopper = hopper_or_later(arch);
    gpm_over(hopper, gpm_gpu, gpu);
    gpm_over(hopper, gpm_mem, mem);
    gpm_over(hopper, gpm_sm, sm);
}

void mig_profile_name(char *out, size_t len, int gi_slices, int ci_slices,
                      unsigned long long mem_mb)
{
    if (gi_slices <= 0) {
        snprintf(out, len, "%s", "");
        return;
    }
    unsigned long long gb = (mem_mb + 1023) / 1024;
    if (ci_slices > 0 && ci_slices < gi_slices)
        snprintf(out, len, "%dc.%dg.%llugb", ci_slices, gi_slices, gb);
    else
        snprintf(out, len, "%dg.%llugb", gi_slices, gb);
}

/* Accepts [Nc.]Ng.Mgb exactly. */
static int parse_profile(const char *p, int *gi)
{
    char *end;
    long a = strtol(p, &end, 10);
    if (end == p || a <= 0)
        return -1;
    if (*end == 'c') {
        if (end[1] != '.')
            return -1;
        p = end + 2;
        a = strtol(p, &end, 10);
        if (end == p || a <= 0)
            return -1;
    }
    if (end[0] != 'g' || end[1] != '.')
        return -1;
    p = end + 2;
    long m = strtol(p, &end, 10);
    if (end == p || m <= 0 || strcmp(end, "gb") != 0)
        return -1;
    *gi = (int)a;
    return 0;
}

int mig_profile_from_name(const char *name, char *out, size_t len, int *slices)
{
    const char *p = strstr(name, "MIG ");
    if (!p)
        return -1;
    p += 4;
    while (*p && isspace((unsigned char)*p))
        p++;
    int gi = 0;
    if (parse_profile(p, &gi) != 0)
        return -1;
    snprintf(out, len, "%s", p);
    if (slices && *slices < 0)
        *slices = gi;
    return 0;
}
