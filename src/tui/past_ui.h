/*
 * past_ui.h — the selected device's charts filled from the backend's own
 * past, where it keeps one (the fleet view: a Prometheus range query over
 * the chart's window, docs/fleet.md), rather than only from the
 * snapshots the monitor has taken since it started.
 *
 * The loop (tui.c) calls tui_past_update after each snapshot and key: when
 * the selected device or the interval changed since the last ask, it asks
 * the backend (collect_past_ask) for the device's chart series over the
 * history's points at the interval; the backend fetches them in a thread
 * of its own. tui_past_take, called while an answer is pending (the loop
 * then wakes every TUI_PAST_POLL_MS), puts the answer into the history:
 * the past, then the points pushed since the ask. The screen never waits
 * for it. UI thread only.
 */
#ifndef MIGMON_TUI_PAST_UI_H
#define MIGMON_TUI_PAST_UI_H

#include <stdbool.h>
#include <stdint.h>

#include "core/history.h"
#include "engine/collect.h"
#include "tui/view.h"

#define TUI_PAST_POLL_MS 50

struct tui_past {
    struct collector *col; /* borrowed */
    struct history *hist;  /* borrowed: the charts' */
    struct tui_view *v;    /* borrowed */
    bool none;             /* the backend keeps no past: never asked again */
    char node[64];              /* the device asked for last: its node (a fleet's) */
    char uuid[MIGMON_UUID_LEN]; /* and UUID; "" none */
    unsigned interval_ms;  /* the interval of that ask */
    uint64_t id;           /* of that ask */
    uint64_t ticks;        /* hist->ticks at that ask */
    bool pending;          /* its answer has not come */
};

/* Ask for the selected device's past when it or the interval changed. */
void tui_past_update(struct tui_past *P);
/* Take the answer if it has come: true when the charts changed (or the
 * footer says why they could not). */
bool tui_past_take(struct tui_past *P);
/* How long the loop may wait before tui_past_take is due (ms); -1 none. */
int tui_past_poll_ms(const struct tui_past *P);

#endif
