/*
 * engine.c — the simulated libdcgm's life cycle: dcgmInit / dcgmShutdown,
 * the embedded engine, connections to the node's nv-hostengine as the
 * scenario's [dcgm] section describes it, handles, the clock and the hangs.
 * See dcgm_sim.h.
 *
 * Clock. The simulator core's clock (docs/simulator.md, MIGMON_SIM_TIME)
 * starts when the first dcgmStartEmbedded_v2 / dcgmConnect_v2 loads the
 * scenario and runs until dcgmShutdown, across reconnections. With
 * MIGMON_SIM_TIME=T0+STEP it steps at each dcgmEntitiesGetLatestValues
 * after the first: the read a monitor makes once per tick.
 */
#include "dcgm_sim.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_CONNS 16

static const char *const fn_names[FN_COUNT] = {
    [FN_dcgmInit] = "dcgmInit",
    [FN_dcgmShutdown] = "dcgmShutdown",
    [FN_errorString] = "errorString",
    [FN_dcgmStartEmbedded_v2] = "dcgmStartEmbedded_v2",
    [FN_dcgmStopEmbedded] = "dcgmStopEmbedded",
    [FN_dcgmConnect_v2] = "dcgmConnect_v2",
    [FN_dcgmDisconnect] = "dcgmDisconnect",
    [FN_dcgmGetAllSupportedDevices] = "dcgmGetAllSupportedDevices",
    [FN_dcgmGetGpuInstanceHierarchy] = "dcgmGetGpuInstanceHierarchy",
    [FN_dcgmGroupCreate] = "dcgmGroupCreate",
    [FN_dcgmGroupDestroy] = "dcgmGroupDestroy",
    [FN_dcgmGroupAddEntity] = "dcgmGroupAddEntity",
    [FN_dcgmFieldGroupCreate] = "dcgmFieldGroupCreate",
    [FN_dcgmFieldGroupDestroy] = "dcgmFieldGroupDestroy",
    [FN_dcgmWatchFields] = "dcgmWatchFields",
    [FN_dcgmUnwatchFields] = "dcgmUnwatchFields",
    [FN_dcgmUpdateAllFields] = "dcgmUpdateAllFields",
    [FN_dcgmEntitiesGetLatestValues] = "dcgmEntitiesGetLatestValues",
    [FN_dcgmProfGetSupportedMetricGroups] = "dcgmProfGetSupportedMetricGroups",
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long call_counts[FN_COUNT];
static bool initialized;
static bool model; /* the simulator core holds the scenario (sim_init succeeded) */
static struct dcgm_conn *conns[MAX_CONNS];
static dcgmHandle_t next_handle = 1; /* connection handles: never reused */

dcgmReturn_t dcgm_enter(enum dcgm_fn fn)
{
    pthread_mutex_lock(&lock);
    call_counts[fn]++;
    return initialized ? DCGM_ST_OK : DCGM_ST_UNINITIALIZED;
}

dcgmReturn_t dcgm_leave(dcgmReturn_t r)
{
    pthread_mutex_unlock(&lock);
    return r;
}

/* The simulated time, from the core's clock (tick: step it first). */
static double now(bool tick)
{
    struct sim_call c;
    double t = 0;
    if (sim_enter(&c, tick ? SYM_nvmlDeviceGetCount_v2 : SYM_nvmlInit_v2) == NVML_SUCCESS)
        t = c.t;
    sim_leave(NVML_SUCCESS);
    return t;
}

/* Loads the scenario into the core on first use: the engine's own NVML
 * session (NO_GPUS: a node without GPUs still has a working DCGM). */
static bool model_load(void)
{
    if (!model)
        model = sim_init(NVML_INIT_FLAG_NO_GPUS, false, SYM_nvmlInitWithFlags) == NVML_SUCCESS;
    return model;
}

static struct dcgm_conn **conn_slot(dcgmHandle_t h)
{
    for (int i = 0; i < MAX_CONNS; i++)
        if (conns[i] && conns[i]->handle == h)
            return &conns[i];
    return NULL;
}

/* The host engine is gone during [down_from, down_until): a connection
 * made before the end of that window did not survive it. */
static bool engine_down_since(double t_connect, double t)
{
    const struct sim_dcgm *d = &sim_scn->dcgm;
    return d->down && t >= d->down_from && t_connect < d->down_until;
}

dcgmReturn_t dcgm_enter_conn(enum dcgm_fn fn, dcgmHandle_t h, bool tick, struct dcgm_conn **c,
                             double *t)
{
    dcgmReturn_t r = dcgm_enter(fn);
    struct dcgm_conn **p;
    if (r != DCGM_ST_OK)
        return r;
    if (!(p = conn_slot(h)))
        return DCGM_ST_BADPARAM;
    *c = *p;
    *t = now(tick);
    if (!(*c)->embedded && !(*c)->dead && engine_down_since((*c)->t_connect, *t))
        (*c)->dead = true;
    return (*c)->dead ? DCGM_ST_CONNECTION_NOT_VALID : DCGM_ST_OK;
}

void dcgm_maybe_hang(enum sim_dcgm_hang what, double t)
{
    const struct sim_dcgm *d = &sim_scn->dcgm;
    if (d->hang != (int)what || t < d->hang_after)
        return;
    /* Blocks like a call into a host engine that never answers; other
     * threads' calls proceed. */
    pthread_mutex_unlock(&lock);
    for (;;)
        sleep(3600);
}

static bool any_mig_on(void)
{
    for (int i = 0; i < sim_scn->n_gpus; i++)
        if (sim_scn->gpus[i].mig_mode == SIM_MIG_ON)
            return true;
    return false;
}

/* DcgmCacheManager::InitializeGpuInstances refuses MIG to a host engine
 * that is not root; a host engine is the caller's process only when
 * embedded (an nv-hostengine runs as root). */
bool dcgm_mig_denied(const struct dcgm_conn *c)
{
    if (!c->embedded)
        return false;
    if (sim_scn->dcgm.embedded == SIM_DCGM_EMB_REQUIRES_ROOT)
        return any_mig_on();
    return geteuid() != 0 && any_mig_on();
}

/* Profiling fields need root on GPUs without GPM (before Hopper), DCGM's
 * test_dcgm_prof_requires_root_privileges; with MIG on they need it anyway. */
bool dcgm_prof_denied(const struct dcgm_conn *c, int gpu)
{
    const struct sim_gpu *g;
    if (!c->embedded)
        return false;
    if (sim_scn->dcgm.embedded == SIM_DCGM_EMB_REQUIRES_ROOT)
        return true;
    if (geteuid() == 0)
        return false;
    g = gpu >= 0 && gpu < sim_scn->n_gpus ? &sim_scn->gpus[gpu] : NULL;
    return any_mig_on() || !g || g->arch < NVML_DEVICE_ARCH_HOPPER ||
           g->arch == NVML_DEVICE_ARCH_UNKNOWN;
}

static dcgmReturn_t conn_add(bool embedded, double t, dcgmHandle_t *h)
{
    int i = 0;
    while (i < MAX_CONNS && conns[i])
        i++;
    if (i == MAX_CONNS)
        return DCGM_ST_MAX_LIMIT;
    struct dcgm_conn *c = calloc(1, sizeof(*c));
    if (!c)
        return DCGM_ST_GENERIC_ERROR;
    c->embedded = embedded;
    c->handle = embedded ? (dcgmHandle_t)DCGM_EMBEDDED_HANDLE : next_handle++;
    c->op_mode = DCGM_OPERATION_MODE_AUTO;
    c->t_connect = t;
    c->next_id = 1;
    conns[i] = c;
    *h = c->handle;
    return DCGM_ST_OK;
}

static void conn_clear(struct dcgm_conn *c)
{
    for (int i = 0; i < DCGM_MAX_NUM_GROUPS; i++) {
        free(c->groups[i]);
        c->groups[i] = NULL;
    }
    free(c->watches);
    c->watches = NULL;
    c->n_watches = c->watches_cap = 0;
}

static void conn_close(struct dcgm_conn **p)
{
    conn_clear(*p);
    free(*p);
    *p = NULL;
}

dcgmReturn_t dcgmInit(void)
{
    dcgm_enter(FN_dcgmInit);
    initialized = true; /* a second dcgmInit is no error */
    return dcgm_leave(DCGM_ST_OK);
}

dcgmReturn_t dcgmShutdown(void)
{
    dcgm_enter(FN_dcgmShutdown);
    for (int i = 0; i < MAX_CONNS; i++)
        if (conns[i])
            conn_close(&conns[i]);
    if (model)
        sim_shutdown();
    model = false;
    initialized = false;
    return dcgm_leave(DCGM_ST_OK);
}

/*
 * Only the v1 layout is declared (backend/dcgm/dcgm_api.h); the real library also
 * takes version2 and version3 structs, which this one refuses as a library
 * that predates them would. An embedded engine that is already running is
 * reused (DcgmApi.cpp does the same). Without a usable scenario the engine's
 * NVML cannot load: INIT_ERROR.
 */
dcgmReturn_t dcgmStartEmbedded_v2(dcgmStartEmbeddedV2Params_v1 *params)
{
    dcgmReturn_t r = dcgm_enter(FN_dcgmStartEmbedded_v2);
    struct dcgm_conn **p;
    if (r != DCGM_ST_OK)
        return dcgm_leave(r);
    if (!params)
        return dcgm_leave(DCGM_ST_BADPARAM);
    if (params->version != dcgmStartEmbeddedV2Params_version1)
        return dcgm_leave(DCGM_ST_VER_MISMATCH);
    if ((params->opMode != DCGM_OPERATION_MODE_AUTO &&
         params->opMode != DCGM_OPERATION_MODE_MANUAL) ||
        params->denyListCount > sizeof(params->denyList) / sizeof(params->denyList[0]))
        return dcgm_leave(DCGM_ST_BADPARAM);
    if (!model_load())
        return dcgm_leave(DCGM_ST_INIT_ERROR);
    if (!(p = conn_slot((dcgmHandle_t)DCGM_EMBEDDED_HANDLE))) {
        dcgmHandle_t h;
        if ((r = conn_add(true, now(false), &h)) != DCGM_ST_OK)
            return dcgm_leave(r);
        p = conn_slot(h);
    }
    (*p)->op_mode = params->opMode;
    for (unsigned i = 0; i < params->denyListCount; i++)
        if (params->denyList[i] == DCGM_MODULE_ID_PROFILING)
            (*p)->prof_denied = true;
    params->dcgmHandle = (*p)->handle;
    return dcgm_leave(DCGM_ST_OK);
}

dcgmReturn_t dcgmStopEmbedded(dcgmHandle_t pDcgmHandle)
{
    dcgmReturn_t r = dcgm_enter(FN_dcgmStopEmbedded);
    struct dcgm_conn **p;
    if (r != DCGM_ST_OK)
        return dcgm_leave(r);
    if (pDcgmHandle != (dcgmHandle_t)DCGM_EMBEDDED_HANDLE)
        return dcgm_leave(DCGM_ST_BADPARAM);
    if (!(p = conn_slot(pDcgmHandle)))
        return dcgm_leave(DCGM_ST_UNINITIALIZED); /* "the embedded host engine was not running" */
    conn_close(p);
    return dcgm_leave(DCGM_ST_OK);
}

/* Whether ipAddress names the scenario's host engine: the socket path with
 * addressIsUnixSocket, or "HOST" (port DCGM_HE_PORT_NUMBER) / "HOST:PORT". */
static bool address_matches(const struct sim_dcgm *d, const char *addr, bool unix_socket)
{
    if (d->hostengine == SIM_DCGM_HE_UNIX)
        return unix_socket && !strcmp(addr, d->he_path);
    if (d->hostengine != SIM_DCGM_HE_TCP || unix_socket)
        return false;
    const char *colon = strrchr(addr, ':');
    size_t n = colon ? (size_t)(colon - addr) : strlen(addr);
    unsigned long port = DCGM_HE_PORT_NUMBER;
    if (colon) {
        char *end;
        port = strtoul(colon + 1, &end, 10);
        if (end == colon + 1 || *end)
            return false;
    }
    return n == strlen(d->he_host) && !strncmp(addr, d->he_host, n) && port == d->he_port;
}

/* dcgm_agent.h: CONNECTION_NOT_VALID "if the remote host engine could not
 * be reached", which is also the answer on a node without one. */
dcgmReturn_t dcgmConnect_v2(const char *ipAddress, dcgmConnectV2Params_v2 *connectParams,
                            dcgmHandle_t *pDcgmHandle)
{
    dcgmReturn_t r = dcgm_enter(FN_dcgmConnect_v2);
    double t;
    if (r != DCGM_ST_OK)
        return dcgm_leave(r);
    if (!ipAddress || !*ipAddress || !connectParams || !pDcgmHandle)
        return dcgm_leave(DCGM_ST_BADPARAM);
    if (connectParams->version != dcgmConnectV2Params_version2)
        return dcgm_leave(DCGM_ST_VER_MISMATCH);
    if (!model_load())
        return dcgm_leave(DCGM_ST_CONNECTION_NOT_VALID);
    t = now(false);
    dcgm_maybe_hang(SIM_DCGM_HANG_CONNECT, t);
    if (!address_matches(&sim_scn->dcgm, ipAddress, connectParams->addressIsUnixSocket != 0))
        return dcgm_leave(DCGM_ST_CONNECTION_NOT_VALID);
    if (engine_down_since(t, t))
        return dcgm_leave(DCGM_ST_CONNECTION_NOT_VALID);
    return dcgm_leave(conn_add(false, t, pDcgmHandle));
}

dcgmReturn_t dcgmDisconnect(dcgmHandle_t pDcgmHandle)
{
    dcgmReturn_t r = dcgm_enter(FN_dcgmDisconnect);
    struct dcgm_conn **p;
    if (r != DCGM_ST_OK)
        return dcgm_leave(r);
    if (!(p = conn_slot(pDcgmHandle)) || (*p)->embedded)
        return dcgm_leave(DCGM_ST_BADPARAM);
    conn_close(p); /* a connection whose engine went away is closed all the same */
    return dcgm_leave(DCGM_ST_OK);
}

/* The library's own wording of each code (not NVIDIA's strings). */
const char *errorString(dcgmReturn_t result)
{
    static const struct {
        int code;
        const char *text;
    } texts[] = {
        {DCGM_ST_OK, "Success"},
        {DCGM_ST_BADPARAM, "Bad parameter"},
        {DCGM_ST_GENERIC_ERROR, "Generic error"},
        {DCGM_ST_NOT_CONFIGURED, "Not configured"},
        {DCGM_ST_NOT_SUPPORTED, "Not supported"},
        {DCGM_ST_INIT_ERROR, "Initialization error"},
        {DCGM_ST_NVML_ERROR, "NVML error"},
        {DCGM_ST_UNINITIALIZED, "Uninitialized"},
        {DCGM_ST_TIMEOUT, "Timeout"},
        {DCGM_ST_VER_MISMATCH, "API version mismatch"},
        {DCGM_ST_UNKNOWN_FIELD, "Unknown field"},
        {DCGM_ST_NO_DATA, "No data"},
        {DCGM_ST_STALE_DATA, "Stale data"},
        {DCGM_ST_NOT_WATCHED, "Field not watched"},
        {DCGM_ST_NO_PERMISSION, "No permission"},
        {DCGM_ST_CONNECTION_NOT_VALID, "Host engine connection not valid"},
        {DCGM_ST_GPU_NOT_SUPPORTED, "GPU not supported"},
        {DCGM_ST_GROUP_INCOMPATIBLE, "Group incompatible"},
        {DCGM_ST_MAX_LIMIT, "Limit reached"},
        {DCGM_ST_LIBRARY_NOT_FOUND, "Library not found"},
        {DCGM_ST_DUPLICATE_KEY, "Duplicate key"},
        {DCGM_ST_REQUIRES_ROOT, "Host engine must run as root"},
        {DCGM_ST_INSUFFICIENT_SIZE, "Insufficient size"},
        {DCGM_ST_FIELD_UNSUPPORTED_BY_API, "Field not supported by this API"},
        {DCGM_ST_MODULE_NOT_LOADED, "Module not loaded"},
        {DCGM_ST_IN_USE, "In use"},
        {DCGM_ST_GROUP_IS_EMPTY, "Group is empty"},
        {DCGM_ST_PROFILING_NOT_SUPPORTED, "Profiling not supported"},
        {DCGM_ST_PROFILING_LIBRARY_ERROR, "Profiling library error"},
        {DCGM_ST_PROFILING_MULTI_PASS, "Profiling metrics need more than one pass"},
        {DCGM_ST_INSUFFICIENT_DRIVER_VERSION, "Driver version too old"},
        {DCGM_ST_INSTANCE_NOT_FOUND, "GPU instance not found"},
        {DCGM_ST_COMPUTE_INSTANCE_NOT_FOUND, "Compute instance not found"},
        {DCGM_ST_PAUSED, "Paused"},
        {DCGM_ST_ALREADY_INITIALIZED, "Already initialized"},
        {DCGM_ST_NVML_NOT_LOADED, "NVML not loaded"},
    };
    const char *s = "Unknown error";
    dcgm_enter(FN_errorString);
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        if (texts[i].code == result)
            s = texts[i].text;
    dcgm_leave(DCGM_ST_OK);
    return s;
}

unsigned long migmon_dcgm_sim_call_count(const char *name)
{
    unsigned long n = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < FN_COUNT; i++)
        if (!name || !strcmp(name, fn_names[i]))
            n += call_counts[i];
    pthread_mutex_unlock(&lock);
    return n;
}
