/* Unit tests for the view logic of src/tui/panels.c: selection by UUID,
 * movement, mouse hit-testing and process sorting. Drawing itself is
 * covered by test_widgets.c and the tmux screen tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tui/panels.h"

static struct device devs[8];
static struct gpu_process procs[8];

static void make_snapshot(struct snapshot *s, const char *const *uuids, size_t n)
{
    memset(s, 0, sizeof(*s));
    memset(devs, 0, sizeof(devs));
    for (size_t i = 0; i < n; i++)
        snprintf(devs[i].uuid, sizeof(devs[i].uuid), "%s", uuids[i]);
    s->devices = devs;
    s->ndevices = s->cap = n;
    s->gpu_ok = true;
}

static void test_selection_follows_uuid(void **state)
{
    (void)state;
    struct snapshot s;
    struct tui_view v;
    memset(&v, 0, sizeof(v));
    const char *const before[] = {"GPU-a", "MIG-1", "MIG-5", "MIG-13"};
    make_snapshot(&s, before, 4);
    v.snap = &s;
    tui_view_follow(&v);
    assert_string_equal(v.sel_uuid, "GPU-a");
    tui_view_select(&v, 2);
    assert_int_equal(v.sel, 2);
    assert_string_equal(v.sel_uuid, "MIG-5");
    /* re-enumeration puts MIG-5 last: the selection moves with it */
    const char *const after[] = {"GPU-a", "MIG-1", "MIG-13", "MIG-11", "MIG-5"};
    make_snapshot(&s, after, 5);
    tui_view_follow(&v);
    assert_int_equal(v.sel, 4);
    assert_string_equal(v.sel_uuid, "MIG-5");
    /* the device goes away: the cursor stays in place, clamped, and adopts
     * the device now there */
    const char *const gone[] = {"GPU-a", "MIG-1"};
    make_snapshot(&s, gone, 2);
    tui_view_follow(&v);
    assert_int_equal(v.sel, 1);
    assert_string_equal(v.sel_uuid, "MIG-1");
}

static void test_select_clamps(void **state)
{
    (void)state;
    struct snapshot s;
    struct tui_view v;
    memset(&v, 0, sizeof(v));
    const char *const u[] = {"GPU-a", "MIG-1", "MIG-2"};
    make_snapshot(&s, u, 3);
    v.snap = &s;
    tui_view_follow(&v);
    tui_view_select(&v, -1);
    assert_int_equal(v.sel, 0);
    tui_view_select(&v, 10);
    assert_int_equal(v.sel, 2);
    tui_view_select_abs(&v, 0);
    assert_string_equal(v.sel_uuid, "GPU-a");
    tui_view_select_abs(&v, (size_t)-1); /* End */
    assert_int_equal(v.sel, 2);
    /* no devices: nothing moves, nothing breaks */
    make_snapshot(&s, u, 0);
    tui_view_select(&v, 1);
    tui_view_follow(&v);
    assert_int_equal(v.sel, 0);
}

static void test_device_at(void **state)
{
    (void)state;
    struct snapshot s;
    struct tui_view v;
    memset(&v, 0, sizeof(v));
    const char *const u[] = {"a", "b", "c", "d", "e", "f"};
    make_snapshot(&s, u, 6);
    v.snap = &s;
    v.lay.devices = (struct rect){.y = 1, .x = 40, .h = 5, .w = 40}; /* 3 inner rows */
    v.dev_scroll = 2;
    assert_int_equal(tui_view_device_at(&v, 1, 50), -1); /* top border */
    assert_int_equal(tui_view_device_at(&v, 2, 50), 2);  /* first inner row: scrolled */
    assert_int_equal(tui_view_device_at(&v, 4, 50), 4);
    assert_int_equal(tui_view_device_at(&v, 5, 50), -1); /* bottom border */
    assert_int_equal(tui_view_device_at(&v, 3, 40), -1); /* left border */
    assert_int_equal(tui_view_device_at(&v, 3, 10), -1); /* another panel */
    v.dev_scroll = 4;
    assert_int_equal(tui_view_device_at(&v, 4, 50), -1); /* past the last device */
}

static struct gpu_process proc(uint32_t pid, double mem, double sm, double cpu)
{
    struct gpu_process p;
    memset(&p, 0, sizeof(p));
    p.pid = pid;
    p.mem_bytes = mem < 0 ? metric_none("not available") : metric_direct(mem);
    p.sm_util = sm < 0 ? metric_none(NULL) : metric_direct(sm);
    p.cpu_pct = cpu < 0 ? metric_none(NULL) : metric_direct(cpu);
    return p;
}

static void test_sort_processes(void **state)
{
    (void)state;
    struct snapshot s;
    struct tui_view v;
    memset(&v, 0, sizeof(v));
    const char *const u[] = {"GPU-a", "GPU-b"};
    make_snapshot(&s, u, 2);
    procs[0] = proc(900, 1e9, 10, 50);
    procs[1] = proc(300, -1, 80, 5);  /* memory not available */
    procs[2] = proc(200, 4e9, -1, 20);
    procs[3] = proc(100, 1e9, 30, -1);
    procs[4] = proc(555, 8e9, 99, 99); /* the other device's */
    s.procs = procs;
    s.nprocs = 5;
    devs[0].proc_first = 0;
    devs[0].nprocs = 4;
    devs[1].proc_first = 4;
    devs[1].nprocs = 1;
    v.snap = &s;
    tui_view_follow(&v);

    uint32_t want_mem[] = {200, 100, 900, 300}; /* unknown last, ties by PID */
    v.psort = PSORT_MEMORY;
    tui_view_sort_procs(&v);
    assert_int_equal(v.nrows, 4);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(procs[v.rows[i]].pid, want_mem[i]);
    uint32_t want_sm[] = {300, 100, 900, 200};
    v.psort = PSORT_SM;
    tui_view_sort_procs(&v);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(procs[v.rows[i]].pid, want_sm[i]);
    uint32_t want_cpu[] = {900, 200, 300, 100};
    v.psort = PSORT_CPU;
    tui_view_sort_procs(&v);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(procs[v.rows[i]].pid, want_cpu[i]);
    uint32_t want_pid[] = {100, 200, 300, 900};
    v.psort = PSORT_PID;
    tui_view_sort_procs(&v);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(procs[v.rows[i]].pid, want_pid[i]);

    /* the cursor stays on its PID when the order changes */
    v.proc_sel = 2; /* PID 300 in PID order */
    v.proc_sel_pid = 0;
    tui_view_sort_procs(&v);
    assert_int_equal(v.proc_sel_pid, 300);
    v.psort = PSORT_MEMORY;
    tui_view_sort_procs(&v);
    assert_int_equal(v.proc_sel, 3);
    assert_int_equal(tui_view_selected_proc(&v)->pid, 300);

    /* the second device sees only its own process */
    tui_view_select(&v, 1);
    tui_view_sort_procs(&v);
    assert_int_equal(v.nrows, 1);
    assert_int_equal(procs[devs[1].proc_first + v.rows[0]].pid, 555);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_selection_follows_uuid),
        cmocka_unit_test(test_select_clamps),
        cmocka_unit_test(test_device_at),
        cmocka_unit_test(test_sort_processes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
