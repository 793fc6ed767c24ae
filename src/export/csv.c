#include "export/csv.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "core/clock.h"
#include "export/numfmt.h"

/* A cell a spreadsheet would take for a formula (OWASP's "CSV injection"
 * list: = + - @ and the tab and carriage return that some tools strip
 * first). */
static bool formula_start(char c)
{
    return c == '=' || c == '+' || c == '-' || c == '@' || c == '\t' || c == '\r';
}

size_t csv_quote(char *out, size_t cap, const char *s)
{
    size_t len = strlen(s);
    bool formula = len > 0 && formula_start(s[0]);
    bool q = formula || (len > 0 && (s[0] == ' ' || s[len - 1] == ' '));
    for (const char *p = s; *p && !q; p++)
        q = *p == ',' || *p == '"' || *p == '\n' || *p == '\r';
    size_t n = 0;
#define PUT(c)                                                                                     \
    do {                                                                                           \
        if (n + 1 < cap)                                                                           \
            out[n] = (c);                                                                          \
        n++;                                                                                       \
    } while (0)
    if (q)
        PUT('"');
    if (formula)
        PUT('\''); /* shown as text: the quote is what the spreadsheet hides */
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            PUT('"');
        PUT(*p);
    }
    if (q)
        PUT('"');
#undef PUT
    if (cap > 0)
        out[n < cap ? n : cap - 1] = '\0';
    return n;
}

/* The identity columns before the metrics. */
static const char *const id_cols[] = {
    "timestamp", "elapsed_ns", "kind", "index", "mig_index", "uuid", "parent_uuid", "name",
    "pci_bus_id", "architecture", "profile", "gpu_instance_id", "compute_instance_id", "lost",
    "stall",
};

/* Each value column is followed by its source column, "<name>_source". */
void csv_write_header(FILE *f)
{
    for (size_t i = 0; i < sizeof(id_cols) / sizeof(id_cols[0]); i++)
        fprintf(f, "%s%s", i ? "," : "", id_cols[i]);
    for (int k = 0; k < M_COUNT; k++) {
        const char *name = metric_info((enum metric_id)k)->name;
        fprintf(f, ",%s,%s_source", name, name);
    }
    fputs(",process_count,process_count_source,node\n", f);
}

static void col_str(FILE *f, const char *s)
{
    char buf[4 * MIGMON_NAME_LEN + 1024];
    fputc(',', f);
    if (!s || !*s)
        return;
    if (csv_quote(buf, sizeof(buf), s) < sizeof(buf))
        fputs(buf, f);
}

static void col_int(FILE *f, int v)
{
    fputc(',', f);
    if (v >= 0)
        fprintf(f, "%d", v);
}

/*
 * A value and its source: the word JSON gives ("direct", "gpm", "process",
 * "estimate", "carried"), "none" beside an empty value. On a MIG row a
 * GPU-wide value is the parent's: it is on the GPU row just above, so here
 * the value is left empty and the source says "parent" (JSON's scope). A
 * copy on every instance's row would count a GPU once per MIG device in any
 * sum over rows (power, energy, PCIe and NVLink traffic).
 */
static void col_metric(FILE *f, const struct metric *m, bool parents)
{
    char b[64];
    if (parents) {
        fputs(",,parent", f);
        return;
    }
    bool ok = metric_ok(m) && numfmt_double(b, sizeof(b), m->value);
    fprintf(f, ",%s,%s", ok ? b : "", ok ? metric_source_name(m->src) : "none");
}

void csv_write_rows(FILE *f, const struct snapshot *s)
{
    char ts[40];
    clock_rfc3339(s->wall_ns, ts, sizeof(ts));
    for (size_t i = 0; i < s->ndevices; i++) {
        const struct device *d = &s->devices[i];
        fprintf(f, "%s,%" PRIu64 ",%s,%d", ts, s->elapsed_ns, d->kind == DEV_MIG ? "mig" : "gpu",
                d->index);
        col_int(f, d->mig_index);
        col_str(f, d->uuid);
        col_str(f, d->parent_uuid);
        col_str(f, d->name);
        col_str(f, d->pci_bus_id);
        col_str(f, d->arch);
        col_str(f, d->profile);
        col_int(f, d->gi_id);
        col_int(f, d->ci_id);
        fputs(d->inaccessible ? "," : d->lost ? ",1" : ",0", f);
        col_str(f, d->stall);
        for (int k = 0; k < M_COUNT; k++)
            col_metric(f, &d->m[k],
                       d->kind == DEV_MIG && metric_info((enum metric_id)k)->gpu_wide);
        col_metric(f, &d->process_count, false);
        col_str(f, d->node); /* a fleet's device (--prometheus): its node */
        fputc('\n', f);
    }
}
