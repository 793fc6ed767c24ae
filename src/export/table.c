#include "export/table.h"

#include <math.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <string.h>

#include "clock.h"
#include "units.h"

/* Columns of the device table's name and VRAM fields: the full widths
 * from 100 columns of output, narrower below so a row fits 80 (a
 * terminal's width, or 80 when the output is not a terminal). */
static int name_w = 32, vram_w = 24, power_w = 11, cmd_w = 200, nvlink_w = 21;

/* The terminal's width; else COLUMNS when set (as ls and other tools
 * read it); else 80. */
static int out_width(FILE *f)
{
    struct winsize ws;
    if (isatty(fileno(f)) && ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    const char *c = getenv("COLUMNS");
    if (c && *c) {
        char *end;
        long v = strtol(c, &end, 10);
        if (!*end && v >= 40 && v <= 10000)
            return (int)v;
    }
    return 80;
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

static void fmt_mem(char *out, size_t len, const struct device *d)
{
    const struct metric *u = &d->m[M_MEM_USED], *t = &d->m[M_MEM_TOTAL];
    char a[32], b[32];
    if (!metric_ok(u) && !metric_ok(t)) {
        snprintf(out, len, "N/A");
        return;
    }
    table_fmt_metric(a, sizeof(a), u, 1.0 / (1024 * 1024), 0, "");
    table_fmt_metric(b, sizeof(b), t, 1.0 / (1024 * 1024), 0, "");
    snprintf(out, len, "%s/%s MiB", a, b);
}

static void device_id(char *out, size_t len, const struct device *d)
{
    if (d->kind == DEV_MIG)
        snprintf(out, len, "%d/%d", d->index, d->mig_index);
    else
        snprintf(out, len, "%d", d->index);
}

static void write_device_row(FILE *f, const struct device *d)
{
    char id[32], name[128], util[32], mem[32], sm[32], vram[96], temp[32], pw[80], pl[32];
    device_id(id, sizeof(id), d);
    if (d->kind == DEV_MIG) {
        char gi[16] = "?", ci[16] = "?";
        if (d->gi_id >= 0)
            snprintf(gi, sizeof(gi), "%d", d->gi_id);
        if (d->ci_id >= 0)
            snprintf(ci, sizeof(ci), "%d", d->ci_id);
        if (name_w < 32) /* narrow: the ID column already says it is MIG slot n */
            snprintf(name, sizeof(name), "  %.15s GI%s CI%s", d->profile[0] ? d->profile : "?", gi,
                     ci);
        else
            snprintf(name, sizeof(name), "  MIG %.31s GI %s CI %s",
                     d->profile[0] ? d->profile : "?", gi, ci);
    } else {
        const char *n = d->name[0] ? d->name : "(unknown)";
        /* narrow: "NVIDIA " goes, the model stays */
        if (name_w < 32 && strncmp(n, "NVIDIA ", 7) == 0 && n[7])
            n += 7;
        snprintf(name, sizeof(name), "%s", n);
    }
    table_fmt_metric(util, sizeof(util), &d->m[M_GPU_UTIL], 1, 0, "%");
    table_fmt_metric(mem, sizeof(mem), &d->m[M_MEM_UTIL], 1, 0, "%");
    table_fmt_metric(sm, sizeof(sm), &d->m[M_SM_UTIL], 1, 0, "%");
    fmt_mem(vram, sizeof(vram), d);
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
    fprintf(f, "%-6s %-*.*s %5s %5s %5s %*s %5s %*s\n", id, name_w, name_w, name, util, mem, sm,
            vram_w, vram, temp, power_w, pw);
    if (d->stall)
        fprintf(f, "%-6s   %s\n", "", d->stall);
    else if (d->lost && d->kind == DEV_GPU)
        fprintf(f, "%-6s   GPU lost: NVML_ERROR_GPU_IS_LOST\n", "");
    if (!d->uuid[0] && d->uuid_why)
        fprintf(f, "%-6s   UUID N/A: %s\n", "", d->uuid_why);
}

static void write_host(FILE *f, const struct snapshot *s)
{
    if (!s->host_ok) {
        fprintf(f, "host: N/A (%s)\n", s->host_error);
        return;
    }
    const struct host_sample *h = &s->host;
    char cpu[16], used[16], total[16], swap[16], swapt[16], l1[16], l5[16], l15[16];
    double gib = 1.0 / (1024.0 * 1024.0 * 1024.0);
    table_fmt_metric(cpu, sizeof(cpu), &h->cpu_total, 1, 1, "%");
    table_fmt_metric(used, sizeof(used), &h->mem.used, gib, 1, "");
    table_fmt_metric(total, sizeof(total), &h->mem.total, gib, 1, "G");
    table_fmt_metric(swap, sizeof(swap), &h->mem.swap_used, gib, 1, "");
    table_fmt_metric(swapt, sizeof(swapt), &h->mem.swap_total, gib, 1, "G");
    table_fmt_metric(l1, sizeof(l1), &h->loadavg[0], 1, 2, "");
    table_fmt_metric(l5, sizeof(l5), &h->loadavg[1], 1, 2, "");
    table_fmt_metric(l15, sizeof(l15), &h->loadavg[2], 1, 2, "");
    fprintf(f, "host %s  cpus %d  cpu %s  ram %s/%s  swap %s/%s  load %s %s %s\n",
            h->hostname[0] ? h->hostname : "?", h->online, cpu, used, total, swap, swapt, l1, l5,
            l15);
}

/* A decimal rate: "950 MB/s", "12.5 GB/s" (units.h, as in the monitor). */
static void fmt_rate(char *out, size_t len, const struct metric *m)
{
    if (!metric_ok(m))
        snprintf(out, len, "N/A");
    else
        units_rate(out, len, m->value);
}

/* GPM's per-device activity (Hopper and later), for devices that have any. */
static void write_gpm(FILE *f, const struct snapshot *s)
{
    static const enum metric_id cols[] = {M_SM_OCCUPANCY, M_TENSOR_UTIL,  M_HMMA_TENSOR_UTIL,
                                          M_IMMA_TENSOR_UTIL, M_DFMA_TENSOR_UTIL, M_FP64_UTIL,
                                          M_FP32_UTIL,    M_FP16_UTIL,    M_INT_UTIL};
    bool header = false;
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        bool any = false;
        for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++)
            any = any || metric_ok(&d->m[cols[k]]);
        if (!any)
            continue;
        if (!header) {
            fprintf(f, "\nGPM activity (%% of the device's own capacity)\n");
            fprintf(f, "%-6s %5s %6s %5s %5s %5s %5s %5s %5s %5s %*s\n", "ID", "OCC", "TENSOR",
                    "HMMA", "IMMA", "DFMA", "FP64", "FP32", "FP16", "INT", nvlink_w, "NVLINK TX/RX");
            header = true;
        }
        char id[32], v[sizeof(cols) / sizeof(cols[0])][16], tx[24], rx[24], nv[56];
        device_id(id, sizeof(id), d);
        for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++)
            table_fmt_metric(v[k], sizeof(v[k]), &d->m[cols[k]], 1, 0, "%");
        if (d->kind == DEV_MIG) {
            snprintf(nv, sizeof(nv), "^");
        } else {
            fmt_rate(tx, sizeof(tx), &d->m[M_NVLINK_TX]);
            fmt_rate(rx, sizeof(rx), &d->m[M_NVLINK_RX]);
            snprintf(nv, sizeof(nv), "%s/%s", tx, rx);
        }
        fprintf(f, "%-6s %5s %6s %5s %5s %5s %5s %5s %5s %5s %*s\n", id, v[0], v[1], v[2], v[3],
                v[4], v[5], v[6], v[7], v[8], nvlink_w, nv);
    }
}

/* nvidia-smi pmon-like: one row per shown process, grouped by device. */
static void write_processes(FILE *f, const struct snapshot *s)
{
    /* SM% and MEM% are the process's shares of the SM and of memory
     * bandwidth; VRAM is the memory it holds */
    fprintf(f, "\n%-6s %8s %-5s %10s %4s %4s %6s %-10s %s\n", "ID", "PID", "TYPE", "VRAM",
            "SM%", "BW%", "CPU%", "USER", "COMMAND");
    size_t rows = 0;
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        char id[32];
        device_id(id, sizeof(id), d);
        if (!metric_ok(&d->process_count) && d->nprocs == 0) {
            /* a MIG-enabled GPU's own list is its instances': say nothing */
            if (d->kind == DEV_MIG || !d->mig_enabled)
                fprintf(f, "%-6s processes N/A (%s)\n", id,
                        d->process_count.why ? d->process_count.why : "not read");
            continue;
        }
        for (size_t k = 0; k < d->nprocs && d->proc_first + k < s->nprocs; k++) {
            const struct gpu_process *p = &s->procs[d->proc_first + k];
            char mem[32], sm[16], mu[16], cpu[16], cmd[80];
            table_fmt_metric(mem, sizeof(mem), &p->mem_bytes, 1.0 / (1024 * 1024), 0, "MiB");
            table_fmt_metric(sm, sizeof(sm), &p->sm_util, 1, 0, "");
            table_fmt_metric(mu, sizeof(mu), &p->mem_util, 1, 0, "");
            table_fmt_metric(cpu, sizeof(cpu), &p->cpu_pct, 1, 1, "");
            if (p->command[0])
                snprintf(cmd, sizeof(cmd), "%.*s", cmd_w < 79 ? cmd_w : 79, p->command);
            else if (p->name[0])
                snprintf(cmd, sizeof(cmd), "[%.63s]", p->name);
            else
                snprintf(cmd, sizeof(cmd), "N/A (not visible from here)");
            if ((int)strlen(cmd) > cmd_w && cmd_w > 3) /* cut to the width, marked */
                snprintf(cmd + cmd_w - 3, sizeof(cmd) - (size_t)(cmd_w - 3), "...");
            fprintf(f, "%-6s %8u %-5s %9s%s %4s %4s %6s %-10.10s %s%s\n", id, p->pid,
                    proc_type_name(p->type), mem, p->carried ? "*" : " ", sm, mu, cpu,
                    p->user[0] ? p->user : "N/A", p->unattributed ? "(unattributed) " : "", cmd);
            rows++;
        }
        if (metric_ok(&d->process_count) && d->process_count.value > (double)d->nprocs &&
            !d->mig_enabled)
            fprintf(f, "%-6s … %.0f more (--top)\n", id,
                    d->process_count.value - (double)d->nprocs);
    }
    if (rows == 0)
        fprintf(f, "no GPU processes\n");
}

void table_write_snapshot(FILE *f, const struct snapshot *s)
{
    char ts[40];
    clock_rfc3339(s->wall_ns, ts, sizeof(ts));
    char cuda[32] = "N/A";
    if (s->cuda_driver_version > 0)
        snprintf(cuda, sizeof(cuda), "%d.%d", s->cuda_driver_version / 1000,
                 s->cuda_driver_version % 1000 / 10);
    fprintf(f, "mig-gpu-mon %s  %s\ndriver %s  CUDA %s  NVML %s\n", MIGMON_VERSION, ts,
            s->driver_version[0] ? s->driver_version : "N/A", cuda,
            s->nvml_version[0] ? s->nvml_version : "N/A");
    write_host(f, s);
    if (!s->gpu_ok) {
        fprintf(f, "gpu: N/A\n%s\n", s->gpu_error);
        return;
    }
    if (s->ndevices == 0) {
        fprintf(f, "gpu: no NVIDIA GPU found by the driver\n");
        return;
    }
    int width = out_width(f);
    name_w = width >= 100 ? 32 : 20;
    vram_w = width >= 100 ? 24 : 18;
    power_w = width >= 100 ? 11 : 9;
    nvlink_w = width >= 100 ? 21 : 18;
    cmd_w = width > 62 ? width - 62 : 20;
    fprintf(f, "%-6s %-*s %5s %5s %5s %*s %5s %*s\n", "ID", name_w, "DEVICE", "GPU", "MEM", "SM",
            vram_w, "VRAM USED/TOTAL", "TEMP", power_w, "POWER");
    for (size_t i = 0; i < s->ndevices; i++)
        write_device_row(f, &s->devices[i]);
    write_gpm(f, s);
    write_processes(f, s);
    fprintf(f, "N/A = not available from the driver; ~ = estimate; * = carried;\n"
               "^ = GPU-wide value, see the parent row\n");
    bool gpm = false;
    for (size_t i = 0; i < s->ndevices; i++)
        gpm = gpm || s->devices[i].m[M_GPU_UTIL].src == MSRC_GPM;
    if (gpm)
        fprintf(f, "GPU/MEM/SM of MIG-mode devices come from GPM: graphics activity, DRAM\n"
                   "bandwidth and SM activity of the instance (docs/mig-utilisation.md)\n");
}
