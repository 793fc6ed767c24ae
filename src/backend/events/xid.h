/*
 * xid.h — what an Xid code means and what an operator does about it, from
 * NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors), in short words
 * of our own. The events helper reports the code; front ends and exporters
 * show the meaning and the action next to it.
 */
#ifndef MIGMON_XID_H
#define MIGMON_XID_H

#include <stdbool.h>

/* eventData of an Xid event the driver could not name. */
#define XID_UNKNOWN 999u

/* The meaning of code: "GPU has fallen off the bus". Never NULL: a code
 * the catalog here lacks gives a generic line. Static strings. */
const char *xid_meaning(unsigned code);
/* What to do: "drain the node and reset or reseat the GPU". Never NULL. */
const char *xid_action(unsigned code);
/* True when the code is in the catalog here. */
bool xid_known(unsigned code);
/* The short name of an NVML event type ("xid", "sbe", "dbe", "pstate",
 * "clock"; "other"), for exporters. */
const char *xid_event_type_name(unsigned long long type);

#endif
