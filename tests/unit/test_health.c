/*
 * The health rules (health.h): each rule fires on its input, the verdict is
 * the worst rule's level, unknown when nothing could be read, and events
 * count for the device they are attributed to, its GPU and its instances.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/snapshot.h"
#include "engine/health.h"

/* A GPU (position 0) with two MIG instances (1, 2), every health input none
 * and no events to be had. */
static void three(struct snapshot *s, struct device d[3], struct gpu_event *ev)
{
    memset(s, 0, sizeof(*s));
    memset(d, 0, 3 * sizeof(*d));
    for (int i = 0; i < 3; i++) {
        d[i].kind = i ? DEV_MIG : DEV_GPU;
        d[i].parent_pos = i ? 0 : -1;
        d[i].gi_id = i ? i : -1;
        for (int k = 0; k < M_COUNT; k++)
            d[i].m[k] = metric_none("NVML_ERROR_NOT_SUPPORTED");
    }
    s->devices = d;
    s->ndevices = 3;
    s->events = ev;
    s->events_why = "the driver has no event functions";
}

/* Events flow and every device's own are watched (events_apply: its Xid
 * count is read, 0). */
static void watched(struct snapshot *s)
{
    s->events_why = NULL;
    for (size_t i = 0; i < s->ndevices; i++)
        s->devices[i].m[M_XID_ERRORS] = metric_direct(0);
}

static unsigned rules_named(uint32_t bits, const char **names, size_t max)
{
    struct health_rule_info r[16];
    size_t n = health_rules_of(bits, r, 16);
    for (size_t i = 0; i < n && i < max; i++)
        names[i] = r[i].name;
    return (unsigned)n;
}

static void test_nothing_read_is_unknown(void **state)
{
    (void)state;
    struct snapshot s;
    struct device d[3];
    three(&s, d, NULL);
    health_evaluate(&s);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(d[i].health, HEALTH_UNKNOWN);
        assert_int_equal(d[i].health_rules, 0);
    }
    assert_string_equal(health_level_name(d[0].health), "unknown");
}

static void test_clear_counters_are_ok(void **state)
{
    (void)state;
    struct snapshot s;
    struct device d[3];
    three(&s, d, NULL);
    for (int i = 0; i < 3; i++) {
        d[i].m[M_REMAP_PENDING] = metric_direct(0);
        d[i].m[M_REMAP_FAILURE] = metric_direct(0);
        d[i].m[M_TEMP] = metric_direct(61);
        d[i].m[M_TEMP_SLOWDOWN] = metric_direct(87);
    }
    health_evaluate(&s);
    for (int i = 0; i < 3; i++)
        assert_int_equal(d[i].health, HEALTH_OK);
    assert_string_equal(health_level_name(HEALTH_OK), "ok");
}

/* A pending remap needs a reset (action); a hot GPU is a warning; both
 * fired, the worse wins and both are named, in rule order. */
static void test_worst_rule_wins(void **state)
{
    (void)state;
    struct snapshot s;
    struct device d[3];
    three(&s, d, NULL);
    d[0].m[M_TEMP] = metric_direct(88);
    d[0].m[M_TEMP_SLOWDOWN] = metric_direct(87);
    health_evaluate(&s);
    assert_int_equal(d[0].health, HEALTH_WARNING);
    const char *names[4];
    assert_int_equal(rules_named(d[0].health_rules, names, 4), 1);
    assert_string_equal(names[0], "at-slowdown-temperature");
    d[0].m[M_REMAP_PENDING] = metric_direct(1);
    health_evaluate(&s);
    assert_int_equal(d[0].health, HEALTH_ACTION);
    assert_int_equal(rules_named(d[0].health_rules, names, 4), 2);
    assert_string_equal(names[0], "row-remap-pending");
    assert_string_equal(names[1], "at-slowdown-temperature");
    struct health_rule_info r[1];
    assert_int_equal(health_rules_of(d[0].health_rules, r, 1), 1); /* max is kept */
    assert_int_equal(r[0].level, HEALTH_ACTION);
    assert_non_null(strstr(r[0].action, "reset the GPU"));
}

static void test_remap_failure_and_lost(void **state)
{
    (void)state;
    struct snapshot s;
    struct device d[3];
    three(&s, d, NULL);
    d[1].m[M_REMAP_FAILURE] = metric_direct(1);
    d[2].lost = true;
    health_evaluate(&s);
    assert_int_equal(d[0].health, HEALTH_UNKNOWN); /* the flags are per device */
    assert_int_equal(d[1].health, HEALTH_ACTION);
    const char *names[2];
    assert_int_equal(rules_named(d[1].health_rules, names, 2), 1);
    assert_string_equal(names[0], "row-remap-failure");
    assert_int_equal(d[2].health, HEALTH_ACTION);
    assert_int_equal(rules_named(d[2].health_rules, names, 2), 1);
    assert_string_equal(names[0], "gpu-lost");
}

/* Xid 94 on instance 2: a warning there and on the GPU, not on instance 1.
 * Xid 79 on the GPU: action on the GPU and on both instances. */
static void test_events_attributed(void **state)
{
    (void)state;
    struct snapshot s;
    struct device d[3];
    struct gpu_event ev[2];
    memset(ev, 0, sizeof(ev));
    three(&s, d, ev);
    watched(&s);
    ev[0] = (struct gpu_event){.device_pos = 2, .gi_id = 2, .ci_id = 0, .xid = 94};
    s.nevents = 1;
    health_evaluate(&s);
    assert_int_equal(d[1].health, HEALTH_OK); /* events flow and none is its */
    assert_int_equal(d[2].health, HEALTH_WARNING);
    assert_int_equal(d[0].health, HEALTH_WARNING);
    const char *names[2];
    assert_int_equal(rules_named(d[2].health_rules, names, 2), 1);
    assert_string_equal(names[0], "xid-contained-ecc");
    ev[1] = (struct gpu_event){.device_pos = 0, .gi_id = -1, .ci_id = -1, .xid = 79};
    s.nevents = 2;
    health_evaluate(&s);
    for (int i = 0; i < 3; i++)
        assert_int_equal(d[i].health, HEALTH_ACTION);
    assert_int_equal(rules_named(d[1].health_rules, names, 2), 1);
    assert_string_equal(names[0], "xid-needs-reset");
    /* an ECC event (no Xid code) and one for a GPU not in the snapshot */
    ev[0] = (struct gpu_event){.device_pos = 1, .xid = 0, .type = 2};
    ev[1] = (struct gpu_event){.device_pos = -1, .xid = 79};
    health_evaluate(&s);
    for (int i = 0; i < 3; i++)
        assert_int_equal(d[i].health, HEALTH_OK);
}

/* Events flow, but a device whose own are not watched has no reading in
 * them: a GPU the events helper could not register is unknown, not ok. A
 * MIG instance whose own do not reach the monitor (unprivileged) still has
 * its GPU's, which count for it: ok, and an Xid of the GPU reaches it. */
static void test_events_not_watched(void **state)
{
    (void)state;
    struct snapshot s;
    struct device d[3];
    struct gpu_event ev[1];
    memset(ev, 0, sizeof(ev));
    three(&s, d, ev);
    watched(&s);
    d[0].m[M_XID_ERRORS] = metric_none("this GPU does not report Xid events");
    d[1].m[M_XID_ERRORS] = d[2].m[M_XID_ERRORS] = metric_none("not watched");
    health_evaluate(&s);
    for (int i = 0; i < 3; i++)
        assert_int_equal(d[i].health, HEALTH_UNKNOWN);
    d[0].m[M_XID_ERRORS] = metric_direct(0);
    health_evaluate(&s);
    for (int i = 0; i < 3; i++)
        assert_int_equal(d[i].health, HEALTH_OK);
    ev[0] = (struct gpu_event){.device_pos = 0, .gi_id = -1, .ci_id = -1, .xid = 79};
    s.nevents = 1;
    health_evaluate(&s);
    for (int i = 0; i < 3; i++)
        assert_int_equal(d[i].health, HEALTH_ACTION);
}

static void test_application_fault(void **state)
{
    (void)state;
    struct snapshot s;
    struct device d[3];
    struct gpu_event ev[1] = {{.device_pos = 1, .gi_id = 1, .ci_id = 0, .xid = 43}};
    three(&s, d, ev);
    watched(&s);
    s.nevents = 1;
    health_evaluate(&s);
    assert_int_equal(d[1].health, HEALTH_WARNING);
    struct health_rule_info r[2];
    assert_int_equal(health_rules_of(d[1].health_rules, r, 2), 1);
    assert_string_equal(r[0].name, "xid-application-fault");
    assert_string_equal(health_level_name(r[0].level), "warning");
    assert_string_equal(health_level_name(99), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_read_is_unknown),
        cmocka_unit_test(test_clear_counters_are_ok),
        cmocka_unit_test(test_worst_rule_wins),
        cmocka_unit_test(test_remap_failure_and_lost),
        cmocka_unit_test(test_events_attributed),
        cmocka_unit_test(test_events_not_watched),
        cmocka_unit_test(test_application_fault),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
