/* Unit tests for src/backend/prometheus/prom_stream.c: an instant query's answer read
 * as it arrives, whole or a byte at a time, every JSON escape, the
 * envelope's members in any order, and answers it must refuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/prometheus/prom_stream.h"

/* What the callback saw: the series as "k=v,k=v|value|time" lines. */
struct seen {
    char text[8192];
    int n;
    int stop_at; /* stop at this series (1-based); 0 never */
};

static int collect(void *ctx, const struct prom_item *it)
{
    struct seen *s = ctx;
    size_t len = strlen(s->text);
    for (size_t i = 0; i < it->nlab; i++)
        len += (size_t)snprintf(s->text + len, sizeof(s->text) - len, "%s%s=%s", i ? "," : "",
                                it->key[i], it->val[i]);
    snprintf(s->text + len, sizeof(s->text) - len, "|%s|%.3f\n", it->value ? it->value : "-",
             it->t);
    s->n++;
    return s->stop_at && s->n >= s->stop_at;
}

/* Reads text in chunks of `chunk` bytes (0: whole); returns
 * prom_stream_end's status, the error in err. */
static int read_answer(const char *text, size_t chunk, struct seen *s, char *err, size_t errlen)
{
    struct prom_stream ps;
    assert_int_equal(prom_stream_init(&ps, collect, s), 0);
    size_t n = strlen(text);
    if (!chunk)
        chunk = n ? n : 1;
    for (size_t i = 0; i < n; i += chunk) {
        size_t k = n - i < chunk ? n - i : chunk;
        if (prom_stream_feed(&ps, text + i, k) != 0)
            break;
    }
    int rc = prom_stream_end(&ps, 200, err, errlen);
    prom_stream_free(&ps);
    return rc;
}

static const char *ANSWER =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
    "{\"metric\":{\"__name__\":\"up\",\"instance\":\"a:9400\"},\"value\":[1733580000.25,\"1\"]},"
    " {\"metric\" : {\"instance\":\"b\\\"q\\\\\\n\\u00e9\\ud83d\\ude00\\/\"} ,\"value\":[17e8,\"NaN\"]}"
    "]}}";

static const char *EXPECT = "__name__=up,instance=a:9400|1|1733580000.250\n"
                            "instance=b\"q\\\n\xc3\xa9\xf0\x9f\x98\x80/|NaN|1700000000.000\n";

static void test_whole_and_bytewise(void **state)
{
    (void)state;
    size_t chunks[] = {0, 1, 2, 3, 7, 64};
    for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
        struct seen s = {0};
        char err[300] = "";
        assert_int_equal(read_answer(ANSWER, chunks[c], &s, err, sizeof(err)), 0);
        assert_int_equal(s.n, 2);
        assert_string_equal(s.text, EXPECT);
    }
}

static void test_members_any_order(void **state)
{
    (void)state;
    /* result before resultType, data before status, unknown members
     * (VictoriaMetrics' isPartial, warnings, stats) skipped whatever they hold */
    const char *a = "{\"data\":{\"result\":[{\"value\":[2,\"7\"],\"metric\":{\"k\":\"v\"}}],"
                    "\"stats\":{\"x\":[1,{\"y\":null}]},\"resultType\":\"vector\"},"
                    "\"isPartial\":false,\"warnings\":[\"w\"],\"status\":\"success\"}";
    struct seen s = {0};
    char err[300] = "";
    assert_int_equal(read_answer(a, 5, &s, err, sizeof(err)), 0);
    assert_string_equal(s.text, "k=v|7|2.000\n");
    /* an empty vector */
    struct seen e = {0};
    assert_int_equal(read_answer("{\"status\":\"success\",\"data\":{\"resultType\":\"vector\","
                                 "\"result\":[]}}",
                                 1, &e, err, sizeof(err)),
                     0);
    assert_int_equal(e.n, 0);
}

static void test_label_helpers(void **state)
{
    (void)state;
    struct prom_item it = {.nlab = 2, .key = {"a", "b"}, .val = {"1", "two"}, .value = "0.5"};
    assert_string_equal(prom_item_label(&it, "b"), "two");
    assert_string_equal(prom_item_label(&it, "c"), "");
    double v = 0;
    assert_true(prom_item_value(&it, &v));
    assert_true(v == 0.5);
    it.value = "NaN";
    assert_false(prom_item_value(&it, &v));
    it.value = "+Inf";
    assert_false(prom_item_value(&it, &v));
    it.value = "1x";
    assert_false(prom_item_value(&it, &v));
    it.value = NULL;
    assert_false(prom_item_value(&it, &v));
}

/* Answers refused, each with the start of its reason. */
static void test_refused(void **state)
{
    (void)state;
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error at char 3\"}",
         "HTTP 200: parse error at char 3"},
        {"<html>502 Bad Gateway</html>", "HTTP 200: the answer is not JSON"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":{},"
         "\"values\":[[1,\"1\"]]}]}}",
         "HTTP 200: the answer is a range vector"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":[1,\"1\"]}}",
         "HTTP 200: the answer is not an instant vector"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{"
         "\"a\":1},\"value\":[1,\"1\"]}]}}",
         "HTTP 200: a series' label value"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{},"
         "\"value\":[1,\"1\"]}",
         "HTTP 200: the answer ends before"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}x",
         "HTTP 200: the answer goes on after its end"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[],}}",
         "HTTP 200: the answer is not JSON"},
        {"{\"status\":\"success\",\"a\":\"\\ud800x\"}", "HTTP 200: the answer is not JSON (a lone"},
        {"{\"status\":\"success\",\"a\":\"\\q\"}", "HTTP 200: the answer is not JSON (an unknown"},
        {"{\"status\":\"success\",\"a\":\"x\ty\"}", "HTTP 200: the answer is not JSON (a control"},
        {"{\"status\":\"success\",\"a\":01}", "HTTP 200: the answer is not JSON (a word"},
        {"{\"status\":\"success\",\"a\":tru}", "HTTP 200: the answer is not JSON (a word"},
        {"{\"status\":\"success\"]", "HTTP 200: the answer is not JSON (a close"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\"}}",
         "answer is not an instant vector (resultType vector)"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"string\",\"result\":[1,\"s\"]}}",
         "HTTP 200: the answer is not an instant vector"},
        {"", "HTTP 200: the answer ends before"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        for (size_t chunk = 0; chunk < 2; chunk++) {
            struct seen s = {0};
            char err[300] = "";
            if (read_answer(bad[i].text, chunk, &s, err, sizeof(err)) != -1)
                fail_msg("answer %zu (chunk %zu) was taken", i, chunk);
            if (strncmp(err, bad[i].why, strlen(bad[i].why)) != 0)
                fail_msg("answer %zu: got '%s', want '%s…'", i, err, bad[i].why);
        }
    }
}

/* "resultType":"vector" without a result is no answer; noticed above.
 * A series with no value is handed over with value NULL. */
static void test_histogram_sample(void **state)
{
    (void)state;
    const char *a = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
                    "{\"metric\":{\"k\":\"v\"},\"histogram\":[1,{\"count\":\"2\",\"buckets\":[[0,"
                    "\"1\",\"2\",\"3\"]]}]}]}}";
    struct seen s = {0};
    char err[300] = "";
    assert_int_equal(read_answer(a, 3, &s, err, sizeof(err)), 0);
    assert_string_equal(s.text, "k=v|-|0.000\n");
}

/* Bounds: nesting, a long string, too many labels, the callback's stop. */
static void test_bounds(void **state)
{
    (void)state;
    char deep[200] = "";
    for (int i = 0; i < 40; i++)
        strcat(deep, "[");
    struct seen s = {0};
    char err[300] = "";
    assert_int_equal(read_answer(deep, 0, &s, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "deeper than 32"));

    size_t big = 70000;
    char *longs = malloc(big + 64);
    strcpy(longs, "{\"status\":\"");
    memset(longs + strlen(longs), 'x', big);
    strcpy(longs + 11 + big, "\"}");
    assert_int_equal(read_answer(longs, 4096, &s, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "longer than 64 KiB"));
    free(longs);

    char many[8192] = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
                      "{\"metric\":{";
    for (int i = 0; i < 65; i++)
        snprintf(many + strlen(many), sizeof(many) - strlen(many), "%s\"l%d\":\"v\"", i ? "," : "",
                 i);
    strcat(many, "},\"value\":[1,\"1\"]}]}}");
    assert_int_equal(read_answer(many, 0, &s, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "more than 64 labels"));

    struct seen st = {.stop_at = 1};
    assert_int_equal(read_answer(ANSWER, 0, &st, err, sizeof(err)), -1);
    assert_int_equal(st.n, 1);
    assert_non_null(strstr(err, "stopped by its reader"));
}

/* Many series: each is handed over and forgotten (the reader's memory
 * does not grow with the answer; valgrind and ASan runs check the rest). */
static int count_only(void *ctx, const struct prom_item *it)
{
    long *n = ctx;
    double v;
    if (prom_item_value(it, &v) && v == (double)(*n % 7))
        (*n)++;
    return 0;
}

static void test_many(void **state)
{
    (void)state;
    struct prom_stream ps;
    long n = 0;
    assert_int_equal(prom_stream_init(&ps, count_only, &n), 0);
    const char *head = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[";
    assert_int_equal(prom_stream_feed(&ps, head, strlen(head)), 0);
    char item[256];
    for (long i = 0; i < 200000; i++) {
        int k = snprintf(item, sizeof(item),
                         "%s{\"metric\":{\"instance\":\"node%06ld:9400\",\"a\":\"gpus\"},"
                         "\"value\":[1733580000.5,\"%ld\"]}",
                         i ? "," : "", i, i % 7);
        assert_int_equal(prom_stream_feed(&ps, item, (size_t)k), 0);
    }
    assert_int_equal(prom_stream_feed(&ps, "]}}", 3), 0);
    char err[200];
    assert_int_equal(prom_stream_end(&ps, 200, err, sizeof(err)), 0);
    assert_int_equal(prom_stream_items(&ps), 200000);
    assert_int_equal(n, 200000);
    assert_true(ps.tok_cap <= 1024);
    prom_stream_free(&ps);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_and_bytewise), cmocka_unit_test(test_members_any_order),
        cmocka_unit_test(test_label_helpers),      cmocka_unit_test(test_refused),
        cmocka_unit_test(test_histogram_sample),   cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
