/*
 * fmt.h — formatting and drawing helpers shared by the TUI's panel files
 * (panels.c, charts.c); not part of the TUI's interface.
 */
#ifndef MIGMON_TUI_FMT_H
#define MIGMON_TUI_FMT_H

#include "tui/panels.h"
#include "tui/widgets.h"

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * 1024.0 * 1024.0)

/* A run of text with its role; tui_line() draws pieces left to right. */
struct piece {
    enum tui_role role;
    const char *s;
};

void tui_line(WINDOW *win, const struct tui_view *v, struct rect r, int y, const struct piece *p,
              size_t n);
/* "45%", "~45%" (estimate), "45%*" (carried) or "N/A" */
const char *tui_fmt_pct(char *out, size_t len, const struct metric *m, int decimals);
/* value * scale with the same markers */
const char *tui_fmt_num(char *out, size_t len, const struct metric *m, double scale,
                        int decimals);
/* VRAM used / total in %, none when either is unknown */
struct metric tui_vram_pct(const struct device *d);
/* the selected device, or NULL */
const struct device *tui_view_selected(const struct tui_view *v);

#endif
