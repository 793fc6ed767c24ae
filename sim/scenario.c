/*
 * scenario.c — reads a scenario INI file (inih) into struct sim_scenario.
 *
 * Sections: [system], [gpu.N] or [gpu.N-M] (a key in a range applies to
 * every GPU in it; later sections override earlier ones), [gpu.R.mig.S] or
 * [gpu.R.mig.S-T] with an optional "/tag" to give one slot several MIG
 * devices over time, [process.NAME], [fault.NAME], [dcgm] (scenario_dcgm.c).
 * Most keys are table-driven (scenario_keys.c); docs/simulator.md lists them with their meaning
 * and defaults.
 * Cross-field defaults and checks are in scenario_check.c.
 */
#include "scenario.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "errors.h"
#include "scenario_check.h"
#include "scenario_events.h"
#include "scenario_keys.h"
#include "scenario_values.h"

struct ctx {
    struct sim_scenario *s;
    FILE *file;
    int line;       /* the line inih is on (counted by read_line) */
    bool line_start; /* the next read starts a new line */
    bool failed;
    int err_line;
    char err[320];
    /* The first key (or value) that only a hostile scenario may use: checked
     * once the whole file is read, so [system] may come anywhere. */
    int hostile_line;
    char hostile_what[160];
};

/* Notes that this line needs [system] hostile = true (see scenario_load). */
static void needs_hostile(struct ctx *c, const char *section, const char *what)
{
    if (!c->hostile_line) {
        c->hostile_line = c->line;
        snprintf(c->hostile_what, sizeof(c->hostile_what), "[%s] %s", section, what);
    }
}

static int fail(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct ctx *c, const char *fmt, ...)
{
    va_list ap;
    if (!c->failed) {
        va_start(ap, fmt);
        vsnprintf(c->err, sizeof(c->err), fmt, ap);
        va_end(ap);
        c->failed = true;
        c->err_line = c->line;
    }
    return 0; /* inih: this line is an error */
}

/* A raw key's value: its bytes, or a load error naming the line. */
static int raw_key(struct ctx *c, const char *section, const char *name, const char *value,
                   struct sim_raw *out)
{
    char rerr[120];
    needs_hostile(c, section, name);
    if (scenario_parse_raw(value, out, rerr, sizeof(rerr)) != 0)
        return fail(c, "[%s] %s: %s", section, name, rerr);
    return 1;
}

/* A GPM rate: a value function, or "nan" (the driver reports NaN for it). */
static int gpm_value(struct ctx *c, const char *section, struct valfn *f, const char *name,
                     const char *value)
{
    char verr[240];
    if (!strcasecmp(value, "nan")) {
        valfn_set_nan(f);
        return 1;
    }
    if (valfn_parse(f, value, verr, sizeof(verr)) != 0)
        return fail(c, "[%s] %s: %s (or nan)", section, name, verr);
    return 1;
}

/* A key of a table (scenario_keys.c): 1 if applied, 0 on a bad value
 * (message set), -1 if the key is unknown. */
static int apply_key(struct ctx *c, enum scenario_table table, void *obj, const char *section,
                     const char *name, const char *value)
{
    char kerr[sizeof(c->err)];
    int r = scenario_keys_apply(table, obj, section, name, value, kerr, sizeof(kerr));
    return r == 0 ? fail(c, "%s", kerr) : r;
}

/* ---- sections ---- */

/* Parses "N" or "N-M" at *sp; advances past it. */
static int parse_range(const char **sp, int *lo, int *hi, int max)
{
    char *end;
    long a = strtol(*sp, &end, 10), b;
    if (end == *sp || a < 0)
        return -1;
    b = a;
    if (*end == '-') {
        const char *s2 = end + 1;
        b = strtol(s2, &end, 10);
        if (end == s2 || b < a)
            return -1;
    }
    if (b >= max)
        return -1;
    *lo = (int)a;
    *hi = (int)b;
    *sp = end;
    return 0;
}

/* Room for entry i of an array of size-byte entries with *cap of them,
 * the new ones zeroed; false when out of memory. */
static bool room_for(void **arr, int *cap, int i, size_t size)
{
    if (i < *cap)
        return true;
    int n = *cap ? *cap : 8;
    while (n <= i)
        n *= 2;
    char *a = realloc(*arr, (size_t)n * size);
    if (!a)
        return false;
    memset(a + (size_t)*cap * size, 0, (size_t)(n - *cap) * size);
    *arr = a;
    *cap = n;
    return true;
}

/* GPU i, defined with its defaults on first use; NULL when out of memory. */
static struct sim_gpu *gpu_at(struct sim_scenario *s, int i)
{
    if (!room_for((void **)&s->gpus, &s->gpus_cap, i, sizeof(*s->gpus)))
        return NULL;
    struct sim_gpu *g = &s->gpus[i];
    if (!g->defined) {
        g->defined = true;
        g->accessible = true;
        g->xid_events = true;
        g->power_average = -1;
        g->mig_mode = g->mig_pending = -2; /* not given */
        g->ecc_mode = g->ecc_pending = -2;
        g->nvlinks = -1;
        if (i + 1 > s->n_gpus)
            s->n_gpus = i + 1;
    }
    return g;
}

/* NULL when there are SIM_MAX_MIGS already, or out of memory. */
static struct sim_mig *mig_at(struct ctx *c, int gpu, int slot, const char *tag)
{
    struct sim_scenario *s = c->s;
    struct sim_mig *m;
    for (int i = 0; i < s->n_migs; i++) {
        m = &s->migs[i];
        if (m->gpu == gpu && m->slot == slot && !strcmp(m->tag, tag))
            return m;
    }
    if (s->n_migs == SIM_MAX_MIGS || !gpu_at(s, gpu) ||
        !room_for((void **)&s->migs, &s->migs_cap, s->n_migs, sizeof(*s->migs)))
        return NULL;
    m = &s->migs[s->n_migs++];
    memset(m, 0, sizeof(*m));
    m->gpu = gpu;
    m->slot = slot;
    snprintf(m->tag, sizeof(m->tag), "%s", tag);
    m->gi = m->ci = -1;
    m->from = -HUGE_VAL;
    m->until = HUGE_VAL;
    return m;
}

static void *named_at(struct ctx *c, bool proc, const char *name)
{
    struct sim_scenario *s = c->s;
    int n = proc ? s->n_procs : s->n_faults;
    for (int i = 0; i < n; i++) {
        const char *nm = proc ? s->procs[i].name : s->faults[i].name;
        if (!strcmp(nm, name))
            return proc ? (void *)&s->procs[i] : (void *)&s->faults[i];
    }
    if (proc) {
        if (n == SIM_MAX_PROCS ||
            !room_for((void **)&s->procs, &s->procs_cap, n, sizeof(*s->procs)))
            return NULL;
        struct sim_proc *p = &s->procs[s->n_procs++];
        memset(p, 0, sizeof(*p));
        snprintf(p->name, sizeof(p->name), "%s", name);
        p->gpu = 0;
        p->slot = -1;
        p->types = SIM_PROC_COMPUTE;
        p->start = -HUGE_VAL;
        p->end = HUGE_VAL;
        return p;
    }
    if (n == SIM_MAX_FAULTS)
        return NULL;
    struct sim_fault *f = &s->faults[s->n_faults++];
    memset(f, 0, sizeof(*f));
    snprintf(f->name, sizeof(f->name), "%s", name);
    snprintf(f->target, sizeof(f->target), "*");
    f->code = -1;
    f->from = -HUGE_VAL;
    f->until = HUGE_VAL;
    f->calls = -1;
    return f;
}

static int system_key(struct ctx *c, const char *name, const char *value)
{
    struct sim_system *y = &c->s->sys;
    if (!strcmp(name, "driver_version")) {
        if (strlen(value) >= sizeof(y->driver) || sim_version_parse(value, &y->drv) != 0)
            return fail(c, "[system] driver_version: expected e.g. 535.129.03, got '%s'", value);
        snprintf(y->driver, sizeof(y->driver), "%s", value);
        return 1;
    }
    if (!strcmp(name, "nvml_version")) {
        if (strlen(value) >= sizeof(y->nvml_version))
            return fail(c, "[system] nvml_version: too long");
        snprintf(y->nvml_version, sizeof(y->nvml_version), "%s", value);
        return 1;
    }
    if (!strcmp(name, "cuda_version")) {
        long v;
        if (scenario_parse_long(value, &v) != 0 || v < 1000 || v > 99999)
            return fail(c, "[system] cuda_version: expected e.g. 12020, got '%s'", value);
        y->cuda_version = (int)v;
        return 1;
    }
    if (!strcmp(name, "driver_version_raw"))
        return raw_key(c, "system", name, value, &y->driver_raw);
    if (!strcmp(name, "nvml_version_raw"))
        return raw_key(c, "system", name, value, &y->nvml_raw);
    if (!strcmp(name, "libcuda") || !strcmp(name, "privileged") ||
        !strcmp(name, "gpm_corrupts_session") || !strcmp(name, "hostile")) {
        bool *b = name[0] == 'l'   ? &y->libcuda
                  : name[0] == 'p' ? &y->privileged
                  : name[0] == 'h' ? &y->hostile
                                   : &y->gpm_corrupts_session;
        if (scenario_parse_bool(value, b) != 0)
            return fail(c, "[system] %s: expected true or false, got '%s'", name, value);
        return 1;
    }
    return fail(c, "[system] unknown key '%s'", name);
}

static int gpu_key(struct ctx *c, const char *section, int lo, int hi, const char *name,
                   const char *value)
{
    for (int i = lo; i <= hi; i++) {
        struct sim_gpu *g = gpu_at(c->s, i);
        if (!g)
            return fail(c, "[%s] out of memory", section);
        int k = scenario_gpm_key_index(name);
        if (!strcmp(name, "pci_bus_id")) {
            unsigned d, b, dv, fn;
            int used = 0;
            if (lo != hi)
                return fail(c, "[%s] pci_bus_id: give it per GPU, not for a range", section);
            if (sscanf(value, "%x:%x:%x.%x%n", &d, &b, &dv, &fn, &used) != 4 || value[used] ||
                b > 0xff || dv > 0x1f)
                return fail(c, "[%s] pci_bus_id: expected 00000000:17:00.0, got '%s'", section,
                            value);
            g->pci_domain = d;
            g->pci_bus = b;
            g->pci_device = dv;
        } else if (!strcmp(name, "architecture")) {
            if (scenario_parse_arch(value, &g->arch) != 0)
                return fail(c, "[%s] architecture: unknown '%s'", section, value);
        } else if (!strcmp(name, "compute_capability")) {
            int used = 0;
            if (sscanf(value, "%d.%d%n", &g->cc_major, &g->cc_minor, &used) != 2 || value[used])
                return fail(c, "[%s] compute_capability: expected e.g. 9.0", section);
        } else if (k >= 0) {
            if (!gpm_value(c, section, &g->gpm[k], name, value))
                return 0;
        } else if (!strcmp(name, "name_raw") || !strcmp(name, "uuid_raw")) {
            if (name[0] == 'u' && lo != hi)
                return fail(c, "[%s] uuid_raw: give it per GPU, not for a range", section);
            if (!raw_key(c, section, name, value, name[0] == 'n' ? &g->name_raw : &g->uuid_raw))
                return 0;
        } else if (!strcmp(name, "memory_total_raw_bytes") ||
                   !strcmp(name, "memory_used_raw_bytes") ||
                   !strcmp(name, "memory_free_raw_bytes")) {
            char w = name[7]; /* t, u or f */
            unsigned long long *v = w == 't' ? &g->mem_total_raw
                                    : w == 'u' ? &g->mem_used_raw
                                               : &g->mem_free_raw;
            needs_hostile(c, section, name);
            if (scenario_parse_ull(value, v) != 0)
                return fail(c, "[%s] %s: expected bytes (0 to 18446744073709551615), got '%s'",
                            section, name, value);
            *(w == 't' ? &g->mem_total_raw_set
              : w == 'u' ? &g->mem_used_raw_set
                         : &g->mem_free_raw_set) = true;
        } else if (!strcmp(name, "procs_insufficient_storm")) {
            needs_hostile(c, section, name);
            if (scenario_parse_bool(value, &g->procs_storm) != 0)
                return fail(c, "[%s] %s: expected true or false, got '%s'", section, name,
                            value);
        } else if (!strcmp(name, "mig_profiles")) {
            g->profiles = profiles_find_set(value);
            if (!g->profiles)
                return fail(c, "[%s] mig_profiles: unknown '%s' (known: %s)", section, value,
                            profiles_set_names());
        } else {
            if (!strcmp(name, "uuid") && lo != hi)
                return fail(c, "[%s] uuid: give it per GPU, not for a range", section);
            int r = apply_key(c, SCENARIO_KEYS_GPU, g, section, name, value);
            if (r < 0)
                return fail(c, "[%s] unknown key '%s'", section, name);
            if (r == 0)
                return 0;
        }
    }
    return 1;
}

/* gi / ci: "7" or, in a slot range, "7+" = 7 for the first slot, +1 per slot. */
static int mig_id_key(struct ctx *c, const char *section, struct sim_mig *m, int offset,
                      const char *name, const char *value)
{
    char buf[32];
    size_t n = strlen(value);
    unsigned v;
    bool inc = n > 0 && value[n - 1] == '+';
    if (n >= sizeof(buf))
        return fail(c, "[%s] %s: bad value '%s'", section, name, value);
    memcpy(buf, value, n + 1);
    if (inc)
        buf[n - 1] = '\0';
    if (scenario_parse_uint(buf, &v) != 0)
        return fail(c, "[%s] %s: expected an id, or N+ in a slot range, got '%s'", section, name,
                    value);
    *(name[0] == 'g' ? &m->gi : &m->ci) = (long)v + (inc ? offset : 0);
    return 1;
}

static int mig_key(struct ctx *c, const char *section, int glo, int ghi, int slo, int shi,
                   const char *tag, const char *name, const char *value)
{
    for (int g = glo; g <= ghi; g++) {
        for (int sl = slo; sl <= shi; sl++) {
            struct sim_mig *m = mig_at(c, g, sl, tag);
            if (!m && c->s->n_migs == SIM_MAX_MIGS)
                return fail(c, "[%s] more than %d MIG device definitions", section,
                            SIM_MAX_MIGS);
            if (!m)
                return fail(c, "[%s] out of memory", section);
            if (!strcmp(name, "gi") || !strcmp(name, "ci")) {
                if (!mig_id_key(c, section, m, sl - slo, name, value))
                    return 0;
                continue;
            }
            int k = scenario_gpm_key_index(name);
            if (k >= SIM_GPM_N_UTIL)
                return fail(c, "[%s] %s: a GPU-wide rate; give it in [gpu.%d]", section, name, g);
            if (k >= 0) {
                if (!gpm_value(c, section, &m->gpm[k], name, value))
                    return 0;
                continue;
            }
            if (!strcmp(name, "uuid") && (glo != ghi || slo != shi))
                return fail(c, "[%s] uuid: give it per MIG device, not for a range", section);
            int r = apply_key(c, SCENARIO_KEYS_MIG, m, section, name, value);
            if (r < 0)
                return fail(c, "[%s] unknown key '%s'", section, name);
            if (r == 0)
                return 0;
        }
    }
    return 1;
}

static int proc_key(struct ctx *c, const char *section, struct sim_proc *p, const char *name,
                    const char *value)
{
    if (!strcmp(name, "gpu") || !strcmp(name, "mig")) {
        long v;
        if (scenario_parse_long(value, &v) != 0 || v < 0 || v >= (name[0] == 'g' ? SIM_MAX_GPUS
                                                                          : SIM_MAX_MIG_SLOTS))
            return fail(c, "[%s] %s: bad index '%s'", section, name, value);
        *(name[0] == 'g' ? &p->gpu : &p->slot) = (int)v;
        return 1;
    }
    if (!strcmp(name, "pid")) {
        if (scenario_parse_uint(value, &p->pid) != 0)
            return fail(c, "[%s] pid: bad value '%s'", section, value);
        p->pid_given = true;
        if (p->pid == 0)
            needs_hostile(c, section, "pid = 0");
        return 1;
    }
    if (!strcmp(name, "used_raw_bytes")) {
        needs_hostile(c, section, name);
        if (scenario_parse_ull(value, &p->used_raw) != 0)
            return fail(c, "[%s] %s: expected bytes (0 to 18446744073709551615), got '%s'",
                        section, name, value);
        p->used_raw_set = true;
        return 1;
    }
    if (!strcmp(name, "type")) {
        unsigned t = 0;
        char buf[64], *tok, *save = NULL;
        snprintf(buf, sizeof(buf), "%s", value);
        for (tok = strtok_r(buf, "+, ", &save); tok; tok = strtok_r(NULL, "+, ", &save)) {
            if (!strcasecmp(tok, "compute") || !strcasecmp(tok, "C"))
                t |= SIM_PROC_COMPUTE;
            else if (!strcasecmp(tok, "graphics") || !strcasecmp(tok, "G"))
                t |= SIM_PROC_GRAPHICS;
            else if (!strcasecmp(tok, "mps"))
                t |= SIM_PROC_MPS;
            else
                return fail(c, "[%s] type: expected compute, graphics, mps or a + of them",
                            section);
        }
        if (!t)
            return fail(c, "[%s] type: empty", section);
        p->types = t;
        return 1;
    }
    int r = apply_key(c, SCENARIO_KEYS_PROC, p, section, name, value);
    return r < 0 ? fail(c, "[%s] unknown key '%s'", section, name) : r;
}

static int fault_key(struct ctx *c, const char *section, struct sim_fault *f, const char *name,
                     const char *value)
{
    if (!strcmp(name, "return")) {
        if (sim_error_parse(value, &f->code) != 0)
            return fail(c, "[%s] return: unknown nvmlReturn_t '%s'", section, value);
        return 1;
    }
    int r = apply_key(c, SCENARIO_KEYS_FAULT, f, section, name, value);
    return r < 0 ? fail(c, "[%s] unknown key '%s'", section, name) : r;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    struct ctx *c = user;
    const char *p;
    int lo, hi;

    if (!strcmp(section, "system"))
        return system_key(c, name, value);
    if (!strcmp(section, "dcgm")) {
        char derr[240];
        if (scenario_dcgm_key(&c->s->dcgm, name, value, derr, sizeof(derr)) != 0)
            return fail(c, "%s", derr);
        return 1;
    }
    if (!strcmp(section, "events") || !strncmp(section, "event.", 6)) {
        char eerr[240];
        if (scenario_events_key(c->s, section, name, value, eerr, sizeof(eerr)) != 0)
            return fail(c, "%s", eerr);
        return 1;
    }
    if (!strncmp(section, "process.", 8) || !strncmp(section, "fault.", 6)) {
        bool proc = section[0] == 'p';
        const char *nm = section + (proc ? 8 : 6);
        void *obj;
        if (!*nm || strlen(nm) >= 32)
            return fail(c, "[%s] the name after the dot must be 1-31 characters", section);
        obj = named_at(c, proc, nm);
        if (!obj && (proc ? c->s->n_procs == SIM_MAX_PROCS : c->s->n_faults == SIM_MAX_FAULTS))
            return fail(c, "[%s] too many %s sections (at most %d)", section,
                        proc ? "process" : "fault", proc ? SIM_MAX_PROCS : SIM_MAX_FAULTS);
        if (!obj)
            return fail(c, "[%s] out of memory", section);
        return proc ? proc_key(c, section, obj, name, value)
                    : fault_key(c, section, obj, name, value);
    }
    if (!strncmp(section, "gpu.", 4)) {
        p = section + 4;
        if (parse_range(&p, &lo, &hi, SIM_MAX_GPUS) != 0)
            return fail(c, "[%s] expected gpu.N or gpu.N-M with N < %d", section, SIM_MAX_GPUS);
        if (*p == '\0')
            return gpu_key(c, section, lo, hi, name, value);
        if (!strncmp(p, ".mig.", 5)) {
            int slo, shi;
            const char *tag = "";
            p += 5;
            if (parse_range(&p, &slo, &shi, SIM_MAX_MIG_SLOTS) != 0)
                return fail(c, "[%s] expected mig.S or mig.S-T with S < %d", section,
                            SIM_MAX_MIG_SLOTS);
            if (*p == '/' && p[1] && strlen(p + 1) < 24)
                tag = p + 1;
            else if (*p)
                return fail(c, "[%s] expected an optional /tag after the slot", section);
            return mig_key(c, section, lo, hi, slo, shi, tag, name, value);
        }
    }
    return fail(c, "[%s] unknown section (expected system, gpu.N, gpu.N.mig.S, process.NAME, "
                   "fault.NAME or dcgm)",
                section);
}

/* fgets for inih that counts lines (inih passes handlers no line numbers)
 * and rejects lines longer than inih's 200-byte buffer instead of letting
 * their tail parse as a line of its own. */
static char *read_line(char *str, int num, void *stream)
{
    struct ctx *c = stream;
    char *s = fgets(str, num, c->file);
    if (!s)
        return NULL;
    if (c->line_start)
        c->line++;
    c->line_start = strchr(s, '\n') != NULL;
    if (!c->line_start && !feof(c->file)) {
        int ch;
        fail(c, "line longer than %d characters", num - 2);
        while ((ch = fgetc(c->file)) != EOF && ch != '\n')
            ;
        c->line_start = true;
    }
    return s;
}

struct sim_scenario *scenario_load(const char *path, const char *driver_override, char *err,
                                   size_t errlen)
{
    struct ctx c = {0};
    int rc;

    c.s = calloc(1, sizeof(*c.s));
    if (!c.s) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    snprintf(c.s->path, sizeof(c.s->path), "%s", path);
    c.s->sys.libcuda = true;
    c.file = fopen(path, "r");
    if (!c.file) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        goto fail;
    }
    c.line_start = true;
    rc = ini_parse_stream(read_line, &c, handler, &c);
    fclose(c.file);
    /* Report whichever came first: inih's syntax error or ours. */
    if (rc > 0 && (!c.failed || rc < c.err_line)) {
        snprintf(err, errlen, "%s:%d: syntax error (expected [section] or key = value)", path,
                 rc);
        goto fail;
    }
    if (rc < 0 && !c.failed) {
        snprintf(err, errlen, "%s: cannot parse (inih error %d)", path, rc);
        goto fail;
    }
    if (rc != 0 || c.failed) {
        snprintf(err, errlen, "%s:%d: %s", path, c.err_line, c.err);
        goto fail;
    }
    if (c.hostile_line && !c.s->sys.hostile) {
        snprintf(err, errlen, "%s:%d: %s: only in a hostile scenario ([system] hostile = true)",
                 path, c.hostile_line, c.hostile_what);
        goto fail;
    }
    if (scenario_finish(c.s, driver_override, c.err, sizeof(c.err)) != 0 ||
        scenario_events_finish(c.s, c.err, sizeof(c.err)) != 0) {
        snprintf(err, errlen, "%s: %s", path, c.err);
        goto fail;
    }
    return c.s;
fail:
    scenario_free(c.s);
    return NULL;
}

void scenario_free(struct sim_scenario *s)
{
    if (!s)
        return;
    free(s->gpus);
    free(s->migs);
    free(s->procs);
    free(s->events.ev);
    free(s);
}
