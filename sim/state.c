/*
 * state.c — init/shutdown, the simulated clock, handles, symbol availability,
 * faults. See state.h.
 */
#include "state.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scenario_check.h"

#define HANDLE_MAGIC 0x4e564d4cu /* "NVML" */

struct sym_info {
    const char *name, *first, *from, *until;
};
static const struct sym_info syms[SYM_COUNT] = {
#define SIM_SYM(name, first, from, until) {#name, first, from, until},
#include "sim_symbols.h"
#undef SIM_SYM
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_scenario *scenario;
const struct sim_scenario *sim_scn;
static unsigned refcount;
static bool ever_initialized;
static unsigned long long session; /* counts the 0 -> 1 inits */
static bool sym_ok[SYM_COUNT];
/*
 * The functions NVIDIA's NVML reference ("Deprecation and/or Removal
 * Notices") deprecates in CUDA 13.0 that this library exports: they "will
 * be removed in CUDA 14.0", and a removed function answers
 * NVML_ERROR_DEPRECATED (26). A driver of CUDA 14.0 or later (the
 * scenario's cuda_version) has removed them; the symbols stay exported, as
 * a library keeps them "for backward binary compatibility".
 */
static const char *const removed_in_cuda14[] = {
    "nvmlDeviceGetTemperature",
    "nvmlDeviceGetCurrentClocksThrottleReasons",
    "nvmlDeviceGetSupportedClocksThrottleReasons",
    "nvmlDeviceGetViolationStatus",
};
static bool sym_removed[SYM_COUNT];
/* Calls per exported function in this process, for the tests that pin the
 * monitor's call economy (migmon_sim_call_count). */
static unsigned long call_counts[SYM_COUNT];

/* Clock: real (monotonic since init) or fixed T0 advancing STEP per
 * nvmlDeviceGetCount_v2 call after the first (MIGMON_SIM_TIME=T0[+STEP]). */
static bool clock_fixed;
static double clock_t0, clock_step, mono_start;
static unsigned long long count_v2_calls;

struct fault_state {
    bool syms[SYM_COUNT];
    long seen, fired;
};
static struct fault_state faults[SIM_MAX_FAULTS];

static bool grow[SIM_MAX_GPUS][SIM_MAX_MIG_SLOTS + 1][3];

static struct nvmlDevice_st gpu_handles[SIM_MAX_GPUS];
static struct nvmlDevice_st mig_handles[SIM_MAX_GPUS][SIM_MAX_MIG_SLOTS];

static bool verbose(void)
{
    const char *v = getenv("MIGMON_SIM_VERBOSE");
    return v && !strcmp(v, "1");
}

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double sim_time(void)
{
    if (clock_fixed)
        return clock_t0 + clock_step * (double)(count_v2_calls > 1 ? count_v2_calls - 1 : 0);
    return mono_now() - mono_start;
}

bool sim_clock_real(void)
{
    return !clock_fixed;
}

unsigned long long sim_timestamp_us(double t)
{
    return SIM_EPOCH_US + (unsigned long long)llround(t * 1e6);
}

static int parse_time_env(char *err, size_t errlen)
{
    const char *v = getenv("MIGMON_SIM_TIME");
    char *end;
    clock_fixed = false;
    clock_t0 = clock_step = 0;
    if (!v || !*v)
        return 0;
    clock_t0 = strtod(v, &end);
    if (end == v || !isfinite(clock_t0))
        goto bad;
    if (*end == '+') {
        const char *s = end + 1;
        clock_step = strtod(s, &end);
        if (end == s || !isfinite(clock_step) || clock_step < 0)
            goto bad;
    }
    if (*end)
        goto bad;
    clock_fixed = true;
    return 0;
bad:
    snprintf(err, errlen, "MIGMON_SIM_TIME='%s': expected T0 or T0+STEP (seconds)", v);
    return -1;
}

static bool version_in(sim_version_t drv, const char *first, const char *from, const char *until)
{
    sim_version_t f = 0, a, b;
    if (strcmp(first, "0") != 0 && sim_version_parse(first, &f) != 0)
        return false;
    if (drv < f)
        return false;
    if (from[0] && sim_version_parse(from, &a) == 0 && sim_version_parse(until, &b) == 0 &&
        drv >= a && drv < b)
        return false;
    return true;
}

/* Which exported symbols each fault's function pattern matches, into out
 * (NULL: only check that every pattern matches one). */
static int match_faults(const struct sim_scenario *s, struct fault_state *out, char *err,
                        size_t errlen)
{
    if (out)
        memset(out, 0, sizeof(*out) * SIM_MAX_FAULTS);
    for (int i = 0; i < s->n_faults; i++) {
        bool any = false;
        for (int k = 0; k < SYM_COUNT; k++) {
            bool m = fnmatch(s->faults[i].function, syms[k].name, 0) == 0;
            if (out)
                out[i].syms[k] = m;
            any |= m;
        }
        if (!any) {
            snprintf(err, errlen, "%s: [fault.%s] function '%s' matches no exported symbol",
                     s->path, s->faults[i].name, s->faults[i].function);
            return -1;
        }
    }
    return 0;
}

static void handles_init(void)
{
    for (int g = 0; g < SIM_MAX_GPUS; g++) {
        gpu_handles[g] = (struct nvmlDevice_st){HANDLE_MAGIC, g, -1};
        for (int s = 0; s < SIM_MAX_MIG_SLOTS; s++)
            mig_handles[g][s] = (struct nvmlDevice_st){HANDLE_MAGIC, g, s};
    }
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/*
 * A fault's delay or hang: sleeps ms milliseconds, or until the process is
 * killed, with the lock released, so that calls on other threads (on other
 * devices, or the shutdown that a watchdog might try) proceed. Called and
 * returns with the lock held. False if the session ended meanwhile: the
 * scenario the caller was reading is gone.
 */
static bool pause_unlocked(long ms, bool hang)
{
    unsigned long long sess = session;
    pthread_mutex_unlock(&lock);
    while (hang)
        sleep_ms(3600L * 1000);
    sleep_ms(ms);
    pthread_mutex_lock(&lock);
    return scenario && session == sess;
}

/*
 * The fault that fires for this call, or NULL: the first one whose symbol,
 * window and target match and whose after_calls/calls counts let it through
 * (each match counts, fired or not). pauses_only: consider only faults with
 * a delay or hang, and count only those (init and shutdown).
 */
static const struct sim_fault *fault_fire(int sym, double t, const char *target, bool pauses_only)
{
    for (int i = 0; i < scenario->n_faults; i++) {
        const struct sim_fault *f = &scenario->faults[i];
        struct fault_state *st = &faults[i];
        if (!st->syms[sym] || t < f->from || t >= f->until || fnmatch(f->target, target, 0) != 0)
            continue;
        if (pauses_only && f->delay_ms <= 0 && !f->hang)
            continue;
        if (++st->seen <= f->after_calls)
            continue;
        if (f->calls >= 0 && st->fired >= f->calls)
            continue;
        st->fired++;
        return f;
    }
    return NULL;
}

static bool any_inaccessible(const struct sim_scenario *s)
{
    for (int i = 0; i < s->n_gpus; i++)
        if (!s->gpus[i].accessible)
            return true;
    return false;
}

/*
 * nvmlInit_v2 / nvmlInitWithFlags / nvmlInit. The first reference reads the
 * scenario (so each 0 -> 1 init can load a different one). Without a usable
 * scenario the library behaves like a host whose kernel driver is not
 * loaded. With zero GPUs, NVML fails init unless NVML_INIT_FLAG_NO_GPUS is
 * given ("Don't fail nvmlInit() when no GPUs are found"); drivers 550 and
 * later have NVML_ERROR_GPU_NOT_FOUND ("No GPUs were found") for it.
 * nvmlInit (v1) attaches every GPU, so one the caller may not open fails it.
 */
nvmlReturn_t sim_init(unsigned flags, bool v1, int sym)
{
    char err[600];
    const char *path;
    struct sim_scenario *s;
    nvmlReturn_t r = NVML_SUCCESS;
    const struct sim_fault *f;

    pthread_mutex_lock(&lock);
    if (refcount > 0) {
        if (v1 && any_inaccessible(scenario))
            r = NVML_ERROR_NO_PERMISSION;
        else
            refcount++;
        goto out;
    }
    path = getenv("MIGMON_SIM_SCENARIO");
    if (!path || !*path) {
        snprintf(err, sizeof(err), "MIGMON_SIM_SCENARIO is not set");
        goto not_loaded;
    }
    s = scenario_load(path, sim_variant_driver, err, sizeof(err));
    if (!s)
        goto not_loaded;
    if (parse_time_env(err, sizeof(err)) != 0 || match_faults(s, faults, err, sizeof(err)) != 0) {
        scenario_free(s);
        goto not_loaded;
    }
    if (s->n_gpus == 0 && !(flags & NVML_INIT_FLAG_NO_GPUS)) {
        r = s->sys.drv >= SIM_VERSION(550, 0, 0) ? NVML_ERROR_GPU_NOT_FOUND
                                                 : NVML_ERROR_DRIVER_NOT_LOADED;
        scenario_free(s);
        goto out;
    }
    if (v1 && any_inaccessible(s)) {
        scenario_free(s);
        r = NVML_ERROR_NO_PERMISSION;
        goto out;
    }
    scenario_free(scenario);
    scenario = s;
    sim_scn = s;
    for (int k = 0; k < SYM_COUNT; k++) {
        sym_ok[k] = version_in(s->sys.drv, syms[k].first, syms[k].from, syms[k].until);
        sym_removed[k] = false;
        for (size_t j = 0; j < sizeof(removed_in_cuda14) / sizeof(removed_in_cuda14[0]); j++)
            if (s->sys.cuda_version >= 14000 && !strcmp(syms[k].name, removed_in_cuda14[j]))
                sym_removed[k] = true;
    }
    handles_init();
    memset(grow, 0, sizeof(grow));
    count_v2_calls = 0;
    mono_start = mono_now();
    refcount = 1;
    ever_initialized = true;
    session++;
    goto out;
not_loaded:
    if (verbose())
        fprintf(stderr, "nvml-sim: %s\n", err);
    r = NVML_ERROR_DRIVER_NOT_LOADED;
out:
    /* Init is never failed by a fault, but it may be slowed down or hung. */
    if (r == NVML_SUCCESS && (f = fault_fire(sym, sim_time(), "system", true)) != NULL)
        pause_unlocked(f->delay_ms, f->hang);
    pthread_mutex_unlock(&lock);
    return r;
}

nvmlReturn_t sim_shutdown(void)
{
    nvmlReturn_t r = NVML_SUCCESS;
    const struct sim_fault *f;
    pthread_mutex_lock(&lock);
    /* Like init, shutdown is only ever delayed or hung, before it acts. */
    if (refcount > 0 && (f = fault_fire(SYM_nvmlShutdown, sim_time(), "system", true)) != NULL)
        pause_unlocked(f->delay_ms, f->hang);
    if (refcount == 0) {
        /* Extra shutdowns after a real session are not errors (docs/nvml-facts.md §2). */
        r = ever_initialized ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
    } else if (--refcount == 0) {
        scenario_free(scenario);
        scenario = NULL;
        sim_scn = NULL;
    }
    pthread_mutex_unlock(&lock);
    return r;
}

void sim_peek_nvml_version(char *buf, size_t len, struct sim_raw *raw)
{
    char err[600];
    const char *path = getenv("MIGMON_SIM_SCENARIO");
    struct sim_scenario *s;

    pthread_mutex_lock(&lock);
    raw->set = false;
    if (scenario) {
        snprintf(buf, len, "%s", scenario->sys.nvml_version);
        *raw = scenario->sys.nvml_raw;
    } else if (path && *path && (s = scenario_load(path, sim_variant_driver, err, sizeof(err)))) {
        snprintf(buf, len, "%s", s->sys.nvml_version);
        *raw = s->sys.nvml_raw;
        scenario_free(s);
    } else if (sim_variant_driver[0]) {
        sim_version_t v = 0;
        sim_version_parse(sim_variant_driver, &v);
        snprintf(buf, len, "%d.%s", scenario_default_cuda(v) / 1000, sim_variant_driver);
    } else {
        snprintf(buf, len, "13.610.43.03"); /* the newest driver this library models */
    }
    pthread_mutex_unlock(&lock);
}

nvmlReturn_t sim_enter(struct sim_call *c, int sym)
{
    pthread_mutex_lock(&lock);
    memset(c, 0, sizeof(*c));
    c->sym = sym;
    c->d.gpu = c->d.slot = -1;
    call_counts[sym]++;
    if (!scenario)
        return NVML_ERROR_UNINITIALIZED;
    if (!sym_ok[sym])
        return NVML_ERROR_FUNCTION_NOT_FOUND;
    if (sym_removed[sym])
        return NVML_ERROR_DEPRECATED;
    if (sym == SYM_nvmlDeviceGetCount_v2)
        count_v2_calls++; /* the monitor calls it once per tick: the clock's step */
    c->t = sim_time();
    return NVML_SUCCESS;
}

nvmlReturn_t sim_leave(nvmlReturn_t r)
{
    pthread_mutex_unlock(&lock);
    return r;
}

const struct sim_mig *sim_mig_live(int gpu, int slot, double t)
{
    for (int i = 0; i < scenario->n_migs; i++) {
        const struct sim_mig *m = &scenario->migs[i];
        if (m->gpu == gpu && m->slot == slot && m->from <= t && t < m->until)
            return m;
    }
    return NULL;
}

/* Handle -> gpu/slot, by address: a handle is a pointer into our tables. */
static bool handle_lookup(nvmlDevice_t h, int *gpu, int *slot)
{
    uintptr_t p = (uintptr_t)h;
    uintptr_t g0 = (uintptr_t)&gpu_handles[0], g1 = (uintptr_t)&gpu_handles[SIM_MAX_GPUS];
    uintptr_t m0 = (uintptr_t)&mig_handles[0][0];
    uintptr_t m1 = (uintptr_t)&mig_handles[SIM_MAX_GPUS - 1][SIM_MAX_MIG_SLOTS];
    size_t sz = sizeof(struct nvmlDevice_st);
    if (p >= g0 && p < g1 && (p - g0) % sz == 0) {
        *gpu = (int)((p - g0) / sz);
        *slot = -1;
    } else if (p >= m0 && p < m1 && (p - m0) % sz == 0) {
        size_t i = (p - m0) / sz;
        *gpu = (int)(i / SIM_MAX_MIG_SLOTS);
        *slot = (int)(i % SIM_MAX_MIG_SLOTS);
    } else {
        return false;
    }
    return h->magic == HANDLE_MAGIC;
}

nvmlReturn_t sim_fault(struct sim_call *c, int gpu, int slot)
{
    char target[40];
    const struct sim_fault *f;
    int code;
    if (gpu < 0)
        snprintf(target, sizeof(target), "system");
    else if (slot < 0)
        snprintf(target, sizeof(target), "gpu.%d", gpu);
    else
        snprintf(target, sizeof(target), "gpu.%d.mig.%d", gpu, slot);
    f = fault_fire(c->sym, c->t, target, false);
    if (!f)
        return NVML_SUCCESS;
    code = f->code; /* f is gone if the session ends while we sleep */
    if ((f->delay_ms > 0 || f->hang) && !pause_unlocked(f->delay_ms, f->hang))
        return NVML_ERROR_UNINITIALIZED;
    return code < 0 ? NVML_SUCCESS : (nvmlReturn_t)code;
}

nvmlReturn_t sim_enter_dev(struct sim_call *c, int sym, nvmlDevice_t device)
{
    nvmlReturn_t r = sim_enter(c, sym);
    int gpu, slot;
    if (r != NVML_SUCCESS)
        return r;
    if (!device || !handle_lookup(device, &gpu, &slot) || gpu >= scenario->n_gpus ||
        !scenario->gpus[gpu].accessible)
        return NVML_ERROR_INVALID_ARGUMENT;
    c->d.gpu = gpu;
    c->d.slot = slot;
    c->d.g = &scenario->gpus[gpu];
    c->d.mig_on = c->d.g->mig_mode == SIM_MIG_ON;
    if (slot >= 0) {
        /* A MIG handle is valid while a MIG device sits in its slot; the slot
         * may later hold a different device ("handles may be reused"). */
        c->d.m = c->d.mig_on ? sim_mig_live(gpu, slot, c->t) : NULL;
        if (!c->d.m)
            return NVML_ERROR_INVALID_ARGUMENT;
    }
    return sim_fault(c, gpu, slot);
}

nvmlDevice_t sim_gpu_handle(int gpu)
{
    return &gpu_handles[gpu];
}

nvmlDevice_t sim_mig_handle(int gpu, int slot)
{
    return &mig_handles[gpu][slot];
}

unsigned long long sim_session(void)
{
    return session;
}

bool sim_driver_at_least(unsigned a, unsigned b, unsigned c)
{
    return scenario->sys.drv >= SIM_VERSION(a, b, c);
}

bool *sim_grow_flag(int gpu, int slot, int kind)
{
    return &grow[gpu][slot + 1][kind];
}

/* Not an NVML function: how many calls this process made to the function
 * named (NULL: all of them) since the last reset. Exported by every
 * library build for the tests. */
unsigned long migmon_sim_call_count(const char *name);
void migmon_sim_call_reset(void);

unsigned long migmon_sim_call_count(const char *name)
{
    unsigned long n = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < SYM_COUNT; i++) {
        if (!name || strcmp(name, syms[i].name) == 0)
            n += call_counts[i];
    }
    pthread_mutex_unlock(&lock);
    return n;
}

void migmon_sim_call_reset(void)
{
    pthread_mutex_lock(&lock);
    memset(call_counts, 0, sizeof(call_counts));
    pthread_mutex_unlock(&lock);
}

/* Not an NVML function: whether the scenario file at path would load, with
 * the same checks as the nvmlInit that reads it (MIGMON_SIM_TIME aside).
 * Returns 0, or -1 with the message nvmlInit would give (MIGMON_SIM_VERBOSE)
 * in err: "FILE:LINE: what" or "FILE: [section] what". Changes no state:
 * the monitor's --demo calls it before it starts, to report a bad file as
 * such instead of as a driver that is not loaded. */
int migmon_sim_check_scenario(const char *path, char *err, size_t errlen);

int migmon_sim_check_scenario(const char *path, char *err, size_t errlen)
{
    struct sim_scenario *s = scenario_load(path, sim_variant_driver, err, errlen);
    if (!s)
        return -1;
    int rc = match_faults(s, NULL, err, errlen);
    scenario_free(s);
    return rc;
}
