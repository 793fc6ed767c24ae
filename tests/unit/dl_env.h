/*
 * dl_env.h — what the tests that dlopen a simulated library share: the
 * environment `make unit` sets, and symbols that must be there.
 * Header-only (static inline): each test file gets its own copy.
 */
#ifndef MIGMON_TEST_DL_ENV_H
#define MIGMON_TEST_DL_ENV_H

#include <dlfcn.h>
#include <stdlib.h>

/* An environment variable that `make unit` sets (the test fails without it). */
static inline const char *env(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        fail_msg("%s is not set (run through `make unit`)", name);
    return v;
}

/* A symbol of the library h, or the test fails. */
static inline void *sym_in(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p)
        fail_msg("symbol %s missing", name);
    return p;
}

#endif
