/*
 * xid.c — the Xid catalog (xid.h). One row per code, in code order; the
 * wording is ours, the facts NVIDIA's catalog's (its description and its
 * immediate and investigatory resolution buckets).
 */
#include "backend/events/xid.h"

#include <stddef.h>

#include "backend/nvml/nvml_api.h"

static const char *const APP = "the job's own bug or input: check the application";

static const struct xid_row {
    unsigned code;
    const char *meaning;
    const char *action;
} rows[] = {
    {13, "graphics engine exception (the application's fault, often an out-of-range access)",
     APP},
    {31, "GPU memory page fault (the application touched memory it does not own)", APP},
    {32, "invalid or corrupted push buffer stream",
     "restart the application; if it recurs, check the PCIe link and the driver"},
    {43, "GPU stopped processing: a context was reset after an application fault", APP},
    {45, "preemptive cleanup: the driver ended a process's GPU work",
     "usually a job that was killed, or the aftermath of an earlier Xid: look at the one before"},
    {48, "double-bit ECC error (uncorrectable memory error)",
     "reset the GPU so the bad memory is retired or remapped; drain the node if it recurs"},
    {61, "internal micro-controller breakpoint or warning",
     "reset the GPU; contact NVIDIA support if it recurs"},
    {62, "internal micro-controller halt", "reset the GPU; contact NVIDIA support if it recurs"},
    {63, "memory row remapping (or page retirement) recorded",
     "reset the GPU when its jobs allow, so the remapping takes effect"},
    {64, "memory row remapping (or page retirement) failed",
     "drain the node and reset the GPU; replace it if it recurs"},
    {68, "video decoder (NVDEC) exception",
     "restart the application; contact NVIDIA support if it recurs"},
    {69, "graphics engine class error", APP},
    {74, "NVLink error",
     "check the NVLink connections and the fabric manager; reset the GPU if it persists"},
    {79, "GPU has fallen off the bus", "drain the node and reset or reseat the GPU"},
    {92, "high single-bit ECC error rate",
     "watch the ECC and remapped-row counters; plan a reset or a replacement"},
    {94, "contained ECC error (only the processes using the bad memory were affected)",
     "restart the jobs on the affected MIG instance"},
    {95, "uncontained ECC error (every process on the GPU may be affected)",
     "reset the GPU"},
    {109, "context switch timeout",
     "check the application; reset the GPU if it recurs"},
    {119, "GSP firmware did not answer in time (GSP RPC timeout)",
     "reset the GPU; update the driver if it recurs"},
    {120, "GSP firmware error", "reset the GPU; update the driver if it recurs"},
    {140, "unrecovered ECC error", "reset the GPU; drain the node if it recurs"},
    {XID_UNKNOWN, "an Xid the driver could not name",
     "read the full Xid line in the kernel log (dmesg)"},
};

static const struct xid_row *find(unsigned code)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        if (rows[i].code == code)
            return &rows[i];
    return NULL;
}

const char *xid_meaning(unsigned code)
{
    const struct xid_row *r = find(code);
    return r ? r->meaning : "an Xid not in the monitor's catalog";
}

const char *xid_action(unsigned code)
{
    const struct xid_row *r = find(code);
    return r ? r->action : "look the code up in NVIDIA's Xid catalog";
}

bool xid_known(unsigned code)
{
    return find(code) != NULL;
}

const char *xid_event_type_name(unsigned long long type)
{
    if (type & MIGMON_EVENT_TYPE_OPERATIONAL)
        return "operational";
    if (type & NVML_EVENT_TYPE_XID)
        return "xid";
    if (type & NVML_EVENT_TYPE_DOUBLE_BIT_ECC)
        return "dbe";
    if (type & NVML_EVENT_TYPE_SINGLE_BIT_ECC)
        return "sbe";
    if (type & NVML_EVENT_TYPE_PSTATE)
        return "pstate";
    if (type & NVML_EVENT_TYPE_CLOCK)
        return "clock";
    return "other";
}
