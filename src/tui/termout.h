/*
 * termout.h — the frame's changed cells written to the terminal by the
 * monitor itself, instead of by curses' doupdate().
 *
 * curses stays in charge of the terminal's modes, the keyboard, resizing
 * and the window's cells (the frame still writes every changed cell into
 * the window, which tests read back); only the output of a frame is ours.
 * doupdate() formats a terminfo string for every cursor move and colour
 * change it weighs (about half of a 200x60 frame's cost); here the strings
 * come from the same terminfo entry, each colour and attribute combination
 * formatted once and cursor addresses formatted directly when the entry's
 * cup is the ANSI one (every xterm, tmux, screen and Linux console entry).
 *
 * A frame: termout_cell() for each changed cell in screen order, then
 * termout_flush() writes it in one write(). termout_reset() says the
 * screen is to be cleared first (a new or resized window, or after the
 * terminal was given back and resumed). One instance, the UI thread's;
 * no locking.
 */
#ifndef MIGMON_TUI_TERMOUT_H
#define MIGMON_TUI_TERMOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "tui/theme.h" /* curses, wide-character API */

/* Read the terminal's capabilities (after the screen is set up and the
 * colour pairs are defined); true when frames can be written directly:
 * the terminal can address the cursor and reset attributes. fd is where
 * curses writes (the terminal). */
bool termout_open(int fd);

/* Stop writing frames directly (and free nothing: all storage is static). */
void termout_close(void);

/* Frames are written directly. */
bool termout_active(void);

/* The next frame starts from a cleared screen. */
void termout_reset(void);

/* Cell (y, x) of a rows x cols screen: character wc of width w (1 or 2),
 * with n combining characters, attributes a (no colour bits) and colour
 * pair. */
void termout_cell(int y, int x, int rows, int cols, wchar_t wc, int w, const wchar_t *comb,
                  int n, attr_t a, short pair);

/* Write the frame; returns the bytes written (0 when nothing changed), -1
 * when the write failed (the terminal went away). */
long termout_flush(void);

#endif
