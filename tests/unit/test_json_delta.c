/* A recording's lines of schema 2 (src/export/json_delta.c): for every
 * simulated scenario, tick after tick, the delta line applied to the full
 * object of the snapshot before it (the reader's rule, src/backend/replay/delta.c)
 * gives the full object json.c writes for the snapshot, member for member;
 * a snapshot that did not change gives a line with its times alone; a
 * change of the device count gives a full line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include <jansson.h>

#include "backend/replay/delta.h"
#include "engine/collect.h"
#include "export/json.h"
#include "export/json_delta.h"
#include "sim_env.h"

static char *render(const struct snapshot *s, const struct snapshot *prev, bool delta, bool *full)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_non_null(m);
    bool f = true;
    if (delta)
        f = json_delta_write(m, s, prev);
    else
        json_write_snapshot_as(m, s, false, JSON_DELTA_SCHEMA);
    fclose(m);
    if (full)
        *full = f;
    return buf;
}

static json_t *load(const char *text)
{
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    if (!j)
        fail_msg("not JSON: %s: %.200s", je.text, text);
    return j;
}

/* The first path where a and b differ, into out. */
static bool differ(const json_t *a, const json_t *b, char *out, size_t cap)
{
    if (json_equal(a, b))
        return false;
    if (json_is_object(a) && json_is_object(b)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)a, k, v) {
            char sub[512];
            if (differ(v, json_object_get(b, k), sub, sizeof(sub))) {
                snprintf(out, cap, ".%s%s", k, sub);
                return true;
            }
        }
        json_object_foreach((json_t *)b, k, v) {
            if (!json_object_get(a, k)) {
                snprintf(out, cap, ".%s (absent before)", k);
                return true;
            }
        }
    }
    if (json_is_array(a) && json_is_array(b) && json_array_size(a) == json_array_size(b)) {
        for (size_t i = 0; i < json_array_size(a); i++) {
            char sub[512];
            if (differ(json_array_get(a, i), json_array_get(b, i), sub, sizeof(sub))) {
                snprintf(out, cap, "[%zu]%s", i, sub);
                return true;
            }
        }
    }
    char *x = json_dumps(a, JSON_ENCODE_ANY), *y = json_dumps(b, JSON_ENCODE_ANY);
    snprintf(out, cap, ": %.120s vs %.120s", x ? x : "?", y ? y : "?");
    free(x);
    free(y);
    return true;
}

struct run {
    const char *scenario; /* sim/scenarios/…; NULL: AMD fixtures */
    const char *simtime;
    int ticks;
};

/* Returns how many lines were written in full. */
static int check_run(const struct run *r)
{
    char err[2048], proc[1024], sysfs[1024];
    const char *src = getenv("MIGMON_SRC");
    assert_non_null(src);
    struct collect_opts o = {.interval_ms = 100};
    if (r->scenario) {
        use_scenario(r->scenario, r->simtime);
        o.nvml_path = getenv("MIGMON_SIM_LIB");
        snprintf(proc, sizeof(proc), "%s/tests/fixtures/proc/gpu-host", src);
    } else {
        snprintf(proc, sizeof(proc), "%s/tests/fixtures/proc/amd-cpx", src);
        snprintf(sysfs, sizeof(sysfs), "%s/tests/fixtures/sysfs/mi300x-cpx", src);
        o.backends = "amdgpu";
        o.sysfs_root = sysfs;
    }
    o.proc_root = proc;
    struct collector c;
    assert_int_equal(collect_open(&c, &o, err, sizeof(err)), 0);
    struct snapshot s[2];
    memset(s, 0, sizeof(s));
    int fulls = 0;
    json_t *state = NULL;
    for (int t = 0; t < r->ticks; t++) {
        struct snapshot *cur = &s[t % 2], *prev = t ? &s[(t + 1) % 2] : NULL;
        collect_tick(&c, cur);
        bool full;
        char *d = render(cur, prev, true, &full);
        char *w = render(cur, NULL, false, NULL);
        json_t *dj = load(d), *want = load(w);
        fulls += full;
        if (full) {
            json_decref(state);
            state = json_incref(dj);
        } else {
            assert_true(json_is_true(json_object_get(dj, "delta")));
            assert_true(strlen(d) < strlen(w));
            replay_delta_apply(state, dj);
        }
        char where[1024];
        if (differ(want, state, where, sizeof(where)))
            fail_msg("%s tick %d: %s", r->scenario ? r->scenario : "amdgpu", t, where);
        /* the same snapshot again: only its times */
        if (t == r->ticks - 1) {
            char *again = render(cur, cur, true, &full);
            json_t *aj = load(again);
            assert_false(full);
            assert_int_equal(json_object_size(aj), 4); /* schema, delta, elapsed_ns, timestamp */
            json_decref(aj);
            free(again);
        }
        json_decref(dj);
        json_decref(want);
        free(d);
        free(w);
    }
    json_decref(state);
    snapshot_free(&s[0]);
    snapshot_free(&s[1]);
    collect_close(&c);
    return fulls;
}

static void test_scenarios(void **st)
{
    (void)st;
    static const struct run runs[] = {
        {"a100-sxm4-80gb.ini", "10+1", 12},
        {"dgx-a100-8x7.ini", "0+1", 24}, /* GPU 5 is lost at t = 20, GPU 2's NVLink errors grow: whole devices */
        {"faults.ini", "0+1", 25},
        {"process-churn.ini", "0+1", 20},
        {"hostile.ini", "0+1", 8},
        {"inaccessible-gpu.ini", "0+1", 6},
        {"mig-no-uuid.ini", "0+1", 6},
        {"mig-unattributed.ini", "0+1", 8},
        {"vram-glitch.ini", "0+1", 12},
        {"h100-pcie-mig-535.ini", "10+1", 8},
        {"h200-mig.ini", "0+1", 8}, /* an Xid 94: the events change */
        {"no-gpu.ini", "0+1", 4},
        {NULL, NULL, 6}, /* AMD MI300X in CPX partitions: the partition modes */
    };
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
        assert_int_equal(check_run(&runs[i]), 1); /* the first line alone in full */
}

/* mig-reconfig: the layout changes at t = 60 and 70, so a snapshot with
 * another number of devices is a full line, and the deltas around it hold. */
static void test_device_count_changes(void **st)
{
    (void)st;
    const struct run r = {"mig-reconfig.ini", "56+2", 10};
    assert_true(check_run(&r) >= 2);
}

/* Two snapshots of one simulated instant, the second changed in one field
 * at a time: each change, whatever member it is, reaches the reader. */
typedef void (*mutate_fn)(struct snapshot *s);
static void m_health(struct snapshot *s) { s->devices[1].health = 3; s->devices[1].health_rules = 1u << 2; }
static void m_stall(struct snapshot *s) { s->devices[0].stall = "stalled 12 s in nvmlDeviceGetPowerUsage"; }
static void m_lost(struct snapshot *s) { s->devices[0].lost = true; s->devices[0].lost_for_s = 2.5; }
static void m_throttle(struct snapshot *s) { s->devices[0].throttle_valid = true; s->devices[0].throttle_mask ^= 4; }
static void m_name(struct snapshot *s) { snprintf(s->devices[2].name, sizeof(s->devices[2].name), "other"); }
static void m_serial(struct snapshot *s) { snprintf(s->devices[0].serial, sizeof(s->devices[0].serial), "123"); }
static void m_profile(struct snapshot *s) { snprintf(s->devices[2].profile, sizeof(s->devices[2].profile), "2g.20gb"); s->devices[2].slices = 2; }
static void m_ids(struct snapshot *s) { s->devices[2].gi_id = 9; s->devices[2].ci_id = 1; }
static void m_cc(struct snapshot *s) { s->devices[0].cc_major = 7; }
static void m_mig(struct snapshot *s) { s->devices[0].mig_enabled = !s->devices[0].mig_enabled; }
static void m_inacc(struct snapshot *s) { s->devices[0].inaccessible = "NVML_ERROR_NO_PERMISSION"; }
static void m_node(struct snapshot *s) { snprintf(s->devices[0].node, sizeof(s->devices[0].node), "n1"); snprintf(s->devices[0].pod.name, sizeof(s->devices[0].pod.name), "p"); }
static void m_why(struct snapshot *s) { s->devices[1].m[M_TEMP] = metric_none("a new reason"); }
static void m_src(struct snapshot *s) { s->devices[1].m[M_GPU_UTIL].src = MSRC_CARRIED; }
static void m_scope(struct snapshot *s) { s->devices[2].m[M_SM_UTIL].scope = MSCOPE_GPU_INSTANCE; }
static void m_value(struct snapshot *s) { s->devices[2].m[M_MEM_USED].value += 4096; }
static void m_nan(struct snapshot *s) { s->devices[0].m[M_POWER].value = NAN; }
static void m_pcount(struct snapshot *s) { s->devices[0].process_count = metric_direct(42); }
static void m_pvalue(struct snapshot *s) { if (s->nprocs) s->procs[0].cpu_pct = metric_direct(12.5); }
static void m_pnone(struct snapshot *s)
{
    struct metric *m = &s->procs[0].mem_bytes;
    *m = metric_ok(m) ? metric_none("gone") : metric_direct(1e6);
}
static void m_pname(struct snapshot *s) { if (s->nprocs) snprintf(s->procs[0].name, sizeof(s->procs[0].name), "renamed"); }
static void m_pgone(struct snapshot *s) { for (size_t i = 0; i < s->ndevices; i++) if (s->devices[i].nprocs) { s->devices[i].nprocs--; break; } }
static void m_driver(struct snapshot *s) { snprintf(s->driver_version, sizeof(s->driver_version), "999.1"); s->cuda_driver_version = 0; }
static void m_dcgm(struct snapshot *s) { snprintf(s->dcgm_info, sizeof(s->dcgm_info), "DCGM gone"); }
static void m_gpuerr(struct snapshot *s) { s->gpu_ok = false; snprintf(s->gpu_error, sizeof(s->gpu_error), "driver gone"); s->partial = true; }
static void m_host(struct snapshot *s) { snprintf(s->host.hostname, sizeof(s->host.hostname), "h2"); }
static void m_hostval(struct snapshot *s) { s->host.mem.used.value += 1; s->host.loadavg[2] = metric_none("no loadavg"); }
static void m_event(struct snapshot *s)
{
    s->events_total++;
    if (s->nevents < s->events_cap) {
        struct gpu_event *e = &s->events[s->nevents++];
        memset(e, 0, sizeof(*e));
        e->device_pos = 0;
        e->gi_id = e->ci_id = -1;
        e->xid = 79;
        e->type = 8; /* NVML's critical Xid event */
    } else {
        s->events_why = "events stopped";
    }
}

/* The first GPU with MIG devices after it. */
static size_t mig_gpu(const struct snapshot *s)
{
    for (size_t i = 0; i + 1 < s->ndevices; i++)
        if (s->devices[i].kind == DEV_GPU && s->devices[i + 1].kind == DEV_MIG)
            return i;
    fail_msg("no MIG device");
    return 0;
}

/* The GPU's power changes, its instances' with it: they follow it. */
static void m_follow(struct snapshot *s)
{
    size_t g = mig_gpu(s);
    s->devices[g].m[M_POWER].value += 1;
    for (size_t i = g + 1; i < s->ndevices && s->devices[i].kind == DEV_MIG; i++) {
        s->devices[i].m[M_POWER].value = s->devices[g].m[M_POWER].value;
        s->devices[i].m[M_ENERGY] = metric_none("not for an instance");
    }
}
/* The GPU's alone: its instances keep theirs, said. */
static void m_nofollow(struct snapshot *s) { s->devices[mig_gpu(s)].m[M_POWER].value += 1; }
/* An instance's own, the GPU's the same. */
static void m_own(struct snapshot *s) { s->devices[mig_gpu(s) + 1].m[M_TEMP].value += 5; }
/* The GPU written whole (its name), an instance's value its own. */
static void m_gpu_whole(struct snapshot *s)
{
    size_t g = mig_gpu(s);
    snprintf(s->devices[g].name, sizeof(s->devices[g].name), "renamed GPU");
    s->devices[g + 1].m[M_POWER].value += 3;
}

static void test_each_member(void **st)
{
    (void)st;
    static const mutate_fn muts[] = {m_health, m_stall, m_lost, m_throttle, m_name, m_serial,
                                     m_profile, m_ids, m_cc, m_mig, m_inacc, m_node, m_why,
                                     m_src, m_scope, m_value, m_nan, m_pcount, m_pvalue,
                                     m_pnone, m_pname, m_pgone, m_driver, m_dcgm, m_gpuerr,
                                     m_host, m_hostval, m_event, m_follow, m_nofollow, m_own,
                                     m_gpu_whole};
    char err[2048], proc[1024];
    snprintf(proc, sizeof(proc), "%s/tests/fixtures/proc/gpu-host", getenv("MIGMON_SRC"));
    use_scenario("h200-mig.ini", "10");
    struct collect_opts o = {.nvml_path = getenv("MIGMON_SIM_LIB"), .proc_root = proc,
                             .interval_ms = 100};
    struct collector c;
    assert_int_equal(collect_open(&c, &o, err, sizeof(err)), 0);
    for (size_t i = 0; i < sizeof(muts) / sizeof(muts[0]); i++) {
        struct snapshot a, b;
        memset(&a, 0, sizeof(a));
        memset(&b, 0, sizeof(b));
        collect_tick(&c, &a);
        collect_tick(&c, &b);
        assert_true(b.ndevices >= 3);
        assert_true(b.nprocs > 0);
        if (!b.events_cap) { /* room for an event of our own */
            b.events = calloc(4, sizeof(*b.events));
            b.events_cap = 4;
        }
        char *before = render(&b, NULL, false, NULL);
        muts[i](&b);
        char *after = render(&b, NULL, false, NULL);
        bool full;
        char *d = render(&b, &a, true, &full);
        char *was = render(&a, NULL, false, NULL);
        json_t *state = load(was), *want = load(after), *dj = load(d);
        free(was);
        if (strcmp(before, after) == 0)
            fail_msg("change %zu changed nothing JSON writes", i);
        if (!full)
            replay_delta_apply(state, dj);
        else
            json_object_update(state, dj);
        char where[1024];
        if (differ(want, state, where, sizeof(where)))
            fail_msg("change %zu: %s (delta %.300s)", i, where, d);
        json_decref(state);
        json_decref(want);
        json_decref(dj);
        free(before);
        free(after);
        free(d);
        snapshot_free(&a);
        snapshot_free(&b);
    }
    collect_close(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scenarios),
        cmocka_unit_test(test_device_count_changes),
        cmocka_unit_test(test_each_member),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
