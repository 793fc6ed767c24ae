/*
 * dcgm_api.h — the part of NVIDIA DCGM's C API (dcgm_structs.h, dcgm_fields.h,
 * dcgm_agent.h) that the monitor and the simulated libdcgm use, declared
 * here because no DCGM header is installed. The library is only ever
 * dlopen()ed ("libdcgm.so.4", then "libdcgm.so.3"), never linked.
 *
 * Every layout was checked against NVIDIA's public DCGM headers (4.6.0, and
 * 3.3.9 / 4.0 where the same): the sizes and offsets below are the ones a
 * compiler gives for the vendor's own declarations, and a version stamp
 * (MAKE_DCGM_VERSION: size in the low 24 bits, version in the top byte)
 * carries the size, so a wrong declaration would be refused by the library
 * with DCGM_ST_VER_MISMATCH rather than misread.
 */
#ifndef MIGMON_DCGM_API_H
#define MIGMON_DCGM_API_H

#include <stddef.h>
#include <stdint.h>

typedef int dcgmReturn_t;
typedef uintptr_t dcgmHandle_t;
typedef uintptr_t dcgmGpuGrp_t;
typedef uintptr_t dcgmFieldGrp_t;
typedef unsigned int dcgm_field_eid_t;
typedef int dcgm_field_entity_group_t; /* an enum in the header */

#define DCGM_MAKE_VERSION(type, ver) ((unsigned int)(sizeof(type) | ((unsigned long)(ver) << 24U)))

enum {
    DCGM_ST_OK = 0,
    DCGM_ST_BADPARAM = -1,
    DCGM_ST_GENERIC_ERROR = -3,
    DCGM_ST_NOT_CONFIGURED = -5,
    DCGM_ST_NOT_SUPPORTED = -6,
    DCGM_ST_INIT_ERROR = -7,
    DCGM_ST_NVML_ERROR = -8,
    DCGM_ST_UNINITIALIZED = -10,
    DCGM_ST_TIMEOUT = -11,
    DCGM_ST_VER_MISMATCH = -12,
    DCGM_ST_UNKNOWN_FIELD = -13,
    DCGM_ST_NO_DATA = -14,
    DCGM_ST_STALE_DATA = -15,
    DCGM_ST_NOT_WATCHED = -16,
    DCGM_ST_NO_PERMISSION = -17,
    DCGM_ST_CONNECTION_NOT_VALID = -21,
    DCGM_ST_GPU_NOT_SUPPORTED = -22,
    DCGM_ST_GROUP_INCOMPATIBLE = -23,
    DCGM_ST_MAX_LIMIT = -24,
    DCGM_ST_LIBRARY_NOT_FOUND = -25,
    DCGM_ST_REQUIRES_ROOT = -29,
    DCGM_ST_INSUFFICIENT_SIZE = -31,
    DCGM_ST_FIELD_UNSUPPORTED_BY_API = -32,
    DCGM_ST_MODULE_NOT_LOADED = -33,
    DCGM_ST_IN_USE = -34,
    DCGM_ST_GROUP_IS_EMPTY = -35,
    DCGM_ST_PROFILING_NOT_SUPPORTED = -36,
    DCGM_ST_PROFILING_LIBRARY_ERROR = -37,
    DCGM_ST_PROFILING_MULTI_PASS = -38,
    DCGM_ST_INSUFFICIENT_DRIVER_VERSION = -44,
    DCGM_ST_INSTANCE_NOT_FOUND = -45,
    DCGM_ST_COMPUTE_INSTANCE_NOT_FOUND = -46,
    DCGM_ST_PAUSED = -54,
    DCGM_ST_ALREADY_INITIALIZED = -55,
    DCGM_ST_NVML_NOT_LOADED = -56,
};

/* Entity groups (dcgm_field_entity_group_t). */
enum {
    DCGM_FE_NONE = 0,
    DCGM_FE_GPU = 1,
    DCGM_FE_VGPU = 2,
    DCGM_FE_SWITCH = 3,
    DCGM_FE_GPU_I = 4,
    DCGM_FE_GPU_CI = 5,
};

/* dcgmGroupType_t */
enum { DCGM_GROUP_DEFAULT = 0, DCGM_GROUP_EMPTY = 1 };
/* dcgmOperationMode_t */
enum { DCGM_OPERATION_MODE_AUTO = 1, DCGM_OPERATION_MODE_MANUAL = 2 };

#define DCGM_MAX_NUM_DEVICES 32
#define DCGM_MAX_STR_LENGTH 256
#define DCGM_MAX_BLOB_LENGTH 4096
#define DCGM_MAX_HIERARCHY_INFO (DCGM_MAX_NUM_DEVICES * 14)
#define DCGM_MAX_FIELD_IDS_PER_FIELD_GROUP 128
#define DCGM_MAX_NUM_FIELD_GROUPS 64
#define DCGM_HE_PORT_NUMBER 5555
/* nv-hostengine's unix socket when started with --domain-socket and no path. */
#define DCGM_DEFAULT_SOCKET_PATH "/tmp/nv-hostengine"
#define DCGM_FV_FLAG_LIVE_DATA 0x1u
/* The module ids a dcgmStartEmbedded_v2 caller may deny. */
#define DCGM_MODULE_ID_PROFILING 8

/* Field types */
#define DCGM_FT_BINARY 'b'
#define DCGM_FT_DOUBLE 'd'
#define DCGM_FT_INT64 'i'
#define DCGM_FT_STRING 's'
#define DCGM_FT_TIMESTAMP 't'

/* Sentinels stored in place of a value: at or above BLANK means none
 * (BLANK, NOT_FOUND = +1, NOT_SUPPORTED = +2, NOT_PERMISSIONED = +3). Profiling
 * fields read BLANK while profiling is paused. */
#define DCGM_INT64_BLANK 0x7ffffffffffffff0LL
#define DCGM_FP64_BLANK 140737488355328.0

/* Field ids (dcgm_fields.h; the DCGM_FI_PROF_* names are the pre-4.6 ones,
 * which 4.6 keeps as aliases and dcgm-exporter still prints). */
#define DCGM_FI_DEV_UUID 54
#define DCGM_FI_PROF_GR_ENGINE_ACTIVE 1001
#define DCGM_FI_PROF_SM_ACTIVE 1002
#define DCGM_FI_PROF_SM_OCCUPANCY 1003
#define DCGM_FI_PROF_PIPE_TENSOR_ACTIVE 1004
#define DCGM_FI_PROF_DRAM_ACTIVE 1005
#define DCGM_FI_PROF_PIPE_FP64_ACTIVE 1006
#define DCGM_FI_PROF_PIPE_FP32_ACTIVE 1007
#define DCGM_FI_PROF_PIPE_FP16_ACTIVE 1008
#define DCGM_FI_PROF_PCIE_TX_BYTES 1009
#define DCGM_FI_PROF_PCIE_RX_BYTES 1010
#define DCGM_FI_PROF_NVLINK_TX_BYTES 1011
#define DCGM_FI_PROF_NVLINK_RX_BYTES 1012

typedef struct {
    dcgm_field_entity_group_t entityGroupId;
    dcgm_field_eid_t entityId;
} dcgmGroupEntityPair_t;

typedef struct {
    char gpuUuid[128]; /* the parent GPU's UUID, not the MIG device's */
    unsigned int nvmlGpuIndex;
    unsigned int nvmlInstanceId;        /* NVML GPU instance id */
    unsigned int nvmlComputeInstanceId; /* -1 for a GPU instance row */
    unsigned int nvmlMigProfileId;
    unsigned int nvmlProfileSlices;
} dcgmMigEntityInfo_t;

typedef struct {
    dcgmGroupEntityPair_t entity; /* GPU_I {DCGM's own GI id} or GPU_CI */
    dcgmGroupEntityPair_t parent; /* GPU for a GI row, GPU_I for a CI row */
    dcgmMigEntityInfo_t info;
} dcgmMigHierarchyInfo_v2;

typedef struct {
    unsigned int version;
    unsigned int count;
    dcgmMigHierarchyInfo_v2 entityList[DCGM_MAX_HIERARCHY_INFO];
} dcgmMigHierarchy_v2;
#define dcgmMigHierarchy_version2 DCGM_MAKE_VERSION(dcgmMigHierarchy_v2, 2)

typedef struct {
    unsigned int version;
    dcgm_field_entity_group_t entityGroupId;
    dcgm_field_eid_t entityId;
    unsigned short fieldId;
    unsigned short fieldType; /* DCGM_FT_* */
    int status;               /* DCGM_ST_* of this one value */
    unsigned int unused;      /* aligns ts */
    int64_t ts;               /* µs since the epoch */
    union {
        int64_t i64;
        double dbl;
        char str[DCGM_MAX_STR_LENGTH];
        char blob[DCGM_MAX_BLOB_LENGTH];
    } value;
} dcgmFieldValue_v2;
#define dcgmFieldValue_version2 DCGM_MAKE_VERSION(dcgmFieldValue_v2, 2)

typedef struct {
    unsigned int version;
    unsigned int persistAfterDisconnect;
    unsigned int timeoutMs;
    unsigned int addressIsUnixSocket;
} dcgmConnectV2Params_v2;
#define dcgmConnectV2Params_version2 DCGM_MAKE_VERSION(dcgmConnectV2Params_v2, 2)

typedef struct {
    unsigned int version;
    int opMode;              /* dcgmOperationMode_t */
    dcgmHandle_t dcgmHandle; /* out */
    const char *logFile;     /* NULL: no log */
    int severity;            /* DcgmLoggingSeverity_t; 0 = unspecified */
    unsigned int denyListCount;
    unsigned int denyList[10];
} dcgmStartEmbeddedV2Params_v1;
#define dcgmStartEmbeddedV2Params_version1 DCGM_MAKE_VERSION(dcgmStartEmbeddedV2Params_v1, 1)

#define DCGM_PROF_MAX_NUM_GROUPS_V2 10
#define DCGM_PROF_MAX_FIELD_IDS_PER_GROUP_V2 64

typedef struct {
    unsigned short majorId; /* groups with the same majorId cannot run together */
    unsigned short minorId;
    unsigned int numFieldIds;
    unsigned short fieldIds[DCGM_PROF_MAX_FIELD_IDS_PER_GROUP_V2];
} dcgmProfMetricGroupInfo_v2;

typedef struct {
    unsigned int version;
    unsigned int unused;
    unsigned int gpuId; /* in */
    unsigned int numMetricGroups;
    dcgmProfMetricGroupInfo_v2 metricGroups[DCGM_PROF_MAX_NUM_GROUPS_V2];
} dcgmProfGetMetricGroups_v3;
#define dcgmProfGetMetricGroups_version3 DCGM_MAKE_VERSION(dcgmProfGetMetricGroups_v3, 3)

/* What a C compiler gives for NVIDIA's declarations (x86-64 and aarch64). */
_Static_assert(sizeof(dcgmGroupEntityPair_t) == 8, "dcgmGroupEntityPair_t");
_Static_assert(sizeof(dcgmMigEntityInfo_t) == 148, "dcgmMigEntityInfo_t");
_Static_assert(sizeof(dcgmMigHierarchyInfo_v2) == 164, "dcgmMigHierarchyInfo_v2");
_Static_assert(sizeof(dcgmMigHierarchy_v2) == 73480, "dcgmMigHierarchy_v2");
_Static_assert(sizeof(dcgmFieldValue_v2) == 4128, "dcgmFieldValue_v2");
_Static_assert(offsetof(dcgmFieldValue_v2, ts) == 24, "dcgmFieldValue_v2.ts");
_Static_assert(offsetof(dcgmFieldValue_v2, value) == 32, "dcgmFieldValue_v2.value");
_Static_assert(sizeof(dcgmConnectV2Params_v2) == 16, "dcgmConnectV2Params_v2");
_Static_assert(sizeof(dcgmStartEmbeddedV2Params_v1) == 72, "dcgmStartEmbeddedV2Params_v1");
_Static_assert(sizeof(dcgmProfMetricGroupInfo_v2) == 136, "dcgmProfMetricGroupInfo_v2");
_Static_assert(sizeof(dcgmProfGetMetricGroups_v3) == 1376, "dcgmProfGetMetricGroups_v3");

/* The functions used, as the library exports them. */
typedef dcgmReturn_t (*dcgm_init_fn)(void);
typedef dcgmReturn_t (*dcgm_shutdown_fn)(void);
typedef const char *(*dcgm_error_string_fn)(dcgmReturn_t);
typedef dcgmReturn_t (*dcgm_start_embedded_v2_fn)(dcgmStartEmbeddedV2Params_v1 *);
typedef dcgmReturn_t (*dcgm_stop_embedded_fn)(dcgmHandle_t);
typedef dcgmReturn_t (*dcgm_connect_v2_fn)(const char *, dcgmConnectV2Params_v2 *, dcgmHandle_t *);
typedef dcgmReturn_t (*dcgm_disconnect_fn)(dcgmHandle_t);
typedef dcgmReturn_t (*dcgm_get_all_supported_devices_fn)(dcgmHandle_t,
                                                          unsigned int[DCGM_MAX_NUM_DEVICES], int *);
typedef dcgmReturn_t (*dcgm_get_gpu_instance_hierarchy_fn)(dcgmHandle_t, dcgmMigHierarchy_v2 *);
typedef dcgmReturn_t (*dcgm_group_create_fn)(dcgmHandle_t, int, const char *, dcgmGpuGrp_t *);
typedef dcgmReturn_t (*dcgm_group_destroy_fn)(dcgmHandle_t, dcgmGpuGrp_t);
typedef dcgmReturn_t (*dcgm_group_add_entity_fn)(dcgmHandle_t, dcgmGpuGrp_t,
                                                 dcgm_field_entity_group_t, dcgm_field_eid_t);
typedef dcgmReturn_t (*dcgm_field_group_create_fn)(dcgmHandle_t, int, const unsigned short *,
                                                   const char *, dcgmFieldGrp_t *);
typedef dcgmReturn_t (*dcgm_field_group_destroy_fn)(dcgmHandle_t, dcgmFieldGrp_t);
typedef dcgmReturn_t (*dcgm_watch_fields_fn)(dcgmHandle_t, dcgmGpuGrp_t, dcgmFieldGrp_t,
                                             long long, double, int);
typedef dcgmReturn_t (*dcgm_unwatch_fields_fn)(dcgmHandle_t, dcgmGpuGrp_t, dcgmFieldGrp_t);
typedef dcgmReturn_t (*dcgm_update_all_fields_fn)(dcgmHandle_t, int);
typedef dcgmReturn_t (*dcgm_entities_get_latest_values_fn)(dcgmHandle_t, dcgmGroupEntityPair_t[],
                                                           unsigned int, unsigned short[],
                                                           unsigned int, unsigned int,
                                                           dcgmFieldValue_v2[]);
typedef dcgmReturn_t (*dcgm_prof_get_supported_metric_groups_fn)(dcgmHandle_t,
                                                                 dcgmProfGetMetricGroups_v3 *);

#endif
