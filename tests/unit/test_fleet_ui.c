/* Unit tests for the fleet view's rules (src/tui/fleet_ui.c: the device
 * filter and the totals of a node) and the node rows of the device list
 * they give (src/tui/view.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "health.h"
#include "tui/fleet_ui.h"
#include "tui/view.h"

/* Two nodes: "gpu-a" with an A100 (instances 1g.10gb busy, 1g.10gb idle,
 * 3g.40gb idle) and a GPU without MIG, idle; "h200-b", down, with an H200
 * and one 1g.18gb instance. */
static struct device devs[8];

static void dev(int i, const char *node, enum device_kind kind, int index, int parent,
                const char *name, const char *profile, double util)
{
    struct device *d = &devs[i];
    memset(d, 0, sizeof(*d));
    snprintf(d->node, sizeof(d->node), "%s", node);
    snprintf(d->uuid, sizeof(d->uuid), "%s-%d", kind == DEV_GPU ? "GPU" : "MIG", i);
    snprintf(d->name, sizeof(d->name), "%s", name);
    snprintf(d->profile, sizeof(d->profile), "%s", profile);
    d->kind = kind;
    d->index = index;
    d->parent_pos = parent;
    d->mig_index = parent >= 0 ? i - parent - 1 : -1;
    d->mig_enabled = i == 0 || i == 5;
    for (int k = 0; k < M_COUNT; k++)
        d->m[k] = metric_none("not read from Prometheus");
    d->process_count = metric_none("not read from Prometheus");
    if (util >= 0)
        d->m[M_GPU_UTIL] = metric_direct(util);
    d->m[M_MEM_USED] = metric_direct(1073741824.0 * (i + 1));
    d->m[M_MEM_TOTAL] = metric_direct(1073741824.0 * 10);
}

static void make_fleet(struct snapshot *s)
{
    dev(0, "gpu-a", DEV_GPU, 0, -1, "NVIDIA A100-SXM4-80GB", "", -1);
    dev(1, "gpu-a", DEV_MIG, 0, 0, "NVIDIA A100-SXM4-80GB MIG 1g.10gb", "1g.10gb", 55);
    dev(2, "gpu-a", DEV_MIG, 0, 0, "NVIDIA A100-SXM4-80GB MIG 1g.10gb", "1g.10gb", 0.5);
    dev(3, "gpu-a", DEV_MIG, 0, 0, "NVIDIA A100-SXM4-80GB MIG 3g.40gb", "3g.40gb", 0);
    dev(4, "gpu-a", DEV_GPU, 1, -1, "NVIDIA L40S", "", 0);
    dev(5, "h200-b", DEV_GPU, 0, -1, "NVIDIA H200", "", -1);
    dev(6, "h200-b", DEV_MIG, 0, 5, "NVIDIA H200 MIG 1g.18gb", "1g.18gb", 0);
    devs[5].node_down = devs[6].node_down = true;
    devs[5].node_down_for_s = devs[6].node_down_for_s = 12;
    memset(s, 0, sizeof(*s));
    s->devices = devs;
    s->ndevices = s->cap = 7;
    s->gpu_ok = true;
}

/* The shown devices under a filter, as a string of positions. */
static const char *shown(const struct snapshot *s, const char *filter)
{
    static char out[32];
    unsigned char m[8];
    size_t n = tui_fleet_filter(s, filter, m), k = 0;
    for (size_t i = 0; i < s->ndevices; i++)
        if (m[i])
            out[k++] = (char)('0' + i);
    out[k] = '\0';
    assert_int_equal(n, k);
    return out;
}

static void test_filter_words(void **state)
{
    (void)state;
    struct snapshot s;
    make_fleet(&s);
    assert_string_equal(shown(&s, ""), "0123456");
    /* the node, any case */
    assert_string_equal(shown(&s, "GPU-A"), "01234");
    /* the model: the instances carry it in their name too */
    assert_string_equal(shown(&s, "h200"), "56");
    assert_string_equal(shown(&s, "l40s"), "4");
    /* a profile: the instances, with their GPU as the tree's parent */
    assert_string_equal(shown(&s, "1g."), "01256");
    assert_string_equal(shown(&s, "3g.40gb"), "03");
    /* the UUID */
    assert_string_equal(shown(&s, "MIG-6"), "56");
    /* every word must match; extra spaces are no words */
    assert_string_equal(shown(&s, "  gpu-a   1g  "), "012");
    assert_string_equal(shown(&s, "gpu-a h200"), "");
    assert_string_equal(shown(&s, "nothing"), "");
}

static void test_filter_idle(void **state)
{
    (void)state;
    struct snapshot s;
    make_fleet(&s);
    /* instances under 1 %, and the GPU without instances that is; a GPU
     * with instances is not idle itself, a down node's devices are not */
    assert_string_equal(shown(&s, "idle"), "0234");
    assert_string_equal(shown(&s, "IDLE 1g"), "02");
    assert_true(tui_fleet_match(&s, 2, "idle"));
    assert_false(tui_fleet_match(&s, 1, "idle"));
    assert_false(tui_fleet_match(&s, 6, "idle"));
    assert_false(tui_fleet_idle(&devs[6]));
    /* no utilisation to be had: idle when no process is listed */
    devs[1].m[M_GPU_UTIL] = metric_none("no DCGM");
    assert_false(tui_fleet_match(&s, 1, "idle")); /* the count is unknown too */
    devs[1].process_count = metric_direct(0);
    assert_true(tui_fleet_match(&s, 1, "idle"));
    /* the word is the rule, not a text: a busy device on a node named
     * "idle-box" is not idle; another word finds the name */
    devs[1].process_count = metric_none("not read from Prometheus");
    snprintf(devs[1].node, sizeof(devs[1].node), "idle-box");
    assert_false(tui_fleet_match(&s, 1, "idle"));
    assert_true(tui_fleet_match(&s, 1, "idle-"));
}

static void test_totals_of_a_node(void **state)
{
    (void)state;
    struct snapshot s;
    make_fleet(&s);
    struct tui_fleet_totals t;
    tui_fleet_totals_range(&s, 0, 5, NULL, &t);
    assert_int_equal(t.nodes, 1);
    assert_int_equal(t.gpus, 2);
    assert_int_equal(t.mig, 3);
    assert_int_equal(t.mig_idle, 2);
    /* instances and the GPU without: 2 + 3 + 4 + 5 GiB of 40 */
    assert_true(t.mem_known);
    assert_true(t.mem_used == 14 * 1073741824.0);
    assert_true(t.mem_total == 40 * 1073741824.0);
    /* of the filtered list */
    unsigned char m[8];
    tui_fleet_filter(&s, "1g", m);
    tui_fleet_totals_range(&s, 0, s.ndevices, m, &t);
    assert_int_equal(t.nodes, 2);
    assert_int_equal(t.nodes_down, 1);
    assert_int_equal(t.gpus, 2);
    assert_int_equal(t.mig, 3);
    assert_int_equal(t.mig_idle, 1);
    char sum[160];
    tui_fleet_summary(sum, sizeof(sum), &t, false);
    assert_string_equal(sum, "2 nodes (1 down)  2 GPUs  3 MIG, 1 idle  VRAM 12.0/30.0 GiB");
}

static void assert_rows(const struct tui_view *v, const size_t *want, size_t n)
{
    assert_int_equal(v->ndrow, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(v->drow[i], want[i]);
}

#define N(i) (TUI_DROW_NODE | (i))

static void test_node_rows_fold(void **state)
{
    (void)state;
    struct snapshot s;
    make_fleet(&s);
    static struct tui_view v;
    memset(&v, 0, sizeof(v));
    v.snap = &s;
    tui_view_follow(&v);
    tui_view_build_rows(&v, 0);
    const size_t all[] = {N(0), 0, 1, 2, 3, 4, N(5), 5, 6};
    assert_rows(&v, all, 9);
    assert_int_equal(tui_view_rows_wanted(&v), 9);
    /* Up from the first GPU: its node's row, still showing its first GPU */
    tui_view_select(&v, -1);
    assert_true(v.sel_node);
    assert_int_equal(v.sel, 0);
    /* Enter folds the node: its row alone */
    tui_view_toggle_fold(&v);
    tui_view_build_rows(&v, 0);
    const size_t folded[] = {N(0), N(5), 5, 6};
    assert_rows(&v, folded, 4);
    assert_true(v.sel_node);
    /* Down: the next node's row, past the folded GPUs */
    tui_view_select(&v, 1);
    assert_true(v.sel_node);
    assert_int_equal(v.sel, 5);
    /* on a GPU without instances Enter folds its node, whose row is then
     * the selection; on an instance it folds the GPU, as on one host */
    tui_view_select_home(&v);
    tui_view_toggle_fold(&v); /* unfold gpu-a */
    tui_view_select_abs(&v, 4);
    tui_view_toggle_fold(&v);
    assert_true(v.sel_node);
    assert_int_equal(v.sel, 0);
    tui_view_build_rows(&v, 0);
    assert_rows(&v, folded, 4);
    tui_view_toggle_fold(&v);
    tui_view_select_abs(&v, 2);
    tui_view_toggle_fold(&v);
    assert_false(v.sel_node);
    assert_int_equal(v.sel, 0);
    tui_view_build_rows(&v, 0);
    const size_t gpu_folded[] = {N(0), 0, 4, N(5), 5, 6};
    assert_rows(&v, gpu_folded, 6);
    /* a click on a node row selects it; device_at has no device there */
    v.lay.devices = (struct rect){0, 0, 8, 40};
    v.dev_scroll = 0;
    assert_int_equal(tui_view_device_at(&v, 4, 10), -1);
    assert_true(tui_view_select_at(&v, 4, 10));
    assert_true(v.sel_node);
    assert_int_equal(v.sel, 5);
    assert_int_equal(tui_view_device_at(&v, 2, 10), 0);
    tui_view_free(&v);
}

static void test_node_rows_filtered(void **state)
{
    (void)state;
    struct snapshot s;
    make_fleet(&s);
    static struct tui_view v;
    memset(&v, 0, sizeof(v));
    v.snap = &s;
    tui_view_select_abs(&v, 3);
    snprintf(v.dfilter, sizeof(v.dfilter), "1g");
    tui_view_build_rows(&v, 0);
    const size_t rows[] = {N(0), 0, 1, 2, N(5), 5, 6};
    assert_rows(&v, rows, 7);
    assert_int_equal(tui_view_rows_wanted(&v), 7);
    /* the selection left out by the filter moves to its GPU */
    assert_int_equal(tui_view_place_sel(&v), 1);
    assert_int_equal(v.sel, 0);
    /* End: the last row shown */
    tui_view_select_end(&v);
    assert_int_equal(v.sel, 6);
    /* a node the filter empties has no row */
    snprintf(v.dfilter, sizeof(v.dfilter), "l40s");
    tui_view_build_rows(&v, 0);
    const size_t l40s[] = {N(0), 4};
    assert_rows(&v, l40s, 2);
    assert_int_equal(tui_view_place_sel(&v), 0); /* the first row */
    assert_true(v.sel_node);
    tui_view_free(&v);
}

/* The list's order under key k is want[0..7). */
static void assert_order(const struct snapshot *s, enum tui_fleet_sort k, const size_t *want)
{
    size_t got[7];
    tui_fleet_order(s, k, got);
    for (size_t i = 0; i < 7; i++) {
        if (got[i] != want[i])
            fail_msg("%s: row %zu is device %zu, want %zu", tui_fleet_sort_name(k), i, got[i],
                     want[i]);
    }
}

static void test_order_node_and_util(void **state)
{
    (void)state;
    struct snapshot s;
    make_fleet(&s);
    const size_t as_given[] = {0, 1, 2, 3, 4, 5, 6};
    assert_order(&s, FSORT_NODE, as_given);
    assert_string_equal(tui_fleet_sort_name(FSORT_NODE), "node");
    /* the L40S at 80 % goes above the A100 (its busiest instance 70 %); in
     * the A100 the instance without a utilisation goes after the one at 0 %;
     * the node that is down knows nothing and goes last */
    devs[4].m[M_GPU_UTIL] = metric_direct(80);
    devs[1].m[M_GPU_UTIL] = metric_direct(70);
    devs[2].m[M_GPU_UTIL] = metric_none("no DCGM");
    const size_t busiest[] = {4, 0, 1, 3, 2, 5, 6};
    assert_order(&s, FSORT_UTIL, busiest);
    assert_string_equal(tui_fleet_sort_name(FSORT_UTIL), "util");
}

static void test_order_mem(void **state)
{
    (void)state;
    struct snapshot s;
    make_fleet(&s);
    /* device i uses i+1 GiB; the node that is down (6 and 7 GiB) is last */
    const size_t most[] = {4, 0, 3, 2, 1, 5, 6};
    assert_order(&s, FSORT_MEM, most);
}

static void test_order_idle(void **state)
{
    (void)state;
    struct snapshot s;
    make_fleet(&s);
    /* the A100 has two idle instances (2 and 3, a tie kept in order), the
     * L40S is one idle GPU; the busy instance 1 after the idle ones */
    const size_t idle[] = {0, 2, 3, 1, 4, 5, 6};
    assert_order(&s, FSORT_IDLE, idle);
    /* an instance with neither utilisation nor process count is unknown:
     * after the busy one, not counted as idle */
    devs[2].m[M_GPU_UTIL] = metric_none("no DCGM");
    const size_t unknown_last[] = {0, 3, 1, 2, 4, 5, 6};
    assert_order(&s, FSORT_IDLE, unknown_last);
}

static void test_order_health(void **state)
{
    (void)state;
    struct snapshot s;
    make_fleet(&s);
    for (int i = 0; i < 7; i++)
        devs[i].health = HEALTH_OK;
    devs[3].health = HEALTH_WARNING;
    devs[6].health = HEALTH_ACTION; /* the exporter's verdict before the node went down */
    devs[4].health = HEALTH_UNKNOWN;
    /* worst first: the node with an action, then in gpu-a the A100 (a
     * warning) and its warned instance; ok instances keep their order; the
     * L40S without a verdict last */
    const size_t worst[] = {5, 6, 0, 3, 1, 2, 4};
    assert_order(&s, FSORT_HEALTH, worst);
    assert_string_equal(tui_fleet_sort_name(FSORT_HEALTH), "health");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_node_and_util),
        cmocka_unit_test(test_order_mem),
        cmocka_unit_test(test_order_idle),
        cmocka_unit_test(test_order_health),
        cmocka_unit_test(test_filter_words),
        cmocka_unit_test(test_filter_idle),
        cmocka_unit_test(test_totals_of_a_node),
        cmocka_unit_test(test_node_rows_fold),
        cmocka_unit_test(test_node_rows_filtered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
