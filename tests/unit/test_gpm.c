/*
 * The GPM client (src/backend/gpm/gpm.c) against scripted helpers: this test
 * binary re-executes itself with --gpm-helper and plays a helper that sends
 * values, hangs, crashes, sends garbage, has nothing to do, or reports a
 * degraded NVML session (MIGMON_FAKE_HELPER picks the part). The real
 * helper is tested end to end against the simulator (tests/e2e/test_gpm.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "backend/gpm/gpm.h"
#include "backend/nvml/nvml_api.h"
#include "core/clock.h"

#define UUID0 "GPU-fake-0000"
#define UUID1 "GPU-fake-0001"
#define MIGA "MIG-fake-a"

static char self[4096];

/* ---- the scripted helper (runs in the child) ---- */

static void put(void *rec, enum gpm_rec_type type, size_t len)
{
    struct helper_rec_hdr *h = rec;
    h->magic = GPM_PROTO_MAGIC;
    h->type = (uint8_t)type;
    h->len = (uint32_t)len;
    if (write(1, rec, len) != (ssize_t)len)
        _exit(0);
}

static void put_gpu(unsigned idx, const char *uuid, enum gpm_gpu_state st, int rc, unsigned arch)
{
    struct gpm_rec_gpu r;
    memset(&r, 0, sizeof(r));
    r.gpu = (uint16_t)idx;
    r.state = (uint16_t)st;
    r.rc = rc;
    r.arch = arch;
    snprintf(r.uuid, sizeof(r.uuid), "%s", uuid);
    put(&r, GPM_REC_GPU, sizeof(r));
}

static void put_progress(unsigned gpu, enum gpm_call call)
{
    struct gpm_rec_progress r;
    memset(&r, 0, sizeof(r));
    r.gpu = (uint16_t)gpu;
    r.call = (uint16_t)call;
    put(&r, GPM_REC_PROGRESS, sizeof(r));
}

static void put_values(enum gpm_scope scope, int gi, int nci, const char *mig, double base)
{
    struct gpm_rec_values r;
    memset(&r, 0, sizeof(r));
    r.gpu = 0;
    r.scope = (uint8_t)scope;
    r.gi_id = gi;
    r.nci = (uint8_t)nci;
    snprintf(r.gpu_uuid, sizeof(r.gpu_uuid), "%s", UUID0);
    snprintf(r.mig_uuid, sizeof(r.mig_uuid), "%s", mig);
    r.span_s = 0.5;
    for (int k = 0; k < GPM_NMETRICS; k++) {
        r.v[k] = base + k;
        r.rc[k] = NVML_SUCCESS;
    }
    r.v[GPM_IMMA] = NAN;
    r.rc[GPM_FP64] = NVML_ERROR_NOT_SUPPORTED;
    r.v[GPM_FP16] = 150; /* out of range */
    r.v[GPM_PCIE_TX] = 12.5;
    put(&r, GPM_REC_VALUES, sizeof(r));
}

static void put_cycle(bool values)
{
    struct gpm_rec_cycle c;
    memset(&c, 0, sizeof(c));
    c.have_values = values;
    put(&c, GPM_REC_CYCLE, sizeof(c));
}

static bool excluded(int argc, char **argv, const char *uuid)
{
    for (int i = 5; i < argc; i++)
        if (strcmp(argv[i], uuid) == 0)
            return true;
    return false;
}

static int fake_helper(int argc, char **argv)
{
    const char *part = getenv("MIGMON_FAKE_HELPER");
    if (!part)
        return 3;
    if (strcmp(part, "values") == 0 || strcmp(part, "degraded") == 0) {
        put_gpu(0, UUID0, GPM_GPU_SUPPORTED, 0, NVML_DEVICE_ARCH_HOPPER);
        put_gpu(1, UUID1, GPM_GPU_UNSUPPORTED, NVML_ERROR_NOT_SUPPORTED, NVML_DEVICE_ARCH_AMPERE);
        put_cycle(false);
        for (int round = 0;; round++) {
            put_progress(0, GPM_CALL_SAMPLE);
            put_values(GPM_SCOPE_GPU, -1, 0, "", 40);
            put_values(GPM_SCOPE_GI, 3, 2, "", 20);
            put_values(GPM_SCOPE_CI, 5, 1, MIGA, 60);
            if (round == 1 && strcmp(part, "degraded") == 0)
                put_gpu(0, UUID0, GPM_GPU_DEGRADED, NVML_ERROR_IN_USE, 0);
            put_cycle(true);
            char c;
            struct timespec ts = {0, 50 * 1000000L};
            nanosleep(&ts, NULL);
            /* stdin at EOF: the monitor is gone (or closing). */
            fd_set fds;
            FD_ZERO(&fds);
            FD_SET(0, &fds);
            struct timeval tv = {0, 0};
            if (select(1, &fds, NULL, NULL, &tv) > 0 && read(0, &c, 1) <= 0)
                return 0;
        }
    }
    if (strcmp(part, "proven") == 0 || strcmp(part, "proven1") == 0) {
        /* Two Hopper GPUs (one with "proven1"), whole-GPU values each
         * round; GPU 0's canary proves its driver in round 2. A GPU the
         * monitor samples itself is passed as excluded. */
        bool two = strcmp(part, "proven") == 0;
        bool s0 = !excluded(argc, argv, UUID0), s1 = two && !excluded(argc, argv, UUID1);
        if (s0)
            put_gpu(0, UUID0, GPM_GPU_SUPPORTED, 0, NVML_DEVICE_ARCH_HOPPER);
        if (s1)
            put_gpu(1, UUID1, GPM_GPU_SUPPORTED, 0, NVML_DEVICE_ARCH_HOPPER);
        for (int round = 0;; round++) {
            for (int k = 0; k < 2; k++) {
                if (!(k ? s1 : s0))
                    continue;
                struct gpm_rec_values r;
                memset(&r, 0, sizeof(r));
                r.gpu = (uint16_t)k;
                r.scope = GPM_SCOPE_GPU;
                r.gi_id = -1;
                snprintf(r.gpu_uuid, sizeof(r.gpu_uuid), "%s", k ? UUID1 : UUID0);
                for (int m = 0; m < GPM_NMETRICS; m++)
                    r.v[m] = k ? 11 : 10;
                put(&r, GPM_REC_VALUES, sizeof(r));
            }
            if (round == 2 && s0)
                put_gpu(0, UUID0, GPM_GPU_PROVEN, 0, 0);
            put_cycle(true);
            struct timespec ts = {0, 30 * 1000000L};
            nanosleep(&ts, NULL);
            char c;
            fd_set fds;
            FD_ZERO(&fds);
            FD_SET(0, &fds);
            struct timeval tv = {0, 0};
            if (select(1, &fds, NULL, NULL, &tv) > 0 && read(0, &c, 1) <= 0)
                return 0; /* asked to leave */
        }
    }
    if (strcmp(part, "hang") == 0) {
        if (excluded(argc, argv, UUID0)) {
            struct gpm_rec_cycle done;
            memset(&done, 0, sizeof(done));
            put(&done, GPM_REC_DONE, sizeof(done));
            return 0;
        }
        put_gpu(0, UUID0, GPM_GPU_SUPPORTED, 0, NVML_DEVICE_ARCH_HOPPER);
        put_progress(0, GPM_CALL_MIG_SAMPLE);
        for (;;)
            pause(); /* a GPM call that never returns */
    }
    if (strcmp(part, "crash") == 0)
        abort();
    if (strcmp(part, "garbage") == 0) {
        static const char junk[64] = "this is not the GPM protocol at all, sorry";
        if (write(1, junk, sizeof(junk)) < 0)
            return 1;
        pause();
    }
    if (strcmp(part, "done") == 0) {
        put_gpu(0, UUID0, GPM_GPU_UNSUPPORTED, NVML_ERROR_NOT_SUPPORTED, NVML_DEVICE_ARCH_AMPERE);
        struct gpm_rec_cycle done;
        memset(&done, 0, sizeof(done));
        put(&done, GPM_REC_DONE, sizeof(done));
        return 0;
    }
    return 3;
}

/* ---- the tests (in the monitor's role) ---- */

static struct gpm_client *open_part_in(const char *part, enum gpm_mode mode, bool inproc)
{
    setenv("MIGMON_FAKE_HELPER", part, 1);
    struct gpm_client_opts o = {
        .exe = self,
        .lib_path = "/nonexistent/libnvidia-ml.so.1",
        .interval_ms = 100,
        .mode = mode,
        .backoff_ms = 20,
        .watchdog_floor_ms = 150,
        .inproc = inproc,
    };
    struct gpm_client *g = gpm_client_open(&o);
    assert_non_null(g);
    return g;
}

static struct gpm_client *open_part(const char *part, enum gpm_mode mode)
{
    return open_part_in(part, mode, false);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Poll for up to ms until GPU uuid is (to be) sampled in the monitor's
 * session. */
static bool wait_inproc(struct gpm_client *g, const char *uuid, int ms)
{
    for (int i = 0; i < ms / 10 && !gpm_client_inproc(g, uuid); i++) {
        gpm_client_poll(g);
        sleep_ms(10);
    }
    return gpm_client_inproc(g, uuid);
}

/* Poll for up to ms, until the GPU's reason equals want (or ok when NULL). */
static bool wait_gpu_reason(struct gpm_client *g, const char *uuid, const char *want, int ms)
{
    for (int i = 0; i < ms / 10; i++) {
        gpm_client_poll(g);
        struct gpm_view v;
        gpm_client_gpu(g, uuid, &v);
        if (want ? (v.why && strcmp(v.why, want) == 0) : v.ok)
            return true;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return false;
}

/* No helper left behind: we have no child at all. */
static void assert_no_children(void)
{
    errno = 0;
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
}

static void test_values_and_conversions(void **state)
{
    (void)state;
    struct gpm_client *g = open_part("values", GPM_AUTO);
    gpm_client_settle(g, 3000);
    struct gpm_view v;
    gpm_client_gpu(g, UUID0, &v);
    assert_true(v.ok);
    struct metric m = gpm_metric(&v, GPM_GRAPHICS);
    assert_int_equal(m.src, MSRC_GPM);
    assert_true(m.value == 40.0);
    assert_int_equal(m.scope, MSCOPE_DEVICE);
    m = gpm_metric(&v, GPM_SM);
    assert_true(m.value == 41.0);
    m = gpm_metric(&v, GPM_IMMA);
    assert_int_equal(m.src, MSRC_NONE);
    assert_string_equal(m.why, "GPM returned NaN");
    m = gpm_metric(&v, GPM_FP64);
    assert_int_equal(m.src, MSRC_NONE);
    assert_string_equal(m.why, "NVML_ERROR_NOT_SUPPORTED");
    m = gpm_metric(&v, GPM_FP16);
    assert_int_equal(m.src, MSRC_NONE);
    assert_string_equal(m.why, "GPM returned a percentage outside 0-100");
    /* "MiB/s" read as 10^6 bytes/s */
    m = gpm_metric(&v, GPM_PCIE_TX);
    assert_true(fabs(m.value - 12.5e6) < 1e-6);

    /* GPU 1 is an Ampere: the reason names what is needed. */
    gpm_client_gpu(g, UUID1, &v);
    assert_false(v.ok);
    assert_string_equal(v.why, "needs Hopper or later (GPM) or DCGM profiling");

    /* A MIG device with its own (CI) values, and one sharing its GI's. */
    gpm_client_mig(g, UUID0, 5, MIGA, &v);
    assert_true(v.ok);
    assert_true(v.ci_level);
    assert_true(gpm_metric(&v, GPM_GRAPHICS).value == 60.0);
    assert_int_equal(gpm_metric(&v, GPM_GRAPHICS).scope, MSCOPE_DEVICE);
    gpm_client_mig(g, UUID0, 3, "MIG-other", &v);
    assert_true(v.ok);
    assert_false(v.ci_level);
    assert_int_equal(v.nci, 2);
    m = gpm_metric(&v, GPM_GRAPHICS);
    assert_true(m.value == 20.0);
    assert_int_equal(m.scope, MSCOPE_GPU_INSTANCE);
    gpm_client_mig(g, UUID0, 9, "MIG-none", &v);
    assert_false(v.ok);
    assert_string_equal(v.why, "no GPM sample for this device");
    assert_true(gpm_client_helper_pid(g) > 0);

    uint64_t t0 = clock_mono_ns();
    gpm_client_close(g);
    assert_true(clock_mono_ns() - t0 < 500000000ull);
    assert_no_children();
}

static void test_hang_restarts_then_excludes(void **state)
{
    (void)state;
    struct gpm_client *g = open_part("hang", GPM_AUTO);
    int first = gpm_client_helper_pid(g);
    assert_true(first > 0);
    assert_true(wait_gpu_reason(g, UUID0,
                                "GPM helper stalled in nvmlGpmMigSampleGet; restarting it", 2000));
    assert_true(wait_gpu_reason(
        g, UUID0, "GPM off for this GPU: the GPM helper hung 3 times in nvmlGpmMigSampleGet",
        4000));
    /* The next helper was told to leave that GPU alone and had nothing to do. */
    for (int i = 0; i < 100 && gpm_client_helper_pid(g) > 0; i++) {
        gpm_client_poll(g);
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(gpm_client_helper_pid(g), -1);
    assert_no_children();
    gpm_client_close(g);
}

static void test_crash_gives_up(void **state)
{
    (void)state;
    struct gpm_client *g = open_part("crash", GPM_AUTO);
    assert_true(wait_gpu_reason(g, UUID0,
                                "GPM off: the GPM helper failed 3 times in a row (its NVML session "
                                "could not start)",
                                3000));
    assert_int_equal(gpm_client_helper_pid(g), -1);
    assert_no_children();
    gpm_client_close(g);
}

static void test_garbage_is_a_failure(void **state)
{
    (void)state;
    struct gpm_client *g = open_part("garbage", GPM_AUTO);
    assert_true(wait_gpu_reason(g, UUID0,
                                "GPM off: the GPM helper failed 3 times in a row (its NVML session "
                                "could not start)",
                                3000));
    assert_no_children();
    gpm_client_close(g);
}

static void test_nothing_to_do(void **state)
{
    (void)state;
    struct gpm_client *g = open_part("done", GPM_AUTO);
    gpm_client_settle(g, 3000);
    struct gpm_view v;
    gpm_client_gpu(g, UUID0, &v);
    assert_false(v.ok);
    assert_string_equal(v.why, "needs Hopper or later (GPM) or DCGM profiling");
    assert_int_equal(gpm_client_helper_pid(g), -1);
    assert_no_children();
    gpm_client_close(g);
}

static void test_degraded_auto_switches_off(void **state)
{
    (void)state;
    struct gpm_client *g = open_part("degraded", GPM_AUTO);
    assert_true(wait_gpu_reason(g, UUID0,
                                "GPM off for this GPU: after GPM calls the driver failed memory "
                                "reads in the GPM helper's own NVML session (a driver fault); the "
                                "monitor's readings are unaffected; --gpm on keeps GPM",
                                3000));
    gpm_client_close(g);
    assert_no_children();
}

static void test_degraded_on_keeps_values(void **state)
{
    (void)state;
    struct gpm_client *g = open_part("degraded", GPM_ON);
    struct gpm_view v;
    bool seen = false;
    for (int i = 0; i < 300 && !seen; i++) {
        gpm_client_poll(g);
        gpm_client_gpu(g, UUID0, &v);
        seen = v.ok && v.why != NULL;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    assert_true(seen);
    assert_non_null(strstr(v.why, "kept by --gpm on"));
    struct metric m = gpm_metric(&v, GPM_GRAPHICS);
    assert_int_equal(m.src, MSRC_GPM);
    assert_true(m.value == 40.0);
    gpm_client_close(g);
    assert_no_children();
}

static void test_off_and_no_exe(void **state)
{
    (void)state;
    struct gpm_client_opts o = {.exe = self, .interval_ms = 1000, .mode = GPM_OFF};
    struct gpm_client *g = gpm_client_open(&o);
    struct gpm_view v;
    gpm_client_gpu(g, UUID0, &v);
    assert_false(v.ok);
    assert_string_equal(v.why, "GPM off (--gpm off)");
    assert_int_equal(gpm_client_helper_pid(g), -1);
    gpm_client_close(g);
    o.mode = GPM_AUTO;
    o.exe = NULL;
    g = gpm_client_open(&o);
    gpm_client_mig(g, UUID0, 1, MIGA, &v);
    assert_string_equal(v.why, "GPM not started (no helper binary given)");
    gpm_client_close(g);
    assert_no_children();
}

/* The helper proves GPU 0's driver: it is to be sampled in the monitor's
 * session; once its values flow there the helper is started again without
 * it (GPU 1's values go on), and a GPM call there that was too slow gives
 * it back to a helper started again with it, for good. */
static void test_proven_moves_into_session(void **state)
{
    (void)state;
    struct gpm_client *g = open_part_in("proven", GPM_AUTO, true);
    assert_false(gpm_client_any_inproc(g));
    assert_true(wait_inproc(g, UUID0, 3000));
    assert_true(gpm_client_any_inproc(g));
    assert_false(gpm_client_inproc(g, UUID1)); /* not proved */
    int first = gpm_client_helper_pid(g);
    assert_true(first > 0);
    gpm_client_inproc_flowing(g, UUID1); /* not proved: nothing happens */
    gpm_client_poll(g);
    assert_int_equal(gpm_client_helper_pid(g), first);
    gpm_client_inproc_flowing(g, UUID0);
    gpm_client_poll(g);
    int second = gpm_client_helper_pid(g);
    assert_true(second > 0 && second != first);
    /* GPU 1's values from the new helper, which leaves GPU 0 alone */
    struct gpm_view v;
    assert_true(wait_gpu_reason(g, UUID1, NULL, 2000));
    gpm_client_gpu(g, UUID1, &v);
    assert_true(gpm_metric(&v, GPM_GRAPHICS).value == 11.0);
    /* too slow in the monitor's session: back to a helper, for good */
    gpm_client_inproc_failed(g, UUID0);
    assert_false(gpm_client_inproc(g, UUID0));
    gpm_client_poll(g);
    int third = gpm_client_helper_pid(g);
    assert_true(third > 0 && third != second);
    assert_true(wait_gpu_reason(g, UUID0, NULL, 2000));
    sleep_ms(300); /* the new helper proves it again: it stays the helper's */
    gpm_client_poll(g);
    assert_false(gpm_client_inproc(g, UUID0));
    assert_false(gpm_client_any_inproc(g));
    gpm_client_close(g);
    assert_no_children();
}

/* Every GPU sampled in the monitor's session: the helper is asked to leave
 * and not waited for; the next polls reap it. */
static void test_proven_helper_leaves(void **state)
{
    (void)state;
    struct gpm_client *g = open_part_in("proven1", GPM_AUTO, true);
    assert_true(wait_inproc(g, UUID0, 3000));
    gpm_client_inproc_flowing(g, UUID0);
    uint64_t t0 = clock_mono_ns();
    gpm_client_poll(g);
    assert_true(clock_mono_ns() - t0 < 20000000ull); /* asked, not waited for */
    for (int i = 0; i < 100 && gpm_client_helper_pid(g) > 0; i++) {
        sleep_ms(10);
        gpm_client_poll(g);
    }
    assert_int_equal(gpm_client_helper_pid(g), -1);
    assert_no_children();
    assert_true(gpm_client_inproc(g, UUID0));
    gpm_client_close(g);
}

/* Without in-process sampling allowed (--gpm helper, --once, a caller that
 * cannot be replaced), a proved GPU stays the helper's. */
static void test_proven_not_allowed(void **state)
{
    (void)state;
    struct gpm_client *g = open_part_in("proven1", GPM_AUTO, false);
    assert_true(wait_gpu_reason(g, UUID0, NULL, 2000));
    sleep_ms(300); /* past round 2's proof */
    gpm_client_poll(g);
    assert_false(gpm_client_inproc(g, UUID0));
    assert_false(gpm_client_any_inproc(g));
    gpm_client_inproc_flowing(g, UUID0);
    int pid = gpm_client_helper_pid(g);
    gpm_client_poll(g);
    assert_int_equal(gpm_client_helper_pid(g), pid);
    gpm_client_close(g);
    assert_no_children();
}

/* Closing while the helper is stuck in a call ends it at once. */
static void test_close_while_hung(void **state)
{
    (void)state;
    struct gpm_client *g = open_part("hang", GPM_AUTO);
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
    gpm_client_poll(g);
    uint64_t t0 = clock_mono_ns();
    gpm_client_close(g);
    assert_true(clock_mono_ns() - t0 < 500000000ull);
    assert_no_children();
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], GPM_HELPER_ARG) == 0)
        return fake_helper(argc, argv);
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[n > 0 ? n : 0] = '\0';
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_and_conversions),
        cmocka_unit_test(test_hang_restarts_then_excludes),
        cmocka_unit_test(test_crash_gives_up),
        cmocka_unit_test(test_garbage_is_a_failure),
        cmocka_unit_test(test_nothing_to_do),
        cmocka_unit_test(test_degraded_auto_switches_off),
        cmocka_unit_test(test_degraded_on_keeps_values),
        cmocka_unit_test(test_off_and_no_exe),
        cmocka_unit_test(test_close_while_hung),
        cmocka_unit_test(test_proven_moves_into_session),
        cmocka_unit_test(test_proven_helper_leaves),
        cmocka_unit_test(test_proven_not_allowed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
