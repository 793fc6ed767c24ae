/* The streaming JSON writer (src/export/jsonw.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "export/jsonw.h"

struct buf {
    char *data;
    size_t len;
    FILE *f;
    struct jsonw w;
};

static void buf_open(struct buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->f = open_memstream(&b->data, &b->len);
    assert_non_null(b->f);
    jsonw_init(&b->w, b->f, false);
}

static const char *buf_done(struct buf *b)
{
    jsonw_flush(&b->w);
    fclose(b->f);
    return b->data;
}

static void test_nested_commas(void **state)
{
    (void)state;
    struct buf b;
    buf_open(&b);
    jsonw_obj_open(&b.w);
    jsonw_key(&b.w, "a");
    jsonw_int(&b.w, -3);
    jsonw_key(&b.w, "b");
    jsonw_arr_open(&b.w);
    jsonw_uint(&b.w, 18446744073709551615ULL);
    jsonw_bool(&b.w, true);
    jsonw_null(&b.w);
    jsonw_obj_open(&b.w);
    jsonw_obj_close(&b.w);
    jsonw_arr_open(&b.w);
    jsonw_arr_close(&b.w);
    jsonw_arr_close(&b.w);
    jsonw_key(&b.w, "c");
    jsonw_str(&b.w, NULL);
    jsonw_obj_close(&b.w);
    assert_string_equal(buf_done(&b), "{\"a\":-3,\"b\":[18446744073709551615,true,null,{},[]],"
                                      "\"c\":null}");
    free(b.data);
}

static void test_escaping(void **state)
{
    (void)state;
    struct buf b;
    buf_open(&b);
    jsonw_str(&b.w, "q\"b\\n\n\t\x01\x7f é");
    assert_string_equal(buf_done(&b), "\"q\\\"b\\\\n\\n\\t\\u0001\\u007f é\"");
    free(b.data);
}

static void test_doubles(void **state)
{
    (void)state;
    struct buf b;
    buf_open(&b);
    jsonw_arr_open(&b.w);
    jsonw_double(&b.w, 81920.0 * 1024 * 1024);
    jsonw_double(&b.w, 29.5);
    jsonw_double(&b.w, 0.125);
    jsonw_double(&b.w, 1.0 / 3.0);
    jsonw_double(&b.w, NAN);
    jsonw_double(&b.w, INFINITY);
    jsonw_double(&b.w, -0.5);
    jsonw_arr_close(&b.w);
    assert_string_equal(buf_done(&b), "[85899345920,29.5,0.125,0.333333,null,null,-0.5]");
    free(b.data);
}

/* printf's "%.6f", trailing zeros and a bare point taken off: what
 * jsonw_double wrote before its integer rounding, and must still write. */
static void reference(char *buf, double v)
{
    snprintf(buf, 64, "%.6f", v);
    char *dot = strchr(buf, '.');
    if (dot) {
        char *end = buf + strlen(buf) - 1;
        while (end > dot && *end == '0')
            *end-- = '\0';
        if (end == dot)
            *end = '\0';
    }
}

static void test_doubles_as_printf(void **state)
{
    (void)state;
    /* values of every scale the metrics have, random bits, and the halves
     * and near-halves where rounding goes one way or the other */
    uint64_t x = 88172645463325252ull;
    char a[64], b[64];
    for (int i = 0; i < 2000000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double v;
        switch (i % 4) {
        case 0: v = (double)(x % 100000000) / 1e6; break;           /* 0..100 with 6 decimals */
        case 1: v = ((double)(x >> 11) / 9007199254740992.0) * pow(10, (double)(x % 12) - 3);
            break;
        case 2: v = (double)(x % 20000001) / 2e6 + 0.0000005; break; /* near halves */
        default: v = -((double)(x % 1000000007) / 1e3); break;
        }
        if (v == floor(v))
            continue;
        jsonw_fixed6(a, v);
        reference(b, v);
        if (strcmp(a, b) != 0)
            fail_msg("%.17g: %s, printf %s", v, a, b);
    }
    const double edge[] = {-0.0000001, 0.0000005, 1e-7, 9999999.9999995, 0.1234565, -1.5e-6};
    for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
        jsonw_fixed6(a, edge[i]);
        reference(b, edge[i]);
        assert_string_equal(a, b);
    }
}

static void test_metric_none_is_null_never_zero(void **state)
{
    (void)state;
    struct buf b;
    buf_open(&b);
    struct metric m = metric_none("NVML_ERROR_NOT_SUPPORTED");
    m.value = 123; /* garbage in the value field must not leak */
    jsonw_metric(&b.w, &m);
    struct metric e = {.value = 70, .src = MSRC_ESTIMATE, .why = "scaled"};
    jsonw_metric(&b.w, &e);
    assert_string_equal(buf_done(&b),
                        "{\"value\":null,\"source\":\"none\",\"reason\":\"NVML_ERROR_NOT_SUPPORTED\"}"
                        ",{\"value\":70,\"source\":\"estimate\",\"reason\":\"scaled\"}");
    free(b.data);
}

static void test_pretty(void **state)
{
    (void)state;
    struct buf b;
    buf_open(&b);
    b.w.pretty = true;
    jsonw_obj_open(&b.w);
    jsonw_key(&b.w, "x");
    jsonw_arr_open(&b.w);
    jsonw_int(&b.w, 1);
    jsonw_arr_close(&b.w);
    jsonw_obj_close(&b.w);
    assert_string_equal(buf_done(&b), "{\n  \"x\": [\n    1\n  ]\n}");
    free(b.data);
}

/* A document far longer than the writer's buffer reaches the FILE whole
 * and in order: strings, numbers and escapes that straddle the points
 * where the buffer is handed on, and a string longer than the buffer. */
static void test_long_document(void **state)
{
    (void)state;
    struct buf b;
    buf_open(&b);
    size_t cap = 1 << 20, n = 0;
    char *want = malloc(cap);
    assert_non_null(want);
    char *big = malloc(3 * JSONW_BUF + 2);
    assert_non_null(big);
    for (size_t i = 0; i < 3 * JSONW_BUF + 1; i++)
        big[i] = (char)('a' + i % 26);
    big[3 * JSONW_BUF + 1] = '\0';
    jsonw_arr_open(&b.w);
    n += (size_t)snprintf(want + n, cap - n, "[");
    for (int i = 0; i < 5000; i++) {
        if (i)
            want[n++] = ',';
        if (i % 3 == 0) {
            jsonw_int(&b.w, -i);
            n += (size_t)snprintf(want + n, cap - n, "%d", -i);
        } else if (i % 3 == 1) {
            jsonw_double(&b.w, i + 0.25);
            n += (size_t)snprintf(want + n, cap - n, "%d.25", i);
        } else {
            jsonw_str(&b.w, "q\"\n");
            n += (size_t)snprintf(want + n, cap - n, "\"q\\\"\\n\"");
        }
        if (i == 2500) {
            jsonw_str(&b.w, big);
            n += (size_t)snprintf(want + n, cap - n, ",\"%s\"", big);
        }
    }
    jsonw_arr_close(&b.w);
    n += (size_t)snprintf(want + n, cap - n, "]\n");
    jsonw_end(&b.w);
    const char *got = buf_done(&b);
    assert_int_equal(b.len, n);
    assert_memory_equal(got, want, n);
    free(b.data);
    free(want);
    free(big);
}

/* A finite number too long for "%.6f" in 64 bytes is written whole, in
 * the exponent form, and reads back as itself. */
static void test_huge_doubles(void **state)
{
    (void)state;
    const double v[] = {1e300, -1.7976931348623157e308, 3.5e51, 1e49 + 0.5};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        struct buf b;
        buf_open(&b);
        jsonw_double(&b.w, v[i]);
        const char *got = buf_done(&b);
        assert_true(strtod(got, NULL) == v[i]);
        free(b.data);
    }
    struct buf b;
    buf_open(&b);
    jsonw_double(&b.w, 1e300);
    assert_string_equal(buf_done(&b), "1.0000000000000001e+300");
    free(b.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nested_commas),
        cmocka_unit_test(test_long_document),
        cmocka_unit_test(test_huge_doubles),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_doubles),
        cmocka_unit_test(test_doubles_as_printf),
        cmocka_unit_test(test_metric_none_is_null_never_zero),
        cmocka_unit_test(test_pretty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
