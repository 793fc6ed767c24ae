/*
 * terminfo_builtin.h — compiled terminfo entries of the common terminals,
 * built into the binary, for hosts that lack an entry for TERM (a container
 * image, a minimal system, the portable binary on another distribution).
 *
 * The entries (xterm, xterm-256color, screen, screen-256color, tmux,
 * tmux-256color, linux, vt100) are compiled with tic when the binary is
 * built (scripts/embed-terminfo.sh). ncurses reads terminfo only from files,
 * so when setupterm finds no entry for TERM and TERM is one of these, its
 * entry is written to a private directory (mkdtemp under $TMPDIR or /tmp),
 * TERMINFO points there while curses reads it, and then both go away.
 */
#ifndef MIGMON_TUI_TERMINFO_BUILTIN_H
#define MIGMON_TUI_TERMINFO_BUILTIN_H
#include <stddef.h>

struct terminfo_entry {
    const char *name;          /* the terminal's name, as TERM gives it */
    const char *path;          /* relative to a terminfo directory: "x/xterm" */
    const unsigned char *data; /* tic's compiled entry */
    size_t len;
};
/* The generated table ($(BUILD)/gen/terminfo_data.c). */
extern const struct terminfo_entry terminfo_builtin[];
extern const size_t terminfo_builtin_count;

/* The built-in entry for the terminal name, or NULL. */
const struct terminfo_entry *terminfo_builtin_find(const char *name);

/*
 * A private terminfo directory for TERM's built-in entry: writes it, saves
 * TERMINFO as it was and points TERMINFO at the directory (path into dir,
 * dirlen at least 64). Returns 0, or -1 (TERM unset or not built in, or the
 * directory could not be written; nothing is left behind).
 */
int terminfo_builtin_install(char *dir, size_t dirlen);
/*
 * Once curses has read the entry: removes the directory and gives TERMINFO
 * back its value from before install (or unsets it), so that the programs
 * this one starts do not see a directory that is gone.
 */
void terminfo_builtin_remove(const char *dir);
#endif
