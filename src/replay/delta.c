/*
 * delta.c — a delta line merged into the snapshot before it (delta.h).
 *
 * The rules (the writer's, export/json_delta.h): an object merges into
 * the object of that name, but a metric object (it has "source") or a
 * device object (it has "kind") replaces it; a number or null where a
 * metric object was is that metric's new value; an array of objects as
 * long as the one before merges element by element; anything else
 * replaces what was there.
 */
#include "replay/delta.h"

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
            continue;
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
