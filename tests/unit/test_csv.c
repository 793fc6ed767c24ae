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
    /* lost 0, stall empty, five unknown metrics empty with source none,
     * temperature_c 0 and power_w 61.25 read directly */
    assert_non_null(strstr(buf, "stall,gpu_util_pct,gpu_util_pct_source,mem_util_pct,"
                                "mem_util_pct_source,sm_util_pct,sm_util_pct_source,"
                                "memory_used_bytes,memory_used_bytes_source,memory_total_bytes,"
                                "memory_total_bytes_source,temperature_c,temperature_c_source,"
                                "power_w,power_w_source,"));
    assert_non_null(strstr(row, ",0,,,none,,none,,none,,none,,none,0,direct,61.25,direct,"));
    free(buf);
}

/* Splits one CSV line (NUL-terminated) into at most max fields, in place:
 * quotes are dropped and "" becomes ". Returns the field count. */
static size_t split(char *line, char **out, size_t max)
{
    size_t n = 0;
    char *p = line;
    for (;;) {
        char *w = p, *start = p;
        if (*p == '"') {
            for (p++; *p; p++) {
                if (*p == '"' && p[1] == '"')
                    *w++ = *++p;
                else if (*p == '"')
                    break;
                else
                    *w++ = *p;
            }
            if (*p)
                p++;
        } else {
            while (*p && *p != ',')
                *w++ = *p++;
        }
        char sep = *p;
        *w = '\0';
        if (n < max)
            out[n++] = start;
        if (sep != ',')
            return n;
        p++;
    }
}

enum { MAXCOLS = 256 };

struct table {
    char *buf;
    size_t ncols, nrows;
    char *head[MAXCOLS];
    char *rows[4][MAXCOLS];
};

static void table_read(struct table *t, const struct snapshot *s)
{
    size_t len = 0;
    memset(t, 0, sizeof(*t));
    FILE *f = open_memstream(&t->buf, &len);
    csv_write_header(f);
    csv_write_rows(f, s);
    fclose(f);
    for (char *line = t->buf, *next; *line && t->nrows < 4; line = next) {
        next = strchr(line, '\n');
        assert_non_null(next); /* every line ends in one */
        *next++ = '\0';
        if (line == t->buf) {
            t->ncols = split(line, t->head, MAXCOLS);
            continue;
        }
        assert_int_equal(split(line, t->rows[t->nrows], MAXCOLS), t->ncols);
        t->nrows++;
    }
}

static const char *cell(const struct table *t, size_t row, const char *col)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (strcmp(t->head[i], col) == 0)
            return t->rows[row][i];
    fail_msg("no column %s", col);
    return NULL;
}

/* A GPU with two MIG devices under it: every metric has its source column
 * right after it; a MIG row leaves the GPU-wide values to the GPU row and
 * says so ("parent"), so a sum over rows counts each GPU once. */
static void test_sources_and_parent(void **state)
{
    (void)state;
    struct device d[3];
    memset(d, 0, sizeof(d));
    for (int i = 0; i < 3; i++) {
        d[i].kind = i ? DEV_MIG : DEV_GPU;
        d[i].mig_index = i - 1;
        d[i].parent_pos = i ? 0 : -1;
        d[i].gi_id = d[i].ci_id = i ? i : -1;
        for (int k = 0; k < M_COUNT; k++)
            d[i].m[k] = metric_direct(10 + k);
        d[i].m[M_POWER] = metric_direct(412.5); /* a MIG device reads the parent's */
        d[i].process_count = metric_direct(i);
    }
    snprintf(d[1].name, sizeof(d[1].name), "MIG, \"1g\""); /* quoted: the columns still line up */
    snprintf(d[2].node, sizeof(d[2].node), "gpu-node-07"); /* a fleet's device */
    d[0].m[M_GPU_UTIL].src = MSRC_GPM;
    d[0].m[M_TEMP].src = MSRC_CARRIED;
    d[1].m[M_GPU_UTIL].src = MSRC_GPM;
    d[1].m[M_SM_UTIL].src = MSRC_ESTIMATE;
    d[1].m[M_MEM_USED].src = MSRC_CARRIED;
    d[2].m[M_SM_UTIL].src = MSRC_PROCESS;
    d[2].m[M_MEM_UTIL] = metric_none("NVML_ERROR_NOT_SUPPORTED");
    d[0].m[M_FAN] = metric_none("NVML_ERROR_NOT_SUPPORTED");
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    s.devices = d;
    s.ndevices = 3;

    struct table t;
    table_read(&t, &s);
    assert_int_equal(t.nrows, 3);
    assert_int_equal(t.ncols, 15 + 2 * M_COUNT + 2 + 1);
    /* each value column, the metrics' and process_count, has its source after it */
    size_t first = 15;
    assert_string_equal(t.head[first], "gpu_util_pct");
    for (size_t i = first; i + 1 < t.ncols - 1; i += 2) {
        char want[80];
        snprintf(want, sizeof(want), "%s_source", t.head[i]);
        assert_string_equal(t.head[i + 1], want);
    }
    assert_string_equal(t.head[t.ncols - 3], "process_count");
    /* last: the node of a fleet's device, empty for this host's */
    assert_string_equal(t.head[t.ncols - 1], "node");
    assert_string_equal(cell(&t, 0, "node"), "");
    assert_string_equal(cell(&t, 2, "node"), "gpu-node-07");

    assert_string_equal(cell(&t, 1, "name"), "MIG, \"1g\"");
    assert_string_equal(cell(&t, 0, "gpu_util_pct_source"), "gpm");
    assert_string_equal(cell(&t, 0, "temperature_c"), "15");
    assert_string_equal(cell(&t, 0, "temperature_c_source"), "carried");
    assert_string_equal(cell(&t, 0, "fan_pct"), "");
    assert_string_equal(cell(&t, 0, "fan_pct_source"), "none");
    assert_string_equal(cell(&t, 1, "gpu_util_pct_source"), "gpm");
    assert_string_equal(cell(&t, 1, "sm_util_pct_source"), "estimate");
    assert_string_equal(cell(&t, 1, "memory_used_bytes"), "13");
    assert_string_equal(cell(&t, 1, "memory_used_bytes_source"), "carried");
    assert_string_equal(cell(&t, 2, "sm_util_pct_source"), "process");
    assert_string_equal(cell(&t, 2, "mem_util_pct"), "");
    assert_string_equal(cell(&t, 2, "mem_util_pct_source"), "none");
    assert_string_equal(cell(&t, 2, "process_count"), "2");
    assert_string_equal(cell(&t, 2, "process_count_source"), "direct");

    /* every GPU-wide metric: the value on the GPU row, "parent" on a MIG row */
    double power = 0;
    for (size_t r = 0; r < 3; r++) {
        for (int k = 0; k < M_COUNT; k++) {
            const struct metric_info *mi = metric_info((enum metric_id)k);
            char src[80];
            snprintf(src, sizeof(src), "%s_source", mi->name);
            if (r > 0 && mi->gpu_wide) {
                assert_string_equal(cell(&t, r, mi->name), "");
                assert_string_equal(cell(&t, r, src), "parent");
            } else {
                /* the value is written exactly when it is known */
                assert_int_equal(cell(&t, r, mi->name)[0] != '\0', metric_ok(&d[r].m[k]));
                assert_string_not_equal(cell(&t, r, src), "parent");
            }
        }
        power += atof(cell(&t, r, "power_w"));
    }
    assert_true(power == 412.5);
    free(t.buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quote),
        cmocka_unit_test(test_quote_formulas),
        cmocka_unit_test(test_quote_truncates_like_snprintf),
        cmocka_unit_test(test_rows_match_header),
        cmocka_unit_test(test_sources_and_parent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
