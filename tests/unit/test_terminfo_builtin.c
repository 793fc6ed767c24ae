/* test_terminfo_builtin.c — the built-in terminfo entries
 * (tui/terminfo_builtin.c): the table tic made, the private directory an
 * entry is written to, TERMINFO while curses reads it and after. That
 * ncurses draws from such an entry where the host has none is
 * tests/e2e/test_portable.sh's (a root without terminfo). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tui/terminfo_builtin.h"

static char tmpdir[PATH_MAX];

static int entries_in(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static int up(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/migmon-test-terminfo.XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    setenv("TMPDIR", tmpdir, 1);
    return 0;
}

static int down(void **state)
{
    (void)state;
    rmdir(tmpdir);
    return 0;
}

static void test_table(void **state)
{
    (void)state;
    static const char *const names[] = {"xterm",  "xterm-256color", "screen", "screen-256color",
                                        "tmux",   "tmux-256color",  "linux",  "vt100"};
    assert_int_equal(terminfo_builtin_count, 8);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const struct terminfo_entry *e = terminfo_builtin_find(names[i]);
        assert_non_null(e);
        assert_string_equal(e->name, names[i]);
        /* "x/xterm" (or a hashed directory): the directory, then the name */
        const char *slash = strchr(e->path, '/');
        assert_non_null(slash);
        assert_string_equal(slash + 1, names[i]);
        /* tic's magic: the legacy format (0432) or the 32-bit one (01036) */
        assert_true(e->len > 12);
        assert_true((e->data[0] == 0x1a && e->data[1] == 0x01) ||
                    (e->data[0] == 0x1e && e->data[1] == 0x02));
    }
    assert_null(terminfo_builtin_find("kitty"));
    assert_null(terminfo_builtin_find("xterm-256"));
    assert_null(terminfo_builtin_find(""));
    assert_null(terminfo_builtin_find(NULL));
}

static void test_install_remove(void **state)
{
    (void)state;
    setenv("TERM", "xterm-256color", 1);
    setenv("TERMINFO", "/etc/terminfo-of-the-user", 1);
    char dir[PATH_MAX];
    assert_int_equal(terminfo_builtin_install(dir, sizeof(dir)), 0);
    assert_memory_equal(dir, tmpdir, strlen(tmpdir));
    assert_string_equal(getenv("TERMINFO"), dir);
    /* the very bytes of the table, at the path ncurses looks for */
    const struct terminfo_entry *e = terminfo_builtin_find("xterm-256color");
    char file[PATH_MAX + 64];
    snprintf(file, sizeof(file), "%s/%s", dir, e->path);
    FILE *f = fopen(file, "rb");
    assert_non_null(f);
    static unsigned char buf[16384];
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    assert_int_equal(n, e->len);
    assert_memory_equal(buf, e->data, e->len);
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);

    terminfo_builtin_remove(dir);
    assert_int_equal(access(dir, F_OK), -1);
    assert_int_equal(entries_in(tmpdir), 0);
    assert_string_equal(getenv("TERMINFO"), "/etc/terminfo-of-the-user");

    /* no TERMINFO before: none after */
    unsetenv("TERMINFO");
    setenv("TERM", "vt100", 1);
    assert_int_equal(terminfo_builtin_install(dir, sizeof(dir)), 0);
    assert_string_equal(getenv("TERMINFO"), dir);
    terminfo_builtin_remove(dir);
    assert_null(getenv("TERMINFO"));
    assert_int_equal(entries_in(tmpdir), 0);
}

static void test_not_built_in(void **state)
{
    (void)state;
    char dir[PATH_MAX];
    setenv("TERM", "kitty", 1);
    assert_int_equal(terminfo_builtin_install(dir, sizeof(dir)), -1);
    unsetenv("TERM");
    assert_int_equal(terminfo_builtin_install(dir, sizeof(dir)), -1);
    assert_null(getenv("TERMINFO"));
    assert_int_equal(entries_in(tmpdir), 0);
    /* a directory that cannot be written: -1, TERMINFO untouched */
    setenv("TERM", "xterm", 1);
    setenv("TMPDIR", "/nonexistent-dir", 1);
    assert_int_equal(terminfo_builtin_install(dir, sizeof(dir)), -1);
    assert_null(getenv("TERMINFO"));
    setenv("TMPDIR", tmpdir, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_install_remove),
        cmocka_unit_test(test_not_built_in),
    };
    return cmocka_run_group_tests(tests, up, down);
}
