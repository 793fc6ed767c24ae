#include "core/units.h"

#include <math.h>
#include <stdio.h>

static const char *bad(char *out, size_t len)
{
    snprintf(out, len, "N/A");
    return out;
}

/* Three significant figures at most, no more than one decimal. */
static void scaled(char *out, size_t len, double v, const char *unit)
{
    if (v < 9.95)
        snprintf(out, len, "%.1f %s", v, unit);
    else
        snprintf(out, len, "%.0f %s", v, unit);
}

const char *units_bytes(char *out, size_t len, double bytes)
{
    if (!isfinite(bytes) || bytes < 0)
        return bad(out, len);
    static const char *const unit[] = {"MiB", "GiB", "TiB", "PiB"};
    double v = bytes / (1024.0 * 1024.0);
    if (v < 1023.5) { /* MiB stay whole: the unit NVML counts VRAM in */
        snprintf(out, len, "%.0f MiB", v);
        return out;
    }
    size_t u = 0;
    while (v >= 1023.95 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
        v /= 1024.0;
        u++;
    }
    if (v < 99.95)
        snprintf(out, len, "%.1f %s", v, unit[u]);
    else
        snprintf(out, len, "%.0f %s", v, unit[u]);
    return out;
}

const char *units_rate(char *out, size_t len, double bps)
{
    if (!isfinite(bps) || bps < 0)
        return bad(out, len);
    if (bps < 999.5e3)
        snprintf(out, len, "%.0f kB/s", bps / 1e3);
    else if (bps < 999.5e6)
        scaled(out, len, bps / 1e6, "MB/s");
    else
        scaled(out, len, bps / 1e9, "GB/s");
    return out;
}

const char *units_energy(char *out, size_t len, double joules)
{
    if (!isfinite(joules) || joules < 0)
        return bad(out, len);
    double wh = joules / 3600.0;
    if (wh < 999.5)
        scaled(out, len, wh, "Wh");
    else if (wh < 999.5e3)
        scaled(out, len, wh / 1e3, "kWh");
    else
        snprintf(out, len, "%.2f MWh", wh / 1e6);
    return out;
}

/* In bit order; nvidia-smi -q's wording, shortened. */
static const char *const throttle_words[] = {
    "GPU idle",            /* 0x001 */
    "applications clocks", /* 0x002 */
    "SW power cap",        /* 0x004 */
    "HW slowdown",         /* 0x008 */
    "sync boost",          /* 0x010 */
    "SW thermal slowdown", /* 0x020 */
    "HW thermal slowdown", /* 0x040 */
    "HW power brake",      /* 0x080 */
    "display clocks",      /* 0x100 */
};

size_t units_throttle_words(uint64_t mask, const char **out, size_t max)
{
    size_t n = 0;
    for (size_t bit = 0; bit < sizeof(throttle_words) / sizeof(throttle_words[0]); bit++)
        if ((mask & (1ULL << bit)) && n < max)
            out[n++] = throttle_words[bit];
    if ((mask & ~0x1FFULL) && n < max)
        out[n++] = "other";
    return n;
}
