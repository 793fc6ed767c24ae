/*
 * GPU processes end to end through the collector and the simulator, with
 * /proc facts from tests/fixtures/proc/gpu-host: attribution on MIG (own
 * lists, the parent fallback, unattributed), merging and de-duplication,
 * NOT_AVAILABLE memory sorting, --top, the bounded carry-forward; and the
 * list reader's over-allocate-and-retry against fake NVML functions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "sim_env.h"

#include "backend/nvml/nvml_procs_read.h"
#include "backend/nvml/nvml_procs_util.h"
#include "backend/nvml/nvml_state.h"
#include "engine/collect.h"

static char proc_root[PATH_MAX];

static void open_sim(struct collector *c, const char *tree, unsigned top)
{
    const char *lib = getenv("MIGMON_SIM_LIB");
    const char *src = getenv("MIGMON_SRC");
    assert_non_null(lib);
    snprintf(proc_root, sizeof(proc_root), "%s/tests/fixtures/proc/%s", src, tree);
    struct collect_opts o = {.nvml_path = lib, .proc_root = proc_root, .top = top};
    char err[2048];
    assert_int_equal(collect_open(c, &o, err, sizeof(err)), 0);
    assert_non_null(c->be_state);
}

static const struct device *mig_dev(const struct snapshot *s, int gpu, int slot)
{
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        if (d->kind == DEV_MIG && d->index == gpu && d->mig_index == slot)
            return d;
    }
    fail_msg("no MIG device %d/%d", gpu, slot);
    return NULL;
}

static const struct gpu_process *proc_at(const struct snapshot *s, const struct device *d,
                                         size_t k)
{
    assert_true(k < d->nprocs);
    assert_true(d->proc_first + k < s->nprocs);
    return &s->procs[d->proc_first + k];
}

/* Each PID is shown at most once in the whole snapshot (none of these
 * scenarios has a process on two devices). */
static void assert_no_duplicates(const struct snapshot *s)
{
    size_t shown = 0;
    for (size_t i = 0; i < s->ndevices; i++)
        shown += s->devices[i].nprocs;
    assert_int_equal(shown, s->nprocs);
    for (size_t i = 0; i < s->nprocs; i++)
        for (size_t j = i + 1; j < s->nprocs; j++)
            assert_int_not_equal(s->procs[i].pid, s->procs[j].pid);
}

static void test_h100_535_attribution(void **state)
{
    (void)state;
    use_scenario("h100-pcie-mig-535.ini", "100");
    struct collector c;
    open_sim(&c, "gpu-host", 16);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s);
    const struct device *p = &s.devices[0];
    assert_int_equal(p->nprocs, 0); /* every process is on its instance */
    assert_int_equal(p->process_count.src, MSRC_DIRECT);
    assert_true(p->process_count.value == 3);
    static const struct {
        int slot;
        uint32_t pid;
        int gi;
        bool mem_known;
    } want[] = {{0, 4101, 2, true}, {1, 4187, 3, true}, {3, 4230, 9, false}};
    for (size_t k = 0; k < 3; k++) {
        const struct device *d = mig_dev(&s, 0, want[k].slot);
        assert_int_equal(d->nprocs, 1);
        assert_true(d->process_count.value == 1);
        const struct gpu_process *q = proc_at(&s, d, 0);
        assert_int_equal(q->pid, want[k].pid);
        assert_int_equal(q->gi_id, want[k].gi);
        assert_int_equal(q->ci_id, 0);
        assert_int_equal(q->type, PROC_COMPUTE);
        assert_false(q->unattributed);
        assert_int_equal(metric_ok(&q->mem_bytes), want[k].mem_known);
        /* NVML has no per-process utilisation on MIG: none, never 0 */
        assert_int_equal(q->sm_util.src, MSRC_NONE);
        assert_int_equal(q->local_pid, (int64_t)want[k].pid);
    }
    assert_true(proc_at(&s, mig_dev(&s, 0, 0), 0)->mem_bytes.value == 31200.0 * 1048576);
    assert_string_equal(proc_at(&s, mig_dev(&s, 0, 0), 0)->name, "python3");
    assert_no_duplicates(&s);
    snapshot_free(&s);
    collect_close(&c);
}

static void test_dgx_attribution(void **state)
{
    (void)state;
    use_scenario("dgx-a100-8x7.ini", "100");
    struct collector c;
    open_sim(&c, "gpu-host", 16);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s);
    assert_int_equal(s.ndevices, 64);
    assert_int_equal(s.nprocs, 3);
    assert_int_equal(proc_at(&s, mig_dev(&s, 0, 0), 0)->pid, 20100);
    assert_int_equal(proc_at(&s, mig_dev(&s, 3, 5), 0)->pid, 20135);
    assert_int_equal(proc_at(&s, mig_dev(&s, 7, 6), 0)->pid, 20176);
    assert_int_equal(proc_at(&s, mig_dev(&s, 3, 5), 0)->gi_id, 12); /* 1g GIs are 7..13 */
    for (size_t i = 0; i < s.ndevices; i++) {
        const struct device *d = &s.devices[i];
        assert_int_equal(d->process_count.src, MSRC_DIRECT);
        if (d->kind == DEV_GPU)
            assert_true(d->process_count.value == (d->index == 0 || d->index == 3 ||
                                                   d->index == 7));
    }
    assert_no_duplicates(&s);
    snapshot_free(&s);
    collect_close(&c);
}

/* Slot 0's own lists fail: the privileged parent's list, split by GI. */
static void test_parent_fallback(void **state)
{
    (void)state;
    use_scenario("mig-reconfig.ini", "30");
    struct collector c;
    open_sim(&c, "gpu-host", 16);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s);
    const struct device *d0 = mig_dev(&s, 0, 0);
    assert_int_equal(d0->nprocs, 2);
    assert_int_equal(d0->process_count.src, MSRC_DIRECT);
    assert_non_null(strstr(d0->process_count.why, "parent"));
    assert_int_equal(proc_at(&s, d0, 0)->pid, 6100);
    assert_int_equal(proc_at(&s, d0, 1)->pid, 6150);
    assert_int_equal(proc_at(&s, d0, 1)->type, PROC_COMPUTE | PROC_GRAPHICS); /* one entry */
    assert_string_equal(proc_type_name(proc_at(&s, d0, 1)->type), "C+G");
    assert_int_equal(proc_at(&s, d0, 0)->gi_id, 1);
    const struct device *d1 = mig_dev(&s, 0, 1);
    assert_int_equal(d1->nprocs, 1);
    assert_int_equal(proc_at(&s, d1, 0)->pid, 6200);
    assert_int_equal(s.devices[0].nprocs, 0);
    assert_true(s.devices[0].process_count.value == 3);
    assert_no_duplicates(&s);
    snapshot_free(&s);
    collect_close(&c);
}

/* A process whose instance cannot be identified: once, on the parent. */
static void test_unattributed(void **state)
{
    (void)state;
    use_scenario("mig-unattributed.ini", "10");
    struct collector c;
    open_sim(&c, "gpu-host", 16);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s);
    const struct device *p = &s.devices[0];
    assert_int_equal(p->nprocs, 1);
    assert_int_equal(proc_at(&s, p, 0)->pid, 4187);
    assert_true(proc_at(&s, p, 0)->unattributed);
    assert_int_equal(proc_at(&s, p, 0)->gi_id, 3);
    assert_true(p->process_count.value == 3);
    assert_int_equal(proc_at(&s, mig_dev(&s, 0, 0), 0)->pid, 4101);
    assert_false(proc_at(&s, mig_dev(&s, 0, 0), 0)->unattributed);
    assert_int_equal(proc_at(&s, mig_dev(&s, 0, 3), 0)->pid, 4230);
    const struct device *d1 = mig_dev(&s, 0, 1);
    assert_int_equal(d1->nprocs, 0);
    assert_int_equal(d1->process_count.src, MSRC_NONE); /* unknown, not 0 */
    assert_no_duplicates(&s);
    snapshot_free(&s);
    collect_close(&c);
}

/* Memory descending, NOT_AVAILABLE after every known value, ties by PID;
 * the process that appears between the size and data queries is read;
 * per-process utilisation from GetProcessesUtilizationInfo (550). */
static void test_sort_merge_and_grow(void **state)
{
    (void)state;
    use_scenario("process-churn.ini", "30");
    struct collector c;
    open_sim(&c, "gpu-host", 0);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s);
    const struct device *d = &s.devices[0];
    static const uint32_t order[] = {8100, 8300, 8150, 8200, 9999, 1450};
    assert_int_equal(d->nprocs, 6);
    assert_true(d->process_count.value == 6);
    for (size_t k = 0; k < 6; k++)
        assert_int_equal(proc_at(&s, d, k)->pid, order[k]);
    assert_int_equal(proc_at(&s, d, 5)->mem_bytes.src, MSRC_NONE);
    assert_int_equal(proc_at(&s, d, 0)->type, PROC_COMPUTE | PROC_GRAPHICS);
    assert_int_equal(proc_at(&s, d, 2)->type, PROC_MPS);
    assert_int_equal(proc_at(&s, d, 5)->type, PROC_GRAPHICS);
    assert_true(proc_at(&s, d, 0)->sm_util.value == 40);
    assert_true(proc_at(&s, d, 0)->enc_util.value == 15);
    assert_true(proc_at(&s, d, 1)->sm_util.value == 70);
    assert_int_equal(proc_at(&s, d, 4)->sm_util.src, MSRC_NONE); /* no sample: not 0 */
    assert_int_equal(proc_at(&s, d, 0)->gi_id, -1); /* MIG off */
    snapshot_free(&s);
    collect_close(&c);
}

static void test_top_cut(void **state)
{
    (void)state;
    use_scenario("process-churn.ini", "30");
    struct collector c;
    open_sim(&c, "gpu-host", 2);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s);
    const struct device *d = &s.devices[0];
    assert_int_equal(d->nprocs, 2);
    assert_true(d->process_count.value == 6); /* counts all, lists the top 2 */
    assert_int_equal(proc_at(&s, d, 0)->pid, 8100);
    assert_int_equal(proc_at(&s, d, 1)->pid, 8300);
    snapshot_free(&s);
    collect_close(&c);
}

/* faults.ini: gpu.0's lists fail for 20 <= t < 25. One tick per second. */
static void test_carry_is_bounded(void **state)
{
    (void)state;
    use_scenario("faults.ini", "19+1");
    struct collector c;
    open_sim(&c, "gpu-host", 16);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s); /* t = 19 */
    assert_int_equal(s.devices[0].nprocs, 1);
    assert_false(s.procs[s.devices[0].proc_first].carried);
    for (int t = 20; t < 20 + COLLECT_CARRY_TICKS; t++) {
        collect_tick(&c, &s);
        const struct device *d = &s.devices[0];
        assert_int_equal(d->nprocs, 1);
        assert_int_equal(proc_at(&s, d, 0)->pid, 5000);
        assert_true(proc_at(&s, d, 0)->carried);
        assert_int_equal(d->process_count.src, MSRC_CARRIED);
    }
    collect_tick(&c, &s); /* t = 23: the budget is spent */
    assert_int_equal(s.devices[0].nprocs, 0);
    assert_int_equal(s.devices[0].process_count.src, MSRC_NONE);
    collect_tick(&c, &s); /* t = 24 */
    assert_int_equal(s.devices[0].nprocs, 0);
    collect_tick(&c, &s); /* t = 25: the list reads again */
    assert_int_equal(s.devices[0].nprocs, 1);
    assert_false(proc_at(&s, &s.devices[0], 0)->carried);
    snapshot_free(&s);
    collect_close(&c);
}

/* A process that no longer exists in /proc is not carried at all. */
static void test_carry_needs_a_live_pid(void **state)
{
    (void)state;
    use_scenario("faults.ini", "19+1");
    struct collector c;
    open_sim(&c, "two-core", 16); /* no /proc/5000 there */
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s);
    assert_int_equal(s.devices[0].nprocs, 1);
    collect_tick(&c, &s);
    assert_int_equal(s.devices[0].nprocs, 0);
    assert_int_equal(s.devices[0].process_count.src, MSRC_NONE);
    snapshot_free(&s);
    collect_close(&c);
}

/* A process that ended leaves the list that reads without it at once: a
 * list that was read is never topped up from the last tick (the seed showed
 * exited processes on a MIG instance for good). mig-reconfig.ini: 6200 on
 * slot 1 ends at t = 40, and /proc/6200 is still in the fixture. */
static void test_ended_process_leaves_at_once(void **state)
{
    (void)state;
    use_scenario("mig-reconfig.ini", "39+1");
    struct collector c;
    open_sim(&c, "gpu-host", 16);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s); /* t = 39 */
    assert_int_equal(mig_dev(&s, 0, 1)->nprocs, 1);
    assert_int_equal(proc_at(&s, mig_dev(&s, 0, 1), 0)->pid, 6200);
    collect_tick(&c, &s); /* t = 40 */
    const struct device *d1 = mig_dev(&s, 0, 1);
    assert_int_equal(d1->nprocs, 0);
    assert_int_equal(d1->process_count.src, MSRC_DIRECT);
    assert_true(d1->process_count.value == 0);
    assert_true(s.devices[0].process_count.value == 2);
    for (size_t i = 0; i < s.nprocs; i++) {
        assert_false(s.procs[i].carried);
        assert_int_not_equal(s.procs[i].pid, 6200);
    }
    snapshot_free(&s);
    collect_close(&c);

    /* the same on a full GPU: process-churn.ini's 8300 ends at t = 50 */
    use_scenario("process-churn.ini", "49+1");
    open_sim(&c, "gpu-host", 0);
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s);
    bool seen = false;
    for (size_t i = 0; i < s.nprocs; i++)
        seen |= s.procs[i].pid == 8300;
    assert_true(seen);
    collect_tick(&c, &s);
    for (size_t i = 0; i < s.nprocs; i++) {
        assert_int_not_equal(s.procs[i].pid, 8300);
        assert_false(s.procs[i].carried);
    }
    snapshot_free(&s);
    collect_close(&c);
}

/* A failed list carries only the processes that are still the same ones:
 * a PID reused by another program (a new start time in /proc) is not
 * carried. faults.ini's lists fail from t = 20; 5000's stat is rewritten
 * with another start time between the ticks. */
static void test_carry_not_across_pid_reuse(void **state)
{
    (void)state;
    char tmp[] = "/tmp/migmon-procs-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof(cmd), "cp -R '%s/tests/fixtures/proc/gpu-host/.' '%s/'",
             getenv("MIGMON_SRC"), tmp);
    assert_int_equal(system(cmd), 0);

    use_scenario("faults.ini", "19+1");
    struct collector c;
    const char *lib = getenv("MIGMON_SIM_LIB");
    struct collect_opts o = {.nvml_path = lib, .proc_root = tmp, .top = 16};
    char err[2048];
    assert_int_equal(collect_open(&c, &o, err, sizeof(err)), 0);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s); /* t = 19 */
    assert_int_equal(s.devices[0].nprocs, 1);
    assert_int_equal(proc_at(&s, &s.devices[0], 0)->pid, 5000);
    assert_int_equal(proc_at(&s, &s.devices[0], 0)->start_time, 30000);

    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/5000/stat", tmp);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("5000 (other) S 1 5000 5000 0 -1 4194560 52311 0 12 0 1 1 0 0 20 0 8 0 "
          "40000 8123456789 300 18446744073709551615 1 1 0 0 0 0 0 16781312 17642 "
          "0 0 0 17 3 0 0 0 0 0\n", f);
    fclose(f);
    collect_tick(&c, &s); /* t = 20: the list fails */
    assert_int_equal(s.devices[0].nprocs, 0);
    assert_int_equal(s.devices[0].process_count.src, MSRC_NONE);
    snapshot_free(&s);
    collect_close(&c);

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    assert_int_equal(system(cmd), 0);
}

/* A MIG instance's own list failing for a few ticks on a host where the
 * parent cannot list (unprivileged): its processes are carried, marked, for
 * COLLECT_CARRY_TICKS ticks, then the count is unknown; the list reads
 * again after. The other instances are untouched (the seed's MIG list
 * flickered between its processes and "No processes"). */
static void test_mig_list_outage_carried_then_none(void **state)
{
    (void)state;
    char scen[] = "/tmp/migmon-scen-XXXXXX";
    int fd = mkstemp(scen);
    assert_true(fd >= 0);
    close(fd);
    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof(cmd),
             "cat '%s/sim/scenarios/h100-pcie-mig-535.ini' - >'%s' <<'EOF'\n"
             "[fault.slot1-lists]\ntarget = gpu.0.mig.1\n"
             "function = nvmlDeviceGet*RunningProcesses*\nreturn = UNKNOWN\n"
             "from = 20\nuntil = 26\nEOF\n",
             getenv("MIGMON_SRC"), scen);
    assert_int_equal(system(cmd), 0);
    setenv("MIGMON_SIM_SCENARIO", scen, 1);
    setenv("MIGMON_SIM_TIME", "19+1", 1);
    struct collector c;
    open_sim(&c, "gpu-host", 16);
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick(&c, &s); /* t = 19 */
    assert_int_equal(mig_dev(&s, 0, 1)->nprocs, 1);
    assert_int_equal(proc_at(&s, mig_dev(&s, 0, 1), 0)->pid, 4187);
    for (int t = 20; t < 26; t++) {
        collect_tick(&c, &s);
        const struct device *d1 = mig_dev(&s, 0, 1);
        if (t < 20 + COLLECT_CARRY_TICKS) {
            assert_int_equal(d1->nprocs, 1);
            assert_true(proc_at(&s, d1, 0)->carried);
            assert_int_equal(d1->process_count.src, MSRC_CARRIED);
        } else {
            assert_int_equal(d1->nprocs, 0);
            assert_int_equal(d1->process_count.src, MSRC_NONE);
        }
        /* the other instances keep their own fresh lists */
        assert_int_equal(mig_dev(&s, 0, 0)->nprocs, 1);
        assert_false(proc_at(&s, mig_dev(&s, 0, 0), 0)->carried);
        assert_int_equal(mig_dev(&s, 0, 3)->nprocs, 1);
        assert_no_duplicates(&s);
    }
    collect_tick(&c, &s); /* t = 26: it reads again */
    assert_int_equal(mig_dev(&s, 0, 1)->nprocs, 1);
    assert_false(proc_at(&s, mig_dev(&s, 0, 1), 0)->carried);
    assert_int_equal(mig_dev(&s, 0, 1)->process_count.src, MSRC_DIRECT);
    snapshot_free(&s);
    collect_close(&c);
    unlink(scen);
}

/* ---- the list reader against fake NVML functions ---- */

static unsigned fake_n, fake_grow, fake_grow_times, fake_calls;
static size_t fake_stride;

/* Writes fake_n entries of fake_stride bytes; the list grows by fake_grow
 * after each of the first fake_grow_times answers (the race between the size
 * and the data query). */
static nvmlReturn_t fake_list(nvmlDevice_t h, unsigned int *count, void *infos)
{
    (void)h;
    fake_calls++;
    unsigned n = fake_n;
    if (fake_grow_times) {
        fake_grow_times--;
        fake_n += fake_grow;
    }
    if (!infos || *count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned i = 0; i < n; i++) {
        unsigned char *e = (unsigned char *)infos + (size_t)i * fake_stride;
        memset(e, 0xAB, fake_stride);
        nvmlProcessInfo_v2_t v = {.pid = 100 + i,
                                  .usedGpuMemory = (i == 1) ? NVML_VALUE_NOT_AVAILABLE_ULL
                                                            : (unsigned long long)i << 20,
                                  .gpuInstanceId = 1,
                                  .computeInstanceId = 0};
        memcpy(e, &v, fake_stride < sizeof(v) ? fake_stride : sizeof(v));
    }
    *count = n;
    return NVML_SUCCESS;
}

static struct nvml_state fst;

static void test_read_kind_retries(void **state)
{
    (void)state;
    memset(&fst, 0, sizeof(fst));
    fake_n = 3;
    fake_grow = 40; /* outgrows the quarter of slack once */
    fake_grow_times = 1;
    fake_calls = 0;
    fake_stride = sizeof(nvmlProcessInfo_535cc_t); /* the 32-byte 535.86 stride */
    assert_int_equal(nvml_procs_read_kind(&fst, NULL, fake_list, fake_stride, PROC_COMPUTE,
                                          "fake"),
                     NVML_SUCCESS);
    assert_int_equal(fake_calls, 3); /* size, too small, fits */
    assert_int_equal(fst.list.n, 43);
    assert_int_equal(fst.list.e[2].pid, 102);
    assert_int_equal(fst.list.e[1].mem, NVML_VALUE_NOT_AVAILABLE_ULL);
    assert_int_equal(fst.list.e[42].mem, 42ull << 20);
    assert_int_equal(fst.list.e[42].gi, 1);
    assert_int_equal(fst.list.e[42].ci, 0);
    /* the buffer is kept: the next read is one call */
    fst.list.n = 0;
    fake_calls = 0;
    assert_int_equal(nvml_procs_read_kind(&fst, NULL, fake_list, fake_stride, PROC_COMPUTE,
                                          "fake"),
                     NVML_SUCCESS);
    assert_int_equal(fake_calls, 1);

    /* v1 entries (16 bytes) carry no instance ids */
    fst.list.n = 0;
    fake_n = 2;
    fake_grow = 0;
    fake_stride = sizeof(nvmlProcessInfo_v1_t);
    assert_int_equal(nvml_procs_read_kind(&fst, NULL, fake_list, fake_stride, PROC_GRAPHICS,
                                          "fake"),
                     NVML_SUCCESS);
    assert_int_equal(fst.list.n, 2);
    assert_int_equal(fst.list.e[1].pid, 101);
    assert_int_equal(fst.list.e[1].gi, 0xFFFFFFFFu);

    /* the same PID from a second list merges its type */
    fake_n = 2;
    fake_stride = sizeof(nvmlProcessInfo_v1_t);
    assert_int_equal(nvml_procs_read_kind(&fst, NULL, fake_list, fake_stride, PROC_COMPUTE,
                                          "fake"),
                     NVML_SUCCESS);
    assert_int_equal(fst.list.n, 2);
    assert_int_equal(fst.list.e[0].type, PROC_COMPUTE | PROC_GRAPHICS);

    /* a list that never stops growing gives up with INSUFFICIENT_SIZE */
    fst.list.n = 0;
    fake_n = 1000; /* more than the buffer holds now */
    fake_grow = 100000;
    fake_grow_times = 1000;
    fake_calls = 0;
    assert_int_equal(nvml_procs_read_kind(&fst, NULL, fake_list, fake_stride, PROC_COMPUTE,
                                          "fake"),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_true(fake_calls <= 4);
    assert_int_equal(fst.list.n, 0);
    nvml_state_free(&fst);
}

/* A storm of INSUFFICIENT_SIZE grows the list buffer to its cap (65,536
 * entries) and no further; the first short list gives it back (twice the
 * count, 1024 entries at least). */
static void test_list_buffer_capped_then_shrunk(void **state)
{
    (void)state;
    memset(&fst, 0, sizeof(fst));
    fake_n = 100000;
    fake_grow = fake_grow_times = 0;
    fake_calls = 0;
    fake_stride = sizeof(nvmlProcessInfo_v2_t);
    assert_int_equal(nvml_procs_read_kind(&fst, NULL, fake_list, fake_stride, PROC_COMPUTE,
                                          "fake"),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(fst.raw_cap, 65536);
    assert_int_equal(fake_calls, 2); /* size query, then the capped buffer */
    assert_int_equal(fst.list.n, 0);
    fake_n = 3;
    assert_int_equal(nvml_procs_read_kind(&fst, NULL, fake_list, fake_stride, PROC_COMPUTE,
                                          "fake"),
                     NVML_SUCCESS);
    assert_int_equal(fst.list.n, 3);
    assert_int_equal(fst.list.e[2].pid, 102);
    assert_int_equal(fst.raw_cap, 1024);
    /* a list of 3,000 in a 1,024 buffer grows it to what it asks, plus slack */
    nvml_proc_list_clear(&fst.list);
    fake_n = 3000;
    assert_int_equal(nvml_procs_read_kind(&fst, NULL, fake_list, fake_stride, PROC_COMPUTE,
                                          "fake"),
                     NVML_SUCCESS);
    assert_int_equal(fst.list.n, 3000);
    assert_int_equal(fst.raw_cap, 3000 + 750 + 4);
    nvml_state_free(&fst);
}

/* ---- per-process utilisation against fake NVML functions ---- */

/* The driver holds fake_pu_n samples (PID 100 + i, SM 10 + i % 91 %, newer each
 * round) and answers INSUFFICIENT_SIZE with that count to a shorter buffer. */
static unsigned fake_pu_n;
static unsigned long long fake_pu_ts = 1000;

static void fake_pu_fill(unsigned i, uint32_t *pid, unsigned *sm, unsigned long long *ts)
{
    *pid = 100 + i;
    *sm = 10 + i % 91;
    *ts = fake_pu_ts + i;
}

static nvmlReturn_t fake_util_info(nvmlDevice_t h, nvmlProcessesUtilizationInfo_v1_t *v)
{
    (void)h;
    fake_calls++;
    if (!v->procUtilArray || v->processSamplesCount < fake_pu_n) {
        v->processSamplesCount = fake_pu_n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned i = 0; i < fake_pu_n; i++) {
        nvmlProcessUtilizationInfo_v1_t *e = &v->procUtilArray[i];
        memset(e, 0, sizeof(*e));
        fake_pu_fill(i, &e->pid, &e->smUtil, &e->timeStamp);
    }
    v->processSamplesCount = fake_pu_n;
    return NVML_SUCCESS;
}

static nvmlReturn_t fake_proc_util(nvmlDevice_t h, nvmlProcessUtilizationSample_t *u,
                                   unsigned int *count, unsigned long long last_seen)
{
    (void)h;
    (void)last_seen;
    fake_calls++;
    if (!u || *count < fake_pu_n) {
        *count = fake_pu_n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned i = 0; i < fake_pu_n; i++) {
        memset(&u[i], 0, sizeof(u[i]));
        fake_pu_fill(i, &u[i].pid, &u[i].smUtil, &u[i].timeStamp);
    }
    *count = fake_pu_n;
    return NVML_SUCCESS;
}

/* A count the sample buffers cannot hold (10^6, then 2^32-1) gets at most
 * 65,536 entries and no samples (INSUFFICIENT_SIZE), never the memory the
 * driver asks for; the next short answer gives the buffer back (1024) and
 * is summed (10 + 11 = 21 %). Both calls: ..UtilizationInfo (550+) and
 * the older GetProcessUtilization. */
static void test_util_buffers_capped_then_shrunk(void **state)
{
    (void)state;
    for (int api = 0; api < 2; api++) {
        memset(&fst, 0, sizeof(fst));
        if (api == 0)
            fst.lib.f.processes_util_info = fake_util_info;
        else
            fst.lib.f.process_util = fake_proc_util;
        size_t *cap = api == 0 ? &fst.pui_cap : &fst.pu_cap;
        struct dev_cache dc;
        memset(&dc, 0, sizeof(dc));
        double sm = -1, mem = -1;
        static const unsigned huge[] = {1000000u, 4294967295u};
        for (int k = 0; k < 2; k++) {
            fake_pu_n = huge[k];
            fake_calls = 0;
            assert_int_equal(nvml_process_util(&fst, &dc, NULL, false, &sm, &mem),
                             NVML_ERROR_INSUFFICIENT_SIZE);
            assert_int_equal(*cap, 65536);
            assert_true(fake_calls <= 3);
        }
        fake_pu_n = 2;
        fake_pu_ts += 1000;
        assert_int_equal(nvml_process_util(&fst, &dc, NULL, false, &sm, &mem), NVML_SUCCESS);
        assert_int_equal(*cap, 1024);
        assert_true(sm == 21);
        assert_int_equal(fst.npus, 2);
        assert_int_equal(fst.pus[1].pid, 101);
        assert_int_equal(fst.pus[1].sm, 11);
        /* the kept buffer takes the next answer in one call */
        fake_pu_ts += 1000;
        fake_calls = 0;
        assert_int_equal(nvml_process_util(&fst, &dc, NULL, false, &sm, &mem), NVML_SUCCESS);
        assert_int_equal(fake_calls, api == 0 ? 1 : 2); /* the old call always sizes first */
        assert_int_equal(*cap, 1024);
        nvml_state_free(&fst);
    }
}

/* A tick of 10,000 processes, then ticks of 3: the list's table and its
 * index are given back (1,024 entries, 64 slots), and the 3 still merge by
 * (PID, GI, CI) through the new index; a list of 200 in that table keeps
 * it. The per-process samples' table likewise (10,000 PIDs, then 2). */
static void test_tables_given_back_after_a_storm(void **state)
{
    (void)state;
    memset(&fst, 0, sizeof(fst));
    fst.lib.f.procs_compute = fake_list;
    fst.lib.proc_stride[NVML_PROCS_COMPUTE] = sizeof(nvmlProcessInfo_v2_t);
    fake_stride = sizeof(nvmlProcessInfo_v2_t);
    fake_grow = fake_grow_times = 0;
    fake_n = 10000;
    assert_int_equal(nvml_procs_read_lists(&fst, NULL, true), NVML_SUCCESS);
    assert_int_equal(fst.list.n, 10000);
    assert_int_equal(fst.list.cap, 16384);
    assert_int_equal(fst.list.ixcap, 32768);
    fake_n = 3;
    assert_int_equal(nvml_procs_read_lists(&fst, NULL, true), NVML_SUCCESS);
    assert_int_equal(fst.list.n, 3);
    assert_int_equal(fst.list.cap, 1024);
    assert_int_equal(fst.list.ixcap, 64);
    assert_int_equal(fst.list.e[2].pid, 102);
    assert_int_equal(nvml_procs_read_kind(&fst, NULL, fake_list, fake_stride, PROC_GRAPHICS,
                                          "fake"),
                     NVML_SUCCESS);
    assert_int_equal(fst.list.n, 3);
    assert_int_equal(fst.list.e[2].type, PROC_COMPUTE | PROC_GRAPHICS);
    fake_n = 200;
    assert_int_equal(nvml_procs_read_lists(&fst, NULL, true), NVML_SUCCESS);
    assert_int_equal(fst.list.n, 200);
    assert_int_equal(fst.list.cap, 1024);
    assert_int_equal(fst.list.ixcap, 512);
    nvml_state_free(&fst);

    memset(&fst, 0, sizeof(fst));
    fst.lib.f.processes_util_info = fake_util_info;
    struct dev_cache dc;
    memset(&dc, 0, sizeof(dc));
    double sm = -1, mem = -1;
    fake_pu_n = 10000;
    fake_pu_ts += 100000;
    assert_int_equal(nvml_process_util(&fst, &dc, NULL, false, &sm, &mem), NVML_SUCCESS);
    assert_int_equal(fst.npus, 10000);
    assert_int_equal(fst.pus_cap, 16384);
    assert_int_equal(fst.pus_ixcap, 32768);
    fake_pu_n = 2;
    fake_pu_ts += 100000;
    assert_int_equal(nvml_process_util(&fst, &dc, NULL, false, &sm, &mem), NVML_SUCCESS);
    assert_int_equal(fst.npus, 2);
    assert_int_equal(fst.pus_cap, 1024);
    assert_int_equal(fst.pus_ixcap, 64);
    assert_true(sm == 21);
    assert_int_equal(fst.pus[1].pid, 101);
    nvml_state_free(&fst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_h100_535_attribution),
        cmocka_unit_test(test_dgx_attribution),
        cmocka_unit_test(test_parent_fallback),
        cmocka_unit_test(test_unattributed),
        cmocka_unit_test(test_sort_merge_and_grow),
        cmocka_unit_test(test_top_cut),
        cmocka_unit_test(test_carry_is_bounded),
        cmocka_unit_test(test_carry_needs_a_live_pid),
        cmocka_unit_test(test_ended_process_leaves_at_once),
        cmocka_unit_test(test_carry_not_across_pid_reuse),
        cmocka_unit_test(test_mig_list_outage_carried_then_none),
        cmocka_unit_test(test_read_kind_retries),
        cmocka_unit_test(test_list_buffer_capped_then_shrunk),
        cmocka_unit_test(test_util_buffers_capped_then_shrunk),
        cmocka_unit_test(test_tables_given_back_after_a_storm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
