/* GPU health in the outputs: the JSON health object (src/export/json.c),
 * the migmon_* health counters, verdict and per-code Xid counts
 * (src/export/prom.c, src/export/xid_counts.c), and dcgm-exporter's names
 * for the same data under --compat dcgm (src/export/prom_dcgm.c), on a
 * MIG GPU and a GPU outside MIG mode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backend/nvml/nvml_api.h"
#include "engine/health.h"
#include "export/json.h"
#include "export/prom.h"
#include "export/xid_counts.h"

#define GPU0 "gpu=\"0\",uuid=\"GPU-aaaa\",pci_bus_id=\"00000000:19:00.0\",model=\"NVIDIA H200\""
#define MIG1                                                                                       \
    GPU0 ",gpu_instance_id=\"1\",compute_instance_id=\"0\",mig_profile=\"3g.71gb\","               \
         "mig_uuid=\"MIG-1\""
#define MIG2                                                                                       \
    GPU0 ",gpu_instance_id=\"2\",compute_instance_id=\"0\",mig_profile=\"3g.71gb\","               \
         "mig_uuid=\"MIG-2\""
#define GPU1 "gpu=\"1\",uuid=\"GPU-bbbb\",pci_bus_id=\"00000000:1A:00.0\",model=\"NVIDIA H200\""
#define DCGM_GI(gi)                                                                                \
    "{gpu=\"0\",UUID=\"GPU-aaaa\",pci_bus_id=\"00000000:19:00.0\","                                \
    "device=\"nvidia0\",modelName=\"NVIDIA H200\",Hostname=\"node-1\",hostname=\"node-1\","        \
    "DCGM_FI_DRIVER_VERSION=\"550.54.15\",GPU_I_PROFILE=\"3g.71gb\",GPU_I_ID=\"" gi "\"} "
#define DCGM_GPU1                                                                                  \
    "{gpu=\"1\",UUID=\"GPU-bbbb\",pci_bus_id=\"00000000:1A:00.0\","                                \
    "device=\"nvidia1\",modelName=\"NVIDIA H200\",Hostname=\"node-1\",hostname=\"node-1\","        \
    "DCGM_FI_DRIVER_VERSION=\"550.54.15\"} "

static struct gpu_event events[8];

static void add_event(struct snapshot *s, int pos, unsigned xid)
{
    struct gpu_event *e = &s->events[s->nevents++];
    memset(e, 0, sizeof(*e));
    e->device_pos = pos;
    e->xid = xid;
    e->type = xid ? NVML_EVENT_TYPE_XID : NVML_EVENT_TYPE_DOUBLE_BIT_ECC;
    e->gi_id = e->ci_id = -1;
    s->events_total++;
}

/* GPU 0 (MIG on) with MIG devices GI 1 and GI 2 at positions 1 and 2; GPU 1
 * (MIG off) at 3. The health counters are read on the GPUs; the MIG devices
 * carry GPU 0's GPU-wide values, as the backend copies them. Events flow,
 * none yet; health not evaluated. */
static void make_snapshot(struct snapshot *s)
{
    memset(s, 0, sizeof(*s));
    assert_int_equal(snapshot_reserve(s, 4), 0);
    s->ndevices = 4;
    s->gpu_ok = true;
    snprintf(s->driver_version, sizeof(s->driver_version), "550.54.15");
    s->host_ok = true;
    snprintf(s->host.hostname, sizeof(s->host.hostname), "node-1");
    s->events = events;
    s->events_cap = sizeof(events) / sizeof(events[0]);
    for (size_t i = 0; i < 4; i++) {
        struct device *d = &s->devices[i];
        memset(d, 0, sizeof(*d));
        for (int k = 0; k < M_COUNT; k++)
            d->m[k] = metric_none("NVML_ERROR_NOT_SUPPORTED");
        d->process_count = metric_none(NULL);
        d->cc_major = 9;
        snprintf(d->name, sizeof(d->name), "NVIDIA H200");
        d->m[M_XID_ERRORS] = metric_direct(0);
        d->m[M_LAST_XID] = metric_none("no Xid event on this device since the monitor started");
        if (i == 1 || i == 2) {
            d->kind = DEV_MIG;
            d->index = 0;
            d->mig_index = (int)i - 1;
            d->parent_pos = 0;
            d->gi_id = (int)i;
            d->ci_id = 0;
            snprintf(d->uuid, sizeof(d->uuid), "MIG-%zu", i);
            snprintf(d->parent_uuid, sizeof(d->parent_uuid), "GPU-aaaa");
            snprintf(d->profile, sizeof(d->profile), "3g.71gb");
            snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "00000000:19:00.0");
            d->m[M_MEM_RESERVED] = metric_direct(3.5 * 1048576);
            d->m[M_MEM_UTIL] = (struct metric){.value = 40, .src = MSRC_GPM};
            continue;
        }
        d->kind = DEV_GPU;
        d->index = i == 0 ? 0 : 1;
        d->mig_index = d->parent_pos = d->gi_id = d->ci_id = -1;
        d->mig_enabled = i == 0;
        snprintf(d->uuid, sizeof(d->uuid), i == 0 ? "GPU-aaaa" : "GPU-bbbb");
        snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), i == 0 ? "00000000:19:00.0"
                                                              : "00000000:1A:00.0");
        d->m[M_MEM_TEMP] = metric_direct(i == 0 ? 71 : 52);
        d->m[M_PCIE_REPLAY] = metric_direct(i == 0 ? 12 : 0);
        d->m[M_ECC_CORR_AGG] = metric_direct(1500);
        d->m[M_ECC_UNCORR_AGG] = metric_direct(2);
        d->m[M_REMAP_CORR] = metric_direct(3);
        d->m[M_REMAP_UNCORR] = metric_direct(1);
        d->m[M_REMAP_PENDING] = metric_direct(i == 0 ? 1 : 0);
        d->m[M_REMAP_FAILURE] = metric_direct(0);
        d->m[M_MEM_RESERVED] = metric_direct(2.0 * 1048576 + 1);
        d->m[M_NVLINK_LINKS_UP] = metric_direct(18);
        d->m[M_NVLINK_CRC_ERRORS] = metric_direct(7);
        d->m[M_NVLINK_REPLAY_ERRORS] = metric_direct(5);
        d->m[M_NVLINK_RECOVERY_ERRORS] = metric_direct(0);
        d->m[M_NVLINK_DATA_BYTES] = metric_direct(4096e6);
        d->m[M_THROTTLE_POWER_S] = metric_direct(12.5);
        d->m[M_THROTTLE_THERMAL_S] = metric_direct(0.25);
        d->m[M_NVLINK_TX] = (struct metric){.value = 2048e6, .src = MSRC_GPM};
        d->m[M_NVLINK_RX] = (struct metric){.value = 1024e6, .src = MSRC_GPM};
        d->m[M_ENC_UTIL] = metric_direct(i == 0 ? 3 : 9);
        d->m[M_DEC_UTIL] = metric_direct(i == 0 ? 4 : 11);
        d->m[M_MEM_UTIL] = i == 0 ? (struct metric){.value = 40, .src = MSRC_GPM}
                                  : metric_direct(37.4);
        /* pre-Ampere page retirement: not on Hopper */
    }
    /* the GPU-wide values of a MIG device are its GPU's */
    for (size_t i = 1; i <= 2; i++)
        for (int k = 0; k < M_COUNT; k++)
            if (metric_info((enum metric_id)k)->gpu_wide)
                s->devices[i].m[k] = s->devices[0].m[k];
}

/* Keep the events array (static) out of snapshot_free. */
static void free_snapshot(struct snapshot *s)
{
    s->events = NULL;
    snapshot_free(s);
}

static char *render(const struct snapshot *s, bool dcgm)
{
    struct prom_buf b = {0};
    struct prom_opts o = {.dcgm = dcgm, .no_host = true};
    assert_int_equal(prom_render(&b, s, &o), 0);
    char *page = strdup(b.p);
    prom_buf_free(&b);
    return page;
}

/* The page holds this exact line (with its newline). */
static void has_line(const char *page, const char *line)
{
    char want[1024];
    snprintf(want, sizeof(want), "\n%s\n", line);
    if (!strstr(page, want)) {
        fprintf(stderr, "missing line: %s\n", line);
        fail();
    }
}

/* The line DCGM_FI_DEV_<field><labels><value>. */
static void has_dcgm(const char *page, const char *labels, const char *field, const char *value)
{
    char line[1024];
    snprintf(line, sizeof(line), "DCGM_FI_DEV_%s%s%s", field, labels, value);
    has_line(page, line);
}

static bool has_name(const char *page, const char *name)
{
    char want[160];
    snprintf(want, sizeof(want), "\n%s{", name);
    return strstr(page, want) != NULL;
}

/* ---- migmon_* ------------------------------------------------------------ */

static void test_prom_health_counters(void **state)
{
    (void)state;
    struct snapshot s;
    make_snapshot(&s);
    char *page = render(&s, false);
    static const char *const lines[] = {
        "# TYPE migmon_gpu_memory_temperature_celsius gauge",
        "migmon_gpu_memory_temperature_celsius{" GPU0 ",source=\"direct\"} 71",
        "# TYPE migmon_gpu_pcie_replays_total counter",
        "migmon_gpu_pcie_replays_total{" GPU0 ",source=\"direct\"} 12",
        "migmon_gpu_pcie_replays_total{" GPU1 ",source=\"direct\"} 0",
        "# TYPE migmon_gpu_ecc_aggregate_corrected_errors_total counter",
        "migmon_gpu_ecc_aggregate_corrected_errors_total{" GPU0 ",source=\"direct\"} 1500",
        "# TYPE migmon_gpu_ecc_aggregate_uncorrected_errors_total counter",
        "migmon_gpu_ecc_aggregate_uncorrected_errors_total{" GPU0 ",source=\"direct\"} 2",
        "# TYPE migmon_gpu_remapped_rows_correctable_total counter",
        "migmon_gpu_remapped_rows_correctable_total{" GPU0 ",source=\"direct\"} 3",
        "# TYPE migmon_gpu_remapped_rows_uncorrectable_total counter",
        "migmon_gpu_remapped_rows_uncorrectable_total{" GPU0 ",source=\"direct\"} 1",
        "# TYPE migmon_gpu_row_remap_pending gauge",
        "migmon_gpu_row_remap_pending{" GPU0 ",source=\"direct\"} 1",
        "migmon_gpu_row_remap_pending{" GPU1 ",source=\"direct\"} 0",
        "# TYPE migmon_gpu_row_remap_failure gauge",
        "migmon_gpu_row_remap_failure{" GPU0 ",source=\"direct\"} 0",
        "# TYPE migmon_gpu_memory_reserved_bytes gauge",
        "migmon_gpu_memory_reserved_bytes{" GPU0 ",source=\"direct\"} 2097153",
        /* reserved memory is the device's own: on MIG devices too */
        "# TYPE migmon_mig_memory_reserved_bytes gauge",
        "migmon_mig_memory_reserved_bytes{" MIG1 ",source=\"direct\"} 3670016",
        "# TYPE migmon_gpu_nvlink_links_up gauge",
        "migmon_gpu_nvlink_links_up{" GPU0 ",source=\"direct\"} 18",
        "# TYPE migmon_gpu_nvlink_crc_errors_total counter",
        "migmon_gpu_nvlink_crc_errors_total{" GPU0 ",source=\"direct\"} 7",
        "# TYPE migmon_gpu_nvlink_replay_errors_total counter",
        "migmon_gpu_nvlink_replay_errors_total{" GPU0 ",source=\"direct\"} 5",
        "# TYPE migmon_gpu_nvlink_recovery_errors_total counter",
        "migmon_gpu_nvlink_recovery_errors_total{" GPU0 ",source=\"direct\"} 0",
        "# TYPE migmon_gpu_nvlink_data_bytes_total counter",
        "migmon_gpu_nvlink_data_bytes_total{" GPU0 ",source=\"direct\"} 4096000000",
        "# TYPE migmon_gpu_power_throttle_seconds_total counter",
        "migmon_gpu_power_throttle_seconds_total{" GPU0 ",source=\"direct\"} 12.5",
        "# TYPE migmon_gpu_thermal_throttle_seconds_total counter",
        "migmon_gpu_thermal_throttle_seconds_total{" GPU0 ",source=\"direct\"} 0.25",
    };
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
        has_line(page, lines[i]);
    /* GPU-wide: on the GPU only, never as migmon_mig_* */
    assert_false(has_name(page, "migmon_mig_memory_temperature_celsius"));
    assert_false(has_name(page, "migmon_mig_pcie_replays_total"));
    assert_false(has_name(page, "migmon_mig_row_remap_pending"));
    /* none is absent: no page retirement on Hopper, no HELP either */
    assert_null(strstr(page, "retired_pages"));
    /* no Xid yet, events watched: each device's count 0 without a code,
     * so `> 0` has data on a healthy node; last_xid none */
    has_line(page, "migmon_gpu_xid_errors_total{" GPU0 ",source=\"direct\"} 0");
    has_line(page, "migmon_gpu_xid_errors_total{" GPU1 ",source=\"direct\"} 0");
    has_line(page, "migmon_mig_xid_errors_total{" MIG1 ",source=\"direct\"} 0");
    has_line(page, "migmon_mig_xid_errors_total{" MIG2 ",source=\"direct\"} 0");
    assert_null(strstr(page, "xid=\""));
    assert_null(strstr(page, "last_xid"));
    free(page);
    /* a device whose events are not watched: no series, not 0 */
    s.devices[1].m[M_XID_ERRORS] = metric_none("not watched");
    s.devices[3].m[M_XID_ERRORS] = metric_none("not watched");
    page = render(&s, false);
    assert_null(strstr(page, "migmon_mig_xid_errors_total{" MIG1 ","));
    assert_null(strstr(page, "migmon_gpu_xid_errors_total{" GPU1 ","));
    has_line(page, "migmon_gpu_xid_errors_total{" GPU0 ",source=\"direct\"} 0");
    has_line(page, "migmon_mig_xid_errors_total{" MIG2 ",source=\"direct\"} 0");
    free(page);
    free_snapshot(&s);
}

static void test_prom_health_verdict(void **state)
{
    (void)state;
    struct snapshot s;
    make_snapshot(&s);
    add_event(&s, 2, 94); /* a contained ECC error on GI 2 */
    s.devices[2].m[M_XID_ERRORS] = metric_direct(1);
    s.devices[2].m[M_LAST_XID] = metric_direct(94);
    health_evaluate(&s);
    /* the pending remap is GPU 0's (action), so its instances' too; GI 2
     * also has its Xid; GPU 1 is clear */
    assert_int_equal(s.devices[0].health, HEALTH_ACTION);
    assert_int_equal(s.devices[3].health, HEALTH_OK);
    char *page = render(&s, false);
    has_line(page, "# HELP migmon_gpu_health Health verdict (docs/health.md): 1 for the state the "
                   "device is in (ok, warning, action), 0 for the others; absent while unknown.");
    has_line(page, "# TYPE migmon_gpu_health gauge");
    has_line(page, "migmon_gpu_health{" GPU0 ",state=\"ok\"} 0");
    has_line(page, "migmon_gpu_health{" GPU0 ",state=\"warning\"} 0");
    has_line(page, "migmon_gpu_health{" GPU0 ",state=\"action\"} 1");
    has_line(page, "migmon_gpu_health{" GPU1 ",state=\"ok\"} 1");
    has_line(page, "migmon_gpu_health{" GPU1 ",state=\"warning\"} 0");
    has_line(page, "migmon_gpu_health{" GPU1 ",state=\"action\"} 0");
    has_line(page, "# TYPE migmon_mig_health gauge");
    has_line(page, "migmon_mig_health{" MIG2 ",state=\"action\"} 1");
    free(page);

    /* unknown: no series at all */
    for (size_t i = 0; i < s.ndevices; i++)
        s.devices[i].health = HEALTH_UNKNOWN;
    s.devices[3].health = HEALTH_WARNING;
    page = render(&s, false);
    assert_false(has_name(page, "migmon_mig_health"));
    assert_null(strstr(page, "migmon_gpu_health{" GPU0));
    has_line(page, "migmon_gpu_health{" GPU1 ",state=\"warning\"} 1");
    free(page);
    free_snapshot(&s);
}

/* Per-code counts: exact while the list holds every Xid of the device. */
static void test_xid_counts(void **state)
{
    (void)state;
    struct snapshot s;
    make_snapshot(&s);
    add_event(&s, 3, 79);
    add_event(&s, 1, 94);
    add_event(&s, 3, 13);
    add_event(&s, 3, 0); /* an ECC event is no Xid */
    add_event(&s, 3, 13);
    add_event(&s, 0, 48);
    s.devices[3].m[M_XID_ERRORS] = metric_direct(3);
    s.devices[1].m[M_XID_ERRORS] = metric_direct(1);
    s.devices[0].m[M_XID_ERRORS] = metric_direct(1);
    struct xid_count xc[8];
    assert_int_equal(xid_counts(&s, 3, xc, 8), 2);
    assert_int_equal(xc[0].xid, 13); /* code order */
    assert_int_equal(xc[0].count, 2);
    assert_int_equal(xc[1].xid, 79);
    assert_int_equal(xc[1].count, 1);
    /* the GPU counts only its own (not its instances') */
    assert_int_equal(xid_counts(&s, 0, xc, 8), 1);
    assert_int_equal(xc[0].xid, 48);
    assert_int_equal(xid_counts(&s, 2, xc, 8), 0);
    /* more codes than room: not all known */
    assert_int_equal(xid_counts(&s, 3, xc, 1), -1);
    /* events without their count (none: the events helper is stalled) */
    s.devices[1].m[M_XID_ERRORS] = metric_none("events helper stalled");
    assert_int_equal(xid_counts(&s, 1, xc, 8), -1);
    assert_int_equal(xid_counts(&s, 9, xc, 8), -1);

    char *page = render(&s, false);
    has_line(page, "# HELP migmon_gpu_xid_errors_total Xid events attributed to the device since "
                   "the monitor started, per Xid code (0 without an xid label while it has had "
                   "none); absent where its events are not watched, and for a device with more "
                   "than 8 codes once the last 64 events no longer hold all of them "
                   "(docs/health.md).");
    has_line(page, "# TYPE migmon_gpu_xid_errors_total counter");
    has_line(page, "migmon_gpu_xid_errors_total{" GPU0 ",xid=\"48\",source=\"direct\"} 1");
    has_line(page, "migmon_gpu_xid_errors_total{" GPU1 ",xid=\"13\",source=\"direct\"} 2");
    has_line(page, "migmon_gpu_xid_errors_total{" GPU1 ",xid=\"79\",source=\"direct\"} 1");
    /* a device with codes has no series without one */
    assert_null(strstr(page, "migmon_gpu_xid_errors_total{" GPU0 ",source="));
    assert_null(strstr(page, "migmon_gpu_xid_errors_total{" GPU1 ",source="));
    assert_null(strstr(page, "migmon_mig_xid_errors_total{" MIG1 ",")); /* GI 1's count is none */
    has_line(page, "migmon_mig_xid_errors_total{" MIG2 ",source=\"direct\"} 0");
    free(page);

    /* GPU 1 had a fourth Xid that has left the list: its codes are no
     * longer all known, so none is written (a count that fell would read
     * as a counter reset); GPU 0's stay */
    s.devices[3].m[M_XID_ERRORS] = metric_direct(4);
    s.devices[1].m[M_XID_ERRORS] = metric_direct(1);
    page = render(&s, false);
    assert_null(strstr(page, "migmon_gpu_xid_errors_total{" GPU1));
    has_line(page, "migmon_gpu_xid_errors_total{" GPU0 ",xid=\"48\",source=\"direct\"} 1");
    has_line(page, "# TYPE migmon_mig_xid_errors_total counter");
    has_line(page, "migmon_mig_xid_errors_total{" MIG1 ",xid=\"94\",source=\"direct\"} 1");
    free(page);

    /* ...unless the events client counted per code (device.xids): exact
     * whatever the list still holds, once they add up to the count */
    s.devices[3].xids[0] = (struct device_xid){.xid = 13, .count = 3};
    s.devices[3].xids[1] = (struct device_xid){.xid = 79, .count = 1};
    s.devices[3].nxids = 2;
    assert_int_equal(xid_counts(&s, 3, xc, 8), 2);
    assert_int_equal(xc[0].xid, 13);
    assert_int_equal(xc[0].count, 3);
    page = render(&s, false);
    has_line(page, "migmon_gpu_xid_errors_total{" GPU1 ",xid=\"13\",source=\"direct\"} 3");
    has_line(page, "migmon_gpu_xid_errors_total{" GPU1 ",xid=\"79\",source=\"direct\"} 1");
    free(page);
    s.devices[3].xids_overflow = true; /* more codes than the table holds: the list again */
    assert_int_equal(xid_counts(&s, 3, xc, 8), -1);
    free_snapshot(&s);
}

/* /health's line on where Xid events are watched (xid_watch_text). */
static void test_xid_watch_text(void **state)
{
    (void)state;
    struct snapshot s;
    make_snapshot(&s);
    char t[480];
    xid_watch_text(&s, t, sizeof(t));
    assert_string_equal(t, "events: Xid events watched on 2 of 2 GPUs and 2 of 2 MIG devices");
    static const char *const hidden = "instances' own not seen", *const noxid = "no Xid events";
    s.devices[1].m[M_XID_ERRORS] = s.devices[2].m[M_XID_ERRORS] = metric_none(hidden);
    s.devices[3].m[M_XID_ERRORS] = metric_none(noxid);
    xid_watch_text(&s, t, sizeof(t));
    assert_string_equal(t, "events: Xid events watched on 1 of 2 GPUs and 0 of 2 MIG devices; "
                           "not on GPU 1: no Xid events; the MIG devices of GPU 0: instances' "
                           "own not seen");
    /* cut to fit, and said so */
    xid_watch_text(&s, t, 40);
    assert_string_equal(t, "events: Xid events watched on 1 of 2...");
    /* none anywhere: the events' own reason */
    s.events_why = "no NVML event API";
    for (size_t i = 0; i < s.ndevices; i++)
        s.devices[i].m[M_XID_ERRORS] = metric_none(s.events_why);
    xid_watch_text(&s, t, sizeof(t));
    assert_string_equal(t, "events: no Xid series: no NVML event API");
    free_snapshot(&s);
}

/* ---- --compat dcgm ------------------------------------------------------- */

static void test_dcgm_health_names(void **state)
{
    (void)state;
    struct snapshot s;
    make_snapshot(&s);
    char *page = render(&s, true);
    /* dcgm-exporter's types and HELP (etc/default-counters.csv) */
    static const char *const heads[] = {
        "# HELP DCGM_FI_DEV_MEMORY_TEMP Memory temperature (in C).",
        "# TYPE DCGM_FI_DEV_MEMORY_TEMP gauge",
        "# HELP DCGM_FI_DEV_PCIE_REPLAY_COUNTER Total number of PCIe retries.",
        "# TYPE DCGM_FI_DEV_PCIE_REPLAY_COUNTER counter",
        "# HELP DCGM_FI_DEV_MEM_COPY_UTIL Memory utilization (in %).",
        "# TYPE DCGM_FI_DEV_MEM_COPY_UTIL gauge",
        "# HELP DCGM_FI_DEV_ENC_UTIL Encoder utilization (in %).",
        "# TYPE DCGM_FI_DEV_ENC_UTIL gauge",
        "# HELP DCGM_FI_DEV_DEC_UTIL Decoder utilization (in %).",
        "# TYPE DCGM_FI_DEV_DEC_UTIL gauge",
        "# HELP DCGM_FI_DEV_FB_RESERVED Framebuffer memory reserved (in MiB).",
        "# TYPE DCGM_FI_DEV_FB_RESERVED gauge",
        "# HELP DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL Total number of NVLink bandwidth counters for "
        "all lanes.",
        "# TYPE DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL counter",
        "# HELP DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS Number of remapped rows for uncorrectable "
        "errors",
        "# TYPE DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS counter",
        "# HELP DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS Number of remapped rows for correctable "
        "errors",
        "# TYPE DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS counter",
        "# HELP DCGM_FI_DEV_ROW_REMAP_FAILURE Whether remapping of rows has failed",
        "# TYPE DCGM_FI_DEV_ROW_REMAP_FAILURE gauge",
    };
    for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
        has_line(page, heads[i]);
    /* the MIG GPU through its instances, each with the GPU's values */
    for (int gi = 1; gi <= 2; gi++) {
        const char *lab = gi == 1 ? DCGM_GI("1") : DCGM_GI("2");
        has_dcgm(page, lab, "MEMORY_TEMP", "71");
        has_dcgm(page, lab, "PCIE_REPLAY_COUNTER", "12");
        has_dcgm(page, lab, "CORRECTABLE_REMAPPED_ROWS", "3");
        has_dcgm(page, lab, "UNCORRECTABLE_REMAPPED_ROWS", "1");
        has_dcgm(page, lab, "ROW_REMAP_FAILURE", "0");
        has_dcgm(page, lab, "ENC_UTIL", "3");
        has_dcgm(page, lab, "DEC_UTIL", "4");
        /* (2048e6 + 1024e6) B/s in DCGM's unit: KiB/s / 1000, truncated */
        has_dcgm(page, lab, "NVLINK_BANDWIDTH_TOTAL", "3000");
        /* the instance's own reserved memory, MiB rounded down */
        has_dcgm(page, lab, "FB_RESERVED", "3");
    }
    /* no series of the MIG GPU itself */
    assert_null(strstr(page, "DCGM_FI_DEV_MEMORY_TEMP{gpu=\"0\",UUID=\"GPU-aaaa\",pci_bus_id="
                             "\"00000000:19:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H200\","
                             "Hostname=\"node-1\",hostname=\"node-1\",DCGM_FI_DRIVER_VERSION="
                             "\"550.54.15\"}"));
    /* the GPU outside MIG mode: its own; reserved 2 MiB + 1 B is 2 MiB */
    has_dcgm(page, DCGM_GPU1, "MEMORY_TEMP", "52");
    has_dcgm(page, DCGM_GPU1, "PCIE_REPLAY_COUNTER", "0");
    has_dcgm(page, DCGM_GPU1, "FB_RESERVED", "2");
    has_dcgm(page, DCGM_GPU1, "ENC_UTIL", "9");
    /* MEM_COPY_UTIL is NVML's memory-controller busy time: the GPU
     * outside MIG mode (37.4 %, a whole number in DCGM), never GPM's DRAM
     * bandwidth of a MIG instance */
    has_dcgm(page, DCGM_GPU1, "MEM_COPY_UTIL", "37");
    assert_null(strstr(page, "DCGM_FI_DEV_MEM_COPY_UTIL{gpu=\"0\""));
    /* no Xid yet, events watched: 0 on each GPU instance and the GPU
     * outside MIG mode, as dcgm-exporter writes it */
    has_dcgm(page, DCGM_GI("1"), "XID_ERRORS", "0");
    has_dcgm(page, DCGM_GI("2"), "XID_ERRORS", "0");
    has_dcgm(page, DCGM_GPU1, "XID_ERRORS", "0");
    free(page);
    /* where a device's own events are not watched (an unprivileged
     * monitor's instances, a GPU whose events could not be registered):
     * none, not 0 */
    s.devices[1].m[M_XID_ERRORS] = metric_none("not watched");
    s.devices[3].m[M_XID_ERRORS] = metric_none("not watched");
    page = render(&s, true);
    assert_null(strstr(page, "DCGM_FI_DEV_XID_ERRORS" DCGM_GI("1")));
    assert_null(strstr(page, "DCGM_FI_DEV_XID_ERRORS{gpu=\"1\""));
    has_dcgm(page, DCGM_GI("2"), "XID_ERRORS", "0");
    free(page);
    s.devices[1].m[M_XID_ERRORS] = s.devices[3].m[M_XID_ERRORS] = metric_direct(0);

    /* a value that is none is not written; NVLink needs both directions */
    s.devices[3].m[M_MEM_TEMP] = metric_none("NVML_ERROR_NOT_SUPPORTED");
    s.devices[3].m[M_NVLINK_RX] = metric_none("GPM off");
    page = render(&s, true);
    assert_null(strstr(page, "DCGM_FI_DEV_MEMORY_TEMP{gpu=\"1\""));
    assert_null(strstr(page, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{gpu=\"1\""));
    has_dcgm(page, DCGM_GI("1"), "MEMORY_TEMP", "71");
    free(page);
    free_snapshot(&s);
}

/* DCGM_FI_DEV_XID_ERRORS: the last Xid; on an instance of a MIG GPU its
 * own or its GPU's, whichever came later. */
static void test_dcgm_last_xid(void **state)
{
    (void)state;
    struct snapshot s;
    make_snapshot(&s);
    /* a whole-GPU Xid 79 on GPU 0 (what an unprivileged monitor sees) */
    add_event(&s, 0, 79);
    s.devices[0].m[M_XID_ERRORS] = metric_direct(1);
    s.devices[0].m[M_LAST_XID] = metric_direct(79);
    char *page = render(&s, true);
    has_line(page, "# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.");
    has_line(page, "# TYPE DCGM_FI_DEV_XID_ERRORS gauge");
    has_dcgm(page, DCGM_GI("1"), "XID_ERRORS", "79");
    has_dcgm(page, DCGM_GI("2"), "XID_ERRORS", "79");
    has_dcgm(page, DCGM_GPU1, "XID_ERRORS", "0");
    free(page);
    /* an instance whose own events do not reach the monitor carries its
     * GPU's Xid, the one seen that hit it */
    s.devices[1].m[M_XID_ERRORS] = metric_none("unprivileged");
    page = render(&s, true);
    has_dcgm(page, DCGM_GI("1"), "XID_ERRORS", "79");
    free(page);
    s.devices[1].m[M_XID_ERRORS] = metric_direct(0);
    /* then Xid 94 on GI 2: GI 2's is the newer; GI 1 keeps the GPU's */
    add_event(&s, 2, 94);
    s.devices[2].m[M_XID_ERRORS] = metric_direct(1);
    s.devices[2].m[M_LAST_XID] = metric_direct(94);
    page = render(&s, true);
    has_dcgm(page, DCGM_GI("1"), "XID_ERRORS", "79");
    has_dcgm(page, DCGM_GI("2"), "XID_ERRORS", "94");
    free(page);
    /* then the GPU again (Xid 48): newer than GI 2's */
    add_event(&s, 0, 48);
    s.devices[0].m[M_XID_ERRORS] = metric_direct(2);
    s.devices[0].m[M_LAST_XID] = metric_direct(48);
    page = render(&s, true);
    has_dcgm(page, DCGM_GI("2"), "XID_ERRORS", "48");
    free(page);
    /* the list no longer holds either: the instance's own */
    s.nevents = 0;
    page = render(&s, true);
    has_dcgm(page, DCGM_GI("2"), "XID_ERRORS", "94");
    has_dcgm(page, DCGM_GI("1"), "XID_ERRORS", "48");
    free(page);
    /* the GPU outside MIG mode: its own */
    s.devices[3].m[M_LAST_XID] = metric_direct(13);
    page = render(&s, true);
    has_dcgm(page, DCGM_GPU1, "XID_ERRORS", "13");
    free(page);
    free_snapshot(&s);
}

/* ---- JSON ---------------------------------------------------------------- */

static char *json_of(const struct snapshot *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    json_write_snapshot(f, s, false);
    fclose(f);
    return buf;
}

/* The device object at position pos (its text up to the next device). */
static char *device_json(const char *doc, int pos)
{
    const char *p = strstr(doc, "\"devices\":[");
    assert_non_null(p);
    for (int i = 0; i <= pos; i++) {
        p = strstr(p + 1, "{\"kind\":");
        assert_non_null(p);
    }
    const char *end = strstr(p + 1, "{\"kind\":");
    if (!end)
        end = strstr(p, "\"events_total\"");
    return strndup(p, (size_t)(end - p));
}

static void test_json_health(void **state)
{
    (void)state;
    struct snapshot s;
    make_snapshot(&s);
    char *doc = json_of(&s);
    char *d = device_json(doc, 3);
    /* before health_evaluate: unknown, no rules */
    assert_non_null(strstr(d, "\"health\":{\"verdict\":\"unknown\",\"rules\":[]}"));
    free(d);
    free(doc);

    add_event(&s, 2, 94);
    s.devices[2].m[M_XID_ERRORS] = metric_direct(1);
    s.devices[2].m[M_LAST_XID] = metric_direct(94);
    s.devices[0].m[M_REMAP_PENDING] = metric_direct(0);
    s.devices[1].m[M_REMAP_PENDING] = s.devices[2].m[M_REMAP_PENDING] = metric_direct(0);
    s.devices[0].m[M_TEMP] = s.devices[2].m[M_TEMP] = metric_direct(90);
    s.devices[0].m[M_TEMP_SLOWDOWN] = s.devices[2].m[M_TEMP_SLOWDOWN] = metric_direct(87);
    health_evaluate(&s);
    doc = json_of(&s);
    d = device_json(doc, 2);
    /* two rules, in rule order, the worse level the verdict */
    assert_non_null(strstr(
        d, "\"health\":{\"verdict\":\"warning\",\"rules\":["
           "{\"name\":\"xid-contained-ecc\",\"level\":\"warning\",\"action\":\"restart the jobs "
           "on the affected MIG instance (contained ECC error)\"},"
           "{\"name\":\"at-slowdown-temperature\",\"level\":\"warning\",\"action\":\"the GPU is "
           "at its slowdown temperature: its clocks are cut; check the cooling\"}]}"));
    /* the health object follows the device's state members */
    assert_non_null(strstr(d, "\"stall\":null,\"health\":{"));
    free(d);
    d = device_json(doc, 3);
    assert_non_null(strstr(d, "\"health\":{\"verdict\":\"ok\",\"rules\":[]}"));
    free(d);
    /* a row remap waiting for a reset: action */
    free(doc);
    s.devices[3].m[M_REMAP_PENDING] = metric_direct(1);
    health_evaluate(&s);
    doc = json_of(&s);
    d = device_json(doc, 3);
    assert_non_null(strstr(d, "\"health\":{\"verdict\":\"action\",\"rules\":[{\"name\":"
                              "\"row-remap-pending\",\"level\":\"action\",\"action\":"));
    /* the health counters are metrics like the others */
    assert_non_null(strstr(d, "\"row_remap_pending\":{\"value\":1,\"source\":\"direct\"}"));
    assert_non_null(strstr(d, "\"memory_temp_c\":{\"value\":52,\"source\":\"direct\"}"));
    free(d);
    free(doc);
    free_snapshot(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prom_health_counters), cmocka_unit_test(test_prom_health_verdict),
        cmocka_unit_test(test_xid_counts),
        cmocka_unit_test(test_xid_watch_text),           cmocka_unit_test(test_dcgm_health_names),
        cmocka_unit_test(test_dcgm_last_xid),        cmocka_unit_test(test_json_health),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
