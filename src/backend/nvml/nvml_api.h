/*
 * nvml_api.h — the NVML types and prototypes mig-gpu-mon uses, declared by us.
 *
 * No vendor nvml.h is installed on build machines, and the binary must start
 * on hosts without a driver, so we declare exactly what we call. Layouts and
 * version constants follow NVIDIA's public header (NVML 13.3, checked against
 * the 535.129.03 / 550.144.03 / 570.211.01 driver headers); see
 * docs/nvml-facts.md in the shared docs. Every size and offset we depend on is
 * pinned by a _Static_assert at the bottom, so a wrong declaration fails the
 * build instead of silently corrupting memory.
 *
 * This header is shared by the backend (src/backend/) and the simulator
 * (sim/), which implements the same ABI.
 */
#ifndef MIGMON_NVML_API_H
#define MIGMON_NVML_API_H

#include <stddef.h>

typedef int nvmlReturn_t;

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_ALREADY_INITIALIZED = 5,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_INSUFFICIENT_POWER = 8,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_IRQ_ISSUE = 11,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_CORRUPTED_INFOROM = 14,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_RESET_REQUIRED = 16,
    NVML_ERROR_OPERATING_SYSTEM = 17,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
    NVML_ERROR_IN_USE = 19,
    NVML_ERROR_MEMORY = 20,
    NVML_ERROR_NO_DATA = 21,
    NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
    NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
    NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_DEPRECATED = 26,
    NVML_ERROR_NOT_READY = 27,
    NVML_ERROR_GPU_NOT_FOUND = 28,
    NVML_ERROR_INVALID_STATE = 29,
    NVML_ERROR_UNKNOWN = 999,
};

/* Opaque handles (pointers, 8 bytes on LP64). */
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlGpmSample_st *nvmlGpmSample_t;

#define NVML_STRUCT_VERSION(size, ver) ((unsigned int)(size) | ((unsigned int)(ver) << 24U))

#define NVML_VALUE_NOT_AVAILABLE_ULL 0xFFFFFFFFFFFFFFFFULL
#define NVML_INVALID_INSTANCE_ID 0xFFFFFFFFu

#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16

#define NVML_INIT_FLAG_NO_GPUS 1u

/* ---- identity ---- */
typedef struct {
    char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef unsigned int nvmlDeviceArchitecture_t;
enum {
    NVML_DEVICE_ARCH_KEPLER = 2,
    NVML_DEVICE_ARCH_MAXWELL = 3,
    NVML_DEVICE_ARCH_PASCAL = 4,
    NVML_DEVICE_ARCH_VOLTA = 5,
    NVML_DEVICE_ARCH_TURING = 6,
    NVML_DEVICE_ARCH_AMPERE = 7,
    NVML_DEVICE_ARCH_ADA = 8,
    NVML_DEVICE_ARCH_HOPPER = 9,
    NVML_DEVICE_ARCH_BLACKWELL = 10,
    NVML_DEVICE_ARCH_RUBIN = 13,
};
#define NVML_DEVICE_ARCH_UNKNOWN 0xffffffffu

/* ---- metrics ---- */
typedef struct {
    unsigned int gpu;
    unsigned int memory;
} nvmlUtilization_t;

typedef struct {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

typedef struct {
    unsigned int version;
    unsigned long long total;
    unsigned long long reserved;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_v2_t;
/* NVIDIA's macro, not the bare 2 the header comment suggests
 * (NVIDIA/nvidia-settings#78): 40 bytes | 2 << 24. */
#define nvmlMemory_v2 NVML_STRUCT_VERSION(sizeof(nvmlMemory_v2_t), 2)

typedef int nvmlTemperatureSensors_t;
#define NVML_TEMPERATURE_GPU 0

typedef struct {
    unsigned int version;
    nvmlTemperatureSensors_t sensorType;
    int temperature;
} nvmlTemperature_t;
#define nvmlTemperature_v1 NVML_STRUCT_VERSION(sizeof(nvmlTemperature_t), 1)

typedef int nvmlTemperatureThresholds_t;
#define NVML_TEMPERATURE_THRESHOLD_SHUTDOWN 0
#define NVML_TEMPERATURE_THRESHOLD_SLOWDOWN 1

typedef int nvmlClockType_t;
#define NVML_CLOCK_GRAPHICS 0
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_CLOCK_VIDEO 3

typedef int nvmlPstates_t;
#define NVML_PSTATE_UNKNOWN 32

typedef int nvmlPcieUtilCounter_t;
#define NVML_PCIE_UTIL_TX_BYTES 0
#define NVML_PCIE_UTIL_RX_BYTES 1

typedef int nvmlEnableState_t;
#define NVML_FEATURE_DISABLED 0
#define NVML_FEATURE_ENABLED 1

typedef int nvmlMemoryErrorType_t;
#define NVML_MEMORY_ERROR_TYPE_CORRECTED 0
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1
typedef int nvmlEccCounterType_t;
#define NVML_VOLATILE_ECC 0
#define NVML_AGGREGATE_ECC 1

/* Clock event ("throttle") reason bits. */
#define NVML_CLOCKS_EVENT_REASON_GPU_IDLE 0x001ULL
#define NVML_CLOCKS_EVENT_REASON_APP_CLOCKS 0x002ULL
#define NVML_CLOCKS_EVENT_REASON_SW_POWER_CAP 0x004ULL
#define NVML_CLOCKS_THROTTLE_REASON_HW_SLOWDOWN 0x008ULL
#define NVML_CLOCKS_EVENT_REASON_SYNC_BOOST 0x010ULL
#define NVML_CLOCKS_EVENT_REASON_SW_THERMAL 0x020ULL
#define NVML_CLOCKS_THROTTLE_REASON_HW_THERMAL 0x040ULL
#define NVML_CLOCKS_THROTTLE_REASON_HW_POWER_BRAKE 0x080ULL
#define NVML_CLOCKS_EVENT_REASON_DISPLAY_CLOCK 0x100ULL
#define NVML_CLOCKS_EVENT_REASON_ALL 0x1FFULL

/* ---- samples ---- */
typedef int nvmlSamplingType_t;
#define NVML_TOTAL_POWER_SAMPLES 0
#define NVML_GPU_UTILIZATION_SAMPLES 1
#define NVML_MEMORY_UTILIZATION_SAMPLES 2
#define NVML_ENC_UTILIZATION_SAMPLES 3
#define NVML_DEC_UTILIZATION_SAMPLES 4
#define NVML_PROCESSOR_CLK_SAMPLES 5
#define NVML_MEMORY_CLK_SAMPLES 6

typedef int nvmlValueType_t;
#define NVML_VALUE_TYPE_DOUBLE 0
#define NVML_VALUE_TYPE_UNSIGNED_INT 1
#define NVML_VALUE_TYPE_UNSIGNED_LONG 2
#define NVML_VALUE_TYPE_UNSIGNED_LONG_LONG 3
#define NVML_VALUE_TYPE_SIGNED_LONG_LONG 4
#define NVML_VALUE_TYPE_SIGNED_INT 5

typedef union {
    double dVal;
    int siVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    signed long long sllVal;
    unsigned short usVal;
} nvmlValue_t;

typedef struct {
    unsigned long long timeStamp; /* µs, CPU clock */
    nvmlValue_t sampleValue;
} nvmlSample_t;

/* ---- per-process utilisation ---- */
typedef struct {
    unsigned int pid;
    unsigned long long timeStamp;
    unsigned int smUtil;
    unsigned int memUtil;
    unsigned int encUtil;
    unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

typedef struct {
    unsigned long long timeStamp; /* first here, unlike the sample struct */
    unsigned int pid;
    unsigned int smUtil;
    unsigned int memUtil;
    unsigned int encUtil;
    unsigned int decUtil;
    unsigned int jpgUtil;
    unsigned int ofaUtil;
} nvmlProcessUtilizationInfo_v1_t;

typedef struct {
    unsigned int version;
    unsigned int processSamplesCount;
    unsigned long long lastSeenTimeStamp;
    nvmlProcessUtilizationInfo_v1_t *procUtilArray;
} nvmlProcessesUtilizationInfo_v1_t;
#define nvmlProcessesUtilizationInfo_v1 \
    NVML_STRUCT_VERSION(sizeof(nvmlProcessesUtilizationInfo_v1_t), 1)

/* ---- running processes ---- */
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;

/* Only the 535.43.02–535.86.x headers: the v2 fields plus protected memory,
 * written by _v3 with no version bump. */
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
    unsigned long long usedGpuCcProtectedMemory;
} nvmlProcessInfo_535cc_t;

/* ---- MIG ---- */
#define NVML_DEVICE_MIG_DISABLE 0
#define NVML_DEVICE_MIG_ENABLE 1

typedef struct {
    unsigned int multiprocessorCount;
    unsigned int sharedCopyEngineCount;
    unsigned int sharedDecoderCount;
    unsigned int sharedEncoderCount;
    unsigned int sharedJpegCount;
    unsigned int sharedOfaCount;
    unsigned int gpuInstanceSliceCount;
    unsigned int computeInstanceSliceCount;
    unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

typedef struct {
    unsigned int id;
    unsigned int isP2pSupported;
    unsigned int sliceCount;
    unsigned int instanceCount;
    unsigned int multiprocessorCount;
    unsigned int copyEngineCount;
    unsigned int decoderCount;
    unsigned int encoderCount;
    unsigned int jpegCount;
    unsigned int ofaCount;
    unsigned long long memorySizeMB;
} nvmlGpuInstanceProfileInfo_t;

#define NVML_GPU_INSTANCE_PROFILE_1_SLICE 0
#define NVML_GPU_INSTANCE_PROFILE_7_SLICE 4
#define NVML_GPU_INSTANCE_PROFILE_8_SLICE 5

/* ---- field values ---- */
typedef struct {
    unsigned int fieldId;
    unsigned int scopeId;
    long long timestamp;
    long long latencyUsec;
    nvmlValueType_t valueType;
    nvmlReturn_t nvmlReturn;
    nvmlValue_t value;
} nvmlFieldValue_t;

/* ---- GPM (GPU Performance Monitoring; Hopper and later, Linux) ---- */
typedef struct {
    unsigned int version; /* NVML_GPM_SUPPORT_VERSION, plain 1 */
    unsigned int isSupportedDevice;
} nvmlGpmSupport_t;
#define NVML_GPM_SUPPORT_VERSION 1

/* Metric ids (nvmlGpmMetricId_t); percentages are 0.0-100.0, rates "MiB/s"
 * per the header (the monitor converts them with 10^6, docs/mig-utilisation.md). */
typedef enum {
    NVML_GPM_METRIC_GRAPHICS_UTIL = 1,
    NVML_GPM_METRIC_SM_UTIL = 2,
    NVML_GPM_METRIC_SM_OCCUPANCY = 3,
    NVML_GPM_METRIC_INTEGER_UTIL = 4,
    NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5,
    NVML_GPM_METRIC_DFMA_TENSOR_UTIL = 6,
    NVML_GPM_METRIC_HMMA_TENSOR_UTIL = 7,
    NVML_GPM_METRIC_IMMA_TENSOR_UTIL = 9,
    NVML_GPM_METRIC_DRAM_BW_UTIL = 10,
    NVML_GPM_METRIC_FP64_UTIL = 11,
    NVML_GPM_METRIC_FP32_UTIL = 12,
    NVML_GPM_METRIC_FP16_UTIL = 13,
    NVML_GPM_METRIC_PCIE_TX_PER_SEC = 20,
    NVML_GPM_METRIC_PCIE_RX_PER_SEC = 21,
    NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC = 60,
    NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC = 61,
} nvmlGpmMetricId_t;

/* NVML_GPM_METRIC_MAX by header: 98 up to driver 570, 210 for 575-590, 333
 * from 595 (NVML 13.2). The request struct embeds an array of that length,
 * and the version field (plain 1) does not encode it, so we declare the
 * largest known length: a driver built with any of them finds at least as
 * many entries as it could touch. We only ever ask for ids below 98. */
#define NVML_GPM_METRIC_MAX_R570 98
#define NVML_GPM_METRIC_MAX_R590 210
#define NVML_GPM_METRIC_MAX_R595 333
#define NVML_GPM_METRICS_GET_VERSION 1

typedef struct {
    char *shortName; /* owned by NVML; may be NULL */
    char *longName;
    char *unit;
} nvmlGpmMetricInfo_t;

typedef struct {
    unsigned int metricId;   /* nvmlGpmMetricId_t, filled by the caller */
    nvmlReturn_t nvmlReturn; /* per metric: check before reading value */
    double value;
    nvmlGpmMetricInfo_t metricInfo;
} nvmlGpmMetric_t;

typedef struct {
    unsigned int version;    /* NVML_GPM_METRICS_GET_VERSION */
    unsigned int numMetrics; /* entries of metrics[] to compute */
    nvmlGpmSample_t sample1;
    nvmlGpmSample_t sample2;
    nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX_R595];
} nvmlGpmMetricsGet_t;

/* Layout pins (x86_64 / LP64). Values from docs/nvml-facts.md. */
_Static_assert(sizeof(nvmlDevice_t) == 8, "opaque handle");
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t");
_Static_assert(offsetof(nvmlPciInfo_t, busId) == 36, "nvmlPciInfo_t.busId");
_Static_assert(offsetof(nvmlPciInfo_t, pciDeviceId) == 28, "nvmlPciInfo_t.pciDeviceId");
_Static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t");
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t");
_Static_assert(nvmlMemory_v2 == 0x02000028u, "nvmlMemory_v2 version");
_Static_assert(sizeof(nvmlTemperature_t) == 12, "nvmlTemperature_t");
_Static_assert(nvmlTemperature_v1 == 0x0100000Cu, "nvmlTemperature_v1");
_Static_assert(sizeof(nvmlSample_t) == 16, "nvmlSample_t");
_Static_assert(sizeof(nvmlValue_t) == 8, "nvmlValue_t");
_Static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32, "nvmlProcessUtilizationSample_t");
_Static_assert(offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16, "smUtil offset");
_Static_assert(sizeof(nvmlProcessUtilizationInfo_v1_t) == 40, "nvmlProcessUtilizationInfo_v1_t");
_Static_assert(sizeof(nvmlProcessesUtilizationInfo_v1_t) == 24, "nvmlProcessesUtilizationInfo");
_Static_assert(nvmlProcessesUtilizationInfo_v1 == 0x01000018u, "procutil version");
_Static_assert(sizeof(nvmlProcessInfo_v1_t) == 16, "nvmlProcessInfo_v1_t");
_Static_assert(sizeof(nvmlProcessInfo_v2_t) == 24, "nvmlProcessInfo_v2_t");
_Static_assert(offsetof(nvmlProcessInfo_v2_t, gpuInstanceId) == 16, "gpuInstanceId offset");
_Static_assert(sizeof(nvmlProcessInfo_535cc_t) == 32, "535 cc process struct");
_Static_assert(sizeof(nvmlDeviceAttributes_t) == 40, "nvmlDeviceAttributes_t");
_Static_assert(offsetof(nvmlDeviceAttributes_t, gpuInstanceSliceCount) == 24, "GI slices");
_Static_assert(offsetof(nvmlDeviceAttributes_t, memorySizeMB) == 32, "memorySizeMB");
_Static_assert(sizeof(nvmlGpuInstanceProfileInfo_t) == 48, "nvmlGpuInstanceProfileInfo_t");
_Static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t");
_Static_assert(offsetof(nvmlFieldValue_t, scopeId) == 4, "nvmlFieldValue_t.scopeId");
_Static_assert(offsetof(nvmlFieldValue_t, timestamp) == 8, "nvmlFieldValue_t.timestamp");
_Static_assert(offsetof(nvmlFieldValue_t, latencyUsec) == 16, "nvmlFieldValue_t.latencyUsec");
_Static_assert(offsetof(nvmlFieldValue_t, valueType) == 24, "nvmlFieldValue_t.valueType");
_Static_assert(offsetof(nvmlFieldValue_t, nvmlReturn) == 28, "nvmlFieldValue_t.nvmlReturn");
_Static_assert(offsetof(nvmlFieldValue_t, value) == 32, "nvmlFieldValue_t.value");
_Static_assert(sizeof(nvmlGpmSupport_t) == 8, "nvmlGpmSupport_t");
_Static_assert(sizeof(nvmlGpmMetric_t) == 40, "nvmlGpmMetric_t");
_Static_assert(offsetof(nvmlGpmMetric_t, value) == 8, "nvmlGpmMetric_t.value");
_Static_assert(offsetof(nvmlGpmMetricsGet_t, sample1) == 8, "nvmlGpmMetricsGet_t.sample1");
_Static_assert(offsetof(nvmlGpmMetricsGet_t, metrics) == 24, "nvmlGpmMetricsGet_t.metrics");
_Static_assert(sizeof(nvmlGpmMetricsGet_t) == 13344, "nvmlGpmMetricsGet_t (595+ length)");

/*
 * Function prototypes, by exported symbol name. Versioned names share the
 * prototype of the base type named in the comment.
 */
typedef nvmlReturn_t (*nvml_fn_void)(void);
typedef nvmlReturn_t (*nvml_fn_init_flags)(unsigned int);
typedef const char *(*nvml_fn_error_string)(nvmlReturn_t);
typedef nvmlReturn_t (*nvml_fn_int_out)(int *);
typedef nvmlReturn_t (*nvml_fn_str)(char *, unsigned int);
typedef nvmlReturn_t (*nvml_fn_int_out)(int *);
typedef nvmlReturn_t (*nvml_fn_uint_out)(unsigned int *);
typedef nvmlReturn_t (*nvml_fn_handle_by_index)(unsigned int, nvmlDevice_t *);
typedef nvmlReturn_t (*nvml_fn_dev_str)(nvmlDevice_t, char *, unsigned int);
typedef nvmlReturn_t (*nvml_fn_dev_uint)(nvmlDevice_t, unsigned int *);
typedef nvmlReturn_t (*nvml_fn_dev_ull)(nvmlDevice_t, unsigned long long *);
typedef nvmlReturn_t (*nvml_fn_dev_int2)(nvmlDevice_t, int *, int *);
typedef nvmlReturn_t (*nvml_fn_dev_uint2)(nvmlDevice_t, unsigned int *, unsigned int *);
typedef nvmlReturn_t (*nvml_fn_dev_pci)(nvmlDevice_t, nvmlPciInfo_t *);
typedef nvmlReturn_t (*nvml_fn_dev_util)(nvmlDevice_t, nvmlUtilization_t *);
typedef nvmlReturn_t (*nvml_fn_dev_mem)(nvmlDevice_t, nvmlMemory_t *);
typedef nvmlReturn_t (*nvml_fn_dev_mem2)(nvmlDevice_t, nvmlMemory_v2_t *);
typedef nvmlReturn_t (*nvml_fn_dev_temp)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int *);
typedef nvmlReturn_t (*nvml_fn_dev_tempv)(nvmlDevice_t, nvmlTemperature_t *);
typedef nvmlReturn_t (*nvml_fn_dev_thresh)(nvmlDevice_t, nvmlTemperatureThresholds_t,
                                           unsigned int *);
typedef nvmlReturn_t (*nvml_fn_dev_clock)(nvmlDevice_t, nvmlClockType_t, unsigned int *);
typedef nvmlReturn_t (*nvml_fn_dev_pstate)(nvmlDevice_t, nvmlPstates_t *);
typedef nvmlReturn_t (*nvml_fn_dev_pcie_tp)(nvmlDevice_t, nvmlPcieUtilCounter_t, unsigned int *);
typedef nvmlReturn_t (*nvml_fn_dev_ecc_mode)(nvmlDevice_t, nvmlEnableState_t *,
                                             nvmlEnableState_t *);
typedef nvmlReturn_t (*nvml_fn_dev_ecc_count)(nvmlDevice_t, nvmlMemoryErrorType_t,
                                              nvmlEccCounterType_t, unsigned long long *);
typedef nvmlReturn_t (*nvml_fn_dev_codec)(nvmlDevice_t, unsigned int *, unsigned int *);
typedef nvmlReturn_t (*nvml_fn_dev_samples)(nvmlDevice_t, nvmlSamplingType_t, unsigned long long,
                                            nvmlValueType_t *, unsigned int *, nvmlSample_t *);
typedef nvmlReturn_t (*nvml_fn_dev_proc_util)(nvmlDevice_t, nvmlProcessUtilizationSample_t *,
                                              unsigned int *, unsigned long long);
typedef nvmlReturn_t (*nvml_fn_dev_procs_util_info)(nvmlDevice_t,
                                                    nvmlProcessesUtilizationInfo_v1_t *);
/* The process array is void *: its stride depends on the symbol and driver. */
typedef nvmlReturn_t (*nvml_fn_dev_procs)(nvmlDevice_t, unsigned int *, void *);
typedef nvmlReturn_t (*nvml_fn_dev_mig_handle)(nvmlDevice_t, unsigned int, nvmlDevice_t *);
typedef nvmlReturn_t (*nvml_fn_dev_parent)(nvmlDevice_t, nvmlDevice_t *);
typedef nvmlReturn_t (*nvml_fn_dev_attrs)(nvmlDevice_t, nvmlDeviceAttributes_t *);
typedef nvmlReturn_t (*nvml_fn_dev_gi_profile)(nvmlDevice_t, unsigned int,
                                               nvmlGpuInstanceProfileInfo_t *);
typedef nvmlReturn_t (*nvml_fn_dev_fields)(nvmlDevice_t, int, nvmlFieldValue_t *);
typedef nvmlReturn_t (*nvml_fn_dev_gpm_support)(nvmlDevice_t, nvmlGpmSupport_t *);
typedef nvmlReturn_t (*nvml_fn_gpm_sample_alloc)(nvmlGpmSample_t *);
typedef nvmlReturn_t (*nvml_fn_gpm_sample_free)(nvmlGpmSample_t);
typedef nvmlReturn_t (*nvml_fn_gpm_sample_get)(nvmlDevice_t, nvmlGpmSample_t);
typedef nvmlReturn_t (*nvml_fn_gpm_mig_sample_get)(nvmlDevice_t, unsigned int, nvmlGpmSample_t);
typedef nvmlReturn_t (*nvml_fn_gpm_metrics_get)(nvmlGpmMetricsGet_t *);

/* ---- added for the simulator (sim/); also usable by the backend ---- */
#define NVML_INIT_FLAG_NO_ATTACH 2u
#define NVML_TEMPERATURE_THRESHOLD_MEM_MAX 2
#define NVML_TEMPERATURE_THRESHOLD_GPU_MAX 3
#define NVML_MODULE_POWER_SAMPLES 7
#define NVML_JPG_UTILIZATION_SAMPLES 8 /* 550 and later */
#define NVML_OFA_UTILIZATION_SAMPLES 9 /* 550 and later */

/* Field ids the simulator serves (nvml.h NVML_FI_DEV_*). */
#define NVML_FI_DEV_ECC_CURRENT 1
#define NVML_FI_DEV_ECC_PENDING 2
#define NVML_FI_DEV_ECC_SBE_VOL_TOTAL 3
#define NVML_FI_DEV_ECC_DBE_VOL_TOTAL 4
#define NVML_FI_DEV_ECC_SBE_AGG_TOTAL 5
#define NVML_FI_DEV_ECC_DBE_AGG_TOTAL 6
#define NVML_FI_DEV_MEMORY_TEMP 82
#define NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION 83
#define NVML_FI_DEV_POWER_AVERAGE 185
#define NVML_FI_DEV_POWER_INSTANT 186
#define NVML_FI_DEV_POWER_MIN_LIMIT 187
#define NVML_FI_DEV_POWER_MAX_LIMIT 188
#define NVML_FI_DEV_POWER_DEFAULT_LIMIT 189
#define NVML_FI_DEV_POWER_CURRENT_LIMIT 190
#define NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT 193
#define NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT 194
#define NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT 195
#define NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT 196

#define NVML_GPU_INSTANCE_PROFILE_2_SLICE 1
#define NVML_GPU_INSTANCE_PROFILE_3_SLICE 2
#define NVML_GPU_INSTANCE_PROFILE_4_SLICE 3
#define NVML_GPU_INSTANCE_PROFILE_6_SLICE 6
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1 7
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1 8
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2 9

/* nvmlDeviceGetPciInfoExt (550 and later). */
typedef struct {
    unsigned int version;
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    unsigned int baseClass;
    unsigned int subClass;
    char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfoExt_v1_t;
#define nvmlPciInfoExt_v1 NVML_STRUCT_VERSION(sizeof(nvmlPciInfoExt_v1_t), 1)

/* nvmlDeviceGetRunningProcessDetailList (535.104.05 and later). */
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
    unsigned long long usedGpuCcProtectedMemory;
} nvmlProcessDetail_v1_t;

typedef struct {
    unsigned int version; /* nvmlProcessDetailList_v1 */
    unsigned int mode;    /* 0 compute, 1 graphics, 2 MPS (3 = all: 13.x headers only) */
    unsigned int numProcArrayEntries;
    nvmlProcessDetail_v1_t *procArray;
} nvmlProcessDetailList_v1_t;
#define nvmlProcessDetailList_v1 NVML_STRUCT_VERSION(sizeof(nvmlProcessDetailList_v1_t), 1)

/* nvmlDeviceGetConfComputeMemSizeInfo (535.43.02 and later). */
typedef struct {
    unsigned long long protectedMemSizeKib;
    unsigned long long unprotectedMemSizeKib;
} nvmlConfComputeMemSizeInfo_t;

_Static_assert(sizeof(nvmlPciInfoExt_v1_t) == 64, "nvmlPciInfoExt_v1_t");
_Static_assert(nvmlPciInfoExt_v1 == 0x01000040u, "nvmlPciInfoExt_v1");
_Static_assert(sizeof(nvmlProcessDetail_v1_t) == 32, "nvmlProcessDetail_v1_t");
_Static_assert(sizeof(nvmlProcessDetailList_v1_t) == 24, "nvmlProcessDetailList_v1_t");
_Static_assert(nvmlProcessDetailList_v1 == 0x01000018u, "nvmlProcessDetailList_v1");
_Static_assert(sizeof(nvmlConfComputeMemSizeInfo_t) == 16, "nvmlConfComputeMemSizeInfo_t");

typedef nvmlReturn_t (*nvml_fn_handle_by_str)(const char *, nvmlDevice_t *);
typedef nvmlReturn_t (*nvml_fn_dev_pci_ext)(nvmlDevice_t, nvmlPciInfoExt_v1_t *);
typedef nvmlReturn_t (*nvml_fn_dev_detail_list)(nvmlDevice_t, nvmlProcessDetailList_v1_t *);
typedef nvmlReturn_t (*nvml_fn_dev_cc_mem)(nvmlDevice_t, nvmlConfComputeMemSizeInfo_t *);

/* ---- health counters (backend/nvml/nvml_health.c) ---- */
typedef int nvmlPageRetirementCause_t;
#define NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS 0
#define NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR 1

/* The links a device may have: 6 in the 410 header, 12 up to 515, 18 from
 * 520 to 575, 36 in the 13.x headers. A link past the device's last
 * answers INVALID_ARGUMENT; a device without NVLink NOT_SUPPORTED. */
#define NVML_NVLINK_MAX_LINKS 36
typedef int nvmlNvLinkErrorCounter_t;
#define NVML_NVLINK_ERROR_DL_REPLAY 0   /* transmit replays */
#define NVML_NVLINK_ERROR_DL_RECOVERY 1 /* transmit recoveries */
#define NVML_NVLINK_ERROR_DL_CRC_FLIT 2 /* receive flow-control digit CRC errors */
#define NVML_NVLINK_ERROR_DL_CRC_DATA 3 /* receive data CRC errors */
#define NVML_NVLINK_ERROR_DL_ECC_DATA 4

typedef int nvmlPerfPolicyType_t;
#define NVML_PERF_POLICY_POWER 0
#define NVML_PERF_POLICY_THERMAL 1
#define NVML_PERF_POLICY_SYNC_BOOST 2
#define NVML_PERF_POLICY_BOARD_LIMIT 3
#define NVML_PERF_POLICY_LOW_UTILIZATION 4
#define NVML_PERF_POLICY_RELIABILITY 5
#define NVML_PERF_POLICY_TOTAL_APP_CLOCKS 10
#define NVML_PERF_POLICY_TOTAL_BASE_CLOCKS 11
#define NVML_PERF_POLICY_COUNT 12

typedef struct {
    unsigned long long referenceTime; /* CPU timestamp, µs */
    unsigned long long violationTime; /* ns */
} nvmlViolationTime_t;

/* NVLink traffic, KiB (hdr), running counters; scopeId is the link, or
 * NVML_FI_SCOPE_ALL_LINKS (UINT_MAX) for the sum over every link. */
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX 138
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX 139
#define NVML_FI_SCOPE_ALL_LINKS 0xFFFFFFFFu

_Static_assert(sizeof(nvmlViolationTime_t) == 16, "nvmlViolationTime_t");
_Static_assert(offsetof(nvmlViolationTime_t, violationTime) == 8, "violationTime offset");

typedef nvmlReturn_t (*nvml_fn_dev_remapped_rows)(nvmlDevice_t, unsigned int *, unsigned int *,
                                                  unsigned int *, unsigned int *);
typedef nvmlReturn_t (*nvml_fn_dev_retired_pages)(nvmlDevice_t, nvmlPageRetirementCause_t,
                                                  unsigned int *, unsigned long long *);
typedef nvmlReturn_t (*nvml_fn_dev_enable_state)(nvmlDevice_t, nvmlEnableState_t *);
typedef nvmlReturn_t (*nvml_fn_dev_nvlink_state)(nvmlDevice_t, unsigned int, nvmlEnableState_t *);
typedef nvmlReturn_t (*nvml_fn_dev_nvlink_error)(nvmlDevice_t, unsigned int,
                                                 nvmlNvLinkErrorCounter_t, unsigned long long *);
typedef nvmlReturn_t (*nvml_fn_dev_violation)(nvmlDevice_t, nvmlPerfPolicyType_t,
                                              nvmlViolationTime_t *);

/* ---- events (nvmlEventSetCreate ... nvmlEventSetWait_v2) ---- */
typedef struct nvmlEventSet_st *nvmlEventSet_t;
#define NVML_EVENT_TYPE_SINGLE_BIT_ECC 0x0001ULL
#define NVML_EVENT_TYPE_DOUBLE_BIT_ECC 0x0002ULL
#define NVML_EVENT_TYPE_PSTATE 0x0004ULL
#define NVML_EVENT_TYPE_XID 0x0008ULL
#define NVML_EVENT_TYPE_CLOCK 0x0010ULL
/* Not NVML's: the monitor's mark for a structured GPU operational event
 * (nvmlEventSetWait_v3), far above every NVML event bit. */
#define MIGMON_EVENT_TYPE_OPERATIONAL (1ULL << 63)
/* eventData for an Xid the driver cannot name; gpuInstanceId and
 * computeInstanceId when an event is not attributable to an instance. */
#define NVML_EVENT_XID_UNKNOWN 999ULL
#define NVML_EVENT_NO_INSTANCE 0xFFFFFFFFu
typedef struct {
    nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData; /* the Xid for an Xid event, else 0 */
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlEventData_t;
_Static_assert(sizeof(nvmlEventData_t) == 32, "nvmlEventData_t");
_Static_assert(offsetof(nvmlEventData_t, eventData) == 16, "nvmlEventData_t.eventData");
_Static_assert(offsetof(nvmlEventData_t, gpuInstanceId) == 24, "nvmlEventData_t.gpuInstanceId");
typedef nvmlReturn_t (*nvml_fn_event_set_create)(nvmlEventSet_t *);
typedef nvmlReturn_t (*nvml_fn_event_set_free)(nvmlEventSet_t);
typedef nvmlReturn_t (*nvml_fn_dev_register_events)(nvmlDevice_t, unsigned long long,
                                                    nvmlEventSet_t);
typedef nvmlReturn_t (*nvml_fn_event_set_wait)(nvmlEventSet_t, nvmlEventData_t *, unsigned int);

/* ---- entry points deprecated in NVML 13.0 and their replacements ---- */
/*
 * nvml.h 13.x marks these DEPRECATED(13.0); NVIDIA's NVML reference says
 * they "will be removed in CUDA 14.0", a removed one answering
 * NVML_ERROR_DEPRECATED (docs/nvml.md, "Deprecated calls"):
 * nvmlDeviceGetTemperature -> nvmlDeviceGetTemperatureV (565 and later),
 * nvmlDeviceGetCurrentClocksThrottleReasons -> ...ClocksEventReasons
 * (535.43.02 and later), nvmlDeviceGetViolationStatus -> the field values
 * below (its own comment in nvml.h 13.1 to 13.3 gives the translation).
 */

/* Perf-policy counters, ns (nvml.h: NVML_PERF_POLICY_POWER ->
 * NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP, which the header defines
 * as NVML_FI_DEV_PERF_POLICY_POWER, 74, in every header from 12.x to
 * 13.3). The thermal translation, ..._SW_THERM_SLOWDOWN, is 251 in the
 * 12.9 and 13.0 headers (drivers 575 and 580) and 269 from 13.1 (driver
 * 590; 251 became NVML_FI_PWR_SMOOTHING_ENABLED there): its number depends
 * on the driver's branch. */
#define NVML_FI_DEV_PERF_POLICY_POWER 74
#define NVML_FI_DEV_PERF_POLICY_THERMAL 75
#define NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP NVML_FI_DEV_PERF_POLICY_POWER
#define NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN_R575 251
#define NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN 269

/* ---- GPU-instance profile indices (nvml.h 13.3 NVML_GPU_INSTANCE_PROFILE_*) ---- */
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_GFX 0x0A
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_GFX 0x0B
#define NVML_GPU_INSTANCE_PROFILE_4_SLICE_GFX 0x0C
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_NO_ME 0x0D
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_NO_ME 0x0E
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME 0x0F
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME 0x10
#define NVML_GPU_INSTANCE_PROFILE_3_SLICE_GFX 0x11
#define NVML_GPU_INSTANCE_PROFILE_COUNT 0x12

/* ---- memory health (nvml.h 13.1 to 13.3) ---- */
/* nvmlDeviceGetRemappedRows_v2 (13.2 header, driver 595): the v1 counts
 * split into active and inactive remaps. No version field. */
typedef struct {
    unsigned int corrActiveRemaps;
    unsigned int corrInactiveRemaps;
    unsigned int uncActiveRemaps;
    unsigned int uncInactiveRemaps;
    unsigned int bPending;
    unsigned int bFailureOccurred;
} nvmlRemappedRowsInfo_v2_t;
/* nvmlDeviceGetUnrepairableMemoryFlag_v1 (13.1 header, driver 590;
 * "Hopper or newer"). The header's struct has no version field, although
 * the call's doc lists ARGUMENT_VERSION_MISMATCH among its answers. */
typedef struct {
    unsigned int bUnrepairableMemory;
} nvmlUnrepairableMemoryStatus_v1_t;
/* nvmlDeviceGetBankRemapperStatus_v1 (NVML 615 changelog). Newer than the
 * 13.3 header: member order from NVIDIA's NVML reference pages and a
 * public ABI copy; not yet checked against nvml.h. */
typedef struct {
    unsigned int maxSpareGroupCount; /* groups with every spare left */
    unsigned int noSpareGroupCount;  /* groups with no spare left */
} nvmlEccBankRemapperHistogram_v1_t;
typedef struct {
    unsigned int activeRemappings;
    unsigned int inactiveRemappings;
    unsigned int bPending; /* a bank remap waits (1) */
    nvmlEccBankRemapperHistogram_v1_t histogram;
} nvmlEccBankRemapperStatus_v1_t;

_Static_assert(sizeof(nvmlRemappedRowsInfo_v2_t) == 24, "nvmlRemappedRowsInfo_v2_t");
_Static_assert(offsetof(nvmlRemappedRowsInfo_v2_t, bPending) == 16, "RemappedRowsInfo_v2.bPending");
_Static_assert(sizeof(nvmlUnrepairableMemoryStatus_v1_t) == 4, "nvmlUnrepairableMemoryStatus");
_Static_assert(sizeof(nvmlEccBankRemapperStatus_v1_t) == 20, "nvmlEccBankRemapperStatus_v1_t");

typedef nvmlReturn_t (*nvml_fn_dev_remapped_rows_v2)(nvmlDevice_t, nvmlRemappedRowsInfo_v2_t *);
typedef nvmlReturn_t (*nvml_fn_dev_unrepairable)(nvmlDevice_t,
                                                 nvmlUnrepairableMemoryStatus_v1_t *);
typedef nvmlReturn_t (*nvml_fn_dev_bank_remapper)(nvmlDevice_t, nvmlEccBankRemapperStatus_v1_t *);

/* ---- GPU operational events (NVML 615 changelog: nvmlEventSetWait_v3) ----
 * Newer than the 13.3 header. Member names and order from NVIDIA's NVML
 * reference (structnvmlEventSetWait__v3__t, ..._GpuOperationalEventConfig_v1,
 * ..._LegacyXid_v1) and a public ABI copy; the sizes below follow from them
 * and are not yet checked against nvml.h. The numeric values of
 * nvmlEventDataType_t and of the severities are not published outside the
 * header, so the monitor does not depend on them: an event-bit record has
 * a non-zero eventType, a structured one nvmlEventTypeNone (0), as the
 * reference says. */
#define NVML_EVENT_TYPE_NONE 0x0ULL
#define NVML_GPU_INSTANCE_ID_ANY 0xFFFFFFFFu
#define NVML_COMPUTE_INSTANCE_ID_ANY 0xFFFFFFFFu
typedef struct {
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE]; /* the GPU, "GPU-..." */
    unsigned int minLogLevel;                  /* 0: every level (the zeroed default) */
    unsigned int minSeverity;                  /* 0: every severity */
} nvmlGpuOperationalEventConfig_v1_t;
typedef struct {
    unsigned int timeoutMs; /* in */
    unsigned int dataType;  /* nvmlEventDataType_t */
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    char sourceModule[16]; /* not NUL-terminated when full */
    unsigned long long eventType; /* the event bit; NVML_EVENT_TYPE_NONE: a structured event */
    unsigned long long eventData; /* the Xid of an Xid event bit */
    unsigned long long groupCursor;
    unsigned long long instanceId;
    unsigned long long timestampUsec;
    unsigned long long traceId;
    unsigned int gpuInstanceId;     /* NVML_GPU_INSTANCE_ID_ANY: none */
    unsigned int computeInstanceId; /* NVML_COMPUTE_INSTANCE_ID_ANY: none */
    unsigned int severity;
    unsigned int categoryId; /* the catalog's category (0x0001 TIMEOUT ...) */
    unsigned int moduleEventCode;
    unsigned int scope;
    unsigned int originator;
    unsigned int moduleInstance;
    unsigned int chipletId;
    unsigned int logLevel;
    unsigned int attributes;
    unsigned int groupCperSize;
    unsigned int groupAttributes;
    unsigned char groupSize;
    unsigned char groupIndex;
} nvmlEventSetWait_v3_t;
typedef struct {
    unsigned int count; /* context records of the most recent event */
} nvmlEventSetGetContextCount_v1_t;
typedef struct {
    unsigned int index;   /* in */
    unsigned int xidCode; /* out: the legacy Xid this context carries */
} nvmlEventSetGetGpuOperationalEventContextLegacyXid_v1_t;

_Static_assert(sizeof(nvmlGpuOperationalEventConfig_v1_t) == 104, "GpuOperationalEventConfig_v1");
_Static_assert(offsetof(nvmlEventSetWait_v3_t, eventType) == 120, "EventSetWait_v3.eventType");
_Static_assert(offsetof(nvmlEventSetWait_v3_t, gpuInstanceId) == 168, "EventSetWait_v3.gpuInstanceId");
_Static_assert(sizeof(nvmlEventSetWait_v3_t) == 224, "nvmlEventSetWait_v3_t");
_Static_assert(sizeof(nvmlEventSetGetGpuOperationalEventContextLegacyXid_v1_t) == 8,
               "LegacyXid_v1");

typedef nvmlReturn_t (*nvml_fn_event_register_ops)(nvmlEventSet_t,
                                                   nvmlGpuOperationalEventConfig_v1_t *);
typedef nvmlReturn_t (*nvml_fn_event_set_wait_v3)(nvmlEventSet_t, nvmlEventSetWait_v3_t *);
typedef nvmlReturn_t (*nvml_fn_event_context_count)(nvmlEventSet_t,
                                                    nvmlEventSetGetContextCount_v1_t *);
typedef nvmlReturn_t (*nvml_fn_event_context_xid)(
    nvmlEventSet_t, nvmlEventSetGetGpuOperationalEventContextLegacyXid_v1_t *);

#endif
