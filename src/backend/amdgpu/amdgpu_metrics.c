/*
 * amdgpu_metrics.c — gpu_metrics layouts v1.3–v1.8 and their decoding.
 *
 * The structs restate the kernel's kgd_pp_interface.h (natural alignment,
 * x86_64 and arm64 alike); the asserts pin every size and the offsets we
 * read to the numbers in the kernel text, so a typo cannot shift a field.
 * v1.6 is the layout released in 6.13 (num_partition, xcp_stats), not the
 * short-lived v1_6 of May 2024 that was reverted before any release.
 */
#include "backend/amdgpu/amdgpu_metrics.h"

#include <stddef.h>
#include <string.h>

#define NUM_HBM_INSTANCES 4
#define NUM_XGMI_LINKS 8
#define MAX_GFX_CLKS 8
#define MAX_CLKS 4
#define NUM_VCN 4
#define NUM_JPEG_ENG 32
#define NUM_JPEG_ENG_V1 40

struct metrics_table_header {
    uint16_t structure_size;
    uint8_t format_revision;
    uint8_t content_revision;
};

struct gpu_metrics_v1_3 {
    struct metrics_table_header hdr;
    uint16_t temperature_edge, temperature_hotspot, temperature_mem;
    uint16_t temperature_vrgfx, temperature_vrsoc, temperature_vrmem;
    uint16_t average_gfx_activity, average_umc_activity, average_mm_activity;
    uint16_t average_socket_power;
    uint64_t energy_accumulator;
    uint64_t system_clock_counter;
    uint16_t average_gfxclk_frequency, average_socclk_frequency, average_uclk_frequency;
    uint16_t average_vclk0_frequency, average_dclk0_frequency;
    uint16_t average_vclk1_frequency, average_dclk1_frequency;
    uint16_t current_gfxclk, current_socclk, current_uclk, current_vclk0, current_dclk0;
    uint16_t current_vclk1, current_dclk1;
    uint32_t throttle_status;
    uint16_t current_fan_speed;
    uint16_t pcie_link_width, pcie_link_speed;
    uint16_t padding;
    uint32_t gfx_activity_acc, mem_activity_acc;
    uint16_t temperature_hbm[NUM_HBM_INSTANCES];
    uint64_t firmware_timestamp;
    uint16_t voltage_soc, voltage_gfx, voltage_mem;
    uint16_t padding1;
    uint64_t indep_throttle_status;
};
_Static_assert(sizeof(struct gpu_metrics_v1_3) == 120, "gpu_metrics_v1_3 size");
_Static_assert(offsetof(struct gpu_metrics_v1_3, average_socket_power) == 22, "v1_3 power");
_Static_assert(offsetof(struct gpu_metrics_v1_3, energy_accumulator) == 24, "v1_3 energy");
_Static_assert(offsetof(struct gpu_metrics_v1_3, current_gfxclk) == 54, "v1_3 gfxclk");
_Static_assert(offsetof(struct gpu_metrics_v1_3, pcie_link_width) == 74, "v1_3 pcie");
_Static_assert(offsetof(struct gpu_metrics_v1_3, gfx_activity_acc) == 80, "v1_3 gfx acc");
_Static_assert(offsetof(struct gpu_metrics_v1_3, temperature_hbm) == 88, "v1_3 hbm");
_Static_assert(offsetof(struct gpu_metrics_v1_3, indep_throttle_status) == 112, "v1_3 indep");

/* v1.4 and v1.5: MI300 before partition stats. */
#define V14_COMMON_TAIL                                                                    \
    uint64_t energy_accumulator;                                                           \
    uint64_t system_clock_counter;                                                         \
    uint32_t throttle_status;                                                              \
    uint32_t gfxclk_lock_status;                                                           \
    uint16_t pcie_link_width, pcie_link_speed;                                             \
    uint16_t xgmi_link_width, xgmi_link_speed;                                             \
    uint32_t gfx_activity_acc, mem_activity_acc;                                           \
    uint64_t pcie_bandwidth_acc, pcie_bandwidth_inst;                                      \
    uint64_t pcie_l0_to_recov_count_acc, pcie_replay_count_acc, pcie_replay_rover_count_acc

struct gpu_metrics_v1_4 {
    struct metrics_table_header hdr;
    uint16_t temperature_hotspot, temperature_mem, temperature_vrsoc;
    uint16_t curr_socket_power;
    uint16_t average_gfx_activity, average_umc_activity;
    uint16_t vcn_activity[NUM_VCN];
    V14_COMMON_TAIL;
    uint64_t xgmi_read_data_acc[NUM_XGMI_LINKS];
    uint64_t xgmi_write_data_acc[NUM_XGMI_LINKS];
    uint64_t firmware_timestamp;
    uint16_t current_gfxclk[MAX_GFX_CLKS];
    uint16_t current_socclk[MAX_CLKS], current_vclk0[MAX_CLKS], current_dclk0[MAX_CLKS];
    uint16_t current_uclk;
    uint16_t padding;
};
_Static_assert(sizeof(struct gpu_metrics_v1_4) == 288, "gpu_metrics_v1_4 size");
_Static_assert(offsetof(struct gpu_metrics_v1_4, energy_accumulator) == 24, "v1_4 energy");
_Static_assert(offsetof(struct gpu_metrics_v1_4, gfx_activity_acc) == 56, "v1_4 gfx acc");
_Static_assert(offsetof(struct gpu_metrics_v1_4, firmware_timestamp) == 232, "v1_4 fw ts");
_Static_assert(offsetof(struct gpu_metrics_v1_4, current_uclk) == 280, "v1_4 uclk");

struct gpu_metrics_v1_5 {
    struct metrics_table_header hdr;
    uint16_t temperature_hotspot, temperature_mem, temperature_vrsoc;
    uint16_t curr_socket_power;
    uint16_t average_gfx_activity, average_umc_activity;
    uint16_t vcn_activity[NUM_VCN];
    uint16_t jpeg_activity[NUM_JPEG_ENG];
    V14_COMMON_TAIL;
    uint32_t pcie_nak_sent_count_acc, pcie_nak_rcvd_count_acc;
    uint64_t xgmi_read_data_acc[NUM_XGMI_LINKS];
    uint64_t xgmi_write_data_acc[NUM_XGMI_LINKS];
    uint64_t firmware_timestamp;
    uint16_t current_gfxclk[MAX_GFX_CLKS];
    uint16_t current_socclk[MAX_CLKS], current_vclk0[MAX_CLKS], current_dclk0[MAX_CLKS];
    uint16_t current_uclk;
    uint16_t padding;
};
_Static_assert(sizeof(struct gpu_metrics_v1_5) == 360, "gpu_metrics_v1_5 size");
_Static_assert(offsetof(struct gpu_metrics_v1_5, energy_accumulator) == 88, "v1_5 energy");
_Static_assert(offsetof(struct gpu_metrics_v1_5, gfx_activity_acc) == 120, "v1_5 gfx acc");
_Static_assert(offsetof(struct gpu_metrics_v1_5, pcie_nak_sent_count_acc) == 168, "v1_5 nak");
_Static_assert(offsetof(struct gpu_metrics_v1_5, current_uclk) == 352, "v1_5 uclk");

/* The per-partition stats of v1.6, v1.7 and v1.8. */
struct amdgpu_xcp_metrics {
    uint32_t gfx_busy_inst[AMD_MAX_XCC];
    uint16_t jpeg_busy[NUM_JPEG_ENG];
    uint16_t vcn_busy[NUM_VCN];
    uint64_t gfx_busy_acc[AMD_MAX_XCC];
};
_Static_assert(sizeof(struct amdgpu_xcp_metrics) == 168, "amdgpu_xcp_metrics size");
_Static_assert(offsetof(struct amdgpu_xcp_metrics, gfx_busy_acc) == 104, "xcp busy acc");

struct amdgpu_xcp_metrics_v1_1 {
    uint32_t gfx_busy_inst[AMD_MAX_XCC];
    uint16_t jpeg_busy[NUM_JPEG_ENG];
    uint16_t vcn_busy[NUM_VCN];
    uint64_t gfx_busy_acc[AMD_MAX_XCC];
    uint64_t gfx_below_host_limit_acc[AMD_MAX_XCC];
};
_Static_assert(sizeof(struct amdgpu_xcp_metrics_v1_1) == 232, "amdgpu_xcp_metrics_v1_1 size");

struct amdgpu_xcp_metrics_v1_2 {
    uint32_t gfx_busy_inst[AMD_MAX_XCC];
    uint16_t jpeg_busy[NUM_JPEG_ENG_V1];
    uint16_t vcn_busy[NUM_VCN];
    uint64_t gfx_busy_acc[AMD_MAX_XCC];
    uint64_t gfx_below_host_limit_ppt_acc[AMD_MAX_XCC];
    uint64_t gfx_below_host_limit_thm_acc[AMD_MAX_XCC];
    uint64_t gfx_low_utilization_acc[AMD_MAX_XCC];
    uint64_t gfx_below_host_limit_total_acc[AMD_MAX_XCC];
};
_Static_assert(sizeof(struct amdgpu_xcp_metrics_v1_2) == 440, "amdgpu_xcp_metrics_v1_2 size");
_Static_assert(offsetof(struct amdgpu_xcp_metrics_v1_2, vcn_busy) == 112, "xcp v1_2 vcn");
_Static_assert(offsetof(struct amdgpu_xcp_metrics_v1_2, gfx_busy_acc) == 120, "xcp v1_2 acc");
_Static_assert(offsetof(struct amdgpu_xcp_metrics_v1_2, gfx_below_host_limit_total_acc) == 376,
               "xcp v1_2 total acc");

/* From accumulation_counter on, v1.6's fields (v1.7 and v1.8 insert
 * xgmi_link_status before firmware_timestamp). */
#define V16_RESIDENCIES                                                                    \
    uint32_t accumulation_counter;                                                         \
    uint32_t prochot_residency_acc, ppt_residency_acc, socket_thm_residency_acc;           \
    uint32_t vr_thm_residency_acc, hbm_thm_residency_acc;                                  \
    uint32_t gfxclk_lock_status;                                                           \
    uint16_t pcie_link_width, pcie_link_speed;                                             \
    uint16_t xgmi_link_width, xgmi_link_speed;                                             \
    uint32_t gfx_activity_acc, mem_activity_acc;                                           \
    uint64_t pcie_bandwidth_acc, pcie_bandwidth_inst;                                      \
    uint64_t pcie_l0_to_recov_count_acc, pcie_replay_count_acc, pcie_replay_rover_count_acc; \
    uint32_t pcie_nak_sent_count_acc, pcie_nak_rcvd_count_acc;                             \
    uint64_t xgmi_read_data_acc[NUM_XGMI_LINKS];                                           \
    uint64_t xgmi_write_data_acc[NUM_XGMI_LINKS]

#define V16_CLOCKS                                                                         \
    uint64_t firmware_timestamp;                                                           \
    uint16_t current_gfxclk[MAX_GFX_CLKS];                                                 \
    uint16_t current_socclk[MAX_CLKS], current_vclk0[MAX_CLKS], current_dclk0[MAX_CLKS];   \
    uint16_t current_uclk;                                                                 \
    uint16_t num_partition

struct gpu_metrics_v1_6 {
    struct metrics_table_header hdr;
    uint16_t temperature_hotspot, temperature_mem, temperature_vrsoc;
    uint16_t curr_socket_power;
    uint16_t average_gfx_activity, average_umc_activity;
    uint64_t energy_accumulator;
    uint64_t system_clock_counter;
    V16_RESIDENCIES;
    V16_CLOCKS;
    struct amdgpu_xcp_metrics xcp_stats[AMD_NUM_XCP];
    uint32_t pcie_lc_perf_other_end_recovery;
};
_Static_assert(sizeof(struct gpu_metrics_v1_6) == 1664, "gpu_metrics_v1_6 size");
_Static_assert(offsetof(struct gpu_metrics_v1_6, energy_accumulator) == 16, "v1_6 energy");
_Static_assert(offsetof(struct gpu_metrics_v1_6, accumulation_counter) == 32, "v1_6 acc");
_Static_assert(offsetof(struct gpu_metrics_v1_6, ppt_residency_acc) == 40, "v1_6 ppt");
_Static_assert(offsetof(struct gpu_metrics_v1_6, hbm_thm_residency_acc) == 52, "v1_6 hbm thm");
_Static_assert(offsetof(struct gpu_metrics_v1_6, gfx_activity_acc) == 68, "v1_6 gfx acc");
_Static_assert(offsetof(struct gpu_metrics_v1_6, pcie_bandwidth_acc) == 80, "v1_6 pcie bw");
_Static_assert(offsetof(struct gpu_metrics_v1_6, firmware_timestamp) == 256, "v1_6 fw ts");
_Static_assert(offsetof(struct gpu_metrics_v1_6, num_partition) == 306, "v1_6 partitions");
_Static_assert(offsetof(struct gpu_metrics_v1_6, xcp_stats) == 312, "v1_6 xcp_stats");
_Static_assert(offsetof(struct gpu_metrics_v1_6, pcie_lc_perf_other_end_recovery) == 1656,
               "v1_6 recovery");

#define V17_HEAD                                                                           \
    struct metrics_table_header hdr;                                                       \
    uint16_t temperature_hotspot, temperature_mem, temperature_vrsoc;                      \
    uint16_t curr_socket_power;                                                            \
    uint16_t average_gfx_activity, average_umc_activity;                                   \
    uint64_t mem_max_bandwidth;                                                            \
    uint64_t energy_accumulator;                                                           \
    uint64_t system_clock_counter;                                                         \
    V16_RESIDENCIES;                                                                       \
    uint16_t xgmi_link_status[NUM_XGMI_LINKS];                                             \
    uint16_t padding;                                                                      \
    V16_CLOCKS

struct gpu_metrics_v1_7 {
    V17_HEAD;
    struct amdgpu_xcp_metrics_v1_1 xcp_stats[AMD_NUM_XCP];
    uint32_t pcie_lc_perf_other_end_recovery;
};
_Static_assert(sizeof(struct gpu_metrics_v1_7) == 2208, "gpu_metrics_v1_7 size");
_Static_assert(offsetof(struct gpu_metrics_v1_7, energy_accumulator) == 24, "v1_7 energy");
_Static_assert(offsetof(struct gpu_metrics_v1_7, accumulation_counter) == 40, "v1_7 acc");
_Static_assert(offsetof(struct gpu_metrics_v1_7, ppt_residency_acc) == 48, "v1_7 ppt");
_Static_assert(offsetof(struct gpu_metrics_v1_7, hbm_thm_residency_acc) == 60, "v1_7 hbm thm");
_Static_assert(offsetof(struct gpu_metrics_v1_7, gfx_activity_acc) == 76, "v1_7 gfx acc");
_Static_assert(offsetof(struct gpu_metrics_v1_7, xgmi_link_status) == 264, "v1_7 xgmi status");
_Static_assert(offsetof(struct gpu_metrics_v1_7, firmware_timestamp) == 288, "v1_7 fw ts");
_Static_assert(offsetof(struct gpu_metrics_v1_7, current_uclk) == 336, "v1_7 uclk");
_Static_assert(offsetof(struct gpu_metrics_v1_7, num_partition) == 338, "v1_7 partitions");
_Static_assert(offsetof(struct gpu_metrics_v1_7, xcp_stats) == 344, "v1_7 xcp_stats");
_Static_assert(offsetof(struct gpu_metrics_v1_7, pcie_lc_perf_other_end_recovery) == 2200,
               "v1_7 recovery");

struct gpu_metrics_v1_8 {
    V17_HEAD;
    struct amdgpu_xcp_metrics_v1_2 xcp_stats[AMD_NUM_XCP];
    uint32_t pcie_lc_perf_other_end_recovery;
};
_Static_assert(sizeof(struct gpu_metrics_v1_8) == 3872, "gpu_metrics_v1_8 size");
_Static_assert(offsetof(struct gpu_metrics_v1_8, ppt_residency_acc) == 48, "v1_8 ppt");
_Static_assert(offsetof(struct gpu_metrics_v1_8, num_partition) == 338, "v1_8 partitions");
_Static_assert(offsetof(struct gpu_metrics_v1_8, xcp_stats) == 344, "v1_8 xcp_stats");
_Static_assert(offsetof(struct gpu_metrics_v1_8, pcie_lc_perf_other_end_recovery) == 3864,
               "v1_8 recovery");

static const char NOT_REPORTED[] = "not reported by this GPU in gpu_metrics (all ones)";
static const char NOT_IN_REV[] = "not in this gpu_metrics revision";

static struct metric u16m(uint16_t v, double scale)
{
    return v == UINT16_MAX ? metric_none(NOT_REPORTED) : metric_direct(v * scale);
}

static struct metric u64m(uint64_t v, double scale)
{
    return v == UINT64_MAX ? metric_none(NOT_REPORTED) : metric_direct((double)v * scale);
}

static void all_none(struct amd_gpu_metrics *m, const char *why)
{
    struct metric n = metric_none(why);
    m->hotspot_c = m->mem_c = m->hbm_max_c = m->power_w = m->gfx_pct = m->umc_pct = n;
    m->energy_j = m->gfxclk_mhz = m->uclk_mhz = m->pcie_width = m->pcie_speed = n;
    memset(&m->res, 0, sizeof(m->res));
    for (int i = 0; i < AMD_NUM_XCP; i++) {
        m->part_busy[i] = n;
        m->part_xcc[i] = 0;
    }
    m->num_partition = -1;
}

/* Energy in joules: the counter is in 2^-16 J units (v1.4 on). */
#define ENERGY_UNIT (1.0 / 65536.0)

uint64_t amd_throttle_between(const struct amd_residency *prev, const struct amd_residency *cur)
{
    if (!prev->ok || !cur->ok)
        return 0;
    uint64_t mask = 0;
    /* a counter that went back (a reset of the firmware's accumulation)
     * says nothing */
    if (cur->ppt > prev->ppt)
        mask |= AMD_THROTTLE_SW_POWER_CAP;
    if (cur->socket_thm > prev->socket_thm || cur->hbm_thm > prev->hbm_thm)
        mask |= AMD_THROTTLE_SW_THERMAL;
    return mask;
}

/* A partition's activity: the mean of the XCCs the table fills. */
static void part_busy(struct amd_gpu_metrics *m, int k, const uint32_t *inst)
{
    double sum = 0;
    int n = 0;
    for (int x = 0; x < AMD_MAX_XCC; x++) {
        if (inst[x] == UINT32_MAX)
            continue;
        sum += inst[x];
        n++;
    }
    m->part_xcc[k] = n;
    m->part_busy[k] = n ? metric_direct(sum / n) : metric_none(NOT_REPORTED);
}

#define COPY(T, v) memcpy(&(v), buf, sizeof(T))

#define V16_COMMON(t)                                                                      \
    do {                                                                                   \
        m->hotspot_c = u16m((t).temperature_hotspot, 1);                                   \
        m->mem_c = u16m((t).temperature_mem, 1);                                           \
        m->power_w = u16m((t).curr_socket_power, 1);                                       \
        m->gfx_pct = u16m((t).average_gfx_activity, 1);                                    \
        m->umc_pct = u16m((t).average_umc_activity, 1);                                    \
        m->energy_j = u64m((t).energy_accumulator, ENERGY_UNIT);                           \
        m->gfxclk_mhz = u16m((t).current_gfxclk[0], 1);                                    \
        m->uclk_mhz = u16m((t).current_uclk, 1);                                           \
        m->pcie_width = u16m((t).pcie_link_width, 1);                                      \
        m->pcie_speed = u16m((t).pcie_link_speed, 0.1);                                    \
        m->res.acc = (t).accumulation_counter;                                             \
        m->res.prochot = (t).prochot_residency_acc;                                        \
        m->res.ppt = (t).ppt_residency_acc;                                                \
        m->res.socket_thm = (t).socket_thm_residency_acc;                                  \
        m->res.vr_thm = (t).vr_thm_residency_acc;                                          \
        m->res.hbm_thm = (t).hbm_thm_residency_acc;                                        \
        m->res.ok = m->res.acc != UINT32_MAX && m->res.ppt != UINT32_MAX &&                \
                    m->res.socket_thm != UINT32_MAX && m->res.hbm_thm != UINT32_MAX;       \
        int np = (t).num_partition;                                                        \
        m->num_partition = np >= 1 && np <= AMD_NUM_XCP ? np : -1;                         \
        for (int k = 0; k < AMD_NUM_XCP; k++) {                                            \
            if (k < m->num_partition)                                                      \
                part_busy(m, k, (t).xcp_stats[k].gfx_busy_inst);                           \
            else                                                                           \
                m->part_busy[k] = metric_none("no such partition in gpu_metrics");        \
        }                                                                                  \
    } while (0)

static size_t layout_size(int fmt, int crev)
{
    if (fmt != 1)
        return 0;
    switch (crev) {
    case 3: return sizeof(struct gpu_metrics_v1_3);
    case 4: return sizeof(struct gpu_metrics_v1_4);
    case 5: return sizeof(struct gpu_metrics_v1_5);
    case 6: return sizeof(struct gpu_metrics_v1_6);
    case 7: return sizeof(struct gpu_metrics_v1_7);
    case 8: return sizeof(struct gpu_metrics_v1_8);
    }
    return 0;
}

int amd_metrics_decode(const void *buf, size_t len, struct amd_gpu_metrics *m)
{
    memset(m, 0, sizeof(*m));
    m->format = m->content = -1;
    if (len < sizeof(struct metrics_table_header)) {
        m->why = "gpu_metrics shorter than its 4-byte header";
        all_none(m, m->why);
        return -1;
    }
    struct metrics_table_header h;
    memcpy(&h, buf, sizeof(h));
    m->format = h.format_revision;
    m->content = h.content_revision;
    size_t want = layout_size(h.format_revision, h.content_revision);
    if (!want) {
        m->why = "gpu_metrics revision not known (decoded: format 1, content 3 to 8)";
        all_none(m, m->why);
        return -1;
    }
    if (h.structure_size != want) {
        m->why = "gpu_metrics structure_size differs from its revision's layout";
        all_none(m, m->why);
        return -1;
    }
    if (len < want) {
        m->why = "gpu_metrics truncated (shorter than its structure_size)";
        all_none(m, m->why);
        return -1;
    }
    all_none(m, NOT_IN_REV);
    switch (h.content_revision) {
    case 3: {
        struct gpu_metrics_v1_3 t;
        COPY(struct gpu_metrics_v1_3, t);
        m->hotspot_c = u16m(t.temperature_hotspot, 1);
        m->mem_c = u16m(t.temperature_mem, 1);
        m->power_w = u16m(t.average_socket_power, 1);
        m->gfx_pct = u16m(t.average_gfx_activity, 1);
        m->umc_pct = u16m(t.average_umc_activity, 1);
        m->energy_j = metric_none("energy_accumulator's unit is not documented before v1.4");
        m->gfxclk_mhz = u16m(t.current_gfxclk, 1);
        m->uclk_mhz = u16m(t.current_uclk, 1);
        m->pcie_width = u16m(t.pcie_link_width, 1);
        m->pcie_speed = u16m(t.pcie_link_speed, 0.1);
        double hot = -1;
        for (int i = 0; i < NUM_HBM_INSTANCES; i++)
            if (t.temperature_hbm[i] != UINT16_MAX && t.temperature_hbm[i] > hot)
                hot = t.temperature_hbm[i];
        m->hbm_max_c = hot >= 0 ? metric_direct(hot) : metric_none(NOT_REPORTED);
        break;
    }
    case 4:
    case 5: {
        struct gpu_metrics_v1_5 t5;
        struct gpu_metrics_v1_4 t4;
        if (h.content_revision == 4)
            COPY(struct gpu_metrics_v1_4, t4);
        else
            COPY(struct gpu_metrics_v1_5, t5);
#define V14(t)                                                                             \
    do {                                                                                   \
        m->hotspot_c = u16m((t).temperature_hotspot, 1);                                   \
        m->mem_c = u16m((t).temperature_mem, 1);                                           \
        m->power_w = u16m((t).curr_socket_power, 1);                                       \
        m->gfx_pct = u16m((t).average_gfx_activity, 1);                                    \
        m->umc_pct = u16m((t).average_umc_activity, 1);                                    \
        m->energy_j = u64m((t).energy_accumulator, ENERGY_UNIT);                           \
        m->gfxclk_mhz = u16m((t).current_gfxclk[0], 1);                                    \
        m->uclk_mhz = u16m((t).current_uclk, 1);                                           \
        m->pcie_width = u16m((t).pcie_link_width, 1);                                      \
        m->pcie_speed = u16m((t).pcie_link_speed, 0.1);                                    \
    } while (0)
        if (h.content_revision == 4)
            V14(t4);
        else
            V14(t5);
#undef V14
        break;
    }
    case 6: {
        struct gpu_metrics_v1_6 t;
        COPY(struct gpu_metrics_v1_6, t);
        V16_COMMON(t);
        break;
    }
    case 7: {
        struct gpu_metrics_v1_7 t;
        COPY(struct gpu_metrics_v1_7, t);
        V16_COMMON(t);
        break;
    }
    case 8: {
        /* 3.8 KB: static rather than on a sampling thread's stack. The
         * decoder runs on one thread at a time (the collector's). */
        static __thread struct gpu_metrics_v1_8 t;
        COPY(struct gpu_metrics_v1_8, t);
        V16_COMMON(t);
        break;
    }
    }
    return 0;
}
