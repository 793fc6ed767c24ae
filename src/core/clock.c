#include "core/clock.h"

#include <stdio.h>
#include <time.h>

uint64_t clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int64_t clock_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

void clock_rfc3339(int64_t wall_ns, char *out, unsigned long len)
{
    time_t sec = (time_t)(wall_ns / 1000000000ll);
    long ms = (long)((wall_ns % 1000000000ll) / 1000000ll);
    if (ms < 0) {
        ms += 1000;
        sec -= 1;
    }
    struct tm tm;
    gmtime_r(&sec, &tm);
    char base[32];
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, len, "%s.%03ldZ", base, ms);
}

int clock_ms_until_next(uint64_t start_ns, uint64_t interval_ns, uint64_t now_ns)
{
    if (interval_ns == 0)
        return 0;
    if (now_ns < start_ns)
        return (int)((start_ns - now_ns + 999999) / 1000000);
    uint64_t k = (now_ns - start_ns) / interval_ns + 1;
    uint64_t next = start_ns + k * interval_ns;
    return (int)((next - now_ns + 999999) / 1000000);
}
