/*
 * NVML health events: the Xid catalog (src/backend/events/xid.c), the simulated
 * event API (sim/api_events.c) called as the helper calls it, and the
 * client (src/backend/events/events.c) driving the real helper against the
 * simulator, then putting what it got into a snapshot (events_apply).
 * Needs MIGMON_BIN, MIGMON_SIM_LIB and MIGMON_SRC (set by `make unit`).
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "backend/events/events.h"
#include "backend/events/xid.h"
#include "backend/nvml/nvml_api.h"
#include "core/clock.h"
#include "core/snapshot.h"
#include "sim_env.h"

static void test_catalog(void **state)
{
    (void)state;
    assert_string_equal(xid_meaning(79), "GPU has fallen off the bus");
    assert_string_equal(xid_action(79), "drain the node and reset or reseat the GPU");
    assert_non_null(strstr(xid_meaning(94), "contained ECC error"));
    assert_string_equal(xid_action(94), "restart the jobs on the affected MIG instance");
    assert_non_null(strstr(xid_meaning(95), "uncontained ECC error"));
    assert_string_equal(xid_action(95), "reset the GPU");
    assert_non_null(strstr(xid_meaning(48), "double-bit ECC"));
    assert_non_null(strstr(xid_meaning(63), "remapping"));
    assert_non_null(strstr(xid_meaning(64), "remapping"));
    static const unsigned app[] = {13, 31, 43};
    for (size_t i = 0; i < 3; i++)
        assert_non_null(strstr(xid_action(app[i]), "check the application"));
    static const unsigned listed[] = {13, 31, 32, 43, 45, 48, 61, 62, 63, 64, 68,
                                      69, 74, 79, 92, 94, 95, 109, 119, 120, 140, 999};
    for (size_t i = 0; i < sizeof(listed) / sizeof(listed[0]); i++) {
        assert_true(xid_known(listed[i]));
        assert_true(strlen(xid_meaning(listed[i])) > 5);
        assert_true(strlen(xid_action(listed[i])) > 5);
    }
    assert_false(xid_known(12345));
    assert_non_null(strstr(xid_meaning(12345), "not in"));
    assert_non_null(strstr(xid_action(12345), "Xid catalog"));
    assert_non_null(strstr(xid_action(XID_UNKNOWN), "kernel log"));
}

static void test_type_names(void **state)
{
    (void)state;
    assert_string_equal(xid_event_type_name(NVML_EVENT_TYPE_XID), "xid");
    assert_string_equal(xid_event_type_name(NVML_EVENT_TYPE_SINGLE_BIT_ECC), "sbe");
    assert_string_equal(xid_event_type_name(NVML_EVENT_TYPE_DOUBLE_BIT_ECC), "dbe");
    assert_string_equal(xid_event_type_name(NVML_EVENT_TYPE_PSTATE), "pstate");
    assert_string_equal(xid_event_type_name(0x8000), "other");
}

/* ---- the simulated API ---- */

typedef nvmlReturn_t (*init_fn)(void);
typedef nvmlReturn_t (*handle_fn)(unsigned, nvmlDevice_t *);
typedef nvmlReturn_t (*mig_handle_fn)(nvmlDevice_t, unsigned, nvmlDevice_t *);

struct simlib {
    void *dl;
    init_fn init, shutdown;
    handle_fn handle;
    mig_handle_fn mig_handle;
    nvml_fn_dev_ull supported;
    nvml_fn_event_set_create create;
    nvml_fn_event_set_free free_set;
    nvml_fn_dev_register_events reg;
    nvml_fn_event_set_wait wait;
};

static void *must(void *dl, const char *name)
{
    void *p = dlsym(dl, name);
    if (!p)
        fail_msg("symbol %s missing", name);
    return p;
}

static void sim_open(struct simlib *l, const char *scenario, const char *simtime)
{
    use_scenario(scenario, simtime);
    const char *path = getenv("MIGMON_SIM_LIB");
    assert_non_null(path);
    l->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(l->dl);
    *(void **)&l->init = must(l->dl, "nvmlInit_v2");
    *(void **)&l->shutdown = must(l->dl, "nvmlShutdown");
    *(void **)&l->handle = must(l->dl, "nvmlDeviceGetHandleByIndex_v2");
    *(void **)&l->mig_handle = must(l->dl, "nvmlDeviceGetMigDeviceHandleByIndex");
    *(void **)&l->supported = must(l->dl, "nvmlDeviceGetSupportedEventTypes");
    *(void **)&l->create = must(l->dl, "nvmlEventSetCreate");
    *(void **)&l->free_set = must(l->dl, "nvmlEventSetFree");
    *(void **)&l->reg = must(l->dl, "nvmlDeviceRegisterEvents");
    *(void **)&l->wait = must(l->dl, "nvmlEventSetWait_v2");
    assert_int_equal(l->init(), NVML_SUCCESS);
}

static void sim_close(struct simlib *l)
{
    l->shutdown();
    dlclose(l->dl);
}

static void test_sim_delivery(void **state)
{
    (void)state;
    struct simlib l;
    sim_open(&l, "h200-mig.ini", "5");
    nvmlDevice_t gpu, mig;
    assert_int_equal(l.handle(0, &gpu), NVML_SUCCESS);
    unsigned long long types = 0;
    assert_int_equal(l.supported(gpu, &types), NVML_SUCCESS);
    assert_true(types & NVML_EVENT_TYPE_XID);
    assert_true(types & NVML_EVENT_TYPE_DOUBLE_BIT_ECC); /* ecc_mode = on */
    nvmlEventSet_t a, b;
    assert_int_equal(l.create(&a), NVML_SUCCESS);
    assert_int_equal(l.create(&b), NVML_SUCCESS);
    assert_int_equal(l.reg(gpu, NVML_EVENT_TYPE_XID, a), NVML_SUCCESS);
    assert_int_equal(l.reg(gpu, NVML_EVENT_TYPE_XID | NVML_EVENT_TYPE_SINGLE_BIT_ECC, b),
                     NVML_SUCCESS);
    assert_int_equal(l.mig_handle(gpu, 1, &mig), NVML_SUCCESS);
    assert_int_equal(l.reg(mig, NVML_EVENT_TYPE_XID, a), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(l.reg(gpu, 0x8000, a), NVML_ERROR_NOT_SUPPORTED);

    nvmlEventData_t d;
    for (int k = 0; k < 2; k++) { /* each set gets it, once */
        memset(&d, 0, sizeof(d));
        assert_int_equal(l.wait(k ? b : a, &d, 50), NVML_SUCCESS);
        assert_ptr_equal(d.device, gpu);
        assert_int_equal(d.eventType, NVML_EVENT_TYPE_XID);
        assert_int_equal(d.eventData, 94);
        assert_int_equal(d.gpuInstanceId, 5);
        assert_int_equal(d.computeInstanceId, 0);
    }
    uint64_t t0 = clock_mono_ns();
    assert_int_equal(l.wait(a, &d, 60), NVML_ERROR_TIMEOUT);
    uint64_t took = clock_mono_ns() - t0;
    assert_true(took >= 55000000ull && took < 1000000000ull);
    assert_int_equal(l.wait(a, NULL, 10), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(l.free_set(a), NVML_SUCCESS);
    assert_int_equal(l.free_set(a), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(l.free_set(b), NVML_SUCCESS);
    sim_close(&l);
}

/* Before its t the event is not due; an unprivileged caller gets a
 * whole-GPU event with no instance. */
static void test_sim_time_and_privilege(void **state)
{
    (void)state;
    struct simlib l;
    sim_open(&l, "dgx-a100-8x7.ini", "10");
    nvmlDevice_t g5;
    nvmlEventSet_t s;
    nvmlEventData_t d;
    assert_int_equal(l.handle(5, &g5), NVML_SUCCESS);
    assert_int_equal(l.create(&s), NVML_SUCCESS);
    assert_int_equal(l.reg(g5, NVML_EVENT_TYPE_XID, s), NVML_SUCCESS);
    assert_int_equal(l.wait(s, &d, 20), NVML_ERROR_TIMEOUT);
    l.free_set(s);
    sim_close(&l);

    sim_open(&l, "dgx-a100-8x7.ini", "20");
    assert_int_equal(l.handle(5, &g5), NVML_SUCCESS);
    assert_int_equal(l.create(&s), NVML_SUCCESS);
    assert_int_equal(l.reg(g5, NVML_EVENT_TYPE_XID, s), NVML_SUCCESS);
    assert_int_equal(l.wait(s, &d, 20), NVML_SUCCESS);
    assert_int_equal(d.eventData, 79);
    assert_int_equal(d.gpuInstanceId, NVML_EVENT_NO_INSTANCE);
    assert_int_equal(d.computeInstanceId, NVML_EVENT_NO_INSTANCE);
    l.free_set(s);
    sim_close(&l);
}

static void test_sim_no_api(void **state)
{
    (void)state;
    struct simlib l;
    sim_open(&l, "events-none.ini", "5");
    nvmlDevice_t gpu;
    nvmlEventSet_t s;
    unsigned long long types;
    assert_int_equal(l.handle(0, &gpu), NVML_SUCCESS);
    assert_int_equal(l.supported(gpu, &types), NVML_ERROR_FUNCTION_NOT_FOUND);
    assert_int_equal(l.create(&s), NVML_ERROR_FUNCTION_NOT_FOUND);
    sim_close(&l);
}

/* ---- the client, with the real helper ---- */

static struct events_client *client_for(const char *scenario, const char *simtime)
{
    use_scenario(scenario, simtime);
    struct events_client_opts o = {
        .exe = getenv("MIGMON_BIN"),
        .lib_path = getenv("MIGMON_SIM_LIB"),
        .t0_ns = clock_mono_ns(),
    };
    assert_non_null(o.exe);
    struct events_client *c = events_client_open(&o);
    assert_non_null(c);
    events_client_wait_state(c, 5000);
    return c;
}

static void snap_add(struct snapshot *s, enum device_kind kind, int mig, int gi, int ci)
{
    assert_int_equal(snapshot_reserve(s, s->ndevices + 1), 0);
    struct device *d = &s->devices[s->ndevices++];
    memset(d, 0, sizeof(*d));
    d->kind = kind;
    d->index = 0;
    d->mig_index = mig;
    d->parent_pos = kind == DEV_MIG ? 0 : -1;
    d->gi_id = gi;
    d->ci_id = ci;
    snprintf(kind == DEV_GPU ? d->uuid : d->parent_uuid, MIGMON_UUID_LEN, "%s",
             "GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8");
    if (kind == DEV_MIG)
        snprintf(d->uuid, sizeof(d->uuid), "MIG-%d", mig);
}

static void test_client_h200(void **state)
{
    (void)state;
    struct events_client *c = client_for("h200-mig.ini", "5");
    assert_null(events_client_why(c));
    assert_int_equal(events_client_total(c), 1);
    const struct events_item *e = events_client_recent(c, 0);
    assert_non_null(e);
    assert_null(events_client_recent(c, 1));
    assert_int_equal(e->xid, 94);
    assert_int_equal(e->gi_id, 5);
    assert_int_equal(e->ci_id, 0);
    assert_string_equal(e->gpu_uuid, "GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8");
    assert_true(e->elapsed_ns < 10000000000ull);

    struct snapshot s;
    memset(&s, 0, sizeof(s));
    snap_add(&s, DEV_GPU, -1, -1, -1);
    snap_add(&s, DEV_MIG, 0, 1, 0);
    snap_add(&s, DEV_MIG, 1, 5, 0);
    events_apply(c, &s);
    assert_int_equal(s.nevents, 1);
    assert_int_equal(s.events_total, 1);
    assert_null(s.events_why);
    assert_int_equal(s.events[0].device_pos, 2);
    assert_int_equal(s.devices[2].m[M_XID_ERRORS].src, MSRC_DIRECT);
    assert_true(s.devices[2].m[M_XID_ERRORS].value == 1);
    assert_true(s.devices[2].m[M_LAST_XID].value == 94);
    assert_int_equal(s.devices[2].nxids, 1); /* per code */
    assert_int_equal(s.devices[2].xids[0].xid, 94);
    assert_int_equal(s.devices[2].xids[0].count, 1);
    assert_int_equal(s.devices[0].nxids, 0);
    assert_true(s.devices[0].m[M_XID_ERRORS].value == 0);
    assert_int_equal(s.devices[0].m[M_LAST_XID].src, MSRC_NONE);
    assert_true(s.devices[1].m[M_XID_ERRORS].value == 0);
    events_client_close(c);
    snapshot_free(&s);
}

static void test_client_no_api(void **state)
{
    (void)state;
    struct events_client *c = client_for("events-none.ini", "5");
    assert_non_null(strstr(events_client_why(c), "no NVML event API"));
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    snap_add(&s, DEV_GPU, -1, -1, -1);
    events_apply(c, &s);
    assert_int_equal(s.nevents, 0);
    assert_int_equal(s.devices[0].m[M_XID_ERRORS].src, MSRC_NONE);
    assert_non_null(strstr(s.devices[0].m[M_XID_ERRORS].why, "event API"));
    events_client_close(c);
    snapshot_free(&s);
}

/* Which devices' events are watched: a GPU the helper registered; a MIG
 * instance's own only where they reach the monitor (the DGX is
 * unprivileged, the H200 privileged); a GPU the helper did not open, or
 * one with no UUID, not. */
static void test_client_watched(void **state)
{
    (void)state;
    static const char *const A100 = "GPU-0a1b2c3d-0000-4a5b-8c6d-7e8f90a1b2c3";
    struct events_client *c = client_for("dgx-a100-8x7.ini", "5");
    assert_null(events_client_why(c));
    assert_null(events_client_gpu_why(c, A100));
    assert_non_null(strstr(events_client_mig_why(c, A100), "reach only a privileged monitor"));
    assert_non_null(strstr(events_client_gpu_why(c, "GPU-elsewhere"), "could not open this GPU"));
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    snap_add(&s, DEV_GPU, -1, -1, -1);
    snprintf(s.devices[0].uuid, sizeof(s.devices[0].uuid), "%s", A100);
    snap_add(&s, DEV_MIG, 0, 1, 0);
    snprintf(s.devices[1].parent_uuid, sizeof(s.devices[1].parent_uuid), "%s", A100);
    snap_add(&s, DEV_GPU, -1, -1, -1); /* one that would not open */
    s.devices[2].uuid[0] = '\0';
    s.devices[2].uuid_why = s.devices[2].inaccessible = "NVML_ERROR_NO_PERMISSION";
    events_apply(c, &s);
    assert_int_equal(s.devices[0].m[M_XID_ERRORS].src, MSRC_DIRECT);
    assert_int_equal(s.devices[1].m[M_XID_ERRORS].src, MSRC_NONE);
    assert_non_null(strstr(s.devices[1].m[M_XID_ERRORS].why, "privileged"));
    assert_int_equal(s.devices[1].m[M_LAST_XID].src, MSRC_NONE);
    assert_string_equal(s.devices[1].m[M_LAST_XID].why, s.devices[1].m[M_XID_ERRORS].why);
    assert_int_equal(s.devices[2].m[M_XID_ERRORS].src, MSRC_NONE);
    assert_string_equal(s.devices[2].m[M_XID_ERRORS].why, "NVML_ERROR_NO_PERMISSION");
    events_client_close(c);
    snapshot_free(&s);

    c = client_for("h200-mig.ini", "1");
    assert_null(events_client_mig_why(c, "GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8"));
    events_client_close(c);
}

/* No helper binary: no events, and the reason says so. */
static void test_client_without_helper(void **state)
{
    (void)state;
    struct events_client_opts o = {0};
    struct events_client *c = events_client_open(&o);
    assert_non_null(c);
    assert_int_equal(events_client_helper_pid(c), -1);
    assert_non_null(strstr(events_client_why(c), "not started"));
    events_client_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalog),
        cmocka_unit_test(test_type_names),
        cmocka_unit_test(test_sim_delivery),
        cmocka_unit_test(test_sim_time_and_privilege),
        cmocka_unit_test(test_sim_no_api),
        cmocka_unit_test(test_client_h200),
        cmocka_unit_test(test_client_no_api),
        cmocka_unit_test(test_client_watched),
        cmocka_unit_test(test_client_without_helper),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
