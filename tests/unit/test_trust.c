/* Unit tests for src/core/trust.c: the owner and mode rules (as ssh's), and
 * trust_open on files that are not regular or not ours. */
#include <errno.h>
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

#include "core/trust.h"

static struct stat file_of(unsigned uid, unsigned mode)
{
    struct stat st;
    memset(&st, 0, sizeof(st));
    st.st_uid = uid;
    st.st_mode = S_IFREG | mode;
    return st;
}

static void test_owner_and_mode(void **state)
{
    (void)state;
    char why[160];
    struct stat st = file_of(1000, 0600);
    assert_int_equal(trust_check(&st, 1000, why, sizeof(why)), 0); /* the user's own */
    st = file_of(0, 0644);
    assert_int_equal(trust_check(&st, 1000, why, sizeof(why)), 0); /* root's, read by a user */
    st = file_of(0, 0600);
    assert_int_equal(trust_check(&st, 0, why, sizeof(why)), 0);
    st = file_of(0, 0444);
    assert_int_equal(trust_check(&st, 0, why, sizeof(why)), 0);
    /* sudo -E: the user's file, read by root */
    st = file_of(1000, 0600);
    assert_int_equal(trust_check(&st, 0, why, sizeof(why)), -EPERM);
    assert_string_equal(why, "owned by uid 1000, neither root nor the user running mig-gpu-mon "
                             "(uid 0); not read");
    st = file_of(1001, 0644);
    assert_int_equal(trust_check(&st, 1000, why, sizeof(why)), -EPERM);
    /* group or other write, by anyone's file, root's too */
    static const unsigned bad[] = {0602, 0620, 0622, 0666, 0777, 04622};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        st = file_of(0, bad[i]);
        assert_int_equal(trust_check(&st, 0, why, sizeof(why)), -EPERM);
        char want[100];
        snprintf(want, sizeof(want), "writable by others than its owner (mode %04o); not read",
                 bad[i]);
        assert_string_equal(why, want);
    }
}

static void test_open(void **state)
{
    (void)state;
    char dir[64], p[128], why[160];
    snprintf(dir, sizeof(dir), "/tmp/migmon-trust-%d", (int)getpid());
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(p, sizeof(p), "%s/f", dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("Bearer x\n", f);
    fclose(f);
    assert_int_equal(chmod(p, 0600), 0);
    int fd = trust_open(p, why, sizeof(why));
    assert_true(fd >= 0);
    char buf[16] = "";
    assert_int_equal(read(fd, buf, sizeof(buf) - 1), 9); /* blocking reads of the file */
    close(fd);
    assert_int_equal(chmod(p, 0660), 0);
    assert_int_equal(trust_open(p, why, sizeof(why)), -EPERM);
    unlink(p);
    assert_int_equal(trust_open(p, why, sizeof(why)), -ENOENT);
    assert_string_equal(why, strerror(ENOENT));
    /* a FIFO with no writer: refused at once, never opened */
    assert_int_equal(mkfifo(p, 0600), 0);
    assert_int_equal(trust_open(p, why, sizeof(why)), -EINVAL);
    assert_string_equal(why, "a FIFO, not a regular file");
    unlink(p);
    assert_int_equal(trust_open(dir, why, sizeof(why)), -EISDIR);
    assert_string_equal(why, "a directory, not a regular file");
    assert_int_equal(trust_open("/dev/null", why, sizeof(why)), -EINVAL);
    assert_string_equal(why, "a character device, not a regular file");
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_owner_and_mode),
        cmocka_unit_test(test_open),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
