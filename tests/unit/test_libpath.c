/* Unit tests for src/core/libpath.c: LD_LIBRARY_PATH's absolute entries only,
 * the ld.so cache's formats (crafted, hostile, ldconfig's own and the
 * system's), the system directories in ld.so's order, and the ELF check. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/libpath.h"

static char dir[256]; /* this test's directory */

static void mkdirs(const char *rel)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, rel);
    for (char *s = p + strlen(dir) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        mkdir(p, 0755);
        *s = '/';
    }
    mkdir(p, 0755);
}

static void put(const char *rel, const void *bytes, size_t n)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, rel);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

/* A real shared object of this build's class: the simulator. */
static void put_lib(const char *rel)
{
    const char *sim = getenv("MIGMON_SIM_LIB");
    assert_non_null(sim);
    FILE *in = fopen(sim, "rb");
    assert_non_null(in);
    static char buf[1 << 16];
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, rel);
    FILE *out = fopen(p, "wb");
    assert_non_null(out);
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
}

/* An ELF header of the other class (a 32-bit library on a 64-bit build). */
static void put_other_class(const char *rel)
{
    unsigned char h[64] = {0};
    memcpy(h, ELFMAG, SELFMAG);
    h[EI_CLASS] = sizeof(void *) == 8 ? ELFCLASS32 : ELFCLASS64;
    h[EI_DATA] = ELFDATA2LSB;
    h[EI_VERSION] = EV_CURRENT;
    put(rel, h, sizeof(h));
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/migmon-libpath-%d", (int)getpid());
    mkdir(dir, 0700);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static struct libpath_sys sys_of(const char *llp, const char *root)
{
    static char rootbuf[512];
    snprintf(rootbuf, sizeof(rootbuf), "%s/%s", dir, root);
    return (struct libpath_sys){
        .ld_library_path = llp, .secure = false, .cache = "/nonexistent/ld.so.cache",
        .root = rootbuf};
}

static const char *find(const struct libpath_sys *sys, const char *name, unsigned where)
{
    static char out[4096];
    return libpath_find_in(sys, name, where, out, sizeof(out)) == 0 ? out : NULL;
}

static void test_env_absolute_entries_only(void **state)
{
    (void)state;
    char here[512], llp[1024], want[600];
    /* the library in the current directory, in ./x and in an absolute one */
    mkdirs("cwd/x");
    mkdirs("abs");
    put_lib("cwd/libv.so.1");
    put_lib("cwd/x/libv.so.1");
    put_lib("abs/libv.so.1");
    assert_non_null(getcwd(here, sizeof(here)));
    char cwd[512];
    snprintf(cwd, sizeof(cwd), "%s/cwd", dir);
    assert_int_equal(chdir(cwd), 0);
    struct libpath_sys s = sys_of(":", "none");
    /* an empty entry, ".", a relative one, "$ORIGIN": none is searched */
    for (size_t i = 0; i < 6; i++) {
        static const char *const v[] = {":", "::", ".", "x", "./x", "$ORIGIN"};
        s.ld_library_path = v[i];
        assert_null(find(&s, "libv.so.1", LIBPATH_ENV | LIBPATH_SYSTEM));
    }
    snprintf(llp, sizeof(llp), ":.:x;%s/abs:", dir);
    s.ld_library_path = llp;
    snprintf(want, sizeof(want), "%s/abs/libv.so.1", dir);
    assert_string_equal(find(&s, "libv.so.1", LIBPATH_ENV), want);
    /* set-user-ID: no LD_LIBRARY_PATH at all, as ld.so */
    s.secure = true;
    assert_null(find(&s, "libv.so.1", LIBPATH_ENV | LIBPATH_SYSTEM));
    s.secure = false;
    /* only where asked */
    assert_null(find(&s, "libv.so.1", LIBPATH_SYSTEM));
    /* a name with a '/' is no soname */
    assert_null(find(&s, "x/libv.so.1", LIBPATH_ENV | LIBPATH_SYSTEM));
    assert_null(find(&s, "", LIBPATH_ENV | LIBPATH_SYSTEM));
    assert_int_equal(chdir(here), 0);
}

static int count_dirs(const char *d, size_t len, void *ctx)
{
    (void)d;
    (void)len;
    (*(int *)ctx)++;
    return 0;
}

static void test_env_each(void **state)
{
    (void)state;
    int n = 0;
    setenv("LD_LIBRARY_PATH", ":/a:.:b;/c::", 1);
    libpath_env_each(count_dirs, &n);
    assert_int_equal(n, 2); /* /a and /c */
    unsetenv("LD_LIBRARY_PATH");
    n = 0;
    libpath_env_each(count_dirs, &n);
    assert_int_equal(n, 0);
}

static void test_system_dirs_in_order(void **state)
{
    (void)state;
    char want[600];
    struct libpath_sys s = sys_of(NULL, "root");
    mkdirs("root/usr/lib64");
    mkdirs("root/usr/lib");
    put_lib("root/usr/lib64/libnvidia-ml.so.1");
    snprintf(want, sizeof(want), "%s/root/usr/lib64/libnvidia-ml.so.1", dir);
    assert_string_equal(find(&s, "libnvidia-ml.so.1", LIBPATH_SYSTEM), want);
    assert_null(find(&s, "libnvidia-ml.so.1", LIBPATH_ENV));
#if defined(__x86_64__)
    /* Debian's multiarch directory comes before /usr/lib64 */
    mkdirs("root/usr/lib/x86_64-linux-gnu");
    put_lib("root/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
    snprintf(want, sizeof(want), "%s/root/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", dir);
    assert_string_equal(find(&s, "libnvidia-ml.so.1", LIBPATH_SYSTEM), want);
#endif
    /* another class's library is passed over, as ld.so does */
    mkdirs("root/lib64");
    put_other_class("root/lib64/libq.so.1");
    put_lib("root/usr/lib/libq.so.1");
    snprintf(want, sizeof(want), "%s/root/usr/lib/libq.so.1", dir);
    assert_string_equal(find(&s, "libq.so.1", LIBPATH_SYSTEM), want);
    /* a file that is not ELF is where ld.so would stop: it is the answer
     * (its dlopen then says why it does not load) */
    put("root/usr/lib64/libtext.so.1", "not a library\n", 14);
    snprintf(want, sizeof(want), "%s/root/usr/lib64/libtext.so.1", dir);
    assert_string_equal(find(&s, "libtext.so.1", LIBPATH_SYSTEM), want);
    /* a FIFO or a directory under the name: passed over, never waited on */
    char p[600];
    snprintf(p, sizeof(p), "%s/root/usr/lib64/libfifo.so.1", dir);
    assert_int_equal(mkfifo(p, 0644), 0);
    mkdirs("root/usr/lib/libfifo.so.1");
    assert_null(find(&s, "libfifo.so.1", LIBPATH_SYSTEM));
}

/* ---- the cache ---- */

struct seen {
    char paths[8][128];
    int n;
};

static int collect(const char *path, void *ctx)
{
    struct seen *s = ctx;
    if (s->n < 8)
        snprintf(s->paths[s->n], sizeof(s->paths[0]), "%s", path);
    s->n++;
    return 0;
}

static void w32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static void w64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

struct centry {
    uint32_t flags;
    const char *key, *value;
    uint64_t hwcap;
};

/* A new-format cache at buf + at (offsets from there); its length from at. */
static size_t new_cache(unsigned char *buf, size_t at, const struct centry *e, uint32_t n)
{
    unsigned char *h = buf + at;
    memcpy(h, "glibc-ld.so.cache1.1", 20);
    w32(h + 20, n);
    size_t str = 48 + (size_t)n * 24;
    for (uint32_t i = 0; i < n; i++) {
        unsigned char *x = h + 48 + (size_t)i * 24;
        w32(x, e[i].flags);
        w32(x + 4, (uint32_t)str);
        memcpy(h + str, e[i].key, strlen(e[i].key) + 1);
        str += strlen(e[i].key) + 1;
        w32(x + 8, (uint32_t)str);
        memcpy(h + str, e[i].value, strlen(e[i].value) + 1);
        str += strlen(e[i].value) + 1;
        w64(x + 16, e[i].hwcap);
    }
    w32(h + 24, (uint32_t)(str - 48 - (size_t)n * 24));
    return str;
}

static const struct centry entries[] = {
    {0x0303, "libfoo.so.1", "/a/libfoo.so.1", 0},
    {0x0303, "libfoo.so.1", "/hw/x86-64-v3/libfoo.so.1", (1ull << 62) | 2}, /* glibc-hwcaps */
    {0x0000, "libfoo.so.1", "/libc4/libfoo.so.1", 0},                       /* not ELF libc6 */
    {0x0303, "libfoo.so.1", "rel/libfoo.so.1", 0},                          /* not absolute */
    {0x0303, "libbar.so.2", "/a/libbar.so.2", 0},
    {0x0003, "libfoo.so.1", "/i386/libfoo.so.1", 0}, /* left to the ELF check */
    {0x0001, "libfoo.so.1", "/elf/libfoo.so.1", 0},
};
#define NENTRIES (uint32_t)(sizeof(entries) / sizeof(entries[0]))

static void assert_foo(const struct seen *s)
{
    assert_int_equal(s->n, 3);
    assert_string_equal(s->paths[0], "/a/libfoo.so.1");
    assert_string_equal(s->paths[1], "/i386/libfoo.so.1");
    assert_string_equal(s->paths[2], "/elf/libfoo.so.1");
}

static void test_cache_new_format(void **state)
{
    (void)state;
    static unsigned char buf[4096];
    memset(buf, 0, sizeof(buf));
    size_t len = new_cache(buf, 0, entries, NENTRIES);
    struct seen s = {0};
    assert_int_equal(libpath_cache_each(buf, len, "libfoo.so.1", collect, &s), 0);
    assert_foo(&s);
    memset(&s, 0, sizeof(s));
    libpath_cache_each(buf, len, "libbar.so.2", collect, &s);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.paths[0], "/a/libbar.so.2");
    memset(&s, 0, sizeof(s));
    libpath_cache_each(buf, len, "libfoo.so", collect, &s);
    assert_int_equal(s.n, 0);
}

static void test_cache_old_and_compat_formats(void **state)
{
    (void)state;
    static unsigned char buf[4096];
    /* compat: an old part of 2 entries (16 + 24 = 40 bytes, new part at 40) */
    memset(buf, 0, sizeof(buf));
    memcpy(buf, "ld.so-1.7.0", 11);
    w32(buf + 12, 2);
    size_t len = 40 + new_cache(buf, 40, entries, NENTRIES);
    struct seen s = {0};
    libpath_cache_each(buf, len, "libfoo.so.1", collect, &s);
    assert_foo(&s);
    /* 3 old entries: 16 + 36 = 52, the new part at the next 8 bytes, 56 */
    memset(buf, 0, sizeof(buf));
    memcpy(buf, "ld.so-1.7.0", 11);
    w32(buf + 12, 3);
    len = 56 + new_cache(buf, 56, entries, NENTRIES);
    memset(&s, 0, sizeof(s));
    libpath_cache_each(buf, len, "libfoo.so.1", collect, &s);
    assert_foo(&s);
    /* old alone: entries of 12 bytes, strings after them */
    memset(buf, 0, sizeof(buf));
    memcpy(buf, "ld.so-1.7.0", 11);
    w32(buf + 12, 2);
    const char strs[] = "libold.so.1\0/o/libold.so.1\0libz.so.1\0/o/libz.so.1";
    memcpy(buf + 40, strs, sizeof(strs));
    w32(buf + 16, 0x0303);
    w32(buf + 20, 0);
    w32(buf + 24, 12);
    w32(buf + 28, 0x0303);
    w32(buf + 32, 27);
    w32(buf + 36, 37);
    memset(&s, 0, sizeof(s));
    libpath_cache_each(buf, 40 + sizeof(strs), "libold.so.1", collect, &s);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.paths[0], "/o/libold.so.1");
}

static void test_cache_hostile(void **state)
{
    (void)state;
    static unsigned char buf[4096];
    struct seen s = {0};
    memset(buf, 0, sizeof(buf));
    size_t len = new_cache(buf, 0, entries, NENTRIES);
    /* every truncation: no entry past the end, no string read past it */
    for (size_t cut = 0; cut < len; cut++) {
        unsigned char *copy = malloc(cut ? cut : 1);
        assert_non_null(copy);
        memcpy(copy, buf, cut);
        memset(&s, 0, sizeof(s));
        libpath_cache_each(copy, cut, "libfoo.so.1", collect, &s);
        assert_true(s.n <= 3);
        free(copy);
    }
    /* a count past the file */
    w32(buf + 20, 0xffffffffu);
    memset(&s, 0, sizeof(s));
    assert_int_equal(libpath_cache_each(buf, len, "libfoo.so.1", collect, &s), 0);
    assert_int_equal(s.n, 0);
    w32(buf + 20, NENTRIES);
    /* offsets past the end */
    w32(buf + 48 + 4, 0xfffffff0u);
    w32(buf + 48 + 8, (uint32_t)len);
    memset(&s, 0, sizeof(s));
    libpath_cache_each(buf, len, "libfoo.so.1", collect, &s);
    assert_int_equal(s.n, 2); /* the first entry is gone, the i386 and ELF ones stay */
    /* an old part whose count runs past the file */
    memset(buf, 0, sizeof(buf));
    memcpy(buf, "ld.so-1.7.0", 11);
    w32(buf + 12, 0x40000000u);
    memset(&s, 0, sizeof(s));
    assert_int_equal(libpath_cache_each(buf, 64, "libfoo.so.1", collect, &s), 0);
    assert_int_equal(s.n, 0);
    /* not a cache */
    memset(&s, 0, sizeof(s));
    assert_int_equal(libpath_cache_each("garbage", 7, "libfoo.so.1", collect, &s), 0);
    assert_int_equal(s.n, 0);
}

/* The system's own cache, as ldconfig wrote it: libc.so.6 is in it. */
static void test_cache_of_this_system(void **state)
{
    (void)state;
    FILE *f = fopen("/etc/ld.so.cache", "rb");
    if (!f) {
        print_message("no /etc/ld.so.cache here: the system's cache not read\n");
        return;
    }
    static unsigned char buf[8 << 20];
    size_t len = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    struct seen s = {0};
    libpath_cache_each(buf, len, "libc.so.6", collect, &s);
    assert_true(s.n >= 1);
    assert_true(s.paths[0][0] == '/');
    assert_string_equal(strrchr(s.paths[0], '/'), "/libc.so.6");
    assert_int_equal(access(s.paths[0], R_OK), 0);
    /* and the search through it finds that libc, and loads it */
    char out[4096], err[512] = "";
    assert_int_equal(libpath_find("libc.so.6", LIBPATH_SYSTEM, out, sizeof(out)), 0);
    assert_true(out[0] == '/');
    void *h = libpath_open("libc.so.6", out, sizeof(out), err, sizeof(err));
    assert_non_null(h);
    dlclose(h);
}

/* A cache written by ldconfig (-C: to our file) for WSL's directory: the
 * library there is found through it. */
static void test_cache_from_ldconfig(void **state)
{
    (void)state;
    const char *ldconfig = access("/sbin/ldconfig", X_OK) == 0 ? "/sbin/ldconfig"
                           : access("/usr/sbin/ldconfig", X_OK) == 0 ? "/usr/sbin/ldconfig"
                                                                      : NULL;
    if (!ldconfig) {
        print_message("no ldconfig here: its cache not checked\n");
        return;
    }
    mkdirs("wsl/usr/lib/wsl/lib");
    put_lib("wsl/usr/lib/wsl/lib/libnvidia-ml.so.1");
    char conf[600], cache[600], cmd[2000], want[600];
    snprintf(conf, sizeof(conf), "%s/ld.so.conf", dir);
    snprintf(cache, sizeof(cache), "%s/ld.so.cache", dir);
    FILE *f = fopen(conf, "w");
    assert_non_null(f);
    fprintf(f, "%s/wsl/usr/lib/wsl/lib\n", dir);
    fclose(f);
    snprintf(cmd, sizeof(cmd), "%s -X -C '%s' -f '%s' 2>/dev/null", ldconfig, cache, conf);
    if (system(cmd) != 0) {
        print_message("ldconfig -C failed here: its cache not checked\n");
        return;
    }
    struct libpath_sys s = sys_of(NULL, "empty-root");
    s.cache = cache;
    snprintf(want, sizeof(want), "%s/wsl/usr/lib/wsl/lib/libnvidia-ml.so.1", dir);
    assert_string_equal(find(&s, "libnvidia-ml.so.1", LIBPATH_SYSTEM), want);
}

static void test_open_file_is_the_file_named(void **state)
{
    (void)state;
    char here[512], d[600], err[512] = "";
    mkdirs("named");
    put_lib("named/libnvidia-ml.so.1");
    assert_non_null(getcwd(here, sizeof(here)));
    snprintf(d, sizeof(d), "%s/named", dir);
    assert_int_equal(chdir(d), 0);
    /* no '/': the file here, not a search */
    void *h = libpath_open_file("libnvidia-ml.so.1", err, sizeof(err));
    assert_non_null(h);
    dlclose(h);
    assert_null(libpath_open_file("no-such.so", err, sizeof(err)));
    assert_non_null(strstr(err, "no-such.so"));
    /* a soname found nowhere says where it was looked for */
    unsetenv("LD_LIBRARY_PATH");
    assert_null(libpath_open("libmigmon-none.so.9", NULL, 0, err, sizeof(err)));
    assert_string_equal(err, "libmigmon-none.so.9: not in LD_LIBRARY_PATH, the ld.so cache or "
                             "the system's library directories");
    assert_int_equal(chdir(here), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env_absolute_entries_only),
        cmocka_unit_test(test_env_each),
        cmocka_unit_test(test_system_dirs_in_order),
        cmocka_unit_test(test_cache_new_format),
        cmocka_unit_test(test_cache_old_and_compat_formats),
        cmocka_unit_test(test_cache_hostile),
        cmocka_unit_test(test_cache_of_this_system),
        cmocka_unit_test(test_cache_from_ldconfig),
        cmocka_unit_test(test_open_file_is_the_file_named),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
