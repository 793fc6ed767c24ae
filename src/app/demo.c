/*
 * demo.c — the bundled simulator for --demo. See demo.h.
 */
#include "app/demo.h"

#include "core/text.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/cli.h"
#include "app/demo_amd.h"
#include "core/debuglog.h"

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

/* By name (".ini" taken off): h100-pcie-mig-535 before h100-pcie-mig-535-gpm-corrupts. */
static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names the user may give: the scenarios in dir without ".ini", and
 * the AMD demo's (no file), sorted; *n of them. NULL (and *n 0) when dir
 * cannot be read or memory runs out. Freed with names_free. */
static char **names_of(const char *dir, int *n)
{
    struct dirent **ents;
    int k = scandir(dir, &ents, scenario_file, NULL);
    *n = 0;
    if (k < 0)
        return NULL;
    char **names = calloc((size_t)k + 1, sizeof(*names));
    bool ok = names != NULL;
    for (int i = 0; i < k; i++) {
        size_t len = strlen(ents[i]->d_name) - SUFFIX_LEN;
        if (ok && (names[*n] = strndup(ents[i]->d_name, len)) == NULL)
            ok = false;
        else if (ok)
            (*n)++;
        free(ents[i]);
    }
    free(ents);
    if (ok && (names[*n] = strdup(DEMO_AMD_SCENARIO)) == NULL)
        ok = false;
    else if (ok)
        (*n)++;
    if (!ok) {
        for (int i = 0; names && i < *n; i++)
            free(names[i]);
        free(names);
        *n = 0;
        return NULL;
    }
    qsort(names, (size_t)*n, sizeof(*names), by_name);
    return names;
}

static void names_free(char **names, int n)
{
    for (int i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

/* What name (its first len bytes) was likely meant, appended to err: the
 * names it begins (up to four), else the nearest within a third of its
 * length (at least two edits), and a mode word it is near (--demo=recrod:
 * the mode record). */
static void suggest(const char *name, size_t len, char **names, int n, char *err, size_t errlen)
{
    char typed[TEXT_DISTANCE_LEN + 1];
    snprintf(typed, sizeof(typed), "%.*s", (int)(len < TEXT_DISTANCE_LEN ? len : TEXT_DISTANCE_LEN),
             name);
    size_t used = strlen(err);
    int shown = 0;
    for (int i = 0; len > 0 && i < n && used < errlen; i++) {
        if (strncmp(names[i], typed, len) != 0)
            continue;
        if (shown++ == 4) {
            used += (size_t)snprintf(err + used, errlen - used, ", ...");
            break;
        }
        used += (size_t)snprintf(err + used, errlen - used, "%s%s",
                                 shown == 1 ? "; did you mean " : ", ", names[i]);
    }
    if (shown == 0) {
        unsigned best = TEXT_DISTANCE_FAR, limit = (unsigned)(len / 3 > 2 ? len / 3 : 2);
        int at = -1;
        for (int i = 0; i < n; i++) {
            unsigned d = text_distance(typed, names[i]);
            if (d < best)
                best = d, at = i;
        }
        if (at >= 0 && best <= limit && used < errlen)
            used += (size_t)snprintf(err + used, errlen - used, "; did you mean %s", names[at]);
        shown = at >= 0 && best <= limit;
    }
    if (shown && used < errlen)
        used += (size_t)snprintf(err + used, errlen - used, "?");
    const char *mode = cli_mode_near(typed);
    if (mode && strcmp(mode, typed) != 0 && used < errlen)
        snprintf(err + used, errlen - used, "; %s looks like the mode %s mistyped (--demo %s)",
                 typed, mode, mode);
    else if (mode && used < errlen)
        snprintf(err + used, errlen - used, "; %s is a mode: --demo %s runs it on the default "
                 "scenario", mode, mode);
}

/* Appends the names (sorted, without ".ini") to err: " (available: a, b)". */
static void list_names(char **names, int n, char *err, size_t errlen)
{
    size_t used = strlen(err);
    if (n <= 0) {
        snprintf(err + used, errlen - used, " (it has no scenarios)");
        return;
    }
    for (int i = 0; i < n && used < errlen; i++)
        used += (size_t)snprintf(err + used, errlen - used, "%s%s", i ? ", " : " (available: ",
                                 names[i]);
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
    int n;
    char **names = names_of(dir, &n);
    suggest(name, base, names, n, err, errlen);
    list_names(names, n, err, errlen);
    names_free(names, n);
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
