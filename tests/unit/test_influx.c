/* InfluxDB line protocol (src/export/influx.c): escaping, types, absent
 * values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backend/nvml/nvml_api.h"
#include "export/influx.h"

static const char *esc(enum influx_ctx ctx, const char *s)
{
    static char out[256];
    size_t n = influx_escape(out, sizeof(out), s, ctx);
    assert_int_equal(n, strlen(out));
    return out;
}

static void test_escape_measurement(void **state)
{
    (void)state;
    assert_string_equal(esc(INFLUX_MEASUREMENT, "nvidia_smi"), "nvidia_smi");
    assert_string_equal(esc(INFLUX_MEASUREMENT, "a b,c=d\"e"), "a\\ b\\,c=d\"e");
}

static void test_escape_key(void **state)
{
    (void)state;
    assert_string_equal(esc(INFLUX_KEY, "NVIDIA H200"), "NVIDIA\\ H200");
    assert_string_equal(esc(INFLUX_KEY, "a,b=c d"), "a\\,b\\=c\\ d");
    /* quotes are ordinary in keys and tag values */
    assert_string_equal(esc(INFLUX_KEY, "say \"hi\""), "say\\ \"hi\"");
    /* a backslash that would escape a separator or end the value */
    assert_string_equal(esc(INFLUX_KEY, "a\\"), "a?");
    assert_string_equal(esc(INFLUX_KEY, "a\\ b"), "a?\\ b");
    assert_string_equal(esc(INFLUX_KEY, "a\\,b"), "a?\\,b");
    assert_string_equal(esc(INFLUX_KEY, "a\\=b"), "a?\\=b");
    /* any other backslash is read back as itself */
    assert_string_equal(esc(INFLUX_KEY, "C:\\x\\\\y"), "C:\\x\\\\y");
    /* no line break, tab or other control can end a line early */
    assert_string_equal(esc(INFLUX_KEY, "a\nb\rc\td\x7f"), "a?b?c?d?");
    /* UTF-8 passes through */
    assert_string_equal(esc(INFLUX_KEY, "é ü"), "é\\ ü");
}

static void test_escape_string(void **state)
{
    (void)state;
    assert_string_equal(esc(INFLUX_STRING, "python -c \"print('a,b=c')\""),
                        "python -c \\\"print('a,b=c')\\\"");
    assert_string_equal(esc(INFLUX_STRING, "C:\\dir\\"), "C:\\\\dir\\\\");
    assert_string_equal(esc(INFLUX_STRING, "x\ny"), "x?y");
}

static void test_escape_truncates_like_snprintf(void **state)
{
    (void)state;
    char out[4];
    assert_int_equal(influx_escape(out, sizeof(out), "a b c", INFLUX_KEY), 7);
    assert_string_equal(out, "a\\ ");
    assert_int_equal(influx_escape(NULL, 0, "a,b", INFLUX_KEY), 4);
}

static char *render(const struct snapshot *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    influx_write_snapshot(f, s);
    fclose(f);
    return buf;
}

static void set(struct metric *m, double v, enum metric_source src)
{
    *m = (struct metric){.value = v, .src = src};
}

static void dev_init(struct device *d, enum device_kind kind)
{
    memset(d, 0, sizeof(*d));
    d->kind = kind;
    d->mig_index = -1;
    d->parent_pos = -1;
    d->gi_id = d->ci_id = -1;
    d->slices = d->slices_total = -1;
    d->cc_major = d->cc_minor = -1;
    for (int k = 0; k < M_COUNT; k++)
        d->m[k] = metric_none("NVML_ERROR_NOT_SUPPORTED");
    d->process_count = metric_none("NVML_ERROR_NOT_SUPPORTED");
}

static void test_snapshot_lines(void **state)
{
    (void)state;
    struct device dev[3];
    struct gpu_process proc;
    dev_init(&dev[0], DEV_GPU);
    snprintf(dev[0].name, sizeof(dev[0].name), "NVIDIA A100, \"80GB\"=x");
    snprintf(dev[0].uuid, sizeof(dev[0].uuid), "GPU-1");
    snprintf(dev[0].arch, sizeof(dev[0].arch), "Ampere");
    set(&dev[0].m[M_GPU_UTIL], 61.6, MSRC_DIRECT);
    set(&dev[0].m[M_MEM_USED], 1536.0 * 1048576 + 5, MSRC_DIRECT);
    set(&dev[0].m[M_MEM_TOTAL], 81920.0 * 1048576, MSRC_DIRECT);
    set(&dev[0].m[M_POWER], 250, MSRC_CARRIED);
    set(&dev[0].m[M_PSTATE], 2, MSRC_DIRECT);
    set(&dev[0].m[M_SM_OCCUPANCY], 12.5, MSRC_GPM);
    /* MIG device: its GPU-wide metrics are the parent's and not repeated */
    dev_init(&dev[1], DEV_MIG);
    dev[1].parent_pos = 0;
    dev[1].mig_index = 1;
    dev[1].gi_id = 3;
    dev[1].ci_id = 0;
    snprintf(dev[1].uuid, sizeof(dev[1].uuid), "MIG-1");
    snprintf(dev[1].parent_uuid, sizeof(dev[1].parent_uuid), "GPU-1");
    snprintf(dev[1].profile, sizeof(dev[1].profile), "3g.40gb");
    set(&dev[1].m[M_GPU_UTIL], 40, MSRC_GPM);
    set(&dev[1].m[M_TEMP], 50, MSRC_DIRECT);
    set(&dev[1].process_count, 1, MSRC_DIRECT);
    dev[1].nprocs = 1;
    /* a device with nothing known: no line at all */
    dev_init(&dev[2], DEV_GPU);
    dev[2].index = 1;
    memset(&proc, 0, sizeof(proc));
    proc.pid = 4242;
    proc.type = PROC_COMPUTE;
    snprintf(proc.name, sizeof(proc.name), "my app");
    snprintf(proc.command, sizeof(proc.command), "run \"x\" C:\\");
    proc.mem_bytes = metric_none(NULL);
    proc.sm_util = proc.mem_util = proc.enc_util = proc.dec_util = metric_none(NULL);
    proc.cpu_pct = proc.rss_bytes = metric_none(NULL);

    struct snapshot s;
    memset(&s, 0, sizeof(s));
    s.wall_ns = 1700000000123456789;
    s.devices = dev;
    s.ndevices = 3;
    s.procs = &proc;
    s.nprocs = 1;
    char *out = render(&s);
    assert_string_equal(
        out,
        "nvidia_smi,arch=Ampere,name=NVIDIA\\ A100\\,\\ \"80GB\"\\=x,pstate=P2,uuid=GPU-1,"
        "vendor=nvidia,index=0 "
        "utilization_gpu=62i,memory_used=1536i,memory_total=81920i,power_draw=250,"
        "memory_free=80384i,sm_occupancy_pct=12.5,lost=0i,power_w_source=\"carried\","
        "sm_occupancy_pct_source=\"gpm\" 1700000000123456789\n"
        "nvidia_smi_mig,arch=Ampere,name=NVIDIA\\ A100\\,\\ \"80GB\"\\=x,pstate=P2,uuid=GPU-1,"
        "vendor=nvidia,"
        "index=1,gpu_index=3,compute_index=0,parent_index=0,mig_uuid=MIG-1,profile=3g.40gb "
        "utilization_gpu=40i,process_count=1i,lost=0i,gpu_util_pct_source=\"gpm\" 1700000000123456789\n"
        "nvidia_smi_process,name=my\\ app,type=C,uuid=MIG-1,vendor=nvidia pid=4242i,"
        "command=\"run \\\"x\\\" C:\\\\\" 1700000000123456789\n");
    free(out);
}

/* Processes not visible from here have no name: each is tagged by its PID,
 * or the two below would be one series and one point in InfluxDB. */
static void test_unnamed_processes_apart(void **state)
{
    (void)state;
    struct device dev;
    struct gpu_process proc[2];
    dev_init(&dev, DEV_GPU);
    snprintf(dev.uuid, sizeof(dev.uuid), "GPU-1");
    set(&dev.m[M_TEMP], 40, MSRC_DIRECT);
    dev.nprocs = 2;
    memset(proc, 0, sizeof(proc));
    for (int i = 0; i < 2; i++) {
        proc[i].pid = 31337u + (unsigned)i;
        proc[i].type = PROC_COMPUTE;
        proc[i].mem_bytes = metric_none(NULL);
        proc[i].sm_util = proc[i].mem_util = proc[i].enc_util = proc[i].dec_util =
            metric_none(NULL);
        proc[i].cpu_pct = proc[i].rss_bytes = metric_none(NULL);
    }
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    s.wall_ns = 1700000000000000000;
    s.devices = &dev;
    s.ndevices = 1;
    s.procs = proc;
    s.nprocs = 2;
    char *out = render(&s);
    assert_string_equal(out, "nvidia_smi,uuid=GPU-1,"
                             "vendor=nvidia,index=0 temperature_gpu=40i,lost=0i "
                             "1700000000000000000\n"
                             "nvidia_smi_process,name=pid:31337,type=C,uuid=GPU-1,"
                             "vendor=nvidia pid=31337i "
                             "1700000000000000000\n"
                             "nvidia_smi_process,name=pid:31338,type=C,uuid=GPU-1,"
                             "vendor=nvidia pid=31338i "
                             "1700000000000000000\n");
    free(out);
}

/* Events: one line each, at its own wall clock, tagged by where it
 * happened; the dropped ones counted on a line of their own; a UUID as
 * the events helper read it cleaned and escaped. */
static void test_event_lines(void **state)
{
    (void)state;
    struct device dev[2];
    dev_init(&dev[0], DEV_GPU);
    snprintf(dev[0].uuid, sizeof(dev[0].uuid), "GPU-1");
    dev[0].index = 2;
    dev_init(&dev[1], DEV_MIG);
    dev[1].index = 2;
    dev[1].parent_pos = 0;
    dev[1].mig_index = 1;
    dev[1].gi_id = 5;
    dev[1].ci_id = 0;
    snprintf(dev[1].uuid, sizeof(dev[1].uuid), "MIG-1");
    struct gpu_event ev[3];
    memset(ev, 0, sizeof(ev));
    snprintf(ev[0].gpu_uuid, sizeof(ev[0].gpu_uuid), "GPU-1");
    ev[0].wall_ns = 1700000000000000001;
    ev[0].device_pos = 1;
    ev[0].gi_id = 5;
    ev[0].ci_id = 0;
    ev[0].xid = 94;
    ev[0].type = NVML_EVENT_TYPE_XID;
    snprintf(ev[1].gpu_uuid, sizeof(ev[1].gpu_uuid), "GPU-1");
    ev[1].wall_ns = 1700000000000000002;
    ev[1].device_pos = 0;
    ev[1].gi_id = ev[1].ci_id = -1;
    ev[1].type = NVML_EVENT_TYPE_DOUBLE_BIT_ECC;
    /* a GPU not in the snapshot, with every character line protocol
     * treats specially and an escape in its UUID */
    snprintf(ev[2].gpu_uuid, sizeof(ev[2].gpu_uuid), "GPU-a b,c=d\"e\x1b[2J\\");
    ev[2].wall_ns = 1700000000000000003;
    ev[2].device_pos = -1;
    ev[2].gi_id = ev[2].ci_id = -1;
    ev[2].xid = 79;
    ev[2].type = NVML_EVENT_TYPE_XID;
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    s.wall_ns = 1700000000999999999;
    s.devices = dev;
    s.ndevices = 2;
    s.events = ev;
    s.nevents = 3;
    s.events_total = 5; /* two lost to the ring */
    struct eventlog_batch b;
    eventlog_all(&s, &b);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    influx_write_events(f, &s, &b);
    fclose(f);
    assert_string_equal(
        buf,
        "migmon_event,type=dropped count=2i 1700000000999999999\n"
        "migmon_event,uuid=GPU-1,"
        "vendor=nvidia,index=2,mig_uuid=MIG-1,mig_index=1,gi_id=5,ci_id=0,type=xid,"
        "xid=94 count=1i,code=94i,meaning=\"contained ECC error (only the processes using the bad "
        "memory were affected)\",action=\"restart the jobs on the affected MIG instance\" "
        "1700000000000000001\n"
        "migmon_event,uuid=GPU-1,vendor=nvidia,index=2,type=dbe count=1i 1700000000000000002\n"
        "migmon_event,uuid=GPU-a\\ b\\,c\\=d\"e?[2J?,"
        "vendor=nvidia,type=xid,xid=79 count=1i,code=79i,"
        "meaning=\"GPU has fallen off the bus\",action=\"drain the node and reset or reseat the "
        "GPU\" 1700000000000000003\n");
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape_measurement),
        cmocka_unit_test(test_escape_key),
        cmocka_unit_test(test_escape_string),
        cmocka_unit_test(test_escape_truncates_like_snprintf),
        cmocka_unit_test(test_snapshot_lines),
        cmocka_unit_test(test_unnamed_processes_apart),
        cmocka_unit_test(test_event_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
