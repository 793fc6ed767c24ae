/*
 * /proc facts of GPU processes from fixture trees (tests/fixtures/proc/):
 * stat/status/cgroup parsing, the three PID-namespace views, CPU % deltas,
 * PID reuse told apart by start time, cache pruning, facts read again after
 * an exec.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/procpost.h"
#include "system/procinfo.h"

static char fixture[PATH_MAX];

static const char *tree(const char *name)
{
    const char *src = getenv("MIGMON_SRC");
    assert_non_null(src);
    snprintf(fixture, sizeof(fixture), "%s/tests/fixtures/proc/%s", src, name);
    return fixture;
}

static void test_parse_stat(void **state)
{
    (void)state;
    struct procinfo_stat st;
    /* comm may hold spaces and ')': fields are counted from the last ')' */
    const char *line = "4101 (my (odd) name) R 1 4101 4101 0 -1 4194560 10 0 0 0 "
                       "1234 56 0 0 20 0 8 0 812345 8123456789 777 18446744073709551615\n";
    assert_int_equal(procinfo_parse_stat(line, &st), 0);
    assert_string_equal(st.comm, "my (odd) name");
    assert_int_equal(st.utime, 1234);
    assert_int_equal(st.stime, 56);
    assert_int_equal(st.start_time, 812345);
    assert_int_equal(st.rss_pages, 777);
    assert_int_equal(st.start_stack, 0); /* the line ends before field 28 */
    line = "4101 (python3) S 1 4101 4101 0 -1 4194560 10 0 0 0 1234 56 0 0 20 0 8 0 812345 "
           "8123456789 777 18446744073709551615 94000000000000 94000000100000 "
           "140730000000000 0 0\n";
    assert_int_equal(procinfo_parse_stat(line, &st), 0);
    assert_int_equal(st.start_stack, 140730000000000ull);
    assert_int_equal(procinfo_parse_stat("4101 (truncated) S 1 2 3", &st), -1);
    assert_int_equal(procinfo_parse_stat("garbage", &st), -1);
}

static void test_parse_status(void **state)
{
    (void)state;
    const char *status = "Name:\tpython3\nUid:\t4242\t4242\t4242\t4242\nGid:\t0\t0\t0\t0\n"
                         "NStgid:\t4101\t7\nNSpid:\t4101\t7\t1\nNSpgid:\t4101\n";
    int64_t ns[8];
    assert_int_equal(procinfo_parse_nspid(status, ns, 8), 3);
    assert_int_equal(ns[0], 4101);
    assert_int_equal(ns[1], 7);
    assert_int_equal(ns[2], 1);
    assert_int_equal(procinfo_parse_uid(status), 4242);
    /* kernels before 4.1 have no NSpid line */
    assert_int_equal(procinfo_parse_nspid("Name:\tx\nPid:\t5\n", ns, 8), 0);
    assert_int_equal(procinfo_parse_uid("Name:\tx\n"), -1);
}

static void expect_container(const char *cgroup, const char *want)
{
    char out[PROC_CONTAINER_LEN];
    procinfo_parse_container(cgroup, out, sizeof(out));
    assert_string_equal(out, want);
}

#define H64 "4f9a1c2b3d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8"

static void test_parse_container(void **state)
{
    (void)state;
    expect_container("0::/system.slice/docker-" H64 ".scope\n", "docker:4f9a1c2b3d5e");
    expect_container("12:memory:/docker/" H64 "\n11:cpu,cpuacct:/docker/" H64 "\n",
                     "docker:4f9a1c2b3d5e");
    expect_container("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7e2d1c4b_"
                     "9a8f_4e3d_b2c1_0f9e8d7c6b5a.slice/cri-containerd-" H64 ".scope\n",
                     "k8s:7e2d1c4b-9a8f-4e3d-b2c1-0f9e8d7c6b5a/containerd:4f9a1c2b3d5e");
    expect_container("0::/kubepods/besteffort/pod0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d/" H64 "\n",
                     "k8s:0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d/cri:4f9a1c2b3d5e");
    expect_container("0::/kubepods.slice/kubepods-pod11111111_2222_4333_8444_555555555555.slice/"
                     "crio-" H64 ".scope\n",
                     "k8s:11111111-2222-4333-8444-555555555555/crio:4f9a1c2b3d5e");
    expect_container("0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" H64
                     ".scope/container\n",
                     "podman:4f9a1c2b3d5e");
    /* the pod slice alone (a pause process, say) */
    expect_container("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
                     "0a1b2c3d_4e5f_4a6b_8c7d_9e0f1a2b3c4d.slice\n",
                     "k8s:0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d");
    /* conmon runs beside the container, not in it */
    expect_container("0::/machine.slice/libpod-conmon-" H64 ".scope\n", "");
    expect_container("0::/user.slice/user-1000.slice/session-3.scope\n", "");
    expect_container("", "");
}

static void test_host_view(void **state)
{
    (void)state;
    struct procinfo *pi;
    assert_int_equal(procinfo_open(&pi, tree("gpu-host")), 0);
    assert_int_equal(procinfo_ns_mode(pi), PROCINFO_NS_HOST);
    procinfo_begin(pi, 1000000000ull);
    struct gpu_process p = {.pid = 4101};
    procinfo_fill(pi, &p);
    assert_int_equal(p.local_pid, 4101);
    assert_string_equal(p.name, "python3");
    assert_string_equal(p.user, "root");
    assert_string_equal(p.command, "python3 -m vllm.entrypoints.api_server --model llama-3-70b");
    assert_string_equal(p.container, "docker:4f9a1c2b3d5e");
    assert_int_equal(p.start_time, 812345);
    assert_int_equal(p.rss_bytes.src, MSRC_DIRECT);
    assert_true(p.rss_bytes.value == 2621440.0 * (double)sysconf(_SC_PAGESIZE));
    assert_int_equal(p.cpu_pct.src, MSRC_NONE); /* first sight */

    struct gpu_process q = {.pid = 4187};
    procinfo_fill(pi, &q);
    assert_string_equal(q.user, "4242"); /* no passwd entry: the number */
    assert_string_equal(q.container,
                        "k8s:7e2d1c4b-9a8f-4e3d-b2c1-0f9e8d7c6b5a/containerd:9b8c7d6e5f4a");

    struct gpu_process gone = {.pid = 4999};
    procinfo_fill(pi, &gone);
    assert_int_equal(gone.local_pid, -1);
    assert_string_equal(gone.name, "");
    assert_int_equal(gone.rss_bytes.src, MSRC_NONE);

    assert_true(procinfo_alive(pi, 4101, 812345));
    assert_false(procinfo_alive(pi, 4101, 812346));
    assert_false(procinfo_alive(pi, 4999, 1));
    assert_false(procinfo_alive(pi, 4101, 0));
    procinfo_end(pi);
    procinfo_close(pi);
}

/* The host's procfs seen from inside a container (self NSpid "77000 15"). */
static void test_ancestor_view(void **state)
{
    (void)state;
    struct procinfo *pi;
    assert_int_equal(procinfo_open(&pi, tree("ns-ancestor")), 0);
    assert_int_equal(procinfo_ns_mode(pi), PROCINFO_NS_ANCESTOR);
    procinfo_begin(pi, 1);
    struct gpu_process same = {.pid = 4101}, sibling = {.pid = 4187}, host = {.pid = 4230};
    procinfo_fill(pi, &same);
    procinfo_fill(pi, &sibling);
    procinfo_fill(pi, &host);
    assert_int_equal(same.local_pid, 7);  /* NSpid "4101 7", our namespace */
    assert_int_equal(sibling.local_pid, -1); /* another container's namespace */
    assert_string_equal(sibling.name, "jupyter-lab"); /* still readable */
    assert_int_equal(host.local_pid, -1);
    assert_string_equal(host.name, "batch.sh");
    procinfo_end(pi);
    procinfo_close(pi);
}

/* Our own namespace's procfs: /proc/4101 there is an unrelated local process. */
static void test_own_namespace_view(void **state)
{
    (void)state;
    struct procinfo *pi;
    assert_int_equal(procinfo_open(&pi, tree("ns-own")), 0);
    assert_int_equal(procinfo_ns_mode(pi), PROCINFO_NS_OWN);
    procinfo_begin(pi, 1);
    struct gpu_process p = {.pid = 4101};
    procinfo_fill(pi, &p);
    assert_int_equal(p.local_pid, -1);
    assert_string_equal(p.name, ""); /* not "sshd" */
    assert_int_equal(p.cpu_pct.src, MSRC_NONE);
    assert_non_null(strstr(p.cpu_pct.why, "namespace"));
    assert_false(procinfo_alive(pi, 4101, 99));
    procinfo_end(pi);
    procinfo_close(pi);
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    assert_non_null(in);
    FILE *out = fopen(to, "wb");
    assert_non_null(out);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
}

/* Lay generation gen of pid-reuse/4101 into root/4101. */
static void generation(const char *root, const char *stat_gen, const char *rest_gen)
{
    char from[PATH_MAX + 64], to[PATH_MAX + 64];
    const char *fx = tree("pid-reuse");
    static const char *const names[] = {"stat", "status", "cmdline"};
    for (int i = 0; i < 3; i++) {
        const char *g = i == 0 ? stat_gen : rest_gen;
        snprintf(from, sizeof(from), "%s/4101/%s.%s", fx, names[i], g);
        snprintf(to, sizeof(to), "%s/4101/%s", root, names[i]);
        copy_file(from, to);
    }
}

static void test_cpu_delta_and_pid_reuse(void **state)
{
    (void)state;
    char root[] = "/tmp/migmon-procinfo-XXXXXX";
    assert_non_null(mkdtemp(root));
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof(dir), "%s/4101", root);
    assert_int_equal(mkdir(dir, 0755), 0);
    generation(root, "1", "1");

    struct procinfo *pi;
    assert_int_equal(procinfo_open(&pi, root), 0);
    assert_int_equal(procinfo_ns_mode(pi), PROCINFO_NS_HOST); /* no self/: as the host */
    long hz = sysconf(_SC_CLK_TCK);

    procinfo_begin(pi, 1000000000ull);
    struct gpu_process p = {.pid = 4101};
    procinfo_fill(pi, &p);
    assert_int_equal(p.cpu_pct.src, MSRC_NONE);
    assert_string_equal(p.command, "python3 serve.py");
    procinfo_end(pi);

    /* 2 s later: utime+stime 1200 -> 1400 ticks */
    generation(root, "2", "1");
    procinfo_begin(pi, 3000000000ull);
    procinfo_fill(pi, &p);
    assert_int_equal(p.cpu_pct.src, MSRC_DIRECT);
    assert_float_equal(p.cpu_pct.value, 200.0 / (double)hz / 2.0 * 100.0, 1e-9);
    /* a second device listing the same process this tick: the same figure */
    struct gpu_process again = {.pid = 4101};
    procinfo_fill(pi, &again);
    assert_float_equal(again.cpu_pct.value, p.cpu_pct.value, 1e-12);
    procinfo_end(pi);

    /* The PID is reused by another program: new start time, new facts. */
    generation(root, "3", "3");
    procinfo_begin(pi, 4000000000ull);
    assert_false(procinfo_alive(pi, 4101, 812345));
    procinfo_fill(pi, &p);
    assert_string_equal(p.name, "sleep");
    assert_string_equal(p.command, "sleep infinity");
    assert_string_equal(p.user, "4242");
    assert_int_equal(p.start_time, 999999);
    assert_int_equal(p.cpu_pct.src, MSRC_NONE); /* not a delta against the old process */
    procinfo_end(pi);

    /* A tick that does not use the process prunes it: seen again, it is new. */
    procinfo_begin(pi, 5000000000ull);
    procinfo_end(pi);
    procinfo_begin(pi, 6000000000ull);
    procinfo_fill(pi, &p);
    assert_int_equal(p.cpu_pct.src, MSRC_NONE);
    procinfo_end(pi);
    procinfo_close(pi);

    static const char *const names[] = {"stat", "status", "cmdline"};
    for (int i = 0; i < 3; i++) {
        char f[PATH_MAX + 64];
        snprintf(f, sizeof(f), "%s/%s", dir, names[i]);
        unlink(f);
    }
    rmdir(dir);
    rmdir(root);
}

/* A one-shot snapshot's second look (procpost_second_look): the CPU % of
 * processes seen for the first time, and nothing else, from a second read. */
static void test_second_look(void **state)
{
    (void)state;
    char root[] = "/tmp/migmon-procinfo-XXXXXX";
    assert_non_null(mkdtemp(root));
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof(dir), "%s/4101", root);
    assert_int_equal(mkdir(dir, 0755), 0);
    generation(root, "1", "1");
    struct procinfo *pi;
    assert_int_equal(procinfo_open(&pi, root), 0);
    long hz = sysconf(_SC_CLK_TCK);

    /* the tick: 4101 seen for the first time; 7 not on this host; 4101
     * listed again by a second device, its CPU % already known (made up) */
    struct gpu_process procs[3] = {{.pid = 4101}, {.pid = 7}, {.pid = 4101}};
    procinfo_begin(pi, 1000000000ull);
    for (int i = 0; i < 3; i++)
        procinfo_fill(pi, &procs[i]);
    procinfo_end(pi);
    procs[2].cpu_pct = metric_direct(42.0);
    struct snapshot s = {.procs = procs, .nprocs = 3};
    assert_int_equal(procpost_first_sight(&s), 1);

    /* 0.5 s later: 1200 -> 1400 ticks of CPU */
    generation(root, "2", "1");
    procpost_second_look(pi, &s, 1500000000ull);
    assert_int_equal(procs[0].cpu_pct.src, MSRC_DIRECT);
    assert_float_equal(procs[0].cpu_pct.value, 200.0 / (double)hz / 0.5 * 100.0, 1e-9);
    assert_float_equal(procs[0].rss_bytes.value, 2621440.0 * (double)sysconf(_SC_PAGESIZE), 0);
    assert_string_equal(procs[0].command, "python3 serve.py");
    assert_int_equal(procs[1].cpu_pct.src, MSRC_NONE);
    assert_float_equal(procs[2].cpu_pct.value, 42.0, 0);
    assert_int_equal(procpost_first_sight(&s), 0);

    /* The PID reused between the tick and the second look: the listed
     * process keeps what the tick read, not the newcomer's figures. */
    struct gpu_process q[1] = {{.pid = 4101}};
    procinfo_begin(pi, 2000000000ull);
    procinfo_fill(pi, &q[0]);
    procinfo_end(pi);
    q[0].cpu_pct = metric_none("first sight"); /* as if seen for the first time */
    struct snapshot s2 = {.procs = q, .nprocs = 1};
    assert_int_equal(procpost_first_sight(&s2), 1);
    generation(root, "3", "3");
    procpost_second_look(pi, &s2, 2500000000ull);
    assert_int_equal(q[0].cpu_pct.src, MSRC_NONE);
    assert_string_equal(q[0].command, "python3 serve.py");
    assert_int_equal(q[0].start_time, 812345);
    procinfo_close(pi);

    static const char *const names[] = {"stat", "status", "cmdline"};
    for (int i = 0; i < 3; i++) {
        char f[PATH_MAX + 64];
        snprintf(f, sizeof(f), "%s/%s", dir, names[i]);
        unlink(f);
    }
    rmdir(dir);
    rmdir(root);
}

/* A fixture process for the exec test: root/4101/{stat,status,cmdline}.
 * Files are rewritten in place (procinfo keeps stat open and preads it, as
 * /proc shows one process's stat through one descriptor). */
static void put_file(const char *root, const char *name, const char *text, size_t len)
{
    char f[PATH_MAX + 64];
    snprintf(f, sizeof(f), "%s/4101/%s", root, name);
    FILE *out = fopen(f, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(text, 1, len, out), len);
    fclose(out);
}

/* stat of PID 4101: comm, CPU ticks (utime), start time (field 22),
 * startstack (field 28). */
static void put_stat(const char *root, const char *comm, unsigned utime, unsigned long long start,
                     unsigned long long stack)
{
    char line[512];
    int n = snprintf(line, sizeof(line),
                     "4101 (%s) S 1 4101 4101 0 -1 4194560 10 0 0 0 %u 0 0 0 20 0 8 0 %llu "
                     "8123456789 777 18446744073709551615 94000000000000 94000000100000 %llu 0 0 "
                     "0 0 0 0 0 0 0 17 3 0 0 0 0 0\n",
                     comm, utime, start, stack);
    put_file(root, "stat", line, (size_t)n);
}

static void put_uid(const char *root, unsigned uid)
{
    char text[128];
    int n = snprintf(text, sizeof(text), "Name:\tx\nUid:\t%u\t%u\t%u\t%u\nNSpid:\t4101\n", uid, uid,
                     uid, uid);
    put_file(root, "status", text, (size_t)n);
}

/* argv as /proc shows it: NUL after each argument */
static void put_cmdline(const char *root, const char *args)
{
    char buf[256];
    size_t n = strlen(args);
    assert_true(n + 1 < sizeof(buf));
    memcpy(buf, args, n + 1);
    for (size_t i = 0; i < n; i++)
        if (buf[i] == ' ')
            buf[i] = '\0';
    put_file(root, "cmdline", buf, n + 1);
}

static void fill_at(struct procinfo *pi, uint64_t secs, struct gpu_process *p)
{
    procinfo_begin(pi, secs * 1000000000ull);
    *p = (struct gpu_process){.pid = 4101};
    procinfo_fill(pi, p);
    procinfo_end(pi);
}

/*
 * A process that execs keeps its PID and start time. Its command line and
 * user are read again on the next tick when its name or its stack address
 * (stat fields 2 and 28) changed, and at least every PROCINFO_REREAD_S
 * seconds when neither did (python exec'ing python, seen without ASLR or
 * without the access that shows the stack address); its CPU % carries on
 * across the exec. Another start time is another process.
 */
static void test_exec_rereads_facts(void **state)
{
    (void)state;
    char root[] = "/tmp/migmon-procinfo-XXXXXX";
    assert_non_null(mkdtemp(root));
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof(dir), "%s/4101", root);
    assert_int_equal(mkdir(dir, 0755), 0);
    put_stat(root, "pyenv", 100, 812345, 140730000000000ull);
    put_uid(root, 0);
    put_cmdline(root, "bash /root/.pyenv/libexec/pyenv exec python3 -c x");

    struct procinfo *pi;
    assert_int_equal(procinfo_open(&pi, root), 0);
    struct gpu_process p;
    fill_at(pi, 1, &p);
    assert_string_equal(p.name, "pyenv");
    assert_string_equal(p.command, "bash /root/.pyenv/libexec/pyenv exec python3 -c x");
    assert_string_equal(p.user, "root");
    assert_int_equal(p.cpu_pct.src, MSRC_NONE);

    /* Only the command line changed (an exec that stat does not show, or
     * setproctitle): not read again a second later (the first re-read comes
     * at least half the cadence after first sight)... */
    put_cmdline(root, "bash /root/.pyenv/libexec/pyenv exec python3 -c y");
    put_stat(root, "pyenv", 200, 812345, 140730000000000ull);
    fill_at(pi, 2, &p);
    assert_string_equal(p.command, "bash /root/.pyenv/libexec/pyenv exec python3 -c x");
    assert_int_equal(p.cpu_pct.src, MSRC_DIRECT);
    /* ...but within the cadence */
    uint64_t t = 1 + PROCINFO_REREAD_S;
    fill_at(pi, t, &p);
    assert_string_equal(p.command, "bash /root/.pyenv/libexec/pyenv exec python3 -c y");
    assert_int_equal(p.cpu_pct.src, MSRC_DIRECT); /* the same process: CPU % goes on */
    assert_int_equal(p.start_time, 812345);
    /* and not again a second after that re-read */
    put_cmdline(root, "bash /root/.pyenv/libexec/pyenv exec python3 -c z");
    fill_at(pi, ++t, &p);
    assert_string_equal(p.command, "bash /root/.pyenv/libexec/pyenv exec python3 -c y");

    /* bash -> python3, also becoming another user: a new name; the next
     * tick */
    put_stat(root, "python3", 300, 812345, 140730000000000ull);
    put_cmdline(root, "python3 -c import time; time.sleep(30)");
    put_uid(root, 4242);
    fill_at(pi, ++t, &p);
    assert_string_equal(p.name, "python3");
    assert_string_equal(p.command, "python3 -c import time; time.sleep(30)");
    assert_string_equal(p.user, "4242");
    assert_int_equal(p.cpu_pct.src, MSRC_DIRECT);

    /* python3 -> python3: the same name, a new stack address; the next
     * tick */
    put_stat(root, "python3", 400, 812345, 140720000000000ull);
    put_cmdline(root, "python3 -m torch.distributed.run train.py");
    fill_at(pi, ++t, &p);
    assert_string_equal(p.command, "python3 -m torch.distributed.run train.py");

    /* Exiting: no memory left (stack address 0), an empty command line, no
     * status. What was read before stays. */
    put_stat(root, "python3", 400, 812345, 0);
    put_file(root, "cmdline", "", 0);
    char f[PATH_MAX + 64];
    snprintf(f, sizeof(f), "%s/status", dir);
    unlink(f);
    fill_at(pi, ++t, &p);
    assert_string_equal(p.command, "python3 -m torch.distributed.run train.py");
    assert_string_equal(p.user, "4242");

    /* The PID reused: another start time is a new process. Nothing of the
     * old one is carried: no CPU % baseline, no cached strings. */
    put_stat(root, "sleep", 5000, 999999, 140710000000000ull);
    fill_at(pi, ++t, &p);
    assert_int_equal(p.start_time, 999999);
    assert_string_equal(p.name, "sleep");
    assert_string_equal(p.command, "");
    assert_string_equal(p.user, "");
    assert_int_equal(p.cpu_pct.src, MSRC_NONE);
    fill_at(pi, ++t, &p);
    assert_int_equal(p.cpu_pct.src, MSRC_DIRECT);
    assert_float_equal(p.cpu_pct.value, 0.0, 0);
    procinfo_close(pi);

    static const char *const names[] = {"stat", "cmdline"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(f, sizeof(f), "%s/%s", dir, names[i]);
        unlink(f);
    }
    rmdir(dir);
    rmdir(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_stat),
        cmocka_unit_test(test_parse_status),
        cmocka_unit_test(test_parse_container),
        cmocka_unit_test(test_host_view),
        cmocka_unit_test(test_ancestor_view),
        cmocka_unit_test(test_own_namespace_view),
        cmocka_unit_test(test_cpu_delta_and_pid_reuse),
        cmocka_unit_test(test_second_look),
        cmocka_unit_test(test_exec_rereads_facts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
