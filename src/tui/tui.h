/*
 * tui.h — the interactive monitor: ncurses screen, event loop, keys.
 *
 * One poll() loop drives ticks (drift-corrected to the interval), keys,
 * mouse and resizes; a key redraws at once without taking a sample.
 *
 * Test hooks (environment, for the tmux screen tests; see docs/testing.md):
 *   MIGMON_TEST_TICKS=N   take N samples back to back at start, then sample
 *                         only on SIGUSR1 (one sample per signal)
 *   MIGMON_TEST_FRAMES=F  after every drawn frame write "TICKS FRAMES PID\n" to F
 */
#ifndef MIGMON_TUI_TUI_H
#define MIGMON_TUI_TUI_H

#include <stdbool.h>

#include "engine/collect.h"

struct replay;

struct tui_opts {
    unsigned interval_ms;
    bool no_color;          /* --no-color */
    const char *demo_label; /* shown in the header, or NULL */
    const char *proc_root;  /* where /proc is (tests), NULL for /proc */
    unsigned history;       /* points per chart series; 0: the default */
    bool fahrenheit;        /* temperatures in °F */
    bool thermal_charts;    /* start on the temperature/power/clock charts */
    /* Replaying a recording (backend/replay/replay.h): the collector's backend
     * state; the loop paces the snapshots as recorded, speed times. */
    struct replay *replay;
    double speed;
    bool paused; /* start paused */
};

/* Run until quit. Returns the process exit status: 0 after q / Ctrl-C /
 * SIGTERM / SIGHUP, 2 when the terminal cannot be used (not a tty, unknown
 * TERM), 1 on a runtime error. The terminal is restored on every path,
 * including crash signals (restore, then re-raise). */
int tui_run(struct collector *col, const struct tui_opts *o);

#endif
