/*
 * demo.c — the bundled simulator for --demo. See demo.h.
 */
#include "demo.h"

#include "text.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debuglog.h"

#define SUFFIX ".ini"
#define SUFFIX_LEN 4

/* The three places of demo.h, for the binary at exe. */
struct places {
    char at[3][PATH_MAX];
};

static void places_of(const char *exe, struct places *pl)
{
    size_t n = strnlen(exe, PATH_MAX - 1);
    while (n > 0 && exe[n - 1] != '/')
        n--;
    size_t d = n > 0 ? n - 1 : 0; /* the exe's directory: exe[0..d) */
    size_t p = d;
    while (p > 0 && exe[p - 1] != '/')
        p--;
    p = p > 0 ? p - 1 : 0; /* its parent: exe[0..p) */
    snprintf(pl->at[0], PATH_MAX, "%.*s", (int)d, exe);
    snprintf(pl->at[1], PATH_MAX, "%.*s", (int)p, exe);
    if (snprintf(pl->at[2], PATH_MAX, "%.*s/lib/mig-gpu-mon", (int)p, exe) >= PATH_MAX)
        pl->at[2][0] = '\0';
}

bool demo_find(const char *exe, const char *rel, char *out, size_t len)
{
    struct places pl;
    places_of(exe, &pl);
    for (int i = 0; i < 3; i++) {
        char path[PATH_MAX], real[PATH_MAX];
        if (snprintf(path, sizeof(path), "%s/%s", pl.at[i], rel) >= (int)sizeof(path) ||
            access(path, R_OK) != 0)
            continue;
        /* build/../sim/scenarios reads better as the directory it is */
        if (realpath(path, real) && snprintf(out, len, "%s", real) < (int)len)
            return true;
        if (snprintf(out, len, "%s", path) < (int)len)
            return true;
    }
    snprintf(out, len, "%s/%s, %s/%s or %s/%s", pl.at[0], rel, pl.at[1], rel, pl.at[2], rel);
    return false;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int scenario_file(const struct dirent *e)
{
    return e->d_name[0] != '.' && strlen(e->d_name) > SUFFIX_LEN && has_suffix(e->d_name, SUFFIX);
}

/* By name without ".ini": h100-pcie-mig-535 before h100-pcie-mig-535-gpm-corrupts. */
static int by_name(const struct dirent **a, const struct dirent **b)
{
    size_t na = strlen((*a)->d_name) - SUFFIX_LEN, nb = strlen((*b)->d_name) - SUFFIX_LEN;
    int c = strncmp((*a)->d_name, (*b)->d_name, na < nb ? na : nb);
    return c ? c : (na > nb) - (na < nb);
}

/* Appends the scenario names in dir, sorted, without ".ini", to err. */
static void list_names(const char *dir, char *err, size_t errlen)
{
    struct dirent **names;
    int n = scandir(dir, &names, scenario_file, by_name);
    size_t used = strlen(err);
    if (n <= 0) {
        snprintf(err + used, errlen - used, " (it has no scenarios)");
        if (n == 0)
            free(names);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (used < errlen)
            used += (size_t)snprintf(err + used, errlen - used, "%s%.*s", i ? ", " : " (available: ",
                                     (int)(strlen(names[i]->d_name) - SUFFIX_LEN), names[i]->d_name);
        free(names[i]);
    }
    free(names);
    if (used < errlen)
        snprintf(err + used, errlen - used, ")");
}

int demo_scenario_path(const char *exe, const char *arg, char *path, size_t len, char *err,
                       size_t errlen)
{
    const char *name = arg ? arg : DEMO_DEFAULT_SCENARIO;
    if (strchr(name, '/')) {
        struct stat st;
        if (stat(name, &st) != 0 || access(name, R_OK) != 0) {
            snprintf(err, errlen, "--demo=%s: cannot read that scenario file: %s", name,
                     strerror(errno));
            return -1;
        }
        if (S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "--demo=%s: a directory, not a scenario file", name);
            return -1;
        }
        if (snprintf(path, len, "%s", name) >= (int)len) {
            snprintf(err, errlen, "--demo: the scenario path is too long");
            return -1;
        }
        return 0;
    }
    size_t base = strlen(name) - (has_suffix(name, SUFFIX) ? SUFFIX_LEN : 0);
    char dir[PATH_MAX];
    if (!demo_find(exe, DEMO_SCENARIO_DIR, dir, sizeof(dir))) {
        snprintf(err, errlen, "--demo=%s: the bundled scenarios are not installed (looked for %s)",
                 name, dir);
        return -1;
    }
    if (base > 0 && snprintf(path, len, "%s/%.*s%s", dir, (int)base, name, SUFFIX) < (int)len &&
        access(path, R_OK) == 0)
        return 0;
    snprintf(err, errlen, "--demo=%s: no such scenario in %s", name, dir);
    list_names(dir, err, errlen);
    size_t used = strlen(err);
    if (access(name, R_OK) == 0 && used < errlen)
        snprintf(err + used, errlen - used, "; for the file %s in this directory, write --demo=./%s",
                 name, name);
    return -1;
}

int demo_check_scenario(const char *lib, const char *path, char *err, size_t errlen)
{
    void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *why = dlerror();
        debuglog_printf("demo: dlopen %s -> %s", lib, why);
        snprintf(err, errlen, "--demo: cannot load the bundled simulator: %s", why);
        return -1;
    }
    int (*check)(const char *, char *, size_t);
    void *p = dlsym(dl, "migmon_sim_check_scenario");
    memcpy(&check, &p, sizeof(check));
    int rc = 0;
    char why[1024] = "";
    if (check && check(path, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "--demo: invalid scenario file: %s", why);
        rc = -1;
    }
    debuglog_printf("demo: scenario %s -> %s", path, !check ? "not checked" : rc ? why : "valid");
    dlclose(dl);
    return rc;
}

int demo_setup(const char *exe, const char *arg, char *lib, size_t liblen, char *label,
               size_t lablen)
{
    char scen[4096], err[4096];
    if (demo_scenario_path(exe, arg, scen, sizeof(scen), err, sizeof(err)) != 0)
        goto fail;
    if (!demo_find(exe, DEMO_SIM_LIB, lib, liblen)) {
        snprintf(err, sizeof(err), "--demo: the bundled simulator is not installed (looked for %.3000s)",
                 lib);
        goto fail;
    }
    if (demo_check_scenario(lib, scen, err, sizeof(err)) != 0)
        goto fail;
    setenv("MIGMON_SIM_SCENARIO", scen, 1);
    const char *base = strrchr(scen, '/');
    snprintf(label, lablen, "DEMO (simulated: %.100s)", base ? base + 1 : scen);
    return 0;
fail:
    text_clean_lines(err, sizeof(err)); /* it names a path the user gave */
    fprintf(stderr, "mig-gpu-mon: %s\n", err);
    return -1;
}

const char *demo_dcgm_lib(const char *nvml_lib, char *out, size_t outlen)
{
    const char *slash = strrchr(nvml_lib, '/');
    if (!slash)
        return NULL;
    int n = snprintf(out, outlen, "%.*s/libdcgm.so.4", (int)(slash - nvml_lib), nvml_lib);
    if (n < 0 || (size_t)n >= outlen || access(out, R_OK) != 0)
        return NULL;
    return out;
}
