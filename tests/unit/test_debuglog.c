/* The --debug log (src/core/debuglog.c): mode 0600, no symlink following,
 * size cap with one rotation, default path under XDG_STATE_HOME. */
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

#include "core/debuglog.h"

static char dir[PATH_MAX];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/migmon-dbg-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    debuglog_close();
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_mode_0600_and_lines(void **state)
{
    (void)state;
    char path[PATH_MAX + 16], err[256];
    snprintf(path, sizeof(path), "%s/d.log", dir);
    mode_t old = umask(0);
    assert_int_equal(debuglog_open(path, 0, err, sizeof(err)), 0);
    umask(old);
    assert_true(debuglog_enabled());
    debuglog_printf("nvmlInit_v2 dev=%s rc=%d", "-", 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    FILE *f = fopen(path, "r");
    char line[512];
    assert_non_null(fgets(line, sizeof(line), f));
    fclose(f);
    assert_non_null(strstr(line, "Z nvmlInit_v2 dev=- rc=0\n"));
}

static void test_refuses_symlink(void **state)
{
    (void)state;
    char path[PATH_MAX + 16], target[PATH_MAX + 16], err[256];
    snprintf(target, sizeof(target), "%s/victim", dir);
    snprintf(path, sizeof(path), "%s/link.log", dir);
    FILE *f = fopen(target, "w");
    fclose(f);
    assert_int_equal(symlink(target, path), 0);
    assert_int_equal(debuglog_open(path, 0, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "symbolic link"));
    assert_false(debuglog_enabled());
}

static void test_rotation_caps_size(void **state)
{
    (void)state;
    char path[PATH_MAX + 16], rot[PATH_MAX + 32], err[256];
    snprintf(path, sizeof(path), "%s/r.log", dir);
    snprintf(rot, sizeof(rot), "%s.1", path);
    assert_int_equal(debuglog_open(path, 4096, err, sizeof(err)), 0);
    for (int i = 0; i < 1000; i++)
        debuglog_printf("line %04d padding padding padding padding padding", i);
    struct stat a, b;
    assert_int_equal(stat(path, &a), 0);
    assert_int_equal(stat(rot, &b), 0);
    assert_true(a.st_size <= 4096);
    assert_true(b.st_size <= 4096);
    assert_true(b.st_size > 3000);
    char rot2[PATH_MAX + 32];
    snprintf(rot2, sizeof(rot2), "%s.2", path);
    assert_int_not_equal(stat(rot2, &b), 0); /* one rotation only */
    /* The newest line is in the live file. */
    FILE *f = fopen(path, "r");
    char line[256], last[256] = "";
    while (fgets(line, sizeof(line), f))
        strcpy(last, line);
    fclose(f);
    assert_non_null(strstr(last, "line 0999"));
}

/* The cap --debug runs with (max_bytes 0): 8 MiB. A log left by an earlier
 * run just under it takes a short line, then rotates on the next one that
 * would cross it (the seed's log grew by about 250 MB a day). */
static void test_default_cap(void **state)
{
    (void)state;
    assert_int_equal(DEBUGLOG_DEFAULT_MAX_BYTES, 8388608);
    char path[PATH_MAX + 16], rot[PATH_MAX + 32], err[256];
    snprintf(path, sizeof(path), "%s/d.log", dir);
    snprintf(rot, sizeof(rot), "%s.1", path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    off_t base = (off_t)DEBUGLOG_DEFAULT_MAX_BYTES - 100;
    assert_int_equal(truncate(path, base), 0);
    assert_int_equal(debuglog_open(path, 0, err, sizeof(err)), 0);
    debuglog_printf("short");
    struct stat a, b;
    assert_int_equal(stat(path, &a), 0);
    assert_true(a.st_size > base && a.st_size <= (off_t)DEBUGLOG_DEFAULT_MAX_BYTES);
    assert_int_not_equal(stat(rot, &b), 0); /* still under the cap */
    off_t before = a.st_size;
    debuglog_printf("a line long enough to cross the cap: %0100d", 7);
    assert_int_equal(stat(rot, &b), 0);
    assert_int_equal(b.st_size, before); /* the old log, whole */
    assert_int_equal(stat(path, &a), 0);
    assert_true(a.st_size > 100 && a.st_size < 300); /* only the new line */
    debuglog_close();
}

static void test_default_path_xdg(void **state)
{
    (void)state;
    char out[PATH_MAX], err[256], want[PATH_MAX + 64];
    setenv("XDG_STATE_HOME", dir, 1);
    assert_int_equal(debuglog_default_path(out, sizeof(out), err, sizeof(err)), 0);
    snprintf(want, sizeof(want), "%s/mig-gpu-mon/debug.log", dir);
    assert_string_equal(out, want);
    struct stat st;
    char d[PATH_MAX + 32];
    snprintf(d, sizeof(d), "%s/mig-gpu-mon", dir);
    assert_int_equal(stat(d, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    /* A relative XDG_STATE_HOME is ignored (XDG spec): falls back to HOME. */
    setenv("XDG_STATE_HOME", "relative", 1);
    setenv("HOME", dir, 1);
    assert_int_equal(debuglog_default_path(out, sizeof(out), err, sizeof(err)), 0);
    snprintf(want, sizeof(want), "%s/.local/state/mig-gpu-mon/debug.log", dir);
    assert_string_equal(out, want);
    unsetenv("XDG_STATE_HOME");
    setenv("HOME", "", 1);
    assert_int_equal(debuglog_default_path(out, sizeof(out), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "--debug=FILE"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_mode_0600_and_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_symlink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rotation_caps_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_path_xdg, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
