/*
 * proctree.c: the process tree (key t). GPU processes under the parents
 * /proc gives for them, per slice, siblings in the sort's order; a parent
 * that cannot be read (or whose PID started after its child, or that makes
 * a loop, or is too far up) is "parent unknown" with the reason, never made
 * up; another node's or a recording's PIDs are not looked up at all. The
 * /proc trees: tests/fixtures/proc/gpu-host (process-churn's processes)
 * and ones written here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tui/proctree.h"
#include "tui/view.h"

static struct device devs[4];
static struct gpu_process procs[16];
static struct snapshot snap;
static struct tui_view *v;
static char root[512];

static void proc(size_t i, uint32_t pid, uint64_t start, double mib)
{
    struct gpu_process *p = &procs[i];
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    p->local_pid = pid;
    p->start_time = start;
    p->gi_id = p->ci_id = -1;
    p->mem_bytes = mib < 0 ? metric_none("NVML_VALUE_NOT_AVAILABLE") : metric_direct(mib * 1048576);
    p->sm_util = p->cpu_pct = metric_none("no sample");
}

/* process-churn's L40S with its six processes, their /proc: gpu-host */
static int setup(void **state)
{
    (void)state;
    memset(&snap, 0, sizeof(snap));
    memset(devs, 0, sizeof(devs));
    devs[0].kind = DEV_GPU;
    devs[0].parent_pos = -1;
    devs[0].mig_index = -1;
    snprintf(devs[0].uuid, sizeof(devs[0].uuid), "GPU-l40s");
    snprintf(devs[0].name, sizeof(devs[0].name), "NVIDIA L40S");
    proc(0, 8100, 40000, 6000);
    proc(1, 1450, 500, -1);
    proc(2, 8200, 40001, 2000);
    proc(3, 8150, 40001, 2000);
    proc(4, 8300, 40002, 500);
    proc(5, 9999, 40003, 300);
    devs[0].proc_first = 0;
    devs[0].nprocs = 6;
    devs[0].process_count = metric_direct(6);
    snap.devices = devs;
    snap.ndevices = 1;
    snap.procs = procs;
    snap.nprocs = 6;
    snap.gpu_ok = true;
    v = calloc(1, sizeof(*v));
    assert_non_null(v);
    snprintf(root, sizeof(root), "%s/tests/fixtures/proc/gpu-host", getenv("MIGMON_SRC"));
    v->proc_root = root;
    v->snap = &snap;
    v->proc_tree = true;
    v->all_procs = true;
    tui_glyphs_init(&v->theme.g, true);
    tui_view_follow(v);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tui_view_free(v);
    free(v);
    return 0;
}

struct want {
    unsigned char kind;
    uint32_t pid; /* a process's or a parent's; a "parent unknown": 0 */
    unsigned depth;
    bool last;
};

static uint32_t pid_of(const struct tui_pline *l)
{
    return l->kind == PL_PROC     ? procs[l->idx].pid
           : l->kind == PL_PARENT ? v->tpar[l->idx].pid
                                  : 0;
}

static void assert_lines(const struct want *w, size_t n)
{
    assert_int_equal(v->nlines, n);
    for (size_t i = 0; i < n; i++) {
        const struct tui_pline *l = &v->plines[i];
        if (l->kind != w[i].kind || pid_of(l) != w[i].pid || l->depth != w[i].depth ||
            (l->kind != PL_SLICE && l->last != w[i].last))
            fail_msg("line %zu: kind %d pid %u depth %d last %d, want %d %u %u %d", i, l->kind,
                     pid_of(l), l->depth, l->last, w[i].kind, w[i].pid, w[i].depth, w[i].last);
    }
}

static const char *guides(size_t i)
{
    static char b[128];
    tui_proctree_guides(b, sizeof(b), v, &v->plines[i]);
    return b;
}

static void test_churn_tree(void **state)
{
    (void)state;
    tui_view_sort_procs(v); /* by VRAM: 8100, 8150, 8200 (a tie: by PID), 8300, 9999, 1450 */
    static const struct want w[] = {
        {PL_SLICE, 0, 0, false},
        {PL_PARENT, 1, 0, false},    /* systemd */
        {PL_PARENT, 8040, 1, false}, /* sshd */
        {PL_PARENT, 8050, 2, true},  /* bash */
        {PL_PROC, 8100, 3, true},    /* render */
        {PL_PARENT, 8130, 1, false}, /* the MPS control daemon */
        {PL_PARENT, 8140, 2, true},  /* the MPS server */
        {PL_PROC, 8150, 3, false},
        {PL_PROC, 8200, 3, true},
        {PL_PROC, 9999, 1, true},  /* right under systemd */
        {PL_UNKNOWN, 0, 0, false}, /* burst's parent 8290 has no /proc entry */
        {PL_PROC, 8300, 1, true},
        {PL_UNKNOWN, 0, 0, true}, /* Xorg's parent 1440 started after it */
        {PL_PROC, 1450, 1, true},
    };
    assert_lines(w, sizeof(w) / sizeof(w[0]));
    assert_int_equal(v->plines[0].n, 6);
    assert_string_equal(tui_proctree_why(v->plines[12].idx),
                        "its parent's PID is another process's now (it started after its child)");
    assert_string_equal(tui_proctree_why_short(v->plines[10].idx), "not readable");
    assert_string_equal(v->tpar[v->plines[2].idx].comm, "sshd");
    assert_string_equal(v->tpar[v->plines[6].idx].comm, "nvidia-cuda-mps");
    /* the guides: a │ where an ancestor has siblings below */
    assert_string_equal(guides(1), "");
    assert_string_equal(guides(2), "├─ ");
    assert_string_equal(guides(3), "│  └─ ");
    assert_string_equal(guides(4), "│     └─ ");
    assert_string_equal(guides(5), "├─ ");
    assert_string_equal(guides(7), "│     ├─ ");
    assert_string_equal(guides(8), "│     └─ ");
    assert_string_equal(guides(9), "└─ ");
    char h[200];
    tui_proctree_heading(h, sizeof(h), v, &v->plines[0]);
    assert_string_equal(h, "▾ GPU 0 L40S  6 processes");

    /* siblings follow the sort: by PID reversed (9999 8300 8200 8150 8100
     * 1450) grow first, then the MPS branch (8200), the login's (8100) */
    v->psort = PSORT_PID;
    v->psort_rev = true;
    tui_view_sort_procs(v);
    static const uint32_t by_pid[] = {1, 9999, 8130, 8140, 8200, 8150, 8040, 8050, 8100, 0, 8300};
    for (size_t i = 0; i < sizeof(by_pid) / sizeof(by_pid[0]); i++)
        assert_int_equal(pid_of(&v->plines[i + 1]), by_pid[i]);
}

/* The cursor stays on its line across new lists; Enter's fold on a
 * heading leaves the heading alone, the cursor on it. */
static void test_cursor_and_fold(void **state)
{
    (void)state;
    tui_view_sort_procs(v);
    tui_view_proc_goto(v, 6); /* the MPS server */
    assert_int_equal(v->proc_sel_kind, PL_PARENT);
    assert_int_equal(v->proc_sel_pid, 8140);
    assert_null(tui_view_selected_proc(v)); /* a parent is no GPU process */
    v->psort = PSORT_PID; /* now at another line */
    tui_view_sort_procs(v);
    assert_int_equal(pid_of(&v->plines[v->proc_sel]), 8140);
    tui_view_proc_move(v, 1); /* its first child by PID */
    assert_int_equal(tui_view_selected_proc(v)->pid, 8150);
    assert_true(tui_proctree_toggle_fold(v));
    tui_view_sort_procs(v);
    assert_int_equal(v->nlines, 1);
    assert_int_equal(v->proc_sel, 0);
    assert_int_equal(v->plines[0].kind, PL_SLICE);
    char h[200];
    tui_proctree_heading(h, sizeof(h), v, &v->plines[0]);
    assert_string_equal(h, "▸ GPU 0 L40S  6 processes");
    assert_true(tui_proctree_toggle_fold(v));
    tui_view_sort_procs(v);
    assert_int_equal(v->nlines, 14);
    v->proc_tree = false; /* the flat list: a line per process */
    tui_view_sort_procs(v);
    assert_int_equal(v->nlines, 6);
    assert_false(tui_proctree_toggle_fold(v));
}

/* Processes whose PIDs are not this host's to look up: a fleet's, a
 * recording's; and one procinfo could not read (no start time). */
static void test_not_looked_up(void **state)
{
    (void)state;
    procs[1].start_time = 0; /* Xorg: not visible from here */
    tui_view_sort_procs(v);
    assert_int_equal(v->plines[v->nlines - 2].kind, PL_UNKNOWN);
    assert_string_equal(tui_proctree_why_short(v->plines[v->nlines - 2].idx), "not visible here");
    v->procs_recorded = true;
    v->snap_gen++;
    tui_view_sort_procs(v);
    assert_int_equal(v->nlines, 8); /* the heading, "parent unknown", six processes */
    assert_string_equal(tui_proctree_why_short(v->plines[1].idx), "not recorded");
    assert_int_equal(v->ntpar, 0); /* nothing read */
    v->procs_recorded = false;
    snprintf(devs[0].node, sizeof(devs[0].node), "h200");
    v->snap_gen++;
    tui_view_sort_procs(v);
    assert_int_equal(v->nlines, 8);
    assert_string_equal(tui_proctree_why_short(v->plines[1].idx), "another node's");
    assert_int_equal(v->ntpar, 0);
    char h[200];
    tui_proctree_heading(h, sizeof(h), v, &v->plines[0]);
    assert_string_equal(h, "▾ h200: GPU 0 L40S  6 processes");
}

/* A /proc tree written here: a loop, a chain deeper than the limit, a
 * stat that is not one. */
static void put_stat(const char *dir, unsigned pid, const char *comm, long ppid, unsigned long start)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/%u", dir, pid);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/%u/stat", dir, pid);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    if (comm)
        fprintf(f, "%u (%s) S %ld 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 %lu 1000 10 0\n", pid, comm,
                ppid, start);
    else
        fprintf(f, "garbage\n");
    fclose(f);
}

static void test_hostile_proc(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/proctree-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    snprintf(root, sizeof(root), "%s", tmpl);
    /* 8100 <- 50 <- 51 <- 50: a loop; 8150 <- 100 <- 101 <- ... <- 119:
     * 20 levels; 8200 <- 60, whose stat is garbage */
    put_stat(tmpl, 8100, "render", 50, 40000);
    put_stat(tmpl, 50, "a", 51, 100);
    put_stat(tmpl, 51, "b", 50, 100);
    put_stat(tmpl, 8150, "mps-b", 100, 40001);
    for (unsigned i = 100; i < 120; i++)
        put_stat(tmpl, i, "deep", i + 1, 10);
    put_stat(tmpl, 8200, "mps-a", 60, 40001);
    put_stat(tmpl, 60, NULL, 0, 0);
    snap.nprocs = 4; /* 8100, 1450 (absent here), 8200, 8150 */
    devs[0].nprocs = 4;
    tui_view_sort_procs(v);
    static const struct want w[] = {
        {PL_SLICE, 0, 0, false},
        {PL_UNKNOWN, 0, 0, false}, /* the loop: 8100 <- 50 <- 51, then 50 again */
        {PL_PARENT, 51, 1, true},
        {PL_PARENT, 50, 2, true},
        {PL_PROC, 8100, 3, true},
        {PL_UNKNOWN, 0, 0, false}, /* too deep: 16 parents of 8150 shown */
        {PL_PARENT, 115, 1, true},
    };
    for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
        if (v->plines[i].kind != w[i].kind || pid_of(&v->plines[i]) != w[i].pid ||
            v->plines[i].depth != w[i].depth)
            fail_msg("line %zu: kind %d pid %u depth %d", i, v->plines[i].kind,
                     pid_of(&v->plines[i]), v->plines[i].depth);
    assert_string_equal(tui_proctree_why_short(v->plines[1].idx), "a loop");
    assert_string_equal(tui_proctree_why_short(v->plines[5].idx), "16+ levels up");
    /* 8150 under its 16 parents 115 .. 100 */
    assert_int_equal(pid_of(&v->plines[21]), 100);
    assert_int_equal(pid_of(&v->plines[22]), 8150);
    assert_int_equal(v->plines[22].depth, 17);
    /* 8200's parent's stat is garbage: not readable; 1450 has no entry
     * here: it has exited */
    assert_int_equal(v->plines[23].kind, PL_UNKNOWN);
    assert_string_equal(tui_proctree_why_short(v->plines[23].idx), "not readable");
    assert_int_equal(pid_of(&v->plines[24]), 8200);
    assert_string_equal(tui_proctree_why_short(v->plines[25].idx), "process exited");
    assert_int_equal(pid_of(&v->plines[26]), 1450);
    assert_int_equal(v->nlines, 27);
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpl);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_churn_tree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cursor_and_fold, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_looked_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_proc, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
