/*
 * libmigmon.c — the public C library (include/migmon.h) over watch.c.
 * Only the migmon_ functions are exported (visibility and a version
 * script: Makefile).
 */
#include "migmon.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/watch.h"
#include "core/text.h"

#define API __attribute__((visibility("default")))

struct migmon {
    struct watch w;
    char err[sizeof(((struct watch *)0)->error)];
};

/* migmon_open's failure, for migmon_last_error(NULL); per thread */
static _Thread_local char open_err[512];

static int fail(char *buf, size_t len, int code, const char *msg)
{
    snprintf(buf, len, "%s", msg);
    return code;
}

API int migmon_open(migmon_t **out, const char *nvml_path, unsigned interval_ms)
{
    open_err[0] = '\0';
    if (!out)
        return fail(open_err, sizeof(open_err), MIGMON_EINVAL, "out is NULL");
    *out = NULL;
    struct migmon *m = calloc(1, sizeof(*m));
    if (!m)
        return fail(open_err, sizeof(open_err), MIGMON_ENOMEM, "out of memory");
    struct watch_opts o = {.nvml_path = nvml_path, .interval_ms = interval_ms, .quiet = true};
    char err[2048];
    if (watch_open(&m->w, &o, err, sizeof(err)) != 0) {
        text_clean(err, sizeof(err));
        snprintf(open_err, sizeof(open_err), "%.500s", err);
        free(m);
        return nvml_path ? MIGMON_ENVML : MIGMON_ESYS;
    }
    /* Without a GPU backend the open still succeeded: each migmon_sample
     * says why its GPU figures are missing (MIGMON_EGPU). */
    *out = m;
    return MIGMON_OK;
}

API int migmon_watch_pid(migmon_t *m, int pid)
{
    if (!m)
        return MIGMON_EINVAL;
    if (pid <= 0)
        return fail(m->err, sizeof(m->err), MIGMON_EINVAL, "pid must be positive");
    m->err[0] = '\0';
    watch_set_root(&m->w, (pid_t)pid);
    return MIGMON_OK;
}

API int migmon_watch_self(migmon_t *m)
{
    return migmon_watch_pid(m, (int)getpid());
}

API int migmon_sample(migmon_t *m)
{
    if (!m)
        return MIGMON_EINVAL;
    if (m->w.root <= 0)
        return fail(m->err, sizeof(m->err), MIGMON_EINVAL,
                    "nothing watched: call migmon_watch_pid or migmon_watch_self first");
    m->err[0] = '\0';
    if (watch_sample(&m->w) != 0)
        return fail(m->err, sizeof(m->err), MIGMON_EGPU, m->w.error);
    return MIGMON_OK;
}

API int migmon_peaks(migmon_t *m, struct migmon_peaks *out)
{
    if (!m)
        return MIGMON_EINVAL;
    if (!out)
        return fail(m->err, sizeof(m->err), MIGMON_EINVAL, "out is NULL");
    m->err[0] = '\0';
    memset(out, 0, sizeof(*out));
    out->gpu_memory_metric = watch_metric_name(&m->w);
    out->gpu_known = m->w.any_alloc || m->w.any_delta;
    if (out->gpu_known)
        out->peak_gpu_memory_bytes = (unsigned long long)(watch_peak_gpu(&m->w) + 0.5);
    out->peak_cpu_memory_bytes = (unsigned long long)(m->w.peak_rss + 0.5);
    out->samples = m->w.samples;
    return MIGMON_OK;
}

API const char *migmon_last_error(const migmon_t *m)
{
    return m ? m->err : open_err;
}

API void migmon_close(migmon_t *m)
{
    if (!m)
        return;
    watch_close(&m->w);
    free(m);
}

API const char *migmon_version(void)
{
    return MIGMON_VERSION;
}
