/* Unit tests for src/backend/prometheus/prom_past.c and promc_parse: a device's chart
 * series built from Prometheus range query answers (tests/fixtures/prom/:
 * our exporter's series, dcgm-exporter's), the query naming the device,
 * the grid, and answers refused or not a matrix. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/prometheus/prom_client.h"
#include "backend/prometheus/prom_past.h"

/* 1700000000 s: the fixtures' first point; six points a second apart */
#define T0_MS 1700000000000ll

static char *slurp(const char *name, size_t *len)
{
    char path[1024];
    const char *src = getenv("MIGMON_SRC");
    snprintf(path, sizeof(path), "%s/tests/fixtures/prom/%s", src ? src : ".", name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("no fixture %s", path);
    static char buf[1 << 16];
    *len = fread(buf, 1, sizeof(buf) - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

/* The fixture's data.result, checked as promc checks an answer. */
static json_t *matrix(const char *name)
{
    size_t len;
    char *text = slurp(name, &len);
    json_t *res;
    char err[256];
    if (promc_parse(text, len, 200, "matrix", &res, err, sizeof(err)) != 0)
        fail_msg("%s: %s", name, err);
    return res;
}

static const struct past_grid grid6 = {.start_ms = T0_MS, .step_ms = 1000, .n = 6};

static void assert_point(const struct hist_past *p, size_t j, enum hist_dev_series k, double v,
                         enum metric_source src)
{
    const struct hist_point *q = hist_past_at(p, j, k);
    if (q->src != src)
        fail_msg("series %d point %zu: source %d, expected %d", (int)k, j, (int)q->src, (int)src);
    assert_float_equal(q->v, v, 1e-9);
}

static void assert_gap(const struct hist_past *p, size_t j, enum hist_dev_series k)
{
    if (hist_past_at(p, j, k)->src != MSRC_NONE)
        fail_msg("series %d point %zu: not a gap (%g)", (int)k, j, hist_past_at(p, j, k)->v);
}

static void test_migmon_gpu(void **st)
{
    (void)st;
    json_t *res = matrix("query_range-migmon.json");
    struct past_dev d = {.instance = "a:9400", .uuid = "GPU-A", .gi = -1, .ci = -1,
                         .mig_enabled = true};
    struct hist_past p;
    char err[256];
    assert_int_equal(prom_past_build(&p, res, &d, &grid6, err, sizeof(err)), 0);
    assert_int_equal(p.n, 6);
    assert_true(p.given & (1u << HS_GPU_UTIL));
    assert_false(p.given & (1u << HS_PCIE_TX)); /* not read from Prometheus */
    /* utilisation × 100 with the series' source; a missing point and NaN
     * are gaps; a carried series is carried; of two at one point the read
     * one (gpm) wins over the estimate */
    assert_point(&p, 0, HS_GPU_UTIL, 50, MSRC_GPM);
    assert_point(&p, 1, HS_GPU_UTIL, 25, MSRC_GPM);
    assert_point(&p, 2, HS_GPU_UTIL, 30, MSRC_CARRIED);
    assert_gap(&p, 3, HS_GPU_UTIL);
    assert_point(&p, 4, HS_GPU_UTIL, 100, MSRC_GPM);
    assert_point(&p, 5, HS_GPU_UTIL, 75, MSRC_GPM);
    /* the grid: before the start, past the end and half a step off are
     * dropped; 0.4 ms off is that point */
    assert_point(&p, 0, HS_TEMP, 41, MSRC_DIRECT);
    assert_point(&p, 1, HS_TEMP, 42, MSRC_DIRECT);
    assert_gap(&p, 2, HS_TEMP);
    assert_point(&p, 3, HS_TEMP, 43, MSRC_DIRECT);
    assert_point(&p, 5, HS_TEMP, 45, MSRC_DIRECT);
    /* hertz to MHz; one point only */
    assert_point(&p, 0, HS_CLK_SM, 1410, MSRC_DIRECT);
    for (size_t j = 1; j < 6; j++)
        assert_gap(&p, j, HS_CLK_SM);
    /* no own VRAM figure: the instances' sum, a gap where one has none */
    assert_point(&p, 0, HS_VRAM_USED, 1500, MSRC_DIRECT);
    assert_point(&p, 2, HS_VRAM_USED, 1500, MSRC_DIRECT);
    assert_gap(&p, 3, HS_VRAM_USED);
    assert_point(&p, 4, HS_VRAM_USED, 1500, MSRC_DIRECT);
    /* another GPU's power and a series whose values are garbage: none */
    for (size_t j = 0; j < 6; j++)
        assert_gap(&p, j, HS_POWER);
    /* garbage points ([t] alone, "x", a number for the value) are skipped;
     * the good one is kept */
    assert_gap(&p, 0, HS_CLK_MEM);
    assert_gap(&p, 1, HS_CLK_MEM);
    assert_point(&p, 2, HS_CLK_MEM, 1593, MSRC_DIRECT);
    /* an instance's utilisation is not its GPU's */
    for (size_t j = 0; j < 6; j++)
        assert_gap(&p, j, HS_MEM_UTIL);
    hist_past_free(&p);

    /* a GPU without instances: no sum */
    d.mig_enabled = false;
    assert_int_equal(prom_past_build(&p, res, &d, &grid6, err, sizeof(err)), 0);
    for (size_t j = 0; j < 6; j++)
        assert_gap(&p, j, HS_VRAM_USED);
    hist_past_free(&p);
    json_decref(res);
}

static void test_migmon_instance(void **st)
{
    (void)st;
    json_t *res = matrix("query_range-migmon.json");
    struct past_dev d = {.instance = "a:9400", .uuid = "GPU-A", .gi = 1, .ci = 0};
    struct hist_past p;
    char err[256];
    assert_int_equal(prom_past_build(&p, res, &d, &grid6, err, sizeof(err)), 0);
    /* its own utilisation and memory; its GPU's temperature (GPU-wide),
     * never its GPU's utilisation */
    for (size_t j = 0; j < 6; j++) {
        assert_point(&p, j, HS_GPU_UTIL, 85, MSRC_GPM);
        assert_point(&p, j, HS_VRAM_USED, 1000, MSRC_DIRECT);
    }
    assert_point(&p, 4, HS_TEMP, 44, MSRC_DIRECT);
    hist_past_free(&p);
    json_decref(res);
}

static void test_dcgm_gpu(void **st)
{
    (void)st;
    json_t *res = matrix("query_range-dcgm.json");
    struct past_dev d = {.instance = "d:9400", .uuid = "GPU-D", .gi = -1, .ci = -1, .dcgm = true,
                         .mig_enabled = true};
    struct hist_past p;
    char err[256];
    assert_int_equal(prom_past_build(&p, res, &d, &grid6, err, sizeof(err)), 0);
    /* the profiling field wins where it has a point, GPU_UTIL elsewhere;
     * an instance's profiling field is not the GPU's */
    assert_point(&p, 0, HS_GPU_UTIL, 40, MSRC_DIRECT);
    assert_point(&p, 2, HS_GPU_UTIL, 50, MSRC_DCGM);
    assert_point(&p, 3, HS_GPU_UTIL, 50, MSRC_DCGM);
    assert_point(&p, 4, HS_GPU_UTIL, 40, MSRC_DIRECT);
    /* FB_USED of the instances in MiB, summed; an instance's temperature
     * is its GPU's */
    assert_point(&p, 1, HS_VRAM_USED, 200.0 * 1048576, MSRC_DIRECT);
    assert_point(&p, 5, HS_TEMP, 52, MSRC_DIRECT);
    hist_past_free(&p);
    json_decref(res);
}

static void test_refused_and_garbage(void **st)
{
    (void)st;
    size_t len;
    json_t *res = NULL;
    char err[256];
    char *text = slurp("query_range-refused.json", &len);
    assert_int_equal(promc_parse(text, len, 400, "matrix", &res, err, sizeof(err)), -1);
    assert_null(res);
    assert_non_null(strstr(err, "HTTP 400: exceeded maximum resolution of 11,000 points"));
    text = slurp("query_range-garbage.html", &len);
    assert_int_equal(promc_parse(text, len, 502, "matrix", &res, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "answer is not JSON (HTTP 502"));
    text = slurp("query_range-vector.json", &len);
    assert_int_equal(promc_parse(text, len, 200, "matrix", &res, err, sizeof(err)), -1);
    assert_string_equal(err, "answer is not a range vector (resultType vector)");
    /* the server's error text is another host's: its controls, bidi and
     * invisible characters replaced before it is in any message */
    static const char hostile[] =
        "{\"status\":\"error\",\"errorType\":\"execution\",\"error\":\"bad \\u001b]0;pwned"
        "\\u0007 \\u001b[2J\\u0085 \\u202egnp.exe \\u200f\\u2028\\u009b31m end\"}";
    assert_int_equal(promc_parse(hostile, strlen(hostile), 422, "vector", &res, err, sizeof(err)),
                     -1);
    assert_string_equal(err, "HTTP 422: bad ?]0;pwned? ?[2J?? ???gnp.exe ????????31m end");
    /* ... and what jansson quotes of an answer that is no JSON */
    static const char raw[] = "\x1b]0;x\x07\xc2\x9b";
    assert_int_equal(promc_parse(raw, strlen(raw), 200, "vector", &res, err, sizeof(err)), -1);
    for (const unsigned char *c = (const unsigned char *)err; *c; c++)
        assert_true(*c >= 0x20 && *c < 0x7f);
    /* a resultType that is not text to show */
    static const char type[] =
        "{\"status\":\"success\",\"data\":{\"resultType\":\"\\u001b[2Jx\",\"result\":[]}}";
    assert_int_equal(promc_parse(type, strlen(type), 200, "vector", &res, err, sizeof(err)), -1);
    assert_string_equal(err, "answer is not an instant vector (resultType ?[2Jx)");
    /* a result that is not a list of series */
    struct hist_past p;
    struct past_dev d = {.uuid = "GPU-A", .gi = -1, .ci = -1};
    json_t *obj = json_object();
    assert_int_equal(prom_past_build(&p, obj, &d, &grid6, err, sizeof(err)), -1);
    assert_null(p.pts);
    json_decref(obj);
    /* an empty matrix: every point a gap */
    json_t *empty = json_array();
    assert_int_equal(prom_past_build(&p, empty, &d, &grid6, err, sizeof(err)), 0);
    for (size_t j = 0; j < 6; j++)
        assert_gap(&p, j, HS_GPU_UTIL);
    hist_past_free(&p);
    json_decref(empty);
}

static void test_query_and_grid(void **st)
{
    (void)st;
    char q[2048];
    struct past_dev d = {.instance = "a\"b", .uuid = "GPU-1\\x", .gi = -1, .ci = -1};
    assert_int_equal(prom_past_query(q, sizeof(q), &d), 0);
    assert_non_null(strstr(q, "instance=\"a\\\"b\", uuid=\"GPU-1\\\\x\"")); /* quoted */
    assert_non_null(strstr(q, "migmon_gpu_(utilization_ratio|"));
    assert_non_null(strstr(q, "|migmon_mig_memory_used_bytes"));
    d.gi = 3;
    d.ci = 0;
    assert_int_equal(prom_past_query(q, sizeof(q), &d), 0);
    assert_non_null(strstr(q, "gpu_instance_id=\"3\", compute_instance_id=\"0\"} or "));
    d.ci = -1; /* an instance that cannot be named */
    assert_int_equal(prom_past_query(q, sizeof(q), &d), -1);
    d.dcgm = true;
    d.gi = -1;
    assert_int_equal(prom_past_query(q, sizeof(q), &d), 0);
    assert_non_null(strstr(q, "max by (__name__, GPU_I_ID) ({__name__=~\"DCGM_FI_DEV_(FB_USED|"));
    assert_non_null(strstr(q, "UUID=\"GPU-1\\\\x\""));
    assert_int_equal(prom_past_query(q, 40, &d), -1); /* does not fit */
    d.uuid[0] = '\0';
    assert_int_equal(prom_past_query(q, sizeof(q), &d), -1);
    /* 300 points at 100 ms end at the ask; more than Prometheus allows are cut */
    struct past_grid g = prom_past_grid(T0_MS, 100, 300);
    assert_int_equal(g.n, 300);
    assert_int_equal(g.start_ms, T0_MS - 29900);
    g = prom_past_grid(T0_MS, 1000, 100000);
    assert_int_equal(g.n, PROM_PAST_MAX_POINTS);
    assert_int_equal(g.start_ms, T0_MS - 10999000ll);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_migmon_gpu),
        cmocka_unit_test(test_migmon_instance),
        cmocka_unit_test(test_dcgm_gpu),
        cmocka_unit_test(test_refused_and_garbage),
        cmocka_unit_test(test_query_and_grid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
