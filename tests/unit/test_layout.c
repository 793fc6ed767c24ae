/* Unit tests for src/tui/layout.c: sizes from content, the order in which
 * space is given, and degradation on small terminals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tui/layout.h"

static bool inside(struct rect r, int h, int w)
{
    return r.y >= 0 && r.x >= 0 && r.y + r.h <= h && r.x + r.w <= w;
}

static bool overlap(struct rect a, struct rect b)
{
    if (a.h == 0 || a.w == 0 || b.h == 0 || b.w == 0)
        return false;
    return a.y < b.y + b.h && b.y < a.y + a.h && a.x < b.x + b.w && b.x < a.x + a.w;
}

/* Every shown rectangle lies on the screen and none overlaps another. */
static void check_tiling(const struct tui_layout *l)
{
    struct rect all[] = {l->header,   l->footer,    l->cpu,      l->devices, l->detail_r,
                         l->procs,    l->chart[0],  l->chart[1], l->chart[2], l->chart[3],
                         l->chart[4], l->chart[5],  l->cpu_total, l->mem_bars, l->legend,
                         l->ram};
    size_t n = sizeof(all) / sizeof(all[0]);
    for (size_t i = 0; i < n; i++) {
        assert_true(inside(all[i], l->h, l->w));
        for (size_t j = i + 1; j < n; j++)
            assert_false(overlap(all[i], all[j]));
    }
}

/* One H200 with 4 MIG instances, 2 cores, 3 processes. */
static const struct tui_layout_want h200 = {
    .ncores = 2, .cpu_id_width = 1, .dev_rows = 5, .detail_key = 3, .detail_full = 10,
    .proc_rows = 3, .ncharts = 4};

static void test_80x24_shows_every_device_key_detail_and_3_processes(void **state)
{
    (void)state;
    struct tui_layout l;
    tui_layout_compute(&l, 24, 80, &h200);
    assert_false(l.too_small);
    /* the GPU side gets 3/5 of 80 columns below 160 */
    assert_int_equal(l.cpu.w, 32);
    assert_int_equal(l.devices.x, 32);
    assert_int_equal(l.devices.w, 48);
    /* two cores take one row: the CPU panel is 3 rows, not half the screen */
    assert_int_equal(l.cpu.h, 3);
    assert_int_equal(l.ncharts, 4);
    /* every device row, the key detail lines, 3 process rows and a header */
    assert_int_equal(l.devices.h, 5 + 2);
    assert_true(l.detail);
    assert_true(l.detail_r.h >= 3 + 2);
    assert_true(l.procs.h >= 1 + 3 + 2);
    /* RAM and swap bars under them; no room for the host charts */
    assert_int_equal(l.mem_bars.h, 2);
    assert_false(l.host_charts);
    assert_int_equal(l.mem_bars.y + l.mem_bars.h, 23);
    check_tiling(&l);
}

static void test_120x40_shows_the_whole_detail_panel(void **state)
{
    (void)state;
    struct tui_layout l;
    tui_layout_compute(&l, 40, 120, &h200);
    assert_int_equal(l.devices.h, 7);
    assert_int_equal(l.detail_r.h, 10 + 2);
    assert_true(l.procs.h >= 1 + 3 + 2);
    check_tiling(&l);
}

static void test_200x60_dgx_gets_30_device_rows_and_host_charts(void **state)
{
    (void)state;
    struct tui_layout_want dgx = h200;
    dgx.ncores = 2;
    dgx.dev_rows = 64;
    dgx.detail_key = 4;
    dgx.detail_full = 8;
    dgx.proc_rows = 1;
    struct tui_layout l;
    tui_layout_compute(&l, 60, 200, &dgx);
    assert_int_equal(l.devices.w, 100); /* halves from 160 columns */
    assert_true(l.devices.h - 2 >= 30);
    assert_int_equal(l.detail_r.h, 8 + 2);
    check_tiling(&l);
    /* a single GPU leaves room for the host charts */
    struct tui_layout_want one = h200;
    one.dev_rows = 1;
    tui_layout_compute(&l, 60, 200, &one);
    assert_int_equal(l.devices.h, 3);
    assert_true(l.host_charts);
    assert_true(l.cpu_total.h >= 3);
    assert_true(l.ram.h >= 3);
    assert_int_equal(l.legend.h, 2);
    check_tiling(&l);
}

static void test_cpu_panel_follows_the_cores(void **state)
{
    (void)state;
    /* 30 columns inside: cells of 1+1+1+4+5 = 12, 2 apart: 2 columns */
    assert_int_equal(tui_cpu_rows_needed(2, 1, 30), 1);
    assert_int_equal(tui_cpu_rows_needed(8, 1, 30), 4);
    /* three-digit ids need wider cells */
    assert_int_equal(tui_cpu_rows_needed(256, 3, 98), 43);
    assert_int_equal(tui_cpu_rows_needed(0, 1, 30), 1);
    struct tui_layout_want many = h200;
    many.ncores = 256;
    many.cpu_id_width = 3;
    struct tui_layout l;
    tui_layout_compute(&l, 60, 200, &many);
    /* capped at 3/5 of the 58 main rows; the charts keep the rest */
    assert_int_equal(l.cpu.h, 34);
    assert_int_equal(l.ncharts, 4);
    assert_int_equal(l.chart[3].y + l.chart[3].h, 59);
    check_tiling(&l);
}

static void test_three_charts_without_pcie(void **state)
{
    (void)state;
    struct tui_layout_want w = h200;
    w.ncharts = 3;
    struct tui_layout l;
    tui_layout_compute(&l, 60, 200, &w);
    assert_int_equal(l.ncharts, 3);
    assert_int_equal(l.chart[3].h, 0);
    int sum = l.chart[0].h + l.chart[1].h + l.chart[2].h;
    assert_int_equal(sum, 58 - l.cpu.h);
    check_tiling(&l);
}

static void test_small_terminal_drops_detail_then_charts(void **state)
{
    (void)state;
    struct tui_layout l;
    tui_layout_compute(&l, TUI_MIN_H, TUI_MIN_W, &h200);
    assert_false(l.too_small);
    /* 10 main rows: devices 3 and processes 6 leave no detail panel */
    assert_false(l.detail);
    assert_true(l.devices.h >= 3);
    assert_true(l.procs.h >= 3);
    check_tiling(&l);
    tui_layout_compute(&l, TUI_MIN_H - 1, 200, &h200);
    assert_true(l.too_small);
    tui_layout_compute(&l, 60, TUI_MIN_W - 1, &h200);
    assert_true(l.too_small);
    tui_layout_compute(&l, 0, 0, &h200);
    assert_true(l.too_small);
}

static void test_every_size_tiles(void **state)
{
    (void)state;
    struct tui_layout l;
    for (int h = TUI_MIN_H; h <= 80; h++)
        for (int w = TUI_MIN_W; w <= 260; w += 7)
            for (int k = 0; k < 3; k++) {
                struct tui_layout_want want = {.ncores = (size_t)(k * 60 + 1),
                                               .cpu_id_width = k + 1,
                                               .dev_rows = h % 9 + k * 30,
                                               .detail_key = 3 + k,
                                               .detail_full = 6 + 2 * k,
                                               .proc_rows = k * 7,
                                               .ncharts = 3 + (h + w) % 4,
                                               .chart_fixed = {k == 1 ? 5 : 0, k == 1 ? 3 : 0}};
                tui_layout_compute(&l, h, w, &want);
                assert_false(l.too_small);
                check_tiling(&l);
                assert_true(l.devices.h >= 3);
                if (l.detail)
                    assert_true(l.detail_r.h >= 3);
                /* the right column is filled to the footer */
                struct rect last = l.host_charts && !l.host_left ? l.ram
                                   : l.mem_bars.h                ? l.mem_bars
                                                                 : l.procs;
                if (last.h == 0)
                    last = l.devices;
                assert_int_equal(last.y + last.h, h - 1);
            }
}

/* The DGX with its first GPU unfolded (15 rows), the whole detail (12
 * lines) and one process: no room for the host charts on the right. */
static const struct tui_layout_want dgx_mig = {
    .ncores = 2, .cpu_id_width = 1, .dev_rows = 15, .detail_key = 4, .detail_full = 12,
    .proc_rows = 1, .ncharts = 6, .chart_fixed = {5, 3, 0, 0, 0, 0}};

static void test_na_charts_take_their_reason_and_host_charts_stay(void **state)
{
    (void)state;
    struct tui_layout l;
    tui_layout_compute(&l, 40, 120, &dgx_mig);
    check_tiling(&l);
    /* the right column is full: the host charts go under the GPU charts */
    assert_true(l.host_charts);
    assert_true(l.host_left);
    assert_int_equal(l.cpu_total.x, 0);
    assert_int_equal(l.legend.h, 2);
    assert_int_equal(l.ram.y + l.ram.h, 39);
    /* the two N/A charts are as tall as their reasons */
    assert_int_equal(l.chart[0].h, 5);
    assert_int_equal(l.chart[1].h, 3);
    /* every chart of data and both host charts at least 3 rows */
    assert_int_equal(l.ncharts, 6);
    for (int i = 2; i < 6; i++)
        assert_true(l.chart[i].h >= 3);
    assert_true(l.cpu_total.h >= 3 && l.ram.h >= 3);
    /* the process panel's minimum is its one row (and the row left over
     * at the end): the detail is whole */
    assert_int_equal(l.procs.h, 1 + 1 + 2 + 1);
    assert_int_equal(l.detail_r.h, 12 + 2);
}

static void test_host_charts_under_the_gpu_charts_only_when_all_fit(void **state)
{
    (void)state;
    struct tui_layout l;
    /* 80x24: 19 rows under the CPU panel; the six GPU charts need 20: the
     * host charts are not forced there and the last GPU chart goes */
    tui_layout_compute(&l, 24, 80, &dgx_mig);
    check_tiling(&l);
    assert_false(l.host_charts);
    assert_int_equal(l.ncharts, 5);
    /* at 120x40 and above the host charts stay, the GPU charts give way
     * from the last: a CPU panel of 256 cores (capped at 3/5) leaves 16 rows */
    struct tui_layout_want many = dgx_mig;
    many.ncores = 256;
    many.cpu_id_width = 3;
    tui_layout_compute(&l, 40, 120, &many);
    check_tiling(&l);
    assert_true(l.host_left);
    assert_int_equal(l.cpu.h, 22);
    /* 16 rows: 2 host charts and the legend take 8, the reasons 5 + 3 */
    assert_int_equal(l.ncharts, 2);
    assert_int_equal(l.chart[0].h + l.chart[1].h, 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_80x24_shows_every_device_key_detail_and_3_processes),
        cmocka_unit_test(test_120x40_shows_the_whole_detail_panel),
        cmocka_unit_test(test_200x60_dgx_gets_30_device_rows_and_host_charts),
        cmocka_unit_test(test_cpu_panel_follows_the_cores),
        cmocka_unit_test(test_three_charts_without_pcie),
        cmocka_unit_test(test_small_terminal_drops_detail_then_charts),
        cmocka_unit_test(test_every_size_tiles),
        cmocka_unit_test(test_na_charts_take_their_reason_and_host_charts_stay),
        cmocka_unit_test(test_host_charts_under_the_gpu_charts_only_when_all_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
