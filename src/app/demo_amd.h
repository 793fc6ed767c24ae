/*
 * demo_amd.h — --demo mi300x: an MI300X in CPX/NPS4 for the amdgpu backend,
 * as a sysfs tree in a private temporary directory whose files a thread
 * rewrites every interval (docs/decisions.md). The backend reads it through
 * --sysfs-root exactly as it reads /sys: there is no demo path inside it.
 */
#ifndef MIGMON_DEMO_AMD_H
#define MIGMON_DEMO_AMD_H

#include <stddef.h>

#define DEMO_AMD_SCENARIO "mi300x"

struct demo_amd;

/* Writes the tree and starts the writer (every interval_ms); its root into
 * root. Returns NULL with one line in err. */
struct demo_amd *demo_amd_start(unsigned interval_ms, char *root, size_t rootlen, char *err,
                                size_t errlen);
/* Stops the writer and removes the tree. Accepts NULL. */
void demo_amd_stop(struct demo_amd *d);

#endif
