/*
 * scenario_check.c — defaults and plausibility checks for a parsed scenario.
 *
 * A scenario must describe a machine that could exist: memory used never
 * exceeds total minus reserved, clocks never exceed their maximum, counters
 * (energy, ECC) never decrease, MIG devices fit the GPU's slices and never
 * share a slot at the same time. Checking the value functions' ranges once
 * here means the API code can report values without clamping surprises.
 *
 * A hostile scenario ([system] hostile = true) models a driver that returns
 * garbage: the gauges' ranges are not checked (the API clamps them only to
 * what their C type holds), nor are a process's memory or the compute
 * capability, and pid 0 is allowed. Everything structural still is: the
 * counters, the power limits' order, the reserved memory, the MIG layout.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "scenario_check.h"

static int errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int errf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

int scenario_default_cuda(sim_version_t drv)
{
    /* CUDA version each driver branch ships (CUDA toolkit release notes, table 3). */
    static const struct {
        unsigned major;
        int cuda;
    } branches[] = {{450, 11000}, {455, 11010}, {460, 11020}, {465, 11030}, {470, 11040},
                    {495, 11050}, {510, 11060}, {515, 11070}, {520, 11080}, {525, 12000},
                    {530, 12010}, {535, 12020}, {545, 12030}, {550, 12040}, {555, 12050},
                    {560, 12060}, {565, 12070}, {570, 12080}, {575, 12090}, {580, 13000},
                    {590, 13010}, {595, 13020}, {610, 13030},
                    /* 615: the NVML of cuda-python's 13.4 release notes */
                    {615, 13040}};
    unsigned major = (unsigned)(drv >> 32);
    int cuda = 10020;
    for (size_t i = 0; i < sizeof(branches) / sizeof(branches[0]); i++)
        if (major >= branches[i].major)
            cuda = branches[i].cuda;
    return cuda;
}

/* Identity defaults by marketing name: PCI ids, power limit, maximum
 * clocks, NVLink links. The SXM modules have NVLink to the baseboard's
 * NVSwitches (A100 12 links, H100 and H200 18); the PCIe boards' optional
 * bridge is not assumed, and an unknown board has none. */
struct model {
    const char *match;
    unsigned devid, subsys, power_w, gr, sm, mem, video, nvlinks;
};
static const struct model models[] = {
    {"A100-SXM4-80GB", 0x20B210DE, 0x147F10DE, 400, 1410, 1410, 1593, 1290, 12},
    {"A100-SXM4-40GB", 0x20B010DE, 0x134F10DE, 400, 1410, 1410, 1215, 1290, 12},
    {"A100 80GB PCIe", 0x20B510DE, 0x153310DE, 300, 1410, 1410, 1512, 1290, 0},
    {"A100-PCIE-40GB", 0x20F110DE, 0x145F10DE, 250, 1410, 1410, 1215, 1290, 0},
    {"A30", 0x20B710DE, 0x153210DE, 165, 1440, 1440, 1215, 1305, 0},
    {"H100 PCIe", 0x233110DE, 0x162610DE, 350, 1755, 1755, 1593, 1590, 0},
    {"H100 80GB HBM3", 0x233010DE, 0x16C110DE, 700, 1980, 1980, 2619, 1755, 18},
    {"H200", 0x233510DE, 0x18BE10DE, 700, 1980, 1980, 3201, 1755, 18},
    /* B200: device 0x2901 (pci.ids "GB100 [B200]"), subsystem 0x1999 (an
     * lspci of a B200 HGX board); 18 NVLink 5 links. The power limit and
     * maximum clocks are placeholders, not checked against a board. */
    {"B200", 0x290110DE, 0x199910DE, 1000, 1965, 1965, 3996, 1965, 18},
    {"", 0x000010DE, 0, 300, 1500, 1500, 1500, 1300, 0},
};

static const struct model *model_for(const char *name)
{
    const struct model *m = models;
    while (m->match[0] && !strstr(name, m->match))
        m++;
    return m;
}

static uint64_t fnv1a(const char *s, uint64_t h)
{
    while (*s) {
        h ^= (unsigned char)*s++;
        h *= 0x100000001b3ull;
    }
    return h;
}

/* A stable UUID-shaped string derived from seed text. */
static void derive_uuid(char *out, size_t len, const char *prefix, const char *seed)
{
    uint64_t a = fnv1a(seed, 0xcbf29ce484222325ull), b = fnv1a(seed, a ^ 0x9e3779b97f4a7c15ull);
    snprintf(out, len, "%s-%08x-%04x-%04x-%04x-%012llx", prefix, (unsigned)(a >> 32),
             (unsigned)(a >> 16) & 0xffff, (unsigned)a & 0xffff, (unsigned)(b >> 48),
             (unsigned long long)(b & 0xffffffffffffull));
}

static void def_const(struct valfn *f, double v)
{
    if (f->kind == VF_UNSET)
        valfn_set_const(f, v);
}

/* Checks lo <= f(t) <= hi for all t. */
static int check_range(char *err, size_t errlen, const char *sec, const char *key,
                       const struct valfn *f, double lo, double hi)
{
    double a, b;
    if (!valfn_supported(f))
        return 0;
    valfn_range(f, &a, &b);
    if (a < lo || b > hi)
        return errf(err, errlen, "[%s] %s: values must stay within %g..%g (this gives %g..%g)",
                    sec, key, lo, hi, a, b);
    return 0;
}

static int check_counter(char *err, size_t errlen, const char *sec, const char *key,
                         const struct valfn *f)
{
    if (!valfn_nondecreasing(f))
        return errf(err, errlen, "[%s] %s: a counter must never decrease (use a constant, "
                                 "ramp with rate >= 0, or rising steps)",
                    sec, key);
    return check_range(err, errlen, sec, key, f, 0, HUGE_VAL);
}

/* The upper bound of a GPM transfer rate, MiB/s: well above any link
 * (NVLink 5 moves 1.8 TB/s, about 1.7e6 MiB/s), to catch unit slips. */
#define GPM_MIBPS_MAX 4.0e6

/* GPM rates default to 0 (idle); percentages stay within 0..100, transfer
 * rates within 0..GPM_MIBPS_MAX. */
static int finish_gpm(struct valfn *rates, int n, char *err, size_t errlen, const char *sec)
{
    for (int k = 0; k < n; k++) {
        def_const(&rates[k], 0);
        if (check_range(err, errlen, sec, sim_gpm_keys[k], &rates[k], 0,
                        k < SIM_GPM_N_UTIL ? 100 : GPM_MIBPS_MAX))
            return -1;
    }
    return 0;
}

/* A gauge's range: checked unless the scenario is hostile. */
static int check_gauge(const struct sim_scenario *s, char *err, size_t errlen, const char *sec,
                       const char *key, const struct valfn *f, double lo, double hi)
{
    return s->sys.hostile ? 0 : check_range(err, errlen, sec, key, f, lo, hi);
}

static const char *const remap_key[SIM_REMAP_N] = {
    "remapped_rows_correctable", "remapped_rows_uncorrectable", "row_remap_pending",
    "row_remap_failure"};
static const char *const retired_key[SIM_RETIRED_N] = {"retired_pages_sbe", "retired_pages_dbe",
                                                       "retired_pages_pending"};
static const char *const nvl_err_key[SIM_NVLINK_ERR_N] = {
    "nvlink_replay_errors", "nvlink_recovery_errors", "nvlink_crc_flit_errors",
    "nvlink_crc_data_errors"};
static const char *const nvl_kib_key[2] = {"nvlink_data_tx_kib", "nvlink_data_rx_kib"};

/* A flag (pending, failure): 0 or 1 at every t. */
static int check_flag(char *err, size_t errlen, const char *sec, const char *key,
                      const struct valfn *f)
{
    return check_range(err, errlen, sec, key, f, 0, 1);
}

/*
 * The health counters' defaults and checks. Rows are remapped from Ampere
 * on and pages retired before: the other generation's call answers
 * NOT_SUPPORTED unless the scenario gives it values. NVLink by the board
 * (models[]); the keys of a GPU without links are an error. Counters never
 * decrease; flags are 0 or 1; the links up are at most the links.
 */
static int finish_health(struct sim_gpu *g, const struct model *md, char *err, size_t errlen,
                         const char *sec)
{
    bool remaps = g->arch >= 7;
    for (int k = 0; k < SIM_REMAP_N; k++) {
        if (g->remap[k].kind == VF_UNSET) {
            if (remaps)
                valfn_set_const(&g->remap[k], 0);
            else
                g->remap[k].kind = VF_NONE;
        }
        if ((k <= SIM_REMAP_UNCORR ? check_counter(err, errlen, sec, remap_key[k], &g->remap[k])
                                   : check_flag(err, errlen, sec, remap_key[k], &g->remap[k])))
            return -1;
    }
    static const char *const inactive_key[2] = {"remapped_rows_correctable_inactive",
                                                "remapped_rows_uncorrectable_inactive"};
    for (int k = 0; k < 2; k++) {
        if (g->remap_inactive[k].kind == VF_UNSET) {
            if (remaps)
                valfn_set_const(&g->remap_inactive[k], 0);
            else
                g->remap_inactive[k].kind = VF_NONE;
        }
        if (check_counter(err, errlen, sec, inactive_key[k], &g->remap_inactive[k]))
            return -1;
    }
    /* nvml.h 13.1: the unrepairable-memory flag "For Hopper or newer". */
    if (g->unrepairable.kind == VF_UNSET) {
        if (g->arch >= 9 && g->arch != 0xffffffffu)
            valfn_set_const(&g->unrepairable, 0);
        else
            g->unrepairable.kind = VF_NONE;
    }
    if (check_flag(err, errlen, sec, "unrepairable_memory", &g->unrepairable))
        return -1;
    /* The bank remapper: which boards have one is not documented, so a GPU
     * has one only where the scenario gives its numbers (all five). */
    static const char *const bank_key[SIM_BANK_N] = {
        "bank_remaps_active", "bank_remaps_inactive", "bank_remap_pending",
        "bank_remap_max_spare_groups", "bank_remap_no_spare_groups"};
    int banks_given = 0;
    for (int k = 0; k < SIM_BANK_N; k++)
        banks_given += g->bank[k].kind != VF_UNSET;
    if (banks_given && banks_given < SIM_BANK_N)
        return errf(err, errlen, "[%s] the bank remapper needs all of bank_remaps_active, "
                    "bank_remaps_inactive, bank_remap_pending, bank_remap_max_spare_groups and "
                    "bank_remap_no_spare_groups", sec);
    for (int k = 0; k < SIM_BANK_N; k++) {
        if (g->bank[k].kind == VF_UNSET)
            g->bank[k].kind = VF_NONE;
        if (k == SIM_BANK_PENDING ? check_flag(err, errlen, sec, bank_key[k], &g->bank[k])
                                  : check_range(err, errlen, sec, bank_key[k], &g->bank[k], 0,
                                                4294967295.0))
            return -1;
    }
    for (int k = 0; k < SIM_RETIRED_N; k++) {
        if (g->retired[k].kind == VF_UNSET) {
            if (remaps)
                g->retired[k].kind = VF_NONE;
            else
                valfn_set_const(&g->retired[k], 0);
        }
        if ((k < SIM_RETIRED_PENDING
                 ? check_counter(err, errlen, sec, retired_key[k], &g->retired[k])
                 : check_flag(err, errlen, sec, retired_key[k], &g->retired[k])))
            return -1;
    }
    def_const(&g->pcie_replay, 0);
    if (check_counter(err, errlen, sec, "pcie_replay_count", &g->pcie_replay))
        return -1;
    if (g->nvlinks < 0)
        g->nvlinks = md->nvlinks;
    if (g->nvlinks > SIM_NVLINK_MAX)
        return errf(err, errlen, "[%s] nvlink_links: at most %d", sec, SIM_NVLINK_MAX);
    if (g->nvlinks == 0) {
        const char *given = g->nvlinks_up.kind != VF_UNSET ? "nvlink_links_up" : NULL;
        for (int k = 0; k < SIM_NVLINK_ERR_N && !given; k++)
            if (g->nvlink_err[k].kind != VF_UNSET)
                given = nvl_err_key[k];
        for (int k = 0; k < 2 && !given; k++)
            if (g->nvlink_kib[k].kind != VF_UNSET)
                given = nvl_kib_key[k];
        if (given)
            return errf(err, errlen, "[%s] %s: the GPU has no NVLink (nvlink_links = 0)", sec,
                        given);
    }
    def_const(&g->nvlinks_up, (double)g->nvlinks);
    if (check_range(err, errlen, sec, "nvlink_links_up", &g->nvlinks_up, 0, (double)g->nvlinks))
        return -1;
    for (int k = 0; k < SIM_NVLINK_ERR_N; k++) {
        def_const(&g->nvlink_err[k], 0);
        if (check_counter(err, errlen, sec, nvl_err_key[k], &g->nvlink_err[k]))
            return -1;
    }
    /* Left unset, the byte counts are the GPM NVLink rates' integral (api_health.c). */
    for (int k = 0; k < 2; k++)
        if (check_counter(err, errlen, sec, nvl_kib_key[k], &g->nvlink_kib[k]))
            return -1;
    def_const(&g->violation_s[0], 0);
    def_const(&g->violation_s[1], 0);
    if (check_counter(err, errlen, sec, "violation_power_s", &g->violation_s[0]) ||
        check_counter(err, errlen, sec, "violation_thermal_s", &g->violation_s[1]))
        return -1;
    return 0;
}

static int finish_gpu(struct sim_scenario *s, int i, char *err, size_t errlen)
{
    struct sim_gpu *g = &s->gpus[i];
    const struct model *md;
    char sec[16], seed[160];
    static const char *clk_key[4] = {"clock_graphics_mhz", "clock_sm_mhz", "clock_mem_mhz",
                                     "clock_video_mhz"};

    snprintf(sec, sizeof(sec), "gpu.%d", i);
    if (!g->defined)
        return errf(err, errlen, "[%s] missing: GPUs must be numbered 0..%d without gaps", sec,
                    s->n_gpus - 1);
    if (!g->name[0])
        return errf(err, errlen, "[%s] name is required", sec);
    if (!g->mem_total_mib)
        return errf(err, errlen, "[%s] memory_total_mib is required", sec);
    md = model_for(g->name);
    if (!g->uuid[0]) {
        snprintf(seed, sizeof(seed), "%s#%d", g->name, i);
        derive_uuid(g->uuid, sizeof(g->uuid), "GPU", seed);
    }
    if (!g->pci_domain && !g->pci_bus && !g->pci_device)
        g->pci_bus = (unsigned)i + 1;
    if (!g->pci_device_id)
        g->pci_device_id = md->devid;
    if (!g->pci_subsystem_id)
        g->pci_subsystem_id = md->subsys;
    if (!g->arch) {
        if (strstr(g->name, "A100") || strstr(g->name, "A30"))
            g->arch = 7;
        else if (strstr(g->name, "H100") || strstr(g->name, "H200"))
            g->arch = 9;
        else if (strstr(g->name, "B200"))
            g->arch = 10; /* Blackwell: B200 and GB200 (GB100, compute capability 10.0) */
        else
            return errf(err, errlen, "[%s] architecture is required for '%s'", sec, g->name);
    }
    if (!g->cc_major) {
        g->cc_major = g->arch >= 10 ? 10 : g->arch == 9 ? 9 : g->arch >= 7 ? 8 : 7;
        g->cc_minor = g->arch == 8 ? 9 : g->arch == 6 ? 5 : 0;
    }
    if (!s->sys.hostile && (g->cc_major < 1 || g->cc_major > 99 || g->cc_minor < 0 ||
                            g->cc_minor > 9))
        return errf(err, errlen, "[%s] compute_capability: expected major 1-99 and minor 0-9",
                    sec);
    if (!g->minor_number)
        g->minor_number = (unsigned)i;
    if (!g->mem_reserved_mib)
        g->mem_reserved_mib = g->mem_total_mib / 128;
    if (g->mem_reserved_mib >= g->mem_total_mib)
        return errf(err, errlen, "[%s] memory_reserved_mib must be below memory_total_mib", sec);

    if (!g->profiles)
        g->profiles = profiles_guess_set(g->name);
    if (g->mig_mode == -2)
        g->mig_mode = g->profiles ? SIM_MIG_OFF : SIM_MIG_UNSUPPORTED;
    if (g->mig_pending == -2)
        g->mig_pending = g->mig_mode;
    if ((g->mig_mode != SIM_MIG_UNSUPPORTED || g->mig_pending != SIM_MIG_UNSUPPORTED) &&
        !g->profiles)
        return errf(err, errlen, "[%s] MIG needs mig_profiles (known: %s)", sec,
                    profiles_set_names());
    if ((g->mig_mode == SIM_MIG_UNSUPPORTED) != (g->mig_pending == SIM_MIG_UNSUPPORTED))
        return errf(err, errlen, "[%s] mig_pending must be unsupported exactly when mig_mode is",
                    sec);

    def_const(&g->util_gpu, 0);
    def_const(&g->util_mem, 0);
    def_const(&g->enc_util, 0);
    def_const(&g->dec_util, 0);
    def_const(&g->temp_c, 40);
    if (g->mem_temp_c.kind == VF_UNSET)
        g->mem_temp_c.kind = VF_NONE;
    if (!g->temp_shutdown)
        g->temp_shutdown = 92;
    if (!g->temp_slowdown)
        g->temp_slowdown = 89;
    if (!g->temp_mem_max)
        g->temp_mem_max = 95;
    if (!g->temp_gpu_max)
        g->temp_gpu_max = 87;
    if (!g->power_max_mw)
        g->power_max_mw = md->power_w * 1000;
    if (!g->power_min_mw)
        g->power_min_mw = g->power_max_mw / 4;
    if (!g->power_default_mw)
        g->power_default_mw = g->power_max_mw;
    if (!g->power_limit_mw)
        g->power_limit_mw = g->power_default_mw;
    if (!g->power_enforced_mw)
        g->power_enforced_mw = g->power_limit_mw;
    if (g->power_limit_mw > g->power_max_mw || g->power_limit_mw < g->power_min_mw ||
        g->power_enforced_mw > g->power_limit_mw)
        return errf(err, errlen, "[%s] power limits must satisfy min <= enforced <= limit <= max",
                    sec);
    def_const(&g->power_w, g->power_limit_mw / 1000.0 * 0.15);
    if (g->power_average < 0)
        g->power_average = g->arch >= 7 && !strstr(g->name, "A100") && !strstr(g->name, "A30");
    unsigned dmax[4] = {md->gr, md->sm, md->mem, md->video};
    for (int k = 0; k < 4; k++) {
        if (!g->max_clock[k])
            g->max_clock[k] = dmax[k];
        def_const(&g->clock[k], g->max_clock[k]);
        if (check_gauge(s, err, errlen, sec, clk_key[k], &g->clock[k], 0, g->max_clock[k]))
            return -1;
    }
    def_const(&g->pstate, 0);
    def_const(&g->event_reasons, 0);
    if (!g->pcie_max_gen)
        g->pcie_max_gen = g->arch >= 9 ? 5 : 4;
    if (!g->pcie_max_width)
        g->pcie_max_width = 16;
    def_const(&g->pcie_gen, g->pcie_max_gen);
    def_const(&g->pcie_width, g->pcie_max_width);
    def_const(&g->pcie_tx_kbps, 0);
    def_const(&g->pcie_rx_kbps, 0);
    if (g->ecc_mode == -2)
        g->ecc_mode = SIM_ECC_ON;
    if (g->ecc_pending == -2)
        g->ecc_pending = g->ecc_mode;
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            def_const(&g->ecc[a][b], 0);
    if (g->fan_pct.kind == VF_UNSET)
        g->fan_pct.kind = VF_NONE;
    if (!g->grow_pid)
        g->grow_pid = 99000 + (unsigned)i;
    if (g->grow_used_mib <= 0)
        g->grow_used_mib = 256;

    double usable = (double)(g->mem_total_mib - g->mem_reserved_mib);
    if (check_gauge(s, err, errlen, sec, "util_gpu", &g->util_gpu, 0, 100) ||
        check_gauge(s, err, errlen, sec, "util_memory", &g->util_mem, 0, 100) ||
        check_gauge(s, err, errlen, sec, "encoder_util", &g->enc_util, 0, 100) ||
        check_gauge(s, err, errlen, sec, "decoder_util", &g->dec_util, 0, 100) ||
        check_gauge(s, err, errlen, sec, "temperature_c", &g->temp_c, -40, g->temp_shutdown) ||
        check_gauge(s, err, errlen, sec, "memory_temperature_c", &g->mem_temp_c, -40, 130) ||
        check_gauge(s, err, errlen, sec, "power_w", &g->power_w, 0, g->power_max_mw / 1000.0) ||
        check_range(err, errlen, sec, "memory_used_mib", &g->mem_used_mib, 0, usable) ||
        check_gauge(s, err, errlen, sec, "pstate", &g->pstate, 0, 15) ||
        check_gauge(s, err, errlen, sec, "clocks_event_reasons", &g->event_reasons, 0, 0x1FF) ||
        check_gauge(s, err, errlen, sec, "pcie_tx_kbps", &g->pcie_tx_kbps, 0, 64.0e6) ||
        check_gauge(s, err, errlen, sec, "pcie_rx_kbps", &g->pcie_rx_kbps, 0, 64.0e6) ||
        check_gauge(s, err, errlen, sec, "pcie_gen", &g->pcie_gen, 1, g->pcie_max_gen) ||
        check_gauge(s, err, errlen, sec, "pcie_width", &g->pcie_width, 1, g->pcie_max_width) ||
        check_gauge(s, err, errlen, sec, "fan_pct", &g->fan_pct, 0, 200) ||
        check_counter(err, errlen, sec, "energy_j", &g->energy_j) ||
        check_counter(err, errlen, sec, "ecc_corrected_volatile", &g->ecc[0][0]) ||
        check_counter(err, errlen, sec, "ecc_corrected_aggregate", &g->ecc[0][1]) ||
        check_counter(err, errlen, sec, "ecc_uncorrected_volatile", &g->ecc[1][0]) ||
        check_counter(err, errlen, sec, "ecc_uncorrected_aggregate", &g->ecc[1][1]))
        return -1;
    if (g->energy_base_j < 0)
        return errf(err, errlen, "[%s] energy_base_j must not be negative", sec);
    if (finish_health(g, md, err, errlen, sec) != 0)
        return -1;
    return finish_gpm(g->gpm, SIM_GPM_N, err, errlen, sec);
}

static int finish_mig(struct sim_scenario *s, struct sim_mig *m, char *err, size_t errlen)
{
    struct sim_gpu *g = &s->gpus[m->gpu];
    char sec[48], seed[200];
    snprintf(sec, sizeof(sec), "gpu.%d.mig.%d%s%s", m->gpu, m->slot, m->tag[0] ? "/" : "",
             m->tag);
    if (g->mig_mode != SIM_MIG_ON)
        return errf(err, errlen, "[%s] gpu.%d has MIG devices but mig_mode is not on", sec,
                    m->gpu);
    if ((unsigned)m->slot >= g->profiles->max_mig_devices)
        return errf(err, errlen, "[%s] slot must be below %u (GetMaxMigDeviceCount)", sec,
                    g->profiles->max_mig_devices);
    m->profile = profiles_find(g->profiles, m->profile_name);
    if (!m->profile)
        return errf(err, errlen, "[%s] profile '%s' is not a %s profile", sec, m->profile_name,
                    g->profiles->name);
    if (m->gi < 0)
        return errf(err, errlen, "[%s] gi (the GPU-instance id) is required", sec);
    if (m->ci < 0)
        m->ci = 0;
    if (!m->ci_slices)
        m->ci_slices = m->profile->slices;
    if (m->ci_slices > m->profile->slices)
        return errf(err, errlen, "[%s] ci_slices exceeds the profile's %u slices", sec,
                    m->profile->slices);
    if (!(m->from < m->until))
        return errf(err, errlen, "[%s] from must be before until", sec);
    if (m->mem_reserved_mib >= m->profile->mem_mib)
        return errf(err, errlen, "[%s] memory_reserved_mib exceeds the instance", sec);
    if (check_range(err, errlen, sec, "memory_used_mib", &m->mem_used_mib, 0,
                    (double)(m->profile->mem_mib - m->mem_reserved_mib)))
        return -1;
    if (finish_gpm(m->gpm, SIM_GPM_N_UTIL, err, errlen, sec) != 0)
        return -1;
    if (!m->uuid[0]) {
        snprintf(seed, sizeof(seed), "%s/%ld/%ld/%s", g->uuid, m->gi, m->ci, m->tag);
        derive_uuid(m->uuid, sizeof(m->uuid), "MIG", seed);
    }
    if (!m->grow_pid)
        m->grow_pid = 98000 + (unsigned)(m->gpu * 10 + m->slot);
    if (m->grow_used_mib <= 0)
        m->grow_used_mib = 128;
    return 0;
}

static bool live_at(const struct sim_mig *m, double t)
{
    return m->from <= t && t < m->until;
}

/* At every instant where the MIG layout changes, the live devices must fit:
 * one device per slot, GI ids shared only by compute instances of the same
 * profile, the compute instances of a GI within its slices, and the GIs'
 * slices within the GPU. */
static int check_layout(struct sim_scenario *s, char *err, size_t errlen)
{
    for (int i = 0; i < s->n_migs; i++) {
        double t = s->migs[i].from;
        int gpu = s->migs[i].gpu;
        unsigned slices = 0, max_slices = 0;
        const struct sim_profile_set *set = s->gpus[gpu].profiles;
        for (unsigned p = 0; p < set->n; p++)
            if (set->profiles[p].slices > max_slices)
                max_slices = set->profiles[p].slices;
        for (int j = 0; j < s->n_migs; j++) {
            const struct sim_mig *a = &s->migs[j];
            bool first_of_gi = true;
            unsigned ci_slices = 0;
            if (a->gpu != gpu || !live_at(a, t))
                continue;
            for (int k = 0; k < s->n_migs; k++) {
                const struct sim_mig *b = &s->migs[k];
                if (b->gpu == gpu && live_at(b, t) && b->gi == a->gi)
                    ci_slices += b->ci_slices;
            }
            if (ci_slices > a->profile->slices)
                return errf(err, errlen,
                            "[gpu.%d.mig.%d] the compute instances of GI %ld use %u slices at "
                            "t=%g, the GI has %u",
                            gpu, a->slot, a->gi, ci_slices, t, a->profile->slices);
            for (int k = 0; k < j; k++) {
                const struct sim_mig *b = &s->migs[k];
                if (b->gpu != gpu || !live_at(b, t))
                    continue;
                if (b->slot == a->slot)
                    return errf(err, errlen, "[gpu.%d.mig.%d] two MIG devices in slot %d at t=%g",
                                gpu, a->slot, a->slot, t);
                if (b->gi == a->gi) {
                    if (b->profile != a->profile || b->ci == a->ci)
                        return errf(err, errlen,
                                    "[gpu.%d.mig.%d] GI %ld is also used by slot %d with a "
                                    "different profile or the same CI",
                                    gpu, a->slot, a->gi, b->slot);
                    first_of_gi = false;
                }
            }
            if (first_of_gi)
                slices += a->profile->slices;
        }
        if (slices > max_slices)
            return errf(err, errlen, "[gpu.%d] MIG devices use %u slices at t=%g, the GPU has %u",
                        gpu, slices, t, max_slices);
    }
    return 0;
}

static int finish_proc(struct sim_scenario *s, struct sim_proc *p, char *err, size_t errlen)
{
    char sec[48];
    const struct sim_gpu *g;
    snprintf(sec, sizeof(sec), "process.%s", p->name);
    if (!p->pid_given)
        return errf(err, errlen, "[%s] pid is required", sec);
    if (p->gpu >= s->n_gpus)
        return errf(err, errlen, "[%s] gpu %d does not exist", sec, p->gpu);
    g = &s->gpus[p->gpu];
    if (g->mig_mode == SIM_MIG_ON && p->slot < 0)
        return errf(err, errlen, "[%s] gpu.%d is in MIG mode: give mig = <slot>", sec, p->gpu);
    if (g->mig_mode != SIM_MIG_ON && p->slot >= 0)
        return errf(err, errlen, "[%s] mig given but gpu.%d is not in MIG mode", sec, p->gpu);
    if (p->slot >= 0) {
        int j;
        for (j = 0; j < s->n_migs; j++)
            if (s->migs[j].gpu == p->gpu && s->migs[j].slot == p->slot)
                break;
        if (j == s->n_migs)
            return errf(err, errlen, "[%s] gpu.%d has no MIG device in slot %d", sec, p->gpu,
                        p->slot);
    }
    if (!(p->start < p->end))
        return errf(err, errlen, "[%s] start must be before end", sec);
    def_const(&p->used_mib, 0);
    def_const(&p->sm_util, 0);
    def_const(&p->mem_util, 0);
    def_const(&p->enc_util, 0);
    def_const(&p->dec_util, 0);
    if ((!s->sys.hostile &&
         check_range(err, errlen, sec, "used_mib", &p->used_mib, 0, (double)g->mem_total_mib)) ||
        check_range(err, errlen, sec, "sm_util", &p->sm_util, 0, 100) ||
        check_range(err, errlen, sec, "mem_util", &p->mem_util, 0, 100) ||
        check_range(err, errlen, sec, "enc_util", &p->enc_util, 0, 100) ||
        check_range(err, errlen, sec, "dec_util", &p->dec_util, 0, 100))
        return -1;
    return 0;
}

int scenario_finish(struct sim_scenario *s, const char *driver_override, char *err,
                    size_t errlen)
{
    struct sim_system *y = &s->sys;

    if (driver_override && driver_override[0]) {
        /* A variant library is one driver: its versions replace the file's. */
        snprintf(y->driver, sizeof(y->driver), "%s", driver_override);
        if (sim_version_parse(y->driver, &y->drv) != 0)
            return errf(err, errlen, "bad built-in driver version '%s'", driver_override);
        y->nvml_version[0] = '\0';
        y->cuda_version = 0;
    }
    if (!y->driver[0])
        return errf(err, errlen, "[system] driver_version is required");
    if (!y->cuda_version)
        y->cuda_version = scenario_default_cuda(y->drv);
    if (!y->nvml_version[0])
        snprintf(y->nvml_version, sizeof(y->nvml_version), "%d.%s", y->cuda_version / 1000,
                 y->driver);

    for (int i = 0; i < s->n_gpus; i++)
        if (finish_gpu(s, i, err, errlen) != 0)
            return -1;
    for (int i = 0; i < s->n_migs; i++)
        if (finish_mig(s, &s->migs[i], err, errlen) != 0)
            return -1;
    if (check_layout(s, err, errlen) != 0)
        return -1;
    for (int i = 0; i < s->n_procs; i++)
        if (finish_proc(s, &s->procs[i], err, errlen) != 0)
            return -1;
    for (int i = 0; i < s->n_faults; i++) {
        struct sim_fault *f = &s->faults[i];
        if (!f->function[0])
            return errf(err, errlen, "[fault.%s] function is required", f->name);
        if (f->delay_ms < 0)
            return errf(err, errlen, "[fault.%s] delay_ms must not be negative", f->name);
        if (f->code < 0 && f->delay_ms == 0 && !f->hang)
            return errf(err, errlen,
                        "[fault.%s] return is required (unless delay_ms or hang is given)",
                        f->name);
        if (!(f->from < f->until))
            return errf(err, errlen, "[fault.%s] from must be before until", f->name);
    }
    return 0;
}
