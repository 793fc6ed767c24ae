/* Unit tests for src/config.c: keys, values, bad lines reported with
 * their line and skipped, and --write-config's file read back. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"
#include "config.h"

static char path[64];

static void write_file(const char *text)
{
    snprintf(path, sizeof(path), "/tmp/migmon-config-%d.ini", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Load text; the reports into errs. */
static int load(struct config *c, const char *text, char *errs, size_t len)
{
    write_file(text);
    FILE *e = fmemopen(errs, len, "w");
    assert_non_null(e);
    int rc = config_load(c, path, e);
    fclose(e);
    unlink(path);
    return rc;
}

static void test_every_key(void **state)
{
    (void)state;
    struct config c;
    config_defaults(&c);
    char errs[1024] = "";
    int rc = load(&c,
                  "[general]\ninterval = 250\ntop = 0\ngpm = off\nhistory = 600\ncarry = 5\n"
                  "[tui]\ncolor = off\nvram_warn = 60\nvram_alarm = 85\nload_warn = 40\n"
                  "load_alarm = 70\ntemp_warn = 65\ntemp_alarm = 85\ncharts = thermal\n"
                  "temperature_unit = F\n"
                  "[export]\nlisten = 127.0.0.1:9500\ncompat = dcgm\n",
                  errs, sizeof(errs));
    assert_int_equal(rc, 0);
    assert_string_equal(errs, "");
    assert_int_equal(c.interval_ms, 250);
    assert_int_equal(c.top, 0);
    assert_int_equal(c.gpm, CLI_GPM_OFF);
    assert_int_equal(c.history, 600);
    assert_int_equal(c.carry, 5);
    assert_false(c.color);
    assert_true(c.vram_warn_pct == 60 && c.vram_alarm_pct == 85);
    assert_true(c.load_warn_pct == 40 && c.load_alarm_pct == 70);
    assert_true(c.temp_warn_c == 65 && c.temp_alarm_c == 85);
    assert_true(c.thermal_charts);
    assert_true(c.fahrenheit);
    assert_string_equal(c.listen, "127.0.0.1:9500");
    assert_string_equal(c.compat, "dcgm");
    assert_int_equal(c.errors, 0);
}

static void test_bad_lines_reported_and_skipped(void **state)
{
    (void)state;
    struct config c;
    config_defaults(&c);
    char errs[2048] = "";
    load(&c,
         "; a comment\n[general]\ninterval = 50\ntop = 12\ncolour = on\n[tui]\ncolor = maybe\n"
         "temp_warn = 65\n",
         errs, sizeof(errs));
    char want[1024];
    snprintf(want, sizeof(want),
             "%s:3: interval = 50: expected milliseconds from 100 to 3600000\n"
             "%s:5: unknown key 'colour' in [general]\n"
             "%s:7: color = maybe: expected on or off\n",
             path, path, path);
    assert_string_equal(errs, want);
    assert_int_equal(c.errors, 3);
    /* the good lines around them still count; the bad ones leave defaults */
    assert_int_equal(c.interval_ms, CLI_INTERVAL_DEFAULT_MS);
    assert_int_equal(c.top, 12);
    assert_true(c.color);
    assert_true(c.temp_warn_c == 65);
}

static void test_missing_file_and_syntax_error(void **state)
{
    (void)state;
    struct config c;
    config_defaults(&c);
    FILE *e = fopen("/dev/null", "w");
    assert_int_equal(config_load(&c, "/nonexistent/mig-gpu-mon/config.ini", e), -ENOENT);
    assert_int_equal(config_load(&c, "/tmp", e), -EISDIR);
    fclose(e);
    assert_int_equal(c.errors, 0);
    char errs[1024] = "";
    load(&c, "[general]\ntop = 3\nthis line is no key\ntop = 4\n", errs, sizeof(errs));
    assert_non_null(strstr(errs, ":3: syntax error"));
    assert_int_equal(c.top, 4); /* the line after it still counts */
}

static void test_written_file_reads_back(void **state)
{
    (void)state;
    struct config a, b;
    config_defaults(&a);
    a.interval_ms = 500;
    a.gpm = CLI_GPM_ON;
    a.fahrenheit = true;
    a.vram_warn_pct = 65.5;
    snprintf(a.compat, sizeof(a.compat), "dcgm");
    char text[4096];
    FILE *f = fmemopen(text, sizeof(text), "w");
    config_write(&a, f);
    fclose(f);
    config_defaults(&b);
    char errs[512] = "";
    assert_int_equal(load(&b, text, errs, sizeof(errs)), 0);
    assert_string_equal(errs, "");
    assert_int_equal(b.interval_ms, 500);
    assert_int_equal(b.gpm, CLI_GPM_ON);
    assert_true(b.fahrenheit);
    assert_true(b.vram_warn_pct == 65.5);
    assert_string_equal(b.compat, "dcgm");
    assert_int_equal(b.history, a.history);
}

static void test_default_path(void **state)
{
    (void)state;
    char p[256];
    setenv("XDG_CONFIG_HOME", "/x/conf", 1);
    assert_int_equal(config_default_path(p, sizeof(p)), 0);
    assert_string_equal(p, "/x/conf/mig-gpu-mon/config.ini");
    setenv("XDG_CONFIG_HOME", "relative", 1); /* not absolute: ignored, as the spec says */
    setenv("HOME", "/home/u", 1);
    assert_int_equal(config_default_path(p, sizeof(p)), 0);
    assert_string_equal(p, "/home/u/.config/mig-gpu-mon/config.ini");
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("HOME");
    assert_int_equal(config_default_path(p, sizeof(p)), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_key),
        cmocka_unit_test(test_bad_lines_reported_and_skipped),
        cmocka_unit_test(test_missing_file_and_syntax_error),
        cmocka_unit_test(test_written_file_reads_back),
        cmocka_unit_test(test_default_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
