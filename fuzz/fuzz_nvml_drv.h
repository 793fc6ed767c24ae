/*
 * fuzz_nvml_drv.h — a fake NVML whose every answer (return code, numbers,
 * strings, struct bytes, list lengths) is read from a byte tape, and the
 * promises the monitor keeps for any driver: whole ticks of the NVML
 * backend (GPU, MIG slots, process lists) through the range checks and
 * every output format, with no crash, no sanitizer report, every metric
 * either none or a finite number, and output that is valid UTF-8 without a
 * terminal control. Used by the libFuzzer target (fuzz/fuzz_nvml.c) and by
 * the corpus replay in make check (tests/unit/test_fuzz_corpus.c).
 *
 * Tape: each call takes one byte for its return code (below 0xc0: success;
 * else one of the codes in fz_codes), then the bytes of its answer. When
 * the tape runs out every call answers NVML_ERROR_UNKNOWN. A list's length
 * is below 40, except when its 32-bit draw has a top byte of 0xff: then it
 * is the whole draw (up to 2^32-1), so the callers' caps are reached.
 */
#ifndef MIGMON_FUZZ_NVML_DRV_H
#define MIGMON_FUZZ_NVML_DRV_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/nvml/nvml.h"
#include "backend/nvml/nvml_load.h"
#include "backend/nvml/nvml_state.h"
#include "core/model.h"
#include "core/text.h"
#include "export/csv.h"
#include "export/influx.h"
#include "export/json.h"
#include "export/prom.h"
#include "export/table.h"

static const uint8_t *fz_p;
static size_t fz_n;
static int fz_handles[65]; /* [0] the GPU, [1 + k] MIG slot k */

static void fz_take(void *out, size_t len)
{
    size_t k = len < fz_n ? len : fz_n;
    memcpy(out, fz_p, k);
    memset((char *)out + k, 0, len - k);
    fz_p += k;
    fz_n -= k;
}

static unsigned fz_u32(void)
{
    uint32_t v;
    fz_take(&v, sizeof(v));
    return v;
}

static nvmlReturn_t fz_rc(void)
{
    static const nvmlReturn_t codes[] = {
        NVML_ERROR_UNKNOWN, NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_NO_PERMISSION,
        NVML_ERROR_NOT_FOUND, NVML_ERROR_INSUFFICIENT_SIZE, NVML_ERROR_GPU_IS_LOST,
        NVML_ERROR_INVALID_ARGUMENT, NVML_ERROR_IN_USE, NVML_ERROR_NO_DATA,
        NVML_ERROR_TIMEOUT, NVML_ERROR_UNINITIALIZED, (nvmlReturn_t)12345,
    };
    if (!fz_n)
        return NVML_ERROR_UNKNOWN;
    uint8_t b = *fz_p++;
    fz_n--;
    return b < 0xc0 ? NVML_SUCCESS : codes[b % (sizeof(codes) / sizeof(codes[0]))];
}

/* A call that writes len bytes at out. */
#define FZ_FILL(out, len)                                                                          \
    do {                                                                                           \
        nvmlReturn_t r_ = fz_rc();                                                                 \
        if (r_ == NVML_SUCCESS)                                                                    \
            fz_take((out), (len));                                                                 \
        return r_;                                                                                 \
    } while (0)

static nvmlReturn_t fz_str(nvmlDevice_t d, char *s, unsigned n) { (void)d; FZ_FILL(s, n); }
static nvmlReturn_t fz_sys_str(char *s, unsigned n) { FZ_FILL(s, n); }
static nvmlReturn_t fz_uint(nvmlDevice_t d, unsigned *v) { (void)d; FZ_FILL(v, sizeof(*v)); }
static nvmlReturn_t fz_ull(nvmlDevice_t d, unsigned long long *v) { (void)d; FZ_FILL(v, sizeof(*v)); }
static nvmlReturn_t fz_int2(nvmlDevice_t d, int *a, int *b)
{
    (void)d;
    nvmlReturn_t r = fz_rc();
    if (r == NVML_SUCCESS) {
        fz_take(a, sizeof(*a));
        fz_take(b, sizeof(*b));
    }
    return r;
}
static nvmlReturn_t fz_uint2(nvmlDevice_t d, unsigned *a, unsigned *b)
{
    return fz_int2(d, (int *)a, (int *)b);
}
static nvmlReturn_t fz_pci(nvmlDevice_t d, nvmlPciInfo_t *v) { (void)d; FZ_FILL(v, sizeof(*v)); }
static nvmlReturn_t fz_util(nvmlDevice_t d, nvmlUtilization_t *v) { (void)d; FZ_FILL(v, sizeof(*v)); }
static nvmlReturn_t fz_mem(nvmlDevice_t d, nvmlMemory_t *v) { (void)d; FZ_FILL(v, sizeof(*v)); }
static nvmlReturn_t fz_mem2(nvmlDevice_t d, nvmlMemory_v2_t *v)
{
    (void)d;
    unsigned version = v->version;
    nvmlReturn_t r = fz_rc();
    if (r == NVML_SUCCESS) {
        fz_take(v, sizeof(*v));
        v->version = version;
    }
    return r;
}
static nvmlReturn_t fz_temp(nvmlDevice_t d, nvmlTemperatureSensors_t s, unsigned *v)
{
    (void)s;
    return fz_uint(d, v);
}
static nvmlReturn_t fz_thresh(nvmlDevice_t d, nvmlTemperatureThresholds_t t, unsigned *v)
{
    (void)t;
    return fz_uint(d, v);
}
static nvmlReturn_t fz_clock(nvmlDevice_t d, nvmlClockType_t t, unsigned *v)
{
    (void)t;
    return fz_uint(d, v);
}
static nvmlReturn_t fz_pstate(nvmlDevice_t d, nvmlPstates_t *v) { (void)d; FZ_FILL(v, sizeof(*v)); }
static nvmlReturn_t fz_pcie(nvmlDevice_t d, nvmlPcieUtilCounter_t c, unsigned *v)
{
    (void)c;
    return fz_uint(d, v);
}
static nvmlReturn_t fz_ecc_mode(nvmlDevice_t d, nvmlEnableState_t *a, nvmlEnableState_t *b)
{
    return fz_int2(d, (int *)a, (int *)b);
}
static nvmlReturn_t fz_ecc_count(nvmlDevice_t d, nvmlMemoryErrorType_t e, nvmlEccCounterType_t c,
                                 unsigned long long *v)
{
    (void)e;
    (void)c;
    return fz_ull(d, v);
}
static nvmlReturn_t fz_codec(nvmlDevice_t d, unsigned *a, unsigned *b) { return fz_int2(d, (int *)a, (int *)b); }

/* List calls: a count from the tape; more than the caller has room for
 * answers INSUFFICIENT_SIZE with that count, as NVML does. */
static nvmlReturn_t fz_list(unsigned *count, void *arr, size_t stride)
{
    nvmlReturn_t r = fz_rc();
    unsigned want = fz_u32();
    if (want >> 24 != 0xff)
        want %= 40;
    if (r != NVML_SUCCESS)
        return r;
    if (!arr || want > *count) {
        *count = want;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *count = want;
    fz_take(arr, (size_t)want * stride);
    return NVML_SUCCESS;
}
static nvmlReturn_t fz_samples(nvmlDevice_t d, nvmlSamplingType_t t, unsigned long long last,
                               nvmlValueType_t *vt, unsigned *count, nvmlSample_t *s)
{
    (void)d;
    (void)t;
    (void)last;
    *vt = (nvmlValueType_t)(fz_u32() % 6);
    return fz_list(count, s, sizeof(*s));
}
static nvmlReturn_t fz_proc_util(nvmlDevice_t d, nvmlProcessUtilizationSample_t *s, unsigned *count,
                                 unsigned long long last)
{
    (void)d;
    (void)last;
    return fz_list(count, s, sizeof(*s));
}
static nvmlReturn_t fz_procs_util_info(nvmlDevice_t d, nvmlProcessesUtilizationInfo_v1_t *v)
{
    (void)d;
    unsigned n = v->processSamplesCount;
    nvmlReturn_t r = fz_list(&n, v->procUtilArray, sizeof(*v->procUtilArray));
    v->processSamplesCount = n;
    fz_take(&v->lastSeenTimeStamp, sizeof(v->lastSeenTimeStamp));
    return r;
}
static size_t fz_stride;
static nvmlReturn_t fz_procs(nvmlDevice_t d, unsigned *count, void *arr)
{
    (void)d;
    return fz_list(count, arr, fz_stride);
}
static nvmlReturn_t fz_fields(nvmlDevice_t d, int n, nvmlFieldValue_t *v)
{
    (void)d;
    nvmlReturn_t r = fz_rc();
    for (int i = 0; r == NVML_SUCCESS && i < n; i++) {
        fz_take(&v[i].value, sizeof(v[i].value));
        v[i].nvmlReturn = fz_rc();
        v[i].valueType = (nvmlValueType_t)(fz_u32() % 6);
    }
    return r;
}
static nvmlReturn_t fz_mig_handle(nvmlDevice_t d, unsigned slot, nvmlDevice_t *out)
{
    (void)d;
    nvmlReturn_t r = fz_rc();
    if (r == NVML_SUCCESS)
        *out = (nvmlDevice_t)&fz_handles[1 + slot % 64];
    return r;
}
static nvmlReturn_t fz_parent(nvmlDevice_t d, nvmlDevice_t *out)
{
    (void)d;
    nvmlReturn_t r = fz_rc();
    if (r == NVML_SUCCESS)
        *out = (nvmlDevice_t)&fz_handles[0];
    return r;
}
static nvmlReturn_t fz_attrs(nvmlDevice_t d, nvmlDeviceAttributes_t *v) { (void)d; FZ_FILL(v, sizeof(*v)); }
static nvmlReturn_t fz_gi_profile(nvmlDevice_t d, unsigned p, nvmlGpuInstanceProfileInfo_t *v)
{
    (void)p;
    (void)d;
    FZ_FILL(v, sizeof(*v));
}

/* Output of one writer: valid UTF-8, no control but newline. */
static const char *fz_check_text(const char *buf, size_t len, const char *what)
{
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t k = text_utf8_decode((const unsigned char *)buf + i, len - i, &cp);
        if (!k)
            return what;
        if (cp != '\n' && text_is_control(cp))
            return what;
        i += k;
    }
    return NULL;
}

enum fz_format { FZ_JSON, FZ_TABLE, FZ_CSV, FZ_INFLUX, FZ_PROM, FZ_FORMATS };

static const char *fz_write_check(const struct snapshot *s, enum fz_format fmt)
{
    static const char *const why_bad[FZ_FORMATS] = {
        [FZ_JSON] = "JSON output: invalid UTF-8 or a control",
        [FZ_TABLE] = "table output: invalid UTF-8 or a control",
        [FZ_CSV] = "CSV output: invalid UTF-8 or a control",
        [FZ_INFLUX] = "line protocol output: invalid UTF-8 or a control",
        [FZ_PROM] = "Prometheus output: invalid UTF-8 or a control",
    };
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    /* every series, per-process and DCGM ones included */
    static const struct prom_opts po = {.dcgm = true, .processes = true};
    switch (fmt) {
    case FZ_JSON: json_write_snapshot(f, s, false); break;
    case FZ_TABLE: table_write_snapshot(f, s); break;
    case FZ_CSV:
        csv_write_header(f);
        csv_write_rows(f, s);
        break;
    case FZ_INFLUX: influx_write_snapshot(f, s); break;
    case FZ_PROM: (void)prom_write(f, s, &po); break;
    case FZ_FORMATS: break;
    }
    fclose(f);
    const char *why = fz_check_text(buf, len, why_bad[fmt]);
    free(buf);
    return why;
}

/* Three ticks of one GPU on a driver that answers from the tape. */
static const char *fuzz_check_nvml(const uint8_t *data, size_t size)
{
    fz_p = data;
    fz_n = size;
    static struct nvml_lib lib;
    memset(&lib, 0, sizeof(lib));
    struct nvml_fns *f = &lib.f;
    f->driver_version = f->nvml_version = fz_sys_str;
    f->name = f->uuid = fz_str;
    f->pci_info = fz_pci;
    f->arch = f->power_usage = f->power_limit_enforced = f->power_limit_mgmt = fz_uint;
    f->pcie_gen = f->pcie_width = f->fan_speed = f->is_mig_handle = f->max_mig_count = fz_uint;
    f->gpu_instance_id = f->compute_instance_id = fz_uint;
    f->energy = f->clock_event_reasons = fz_ull;
    f->cuda_cc = fz_int2;
    f->utilization = fz_util;
    f->memory_v2 = fz_mem2;
    f->memory_v1 = fz_mem;
    f->temperature = fz_temp;
    f->temp_threshold = fz_thresh;
    f->clock_info = fz_clock;
    f->pstate = fz_pstate;
    f->encoder_util = f->decoder_util = fz_codec;
    f->pcie_throughput = fz_pcie;
    f->ecc_mode = fz_ecc_mode;
    f->ecc_count = fz_ecc_count;
    f->samples = fz_samples;
    f->field_values = fz_fields;
    f->process_util = fz_proc_util;
    f->processes_util_info = fz_procs_util_info;
    f->procs_compute = f->procs_graphics = f->procs_mps = fz_procs;
    f->mig_mode = fz_uint2;
    f->mig_handle_by_index = fz_mig_handle;
    f->mig_parent = fz_parent;
    f->attributes = fz_attrs;
    f->gi_profile_info = fz_gi_profile;
    /* The process entry layout (v1, v2, or 535's _v3 with protected
     * memory), chosen by the first byte. */
    static const size_t strides[] = {sizeof(nvmlProcessInfo_v1_t), sizeof(nvmlProcessInfo_v2_t),
                                     sizeof(nvmlProcessInfo_535cc_t)};
    uint8_t b0 = 0;
    fz_take(&b0, 1);
    fz_stride = strides[b0 % 3];
    for (int k = 0; k < NVML_PROCS_KINDS; k++)
        lib.proc_stride[k] = fz_stride;

    static struct nvml_state st;
    nvml_state_init(&st, &lib);
    st.slow_every = 1 + b0 / 64; /* walks and static retries happen within the ticks */
    struct snapshot part;
    memset(&part, 0, sizeof(part));
    const char *why = NULL;
    for (int t = 0; t < 3 && !why; t++) {
        nvml_sample_gpu(&st, 0, (nvmlDevice_t)&fz_handles[0], fz_rc(), NULL, &part);
        snapshot_check_ranges(&part);
        for (size_t i = 0; i < part.ndevices && !why; i++)
            for (int k = 0; k < M_COUNT; k++) {
                const struct metric *m = &part.devices[i].m[k];
                static char msg[160];
                if ((m->src != MSRC_NONE && !isfinite(m->value)) ||
                    (m->src == MSRC_NONE && !m->why)) {
                    snprintf(msg, sizeof(msg), "%s of %s %zu: %s",
                             metric_info((enum metric_id)k)->name,
                             part.devices[i].kind == DEV_MIG ? "MIG device" : "GPU", i,
                             m->src != MSRC_NONE ? "a value that is not finite"
                                                 : "none without a reason");
                    why = msg;
                    break;
                }
            }
        for (int k = 0; k < FZ_FORMATS && !why; k++)
            why = fz_write_check(&part, (enum fz_format)k);
    }
    snapshot_free(&part);
    nvml_state_free(&st);
    return why;
}

#endif
