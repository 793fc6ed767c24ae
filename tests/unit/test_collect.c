/*
 * The collector and NVML backend against the simulator (dlopen, as on a real
 * machine): device model, remembered NOT_SUPPORTED, re-enumeration, and no
 * heap allocation in the steady-state tick.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "sim_env.h"

#include "backend/backend.h"
#include "backend/gpm/gpm.h"
#include "core/debuglog.h"
#include "engine/collect.h"

/* Heap calls made by code linked from libmigmon.a (the test links with
 * -Wl,--wrap=malloc,calloc,realloc). The simulator's own allocations are
 * not counted: it is a separate shared object. */
static long heap_calls;
void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);
/* The GPU worker threads allocate too: a relaxed atomic count. */
#define COUNT() __atomic_fetch_add(&heap_calls, 1, __ATOMIC_RELAXED)
void *__wrap_malloc(size_t n) { COUNT(); return __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) { COUNT(); return __real_calloc(a, b); }
void *__wrap_realloc(void *p, size_t n) { COUNT(); return __real_realloc(p, n); }


static void open_sim(struct collector *c)
{
    const char *lib = getenv("MIGMON_SIM_LIB");
    assert_non_null(lib);
    struct collect_opts o = {.nvml_path = lib, .proc_root = NULL};
    char err[2048];
    assert_int_equal(collect_open(c, &o, err, sizeof(err)), 0);
    assert_non_null(c->be_state);
}

/*
 * A driver that corrupts the NVML session of the process that makes GPM
 * calls (h100-pcie-mig-535-gpm-corrupts.ini: after its first GPM sample a
 * process's memory reads return IN_USE forever). With the helper running
 * (--gpm on keeps it sampling), the monitor's own VRAM readings stay exact
 * for 1000 ticks while GPM values keep arriving.
 */
static void test_gpm_isolation_keeps_vram(void **state)
{
    (void)state;
    const char *bin = getenv("MIGMON_BIN");
    assert_non_null(bin);
    use_scenario("h100-pcie-mig-535-gpm-corrupts.ini", "100");
    struct collector c;
    struct collect_opts o = {.nvml_path = getenv("MIGMON_SIM_LIB"),
                             .gpm_exe = bin,
                             .gpm_mode = GPM_ON,
                             .interval_ms = 100};
    char err[2048];
    assert_int_equal(collect_open(&c, &o, err, sizeof(err)), 0);
    collect_settle(&c, 5000);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s);
    assert_int_equal(s.ndevices, 4);
    double used[4];
    for (size_t i = 1; i < 4; i++) {
        assert_int_equal(s.devices[i].m[M_MEM_USED].src, MSRC_DIRECT);
        used[i] = s.devices[i].m[M_MEM_USED].value;
    }
    unsigned gpm_ticks = 0;
    for (int t = 0; t < 1000; t++) {
        struct timespec ts = {0, 1000000L}; /* 1 ms: about ten helper rounds in all */
        nanosleep(&ts, NULL);
        collect_tick(&c, &s);
        assert_int_equal(s.ndevices, 4);
        for (size_t i = 1; i < 4; i++) {
            assert_int_equal(s.devices[i].m[M_MEM_USED].src, MSRC_DIRECT);
            assert_true(s.devices[i].m[M_MEM_USED].value == used[i]);
        }
        gpm_ticks += s.devices[1].m[M_GPU_UTIL].src == MSRC_GPM;
    }
    assert_int_equal(gpm_ticks, 1000);
    snapshot_free(&s);
    collect_close(&c);
}

/*
 * Polled faster than the driver samples processes (the simulator keeps one
 * per-process sample per second; ticks 0.1 s apart), most ticks bring no
 * new sample. That is not an idle GPU: SM utilisation is a real sum, the
 * last one carried (bounded), or none; never a fake 0 (the scenario's
 * processes always run at 3 % and more).
 */
static void test_no_fake_zero_between_samples(void **state)
{
    (void)state;
    use_scenario("a100-sxm4-80gb.ini", "100+0.1");
    struct collector c;
    open_sim(&c);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    int real = 0, carried = 0, none = 0;
    for (int t = 0; t < 40; t++) {
        collect_tick(&c, &s);
        const struct metric *m = &s.devices[0].m[M_SM_UTIL];
        if (m->src == MSRC_PROCESS) {
            assert_true(m->value >= 3);
            real++;
        } else if (m->src == MSRC_CARRIED) {
            assert_true(m->value >= 3);
            carried++;
        } else {
            assert_int_equal(m->src, MSRC_NONE);
            assert_string_equal(m->why, "no new per-process sample from the driver");
            none++;
        }
        /* per-process SM% likewise: a value only with a new sample */
        for (size_t i = 0; i < s.devices[0].nprocs; i++) {
            const struct gpu_process *p = &s.procs[s.devices[0].proc_first + i];
            if (metric_ok(&p->sm_util))
                assert_true(p->sm_util.value >= 3);
        }
    }
    assert_true(real >= 3);
    assert_true(carried >= 3);
    assert_true(none >= 3);
    snapshot_free(&s);
    collect_close(&c);
}

#define MiB 1048576.0

/* used and total both none with the driver's reason */
static void assert_vram_none(const struct device *d, const char *why)
{
    static const int ks[] = {M_MEM_USED, M_MEM_TOTAL};
    for (size_t i = 0; i < 2; i++) {
        const int k = ks[i];
        assert_int_equal(d->m[k].src, MSRC_NONE);
        assert_non_null(d->m[k].why);
        assert_string_equal(d->m[k].why, why);
    }
}

/*
 * A failed VRAM read is none with the driver's reason, used and total
 * alike: never 0 (seed v0.3: "VRAM 0/0 MB") and never the last value held
 * over (seed v0.3.1/v0.3.6: a stale VRAM figure); the next good read is the
 * new value at once. vram-glitch.ini: GetMemoryInfo answers UNKNOWN for
 * 1004 <= t < 1010; the process holds wave(50000, 10000, 12) MiB.
 */
static void test_failed_vram_read_is_none(void **state)
{
    (void)state;
    use_scenario("vram-glitch.ini", "1003+1");
    struct collector c;
    open_sim(&c);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s); /* t = 1003: 45000 MiB */
    const struct device *d = &s.devices[0];
    assert_int_equal(d->m[M_MEM_USED].src, MSRC_DIRECT);
    assert_true(d->m[M_MEM_USED].value == 45000 * MiB);
    assert_true(d->m[M_MEM_TOTAL].value == 81920 * MiB);
    for (int t = 1004; t < 1010; t++) {
        collect_tick(&c, &s);
        assert_vram_none(&s.devices[0], "NVML_ERROR_UNKNOWN");
    }
    collect_tick(&c, &s); /* t = 1010: 58660.25 MiB, not the 45000 of before */
    d = &s.devices[0];
    assert_int_equal(d->m[M_MEM_USED].src, MSRC_DIRECT);
    assert_true(d->m[M_MEM_USED].value > 58660 * MiB && d->m[M_MEM_USED].value < 58661 * MiB);
    assert_true(d->m[M_MEM_TOTAL].value == 81920 * MiB);
    snapshot_free(&s);
    collect_close(&c);

    /* One MIG instance's reads fail (the seed's case): that instance is
     * none, its neighbours keep their exact readings. */
    char scen[] = "/tmp/migmon-scen-XXXXXX";
    int fd = mkstemp(scen);
    assert_true(fd >= 0);
    close(fd);
    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof(cmd),
             "cat '%s/sim/scenarios/h100-pcie-mig-535.ini' - >'%s' <<'EOF'\n"
             "[fault.slot1-vram]\ntarget = gpu.0.mig.1\n"
             "function = nvmlDeviceGetMemoryInfo*\nreturn = UNKNOWN\n"
             "from = 20\nuntil = 22\nEOF\n",
             getenv("MIGMON_SRC"), scen);
    assert_int_equal(system(cmd), 0);
    setenv("MIGMON_SIM_SCENARIO", scen, 1);
    setenv("MIGMON_SIM_TIME", "19+1", 1);
    open_sim(&c);
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s); /* t = 19 */
    assert_int_equal(s.ndevices, 4);
    double before[4];
    for (size_t i = 1; i < 4; i++) {
        assert_int_equal(s.devices[i].m[M_MEM_USED].src, MSRC_DIRECT);
        before[i] = s.devices[i].m[M_MEM_USED].value;
    }
    for (int t = 20; t < 22; t++) {
        collect_tick(&c, &s);
        assert_int_equal(s.devices[2].mig_index, 1);
        assert_vram_none(&s.devices[2], "NVML_ERROR_UNKNOWN");
        for (size_t i = 1; i < 4; i += 2) {
            assert_int_equal(s.devices[i].m[M_MEM_USED].src, MSRC_DIRECT);
            assert_true(s.devices[i].m[M_MEM_USED].value == before[i]);
        }
    }
    /* t = 22: it reads again, its process's wave(9000, 2500, 300) MiB:
     * 10111.59 MiB, no longer the 9968.79 of t = 19 */
    collect_tick(&c, &s);
    const struct metric *u = &s.devices[2].m[M_MEM_USED];
    assert_int_equal(u->src, MSRC_DIRECT);
    assert_true(u->value > 10111.5 * MiB && u->value < 10111.7 * MiB);
    assert_true(before[2] > 9968.7 * MiB && before[2] < 9968.9 * MiB);
    snapshot_free(&s);
    collect_close(&c);
    unlink(scen);
}

static size_t count_kind(const struct snapshot *s, enum device_kind k)
{
    size_t n = 0;
    for (size_t i = 0; i < s->ndevices; i++)
        n += s->devices[i].kind == k;
    return n;
}

static void test_h100_535_model(void **state)
{
    (void)state;
    use_scenario("h100-pcie-mig-535.ini", "100");
    struct collector c;
    open_sim(&c);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    assert_int_equal(collect_tick(&c, &s), 0);
    assert_true(s.gpu_ok);
    assert_string_equal(s.driver_version, "535.129.03");
    assert_int_equal(count_kind(&s, DEV_GPU), 1);
    assert_int_equal(count_kind(&s, DEV_MIG), 3);
    const struct device *p = &s.devices[0];
    assert_int_equal(p->kind, DEV_GPU);
    assert_true(p->mig_enabled);
    assert_int_equal(p->slices_total, 7);
    assert_int_equal(p->m[M_GPU_UTIL].src, MSRC_NONE);
    assert_int_equal(p->m[M_MEM_USED].src, MSRC_NONE);
    assert_int_equal(p->m[M_TEMP].src, MSRC_DIRECT);
    for (size_t i = 1; i < s.ndevices; i++) {
        const struct device *d = &s.devices[i];
        assert_int_equal(d->kind, DEV_MIG);
        assert_int_equal(d->parent_pos, 0);
        assert_string_equal(d->parent_uuid, p->uuid);
        assert_int_equal(d->m[M_MEM_USED].src, MSRC_DIRECT);
        assert_int_equal(d->m[M_MEM_TOTAL].src, MSRC_DIRECT);
        assert_true(d->m[M_MEM_USED].value <= d->m[M_MEM_TOTAL].value);
        assert_int_equal(d->m[M_GPU_UTIL].src, MSRC_NONE);
        assert_int_equal(d->m[M_TEMP].src, MSRC_DIRECT);
        assert_true(d->m[M_TEMP].value == p->m[M_TEMP].value);
        assert_true(d->gi_id >= 0 && d->ci_id >= 0);
        assert_true(d->slices >= 1 && d->slices <= 3);
    }
    snapshot_free(&s);
    collect_close(&c);
}

/* The failing utilisation call on a MIG handle is made once per device, not
 * once per tick; the per-process data call likewise. */
static void test_not_supported_is_remembered(void **state)
{
    (void)state;
    use_scenario("h100-pcie-mig-535.ini", "100+1");
    char log[] = "/tmp/migmon-collect-XXXXXX";
    int fd = mkstemp(log);
    assert_true(fd >= 0);
    close(fd);
    char err[256];
    assert_int_equal(debuglog_open(log, 0, err, sizeof(err)), 0);
    struct collector c;
    open_sim(&c);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    for (int t = 0; t < 5; t++)
        collect_tick(&c, &s);
    debuglog_close();
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    char line[1024];
    int util_mig = 0, util_gpu = 0, procutil_mig = 0, mem_mig = 0;
    while (fgets(line, sizeof(line), f)) {
        bool mig = strstr(line, "dev=GPU0/MIG") != NULL;
        if (strstr(line, " nvmlDeviceGetUtilizationRates dev="))
            (mig ? &util_mig : &util_gpu)[0]++;
        if (mig && strstr(line, " nvmlDeviceGetProcessUtilization dev="))
            procutil_mig++;
        if (mig && strstr(line, " nvmlDeviceGetMemoryInfo_v2 dev="))
            mem_mig++;
    }
    fclose(f);
    unlink(log);
    assert_int_equal(util_mig, 3);      /* once per MIG device */
    assert_int_equal(util_gpu, 1);      /* once for the MIG-enabled parent */
    assert_int_equal(procutil_mig, 6);  /* size + data call, once per MIG device */
    assert_int_equal(mem_mig, 15);      /* memory is read every tick */
    snapshot_free(&s);
    collect_close(&c);
}

/* After warm-up a tick allocates nothing (DGX: 8 GPUs, 56 MIG devices). */
static void test_steady_state_no_allocation(void **state)
{
    (void)state;
    use_scenario("dgx-a100-8x7.ini", "100+1");
    struct collector c;
    open_sim(&c);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    for (int t = 0; t < 3; t++)
        collect_tick(&c, &s);
    assert_int_equal(s.ndevices, 64);
    long before = heap_calls;
    for (int t = 0; t < 20; t++)
        collect_tick(&c, &s);
    assert_int_equal(heap_calls - before, 0);
    assert_int_equal(s.ndevices, 64);
    snapshot_free(&s);
    collect_close(&c);
}

/* The same with processes and their /proc facts: a process list on every
 * tick (grow-only buffers, the /proc cache) allocates nothing either. */
static void test_steady_state_processes_no_allocation(void **state)
{
    (void)state;
    static const char *const scens[] = {"dgx-a100-8x7.ini", "process-churn.ini"};
    for (int k = 0; k < 2; k++) {
        use_scenario(scens[k], "30+0.5");
        const char *lib = getenv("MIGMON_SIM_LIB");
        char root[PATH_MAX];
        snprintf(root, sizeof(root), "%s/tests/fixtures/proc/gpu-host", getenv("MIGMON_SRC"));
        struct collect_opts o = {.nvml_path = lib, .proc_root = root, .top = 16};
        struct collector c;
        char err[2048];
        assert_int_equal(collect_open(&c, &o, err, sizeof(err)), 0);
        struct snapshot s;
        memset(&s, 0, sizeof(s));
        for (int t = 0; t < 3; t++)
            collect_tick(&c, &s);
        assert_true(s.nprocs >= 3);
        long before = heap_calls;
        for (int t = 0; t < 20; t++)
            collect_tick(&c, &s);
        assert_int_equal(heap_calls - before, 0);
        assert_true(s.nprocs >= 3);
        snapshot_free(&s);
        collect_close(&c);
    }
}

/* One collector across a MIG reconfiguration: the list is re-enumerated and
 * the new instances get their own static facts (cached by UUID). */
static void test_reconfiguration_across_ticks(void **state)
{
    (void)state;
    use_scenario("mig-reconfig.ini", "50+10"); /* ticks at t = 50, 60, 70, 80, ... */
    struct collector c;
    open_sim(&c);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s);
    assert_int_equal(count_kind(&s, DEV_MIG), 2);
    assert_int_equal(s.devices[2].gi_id, 5);
    /* t = 60: slot 1 destroyed; its cached handle answers INVALID_ARGUMENT,
     * so the slots are walked again at once */
    collect_tick(&c, &s);
    assert_int_equal(count_kind(&s, DEV_MIG), 1);
    /* t = 70: new instances in slots that were empty: nothing stale to
     * notice, so they are found by the re-walk at the slow cadence (every 5
     * ticks at the default 1 s interval), within one slow period */
    int seen_at = -1;
    for (int t = 2; t <= 7 && seen_at < 0; t++) {
        collect_tick(&c, &s);
        if (count_kind(&s, DEV_MIG) == 3)
            seen_at = t;
    }
    assert_true(seen_at >= 2 && seen_at <= 7);
    assert_int_equal(count_kind(&s, DEV_MIG), 3);
    int gis[3] = {s.devices[1].gi_id, s.devices[2].gi_id, s.devices[3].gi_id};
    assert_int_equal(gis[0], 1);
    assert_int_equal(gis[1], 13);
    assert_int_equal(gis[2], 11);
    assert_string_equal(s.devices[2].profile, "1g.10gb");
    assert_int_equal(s.devices[2].mig_index, 2);
    snapshot_free(&s);
    collect_close(&c);
}

/* A MIG device whose UUID cannot be read (mig-no-uuid.ini: slot 1's
 * GetUUID fails for t < 10) is listed with what is known and the reason,
 * and gets its UUID from the next walk of the slots once the call works.
 * A transient GetMigMode error (20 <= t < 30) is not "MIG off". */
static void test_mig_without_uuid_listed(void **state)
{
    (void)state;
    use_scenario("mig-no-uuid.ini", "0+1");
    struct collector c;
    open_sim(&c);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s);
    assert_int_equal(count_kind(&s, DEV_MIG), 2);
    const struct device *d = &s.devices[2];
    assert_int_equal(d->mig_index, 1);
    assert_string_equal(d->uuid, "");
    assert_non_null(d->uuid_why);
    assert_string_equal(d->uuid_why, "NVML_ERROR_UNKNOWN");
    assert_string_equal(d->profile, "2g.20gb");
    assert_int_equal(d->gi_id, 3);
    assert_int_equal(d->m[M_MEM_USED].src, MSRC_DIRECT);
    assert_true(d->m[M_MEM_USED].value == 5000.0 * 1024 * 1024);
    assert_string_equal(s.devices[0].uuid, "GPU-0b7e4c2d-61a9-4e3f-b5d8-2f7a9c1e6d40");
    assert_null(s.devices[0].uuid_why);
    /* t = 10: the call works; the slots are walked again within one slow
     * period (5 ticks) */
    int seen_at = -1;
    for (int t = 1; t <= 16 && seen_at < 0; t++) {
        collect_tick(&c, &s);
        assert_int_equal(count_kind(&s, DEV_MIG), 2);
        if (s.devices[2].uuid[0])
            seen_at = t;
    }
    assert_true(seen_at >= 10 && seen_at <= 15);
    assert_string_equal(s.devices[2].uuid, "MIG-7c1d2e3f-4a5b-5c6d-8e9f-0a1b2c3d4e5f");
    assert_null(s.devices[2].uuid_why);
    assert_string_equal(s.devices[2].profile, "2g.20gb");
    /* 20 <= t < 30: GetMigMode answers UNKNOWN; the last known mode holds */
    while (seen_at++ < 30) {
        collect_tick(&c, &s);
        assert_true(s.devices[0].mig_enabled);
        assert_int_equal(count_kind(&s, DEV_MIG), 2);
    }
    snapshot_free(&s);
    collect_close(&c);
}

/* hostile.ini: GPU 0's driver answers compute capability 377123080.-864614603.
 * That is no capability: unknown (-1), as for a failed read; GPU 1 keeps
 * the A100's 8.0. */
static void test_absurd_compute_capability_unknown(void **state)
{
    (void)state;
    use_scenario("hostile.ini", "100");
    struct collector c;
    open_sim(&c);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s);
    assert_int_equal(s.ndevices, 2);
    assert_int_equal(s.devices[0].cc_major, -1);
    assert_int_equal(s.devices[0].cc_minor, -1);
    assert_int_equal(s.devices[1].cc_major, 8);
    assert_int_equal(s.devices[1].cc_minor, 0);
    snapshot_free(&s);
    collect_close(&c);
}

/* hostile.ini: GPU 0's per-process samples are PID 0 at 10 % SM and PID
 * 4242 at 20 %. PID 0 is no process (dropped from the list), so the GPU's
 * SM utilisation is 4242's alone: 20, not 30. */
static void test_pid0_sample_not_summed(void **state)
{
    (void)state;
    use_scenario("hostile.ini", "100");
    struct collector c;
    open_sim(&c);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s);
    const struct metric *sm = &s.devices[0].m[M_SM_UTIL];
    assert_int_equal(sm->src, MSRC_PROCESS);
    assert_true(sm->value == 20);
    assert_int_equal(s.devices[0].nprocs, 1);
    assert_int_equal(s.procs[s.devices[0].proc_first].pid, 4242);
    assert_true(s.procs[s.devices[0].proc_first].sm_util.value == 20);
    snapshot_free(&s);
    collect_close(&c);
}

/* A scenario file of this text in /tmp, on the simulated clock simtime;
 * the path is written to path (unlink it after). */
static void use_scenario_text(char *path, size_t len, const char *text, const char *simtime)
{
    snprintf(path, len, "/tmp/migmon-scenario-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    setenv("MIGMON_SIM_SCENARIO", path, 1);
    setenv("MIGMON_SIM_TIME", simtime, 1);
}

/* An H100 PCIe with MIG on (535.129.03): a 3g in slot 0, a 2g in slot 1. */
#define STATIC_RETRY_MACHINE                                                                   \
    "[system]\ndriver_version = 535.129.03\n"                                                   \
    "[gpu.0]\nname = NVIDIA H100 PCIe\nmemory_total_mib = 81559\nmig_mode = on\n"              \
    "[gpu.0.mig.0]\nprofile = 3g.40gb\ngi = 2\n"                                                \
    "[gpu.0.mig.1]\nprofile = 2g.20gb\ngi = 3\n"

/* The slowdown threshold answers UNKNOWN once (the first call); the
 * shutdown threshold read right after it works. The slowdown threshold is
 * N/A with the reason at first, and read again one slow period (5 ticks
 * of 1 s) later: 89 C from then on. */
static void test_threshold_read_again_after_a_failure(void **state)
{
    (void)state;
    char path[64];
    use_scenario_text(path, sizeof(path),
                      STATIC_RETRY_MACHINE "[fault.slowdown]\ntarget = gpu.0\n"
                                           "function = nvmlDeviceGetTemperatureThreshold\n"
                                           "calls = 1\nreturn = UNKNOWN\n",
                      "0+1");
    struct collector c;
    open_sim(&c);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s);
    const struct device *d = &s.devices[0];
    assert_int_equal(d->m[M_TEMP_SLOWDOWN].src, MSRC_NONE);
    assert_string_equal(d->m[M_TEMP_SLOWDOWN].why, "NVML_ERROR_UNKNOWN");
    assert_int_equal(d->m[M_TEMP_SHUTDOWN].src, MSRC_DIRECT);
    assert_true(d->m[M_TEMP_SHUTDOWN].value == 92);
    int seen_at = -1;
    for (int t = 1; t <= 15; t++) {
        collect_tick(&c, &s);
        d = &s.devices[0];
        if (seen_at < 0 && metric_ok(&d->m[M_TEMP_SLOWDOWN]))
            seen_at = t;
        if (seen_at >= 0) { /* once read, kept */
            assert_int_equal(d->m[M_TEMP_SLOWDOWN].src, MSRC_DIRECT);
            assert_true(d->m[M_TEMP_SLOWDOWN].value == 89);
        }
        assert_true(d->m[M_TEMP_SHUTDOWN].value == 92);
    }
    /* one slow period, give or take the tick a worker ran late or early */
    assert_true(seen_at >= 1 && seen_at <= 10);
    snapshot_free(&s);
    collect_close(&c);
    unlink(path);
}

/* nvmlDeviceGetName answers UNKNOWN for t < 10 on the GPU and on the MIG
 * device in slot 1. Both names are unknown ("") at first, the MIG device
 * still listed with its profile (from its attributes); the reads are tried
 * again with backoff until they get the real names, which are then kept.
 * Slot 0's name, read at once, is never lost. */
static void test_static_names_read_again_gpu_and_mig(void **state)
{
    (void)state;
    char path[64];
    use_scenario_text(path, sizeof(path),
                      STATIC_RETRY_MACHINE
                      "[fault.gpu-name]\ntarget = gpu.0\nfunction = nvmlDeviceGetName\n"
                      "until = 10\nreturn = UNKNOWN\n"
                      "[fault.mig-name]\ntarget = gpu.0.mig.1\nfunction = nvmlDeviceGetName\n"
                      "until = 10\nreturn = UNKNOWN\n",
                      "0+1");
    struct collector c;
    open_sim(&c);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    int gpu_at = -1, mig_at = -1;
    for (int t = 0; t <= 40; t++) {
        collect_tick(&c, &s);
        const struct device *g = &s.devices[0], *m0 = NULL, *m1 = NULL;
        for (size_t i = 1; i < s.ndevices; i++) {
            if (s.devices[i].mig_index == 0)
                m0 = &s.devices[i];
            if (s.devices[i].mig_index == 1)
                m1 = &s.devices[i];
        }
        assert_int_equal(g->kind, DEV_GPU);
        assert_non_null(m0);
        assert_non_null(m1);
        assert_string_equal(m0->name, "NVIDIA H100 PCIe MIG 3g.40gb");
        assert_string_equal(m1->profile, "2g.20gb");
        assert_int_equal(m1->gi_id, 3);
        if (gpu_at < 0 && g->name[0])
            gpu_at = t;
        if (mig_at < 0 && m1->name[0])
            mig_at = t;
        assert_string_equal(g->name, gpu_at >= 0 ? "NVIDIA H100 PCIe" : "");
        assert_string_equal(m1->name, mig_at >= 0 ? "NVIDIA H100 PCIe MIG 2g.20gb" : "");
    }
    /* not before the window ends (t = 10: the tick the simulated clock
     * reaches it), and by the retry after it: 5 s, then 10 s, then 20 s
     * after the first read, give or take a tick a worker ran late */
    assert_true(gpu_at >= 9 && gpu_at <= 40);
    assert_true(mig_at >= 9 && mig_at <= 40);
    snapshot_free(&s);
    collect_close(&c);
    unlink(path);
}

/* A backend like the fleet's: two GPUs, one on another node, each with
 * process 4101 (which the gpu-host fixture's /proc holds). */
static int fake_open(void **st, const struct backend_opts *o, char *err, size_t errlen)
{
    (void)o, (void)err, (void)errlen;
    *st = (void *)1;
    return BACKEND_OK;
}
static int fake_sample(void *st, struct snapshot *s, uint64_t deadline_ns)
{
    (void)st, (void)deadline_ns;
    assert_int_equal(snapshot_reserve(s, 2), 0);
    assert_int_equal(snapshot_reserve_procs(s, 2), 0);
    s->ndevices = 2;
    s->nprocs = 2;
    for (int i = 0; i < 2; i++) {
        struct device *d = &s->devices[i];
        memset(d, 0, sizeof(*d));
        d->index = i;
        d->parent_pos = d->mig_index = d->gi_id = d->ci_id = -1;
        snprintf(d->uuid, sizeof(d->uuid), "GPU-%d", i);
        snprintf(d->node, sizeof(d->node), "%s", i ? "far-node" : "");
        for (int k = 0; k < M_COUNT; k++)
            d->m[k] = metric_none("not here");
        d->process_count = metric_direct(1);
        d->proc_first = (size_t)i;
        d->nprocs = 1;
        struct gpu_process *p = &s->procs[i];
        memset(p, 0, sizeof(*p));
        p->pid = 4101;
        p->local_pid = -1;
        p->gi_id = p->ci_id = -1;
        p->mem_bytes = metric_direct(1 << 20);
        p->sm_util = p->mem_util = p->enc_util = p->dec_util = p->cpu_pct = p->rss_bytes =
            metric_none("not read from Prometheus");
        snprintf(p->name, sizeof(p->name), "%s", i ? "trainer" : "");
    }
    return 0;
}
static void fake_close(void *st)
{
    (void)st;
}

/* A fleet's process is its node's: this host's /proc is not asked about
 * its PID, though a process of that PID runs here. */
static void test_fleet_processes_not_looked_up_here(void **state)
{
    (void)state;
    static const struct backend_ops fake = {
        .name = "fake", .open = fake_open, .sample = fake_sample, .close = fake_close};
    char root[4096], err[2048];
    snprintf(root, sizeof(root), "%s/tests/fixtures/proc/gpu-host", getenv("MIGMON_SRC"));
    struct collect_opts o = {.backend = &fake, .proc_root = root};
    struct collector c;
    assert_int_equal(collect_open(&c, &o, err, sizeof(err)), 0);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s);
    assert_int_equal(s.nprocs, 2);
    /* this host's device: 4101 is looked up here */
    const struct gpu_process *here = &s.procs[s.devices[0].proc_first];
    assert_int_equal(here->local_pid, 4101);
    assert_string_equal(here->name, "python3");
    /* the other node's: as the backend gave it */
    const struct gpu_process *far = &s.procs[s.devices[1].proc_first];
    assert_int_equal(far->pid, 4101);
    assert_int_equal(far->local_pid, -1);
    assert_string_equal(far->name, "trainer");
    assert_string_equal(far->command, "");
    assert_string_equal(far->user, "");
    assert_string_equal(far->container, "");
    assert_int_equal(far->start_time, 0);
    assert_false(metric_ok(&far->cpu_pct));
    assert_string_equal(far->cpu_pct.why, "not read from Prometheus");
    snapshot_free(&s);
    collect_close(&c);
}

static void test_no_gpu_scenario(void **state)
{
    (void)state;
    use_scenario("no-gpu.ini", "100");
    struct collector c;
    open_sim(&c);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s);
    assert_true(s.gpu_ok);
    assert_int_equal(s.ndevices, 0);
    snapshot_free(&s);
    collect_close(&c);
}

static void test_bad_explicit_path(void **state)
{
    (void)state;
    struct collector c;
    struct collect_opts o = {.nvml_path = "/nonexistent/libnvidia-ml.so.1"};
    char err[2048];
    assert_int_equal(collect_open(&c, &o, err, sizeof(err)), COLLECT_ERR_BAD_NVML_PATH);
    assert_string_equal(err, "--nvml-path /nonexistent/libnvidia-ml.so.1: no such file");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_h100_535_model),
        cmocka_unit_test(test_not_supported_is_remembered),
        cmocka_unit_test(test_steady_state_no_allocation),
        cmocka_unit_test(test_steady_state_processes_no_allocation),
        cmocka_unit_test(test_reconfiguration_across_ticks),
        cmocka_unit_test(test_no_gpu_scenario),
        cmocka_unit_test(test_fleet_processes_not_looked_up_here),
        cmocka_unit_test(test_bad_explicit_path),
        cmocka_unit_test(test_mig_without_uuid_listed),
        cmocka_unit_test(test_gpm_isolation_keeps_vram),
        cmocka_unit_test(test_no_fake_zero_between_samples),
        cmocka_unit_test(test_failed_vram_read_is_none),
        cmocka_unit_test(test_absurd_compute_capability_unknown),
        cmocka_unit_test(test_pid0_sample_not_summed),
        cmocka_unit_test(test_threshold_read_again_after_a_failure),
        cmocka_unit_test(test_static_names_read_again_gpu_and_mig),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
