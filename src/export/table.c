#include "export/table.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <string.h>

#include "core/clock.h"
#include "core/units.h"
#include "engine/proclist.h"

/* The table is never narrower than this: the device rows' fixed columns
 * need 80. A narrower terminal (or COLUMNS) gets the 80-column table, whose
 * lines it wraps, rather than a table that drops columns (man page,
 * --once). */
#define TABLE_MIN_WIDTH 80

/* The width of this output, and the columns of the device table's name
 * and VRAM fields: the full widths from 100 columns of output, narrower
 * below so a row fits 80. Set once per table_write_snapshot. */
static int width = TABLE_MIN_WIDTH;
static int name_w = 32, vram_w = 24, power_w = 11, nvlink_w = 21;

/* The terminal's width; else COLUMNS when set (as ls and other tools
 * read it); else 80. At least TABLE_MIN_WIDTH. */
static int out_width(FILE *f)
{
    struct winsize ws;
    long v = TABLE_MIN_WIDTH;
    const char *c = getenv("COLUMNS");
    if (isatty(fileno(f)) && ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
        v = ws.ws_col;
    } else if (c && *c) {
        char *end;
        long n = strtol(c, &end, 10);
        if (!*end && n > 0 && n <= 10000)
            v = n;
    }
    return v < TABLE_MIN_WIDTH ? TABLE_MIN_WIDTH : (int)v;
}

/* Columns the first n bytes of a cleaned string take: one per code point.
 * Snapshot strings are valid UTF-8 without controls (text.h); a wide
 * (CJK) character would count as one, which no driver string has. */
static int cols_n(const char *s, size_t n)
{
    int c = 0;
    for (size_t i = 0; i < n && s[i]; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

static int cols(const char *s)
{
    return cols_n(s, strlen(s));
}

/* Cut s in place to at most w columns (w >= 4), the cut marked "...": ASCII,
 * as the command column always was, since --once does not look at the
 * locale and its output often goes to a file. Safe in place: a string
 * wider than w has at least 4 bytes after the kept part. */
static void fit(char *s, int w)
{
    if (cols(s) <= w)
        return;
    size_t i = 0;
    for (int keep = w - 3; s[i]; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80 && keep-- == 0)
            break;
    memcpy(s + i, "...", 4);
}

/* Write text, the rest of a line on which `at` columns are already
 * written, broken at `brk` (" " between words, "  " between the groups of
 * a header line) so that no line is wider than the output; continuation
 * lines start with `indent` spaces. A word wider than a whole line is
 * written whole: a path in a message stays one piece to copy. */
static void put_wrapped(FILE *f, int at, int indent, const char *text, const char *brk)
{
    size_t bl = strlen(brk);
    int col = at;
    bool line_start = true;
    for (const char *p = text; *p;) {
        const char *e = strstr(p, brk);
        if (!e)
            e = p + strlen(p);
        int wc = cols_n(p, (size_t)(e - p));
        if (!line_start && col + (int)bl + wc > width) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
            line_start = true;
        }
        if (!line_start) {
            fputs(brk, f);
            col += (int)bl;
        }
        fwrite(p, 1, (size_t)(e - p), f);
        col += wc;
        line_start = false;
        p = *e ? e + bl : e;
    }
    fputc('\n', f);
}

/* A note under a row: `lead` columns of space, then text, wrapped with
 * continuation lines 2 columns further in. */
static void put_note(FILE *f, int lead, const char *text)
{
    fprintf(f, "%*s", lead, "");
    put_wrapped(f, lead, lead + 2, text, " ");
}

/* A row of columns wider than the output: each run of spaces between two
 * columns gives up one space per pass, from the right, until the row fits
 * (every figure stays whole; this row's columns shift); what still does
 * not fit is cut. */
static void put_row(FILE *f, char *row)
{
    int over = cols(row) - width;
    bool squeezed = true;
    while (over > 0 && squeezed) {
        squeezed = false;
        for (size_t i = strlen(row); over > 0 && i > 1; i--) {
            if (row[i - 1] != ' ' || row[i - 2] != ' ')
                continue;
            memmove(row + i - 1, row + i, strlen(row + i) + 1);
            over--;
            squeezed = true;
            while (i > 1 && row[i - 2] == ' ') /* one per run and pass */
                i--;
        }
    }
    fit(row, width);
    fprintf(f, "%s\n", row);
}

const char *table_fmt_metric(char *out, size_t len, const struct metric *m, double scale,
                             int decimals, const char *unit)
{
    if (!metric_ok(m)) {
        snprintf(out, len, "N/A");
        return out;
    }
    /* Round, don't truncate: 99.6 % prints as 100 with 0 decimals. */
    snprintf(out, len, "%s%.*f%s%s", m->src == MSRC_ESTIMATE ? "~" : "", decimals,
             m->value * scale, unit, m->src == MSRC_CARRIED ? "*" : "");
    return out;
}

/* "31200/40320 MiB"; a MIG GPU that cannot read its own: its instances'
 * sum, "S42367/70400 MiB". True when that sum was used. */
static bool fmt_mem(char *out, size_t len, const struct snapshot *s, size_t i)
{
    const struct device *d = &s->devices[i];
    const struct metric *u = &d->m[M_MEM_USED], *t = &d->m[M_MEM_TOTAL];
    struct metric su, st;
    char a[32], b[32];
    if (snapshot_mig_vram_sum(s, i, &su, &st)) {
        table_fmt_metric(a, sizeof(a), &su, 1.0 / (1024 * 1024), 0, "");
        table_fmt_metric(b, sizeof(b), &st, 1.0 / (1024 * 1024), 0, "");
        snprintf(out, len, "S%s/%s MiB", a, b);
        return true;
    }
    if (!metric_ok(u) && !metric_ok(t)) {
        snprintf(out, len, "N/A");
        return false;
    }
    table_fmt_metric(a, sizeof(a), u, 1.0 / (1024 * 1024), 0, "");
    table_fmt_metric(b, sizeof(b), t, 1.0 / (1024 * 1024), 0, "");
    snprintf(out, len, "%s/%s MiB", a, b);
    return false;
}

static void device_id(char *out, size_t len, const struct device *d)
{
    proclist_device_label(out, len, d);
}

/* True when the VRAM is the instances' sum. */
static bool write_device_row(FILE *f, const struct snapshot *s, size_t i)
{
    const struct device *d = &s->devices[i];
    char id[32], name[128], util[32], mem[32], sm[32], vram[96], temp[32], pw[80], pl[32];
    char row[512];
    device_id(id, sizeof(id), d);
    if (d->kind == DEV_MIG) {
        char gi[16] = "?", ci[16] = "?", core[96];
        if (d->gi_id >= 0)
            snprintf(gi, sizeof(gi), "%d", d->gi_id);
        if (d->ci_id >= 0)
            snprintf(ci, sizeof(ci), "%d", d->ci_id);
        const char *prof = d->profile[0] ? d->profile : "?";
        if (d->vendor == VENDOR_AMD) /* an amdgpu compute partition */
            snprintf(core, sizeof(core), "%s%.31s partition %s", name_w < 32 ? "" : "AMD ",
                     prof, gi);
        else if (name_w < 32) /* narrow: the ID column already says it is MIG slot n */
            snprintf(core, sizeof(core), "%.31s GI%s CI%s", prof, gi, ci);
        else
            snprintf(core, sizeof(core), "MIG %.31s GI %s CI %s", prof, gi, ci);
        /* indented under its GPU while there is room: a long profile
         * (1g.10gb+me) gives up the indent before GI and CI are cut */
        int pad = name_w - cols(core);
        snprintf(name, sizeof(name), "%*s%s", pad >= 2 ? 2 : pad > 0 ? pad : 0, "", core);
    } else {
        const char *n = d->name[0] ? d->name : "(unknown)";
        /* narrow: "NVIDIA " goes, the model stays */
        if (name_w < 32 && strncmp(n, "NVIDIA ", 7) == 0 && n[7])
            n += 7;
        snprintf(name, sizeof(name), "%s", n);
    }
    fit(name, name_w);
    table_fmt_metric(util, sizeof(util), &d->m[M_GPU_UTIL], 1, 0, "%");
    table_fmt_metric(mem, sizeof(mem), &d->m[M_MEM_UTIL], 1, 0, "%");
    table_fmt_metric(sm, sizeof(sm), &d->m[M_SM_UTIL], 1, 0, "%");
    bool sum = fmt_mem(vram, sizeof(vram), s, i);
    if (d->kind == DEV_MIG) {
        /* GPU-wide values are on the parent's row; don't repeat them. */
        snprintf(temp, sizeof(temp), "^");
        snprintf(pw, sizeof(pw), "^");
    } else {
        table_fmt_metric(temp, sizeof(temp), &d->m[M_TEMP], 1, 0, "C");
        if (!metric_ok(&d->m[M_POWER]) && !metric_ok(&d->m[M_POWER_LIMIT])) {
            snprintf(pw, sizeof(pw), "N/A"); /* not "N/A/N/A" */
        } else {
            table_fmt_metric(pw, sizeof(pw), &d->m[M_POWER], 1, 0, "");
            table_fmt_metric(pl, sizeof(pl), &d->m[M_POWER_LIMIT], 1, 0, "W");
            size_t n = strlen(pw);
            snprintf(pw + n, sizeof(pw) - n, "/%s", pl);
        }
    }
    /* the name is padded by columns, not bytes (a UTF-8 name) */
    snprintf(row, sizeof(row), "%-6s %s%*s %5s %5s %5s %*s %5s %*s", id, name,
             name_w - cols(name), "", util, mem, sm, vram_w, vram, temp, power_w, pw);
    put_row(f, row);
    if (d->stall)
        put_note(f, 9, d->stall);
    else if (d->lost && d->kind == DEV_GPU)
        put_note(f, 9, "GPU lost: NVML_ERROR_GPU_IS_LOST");
    if (!d->uuid[0] && d->uuid_why) {
        char why[320];
        snprintf(why, sizeof(why), "UUID N/A: %s", d->uuid_why);
        put_note(f, 9, why);
    }
    return sum;
}

static void write_host(FILE *f, const struct snapshot *s)
{
    if (!s->host_ok) {
        char msg[320];
        snprintf(msg, sizeof(msg), "host: N/A (%s)", s->host_error);
        put_wrapped(f, 0, 6, msg, " ");
        return;
    }
    const struct host_sample *h = &s->host;
    char cpu[16], used[16], total[16], swap[16], swapt[16], l1[16], l5[16], l15[16], line[512];
    double gib = 1.0 / (1024.0 * 1024.0 * 1024.0);
    table_fmt_metric(cpu, sizeof(cpu), &h->cpu_total, 1, 1, "%");
    table_fmt_metric(used, sizeof(used), &h->mem.used, gib, 1, "");
    table_fmt_metric(total, sizeof(total), &h->mem.total, gib, 1, "G");
    table_fmt_metric(swap, sizeof(swap), &h->mem.swap_used, gib, 1, "");
    table_fmt_metric(swapt, sizeof(swapt), &h->mem.swap_total, gib, 1, "G");
    table_fmt_metric(l1, sizeof(l1), &h->loadavg[0], 1, 2, "");
    table_fmt_metric(l5, sizeof(l5), &h->loadavg[1], 1, 2, "");
    table_fmt_metric(l15, sizeof(l15), &h->loadavg[2], 1, 2, "");
    char host[sizeof(h->hostname)], online[16] = "N/A";
    if (h->online >= 0)
        snprintf(online, sizeof(online), "%d", h->online);
    snprintf(host, sizeof(host), "%s", h->hostname[0] ? h->hostname : "?");
    fit(host, width - 5);
    /* a big machine's line is longer than 80: it breaks between groups */
    snprintf(line, sizeof(line), "host %s  cpus %s  cpu %s  ram %s/%s  swap %s/%s  load %s %s %s",
             host, online, cpu, used, total, swap, swapt, l1, l5, l15);
    put_wrapped(f, 0, 5, line, "  ");
}

/* A decimal rate: "950 MB/s", "12.5 GB/s" (units.h, as in the monitor). */
static void fmt_rate(char *out, size_t len, const struct metric *m)
{
    if (!metric_ok(m))
        snprintf(out, len, "N/A");
    else
        units_rate(out, len, m->value);
}

/* NVLink TX/RX as "120/118 GB/s": both figures in the larger one's unit,
 * written once, so the pair cannot read as one figure "per" another (the
 * old "120 GB/s/118 GB/s"). A missing side is N/A beside the other, whole
 * with its unit; neither is one N/A. */
static void fmt_rate_pair(char *out, size_t len, const struct metric *tx, const struct metric *rx)
{
    bool a = metric_ok(tx), b = metric_ok(rx);
    if (!a && !b) {
        snprintf(out, len, "N/A");
        return;
    }
    if (!a || !b) {
        char x[24], y[24];
        fmt_rate(x, sizeof(x), tx);
        fmt_rate(y, sizeof(y), rx);
        snprintf(out, len, "%s/%s", x, y);
        return;
    }
    double hi = tx->value > rx->value ? tx->value : rx->value;
    /* the thresholds of units_rate: the pair reads as each figure would */
    double div = hi < 999.5e3 ? 1e3 : hi < 999.5e6 ? 1e6 : 1e9;
    const char *unit = hi < 999.5e3 ? "kB/s" : hi < 999.5e6 ? "MB/s" : "GB/s";
    double v[2] = {tx->value / div, rx->value / div};
    char part[2][24];
    for (int k = 0; k < 2; k++)
        snprintf(part[k], sizeof(part[k]), "%.*f", div > 1e3 && v[k] < 9.95 ? 1 : 0, v[k]);
    snprintf(out, len, "%s/%s %s", part[0], part[1], unit);
}

/* GPM's (Hopper and later) or DCGM's per-device activity, for devices that
 * have any; the heading names the source. */
static void write_gpm(FILE *f, const struct snapshot *s)
{
    static const enum metric_id cols_gpm[] = {
        M_SM_OCCUPANCY, M_TENSOR_UTIL, M_HMMA_TENSOR_UTIL, M_IMMA_TENSOR_UTIL, M_DFMA_TENSOR_UTIL,
        M_FP64_UTIL,    M_FP32_UTIL,   M_FP16_UTIL,        M_INT_UTIL};
    enum { NCOL = sizeof(cols_gpm) / sizeof(cols_gpm[0]) };
    bool header = false;
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        bool any = false;
        for (size_t k = 0; k < NCOL; k++)
            any = any || metric_ok(&d->m[cols_gpm[k]]);
        if (!any)
            continue;
        if (!header) {
            bool dcgm = false;
            for (size_t j = 0; j < s->ndevices; j++)
                dcgm = dcgm || s->devices[j].m[M_SM_OCCUPANCY].src == MSRC_DCGM ||
                       s->devices[j].m[M_TENSOR_UTIL].src == MSRC_DCGM;
            fprintf(f, "\n%s activity (%% of the device's own capacity)\n", dcgm ? "DCGM" : "GPM");
            fprintf(f, "%-6s %5s %6s %5s %5s %5s %5s %5s %5s %5s %*s\n", "ID", "OCC", "TENSOR",
                    "HMMA", "IMMA", "DFMA", "FP64", "FP32", "FP16", "INT", nvlink_w, "NVLINK TX/RX");
            header = true;
        }
        char id[32], v[NCOL][16], nv[56], row[256];
        device_id(id, sizeof(id), d);
        for (size_t k = 0; k < NCOL; k++)
            table_fmt_metric(v[k], sizeof(v[k]), &d->m[cols_gpm[k]], 1, 0, "%");
        if (d->kind == DEV_MIG) {
            snprintf(nv, sizeof(nv), "^");
        } else {
            fmt_rate_pair(nv, sizeof(nv), &d->m[M_NVLINK_TX], &d->m[M_NVLINK_RX]);
        }
        snprintf(row, sizeof(row), "%-6s %5s %6s %5s %5s %5s %5s %5s %5s %5s %*s", id, v[0], v[1],
                 v[2], v[3], v[4], v[5], v[6], v[7], v[8], nvlink_w, nv);
        put_row(f, row);
    }
}

/* The process list is said to be empty only when every list was read. */
struct proc_tally {
    size_t rows;      /* process rows written */
    size_t unread;    /* devices whose list is N/A */
    bool unattr_mark; /* a "?" after a TYPE was written */
};

static void write_process_row(FILE *f, const char *id, const struct gpu_process *p,
                              struct proc_tally *t)
{
    char mem[32], sm[16], mu[16], cpu[16], user[64], type[16], cmd[600], row[800];
    table_fmt_metric(mem, sizeof(mem), &p->mem_bytes, 1.0 / (1024 * 1024), 0, "MiB");
    table_fmt_metric(sm, sizeof(sm), &p->sm_util, 1, 0, "%");
    table_fmt_metric(mu, sizeof(mu), &p->mem_util, 1, 0, "%");
    table_fmt_metric(cpu, sizeof(cpu), &p->cpu_pct, 1, 1, "");
    snprintf(user, sizeof(user), "%s", p->user[0] ? p->user : "N/A");
    fit(user, 10);
    /* Unattributed (a MIG GPU's process no instance could be given): the
     * word before the command from 100 columns, below a "?" after the
     * type, as the interactive monitor marks it, explained in the key */
    bool wide = width >= 100;
    snprintf(type, sizeof(type), "%s%s", proc_type_name(p->type),
             p->unattributed && !wide ? "?" : "");
    t->unattr_mark = t->unattr_mark || (p->unattributed && !wide);
    int n = snprintf(row, sizeof(row), "%-6s %8u %-5s %9s%s %4s %6s %6s %s%*s ", id, p->pid, type,
                     mem, p->carried ? "*" : " ", sm, mu, cpu, user, 10 - cols(user), "");
    const char *pre = p->unattributed && wide ? "(unattributed) " : "";
    if (p->command[0])
        snprintf(cmd, sizeof(cmd), "%s%.511s", pre, p->command);
    else if (p->name[0])
        snprintf(cmd, sizeof(cmd), "%s[%.63s]", pre, p->name);
    else
        snprintf(cmd, sizeof(cmd), "%sN/A (not visible from here)", pre);
    /* the command takes what the columns leave, cut to it, marked */
    int room = width - cols(row);
    fit(cmd, room > 8 ? room : 8);
    snprintf(row + n, sizeof(row) - (size_t)n, "%s", cmd);
    put_row(f, row);
    t->rows++;
}

/* nvidia-smi pmon-like: one row per shown process, grouped by device.
 * Returns true when a row marked a process unattributed with "?". */
static bool write_processes(FILE *f, const struct snapshot *s)
{
    /* SM% and MemBW% are the process's shares of the SM and of memory
     * bandwidth (memory-controller busy time, as the device's MemBW;
     * docs/metrics.md); VRAM is the memory it holds */
    fprintf(f, "\n%-6s %8s %-5s %10s %4s %6s %6s %-10s %s\n", "ID", "PID", "TYPE", "VRAM", "SM%",
            "MemBW%", "CPU%", "USER", "COMMAND");
    struct proc_tally t = {0, 0, false};
    size_t nread = 0; /* devices whose list was read */
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        char id[32];
        device_id(id, sizeof(id), d);
        /* a fleet: a line per node before its devices' processes */
        if (d->node[0] && (i == 0 || strcmp(s->devices[i - 1].node, d->node) != 0))
            fprintf(f, "node %s:\n", d->node);
        if (!metric_ok(&d->process_count) && d->nprocs == 0) {
            /* a MIG-enabled GPU's own list is its instances': say nothing */
            if (d->kind == DEV_MIG || !d->mig_enabled) {
                char msg[320];
                snprintf(msg, sizeof(msg), "processes N/A (%s)",
                         d->process_count.why ? d->process_count.why : "not read");
                fprintf(f, "%-6s ", id);
                put_wrapped(f, 7, 9, msg, " ");
                t.unread++;
            }
            continue;
        }
        nread++;
        for (size_t k = 0; k < d->nprocs && d->proc_first + k < s->nprocs; k++)
            write_process_row(f, id, &s->procs[d->proc_first + k], &t);
        if (metric_ok(&d->process_count) && d->process_count.value > (double)d->nprocs &&
            !d->mig_enabled)
            fprintf(f, "%-6s ... %.0f more (--top)\n", id,
                    d->process_count.value - (double)d->nprocs);
    }
    /* "no GPU processes" would be false where a list could not be read */
    if (t.rows == 0 && t.unread == 0)
        fprintf(f, "no GPU processes\n");
    else if (t.rows == 0 && nread > 0)
        fprintf(f, "none on the other devices\n");
    return t.unattr_mark;
}

/* A message of several lines (the paths tried), each wrapped to the width
 * with its continuation under its first word. */
static void put_message(FILE *f, const char *msg)
{
    char line[2048];
    for (const char *p = msg; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n >= sizeof(line))
            n = sizeof(line) - 1;
        memcpy(line, p, n);
        line[n] = '\0';
        size_t lead = strspn(line, " ");
        fprintf(f, "%.*s", (int)lead, line);
        put_wrapped(f, (int)lead, (int)lead + 4, line + lead, " ");
        p = nl ? nl + 1 : p + strlen(p);
    }
}

/* A fleet's node: "node dgx: 8 GPUs, 56 MIGs  DOWN for 12 s", and why
 * its devices are not listed when they are not. */
static void write_node_line(FILE *f, const struct node_summary *n)
{
    char g[24] = "? GPUs", m[24] = "? MIGs", down[80] = "";
    if (metric_ok(&n->gpus))
        snprintf(g, sizeof(g), "%.0f GPU%s", n->gpus.value, n->gpus.value == 1 ? "" : "s");
    if (metric_ok(&n->mig))
        snprintf(m, sizeof(m), "%.0f MIG%s", n->mig.value, n->mig.value == 1 ? "" : "s");
    if (n->up == 0 && !n->seen)
        snprintf(down, sizeof(down), "  DOWN, never seen");
    else if (n->up == 0 && n->down_for_s >= 0)
        snprintf(down, sizeof(down), "  DOWN for %.0f s", n->down_for_s);
    else if (n->up == 0)
        snprintf(down, sizeof(down), "  DOWN");
    fprintf(f, "node %s: %s, %s%s\n", n->name, g, m, down);
    if (!n->devs_read && n->seen)
        fprintf(f, "  its devices: %s\n", n->devs_why ? n->devs_why : "not read");
}

void table_write_snapshot(FILE *f, const struct snapshot *s)
{
    width = out_width(f);
    char ts[40];
    clock_rfc3339(s->wall_ns, ts, sizeof(ts));
    char cuda[32] = "N/A", drv[sizeof(s->driver_version)], nvml[sizeof(s->nvml_version)];
    char line[512];
    if (s->cuda_driver_version > 0)
        snprintf(cuda, sizeof(cuda), "%d.%d", s->cuda_driver_version / 1000,
                 s->cuda_driver_version % 1000 / 10);
    /* the versions are the driver's strings: each gets half of what the
     * line has room for (a real one is 10 to 13 characters) */
    int room = (width - (int)strlen("driver   CUDA   NVML ") - cols(cuda)) / 2;
    snprintf(drv, sizeof(drv), "%s", s->driver_version[0] ? s->driver_version : "N/A");
    snprintf(nvml, sizeof(nvml), "%s", s->nvml_version[0] ? s->nvml_version : "N/A");
    fit(drv, room);
    fit(nvml, room);
    fprintf(f, "mig-gpu-mon %s  %s\n", MIGMON_VERSION, ts);
    snprintf(line, sizeof(line), "driver %s  CUDA %s  NVML %s", drv, cuda, nvml);
    put_wrapped(f, 0, 7, line, "  ");
    write_host(f, s);
    if (!s->gpu_ok) {
        fprintf(f, "gpu: N/A\n");
        put_message(f, s->gpu_error);
        return;
    }
    if (s->ndevices == 0) {
        fprintf(f, "gpu: no NVIDIA GPU found by the driver\n");
        return;
    }
    name_w = width >= 100 ? 32 : 20;
    vram_w = width >= 100 ? 24 : 18;
    power_w = width >= 100 ? 11 : 9;
    nvlink_w = width >= 100 ? 21 : 18;
    /* MemBW: memory bandwidth (memory-controller busy time), not VRAM
     * use, which is the VRAM column; one name in every output */
    fprintf(f, "%-6s %-*s %5s %5s %5s %*s %5s %*s\n", "ID", name_w, "DEVICE", "GPU", "MemBW", "SM",
            vram_w, "VRAM USED/TOTAL", "TEMP", power_w, "POWER");
    bool sum_mark = false;
    if (s->fleet) { /* --prometheus: a line per node, its devices under it */
        for (size_t k = 0; k < s->nnodes; k++) {
            const struct node_summary *n = &s->nodes[k];
            write_node_line(f, n);
            for (size_t i = n->dev_first; n->devs_read && i < n->dev_first + n->ndev &&
                                           i < s->ndevices;
                 i++)
                sum_mark = write_device_row(f, s, i) || sum_mark;
        }
    }
    for (size_t i = 0; !s->fleet && i < s->ndevices; i++)
        sum_mark = write_device_row(f, s, i) || sum_mark;
    write_gpm(f, s);
    bool unattr_mark = write_processes(f, s);
    fprintf(f, "N/A = not available from the driver; ~ = estimate; * = carried;\n"
               "^ = GPU-wide value, see the parent row\n");
    if (unattr_mark)
        fprintf(f, "? after TYPE = on a MIG GPU, not attributed to one of its instances\n");
    if (sum_mark)
        fprintf(f, "S before VRAM = the sum of a MIG GPU's instances (its own needs privilege)\n");
    bool gpm = false, dcgm = false;
    for (size_t i = 0; i < s->ndevices; i++) {
        gpm = gpm || s->devices[i].m[M_GPU_UTIL].src == MSRC_GPM;
        dcgm = dcgm || s->devices[i].m[M_GPU_UTIL].src == MSRC_DCGM;
    }
    if (gpm || dcgm)
        fprintf(f, "GPU/MemBW/SM of MIG-mode devices come from %s: graphics activity, DRAM\n"
                   "bandwidth and SM activity of the instance (docs/mig-utilisation.md)\n",
                gpm && dcgm ? "GPM or DCGM" : gpm ? "GPM" : "DCGM");
}

/* ---- --all-processes ---- */

enum { A_PID, A_DEV, A_GICI, A_VRAM, A_SM, A_CPU, A_RSS, A_TIME, A_USER, A_CMD, A_N };
static const char *const a_head[A_N] = {"PID", "DEV",     "GI/CI", "VRAM", "SM%",
                                        "CPU%", "RSS", "ELAPSED", "USER", "COMMAND"};
#define A_CELL 80

/* Whether process i of s is on an NVIDIA MIG device: only then has it GPU
 * and compute instance ids (an AMD partition has neither). */
static bool on_nvmig(const struct snapshot *s, size_t i)
{
    long di = proclist_device_of(s, i);
    const struct device *d = di >= 0 ? &s->devices[di] : NULL;
    return d && d->vendor != VENDOR_AMD && (d->kind == DEV_MIG || d->mig_enabled);
}

/* The cells of process i of s, the command (cut later) in cmd. */
static void all_cells(const struct snapshot *s, size_t i, char c[A_CMD][A_CELL], char *cmd,
                      size_t cmdlen, bool *unattr)
{
    const struct gpu_process *p = &s->procs[i];
    long di = proclist_device_of(s, i);
    const struct device *d = di >= 0 ? &s->devices[di] : NULL;
    double mib = 1.0 / (1024 * 1024);
    snprintf(c[A_PID], A_CELL, "%u", (unsigned)p->pid);
    if (d)
        proclist_device_node_label(c[A_DEV], A_CELL - 1, d);
    else
        snprintf(c[A_DEV], A_CELL, "?");
    if (p->unattributed) { /* on a MIG GPU, in none of its instances */
        strcat(c[A_DEV], "?");
        *unattr = true;
    }
    /* NVIDIA's GPU and compute instance ids; an AMD partition has neither
     * (DEV names it: GPU/partition index), nor has a GPU with MIG off */
    bool mig = on_nvmig(s, i);
    if (mig && p->gi_id >= 0)
        snprintf(c[A_GICI], A_CELL, p->ci_id >= 0 ? "%d/%d" : "%d/?", p->gi_id, p->ci_id);
    else
        snprintf(c[A_GICI], A_CELL, "%s", mig ? "?/?" : "-");
    table_fmt_metric(c[A_VRAM], A_CELL, &p->mem_bytes, mib, 0, "MiB");
    if (p->carried) /* as the device table's process rows: kept from an earlier list */
        strcat(c[A_VRAM], "*");
    table_fmt_metric(c[A_SM], A_CELL, &p->sm_util, 1, 0, "");
    table_fmt_metric(c[A_CPU], A_CELL, &p->cpu_pct, 1, 1, "");
    table_fmt_metric(c[A_RSS], A_CELL, &p->rss_bytes, mib, 0, "MiB");
    struct metric el = proclist_elapsed(s, p, proclist_clk_tck());
    proclist_fmt_elapsed(c[A_TIME], A_CELL, &el);
    snprintf(c[A_USER], A_CELL, "%s", p->user[0] ? p->user : "N/A");
    fit(c[A_USER], 10);
    if (p->command[0])
        snprintf(cmd, cmdlen, "%.511s", p->command);
    else if (p->name[0])
        snprintf(cmd, cmdlen, "[%.63s]", p->name);
    else
        snprintf(cmd, cmdlen, "N/A (not visible from here)");
}

/* The columns padded to w (in columns: a user name may be UTF-8), DEV and
 * USER to the left, the figures to the right, one space apart; GI/CI only
 * where a process of the list is on an NVIDIA MIG device, as in the TUI. */
static int all_line(char *out, size_t len, const int w[A_CMD], const char *const text[A_CMD],
                    bool gici)
{
    size_t n = 0;
    for (int c = 0; c < A_CMD && n + 1 < len; c++) {
        if (c == A_GICI && !gici)
            continue;
        int pad = w[c] - cols(text[c]);
        int k = c == A_DEV || c == A_USER
                    ? snprintf(out + n, len - n, "%s%*s ", text[c], pad > 0 ? pad : 0, "")
                    : snprintf(out + n, len - n, "%*s%s ", pad > 0 ? pad : 0, "", text[c]);
        if (k < 0)
            break;
        n += (size_t)k < len - n ? (size_t)k : len - n - 1;
    }
    return (int)n;
}

int table_write_all_processes(FILE *f, const struct snapshot *s)
{
    width = out_width(f);
    if (!s->gpu_ok) {
        fprintf(f, "gpu: N/A\n");
        put_message(f, s->gpu_error);
        return 0;
    }
    size_t n;
    errno = 0;
    size_t *rows = proclist_all_by_memory(s, &n);
    if (!rows && errno == ENOMEM)
        return -ENOMEM;
    /* columns as wide as their widest value: a first pass measures */
    char c[A_CMD][A_CELL], cmd[PROC_CMD_LEN + 80], row[PROC_CMD_LEN + A_N * A_CELL];
    const char *text[A_CMD];
    int w[A_CMD];
    bool unattr = false, gici = false;
    for (int k = 0; k < A_CMD; k++)
        w[k] = cols(a_head[k]);
    for (size_t r = 0; r < n; r++) {
        gici = gici || on_nvmig(s, rows[r]);
        all_cells(s, rows[r], c, cmd, sizeof(cmd), &unattr);
        for (int k = 0; k < A_CMD; k++)
            if (cols(c[k]) > w[k])
                w[k] = cols(c[k]);
    }
    for (int k = 0; k < A_CMD; k++)
        text[k] = a_head[k];
    int at = all_line(row, sizeof(row), w, text, gici);
    snprintf(row + at, sizeof(row) - (size_t)at, "%s", a_head[A_CMD]);
    put_row(f, row);
    for (size_t r = 0; r < n; r++) {
        all_cells(s, rows[r], c, cmd, sizeof(cmd), &unattr);
        for (int k = 0; k < A_CMD; k++)
            text[k] = c[k];
        at = all_line(row, sizeof(row), w, text, gici);
        int room = width - cols(row); /* the command takes what is left, cut to it */
        fit(cmd, room > 8 ? room : 8);
        snprintf(row + at, sizeof(row) - (size_t)at, "%s", cmd);
        put_row(f, row);
    }
    free(rows);
    /* what the list does not hold, said: unread lists, --top's cut */
    size_t unread = 0;
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        char id[96], msg[320];
        if (d->kind == DEV_GPU && d->mig_enabled)
            continue; /* its list is its instances' */
        proclist_device_node_label(id, sizeof(id), d);
        if (!metric_ok(&d->process_count)) {
            snprintf(msg, sizeof(msg), "processes N/A (%s)",
                     d->process_count.why ? d->process_count.why : "not read");
            fprintf(f, "%-6s ", id);
            put_wrapped(f, 7, 9, msg, " ");
            unread++;
        } else if (d->process_count.value > (double)d->nprocs) {
            fprintf(f, "%-6s ... %.0f more (--top)\n", id,
                    d->process_count.value - (double)d->nprocs);
        }
    }
    if (n == 0)
        fprintf(f, unread ? "none in the lists read\n" : "no GPU processes\n");
    fprintf(f, "N/A = not available; * = carried; ELAPSED as ps -o etime\n");
    if (unattr)
        fprintf(f, "? after DEV = on a MIG GPU, not attributed to one of its instances\n");
    return 0;
}
