/*
 * demo.h — --demo: find the bundled NVML simulator and its scenarios, and
 * check a scenario before the monitor starts on it.
 *
 * The simulator's files are looked for relative to the running binary, in
 * this order, each file in the first place that has it:
 *   <exe dir>/sim/                      a source tree (./mig-gpu-mon) or a
 *                                       build directory (build/mig-gpu-mon)
 *   <exe dir>/../sim/                   a build directory's source tree
 *   <exe dir>/../lib/mig-gpu-mon/sim/   an installed prefix (make install)
 * so an installed copy works wherever its prefix was moved to.
 */
#ifndef MIGMON_DEMO_H
#define MIGMON_DEMO_H

#include <stdbool.h>
#include <stddef.h>

#define DEMO_DEFAULT_SCENARIO "h200-mig"
#define DEMO_SIM_LIB "sim/libnvidia-ml.so.1"
#define DEMO_SCENARIO_DIR "sim/scenarios"

/*
 * The first existing <base>/rel over the places above, for the binary at
 * exe (an absolute path, as /proc/self/exe gives it), into out. Returns
 * true, or false with out holding the places searched ("A, B or C").
 */
bool demo_find(const char *exe, const char *rel, char *out, size_t len);

/*
 * The scenario file that the --demo value arg names (NULL: the default
 * scenario), into path. A value containing '/' is a file path; anything
 * else is a bundled scenario's name, with or without ".ini". Returns 0, or
 * -1 with one line in err: for an unknown name, the directory searched and
 * the names it has.
 */
int demo_scenario_path(const char *exe, const char *arg, char *path, size_t len, char *err,
                       size_t errlen);

/*
 * Whether the simulator library lib loads and accepts the scenario file
 * path, asked through the simulator's own parser (migmon_sim_check_scenario),
 * so that a bad file is reported as such, with its line, rather than as an
 * NVML init failure. Returns 0 (also when the library has no such function),
 * or -1 with one line in err: the loader's or the simulator's message.
 */
int demo_check_scenario(const char *lib, const char *path, char *err, size_t errlen);

/*
 * All of --demo: the scenario arg names (NULL: the default) checked, the
 * simulator library into lib, MIGMON_SIM_SCENARIO set for it, and a label
 * for the header ("DEMO (simulated: h200-mig.ini)"). Returns 0, or -1 after
 * printing one line on stderr.
 */
int demo_setup(const char *exe, const char *arg, char *lib, size_t liblen, char *label,
               size_t lablen);

/*
 * The bundled simulator's DCGM (libdcgm.so.4 beside the simulated NVML
 * library nvml_lib, serving the same scenario) into out. Returns out, or
 * NULL when there is none.
 */
const char *demo_dcgm_lib(const char *nvml_lib, char *out, size_t outlen);

#endif
