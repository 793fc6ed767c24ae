/*
 * profile.h — `mig-gpu-mon profile [OPTIONS] -- CMD ARGS...`: run one job
 * and report its peak GPU and CPU memory, energy and activity
 * (docs/profile.md).
 */
#ifndef MIGMON_PROFILE_H
#define MIGMON_PROFILE_H

#include "app/cli.h"

/* profile's options, for cli_mode_index. */
extern const struct cli_options profile_options;

/* argv is the whole command line, argv[at] the mode word `profile`
 * (cli_mode_index); its options may come before and after it. self_exe:
 * this binary (the GPM helper, --demo). Returns the process exit status:
 * the command's (128+N when it died of signal N), 127 when it cannot be
 * found, 126 when it cannot be executed, 2 on bad usage. */
int profile_main(int argc, char **argv, int at, const char *self_exe);

#endif
