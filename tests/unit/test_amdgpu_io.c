/*
 * amdgpu's bounded reads (src/backend/amdgpu/amdgpu_io.c): a regular file is
 * read, on the reader thread and on the calling one; a FIFO (with no
 * writer, or with one that never writes), a directory and a device node
 * are refused at once with the path and what the file is, never waited on.
 * (A read that hangs in the "driver" is tests/e2e/test_amdgpu_hang.sh's:
 * it needs a file system that can hang one.)
 */
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

#include "backend/amdgpu/amdgpu.h"
#include "core/clock.h"

static char dir[64];

static int setup(void **st)
{
    (void)st;
    snprintf(dir, sizeof(dir), "/tmp/migmon-amdio-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **st)
{
    (void)st;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
}

/* Both ways: by a reader thread, and on this thread (io NULL, for /proc). */
static void each_way(void (*check)(struct amd_io *io))
{
    struct amd_io *io = amd_io_open();
    assert_non_null(io);
    amd_io_set_deadline(io, clock_mono_ns() + 2000000000ull);
    check(io);
    amd_io_close(io);
    check(NULL);
}

static void regular(struct amd_io *io)
{
    char p[128], buf[64], why[AMD_WHY_LEN];
    path_of(p, sizeof(p), "gpu_busy_percent");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("41\n", f);
    fclose(f);
    assert_int_equal(amd_read_text(io, p, buf, sizeof(buf), why, sizeof(why)), AMD_READ_OK);
    assert_string_equal(buf, "41"); /* the newline cut */
    size_t got = 0;
    unsigned char raw[2];
    assert_int_equal(amd_io_read(io, p, raw, sizeof(raw), &got, why, sizeof(why)), AMD_READ_OK);
    assert_int_equal(got, 2); /* at most len */
    assert_memory_equal(raw, "41", 2);
    assert_false(amd_io_stalled(io, why, sizeof(why)));
}

static void test_regular(void **st)
{
    (void)st;
    each_way(regular);
}

static void missing(struct amd_io *io)
{
    char p[128], buf[64], why[AMD_WHY_LEN], want[256];
    path_of(p, sizeof(p), "no_such_file");
    assert_int_equal(amd_read_text(io, p, buf, sizeof(buf), why, sizeof(why)), AMD_READ_ERR);
    assert_int_equal(errno, ENOENT);
    snprintf(want, sizeof(want), "%s: No such file or directory", p);
    assert_string_equal(why, want);
    assert_string_equal(buf, "");
}

static void test_missing(void **st)
{
    (void)st;
    each_way(missing);
}

/* A FIFO with no writer: a blocking open would wait for one for ever. */
static void fifo(struct amd_io *io)
{
    char p[128], buf[64], why[AMD_WHY_LEN], want[256];
    path_of(p, sizeof(p), "gpu_metrics");
    unlink(p);
    assert_int_equal(mkfifo(p, 0600), 0);
    uint64_t t0 = clock_mono_ns();
    assert_int_equal(amd_read_text(io, p, buf, sizeof(buf), why, sizeof(why)), AMD_READ_ERR);
    assert_int_equal(errno, EINVAL);
    assert_true(clock_mono_ns() - t0 < 200000000ull);
    snprintf(want, sizeof(want),
             "%s: not a regular file (a FIFO; sysfs attributes are regular files)", p);
    assert_string_equal(why, want);
    /* a writer that holds it open and never writes: a blocking read would
     * wait for ever */
    int w = open(p, O_RDWR);
    assert_true(w >= 0);
    t0 = clock_mono_ns();
    assert_int_equal(amd_read_text(io, p, buf, sizeof(buf), why, sizeof(why)), AMD_READ_ERR);
    assert_true(clock_mono_ns() - t0 < 200000000ull);
    assert_string_equal(why, want);
    close(w);
    assert_false(amd_io_stalled(io, why, sizeof(why)));
}

static void test_fifo(void **st)
{
    (void)st;
    each_way(fifo);
}

static void others(struct amd_io *io)
{
    char p[128], buf[64], why[AMD_WHY_LEN], want[256];
    path_of(p, sizeof(p), "hwmon");
    mkdir(p, 0700);
    assert_int_equal(amd_read_text(io, p, buf, sizeof(buf), why, sizeof(why)), AMD_READ_ERR);
    snprintf(want, sizeof(want),
             "%s: not a regular file (a directory; sysfs attributes are regular files)", p);
    assert_string_equal(why, want);
    /* a character device: /dev/zero would read for ever */
    assert_int_equal(amd_read_text(io, "/dev/zero", buf, sizeof(buf), why, sizeof(why)),
                     AMD_READ_ERR);
    assert_string_equal(why, "/dev/zero: not a regular file (a character device; sysfs "
                             "attributes are regular files)");
}

static void test_others(void **st)
{
    (void)st;
    each_way(others);
}

/* A path longer than the reader takes: refused, not cut. */
static void test_long_path(void **st)
{
    (void)st;
    char p[AMD_PATH_LEN + 256], buf[8], why[AMD_WHY_LEN * 2];
    memset(p, 'a', sizeof(p) - 1);
    p[0] = '/';
    p[sizeof(p) - 1] = '\0';
    struct amd_io *io = amd_io_open();
    assert_non_null(io);
    assert_int_equal(amd_read_text(io, p, buf, sizeof(buf), why, sizeof(why)), AMD_READ_ERR);
    assert_int_equal(errno, ENAMETOOLONG);
    amd_io_close(io);
    amd_io_close(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regular), cmocka_unit_test(test_missing),
        cmocka_unit_test(test_fifo),    cmocka_unit_test(test_others),
        cmocka_unit_test(test_long_path),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
