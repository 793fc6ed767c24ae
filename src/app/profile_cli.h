/*
 * profile_cli.h — `profile`'s command line: its options, the help, and
 * the parser (profile_cli.c). Used by profile.c only.
 */
#ifndef MIGMON_PROFILE_CLI_H
#define MIGMON_PROFILE_CLI_H

#include <stdbool.h>

#define PROF_INTERVAL_DEFAULT_MS 50u
#define PROF_INTERVAL_MIN_MS 10u

enum prof_format { PF_TEXT, PF_JSON };

struct prof_opts {
    unsigned interval_ms;
    const char *report;   /* -o */
    const char *timeline; /* --timeline */
    enum prof_format format;
    const char *nvml_path;
    const char *proc_root;
    const char *backends;   /* --backend LIST; NULL: every backend with a device */
    const char *sysfs_root; /* --sysfs-root; NULL: /sys */
    bool demo;
    const char *demo_scenario;
    int dcgm;             /* --dcgm: CLI_DCGM_* */
    char dcgm_addr[160];  /* --dcgm ADDR */
    const char *dcgm_lib; /* --dcgm-lib */
    char **cmd;
};

/*
 * argv[at] is the mode word: options come before and after it, COMMAND
 * after it (after "--", or from the first other word on). Fills o;
 * returns an exit status (help: 0, bad usage: 2), or -1 to go on.
 */
int profile_parse(struct prof_opts *o, int argc, char **argv, int at);

#endif
