/* The Prometheus exposition (src/export/prom.c): label escaping, none
 * values absent (never 0), percentages as 0-1 ratios, base units, label
 * sets unique, families contiguous with HELP and TYPE first, the dcgm
 * names and units, per-process series only when asked for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/health_rules.h"
#include "export/prom.h"

/* GPU 0 (MIG on) with three MIG devices: GI 1 (CI 0 and CI 1) and GI 2. */
static void make_snapshot(struct snapshot *s)
{
    memset(s, 0, sizeof(*s));
    assert_int_equal(snapshot_reserve(s, 4), 0);
    assert_int_equal(snapshot_reserve_procs(s, 3), 0);
    s->ndevices = 4;
    s->gpu_ok = true;
    s->wall_ns = 1700000000123000000;
    snprintf(s->driver_version, sizeof(s->driver_version), "550.54.15");
    s->host_ok = true;
    snprintf(s->host.hostname, sizeof(s->host.hostname), "node-1");
    s->host.online = 8;
    s->host.cpu_total = metric_direct(25);
    s->host.mem.total = metric_direct(1024.0 * 1024 * 1024);
    for (size_t i = 0; i < 4; i++) {
        struct device *d = &s->devices[i];
        memset(d, 0, sizeof(*d));
        for (int k = 0; k < M_COUNT; k++)
            d->m[k] = metric_none("NVML_ERROR_NOT_SUPPORTED");
        d->index = 0;
        d->cc_major = 9;
        d->cc_minor = 0;
        snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "00000000:19:00.0");
        d->process_count = metric_direct(0);
        if (i == 0) {
            d->kind = DEV_GPU;
            d->mig_index = -1;
            d->parent_pos = -1;
            d->gi_id = d->ci_id = -1;
            d->mig_enabled = true;
            snprintf(d->uuid, sizeof(d->uuid), "GPU-aaaa");
            snprintf(d->name, sizeof(d->name), "NVIDIA H200 \"SXM\"\\x");
            d->m[M_GPU_UTIL] = metric_direct(42);
            d->m[M_MEM_USED] = metric_direct(2.0 * 1048576);
            d->m[M_MEM_TOTAL] = metric_direct(10.0 * 1048576);
            d->m[M_CLK_SM] = metric_direct(1980);
            d->m[M_ENERGY] = metric_direct(12.5);
            d->m[M_TEMP] = metric_none("NVML_ERROR_NOT_SUPPORTED");
            d->m[M_TEMP].value = 0; /* a none value is never written */
        } else {
            d->kind = DEV_MIG;
            d->mig_index = (int)i - 1;
            d->parent_pos = 0;
            d->gi_id = i == 3 ? 2 : 1;
            d->ci_id = i == 2 ? 1 : 0;
            snprintf(d->uuid, sizeof(d->uuid), "MIG-%zu", i);
            snprintf(d->parent_uuid, sizeof(d->parent_uuid), "GPU-aaaa");
            snprintf(d->name, sizeof(d->name), "NVIDIA H200 MIG 3g.71gb");
            snprintf(d->profile, sizeof(d->profile), i == 2 ? "1c.3g.71gb" : "3g.71gb");
            d->m[M_GPU_UTIL] = (struct metric){.value = 85, .src = MSRC_GPM};
            d->m[M_SM_UTIL] = (struct metric){.value = 30, .src = MSRC_ESTIMATE};
            d->m[M_MEM_USED] = metric_direct(1048576);
            d->m[M_MEM_TOTAL] = metric_direct(4.0 * 1048576);
        }
    }
    /* MIG 1 runs pid 7001 (listed twice, as NVML may) in a pod; MIG 3 pid 7002 */
    struct gpu_process *p = s->procs;
    memset(p, 0, 3 * sizeof(*p));
    for (int k = 0; k < 3; k++) {
        p[k].pid = k == 2 ? 7002 : 7001;
        p[k].mem_bytes = metric_direct(1000 + k);
        p[k].sm_util = metric_none(NULL);
        p[k].mem_util = p[k].cpu_pct = p[k].rss_bytes = metric_none(NULL);
        snprintf(p[k].name, sizeof(p[k].name), "python");
    }
    snprintf(p[0].container, sizeof(p[0].container), "k8s:0123-pod/containerd:abcdef123456");
    s->nprocs = 3;
    s->devices[1].proc_first = 0;
    s->devices[1].nprocs = 2;
    s->devices[3].proc_first = 2;
    s->devices[3].nprocs = 1;
}

static char *render(const struct snapshot *s, bool dcgm, bool procs)
{
    struct prom_buf b = {0};
    struct prom_opts o = {.dcgm = dcgm, .processes = procs};
    assert_int_equal(prom_render(&b, s, &o), 0);
    char *page = strdup(b.p);
    prom_buf_free(&b);
    return page;
}

/* The sample line of name whose labels contain every fragment in want
 * ("k=\"v\"" pieces, NULL-terminated); NULL when there is none. */
static const char *find_sample(const char *page, const char *name, const char *const *want)
{
    size_t nl = strlen(name);
    for (const char *l = page; *l; l = strchr(l, '\n') + 1) {
        const char *eol = strchr(l, '\n');
        if (!eol)
            break;
        if (strncmp(l, name, nl) != 0 || (l[nl] != '{' && l[nl] != ' '))
            continue;
        bool all = true;
        for (const char *const *w = want; *w && all; w++) {
            const char *hit = strstr(l, *w);
            all = hit && hit < eol;
        }
        if (all)
            return l;
    }
    return NULL;
}

/* The value of a sample line. */
static double value_of(const char *line)
{
    const char *sp = strchr(line, '\n');
    while (sp > line && sp[-1] != ' ')
        sp--;
    return strtod(sp, NULL);
}

static void test_escape(void **state)
{
    (void)state;
    char out[128];
    prom_escape_label("a\\b\"c\nd", out, sizeof(out));
    assert_string_equal(out, "a\\\\b\\\"c\\nd");
    /* control characters and invalid UTF-8 become '?'; valid UTF-8 stays */
    prom_escape_label("x\x1b[2J\x7f\xff\xfe\xc3\xa9\xe2\x80\xae\xed\xa0\x80y", out, sizeof(out));
    assert_string_equal(out, "x?[2J???\xc3\xa9\xe2\x80\xae???y");
    /* truncation never splits an escape or a character */
    assert_int_equal(prom_escape_label("ab\"", out, 4), 2);
    assert_string_equal(out, "ab");
    assert_int_equal(prom_escape_label("a\xc3\xa9", out, 3), 1);
    assert_string_equal(out, "a");
    prom_escape_label(NULL, out, sizeof(out));
    assert_string_equal(out, "");
}

static void test_values_units_and_absence(void **state)
{
    (void)state;
    struct snapshot s;
    make_snapshot(&s);
    char *page = render(&s, false, false);
    /* percent -> ratio, with the source */
    const char *gpu[] = {"gpu=\"0\"", "uuid=\"GPU-aaaa\"", "source=\"direct\"", NULL};
    const char *l = find_sample(page, "migmon_gpu_utilization_ratio", gpu);
    assert_non_null(l);
    assert_true(value_of(l) == 0.42);
    /* MHz -> Hz; J counter */
    l = find_sample(page, "migmon_gpu_sm_clock_hertz", gpu);
    assert_non_null(l);
    assert_true(value_of(l) == 1980e6);
    assert_non_null(strstr(page, "# TYPE migmon_gpu_energy_joules_total counter\n"));
    /* a none value: no sample, and no HELP/TYPE for a family without one */
    assert_null(strstr(page, "migmon_gpu_temperature_celsius"));
    assert_null(strstr(page, "migmon_gpu_power_watts"));
    /* the label value is escaped */
    assert_non_null(strstr(page, "model=\"NVIDIA H200 \\\"SXM\\\"\\\\x\""));
    /* MIG series: parent identity plus the instance's, GPM and estimate told apart */
    const char *mig[] = {"gpu_instance_id=\"2\"", "compute_instance_id=\"0\"",
                         "mig_profile=\"3g.71gb\"", "mig_uuid=\"MIG-3\"", "uuid=\"GPU-aaaa\"",
                         "source=\"gpm\"", NULL};
    l = find_sample(page, "migmon_mig_utilization_ratio", mig);
    assert_non_null(l);
    assert_true(value_of(l) == 0.85);
    const char *est[] = {"mig_uuid=\"MIG-3\"", "source=\"estimate\"", NULL};
    l = find_sample(page, "migmon_mig_sm_utilization_ratio", est);
    assert_non_null(l);
    assert_true(value_of(l) == 0.3);
    /* a GPU-wide metric is the parent's only: no migmon_mig_temperature etc. */
    assert_null(strstr(page, "migmon_mig_sm_clock_hertz"));
    /* host series, identity */
    const char *none[] = {"source=\"direct\"", NULL};
    l = find_sample(page, "migmon_host_cpu_utilization_ratio", none);
    assert_non_null(l);
    assert_true(value_of(l) == 0.25);
    assert_non_null(strstr(page, "migmon_host_info{hostname=\"node-1\"} 1\n"));
    assert_non_null(strstr(page, "mig_mode=\"enabled\"} 1\n"));
    assert_non_null(strstr(page, "migmon_last_sample_timestamp_seconds 1700000000.123\n"));
    /* no per-process or dcgm series unless asked for */
    assert_null(strstr(page, "migmon_process_"));
    assert_null(strstr(page, "DCGM_FI_"));
    assert_int_equal(page[strlen(page) - 1], '\n');
    free(page);
    snapshot_free(&s);
}

/* Every family's samples are contiguous and come after its one HELP and
 * TYPE; every name+labels is unique. */
static void check_structure(const char *page)
{
    char *copy = strdup(page);
    size_t cap = 4096, n = 0, nf = 0;
    char **keys = calloc(cap, sizeof(*keys));
    char **fams = calloc(cap, sizeof(*fams));
    char cur[128] = "", typed[128] = "";
    for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "# HELP ", 7) == 0) {
            sscanf(line + 7, "%127s", cur);
            for (size_t j = 0; j < nf; j++)
                assert_string_not_equal(fams[j], cur); /* one HELP per family */
            fams[nf++] = line + 7;
            continue;
        }
        if (strncmp(line, "# TYPE ", 7) == 0) {
            sscanf(line + 7, "%127s", typed);
            assert_string_equal(typed, cur);
            continue;
        }
        char name[128];
        size_t nl = strcspn(line, "{ ");
        assert_true(nl < sizeof(name));
        memcpy(name, line, nl);
        name[nl] = '\0';
        assert_string_equal(name, cur); /* contiguous, HELP first */
        assert_string_equal(name, typed);
        char *sp = strrchr(line, ' ');
        *sp = '\0';
        for (size_t j = 0; j < n; j++)
            assert_string_not_equal(keys[j], line);
        assert_true(n < cap);
        keys[n++] = line;
    }
    assert_true(n > 0);
    free(keys);
    free(fams);
    free(copy);
}

static void test_structure_and_unique_labels(void **state)
{
    (void)state;
    struct snapshot s;
    make_snapshot(&s);
    char *page = render(&s, true, true);
    check_structure(page);
    free(page);
    /* two MIG devices whose ids could not be read share a label set: the
     * second is left out rather than written twice */
    s.devices[2].gi_id = s.devices[2].ci_id = -1;
    s.devices[3].gi_id = s.devices[3].ci_id = -1;
    snprintf(s.devices[2].uuid, sizeof(s.devices[2].uuid), "%s", "");
    snprintf(s.devices[3].uuid, sizeof(s.devices[3].uuid), "%s", "");
    snprintf(s.devices[3].profile, sizeof(s.devices[3].profile), "1c.3g.71gb");
    page = render(&s, true, true);
    check_structure(page);
    const char *blank[] = {"gpu_instance_id=\"\"", NULL};
    assert_non_null(find_sample(page, "migmon_mig_info", blank));
    free(page);
    snapshot_free(&s);
}

static void test_dcgm(void **state)
{
    (void)state;
    struct snapshot s;
    make_snapshot(&s);
    /* dcgm-exporter's MIG model: a MIG-mode GPU only through its GPU
     * instances, each carrying the GPU's energy (and temperature, power,
     * clocks); no whole-GPU series of its own */
    for (size_t i = 1; i < s.ndevices; i++) /* as the backend copies GPU-wide values */
        s.devices[i].m[M_ENERGY] = s.devices[0].m[M_ENERGY];
    char *page = render(&s, true, false);
    const char *gpu_only[] = {"gpu=\"0\"", "device=\"nvidia0\"", NULL};
    for (const char *l0 = strstr(page, "\nDCGM_FI_DEV_FB_USED{"); l0;
         l0 = strstr(l0 + 1, "\nDCGM_FI_DEV_FB_USED{")) {
        const char *eol = strchr(l0 + 1, '\n'), *gi = strstr(l0, "GPU_I_ID=");
        assert_true(gi && eol && gi < eol); /* every FB_USED is an instance's */
    }
    const char *gi1e[] = {"GPU_I_ID=\"1\"", NULL};
    const char *le = find_sample(page, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", gi1e);
    assert_non_null(le);
    assert_true(value_of(le) == 12500); /* the GPU's, in mJ */
    assert_null(find_sample(page, "DCGM_FI_DEV_GPU_UTIL", gpu_only));
    free(page);
    /* the same GPU outside MIG mode: its own series */
    s.devices[0].mig_enabled = false;
    page = render(&s, true, false);
    const char *gpu[] = {"gpu=\"0\"", "UUID=\"GPU-aaaa\"", "device=\"nvidia0\"",
                         "modelName=\"NVIDIA H200 \\\"SXM\\\"\\\\x\"", "Hostname=\"node-1\"",
                         NULL};
    const char *l = find_sample(page, "DCGM_FI_DEV_GPU_UTIL", gpu);
    assert_non_null(l);
    assert_true(value_of(l) == 42); /* percent, as DCGM has it */
    assert_null(strstr(l, "source="));
    l = find_sample(page, "DCGM_FI_DEV_FB_FREE", gpu);
    assert_non_null(l);
    assert_true(value_of(l) == 8); /* MiB */
    l = find_sample(page, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", gpu);
    assert_non_null(l);
    assert_true(value_of(l) == 12500); /* mJ */
    /* MIG: GPU_I labels; the GI profile for a compute instance's; one
     * series per GPU instance (its first compute instance) */
    const char *gi1[] = {"GPU_I_ID=\"1\"", "GPU_I_PROFILE=\"3g.71gb\"", NULL};
    l = find_sample(page, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", gi1);
    assert_non_null(l);
    assert_true(value_of(l) == 0.85);
    assert_null(find_sample(l + 1, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", gi1));
    /* PROF values come from GPM only: the estimate is not one */
    assert_null(strstr(page, "DCGM_FI_PROF_SM_ACTIVE"));
    /* DEV_GPU_UTIL is the GPU's, absent on MIG */
    assert_null(find_sample(page, "DCGM_FI_DEV_GPU_UTIL", gi1));
    const char *gi1mem[] = {"GPU_I_ID=\"1\"", NULL};
    l = find_sample(page, "DCGM_FI_DEV_FB_USED", gi1mem);
    assert_non_null(l);
    assert_true(value_of(l) == 1);
    free(page);

    /* DCGM's int64 fields are whole numbers: MiB rounded down as
     * nvidia-smi has them, mJ without the residue of J x 1000 */
    s.devices[0].m[M_MEM_USED].value = 2.75 * 1048576; /* free 7.25 MiB */
    s.devices[0].m[M_ENERGY].value = 12.5 + 1e-13;
    s.devices[0].m[M_GPU_UTIL].value = 41.6;
    page = render(&s, true, false);
    l = find_sample(page, "DCGM_FI_DEV_FB_USED", gpu);
    assert_non_null(l);
    assert_true(value_of(l) == 2);
    l = find_sample(page, "DCGM_FI_DEV_FB_FREE", gpu);
    assert_non_null(l);
    assert_true(value_of(l) == 7);
    l = find_sample(page, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", gpu);
    assert_non_null(l);
    assert_non_null(strstr(l, "} 12500\n"));
    l = find_sample(page, "DCGM_FI_DEV_GPU_UTIL", gpu);
    assert_non_null(l);
    assert_true(value_of(l) == 42);
    free(page);
    snapshot_free(&s);
}

static void test_processes(void **state)
{
    (void)state;
    struct snapshot s;
    make_snapshot(&s);
    char *page = render(&s, false, true);
    const char *p1[] = {"pid=\"7001\"", "mig_uuid=\"MIG-1\"", "pod_uid=\"0123-pod\"",
                        "container=\"containerd:abcdef123456\"", "process_name=\"python\"",
                        NULL};
    const char *l = find_sample(page, "migmon_process_gpu_memory_bytes", p1);
    assert_non_null(l);
    assert_true(value_of(l) == 1000);
    /* listed twice on one device: one series */
    const char *pid[] = {"pid=\"7001\"", NULL};
    assert_null(find_sample(l + 1, "migmon_process_gpu_memory_bytes", pid));
    const char *p2[] = {"pid=\"7002\"", "mig_uuid=\"MIG-3\"", NULL};
    l = find_sample(page, "migmon_process_gpu_memory_bytes", p2);
    assert_non_null(l);
    assert_null(strstr(l, "container="));
    /* none values absent */
    assert_null(strstr(page, "migmon_process_sm_utilization_ratio"));
    free(page);
    snapshot_free(&s);
}

/* A second render into the same buffer reuses it, and an empty snapshot
 * (no driver) still gives a valid page. */
/* The node's own series (prom_node.c): each leaf's idleness, the node's
 * totals over its leaves, a figure that cannot be given absent. */
static void test_node_summary(void **state)
{
    (void)state;
    struct snapshot s;
    make_snapshot(&s);
    char *page = render(&s, false, false);
    static const char *const none[] = {NULL};
    static const char *const mig1[] = {"mig_uuid=\"MIG-1\"", NULL};
    static const char *const mig3[] = {"mig_uuid=\"MIG-3\"", NULL};
    /* the GPU is split into instances: no leaf, no idle series */
    assert_null(find_sample(page, "migmon_gpu_idle", none));
    assert_float_equal(value_of(find_sample(page, "migmon_mig_idle", mig1)), 0, 0);
    assert_float_equal(value_of(find_sample(page, "migmon_node_gpus", none)), 1, 0);
    assert_float_equal(value_of(find_sample(page, "migmon_node_mig_devices", none)), 3, 0);
    assert_float_equal(value_of(find_sample(page, "migmon_node_idle_devices", none)), 0, 0);
    assert_float_equal(value_of(find_sample(page, "migmon_node_utilization_ratio_mean", none)),
                       0.85, 1e-12);
    assert_float_equal(value_of(find_sample(page, "migmon_node_utilization_ratio_max", none)),
                       0.85, 1e-12);
    /* the leaves' memory: the GPU's own is not added to its instances' */
    assert_float_equal(value_of(find_sample(page, "migmon_node_memory_used_bytes", none)),
                       3.0 * 1048576, 0);
    assert_float_equal(value_of(find_sample(page, "migmon_node_memory_total_bytes", none)),
                       12.0 * 1048576, 0);
    assert_float_equal(value_of(find_sample(page, "migmon_node_memory_devices", none)), 3, 0);
    /* no verdict yet: no health figure, no pod */
    assert_null(find_sample(page, "migmon_node_devices_not_ok", none));
    assert_null(find_sample(page, "migmon_node_gpus_verdict", none));
    assert_null(find_sample(page, "migmon_node_pods", none));
    free(page);

    /* MIG 3 without utilisation and no process: idle by the rule; MIG 2's
     * total unknown: no memory figure (the used of some, the total of
     * others would be no share); verdicts: the GPU ok, MIG 1 warning */
    s.devices[3].m[M_GPU_UTIL] = metric_none("NVML_ERROR_NOT_SUPPORTED");
    s.devices[3].process_count = metric_direct(0);
    s.devices[2].m[M_MEM_TOTAL] = metric_none("NVML_ERROR_NOT_SUPPORTED");
    s.devices[0].health = HEALTH_OK;
    s.devices[1].health = HEALTH_WARNING;
    page = render(&s, false, false);
    assert_float_equal(value_of(find_sample(page, "migmon_mig_idle", mig3)), 1, 0);
    assert_float_equal(value_of(find_sample(page, "migmon_node_idle_devices", none)), 1, 0);
    assert_float_equal(value_of(find_sample(page, "migmon_node_utilization_ratio_mean", none)),
                       0.85, 1e-12);
    assert_null(find_sample(page, "migmon_node_memory_used_bytes", none));
    assert_null(find_sample(page, "migmon_node_memory_total_bytes", none));
    assert_float_equal(value_of(find_sample(page, "migmon_node_devices_not_ok", none)), 1, 0);
    assert_float_equal(value_of(find_sample(page, "migmon_node_gpus_warning", none)), 1, 0);
    assert_float_equal(value_of(find_sample(page, "migmon_node_gpus_action", none)), 0, 0);
    assert_float_equal(value_of(find_sample(page, "migmon_node_gpus_verdict", none)), 1, 0);
    free(page);

    /* no utilisation and no process count anywhere: idleness unknown */
    for (size_t i = 1; i < 4; i++) {
        s.devices[i].m[M_GPU_UTIL] = metric_none("NVML_ERROR_NOT_SUPPORTED");
        s.devices[i].process_count = metric_none("NVML_ERROR_NOT_SUPPORTED");
    }
    page = render(&s, false, false);
    assert_null(find_sample(page, "migmon_mig_idle", none));
    assert_null(find_sample(page, "migmon_node_idle_devices", none));
    assert_null(find_sample(page, "migmon_node_utilization_ratio_mean", none));
    assert_null(find_sample(page, "migmon_node_utilization_ratio_max", none));
    free(page);
    snapshot_free(&s);
}

static void test_reuse_and_empty(void **state)
{
    (void)state;
    struct snapshot s;
    make_snapshot(&s);
    struct prom_buf b = {0};
    struct prom_opts o = {.dcgm = true};
    assert_int_equal(prom_render(&b, &s, &o), 0);
    size_t len = b.len;
    char *p = b.p;
    assert_int_equal(prom_render(&b, &s, &o), 0);
    assert_int_equal(b.len, len);
    assert_ptr_equal(b.p, p);
    snapshot_free(&s);
    struct snapshot empty;
    memset(&empty, 0, sizeof(empty));
    assert_int_equal(prom_render(&b, &empty, &o), 0);
    assert_non_null(strstr(b.p, "migmon_nvml_up 0\n"));
    assert_null(strstr(b.p, "migmon_driver_info"));
    check_structure(b.p);
    prom_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_values_units_and_absence),
        cmocka_unit_test(test_structure_and_unique_labels),
        cmocka_unit_test(test_dcgm),
        cmocka_unit_test(test_processes),
        cmocka_unit_test(test_reuse_and_empty),
        cmocka_unit_test(test_node_summary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
