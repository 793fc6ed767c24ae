/*
 * json_host.h — the "host" object of a JSON snapshot.
 */
#ifndef MIGMON_JSON_HOST_H
#define MIGMON_JSON_HOST_H

#include "export/jsonw.h"
#include "system/host.h"

/* Write the value of the "host" key (the caller has written the key). Shape
 * and units are documented in docs/host-metrics.md. */
void json_write_host(struct jsonw *w, const struct host_sample *h);

#endif
