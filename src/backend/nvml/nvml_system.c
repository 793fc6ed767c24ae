/*
 * nvml_system.c — the system worker: loads the library, initialises NVML
 * (retrying with backoff while the driver is absent, 1 s doubling to 30 s),
 * counts and enumerates the GPUs when the sampling thread asks (the slow
 * cadence, a GPU lost, a count that failed or changed, and every tick of a
 * slow driver, which it then relays to the GPUs' own threads), and shuts
 * NVML down on the way out. It never samples a GPU: stuck in a GPU's call,
 * it would stop the count, the re-enumeration of a lost GPU and the
 * simulator's step clock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/nvml/nvml_root.h"
#include "core/debuglog.h"
#include "core/text.h"

static void sys_set(struct nvml_root *r, enum sys_state st, const char *msg)
{
    pthread_mutex_lock(&r->mu);
    r->sys = st;
    if (msg)
        snprintf(r->sys_msg, sizeof(r->sys_msg), "%s", msg);
    pthread_cond_broadcast(&r->done_cv);
    pthread_mutex_unlock(&r->mu);
}

/* Sleep until the next try (or stop); false on stop. */
static bool sys_backoff(struct nvml_root *r, uint64_t *backoff)
{
    pthread_mutex_lock(&r->mu);
    r->next_try_ns = mono() + *backoff;
    bool go = true;
    while (!r->stop && mono() < r->next_try_ns)
        wait_until(&r->sys_cv, &r->mu, r->next_try_ns);
    go = !r->stop;
    pthread_mutex_unlock(&r->mu);
    *backoff = *backoff * 2 > NVML_BACKOFF_MAX_NS ? NVML_BACKOFF_MAX_NS : *backoff * 2;
    return go;
}

static nvmlReturn_t sys_call_init(struct nvml_root *r)
{
    const struct nvml_fns *f = &r->lib.f;
    /* NVML_INIT_FLAG_NO_GPUS: a driver with zero GPUs is a valid state to
     * report ("no GPU"), not an init failure. */
    const char *sym = f->init_with_flags ? "nvmlInitWithFlags" : "nvmlInit_v2";
    atomic_store(&r->sys_op_ns, mono());
    atomic_store(&r->sys_sym, sym);
    nvmlReturn_t rc = f->init_with_flags ? f->init_with_flags(NVML_INIT_FLAG_NO_GPUS) : f->init();
    atomic_store(&r->sys_sym, NULL);
    debuglog_printf("%s dev=- rc=%d %s", sym, rc, nvml_rc_name(rc));
    return rc;
}

bool nvml_driver_gone(nvmlReturn_t rc)
{
    return rc == NVML_ERROR_DRIVER_NOT_LOADED || rc == NVML_ERROR_UNINITIALIZED ||
           rc == NVML_ERROR_LIB_RM_VERSION_MISMATCH;
}

/* One tick of the system worker: the GPU count (every tick: one cheap
 * call, and the simulator's step clock), handles and UUIDs when asked. */
static nvmlReturn_t sys_tick(struct nvml_root *r, bool enumerate)
{
    const struct nvml_fns *f = &r->lib.f;
    unsigned count = 0;
    atomic_store(&r->sys_op_ns, mono());
    atomic_store(&r->sys_sym, "nvmlDeviceGetCount_v2");
    nvmlReturn_t rc = f->device_count(&count);
    atomic_store(&r->sys_sym, NULL);
    debuglog_printf("nvmlDeviceGetCount_v2 dev=- rc=%d %s", rc, nvml_rc_name(rc));
    if (rc != NVML_SUCCESS) {
        pthread_mutex_lock(&r->mu);
        snprintf(r->count_err, sizeof(r->count_err), "nvmlDeviceGetCount failed: %s",
                 nvml_rc_reason(rc));
        pthread_mutex_unlock(&r->mu);
        return rc;
    }
    if (count > 4096)
        count = 4096; /* no machine has more; a driver that says so is wrong */
    pthread_mutex_lock(&r->mu);
    r->count_err[0] = '\0';
    bool changed = count != r->count;
    pthread_mutex_unlock(&r->mu);
    if (!enumerate && !changed)
        return NVML_SUCCESS;
    /* Into the system worker's own grow-only buffer, then copied under the
     * lock: a steady tick allocates nothing. */
    if (count > r->sys_cap) {
        struct enum_gpu *n = realloc(r->sys_gpus, count * sizeof(*n));
        if (!n)
            return NVML_ERROR_MEMORY;
        r->sys_gpus = n;
        r->sys_cap = count;
    }
    struct enum_gpu *g = r->sys_gpus;
    if (count)
        memset(g, 0, count * sizeof(*g));
    for (unsigned i = 0; i < count; i++) {
        atomic_store(&r->sys_op_ns, mono());
        atomic_store(&r->sys_sym, "nvmlDeviceGetHandleByIndex_v2");
        g[i].rc = f->handle_by_index(i, &g[i].h);
        if (g[i].rc == NVML_SUCCESS && f->uuid) {
            atomic_store(&r->sys_sym, "nvmlDeviceGetUUID");
            if (f->uuid(g[i].h, g[i].uuid, sizeof(g[i].uuid)) != NVML_SUCCESS)
                g[i].uuid[0] = '\0';
            text_clean(g[i].uuid, sizeof(g[i].uuid));
            atomic_store(&r->sys_sym, "nvmlDeviceGetName");
            if (f->name && f->name(g[i].h, g[i].name, sizeof(g[i].name)) != NVML_SUCCESS)
                g[i].name[0] = '\0';
            text_clean(g[i].name, sizeof(g[i].name));
        }
        atomic_store(&r->sys_sym, NULL);
    }
    pthread_mutex_lock(&r->mu);
    if (count > r->gpus_cap) {
        struct enum_gpu *n = realloc(r->gpus, count * sizeof(*n));
        if (!n) {
            pthread_mutex_unlock(&r->mu);
            return NVML_ERROR_MEMORY;
        }
        r->gpus = n;
        r->gpus_cap = count;
    }
    if (count)
        memcpy(r->gpus, g, count * sizeof(*g));
    r->count = count;
    r->have_enum = true;
    pthread_mutex_unlock(&r->mu);
    return NVML_SUCCESS;
}

void *nvml_system_main(void *arg)
{
    struct nvml_root *r = arg;
    pthread_setname_np(pthread_self(), "migmon-system");
    uint64_t backoff = NVML_BACKOFF_MIN_NS;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        bool stop = r->stop;
        pthread_mutex_unlock(&r->mu);
        if (stop)
            break;
        if (!r->lib.dl) {
            char err[2048];
            bool missing = false;
            if (nvml_lib_open(&r->lib, r->nvml_path[0] ? r->nvml_path : NULL, &missing, err,
                              sizeof(err)) != 0) {
                sys_set(r, SYS_WAITING, err);
                if (!sys_backoff(r, &backoff))
                    break;
                continue;
            }
        }
        nvmlReturn_t rc = sys_call_init(r);
        if (rc != NVML_SUCCESS) {
            const char *hint = "";
            if (rc == NVML_ERROR_DRIVER_NOT_LOADED)
                hint = " (the NVIDIA kernel driver is not loaded)";
            else if (rc == NVML_ERROR_NO_PERMISSION)
                hint = " (no permission to open /dev/nvidia*)";
            else if (rc == NVML_ERROR_LIB_RM_VERSION_MISMATCH)
                hint = " (library and kernel driver versions differ; reboot or reload the driver)";
            char msg[2048];
            snprintf(msg, sizeof(msg), "nvmlInit failed with %s%s, library %.1500s",
                     nvml_rc_reason(rc), hint, r->lib.path);
            sys_set(r, SYS_WAITING, msg);
            if (!sys_backoff(r, &backoff))
                break;
            continue;
        }
        const struct nvml_fns *f = &r->lib.f;
        char dv[80] = "", nv[80] = "";
        if (f->driver_version && f->driver_version(dv, sizeof(dv)) != NVML_SUCCESS)
            dv[0] = '\0';
        if (f->nvml_version && f->nvml_version(nv, sizeof(nv)) != NVML_SUCCESS)
            nv[0] = '\0';
        int cv = 0;
        if (!f->cuda_version || f->cuda_version(&cv) != NVML_SUCCESS || cv < 1000 || cv > 99990)
            cv = 0; /* no libcuda, or a number that is no CUDA version */
        /* a driver may fill the whole buffer without a NUL */
        text_clean(dv, sizeof(dv));
        text_clean(nv, sizeof(nv));
        pthread_mutex_lock(&r->mu);
        memcpy(r->driver_version, dv, sizeof(dv));
        memcpy(r->nvml_version, nv, sizeof(nv));
        r->cuda_version = cv;
        r->inited = true;
        r->want_enum = true;
        pthread_mutex_unlock(&r->mu);
        sys_set(r, SYS_READY, "");
        backoff = NVML_BACKOFF_MIN_NS;
        /* Serve ticks until stop or the driver goes away. */
        bool gone = false;
        for (;;) {
            pthread_mutex_lock(&r->mu);
            while (!r->sys_quit && r->sys_req == r->sys_done)
                pthread_cond_wait(&r->sys_cv, &r->mu);
            if (r->sys_quit) {
                pthread_mutex_unlock(&r->mu);
                break;
            }
            uint64_t seq = r->sys_req;
            bool en = r->want_enum;
            r->want_enum = false;
            pthread_mutex_unlock(&r->mu);
            rc = sys_tick(r, en);
            pthread_mutex_lock(&r->mu);
            r->sys_done = seq;
            /* A slow driver's tick: hand it on to the idle GPUs' own
             * threads, so the sampling thread is woken once, by whoever
             * finishes the last GPU. */
            size_t kicked = 0;
            if (r->relay && !r->stop && !nvml_driver_gone(rc) && r->have_enum) {
                size_t want = r->nworkers ? r->nworkers : 1;
                if (want > r->sys_wake_cap) {
                    pthread_cond_t **nw = realloc(r->sys_wake, want * sizeof(*nw));
                    if (nw) {
                        r->sys_wake = nw;
                        r->sys_wake_cap = want;
                    }
                }
                size_t n = r->nworkers < r->count ? r->nworkers : r->count;
                for (size_t i = 0; i < n && i < r->sys_wake_cap; i++) {
                    struct worker *w = r->workers[i];
                    if (w && w->armed && w->started) {
                        worker_kick(r, w, i);
                        r->sys_wake[kicked++] = &w->cv;
                    }
                }
            }
            r->relay = false;
            r->relaying = kicked > 0; /* close waits for it to end */
            pthread_mutex_unlock(&r->mu);
            if (!kicked) {
                pthread_cond_broadcast(&r->done_cv);
            } else {
                for (size_t i = 0; i < kicked; i++)
                    pthread_cond_signal(r->sys_wake[i]);
                pthread_mutex_lock(&r->mu);
                r->relaying = false;
                if (r->stop)
                    pthread_cond_broadcast(&r->done_cv);
                pthread_mutex_unlock(&r->mu);
            }
            if (nvml_driver_gone(rc)) {
                gone = true;
                break;
            }
        }
        atomic_store(&r->sys_sym, "nvmlShutdown");
        f->shutdown();
        atomic_store(&r->sys_sym, NULL);
        pthread_mutex_lock(&r->mu);
        r->inited = false;
        r->count = 0;
        pthread_mutex_unlock(&r->mu);
        if (!gone)
            break;
        /* The driver went away (reloaded): start over, after a pause. */
        sys_set(r, SYS_WAITING, "the NVIDIA driver went away (reloaded?)");
        if (!sys_backoff(r, &backoff))
            break;
    }
    return NULL;
}
