/* Unit tests for src/backend/prometheus/prom_query.c: the fleet view's PromQL. Every
 * text from outside (a filter word, an instance, a --prometheus-match
 * value) is escaped, for RE2 where it is a regular expression and for a
 * PromQL string, so it is matched literally; the queries name the nodes
 * asked for and no other. (Their meaning is checked against a real
 * Prometheus: tests/e2e/test_fleet.sh, test_fleet_scale.sh.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/prometheus/prom_query.h"

static void test_regex_quote(void **state)
{
    (void)state;
    char out[128];
    promq_regex_quote(out, sizeof(out), "a.b|c*d+e?(f)[g]{h}^i$j\\k");
    assert_string_equal(out, "a\\.b\\|c\\*d\\+e\\?\\(f\\)\\[g\\]\\{h\\}\\^i\\$j\\\\k");
    /* UTF-8 is kept whole, also where the room ends */
    promq_regex_quote(out, sizeof(out), "h\xc3\xa9llo");
    assert_string_equal(out, "h\xc3\xa9llo");
    assert_int_equal(promq_regex_quote(out, 3, "h\xc3\xa9"), 1);
    assert_string_equal(out, "h");
    assert_int_equal(promq_regex_quote(out, 3, "a."), 1); /* "\." does not fit after a */
}

/* Parentheses and brackets balance outside string literals; every string
 * literal ends. */
static void assert_balanced(const char *q)
{
    int paren = 0, brace = 0, bracket = 0;
    bool str = false;
    for (const char *p = q; *p; p++) {
        if (str) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                str = false;
            continue;
        }
        switch (*p) {
        case '"': str = true; break;
        case '(': paren++; break;
        case ')': paren--; break;
        case '{': brace++; break;
        case '}': brace--; break;
        case '[': bracket++; break;
        case ']': bracket--; break;
        default: break;
        }
        if (paren < 0 || brace < 0 || bracket < 0)
            fail_msg("closes before it opens at %ld: %.80s", (long)(p - q), p);
    }
    assert_false(str);
    assert_int_equal(paren, 0);
    assert_int_equal(brace, 0);
    assert_int_equal(bracket, 0);
}

static void test_node_queries_balanced(void **state)
{
    (void)state;
    const char *filters[] = {"", "h200", "idle", "a.b (c", "1g.18 \"x\\y\" idle", "\xc3\xa9t\xc3\xa9"};
    const char *down[] = {"n1:9400", "we|ird\"(one"};
    for (size_t f = 0; f < sizeof(filters) / sizeof(filters[0]); f++)
        for (int q = 0; q < PQ_COUNT; q++)
            for (size_t nd = 0; nd < 3; nd++) {
                struct promq_scope sc = {.match = f % 2 ? "job=\"gpu\"" : "", .filter = filters[f]};
                char *s = promq_node((enum promq_node)q, &sc, down, q == PQ_TARGETS ? 0 : nd % 3);
                assert_non_null(s);
                assert_balanced(s);
                /* the --prometheus-match matchers in every selector that has braces */
                if (f % 2)
                    assert_non_null(strstr(s, "job=\"gpu\""));
                free(s);
            }
}

/* A filter word is matched literally, ignoring case, as part of a label:
 * its metacharacters escaped for RE2, then for the string. */
static void test_filter_word_literal(void **state)
{
    (void)state;
    struct promq_scope sc = {.match = "", .filter = "a.b\"c(d"};
    char *s = promq_node(PQ_LEAVES, &sc, NULL, 0);
    assert_non_null(s);
    assert_non_null(strstr(s, "model=~\"(?is).*a\\\\.b\\\"c\\\\(d.*\""));
    assert_non_null(strstr(s, "mig_profile=~\"(?is).*a\\\\.b\\\"c\\\\(d.*\""));
    assert_non_null(strstr(s, "pod=~\"(?is).*a\\\\.b\\\"c\\\\(d.*\""));
    free(s);
    /* no filter: no matcher of a word */
    sc.filter = "";
    s = promq_node(PQ_LEAVES, &sc, NULL, 0);
    assert_null(strstr(s, "(?is)"));
    free(s);
    /* idle is the rule, not a word: no label matched against it; the
     * exporters' idle series say which leaves are idle */
    sc.filter = "IDLE";
    s = promq_node(PQ_GPUS, &sc, NULL, 0);
    assert_null(strstr(s, "(?is).*IDLE"));
    assert_non_null(strstr(s, "migmon_mig_idle{} == 1"));
    assert_non_null(strstr(s, "migmon_gpu_idle{} == 1"));
    assert_null(strstr(s, "< 0.01"));
    free(s);
}

static size_t count_of(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

/* The summaries: every node's migmon_node_* by name and instance, the
 * down ones' counts of their last 10 minutes; under a filter only which
 * nodes give them. */
static void test_summary(void **state)
{
    (void)state;
    struct promq_scope sc = {.match = "job=\"gpu\"", .filter = ""};
    const char *down[] = {"d1:9400"};
    char *s = promq_node(PQ_SUMMARY, &sc, down, 1);
    assert_non_null(s);
    assert_string_equal(
        s, "max by (__name__, instance) ({__name__=~\"migmon_node_.+\",job=\"gpu\"}) or "
           "max by (__name__, instance, f) (label_replace(label_replace(last_over_time("
           "migmon_node_gpus{instance=~\"d1:9400\",job=\"gpu\"}[10m]), \"__name__\", "
           "\"migmon_node_gpus\", \"\", \"\"), \"f\", \"migmon_node_gpus\", \"\", \"\")) or "
           "max by (__name__, instance, f) (label_replace(label_replace(last_over_time("
           "migmon_node_mig_devices{instance=~\"d1:9400\",job=\"gpu\"}[10m]), \"__name__\", "
           "\"migmon_node_mig_devices\", \"\", \"\"), \"f\", \"migmon_node_mig_devices\", "
           "\"\", \"\"))");
    free(s);
    sc.filter = "h100";
    s = promq_node(PQ_SUMMARY, &sc, NULL, 0);
    assert_string_equal(s, "group by (instance) (migmon_node_gpus{job=\"gpu\"})");
    free(s);
}

/* Without a filter the aggregates are asked of the nodes without
 * summaries alone, every selector limited to them, and not at all when
 * there are none; under a filter of every node, the legacy ones judged
 * idle by the rule itself. */
static void test_legacy(void **state)
{
    (void)state;
    struct promq_scope sc = {.match = "", .filter = ""};
    assert_true(promq_node_wanted(PQ_TARGETS, &sc));
    assert_true(promq_node_wanted(PQ_SUMMARY, &sc));
    for (int q = PQ_LEAVES; q < PQ_COUNT; q++)
        assert_false(promq_node_wanted((enum promq_node)q, &sc));
    const char *legacy[] = {"n1:9400", "n.2"};
    sc.legacy = (struct promq_nodes){.inst = legacy, .n = 2};
    for (int q = PQ_LEAVES; q < PQ_COUNT; q++) {
        assert_true(promq_node_wanted((enum promq_node)q, &sc));
        char *s = promq_node((enum promq_node)q, &sc, NULL, 0);
        assert_non_null(s);
        size_t sels = count_of(s, "{");
        assert_true(sels > 0);
        assert_int_equal(count_of(s, "instance=~\"n1:9400|n\\\\.2\""), sels);
        free(s);
    }
    /* not known which nodes give summaries: every node's aggregates */
    sc.legacy = (struct promq_nodes){0};
    sc.legacy_all = true;
    assert_true(promq_node_wanted(PQ_LEAVES, &sc));
    char *s = promq_node(PQ_LEAVES, &sc, NULL, 0);
    assert_null(strstr(s, "instance=~"));
    assert_non_null(strstr(s, "< 0.01"));
    free(s);
    /* a filter: every node; the idle rule of the legacy ones, limited to them */
    sc.legacy_all = false;
    sc.legacy = (struct promq_nodes){.inst = legacy, .n = 1};
    sc.filter = "idle";
    assert_true(promq_node_wanted(PQ_GPUS, &sc));
    s = promq_node(PQ_GPUS, &sc, NULL, 0);
    assert_non_null(strstr(s, "migmon_mig_idle{} == 1"));
    assert_non_null(strstr(s, "migmon_mig_processes{instance=~\"n1:9400\"}"));
    assert_non_null(strstr(s, "migmon_device_info{}"));
    free(s);
}

static void test_filter_check(void **state)
{
    (void)state;
    char err[200];
    assert_int_equal(promq_filter_check("a b c d e f", err, sizeof(err)), 0);
    assert_int_equal(promq_filter_check("a b c d e f g", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "more than 6 words"));
    char longw[80];
    memset(longw, 'x', sizeof(longw) - 1);
    longw[sizeof(longw) - 1] = '\0';
    assert_int_equal(promq_filter_check(longw, err, sizeof(err)), -1);
    /* a filter that cannot be asked gives no query */
    struct promq_scope sc = {.match = "", .filter = "a b c d e f g"};
    assert_null(promq_node(PQ_LEAVES, &sc, NULL, 0));
}

/* The devices of the nodes asked for, and of no other: their instances
 * matched literally; the down ones of the last 10 minutes. */
static void test_detail_names_the_nodes(void **state)
{
    (void)state;
    struct promq_scope sc = {.match = "", .filter = ""};
    const char *up[] = {"10.0.0.1:9400", "a|b.c"}, *dn[] = {"x\"y:1"};
    char *s = promq_detail(PD_IDENT, &sc, up, 2, dn, 1);
    assert_non_null(s);
    assert_balanced(s);
    assert_non_null(strstr(s, "instance=~\"10\\\\.0\\\\.0\\\\.1:9400|a\\\\|b\\\\.c\""));
    assert_non_null(strstr(s, "last_over_time("));
    assert_non_null(strstr(s, "instance=~\"x\\\"y:1\""));
    assert_non_null(strstr(s, "mig_index")); /* the exporter's own slot of an instance */
    free(s);
    /* values only of nodes up; nothing asked of none */
    assert_null(promq_detail(PD_VALUES, &sc, NULL, 0, dn, 1));
    assert_null(promq_detail(PD_IDENT, &sc, NULL, 0, NULL, 0));
    s = promq_detail(PD_PROCS, &sc, up, 1, NULL, 0);
    assert_non_null(strstr(s, "instance=~\"10\\\\.0\\\\.0\\\\.1:9400\""));
    assert_null(strstr(s, "a\\\\|b"));
    free(s);
}

static void test_match_parse(void **state)
{
    (void)state;
    char out[256], err[256];
    assert_int_equal(promq_match_parse("{job=\"gpu\", cluster=~'a|b', env!=\"dev\",x!~\"y\"}", out,
                                       sizeof(out), err, sizeof(err)),
                     0);
    assert_string_equal(out, "job=\"gpu\",cluster=~\"a|b\",env!=\"dev\",x!~\"y\"");
    assert_int_equal(promq_match_parse("job=\"a\\\"b\\n\"", out, sizeof(out), err, sizeof(err)), 0);
    assert_string_equal(out, "job=\"a\\\"b\\n\"");
    assert_int_equal(promq_match_parse("{}", out, sizeof(out), err, sizeof(err)), 0);
    assert_string_equal(out, "");
    static const char *const bad[] = {"{job=gpu}", "{job=\"gpu\"", "{9a=\"x\"}", "{job==\"x\"}",
                                      "{job=\"x\"} y", "{job=\"x\" z=\"y\"}", "{job=\"\\q\"}",
                                      "up{job=\"x\"}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (promq_match_parse(bad[i], out, sizeof(out), err, sizeof(err)) != -1)
            fail_msg("%s was taken", bad[i]);
        assert_non_null(strstr(err, "--prometheus-match"));
    }
    assert_int_equal(promq_match_parse("{__name__=\"up\"}", out, sizeof(out), err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "__name__"));
    char many[512] = "{";
    for (int i = 0; i < 17; i++)
        snprintf(many + strlen(many), sizeof(many) - strlen(many), "%sl%d=\"v\"", i ? "," : "", i);
    strcat(many, "}");
    assert_int_equal(promq_match_parse(many, out, sizeof(out), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "more than 16"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regex_quote),         cmocka_unit_test(test_node_queries_balanced),
        cmocka_unit_test(test_filter_word_literal), cmocka_unit_test(test_filter_check),
        cmocka_unit_test(test_summary), cmocka_unit_test(test_legacy),
        cmocka_unit_test(test_detail_names_the_nodes), cmocka_unit_test(test_match_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
