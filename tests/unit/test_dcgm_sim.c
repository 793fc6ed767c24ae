/*
 * The simulated DCGM (sim/dcgm/, build/sim/libdcgm.so.4), exercised the way
 * a DCGM client uses it: dlopen, resolve by name, call with the structs of
 * backend/dcgm/dcgm_api.h. Needs MIGMON_SIM_DIR, MIGMON_SIM_LIB and MIGMON_SRC
 * (set by `make unit`).
 *
 * Each test sets MIGMON_SIM_SCENARIO / MIGMON_SIM_TIME and calls dcgmInit;
 * the teardown calls dcgmShutdown, which frees everything.
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* after the headers it needs */
#include <cmocka.h>

#include "dl_env.h"
#include "sim_env.h"

#include "../../sim/dcgm/dcgm_exports.h" /* prototypes, only for __typeof__ */
#include "../../sim/exports.h"

#define EPOCH_US 1700000000000000LL
#define MIB 1048576.0
#define EMBEDDED 0x7fffffff
#define NOT_SUPPORTED_FP64 (DCGM_FP64_BLANK + 2.0)
#define NOT_SUPPORTED_I64 (DCGM_INT64_BLANK + 2)

static void *lib;
static void *nvml;

/* D(dcgmFoo)(args): the loaded library's dcgmFoo with its real type. */
#define D(name) ((__typeof__(&name))sym_in(lib, #name))
#define N(name) ((__typeof__(&name))sym_in(nvml, #name))

static void *open_dcgm(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", env("MIGMON_SIM_DIR"), rel);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        fail_msg("dlopen %s: %s", path, dlerror());
    return h;
}

static void start(const char *file, const char *time)
{
    use_scenario(file, time);
    assert_int_equal(D(dcgmInit)(), DCGM_ST_OK);
}

static dcgmReturn_t try_connect(const char *addr, int unix_socket, dcgmHandle_t *h)
{
    dcgmConnectV2Params_v2 p = {.version = dcgmConnectV2Params_version2,
                                .addressIsUnixSocket = (unsigned)unix_socket};
    return D(dcgmConnect_v2)(addr, &p, h);
}

static dcgmHandle_t connect_he(void)
{
    dcgmHandle_t h = 0;
    assert_int_equal(try_connect("/tmp/nv-hostengine", 1, &h), DCGM_ST_OK);
    return h;
}

static dcgmHandle_t embedded(void)
{
    dcgmStartEmbeddedV2Params_v1 p = {.version = dcgmStartEmbeddedV2Params_version1,
                                      .opMode = DCGM_OPERATION_MODE_AUTO};
    assert_int_equal(D(dcgmStartEmbedded_v2)(&p), DCGM_ST_OK);
    assert_int_equal(p.dcgmHandle, EMBEDDED);
    return p.dcgmHandle;
}

static dcgmGpuGrp_t group_of(dcgmHandle_t h, int n, ...)
{
    dcgmGpuGrp_t g = 0;
    va_list ap;
    assert_int_equal(D(dcgmGroupCreate)(h, DCGM_GROUP_EMPTY, "grp", &g), DCGM_ST_OK);
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        int eg = va_arg(ap, int);
        unsigned id = va_arg(ap, unsigned);
        assert_int_equal(D(dcgmGroupAddEntity)(h, g, eg, id), DCGM_ST_OK);
    }
    va_end(ap);
    return g;
}

static dcgmFieldGrp_t fields_of(dcgmHandle_t h, const char *name, int n, const unsigned short *f)
{
    dcgmFieldGrp_t fg = 0;
    assert_int_equal(D(dcgmFieldGroupCreate)(h, n, f, name, &fg), DCGM_ST_OK);
    return fg;
}

/* One value of entity e, field f. */
static dcgmFieldValue_v2 read1(dcgmHandle_t h, int eg, unsigned id, unsigned short f,
                               unsigned flags)
{
    dcgmGroupEntityPair_t e = {eg, id};
    dcgmFieldValue_v2 v;
    memset(&v, 0xa5, sizeof(v));
    assert_int_equal(D(dcgmEntitiesGetLatestValues)(h, &e, 1, &f, 1, flags, &v), DCGM_ST_OK);
    assert_int_equal(v.version, dcgmFieldValue_version2);
    assert_int_equal(v.entityGroupId, eg);
    assert_int_equal(v.entityId, id);
    assert_int_equal(v.fieldId, f);
    return v;
}

static double wave(double b, double a, double p, double ph, double t)
{
    return b + a * sin(2 * M_PI * (t + ph) / p);
}

static int setup(void **state)
{
    (void)state;
    unsetenv("MIGMON_SIM_TIME");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    D(dcgmShutdown)();
    return 0;
}

/* ---- library ---- */

static void test_exports_and_uninitialized(void **state)
{
    static const char *const names[] = {"dcgmInit",
                                        "dcgmShutdown",
                                        "errorString",
                                        "dcgmStartEmbedded_v2",
                                        "dcgmStopEmbedded",
                                        "dcgmConnect_v2",
                                        "dcgmDisconnect",
                                        "dcgmGetAllSupportedDevices",
                                        "dcgmGetGpuInstanceHierarchy",
                                        "dcgmGroupCreate",
                                        "dcgmGroupDestroy",
                                        "dcgmGroupAddEntity",
                                        "dcgmFieldGroupCreate",
                                        "dcgmFieldGroupDestroy",
                                        "dcgmWatchFields",
                                        "dcgmUnwatchFields",
                                        "dcgmUpdateAllFields",
                                        "dcgmEntitiesGetLatestValues",
                                        "dcgmProfGetSupportedMetricGroups",
                                        "migmon_dcgm_sim_call_count"};
    void *v3 = open_dcgm("dcgm3/libdcgm.so.3");
    dcgmHandle_t h = 0;
    dcgmGpuGrp_t g;
    (void)state;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        assert_non_null(dlsym(lib, names[i]));
        assert_non_null(dlsym(v3, names[i]));
    }
    /* the simulator core inside is not exported */
    assert_null(dlsym(lib, "nvmlInit_v2"));
    assert_null(dlsym(lib, "sim_init"));
    assert_null(dlsym(lib, "migmon_sim_call_count"));
    dlclose(v3);

    use_scenario("dgx-a100-8x7.ini", "100");
    assert_int_equal(try_connect("/tmp/nv-hostengine", 1, &h), DCGM_ST_UNINITIALIZED);
    dcgmStartEmbeddedV2Params_v1 p = {.version = dcgmStartEmbeddedV2Params_version1,
                                      .opMode = DCGM_OPERATION_MODE_AUTO};
    assert_int_equal(D(dcgmStartEmbedded_v2)(&p), DCGM_ST_UNINITIALIZED);
    assert_int_equal(D(dcgmGroupCreate)(EMBEDDED, DCGM_GROUP_EMPTY, "x", &g),
                     DCGM_ST_UNINITIALIZED);
    assert_string_equal(D(errorString)(DCGM_ST_CONNECTION_NOT_VALID),
                        "Host engine connection not valid");
    unsigned long (*count)(const char *) =
        (unsigned long (*)(const char *))sym_in(lib, "migmon_dcgm_sim_call_count");
    assert_true(count("dcgmConnect_v2") >= 1);
}

static void test_connect(void **state)
{
    dcgmHandle_t h = 0;
    dcgmConnectV2Params_v2 bad = {.version = dcgmConnectV2Params_version2 + 1,
                                  .addressIsUnixSocket = 1};
    (void)state;
    start("dgx-a100-8x7.ini", "100");
    assert_int_equal(D(dcgmConnect_v2)("/tmp/nv-hostengine", &bad, &h), DCGM_ST_VER_MISMATCH);
    assert_int_equal(try_connect("/tmp/other-socket", 1, &h), DCGM_ST_CONNECTION_NOT_VALID);
    assert_int_equal(try_connect("/tmp/nv-hostengine", 0, &h), DCGM_ST_CONNECTION_NOT_VALID);
    assert_int_equal(try_connect("127.0.0.1", 0, &h), DCGM_ST_CONNECTION_NOT_VALID);
    assert_int_equal(try_connect("/tmp/nv-hostengine", 1, NULL), DCGM_ST_BADPARAM);
    h = connect_he();
    assert_int_not_equal(h, EMBEDDED);
    unsigned ids[DCGM_MAX_NUM_DEVICES];
    int n = 0;
    assert_int_equal(D(dcgmGetAllSupportedDevices)(h, ids, &n), DCGM_ST_OK);
    assert_int_equal(n, 8);
    assert_int_equal(ids[7], 7);
    assert_int_equal(D(dcgmDisconnect)(h), DCGM_ST_OK);
    assert_int_equal(D(dcgmGetAllSupportedDevices)(h, ids, &n), DCGM_ST_BADPARAM);
    assert_int_equal(D(dcgmShutdown)(), DCGM_ST_OK);

    start("dcgm-no-hostengine.ini", "0");
    assert_int_equal(try_connect("/tmp/nv-hostengine", 1, &h), DCGM_ST_CONNECTION_NOT_VALID);
    assert_int_equal(try_connect("localhost", 0, &h), DCGM_ST_CONNECTION_NOT_VALID);
    (void)embedded();
}

/* A tcp host engine, from a scenario written here. */
static void test_connect_tcp(void **state)
{
    char path[] = "/tmp/test_dcgm_sim_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    dcgmHandle_t h = 0;
    (void)state;
    fputs("[system]\ndriver_version = 550.144.03\n[gpu.0]\nname = NVIDIA "
          "A100-SXM4-80GB\n"
          "memory_total_mib = 81920\n[dcgm]\nhostengine = tcp:10.0.0.7\n",
          f);
    fclose(f);
    setenv("MIGMON_SIM_SCENARIO", path, 1);
    assert_int_equal(D(dcgmInit)(), DCGM_ST_OK);
    assert_int_equal(try_connect("10.0.0.7:5556", 0, &h), DCGM_ST_CONNECTION_NOT_VALID);
    assert_int_equal(try_connect("10.0.0.7", 1, &h), DCGM_ST_CONNECTION_NOT_VALID);
    assert_int_equal(try_connect("10.0.0.7:5555", 0, &h), DCGM_ST_OK);
    assert_int_equal(try_connect("10.0.0.7", 0, &h), DCGM_ST_OK);
    unlink(path);
}

static void test_embedded(void **state)
{
    dcgmStartEmbeddedV2Params_v1 p = {.version = dcgmStartEmbeddedV2Params_version1 + 1,
                                      .opMode = DCGM_OPERATION_MODE_AUTO};
    (void)state;
    start("dgx-a100-8x7.ini", "100");
    assert_int_equal(D(dcgmStartEmbedded_v2)(&p), DCGM_ST_VER_MISMATCH);
    dcgmHandle_t h = embedded();
    assert_int_equal(embedded(), h); /* reused */
    assert_int_equal(D(dcgmStopEmbedded)(h), DCGM_ST_OK);
    assert_int_equal(D(dcgmStopEmbedded)(h), DCGM_ST_UNINITIALIZED);
    assert_int_equal(D(dcgmShutdown)(), DCGM_ST_OK);
    /* no usable scenario: the engine's NVML cannot load */
    setenv("MIGMON_SIM_SCENARIO", "/nonexistent.ini", 1);
    assert_int_equal(D(dcgmInit)(), DCGM_ST_OK);
    p.version = dcgmStartEmbeddedV2Params_version1;
    assert_int_equal(D(dcgmStartEmbedded_v2)(&p), DCGM_ST_INIT_ERROR);
}

/* ---- MIG hierarchy ---- */

static void test_hierarchy_dgx(void **state)
{
    static dcgmMigHierarchy_v2 hi;
    int gi_rows = 0, ci_rows = 0;
    (void)state;
    start("dgx-a100-8x7.ini", "100");
    dcgmHandle_t h = connect_he();
    hi.version = dcgmMigHierarchy_version2 + 1;
    assert_int_equal(D(dcgmGetGpuInstanceHierarchy)(h, &hi), DCGM_ST_VER_MISMATCH);
    hi.version = dcgmMigHierarchy_version2;
    assert_int_equal(D(dcgmGetGpuInstanceHierarchy)(h, &hi), DCGM_ST_OK);
    assert_int_equal(hi.count, 112);
    for (unsigned i = 0; i < hi.count; i++) {
        const dcgmMigHierarchyInfo_v2 *r = &hi.entityList[i];
        char uuid[64];
        unsigned gpu = r->info.nvmlGpuIndex;
        snprintf(uuid, sizeof(uuid), "GPU-0a1b2c3d-%u%u%u%u-4a5b-8c6d-7e8f90a1b2c3", gpu, gpu, gpu,
                 gpu);
        assert_string_equal(r->info.gpuUuid, uuid); /* the parent GPU's */
        assert_int_equal(r->info.nvmlMigProfileId,
                         r->entity.entityGroupId == DCGM_FE_GPU_I ? 19 : 0);
        assert_int_equal(r->info.nvmlProfileSlices, 1);
        if (r->entity.entityGroupId == DCGM_FE_GPU_I) {
            unsigned local = (unsigned)gi_rows % 7;
            assert_int_equal(r->entity.entityId, gpu * 8 + local);
            assert_int_equal(r->parent.entityGroupId, DCGM_FE_GPU);
            assert_int_equal(r->parent.entityId, gpu);
            assert_int_equal(r->info.nvmlInstanceId, 7 + local);
            assert_int_equal(r->info.nvmlComputeInstanceId, 0xffffffffu);
            assert_int_equal(gpu, (unsigned)gi_rows / 7);
            gi_rows++;
        } else {
            const dcgmMigHierarchyInfo_v2 *gi = &hi.entityList[i - 1];
            assert_int_equal(r->entity.entityGroupId, DCGM_FE_GPU_CI);
            assert_int_equal(gi->entity.entityGroupId, DCGM_FE_GPU_I); /* right after its GI */
            assert_int_equal(r->parent.entityGroupId, DCGM_FE_GPU_I);
            assert_int_equal(r->parent.entityId, gi->entity.entityId);
            assert_int_equal(r->entity.entityId, gi->entity.entityId);
            assert_int_equal(r->info.nvmlInstanceId, gi->info.nvmlInstanceId);
            assert_int_equal(r->info.nvmlComputeInstanceId, 0);
            ci_rows++;
        }
    }
    assert_int_equal(gi_rows, 56);
    assert_int_equal(ci_rows, 56);
}

/* GIs of several slices, and a GPU with MIG off, which adds no rows. */
static void test_hierarchy_slices(void **state)
{
    static dcgmMigHierarchy_v2 hi;
    (void)state;
    start("dcgm-multi-pass.ini", "0");
    dcgmHandle_t h = connect_he();
    hi.version = dcgmMigHierarchy_version2;
    assert_int_equal(D(dcgmGetGpuInstanceHierarchy)(h, &hi), DCGM_ST_OK);
    /* slots 0, 1, 3: 3g GI 1, 2g GI 5, 1g GI 13, each with one CI */
    assert_int_equal(hi.count, 6);
    assert_int_equal(hi.entityList[0].info.nvmlInstanceId, 1);
    assert_int_equal(hi.entityList[0].info.nvmlMigProfileId, 9);
    assert_int_equal(hi.entityList[0].info.nvmlProfileSlices, 3);
    assert_int_equal(hi.entityList[1].info.nvmlMigProfileId, 2); /* CI of 3 slices */
    assert_int_equal(hi.entityList[4].entity.entityId, 2);
    assert_int_equal(hi.entityList[4].info.nvmlInstanceId, 13);
    assert_int_equal(hi.entityList[5].entity.entityId, 2); /* slot 3 is the third CI */
    D(dcgmShutdown)();

    start("a100-sxm4-80gb.ini", "0");
    dcgmHandle_t e = embedded();
    assert_int_equal(D(dcgmGetGpuInstanceHierarchy)(e, &hi), DCGM_ST_OK);
    assert_int_equal(hi.count, 0);
}

/* ---- watches and values ---- */

static void test_watch_values(void **state)
{
    static const unsigned short f[] = {DCGM_FI_PROF_GR_ENGINE_ACTIVE, DCGM_FI_PROF_DRAM_ACTIVE,
                                       DCGM_FI_PROF_PCIE_TX_BYTES, DCGM_FI_DEV_UUID};
    const double t = 100;
    dcgmFieldValue_v2 v;
    (void)state;
    start("dgx-a100-8x7.ini", "100");
    dcgmHandle_t h = connect_he();
    /* GPU 0, its first GI (entity 0, GI id 7, slot 0) and that GI's CI */
    dcgmGpuGrp_t g = group_of(h, 3, DCGM_FE_GPU, 0u, DCGM_FE_GPU_I, 0u, DCGM_FE_GPU_CI, 0u);
    dcgmFieldGrp_t fg = fields_of(h, "activity", 4, f);

    v = read1(h, DCGM_FE_GPU_I, 0, DCGM_FI_PROF_GR_ENGINE_ACTIVE, 0);
    assert_int_equal(v.status, DCGM_ST_NOT_WATCHED);
    assert_true(v.value.dbl >= DCGM_FP64_BLANK);
    v = read1(h, DCGM_FE_GPU, 3, DCGM_FI_DEV_UUID, DCGM_FV_FLAG_LIVE_DATA);
    assert_int_equal(v.status, DCGM_ST_OK);
    assert_int_equal(v.fieldType, DCGM_FT_STRING);
    assert_string_equal(v.value.str, "GPU-0a1b2c3d-3333-4a5b-8c6d-7e8f90a1b2c3");

    assert_int_equal(D(dcgmWatchFields)(h, g, fg, 1000000, 3600.0, 0), DCGM_ST_OK);
    v = read1(h, DCGM_FE_GPU_I, 0, DCGM_FI_PROF_GR_ENGINE_ACTIVE, 0);
    assert_int_equal(v.status, DCGM_ST_NO_DATA); /* watched, no update cycle yet */
    assert_true(v.value.dbl == DCGM_FP64_BLANK);
    v = read1(h, DCGM_FE_GPU, 0, DCGM_FI_PROF_PCIE_TX_BYTES, 0);
    assert_int_equal(v.status, DCGM_ST_NO_DATA);
    assert_true(v.value.i64 == DCGM_INT64_BLANK);

    assert_int_equal(D(dcgmUpdateAllFields)(h, 1), DCGM_ST_OK);
    double slot0 = wave(85, 8, 60, 0, t), other = wave(45, 20, 90, 0, t);
    v = read1(h, DCGM_FE_GPU_I, 0, DCGM_FI_PROF_GR_ENGINE_ACTIVE, 0);
    assert_int_equal(v.status, DCGM_ST_OK);
    assert_int_equal(v.fieldType, DCGM_FT_DOUBLE);
    assert_true(fabs(v.value.dbl - slot0 / 100) < 1e-12);
    assert_int_equal(v.ts, EPOCH_US + 100000000LL);
    v = read1(h, DCGM_FE_GPU_CI, 0, DCGM_FI_PROF_GR_ENGINE_ACTIVE, 0);
    assert_true(fabs(v.value.dbl - slot0 / 100) < 1e-12); /* the GI's only CI */
    v = read1(h, DCGM_FE_GPU, 0, DCGM_FI_PROF_GR_ENGINE_ACTIVE, 0);
    assert_true(fabs(v.value.dbl - (slot0 + 6 * other) / 7 / 100) < 1e-12);
    v = read1(h, DCGM_FE_GPU_I, 0, DCGM_FI_PROF_DRAM_ACTIVE, 0);
    assert_true(fabs(v.value.dbl - wave(30, 12, 90, 0, t) / 100) < 1e-12);
    v = read1(h, DCGM_FE_GPU, 0, DCGM_FI_PROF_PCIE_TX_BYTES, 0);
    assert_int_equal(v.status, DCGM_ST_OK);
    assert_int_equal(v.fieldType, DCGM_FT_INT64);
    assert_int_equal(v.value.i64, llround(wave(900, 300, 60, 0, t) * MIB));
    v = read1(h, DCGM_FE_GPU_I, 0, DCGM_FI_PROF_PCIE_TX_BYTES, 0);
    assert_int_equal(v.status, DCGM_ST_NOT_SUPPORTED); /* PCIe is per GPU */
    assert_int_equal(v.value.i64, NOT_SUPPORTED_I64);
    v = read1(h, DCGM_FE_GPU, 0, DCGM_FI_DEV_UUID, 0);
    assert_string_equal(v.value.str, "GPU-0a1b2c3d-0000-4a5b-8c6d-7e8f90a1b2c3");
    v = read1(h, DCGM_FE_GPU_I, 0, DCGM_FI_PROF_SM_ACTIVE, 0);
    assert_int_equal(v.status, DCGM_ST_NOT_WATCHED);

    /* several entities x fields in one call, entity-major */
    dcgmGroupEntityPair_t ents[2] = {{DCGM_FE_GPU_I, 0}, {DCGM_FE_GPU_I, 62}};
    unsigned short ff[2] = {DCGM_FI_PROF_GR_ENGINE_ACTIVE, DCGM_FI_PROF_DRAM_ACTIVE};
    dcgmFieldValue_v2 vals[4];
    assert_int_equal(D(dcgmEntitiesGetLatestValues)(h, ents, 2, ff, 2, 0, vals), DCGM_ST_OK);
    assert_int_equal(vals[1].fieldId, DCGM_FI_PROF_DRAM_ACTIVE);
    assert_int_equal(vals[2].entityId, 62);
    assert_int_equal(vals[2].status, DCGM_ST_NOT_WATCHED); /* GPU 7's last GI: not in the group */
    ents[1].entityId = 7;                                  /* GPU 0 has GIs 0..6 only */
    assert_int_equal(D(dcgmEntitiesGetLatestValues)(h, ents, 2, ff, 2, 0, vals), DCGM_ST_OK);
    assert_int_equal(vals[3].status, DCGM_ST_INSTANCE_NOT_FOUND);

    assert_int_equal(D(dcgmUnwatchFields)(h, g, fg), DCGM_ST_OK);
    v = read1(h, DCGM_FE_GPU_I, 0, DCGM_FI_PROF_GR_ENGINE_ACTIVE, 0);
    assert_int_equal(v.status, DCGM_ST_NOT_WATCHED);
    assert_int_equal(D(dcgmFieldGroupDestroy)(h, fg), DCGM_ST_OK);
    assert_int_equal(D(dcgmGroupDestroy)(h, g), DCGM_ST_OK);
    assert_int_equal(D(dcgmGroupDestroy)(h, g), DCGM_ST_NOT_CONFIGURED);
}

/* AUTO mode on the step clock: the first sample comes one updateFreq after
 * the watch and is the mean over that second. */
static void test_auto_update_mean(void **state)
{
    static const unsigned short f[] = {DCGM_FI_PROF_GR_ENGINE_ACTIVE};
    dcgmFieldValue_v2 v;
    (void)state;
    start("dgx-a100-8x7.ini", "0+1");
    dcgmHandle_t h = connect_he();
    dcgmGpuGrp_t g = group_of(h, 1, DCGM_FE_GPU_I, 0u);
    assert_int_equal(D(dcgmWatchFields)(h, g, fields_of(h, "f", 1, f), 1000000, 3600.0, 0),
                     DCGM_ST_OK);
    v = read1(h, DCGM_FE_GPU_I, 0, f[0], 0); /* t = 0 */
    assert_int_equal(v.status, DCGM_ST_NO_DATA);
    v = read1(h, DCGM_FE_GPU_I, 0, f[0], 0); /* t = 1 */
    assert_int_equal(v.status, DCGM_ST_OK);
    /* mean of 85 + 8 sin(2πt/60) over [0, 1] */
    double mean = 85 + 8 * 60 / (2 * M_PI) * (1 - cos(2 * M_PI / 60));
    assert_true(fabs(v.value.dbl - mean / 100) < 1e-12);
    assert_int_equal(v.ts, EPOCH_US + 1000000LL);
}

/* The same activity NVML's GPM would give, and NVML itself still answers
 * GPM NOT_SUPPORTED on this Ampere node whatever the gpm_* keys say. */
static void test_nvml_gpm_still_unsupported_on_ampere(void **state)
{
    nvmlDevice_t d;
    nvmlGpmSupport_t s = {.version = NVML_GPM_SUPPORT_VERSION};
    nvmlGpmSample_t sm = NULL;
    (void)state;
    use_scenario("dgx-a100-8x7.ini", "100");
    assert_int_equal(N(nvmlInit_v2)(), NVML_SUCCESS);
    assert_int_equal(N(nvmlDeviceGetHandleByIndex_v2)(0, &d), NVML_SUCCESS);
    assert_int_equal(N(nvmlGpmQueryDeviceSupport)(d, &s), NVML_SUCCESS);
    assert_int_equal(s.isSupportedDevice, 0);
    assert_int_equal(N(nvmlGpmSampleAlloc)(&sm), NVML_SUCCESS);
    assert_int_equal(N(nvmlGpmSampleGet)(d, sm), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(N(nvmlGpmMigSampleGet)(d, 7, sm), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(N(nvmlGpmSampleFree)(sm), NVML_SUCCESS);
    assert_int_equal(N(nvmlShutdown)(), NVML_SUCCESS);
}

static void test_group_limits(void **state)
{
    unsigned short many[129];
    dcgmFieldGrp_t fg;
    dcgmGpuGrp_t g;
    char name[32];
    (void)state;
    for (int i = 0; i < 129; i++)
        many[i] = (unsigned short)(1001 + i % 12);
    start("dgx-a100-8x7.ini", "100");
    dcgmHandle_t h = connect_he();
    assert_int_equal(D(dcgmFieldGroupCreate)(h, 129, many, "big", &fg), DCGM_ST_BADPARAM);
    assert_int_equal(D(dcgmFieldGroupCreate)(h, 128, many, "big", &fg), DCGM_ST_OK);
    assert_int_equal(D(dcgmFieldGroupCreate)(h, 1, many, "big", &fg),
                     -26 /* DCGM_ST_DUPLICATE_KEY */);
    for (int i = 1; i < 64; i++) {
        snprintf(name, sizeof(name), "fg%d", i);
        assert_int_equal(D(dcgmFieldGroupCreate)(h, 1, many, name, &fg), DCGM_ST_OK);
    }
    assert_int_equal(D(dcgmFieldGroupCreate)(h, 1, many, "one-too-many", &fg), DCGM_ST_MAX_LIMIT);
    assert_int_equal(D(dcgmGroupCreate)(h, DCGM_GROUP_EMPTY, "g", &g), DCGM_ST_OK);
    assert_int_equal(D(dcgmGroupAddEntity)(h, g, DCGM_FE_GPU, 8), DCGM_ST_BADPARAM);
    assert_int_equal(D(dcgmGroupAddEntity)(h, g, DCGM_FE_GPU_I, 7), DCGM_ST_BADPARAM);
    assert_int_equal(D(dcgmGroupAddEntity)(h, g, DCGM_FE_SWITCH, 0), DCGM_ST_BADPARAM);
    assert_int_equal(D(dcgmGroupAddEntity)(h, g, DCGM_FE_GPU_CI, 62), DCGM_ST_OK);
    assert_int_equal(D(dcgmGroupAddEntity)(h, g, DCGM_FE_GPU_CI, 62), DCGM_ST_BADPARAM);
    assert_int_equal(D(dcgmGroupAddEntity)(h, g + 100, DCGM_FE_GPU, 0), DCGM_ST_NOT_CONFIGURED);
}

/* ---- faults ---- */

static void test_requires_root(void **state)
{
    static dcgmMigHierarchy_v2 hi;
    static const unsigned short prof[] = {DCGM_FI_PROF_GR_ENGINE_ACTIVE};
    static const unsigned short uuid[] = {DCGM_FI_DEV_UUID};
    (void)state;
    start("dcgm-requires-root.ini", "0");
    dcgmHandle_t e = embedded();
    hi.version = dcgmMigHierarchy_version2;
    assert_int_equal(D(dcgmGetGpuInstanceHierarchy)(e, &hi), DCGM_ST_REQUIRES_ROOT);
    dcgmGpuGrp_t g = group_of(e, 1, DCGM_FE_GPU, 0u);
    assert_int_equal(D(dcgmGroupAddEntity)(e, g, DCGM_FE_GPU_I, 0), DCGM_ST_BADPARAM);
    assert_int_equal(D(dcgmWatchFields)(e, g, fields_of(e, "p", 1, prof), 1000000, 60, 0),
                     DCGM_ST_REQUIRES_ROOT);
    assert_int_equal(D(dcgmWatchFields)(e, g, fields_of(e, "u", 1, uuid), 1000000, 60, 0),
                     DCGM_ST_OK);
    /* the node's nv-hostengine runs as root */
    dcgmHandle_t h = connect_he();
    assert_int_equal(D(dcgmGetGpuInstanceHierarchy)(h, &hi), DCGM_ST_OK);
    assert_int_equal(hi.count, 6);
}

/* What geteuid() != 0 gets from an embedded engine on a MIG node. */
static void test_not_root_embedded(void **state)
{
    pid_t pid;
    int st;
    (void)state;
    if (geteuid() == 0 && (pid = fork()) == 0) {
        static dcgmMigHierarchy_v2 hi;
        use_scenario("dgx-a100-8x7.ini", "0");
        /* the user the test becomes may not read the source tree (a CI
         * checkout under /root): a copy it can read */
        char copy[64], cmd[4200];
        snprintf(copy, sizeof(copy), "/tmp/migmon-dcgm-nonroot-%d.ini", (int)getpid());
        snprintf(cmd, sizeof(cmd), "cp '%s' %s && chmod 644 %s", getenv("MIGMON_SIM_SCENARIO"),
                 copy, copy);
        if (system(cmd) != 0)
            _exit(5);
        setenv("MIGMON_SIM_SCENARIO", copy, 1);
        if (setresuid(65534, 65534, 65534) != 0)
            _exit(2);
        D(dcgmInit)();
        dcgmStartEmbeddedV2Params_v1 p = {.version = dcgmStartEmbeddedV2Params_version1,
                                          .opMode = DCGM_OPERATION_MODE_AUTO};
        if (D(dcgmStartEmbedded_v2)(&p) != DCGM_ST_OK)
            _exit(3);
        hi.version = dcgmMigHierarchy_version2;
        _exit(D(dcgmGetGpuInstanceHierarchy)(p.dcgmHandle, &hi) == DCGM_ST_REQUIRES_ROOT ? 0 : 4);
    }
    if (geteuid() != 0)
        skip();
    assert_true(waitpid(pid, &st, 0) == pid);
    char copy[64];
    snprintf(copy, sizeof(copy), "/tmp/migmon-dcgm-nonroot-%d.ini", (int)pid);
    unlink(copy);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_profiling_held_and_module(void **state)
{
    static const unsigned short prof[] = {DCGM_FI_PROF_SM_ACTIVE};
    dcgmProfGetMetricGroups_v3 mg = {.version = dcgmProfGetMetricGroups_version3};
    (void)state;
    start("dcgm-profiling-held.ini", "0");
    dcgmHandle_t e = embedded();
    dcgmGpuGrp_t g = group_of(e, 1, DCGM_FE_GPU_I, 0u);
    assert_int_equal(D(dcgmWatchFields)(e, g, fields_of(e, "p", 1, prof), 1000000, 60, 0),
                     DCGM_ST_PROFILING_LIBRARY_ERROR);
    assert_int_equal(D(dcgmProfGetSupportedMetricGroups)(e, &mg), DCGM_ST_OK);
    assert_int_equal(mg.numMetricGroups, 1);
    assert_int_equal(mg.metricGroups[0].numFieldIds, 12);
    assert_int_equal(D(dcgmStopEmbedded)(e), DCGM_ST_OK);
    /* the profiling module on the deny list: not loaded */
    dcgmStartEmbeddedV2Params_v1 p = {.version = dcgmStartEmbeddedV2Params_version1,
                                      .opMode = DCGM_OPERATION_MODE_MANUAL,
                                      .denyListCount = 1,
                                      .denyList = {DCGM_MODULE_ID_PROFILING}};
    assert_int_equal(D(dcgmStartEmbedded_v2)(&p), DCGM_ST_OK);
    assert_int_equal(D(dcgmProfGetSupportedMetricGroups)(p.dcgmHandle, &mg),
                     DCGM_ST_MODULE_NOT_LOADED);
    g = group_of(p.dcgmHandle, 1, DCGM_FE_GPU, 0u);
    assert_int_equal(
        D(dcgmWatchFields)(p.dcgmHandle, g, fields_of(p.dcgmHandle, "p", 1, prof), 1000000, 60, 0),
        DCGM_ST_MODULE_NOT_LOADED);
    mg.version = dcgmProfGetMetricGroups_version3 - 1;
    assert_int_equal(D(dcgmProfGetSupportedMetricGroups)(p.dcgmHandle, &mg), DCGM_ST_VER_MISMATCH);
}

static void test_multi_pass(void **state)
{
    static const unsigned short a[] = {DCGM_FI_PROF_GR_ENGINE_ACTIVE, DCGM_FI_PROF_DRAM_ACTIVE};
    static const unsigned short b[] = {DCGM_FI_PROF_PIPE_TENSOR_ACTIVE};
    static const unsigned short ab[] = {DCGM_FI_PROF_GR_ENGINE_ACTIVE,
                                        DCGM_FI_PROF_PIPE_TENSOR_ACTIVE};
    dcgmProfGetMetricGroups_v3 mg = {.version = dcgmProfGetMetricGroups_version3};
    (void)state;
    start("dcgm-multi-pass.ini", "0");
    dcgmHandle_t h = connect_he();
    assert_int_equal(D(dcgmProfGetSupportedMetricGroups)(h, &mg), DCGM_ST_OK);
    assert_int_equal(mg.numMetricGroups, 2);
    assert_int_equal(mg.metricGroups[0].majorId, 0);
    assert_int_equal(mg.metricGroups[1].majorId, 0);
    assert_int_equal(mg.metricGroups[0].minorId, 0);
    assert_int_equal(mg.metricGroups[1].minorId, 1);
    assert_int_equal(mg.metricGroups[0].numFieldIds, 8);
    assert_int_equal(mg.metricGroups[1].numFieldIds, 4);
    static const unsigned short g0[] = {1001, 1002, 1003, 1005, 1009, 1010, 1011, 1012};
    static const unsigned short g1[] = {1004, 1006, 1007, 1008};
    assert_memory_equal(mg.metricGroups[0].fieldIds, g0, sizeof(g0));
    assert_memory_equal(mg.metricGroups[1].fieldIds, g1, sizeof(g1));
    mg.gpuId = 1;
    assert_int_equal(D(dcgmProfGetSupportedMetricGroups)(h, &mg), DCGM_ST_BADPARAM);

    dcgmGpuGrp_t g = group_of(h, 1, DCGM_FE_GPU_I, 0u);
    assert_int_equal(D(dcgmWatchFields)(h, g, fields_of(h, "ab", 2, ab), 1000000, 60, 0),
                     DCGM_ST_PROFILING_MULTI_PASS);
    assert_int_equal(D(dcgmWatchFields)(h, g, fields_of(h, "a", 2, a), 1000000, 60, 0), DCGM_ST_OK);
    /* with pass 0 watched on this GPU, pass 1 cannot join, on any of its entities */
    dcgmGpuGrp_t g2 = group_of(h, 1, DCGM_FE_GPU, 0u);
    assert_int_equal(D(dcgmWatchFields)(h, g2, fields_of(h, "b", 1, b), 1000000, 60, 0),
                     DCGM_ST_PROFILING_MULTI_PASS);
}

static void test_hostengine_restart(void **state)
{
    dcgmHandle_t h2 = 0;
    dcgmFieldValue_v2 v;
    dcgmGroupEntityPair_t e = {DCGM_FE_GPU, 0};
    unsigned short f = DCGM_FI_DEV_UUID;
    (void)state;
    start("dcgm-hostengine-restart.ini", "0+1");
    dcgmHandle_t h = connect_he(); /* t = 0 */
    for (int t = 0; t < 5; t++)    /* reads at t = 0..4 */
        assert_int_equal(read1(h, DCGM_FE_GPU, 0, f, DCGM_FV_FLAG_LIVE_DATA).status, DCGM_ST_OK);
    /* t = 5: gone */
    assert_int_equal(D(dcgmEntitiesGetLatestValues)(h, &e, 1, &f, 1, DCGM_FV_FLAG_LIVE_DATA, &v),
                     DCGM_ST_CONNECTION_NOT_VALID);
    assert_int_equal(try_connect("/tmp/nv-hostengine", 1, &h2), DCGM_ST_CONNECTION_NOT_VALID);
    for (int t = 6; t <= 10; t++)
        assert_int_equal(
            D(dcgmEntitiesGetLatestValues)(h, &e, 1, &f, 1, DCGM_FV_FLAG_LIVE_DATA, &v),
            DCGM_ST_CONNECTION_NOT_VALID);
    /* t = 10: back; the old connection stays closed */
    h2 = connect_he();
    assert_int_not_equal(h2, h);
    v = read1(h2, DCGM_FE_GPU, 0, f, DCGM_FV_FLAG_LIVE_DATA);
    assert_int_equal(v.status, DCGM_ST_OK);
    assert_int_equal(v.ts, EPOCH_US + 11000000LL);
    unsigned ids[DCGM_MAX_NUM_DEVICES];
    int n;
    assert_int_equal(D(dcgmGetAllSupportedDevices)(h, ids, &n), DCGM_ST_CONNECTION_NOT_VALID);
    assert_int_equal(D(dcgmDisconnect)(h), DCGM_ST_OK);
}

static int hang_pipe[2];
static void *hang_read(void *arg)
{
    dcgmHandle_t h = *(dcgmHandle_t *)arg;
    dcgmGroupEntityPair_t e = {DCGM_FE_GPU, 0};
    unsigned short f = DCGM_FI_DEV_UUID;
    dcgmFieldValue_v2 v;
    for (int i = 0; i < 4; i++) {
        dcgmReturn_t r =
            D(dcgmEntitiesGetLatestValues)(h, &e, 1, &f, 1, DCGM_FV_FLAG_LIVE_DATA, &v);
        char c = r == DCGM_ST_OK ? 'o' : 'x';
        if (write(hang_pipe[1], &c, 1) != 1)
            break;
    }
    return NULL;
}

/* hang = read, hang_after = 3: the fourth read (t = 3) never returns, in a
 * thread of a child process; other threads' calls still proceed. */
static void test_hang_read(void **state)
{
    pid_t pid;
    char buf[8] = "";
    int st;
    (void)state;
    assert_int_equal(pipe(hang_pipe), 0);
    if ((pid = fork()) == 0) {
        pthread_t th;
        static dcgmHandle_t h;
        unsigned ids[DCGM_MAX_NUM_DEVICES];
        int n = 0;
        use_scenario("dcgm-hang.ini", "0+1");
        D(dcgmInit)();
        h = connect_he();
        pthread_create(&th, NULL, hang_read, &h);
        usleep(300000);
        char c = D(dcgmGetAllSupportedDevices)(h, ids, &n) == DCGM_ST_OK && n == 1 ? 'd' : 'x';
        if (write(hang_pipe[1], &c, 1) != 1)
            _exit(3);
        _exit(0); /* the reader still hangs */
    }
    close(hang_pipe[1]);
    assert_true(waitpid(pid, &st, 0) == pid);
    assert_int_equal(read(hang_pipe[0], buf, sizeof(buf) - 1), 4);
    close(hang_pipe[0]);
    assert_string_equal(buf, "oood");
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_scenario_keys_validated(void **state)
{
    static const char *const bad[] = {
        "[dcgm]\nhostengine = unix:relative\n",
        "[dcgm]\nhostengine = tcp:h:99999\n",
        "[dcgm]\nhostengine_down = 10-5\n",
        "[dcgm]\nembedded = maybe\n",
        "[dcgm]\nhang = always\n",
        "[dcgm]\nmulti_pass = 2\n",
        "[dcgm]\nbogus = 1\n",
    };
    int (*check)(const char *, char *, size_t) =
        (int (*)(const char *, char *, size_t))sym_in(nvml, "migmon_sim_check_scenario");
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char path[] = "/tmp/test_dcgm_sim_XXXXXX", err[600] = "";
        int fd = mkstemp(path);
        FILE *f = fdopen(fd, "w");
        fprintf(f, "[system]\ndriver_version = 550.144.03\n%s", bad[i]);
        fclose(f);
        assert_int_equal(check(path, err, sizeof(err)), -1);
        assert_non_null(strstr(err, ":4: [dcgm] "));
        unlink(path);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_exports_and_uninitialized, setup, teardown),
        cmocka_unit_test_setup_teardown(test_connect, setup, teardown),
        cmocka_unit_test_setup_teardown(test_connect_tcp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_embedded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hierarchy_dgx, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hierarchy_slices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_auto_update_mean, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nvml_gpm_still_unsupported_on_ampere, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_requires_root, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_root_embedded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_profiling_held_and_module, setup, teardown),
        cmocka_unit_test_setup_teardown(test_multi_pass, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostengine_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hang_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scenario_keys_validated, setup, teardown),
    };
    lib = open_dcgm("libdcgm.so.4");
    nvml = dlopen(env("MIGMON_SIM_LIB"), RTLD_NOW | RTLD_LOCAL);
    if (!nvml)
        fail_msg("dlopen %s: %s", env("MIGMON_SIM_LIB"), dlerror());
    return cmocka_run_group_tests(tests, NULL, NULL);
}
