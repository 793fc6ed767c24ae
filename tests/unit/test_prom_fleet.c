/* Unit tests for src/backend/prometheus/prom_fleet.c and promql_quote: a fleet built
 * from the detail queries' answers (our series, dcgm-exporter's, a node
 * down, a failed query), read as they stream (prom_stream.h), and label
 * values quoted for PromQL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/prometheus/prom_client.h"
#include "backend/prometheus/prom_fleet.h"
#include "backend/prometheus/prom_fleet_int.h"
#include "backend/prometheus/prom_stream.h"
#include "core/health_rules.h"

/* The answers a test gives, by the queries of one page of nodes (the up
 * answer stands for the nodes' summaries: it says which targets are down). */
enum { FQ_UP, FQ_IDENT, FQ_VALUES, FQ_DCGM_IDENT, FQ_DCGM_VALUES, FQ_PROCS, FQ_COUNT };
static const enum promq_detail fq_detail[FQ_COUNT] = {
    [FQ_IDENT] = PD_IDENT,           [FQ_VALUES] = PD_VALUES, [FQ_DCGM_IDENT] = PD_DCGM_IDENT,
    [FQ_DCGM_VALUES] = PD_DCGM_VALUES, [FQ_PROCS] = PD_PROCS};

struct feed {
    struct build *b;
    enum promq_detail q;
};

static int on_item(void *ctx, const struct prom_item *it)
{
    struct feed *f = ctx;
    return fleet_build_read(f->b, f->q, it);
}

/* Every node an answer names, registered as the backend registers them
 * from its node round: down as the up answer says, named by its host name
 * (unique names are prom_nodes.c's, test_prom_nodes); then each answer
 * streamed into the build, as the client reads it. */
static int build_fleet(struct fleet *f, json_t *const res[FQ_COUNT],
                       const char *const why[FQ_COUNT], double now)
{
    struct build *b = fleet_build_new(FLEET_DEVICES_MAX);
    assert_non_null(b);
    /* the node's name: its host_info's hostname, else dcgm-exporter's */
    for (int pass = 0; pass < 3; pass++)
        for (int q = 0; q < FQ_COUNT; q++) {
            size_t i;
            json_t *it;
            json_array_foreach(res[q], i, it) {
                const char *inst = fleet_jlab(it, "instance"), *name = NULL;
                if (pass == 0 && !strcmp(fleet_jlab(it, "__name__"), "migmon_host_info"))
                    name = fleet_jlab(it, "hostname");
                else if (pass == 1 && (q == FQ_DCGM_IDENT || q == FQ_DCGM_VALUES) &&
                         !fleet_build_node_known(b, inst))
                    name = fleet_jlab(it, "Hostname");
                else if (pass == 2 && !fleet_build_node_known(b, inst))
                    name = "";
                if (!name)
                    continue;
                int up = -1;
                size_t k;
                json_t *u;
                json_array_foreach(res[FQ_UP], k, u) {
                    double v;
                    if (!strcmp(fleet_jlab(u, "instance"), inst) &&
                        fleet_num(json_array_get(json_object_get(u, "value"), 1), &v))
                        up = v == 1 ? 1 : 0;
                }
                assert_int_equal(fleet_build_node(b, inst, name, up, 0), 0);
            }
        }
    for (int q = FQ_IDENT; q < FQ_COUNT; q++) {
        if (why[q])
            for (size_t k = 0; k < fleet_build_nnodes(b); k++)
                fleet_build_node_why(b, fleet_build_instance(b, k), fq_detail[q], why[q]);
        if (!res[q])
            continue;
        char *arr = json_dumps(res[q], JSON_COMPACT);
        assert_non_null(arr);
        size_t n = strlen(arr) + 128;
        char *body = malloc(n);
        snprintf(body, n, "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\","
                 "\"result\":%s}}", arr);
        struct feed fd = {.b = b, .q = fq_detail[q]};
        struct prom_stream ps;
        assert_int_equal(prom_stream_init(&ps, on_item, &fd), 0);
        /* a few bytes at a time, as a transfer gives them */
        for (size_t off = 0, len = strlen(body); off < len; off += 7)
            assert_int_equal(prom_stream_feed(&ps, body + off, len - off < 7 ? len - off : 7), 0);
        char err[200];
        assert_int_equal(prom_stream_end(&ps, 200, err, sizeof(err)), 0);
        prom_stream_free(&ps);
        free(body);
        free(arr);
    }
    int rc = fleet_build_finish(b, f, now);
    fleet_build_free(b);
    return rc;
}

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
    assert_int_equal(build_fleet(f, res, why, 1000.0), 0);
    for (int q = 0; q < FQ_COUNT; q++)
        json_decref(res[q]);
}

/* f from the answers res (every query answered), which it consumes. */
static void build_from(struct fleet *f, json_t *res[FQ_COUNT])
{
    const char *why[FQ_COUNT] = {0};
    assert_int_equal(build_fleet(f, res, why, 1000.0), 0);
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

static void test_instance_without_its_gpu_info(void **st)
{
    (void)st;
    json_t *res[FQ_COUNT] = {0};
    res[FQ_IDENT] = J("[{\"metric\":{\"__name__\":\"migmon_mig_info\",\"instance\":\"x\",\"gpu\":\"2\",\"uuid\":\"GPU-X\",\"model\":\"NVIDIA H100\",\"gpu_instance_id\":\"3\",\"compute_instance_id\":\"0\",\"mig_profile\":\"1g.10gb\",\"mig_uuid\":\"MIG-3\"},\"value\":[1,\"1\"]}]");
    const char *why[FQ_COUNT] = {0};
    struct fleet f;
    assert_int_equal(build_fleet(&f, res, why, 0), 0);
    json_decref(res[FQ_IDENT]);
    assert_int_equal(f.ndevs, 2);
    assert_int_equal(f.devs[0].kind, DEV_GPU);
    assert_string_equal(f.devs[0].uuid, "GPU-X");
    assert_int_equal(f.devs[0].index, 2);
    assert_true(f.devs[0].mig_enabled);
    assert_int_equal(f.devs[1].parent_pos, 0);
    fleet_free(&f);
}

/* ---- processes ---- */

static const char *PROCS =
    /* node-a's MIG 1: two families of one process, with its pod and container */
    "[{\"metric\":{\"__name__\":\"migmon_process_gpu_memory_bytes\",\"instance\":\"a:9400\",\"uuid\":\"GPU-A\",\"gpu_instance_id\":\"1\",\"compute_instance_id\":\"0\",\"pid\":\"7001\",\"process_name\":\"python3\",\"pod_uid\":\"0f1e2d3c-aaaa-bbbb-cccc-123456789abc\",\"container\":\"containerd:4b5c6d7e8f90\",\"source\":\"direct\"},\"value\":[1,\"39845888000\"]},"
    "{\"metric\":{\"__name__\":\"migmon_process_cpu_ratio\",\"instance\":\"a:9400\",\"uuid\":\"GPU-A\",\"gpu_instance_id\":\"1\",\"compute_instance_id\":\"0\",\"pid\":\"7001\",\"process_name\":\"python3\",\"pod_uid\":\"0f1e2d3c-aaaa-bbbb-cccc-123456789abc\",\"container\":\"containerd:4b5c6d7e8f90\",\"source\":\"direct\"},\"value\":[1,\"1.5\"]},"
    /* on the GPU itself (MIG on): a process none of its instances was given */
    "{\"metric\":{\"__name__\":\"migmon_process_gpu_memory_bytes\",\"instance\":\"a:9400\",\"uuid\":\"GPU-A\",\"pid\":\"7040\",\"source\":\"direct\"},\"value\":[1,\"1048576\"]},"
    "{\"metric\":{\"__name__\":\"migmon_process_sm_utilization_ratio\",\"instance\":\"a:9400\",\"uuid\":\"GPU-A\",\"pid\":\"7040\",\"container\":\"docker:0123456789ab\",\"source\":\"process\"},\"value\":[1,\"0.25\"]},"
    /* the same PID on another node is another process; node-b is down */
    "{\"metric\":{\"__name__\":\"migmon_process_gpu_memory_bytes\",\"instance\":\"b:9400\",\"uuid\":\"GPU-B\",\"pid\":\"7001\",\"source\":\"direct\"},\"value\":[1,\"5\"]},"
    /* no such device, no PID, a PID that is no number: left out */
    "{\"metric\":{\"__name__\":\"migmon_process_gpu_memory_bytes\",\"instance\":\"a:9400\",\"uuid\":\"GPU-Z\",\"pid\":\"1\",\"source\":\"direct\"},\"value\":[1,\"5\"]},"
    "{\"metric\":{\"__name__\":\"migmon_process_gpu_memory_bytes\",\"instance\":\"a:9400\",\"uuid\":\"GPU-A\",\"source\":\"direct\"},\"value\":[1,\"5\"]},"
    "{\"metric\":{\"__name__\":\"migmon_process_gpu_memory_bytes\",\"instance\":\"a:9400\",\"uuid\":\"GPU-A\",\"pid\":\"-3\",\"source\":\"direct\"},\"value\":[1,\"5\"]}]";
static const char *PCOUNT =
    "[{\"metric\":{\"__name__\":\"migmon_mig_processes\",\"instance\":\"a:9400\",\"uuid\":\"GPU-A\",\"gpu_instance_id\":\"1\",\"compute_instance_id\":\"0\",\"source\":\"direct\"},\"value\":[1,\"1\"]},"
    "{\"metric\":{\"__name__\":\"migmon_mig_processes\",\"instance\":\"a:9400\",\"uuid\":\"GPU-A\",\"gpu_instance_id\":\"5\",\"compute_instance_id\":\"0\",\"source\":\"direct\"},\"value\":[1,\"0\"]},"
    "{\"metric\":{\"__name__\":\"migmon_gpu_processes\",\"instance\":\"a:9400\",\"uuid\":\"GPU-A\",\"source\":\"direct\"},\"value\":[1,\"2\"]}]";

static void test_processes_on_their_devices(void **st)
{
    (void)st;
    json_t *res[FQ_COUNT] = {J(UP), J(IDENT), J(PCOUNT), J(DCGM), J(DCGM), J(PROCS)};
    struct fleet f;
    build_from(&f, res);
    assert_int_equal(f.ndevs, 6);
    const struct device *d = f.devs;
    /* node-a's GPU: the unattributed one; its MIG 1 (gi 1): 7001; MIG 2: none */
    assert_int_equal(f.nprocs, 2);
    assert_int_equal(d[0].nprocs, 1);
    const struct gpu_process *g = &f.procs[d[0].proc_first];
    assert_int_equal(g->pid, 7040);
    assert_true(g->unattributed);
    assert_int_equal(g->gi_id, -1);
    assert_float_equal(g->mem_bytes.value, 1048576, 1e-9);
    assert_int_equal(g->mem_bytes.src, MSRC_DIRECT);
    assert_float_equal(g->sm_util.value, 25, 1e-9);
    assert_int_equal(g->sm_util.src, MSRC_PROCESS);
    assert_string_equal(g->container, "docker:0123456789ab");
    assert_string_equal(g->name, "");
    assert_int_equal(d[1].nprocs, 1);
    const struct gpu_process *p = &f.procs[d[1].proc_first];
    assert_string_equal(d[1].node, "node-a");
    assert_int_equal(p->pid, 7001);
    assert_int_equal(p->local_pid, -1); /* node-a's PID, not this host's */
    assert_int_equal(p->start_time, 0);
    assert_false(p->unattributed);
    assert_int_equal(p->gi_id, 1);
    assert_int_equal(p->ci_id, 0);
    assert_string_equal(p->name, "python3");
    assert_string_equal(p->container, "k8s:0f1e2d3c-aaaa-bbbb-cccc-123456789abc/containerd:4b5c6d7e8f90");
    assert_float_equal(p->mem_bytes.value, 39845888000.0, 1e-3);
    assert_float_equal(p->cpu_pct.value, 150, 1e-9);
    assert_int_equal(p->cpu_pct.src, MSRC_DIRECT);
    /* a series not written is none, with the reason */
    assert_false(metric_ok(&p->sm_util));
    assert_string_equal(p->sm_util.why, "not read from Prometheus");
    assert_false(metric_ok(&p->rss_bytes));
    assert_false(metric_ok(&p->enc_util));
    assert_string_equal(p->user, "");
    assert_string_equal(p->command, "");
    assert_int_equal(d[2].nprocs, 0);
    /* the counts stay: node-a writes its processes */
    assert_float_equal(d[0].process_count.value, 2, 1e-9);
    assert_float_equal(d[1].process_count.value, 1, 1e-9);
    assert_float_equal(d[2].process_count.value, 0, 1e-9);
    /* node-b is down: its 7001 is not listed */
    assert_true(d[3].node_down);
    assert_int_equal(d[3].nprocs, 0);
    assert_false(metric_ok(&d[3].process_count));
    /* the dcgm-exporter node has none to give */
    assert_int_equal(d[4].nprocs, 0);
    assert_int_equal(d[5].nprocs, 0);
    assert_string_equal(d[5].process_count.why, "not read from Prometheus");
    assert_true(f.nodes[0].procs);
    fleet_free(&f);
}

static void test_processes_not_to_be_had(void **st)
{
    (void)st;
    /* an exporter without --export-processes: a count, no list */
    json_t *res[FQ_COUNT] = {J(UP), J(IDENT), J(PCOUNT), NULL, NULL, J("[]")};
    const char *why[FQ_COUNT] = {0};
    struct fleet f;
    assert_int_equal(build_fleet(&f, res, why, 1000.0), 0);
    assert_int_equal(f.nprocs, 0);
    assert_false(metric_ok(&f.devs[0].process_count));
    assert_string_equal(f.devs[0].process_count.why,
                        "its node's exporter writes no processes (mig-gpu-mon export "
                        "--export-processes)");
    assert_false(metric_ok(&f.devs[1].process_count));
    /* a count of 0 is a list read whole: nothing runs there */
    assert_true(metric_ok(&f.devs[2].process_count));
    assert_float_equal(f.devs[2].process_count.value, 0, 1e-9);
    fleet_free(&f);
    /* the processes query failed: the counts with a list say why */
    json_decref(res[FQ_PROCS]);
    res[FQ_PROCS] = NULL;
    why[FQ_PROCS] = "Prometheus: no answer within 900 ms";
    assert_int_equal(build_fleet(&f, res, why, 1000.0), 0);
    assert_string_equal(f.devs[0].process_count.why, "Prometheus: no answer within 900 ms");
    assert_string_equal(f.devs[1].process_count.why, "Prometheus: no answer within 900 ms");
    assert_true(metric_ok(&f.devs[2].process_count));
    fleet_free(&f);
    for (int q = 0; q < FQ_COUNT; q++)
        json_decref(res[q]);
}

static void test_processes_bounded_per_device(void **st)
{
    (void)st;
    json_t *res[FQ_COUNT] = {0};
    res[FQ_IDENT] = J("[{\"metric\":{\"__name__\":\"migmon_device_info\",\"instance\":\"x\",\"uuid\":\"G\",\"gpu\":\"0\"},\"value\":[1,\"1\"]}]");
    json_t *procs = json_array();
    for (int pid = 1; pid <= FLEET_PROCS_PER_DEVICE + 10; pid++) {
        char t[256];
        snprintf(t, sizeof(t), "{\"metric\":{\"__name__\":\"migmon_process_gpu_memory_bytes\",\"instance\":\"x\",\"uuid\":\"G\",\"pid\":\"%d\",\"source\":\"direct\"},\"value\":[1,\"%d\"]}", pid, pid);
        json_array_append_new(procs, J(t));
    }
    res[FQ_PROCS] = procs;
    const char *why[FQ_COUNT] = {0};
    struct fleet f;
    assert_int_equal(build_fleet(&f, res, why, 0), 0);
    assert_int_equal(f.nprocs, FLEET_PROCS_PER_DEVICE);
    assert_int_equal(f.devs[0].nprocs, FLEET_PROCS_PER_DEVICE);
    /* every kept one has its own value: the hash found each PID again */
    for (size_t k = 0; k < f.nprocs; k++)
        assert_float_equal(f.procs[k].mem_bytes.value, f.procs[k].pid, 1e-9);
    fleet_free(&f);
    for (int q = 0; q < FQ_COUNT; q++)
        json_decref(res[q]);
}

/* ---- AMD ---- */

static void test_amd_partitions(void **st)
{
    (void)st;
    json_t *res[FQ_COUNT] = {0};
    res[FQ_UP] = J("[{\"metric\":{\"instance\":\"m:9400\"},\"value\":[1,\"1\"]}]");
    /* as the exporter writes an MI300X in CPX mode: vendor="amd", a
     * partition's partition_id in place of the MIG instance ids */
    res[FQ_IDENT] = J(
        "[{\"metric\":{\"__name__\":\"migmon_host_info\",\"instance\":\"m:9400\",\"hostname\":\"mi300\"},\"value\":[1,\"1\"]},"
        "{\"metric\":{\"__name__\":\"migmon_device_info\",\"instance\":\"m:9400\",\"gpu\":\"0\",\"uuid\":\"AMD-4f1c\",\"pci_bus_id\":\"0000:0c:00.0\",\"model\":\"AMD Instinct MI300X\",\"vendor\":\"amd\",\"architecture\":\"CDNA3\",\"mig_mode\":\"enabled\"},\"value\":[1,\"1\"]},"
        "{\"metric\":{\"__name__\":\"migmon_mig_info\",\"instance\":\"m:9400\",\"gpu\":\"0\",\"uuid\":\"AMD-4f1c\",\"pci_bus_id\":\"0000:0c:00.0\",\"model\":\"AMD Instinct MI300X\",\"vendor\":\"amd\",\"partition_id\":\"1\",\"mig_profile\":\"CPX/NPS4\",\"mig_uuid\":\"AMD-4f1c-P1\"},\"value\":[1,\"1\"]},"
        "{\"metric\":{\"__name__\":\"migmon_mig_info\",\"instance\":\"m:9400\",\"gpu\":\"0\",\"uuid\":\"AMD-4f1c\",\"pci_bus_id\":\"0000:0c:00.0\",\"model\":\"AMD Instinct MI300X\",\"vendor\":\"amd\",\"partition_id\":\"0\",\"mig_profile\":\"CPX/NPS4\",\"mig_uuid\":\"AMD-4f1c-P0\"},\"value\":[1,\"1\"]}]");
    res[FQ_VALUES] = J(
        "[{\"metric\":{\"__name__\":\"migmon_mig_utilization_ratio\",\"instance\":\"m:9400\",\"uuid\":\"AMD-4f1c\",\"partition_id\":\"1\",\"source\":\"direct\"},\"value\":[1,\"0.3\"]},"
        "{\"metric\":{\"__name__\":\"migmon_mig_memory_total_bytes\",\"instance\":\"m:9400\",\"uuid\":\"AMD-4f1c\",\"partition_id\":\"0\",\"source\":\"direct\"},\"value\":[1,\"25769803776\"]},"
        "{\"metric\":{\"__name__\":\"migmon_gpu_temperature_celsius\",\"instance\":\"m:9400\",\"uuid\":\"AMD-4f1c\",\"source\":\"direct\"},\"value\":[1,\"61\"]},"
        "{\"metric\":{\"__name__\":\"migmon_mig_processes\",\"instance\":\"m:9400\",\"uuid\":\"AMD-4f1c\",\"partition_id\":\"1\",\"source\":\"direct\"},\"value\":[1,\"1\"]}]");
    res[FQ_PROCS] = J(
        "[{\"metric\":{\"__name__\":\"migmon_process_gpu_memory_bytes\",\"instance\":\"m:9400\",\"uuid\":\"AMD-4f1c\",\"partition_id\":\"1\",\"pid\":\"900\",\"process_name\":\"rocm-smi\",\"source\":\"direct\"},\"value\":[1,\"268435456\"]}]");
    const char *why[FQ_COUNT] = {0};
    struct fleet f;
    assert_int_equal(build_fleet(&f, res, why, 0), 0);
    for (int q = 0; q < FQ_COUNT; q++)
        json_decref(res[q]);
    assert_int_equal(f.ndevs, 3);
    const struct device *d = f.devs;
    assert_int_equal(d[0].kind, DEV_GPU);
    assert_int_equal(d[0].vendor, VENDOR_AMD);
    assert_true(d[0].mig_enabled);
    assert_int_equal(d[0].slices_total, 2);
    assert_string_equal(d[0].name, "AMD Instinct MI300X");
    assert_string_equal(d[0].arch, "CDNA3");
    /* the partitions in index order, named as the amdgpu backend names them */
    for (int k = 0; k < 2; k++) {
        assert_int_equal(d[1 + k].kind, DEV_MIG);
        assert_int_equal(d[1 + k].vendor, VENDOR_AMD);
        assert_int_equal(d[1 + k].gi_id, k);
        assert_int_equal(d[1 + k].ci_id, -1);
        assert_int_equal(d[1 + k].mig_index, k);
        assert_int_equal(d[1 + k].parent_pos, 0);
        assert_int_equal(d[1 + k].slices, 1);
        assert_string_equal(d[1 + k].name, "AMD Instinct MI300X");
        assert_string_equal(d[1 + k].profile, "CPX/NPS4");
        assert_string_equal(d[1 + k].parent_uuid, "AMD-4f1c");
        assert_string_equal(d[1 + k].node, "mi300");
        /* the GPU's temperature on each, as amdgpu gives it */
        assert_float_equal(d[1 + k].m[M_TEMP].value, 61, 1e-9);
    }
    assert_string_equal(d[1].uuid, "AMD-4f1c-P0");
    assert_string_equal(d[2].uuid, "AMD-4f1c-P1");
    assert_float_equal(d[1].m[M_MEM_TOTAL].value, 25769803776.0, 1e-3);
    assert_false(metric_ok(&d[1].m[M_GPU_UTIL]));
    assert_float_equal(d[2].m[M_GPU_UTIL].value, 30, 1e-9);
    assert_int_equal(d[2].m[M_GPU_UTIL].src, MSRC_DIRECT);
    /* the partition's process, with the partition as its GPU instance */
    assert_int_equal(d[2].nprocs, 1);
    const struct gpu_process *p = &f.procs[d[2].proc_first];
    assert_int_equal(p->pid, 900);
    assert_int_equal(p->gi_id, 1);
    assert_int_equal(p->ci_id, -1);
    assert_string_equal(p->name, "rocm-smi");
    assert_float_equal(p->mem_bytes.value, 268435456.0, 1e-3);
    fleet_free(&f);
}

/* Other hosts' labels are made safe to show. */
static void test_labels_cleaned(void **st)
{
    (void)st;
    json_t *res[FQ_COUNT] = {0};
    res[FQ_IDENT] = J("[{\"metric\":{\"__name__\":\"migmon_device_info\",\"instance\":\"x\",\"uuid\":\"G\",\"gpu\":\"0\",\"model\":\"H\\u001b[2J\"},\"value\":[1,\"1\"]}]");
    res[FQ_PROCS] = J("[{\"metric\":{\"__name__\":\"migmon_process_gpu_memory_bytes\",\"instance\":\"x\",\"uuid\":\"G\",\"pid\":\"5\",\"process_name\":\"a\\u001b]0;x\\u0007\",\"source\":\"direct\"},\"value\":[1,\"1\"]}]");
    const char *why[FQ_COUNT] = {0};
    struct fleet f;
    assert_int_equal(build_fleet(&f, res, why, 0), 0);
    for (int q = 0; q < FQ_COUNT; q++)
        json_decref(res[q]);
    assert_string_equal(f.devs[0].name, "H?[2J");
    assert_string_equal(f.procs[0].name, "a?]0;x?");
    fleet_free(&f);
}

/* The pod on a device's series (ours, dcgm-exporter's) is the device's;
 * a device whose series name none has none, a label's control bytes go. */
static void test_pods_from_labels(void **st)
{
    (void)st;
    const char *values =
        "[{\"metric\":{\"__name__\":\"migmon_mig_utilization_ratio\",\"instance\":\"a:9400\",\"uuid\":\"GPU-A\",\"gpu_instance_id\":\"1\",\"compute_instance_id\":\"0\",\"source\":\"gpm\",\"pod\":\"llm-0\",\"namespace\":\"serving\",\"container\":\"vllm\"},\"value\":[1,\"0.85\"]},"
        "{\"metric\":{\"__name__\":\"migmon_gpu_temperature_celsius\",\"instance\":\"a:9400\",\"uuid\":\"GPU-A\",\"source\":\"direct\"},\"value\":[1,\"52\"]}]";
    const char *dcgm =
        "[{\"metric\":{\"__name__\":\"DCGM_FI_DEV_FB_USED\",\"instance\":\"d:9400\",\"Hostname\":\"node-d\",\"gpu\":\"0\",\"UUID\":\"GPU-D\",\"modelName\":\"NVIDIA A100\",\"GPU_I_ID\":\"7\",\"GPU_I_PROFILE\":\"1g.10gb\",\"pod\":\"nb\\u001b[2J\",\"namespace\":\"research\",\"container\":\"\"},\"value\":[1,\"100\"]}]";
    json_t *res[FQ_COUNT] = {J(UP), J(IDENT), J(values), J(DCGM), J(dcgm)};
    struct fleet f;
    build_from(&f, res);
    assert_int_equal(f.ndevs, 6);
    assert_string_equal(f.devs[1].pod.name, "llm-0"); /* node-a GI 1 */
    assert_string_equal(f.devs[1].pod.ns, "serving");
    assert_string_equal(f.devs[1].pod.container, "vllm");
    assert_string_equal(f.devs[0].pod.name, ""); /* its GPU: none labelled */
    assert_string_equal(f.devs[2].pod.name, ""); /* GI 5 */
    assert_string_equal(f.devs[5].node, "node-d");
    assert_string_equal(f.devs[5].pod.ns, "research");
    assert_string_equal(f.devs[5].pod.container, "");
    assert_null(strchr(f.devs[5].pod.name, '\033'));
    assert_memory_equal(f.devs[5].pod.name, "nb", 2);
    fleet_free(&f);
}

/* Many nodes (the nodes' table grows past its first size): each series
 * finds its own node; a target with our devices and dcgm-exporter's gives
 * ours alone; an instance label longer than a node keeps is one node. */
static void test_many_nodes(void **st)
{
    (void)st;
    enum { N = 40 };
    char *ident = malloc(N * 600 + 4096), *dcgm = malloc(N * 400 + 4096);
    assert_non_null(ident);
    assert_non_null(dcgm);
    size_t a = 0, c = 0;
    char longname[200];
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    a += (size_t)sprintf(ident + a, "[");
    c += (size_t)sprintf(dcgm + c, "[");
    for (int i = 0; i < N; i++) {
        char inst[256];
        if (i == N - 1)
            snprintf(inst, sizeof(inst), "%s", longname);
        else
            snprintf(inst, sizeof(inst), "10.0.%d.%d:9400", i / 250, i % 250);
        a += (size_t)sprintf(ident + a,
                             "%s{\"metric\":{\"__name__\":\"migmon_host_info\",\"instance\":\"%s\",\"hostname\":\"n%02d\"},\"value\":[1,\"1\"]},"
                             "{\"metric\":{\"__name__\":\"migmon_device_info\",\"instance\":\"%s\",\"gpu\":\"0\",\"uuid\":\"GPU-%d\",\"model\":\"NVIDIA H200\"},\"value\":[1,\"1\"]},"
                             "{\"metric\":{\"__name__\":\"migmon_device_info\",\"instance\":\"%s\",\"gpu\":\"1\",\"uuid\":\"GPU-%d-1\",\"model\":\"NVIDIA H200\"},\"value\":[1,\"1\"]}",
                             i ? "," : "", inst, i, inst, i, inst, i);
        /* dcgm-exporter on every other target too: left out there */
        c += (size_t)sprintf(dcgm + c,
                             "%s{\"metric\":{\"__name__\":\"DCGM_FI_DEV_GPU_TEMP\",\"instance\":\"%s\",\"Hostname\":\"d%02d\",\"gpu\":\"0\",\"UUID\":\"GPU-%d\",\"modelName\":\"NVIDIA H200\"},\"value\":[1,\"40\"]}",
                             i ? "," : "", i % 2 ? inst : "dcgm-only:9400", i, i % 2 ? i : -1);
    }
    sprintf(ident + a, "]");
    sprintf(dcgm + c, "]");
    json_t *res[FQ_COUNT] = {J("[]"), J(ident), J("[]"), J(dcgm), J(dcgm)};
    struct fleet f;
    build_from(&f, res);
    free(ident);
    free(dcgm);
    /* 40 of ours (2 GPUs each) and the dcgm-only target's 1 GPU */
    assert_int_equal(f.nnodes, N + 1);
    assert_int_equal(f.ndevs, 2 * N + 1);
    size_t ours = 0, dcgm_gpus = 0;
    for (size_t i = 0; i < f.ndevs; i++) {
        if (f.src[i].dcgm) {
            dcgm_gpus++;
            continue;
        }
        ours++;
        char want[32];
        snprintf(want, sizeof(want), "n%02zu", (ours - 1) / 2);
        assert_string_equal(f.devs[i].node, want);
    }
    assert_int_equal(ours, 2 * N);
    assert_int_equal(dcgm_gpus, 1);
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
        cmocka_unit_test(test_instance_without_its_gpu_info),
        cmocka_unit_test(test_processes_on_their_devices),
        cmocka_unit_test(test_processes_not_to_be_had),
        cmocka_unit_test(test_processes_bounded_per_device),
        cmocka_unit_test(test_amd_partitions),
        cmocka_unit_test(test_labels_cleaned),
        cmocka_unit_test(test_pods_from_labels),
        cmocka_unit_test(test_many_nodes),
        cmocka_unit_test(test_promql_quote),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
