/* Command-line parsing (src/app/cli.c): every bad input gets one clear message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "app/cli.h"
#include "app/recout.h"

static int parse(struct cli *c, char *err, size_t errlen, int argc, ...)
{
    char *argv[16];
    va_list ap;
    va_start(ap, argc);
    argv[0] = "mig-gpu-mon";
    for (int i = 1; i < argc; i++)
        argv[i] = va_arg(ap, char *);
    va_end(ap);
    argv[argc] = NULL;
    err[0] = '\0';
    return cli_parse(c, argc, argv, err, errlen);
}

static void test_defaults(void **state)
{
    (void)state;
    struct cli c;
    char err[256];
    assert_int_equal(parse(&c, err, sizeof(err), 1), 0);
    assert_false(c.once);
    assert_int_equal(c.interval_ms, 1000);
    assert_int_equal(c.format, FMT_TABLE);
    assert_null(c.nvml_path);
    assert_false(c.debug);
}

static void test_once_json_interval(void **state)
{
    (void)state;
    struct cli c;
    char err[256];
    assert_int_equal(parse(&c, err, sizeof(err), 5, "--once", "--format", "json",
                           "--nvml-path=/x/libnvidia-ml.so.1"), 0);
    assert_true(c.once);
    assert_int_equal(c.format, FMT_JSON);
    assert_string_equal(c.nvml_path, "/x/libnvidia-ml.so.1");
    /* one snapshot has no interval: refused rather than ignored */
    assert_int_equal(parse(&c, err, sizeof(err), 4, "--once", "-i", "250"), -1);
    assert_string_equal(err, "--interval has no meaning with --once (one snapshot); "
                             "for a series use record -i MS");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "-i", "250"), 0);
    assert_int_equal(c.interval_ms, 250);
}

static void test_interval_bounds(void **state)
{
    (void)state;
    struct cli c;
    char err[256];
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--interval", "99"), -1);
    assert_string_equal(err, "--interval 99: must be between 100 and 3600000 milliseconds");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "-i", "100"), 0);
    assert_int_equal(c.interval_ms, 100);
    assert_int_equal(parse(&c, err, sizeof(err), 3, "-i", "1s"), -1);
    assert_string_equal(err, "--interval 1s: expected a whole number of milliseconds from 100 to "
                             "3600000");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "-i", "-5"), -1);
    assert_int_equal(parse(&c, err, sizeof(err), 3, "-i", "99999999999999999999"), -1);
    assert_string_equal(err, "--interval 99999999999999999999: expected a whole number of "
                             "milliseconds from 100 to 3600000");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "-i", "99999999999"), -1);
    assert_string_equal(err, "--interval 99999999999: must be between 100 and 3600000 milliseconds");
    assert_int_equal(parse(&c, err, sizeof(err), 2, "-i"), -1);
    assert_string_equal(err, "-i: missing argument");
}

static void test_bad_inputs(void **state)
{
    (void)state;
    struct cli c;
    char err[256];
    assert_int_equal(parse(&c, err, sizeof(err), 4, "--once", "--format", "xml"), -1);
    assert_string_equal(err, "--format xml: expected table, json, prometheus, csv or influx");
    /* the formats --help and the man page list for --once, no more */
    assert_int_equal(parse(&c, err, sizeof(err), 4, "--once", "-f", "jsonl"), -1);
    assert_string_equal(err, "--format jsonl: expected table, json, prometheus, csv or influx");
    assert_int_equal(parse(&c, err, sizeof(err), 2, "--frobnicate"), -1);
    assert_string_equal(err, "--frobnicate: unknown option (see --help)");
    assert_int_equal(parse(&c, err, sizeof(err), 2, "-z"), -1);
    assert_string_equal(err, "-z: unknown option (see --help)");
    assert_int_equal(parse(&c, err, sizeof(err), 2, "stray"), -1);
    assert_string_equal(err, "stray: unexpected argument (see --help)");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--format", "json"), -1);
    assert_string_equal(err, "--format needs --once or record");
    assert_int_equal(parse(&c, err, sizeof(err), 2, "--nvml-path="), -1);
    assert_int_equal(parse(&c, err, sizeof(err), 2, "--debug="), -1);
}

static void test_record_mode(void **state)
{
    (void)state;
    struct cli c;
    char err[256];
    assert_int_equal(parse(&c, err, sizeof(err), 2, "record"), 0);
    assert_true(c.record);
    assert_int_equal(c.format, FMT_JSONL);
    assert_string_equal(c.output, "-");
    assert_int_equal(parse(&c, err, sizeof(err), 10, "record", "-o", "/tmp/x.csv", "-f", "csv",
                           "--duration", "2.5", "-n", "7"),
                     0);
    assert_int_equal(c.format, FMT_CSV);
    assert_string_equal(c.output, "/tmp/x.csv");
    assert_true(c.duration_s == 2.5);
    assert_int_equal(c.count, 7);
    assert_int_equal(parse(&c, err, sizeof(err), 6, "record", "--format", "influx", "--trigger",
                           "stdin"),
                     0);
    assert_true(c.trigger_stdin);
    assert_int_equal(c.format, FMT_INFLUX);
    /* the formats --help and the man page list for record, no more */
    assert_int_equal(parse(&c, err, sizeof(err), 4, "record", "-f", "json"), -1);
    assert_string_equal(err, "record --format json: expected jsonl, csv or influx");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "--once", "-f", "influx"), 0);
    assert_int_equal(c.format, FMT_INFLUX);

    assert_int_equal(parse(&c, err, sizeof(err), 4, "record", "-f", "table"), -1);
    assert_string_equal(err, "record --format table: expected jsonl, csv or influx");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "record", "--once"), -1);
    assert_string_equal(err, "record and --once exclude each other");
    assert_int_equal(parse(&c, err, sizeof(err), 6, "record", "-o", "f", "--append", "--force"),
                     -1);
    assert_string_equal(err, "--append and --force exclude each other");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "record", "--force"), -1);
    assert_string_equal(err, "--append and --force need -o FILE");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "record", "-n", "0"), -1);
    assert_string_equal(err, "--count 0: expected a number of snapshots from 1 to 1000000000");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "record", "--duration", "-1"), -1);
    assert_string_equal(err, "--duration -1: expected seconds, more than 0 and at most 31536000");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "record", "--trigger", "cron"), -1);
    assert_string_equal(err, "--trigger cron: expected interval or stdin");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "-o", "f"), -1);
    assert_string_equal(err, "-o, --append, --force, --duration, -n, --trigger, --compress and "
                             "--schema need the record mode (mig-gpu-mon record ...)");
    /* compression by the name, or by --compress; the schema by the
     * compression, or by --schema */
    assert_int_equal(parse(&c, err, sizeof(err), 4, "record", "-o", "day.jsonl.zst"), 0);
    assert_int_equal(c.compress, REC_ZSTD);
    assert_int_equal(c.schema, 2);
    assert_int_equal(parse(&c, err, sizeof(err), 6, "record", "-o", "day.csv.gz", "-f", "csv"), 0);
    assert_int_equal(c.compress, REC_GZIP);
    assert_int_equal(c.schema, 1);
    assert_int_equal(parse(&c, err, sizeof(err), 4, "record", "-o", "day.jsonl"), 0);
    assert_int_equal(c.compress, REC_PLAIN);
    assert_int_equal(c.schema, 1);
    assert_int_equal(parse(&c, err, sizeof(err), 6, "record", "-o", "day.jsonl", "--schema", "2"),
                     0);
    assert_int_equal(c.schema, 2);
    assert_int_equal(parse(&c, err, sizeof(err), 4, "record", "--compress", "gzip"), 0);
    assert_int_equal(c.compress, REC_GZIP);
    assert_int_equal(c.schema, 2);
    assert_int_equal(parse(&c, err, sizeof(err), 6, "record", "--compress", "zstd", "--schema",
                           "1"),
                     0);
    assert_int_equal(c.compress, REC_ZSTD);
    assert_int_equal(c.schema, 1);
    assert_int_equal(parse(&c, err, sizeof(err), 4, "record", "-o", "day.jsonl.xz"), -1);
    assert_string_equal(err, "-o day.jsonl.xz: .xz compression is not written; name the file "
                             ".zst (zstd) or .gz (gzip), or without .xz for plain text");
    assert_int_equal(parse(&c, err, sizeof(err), 6, "record", "-o", "d.zst", "--compress", "gzip"),
                     -1);
    assert_string_equal(err, "--compress gzip: -o d.zst names zstd");
    assert_int_equal(parse(&c, err, sizeof(err), 6, "record", "-o", "d.gz", "--compress", "none"),
                     -1);
    assert_string_equal(err, "--compress none: -o d.gz names gzip");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "record", "--compress", "xz"), -1);
    assert_string_equal(err, "--compress xz: expected zstd, gzip or none");
    assert_int_equal(parse(&c, err, sizeof(err), 6, "record", "-f", "influx", "-o", "i.gz"), -1);
    assert_string_equal(err, "--format influx is written plain (Telegraf's inputs.execd reads "
                             "its lines): without a .gz or .zst name");
    assert_int_equal(parse(&c, err, sizeof(err), 6, "record", "-f", "csv", "--schema", "2"), -1);
    assert_string_equal(err, "--schema goes with --format jsonl");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "record", "--schema", "3"), -1);
    assert_string_equal(err, "--schema 3: expected 1 or 2");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "--once", "--compress", "zstd"), -1);
    /* options may come before the mode word */
    assert_int_equal(parse(&c, err, sizeof(err), 4, "-i", "500", "record"), 0);
    assert_true(c.record);
    assert_int_equal(c.interval_ms, 500);
}

/* Two modes together are refused whatever their order, named in one order. */
static void test_modes_exclude_each_other(void **state)
{
    (void)state;
    struct cli c;
    char err[256];
    assert_int_equal(parse(&c, err, sizeof(err), 3, "record", "export"), -1);
    assert_string_equal(err, "record and export exclude each other");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "export", "record"), -1);
    assert_string_equal(err, "record and export exclude each other");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--once", "record"), -1);
    assert_string_equal(err, "record and --once exclude each other");
    assert_int_equal(parse(&c, err, sizeof(err), 5, "record", "--", "profile", "true"), -1);
    assert_string_equal(err, "record and profile exclude each other");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "profile", "export"), -1);
    assert_string_equal(err, "export and profile exclude each other");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--once", "export"), -1);
    assert_string_equal(err, "export and --once exclude each other (--once --format prometheus "
                             "prints the page once)");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "profile", "--once"), -1);
    assert_string_equal(err, "profile and --once exclude each other");
    /* profile has a parser of its own (profile_main) */
    assert_int_equal(parse(&c, err, sizeof(err), 2, "profile"), -1);
    assert_string_equal(err, "profile: see profile --help");

    /* for profile, which parses its own arguments */
    assert_int_equal(cli_mode_conflict("profile", "--once", err, sizeof(err)), -1);
    assert_string_equal(err, "profile and --once exclude each other");
    assert_int_equal(cli_mode_conflict("profile", "record", err, sizeof(err)), -1);
    assert_string_equal(err, "record and profile exclude each other");
    assert_int_equal(cli_mode_conflict("profile", "python3", err, sizeof(err)), 0);
    assert_int_equal(cli_mode_conflict("profile", "profile", err, sizeof(err)), 0);
}

static void test_debug_optional_file(void **state)
{
    (void)state;
    struct cli c;
    char err[256];
    assert_int_equal(parse(&c, err, sizeof(err), 2, "--debug"), 0);
    assert_true(c.debug);
    assert_null(c.debug_file);
    assert_int_equal(parse(&c, err, sizeof(err), 2, "--debug=/tmp/x.log"), 0);
    assert_string_equal(c.debug_file, "/tmp/x.log");
}

/* --demo and --debug take "=VALUE" or the next word, unless it is an option. */
static void test_optional_value_as_next_word(void **state)
{
    (void)state;
    struct cli c;
    char err[256];
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--demo", "h200-mig"), 0);
    assert_true(c.demo);
    assert_string_equal(c.demo_scenario, "h200-mig");
    assert_int_equal(parse(&c, err, sizeof(err), 5, "--demo", "./my.ini", "-i", "250"), 0);
    assert_string_equal(c.demo_scenario, "./my.ini");
    assert_int_equal(c.interval_ms, 250);
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--demo=h200-mig.ini", "--once"), 0);
    assert_string_equal(c.demo_scenario, "h200-mig.ini");
    assert_true(c.once);
    /* alone, or before an option: the default scenario */
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--demo", "--once"), 0);
    assert_true(c.demo);
    assert_null(c.demo_scenario);
    assert_true(c.once);
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--once", "--demo"), 0);
    assert_null(c.demo_scenario);
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--demo", "-"), -1);
    assert_string_equal(err, "-: unexpected argument (see --help)");
    /* one value only */
    assert_int_equal(parse(&c, err, sizeof(err), 4, "--demo", "a100-sxm4-80gb", "stray"), -1);
    assert_string_equal(err, "stray: unexpected argument (see --help)");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--demo", ""), -1);
    assert_string_equal(err, "--demo: expected a scenario name, got an empty one");
    assert_int_equal(parse(&c, err, sizeof(err), 2, "--demo="), -1);
    assert_string_equal(err, "--demo: expected a scenario name, got an empty one");
    /* a mode word is the mode, not the value */
    assert_int_equal(parse(&c, err, sizeof(err), 5, "--demo", "export", "--listen", ":0"), 0);
    assert_true(c.demo && c.exporter);
    assert_null(c.demo_scenario);
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--demo=export", "--once"), 0);
    assert_string_equal(c.demo_scenario, "export");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--debug", "export"), 0);
    assert_true(c.debug && c.exporter);
    assert_null(c.debug_file);

    assert_int_equal(parse(&c, err, sizeof(err), 4, "--debug", "/tmp/x.log", "--once"), 0);
    assert_true(c.debug);
    assert_string_equal(c.debug_file, "/tmp/x.log");
    assert_true(c.once);
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--debug", "--once"), 0);
    assert_true(c.debug);
    assert_null(c.debug_file);
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--debug", ""), -1);
    assert_string_equal(err, "--debug: expected a file path, got an empty one");
}

static void test_export(void **state)
{
    (void)state;
    struct cli c;
    char err[256];
    assert_int_equal(parse(&c, err, sizeof(err), 2, "export"), 0);
    assert_true(c.exporter);
    assert_null(c.listen);
    assert_int_equal(parse(&c, err, sizeof(err), 7, "export", "--listen", "127.0.0.1:9500",
                           "--compat", "dcgm", "--export-processes"),
                     0);
    assert_true(c.exporter && c.compat_dcgm && c.export_processes);
    assert_string_equal(c.listen, "127.0.0.1:9500");
    /* options may come first (getopt moves the mode word to the end) */
    assert_int_equal(parse(&c, err, sizeof(err), 4, "-i", "500", "export"), 0);
    assert_true(c.exporter);
    assert_int_equal(c.interval_ms, 500);
    assert_int_equal(parse(&c, err, sizeof(err), 5, "--once", "--format", "prometheus",
                           "--compat=dcgm"),
                     0);
    assert_int_equal(c.format, FMT_PROM);
    assert_true(c.compat_dcgm);
    assert_int_equal(parse(&c, err, sizeof(err), 3, "export", "--once"), -1);
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--listen", ":9400"), -1);
    assert_string_equal(err, "--listen needs export");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--listen", "9400"), -1);
    assert_string_equal(err, "--listen 9400: expected ADDR:PORT or :PORT");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "export", "--compat", "nvidia"), -1);
    assert_string_equal(err, "--compat nvidia: expected dcgm");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--once", "--export-processes"), -1);
    assert_string_equal(err, "--export-processes needs export or --once --format prometheus");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "export", "stray"), -1);
    assert_string_equal(err, "stray: unexpected argument (see --help)");
    /* the kubelet's socket: a path or off, for export only */
    assert_int_equal(parse(&c, err, sizeof(err), 2, "export"), 0);
    assert_null(c.kubelet_socket);
    assert_int_equal(parse(&c, err, sizeof(err), 3, "export", "--kubelet-socket=/run/k.sock"), 0);
    assert_string_equal(c.kubelet_socket, "/run/k.sock");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "--kubelet-socket", "off", "export"), 0);
    assert_string_equal(c.kubelet_socket, "off");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--kubelet-socket", "/k.sock"), -1);
    assert_string_equal(err, "--kubelet-socket needs export");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "record", "--kubelet-socket", "/k.sock"), -1);
    assert_string_equal(err, "--kubelet-socket needs export");
    char longp[120];
    memset(longp, 'x', sizeof(longp) - 1);
    longp[0] = '/';
    longp[sizeof(longp) - 1] = '\0';
    assert_int_equal(parse(&c, err, sizeof(err), 4, "export", "--kubelet-socket", longp), -1);
    assert_non_null(strstr(err, ": expected a socket path (at most 107 bytes) or off"));
}

/* A value taken from the next word is refused when that word is itself an
 * option: the value was forgotten. "-", negative numbers and values given
 * with '=' or attached are values. */
static void test_value_that_is_an_option(void **state)
{
    (void)state;
    struct cli c;
    char err[256];
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--config", "--no-config"), -1);
    assert_string_equal(err, "--config needs a value: --no-config is an option (write "
                             "--config=--no-config to give it as the value)");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "--config", "--once", "--demo"), -1);
    assert_string_equal(err, "--config needs a value: --once is an option (write "
                             "--config=--once to give it as the value)");
    /* an abbreviation is an option too, as getopt reads it */
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--config", "--no-conf"), -1);
    assert_string_equal(err, "--config needs a value: --no-conf is an option (write "
                             "--config=--no-conf to give it as the value)");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "-i", "--top", "5"), -1);
    assert_string_equal(err, "-i needs a value: --top is an option (write -i--top to give it "
                             "as the value)");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "--once", "--format", "--demo"), -1);
    assert_string_equal(err, "--format needs a value: --demo is an option (write "
                             "--format=--demo to give it as the value)");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "record", "-o", "--force"), -1);
    assert_string_equal(err, "-o needs a value: --force is an option (write -o--force to give "
                             "it as the value)");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "record", "--output", "-n"), -1);
    assert_string_equal(err, "--output needs a value: -n is an option (write --output=-n to "
                             "give it as the value)");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "export", "--listen", "--compat=dcgm"), -1);
    assert_string_equal(err, "--listen needs a value: --compat=dcgm is an option (write "
                             "--listen=--compat=dcgm to give it as the value)");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "--nvml-path", "--", "--once"), -1);
    assert_string_equal(err, "--nvml-path needs a value: -- is an option (write --nvml-path=-- "
                             "to give it as the value)");

    /* values */
    assert_int_equal(parse(&c, err, sizeof(err), 4, "record", "-o", "-"), 0);
    assert_string_equal(c.output, "-");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "record", "-o", "-x.jsonl"), 0);
    assert_string_equal(c.output, "-x.jsonl");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "record", "-o--force"), 0);
    assert_string_equal(c.output, "--force");
    assert_int_equal(parse(&c, err, sizeof(err), 2, "--config=--no-config"), 0);
    assert_string_equal(c.config_file, "--no-config");
    assert_false(c.no_config);
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--config", "-"), 0);
    assert_string_equal(c.config_file, "-");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "-i", "-5"), -1);
    assert_string_equal(err, "--interval -5: expected a whole number of milliseconds from 100 "
                             "to 3600000");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "--once", "--timeout", "-1"), -1);
    assert_string_equal(err, "--timeout -1: expected seconds, more than 0 and at most 3600");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--config", "--unknown-thing"), 0);
    assert_string_equal(c.config_file, "--unknown-thing");
}

/* What an error quotes from the command line reaches the terminal as text. */
static void test_errors_escape_controls(void **state)
{
    (void)state;
    struct cli c;
    char err[256];
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--gpm", "\x1b[2J\x1b]0;t\x07"), -1);
    assert_string_equal(err, "--gpm \\x1b[2J\\x1b]0;t\\x07: expected auto, on, off or helper");
    assert_int_equal(parse(&c, err, sizeof(err), 2, "st\xc2\x9b" "1m\xe2\x80\xae\xff"), -1);
    assert_string_equal(err, "st\\u009b1m\\u202e\\xff: unexpected argument (see --help)");
    /* UTF-8 text is kept */
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--gpm", "\xc3\xa9t\xc3\xa9"), -1);
    assert_string_equal(err, "--gpm \xc3\xa9t\xc3\xa9: expected auto, on, off or helper");

    char out[16];
    assert_int_equal(cli_escape(out, sizeof(out), "a\tb\nc"), 11);
    assert_string_equal(out, "a\\x09b\\x0ac");
    /* cut before an escape that does not fit, never inside it */
    assert_int_equal(cli_escape(out, 6, "ab\x1b"), 2);
    assert_string_equal(out, "ab");
    assert_int_equal(cli_escape(out, 7, "ab\x1b"), 6);
    assert_string_equal(out, "ab\\x1b");
}

/* cli_mode_index on argv (argv[0] the program). */
static int mode_at(int argc, ...)
{
    char *argv[16];
    va_list ap;
    va_start(ap, argc);
    argv[0] = "mig-gpu-mon";
    for (int i = 1; i < argc; i++)
        argv[i] = va_arg(ap, char *);
    va_end(ap);
    argv[argc] = NULL;
    return cli_mode_index(argc, argv);
}

/* The mode is the first argument that is a mode word and is not an option's
 * value, before "--". */
static void test_mode_index(void **state)
{
    (void)state;
    assert_int_equal(mode_at(1), 0);
    assert_int_equal(mode_at(2, "record"), 1);
    assert_int_equal(mode_at(3, "--once", "record"), 2);
    assert_int_equal(mode_at(4, "-i", "200", "export"), 3);
    assert_int_equal(mode_at(3, "-i200", "export"), 2);
    assert_int_equal(mode_at(3, "foo", "record"), 2);
    assert_int_equal(mode_at(3, "-", "record"), 2);
    assert_int_equal(mode_at(3, "record", "export"), 1);
    /* a value that must be given is taken first, whatever it is */
    assert_int_equal(mode_at(3, "-o", "record"), 0);
    assert_int_equal(mode_at(4, "-o", "record", "record"), 3);
    assert_int_equal(mode_at(4, "--config", "export", "export"), 3);
    assert_int_equal(mode_at(4, "-n", "profile", "record"), 3);
    assert_int_equal(mode_at(3, "-orecord", "export"), 2);
    assert_int_equal(mode_at(3, "--output=record", "export"), 2);
    assert_int_equal(mode_at(4, "--out", "record", "record"), 3); /* an abbreviation */
    assert_int_equal(mode_at(4, "--config", "--no-config", "record"), 3);
    /* and profile's own options are read the same */
    assert_int_equal(mode_at(4, "--timeline", "record", "profile"), 3);
    /* --demo and --debug: the next word unless it starts with '-' or is a mode */
    assert_int_equal(mode_at(3, "--demo", "record"), 2);
    assert_int_equal(mode_at(4, "--demo", "h200-mig", "record"), 3);
    assert_int_equal(mode_at(3, "--demo=record", "export"), 2);
    assert_int_equal(mode_at(5, "--debug", "profile", "--", "true"), 2);
    assert_int_equal(mode_at(4, "--debug", "/tmp/x.log", "profile"), 3);
    /* nothing after "--" is a mode */
    assert_int_equal(mode_at(3, "--", "record"), 0);
    assert_int_equal(mode_at(4, "--demo", "--", "profile"), 0);
    assert_int_equal(mode_at(4, "profile", "--", "record"), 1);
    /* -- as a value is a value */
    assert_int_equal(mode_at(4, "--nvml-path", "--", "record"), 3);
}

/* Options before or after the mode word: one rule for record and export. */
static void test_options_around_the_mode(void **state)
{
    (void)state;
    struct cli c;
    char err[256];
    assert_int_equal(parse(&c, err, sizeof(err), 7, "--demo=h200-mig", "record", "-n", "1",
                           "--gpm", "off"),
                     0);
    assert_true(c.record && c.demo);
    assert_string_equal(c.demo_scenario, "h200-mig");
    assert_int_equal(c.count, 1);
    assert_int_equal(c.gpm, CLI_GPM_OFF);
    assert_int_equal(parse(&c, err, sizeof(err), 6, "--demo", "h200-mig", "-n", "2", "record"), 0);
    assert_true(c.record);
    assert_string_equal(c.demo_scenario, "h200-mig");
    assert_int_equal(c.count, 2);
    assert_int_equal(parse(&c, err, sizeof(err), 5, "--debug", "record", "-n", "1"), 0);
    assert_true(c.debug && c.record);
    assert_null(c.debug_file);
    assert_int_equal(parse(&c, err, sizeof(err), 6, "-i", "200", "export", "--listen",
                           "127.0.0.1:0"),
                     0);
    assert_true(c.exporter);
    assert_false(c.record);
    assert_int_equal(c.interval_ms, 200);
    assert_string_equal(c.listen, "127.0.0.1:0");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "--listen", ":0", "export"), 0);
    assert_true(c.exporter);
    /* a mode word that is an option's value is that value */
    assert_int_equal(parse(&c, err, sizeof(err), 4, "-o", "record", "record"), 0);
    assert_true(c.record);
    assert_string_equal(c.output, "record");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "record", "-o", "export"), 0);
    assert_true(c.record);
    assert_false(c.exporter);
    assert_string_equal(c.output, "export");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--config", "record"), 0);
    assert_false(c.record);
    assert_string_equal(c.config_file, "record");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "-o", "record"), -1);
    assert_string_equal(err, "-o, --append, --force, --duration, -n, --trigger, --compress and "
                             "--schema need the record mode (mig-gpu-mon record ...)");
    /* ... also after the mode word, as a value that is an option is refused */
    assert_int_equal(parse(&c, err, sizeof(err), 4, "--config", "--no-config", "record"), -1);
    assert_string_equal(err, "--config needs a value: --no-config is an option (write "
                             "--config=--no-config to give it as the value)");
    /* after "--" a word is no mode */
    assert_int_equal(parse(&c, err, sizeof(err), 4, "--demo", "--", "record"), -1);
    assert_string_equal(err, "record: unexpected argument (see --help)");
    assert_int_equal(parse(&c, err, sizeof(err), 5, "record", "-n", "1", "record"), -1);
    assert_string_equal(err, "record given twice (see --help)");
    /* the real conflicts: two modes, an option of another mode */
    assert_int_equal(parse(&c, err, sizeof(err), 5, "-n", "1", "record", "export"), -1);
    assert_string_equal(err, "record and export exclude each other");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "--demo", "export", "record"), -1);
    assert_string_equal(err, "record and export exclude each other");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "--listen", ":0", "record"), -1);
    assert_string_equal(err, "--listen needs export");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "record", "--compat", "dcgm"), -1);
    assert_string_equal(err, "--compat needs export or --once --format prometheus");
    assert_int_equal(parse(&c, err, sizeof(err), 3, "--export-processes", "record"), -1);
    assert_string_equal(err, "--export-processes needs export or --once --format prometheus");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "-o", "f", "export"), -1);
    assert_string_equal(err, "-o, --append, --force, --duration, -n, --trigger, --compress and "
                             "--schema need the record mode (mig-gpu-mon record ...)");
    assert_int_equal(parse(&c, err, sizeof(err), 4, "--demo", "profile", "--", "true"), -1);
    assert_int_equal(parse(&c, err, sizeof(err), 4, "--demo", "record", "--once"), -1);
    assert_string_equal(err, "record and --once exclude each other");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_once_json_interval),
        cmocka_unit_test(test_interval_bounds),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_export),
        cmocka_unit_test(test_record_mode),
        cmocka_unit_test(test_modes_exclude_each_other),
        cmocka_unit_test(test_debug_optional_file),
        cmocka_unit_test(test_optional_value_as_next_word),
        cmocka_unit_test(test_value_that_is_an_option),
        cmocka_unit_test(test_errors_escape_controls),
        cmocka_unit_test(test_mode_index),
        cmocka_unit_test(test_options_around_the_mode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
