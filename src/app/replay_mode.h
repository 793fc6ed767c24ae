/*
 * main.h — the replay mode's entry (docs/replay.md).
 */
#ifndef MIGMON_REPLAY_MAIN_H
#define MIGMON_REPLAY_MAIN_H

#include "app/cli.h"

/* The replay mode's options as getopt_long takes them (cli_mode_index
 * reads every mode's). */
extern const struct cli_options replay_options;

/* argv[at] is "replay", where cli_mode_index found it: its options come
 * before and after it, FILE after it. Returns the exit status. */
int replay_main(int argc, char **argv, int at);

#endif
