/*
 * proclist.c: every GPU process of a snapshot once (a process listed by a
 * MIG-enabled GPU and by one of its instances is the instance's; one on two
 * GPUs is two entries), sorted, filtered, with its elapsed time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "engine/proclist.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static struct device devs[4];
static struct gpu_process procs[16];
static struct snapshot snap;

static void proc(size_t i, uint32_t pid, uint64_t start, double mem_gib, const char *cmd,
                 const char *user)
{
    struct gpu_process *p = &procs[i];
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    p->local_pid = pid;
    p->start_time = start;
    p->gi_id = p->ci_id = -1;
    p->mem_bytes = mem_gib < 0 ? metric_none("NVML_VALUE_NOT_AVAILABLE") : metric_direct(mem_gib * GIB);
    p->sm_util = metric_none("no sample");
    p->cpu_pct = metric_none("first sight");
    snprintf(p->command, sizeof(p->command), "%s", cmd);
    snprintf(p->user, sizeof(p->user), "%s", user);
}

static void dev(size_t i, enum device_kind kind, int index, int mig_index, int parent,
                size_t first, size_t n)
{
    struct device *d = &devs[i];
    memset(d, 0, sizeof(*d));
    d->kind = kind;
    d->index = index;
    d->mig_index = mig_index;
    d->parent_pos = parent;
    d->mig_enabled = kind == DEV_GPU && index == 0;
    d->proc_first = first;
    d->nprocs = n;
    d->process_count = metric_direct((double)n);
}

/* GPU 0 (MIG on) with MIG 0/0 and 0/1, GPU 1 (MIG off):
 *   procs 0-2  GPU 0's own list: 100 (also on 0/0), 200 with its start time
 *              unknown (also on 0/1), 300 (on no instance: unattributed)
 *   procs 3-4  MIG 0/0: 100, 150 (memory unknown)
 *   procs 5-6  MIG 0/1: 200, and a PID 100 of another start time
 *   procs 7-9  GPU 1: 100 (the same process as on 0/0: memory on both),
 *              400 listed twice */
static int setup(void **state)
{
    (void)state;
    memset(&snap, 0, sizeof(snap));
    proc(0, 100, 500, 10, "python -m vllm.serve", "alice");
    proc(1, 200, 0, 5, "embed.py", "bob");
    proc(2, 300, 900, 2, "jupyter-kernel", "carol");
    proc(3, 100, 500, 10, "python -m vllm.serve", "alice");
    proc(4, 150, 600, -1, "bash train.sh", "bob");
    proc(5, 200, 700, 5, "embed.py", "bob");
    proc(6, 100, 999, 3, "other", "dave");
    proc(7, 100, 500, 1, "python -m vllm.serve", "alice");
    proc(8, 400, 800, 7, "nccl-test", "erin");
    proc(9, 400, 800, 7, "nccl-test", "erin");
    procs[2].unattributed = true;
    dev(0, DEV_GPU, 0, -1, -1, 0, 3);
    dev(1, DEV_MIG, 0, 0, 0, 3, 2);
    dev(2, DEV_MIG, 0, 1, 0, 5, 2);
    dev(3, DEV_GPU, 1, -1, -1, 7, 3);
    snap.devices = devs;
    snap.ndevices = 4;
    snap.procs = procs;
    snap.nprocs = 10;
    snap.host_ok = true;
    snap.host.uptime_s = metric_direct(1000.5);
    return 0;
}

static void test_collect_once(void **state)
{
    (void)state;
    size_t rows[16], total = 0;
    size_t n = proclist_collect(&snap, NULL, rows, 16, &total);
    /* 300 (GPU 0, unattributed), 100 and 150 on 0/0, 200 and the other 100
     * on 0/1, 100 and one 400 on GPU 1 */
    size_t want[] = {2, 3, 4, 5, 6, 7, 8};
    assert_int_equal(n, 7);
    assert_int_equal(total, 7);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(rows[i], want[i]);
    assert_int_equal(proclist_device_of(&snap, rows[0]), 0);
    assert_int_equal(proclist_device_of(&snap, rows[1]), 1);
    assert_int_equal(proclist_device_of(&snap, rows[5]), 3);
    assert_int_equal(proclist_device_of(&snap, 12), -1);
}

static void test_collect_cap_and_filter(void **state)
{
    (void)state;
    size_t rows[16], total = 0;
    assert_int_equal(proclist_collect(&snap, NULL, rows, 3, &total), 3);
    assert_int_equal(total, 7);
    assert_int_equal(rows[2], 4);
    /* by command, ignoring case: the vLLM process on 0/0 and on GPU 1 */
    assert_int_equal(proclist_collect(&snap, "VLLM", rows, 16, &total), 2);
    assert_int_equal(rows[0], 3);
    assert_int_equal(rows[1], 7);
    /* by user */
    assert_int_equal(proclist_collect(&snap, "bob", rows, 16, &total), 2);
    assert_int_equal(rows[0], 4);
    assert_int_equal(rows[1], 5);
    assert_int_equal(proclist_collect(&snap, "nobody-at-all", rows, 16, &total), 0);
    assert_int_equal(total, 0);
}

/* Without a MIG-enabled parent, a process on a GPU and one of another
 * GPU's instances is not a duplicate. */
static void test_no_dedupe_without_mig_parent(void **state)
{
    (void)state;
    devs[0].mig_enabled = false;
    size_t rows[16];
    assert_int_equal(proclist_collect(&snap, NULL, rows, 16, NULL), 9);
    devs[0].mig_enabled = true;
}

static void test_sort(void **state)
{
    (void)state;
    size_t rows[16];
    size_t n = proclist_collect(&snap, NULL, rows, 16, NULL);
    proclist_sort(&snap, rows, n, PROCLIST_BY_MEMORY, false);
    /* 10 GiB 100; 7 GiB 400; 5 GiB 200; 3 GiB 100 (other); 2 GiB 300;
     * 1 GiB 100; unknown 150 last */
    size_t by_mem[] = {3, 8, 5, 6, 2, 7, 4};
    for (size_t i = 0; i < n; i++)
        assert_int_equal(rows[i], by_mem[i]);
    proclist_sort(&snap, rows, n, PROCLIST_BY_PID, false);
    /* ties by position in the snapshot */
    size_t by_pid[] = {3, 6, 7, 4, 5, 2, 8};
    for (size_t i = 0; i < n; i++)
        assert_int_equal(rows[i], by_pid[i]);
    /* every CPU % unknown but one: it first, the rest by PID */
    procs[8].cpu_pct = metric_direct(250);
    proclist_sort(&snap, rows, n, PROCLIST_BY_CPU, false);
    assert_int_equal(rows[0], 8);
    assert_int_equal(rows[1], 3);
    procs[8].cpu_pct = metric_none("first sight");
}

static void test_elapsed(void **state)
{
    (void)state;
    char b[32];
    struct metric e = proclist_elapsed(&snap, &procs[3], 100); /* 500 ticks: 5 s after boot */
    assert_int_equal(e.src, MSRC_DIRECT);
    assert_true(e.value > 995.49 && e.value < 995.51);
    assert_string_equal(proclist_fmt_elapsed(b, sizeof(b), &e), "16:35");
    /* start time unknown */
    assert_false(metric_ok((e = proclist_elapsed(&snap, &procs[1], 100), &e)));
    assert_string_equal(proclist_fmt_elapsed(b, sizeof(b), &e), "N/A");
    /* a start 0.1 s past the uptime (both rounded): 0 s */
    procs[9].start_time = 100060;
    e = proclist_elapsed(&snap, &procs[9], 100);
    assert_true(metric_ok(&e));
    assert_true(e.value == 0);
    /* more than a second past it: not the same boot, unknown */
    procs[9].start_time = 200000;
    assert_false(metric_ok((e = proclist_elapsed(&snap, &procs[9], 100), &e)));
    procs[9].start_time = 800;
    /* no uptime */
    snap.host.uptime_s = metric_none("unreadable");
    assert_false(metric_ok((e = proclist_elapsed(&snap, &procs[3], 100), &e)));
    snap.host.uptime_s = metric_direct(1000.5);
    snap.host_ok = false;
    assert_false(metric_ok((e = proclist_elapsed(&snap, &procs[3], 100), &e)));
    snap.host_ok = true;
}

static void test_fmt_elapsed(void **state)
{
    (void)state;
    char b[32];
    struct metric m = metric_direct(303.9);
    assert_string_equal(proclist_fmt_elapsed(b, sizeof(b), &m), "05:03");
    m.value = 3723;
    assert_string_equal(proclist_fmt_elapsed(b, sizeof(b), &m), "01:02:03");
    m.value = 3 * 86400 + 4 * 3600 + 5 * 60 + 6;
    assert_string_equal(proclist_fmt_elapsed(b, sizeof(b), &m), "3-04:05:06");
    m.value = 0;
    assert_string_equal(proclist_fmt_elapsed(b, sizeof(b), &m), "00:00");
}

static void test_label(void **state)
{
    (void)state;
    char b[16];
    proclist_device_label(b, sizeof(b), &devs[0]);
    assert_string_equal(b, "0");
    proclist_device_label(b, sizeof(b), &devs[2]);
    assert_string_equal(b, "0/1");
    proclist_device_label(b, sizeof(b), &devs[3]);
    assert_string_equal(b, "1");
}

static void assert_order(enum proclist_key key, bool reverse, const size_t *want, size_t n)
{
    size_t rows[16];
    size_t got = proclist_collect(&snap, NULL, rows, 16, NULL);
    assert_int_equal(got, n);
    proclist_sort(&snap, rows, got, key, reverse);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(rows[i], want[i]);
}

/* Every key, both ways; a value that is unknown last either way; ties by
 * PID, then by position (the rows: 2 pid 300 carol "jupyter-kernel" 2 GiB
 * start 900 on GPU 0; 3 pid 100 alice "python -m vllm.serve" 10 GiB 500 on
 * 0/0; 4 pid 150 bob "bash train.sh" unknown 600 on 0/0; 5 pid 200 bob
 * "embed.py" 5 GiB 700 on 0/1; 6 pid 100 dave "other" 3 GiB 999 on 0/1;
 * 7 pid 100 alice vllm 1 GiB 500 on GPU 1; 8 pid 400 erin "nccl-test"
 * 7 GiB 800 on GPU 1) */
static void test_sort_keys_both_ways(void **state)
{
    (void)state;
    assert_order(PROCLIST_BY_MEMORY, false, (size_t[]){3, 8, 5, 6, 2, 7, 4}, 7);
    assert_order(PROCLIST_BY_MEMORY, true, (size_t[]){7, 2, 6, 5, 8, 3, 4}, 7);
    assert_order(PROCLIST_BY_PID, false, (size_t[]){3, 6, 7, 4, 5, 2, 8}, 7);
    assert_order(PROCLIST_BY_PID, true, (size_t[]){8, 2, 5, 4, 3, 6, 7}, 7);
    assert_order(PROCLIST_BY_USER, false, (size_t[]){3, 7, 4, 5, 2, 6, 8}, 7);
    assert_order(PROCLIST_BY_USER, true, (size_t[]){8, 6, 2, 4, 5, 3, 7}, 7);
    /* by command, ignoring case */
    snprintf(procs[5].command, sizeof(procs[5].command), "Embed.py");
    assert_order(PROCLIST_BY_COMMAND, false, (size_t[]){4, 5, 2, 8, 6, 3, 7}, 7);
    assert_order(PROCLIST_BY_COMMAND, true, (size_t[]){3, 7, 6, 8, 2, 5, 4}, 7);
    /* the elapsed time, longest first; 6's start time unknown: last */
    procs[6].start_time = 0;
    assert_order(PROCLIST_BY_TIME, false, (size_t[]){3, 7, 4, 5, 8, 2, 6}, 7);
    assert_order(PROCLIST_BY_TIME, true, (size_t[]){2, 8, 5, 4, 3, 7, 6}, 7);
    /* the devices in the snapshot's order (the device list's) */
    assert_order(PROCLIST_BY_DEVICE, false, (size_t[]){2, 3, 4, 6, 5, 7, 8}, 7);
    assert_order(PROCLIST_BY_DEVICE, true, (size_t[]){7, 8, 6, 5, 3, 4, 2}, 7);
    /* resident memory: known for three, the others after them both ways */
    procs[3].rss_bytes = metric_direct(3 * GIB);
    procs[5].rss_bytes = metric_direct(1 * GIB);
    procs[8].rss_bytes = metric_direct(2 * GIB);
    for (size_t i = 0; i < 10; i++)
        if (i != 3 && i != 5 && i != 8)
            procs[i].rss_bytes = metric_none("not visible");
    assert_order(PROCLIST_BY_RSS, false, (size_t[]){3, 8, 5, 6, 7, 4, 2}, 7);
    assert_order(PROCLIST_BY_RSS, true, (size_t[]){5, 8, 3, 6, 7, 4, 2}, 7);
    /* SM %: unknown for all but two */
    procs[2].sm_util = metric_direct(10);
    procs[7].sm_util = metric_direct(90);
    assert_order(PROCLIST_BY_SM, false, (size_t[]){7, 2, 3, 6, 4, 5, 8}, 7);
    assert_order(PROCLIST_BY_SM, true, (size_t[]){2, 7, 3, 6, 4, 5, 8}, 7);
    procs[8].cpu_pct = metric_direct(250);
    procs[4].cpu_pct = metric_direct(5);
    assert_order(PROCLIST_BY_CPU, false, (size_t[]){8, 4, 3, 6, 7, 5, 2}, 7);
    assert_order(PROCLIST_BY_CPU, true, (size_t[]){4, 8, 3, 6, 7, 5, 2}, 7);
    assert_string_equal(proclist_key_name(PROCLIST_BY_TIME), "TIME");
    assert_string_equal(proclist_key_name(PROCLIST_BY_DEVICE), "DEV");
    assert_string_equal(proclist_key_name(PROCLIST_KEYS), "?");
}

/* The filter (key /) finds a process by its PID, its slice (ID, profile,
 * GI), its container and the device's pod, besides command and user. */
static void test_filter_pid_slice_pod(void **state)
{
    (void)state;
    size_t rows[16], total = 0;
    snprintf(devs[1].profile, sizeof(devs[1].profile), "3g.40gb");
    devs[1].gi_id = 1;
    devs[1].ci_id = 0;
    snprintf(devs[2].profile, sizeof(devs[2].profile), "1g.10gb");
    devs[2].gi_id = 2;
    devs[2].ci_id = 0;
    /* the PID: 400, listed twice by GPU 1, once */
    assert_int_equal(proclist_collect(&snap, "400", rows, 16, &total), 1);
    assert_int_equal(rows[0], 8);
    /* the PID as seen from here, where it differs */
    procs[5].local_pid = 7777;
    assert_int_equal(proclist_collect(&snap, "7777", rows, 16, &total), 1);
    assert_int_equal(rows[0], 5);
    /* the slice's ID, its profile, its GPU instance */
    assert_int_equal(proclist_collect(&snap, "0/1", rows, 16, &total), 2);
    assert_int_equal(rows[0], 5);
    assert_int_equal(rows[1], 6);
    assert_int_equal(proclist_collect(&snap, "3G.40", rows, 16, &total), 2);
    assert_int_equal(rows[0], 3);
    assert_int_equal(rows[1], 4);
    assert_int_equal(proclist_collect(&snap, "GI 2 CI 0", rows, 16, &total), 2);
    assert_int_equal(rows[0], 5);
    /* the container /proc gave, the pod the device is labelled with */
    snprintf(procs[8].container, sizeof(procs[8].container), "k8s:5f2b8c1e-0000/containerd:abc");
    assert_int_equal(proclist_collect(&snap, "5f2b8c1e", rows, 16, &total), 1);
    assert_int_equal(rows[0], 8);
    snprintf(devs[3].pod.name, sizeof(devs[3].pod.name), "trainer-7f9c");
    snprintf(devs[3].pod.ns, sizeof(devs[3].pod.ns), "ml-team");
    assert_int_equal(proclist_collect(&snap, "trainer", rows, 16, &total), 2);
    assert_int_equal(rows[0], 7);
    assert_int_equal(rows[1], 8);
    assert_int_equal(proclist_collect(&snap, "ml-team", rows, 16, &total), 2);
    /* a fleet's node */
    snprintf(devs[2].node, sizeof(devs[2].node), "h200");
    assert_int_equal(proclist_collect(&snap, "h200:", rows, 16, &total), 2);
    assert_true(proclist_match(&snap, 5, "h200:0/1"));
    assert_false(proclist_match(&snap, 3, "h200"));
    assert_true(proclist_match(&snap, 3, ""));
    assert_true(proclist_match(&snap, 3, NULL));
}

/* A slice's one name, in its three forms; AMD's in AMD's words. */
static void test_slice_names(void **state)
{
    (void)state;
    char b[96];
    snprintf(devs[2].profile, sizeof(devs[2].profile), "2g.35gb");
    devs[2].gi_id = 5;
    devs[2].ci_id = 0;
    proclist_slice_name(b, sizeof(b), &devs[2], PROCLIST_SLICE_FULL);
    assert_string_equal(b, "MIG 0/1 2g.35gb GI 5 CI 0");
    proclist_slice_name(b, sizeof(b), &devs[2], PROCLIST_SLICE_MID);
    assert_string_equal(b, "MIG 0/1 2g.35gb");
    proclist_slice_name(b, sizeof(b), &devs[2], PROCLIST_SLICE_SHORT);
    assert_string_equal(b, "0/1 2g.35gb");
    devs[2].ci_id = -1;
    devs[2].profile[0] = '\0';
    proclist_slice_name(b, sizeof(b), &devs[2], PROCLIST_SLICE_FULL);
    assert_string_equal(b, "MIG 0/1 ? GI 5 CI ?");
    proclist_slice_name(b, sizeof(b), &devs[0], PROCLIST_SLICE_FULL);
    assert_string_equal(b, "GPU 0");
    /* an AMD partition: its index and the GPU's partition modes */
    devs[1].vendor = VENDOR_AMD;
    snprintf(devs[1].profile, sizeof(devs[1].profile), "CPX/NPS4");
    devs[1].gi_id = 0;
    proclist_slice_name(b, sizeof(b), &devs[1], PROCLIST_SLICE_FULL);
    assert_string_equal(b, "Partition 0/0 CPX/NPS4");
    proclist_slice_name(b, sizeof(b), &devs[1], PROCLIST_SLICE_MID);
    assert_string_equal(b, "Partition 0/0 CPX/NPS4");
    proclist_slice_name(b, sizeof(b), &devs[1], PROCLIST_SLICE_SHORT);
    assert_string_equal(b, "0/0 CPX/NPS4");
    /* cut, never past the buffer */
    proclist_slice_name(b, 8, &devs[2], PROCLIST_SLICE_FULL);
    assert_string_equal(b, "MIG 0/1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_collect_once, setup),
        cmocka_unit_test_setup(test_collect_cap_and_filter, setup),
        cmocka_unit_test_setup(test_no_dedupe_without_mig_parent, setup),
        cmocka_unit_test_setup(test_sort, setup),
        cmocka_unit_test_setup(test_elapsed, setup),
        cmocka_unit_test_setup(test_fmt_elapsed, setup),
        cmocka_unit_test_setup(test_label, setup),
        cmocka_unit_test_setup(test_sort_keys_both_ways, setup),
        cmocka_unit_test_setup(test_filter_pid_slice_pod, setup),
        cmocka_unit_test_setup(test_slice_names, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
