/*
 * soak — many headless ticks over every shipped scenario: no crash, no
 * sanitizer or valgrind error, no leak, and memory flat after warm-up.
 *
 *   MIGMON_SIM_LIB=... MIGMON_SRC=... build/soak TICKS [--no-rss] [--only NAME,NAME]
 *
 * Each scenario runs on the simulator's step clock (1 s per tick, from
 * t = 0), so faults, GPU loss, reconfigurations, process churn and the
 * stalls of the hang scenarios all happen within the first minutes of
 * simulated time. The collector's tick budget is short (50 ms), so a stuck
 * worker costs one short wait, not ten seconds. hang-init.ini is left out:
 * its nvmlInit never returns, so it has no ticks to soak.
 * RSS (VmRSS) is compared between the end of warm-up (a tenth of the
 * ticks) and the end: more than 2 MiB of growth fails. --no-rss skips that
 * check (sanitizer and valgrind runs, whose allocators keep freed memory).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/collect.h"

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int soak_one(const char *lib, const char *path, long ticks, bool check_rss)
{
    setenv("MIGMON_SIM_SCENARIO", path, 1);
    setenv("MIGMON_SIM_TIME", "0+1", 1);
    struct collector c;
    struct collect_opts o = {.nvml_path = lib, .interval_ms = 1000, .budget_ms = 50};
    char err[2048];
    if (collect_open(&c, &o, err, sizeof(err)) != 0) {
        fprintf(stderr, "soak: %s: %s\n", path, err);
        return 1;
    }
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    long warm = ticks / 10, rss0 = -1;
    size_t max_dev = 0;
    for (long t = 0; t < ticks; t++) {
        collect_tick(&c, &s);
        if (s.ndevices > max_dev)
            max_dev = s.ndevices;
        if (t == warm)
            rss0 = rss_kib();
    }
    long rss1 = rss_kib();
    snapshot_free(&s);
    collect_close(&c);
    const char *base = strrchr(path, '/');
    printf("soak %-40s %ld ticks, up to %zu devices, RSS %ld -> %ld KiB\n", base ? base + 1 : path,
           ticks, max_dev, rss0, rss1);
    if (check_rss && rss0 > 0 && rss1 - rss0 > 2048) {
        fprintf(stderr, "soak: %s: RSS grew by %ld KiB after warm-up\n", path, rss1 - rss0);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *lib = getenv("MIGMON_SIM_LIB"), *src = getenv("MIGMON_SRC");
    if (argc < 2 || !lib || !src) {
        fprintf(stderr, "usage: MIGMON_SIM_LIB=... MIGMON_SRC=... soak TICKS [--no-rss]\n");
        return 2;
    }
    long ticks = atol(argv[1]);
    bool check_rss = true;
    const char *only = NULL; /* --only A,B: these scenarios (without .ini) */
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--no-rss") == 0)
            check_rss = false;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
    }
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/sim/scenarios", src);
    DIR *d = opendir(dir);
    if (!d)
        return 2;
    char *names[256];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256) {
        size_t len = strlen(e->d_name);
        if (len <= 4 || strcmp(e->d_name + len - 4, ".ini") != 0 ||
            strcmp(e->d_name, "hang-init.ini") == 0)
            continue;
        if (only) {
            char key[300];
            snprintf(key, sizeof(key), ",%.*s,", (int)(len - 4), e->d_name);
            char list[4096];
            snprintf(list, sizeof(list), ",%s,", only);
            if (!strstr(list, key))
                continue;
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof(names[0]), cmp_str);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char path[8192];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        rc |= soak_one(lib, path, ticks, check_rss);
        free(names[i]);
    }
    printf("soak: %zu scenarios, %s\n", n, rc ? "FAILED" : "all clean");
    return rc;
}
