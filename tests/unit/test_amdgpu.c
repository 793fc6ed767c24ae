/*
 * The amdgpu backend's decoding (src/backend/amdgpu/amdgpu_metrics.c) on the
 * fixture tables (tests/fixtures/sysfs/gen.py), malformed tables, and
 * fdinfo processes with GPU % from two reads at chosen times.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "backend/amdgpu/amdgpu.h"
#include "backend/backend.h"

static const char *src(void)
{
    const char *s = getenv("MIGMON_SRC");
    return s ? s : ".";
}

static size_t load(const char *rel, unsigned char *buf, size_t cap)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/tests/fixtures/sysfs/%s", src(), rel);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

static unsigned char blob[8192];

static void test_v13_mi250x(void **st)
{
    (void)st;
    size_t n = load("mi250x/devices/pci0000:00/0000:29:00.0/gpu_metrics", blob, sizeof(blob));
    assert_int_equal(n, 120);
    struct amd_gpu_metrics m;
    assert_int_equal(amd_metrics_decode(blob, n, &m), 0);
    assert_int_equal(m.format, 1);
    assert_int_equal(m.content, 3);
    assert_true(m.hotspot_c.value == 61 && m.hotspot_c.src == MSRC_DIRECT);
    assert_true(m.mem_c.value == 58);
    assert_true(m.hbm_max_c.value == 59); /* the hottest of 58, 57, 56, 59 */
    assert_true(m.gfx_pct.value == 63);
    assert_true(m.umc_pct.value == 20);
    assert_true(m.power_w.value == 300);
    assert_true(m.gfxclk_mhz.value == 1700);
    assert_int_equal(m.energy_j.src, MSRC_NONE); /* unit undocumented before v1.4 */
    assert_int_equal(m.num_partition, -1);
    assert_int_equal(m.pcie_width.src, MSRC_NONE); /* left all ones */
    assert_string_equal(m.pcie_width.why, "not reported by this GPU in gpu_metrics (all ones)");
}

static void test_v16_spx(void **st)
{
    (void)st;
    size_t n = load("mi300x-spx/devices/pci0000:00/0000:0c:00.0/gpu_metrics", blob, sizeof(blob));
    assert_int_equal(n, 1664);
    struct amd_gpu_metrics m;
    assert_int_equal(amd_metrics_decode(blob, n, &m), 0);
    assert_int_equal(m.content, 6);
    assert_int_equal(m.num_partition, 1);
    assert_int_equal(m.part_xcc[0], 8);
    assert_true(m.part_busy[0].value == 41.0); /* mean of 41 40 42 43 39 41 40 42 */
    assert_int_equal(m.part_busy[1].src, MSRC_NONE);
    assert_true(m.energy_j.value == 1000000.0); /* 65536e6 × 2^-16 J */
    assert_true(m.power_w.value == 411);
    assert_true(m.hotspot_c.value == 56 && m.mem_c.value == 48);
    assert_true(m.gfxclk_mhz.value == 2100 && m.uclk_mhz.value == 1300);
}

static void test_v18_cpx(void **st)
{
    (void)st;
    size_t n = load("mi300x-cpx/devices/pci0000:00/0000:0c:00.0/gpu_metrics", blob, sizeof(blob));
    assert_int_equal(n, 3872);
    struct amd_gpu_metrics m;
    assert_int_equal(amd_metrics_decode(blob, n, &m), 0);
    assert_int_equal(m.content, 8);
    assert_int_equal(m.num_partition, 8);
    for (int k = 0; k < 8; k++) {
        assert_int_equal(m.part_xcc[k], 1);
        assert_true(m.part_busy[k].value == 10.0 * (k + 1));
    }
    assert_true(m.gfxclk_mhz.value == 2100 && m.uclk_mhz.value == 1300);
}

static void expect_none(const unsigned char *b, size_t n, const char *why)
{
    struct amd_gpu_metrics m;
    assert_int_equal(amd_metrics_decode(b, n, &m), -1);
    assert_string_equal(m.why, why);
    assert_int_equal(m.gfx_pct.src, MSRC_NONE);
    assert_string_equal(m.gfx_pct.why, why);
    assert_int_equal(m.part_busy[0].src, MSRC_NONE);
}

/* Throttle reasons from two reads of the residency counters: PPT grew →
 * sw_power_cap; socket or HBM thermal grew → sw_thermal; v1.3 has none. */
static void test_throttle_between(void **st)
{
    (void)st;
    static unsigned char later[8192];
    size_t n = load("mi300x-cpx/devices/pci0000:00/0000:0c:00.0/gpu_metrics", blob, sizeof(blob));
    size_t n2 = load("mi300x-cpx-ppt.gpu_metrics", later, sizeof(later));
    struct amd_gpu_metrics a, b;
    assert_int_equal(amd_metrics_decode(blob, n, &a), 0);
    assert_int_equal(amd_metrics_decode(later, n2, &b), 0);
    assert_true(a.res.ok && b.res.ok);
    assert_int_equal(a.res.acc, 100000);
    assert_int_equal(a.res.ppt, 1200);
    assert_int_equal(a.res.socket_thm, 300);
    assert_int_equal(a.res.hbm_thm, 50);
    assert_int_equal(b.res.ppt, 1500);
    assert_int_equal(amd_throttle_between(&a.res, &b.res), AMD_THROTTLE_SW_POWER_CAP);
    assert_int_equal(amd_throttle_between(&a.res, &a.res), 0); /* nothing grew */
    assert_int_equal(amd_throttle_between(&b.res, &a.res), 0); /* went back: nothing */
    struct amd_residency hot = a.res;
    hot.hbm_thm++;
    assert_int_equal(amd_throttle_between(&a.res, &hot), AMD_THROTTLE_SW_THERMAL);
    hot = a.res;
    hot.prochot += 10; /* PROCHOT and VR thermal: no NVML reason of that meaning */
    hot.vr_thm += 10;
    assert_int_equal(amd_throttle_between(&a.res, &hot), 0);
    hot.ppt = UINT32_MAX; /* not reported */
    hot.ok = false;
    assert_int_equal(amd_throttle_between(&a.res, &hot), 0);
    /* v1.6 (SPX) has them at its own offsets */
    n = load("mi300x-spx/devices/pci0000:00/0000:0c:00.0/gpu_metrics", blob, sizeof(blob));
    assert_int_equal(amd_metrics_decode(blob, n, &a), 0);
    assert_true(a.res.ok && a.res.ppt == 1200 && a.res.hbm_thm == 50 && a.res.acc == 100000);
    n = load("mi250x/devices/pci0000:00/0000:29:00.0/gpu_metrics", blob, sizeof(blob));
    assert_int_equal(amd_metrics_decode(blob, n, &a), 0);
    assert_false(a.res.ok);
}

static void test_malformed(void **st)
{
    (void)st;
    size_t n = load("mi300x-cpx/devices/pci0000:00/0000:0c:00.0/gpu_metrics", blob, sizeof(blob));
    expect_none(blob, n - 1, "gpu_metrics truncated (shorter than its structure_size)");
    expect_none(blob, 3, "gpu_metrics shorter than its 4-byte header");
    blob[3] = 9; /* v1.9 is self-describing: not decoded */
    expect_none(blob, n, "gpu_metrics revision not known (decoded: format 1, content 3 to 8)");
    blob[2] = 2;
    blob[3] = 4; /* an APU table */
    expect_none(blob, n, "gpu_metrics revision not known (decoded: format 1, content 3 to 8)");
    blob[2] = 1;
    blob[3] = 7; /* says v1.7 but is v1.8's size */
    expect_none(blob, n, "gpu_metrics structure_size differs from its revision's layout");
    expect_none(blob, 0, "gpu_metrics shorter than its 4-byte header");
}

static void test_fdinfo_parse(void **st)
{
    (void)st;
    struct amd_fdinfo f;
    assert_int_equal(amd_fdinfo_parse("drm-driver:\tamdgpu\ndrm-client-id:\t7\n"
                                      "drm-pdev:\t0000:0c:00.0\ndrm-memory-vram:\t1024 KiB\n"
                                      "drm-engine-gfx:\t100 ns\ndrm-engine-compute:\t23 ns\n",
                                      &f),
                     0);
    assert_string_equal(f.pdev, "0000:0c:00.0");
    assert_int_equal(f.client_id, 7);
    assert_int_equal(f.vram_bytes, 1048576);
    assert_int_equal(f.engine_ns, 123);
    assert_int_equal(amd_fdinfo_parse("drm-driver:\ti915\ndrm-client-id:\t7\n"
                                      "drm-pdev:\t0000:00:02.0\n", &f),
                     -1);
    assert_int_equal(amd_fdinfo_parse("pos:\t0\nflags:\t02\n", &f), -1);
}

/* sysfs numbers, strictly: strtoull took "-5" for 2^64 - 5 */
static void test_parse_numbers(void **st)
{
    (void)st;
    uint64_t u = 7;
    int64_t i = 7;
    const char *why = NULL;
    assert_int_equal(amd_parse_u64("42\n", &u, &why), 0); /* as sysfs writes it */
    assert_int_equal(u, 42);
    assert_int_equal(amd_parse_u64("0", &u, &why), 0);
    assert_int_equal(u, 0);
    assert_int_equal(amd_parse_u64("205822885888 \n", &u, &why), 0);
    assert_int_equal(u, 205822885888ull);
    assert_int_equal(amd_parse_u64("18446744073709551615\n", &u, &why), 0);
    assert_true(u == UINT64_MAX);
    u = 7;
    assert_int_equal(amd_parse_u64("-5\n", &u, &why), -1);
    assert_string_equal(why, "is negative (only 0 and up)");
    assert_int_equal(u, 7); /* untouched */
    assert_int_equal(amd_parse_u64("", &u, &why), -1);
    assert_string_equal(why, "is empty");
    assert_int_equal(amd_parse_u64("\n", &u, &why), -1);
    assert_string_equal(why, "is empty");
    assert_int_equal(amd_parse_u64("12abc\n", &u, &why), -1);
    assert_string_equal(why, "is not a number");
    assert_int_equal(amd_parse_u64("12\n3", &u, &why), -1);
    assert_string_equal(why, "is not a number");
    assert_int_equal(amd_parse_u64(" 12", &u, &why), -1);
    assert_string_equal(why, "is not a number");
    assert_int_equal(amd_parse_u64("+12", &u, &why), -1);
    assert_string_equal(why, "is not a number");
    assert_int_equal(amd_parse_u64("0x10", &u, &why), -1);
    assert_string_equal(why, "is not a number");
    assert_int_equal(amd_parse_u64("1.5", &u, &why), -1);
    assert_string_equal(why, "is not a number");
    assert_int_equal(amd_parse_u64("18446744073709551616\n", &u, &why), -1);
    assert_string_equal(why, "is out of range (past 2^64 - 1)");
    assert_int_equal(amd_parse_u64("99999999999999999999999", &u, &why), -1);
    assert_string_equal(why, "is out of range (past 2^64 - 1)");
    assert_int_equal(u, 7);

    /* signed: hwmon temperatures (millidegrees) */
    assert_int_equal(amd_parse_i64("-5000\n", &i, &why), 0);
    assert_int_equal(i, -5000);
    assert_int_equal(amd_parse_i64("57000\n", &i, &why), 0);
    assert_int_equal(i, 57000);
    assert_int_equal(amd_parse_i64("-9223372036854775808", &i, &why), 0);
    assert_true(i == INT64_MIN);
    assert_int_equal(amd_parse_i64("9223372036854775807", &i, &why), 0);
    assert_true(i == INT64_MAX);
    i = 7;
    assert_int_equal(amd_parse_i64("9223372036854775808", &i, &why), -1);
    assert_string_equal(why, "is out of range (past 2^63)");
    assert_int_equal(amd_parse_i64("-9223372036854775809", &i, &why), -1);
    assert_string_equal(why, "is out of range (past 2^63)");
    assert_int_equal(amd_parse_i64("-", &i, &why), -1);
    assert_string_equal(why, "is not a number");
    assert_int_equal(amd_parse_i64("--5", &i, &why), -1);
    assert_string_equal(why, "is not a number");
    assert_int_equal(amd_parse_i64("", &i, &why), -1);
    assert_string_equal(why, "is empty");
    assert_int_equal(amd_parse_i64("5 C", &i, &why), -1);
    assert_string_equal(why, "is not a number");
    assert_int_equal(i, 7);
}

/* fdinfo's numbers, strictly too: a minus sign or garbage is no value */
static void test_fdinfo_strict(void **st)
{
    (void)st;
    struct amd_fdinfo f;
    assert_int_equal(amd_fdinfo_parse("drm-driver:\tamdgpu\ndrm-client-id:\t7\n"
                                      "drm-pdev:\t0000:0c:00.0\ndrm-memory-vram:\t-5 KiB\n"
                                      "drm-engine-gfx:\t-100 ns\n",
                                      &f),
                     0);
    assert_false(f.has_vram);
    assert_true(f.engine_bad);
    assert_int_equal(amd_fdinfo_parse("drm-driver:\tamdgpu\ndrm-client-id:\t7\n"
                                      "drm-pdev:\t0000:0c:00.0\ndrm-memory-vram:\t12abc KiB\n"
                                      "drm-engine-compute:\t100 ns extra\n",
                                      &f),
                     0);
    assert_false(f.has_vram);
    assert_true(f.engine_bad);
    /* past 2^54 KiB: the bytes would not fit */
    assert_int_equal(amd_fdinfo_parse("drm-driver:\tamdgpu\ndrm-client-id:\t7\n"
                                      "drm-pdev:\t0000:0c:00.0\n"
                                      "drm-memory-vram:\t18014398509481984 KiB\n",
                                      &f),
                     0);
    assert_false(f.has_vram);
    /* a client id that is not a number: not a client */
    assert_int_equal(amd_fdinfo_parse("drm-driver:\tamdgpu\ndrm-client-id:\t-7\n"
                                      "drm-pdev:\t0000:0c:00.0\n",
                                      &f),
                     -1);
}

static const struct gpu_process *proc_of(const struct snapshot *s, uint32_t pid, size_t *dev)
{
    for (size_t k = 0; k < s->ndevices; k++) {
        const struct device *d = &s->devices[k];
        for (size_t i = 0; i < d->nprocs; i++)
            if (s->procs[d->proc_first + i].pid == pid) {
                *dev = k;
                return &s->procs[d->proc_first + i];
            }
    }
    return NULL;
}

/* Two reads one second apart; client 7001 ran 0.25 s of gfx in between. */
static void test_fdinfo_two_reads(void **st)
{
    (void)st;
    char tmp[] = "/tmp/migmon-amd-XXXXXX", cmd[2048], sysfs[1024], proc[1024];
    assert_non_null(mkdtemp(tmp));
    snprintf(cmd, sizeof(cmd), "cp -a %s/tests/fixtures/proc/amd-cpx %s/proc", src(), tmp);
    assert_int_equal(system(cmd), 0);
    snprintf(sysfs, sizeof(sysfs), "%s/tests/fixtures/sysfs/mi300x-cpx", src());
    snprintf(proc, sizeof(proc), "%s/proc", tmp);
    struct backend_opts o = {.sysfs_root = sysfs, .proc_root = proc};
    void *state = NULL;
    char err[512];
    assert_int_equal(amdgpu_backend_ops.open(&state, &o, err, sizeof(err)), 0);
    struct snapshot s = {0};
    assert_int_equal(amdgpu_backend_ops.sample(state, &s, 0), 0);
    assert_int_equal(s.ndevices, 9);
    struct amd_state *as = state;
    as->nclients = 0; /* forget the sample's read: the times below are ours */
    s.nprocs = 0;
    amd_scan_processes(as, &s, 0, 1000000000000ull);
    size_t dev;
    const struct gpu_process *p = proc_of(&s, 7001, &dev);
    assert_non_null(p);
    assert_int_equal(s.devices[dev].kind, DEV_MIG);
    assert_int_equal(s.devices[dev].gi_id, 2); /* renderD130: partition 2 */
    assert_int_equal(p->sm_util.src, MSRC_NONE);
    assert_true(p->mem_bytes.value == 4294967296.0);
    p = proc_of(&s, 7002, &dev);
    assert_int_equal(s.devices[dev].gi_id, 5);
    p = proc_of(&s, 7003, &dev);
    assert_int_equal(s.devices[dev].gi_id, 0);

    snprintf(cmd, sizeof(cmd), "sed -i 's/^drm-engine-gfx:.*/drm-engine-gfx:\\t500000000 ns/' %s/7001/fdinfo/5", proc);
    assert_int_equal(system(cmd), 0);
    s.nprocs = 0;
    amd_scan_processes(as, &s, 0, 1001000000000ull);
    p = proc_of(&s, 7001, &dev);
    assert_int_equal(p->sm_util.src, MSRC_DIRECT);
    assert_true(p->sm_util.value > 24.999 && p->sm_util.value < 25.001);
    p = proc_of(&s, 7002, &dev); /* no change: 0 %, a real reading */
    assert_int_equal(p->sm_util.src, MSRC_DIRECT);
    assert_true(p->sm_util.value == 0);
    /* busier than the time between reads (2 s more in 1 s): dropped, as nvtop */
    snprintf(cmd, sizeof(cmd), "sed -i 's/^drm-engine-gfx:.*/drm-engine-gfx:\\t2500000000 ns/' %s/7001/fdinfo/5", proc);
    assert_int_equal(system(cmd), 0);
    s.nprocs = 0;
    amd_scan_processes(as, &s, 0, 1002000000000ull);
    p = proc_of(&s, 7001, &dev);
    assert_int_equal(p->sm_util.src, MSRC_NONE);
    assert_string_equal(p->sm_util.why, "fdinfo: busy time grew more than the time between reads");
    /* partition 2's VRAM in use: not its process's (not all of its use) */
    assert_int_equal(s.devices[3].m[M_MEM_USED].src, MSRC_NONE);
    assert_non_null(strstr(s.devices[3].m[M_MEM_USED].why, "per GPU only"));
    amdgpu_backend_ops.close(state);
    snapshot_free(&s);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v13_mi250x),      cmocka_unit_test(test_v16_spx),
        cmocka_unit_test(test_v18_cpx),         cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_throttle_between),
        cmocka_unit_test(test_fdinfo_parse),    cmocka_unit_test(test_fdinfo_two_reads),
        cmocka_unit_test(test_parse_numbers),   cmocka_unit_test(test_fdinfo_strict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
