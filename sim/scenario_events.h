/*
 * scenario_events.h — the [events] switches and [event.NAME] sections of a
 * scenario (format: docs/simulator.md "Events").
 */
#ifndef SIM_SCENARIO_EVENTS_H
#define SIM_SCENARIO_EVENTS_H

#include <stddef.h>

#include "scenario.h"

/* One key of [events] or [event.NAME]: 0, or -1 with "[section] what" in err. */
int scenario_events_key(struct sim_scenario *s, const char *section, const char *name,
                        const char *value, char *err, size_t errlen);
/* After scenario_finish: every event names a defined GPU (and a MIG slot
 * that holds a device at its time), has its time and its Xid; the events
 * are put in time order. 0, or -1 with a message in err. */
int scenario_events_finish(struct sim_scenario *s, char *err, size_t errlen);

#endif
