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
    int dcgm;             /* CLI_DCGM_* */
    char dcgm_addr[160];  /* CLI_DCGM_ADDR: host:port or unix:PATH */
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
    char kubelet_socket[128];   /* the pod-resources socket, or "off" */
    unsigned kubelet_refresh_ms; /* how often it is asked, 100 .. 3600000 */
    char pod_logs[256];   /* the kubelet's pod log directories, or "off" */
    /* [fleet] */
    char prometheus[512];      /* "" or the Prometheus server's URL (--prometheus) */
    char prometheus_auth[256]; /* "" or its credentials file (--prometheus-auth) */
    char prometheus_ca[256];   /* "" or the CA certificates its https trusts (--prometheus-ca) */
    char prometheus_match[512]; /* "" or the targets' selector (--prometheus-match) */
    unsigned errors;      /* bad lines reported */
};

/* The defaults (what the program does without a file). */
void config_defaults(struct config *c);
/* The file's path into out; -1 when neither XDG_CONFIG_HOME nor HOME says. */
int config_default_path(char *out, size_t len);
/*
 * Read path into c (over what c holds). Only a regular file is read (or a
 * symbolic link to one), owned by the effective user or root and writable
 * by no one else (trust.h; -EPERM otherwise); /dev/null, under any name,
 * reads as an empty file.
 * A directory, FIFO, device or socket is refused without being read, and
 * nothing here waits on one. Each bad line is reported on errs as
 * "path:LINE: what" and skipped (a line longer than inih's INI_MAX_LINE
 * less two bytes, 198, too), the first 20 one by one; the path and the
 * file's text in the reports are escaped (cli_escape). Returns 0, or a
 * negative errno with one line "path: why" in err (errlen > 0) when the
 * file cannot be read: -ENOENT when it does not exist (not an error for the
 * default path), -EISDIR for a directory, -EINVAL for another file that is
 * not a regular one, else the errno of the call that failed; c is then as
 * it was (a read that fails midway applies none of the file).
 */
int config_load(struct config *c, const char *path, FILE *errs, char *err, size_t errlen);
/* c as a file with every key and a comment on each (--write-config). */
void config_write(const struct config *c, FILE *f);

#endif
