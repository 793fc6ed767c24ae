/*
 * overlays.h — the popups over the screen: help, a process's whole command
 * line, the signal prompt, and every reason a value of the selected device
 * is N/A. Drawn by tui_draw, opened by keys in tui.c.
 */
#ifndef MIGMON_TUI_OVERLAYS_H
#define MIGMON_TUI_OVERLAYS_H

#include "tui/view.h"

/* The popup v->modal names, if any. */
void tui_draw_overlay(WINDOW *win, struct tui_view *v);

/* Whether the process can be signalled from here: visible in our PID
 * namespace and still the process listed (same start time, read from
 * proc_root or /proc). When not, why (for the footer). */
bool tui_proc_signalable(const struct gpu_process *p, const char *proc_root, char *why,
                         size_t len);

#endif
