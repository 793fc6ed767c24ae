/*
 * config.h — the configuration file, $XDG_CONFIG_HOME/mig-gpu-mon/config.ini
 * (else ~/.config/mig-gpu-mon/config.ini), read with inih before the
 * command line, which overrides it. A bad key or value is reported as
 * "FILE:LINE: what" on stderr and ignored, never fatal. docs/config.md.
 */
#ifndef MIGMON_CONFIG_H
#define MIGMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct config {
    /* [general] */
    unsigned interval_ms; /* 100 .. 3600000 */
    unsigned top;         /* processes per device, 0 = all */
    int gpm;              /* CLI_GPM_AUTO / ON / OFF */
    unsigned history;     /* points per chart series, 60 .. 100000 */
    unsigned carry;       /* ticks a failed read is carried, 0 .. 60 */
    /* [tui] */
    bool color;           /* false: no colours (like --no-color) */
    double vram_warn_pct, vram_alarm_pct; /* VRAM gauge colours */
    double load_warn_pct, load_alarm_pct; /* CPU and RAM colours */
    double temp_warn_c, temp_alarm_c;     /* temperature colours */
    bool thermal_charts;  /* start on the temperature/power/clock charts */
    bool fahrenheit;      /* temperatures in °F in the monitor */
    /* [export] */
    char listen[128];     /* the exporter's ADDR:PORT */
    char compat[16];      /* "" or "dcgm" */
    unsigned errors;      /* bad lines reported */
};

/* The defaults (what the program does without a file). */
void config_defaults(struct config *c);
/* The file's path into out; -1 when neither XDG_CONFIG_HOME nor HOME says. */
int config_default_path(char *out, size_t len);
/* Read path into c (over what c holds). Each bad line is reported on errs
 * as "path:LINE: what" and skipped. Returns 0, or a negative errno when
 * the file cannot be read, unreported: -ENOENT when it does not exist (not
 * an error for the default path), -EISDIR for a directory. */
int config_load(struct config *c, const char *path, FILE *errs);
/* c as a file with every key and a comment on each (--write-config). */
void config_write(const struct config *c, FILE *f);

#endif
