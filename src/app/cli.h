/*
 * cli.h — command-line parsing. No side effects beyond filling struct cli.
 */
#ifndef MIGMON_CLI_H
#define MIGMON_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum cli_format { FMT_TABLE = 0, FMT_JSON, FMT_PROM, FMT_JSONL, FMT_CSV, FMT_INFLUX };

struct cli {
    bool help, version, once;
    bool all_processes;     /* --once --all-processes: one list of every process */
    enum cli_format format;
    const char *format_arg; /* --format's value, borrowed; NULL: the mode's default */
    unsigned interval_ms;
    const char *nvml_path; /* borrowed from argv */
    bool debug;
    const char *debug_file; /* NULL: default path */
    const char *proc_root;  /* --proc-root; NULL: /proc */
    const char *backends;   /* --backend LIST, borrowed; NULL: every backend with a device */
    const char *sysfs_root; /* --sysfs-root; NULL: /sys */
    unsigned top;           /* processes listed per device (--top), 0 = all */
    bool demo;              /* run on the bundled simulator */
    const char *demo_scenario; /* --demo=SCENARIO; NULL: the default */
    const char *demo_mode_typo; /* the mode word --demo's next-word value is near, or NULL */
    bool no_color;          /* --no-color (NO_COLOR is read by the UI) */
    int gpm;                /* --gpm: CLI_GPM_* (the values of enum gpm_mode) */
    int dcgm;               /* --dcgm: CLI_DCGM_* (the values of enum dcgm_mode) */
    char dcgm_addr[160];    /* --dcgm ADDR: "host:port" or "unix:PATH" */
    const char *dcgm_lib;   /* --dcgm-lib, borrowed; NULL: search */
    unsigned dcgm_interval_ms; /* --dcgm-interval; 0: the interval, at least 1 s */
    unsigned timeout_ms;    /* --timeout: --once waits at most this for the driver */
    bool timeout_given;
    /* what the command line set, so the configuration file fills the rest */
    bool interval_given, top_given, gpm_given, dcgm_given;
    const char *config_file; /* --config FILE; NULL: the default path */
    bool no_config;          /* --no-config */
    bool write_config;       /* --write-config */
    /* The Prometheus exporter (`export`, docs/prometheus.md). */
    bool exporter;
    const char *listen;     /* --listen ADDR:PORT, borrowed; NULL: CLI_LISTEN_DEFAULT */
    bool compat_dcgm;       /* --compat dcgm */
    bool export_processes;  /* --export-processes */
    bool no_host;           /* --no-host: no migmon_host_* series */
    const char *kubelet_socket; /* --kubelet-socket PATH|off, borrowed; NULL: the file's */
    /* The fleet from Prometheus (docs/fleet.md) */
    const char *prometheus;      /* --prometheus URL, borrowed; NULL: the file's */
    const char *prometheus_auth; /* --prometheus-auth FILE, borrowed; NULL: the file's */
    const char *prometheus_ca;   /* --prometheus-ca FILE, borrowed; NULL: the file's */
    const char *prometheus_match; /* --prometheus-match SELECTOR, borrowed; NULL: the file's */
    /* record mode (the mode word `record`) */
    bool record;
    const char *output;     /* -o FILE; "-": standard output (the default) */
    bool append, force;     /* -o FILE exists: add to it, replace it */
    double duration_s;      /* --duration: stop after this many seconds; 0: no limit */
    unsigned long count;    /* -n: stop after this many snapshots; 0: no limit */
    bool trigger_stdin;     /* --trigger stdin: one snapshot per line read on stdin */
    const char *compress_arg; /* --compress, borrowed; NULL: by -o's name */
    int compress;           /* enum rec_compress (recout.h): --compress, else -o's name */
    int schema;             /* --schema: 1 or 2; 0 not given (then set by the compression) */
};

#define CLI_LISTEN_DEFAULT ":9400"
/* A unix socket's path: sun_path less its NUL. */
#define CLI_SOCKET_PATH_MAX 107

#define CLI_DURATION_MAX_S 31536000.0
#define CLI_COUNT_MAX 1000000000ul

#define CLI_TIMEOUT_DEFAULT_MS 10000u
#define CLI_TIMEOUT_MAX_S 3600.0

enum { CLI_GPM_AUTO = 0, CLI_GPM_ON = 1, CLI_GPM_OFF = 2, CLI_GPM_HELPER = 3 };
enum { CLI_DCGM_AUTO = 0, CLI_DCGM_ADDR = 1, CLI_DCGM_EMBEDDED = 2, CLI_DCGM_OFF = 3 };

/* "auto", "off", "embedded", "unix:PATH" or "HOST[:PORT]" into *mode and
 * addr (addrlen bytes); -1 for anything else. */
int cli_parse_dcgm(const char *s, int *mode, char *addr, size_t addrlen);

#define CLI_TOP_DEFAULT 16u
#define CLI_TOP_MAX 100000u

#define CLI_INTERVAL_MIN_MS 100u
#define CLI_INTERVAL_MAX_MS 3600000u
#define CLI_INTERVAL_DEFAULT_MS 1000u

struct option;

/* A mode's options as getopt_long takes them. */
struct cli_options {
    const char *shorts;         /* getopt's string */
    const struct option *longs; /* getopt_long's table, ending in a NULL name */
};

/* The monitor's: --once, record and export. */
extern const struct cli_options cli_monitor_options;

/*
 * Where the mode word is in argv: the index of the first argument that is
 * record, export, profile or replay and is not the value of an option, before any
 * "--" (nothing after it is a mode, or an option: profile's COMMAND); 0 when
 * there is none. Options may come before and after it. Values are read as
 * getopt_long reads them, with the options of every mode (cli_monitor_options,
 * profile_options, replay_options), so the answer is the same whichever mode
 * parses:
 * a value that must be given is the rest of the word or the next word,
 * whatever it is (-o record names a file); --demo's and --debug's optional
 * value follows '=' or is the next word when that does not start with '-'
 * and is not a mode word (cli_optional_value).
 */
int cli_mode_index(int argc, char **argv);

/* Returns 0, or -1 with one line (no trailing newline) in err, its
 * quotations escaped (cli_escape). A value taken from the next word that is
 * itself an option (--config --no-config, -o -n) is refused as missing;
 * with '=' (--config=--odd) or attached (-o-n) it is taken. The mode word
 * may be anywhere cli_mode_index finds it; profile and replay are not
 * parsed here (profile_main, replay_main), and refused. */
int cli_parse(struct cli *c, int argc, char **argv, char *err, size_t errlen);

/*
 * s into out (cap bytes with the NUL) for a message: what a terminal would
 * act on is written as text, a control below 0x80 as \xHH (ESC: \x1b, tab
 * \x09), a C1 control or a format character (text_is_control) as \uHHHH
 * (U+009B: \u009b, U+202E: \u202e), or \UHHHHHHHH above U+FFFF (a tag:
 * \U000e0041), and each byte of invalid UTF-8 as \xHH; the rest is copied.
 * Cut before an escape or character that does not fit. Returns the length
 * written. For the command line's values and the configuration file's
 * name and text.
 */
size_t cli_escape(char *out, size_t cap, const char *s);
void cli_usage(FILE *f);

/*
 * For a getopt_long loop, the value of an option with an optional argument:
 * after '=' (optarg), or else the next word when it does not start with '-'
 * and is not a mode (record, export, profile, replay), which is then consumed
 * (--demo h200-mig, --debug FILE; in --demo export, export is the mode).
 * NULL: the option alone.
 */
const char *cli_optional_value(int argc, char **argv);

/*
 * For a mode that parses its own arguments (profile): -1 with one line in
 * err when word names another mode or --once ("profile and --once exclude
 * each other", the message cli_parse gives), else 0.
 */
int cli_mode_conflict(const char *mode, const char *word, char *err, size_t errlen);

/* The mode word (record, export, profile, replay) that word is, or is a
 * typo of (at most two letters off, a swap of neighbours counting one), or
 * NULL: "recrod" is record. */
const char *cli_mode_near(const char *word);

#endif
