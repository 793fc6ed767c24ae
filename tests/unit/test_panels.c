/* Unit tests for the view logic of src/tui/view.c: selection by UUID,
 * movement, mouse hit-testing and process sorting. Drawing itself is
 * covered by test_widgets.c and the tmux screen tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <wchar.h>

#include "core/history.h"
#include "engine/health.h"
#include "tui/fmt.h"
#include "tui/frame.h"
#include "tui/panels.h"

static struct device devs[16];
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

/* A MIG-enabled GPU that cannot read its own VRAM (no privilege): the sum
 * of its instances, only when every instance's is known; carried when one
 * is; never for a GPU that reads its own, nor for an instance. */
static void test_mig_vram_sum(void **state)
{
    (void)state;
    const char *const uuids[] = {"GPU-a", "MIG-1", "MIG-2", "GPU-b", "MIG-3"};
    struct snapshot s;
    make_snapshot(&s, uuids, 5);
    const double G = 1024.0 * 1024 * 1024;
    for (int i = 0; i < 5; i++) {
        for (int k = 0; k < M_COUNT; k++)
            devs[i].m[k] = metric_none("NVML_ERROR_NO_PERMISSION");
        bool gpu = i == 0 || i == 3;
        devs[i].kind = gpu ? DEV_GPU : DEV_MIG;
        devs[i].mig_enabled = gpu;
        devs[i].parent_pos = gpu ? -1 : i < 3 ? 0 : 3;
    }
    devs[1].m[M_MEM_USED] = metric_direct(4 * G);
    devs[1].m[M_MEM_TOTAL] = metric_direct(19.5 * G);
    devs[2].m[M_MEM_USED] = metric_direct(1 * G);
    devs[2].m[M_MEM_TOTAL] = metric_direct(9.75 * G);
    devs[4].m[M_MEM_TOTAL] = metric_direct(9.75 * G); /* used unknown */
    struct metric u, t;
    assert_true(snapshot_mig_vram_sum(&s, 0, &u, &t));
    assert_int_equal(u.src, MSRC_DIRECT);
    assert_float_equal(u.value, 5 * G, 0);
    assert_float_equal(t.value, 29.25 * G, 0);
    assert_false(snapshot_mig_vram_sum(&s, 3, &u, &t)); /* an instance without its figure */
    assert_false(snapshot_mig_vram_sum(&s, 1, &u, &t)); /* not a GPU */
    devs[2].m[M_MEM_USED].src = MSRC_CARRIED;
    assert_true(snapshot_mig_vram_sum(&s, 0, &u, &t));
    assert_int_equal(u.src, MSRC_CARRIED);
    devs[0].m[M_MEM_USED] = metric_direct(6 * G); /* privileged: its own figure */
    assert_false(snapshot_mig_vram_sum(&s, 0, &u, &t));
    devs[0].m[M_MEM_USED] = metric_none("NVML_ERROR_NO_PERMISSION");
    devs[0].mig_enabled = false; /* MIG off: no instances to sum */
    assert_false(snapshot_mig_vram_sum(&s, 0, &u, &t));
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
    tui_view_free(&v);
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
    tui_view_free(&v);
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
    tui_view_build_rows(&v, 0);
    v.dev_scroll = 2;
    assert_int_equal(tui_view_device_at(&v, 1, 50), -1); /* top border */
    assert_int_equal(tui_view_device_at(&v, 2, 50), 2);  /* first inner row: scrolled */
    assert_int_equal(tui_view_device_at(&v, 4, 50), 4);
    assert_int_equal(tui_view_device_at(&v, 5, 50), -1); /* bottom border */
    assert_int_equal(tui_view_device_at(&v, 3, 40), -1); /* left border */
    assert_int_equal(tui_view_device_at(&v, 3, 10), -1); /* another panel */
    v.dev_scroll = 4;
    assert_int_equal(tui_view_device_at(&v, 4, 50), -1); /* past the last device */
    tui_view_free(&v);
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
    assert_int_equal(procs[v.rows[0]].pid, 555);
    tui_view_free(&v);
}

/* GPU 0 (MIG on, 3 instances), GPU 1 (MIG on, 3 instances), GPU 2. */
static void make_tree(struct snapshot *s)
{
    const char *const u[] = {"GPU-0", "MIG-0a", "MIG-0b", "MIG-0c", "GPU-1", "MIG-1a",
                             "MIG-1b", "MIG-1c", "GPU-2"};
    make_snapshot(s, u, 9);
    int gpu = -1, pos = -1;
    for (int i = 0; i < 9; i++) {
        if (u[i][0] == 'G') {
            gpu++;
            pos = i;
            devs[i].kind = DEV_GPU;
            devs[i].index = gpu;
            devs[i].mig_index = -1;
            devs[i].parent_pos = -1;
            devs[i].mig_enabled = gpu < 2;
        } else {
            devs[i].kind = DEV_MIG;
            devs[i].index = gpu;
            devs[i].mig_index = i - pos - 1;
            devs[i].parent_pos = pos;
        }
    }
}

static void assert_rows(const struct tui_view *v, const size_t *want, size_t n)
{
    assert_int_equal(v->ndrow, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(v->drow[i], want[i]);
}

static void test_device_list_folds_to_fit(void **state)
{
    (void)state;
    struct snapshot s;
    static struct tui_view v;
    memset(&v, 0, sizeof(v));
    make_tree(&s);
    v.snap = &s;
    tui_view_follow(&v);
    /* room for everything: all unfolded */
    tui_view_build_rows(&v, 0);
    assert_int_equal(v.ndrow, 9);
    tui_view_build_rows(&v, 9);
    assert_int_equal(v.ndrow, 9);
    /* 7 rows: the selected device's GPU stays open, GPU 1 (3 more) does not fit */
    tui_view_build_rows(&v, 7);
    const size_t sel0[] = {0, 1, 2, 3, 4, 8};
    assert_rows(&v, sel0, 6);
    /* selecting GPU 1 opens it instead */
    tui_view_select_abs(&v, 4);
    tui_view_build_rows(&v, 7);
    const size_t sel1[] = {0, 4, 5, 6, 7, 8};
    assert_rows(&v, sel1, 6);
    /* Enter on an instance folds its GPU and selects the GPU */
    v.dev_room = 7;
    tui_view_select_abs(&v, 6);
    tui_view_toggle_fold(&v);
    assert_int_equal(v.sel, 4);
    assert_int_equal(v.fold[1], FOLD_CLOSED);
    tui_view_build_rows(&v, 7);
    const size_t folded[] = {0, 1, 2, 3, 4, 8}; /* GPU 0 now fits */
    assert_rows(&v, folded, 6);
    /* Down from the folded GPU 1 goes to GPU 2, not into its instances */
    tui_view_select(&v, 1);
    assert_int_equal(v.sel, 8);
    /* unfold again */
    tui_view_select_abs(&v, 4);
    tui_view_toggle_fold(&v);
    assert_int_equal(v.fold[1], FOLD_OPEN);
    tui_view_build_rows(&v, 0);
    assert_int_equal(v.ndrow, 9);
    /* Home, End, a page */
    tui_view_select_end(&v);
    assert_int_equal(v.sel, 8);
    tui_view_select_home(&v);
    assert_int_equal(v.sel, 0);
    v.dev_room = 4;
    tui_view_page(&v, 1); /* 3 rows down */
    assert_int_equal(v.sel, 3);
    tui_view_page(&v, -1);
    assert_int_equal(v.sel, 0);
    tui_view_free(&v);
}

static void test_digits_jump_to_a_gpu(void **state)
{
    (void)state;
    struct snapshot s;
    static struct tui_view v;
    memset(&v, 0, sizeof(v));
    make_tree(&s);
    v.snap = &s;
    tui_view_follow(&v);
    tui_view_jump_digit(&v, 2, 1000000000ull);
    assert_int_equal(v.sel, 8);
    /* a second digit within a second: GPU 21 does not exist, so GPU 1 */
    tui_view_jump_digit(&v, 1, 1500000000ull);
    assert_int_equal(v.sel, 4);
    /* later: a fresh number */
    tui_view_jump_digit(&v, 0, 9000000000ull);
    assert_int_equal(v.sel, 0);
    tui_view_jump_digit(&v, 7, 9100000000ull);
    assert_int_equal(v.sel, 0); /* no GPU 7 (nor 07): the selection stays */
    assert_string_equal(v.status, "no GPU 7");
    tui_view_free(&v);
}

static void test_mig_parent_lists_its_instances_processes(void **state)
{
    (void)state;
    struct snapshot s;
    static struct tui_view v;
    memset(&v, 0, sizeof(v));
    make_tree(&s);
    /* GPU 0 keeps one unattributed process; two in MIG-0a, one in MIG-0c,
     * one in GPU 1's first instance */
    procs[0] = proc(10, 1e9, -1, -1);
    procs[0].unattributed = true;
    procs[1] = proc(11, 5e9, -1, -1);
    procs[2] = proc(12, 2e9, -1, -1);
    procs[3] = proc(13, 3e9, -1, -1);
    procs[4] = proc(14, 9e9, -1, -1);
    snprintf(procs[1].command, sizeof(procs[1].command), "python train.py");
    snprintf(procs[3].user, sizeof(procs[3].user), "trainer");
    s.procs = procs;
    s.nprocs = 5;
    devs[0].proc_first = 0, devs[0].nprocs = 1;
    devs[1].proc_first = 1, devs[1].nprocs = 2;
    devs[3].proc_first = 3, devs[3].nprocs = 1;
    devs[5].proc_first = 4, devs[5].nprocs = 1;
    v.snap = &s;
    tui_view_follow(&v);
    tui_view_sort_procs(&v);
    const uint32_t want[] = {11, 13, 12, 10}; /* by VRAM, GPU 1's process not among them */
    assert_int_equal(v.nrows, 4);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(procs[v.rows[i]].pid, want[i]);
    /* an instance lists its own */
    tui_view_select_abs(&v, 1);
    tui_view_sort_procs(&v);
    assert_int_equal(v.nrows, 2);
    /* the filter matches command or user, case-insensitively */
    tui_view_select_abs(&v, 0);
    snprintf(v.filter, sizeof(v.filter), "TRAIN");
    tui_view_sort_procs(&v);
    assert_int_equal(v.nrows, 2);
    assert_int_equal(procs[v.rows[0]].pid, 11);
    assert_int_equal(procs[v.rows[1]].pid, 13);
    tui_view_free(&v);
}

/* tui_fmt_whole writes what snprintf("%s%.0f%s") writes: ties to even,
 * "-0", values near 2^53 and 10^15, and every cut of a short buffer. */
/* Wrapping breaks at the last space that fits, else at the width. */
static void test_wrap_take(void **state)
{
    (void)state;
    const char *s = "needs Hopper or later (GPM)";
    assert_int_equal(tui_wrap_take(s, strlen(s), 100), strlen(s));
    assert_int_equal(tui_wrap_take(s, strlen(s), strlen(s)), strlen(s));
    /* "needs Hopper or" fits 16 columns; the space after it is the break */
    assert_int_equal(tui_wrap_take(s, strlen(s), 16), 15);
    /* a word longer than the line is cut at the width */
    assert_int_equal(tui_wrap_take("NVML_ERROR_NOT_SUPPORTED", 24, 10), 10);
    assert_int_equal(tui_wrap_take(s, strlen(s), 0), strlen(s));
}

static void test_fmt_whole_is_printf(void **state)
{
    (void)state;
    static const double fixed[] = {0, -0.0, 0.4, 0.5, 1.5, 2.5, -0.4, -0.5, -1.5, -2.5, 99.5,
                                   100.5, 0.49999999999999994, 4503599627370495.5 / 8,
                                   9007199254740993.0 / 16, 999999999999999.0, -999999999999999.0,
                                   1e-300, -1e-300, 12345.678, 73.5, 74.5};
    char want[64], got[64];
    unsigned long rnd = 42;
    for (int i = 0; i < 20000; i++) {
        double v;
        if (i < (int)(sizeof(fixed) / sizeof(fixed[0]))) {
            v = fixed[i];
        } else {
            rnd = rnd * 6364136223846793005ul + 1442695040888963407ul;
            double f = (double)(rnd >> 11) / 9007199254740992.0; /* [0, 1) */
            int mag = (int)(rnd % 16);
            v = (f - 0.3) * pow(10, mag);
            if (i % 3 == 0) /* exact halves */
                v = floor(v) + 0.5;
        }
        const char *pre = i % 2 ? "~" : "", *post = i % 5 ? "%" : "%*";
        snprintf(want, sizeof(want), "%s%.0f%s", pre, v, post);
        memset(got, 'X', sizeof(got));
        assert_true(tui_fmt_whole(got, sizeof(got), pre, v, post));
        if (strcmp(got, want) != 0)
            fail_msg("%.17g: \"%s\", printf \"%s\"", v, got, want);
        for (size_t len = 1; len < 8; len++) { /* cut as snprintf cuts */
            snprintf(want, len, "%s%.0f%s", pre, v, post);
            assert_true(tui_fmt_whole(got, len, pre, v, post));
            assert_string_equal(got, want);
        }
    }
    assert_false(tui_fmt_whole(got, sizeof(got), "", NAN, ""));
    assert_false(tui_fmt_whole(got, sizeof(got), "", INFINITY, ""));
    assert_false(tui_fmt_whole(got, sizeof(got), "", 1e15, ""));
    /* and through the formatters */
    struct metric m = metric_direct(44.5);
    assert_string_equal(tui_fmt_pct(got, sizeof(got), &m, 0), "44%");
    m.src = MSRC_CARRIED;
    assert_string_equal(tui_fmt_pct(got, sizeof(got), &m, 0), "44%*");
    m.src = MSRC_ESTIMATE;
    m.value = 45.5;
    assert_string_equal(tui_fmt_pct(got, sizeof(got), &m, 0), "~46%");
    assert_string_equal(tui_fmt_pct(got, sizeof(got), &m, 1), "~45.5%");
    m = metric_direct(1536);
    assert_string_equal(tui_fmt_num(got, sizeof(got), &m, 1.0 / 1024, 0), "2");
    m = metric_none("x");
    assert_string_equal(tui_fmt_num(got, sizeof(got), &m, 1, 0), "N/A");
}


/* The detail panel's lines as a 200x60 screen shows them: every value
 * joined into its line (strings joined without printf since 2026-12-01),
 * throttle reasons in words separated by commas, and the clock string. */
/* The text is somewhere on stdscr. */
static bool screen_has(const char *text)
{
    wchar_t w[128];
    mbstowcs(w, text, 128);
    for (int y = 0; y < LINES; y++) {
        wchar_t row[256];
        int n = mvwinnwstr(stdscr, y, 0, row, COLS < 255 ? COLS : 255);
        if (n > 0 && wcsstr(row, w) != NULL)
            return true;
    }
    return false;
}

static void test_detail_lines_on_screen(void **state)
{
    (void)state;
    setlocale(LC_ALL, "C.UTF-8");
    setenv("LINES", "60", 1);
    setenv("COLUMNS", "200", 1);
    FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
    assert_non_null(out);
    assert_non_null(in);
    SCREEN *scr = newterm("xterm-256color", out, in);
    assert_non_null(scr);
    set_term(scr);
    assert_int_equal(COLS, 200);

    static const char *const uuids[] = {"GPU-aaaaaaaa-1111-2222-3333-444444444444"};
    struct snapshot s;
    make_snapshot(&s, uuids, 1);
    struct device *d = &devs[0];
    for (int k = 0; k < M_COUNT; k++)
        d->m[k] = metric_none("not supported");
    d->kind = DEV_GPU;
    d->mig_index = d->parent_pos = d->gi_id = d->ci_id = -1;
    snprintf(d->name, sizeof(d->name), "NVIDIA H100 80GB HBM3");
    snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "00000000:1B:00.0");
    snprintf(d->arch, sizeof(d->arch), "Hopper");
    d->cc_major = 9;
    d->cc_minor = 0;
    d->m[M_GPU_UTIL] = metric_direct(45);
    d->m[M_MEM_USED] = metric_direct(20.0 * 1024 * 1024 * 1024);
    d->m[M_MEM_TOTAL] = metric_direct(80.0 * 1024 * 1024 * 1024);
    d->m[M_TEMP] = metric_direct(53);
    d->m[M_POWER] = metric_direct(312.4);
    d->m[M_POWER_LIMIT] = metric_direct(700);
    d->m[M_CLK_GFX] = metric_direct(1755);
    d->m[M_CLK_SM] = metric_direct(1755);
    d->m[M_CLK_MEM] = metric_direct(2619);
    d->m[M_PSTATE] = metric_direct(2);
    d->m[M_PCIE_GEN] = metric_direct(5);
    d->m[M_PCIE_WIDTH] = metric_direct(16);
    d->m[M_ECC_MODE] = metric_direct(1);
    d->m[M_ECC_CORR] = metric_direct(0);
    d->m[M_ECC_UNCORR] = metric_direct(0);
    d->process_count = metric_direct(0);
    /* idle (not shown), SW power cap, HW slowdown, HW thermal slowdown, and a
     * bit past the known ones */
    d->throttle_valid = true;
    d->throttle_mask = 0x1 | 0x4 | 0x8 | 0x40 | 0x1000;
    setenv("TZ", "UTC", 1);
    tzset();

    static struct history h;
    assert_int_equal(history_init(&h, 300), 0);
    history_push(&h, &s);
    static struct tui_view v;
    memset(&v, 0, sizeof(v));
    tui_theme_init(&v.theme, true, true);
    v.snap = &s;
    v.hist = &h;
    v.interval_ms = 1000;
    tui_view_follow(&v);

    const char *want[] = {
        "Temp 53\u00b0C",
        "Power 312 W / 700 W",
        "Name NVIDIA H100 80GB HBM3  00000000:1B:00.0",
        "UUID GPU-aaaaaaaa-1111-2222-3333-444444444444  Arch Hopper  CC 9.0",
        "Clk 1755/1755/2619 MHz gfx/sm/mem  P2",
        "PCIe Gen5 x16",
        "Processes 0  Throttle SW power cap, HW slowdown, HW thermal slowdown, other",
        "VRAM 20.0 GiB / 80.0 GiB (25%)",
        "", /* the clock: set per round */
    };
    char clock[32];
    const size_t nwant = sizeof(want) / sizeof(want[0]);
    /* the clock is formatted once a second: the same second twice, then the next */
    for (int round = 0; round < 3; round++) {
        /* 1764547200: 2025-12-01 00:00:00 UTC */
        s.wall_ns = (1764547200ull + (round == 2)) * 1000000000ull + (unsigned)round * 1000u;
        snprintf(clock, sizeof(clock), "2025-12-01 00:00:0%d", round == 2);
        want[nwant - 1] = clock;
        tui_draw(stdscr, &v);
        wnoutrefresh(stdscr);
        for (size_t i = 0; i < nwant; i++) {
            wchar_t w[128];
            mbstowcs(w, want[i], 128);
            bool found = false;
            for (int y = 0; y < LINES && !found; y++) {
                wchar_t row[256];
                int n = mvwinnwstr(stdscr, y, 0, row, COLS);
                found = n > 0 && wcsstr(row, w) != NULL;
            }
            if (!found)
                fail_msg("round %d: \"%s\" is not on the screen", round, want[i]);
        }
    }
    /* VRAM through a memory outage (the seed showed "0/0"): the last value
     * carried and marked, then N/A with the total still known, then N/A
     * alone; never a 0. */
    d->m[M_MEM_USED].src = MSRC_CARRIED;
    tui_draw(stdscr, &v);
    wnoutrefresh(stdscr);
    assert_true(screen_has("VRAM 20.0 GiB* / 80.0 GiB (25%*)"));
    d->m[M_MEM_USED] = metric_none("NVML_ERROR_UNKNOWN");
    tui_draw(stdscr, &v);
    wnoutrefresh(stdscr);
    assert_true(screen_has("VRAM N/A / 80.0 GiB (N/A)"));
    d->m[M_MEM_TOTAL] = metric_none("NVML_ERROR_UNKNOWN");
    tui_draw(stdscr, &v);
    wnoutrefresh(stdscr);
    assert_true(screen_has("VRAM N/A  "));
    assert_false(screen_has("VRAM 0"));
    d->m[M_MEM_USED] = metric_direct(20.0 * 1024 * 1024 * 1024);
    d->m[M_MEM_TOTAL] = metric_direct(80.0 * 1024 * 1024 * 1024);
    /* At 80 columns and every height from 12 to 44 that has a detail
     * panel, either the identity line after the key lines is on the screen
     * in full or the panel says there is more (the key lines here:
     * utilisation, VRAM, temperature and power, and why memory utilisation
     * is N/A). */
    int shown = 0, cut = 0;
    for (int rows = 12; rows <= 44; rows++) {
        assert_int_equal(resize_term(rows, 80), OK);
        tui_draw(stdscr, &v);
        wnoutrefresh(stdscr);
        if (!v.lay.detail || v.lay.too_small)
            continue; /* no detail panel at all: too few rows */
        bool room = v.lay.detail_r.h - 2 > 4;
        const char *want_s = room ? "Name NVIDIA H100 80GB HBM3" : "more: i, g";
        wchar_t w[64];
        mbstowcs(w, want_s, 64);
        bool found = false;
        for (int y = 0; y < LINES && !found; y++) {
            wchar_t row[128];
            int n = mvwinnwstr(stdscr, y, 0, row, COLS);
            found = n > 0 && wcsstr(row, w) != NULL;
        }
        if (!found)
            fail_msg("80x%d (detail %d rows): \"%s\" is not on the screen", rows,
                     v.lay.detail_r.h, want_s);
        shown += room;
        cut += !room;
    }
    if (shown == 0 || cut == 0)
        fail_msg("heights 12-44: %d with room for the identity, %d without", shown, cut);
    tui_view_free(&v);
    history_free(&h);
    tui_frame_free();
    endwin();
    delscreen(scr);
    fclose(out);
    fclose(in);
}


/* Health on the screen: the device row's mark, the header's summary, the
 * verdict with each fired rule and its action in the detail panel, and
 * the health counters' lines; N/A where a counter could not be read; the
 * events overlay (key e) over it all. */
static void test_health_on_screen(void **state)
{
    (void)state;
    setlocale(LC_ALL, "C.UTF-8");
    setenv("LINES", "60", 1);
    setenv("COLUMNS", "200", 1);
    setenv("TZ", "UTC", 1);
    tzset();
    FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
    assert_non_null(out);
    assert_non_null(in);
    SCREEN *scr = newterm("xterm-256color", out, in);
    assert_non_null(scr);
    set_term(scr);

    static const char *const uuids[] = {"GPU-aaaaaaaa-1111-2222-3333-444444444444",
                                        "GPU-bbbbbbbb-1111-2222-3333-444444444444"};
    struct snapshot s;
    make_snapshot(&s, uuids, 2);
    for (int i = 0; i < 2; i++) {
        struct device *d = &devs[i];
        for (int k = 0; k < M_COUNT; k++)
            d->m[k] = metric_none("not supported");
        d->kind = DEV_GPU;
        d->index = i;
        d->mig_index = d->parent_pos = d->gi_id = d->ci_id = -1;
        snprintf(d->name, sizeof(d->name), "NVIDIA H100 80GB HBM3");
        d->m[M_TEMP] = metric_direct(50);
        d->m[M_TEMP_SLOWDOWN] = metric_direct(87);
        d->m[M_ECC_UNCORR] = metric_direct(0);
    }
    struct device *d = &devs[0];
    d->m[M_REMAP_FAILURE] = metric_direct(0);
    d->m[M_ECC_UNCORR] = metric_direct(2); /* a warning */
    d->m[M_REMAP_PENDING] = metric_direct(1); /* action */
    d->m[M_MEM_TEMP] = metric_direct(71);
    d->m[M_PCIE_REPLAY] = metric_direct(3);
    d->m[M_ECC_CORR_AGG] = metric_direct(40);
    d->m[M_ECC_UNCORR_AGG] = metric_direct(2);
    d->m[M_REMAP_CORR] = metric_direct(12);
    d->m[M_REMAP_UNCORR] = metric_direct(0);
    d->m[M_MEM_RESERVED] = metric_direct(512.0 * 1024 * 1024);
    d->m[M_NVLINK_LINKS_UP] = metric_direct(18);
    d->m[M_NVLINK_CRC_ERRORS] = metric_direct(0);
    d->m[M_NVLINK_REPLAY_ERRORS] = metric_direct(1);
    d->m[M_NVLINK_RECOVERY_ERRORS] = metric_direct(0);
    d->m[M_THROTTLE_POWER_S] = metric_direct(12.4);
    d->m[M_THROTTLE_THERMAL_S] = metric_direct(0);
    s.events_why = "no NVML event API in this driver";
    health_evaluate(&s);
    assert_int_equal(devs[0].health, HEALTH_ACTION);
    assert_int_equal(devs[1].health, HEALTH_OK);

    static struct history h;
    assert_int_equal(history_init(&h, 300), 0);
    history_push(&h, &s);
    static struct tui_view v;
    memset(&v, 0, sizeof(v));
    tui_theme_init(&v.theme, true, true);
    v.snap = &s;
    v.hist = &h;
    v.interval_ms = 1000;
    tui_view_follow(&v);
    tui_draw(stdscr, &v);
    wnoutrefresh(stdscr);
    const char *want[] = {
        "GPU health: 1 action (e: events) 20", /* before the clock */
        "GPU 0 H100 80GB HBM3 !!",
        "Health action  row-remap-pending: reset the GPU when its jobs allow: a row remap waits "
        "for it",
        "               ecc-uncorrectable: uncorrectable ECC errors since the driver loaded",
        "Mem temp 71\u00b0C  PCIe replays 3",
        "ECC (life) corrected 40  uncorrected 2",
        "Remapped rows 12 corr, 0 unc, pending",
        "Retired pages N/A",
        "VRAM reserved 512 MiB",
        "NVLink 18 up  errors CRC 0 replay 1 recovery 0",
        "Held down by power 12 s  thermal 0 s",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (!screen_has(want[i]))
            fail_msg("\"%s\" is not on the screen", want[i]);
    assert_false(screen_has("GPU 1 H100 80GB HBM3 !")); /* ok: no mark */
    assert_false(screen_has("Health ok")); /* GPU 0 is selected */
    /* the ok GPU: its verdict, and the counters it could not read at all */
    tui_view_select_abs(&v, 1);
    tui_draw(stdscr, &v);
    wnoutrefresh(stdscr);
    assert_true(screen_has("Health ok  counters N/A: not supported"));
    assert_false(screen_has("Health action"));
    /* the events overlay says why there are none */
    v.modal = MODAL_EVENTS;
    tui_draw(stdscr, &v);
    wnoutrefresh(stdscr);
    assert_true(screen_has("Health events (Up/Down, any key closes)"));
    assert_true(screen_has("no health events: no NVML event API in this driver"));
    /* every GPU ok: no summary */
    devs[0].m[M_REMAP_PENDING] = metric_direct(0);
    devs[0].m[M_ECC_UNCORR] = metric_direct(0);
    health_evaluate(&s);
    v.modal = MODAL_NONE;
    tui_draw(stdscr, &v);
    wnoutrefresh(stdscr);
    assert_false(screen_has("health:"));
    assert_false(screen_has("!!"));
    tui_view_free(&v);
    history_free(&h);
    tui_frame_free();
    endwin();
    delscreen(scr);
    fclose(out);
    fclose(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mig_vram_sum),
        cmocka_unit_test(test_selection_follows_uuid),
        cmocka_unit_test(test_select_clamps),
        cmocka_unit_test(test_device_at),
        cmocka_unit_test(test_sort_processes),
        cmocka_unit_test(test_device_list_folds_to_fit),
        cmocka_unit_test(test_digits_jump_to_a_gpu),
        cmocka_unit_test(test_mig_parent_lists_its_instances_processes),
        cmocka_unit_test(test_fmt_whole_is_printf),
        cmocka_unit_test(test_wrap_take),
        cmocka_unit_test(test_detail_lines_on_screen),
        cmocka_unit_test(test_health_on_screen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
