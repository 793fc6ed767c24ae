/* Unit tests for src/tui/layout.c: proportions and degradation. */
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
    struct rect all[] = {l->header, l->footer, l->cpu, l->devices, l->detail_r, l->procs,
                         l->gpu_util, l->mem_ctl, l->vram, l->pcie_r, l->cpu_total,
                         l->mem_bars, l->legend, l->ram};
    size_t n = sizeof(all) / sizeof(all[0]);
    for (size_t i = 0; i < n; i++) {
        assert_true(inside(all[i], l->h, l->w));
        for (size_t j = i + 1; j < n; j++)
            assert_false(overlap(all[i], all[j]));
    }
}

static void test_80x24_full(void **state)
{
    (void)state;
    struct tui_layout l;
    tui_layout_compute(&l, 24, 80, true, 4);
    assert_false(l.too_small);
    assert_true(l.charts);
    assert_true(l.detail);
    assert_true(l.pcie);
    /* header and footer are one line; top 45 % of the 22 main rows */
    assert_int_equal(l.header.h, 1);
    assert_int_equal(l.footer.y, 23);
    assert_int_equal(l.cpu.h, 10);
    assert_int_equal(l.cpu.w, 40);
    assert_int_equal(l.devices.x, 40);
    assert_int_equal(l.devices.h + l.detail_r.h + l.procs.h, 10);
    /* four GPU charts share the 12 bottom rows */
    assert_int_equal(l.gpu_util.h, 3);
    assert_int_equal(l.pcie_r.y + l.pcie_r.h, 23);
    /* CPU total 40 % of 12 = 5, bars 2, legend 2, RAM chart the rest (3) */
    assert_int_equal(l.cpu_total.h, 5);
    assert_int_equal(l.mem_bars.h, 2);
    assert_int_equal(l.legend.h, 2);
    assert_int_equal(l.ram.h, 3);
    check_tiling(&l);
}

static void test_without_pcie_three_charts(void **state)
{
    (void)state;
    struct tui_layout l;
    tui_layout_compute(&l, 60, 200, false, 4);
    assert_false(l.pcie);
    assert_int_equal(l.pcie_r.h, 0);
    int bottom = l.gpu_util.h + l.mem_ctl.h + l.vram.h;
    assert_int_equal(bottom, 58 - l.cpu.h);
    assert_int_equal(l.gpu_util.h, bottom / 3);
    check_tiling(&l);
}

static void test_device_list_grows_then_caps(void **state)
{
    (void)state;
    struct tui_layout l;
    /* top = 45 % of 58 = 26; devices between 20 % (5) and 30 % (8) of it */
    tui_layout_compute(&l, 60, 200, true, 1);
    assert_int_equal(l.devices.h, 5);
    tui_layout_compute(&l, 60, 200, true, 5);
    assert_int_equal(l.devices.h, 7); /* 5 rows + border */
    tui_layout_compute(&l, 60, 200, true, 56);
    assert_int_equal(l.devices.h, 8);
    assert_int_equal(l.detail_r.h, 10); /* 8 detail lines, two to a row when wide */
    check_tiling(&l);
}

static void test_degrades_charts_first(void **state)
{
    (void)state;
    struct tui_layout l;
    /* 21 rows: the bottom half would have 10 rows, still shown */
    tui_layout_compute(&l, 21, 80, true, 4);
    assert_true(l.charts);
    /* 20 rows: the bottom half would have 10 rows of 18: top 8 < 9 → no charts */
    tui_layout_compute(&l, 20, 80, true, 4);
    assert_false(l.charts);
    assert_false(l.pcie);
    assert_true(l.detail);
    assert_int_equal(l.cpu.h, 18); /* the top takes the whole main area */
    check_tiling(&l);
}

static void test_minimum_and_too_small(void **state)
{
    (void)state;
    struct tui_layout l;
    tui_layout_compute(&l, TUI_MIN_H, TUI_MIN_W, true, 4);
    assert_false(l.too_small);
    assert_false(l.charts);
    assert_true(l.detail); /* 10 rows for the top: devices 3, detail ≥ 3, processes 3 */
    assert_true(l.detail_r.h >= 3);
    assert_true(l.procs.h >= 3);
    check_tiling(&l);
    tui_layout_compute(&l, TUI_MIN_H - 1, 200, true, 4);
    assert_true(l.too_small);
    tui_layout_compute(&l, 60, TUI_MIN_W - 1, true, 4);
    assert_true(l.too_small);
    tui_layout_compute(&l, 0, 0, true, 0);
    assert_true(l.too_small);
}

static void test_every_size_tiles(void **state)
{
    (void)state;
    struct tui_layout l;
    for (int h = TUI_MIN_H; h <= 80; h++)
        for (int w = TUI_MIN_W; w <= 260; w += 7) {
            tui_layout_compute(&l, h, w, (h + w) % 2 == 0, h % 9);
            assert_false(l.too_small);
            check_tiling(&l);
            /* the top half always has its three boxes or two without detail */
            assert_true(l.devices.h >= 3);
            assert_true(l.procs.h >= 3);
            if (l.detail)
                assert_true(l.detail_r.h >= 3);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_80x24_full),
        cmocka_unit_test(test_without_pcie_three_charts),
        cmocka_unit_test(test_device_list_grows_then_caps),
        cmocka_unit_test(test_degrades_charts_first),
        cmocka_unit_test(test_minimum_and_too_small),
        cmocka_unit_test(test_every_size_tiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
