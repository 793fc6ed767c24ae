/*
 * amdgpu_metrics.h — the kernel's binary gpu_metrics table, decoded.
 *
 * The layouts are the kernel's (drivers/gpu/drm/amd/include/
 * kgd_pp_interface.h, struct gpu_metrics_v1_3 … v1_8), declared in
 * amdgpu_metrics.c with their sizes and offsets asserted. A table is decoded
 * by its header's format and content revision; one that is shorter than its
 * header says, shorter than its revision's layout, or of a revision not
 * declared here gives no values and a reason.
 */
#ifndef MIGMON_AMDGPU_METRICS_H
#define MIGMON_AMDGPU_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/model.h"

/* Partitions per table (the kernel's NUM_XCP) and XCCs per partition
 * (MAX_XCC). */
#define AMD_NUM_XCP 8
#define AMD_MAX_XCC 8

/* v1.6+: the accumulated throttle residencies as the table has them
 * (counts of the firmware's accumulation ticks); ok false when the table
 * has none or leaves one of those read all ones. */
struct amd_residency {
    bool ok;
    uint32_t acc, prochot, ppt, socket_thm, vr_thm, hbm_thm;
};

struct amd_gpu_metrics {
    int format, content;       /* header revision; -1 when no header */
    struct metric hotspot_c;   /* temperature_hotspot, °C */
    struct metric mem_c;       /* temperature_mem, °C */
    struct metric hbm_max_c;   /* v1.3: the hottest of temperature_hbm[] */
    struct metric power_w;     /* average_socket_power (v1.3) / curr_socket_power */
    struct metric gfx_pct;     /* average_gfx_activity */
    struct metric umc_pct;     /* average_umc_activity */
    struct metric energy_j;    /* energy_accumulator / 65536 (v1.4+; v1.3 unit unknown) */
    struct metric gfxclk_mhz;  /* current_gfxclk (v1.4+: of XCC 0) */
    struct metric uclk_mhz;    /* current_uclk */
    struct metric pcie_width;  /* lanes */
    struct metric pcie_speed;  /* GT/s (the table's 0.1 GT/s) */
    struct amd_residency res;
    /* v1.6+: partitions and each one's activity: the mean of its XCCs'
     * gfx_busy_inst that the table fills (xcc counts them). */
    int num_partition; /* -1: the table has no partition stats */
    struct metric part_busy[AMD_NUM_XCP];
    int part_xcc[AMD_NUM_XCP];
    const char *why; /* why nothing could be decoded, else NULL; static */
};

/* Decodes len bytes of a gpu_metrics read into m. Returns 0, or -1 with
 * m->why set (a static string) and every metric none with that reason.
 * A field the ASIC does not fill (the driver presets the table to all
 * ones) is none, "not reported (0xffff)". */
int amd_metrics_decode(const void *buf, size_t len, struct amd_gpu_metrics *m);

/* The clock-event reasons (NVML's bits, model.h's throttle_reasons) whose
 * residency counter grew from the table prev to cur, two reads of one GPU:
 * ppt_residency_acc → sw_power_cap (clocks held by the power limit);
 * socket_thm_residency_acc or hbm_thm_residency_acc → sw_thermal (by the
 * GPU's or its memory's temperature limit). PROCHOT and VR thermal have no
 * NVML reason of the same meaning and are not mapped (docs/amdgpu.md). */
#define AMD_THROTTLE_SW_POWER_CAP 0x004ULL
#define AMD_THROTTLE_SW_THERMAL 0x020ULL
uint64_t amd_throttle_between(const struct amd_residency *prev, const struct amd_residency *cur);

#endif
