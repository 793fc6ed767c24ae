/* --demo (src/app/demo.c): where the simulator and its scenarios are found from
 * the binary's path, how a scenario is named, and a bad file reported with
 * the simulator's own message. Needs MIGMON_SIM_LIB and MIGMON_SRC. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "app/demo.h"

static char root[PATH_MAX];

static void touch(const char *rel)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/%s", root, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("[system]\ndriver_version = 550.144.03\n", f);
    fclose(f);
}

static void mkdirs(const char *rel)
{
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", root, rel);
    assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
    (void)state;
    char tmp[] = "/tmp/migmon-demo-XXXXXX";
    /* canonical, as the found paths are */
    return mkdtemp(tmp) && realpath(tmp, root) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

/* An installed prefix: bin/mig-gpu-mon and lib/mig-gpu-mon/sim/. */
static void test_installed_prefix(void **state)
{
    (void)state;
    char exe[PATH_MAX + 32], path[PATH_MAX], err[2048], want[PATH_MAX * 2];
    mkdirs("bin");
    mkdirs("lib/mig-gpu-mon/sim/scenarios");
    touch("lib/mig-gpu-mon/sim/libnvidia-ml.so.1");
    touch("lib/mig-gpu-mon/sim/scenarios/zeta.ini");
    touch("lib/mig-gpu-mon/sim/scenarios/h200-mig.ini");
    touch("lib/mig-gpu-mon/sim/scenarios/h200-mig-595.ini");
    touch("lib/mig-gpu-mon/sim/scenarios/README");
    snprintf(exe, sizeof(exe), "%s/bin/mig-gpu-mon", root);

    assert_true(demo_find(exe, DEMO_SIM_LIB, path, sizeof(path)));
    snprintf(want, sizeof(want), "%s/lib/mig-gpu-mon/sim/libnvidia-ml.so.1", root);
    assert_string_equal(path, want);

    /* the default, a name, the same name with .ini */
    snprintf(want, sizeof(want), "%s/lib/mig-gpu-mon/sim/scenarios/h200-mig.ini", root);
    assert_int_equal(demo_scenario_path(exe, NULL, path, sizeof(path), err, sizeof(err)), 0);
    assert_string_equal(path, want);
    assert_int_equal(demo_scenario_path(exe, "h200-mig", path, sizeof(path), err, sizeof(err)), 0);
    assert_string_equal(path, want);
    assert_int_equal(demo_scenario_path(exe, "h200-mig.ini", path, sizeof(path), err, sizeof(err)),
                     0);
    assert_string_equal(path, want);

    /* an unknown name: the directory searched and the names, sorted, no .ini */
    assert_int_equal(demo_scenario_path(exe, "nope", path, sizeof(path), err, sizeof(err)), -1);
    snprintf(want, sizeof(want),
             "--demo=nope: no such scenario in %s/lib/mig-gpu-mon/sim/scenarios "
             "(available: h200-mig, h200-mig-595, mi300x, zeta)",
             root);
    assert_string_equal(err, want);
    assert_int_equal(demo_scenario_path(exe, ".ini", path, sizeof(path), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "--demo=.ini: no such scenario in"));
    /* the nearest: the names it begins, else the nearest by edits (a swap
     * of neighbours is one); a mode word's typo */
    assert_int_equal(demo_scenario_path(exe, "h200", path, sizeof(path), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "; did you mean h200-mig, h200-mig-595? (available: "));
    assert_int_equal(demo_scenario_path(exe, "zeat", path, sizeof(path), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "; did you mean zeta? (available: "));
    assert_int_equal(demo_scenario_path(exe, "qqqqqq", path, sizeof(path), err, sizeof(err)), -1);
    assert_null(strstr(err, "did you mean"));
    assert_int_equal(demo_scenario_path(exe, "exprot", path, sizeof(path), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "; exprot looks like the mode export mistyped (--demo export) ("));
}

/* A build directory: build/mig-gpu-mon with build/sim/ (the library) and
 * the source tree's sim/scenarios one level up. */
static void test_build_tree(void **state)
{
    (void)state;
    char exe[PATH_MAX + 32], path[PATH_MAX], err[2048], want[PATH_MAX * 2];
    mkdirs("build/sim");
    mkdirs("sim/scenarios");
    touch("build/sim/libnvidia-ml.so.1");
    touch("sim/libnvidia-ml.so.1");
    touch("sim/scenarios/a100.ini");
    snprintf(exe, sizeof(exe), "%s/build/mig-gpu-mon", root);
    assert_true(demo_find(exe, DEMO_SIM_LIB, path, sizeof(path)));
    snprintf(want, sizeof(want), "%s/build/sim/libnvidia-ml.so.1", root);
    assert_string_equal(path, want);
    assert_int_equal(demo_scenario_path(exe, "a100", path, sizeof(path), err, sizeof(err)), 0);
    snprintf(want, sizeof(want), "%s/sim/scenarios/a100.ini", root); /* no "build/.." */
    assert_string_equal(path, want);

    /* ./mig-gpu-mon at the top of the source tree */
    snprintf(exe, sizeof(exe), "%s/mig-gpu-mon", root);
    assert_true(demo_find(exe, DEMO_SIM_LIB, path, sizeof(path)));
    snprintf(want, sizeof(want), "%s/sim/libnvidia-ml.so.1", root);
    assert_string_equal(path, want);
}

/* Nothing installed: the places searched, in order. */
static void test_nothing_installed(void **state)
{
    (void)state;
    char exe[PATH_MAX + 32], path[PATH_MAX], err[4096], want[PATH_MAX * 4];
    mkdirs("bin");
    snprintf(exe, sizeof(exe), "%s/bin/mig-gpu-mon", root);
    assert_false(demo_find(exe, DEMO_SIM_LIB, path, sizeof(path)));
    snprintf(want, sizeof(want),
             "%s/bin/sim/libnvidia-ml.so.1, %s/sim/libnvidia-ml.so.1 or "
             "%s/lib/mig-gpu-mon/sim/libnvidia-ml.so.1",
             root, root, root);
    assert_string_equal(path, want);
    assert_int_equal(demo_scenario_path(exe, "x", path, sizeof(path), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "--demo=x: the bundled scenarios are not installed (looked for "));
}

/* A value with '/' is a file path, used as given. */
static void test_path_argument(void **state)
{
    (void)state;
    char exe[PATH_MAX + 32], arg[PATH_MAX + 32], path[PATH_MAX], err[2048], want[PATH_MAX * 2];
    snprintf(exe, sizeof(exe), "%s/bin/mig-gpu-mon", root);
    touch("mine.ini");
    snprintf(arg, sizeof(arg), "%s/mine.ini", root);
    assert_int_equal(demo_scenario_path(exe, arg, path, sizeof(path), err, sizeof(err)), 0);
    assert_string_equal(path, arg);
    snprintf(arg, sizeof(arg), "%s/missing.ini", root);
    assert_int_equal(demo_scenario_path(exe, arg, path, sizeof(path), err, sizeof(err)), -1);
    snprintf(want, sizeof(want), "--demo=%s: cannot read that scenario file: No such file or directory",
             arg);
    assert_string_equal(err, want);
    assert_int_equal(demo_scenario_path(exe, root, path, sizeof(path), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "a directory, not a scenario file"));
}

/* The simulator's parser judges the file; its message names file and line. */
static void test_check_scenario(void **state)
{
    (void)state;
    const char *lib = getenv("MIGMON_SIM_LIB"), *src = getenv("MIGMON_SRC");
    assert_non_null(lib);
    assert_non_null(src);
    char path[PATH_MAX + 64], err[2048], want[PATH_MAX * 2];
    snprintf(path, sizeof(path), "%s/sim/scenarios/h200-mig.ini", src);
    assert_int_equal(demo_check_scenario(lib, path, err, sizeof(err)), 0);

    snprintf(path, sizeof(path), "%s/bad.ini", root);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("[system]\ndriver_version = 550.144.03\nbogus = 1\n", f);
    fclose(f);
    assert_int_equal(demo_check_scenario(lib, path, err, sizeof(err)), -1);
    snprintf(want, sizeof(want), "--demo: invalid scenario file: %s:3: [system] unknown key 'bogus'",
             path);
    assert_string_equal(err, want);

    /* a simulator that does not load is reported as that, not as --nvml-path */
    assert_int_equal(demo_check_scenario("/nonexistent/libnvidia-ml.so.1", path, err, sizeof(err)),
                     -1);
    assert_string_equal(err, "--demo: cannot load the bundled simulator: /nonexistent/"
                             "libnvidia-ml.so.1: cannot open shared object file: No such file or "
                             "directory");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_installed_prefix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_build_tree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nothing_installed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_path_argument, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_scenario, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
