/*
 * dcgm_helper.h — the DCGM helper's session (dcgm_session.c: the library,
 * the connection or embedded engine, the records it sends) for the helper
 * itself (dcgm_helper.c). Private to those two files; one process, one
 * thread.
 */
#ifndef MIGMON_DCGM_HELPER_H
#define MIGMON_DCGM_HELPER_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/dcgm/dcgm.h"
#include "backend/dcgm/dcgm_api.h"

/* How long a connect may take (DCGM's own timeout; the watchdog is the
 * backstop for one that ignores it). */
#define CONNECT_TIMEOUT_MS 1000
/* Retrying for a hostengine that is not there (yet): first after 5 s,
 * doubling to 60 s; heartbeats keep the watchdog quiet meanwhile. */
#define RETRY_FIRST_NS (5ull * 1000000000ull)
#define RETRY_MAX_NS (60ull * 1000000000ull)
/* Entities read per dcgmEntitiesGetLatestValues call: 8 x 12 values of
 * 4128 bytes each is 396 KB of buffer. */
#define READ_BATCH 8
#define MAX_ENTS (DCGM_MAX_NUM_DEVICES * 15)
/* The MIG layout is read again this often (a reconfiguration is rare; the
 * hierarchy is 73 KB). */
#define REWALK_NS (10ull * 1000000000ull)

struct dfns {
    dcgm_init_fn init;
    dcgm_shutdown_fn shutdown;
    dcgm_start_embedded_v2_fn start_embedded;
    dcgm_stop_embedded_fn stop_embedded;
    dcgm_connect_v2_fn connect;
    dcgm_disconnect_fn disconnect;
    dcgm_get_all_supported_devices_fn devices;
    dcgm_get_gpu_instance_hierarchy_fn hierarchy;
    dcgm_group_create_fn group_create;
    dcgm_group_destroy_fn group_destroy;
    dcgm_group_add_entity_fn group_add;
    dcgm_field_group_create_fn fg_create;
    dcgm_field_group_destroy_fn fg_destroy;
    dcgm_watch_fields_fn watch;
    dcgm_unwatch_fields_fn unwatch;
    dcgm_update_all_fields_fn update_all;
    dcgm_entities_get_latest_values_fn latest;
    dcgm_prof_get_supported_metric_groups_fn prof_groups;
};

struct hent {
    dcgmGroupEntityPair_t e;
    uint8_t scope;
    uint8_t nci;
    int gi_id, ci_id;
    char gpu_uuid[DCGM_UUID_LEN];
};

struct dh {
    void *dl;
    struct dfns f;
    enum dcgm_mode mode;
    const char *nvml; /* the monitor's NVML library, to ask about GPM */
    char addr[DCGM_WHERE_LEN];
    unsigned interval_ms;
    dcgmHandle_t h;
    bool connected, embedded;
    dcgmGpuGrp_t grp;
    dcgmFieldGrp_t fg;
    bool have_grp, have_fg, watching;
    uint32_t watched;
    int left_rc;
    unsigned short fields[DCGM_NMETRICS];
    int field_metric[DCGM_NMETRICS];
    unsigned nfields;
    struct hent ents[MAX_ENTS];
    unsigned nents, ngpus;
    struct dcgm_rec_state st; /* the last state sent */
    dcgmFieldValue_v2 *vals;  /* READ_BATCH * DCGM_NMETRICS */
};

void dcgmh_progress(enum dcgm_call call);
void dcgmh_heartbeat(bool have);
void dcgmh_send_state(struct dh *d, enum dcgm_state state, enum dcgm_call call, int rc, bool retry,
                      const char *detail);
void dcgmh_send_done(void);
/* dlopen libdcgm (path, else libdcgm.so.4, then .so.3) and its symbols: 0,
 * -1 not found, -2 a symbol missing (detail says which). */
int dcgmh_load(struct dh *d, const char *path, char *detail, size_t dlen);
/* Connect as the mode says: 0 connected; 1 not now (state sent, retry
 * later); -1 never (state sent). */
int dcgmh_connect(struct dh *d);
/* The watch, the field group and the group, as far as they were made. */
void dcgmh_unwatch(struct dh *d);
void dcgmh_disconnect(struct dh *d);

#endif
