/*
 * nvml_gpu_worker.c — one GPU's worker: its state, the thread of its own
 * that samples it while the driver is slow, the caller cannot be replaced
 * or after a stall, and the sampling of a claimed tick that every thread
 * uses (nvml_root.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/nvml/nvml.h"
#include "backend/nvml/nvml_root.h"

struct worker_arg {
    struct nvml_root *r;
    struct worker *w;
};

bool nvml_worker_sample(struct nvml_root *r, struct worker *w, uint64_t seq)
{
    pthread_mutex_lock(&r->mu);
    nvmlDevice_t h = w->h;
    nvmlReturn_t hrc = w->hrc;
    char uuid[MIGMON_UUID_LEN];
    memcpy(uuid, w->uuid, sizeof(uuid));
    bool gpm_inproc = w->gpm_inproc;
    pthread_mutex_unlock(&r->mu);
    uint64_t t0 = mono();
    atomic_store(&w->tick_start_ns, t0);
    snapshot_notes_reset(w->part);
    nvml_sample_gpu(&w->st, w->index, h, hrc, uuid, w->part);
    bool gave_up = false;
    bool gpm = nvml_gpm_sample(&w->st, hrc == NVML_SUCCESS ? h : NULL, w->part, gpm_inproc,
                               &gave_up);
    snapshot_check_ranges(w->part); /* absurd driver values never leave the worker */
    uint64_t t1 = mono();
    pthread_mutex_lock(&r->mu);
    part_swap(&w->part, &w->result);
    w->have_result = true;
    w->res_gpm = gpm;
    w->gpm_gave_up = w->gpm_gave_up || gave_up;
    w->lost = w->st.lost;
    w->cost_ns = t1 - t0;
    w->done = seq;
    /* Only the last of this tick's workers wakes the sampling thread; a
     * worker finishing a tick given up on is waited for by nobody. */
    bool wake = false;
    if (w->counted) {
        w->counted = false;
        wake = --r->pending == 0;
    }
    pthread_mutex_unlock(&r->mu);
    return wake;
}

static void *worker_run(void *arg)
{
    struct worker_arg a = *(struct worker_arg *)arg;
    free(arg);
    struct nvml_root *r = a.r;
    struct worker *w = a.w;
    char name[16]; /* the kernel keeps 15 characters */
    snprintf(name, sizeof(name), "migmon-gpu%u", w->index % 100000u);
    pthread_setname_np(pthread_self(), name);
    for (;;) {
        pthread_mutex_lock(&r->mu);
        /* A tick the sampling thread claimed is its own: this thread, woken
         * spuriously or just started, must not sample the GPU beside it. */
        while (!w->stop && !(w->req != w->done && w->for_thread))
            pthread_cond_wait(&w->cv, &r->mu);
        if (w->stop) {
            pthread_mutex_unlock(&r->mu);
            break;
        }
        w->for_thread = false;
        uint64_t seq = w->req;
        pthread_mutex_unlock(&r->mu);
        /* the root outlives this thread (close joins it first) */
        if (nvml_worker_sample(r, w, seq))
            pthread_cond_broadcast(&r->done_cv);
    }
    return NULL;
}

struct worker *nvml_worker_new(struct nvml_root *r, unsigned index)
{
    struct worker *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->index = index;
    w->part = &w->bufs[0];
    w->result = &w->bufs[1];
    w->last = &w->bufs[2];
    cond_init(&w->cv);
    nvml_state_init(&w->st, &r->lib);
    w->st.slow_every = r->enum_every;
    return w;
}

void nvml_worker_start(struct nvml_root *r, struct worker *w)
{
    struct worker_arg *a = malloc(sizeof(*a));
    if (!a)
        return;
    a->r = r;
    a->w = w;
    if (start_thread(&w->thr, worker_run, a) != 0) {
        free(a);
        return;
    }
    pthread_mutex_lock(&r->mu);
    w->started = true;
    pthread_mutex_unlock(&r->mu);
}

void nvml_worker_free(struct worker *w)
{
    nvml_gpm_free(&w->st);
    nvml_state_free(&w->st);
    for (int i = 0; i < 3; i++)
        snapshot_free(&w->bufs[i]);
    pthread_cond_destroy(&w->cv);
    free(w);
}
