#include "backend/backend.h"

#include <stdatomic.h>
#include <string.h>

/* The registry: every backend the collector can name, in the order their
 * devices are listed (--backend). */
static const struct backend_ops *const registry[] = {
    &nvml_backend_ops,
    &amdgpu_backend_ops,
};

const struct backend_ops *backend_at(size_t i)
{
    return i < sizeof(registry) / sizeof(registry[0]) ? registry[i] : NULL;
}

int backend_check(const struct backend_ops *ops)
{
    if (!ops || !ops->name || !ops->open || !ops->sample || !ops->close)
        return -1;
    return 0;
}

const struct backend_ops *backend_find(const char *name)
{
    for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++) {
        if (strcmp(registry[i]->name, name) == 0)
            return backend_check(registry[i]) == 0 ? registry[i] : NULL;
    }
    return NULL;
}

const char *backend_last_error(const struct backend_ops *ops, void *state)
{
    if (!ops->last_error || !state)
        return "";
    const char *e = ops->last_error(state);
    return e ? e : "";
}

static atomic_bool left_behind;

void backend_left_behind_set(void)
{
    atomic_store(&left_behind, true);
}

bool backend_left_behind(void)
{
    return atomic_load(&left_behind);
}
