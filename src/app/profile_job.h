/*
 * profile_job.h — COMMAND as `profile` runs it: started so that it dies
 * with the profiler, the signals the profiler gets passed on to it, and a
 * second one escalated to SIGKILL (docs/profile.md).
 */
#ifndef MIGMON_PROFILE_JOB_H
#define MIGMON_PROFILE_JOB_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "export/jsonw.h"

/* The most signals a report names; more are counted. */
#define PROFJOB_SIGS_MAX 8

struct profjob {
    pid_t child;
    /* the signals the profiler got while COMMAND ran, in order */
    int sigs[PROFJOB_SIGS_MAX];
    unsigned nsigs;      /* all of them, those past PROFJOB_SIGS_MAX too */
    unsigned taken;      /* received signals acted on (profjob_take_signals) */
    bool first_from_tty; /* the first came from the terminal, which sent it to COMMAND too */
    bool killed;         /* a second one: COMMAND was sent SIGKILL */
};

/* Block the four signals passed on (SIGINT, SIGTERM, SIGHUP, SIGQUIT) in
 * the calling thread, the old mask in old: a thread created meanwhile
 * never takes them. */
void profjob_block_signals(sigset_t *old);

/* Catch the four signals (on the main thread): each is kept for
 * profjob_take_signals. Ends a sleep early (no SA_RESTART). */
void profjob_handle_signals(void);

/* Fork and exec cmd (NULL-terminated, searched in PATH); j->child is set.
 * Returns 0, or the errno of a fork or exec that failed (the child reaped). */
int profjob_start(struct profjob *j, char *const *cmd);

/* Act on the signals received since the last call: the first passed on
 * (unless the terminal sent it to COMMAND already), a second while
 * COMMAND runs sends it SIGKILL. */
void profjob_take_signals(struct profjob *j);

/* The report's part: JSON keys signals, signals_received,
 * killed_by_profiler; a text line "Signals: ..." when there were any. */
void profjob_report_json(struct jsonw *w, const struct profjob *j);
void profjob_report_text(FILE *f, const struct profjob *j);

#endif
