/*
 * main.h — the replay mode's entry (docs/replay.md).
 */
#ifndef MIGMON_REPLAY_MAIN_H
#define MIGMON_REPLAY_MAIN_H

/* argv[at] is "replay"; its options and FILE follow. Returns the exit
 * status. */
int replay_main(int argc, char **argv, int at);

#endif
