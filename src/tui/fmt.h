/*
 * fmt.h — formatting and drawing helpers shared by the TUI's pane files
 * (panels.c, detail.c, devices.c, charts.c, allprocs.c, overlays.c); not
 * part of the TUI's interface.
 */
#ifndef MIGMON_TUI_FMT_H
#define MIGMON_TUI_FMT_H

#include "tui/view.h"
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
/* pre, v as printf's "%.0f", post: what snprintf writes into out, without
 * its float conversion; false (nothing written) when v is not finite or
 * beyond 10^15 */
bool tui_fmt_whole(char *out, size_t len, const char *pre, double v, const char *post);
/* "45%", "~45%" (estimate), "45%*" (carried) or "N/A" */
const char *tui_fmt_pct(char *out, size_t len, const struct metric *m, int decimals);
/* value * scale with the same markers */
const char *tui_fmt_num(char *out, size_t len, const struct metric *m, double scale,
                        int decimals);
/* VRAM used / total in %, none when either is unknown */
struct metric tui_vram_pct(const struct device *d);
/* " gpm", " proc" or "" after a value from GPM / per-process samples */
const char *tui_src_tag(const struct metric *m);
/* role, or the dim N/A role when m is none */
enum tui_role tui_na_or(const struct metric *m, enum tui_role role);

/* Bytes of the first of len bytes of s that one line of w columns takes,
 * broken at the last space that fits (the whole w when there is none).
 * Byte-counted: for reasons and messages, which are ASCII. */
size_t tui_wrap_take(const char *s, size_t len, int w);
/* A device's name; short drops the "NVIDIA " every product name starts
 * with. Without a name: what NVML said instead, in parentheses. */
void tui_device_name(char *out, size_t len, const struct device *d, bool short_name);
/* A temperature in the view's unit: "53°C", "127°F" (markers kept), "N/A". */
const char *tui_fmt_temp(char *out, size_t len, const struct tui_view *v, const struct metric *m);
/* Sizes, rates and energy of a metric with its markers ("~", "*"), "N/A". */
const char *tui_fmt_bytes(char *out, size_t len, const struct metric *m);
const char *tui_fmt_rate(char *out, size_t len, const struct metric *m);
/* A gauge of `cells` cells at (y, x) inside r for a percentage: filled
 * cells in role, the rest dim; dim throughout when pct is none, and the
 * filled part dim for a carried or estimated value. Returns x after it. */
int tui_gauge(WINDOW *win, const struct tui_view *v, struct rect r, int y, int x, int cells,
              const struct metric *pct, enum tui_role role);

/* Device rows' figures: " [util gauge] 45% gpm  [VRAM gauge] 77%" (the
 * VRAM of a MIG-enabled GPU that cannot read its own: its instances' sum,
 * "Σ48%"); gauge_cells 0: the values alone; < 0: utilisation alone. d is
 * device i of v->snap. */
#define DEV_VAL_W 5
#define DEV_TAG_W 5
#define DEV_FIG_FIXED 19
int tui_dev_figures_width(int gauge_cells);
void tui_dev_figures(WINDOW *win, const struct tui_view *v, struct rect r, size_t i,
                     int gauge_cells);

#endif
