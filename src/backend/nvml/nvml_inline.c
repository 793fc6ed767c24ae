/*
 * nvml_inline.c — the GPUs sampled on the sampling thread itself, one after
 * another, while the driver is quick: the steady tick that wakes no other
 * thread, with the watchdog armed for the time it takes (nvml_root.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "backend/nvml/nvml.h"
#include "backend/nvml/nvml_root.h"
#include "core/debuglog.h"

/* The calling sampler still holds the sampling (mu held). False, and
 * counted out of the samplers left in the driver, when the watchdog gave
 * it away while this thread was in a call, or when the backend is closing
 * (the caller gave up on this thread too). */
static bool inl_holds(struct nvml_root *r, uint64_t gen)
{
    if (r->inl_gen != gen) {
        r->inl_left--;
        return false;
    }
    return !r->stop;
}

enum inl_end nvml_inline_sample(struct nvml_root *r, size_t nw, uint64_t fire, bool count)
{
    uint64_t gen = r->inl_gen;
    r->inl_cur = 0;
    r->inl_active = true;
    r->inl_fire_ns = fire;
    r->inl_counting = count;
    pthread_mutex_unlock(&r->mu);
    nvml_watchdog_arm(r, fire);
    if (count) {
        unsigned n = 0;
        atomic_store(&r->sys_op_ns, mono());
        atomic_store(&r->sys_sym, "nvmlDeviceGetCount_v2");
        nvmlReturn_t rc = r->lib.f.device_count(&n);
        atomic_store(&r->sys_sym, NULL);
        debuglog_printf("nvmlDeviceGetCount_v2 dev=- rc=%d %s", rc, nvml_rc_name(rc));
        if (n > 4096)
            n = 4096; /* as the system worker */
        pthread_mutex_lock(&r->mu);
        r->inl_counting = false;
        if (!inl_holds(r, gen)) {
            pthread_mutex_unlock(&r->mu);
            return INL_TAKEN;
        }
        if (rc != NVML_SUCCESS || n != r->count) {
            r->inl_active = false;
            r->want_enum = true;
            pthread_mutex_unlock(&r->mu);
            nvml_watchdog_disarm(r);
            pthread_mutex_lock(&r->mu);
            return INL_RECOUNT;
        }
    } else {
        pthread_mutex_lock(&r->mu);
    }
    for (size_t i = 0; i < nw && !atomic_load(&r->interrupted); i++) {
        struct worker *w = r->workers[i];
        if (!w || w->sent || w->req != w->done)
            continue; /* still in an earlier tick's call */
        w->h = r->gpus[i].h;
        w->hrc = r->gpus[i].rc;
        memcpy(w->uuid, r->gpus[i].uuid, sizeof(w->uuid));
        memcpy(w->name, r->gpus[i].name, sizeof(w->name));
        w->sent = true;
        w->for_thread = false;
        uint64_t seq = ++w->req;
        r->inl_cur = i + 1;
        pthread_mutex_unlock(&r->mu);
        bool wake = nvml_worker_sample(r, w, seq);
        pthread_mutex_lock(&r->mu);
        if (!inl_holds(r, gen)) {
            pthread_mutex_unlock(&r->mu);
            if (wake) /* the tick given away waits for this GPU */
                pthread_cond_broadcast(&r->done_cv);
            return INL_TAKEN;
        }
        r->inl_cur = 0;
    }
    r->inl_active = false;
    pthread_mutex_unlock(&r->mu);
    nvml_watchdog_disarm(r);
    pthread_mutex_lock(&r->mu);
    return INL_DONE;
}
