/* Unit tests for the fleet view's rules (src/tui/fleet_ui.c: the device
 * filter, the totals and the orders) and the device list of a fleet
 * (src/tui/fleet_view.c, src/tui/view.c): a row per node from its
 * aggregates, its devices under it when they were read, a row that waits
 * for them when not, and what the list asks the backend to read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/health_rules.h"
#include "tui/fleet_ui.h"
#include "tui/fleet_view.h"
#include "tui/view.h"

/* Two nodes: "gpu-a" with an A100 (instances 1g.10gb busy, 1g.10gb idle,
 * 3g.40gb idle) and a GPU without MIG, idle; "h200-b", down, with an H200
 * and one 1g.18gb instance. */
static struct device devs[8];
static struct node_summary nodes[2];

static struct metric num(double v)
{
    return metric_direct(v);
}

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
    /* the nodes as Prometheus aggregated them: leaves 1, 2, 3 and 4 */
    memset(nodes, 0, sizeof(nodes));
    snprintf(nodes[0].instance, sizeof(nodes[0].instance), "10.0.0.1:9400");
    snprintf(nodes[0].name, sizeof(nodes[0].name), "gpu-a");
    nodes[0].up = 1;
    nodes[0].seen = true;
    nodes[0].gpus = num(2);
    nodes[0].mig = num(3);
    nodes[0].idle = num(3);
    nodes[0].util_max = num(55);
    nodes[0].util_mean = num(13.875);
    nodes[0].mem_used = num(14 * 1073741824.0);
    nodes[0].mem_total = num(40 * 1073741824.0);
    nodes[0].mem_devices = num(4);
    nodes[0].not_ok = num(0);
    nodes[0].gpus_action = nodes[0].gpus_warning = num(0);
    nodes[0].health = HEALTH_OK;
    nodes[0].devs_read = true;
    nodes[0].dev_first = 0;
    nodes[0].ndev = 5;
    snprintf(nodes[1].instance, sizeof(nodes[1].instance), "10.0.0.2:9400");
    snprintf(nodes[1].name, sizeof(nodes[1].name), "h200-b");
    nodes[1].up = 0;
    nodes[1].seen = true;
    nodes[1].down_for_s = 12;
    nodes[1].gpus = num(1);
    nodes[1].mig = num(1);
    nodes[1].idle = nodes[1].util_max = nodes[1].util_mean = nodes[1].mem_used =
        nodes[1].mem_total = nodes[1].mem_devices = nodes[1].not_ok = nodes[1].pods =
            nodes[1].gpus_action = nodes[1].gpus_warning =
                metric_none("the node's target is down (up == 0)");
    nodes[1].health = HEALTH_UNKNOWN;
    nodes[1].devs_read = true;
    nodes[1].dev_first = 5;
    nodes[1].ndev = 2;
    memset(s, 0, sizeof(*s));
    s->devices = devs;
    s->ndevices = s->cap = 7;
    s->nodes = nodes;
    s->nnodes = s->nodes_cap = 2;
    s->fleet = true;
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

static void test_totals(void **state)
{
    (void)state;
    struct snapshot s;
    make_fleet(&s);
    struct tui_fleet_totals t;
    tui_fleet_node_totals(&nodes[0], &t);
    assert_int_equal(t.nodes, 1);
    assert_int_equal(t.gpus, 2);
    assert_int_equal(t.mig, 3);
    assert_int_equal(t.idle, 3);
    assert_true(t.mem_known);
    assert_true(t.mem_used == 14 * 1073741824.0);
    /* the fleet's: the down node's counts, none of its figures */
    assert_true(tui_fleet_totals(&s, &t));
    assert_int_equal(t.nodes, 2);
    assert_int_equal(t.nodes_down, 1);
    assert_int_equal(t.gpus, 3);
    assert_int_equal(t.mig, 4);
    assert_int_equal(t.idle, 3);
    assert_true(t.mem_total == 40 * 1073741824.0);
    char sum[160];
    tui_fleet_summary(sum, sizeof(sum), &t, false);
    assert_string_equal(sum, "2 nodes (1 down)  3 GPUs  4 MIG, 3 idle  VRAM 14.0/40.0 GiB");
    tui_fleet_summary(sum, sizeof(sum), &t, true);
    assert_string_equal(sum, "2 nodes 1 down 3 GPU 4 MIG 3 idle 14.0/40.0 GiB");
    /* a node seen whose counts could not be had (its query failed): what
     * the others gave and "+", never a count that looks whole; "?" when
     * no node gave one */
    struct node_summary keep = nodes[1];
    nodes[1].gpus = nodes[1].mig = metric_none("Prometheus: the nodes' GPUs query: timeout");
    assert_true(tui_fleet_totals(&s, &t));
    tui_fleet_summary(sum, sizeof(sum), &t, false);
    assert_string_equal(sum, "2 nodes (1 down)  2+ GPUs  3+ MIG, 3 idle  VRAM 14.0/40.0 GiB");
    struct node_summary keep0 = nodes[0];
    nodes[0].gpus = nodes[0].mig = nodes[0].idle = metric_none("timeout");
    assert_true(tui_fleet_totals(&s, &t));
    tui_fleet_summary(sum, sizeof(sum), &t, true);
    assert_string_equal(sum, "2 nodes 1 down ? GPU ? MIG ? idle 14.0/40.0 GiB");
    nodes[0] = keep0;
    nodes[1] = keep;
    /* one host's snapshot is no fleet */
    s.fleet = false;
    assert_false(tui_fleet_totals(&s, &t));
}

static void assert_rows(const struct tui_view *v, const size_t *want, size_t n)
{
    assert_int_equal(v->ndrow, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(v->drow[i], want[i]);
}

#define N(i) (TUI_DROW_NODE | (i))
#define W(i) (TUI_DROW_WAIT | (i))

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
    const size_t all[] = {N(0), 0, 1, 2, 3, 4, N(1), 5, 6};
    assert_rows(&v, all, 9);
    assert_int_equal(tui_view_rows_wanted(&v), 9);
    /* Up from the first GPU: its node's row, still showing its first GPU */
    tui_view_select_abs(&v, 0);
    tui_view_select(&v, -1);
    assert_true(v.sel_node);
    assert_int_equal(v.sel_nodei, 0);
    assert_int_equal(v.sel, 0);
    assert_ptr_equal(tui_view_selected(&v), &devs[0]);
    /* Enter folds the node: its row alone */
    tui_view_toggle_fold(&v);
    tui_view_build_rows(&v, 0);
    const size_t folded[] = {N(0), N(1), 5, 6};
    assert_rows(&v, folded, 4);
    assert_true(v.sel_node);
    /* Down: the next node's row, past the folded GPUs */
    tui_view_select(&v, 1);
    assert_true(v.sel_node);
    assert_int_equal(v.sel_nodei, 1);
    assert_int_equal(v.sel, 5);
    /* on a GPU without instances Enter folds its node, whose row is then
     * the selection; on an instance it folds the GPU, as on one host */
    tui_view_select_home(&v);
    tui_view_toggle_fold(&v); /* unfold gpu-a */
    tui_view_select_abs(&v, 4);
    tui_view_toggle_fold(&v);
    assert_true(v.sel_node);
    assert_int_equal(v.sel_nodei, 0);
    tui_view_build_rows(&v, 0);
    assert_rows(&v, folded, 4);
    tui_view_toggle_fold(&v);
    tui_view_select_abs(&v, 2);
    tui_view_toggle_fold(&v);
    assert_false(v.sel_node);
    assert_int_equal(v.sel, 0);
    tui_view_build_rows(&v, 0);
    const size_t gpu_folded[] = {N(0), 0, 4, N(1), 5, 6};
    assert_rows(&v, gpu_folded, 6);
    /* a click on a node row selects it; device_at has no device there */
    v.lay.devices = (struct rect){0, 0, 8, 40};
    v.dev_scroll = 0;
    assert_int_equal(tui_view_device_at(&v, 4, 10), -1);
    assert_true(tui_view_select_at(&v, 4, 10));
    assert_true(v.sel_node);
    assert_int_equal(v.sel_nodei, 1);
    assert_int_equal(tui_view_device_at(&v, 2, 10), 0);
    /* the footer's place among the fleet's devices: node h200-b's first */
    size_t at, n;
    tui_fleet_position(&v, &at, &n);
    assert_int_equal(at, 6);
    assert_int_equal(n, 7);
    tui_view_free(&v);
}

/* A node whose devices were not read: its row, and under it (open) a row
 * that waits; on its row the detail has no device, the node itself. The
 * selection on a device of a node no longer read goes to its node's row. */
static void test_node_not_read(void **state)
{
    (void)state;
    struct snapshot s;
    make_fleet(&s);
    static struct tui_view v;
    memset(&v, 0, sizeof(v));
    v.snap = &s;
    tui_view_select_abs(&v, 6);
    nodes[1].devs_read = false;
    nodes[1].devs_why = "not asked for";
    s.ndevices = 5;
    tui_view_follow(&v);
    assert_true(v.sel_node);
    assert_int_equal(v.sel_nodei, 1);
    assert_null(tui_view_selected(&v));
    assert_ptr_equal(tui_fleet_selected_node(&v), &nodes[1]);
    tui_view_build_rows(&v, 0);
    const size_t rows[] = {N(0), 0, 1, 2, 3, 4, N(1), W(1)};
    assert_rows(&v, rows, 8);
    /* Down onto the waiting row keeps the node selected */
    tui_view_select(&v, 1);
    assert_true(v.sel_node);
    assert_int_equal(v.sel_nodei, 1);
    /* folded: its row alone */
    tui_view_toggle_fold(&v);
    tui_view_build_rows(&v, 0);
    const size_t folded[] = {N(0), 0, 1, 2, 3, 4, N(1)};
    assert_rows(&v, folded, 7);
    tui_view_free(&v);
}

/* What the list asks the backend to read: a small fleet, every node; a
 * large one, the open nodes on screen (or a screen away) and the
 * selection's node. */
static void test_wanted_nodes(void **state)
{
    (void)state;
    struct snapshot s;
    make_fleet(&s);
    static struct tui_view v;
    memset(&v, 0, sizeof(v));
    v.snap = &s;
    tui_view_select_abs(&v, 0);
    const char *out[8];
    tui_view_build_rows(&v, 0);
    assert_int_equal(tui_fleet_wanted(&v, out, 8), 2);
    assert_string_equal(out[0], "10.0.0.1:9400");
    assert_string_equal(out[1], "10.0.0.2:9400");
    /* a fleet past FLEET_OPEN_NODES_MAX nodes starts folded */
    static struct node_summary many[FLEET_OPEN_NODES_MAX + 3];
    memset(many, 0, sizeof(many));
    for (size_t k = 0; k < FLEET_OPEN_NODES_MAX + 3; k++) {
        snprintf(many[k].instance, sizeof(many[k].instance), "n%02zu:9400", k);
        snprintf(many[k].name, sizeof(many[k].name), "n%02zu", k);
        many[k].up = 1;
        many[k].seen = true;
        many[k].gpus = num(8);
        many[k].mig = num(0);
        many[k].devs_why = "not asked for";
    }
    s.nodes = many;
    s.nnodes = FLEET_OPEN_NODES_MAX + 3;
    s.ndevices = 0;
    tui_view_free(&v);
    memset(&v, 0, sizeof(v));
    v.snap = &s;
    tui_view_follow(&v);
    assert_true(v.sel_node);
    assert_int_equal(v.sel_nodei, 0);
    v.dev_room = 4;
    tui_view_build_rows(&v, 4);
    assert_int_equal(v.ndrow, FLEET_OPEN_NODES_MAX + 3); /* every node folded */
    assert_int_equal(tui_fleet_wanted(&v, out, 8), 1);   /* the selection's */
    assert_string_equal(out[0], "n00:9400");
    /* unfold n01: on screen, so wanted, after the selection's node */
    tui_fleet_node_fold_set(&v, 1, FOLD_OPEN);
    tui_view_build_rows(&v, 4);
    assert_int_equal(v.drow[2], W(1));
    assert_int_equal(tui_fleet_wanted(&v, out, 8), 2);
    assert_string_equal(out[1], "n01:9400");
    /* unfold n15, far below the screen: not wanted */
    tui_fleet_node_fold_set(&v, 15, FOLD_OPEN);
    tui_view_build_rows(&v, 4);
    assert_int_equal(tui_fleet_wanted(&v, out, 8), 2);
    /* the footer: 8 devices a node, the selection on the first node */
    size_t at, n;
    tui_fleet_position(&v, &at, &n);
    assert_int_equal(n, 8 * (FLEET_OPEN_NODES_MAX + 3));
    assert_int_equal(at, 0); /* a node whose devices were not read: no device */
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
    const size_t rows[] = {N(0), 0, 1, 2, N(1), 5, 6};
    assert_rows(&v, rows, 7);
    assert_int_equal(tui_view_rows_wanted(&v), 7);
    /* the selection left out by the filter moves to its GPU */
    assert_int_equal(tui_view_place_sel(&v), 1);
    assert_int_equal(v.sel, 0);
    /* End: the last row shown */
    tui_view_select_end(&v);
    assert_int_equal(v.sel, 6);
    /* a node whose devices the filter leaves none of has no row */
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
    /* worst first within each node (which stay in their places): in gpu-a
     * the A100 (a warning) and its warned instance; ok instances keep their
     * order; the L40S without a verdict last */
    const size_t worst[] = {0, 3, 1, 2, 4, 5, 6};
    assert_order(&s, FSORT_HEALTH, worst);
    assert_string_equal(tui_fleet_sort_name(FSORT_HEALTH), "health");
}

/* The nodes' order, from their aggregates: the down node knows nothing but
 * its verdict; unknown last, ties in name order. */
static void test_order_nodes(void **state)
{
    (void)state;
    struct snapshot s;
    make_fleet(&s);
    size_t o[2];
    tui_fleet_order_nodes(&s, FSORT_NODE, o);
    assert_true(o[0] == 0 && o[1] == 1);
    tui_fleet_order_nodes(&s, FSORT_UTIL, o);
    assert_true(o[0] == 0 && o[1] == 1);
    nodes[1].health = HEALTH_ACTION; /* its exporter's verdict before it went down */
    tui_fleet_order_nodes(&s, FSORT_HEALTH, o);
    assert_true(o[0] == 1 && o[1] == 0);
    /* up, but nothing known of its memory: after one that is */
    nodes[1].up = 1;
    nodes[1].mem_used = metric_none("no VRAM read from its devices");
    tui_fleet_order_nodes(&s, FSORT_MEM, o);
    assert_true(o[0] == 0 && o[1] == 1);
    nodes[1].idle = num(7);
    tui_fleet_order_nodes(&s, FSORT_IDLE, o);
    assert_true(o[0] == 1 && o[1] == 0);
    /* many nodes: a stable order (the merge sort), unknown after known */
    static struct node_summary many[100];
    memset(many, 0, sizeof(many));
    for (size_t k = 0; k < 100; k++) {
        many[k].up = 1;
        many[k].util_max = k % 3 == 0 ? metric_none("x") : num((double)(k % 5));
    }
    s.nodes = many;
    s.nnodes = 100;
    size_t big[100];
    tui_fleet_order_nodes(&s, FSORT_UTIL, big);
    for (size_t i = 1; i < 100; i++) {
        const struct metric *a = &many[big[i - 1]].util_max, *b = &many[big[i]].util_max;
        if (metric_ok(a) && metric_ok(b))
            assert_true(a->value > b->value || (a->value == b->value && big[i - 1] < big[i]));
        else
            assert_true(metric_ok(a) || (!metric_ok(b) && big[i - 1] < big[i]));
    }
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
        cmocka_unit_test(test_order_nodes),
        cmocka_unit_test(test_totals),
        cmocka_unit_test(test_node_rows_fold),
        cmocka_unit_test(test_node_not_read),
        cmocka_unit_test(test_wanted_nodes),
        cmocka_unit_test(test_node_rows_filtered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
