/*
 * snapshot.h — everything known at one tick: host sample plus devices.
 */
#ifndef MIGMON_SNAPSHOT_H
#define MIGMON_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "system/host.h"

struct snapshot {
    uint64_t elapsed_ns; /* since the one reference instant taken at start */
    int64_t wall_ns;     /* CLOCK_REALTIME at the sample */
    char driver_version[80];
    char nvml_version[80];
    bool gpu_ok;         /* false: gpu_error says why there are no devices */
    char gpu_error[2048];
    size_t ndevices;
    size_t cap;
    struct device *devices; /* owned; grown by snapshot_reserve() */
    size_t nprocs;          /* processes of all devices, grouped by device */
    size_t proc_cap;
    struct gpu_process *procs; /* owned; grown by snapshot_reserve_procs() */
    bool host_ok;           /* false: host_error says why */
    char host_error[256];
    struct host_sample host; /* its core array is borrowed from the collector */
};

int snapshot_reserve(struct snapshot *s, size_t n);
int snapshot_reserve_procs(struct snapshot *s, size_t n);
void snapshot_free(struct snapshot *s);

#endif
