/*
 * delta.c — a delta line merged into the snapshot before it (delta.h).
 *
 * The rules (the writer's, export/json_delta.h): an object merges into
 * the object of that name, but a metric object (it has "source") or a
 * device object (it has "kind") replaces it; a number or null where a
 * metric object was is that metric's new value; an array of objects as
 * long as the one before merges element by element; anything else
 * replaces what was there. A MIG device's metric of its whole GPU follows
 * the GPU's (follow_gpus).
 */
#include "backend/replay/delta.h"

#include <stdbool.h>
#include <string.h>

/* An object the delta writes whole. */
static bool whole(const json_t *o)
{
    return json_object_get(o, "source") || json_object_get(o, "kind");
}

static void merge(json_t *dst, json_t *src, bool top);

/* The array v of the delta over the array cur of the snapshot: element by
 * element when both are arrays of objects of one length. */
static bool merge_array(json_t *cur, json_t *v)
{
    size_t n = json_array_size(v);
    if (!json_is_array(cur) || json_array_size(cur) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!json_is_object(json_array_get(v, i)))
            return false;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(v, i), *c = json_array_get(cur, i);
        if (json_is_object(c) && !whole(e))
            merge(c, e, false);
        else
            json_array_set(cur, i, e);
    }
    return true;
}

/* A MIG device's metrics of its whole GPU ("scope": "parent") follow the
 * GPU (the last GPU before it): one the line changes on the GPU and says
 * nothing of on the MIG device becomes the GPU's. devs: the snapshot's
 * devices, merged; d: the line's. */
static void follow_gpus(json_t *devs, const json_t *d)
{
    json_t *gpu = NULL;
    const json_t *gd = NULL;
    for (size_t i = 0; i < json_array_size(devs); i++) {
        json_t *dev = json_array_get(devs, i);
        const json_t *e = json_array_get(d, i);
        const char *kind = json_string_value(json_object_get(dev, "kind"));
        if (kind && strcmp(kind, "gpu") == 0) {
            gpu = dev;
            gd = e;
            continue;
        }
        if (!gpu || !kind || strcmp(kind, "mig") != 0 || whole(e))
            continue;
        const json_t *said = json_object_get(gd, "metrics"); /* the GPU's in the line */
        const json_t *own = json_object_get(e, "metrics");
        json_t *ms = json_object_get(dev, "metrics"), *gms = json_object_get(gpu, "metrics");
        const char *key;
        json_t *m;
        json_object_foreach(ms, key, m) {
            const char *scope = json_string_value(json_object_get(m, "scope"));
            json_t *g = json_object_get(gms, key);
            if (!scope || strcmp(scope, "parent") != 0 || !json_is_object(g) ||
                json_object_get(own, key) || !(whole(gd) || json_object_get(said, key)))
                continue;
            json_t *copy = json_deep_copy(g);
            if (!copy)
                continue;
            json_object_set_new(copy, "scope", json_string("parent"));
            json_object_set_new(ms, key, copy);
        }
    }
}

static void merge(json_t *dst, json_t *src, bool top)
{
    const char *key;
    json_t *v;
    json_object_foreach(src, key, v) {
        if (top && (strcmp(key, "schema") == 0 || strcmp(key, "delta") == 0))
            continue;
        json_t *cur = json_object_get(dst, key);
        if (json_is_object(v) && json_is_object(cur) && !whole(v)) {
            merge(cur, v, false);
        } else if (json_is_array(v) && merge_array(cur, v)) {
            if (top && strcmp(key, "devices") == 0)
                follow_gpus(cur, v);
        } else if ((json_is_number(v) || json_is_null(v)) && json_is_object(cur) &&
                   json_object_get(cur, "source")) {
            json_object_set(cur, "value", v);
        } else {
            json_object_set(dst, key, v);
        }
    }
}

void replay_delta_apply(json_t *state, json_t *d)
{
    if (json_is_object(state) && json_is_object(d))
        merge(state, d, true);
}
