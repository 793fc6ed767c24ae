/*
 * history.h — fixed-size rings of past samples and the carry-forward policy.
 *
 * Front ends that draw time series (the TUI's sparklines and RAM chart) push
 * every snapshot here and read the rings back. A point keeps the source of
 * its value, so a chart can leave a gap (none) and mark carried or estimated
 * points.
 *
 * Carry policy (docs/decisions.md): a series whose read fails repeats its last
 * real value, marked MSRC_CARRIED, for at most carry_ticks() (default HIST_CARRY_TTL) consecutive
 * ticks; after that it records gaps. A series that was never observed records
 * gaps and never invents a value. Carried points are never carried again:
 * the TTL counts from the last real value.
 *
 * Memory: rings are allocated when a device is first seen; a steady-state
 * history_push() allocates nothing.
 */
#ifndef MIGMON_HISTORY_H
#define MIGMON_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/model.h"
#include "core/snapshot.h"

#define HIST_POINTS_DEFAULT 300
#define HIST_CARRY_TTL 3
/* A device absent from this many consecutive snapshots is dropped. */
#define HIST_PRUNE_TICKS 10

struct hist_point {
    double v;
    enum metric_source src; /* MSRC_NONE: a gap, v is meaningless */
};

/* 48 bytes: a tick pushes nine series of every device (576 on a dgx), so
 * their headers are kept small. */
struct hist_series {
    struct hist_point *pts; /* ring of cap points, stride apart */
    uint32_t stride;        /* 1; a device's series share one block, interleaved */
    uint32_t cap;           /* at most HIST_POINTS_MAX */
    uint32_t len;           /* points stored, <= cap */
    uint32_t head;          /* index of the newest point */
    unsigned misses;        /* consecutive none pushes since the last real value */
    bool owns;              /* pts is this series' allocation (freed with it) */
    bool seen;              /* ever held a real (non-none) value */
    struct hist_point last_real;
};

#define HIST_POINTS_MAX (1u << 24)

/* Returns 0, -EINVAL when cap is 0 or above HIST_POINTS_MAX, or -ENOMEM. */
int hist_series_init(struct hist_series *s, size_t cap);
void hist_series_free(struct hist_series *s);
/* Push one tick's metric under the carry policy; returns the stored point. */
struct hist_point hist_push(struct hist_series *s, const struct metric *m);
/* age 0 = newest. Returns false when age >= len. */
bool hist_get(const struct hist_series *s, size_t age, struct hist_point *out);

enum hist_dev_series {
    HS_GPU_UTIL,  /* M_GPU_UTIL, % */
    HS_MEM_UTIL,  /* M_MEM_UTIL, % */
    HS_VRAM_USED, /* M_MEM_USED, bytes (a MIG-enabled GPU that cannot read
                   * its own: its instances' sum, snapshot_mig_vram_sum;
                   * vram_total likewise) */
    HS_PCIE_TX,   /* M_PCIE_TX, B/s */
    HS_PCIE_RX,   /* M_PCIE_RX, B/s */
    HS_TEMP,      /* M_TEMP, °C */
    HS_POWER,     /* M_POWER, W */
    HS_CLK_SM,    /* M_CLK_SM, MHz */
    HS_CLK_MEM,   /* M_CLK_MEM, MHz */
    HS_DEV_COUNT
};

struct hist_device {
    char node[64]; /* a fleet's device: its node (its UUID is its node's); "" here */
    char uuid[MIGMON_UUID_LEN];
    struct hist_series s[HS_DEV_COUNT];
    /* The last VRAM total ever read for this device. It is a static fact, so
     * it is kept without a TTL: the VRAM chart's scale never collapses when
     * one read fails (seed v0.3.11, "vram_max = 1 MB"). 0 = never known. */
    double vram_total;
    unsigned absent; /* consecutive snapshots without this device */
    /* The points history_fill_past put in: past_n of them, the newest at
     * age (history.ticks - past_end); 0 none. */
    uint64_t past_end;
    uint32_t past_n;
};

enum hist_host_series {
    HH_CPU_TOTAL, /* host.cpu_total, % */
    HH_RAM_USED,  /* host.mem.used, bytes */
    HH_RAM_CACHED, /* host.mem.cached + buffers, bytes */
    HH_COUNT
};

struct history {
    size_t points;             /* ring size of every series */
    struct hist_device *devs;  /* owned; ndevs used of cap */
    size_t ndevs, cap;
    struct hist_series host[HH_COUNT];
    double ram_total; /* last MemTotal read, bytes; 0 = never known */
    uint64_t ticks;   /* snapshots pushed */
};

/* points == 0 means HIST_POINTS_DEFAULT. Returns 0, -EINVAL when points is
 * above HIST_POINTS_MAX, or -ENOMEM. */
int history_init(struct history *h, size_t points);
/* Record one snapshot: every device by UUID (new ones get rings) and the host.
 * A known device absent from the snapshot records a gap in every series (so
 * age N is N ticks ago for all series) and is dropped after HIST_PRUNE_TICKS
 * consecutive absences. Devices without a UUID are not recorded.
 * Returns 0, or -ENOMEM when a new device's rings could not be allocated
 * (that device is then not recorded; the others are). */
int history_push(struct history *h, const struct snapshot *s);
/* Borrowed, valid until the next history_push() or history_free(); NULL when
 * the device (its node in a fleet, "" here, and UUID) has no history. */
const struct hist_device *history_device(const struct history *h, const char *node,
                                         const char *uuid);
void history_free(struct history *h);

/*
 * A device's past from another source than the snapshots (the fleet
 * view's range queries, backend/prometheus/prom_past.h): for each series, n points
 * oldest first, one interval apart, the newest at the time it was asked
 * for. A series whose bit is not in `given` is not part of it.
 */
struct hist_past {
    char node[64];
    char uuid[MIGMON_UUID_LEN];
    size_t n;
    unsigned given;         /* bit k: series k (enum hist_dev_series) */
    struct hist_point *pts; /* owned: point j of series k at [j * HS_DEV_COUNT + k] */
};

/* n points of every series, all gaps, none given. 0, -EINVAL (n is 0 or
 * above HIST_POINTS_MAX) or -ENOMEM. */
int hist_past_init(struct hist_past *p, size_t n);
void hist_past_free(struct hist_past *p);
static inline struct hist_point *hist_past_at(const struct hist_past *p, size_t j,
                                              enum hist_dev_series k)
{
    return &p->pts[j * HS_DEV_COUNT + k];
}

/*
 * The rings of device p->uuid made again from p: each given series is p's
 * points followed by the `live` newest points it holds (those pushed since
 * p was asked for), the oldest of p dropped when they do not all fit. The
 * carry state follows the rebuilt ring. A series not given is left as it
 * is. 0, or -ENOENT when the device has no history.
 */
int history_fill_past(struct history *h, const struct hist_past *p, size_t live);
/* Of the n points from age `age` on of device d (of h), how many came from
 * history_fill_past. */
size_t history_past_points(const struct history *h, const struct hist_device *d, size_t age,
                           size_t n);

#endif
