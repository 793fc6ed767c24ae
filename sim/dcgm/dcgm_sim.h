/*
 * dcgm_sim.h — the simulated libdcgm's internals, shared by its files:
 * engine.c (init, host engines, handles, the clock, hangs), groups.c
 * (entity and field groups, watches) and values.c (devices, the MIG
 * hierarchy, field values, profiling metric groups).
 *
 * Like NVIDIA's library, the fake sits on top of NVML: it links its own copy
 * of the simulator's core (scenario, model, clock; none of it exported) and
 * loads the scenario of MIGMON_SIM_SCENARIO at the first dcgmStartEmbedded_v2
 * or dcgmConnect_v2 after dcgmInit, which also starts its clock; the model
 * stays loaded until dcgmShutdown. Every exported function runs between
 * dcgm_enter*() and dcgm_leave(), which hold one mutex.
 */
#ifndef SIM_DCGM_SIM_H
#define SIM_DCGM_SIM_H

#include <stdbool.h>

#include "dcgm_exports.h"
#include "gpm_rates.h"
#include "state.h"

/* dcgm_structs.h values that backend/dcgm/dcgm_api.h does not need. */
#define DCGM_ST_DUPLICATE_KEY (-26)
#define DCGM_EMBEDDED_HANDLE 0x7fffffff /* the one handle of an embedded engine */
#define DCGM_GROUP_DEFAULT_INSTANCES 3
#define DCGM_GROUP_DEFAULT_COMPUTE_INSTANCES 4
#define DCGM_MAX_NUM_GROUPS 64
#define DCGM_GROUP_MAX_ENTITIES_V2 1024
#define DCGM_MAX_INSTANCES_PER_GPU 8 /* entity ids: gpuId * 8 + index */
#define DCGM_FI_MAX_FIELDS 1534
#define DCGM_INT64_NOT_FOUND (DCGM_INT64_BLANK + 1)
#define DCGM_INT64_NOT_SUPPORTED (DCGM_INT64_BLANK + 2)
#define DCGM_FP64_NOT_FOUND (DCGM_FP64_BLANK + 1.0)
#define DCGM_FP64_NOT_SUPPORTED (DCGM_FP64_BLANK + 2.0)
#define DCGM_STR_BLANK "<<<NULL>>>"
#define DCGM_STR_NOT_FOUND "<<<NOT_FOUND>>>"
#define DCGM_STR_NOT_SUPPORTED "<<<NOT_SUPPORTED>>>"

/* The exported functions, for the call counts. */
enum dcgm_fn {
    FN_dcgmInit,
    FN_dcgmShutdown,
    FN_errorString,
    FN_dcgmStartEmbedded_v2,
    FN_dcgmStopEmbedded,
    FN_dcgmConnect_v2,
    FN_dcgmDisconnect,
    FN_dcgmGetAllSupportedDevices,
    FN_dcgmGetGpuInstanceHierarchy,
    FN_dcgmGroupCreate,
    FN_dcgmGroupDestroy,
    FN_dcgmGroupAddEntity,
    FN_dcgmFieldGroupCreate,
    FN_dcgmFieldGroupDestroy,
    FN_dcgmWatchFields,
    FN_dcgmUnwatchFields,
    FN_dcgmUpdateAllFields,
    FN_dcgmEntitiesGetLatestValues,
    FN_dcgmProfGetSupportedMetricGroups,
    FN_COUNT
};

struct dcgm_group {
    bool used;
    unsigned id;
    int n;
    dcgmGroupEntityPair_t e[DCGM_GROUP_MAX_ENTITIES_V2];
};

struct dcgm_fgroup {
    bool used;
    unsigned id;
    char name[DCGM_MAX_STR_LENGTH];
    int n;
    unsigned short f[DCGM_MAX_FIELD_IDS_PER_FIELD_GROUP];
};

/* One watched (entity, field). Its latest sample, once there is one, is
 * the activity over [t_from, t_sample] (simulated seconds). */
struct dcgm_watch {
    dcgmGroupEntityPair_t e;
    unsigned short field;
    double freq_s;  /* updateFreq */
    double t_watch; /* when it was (last) watched */
    bool sampled;
    double t_sample, t_from;
};

/* An embedded engine or a connection to a host engine, with what its
 * client created on it. */
struct dcgm_conn {
    dcgmHandle_t handle;
    bool embedded;
    bool dead;        /* the host engine went away: the handle stays invalid */
    bool prof_denied; /* embedded with the profiling module on its deny list */
    int op_mode;      /* DCGM_OPERATION_MODE_* */
    double t_connect;
    unsigned next_id;
    struct dcgm_group *groups[DCGM_MAX_NUM_GROUPS];
    struct dcgm_fgroup fgroups[DCGM_MAX_NUM_FIELD_GROUPS];
    int n_watches, watches_cap;
    struct dcgm_watch *watches;
};

/* Locks and counts the call; UNINITIALIZED before dcgmInit. Pair with
 * dcgm_leave() whatever it returns. */
dcgmReturn_t dcgm_enter(enum dcgm_fn fn);
/* dcgm_enter, then the handle: BADPARAM for one never given or closed,
 * CONNECTION_NOT_VALID once its host engine has gone away. *t: the
 * simulated time of the call (tick: the step clock's step, see engine.c). */
dcgmReturn_t dcgm_enter_conn(enum dcgm_fn fn, dcgmHandle_t h, bool tick, struct dcgm_conn **c,
                             double *t);
dcgmReturn_t dcgm_leave(dcgmReturn_t r);
/* The call blocks for good, with the lock released, when the scenario's
 * [dcgm] hang is `what` and t >= hang_after. */
void dcgm_maybe_hang(enum sim_dcgm_hang what, double t);
/* groups.c: takes the AUTO engine's samples due by t. */
void dcgm_watches_advance(struct dcgm_conn *c, double t);
/* The watch of (e, field) on c, or NULL. */
const struct dcgm_watch *dcgm_watch_get(struct dcgm_conn *c, dcgmGroupEntityPair_t e,
                                        unsigned short field);

/* No MIG entities for this handle: an embedded engine not running as root
 * (or `embedded = requires_root`) on a node with MIG on. */
bool dcgm_mig_denied(const struct dcgm_conn *c);
/* Whether watching profiling fields on GPU gpu needs root this handle lacks. */
bool dcgm_prof_denied(const struct dcgm_conn *c, int gpu);

/* entities.c: a GPU's instances at t. */
struct dcgm_inst {
    long gi;                 /* NVML GI id */
    unsigned gi_local;       /* the GI's index on its GPU */
    const struct sim_mig *m; /* the CI; for a GI, its first CI */
};

/* The GIs (gi true) or CIs of gpu at t in DCGM's order; returns the count. */
int dcgm_layout(int gpu, double t, bool gi, struct dcgm_inst out[SIM_MAX_MIG_SLOTS]);
/* entities.c: resolves a GPU / GPU_I / GPU_CI entity at time t into what the
 * model computes its activity for. False if no such entity exists then
 * (or the handle sees no MIG entities). */
bool dcgm_entity_resolve(const struct dcgm_conn *c, dcgmGroupEntityPair_t e, double t,
                         struct gpm_target *out);
/* The GPU an entity belongs to (-1 for other entity groups). */
int dcgm_entity_gpu(dcgmGroupEntityPair_t e);
/* Fills out[] with every GI (gi true) or CI of the node at t; returns the
 * count. */
int dcgm_instances(bool gi, double t, dcgmGroupEntityPair_t *out, int max);
/* A field of the profiling module (DCGM_FI_PROF_*) */
bool dcgm_is_prof_field(unsigned short f);
/* The metric group (minor id) of a profiling field under multi_pass. */
int dcgm_prof_pass(unsigned short f);

#endif
