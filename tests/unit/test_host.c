/* test_host.c — system/host.c and export/json_host.c end to end over the
 * fixture trees in tests/fixtures/proc/<name>/ (stat.1 then stat.2 are copied
 * into a temporary proc root as "stat" between samples). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/json_host.h"
#include "system/host.h"

/* Count heap allocations made while sampling, by replacing malloc (glibc
 * supports this: "Replacing malloc" in its manual). Not under ASan, which
 * owns malloc itself, and valgrind redirects it too: counting_works() probes
 * whether the counter sees calls, and the steady-state check is skipped where
 * it does not. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define REPLACE_MALLOC 0 /* the sanitizer's runtime owns malloc (TSan calls it before main) */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REPLACE_MALLOC 0
#endif
#endif
#ifndef REPLACE_MALLOC
#define REPLACE_MALLOC 1
#endif

static unsigned long n_allocs;

#if REPLACE_MALLOC
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

void *malloc(size_t n)
{
    n_allocs++;
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
    n_allocs++;
    return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
    n_allocs++;
    return __libc_realloc(p, n);
}

void free(void *p)
{
    __libc_free(p);
}
#endif

static bool counting_works(void)
{
    /* Through a pointer, as the library calls it: an inlined call would
     * reach the counter even where valgrind redirects the symbol. */
    void *(*volatile m)(size_t) = malloc;
    unsigned long before = n_allocs;
    void *p = m(16);
    free(p);
    return n_allocs != before;
}

static const char *const files[] = {"stat", "meminfo", "loadavg", "uptime"};

struct root {
    char dir[64];
};

static const char *src_dir(void)
{
    const char *s = getenv("MIGMON_SRC");
    return s ? s : ".";
}

static void slurp(const char *path, char *buf, size_t cap, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    *len = fread(buf, 1, cap, f);
    fclose(f);
}

/* Write in place (same inode): struct host keeps the files open. */
static void put(const struct root *r, const char *name, const char *data, size_t len)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", r->dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void put_str(const struct root *r, const char *name, const char *s)
{
    put(r, name, s, strlen(s));
}

static void copy_fixture(const struct root *r, const char *fixture, const char *from,
                         const char *to)
{
    static char buf[1 << 20];
    char path[4096];
    size_t len;
    snprintf(path, sizeof(path), "%s/tests/fixtures/proc/%s/%s", src_dir(), fixture, from);
    slurp(path, buf, sizeof(buf), &len);
    put(r, to, buf, len);
}

static void root_make(struct root *r, const char *fixture)
{
    strcpy(r->dir, "/tmp/migmon-host-XXXXXX");
    assert_non_null(mkdtemp(r->dir));
    if (!fixture)
        return;
    copy_fixture(r, fixture, "stat.1", "stat");
    copy_fixture(r, fixture, "meminfo", "meminfo");
    copy_fixture(r, fixture, "loadavg", "loadavg");
    copy_fixture(r, fixture, "uptime", "uptime");
}

static void root_remove(struct root *r)
{
    char path[256];
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", r->dir, files[i]);
        unlink(path);
    }
    assert_int_equal(rmdir(r->dir), 0);
}

static struct host *open_ok(const char *dir)
{
    struct host *h = NULL;
    char err[256] = "";
    int rc = host_open(&h, dir, err, sizeof(err));
    if (rc != 0)
        fail_msg("host_open(%s): %d %s", dir, rc, err);
    return h;
}

static void assert_val(const struct metric *m, double want, double tol)
{
    if (!metric_ok(m))
        fail_msg("expected %.9f, got none (%s)", want, m->why ? m->why : "");
    if (m->src != MSRC_DIRECT || m->value < want - tol || m->value > want + tol)
        fail_msg("expected %.9f, got %.9f", want, m->value);
}

static void assert_none(const struct metric *m, const char *why)
{
    if (metric_ok(m))
        fail_msg("expected none (%s), got %f", why, m->value);
    assert_non_null(m->why);
    assert_string_equal(m->why, why);
}

static char *json_of(const struct host_sample *s, bool pretty)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    struct jsonw w;
    jsonw_init(&w, f, pretty);
    json_write_host(&w, s);
    jsonw_end(&w);
    assert_int_equal(fclose(f), 0);
    return out;
}

/* The two-core capture end to end, the second sample also as exact JSON
 * (percentages worked out in test_cpu.c, bytes in test_meminfo.c). */
static void test_two_core(void **state)
{
    (void)state;
    struct root r;
    root_make(&r, "two-core");
    struct host *h = open_ok(r.dir);
    struct host_sample s;
    assert_int_equal(host_sample(h, &s), 0);

    char name[HOST_NAME_LEN] = "";
    gethostname(name, sizeof(name) - 1);
    assert_string_equal(s.hostname, name);
    assert_int_equal(s.online, 2);
    assert_int_equal(s.ncores, 2);
    assert_none(&s.cpu_total, "first sample: no delta yet");
    assert_none(&s.cores[0].pct, "first sample: no delta yet");
    assert_val(&s.mem.used, 92780 * 1024.0, 0);
    assert_val(&s.loadavg[1], 0.04, 1e-12);
    assert_val(&s.uptime_s, 383.42, 1e-9);

    const char *d = metric_source_name(MSRC_DIRECT), *n = metric_source_name(MSRC_NONE);
    char want[4096];
    char *got = json_of(&s, false);
    snprintf(want, sizeof(want),
             "{\"hostname\":\"%s\",\"cpu\":{\"total_pct\":{\"value\":null,\"source\":\"%s\","
             "\"reason\":\"first sample: no delta yet\"},\"online\":2,\"cores\":["
             "{\"id\":0,\"pct\":{\"value\":null,\"source\":\"%s\",\"reason\":\"first sample: no "
             "delta yet\"}},{\"id\":1,\"pct\":{\"value\":null,\"source\":\"%s\",\"reason\":\"first "
             "sample: no delta yet\"}}]},",
             name, n, n, n);
    assert_memory_equal(got, want, strlen(want));
    free(got);

    copy_fixture(&r, "two-core", "stat.2", "stat");
    assert_int_equal(host_sample(h, &s), 0);
    got = json_of(&s, false);
    snprintf(want, sizeof(want),
             "{\"hostname\":\"%s\","
             "\"cpu\":{\"total_pct\":{\"value\":42.386831,\"source\":\"%s\"},\"online\":2,"
             "\"cores\":[{\"id\":0,\"pct\":{\"value\":2.459016,\"source\":\"%s\"}},"
             "{\"id\":1,\"pct\":{\"value\":82.786885,\"source\":\"%s\"}}]},"
             "\"memory\":{\"total_bytes\":{\"value\":25276026880,\"source\":\"%s\"},"
             "\"used_bytes\":{\"value\":95006720,\"source\":\"%s\"},"
             "\"cached_bytes\":{\"value\":268201984,\"source\":\"%s\"},"
             "\"buffers_bytes\":{\"value\":3031040,\"source\":\"%s\"},"
             "\"free_bytes\":{\"value\":24909787136,\"source\":\"%s\"},"
             "\"available_bytes\":{\"value\":24947961856,\"source\":\"%s\"}},"
             "\"swap\":{\"total_bytes\":{\"value\":0,\"source\":\"%s\"},"
             "\"used_bytes\":{\"value\":0,\"source\":\"%s\"}},"
             "\"loadavg\":{\"1m\":{\"value\":0,\"source\":\"%s\"},"
             "\"5m\":{\"value\":0.04,\"source\":\"%s\"},"
             "\"15m\":{\"value\":0.01,\"source\":\"%s\"}},"
             "\"uptime_s\":{\"value\":383.42,\"source\":\"%s\"}}\n",
             name, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d);
    assert_string_equal(got, want);
    free(got);

    /* The pretty form is valid JSON with the same content (jq, when present). */
    if (system("command -v jq >/dev/null 2>&1") == 0) {
        char path[128];
        snprintf(path, sizeof(path), "%s/out.json", r.dir);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        struct jsonw w;
        jsonw_init(&w, f, true);
        json_write_host(&w, &s);
        jsonw_end(&w);
        fclose(f);
        char cmd[512];
        snprintf(cmd, sizeof(cmd),
                 "jq -e '.cpu.cores[1].pct.value == 82.786885 and .memory.used_bytes.value == "
                 "95006720 and .swap.used_bytes.value == 0' %s >/dev/null",
                 path);
        assert_int_equal(system(cmd), 0);
        unlink(path);
    }
    host_close(h);
    root_remove(&r);
}

/* 64 cores with 8..15 offline, then cpu8 back and cpu63 gone. */
static void test_c64_offline(void **state)
{
    (void)state;
    struct root r;
    root_make(&r, "c64-offline");
    struct host *h = open_ok(r.dir);
    struct host_sample s;
    assert_int_equal(host_sample(h, &s), 0);
    assert_int_equal(s.online, 56);
    assert_int_equal(s.ncores, 56);
    assert_int_equal(s.cores[8].id, 16);
    copy_fixture(&r, "c64-offline", "stat.2", "stat");
    assert_int_equal(host_sample(h, &s), 0);
    assert_int_equal(s.online, 56);
    assert_val(&s.cpu_total, 100.0 * 1884 / 5600, 1e-9);
    assert_int_equal(s.cores[8].id, 8);
    assert_none(&s.cores[8].pct, "core was offline at the previous sample");
    assert_int_equal(s.cores[55].id, 62);
    assert_val(&s.cores[55].pct, 62, 1e-9);
    assert_val(&s.cores[7].pct, 7, 1e-9);
    assert_val(&s.mem.swap_used, 265212 * 1024.0, 0);
    assert_val(&s.loadavg[0], 12.47, 1e-9);
    assert_val(&s.loadavg[2], 10.38, 1e-9);
    assert_val(&s.uptime_s, 3456789.12, 1e-6);

    /* In the JSON offline cores are absent: ids 0..7, 8, 16..62. */
    char *got = json_of(&s, false);
    assert_non_null(strstr(got, "{\"id\":7,"));
    assert_non_null(strstr(got, "{\"id\":8,\"pct\":{\"value\":null,"));
    assert_null(strstr(got, "{\"id\":9,"));
    assert_null(strstr(got, "{\"id\":63,"));
    assert_non_null(strstr(got, "\"online\":56,"));
    free(got);
    host_close(h);
    root_remove(&r);
}

static void test_huge_swap(void **state)
{
    (void)state;
    struct root r;
    root_make(&r, "huge-swap");
    struct host *h = open_ok(r.dir);
    struct host_sample s;
    host_sample(h, &s);
    copy_fixture(&r, "huge-swap", "stat.2", "stat");
    assert_int_equal(host_sample(h, &s), 0);
    assert_int_equal(s.online, 16);
    assert_val(&s.cpu_total, 40, 1e-9);
    for (size_t i = 0; i < s.ncores; i++)
        assert_val(&s.cores[i].pct, 40, 1e-9);
    assert_val(&s.mem.total, 1056449876 * 1024.0, 0);
    assert_val(&s.mem.swap_total, 268435452 * 1024.0, 0);
    assert_val(&s.mem.swap_used, 68719476736.0, 0);
    char *got = json_of(&s, false);
    /* byte counts past 2^40 stay integers in the JSON */
    assert_non_null(strstr(got, "\"total_bytes\":{\"value\":1081804673024,"));
    assert_non_null(strstr(got, "\"used_bytes\":{\"value\":68719476736,"));
    free(got);
    host_close(h);
    root_remove(&r);
}

static void test_no_swap(void **state)
{
    (void)state;
    struct root r;
    root_make(&r, "no-swap");
    struct host *h = open_ok(r.dir);
    struct host_sample s;
    host_sample(h, &s);
    copy_fixture(&r, "no-swap", "stat.2", "stat");
    host_sample(h, &s);
    assert_int_equal(s.online, 8);
    for (size_t i = 0; i < 7; i++)
        assert_val(&s.cores[i].pct, 0, 0);
    assert_val(&s.cores[7].pct, 75, 1e-9);
    assert_val(&s.cpu_total, 100.0 * 75 / 800, 1e-9);
    assert_val(&s.mem.swap_total, 0, 0);
    assert_val(&s.mem.swap_used, 0, 0);
    assert_val(&s.uptime_s, 86400.55, 1e-9);
    host_close(h);
    root_remove(&r);
}

static void test_old_kernel(void **state)
{
    (void)state;
    struct root r;
    root_make(&r, "old-kernel");
    struct host *h = open_ok(r.dir);
    struct host_sample s;
    host_sample(h, &s);
    copy_fixture(&r, "old-kernel", "stat.2", "stat");
    host_sample(h, &s);
    assert_val(&s.cores[1].pct, 12.5, 1e-9);
    assert_none(&s.mem.available, "no MemAvailable in /proc/meminfo (kernel before 3.14)");
    assert_val(&s.mem.used, 664352 * 1024.0, 0);
    char *got = json_of(&s, false);
    char want[256];
    snprintf(want, sizeof(want),
             "\"available_bytes\":{\"value\":null,\"source\":\"%s\",\"reason\":\"no MemAvailable "
             "in /proc/meminfo (kernel before 3.14)\"}",
             metric_source_name(MSRC_NONE));
    assert_non_null(strstr(got, want));
    free(got);
    host_close(h);
    root_remove(&r);
}

/* The fixture directory itself has stat.1/stat.2 but no stat: CPU is unknown
 * (online null), the rest is read. */
static void test_missing_stat(void **state)
{
    (void)state;
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/tests/fixtures/proc/no-swap", src_dir());
    struct host *h = open_ok(dir);
    struct host_sample s;
    assert_int_equal(host_sample(h, &s), 0);
    assert_int_equal(s.online, -1);
    assert_int_equal(s.ncores, 0);
    assert_none(&s.cpu_total, "/proc/stat unreadable");
    assert_val(&s.mem.used, 8090996 * 1024.0, 0);
    char *got = json_of(&s, false);
    assert_non_null(strstr(got, "\"online\":null,\"cores\":[]}"));
    free(got);
    host_close(h);
}

/* stat unreadable, then readable, then empty: never a delta across a gap.
 * (A directory named stat opens but fails to read, like a procfs file that
 * errors.) */
static void test_stat_comes_and_goes(void **state)
{
    (void)state;
    struct root r;
    root_make(&r, "two-core");
    char path[256];
    snprintf(path, sizeof(path), "%s/stat", r.dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkdir(path, 0700), 0);
    struct host *h = open_ok(r.dir);
    struct host_sample s;
    host_sample(h, &s);
    assert_none(&s.cpu_total, "/proc/stat unreadable");
    assert_int_equal(s.online, -1);
    assert_int_equal(s.ncores, 0);
    host_sample(h, &s);
    assert_none(&s.cpu_total, "/proc/stat unreadable");

    assert_int_equal(rmdir(path), 0);
    copy_fixture(&r, "two-core", "stat.1", "stat");
    host_sample(h, &s);
    assert_none(&s.cpu_total, "first sample: no delta yet");
    assert_int_equal(s.online, 2);

    put_str(&r, "stat", "");
    host_sample(h, &s);
    assert_none(&s.cpu_total, "no aggregate cpu line in /proc/stat");
    assert_int_equal(s.online, -1);
    assert_int_equal(s.ncores, 0);

    copy_fixture(&r, "two-core", "stat.2", "stat");
    host_sample(h, &s);
    assert_none(&s.cpu_total, "no aggregate cpu line in /proc/stat");
    assert_none(&s.cores[0].pct, "core was offline at the previous sample");
    assert_int_equal(s.online, 2);
    host_sample(h, &s);
    assert_none(&s.cpu_total, "no clock ticks elapsed");
    assert_none(&s.cores[1].pct, "no clock ticks elapsed");
    host_close(h);
    root_remove(&r);
}

static void test_loadavg_uptime_malformed(void **state)
{
    (void)state;
    struct root r;
    root_make(&r, "two-core");
    struct host *h = open_ok(r.dir);
    struct host_sample s;
    static const struct {
        const char *loadavg, *uptime;
        bool l_ok, u_ok;
        double l1, l15, up;
    } cases[] = {
        {"1.50 2.25 3.125 1/2 3\n", "10.5 20.25\n", true, true, 1.5, 3.125, 10.5},
        {"1 2 3\n", "7\n", true, true, 1, 3, 7},
        {"abc\n", "-5 3\n", false, false, 0, 0, 0},
        {"1.5 2.5 3.5 1/2 3", "10.5 2", false, false, 0, 0, 0},       /* no newline: cut short */
        {"1,50 2,25 3,12\n", "1e20 0\n", false, false, 0, 0, 0},      /* no locale, no exponent */
        {"99999999 1 1\n", "99999999999 1\n", false, false, 0, 0, 0}, /* absurd */
        {"1. 2 3\n", "\n", false, false, 0, 0, 0},
        {"", "", false, false, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        put_str(&r, "loadavg", cases[i].loadavg);
        put_str(&r, "uptime", cases[i].uptime);
        host_sample(h, &s);
        if (cases[i].l_ok) {
            assert_val(&s.loadavg[0], cases[i].l1, 1e-12);
            assert_val(&s.loadavg[2], cases[i].l15, 1e-12);
        } else {
            assert_none(&s.loadavg[0], "malformed /proc/loadavg");
            assert_none(&s.loadavg[2], "malformed /proc/loadavg");
        }
        if (cases[i].u_ok)
            assert_val(&s.uptime_s, cases[i].up, 1e-12);
        else
            assert_none(&s.uptime_s, "malformed /proc/uptime");
    }
    char path[256];
    snprintf(path, sizeof(path), "%s/loadavg", r.dir);
    unlink(path);
    host_close(h);
    h = open_ok(r.dir);
    host_sample(h, &s);
    assert_none(&s.loadavg[1], "/proc/loadavg unreadable");
    host_close(h);
    root_remove(&r);
}

/* 1024 online cores with sparse ids (0, 2, ..., 2046): the first sample grows
 * the buffers; after that sampling allocates nothing. */
static void test_1024_cores_no_alloc(void **state)
{
    (void)state;
    static char text[2][200 * 1024];
    size_t len[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        len[k] += (size_t)sprintf(text[k] + len[k], "cpu  %d 0 0 %d 0 0 0 0 0 0\n",
                                  1000000 + k * 51200, 5000000 + k * 51200);
        for (int i = 0; i < 1024; i++)
            len[k] += (size_t)sprintf(text[k] + len[k], "cpu%d %d 0 0 %d 0 0 0 0 0 0\n", 2 * i,
                                      1000 + k * (i % 101), 90000 + k * (100 - i % 101));
        len[k] += (size_t)sprintf(text[k] + len[k], "intr 1 2 3\nctxt 4\n");
    }
    struct root r;
    root_make(&r, "two-core");
    put(&r, "stat", text[0], len[0]);
    struct host *h = open_ok(r.dir);
    struct host_sample s;
    bool counting = counting_works();
    unsigned long warm = n_allocs;
    assert_int_equal(host_sample(h, &s), 0);
    if (counting) /* growing to 1024 cores allocated, and the counter saw it */
        assert_true(n_allocs > warm);
    assert_int_equal(s.online, 1024);
    put(&r, "stat", text[1], len[1]);
    assert_int_equal(host_sample(h, &s), 0);
    assert_val(&s.cpu_total, 50, 1e-9);
    assert_int_equal(s.ncores, 1024);
    for (int i = 0; i < 1024; i++) {
        assert_int_equal(s.cores[i].id, 2 * i);
        assert_val(&s.cores[i].pct, i % 101, 1e-9);
    }
    unsigned long before = n_allocs;
    for (int t = 0; t < 10; t++) {
        unsigned long b = n_allocs;
        host_sample(h, &s);
        unsigned long a = n_allocs;
        n_allocs = b; /* the put() below allocates; only host_sample counts */
        put(&r, "stat", text[t % 2], len[t % 2]);
        n_allocs = a;
        assert_int_equal(s.online, 1024);
    }
    if (counting)
        assert_int_equal(n_allocs - before, 0);
    else
        print_message("allocation counting unavailable here (sanitizer or valgrind): skipped\n");
    host_close(h);
    root_remove(&r);
}

static void test_open_errors(void **state)
{
    (void)state;
    struct host *h = (struct host *)1;
    char err[256];
    assert_int_equal(host_open(&h, "/nonexistent/proc", err, sizeof(err)), -ENOENT);
    assert_null(h);
    assert_string_equal(err, "host: /nonexistent/proc: No such file or directory");

    char file[4096];
    snprintf(file, sizeof(file), "%s/tests/fixtures/proc/two-core/meminfo", src_dir());
    assert_int_equal(host_open(&h, file, err, sizeof(err)), -ENOTDIR);
    assert_non_null(strstr(err, "Not a directory"));

    struct root r;
    root_make(&r, NULL);
    assert_int_equal(host_open(&h, r.dir, err, sizeof(err)), -ENOENT);
    assert_non_null(strstr(err, "neither stat nor meminfo is readable there"));
    assert_int_equal(host_open(&h, r.dir, NULL, 0), -ENOENT); /* no message buffer: fine */
    /* meminfo alone is enough to open */
    put_str(&r, "meminfo", "MemTotal: 4 kB\n");
    h = open_ok(r.dir);
    struct host_sample s;
    assert_int_equal(host_sample(h, &s), 0);
    assert_val(&s.mem.total, 4096, 0);
    assert_none(&s.uptime_s, "/proc/uptime unreadable");
    host_close(h);
    host_close(NULL);
    root_remove(&r);
}

/* The live /proc of this machine: plausible, not exact. */
static void test_live_proc(void **state)
{
    (void)state;
    struct host *h = open_ok(NULL);
    struct host_sample s;
    assert_int_equal(host_sample(h, &s), 0);
    assert_true(s.online >= 1);
    assert_int_equal((long)s.ncores, s.online);
    assert_none(&s.cpu_total, "first sample: no delta yet");
    assert_true(metric_ok(&s.mem.total) && s.mem.total.value > 0);
    assert_true(metric_ok(&s.uptime_s));
    /* On procfs the host name and uptime are not read from their files:
     * they must still be what the files say (uptime within the 10 ms the
     * file shows plus the time between the two reads). */
    char name[HOST_NAME_LEN] = "", up[64] = "";
    FILE *f = fopen("/proc/sys/kernel/hostname", "r");
    if (f) {
        if (fgets(name, sizeof(name), f))
            name[strcspn(name, "\n")] = '\0';
        fclose(f);
        assert_string_equal(s.hostname, name);
    }
    f = fopen("/proc/uptime", "r");
    assert_non_null(f);
    assert_non_null(fgets(up, sizeof(up), f));
    fclose(f);
    double file_up = strtod(up, NULL);
    assert_true(s.uptime_s.value <= file_up + 1e-9 && s.uptime_s.value > file_up - 1.0);
    /* loadavg from sysinfo(): the file's three decimals "L1 L5 L15 ..." (it
     * changes every 5 s: the file is read before and after the sample, and
     * again when the two differ). */
    bool same = false;
    for (int tries = 0; tries < 5 && !same; tries++) {
        char l1[128] = "", l2[128] = "";
        f = fopen("/proc/loadavg", "r");
        assert_non_null(f);
        assert_non_null(fgets(l1, sizeof(l1), f));
        fclose(f);
        assert_int_equal(host_sample(h, &s), 0);
        f = fopen("/proc/loadavg", "r");
        assert_non_null(f);
        assert_non_null(fgets(l2, sizeof(l2), f));
        fclose(f);
        if (strcmp(l1, l2) != 0)
            continue;
        char got[128];
        snprintf(got, sizeof(got), "%.2f %.2f %.2f", s.loadavg[0].value, s.loadavg[1].value,
                 s.loadavg[2].value);
        assert_memory_equal(got, l1, strlen(got));
        same = true;
    }
    assert_true(same);
    usleep(120 * 1000);
    assert_int_equal(host_sample(h, &s), 0);
    assert_true(metric_ok(&s.cpu_total));
    assert_true(s.cpu_total.value >= 0 && s.cpu_total.value <= 100);
    for (size_t i = 0; i < s.ncores; i++)
        if (metric_ok(&s.cores[i].pct))
            assert_true(s.cores[i].pct.value >= 0 && s.cores[i].pct.value <= 100);
    host_close(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_core),
        cmocka_unit_test(test_c64_offline),
        cmocka_unit_test(test_huge_swap),
        cmocka_unit_test(test_no_swap),
        cmocka_unit_test(test_old_kernel),
        cmocka_unit_test(test_missing_stat),
        cmocka_unit_test(test_stat_comes_and_goes),
        cmocka_unit_test(test_loadavg_uptime_malformed),
        cmocka_unit_test(test_1024_cores_no_alloc),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_live_proc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
