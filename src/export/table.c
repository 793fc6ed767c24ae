#include "export/table.h"

#include <math.h>
#include <string.h>

#include "clock.h"

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

static void write_device_row(FILE *f, const struct device *d)
{
    char id[32], name[128], util[32], mem[32], sm[32], vram[96], temp[32], pw[80], pl[32];
    if (d->kind == DEV_MIG)
        snprintf(id, sizeof(id), "%d/%d", d->index, d->mig_index);
    else
        snprintf(id, sizeof(id), "%d", d->index);
    if (d->kind == DEV_MIG)
        snprintf(name, sizeof(name), "  MIG %.31s GI %d CI %d", d->profile[0] ? d->profile : "?",
                 d->gi_id, d->ci_id);
    else
        snprintf(name, sizeof(name), "%s", d->name[0] ? d->name : "(unknown)");
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
        table_fmt_metric(pw, sizeof(pw), &d->m[M_POWER], 1, 0, "");
        table_fmt_metric(pl, sizeof(pl), &d->m[M_POWER_LIMIT], 1, 0, "W");
        size_t n = strlen(pw);
        snprintf(pw + n, sizeof(pw) - n, "/%s", pl);
    }
    fprintf(f, "%-6s %-32.32s %5s %5s %5s %24s %5s %11s\n", id, name, util, mem, sm, vram, temp,
            pw);
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

void table_write_snapshot(FILE *f, const struct snapshot *s)
{
    char ts[40];
    clock_rfc3339(s->wall_ns, ts, sizeof(ts));
    fprintf(f, "mig-gpu-mon %s  %s  driver %s  NVML %s\n", MIGMON_VERSION, ts,
            s->driver_version[0] ? s->driver_version : "N/A",
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
    fprintf(f, "%-6s %-32s %5s %5s %5s %24s %5s %11s\n", "ID", "DEVICE", "GPU", "MEM", "SM",
            "VRAM USED/TOTAL", "TEMP", "POWER");
    for (size_t i = 0; i < s->ndevices; i++)
        write_device_row(f, &s->devices[i]);
    fprintf(f, "N/A = not available from the driver; ~ = estimate; * = carried; "
               "^ = GPU-wide value, see the parent row\n");
}
