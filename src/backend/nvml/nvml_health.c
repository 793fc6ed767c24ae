/*
 * nvml_health.c — a GPU's health counters, and the per-tick
 * nvmlDeviceGetFieldValues batch some of them ride on.
 *
 * Cost. The counters of rare events — rows remapped, pages retired, PCIe
 * replays, NVLink link states and errors, the time clocks were held down
 * by power or temperature — change seldom, and some cost a call per link:
 * they are read at the slow cadence (nvml_state.slow_every ticks, about
 * 5 s, with the power limit and ECC mode), and between reads a device
 * reports the last reading, still as direct: it is what the driver said at
 * most one slow period ago, and a count of rare events read 4 s ago is the
 * count. A call the device answers NOT_SUPPORTED (or the library lacks) is
 * not asked again (memo_note). Memory temperature, the aggregate ECC
 * counts and NVLink traffic are field ids in the field-values call made
 * every tick anyway: no call of their own.
 *
 * On a read of the slow cadence a GPU makes: RemappedRows 1, RetiredPages
 * 2 and RetiredPagesPendingStatus 1 (Ampere and later answer
 * NOT_SUPPORTED: once), PcieReplayCounter 1, ViolationStatus 2, and per
 * NVLink link one NvLinkState plus four NvLinkErrorCounter calls per
 * active link (the first walk one state call more, the link past the last).
 *
 * Every value is GPU-wide: a MIG device copies its parent's (nvml_read.c).
 */
#include <stdint.h>
#include <string.h>

#include "backend/nvml/nvml_compat.h"
#include "backend/nvml/nvml_health.h"
#include "backend/nvml/nvml_load.h"
#include "backend/nvml/nvml_state.h"

static const char *const NO_SYMBOL = NVML_NO_SYMBOL;

#define HS(id) ((int)(id) - (int)M_MEM_TEMP)

/* The counters read at the slow cadence, kept in dev_cache.health. */
static const enum metric_id slow_ids[] = {
    M_PCIE_REPLAY,       M_REMAP_CORR,           M_REMAP_UNCORR,           M_REMAP_PENDING,
    M_REMAP_FAILURE,     M_RETIRED_SBE,          M_RETIRED_DBE,            M_RETIRED_PENDING,
    M_NVLINK_LINKS_UP,   M_NVLINK_CRC_ERRORS,    M_NVLINK_REPLAY_ERRORS,   M_NVLINK_RECOVERY_ERRORS,
    M_THROTTLE_POWER_S,  M_THROTTLE_THERMAL_S,   M_REMAP_INACTIVE,         M_UNREPAIRABLE_MEM,
    M_BANK_REMAPS,       M_BANK_REMAP_PENDING,   M_BANK_NO_SPARE,
};

static void keep(struct dev_cache *c, enum metric_id id, struct metric m)
{
    c->health[HS(id)] = m;
}

/* The reason for a remembered answer, or for this one. */
static struct metric failed(const struct dev_cache *c, enum memo_call k, nvmlReturn_t rc)
{
    return memo_known(c, k) ? memo_none(c, k) : metric_none(nvml_rc_reason(rc));
}

static bool ampere_or_later(const struct dev_cache *c)
{
    return c->arch_id >= NVML_DEVICE_ARCH_AMPERE && c->arch_id != NVML_DEVICE_ARCH_UNKNOWN;
}

/* ------------------------------------------------------------ remapped rows */

/* Ampere and later. hdr: NOT_SUPPORTED "If MIG is enabled" (the note: "On
 * MIG-enabled GPUs with active instances, querying the number of remapped
 * rows is not supported"). The mode change that ends it clears the memo. */
/* nvml.h 13.2 (driver 595): the same rows split into active and inactive
 * remaps. Where the library has it, the counts are its active remaps and
 * remapped_rows_inactive the inactive ones; true when it answered. Any
 * failure leaves the rows to v1, which says the same NOT_SUPPORTED with
 * its reason (MIG mode, generation). */
static bool read_remap_v2(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h)
{
    nvml_fn_dev_remapped_rows_v2 fn = st->lib.f.remapped_rows_v2;
    if (!fn) {
        keep(c, M_REMAP_INACTIVE, metric_none("needs nvmlDeviceGetRemappedRows_v2 (drivers 595 "
                                              "and later): " NVML_NO_SYMBOL));
        return false;
    }
    if (memo_known(c, MC_REMAP_V2)) {
        keep(c, M_REMAP_INACTIVE, memo_none(c, MC_REMAP_V2));
        return false;
    }
    nvmlRemappedRowsInfo_v2_t r;
    memset(&r, 0, sizeof(r));
    nvmlReturn_t rc = CALL(st, "nvmlDeviceGetRemappedRows_v2", fn(h, &r));
    if (rc != NVML_SUCCESS) {
        if (memo_note(c, MC_REMAP_V2, rc) && rc == NVML_ERROR_FUNCTION_NOT_FOUND)
            c->memo_why[MC_REMAP_V2] = "needs nvmlDeviceGetRemappedRows_v2 (drivers 595 and "
                                       "later): NVML_ERROR_FUNCTION_NOT_FOUND";
        keep(c, M_REMAP_INACTIVE, failed(c, MC_REMAP_V2, rc));
        return false;
    }
    keep(c, M_REMAP_CORR, metric_direct(r.corrActiveRemaps));
    keep(c, M_REMAP_UNCORR, metric_direct(r.uncActiveRemaps));
    keep(c, M_REMAP_PENDING, metric_direct(r.bPending));
    keep(c, M_REMAP_FAILURE, metric_direct(r.bFailureOccurred));
    keep(c, M_REMAP_INACTIVE,
         metric_direct((double)r.corrInactiveRemaps + (double)r.uncInactiveRemaps));
    return true;
}

static void read_remap(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h, bool mig)
{
    static const enum metric_id ids[4] = {M_REMAP_CORR, M_REMAP_UNCORR, M_REMAP_PENDING,
                                          M_REMAP_FAILURE};
    if (read_remap_v2(st, c, h))
        return;
    nvml_fn_dev_remapped_rows fn = st->lib.f.remapped_rows;
    struct metric m;
    if (!fn) {
        m = metric_none(NO_SYMBOL);
    } else if (memo_known(c, MC_REMAP)) {
        m = memo_none(c, MC_REMAP);
    } else {
        unsigned int v[4] = {0, 0, 0, 0};
        if (CALL(st, "nvmlDeviceGetRemappedRows", fn(h, &v[0], &v[1], &v[2], &v[3])) ==
            NVML_SUCCESS) {
            /* the flags as given: anything but 0/1 is out of range (model.c) */
            for (int k = 0; k < 4; k++)
                keep(c, ids[k], metric_direct(v[k]));
            return;
        }
        if (memo_note(c, MC_REMAP, st->rc) && st->rc == NVML_ERROR_NOT_SUPPORTED) {
            if (mig)
                c->memo_why[MC_REMAP] = "NVML does not report remapped rows while MIG mode is "
                                        "enabled (NVML_ERROR_NOT_SUPPORTED)";
            else if (c->arch_id && !ampere_or_later(c))
                c->memo_why[MC_REMAP] = "rows are remapped from Ampere on; this GPU retires "
                                        "pages (NVML_ERROR_NOT_SUPPORTED)";
        }
        m = failed(c, MC_REMAP, st->rc);
    }
    for (int k = 0; k < 4; k++)
        keep(c, ids[k], m);
    /* the v1 reason (MIG mode, generation) says it better than v2's code */
    if (st->lib.f.remapped_rows_v2 && !metric_ok(&m))
        keep(c, M_REMAP_INACTIVE, m);
}

/* ------------------------------------------------------------ memory health */

/* nvml.h 13.1 (driver 590): memory errors the GPU can no longer repair,
 * "for Hopper or newer". A flag: 1 means replace the GPU (docs/health.md). */
static void read_unrepairable(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h)
{
    nvml_fn_dev_unrepairable fn = st->lib.f.unrepairable;
    if (!fn) {
        keep(c, M_UNREPAIRABLE_MEM, metric_none("needs nvmlDeviceGetUnrepairableMemoryFlag_v1 "
                                                "(drivers 590 and later): " NVML_NO_SYMBOL));
        return;
    }
    if (memo_known(c, MC_UNREPAIRABLE)) {
        keep(c, M_UNREPAIRABLE_MEM, memo_none(c, MC_UNREPAIRABLE));
        return;
    }
    nvmlUnrepairableMemoryStatus_v1_t u;
    memset(&u, 0, sizeof(u));
    nvmlReturn_t rc = CALL(st, "nvmlDeviceGetUnrepairableMemoryFlag_v1", fn(h, &u));
    if (rc == NVML_SUCCESS) {
        keep(c, M_UNREPAIRABLE_MEM, metric_direct(u.bUnrepairableMemory));
        return;
    }
    if (memo_note(c, MC_UNREPAIRABLE, rc) && rc == NVML_ERROR_NOT_SUPPORTED && c->arch_id &&
        c->arch_id < NVML_DEVICE_ARCH_HOPPER)
        c->memo_why[MC_UNREPAIRABLE] = "the unrepairable-memory flag is Hopper's and later's "
                                       "(NVML_ERROR_NOT_SUPPORTED)";
    if (rc == NVML_ERROR_FUNCTION_NOT_FOUND) /* exported, not in this driver */
        c->memo_why[MC_UNREPAIRABLE] = "needs nvmlDeviceGetUnrepairableMemoryFlag_v1 (drivers "
                                       "590 and later): NVML_ERROR_FUNCTION_NOT_FOUND";
    keep(c, M_UNREPAIRABLE_MEM, failed(c, MC_UNREPAIRABLE, rc));
}

/* NVML 615: the HBM bank remapper (structure in nvml_api.h, not yet
 * checked against nvml.h): its active remaps, a remap waiting for a reset,
 * and the bank groups with no spare left. */
static void read_bank_remapper(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h)
{
    static const enum metric_id ids[3] = {M_BANK_REMAPS, M_BANK_REMAP_PENDING, M_BANK_NO_SPARE};
    nvml_fn_dev_bank_remapper fn = st->lib.f.bank_remapper;
    struct metric m;
    if (!fn) {
        m = metric_none("needs nvmlDeviceGetBankRemapperStatus_v1 (drivers 615 and later): "
                        NVML_NO_SYMBOL);
    } else if (memo_known(c, MC_BANK)) {
        m = memo_none(c, MC_BANK);
    } else {
        nvmlEccBankRemapperStatus_v1_t b;
        memset(&b, 0, sizeof(b));
        nvmlReturn_t rc = CALL(st, "nvmlDeviceGetBankRemapperStatus_v1", fn(h, &b));
        if (rc == NVML_SUCCESS) {
            keep(c, M_BANK_REMAPS, metric_direct(b.activeRemappings));
            keep(c, M_BANK_REMAP_PENDING, metric_direct(b.bPending));
            keep(c, M_BANK_NO_SPARE, metric_direct(b.histogram.noSpareGroupCount));
            return;
        }
        memo_note(c, MC_BANK, rc);
        if (rc == NVML_ERROR_FUNCTION_NOT_FOUND) /* exported, not in this driver */
            c->memo_why[MC_BANK] = "needs nvmlDeviceGetBankRemapperStatus_v1 (drivers 615 and "
                                   "later): NVML_ERROR_FUNCTION_NOT_FOUND";
        m = failed(c, MC_BANK, rc);
    }
    for (int k = 0; k < 3; k++)
        keep(c, ids[k], m);
}

/* ------------------------------------------------------------ retired pages */

static const char *const RETIRED_AMPERE = "Ampere and later remap rows instead of retiring pages "
                                          "(NVML_ERROR_NOT_SUPPORTED)";

/* The count of each cause, asked with a zero-sized buffer (hdr: "Set to 0
 * to query the size"): SUCCESS when there is none, INSUFFICIENT_SIZE with
 * the count when there are some. */
static void read_retired(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h)
{
    static const nvmlPageRetirementCause_t cause[2] = {
        NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS,
        NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR};
    static const enum metric_id ids[2] = {M_RETIRED_SBE, M_RETIRED_DBE};
    const struct nvml_fns *f = &st->lib.f;
    for (int k = 0; k < 2; k++) {
        if (!f->retired_pages) {
            keep(c, ids[k], metric_none(NO_SYMBOL));
        } else if (memo_known(c, MC_RETIRED)) {
            keep(c, ids[k], memo_none(c, MC_RETIRED));
        } else {
            unsigned int n = 0;
            nvmlReturn_t rc = CALL(st, "nvmlDeviceGetRetiredPages",
                                   f->retired_pages(h, cause[k], &n, NULL));
            if (rc == NVML_SUCCESS || rc == NVML_ERROR_INSUFFICIENT_SIZE) {
                keep(c, ids[k], metric_direct(n));
                continue;
            }
            if (memo_note(c, MC_RETIRED, rc) && rc == NVML_ERROR_NOT_SUPPORTED &&
                ampere_or_later(c))
                c->memo_why[MC_RETIRED] = RETIRED_AMPERE;
            keep(c, ids[k], failed(c, MC_RETIRED, rc));
        }
    }
    if (!f->retired_pending) {
        keep(c, M_RETIRED_PENDING, metric_none(NO_SYMBOL));
    } else if (memo_known(c, MC_RETIRED_PENDING)) {
        keep(c, M_RETIRED_PENDING, memo_none(c, MC_RETIRED_PENDING));
    } else {
        nvmlEnableState_t p = NVML_FEATURE_DISABLED;
        nvmlReturn_t rc = CALL(st, "nvmlDeviceGetRetiredPagesPendingStatus",
                               f->retired_pending(h, &p));
        if (rc == NVML_SUCCESS) {
            keep(c, M_RETIRED_PENDING, metric_direct(p));
        } else {
            if (memo_note(c, MC_RETIRED_PENDING, rc) && rc == NVML_ERROR_NOT_SUPPORTED &&
                ampere_or_later(c))
                c->memo_why[MC_RETIRED_PENDING] = RETIRED_AMPERE;
            keep(c, M_RETIRED_PENDING, failed(c, MC_RETIRED_PENDING, rc));
        }
    }
}

/* ------------------------------------------------------------ PCIe, clocks */

static void read_pcie_replay(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h)
{
    const struct nvml_fns *f = &st->lib.f;
    unsigned int v = 0;
    if (!f->pcie_replay)
        keep(c, M_PCIE_REPLAY, metric_none(NO_SYMBOL));
    else if (memo_known(c, MC_PCIE_REPLAY))
        keep(c, M_PCIE_REPLAY, memo_none(c, MC_PCIE_REPLAY));
    else if (CALL(st, "nvmlDeviceGetPcieReplayCounter", f->pcie_replay(h, &v)) == NVML_SUCCESS)
        keep(c, M_PCIE_REPLAY, metric_direct(v));
    else {
        memo_note(c, MC_PCIE_REPLAY, st->rc);
        keep(c, M_PCIE_REPLAY, failed(c, MC_PCIE_REPLAY, st->rc));
    }
}

/* Time held below the application clocks by power and by temperature,
 * since the driver loaded: nvmlDeviceGetViolationStatus, deprecated in
 * 13.0, or the field values that replace it (nvml_compat.c). */
static void read_violation(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h)
{
    struct metric m[2];
    nvml_compat_violation(st, c, h, m);
    keep(c, M_THROTTLE_POWER_S, m[0]);
    keep(c, M_THROTTLE_THERMAL_S, m[1]);
}

/* ------------------------------------------------------------ NVLink */

static const char *const NVL_NONE_NS = "no NVLink on this GPU (nvmlDeviceGetNvLinkState: "
                                       "NVML_ERROR_NOT_SUPPORTED)";
static const char *const NVL_NONE_IA = "no NVLink on this GPU (nvmlDeviceGetNvLinkState: "
                                       "NVML_ERROR_INVALID_ARGUMENT for link 0)";

/*
 * Which links are up: a state call per link from 0 until the device
 * answers NOT_SUPPORTED or INVALID_ARGUMENT (past its last link; at link 0:
 * it has no NVLink, remembered), at most NVML_NVLINK_MAX_LINKS. Once the
 * count is known the walk stops there. Any other failure leaves the count
 * none: a partial walk is not a count. Returns the links up as a metric;
 * *active gets their bits.
 */
static struct metric walk_links(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h,
                                uint64_t *active)
{
    const struct nvml_fns *f = &st->lib.f;
    *active = 0;
    if (!f->nvlink_state)
        return metric_none(NO_SYMBOL);
    if (memo_known(c, MC_NVLINK))
        return memo_none(c, MC_NVLINK);
    unsigned max = c->nvl_links > 0 ? (unsigned)c->nvl_links : NVML_NVLINK_MAX_LINKS;
    unsigned link = 0, up = 0;
    nvmlReturn_t rc = NVML_SUCCESS;
    for (; link < max; link++) {
        nvmlEnableState_t a = NVML_FEATURE_DISABLED;
        rc = CALL(st, "nvmlDeviceGetNvLinkState", f->nvlink_state(h, link, &a));
        if (rc != NVML_SUCCESS)
            break;
        if (a == NVML_FEATURE_ENABLED) {
            *active |= 1ull << link;
            up++;
        }
    }
    bool end = rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT;
    if (rc == NVML_SUCCESS || (end && link > 0)) {
        c->nvl_links = (int)link;
        return metric_direct(up);
    }
    *active = 0;
    if (end) {
        c->nvl_links = 0;
        c->memo |= 1u << MC_NVLINK;
        c->memo_why[MC_NVLINK] = rc == NVML_ERROR_NOT_SUPPORTED ? NVL_NONE_NS : NVL_NONE_IA;
        return memo_none(c, MC_NVLINK);
    }
    memo_note(c, MC_NVLINK, rc); /* FUNCTION_NOT_FOUND */
    return failed(c, MC_NVLINK, rc);
}

/*
 * The error counters summed over the active links: CRC is the flow-control
 * digit and data CRC counters together. A counter a link answers
 * NOT_SUPPORTED for is not one this generation keeps: it is left out of
 * the sum (and not asked again); a metric none of whose counters is kept
 * is none. Any other failure makes the metric none: a partial sum would
 * read as fewer errors than there are.
 */
static void read_nvlink(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h)
{
    static const struct {
        enum metric_id id;
        nvmlNvLinkErrorCounter_t ctr[2];
        int n;
    } kinds[3] = {
        {M_NVLINK_CRC_ERRORS, {NVML_NVLINK_ERROR_DL_CRC_FLIT, NVML_NVLINK_ERROR_DL_CRC_DATA}, 2},
        {M_NVLINK_REPLAY_ERRORS, {NVML_NVLINK_ERROR_DL_REPLAY, 0}, 1},
        {M_NVLINK_RECOVERY_ERRORS, {NVML_NVLINK_ERROR_DL_RECOVERY, 0}, 1},
    };
    const struct nvml_fns *f = &st->lib.f;
    uint64_t active = 0;
    struct metric up = walk_links(st, c, h, &active);
    keep(c, M_NVLINK_LINKS_UP, up);
    for (int k = 0; k < 3; k++) {
        struct metric m;
        if (!metric_ok(&up)) {
            m = up;
        } else if (!active) {
            m = metric_none("no NVLink link is active");
        } else if (!f->nvlink_errors) {
            m = metric_none(NO_SYMBOL);
        } else {
            double sum = 0;
            bool kept = false;
            nvmlReturn_t bad = NVML_SUCCESS;
            for (int j = 0; j < kinds[k].n && bad == NVML_SUCCESS; j++) {
                nvmlNvLinkErrorCounter_t ctr = kinds[k].ctr[j];
                for (unsigned link = 0; link < 64 && !(c->nvl_unsup >> ctr & 1u); link++) {
                    if (!(active >> link & 1u))
                        continue;
                    unsigned long long v = 0;
                    nvmlReturn_t rc = CALL(st, "nvmlDeviceGetNvLinkErrorCounter",
                                           f->nvlink_errors(h, link, ctr, &v));
                    if (rc == NVML_ERROR_NOT_SUPPORTED) {
                        c->nvl_unsup |= 1u << ctr;
                    } else if (rc != NVML_SUCCESS) {
                        bad = rc;
                        break;
                    } else {
                        sum += (double)v;
                    }
                }
                kept |= !(c->nvl_unsup >> ctr & 1u);
            }
            if (bad != NVML_SUCCESS)
                m = metric_none(nvml_rc_reason(bad));
            else if (!kept)
                m = metric_none(nvml_rc_reason(NVML_ERROR_NOT_SUPPORTED));
            else
                m = metric_direct(sum);
        }
        keep(c, kinds[k].id, m);
    }
}

/* ------------------------------------------------------------ the tick */

void nvml_health_read(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h, bool due,
                      struct device *d)
{
    if (due) {
        read_remap(st, c, h, d->mig_enabled);
        read_retired(st, c, h);
        read_pcie_replay(st, c, h);
        read_nvlink(st, c, h);
        read_violation(st, c, h);
        read_unrepairable(st, c, h);
        read_bank_remapper(st, c, h);
    }
    for (size_t k = 0; k < sizeof(slow_ids) / sizeof(slow_ids[0]); k++)
        d->m[slow_ids[k]] = c->health[HS(slow_ids[k])];
}

/* ------------------------------------------------------------ field values */

/* A field value as a number; false for a type we do not know. */
static bool field_num(const nvmlFieldValue_t *v, double *out)
{
    switch (v->valueType) {
    case NVML_VALUE_TYPE_DOUBLE: *out = v->value.dVal; return true;
    case NVML_VALUE_TYPE_UNSIGNED_INT: *out = v->value.uiVal; return true;
    case NVML_VALUE_TYPE_UNSIGNED_LONG: *out = (double)v->value.ulVal; return true;
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: *out = (double)v->value.ullVal; return true;
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG: *out = (double)v->value.sllVal; return true;
    case NVML_VALUE_TYPE_SIGNED_INT: *out = v->value.siVal; return true;
    default: return false;
    }
}

void nvml_fields_read(struct nvml_state *st, struct dev_cache *c, nvmlDevice_t h, bool ecc_on,
                      struct nvml_fields *out)
{
    static const unsigned ids[NF_SLOTS] = {
        [NF_ENERGY] = NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION,
        [NF_SBE_VOL] = NVML_FI_DEV_ECC_SBE_VOL_TOTAL,
        [NF_DBE_VOL] = NVML_FI_DEV_ECC_DBE_VOL_TOTAL,
        [NF_SBE_AGG] = NVML_FI_DEV_ECC_SBE_AGG_TOTAL,
        [NF_DBE_AGG] = NVML_FI_DEV_ECC_DBE_AGG_TOTAL,
        [NF_MEM_TEMP] = NVML_FI_DEV_MEMORY_TEMP,
        [NF_NVL_TX] = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX,
        [NF_NVL_RX] = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX,
    };
    const struct nvml_fns *f = &st->lib.f;
    const char *not_asked = !f->field_values         ? NO_SYMBOL
                            : memo_known(c, MC_FIELDS) ? memo_none(c, MC_FIELDS).why
                                                       : NULL;
    /* a GPU the NVLink walk found none on: its reason, not the field's */
    const char *no_nvl = c->nvl_links != 0       ? NULL
                         : c->memo_why[MC_NVLINK] ? c->memo_why[MC_NVLINK]
                                                  : NVL_NONE_NS;
    for (int k = 0; k < NF_SLOTS; k++) {
        bool nvl = k == NF_NVL_TX || k == NF_NVL_RX;
        out->asked[k] = false;
        out->rc[k] = NVML_ERROR_FUNCTION_NOT_FOUND;
        out->why[k] = nvl && no_nvl ? no_nvl
                      : not_asked   ? not_asked
                                    : nvml_rc_reason(NVML_ERROR_FUNCTION_NOT_FOUND);
        out->v[k] = 0;
    }
    if (not_asked)
        return;
    nvmlFieldValue_t fv[NF_SLOTS];
    int slot[NF_SLOTS], n = 0;
    memset(fv, 0, sizeof(fv));
    for (int k = 0; k < NF_SLOTS; k++) {
        bool ecc = k >= NF_SBE_VOL && k <= NF_DBE_AGG, nvl = k == NF_NVL_TX || k == NF_NVL_RX;
        if ((ecc && !ecc_on) || (nvl && no_nvl))
            continue;
        fv[n].fieldId = ids[k];
        fv[n].scopeId = nvl ? NVML_FI_SCOPE_ALL_LINKS : 0;
        slot[n++] = k;
    }
    nvmlReturn_t frc = CALL(st, "nvmlDeviceGetFieldValues", f->field_values(h, n, fv));
    if (frc != NVML_SUCCESS)
        memo_note(c, MC_FIELDS, frc);
    for (int j = 0; j < n; j++) {
        int k = slot[j];
        out->asked[k] = true;
        out->rc[k] = frc != NVML_SUCCESS ? frc : fv[j].nvmlReturn;
        if (out->rc[k] != NVML_SUCCESS)
            out->why[k] = nvml_rc_reason(out->rc[k]);
        else if (!field_num(&fv[j], &out->v[k]))
            out->why[k] = "driver returned a field value of an unknown type";
        else
            out->why[k] = NULL;
    }
}

void nvml_health_fields_apply(const struct nvml_fields *fv, struct device *d)
{
    d->m[M_MEM_TEMP] = fv->why[NF_MEM_TEMP] ? metric_none(fv->why[NF_MEM_TEMP])
                                            : metric_direct(fv->v[NF_MEM_TEMP]);
    /* KiB (hdr), both directions, every link (scope UINT_MAX) */
    if (fv->why[NF_NVL_TX])
        d->m[M_NVLINK_DATA_BYTES] = metric_none(fv->why[NF_NVL_TX]);
    else if (fv->why[NF_NVL_RX])
        d->m[M_NVLINK_DATA_BYTES] = metric_none(fv->why[NF_NVL_RX]);
    else
        d->m[M_NVLINK_DATA_BYTES] = metric_direct((fv->v[NF_NVL_TX] + fv->v[NF_NVL_RX]) * 1024.0);
}
