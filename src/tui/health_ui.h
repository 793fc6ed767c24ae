/*
 * health_ui.h — device health as the interactive monitor shows it: the mark
 * on a device row, the header's summary, and the text of the events
 * overlay (key e). Text only, no curses calls, so each is unit tested;
 * devices.c, panels.c and overlays.c draw them. The verdicts are health.h's,
 * the events the snapshot's, their meaning backend/events/xid.h's.
 */
#ifndef MIGMON_TUI_HEALTH_UI_H
#define MIGMON_TUI_HEALTH_UI_H

#include <stdbool.h>
#include <stddef.h>

#include "core/snapshot.h"
#include "tui/theme.h"

/* The mark of a device row for a health level (enum health_level): "" for
 * ok and unknown, "!" for a warning, "!!" for action, readable without
 * colour; *role (may be NULL) its colour: R_WARN, R_ALARM. Static. */
const char *tui_health_mark(unsigned level, enum tui_role *role);

/* How much of the summary the width holds (tui_health_summary). */
enum tui_health_form {
    TUI_HEALTH_FULL,  /* "GPU health: 1 action, 2 warning (e: events)" */
    TUI_HEALTH_BRIEF, /* "health: 1 action, 2 warning" */
    TUI_HEALTH_TINY,  /* "health !!": the worst level's mark */
};

/*
 * The header's summary in a form: the GPUs of s that are not ok, each
 * counted at the worst verdict of itself and its MIG instances (a MIG
 * device whose GPU is not in s counts as one). Nothing (false, out "")
 * when none is at warning or action: unknown verdicts are not summed (the
 * detail panel says them). *role (may be NULL): R_ALARM when one needs
 * action, else R_WARN.
 */
bool tui_health_summary(char *out, size_t len, const struct snapshot *s,
                        enum tui_health_form form, enum tui_role *role);

/*
 * The events overlay's text into out, one line per '\n': first what there
 * is ("2 events since the monitor started, newest first"; how many older
 * ones were not kept; "no health events: WHY" when events cannot be had),
 * then each kept event, newest first, as two lines:
 *   "12:03:04    5 s ago  MIG 0.1 2g.35gb  Xid 94   <meaning>"
 *   "    action: <what to do>"
 * The time is the event's wall clock (local time) and its age against the
 * snapshot's elapsed time; the first 20 columns are always that. Returns
 * the number of events written (the text is cut when out is full).
 */
size_t tui_events_text(char *out, size_t len, const struct snapshot *s);

/* "12 s", "5 min", "3 h", "2 d": a duration in whole units (cut down;
 * seconds below 2 min, minutes below 2 h, hours below 2 days), for ages
 * and hold-down times. */
const char *tui_fmt_duration(char *out, size_t len, double seconds);

#endif
