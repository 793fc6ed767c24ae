/*
 * bench_prom — the cost of rendering the /metrics page.
 *
 *   MIGMON_SIM_LIB=... build/bench_prom SCENARIO [RENDERS]
 *
 * One snapshot is taken from the simulator, then rendered RENDERS times
 * into the same buffer (as the exporter does once per tick), plain and
 * with --compat dcgm, and compressed with gzip level 1 as the server
 * does. Reported: the median and 99th percentile µs per render, the page
 * size, and the gzip time and size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/clock.h"
#include "engine/collect.h"
#include "export/prom.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void run(const char *label, const struct snapshot *s, const struct prom_opts *po, int n)
{
    struct prom_buf b = {0};
    uint64_t *t = calloc((size_t)n, sizeof(*t));
    for (int i = 0; i < n + 10; i++) {
        uint64_t t0 = clock_mono_ns();
        if (prom_render(&b, s, po) != 0)
            exit(1);
        if (i >= 10)
            t[i - 10] = clock_mono_ns() - t0;
    }
    qsort(t, (size_t)n, sizeof(*t), cmp_u64);
    uLongf gzcap = compressBound((uLong)b.len) + 64;
    Bytef *gz = malloc(gzcap);
    uint64_t g0 = clock_mono_ns();
    z_stream z;
    memset(&z, 0, sizeof(z));
    deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    z.next_in = (Bytef *)b.p;
    z.avail_in = (uInt)b.len;
    z.next_out = gz;
    z.avail_out = (uInt)gzcap;
    deflate(&z, Z_FINISH);
    uint64_t gt = clock_mono_ns() - g0;
    printf("  %-14s render median %6.1f us, p99 %6.1f us; page %zu bytes; gzip %6.1f us -> %lu "
           "bytes\n",
           label, t[n / 2] / 1000.0, t[n * 99 / 100] / 1000.0, b.len, gt / 1000.0, z.total_out);
    deflateEnd(&z);
    free(gz);
    free(t);
    prom_buf_free(&b);
}

int main(int argc, char **argv)
{
    const char *lib = getenv("MIGMON_SIM_LIB");
    if (argc < 2 || !lib) {
        fprintf(stderr, "usage: MIGMON_SIM_LIB=... bench_prom SCENARIO.ini [RENDERS]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 2000;
    if (n < 10)
        n = 10;
    setenv("MIGMON_SIM_SCENARIO", argv[1], 1);
    setenv("MIGMON_SIM_TIME", "100", 1);
    struct collector c;
    struct collect_opts o = {.nvml_path = lib, .interval_ms = 1000};
    char err[2048];
    if (collect_open(&c, &o, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench_prom: %s\n", err);
        return 1;
    }
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    collect_tick_until(&c, &s, clock_mono_ns() + 5000000000ull);
    collect_tick_until(&c, &s, clock_mono_ns() + 5000000000ull);
    const char *base = strrchr(argv[1], '/');
    printf("== %s: %zu devices, %d renders\n", base ? base + 1 : argv[1], s.ndevices, n);
    run("migmon_", &s, &(struct prom_opts){0}, n);
    run("+ dcgm", &s, &(struct prom_opts){.dcgm = true}, n);
    snapshot_free(&s);
    collect_close(&c);
    return 0;
}
