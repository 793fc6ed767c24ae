/*
 * detail.c — the detail panel (detail.h): every value of the selected
 * device on a line of its own, the key lines first, paired two to a row on
 * a wide panel; and the GPM page (key g), every GPM metric with its source
 * or why it is N/A.
 *
 * Conventions as in panels.c: "N/A" (dim) for a value that could not be
 * read; "~" before an estimate; "*" after a carried value; a dim
 * "gpm"/"proc" tag after values from GPM or per-process samples; on a MIG
 * device the lines holding the parent GPU's values end in a dim "[GPU n]".
 */
#include "tui/detail.h"
#include "tui/fleet_view.h"
#include "tui/node_detail.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/health_rules.h"
#include "core/units.h"
#include "engine/proclist.h"
#include "tui/health_ui.h"

/* ---- the GPM page ---- */

/* Rows of the detail panel. On a wide panel (>= 90 columns) the shorter
 * lines (clocks … throttle) go two to a row, so every metric fits in the
 * seed's 50 % of the GPU panel on a 200x60 terminal. */
struct detail_cursor {
    struct rect in;
    int y;
    int col; /* 1: the left half of row y is taken */
    bool two;
};

static void detail_line(WINDOW *win, const struct tui_view *v, struct detail_cursor *c,
                        bool pairable, const struct piece *p, size_t n)
{
    struct rect r = c->in;
    int half = (c->in.w - 2) / 2;
    if (pairable && c->two) {
        if (c->col == 0) {
            r.w = half;
            c->col = 1;
        } else {
            r.x += half + 2;
            r.w = c->in.w - half - 2;
            c->col = 0;
        }
    } else if (c->col == 1) {
        c->y++;
        c->col = 0;
    }
    if (c->y >= c->in.y + c->in.h)
        return;
    r.y = c->y;
    r.h = 1;
    tui_line(win, v, r, c->y, p, n);
    if (c->col == 0)
        c->y++;
}

/* The GPM page (key g): every GPM metric of the selected device, one per
 * line with its source, or N/A with the reason. */
static void draw_detail_gpm(WINDOW *win, const struct tui_view *v, struct rect in,
                            const struct device *d)
{
    static const struct {
        enum metric_id id;
        const char *label;
    } rows[] = {
        {M_GPU_UTIL, "Graphics activity"}, {M_SM_UTIL, "SM activity"},
        {M_SM_OCCUPANCY, "SM occupancy"},  {M_MEM_UTIL, "MemBW (DRAM)"},
        {M_TENSOR_UTIL, "Tensor (any)"},   {M_HMMA_TENSOR_UTIL, "Tensor HMMA"},
        {M_IMMA_TENSOR_UTIL, "Tensor IMMA"}, {M_DFMA_TENSOR_UTIL, "Tensor DFMA"},
        {M_FP64_UTIL, "FP64"},             {M_FP32_UTIL, "FP32"},
        {M_FP16_UTIL, "FP16"},             {M_INT_UTIL, "Integer"},
        {M_NVLINK_TX, "NVLink TX"},        {M_NVLINK_RX, "NVLink RX"},
        {M_PCIE_TX, "PCIe TX"},            {M_PCIE_RX, "PCIe RX"},
    };
    struct detail_cursor cur = {.in = in, .y = in.y, .col = 0, .two = in.w >= 90};
    char gpu_mark[24]; /* the same marker as the detail panel's */
    snprintf(gpu_mark, sizeof(gpu_mark), " [GPU %d]", d->index);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct metric *m = &d->m[rows[i].id];
        /* On a full GPU the utilisation and memory rows are NVML's direct
         * readings, not GPM's: say which. */
        char val[48], label[32], note[160];
        bool rate = strcmp(metric_info(rows[i].id)->unit, "B/s") == 0;
        if (!metric_ok(m))
            snprintf(val, sizeof(val), "N/A");
        else if (rate)
            tui_fmt_rate(val, sizeof(val), m);
        else
            tui_fmt_pct(val, sizeof(val), m, 1);
        snprintf(label, sizeof(label), "%-18s", rows[i].label);
        const char *scope = "";
        if (d->kind == DEV_MIG && metric_info(rows[i].id)->gpu_wide)
            scope = gpu_mark;
        else if (m->scope == MSCOPE_GPU_INSTANCE)
            scope = " [GPU instance]";
        if (metric_ok(m))
            snprintf(note, sizeof(note), " %s%s", metric_source_name(m->src), scope);
        else
            snprintf(note, sizeof(note), " %s", m->why ? m->why : "");
        struct piece p[] = {{R_NORMAL, label}, {tui_na_or(m, R_NORMAL), val}, {R_FREE, note}};
        detail_line(win, v, &cur, metric_ok(m), p, 3);
    }
}

/* ---- detail ---- */

static const char *dl_str(struct tui_dlines *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *dl_str(struct tui_dlines *L, const char *fmt, ...)
{
    char *out = L->buf + L->used;
    size_t room = sizeof(L->buf) - L->used;
    if (room < 2)
        return "";
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, room, fmt, ap);
    va_end(ap);
    if (n < 0)
        return "";
    L->used += (size_t)n < room ? (size_t)n + 1 : room;
    return out;
}

/* The strings up to a NULL, one after another: dl_str's "%s%s…" without
 * printf (a detail panel is built every frame, about thirty strings). */
static const char *dl_cat_(struct tui_dlines *L, ...)
{
    char *out = L->buf + L->used;
    size_t room = sizeof(L->buf) - L->used, n = 0;
    if (room < 2)
        return "";
    va_list ap;
    va_start(ap, L);
    for (const char *p; (p = va_arg(ap, const char *)) != NULL;) {
        size_t k = strlen(p);
        if (k > room - 1 - n)
            k = room - 1 - n;
        memcpy(out + n, p, k);
        n += k;
    }
    va_end(ap);
    out[n] = '\0';
    L->used += n + 1;
    return out;
}
#define dl_cat(L, ...) dl_cat_((L), __VA_ARGS__, (const char *)NULL)

/* sep and s appended to last, the string dl_cat just returned (nothing
 * when last is not the newest string of L: the buffer was full). */
static void dl_join(struct tui_dlines *L, const char *last, const char *sep, const char *s)
{
    size_t n = strlen(last);
    if (last + n + 1 != L->buf + L->used)
        return;
    char *end = L->buf + L->used - 1; /* last's NUL */
    size_t room = sizeof(L->buf) - L->used;
    const char *parts[2] = {sep, s};
    for (int i = 0; i < 2; i++) {
        size_t k = strlen(parts[i]);
        if (k > room)
            k = room;
        memcpy(end, parts[i], k);
        end += k;
        room -= k;
        L->used += k;
    }
    *end = '\0';
}

/* pre and v as "%.0f": dl_str's "P%.0f" without printf. */
static const char *dl_whole(struct tui_dlines *L, const char *pre, double v)
{
    char b[48];
    if (!tui_fmt_whole(b, sizeof(b), pre, v, ""))
        return dl_str(L, "%s%.0f", pre, v);
    return dl_cat(L, b);
}

static struct tui_dline *dl_add(struct tui_dlines *L, bool pair)
{
    if (L->n >= (int)(sizeof(L->l) / sizeof(L->l[0])))
        return NULL;
    struct tui_dline *l = &L->l[L->n++];
    l->n = 0;
    l->pair = pair;
    l->opt = 0;
    l->mark = false;
    return l;
}

static void dp(struct tui_dline *l, enum tui_role role, const char *s)
{
    if (l && l->n < (int)(sizeof(l->p) / sizeof(l->p[0])))
        l->p[l->n++] = (struct piece){role, s};
}

/* A piece the line can do without (thresholds, unit words) when narrow. */
static void dp_opt(struct tui_dline *l, enum tui_role role, const char *s)
{
    if (l && l->n < (int)(sizeof(l->p) / sizeof(l->p[0])) && l->n < 32)
        l->opt |= 1u << l->n;
    dp(l, role, s);
}

/* The line's last piece: a MIG device's "[GPU n]" (or nothing). */
static void dp_mark(struct tui_dline *l, const char *par)
{
    if (!par[0])
        return;
    dp(l, R_FREE, par);
    if (l)
        l->mark = true;
}

static void dp_metric(struct tui_dlines *L, struct tui_dline *l, const char *label, const struct metric *m,
                      enum tui_role role)
{
    char b[32];
    dp(l, R_NORMAL, label);
    dp(l, tui_na_or(m, role), dl_cat(L, tui_fmt_pct(b, sizeof(b), m, 0)));
    dp(l, R_FREE, tui_src_tag(m));
}

static const char *first_reason(const struct device *d, const char **label, int *count)
{
    static const struct {
        enum metric_id id;
        const char *label;
    } key[] = {{M_GPU_UTIL, "GPU util"}, {M_MEM_UTIL, "MemBW"}, {M_SM_UTIL, "SM util"},
               {M_MEM_USED, "VRAM"},     {M_TEMP, "Temp"},         {M_POWER, "Power"}};
    const char *why = NULL;
    *count = 0;
    for (size_t i = 0; i < sizeof(key) / sizeof(key[0]); i++) {
        const struct metric *m = &d->m[key[i].id];
        if (metric_ok(m) || !m->why)
            continue;
        if (!why) {
            why = m->why;
            *label = key[i].label;
        }
        (*count)++;
    }
    return why;
}

/* A threshold temperature in the view's unit, without the unit: "89". */
static const char *temp_num(char *out, size_t len, const struct tui_view *v, const struct metric *m)
{
    if (!metric_ok(m))
        snprintf(out, len, "N/A");
    else
        snprintf(out, len, "%.0f", v->fahrenheit ? m->value * 9.0 / 5.0 + 32.0 : m->value);
    return out;
}

/* A fired rule: its name in its level's colour, then what to do. */
static void health_rule_piece(struct tui_dlines *L, struct tui_dline *l,
                              const struct health_rule_info *r)
{
    dp(l, r->level == HEALTH_ACTION ? R_ALARM : R_WARN, r->name);
    dp(l, R_NORMAL, dl_cat(L, ": ", r->action));
}

/* A count with its markers, or N/A: "12", "12*", "N/A". */
static const char *dl_count(struct tui_dlines *L, const struct metric *m)
{
    char b[48];
    return dl_cat(L, tui_fmt_num(b, sizeof(b), m, 1, 0));
}

/* A count's role: N/A dim, above 0 in bad (a count of errors), else ok. */
static enum tui_role count_role(const struct metric *m, enum tui_role ok, enum tui_role bad)
{
    return !metric_ok(m) ? R_FREE : m->value > 0 ? bad : ok;
}

/* ", pending" (alarm) when a flag is set, ", pending N/A" (dim) when it
 * could not be read, nothing when it is clear. */
static void dp_flag(struct tui_dlines *L, struct tui_dline *l, const struct metric *m,
                    const char *word)
{
    if (!metric_ok(m))
        dp(l, R_FREE, dl_cat(L, ", ", word, " N/A"));
    else if (m->value >= 1)
        dp(l, R_ALARM, dl_cat(L, ", ", word));
}

static bool all_none(const struct metric *m, const enum metric_id *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (metric_ok(&m[ids[i]]))
            return false;
    return true;
}

/* Not on this GPU at all: every value none, each because the driver said
 * NOT_SUPPORTED (retired pages on Ampere and later, remapped rows in MIG
 * mode). Such a line is left out; the Why N/A overlay (i) still lists it. */
static bool not_here(const struct metric *m, const enum metric_id *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (metric_ok(&m[ids[i]]) || !m[ids[i]].why || !strstr(m[ids[i]].why, "NOT_SUPPORTED"))
            return false;
    return true;
}

/* "12 corr, 0 unc, pending": rows remapped (Ampere and later) */
static void remap_line(struct tui_dlines *L, const struct metric *m, const char *par)
{
    static const enum metric_id remap[] = {M_REMAP_CORR, M_REMAP_UNCORR, M_REMAP_PENDING,
                                           M_REMAP_FAILURE};
    if (not_here(m, remap, 4))
        return;
    struct tui_dline *l = dl_add(L, true);
    dp(l, R_NORMAL, "Remapped rows ");
    if (all_none(m, remap, 4)) {
        dp(l, R_FREE, "N/A");
    } else {
        dp(l, tui_na_or(&m[M_REMAP_CORR], R_NORMAL), dl_count(L, &m[M_REMAP_CORR]));
        dp(l, R_NORMAL, " corr, ");
        dp(l, count_role(&m[M_REMAP_UNCORR], R_NORMAL, R_WARN), dl_count(L, &m[M_REMAP_UNCORR]));
        dp(l, R_NORMAL, " unc");
        dp_flag(L, l, &m[M_REMAP_PENDING], "pending");
        dp_flag(L, l, &m[M_REMAP_FAILURE], "failed");
    }
    dp_mark(l, par);
}

/* pages retired (before Ampere) */
static void retired_line(struct tui_dlines *L, const struct metric *m, const char *par)
{
    static const enum metric_id retired[] = {M_RETIRED_SBE, M_RETIRED_DBE, M_RETIRED_PENDING};
    if (not_here(m, retired, 3))
        return;
    struct tui_dline *l = dl_add(L, true);
    dp(l, R_NORMAL, "Retired pages ");
    if (all_none(m, retired, 3)) {
        dp(l, R_FREE, "N/A");
    } else {
        dp(l, tui_na_or(&m[M_RETIRED_SBE], R_NORMAL), dl_count(L, &m[M_RETIRED_SBE]));
        dp(l, R_NORMAL, " SBE, ");
        dp(l, count_role(&m[M_RETIRED_DBE], R_NORMAL, R_WARN), dl_count(L, &m[M_RETIRED_DBE]));
        dp(l, R_NORMAL, " DBE");
        dp_flag(L, l, &m[M_RETIRED_PENDING], "pending");
    }
    dp_mark(l, par);
}

/* The health counters (GPU-wide: a MIG device shows its GPU's), one line
 * per kind, each "N/A" alone when none of its values could be read (left
 * out when the GPU does not have it: not_here), and when none at all
 * could, one "counters N/A" on the verdict's line (when that is the last
 * line so far: ok or unknown) or a line of its own. */
static void health_counters(struct tui_dlines *L, const struct tui_view *v,
                            const struct device *d, const char *par, struct tui_dline *verdict)
{
    const struct metric *m = d->m;
    char a[64];
    struct tui_dline *l;
    static const enum metric_id every[] = {
        M_MEM_TEMP, M_PCIE_REPLAY, M_ECC_CORR_AGG, M_ECC_UNCORR_AGG, M_REMAP_CORR,
        M_REMAP_UNCORR, M_REMAP_PENDING, M_REMAP_FAILURE, M_RETIRED_SBE, M_RETIRED_DBE,
        M_RETIRED_PENDING, M_MEM_RESERVED, M_NVLINK_LINKS_UP, M_NVLINK_CRC_ERRORS,
        M_NVLINK_REPLAY_ERRORS, M_NVLINK_RECOVERY_ERRORS, M_THROTTLE_POWER_S,
        M_THROTTLE_THERMAL_S};
    if (all_none(m, every, sizeof(every) / sizeof(every[0]))) {
        /* on the verdict's line when that is here (ok or unknown) */
        l = verdict ? verdict : dl_add(L, true);
        dp(l, R_NORMAL, verdict ? "  counters " : "Health counters ");
        dp(l, R_FREE, "N/A");
        if (m[M_MEM_TEMP].why)
            dp_opt(l, R_FREE, dl_cat(L, ": ", m[M_MEM_TEMP].why));
        dp_mark(l, par);
        return;
    }
    l = dl_add(L, true);
    dp(l, R_NORMAL, "Mem temp ");
    dp(l, tui_na_or(&m[M_MEM_TEMP], R_NORMAL), dl_cat(L, tui_fmt_temp(a, sizeof(a), v, &m[M_MEM_TEMP])));
    dp(l, R_NORMAL, "  PCIe replays ");
    dp(l, count_role(&m[M_PCIE_REPLAY], R_NORMAL, R_WARN), dl_count(L, &m[M_PCIE_REPLAY]));
    dp_mark(l, par);

    l = dl_add(L, true);
    dp(l, R_NORMAL, "ECC (life) ");
    static const enum metric_id ecc[] = {M_ECC_CORR_AGG, M_ECC_UNCORR_AGG};
    if (all_none(m, ecc, 2)) {
        dp(l, R_FREE, "N/A");
    } else {
        dp(l, R_NORMAL, "corrected ");
        dp(l, tui_na_or(&m[M_ECC_CORR_AGG], R_GOOD), dl_count(L, &m[M_ECC_CORR_AGG]));
        dp(l, R_NORMAL, "  uncorrected ");
        dp(l, count_role(&m[M_ECC_UNCORR_AGG], R_GOOD, R_ALARM), dl_count(L, &m[M_ECC_UNCORR_AGG]));
    }
    dp_mark(l, par);

    remap_line(L, m, par);
    retired_line(L, m, par);

    l = dl_add(L, true);
    dp(l, R_NORMAL, "VRAM reserved ");
    dp(l, tui_na_or(&m[M_MEM_RESERVED], R_NORMAL),
       dl_cat(L, tui_fmt_bytes(a, sizeof(a), &m[M_MEM_RESERVED])));
    dp_mark(l, par);

    l = dl_add(L, true);
    dp(l, R_NORMAL, "NVLink ");
    static const enum metric_id nvl[] = {M_NVLINK_LINKS_UP, M_NVLINK_CRC_ERRORS,
                                         M_NVLINK_REPLAY_ERRORS, M_NVLINK_RECOVERY_ERRORS};
    if (all_none(m, nvl, 4)) {
        dp(l, R_FREE, "N/A");
    } else {
        dp(l, tui_na_or(&m[M_NVLINK_LINKS_UP], R_NORMAL), dl_count(L, &m[M_NVLINK_LINKS_UP]));
        dp(l, R_NORMAL, " up ");
        dp_opt(l, R_NORMAL, " errors");
        dp(l, R_NORMAL, " CRC ");
        dp(l, count_role(&m[M_NVLINK_CRC_ERRORS], R_NORMAL, R_WARN),
           dl_count(L, &m[M_NVLINK_CRC_ERRORS]));
        dp(l, R_NORMAL, " replay ");
        dp(l, count_role(&m[M_NVLINK_REPLAY_ERRORS], R_NORMAL, R_WARN),
           dl_count(L, &m[M_NVLINK_REPLAY_ERRORS]));
        dp(l, R_NORMAL, " recovery ");
        dp(l, count_role(&m[M_NVLINK_RECOVERY_ERRORS], R_NORMAL, R_WARN),
           dl_count(L, &m[M_NVLINK_RECOVERY_ERRORS]));
    }
    dp_mark(l, par);

    /* how long the clocks were held down since the driver loaded */
    l = dl_add(L, true);
    dp(l, R_NORMAL, "Held down by power ");
    const struct metric *hp = &m[M_THROTTLE_POWER_S], *ht = &m[M_THROTTLE_THERMAL_S];
    dp(l, tui_na_or(hp, R_NORMAL),
       metric_ok(hp) ? dl_cat(L, tui_fmt_duration(a, sizeof(a), hp->value),
                              hp->src == MSRC_CARRIED ? "*" : "")
                     : "N/A");
    dp(l, R_NORMAL, "  thermal ");
    dp(l, count_role(ht, R_NORMAL, R_WARN),
       metric_ok(ht) ? dl_cat(L, tui_fmt_duration(a, sizeof(a), ht->value),
                              ht->src == MSRC_CARRIED ? "*" : "")
                     : "N/A");
    dp_opt(l, R_FREE, " since driver load");
    dp_mark(l, par);
}

void tui_detail_build(struct tui_dlines *L, const struct tui_view *v, const struct device *d)
{
    const struct snapshot *s = v->snap;
    const struct tui_glyphs *g = &v->theme.g;
    const struct metric *m = d->m;
    bool mig = d->kind == DEV_MIG;
    char a[64], b[64], c[64];
    struct tui_dline *l;
    L->n = 0;
    L->used = 0; /* every dl_str string of this build comes after this */
    const char *par = mig ? dl_str(L, " [GPU %d]", d->index) : "";

    if (d->stall || d->lost) {
        l = dl_add(L, false);
        if (d->stall)
            dp(l, R_ALARM, d->stall);
        else
            dp(l, R_ALARM, dl_str(L, "GPU lost %.0f s ago: NVML_ERROR_GPU_IS_LOST (fell off the "
                                     "bus?); identity and charts from before", d->lost_for_s));
    }
    /* utilisation */
    /* MemBW: the memory controller's busy time (NVML) or DRAM bandwidth
     * (GPM, tagged gpm): one name for both, never read as VRAM use */
    l = dl_add(L, false);
    dp_metric(L, l, "GPU ", &m[M_GPU_UTIL], R_NORMAL);
    dp_metric(L, l, "  MemBW ", &m[M_MEM_UTIL], R_NORMAL);
    dp_metric(L, l, "  SM ", &m[M_SM_UTIL], R_NORMAL);
    dp_metric(L, l, "  Enc ", &m[M_ENC_UTIL], R_VRAM);
    dp_metric(L, l, "  Dec ", &m[M_DEC_UTIL], R_VRAM);
    /* VRAM */
    struct metric vp = tui_vram_pct(d);
    l = dl_add(L, false);
    dp(l, R_NORMAL, "VRAM ");
    if (metric_ok(&m[M_MEM_USED]) || metric_ok(&m[M_MEM_TOTAL]))
        dp(l, metric_ok(&vp) ? tui_role_vram(vp.value) : R_FREE,
           dl_cat(L, tui_fmt_bytes(a, sizeof(a), &m[M_MEM_USED]), " / ",
                  tui_fmt_bytes(b, sizeof(b), &m[M_MEM_TOTAL]), " (", tui_fmt_pct(c, sizeof(c), &vp, 0),
                  ")"));
    else
        dp(l, R_FREE, "N/A");
    struct metric su, st;
    if (snapshot_mig_vram_sum(s, (size_t)(d - s->devices), &su, &st)) {
        /* NVML gives a MIG-enabled GPU's own memory only with privilege:
         * what its instances hold, said as such */
        dp(l, R_FREE, dl_cat(L, "  ", g->sum, " instances "));
        dp(l, tui_role_vram(100.0 * su.value / st.value),
           dl_cat(L, tui_fmt_bytes(a, sizeof(a), &su), " / ", tui_fmt_bytes(b, sizeof(b), &st)));
    }
    /* temperature and power */
    l = dl_add(L, false);
    bool t_ok = metric_ok(&m[M_TEMP]);
    dp(l, R_NORMAL, "Temp ");
    dp(l, t_ok ? tui_role_temp(m[M_TEMP].value) : R_FREE,
       dl_cat(L, tui_fmt_temp(a, sizeof(a), v, &m[M_TEMP])));
    if (metric_ok(&m[M_TEMP_SLOWDOWN]) || metric_ok(&m[M_TEMP_SHUTDOWN]))
        dp_opt(l, R_FREE, dl_cat(L, " (", g->down, temp_num(a, sizeof(a), v, &m[M_TEMP_SLOWDOWN]), " ",
                             g->cross, temp_num(b, sizeof(b), v, &m[M_TEMP_SHUTDOWN]), ")"));
    dp(l, R_NORMAL, "  Power ");
    dp(l, tui_na_or(&m[M_POWER], R_NORMAL), dl_cat(L, tui_fmt_num(a, sizeof(a), &m[M_POWER], 1, 0),
                                                   metric_ok(&m[M_POWER]) ? " W" : ""));
    dp(l, tui_na_or(&m[M_POWER_LIMIT], R_NORMAL),
       dl_cat(L, " / ", tui_fmt_num(b, sizeof(b), &m[M_POWER_LIMIT], 1, 0),
              metric_ok(&m[M_POWER_LIMIT]) ? " W" : ""));
    dp_mark(l, par);
    /* why a key value is missing: the question MIG users ask first */
    const char *label = NULL;
    int nwhy = 0;
    const char *why = first_reason(d, &label, &nwhy);
    if (why) {
        l = dl_add(L, false);
        dp(l, R_FREE, dl_cat(L, label, " N/A: ", why));
        if (nwhy > 1)
            dp(l, R_FREE, dl_str(L, " (+%d more: i)", nwhy - 1));
    }
    /* the verdict when it asks for something, with its first rule's
     * action; its other rules follow the key lines, aligned under it */
    struct health_rule_info rules[32];
    size_t nrules = d->health >= HEALTH_WARNING ? health_rules_of(d->health_rules, rules, 32) : 0;
    int hw = 0;
    if (d->health >= HEALTH_WARNING) {
        enum tui_role hr = d->health == HEALTH_ACTION ? R_ALARM : R_WARN;
        l = dl_add(L, false);
        const char *verdict = dl_cat(L, "Health ", health_level_name(d->health), "  ");
        hw = tui_text_width(verdict);
        dp(l, hr, verdict);
        if (nrules > 0)
            health_rule_piece(L, l, &rules[0]);
    }
    L->key = L->n;
    for (size_t i = 1; i < nrules; i++) {
        l = dl_add(L, false);
        dp(l, R_NORMAL, dl_str(L, "%*s", hw, ""));
        health_rule_piece(L, l, &rules[i]);
    }

    /* identity */
    l = dl_add(L, false);
    dp(l, R_NORMAL, "Name ");
    if (mig) {
        /* the slice's name (proclist.h), then what it is a part of */
        const struct device *p = d->parent_pos >= 0 ? &s->devices[d->parent_pos] : NULL;
        char name[160], pn[MIGMON_NAME_LEN + 8] = "?";
        proclist_slice_name(name, sizeof(name), d, PROCLIST_SLICE_FULL);
        if (p)
            tui_device_name(pn, sizeof(pn), p, false);
        dp(l, R_SELECTED, dl_cat(L, name));
        if (d->vendor == VENDOR_AMD) /* AMD's words: a partition index, of how many */
            dp(l, R_NORMAL, dl_str(L, "  partition index %d of %zu of GPU %d %s", d->mig_index,
                                   p ? tui_dev_instances(s, (size_t)d->parent_pos) : 0,
                                   d->index, pn));
        else
            dp(l, R_NORMAL, dl_str(L, "  %d/%d slices of GPU %d %s", d->slices,
                                   p ? p->slices_total : -1, d->index, pn));
    } else {
        char nm[MIGMON_NAME_LEN + 8], split[48] = "";
        tui_device_name(nm, sizeof(nm), d, false);
        if (d->mig_enabled && d->vendor == VENDOR_AMD)
            snprintf(split, sizeof(split), "  %zu partitions",
                     tui_dev_instances(s, (size_t)(d - s->devices)));
        else if (d->mig_enabled)
            snprintf(split, sizeof(split), "  MIG on");
        dp(l, R_SELECTED, dl_cat(L, nm));
        dp(l, R_NORMAL, dl_cat(L, "  ", d->pci_bus_id[0] ? d->pci_bus_id : "bus N/A", split));
        if (d->serial[0]) /* a board without one (GeForce) says nothing */
            dp(l, R_NORMAL, dl_cat(L, "  S/N ", d->serial));
    }
    if (!mig && d->has_part_modes) { /* an AMD GPU's partition modes, read only */
        l = dl_add(L, false);
        /* AMD's words: the compute and the memory partition modes, each
         * with the modes the driver lists as ones it can switch to */
        const char *cm = d->part_compute_why ? NULL : d->part_compute_avail;
        const char *mm = d->part_memory_why ? NULL : d->part_memory_avail;
        dp(l, R_NORMAL, "Compute partition ");
        dp(l, d->part_compute[0] ? R_NORMAL : R_FREE, d->part_compute[0] ? d->part_compute : "N/A");
        dp(l, R_NORMAL, "  can switch to ");
        dp(l, cm ? R_NORMAL : R_FREE, cm ? (cm[0] ? cm : "none") : "N/A");
        l = dl_add(L, false);
        dp(l, R_NORMAL, "Memory partition ");
        dp(l, d->part_memory[0] ? R_NORMAL : R_FREE, d->part_memory[0] ? d->part_memory : "N/A");
        dp(l, R_NORMAL, "  can switch to ");
        dp(l, mm ? R_NORMAL : R_FREE, mm ? (mm[0] ? mm : "none") : "N/A");
    }
    if (d->pod.name[0]) { /* a fleet's device: the pod its series name */
        l = dl_add(L, false);
        dp(l, R_NORMAL, "Pod ");
        dp(l, R_SELECTED, dl_cat(L, d->pod.ns, d->pod.ns[0] ? "/" : "", d->pod.name));
        if (d->pod.container[0])
            dp(l, R_NORMAL, dl_cat(L, "  container ", d->pod.container));
    }
    l = dl_add(L, false);
    dp(l, R_NORMAL, "UUID ");
    if (d->uuid[0])
        dp(l, R_NORMAL, d->uuid);
    else
        dp(l, R_FREE, dl_cat(L, "N/A (", d->uuid_why ? d->uuid_why : "not readable", ")"));
    dp(l, R_NORMAL, "  Arch ");
    dp(l, d->arch[0] ? R_NORMAL : R_FREE, d->arch[0] ? d->arch : "N/A");
    dp(l, R_NORMAL, "  CC ");
    if (d->cc_major >= 0)
        dp(l, R_NORMAL, dl_str(L, "%d.%d", d->cc_major, d->cc_minor));
    else
        dp(l, R_FREE, "N/A");

    /* the rest, two to a row on a wide panel */
    l = dl_add(L, true);
    dp(l, R_NORMAL, "Clk ");
    if (!metric_ok(&m[M_CLK_GFX]) && !metric_ok(&m[M_CLK_SM]) && !metric_ok(&m[M_CLK_MEM])) {
        dp(l, R_FREE, "N/A  "); /* not "N/A/N/A/N/A MHz" */
    } else {
        dp(l, R_CPU, dl_cat(L, tui_fmt_num(a, sizeof(a), &m[M_CLK_GFX], 1, 0), "/",
                            tui_fmt_num(b, sizeof(b), &m[M_CLK_SM], 1, 0), "/",
                            tui_fmt_num(c, sizeof(c), &m[M_CLK_MEM], 1, 0), " MHz"));
        dp_opt(l, R_FREE, " gfx/sm/mem");
        dp(l, R_FREE, "  ");
    }
    if (metric_ok(&m[M_PSTATE]))
        dp(l, tui_role_pstate((int)m[M_PSTATE].value), dl_whole(L, "P", m[M_PSTATE].value));
    else
        dp(l, R_FREE, "P-state N/A");
    dp_mark(l, par);
    l = dl_add(L, true);
    dp(l, R_NORMAL, "Energy ");
    if (metric_ok(&m[M_ENERGY]))
        dp(l, R_NORMAL, dl_cat(L, units_energy(a, sizeof(a), m[M_ENERGY].value),
                               m[M_ENERGY].src == MSRC_CARRIED ? "*" : ""));
    else
        dp(l, R_FREE, "N/A");
    dp_opt(l, R_FREE, " since driver load");
    dp_metric(L, l, "  Fan ", &m[M_FAN], R_NORMAL);
    dp_mark(l, par);
    l = dl_add(L, true);
    dp(l, R_NORMAL, "PCIe ");
    if (!metric_ok(&m[M_PCIE_GEN]) && !metric_ok(&m[M_PCIE_WIDTH]))
        dp(l, R_FREE, "N/A"); /* not "GenN/A xN/A" */
    else /* "Gen4 x16", "Gen N/A x16", "Gen4 x N/A" */
        dp(l, R_PCIE, dl_cat(L, metric_ok(&m[M_PCIE_GEN]) ? "Gen" : "Gen ",
                             tui_fmt_num(a, sizeof(a), &m[M_PCIE_GEN], 1, 0),
                             metric_ok(&m[M_PCIE_WIDTH]) ? " x" : " x ",
                             tui_fmt_num(b, sizeof(b), &m[M_PCIE_WIDTH], 1, 0)));
    dp(l, R_NORMAL, "  TX ");
    dp(l, tui_na_or(&m[M_PCIE_TX], R_PCIE), dl_cat(L, tui_fmt_rate(a, sizeof(a), &m[M_PCIE_TX])));
    dp(l, R_NORMAL, "  RX ");
    dp(l, tui_na_or(&m[M_PCIE_RX], R_PCIE), dl_cat(L, tui_fmt_rate(a, sizeof(a), &m[M_PCIE_RX])));
    dp_mark(l, par);
    l = dl_add(L, true);
    bool unc_bad = metric_ok(&m[M_ECC_UNCORR]) && m[M_ECC_UNCORR].value > 0;
    dp(l, R_NORMAL, "ECC ");
    dp(l, tui_na_or(&m[M_ECC_MODE], R_NORMAL),
       !metric_ok(&m[M_ECC_MODE]) ? "N/A" : m[M_ECC_MODE].value ? "on" : "off");
    dp(l, R_NORMAL, "  corrected ");
    dp(l, tui_na_or(&m[M_ECC_CORR], R_GOOD), dl_cat(L, tui_fmt_num(a, sizeof(a), &m[M_ECC_CORR], 1, 0)));
    dp(l, R_NORMAL, "  uncorrected ");
    dp(l, unc_bad ? R_ALARM : tui_na_or(&m[M_ECC_UNCORR], R_GOOD),
       dl_cat(L, tui_fmt_num(b, sizeof(b), &m[M_ECC_UNCORR], 1, 0)));
    dp_mark(l, par);
    l = dl_add(L, false); /* throttle reasons in words take the width */
    dp(l, R_NORMAL, "Processes ");
    dp(l, tui_na_or(&d->process_count, R_NORMAL),
       dl_cat(L, tui_fmt_num(a, sizeof(a), &d->process_count, 1, 0)));
    dp(l, R_NORMAL, "  Throttle ");
    if (d->throttle_valid) {
        /* idle is not a slowdown worth an alarm */
        const char *words[16];
        size_t n = units_throttle_words(d->throttle_mask & ~(uint64_t)1, words, 16);
        const char *tb = n ? dl_cat(L, words[0]) : "none";
        for (size_t i = 1; i < n; i++) /* appended in place: nothing came after tb */
            dl_join(L, tb, ", ", words[i]);
        dp(l, n ? R_ALARM : R_GOOD, tb);
    } else {
        dp(l, R_FREE, "N/A");
    }
    dp_mark(l, par); /* the GPU's clocks are slowed, not the instance's */

    /* health: the verdict when it asks for nothing, then the counters */
    struct tui_dline *verdict = NULL;
    if (d->health < HEALTH_WARNING) {
        l = verdict = dl_add(L, true);
        dp(l, R_NORMAL, "Health ");
        if (d->health == HEALTH_OK) {
            dp(l, R_GOOD, "ok");
        } else {
            dp(l, R_FREE, "unknown");
            dp_opt(l, R_FREE, " (nothing its rules read could be read)");
        }
    }
    health_counters(L, v, d, par, verdict);
}

int tui_detail_rows(const struct tui_dlines *L, int upto, int w)
{
    bool two = w >= 90;
    int rows = 0;
    for (int i = 0; i < upto; i++) {
        if (two && L->l[i].pair && i + 1 < upto && L->l[i + 1].pair)
            i++;
        rows++;
    }
    return rows;
}

/* One detail line in r: when it is too wide, without its optional pieces,
 * and then cut before its marker, which stays whole at the end. */
static void draw_dline(WINDOW *win, const struct tui_view *v, struct rect r, const struct tui_dline *l)
{
    struct piece p[16];
    int n = 0, w = 0, full = 0;
    for (int i = 0; i < l->n; i++)
        full += l->p[i].s ? tui_text_width(l->p[i].s) : 0;
    for (int i = 0; i < l->n; i++) {
        if (full > r.w && i < 32 && (l->opt >> i & 1u))
            continue;
        p[n++] = l->p[i];
        w += p[n - 1].s ? tui_text_width(p[n - 1].s) : 0;
    }
    if (w <= r.w || !l->mark || n < 2) {
        tui_line(win, v, r, r.y, p, (size_t)n);
        return;
    }
    int mw = tui_text_width(p[n - 1].s);
    struct rect body = {r.y, r.x, 1, r.w > mw ? r.w - mw : 0};
    tui_line(win, v, body, r.y, p, (size_t)(n - 1));
    tui_text(win, &v->theme, r, r.y, r.x + body.w, p[n - 1].role, p[n - 1].s);
}

void tui_draw_detail(WINDOW *win, struct tui_view *v, const struct tui_dlines *L)
{
    struct rect in = tui_box(win, &v->theme, v->lay.detail_r,
                             v->gpm_page ? "Detail: GPM (g: back)" : "Detail", R_TITLE);
    const struct device *d = tui_view_selected(v);
    if (!d && in.h > 0 && tui_fleet_selected_node(v)) { /* a node whose devices were not read */
        tui_draw_node_detail(win, v, in, tui_fleet_selected_node(v));
        return;
    }
    if (!d || in.h <= 0)
        return;
    if (v->gpm_page) {
        draw_detail_gpm(win, v, in, d);
        return;
    }
    bool two = in.w >= 90;
    int half = (in.w - 2) / 2, y = in.y;
    for (int i = 0; i < L->n && y < in.y + in.h; i++, y++) {
        const struct tui_dline *l = &L->l[i];
        if (two && l->pair && i + 1 < L->n && L->l[i + 1].pair) {
            draw_dline(win, v, (struct rect){y, in.x, 1, half}, l);
            i++;
            draw_dline(win, v, (struct rect){y, in.x + half + 2, 1, in.w - half - 2}, &L->l[i]);
        } else {
            draw_dline(win, v, (struct rect){y, in.x, 1, in.w}, l);
        }
    }
    if (tui_detail_rows(L, L->n, in.w) > in.h) /* some lines did not fit */
        tui_text(win, &v->theme, v->lay.detail_r, v->lay.detail_r.y + v->lay.detail_r.h - 1,
                 v->lay.detail_r.x + v->lay.detail_r.w - 14, R_FREE, " more: i, g ");
}
