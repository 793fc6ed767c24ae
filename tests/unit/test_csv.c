/* CSV rows (src/export/csv.c): RFC 4180 quoting, empty for unknown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "export/csv.h"

static const char *q(const char *s)
{
    static char out[256];
    size_t n = csv_quote(out, sizeof(out), s);
    assert_int_equal(n, strlen(out));
    return out;
}

static void test_quote(void **state)
{
    (void)state;
    assert_string_equal(q("NVIDIA H200"), "NVIDIA H200");
    assert_string_equal(q(""), "");
    assert_string_equal(q("a,b"), "\"a,b\"");
    assert_string_equal(q("say \"hi\""), "\"say \"\"hi\"\"\"");
    assert_string_equal(q("two\nlines"), "\"two\nlines\"");
    assert_string_equal(q("cr\r"), "\"cr\r\"");
    assert_string_equal(q(" padded"), "\" padded\"");
    assert_string_equal(q("padded "), "\"padded \"");
    assert_string_equal(q("back\\slash;semi"), "back\\slash;semi");
}

/* What a spreadsheet would run as a formula is written as text. */
static void test_quote_formulas(void **state)
{
    (void)state;
    assert_string_equal(q("=HYPERLINK(\"http://x\",\"y\")"),
                        "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
    assert_string_equal(q("+1"), "\"'+1\"");
    assert_string_equal(q("-bash"), "\"'-bash\"");
    assert_string_equal(q("@SUM(A1)"), "\"'@SUM(A1)\"");
    assert_string_equal(q("\tx"), "\"'\tx\"");
    assert_string_equal(q("\r=1"), "\"'\r=1\"");
    /* only the first character counts */
    assert_string_equal(q("a=b"), "a=b");
    assert_string_equal(q("MIG 1g.10gb-x"), "MIG 1g.10gb-x");
}

static void test_quote_truncates_like_snprintf(void **state)
{
    (void)state;
    char out[4];
    assert_int_equal(csv_quote(out, sizeof(out), "a,b"), 5);
    assert_string_equal(out, "\"a,");
}

static size_t count(const char *s, char c)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

static void test_rows_match_header(void **state)
{
    (void)state;
    struct device d;
    memset(&d, 0, sizeof(d));
    d.kind = DEV_GPU;
    d.mig_index = d.gi_id = d.ci_id = -1;
    for (int k = 0; k < M_COUNT; k++)
        d.m[k] = metric_none("NVML_ERROR_NOT_SUPPORTED");
    d.process_count = metric_none(NULL);
    d.m[M_TEMP] = metric_direct(0); /* a real 0 stays 0 */
    d.m[M_POWER] = metric_direct(61.25);
    snprintf(d.name, sizeof(d.name), "GPU, \"x\"");
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    s.wall_ns = 0;
    s.elapsed_ns = 42;
    s.devices = &d;
    s.ndevices = 1;

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    csv_write_header(f);
    csv_write_rows(f, &s);
    fclose(f);
    char *row = strchr(buf, '\n') + 1;
    *(row - 1) = '\0';
    /* the quoted name holds one comma of its own */
    assert_int_equal(count(buf, ','), count(row, ',') - 1);
    assert_non_null(strstr(row, "1970-01-01T00:00:00.000Z,42,gpu,0,,,,\"GPU, \"\"x\"\"\",,,,,,0,,"));
    /* lost 0, stall and five unknown metrics empty, temperature_c 0, power_w 61.25 */
    assert_non_null(strstr(buf, "stall,gpu_util_pct,mem_util_pct,sm_util_pct,memory_used_bytes,"
                                "memory_total_bytes,temperature_c,power_w,"));
    assert_non_null(strstr(row, ",0,,,,,,,0,61.25,"));
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quote),
        cmocka_unit_test(test_quote_formulas),
        cmocka_unit_test(test_quote_truncates_like_snprintf),
        cmocka_unit_test(test_rows_match_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
