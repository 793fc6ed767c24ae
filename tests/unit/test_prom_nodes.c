/* Unit tests for src/backend/prometheus/prom_nodes.c: a fleet's nodes from the node
 * round's tagged aggregates: names (unique, else the instance), a target
 * down or never seen, ours over dcgm-exporter's, a failed query, the
 * filter, the cap on nodes held. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/prometheus/prom_nodes.h"
#include "core/health_rules.h"

/* One series: "a=up,instance=x" and its value. */
static void put(struct node_table *t, enum promq_node q, const char *labels, const char *value)
{
    struct prom_item it = {.value = value, .t = 1};
    static char buf[1024];
    snprintf(buf, sizeof(buf), "%s", labels);
    char *save = NULL;
    for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        *eq = '\0';
        it.key[it.nlab] = kv;
        it.val[it.nlab++] = eq + 1;
    }
    assert_int_equal(nodes_read(t, q, &it), 0);
}

static const struct node_summary *node(const struct node_table *t, const char *inst)
{
    const struct node_summary *n = nodes_find(t, inst);
    if (!n)
        fail_msg("no node %s", inst);
    return n;
}

static void ours(struct node_table *t, const char *inst)
{
    char l[256];
    snprintf(l, sizeof(l), "a=count,f=gpus,instance=%s", inst);
    put(t, PQ_GPUS, l, "8");
    snprintf(l, sizeof(l), "a=count,f=mig,instance=%s", inst);
    put(t, PQ_LEAVES, l, "56");
    snprintf(l, sizeof(l), "a=count,f=idle,instance=%s", inst);
    put(t, PQ_LEAVES, l, "50");
    snprintf(l, sizeof(l), "a=count,f=util,instance=%s", inst);
    put(t, PQ_LEAVES, l, "56");
    snprintf(l, sizeof(l), "a=sum,f=util,instance=%s", inst);
    put(t, PQ_LEAVES, l, "14");
    snprintf(l, sizeof(l), "a=max,f=util,instance=%s", inst);
    put(t, PQ_LEAVES, l, "0.95");
    snprintf(l, sizeof(l), "a=sum,f=mused,instance=%s", inst);
    put(t, PQ_LEAVES, l, "1000");
    snprintf(l, sizeof(l), "a=sum,f=mtotal,instance=%s", inst);
    put(t, PQ_LEAVES, l, "4000");
    snprintf(l, sizeof(l), "a=count,f=mused,instance=%s", inst);
    put(t, PQ_LEAVES, l, "56");
    snprintf(l, sizeof(l), "a=count,f=mnotok,instance=%s", inst);
    put(t, PQ_LEAVES, l, "2");
    snprintf(l, sizeof(l), "a=count,f=gnotok,instance=%s", inst);
    put(t, PQ_GPUS, l, "1");
    snprintf(l, sizeof(l), "a=count,f=gact,instance=%s", inst);
    put(t, PQ_GPUS, l, "1");
    snprintf(l, sizeof(l), "a=count,f=gverdict,instance=%s", inst);
    put(t, PQ_GPUS, l, "8");
    snprintf(l, sizeof(l), "a=count,f=mtotal,instance=%s", inst);
    put(t, PQ_LEAVES, l, "56");
}

static void test_a_round(void **state)
{
    (void)state;
    struct node_table t;
    nodes_init(&t);
    put(&t, PQ_TARGETS, "a=up,instance=a:9400", "1");
    put(&t, PQ_TARGETS, "a=up,instance=b:9400", "0");
    put(&t, PQ_TARGETS, "a=up,instance=c:9400", "1");
    put(&t, PQ_TARGETS, "a=up,instance=never:9400", "0");
    put(&t, PQ_TARGETS, "a=name,instance=a:9400,hostname=dgx-1", "1");
    put(&t, PQ_TARGETS, "a=name,instance=b:9400,hostname=dgx-2", "1");
    put(&t, PQ_TARGETS, "a=last,instance=b:9400", "970");
    put(&t, PQ_TARGETS, "a=dname,instance=c:9400,Hostname=dcgm-box", "1");
    /* down targets: the queries give them their last 10 minutes' devices */
    const char *down[8];
    assert_int_equal(nodes_down(&t, down, 8), 2);
    assert_string_equal(down[0], "b:9400");
    assert_string_equal(down[1], "never:9400");
    ours(&t, "a:9400");
    put(&t, PQ_GPUS, "a=count,f=gpus,instance=b:9400", "8");
    put(&t, PQ_LEAVES, "a=count,f=mig,instance=b:9400", "0");
    put(&t, PQ_DCGM_GPUS, "a=count,f=gpus,instance=c:9400", "1");
    put(&t, PQ_DCGM_LEAVES, "a=count,f=mig,instance=c:9400", "4");
    put(&t, PQ_DCGM_LEAVES, "a=max,f=util,instance=c:9400", "NaN"); /* no value */
    /* a series of a tag no query gives, or the targets' from another: left out */
    put(&t, PQ_LEAVES, "a=up,instance=a:9400", "0");
    put(&t, PQ_TARGETS, "a=count,f=gpus,instance=a:9400", "99");
    const char *why[PQ_COUNT] = {0}, *list_why = "x";
    nodes_finish(&t, 1000.0, why, "", &list_why);
    assert_null(list_why);
    assert_int_equal(t.n, 4);
    /* in name order: dcgm-box, dgx-1, dgx-2, then the instance of the never-seen */
    assert_string_equal(t.v[0].name, "dcgm-box");
    assert_string_equal(t.v[1].name, "dgx-1");
    assert_string_equal(t.v[2].name, "dgx-2");
    assert_string_equal(t.v[3].name, "never:9400");
    const struct node_summary *a = node(&t, "a:9400");
    assert_int_equal(a->up, 1);
    assert_false(a->dcgm);
    assert_float_equal(a->gpus.value, 8, 0);
    assert_float_equal(a->mig.value, 56, 0);
    assert_float_equal(a->idle.value, 50, 0);
    assert_float_equal(a->util_max.value, 95, 1e-9);
    assert_float_equal(a->util_mean.value, 25, 1e-9); /* 14 / 56 */
    assert_float_equal(a->mem_used.value, 1000, 0);
    assert_float_equal(a->mem_total.value, 4000, 0);
    assert_float_equal(a->not_ok.value, 3, 0); /* a GPU and two instances */
    assert_float_equal(a->gpus_action.value, 1, 0);
    assert_float_equal(a->gpus_warning.value, 0, 0);
    assert_int_equal(a->health, HEALTH_ACTION);
    assert_false(metric_ok(&a->pods));
    assert_string_equal(a->devs_why, "not asked for");
    /* down: its devices counted from the last 10 minutes, nothing else known */
    const struct node_summary *b = node(&t, "b:9400");
    assert_int_equal(b->up, 0);
    assert_float_equal(b->down_for_s, 30, 1e-9);
    assert_float_equal(b->gpus.value, 8, 0);
    assert_false(metric_ok(&b->util_max));
    assert_string_equal(b->idle.why, "the node's target is down (up == 0)");
    assert_int_equal(b->health, HEALTH_UNKNOWN);
    /* dcgm-exporter's: no verdict; a value that is no number is none */
    const struct node_summary *c = node(&t, "c:9400");
    assert_true(c->dcgm);
    assert_float_equal(c->mig.value, 4, 0);
    assert_false(metric_ok(&c->util_max));
    assert_false(metric_ok(&c->idle));
    assert_string_equal(c->not_ok.why, "dcgm-exporter gives no health verdict");
    /* never seen: listed, down, nothing known */
    const struct node_summary *n = node(&t, "never:9400");
    assert_false(n->seen);
    assert_int_equal(n->up, 0);
    assert_false(metric_ok(&n->gpus));
    assert_non_null(strstr(n->gpus.why, "never seen"));
    nodes_free(&t);
}

/* A node's summary (migmon_node_*, prom_node.c) gives its figures; its
 * devices' aggregates are not asked of it (nodes_legacy names the others);
 * a down node's counts come from its last 10 minutes; a family of a later
 * version is left out; under a filter a summary says only that the node
 * gives them. */
static void test_summaries(void **state)
{
    (void)state;
    struct node_table t;
    nodes_init(&t);
    put(&t, PQ_TARGETS, "a=up,instance=s:9400", "1");
    put(&t, PQ_TARGETS, "a=up,instance=old:9400", "1");
    put(&t, PQ_TARGETS, "a=up,instance=gone:9400", "0");
    put(&t, PQ_TARGETS, "a=last,instance=gone:9400", "940");
    put(&t, PQ_TARGETS, "a=name,instance=s:9400,hostname=hgx-7", "1");
    put(&t, PQ_TARGETS, "a=name,instance=old:9400,hostname=hgx-8", "1");
    static const char *const sum[][2] = {
        {"migmon_node_gpus", "8"},
        {"migmon_node_mig_devices", "0"},
        {"migmon_node_idle_devices", "2"},
        {"migmon_node_utilization_ratio_mean", "0.4"},
        {"migmon_node_utilization_ratio_max", "0.9"},
        {"migmon_node_memory_used_bytes", "100"},
        {"migmon_node_memory_total_bytes", "800"},
        {"migmon_node_memory_devices", "8"},
        {"migmon_node_devices_not_ok", "1"},
        {"migmon_node_gpus_action", "0"},
        {"migmon_node_gpus_warning", "1"},
        {"migmon_node_gpus_verdict", "8"},
        {"migmon_node_pods", "3"},
        {"migmon_node_something_later", "7"},
    };
    char l[256];
    for (size_t k = 0; k < sizeof(sum) / sizeof(sum[0]); k++) {
        snprintf(l, sizeof(l), "__name__=%s,instance=s:9400", sum[k][0]);
        put(&t, PQ_SUMMARY, l, sum[k][1]);
    }
    put(&t, PQ_SUMMARY, "__name__=migmon_node_gpus,instance=gone:9400,f=migmon_node_gpus", "4");
    put(&t, PQ_SUMMARY,
        "__name__=migmon_node_mig_devices,instance=gone:9400,f=migmon_node_mig_devices", "28");
    const char *legacy[4];
    assert_int_equal(nodes_legacy(&t, legacy, 4), 1);
    assert_string_equal(legacy[0], "old:9400");
    /* the legacy node's aggregates; the summary node's would be ignored */
    put(&t, PQ_GPUS, "a=count,f=gpus,instance=old:9400", "2");
    put(&t, PQ_DCGM_GPUS, "a=count,f=gpus,instance=s:9400", "99");
    const char *why[PQ_COUNT] = {0}, *list_why = NULL;
    why[PQ_LEAVES] = "Prometheus: the nodes' instances query: timeout"; /* the legacy ones' */
    nodes_finish(&t, 1000.0, why, "", &list_why);
    const struct node_summary *s = node(&t, "s:9400");
    assert_false(s->dcgm);
    assert_float_equal(s->gpus.value, 8, 0);
    assert_float_equal(s->mig.value, 0, 0);
    assert_float_equal(s->idle.value, 2, 0);
    assert_float_equal(s->util_mean.value, 40, 1e-9);
    assert_float_equal(s->util_max.value, 90, 1e-9);
    assert_float_equal(s->mem_used.value, 100, 0);
    assert_float_equal(s->mem_total.value, 800, 0);
    assert_float_equal(s->mem_devices.value, 8, 0);
    assert_float_equal(s->not_ok.value, 1, 0);
    assert_float_equal(s->gpus_warning.value, 1, 0);
    assert_int_equal(s->health, HEALTH_WARNING);
    assert_float_equal(s->pods.value, 3, 0);
    /* the legacy node: its aggregates, and the failure of their query */
    const struct node_summary *o = node(&t, "old:9400");
    assert_float_equal(o->gpus.value, 2, 0);
    assert_false(metric_ok(&o->idle));
    assert_string_equal(o->idle.why, "Prometheus: the nodes' instances query: timeout");
    const struct node_summary *g = node(&t, "gone:9400");
    assert_int_equal(g->up, 0);
    assert_float_equal(g->gpus.value, 4, 0);
    assert_float_equal(g->mig.value, 28, 0);
    assert_float_equal(g->down_for_s, 60, 1e-9);
    nodes_free(&t);

    /* under a filter: which nodes give summaries, no figure from them */
    nodes_init(&t);
    put(&t, PQ_TARGETS, "a=up,instance=s:9400", "1");
    put(&t, PQ_TARGETS, "a=up,instance=old:9400", "1");
    put(&t, PQ_SUMMARY, "instance=s:9400", "1");
    assert_int_equal(nodes_legacy(&t, legacy, 4), 1);
    assert_string_equal(legacy[0], "old:9400");
    put(&t, PQ_GPUS, "a=count,f=gpus,instance=s:9400", "3");
    nodes_finish(&t, 1000.0, (const char *[PQ_COUNT]){0}, "h100", &list_why);
    assert_int_equal(t.n, 1); /* old matched nothing */
    assert_float_equal(node(&t, "s:9400")->gpus.value, 3, 0);
    nodes_free(&t);
}

/* The nodes a filter word names: by instance or host name, ignoring case. */
static void test_nodes_with_word(void **state)
{
    (void)state;
    struct node_table t;
    nodes_init(&t);
    put(&t, PQ_TARGETS, "a=up,instance=10.0.0.1:9400", "1");
    put(&t, PQ_TARGETS, "a=up,instance=10.0.0.2:9400", "1");
    put(&t, PQ_TARGETS, "a=up,instance=rack7-b:9400", "1");
    put(&t, PQ_TARGETS, "a=name,instance=10.0.0.1:9400,hostname=Rack7-a", "1");
    put(&t, PQ_TARGETS, "a=dname,instance=10.0.0.2:9400,Hostname=dcgm-rack9", "1");
    const char *out[4];
    assert_int_equal(nodes_with_word(&t, "rack7", out, 4), 2);
    assert_string_equal(out[0], "10.0.0.1:9400");
    assert_string_equal(out[1], "rack7-b:9400");
    assert_int_equal(nodes_with_word(&t, "RACK9", out, 4), 1);
    assert_string_equal(out[0], "10.0.0.2:9400");
    assert_int_equal(nodes_with_word(&t, "0.0.", out, 4), 2);
    assert_int_equal(nodes_with_word(&t, "nowhere", out, 4), 0);
    assert_int_equal(nodes_with_word(&t, "rack", out, 1), 1); /* at most max */
    nodes_free(&t);
}

static void test_names(void **state)
{
    (void)state;
    struct node_table t;
    nodes_init(&t);
    /* three exporters on one host name: each named by its instance */
    put(&t, PQ_TARGETS, "a=name,instance=x:1,hostname=vm", "1");
    put(&t, PQ_TARGETS, "a=name,instance=y:1,hostname=vm", "1");
    put(&t, PQ_TARGETS, "a=name,instance=z:1,hostname=vm", "1");
    put(&t, PQ_TARGETS, "a=name,instance=w:1,hostname=solo", "1");
    /* ours and dcgm-exporter's on one target: ours name it */
    put(&t, PQ_TARGETS, "a=dname,instance=w:1,Hostname=other", "1");
    /* a control byte from another host is made safe */
    put(&t, PQ_TARGETS, "a=name,instance=e:1,hostname=bad\x1b[2J", "1");
    const char *why[PQ_COUNT] = {0}, *lw;
    nodes_finish(&t, 0, why, "", &lw);
    assert_string_equal(node(&t, "x:1")->name, "x:1");
    assert_string_equal(node(&t, "y:1")->name, "y:1");
    assert_string_equal(node(&t, "z:1")->name, "z:1");
    assert_string_equal(node(&t, "w:1")->name, "solo");
    assert_null(strchr(node(&t, "e:1")->name, '\x1b'));
    nodes_free(&t);
}

/* Ours win over dcgm-exporter's on a target that has both, whichever
 * answer comes first; a failed query makes its figures none with why. */
static void test_ours_first_and_failures(void **state)
{
    (void)state;
    struct node_table t;
    nodes_init(&t);
    put(&t, PQ_TARGETS, "a=up,instance=m:1", "1");
    put(&t, PQ_DCGM_LEAVES, "a=count,f=mig,instance=m:1", "4");
    ours(&t, "m:1");
    put(&t, PQ_DCGM_GPUS, "a=count,f=gpus,instance=m:1", "1");
    put(&t, PQ_TARGETS, "a=up,instance=f:1", "1");
    put(&t, PQ_TARGETS, "a=name,instance=f:1,hostname=f", "1");
    const char *why[PQ_COUNT] = {0}, *lw;
    why[PQ_GPUS] = "Prometheus: the nodes' GPUs query: no answer within 900 ms";
    nodes_finish(&t, 0, why, "", &lw);
    const struct node_summary *m = node(&t, "m:1");
    assert_false(m->dcgm);
    assert_float_equal(m->mig.value, 56, 0);
    /* read before its query failed (a series is a node's whole figure) */
    assert_float_equal(m->gpus.value, 8, 0);
    /* a figure of several series (its not-ok count) is not to be trusted */
    assert_string_equal(m->not_ok.why, why[PQ_GPUS]);
    assert_string_equal(m->gpus_action.why, why[PQ_GPUS]);
    /* a node the failed query would have counted: its count is unknown, not 0 */
    assert_false(metric_ok(&node(&t, "f:1")->gpus));
    assert_string_equal(node(&t, "f:1")->gpus.why, why[PQ_GPUS]);
    nodes_free(&t);
}

/* Under a filter, a node with no device it matches is not listed; a target
 * never seen is, when every word is in its instance. */
static void test_filter(void **state)
{
    (void)state;
    struct node_table t;
    nodes_init(&t);
    put(&t, PQ_TARGETS, "a=up,instance=a:1", "1");
    put(&t, PQ_TARGETS, "a=up,instance=b:1", "1");
    put(&t, PQ_TARGETS, "a=up,instance=rack7-x:1", "0");
    put(&t, PQ_TARGETS, "a=up,instance=rack8-y:1", "0");
    put(&t, PQ_GPUS, "a=count,f=gpus,instance=a:1", "1");
    put(&t, PQ_LEAVES, "a=count,f=mig,instance=a:1", "2");
    const char *why[PQ_COUNT] = {0}, *lw;
    nodes_finish(&t, 0, why, "RACK7 x", &lw);
    assert_int_equal(t.n, 2);
    assert_non_null(nodes_find(&t, "a:1"));
    assert_non_null(nodes_find(&t, "rack7-x:1"));
    assert_null(nodes_find(&t, "b:1"));
    assert_null(nodes_find(&t, "rack8-y:1"));
    nodes_free(&t);
}

static void test_cap(void **state)
{
    (void)state;
    struct node_table t;
    nodes_init(&t);
    char l[64];
    for (int i = 0; i < FLEET_NODES_MAX + 10; i++) {
        snprintf(l, sizeof(l), "a=up,instance=n%d:1", i);
        put(&t, PQ_TARGETS, l, "1");
    }
    const char *why[PQ_COUNT] = {0}, *lw = NULL;
    nodes_finish(&t, 0, why, "", &lw);
    assert_int_equal(t.n, FLEET_NODES_MAX);
    assert_non_null(lw);
    assert_non_null(strstr(lw, "more than 20000 nodes"));
    /* each found again by its instance after the sort */
    assert_non_null(nodes_find(&t, "n0:1"));
    assert_non_null(nodes_find(&t, "n19999:1"));
    assert_null(nodes_find(&t, "n20005:1"));
    nodes_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_round),  cmocka_unit_test(test_names),
        cmocka_unit_test(test_ours_first_and_failures), cmocka_unit_test(test_filter),
        cmocka_unit_test(test_cap), cmocka_unit_test(test_summaries),
        cmocka_unit_test(test_nodes_with_word),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
