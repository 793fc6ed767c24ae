#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <ini.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "history.h"

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
    const char *path;
    FILE *file, *errs;
    int line; /* the line inih is on (counted by read_line) */
};

/* inih's reader: counts lines, so each report names its line. */
static char *read_line(char *str, int num, void *stream)
{
    struct parse *p = stream;
    char *s = fgets(str, num, p->file);
    if (s)
        p->line++;
    return s;
}

static void bad(struct parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad(struct parse *p, const char *fmt, ...)
{
    fprintf(p->errs, "%s:%d: ", p->path, p->line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(p->errs, fmt, ap);
    va_end(ap);
    fputc('\n', p->errs);
    p->c->errors++;
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
        else
            bad(p, "gpm = %s: expected auto, on or off", val);
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
    } else {
        bad(p, "unknown key '%s' in [%s]", key, sec);
    }
#undef IS
    return 1; /* a bad line never stops the file */
}

int config_load(struct config *c, const char *path, FILE *errs)
{
    struct parse p = {.c = c, .path = path, .errs = errs};
    p.file = fopen(path, "re");
    if (!p.file)
        return -errno;
    /* a directory opens, and then reads as an empty file */
    struct stat st;
    if (fstat(fileno(p.file), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(p.file);
        return -EISDIR;
    }
    int rc = ini_parse_stream(read_line, &p, handler, &p);
    fclose(p.file);
    if (rc > 0) { /* a syntax error: inih skips the line and names the first */
        fprintf(errs, "%s:%d: syntax error (expected [section] or key = value); line skipped\n",
                path, rc);
        c->errors++;
    }
    return 0;
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
               "; per-MIG activity from GPM on Hopper and later: auto, on or off\n"
               "gpm = %s\n"
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
               "compat = %s\n",
            c->interval_ms, c->top,
            c->gpm == CLI_GPM_ON ? "on" : c->gpm == CLI_GPM_OFF ? "off" : "auto", c->history,
            c->carry, c->color ? "on" : "off", c->vram_warn_pct, c->vram_alarm_pct,
            c->load_warn_pct, c->load_alarm_pct, c->temp_warn_c, c->temp_alarm_c,
            c->thermal_charts ? "thermal" : "activity", c->fahrenheit ? "F" : "C", c->listen,
            c->compat[0] ? c->compat : "none");
}
