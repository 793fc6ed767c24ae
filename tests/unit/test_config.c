/* Unit tests for src/app/config.c: keys, values, bad lines reported with
 * their line and skipped, and --write-config's file read back. */
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

#include "app/cli.h"
#include "app/config.h"

static char path[64];

/* n bytes of text (NUL bytes too) as the file at path */
static void write_bytes(const char *text, size_t n)
{
    snprintf(path, sizeof(path), "/tmp/migmon-config-%d.ini", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    fclose(f);
    /* writable by its owner alone whatever the umask: a configuration
     * file writable by others is refused (trust.h) */
    assert_int_equal(chmod(path, 0644), 0);
}

static void write_file(const char *text)
{
    write_bytes(text, strlen(text));
}

/* Load the file at p; the reports into errs, config_load's line into err. */
static int load_path(struct config *c, const char *p, char *errs, size_t len, char *err,
                     size_t errlen)
{
    errs[0] = '\0'; /* an empty report reads as "" whether or not the stream wrote a byte */
    FILE *e = fmemopen(errs, len, "w");
    assert_non_null(e);
    err[0] = '\0';
    int rc = config_load(c, p, e, err, errlen);
    fclose(e);
    return rc;
}

/* Load text; the reports into errs. */
static int load(struct config *c, const char *text, char *errs, size_t len)
{
    char err[256];
    write_file(text);
    int rc = load_path(c, path, errs, len, err, sizeof(err));
    unlink(path);
    return rc;
}

/* No byte a terminal acts on but the newlines ending the lines. */
static void assert_no_controls(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\n')
            continue;
        assert_false(*p < 0x20 || *p == 0x7f || *p >= 0x80);
    }
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
                  "[export]\nlisten = 127.0.0.1:9500\ncompat = dcgm\n"
                  "kubelet_socket = /run/k.sock\nkubelet_refresh = 2500\n",
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
    assert_string_equal(c.kubelet_socket, "/run/k.sock");
    assert_int_equal(c.kubelet_refresh_ms, 2500);
    assert_int_equal(c.errors, 0);
}

static void test_kubelet_keys(void **state)
{
    (void)state;
    struct config c;
    config_defaults(&c);
    assert_string_equal(c.kubelet_socket, "/var/lib/kubelet/pod-resources/kubelet.sock");
    assert_int_equal(c.kubelet_refresh_ms, 10000);
    assert_string_equal(c.pod_logs, "/var/log/pods");
    char errs[2048] = "";
    load(&c,
         "[export]\nkubelet_socket = off\nkubelet_refresh = 50\nkubelet_socket =\n"
         "pod_logs = /srv/pods\n",
         errs, sizeof(errs));
    char want[1024];
    snprintf(want, sizeof(want),
             "%s:3: kubelet_refresh = 50: expected milliseconds from 100 to 3600000\n"
             "%s:4: kubelet_socket = : expected a socket path (at most 107 bytes) or off\n",
             path, path);
    assert_string_equal(errs, want);
    assert_string_equal(c.kubelet_socket, "off");
    assert_int_equal(c.kubelet_refresh_ms, 10000);
    assert_string_equal(c.pod_logs, "/srv/pods");
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
    char err[256];
    assert_int_equal(config_load(&c, "/nonexistent/mig-gpu-mon/config.ini", e, err, sizeof(err)),
                     -ENOENT);
    assert_string_equal(err, "/nonexistent/mig-gpu-mon/config.ini: no such file");
    assert_int_equal(config_load(&c, "/tmp", e, err, sizeof(err)), -EISDIR);
    assert_string_equal(err, "/tmp: a directory, not a regular file");
    fclose(e);
    assert_int_equal(c.errors, 0);
    char errs[1024] = "";
    load(&c, "[general]\ntop = 3\nthis line is no key\ntop = 4\n", errs, sizeof(errs));
    assert_non_null(strstr(errs, ":3: syntax error"));
    assert_int_equal(c.top, 4); /* the line after it still counts */
}

/* A FIFO (no writer: opening it to read would wait for one), a device, a
 * directory: refused at once, named; /dev/null and links are followed. */
static void test_only_regular_files(void **state)
{
    (void)state;
    struct config c;
    config_defaults(&c);
    char errs[512], err[256], fifo[64], link[64];
    snprintf(fifo, sizeof(fifo), "/tmp/migmon-config-%d.fifo", (int)getpid());
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    alarm(5); /* a regression fails here instead of hanging */
    assert_int_equal(load_path(&c, fifo, errs, sizeof(errs), err, sizeof(err)), -EINVAL);
    char want[160];
    snprintf(want, sizeof(want), "%s: a FIFO, not a regular file", fifo);
    assert_string_equal(err, want);
    alarm(0);
    unlink(fifo);

    assert_int_equal(load_path(&c, "/dev/zero", errs, sizeof(errs), err, sizeof(err)), -EINVAL);
    assert_string_equal(err, "/dev/zero: a character device, not a regular file");
    assert_int_equal(load_path(&c, "/", errs, sizeof(errs), err, sizeof(err)), -EISDIR);
    assert_string_equal(err, "/: a directory, not a regular file");
    /* /dev/null, under its name or another: an empty file */
    assert_int_equal(load_path(&c, "/dev/null", errs, sizeof(errs), err, sizeof(err)), 0);
    assert_string_equal(errs, "");
    snprintf(link, sizeof(link), "/tmp/migmon-config-%d.link", (int)getpid());
    unlink(link);
    assert_int_equal(symlink("/dev/null", link), 0);
    assert_int_equal(load_path(&c, link, errs, sizeof(errs), err, sizeof(err)), 0);
    unlink(link);
    /* a link to a regular file is read */
    write_file("[general]\ntop = 7\n");
    assert_int_equal(symlink(path, link), 0);
    assert_int_equal(load_path(&c, link, errs, sizeof(errs), err, sizeof(err)), 0);
    assert_int_equal(c.top, 7);
    unlink(link);
    unlink(path);
    assert_int_equal(c.errors, 0);
}

/* inih's 200-byte buffer: a longer line is one bad line, named with its
 * number; its tail is no setting, and the lines after it keep theirs. */
static void test_long_line(void **state)
{
    (void)state;
    struct config c;
    config_defaults(&c);
    char text[2048], errs[1024], want[1024];
    char pad[400];
    memset(pad, 'x', 300);
    pad[300] = '\0';
    snprintf(text, sizeof(text), "[general]\n; %s interval = 300\ntop = 5\ninterval = 50\n", pad);
    assert_int_equal(load(&c, text, errs, sizeof(errs)), 0);
    snprintf(want, sizeof(want),
             "%s:2: line longer than 198 bytes; line skipped\n"
             "%s:4: interval = 50: expected milliseconds from 100 to 3600000\n",
             path, path);
    assert_string_equal(errs, want);
    assert_int_equal(c.interval_ms, CLI_INTERVAL_DEFAULT_MS);
    assert_int_equal(c.top, 5);
    assert_int_equal(c.errors, 2);

    /* 198 bytes is a line, with LF or CR LF; 199 is not */
    config_defaults(&c);
    memset(pad, ' ', sizeof(pad));
    snprintf(text, sizeof(text), "[general]\ntop = 7%.*s\r\ncarry = 9%.*s\ngpm = off%.*s\n",
             198 - 7, pad, 198 - 9, pad, 199 - 9, pad);
    assert_int_equal(load(&c, text, errs, sizeof(errs)), 0);
    snprintf(want, sizeof(want), "%s:4: line longer than 198 bytes; line skipped\n", path);
    assert_string_equal(errs, want);
    assert_int_equal(c.top, 7);
    assert_int_equal(c.carry, 9);
    assert_int_equal(c.gpm, CLI_GPM_AUTO);

    /* a NUL byte: inih would read only what comes before it */
    config_defaults(&c);
    static const char nul[] = "[general]\ntop = 2\0interval = 300\ncarry = 1\n";
    write_bytes(nul, sizeof(nul) - 1);
    assert_int_equal(load_path(&c, path, errs, sizeof(errs), want, sizeof(want)), 0);
    unlink(path);
    char line2[160];
    snprintf(line2, sizeof(line2), "%s:2: a NUL byte in the line; line skipped\n", path);
    assert_string_equal(errs, line2);
    assert_int_equal(c.top, CLI_TOP_DEFAULT);
    assert_int_equal(c.interval_ms, CLI_INTERVAL_DEFAULT_MS);
    assert_int_equal(c.carry, 1);
}

/* What the file says is quoted with its controls escaped. */
static void test_reports_escape_controls(void **state)
{
    (void)state;
    struct config c;
    config_defaults(&c);
    char errs[2048], want[1024];
    load(&c,
         "[general]\ninterval = \x1b[31mred\n"
         "k\x1b]0;title\x07 = 1\n"
         "gpm = \xc2\x9b" "2J \xe2\x80\xae \xff\n"
         "[t\x1b[2Jui]\nx = 1\n",
         errs, sizeof(errs));
    snprintf(want, sizeof(want),
             "%s:2: interval = \\x1b[31mred: expected milliseconds from 100 to 3600000\n"
             "%s:3: unknown key 'k\\x1b]0;title\\x07' in [general]\n"
             "%s:4: gpm = \\u009b2J \\u202e \\xff: expected auto, on, off or helper\n"
             "%s:6: unknown key 'x' in [t\\x1b[2Jui]\n",
             path, path, path, path);
    assert_string_equal(errs, want);
    assert_no_controls(errs);

    /* and so is the file's name */
    char name[64], err[512];
    snprintf(name, sizeof(name), "/tmp/migmon-\x1b[2J-%d.ini", (int)getpid());
    FILE *f = fopen(name, "w");
    assert_non_null(f);
    fputs("top = x\n", f);
    fclose(f);
    assert_int_equal(chmod(name, 0644), 0);
    assert_int_equal(load_path(&c, name, errs, sizeof(errs), err, sizeof(err)), 0);
    snprintf(want, sizeof(want),
             "/tmp/migmon-\\x1b[2J-%d.ini:1: unknown key 'top' in []\n", (int)getpid());
    assert_string_equal(errs, want);
    unlink(name);
    assert_int_equal(load_path(&c, name, errs, sizeof(errs), err, sizeof(err)), -ENOENT);
    snprintf(want, sizeof(want), "/tmp/migmon-\\x1b[2J-%d.ini: no such file", (int)getpid());
    assert_string_equal(err, want);
}

/* A file of nothing but bad lines (a binary given as the file): 20 reports,
 * then a count. */
static void test_reports_capped(void **state)
{
    (void)state;
    struct config c;
    config_defaults(&c);
    char text[1024] = "[general]\n", errs[4096];
    for (int i = 0; i < 25; i++)
        strcat(text, "nope = 1\n");
    load(&c, text, errs, sizeof(errs));
    int lines = 0;
    for (const char *s = errs; (s = strchr(s, '\n')); s++)
        lines++;
    assert_int_equal(lines, 21);
    char want[256];
    snprintf(want, sizeof(want), "%s:21: unknown key 'nope' in [general]\n%s: 5 more bad lines "
                                 "not reported\n", path, path);
    assert_non_null(strstr(errs, want));
    assert_int_equal(c.errors, 25);
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

/* A file writable by others, or another user's: refused before a line is
 * read, nothing of it applied (trust.h). */
static void test_untrusted_refused(void **state)
{
    (void)state;
    struct config c;
    config_defaults(&c);
    char errs[256], err[512], want[600];
    write_file("[general]\ntop = 2\n");
    static const unsigned modes[] = {0666, 0646, 0664, 0620};
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        assert_int_equal(chmod(path, modes[i]), 0);
        assert_int_equal(load_path(&c, path, errs, sizeof(errs), err, sizeof(err)), -EPERM);
        snprintf(want, sizeof(want), "%s: writable by others than its owner (mode %04o); not read",
                 path, modes[i]);
        assert_string_equal(err, want);
        assert_int_equal(c.top, CLI_TOP_DEFAULT);
    }
    assert_int_equal(chmod(path, 0600), 0);
    if (geteuid() == 0) {
        assert_int_equal(chown(path, 1000, 1000), 0);
        assert_int_equal(load_path(&c, path, errs, sizeof(errs), err, sizeof(err)), -EPERM);
        snprintf(want, sizeof(want),
                 "%s: owned by uid 1000, neither root nor the user running mig-gpu-mon (uid 0); "
                 "not read", path);
        assert_string_equal(err, want);
        assert_int_equal(c.top, CLI_TOP_DEFAULT);
        assert_int_equal(chown(path, 0, 0), 0);
    }
    assert_int_equal(load_path(&c, path, errs, sizeof(errs), err, sizeof(err)), 0);
    assert_int_equal(c.top, 2);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_key),
        cmocka_unit_test(test_kubelet_keys),
        cmocka_unit_test(test_bad_lines_reported_and_skipped),
        cmocka_unit_test(test_missing_file_and_syntax_error),
        cmocka_unit_test(test_only_regular_files),
        cmocka_unit_test(test_long_line),
        cmocka_unit_test(test_reports_escape_controls),
        cmocka_unit_test(test_reports_capped),
        cmocka_unit_test(test_written_file_reads_back),
        cmocka_unit_test(test_default_path),
        cmocka_unit_test(test_untrusted_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
