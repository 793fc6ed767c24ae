/*
 * errors.c — nvmlReturn_t codes: the strings nvmlErrorString returns (the
 * wording NVIDIA's library uses, as pynvml and nvidia-smi show it) and the
 * names a scenario's fault sections may use.
 */
#include "errors.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct code_info {
    int code;
    const char *name;
    const char *text;
};

static const struct code_info codes[] = {
    {0, "SUCCESS", "Success"},
    {1, "UNINITIALIZED", "Uninitialized"},
    {2, "INVALID_ARGUMENT", "Invalid Argument"},
    {3, "NOT_SUPPORTED", "Not Supported"},
    {4, "NO_PERMISSION", "Insufficient Permissions"},
    {5, "ALREADY_INITIALIZED", "Already Initialized"},
    {6, "NOT_FOUND", "Not Found"},
    {7, "INSUFFICIENT_SIZE", "Insufficient Size"},
    {8, "INSUFFICIENT_POWER", "Insufficient External Power"},
    {9, "DRIVER_NOT_LOADED", "Driver Not Loaded"},
    {10, "TIMEOUT", "Timeout"},
    {11, "IRQ_ISSUE", "Interrupt Request Issue"},
    {12, "LIBRARY_NOT_FOUND", "NVML Shared Library Not Found"},
    {13, "FUNCTION_NOT_FOUND", "Function Not Found"},
    {14, "CORRUPTED_INFOROM", "Corrupted infoROM"},
    {15, "GPU_IS_LOST", "GPU is lost"},
    {16, "RESET_REQUIRED", "GPU requires restart"},
    {17, "OPERATING_SYSTEM", "The operation is not allowed by the operating system"},
    {18, "LIB_RM_VERSION_MISMATCH", "RM has detected an NVML/RM version mismatch"},
    {19, "IN_USE", "In use by another client"},
    {20, "MEMORY", "Insufficient Memory"},
    {21, "NO_DATA", "No data"},
    {22, "VGPU_ECC_NOT_SUPPORTED", "The requested vgpu operation is not available on target "
                                   "device, because ECC is enabled"},
    {23, "INSUFFICIENT_RESOURCES", "Ran out of critical resources, other than memory"},
    {24, "FREQ_NOT_SUPPORTED", "The requested frequency is not supported"},
    {25, "ARGUMENT_VERSION_MISMATCH", "The provided version is invalid/unsupported"},
    {26, "DEPRECATED", "The requested functionality has been deprecated"},
    {27, "NOT_READY", "The system is not ready for the request"},
    {28, "GPU_NOT_FOUND", "No GPUs were found"},
    {29, "INVALID_STATE", "Resource not in correct state to perform requested operation"},
    {999, "UNKNOWN", "Unknown Error"},
};
#define NCODES (sizeof(codes) / sizeof(codes[0]))

const char *sim_error_string(int code)
{
    for (size_t i = 0; i < NCODES; i++)
        if (codes[i].code == code)
            return codes[i].text;
    return "Unknown Error";
}

int sim_error_parse(const char *s, int *code)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end != s && *end == '\0') {
        *code = (int)v;
        return 0;
    }
    if (!strncasecmp(s, "NVML_ERROR_", 11))
        s += 11;
    else if (!strncasecmp(s, "NVML_", 5))
        s += 5;
    for (size_t i = 0; i < NCODES; i++) {
        if (!strcasecmp(codes[i].name, s)) {
            *code = codes[i].code;
            return 0;
        }
    }
    return -1;
}
