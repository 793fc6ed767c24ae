/*
 * replay_ui.h — the interactive monitor replaying a recording
 * (backend/replay/replay.h): the pace, the keys that move it and the footer's
 * position bar. The loop (tui.c) takes each snapshot the engine makes as
 * live; the engine ticks only when asked, and each tick gives the snapshot
 * at the replay's place.
 */
#ifndef MIGMON_TUI_REPLAY_UI_H
#define MIGMON_TUI_REPLAY_UI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/replay/replay.h"
#include "core/history.h"
#include "engine/engine.h"
#include "tui/view.h"

struct tui_replay {
    struct replay *rp; /* NULL: not replaying */
    struct engine *eng;
    struct history *hist; /* the charts' history, made again on a jump back */
    struct tui_view *v;
    size_t hist_points;
    double speed;
    bool playing;
    bool started;      /* a snapshot is shown */
    unsigned pending;  /* snapshots asked for and not yet taken */
    uint64_t shown_at; /* CLOCK_MONOTONIC when the shown one came */
    struct replay_where where;
};

/* The first snapshot of the part replayed (and none before it). */
void tui_replay_start(struct tui_replay *R);
/* The loop took a snapshot from the engine. */
void tui_replay_taken(struct tui_replay *R);
/* Show snapshot rec, the history leading to it made again unless it is
 * the one after the shown one. */
void tui_replay_goto(struct tui_replay *R, uint64_t rec);
/* Playing: ms until the next snapshot is due (0: now); -1 none. */
int tui_replay_due_ms(struct tui_replay *R);
/* Space, . , ] [ > < + -: true when key was one of the replay's. */
bool tui_replay_key(struct tui_replay *R, int key);

#endif
