#include "app/config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <ini.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "app/cli.h"
#include "backend/prometheus/prom_query.h"
#include "core/history.h"
#include "core/text.h"
#include "core/trust.h"
#include "system/podres.h"

/* Bad lines reported one by one; the rest are counted in one line. */
#define REPORTS_MAX 20

void config_defaults(struct config *c)
{
    memset(c, 0, sizeof(*c));
    c->interval_ms = CLI_INTERVAL_DEFAULT_MS;
    c->top = CLI_TOP_DEFAULT;
    c->gpm = CLI_GPM_AUTO;
    c->history = HIST_POINTS_DEFAULT;
    c->carry = 3;
    c->color = true;
    c->vram_warn_pct = 70;
    c->vram_alarm_pct = 90;
    c->load_warn_pct = 50;
    c->load_alarm_pct = 80;
    c->temp_warn_c = 60;
    c->temp_alarm_c = 80;
    snprintf(c->listen, sizeof(c->listen), ":9400");
    snprintf(c->kubelet_socket, sizeof(c->kubelet_socket), "%s", PODRES_SOCKET_DEFAULT);
    c->kubelet_refresh_ms = PODRES_REFRESH_DEFAULT_MS;
    snprintf(c->pod_logs, sizeof(c->pod_logs), "%s", PODRES_LOGS_DEFAULT);
}

int config_default_path(char *out, size_t len)
{
    const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
    int n;
    if (x && x[0] == '/')
        n = snprintf(out, len, "%s/mig-gpu-mon/config.ini", x);
    else if (h && h[0])
        n = snprintf(out, len, "%s/.config/mig-gpu-mon/config.ini", h);
    else
        return -1;
    return n > 0 && (size_t)n < len ? 0 : -1;
}

struct parse {
    struct config *c;
    FILE *file, *errs;
    int line;        /* the line inih is on (counted by read_line) */
    int read_errno;  /* a read failed: its errno */
    unsigned bad;    /* bad lines */
    char shown[4 * 4096 + 1]; /* the path, escaped (cli_escape) */
};

static void bad(struct parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad(struct parse *p, const char *fmt, ...)
{
    p->c->errors++;
    if (++p->bad > REPORTS_MAX)
        return;
    /* a line is at most INI_MAX_LINE bytes: the message fits */
    char msg[1024], shown[4 * sizeof(msg)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cli_escape(shown, sizeof(shown), msg); /* it quotes the file */
    fprintf(p->errs, "%s:%d: %s\n", p->shown, p->line, shown);
}

/*
 * inih's reader, one line of the file per call, so that inih's line numbers
 * are the file's. inih cuts a line at num - 1 bytes (INI_MAX_LINE, 200 in
 * Debian's build, which has no INI_ALLOW_REALLOC) and parses the rest as a
 * line of its own: the tail of a long comment could become a setting. So a
 * line that does not fit whole with its newline, and one with a NUL byte
 * (inih would see only what comes before it), is reported here and handed
 * to inih empty. Only num bytes are ever held, however long the line.
 */
static char *read_line(char *str, int num, void *stream)
{
    struct parse *p = stream;
    size_t max = num > 2 ? (size_t)num - 2 : 0, n = 0;
    bool nul = false;
    int ch, last = 0;
    errno = 0;
    while ((ch = getc(p->file)) != EOF && ch != '\n') {
        if (n < max)
            str[n] = (char)ch;
        nul |= ch == '\0';
        last = ch;
        n++;
    }
    if (ch == EOF && ferror(p->file)) {
        p->read_errno = errno ? errno : EIO;
        return NULL;
    }
    if (ch == EOF && n == 0)
        return NULL;
    p->line++;
    size_t len = n - (last == '\r'); /* CR LF is a line end too */
    if (len > max) {
        bad(p, "line longer than %zu bytes; line skipped", max);
        n = 0;
    } else if (nul) {
        bad(p, "a NUL byte in the line; line skipped");
        n = 0;
    } else if (n > max) {
        n = max; /* the CR that did not fit: inih strips it anyway */
    }
    str[n] = '\n';
    str[n + 1] = '\0';
    return str;
}

static bool num(const char *v, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(d) || d < lo || d > hi)
        return false;
    *out = d;
    return true;
}

static bool onoff(const char *v, bool *out)
{
    if (!strcasecmp(v, "on") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcmp(v, "1"))
        *out = true;
    else if (!strcasecmp(v, "off") || !strcasecmp(v, "false") || !strcasecmp(v, "no") ||
             !strcmp(v, "0"))
        *out = false;
    else
        return false;
    return true;
}

static int handler(void *user, const char *sec, const char *key, const char *val)
{
    struct parse *p = user;
    struct config *c = p->c;
    double d;
#define IS(s, k) (!strcmp(sec, s) && !strcmp(key, k))
    if (IS("general", "interval")) {
        if (num(val, CLI_INTERVAL_MIN_MS, CLI_INTERVAL_MAX_MS, &d) && d == floor(d))
            c->interval_ms = (unsigned)d;
        else
            bad(p, "interval = %s: expected milliseconds from 100 to 3600000", val);
    } else if (IS("general", "top")) {
        if (num(val, 0, CLI_TOP_MAX, &d) && d == floor(d))
            c->top = (unsigned)d;
        else
            bad(p, "top = %s: expected a number of processes from 0 (all) to 100000", val);
    } else if (IS("general", "gpm")) {
        if (!strcmp(val, "auto"))
            c->gpm = CLI_GPM_AUTO;
        else if (!strcmp(val, "on"))
            c->gpm = CLI_GPM_ON;
        else if (!strcmp(val, "off"))
            c->gpm = CLI_GPM_OFF;
        else if (!strcmp(val, "helper"))
            c->gpm = CLI_GPM_HELPER;
        else
            bad(p, "gpm = %s: expected auto, on, off or helper", val);
    } else if (IS("general", "dcgm")) {
        if (cli_parse_dcgm(val, &c->dcgm, c->dcgm_addr, sizeof(c->dcgm_addr)) != 0)
            bad(p, "dcgm = %s: expected auto, off, embedded, HOST[:PORT] or unix:PATH", val);
    } else if (IS("general", "history")) {
        if (num(val, 60, 100000, &d) && d == floor(d))
            c->history = (unsigned)d;
        else
            bad(p, "history = %s: expected points per chart from 60 to 100000", val);
    } else if (IS("general", "carry")) {
        if (num(val, 0, 60, &d) && d == floor(d))
            c->carry = (unsigned)d;
        else
            bad(p, "carry = %s: expected samples from 0 to 60", val);
    } else if (IS("tui", "color")) {
        if (!onoff(val, &c->color))
            bad(p, "color = %s: expected on or off", val);
    } else if (IS("tui", "vram_warn") || IS("tui", "vram_alarm") || IS("tui", "load_warn") ||
               IS("tui", "load_alarm")) {
        double *dst = !strcmp(key, "vram_warn")   ? &c->vram_warn_pct
                      : !strcmp(key, "vram_alarm") ? &c->vram_alarm_pct
                      : !strcmp(key, "load_warn")  ? &c->load_warn_pct
                                                   : &c->load_alarm_pct;
        if (num(val, 0, 100, &d))
            *dst = d;
        else
            bad(p, "%s = %s: expected a percentage from 0 to 100", key, val);
    } else if (IS("tui", "temp_warn") || IS("tui", "temp_alarm")) {
        if (num(val, -40, 200, &d))
            *(!strcmp(key, "temp_warn") ? &c->temp_warn_c : &c->temp_alarm_c) = d;
        else
            bad(p, "%s = %s: expected degrees Celsius from -40 to 200", key, val);
    } else if (IS("tui", "charts")) {
        if (!strcmp(val, "activity"))
            c->thermal_charts = false;
        else if (!strcmp(val, "thermal"))
            c->thermal_charts = true;
        else
            bad(p, "charts = %s: expected activity or thermal", val);
    } else if (IS("tui", "temperature_unit")) {
        if (!strcasecmp(val, "C"))
            c->fahrenheit = false;
        else if (!strcasecmp(val, "F"))
            c->fahrenheit = true;
        else
            bad(p, "temperature_unit = %s: expected C or F", val);
    } else if (IS("export", "listen")) {
        if (val[0] && strlen(val) < sizeof(c->listen) && strchr(val, ':'))
            snprintf(c->listen, sizeof(c->listen), "%s", val);
        else
            bad(p, "listen = %s: expected ADDR:PORT or :PORT", val);
    } else if (IS("export", "compat")) {
        if (!strcmp(val, "dcgm") || !strcmp(val, "none"))
            snprintf(c->compat, sizeof(c->compat), "%s", strcmp(val, "none") ? val : "");
        else
            bad(p, "compat = %s: expected dcgm or none", val);
    } else if (IS("export", "kubelet_socket")) {
        if (val[0] && strlen(val) <= CLI_SOCKET_PATH_MAX)
            snprintf(c->kubelet_socket, sizeof(c->kubelet_socket), "%s", val);
        else
            bad(p, "kubelet_socket = %s: expected a socket path (at most %d bytes) or off", val,
                CLI_SOCKET_PATH_MAX);
    } else if (IS("export", "kubelet_refresh")) {
        if (num(val, CLI_INTERVAL_MIN_MS, CLI_INTERVAL_MAX_MS, &d) && d == floor(d))
            c->kubelet_refresh_ms = (unsigned)d;
        else
            bad(p, "kubelet_refresh = %s: expected milliseconds from 100 to 3600000", val);
    } else if (IS("export", "pod_logs")) {
        if (val[0] && strlen(val) < sizeof(c->pod_logs))
            snprintf(c->pod_logs, sizeof(c->pod_logs), "%s", val);
        else
            bad(p, "pod_logs = %s: expected a directory or off", val);
    } else if (IS("fleet", "prometheus")) {
        if ((!strncmp(val, "http://", 7) || !strncmp(val, "https://", 8)) &&
            strlen(val) < sizeof(c->prometheus))
            snprintf(c->prometheus, sizeof(c->prometheus), "%s", val);
        else if (!strcmp(val, "off"))
            c->prometheus[0] = '\0';
        else {
            char shown[512];
            text_url_redact(shown, sizeof(shown), val); /* no password in a message */
            bad(p, "prometheus = %s: expected an http:// or https:// URL, or off", shown);
        }
    } else if (IS("fleet", "auth_file")) {
        if (val[0] && strlen(val) < sizeof(c->prometheus_auth))
            snprintf(c->prometheus_auth, sizeof(c->prometheus_auth), "%s",
                     strcmp(val, "none") ? val : "");
        else
            bad(p, "auth_file = %s: expected a file path or none", val);
    } else if (IS("fleet", "ca_file")) {
        if (val[0] && strlen(val) < sizeof(c->prometheus_ca))
            snprintf(c->prometheus_ca, sizeof(c->prometheus_ca), "%s", strcmp(val, "none") ? val : "");
        else
            bad(p, "ca_file = %s: expected a file path or none", val);
    } else if (IS("fleet", "match")) {
        char canon[2048], why[300];
        if (!strcmp(val, "none"))
            c->prometheus_match[0] = '\0';
        else if (strlen(val) < sizeof(c->prometheus_match) &&
                 promq_match_parse(val, canon, sizeof(canon), why, sizeof(why)) == 0)
            snprintf(c->prometheus_match, sizeof(c->prometheus_match), "%s", val);
        else
            bad(p, "match = %s: expected label matchers such as {job=\"gpu\"}, or none", val);
    } else {
        bad(p, "unknown key '%s' in [%s]", key, sec);
    }
#undef IS
    return 1; /* a bad line never stops the file */
}

/* The one line config_load leaves in err: the path, escaped, and why. */
static int failed(char *err, size_t errlen, const struct parse *p, int rc, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int failed(char *err, size_t errlen, const struct parse *p, int rc, const char *fmt, ...)
{
    if (errlen == 0)
        return rc;
    int n = snprintf(err, errlen, "%s: ", p->shown);
    if (n >= 0 && (size_t)n < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return rc;
}

/* /dev/null (character device 1, 3), under any name: an empty file. */
static bool is_null_device(const struct stat *st)
{
    return S_ISCHR(st->st_mode) && st->st_rdev == makedev(1, 3);
}

/* What a file that cannot be read leaves in err, and the code returned. */
static int refuse(char *err, size_t errlen, const struct parse *p, const struct stat *st)
{
    return failed(err, errlen, p, S_ISDIR(st->st_mode) ? -EISDIR : -EINVAL,
                  "%s, not a regular file", trust_kind(st));
}

int config_load(struct config *c, const char *path, FILE *errs, char *err, size_t errlen)
{
    struct parse *p = calloc(1, sizeof(*p));
    if (!p) {
        if (errlen)
            snprintf(err, errlen, "%s", strerror(ENOMEM));
        return -ENOMEM;
    }
    p->c = c;
    p->errs = errs;
    const struct config before = *c; /* what a file that fails to read leaves */
    cli_escape(p->shown, sizeof(p->shown), path);
    int rc = 0, fd = -1;
    /* Only a regular file is read. The name is looked at first, so that a
     * device is not even opened (opening one can act on it); the open never
     * waits (a FIFO without a writer, a terminal), and what was opened is
     * checked again, since the name may have changed in between. */
    struct stat st;
    if (stat(path, &st) != 0) {
        int e = errno;
        rc = e == ENOENT ? failed(err, errlen, p, -e, "no such file")
                         : failed(err, errlen, p, -e, "cannot read it: %s", strerror(e));
        goto out;
    }
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: the path; pass 1: what the open gave */
        if (is_null_device(&st))
            goto out;
        if (!S_ISREG(st.st_mode)) {
            rc = refuse(err, errlen, p, &st);
            goto out;
        }
        /* it may turn on a fleet view and name a credentials file: only
         * one of ours is read (trust.h) */
        char why[160];
        if (trust_check(&st, (unsigned)geteuid(), why, sizeof(why)) != 0) {
            rc = failed(err, errlen, p, -EPERM, "%s", why);
            goto out;
        }
        if (pass == 1)
            break;
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 || fstat(fd, &st) != 0) {
            int e = errno;
            rc = failed(err, errlen, p, -e, "cannot read it: %s", strerror(e));
            goto out;
        }
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK); /* a regular file: plain reads from here */
    p->file = fdopen(fd, "r");
    if (!p->file) {
        int e = errno;
        rc = failed(err, errlen, p, -e, "cannot read it: %s", strerror(e));
        goto out;
    }
    fd = -1; /* the stream's now */
    int syntax = ini_parse_stream(read_line, p, handler, p);
    if (syntax > 0) { /* inih skips such a line and names the first */
        p->line = syntax;
        bad(p, "syntax error (expected [section] or key = value); line skipped");
    }
    if (p->bad > REPORTS_MAX)
        fprintf(errs, "%s: %u more bad lines not reported\n", p->shown, p->bad - REPORTS_MAX);
    if (p->read_errno) {
        unsigned errors = c->errors;
        *c = before; /* none of a file read in part */
        c->errors = errors;
        rc = failed(err, errlen, p, -p->read_errno, "cannot read it: %s after line %d",
                    strerror(p->read_errno), p->line);
    }
out:
    if (p->file)
        fclose(p->file);
    if (fd >= 0)
        close(fd);
    free(p);
    return rc;
}

void config_write(const struct config *c, FILE *f)
{
    fprintf(f, "; mig-gpu-mon configuration (docs/config.md). Command-line flags override it.\n"
               "; A bad key or value is reported with its line and ignored.\n\n"
               "[general]\n"
               "; sampling interval in milliseconds (100 .. 3600000)\n"
               "interval = %u\n"
               "; processes listed per device (0 = all)\n"
               "top = %u\n"
               "; per-MIG activity from GPM on Hopper and later: auto, on, off or helper\n"
               "gpm = %s\n"
               "; per-MIG activity on Ampere from DCGM: auto, off, embedded, HOST[:PORT] or\n"
               "; unix:PATH of an nv-hostengine\n"
               "dcgm = %s\n"
               "; points kept per chart series (60 .. 100000)\n"
               "history = %u\n"
               "; samples a failed read keeps its last value, marked carried (0 .. 60)\n"
               "carry = %u\n\n"
               "[tui]\n"
               "; colours: on or off (NO_COLOR and --no-color also turn them off)\n"
               "color = %s\n"
               "; VRAM gauge: warning and alarm colours from these percentages\n"
               "vram_warn = %g\n"
               "vram_alarm = %g\n"
               "; CPU and RAM load colours\n"
               "load_warn = %g\n"
               "load_alarm = %g\n"
               "; temperature colours, degrees Celsius\n"
               "temp_warn = %g\n"
               "temp_alarm = %g\n"
               "; charts at start: activity or thermal (key c switches)\n"
               "charts = %s\n"
               "; temperatures shown in C or F\n"
               "temperature_unit = %s\n\n"
               "[export]\n"
               "; where the Prometheus exporter listens: ADDR:PORT or :PORT\n"
               "listen = %s\n"
               "; also emit dcgm-exporter's series: dcgm or none\n"
               "compat = %s\n"
               "; the kubelet's pod-resources socket for the pod labels, or off\n"
               "kubelet_socket = %s\n"
               "; how often the kubelet is asked, in milliseconds (100 .. 3600000)\n"
               "kubelet_refresh = %u\n"
               "; the kubelet's pod log directories, naming the pods of processes, or off\n"
               "pod_logs = %s\n\n"
               "[fleet]\n"
               "; every node's GPUs from this Prometheus server (http:// or https://), or off\n"
               "prometheus = %s\n"
               "; its credentials: a file whose first line is \"Bearer TOKEN\" or USER:PASSWORD,\n"
               "; or none\n"
               "auth_file = %s\n"
               "; https: the CA certificates (PEM) to trust instead of the system's, or none\n"
               "ca_file = %s\n"
               "; only the targets these label matchers select ({job=\"gpu\"}), or none\n"
               "match = %s\n",
            c->interval_ms, c->top,
            c->gpm == CLI_GPM_ON       ? "on"
            : c->gpm == CLI_GPM_OFF    ? "off"
            : c->gpm == CLI_GPM_HELPER ? "helper"
                                       : "auto",
            c->dcgm == CLI_DCGM_ADDR       ? c->dcgm_addr
            : c->dcgm == CLI_DCGM_OFF      ? "off"
            : c->dcgm == CLI_DCGM_EMBEDDED ? "embedded"
                                           : "auto",
            c->history,
            c->carry, c->color ? "on" : "off", c->vram_warn_pct, c->vram_alarm_pct,
            c->load_warn_pct, c->load_alarm_pct, c->temp_warn_c, c->temp_alarm_c,
            c->thermal_charts ? "thermal" : "activity", c->fahrenheit ? "F" : "C", c->listen,
            c->compat[0] ? c->compat : "none", c->kubelet_socket, c->kubelet_refresh_ms,
            c->pod_logs, c->prometheus[0] ? c->prometheus : "off",
            c->prometheus_auth[0] ? c->prometheus_auth : "none",
            c->prometheus_ca[0] ? c->prometheus_ca : "none",
            c->prometheus_match[0] ? c->prometheus_match : "none");
}
