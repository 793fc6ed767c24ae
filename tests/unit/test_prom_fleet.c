/* Unit tests for src/fleet/prom_fleet.c and promql_quote: a fleet built
 * from query answers (our series, dcgm-exporter's, a node down, a failed
 * query), and label values quoted for PromQL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fleet/prom_client.h"
#include "fleet/prom_fleet.h"
#include "health.h"

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("bad fixture: %s", e.text);
    return j;
}

static const char *UP = "[{\"metric\":{\"instance\":\"a:9400\"},\"value\":[1,\"1\"]},"
                        "{\"metric\":{\"instance\":\"b:9400\"},\"value\":[1,\"0\"]},"
                        "{\"metric\":{\"instance\":\"d:9400\"},\"value\":[1,\"1\"]}]";
static const char *IDENT =
    "[{\"metric\":{\"__name__\":\"migmon_host_info\",\"instance\":\"a:9400\",\"hostname\":\"node-a\"},\"value\":[1,\"1\"]},"
    "{\"metric\":{\"__name__\":\"migmon_host_info\",\"instance\":\"b:9400\",\"hostname\":\"node-b\"},\"value\":[1,\"1\"]},"
    "{\"metric\":{\"__name__\":\"migmon_last_sample_timestamp_seconds\",\"instance\":\"b:9400\"},\"value\":[1,\"970\"]},"
    "{\"metric\":{\"__name__\":\"migmon_device_info\",\"instance\":\"a:9400\",\"gpu\":\"0\",\"uuid\":\"GPU-A\",\"model\":\"NVIDIA H200\",\"mig_mode\":\"enabled\",\"compute_capability\":\"9.0\"},\"value\":[1,\"1\"]},"
    "{\"metric\":{\"__name__\":\"migmon_mig_info\",\"instance\":\"a:9400\",\"gpu\":\"0\",\"uuid\":\"GPU-A\",\"model\":\"NVIDIA H200\",\"gpu_instance_id\":\"5\",\"compute_instance_id\":\"0\",\"mig_profile\":\"2g.35gb\",\"mig_uuid\":\"MIG-5\"},\"value\":[1,\"1\"]},"
    "{\"metric\":{\"__name__\":\"migmon_mig_info\",\"instance\":\"a:9400\",\"gpu\":\"0\",\"uuid\":\"GPU-A\",\"model\":\"NVIDIA H200\",\"gpu_instance_id\":\"1\",\"compute_instance_id\":\"0\",\"mig_profile\":\"3g.71gb\",\"mig_uuid\":\"MIG-1\"},\"value\":[1,\"1\"]},"
    "{\"metric\":{\"__name__\":\"migmon_device_info\",\"instance\":\"b:9400\",\"gpu\":\"0\",\"uuid\":\"GPU-B\",\"model\":\"NVIDIA A100\"},\"value\":[1,\"1\"]}]";
static const char *VALUES =
    "[{\"metric\":{\"__name__\":\"migmon_mig_utilization_ratio\",\"instance\":\"a:9400\",\"uuid\":\"GPU-A\",\"gpu_instance_id\":\"1\",\"compute_instance_id\":\"0\",\"source\":\"gpm\"},\"value\":[1,\"0.85\"]},"
    "{\"metric\":{\"__name__\":\"migmon_gpu_temperature_celsius\",\"instance\":\"a:9400\",\"uuid\":\"GPU-A\",\"source\":\"direct\"},\"value\":[1,\"52\"]},"
    "{\"metric\":{\"__name__\":\"migmon_gpu_sm_clock_hertz\",\"instance\":\"a:9400\",\"uuid\":\"GPU-A\",\"source\":\"direct\"},\"value\":[1,\"1980000000\"]},"
    "{\"metric\":{\"__name__\":\"migmon_gpu_power_watts\",\"instance\":\"a:9400\",\"uuid\":\"GPU-A\",\"source\":\"direct\"},\"value\":[1,\"NaN\"]},"
    "{\"metric\":{\"__name__\":\"migmon_gpu_health\",\"instance\":\"a:9400\",\"uuid\":\"GPU-A\",\"state\":\"warning\"},\"value\":[1,\"1\"]},"
    "{\"metric\":{\"__name__\":\"migmon_gpu_health\",\"instance\":\"a:9400\",\"uuid\":\"GPU-A\",\"state\":\"ok\"},\"value\":[1,\"0\"]}]";
static const char *DCGM =
    "[{\"metric\":{\"__name__\":\"DCGM_FI_DEV_FB_USED\",\"instance\":\"d:9400\",\"Hostname\":\"node-d\",\"gpu\":\"0\",\"UUID\":\"GPU-D\",\"modelName\":\"NVIDIA A100\",\"GPU_I_ID\":\"7\",\"GPU_I_PROFILE\":\"1g.10gb\"},\"value\":[1,\"100\"]},"
    "{\"metric\":{\"__name__\":\"DCGM_FI_DEV_FB_FREE\",\"instance\":\"d:9400\",\"Hostname\":\"node-d\",\"gpu\":\"0\",\"UUID\":\"GPU-D\",\"modelName\":\"NVIDIA A100\",\"GPU_I_ID\":\"7\",\"GPU_I_PROFILE\":\"1g.10gb\"},\"value\":[1,\"900\"]},"
    "{\"metric\":{\"__name__\":\"DCGM_FI_DEV_GPU_TEMP\",\"instance\":\"d:9400\",\"Hostname\":\"node-d\",\"gpu\":\"0\",\"UUID\":\"GPU-D\",\"modelName\":\"NVIDIA A100\",\"GPU_I_ID\":\"7\",\"GPU_I_PROFILE\":\"1g.10gb\"},\"value\":[1,\"40\"]},"
    "{\"metric\":{\"__name__\":\"DCGM_FI_PROF_GR_ENGINE_ACTIVE\",\"instance\":\"d:9400\",\"Hostname\":\"node-d\",\"gpu\":\"0\",\"UUID\":\"GPU-D\",\"modelName\":\"NVIDIA A100\",\"GPU_I_ID\":\"7\",\"GPU_I_PROFILE\":\"1g.10gb\"},\"value\":[1,\"0.25\"]}]";

static void build(struct fleet *f, const char *values_why)
{
    json_t *res[FQ_COUNT] = {J(UP), J(IDENT), values_why ? NULL : J(VALUES), J(DCGM), J(DCGM)};
    const char *why[FQ_COUNT] = {0};
    why[FQ_VALUES] = values_why;
    assert_int_equal(fleet_build(f, res, why, 1000.0), 0);
    for (int q = 0; q < FQ_COUNT; q++)
        json_decref(res[q]);
}

static void test_nodes_gpus_instances(void **st)
{
    (void)st;
    struct fleet f;
    build(&f, NULL);
    /* node-a: GPU + 2 instances (GI order), node-b: GPU, node-d: GPU + 1 */
    assert_int_equal(f.ndevs, 6);
    const struct device *d = f.devs;
    assert_string_equal(d[0].node, "node-a");
    assert_int_equal(d[0].kind, DEV_GPU);
    assert_true(d[0].mig_enabled);
    assert_int_equal(d[0].cc_major, 9);
    assert_int_equal(d[1].gi_id, 1);
    assert_int_equal(d[1].parent_pos, 0);
    assert_int_equal(d[1].mig_index, 0);
    assert_string_equal(d[1].uuid, "MIG-1");
    assert_string_equal(d[1].profile, "3g.71gb");
    assert_int_equal(d[2].gi_id, 5);
    assert_int_equal(d[2].mig_index, 1);
    /* values, with their sources; NaN is no value */
    assert_int_equal(d[1].m[M_GPU_UTIL].src, MSRC_GPM);
    assert_float_equal(d[1].m[M_GPU_UTIL].value, 85.0, 1e-9);
    assert_false(metric_ok(&d[2].m[M_GPU_UTIL]));
    assert_string_equal(d[2].m[M_GPU_UTIL].why, "not read from Prometheus");
    assert_float_equal(d[0].m[M_TEMP].value, 52, 1e-9);
    assert_float_equal(d[0].m[M_CLK_SM].value, 1980, 1e-9);
    assert_false(metric_ok(&d[0].m[M_POWER]));
    /* a GPU-wide value on the instances, as NVML's backend gives it */
    assert_float_equal(d[1].m[M_TEMP].value, 52, 1e-9);
    assert_int_equal(d[0].health, HEALTH_WARNING);
    /* node-b is down: listed, every value none, the age from its last sample */
    assert_string_equal(d[3].node, "node-b");
    assert_true(d[3].node_down);
    assert_float_equal(d[3].node_down_for_s, 30.0, 1e-9);
    assert_false(metric_ok(&d[3].m[M_TEMP]));
    assert_string_equal(d[3].m[M_TEMP].why, "the node's target is down (up == 0)");
    /* node-d from dcgm-exporter's labels: MiB, the total from its parts */
    assert_string_equal(d[4].node, "node-d");
    assert_false(d[4].node_down);
    assert_float_equal(d[4].m[M_TEMP].value, 40, 1e-9);
    assert_int_equal(d[5].kind, DEV_MIG);
    assert_int_equal(d[5].gi_id, 7);
    assert_int_equal(d[5].ci_id, -1);
    assert_string_equal(d[5].uuid, "");
    assert_string_equal(d[5].uuid_why, "dcgm-exporter does not label MIG UUIDs");
    assert_float_equal(d[5].m[M_MEM_USED].value, 100 * 1048576.0, 1e-3);
    assert_float_equal(d[5].m[M_MEM_TOTAL].value, 1000 * 1048576.0, 1e-3);
    assert_int_equal(d[5].m[M_GPU_UTIL].src, MSRC_DCGM);
    assert_float_equal(d[5].m[M_GPU_UTIL].value, 25.0, 1e-9);
    assert_int_equal(f.nnodes, 3);
    fleet_free(&f);
}

static void test_failed_query_gives_its_reason(void **st)
{
    (void)st;
    struct fleet f;
    build(&f, "Prometheus: no answer within 900 ms");
    assert_int_equal(f.ndevs, 6);
    assert_false(metric_ok(&f.devs[1].m[M_GPU_UTIL]));
    assert_string_equal(f.devs[1].m[M_GPU_UTIL].why, "Prometheus: no answer within 900 ms");
    /* dcgm-exporter's values came in: its node keeps them */
    assert_true(metric_ok(&f.devs[5].m[M_GPU_UTIL]));
    fleet_free(&f);
}

static void test_same_hostname_named_by_instance(void **st)
{
    (void)st;
    json_t *res[FQ_COUNT] = {0};
    res[FQ_IDENT] = J("[{\"metric\":{\"__name__\":\"migmon_host_info\",\"instance\":\"x\",\"hostname\":\"vm\"},\"value\":[1,\"1\"]},"
                      "{\"metric\":{\"__name__\":\"migmon_host_info\",\"instance\":\"y\",\"hostname\":\"vm\"},\"value\":[1,\"1\"]},"
                      "{\"metric\":{\"__name__\":\"migmon_host_info\",\"instance\":\"z\",\"hostname\":\"vm\"},\"value\":[1,\"1\"]},"
                      "{\"metric\":{\"__name__\":\"migmon_device_info\",\"instance\":\"z\",\"uuid\":\"G\",\"gpu\":\"0\"},\"value\":[1,\"1\"]}]");
    const char *why[FQ_COUNT] = {0};
    struct fleet f;
    assert_int_equal(fleet_build(&f, res, why, 0), 0);
    json_decref(res[FQ_IDENT]);
    assert_int_equal(f.ndevs, 1);
    assert_string_equal(f.devs[0].node, "z");
    fleet_free(&f);
}

static void test_instance_without_its_gpu_info(void **st)
{
    (void)st;
    json_t *res[FQ_COUNT] = {0};
    res[FQ_IDENT] = J("[{\"metric\":{\"__name__\":\"migmon_mig_info\",\"instance\":\"x\",\"gpu\":\"2\",\"uuid\":\"GPU-X\",\"model\":\"NVIDIA H100\",\"gpu_instance_id\":\"3\",\"compute_instance_id\":\"0\",\"mig_profile\":\"1g.10gb\",\"mig_uuid\":\"MIG-3\"},\"value\":[1,\"1\"]}]");
    const char *why[FQ_COUNT] = {0};
    struct fleet f;
    assert_int_equal(fleet_build(&f, res, why, 0), 0);
    json_decref(res[FQ_IDENT]);
    assert_int_equal(f.ndevs, 2);
    assert_int_equal(f.devs[0].kind, DEV_GPU);
    assert_string_equal(f.devs[0].uuid, "GPU-X");
    assert_int_equal(f.devs[0].index, 2);
    assert_true(f.devs[0].mig_enabled);
    assert_int_equal(f.devs[1].parent_pos, 0);
    fleet_free(&f);
}

static void test_promql_quote(void **st)
{
    (void)st;
    char out[64];
    assert_int_equal(promql_quote(out, sizeof(out), "a\"b\\c\nd\x01"), 14);
    assert_string_equal(out, "a\\\"b\\\\c\\nd\\x01");
    /* cut at a whole escape */
    assert_int_equal(promql_quote(out, 4, "ab\"c"), 2);
    assert_string_equal(out, "ab");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodes_gpus_instances),
        cmocka_unit_test(test_failed_query_gives_its_reason),
        cmocka_unit_test(test_same_hostname_named_by_instance),
        cmocka_unit_test(test_instance_without_its_gpu_info),
        cmocka_unit_test(test_promql_quote),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
