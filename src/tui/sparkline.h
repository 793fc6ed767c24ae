/*
 * sparkline.h — charts of history series: the sparkline and the RAM chart,
 * drawn as widgets are (widgets.h): inside their rectangle only.
 */
#ifndef MIGMON_TUI_SPARKLINE_H
#define MIGMON_TUI_SPARKLINE_H

#include "core/history.h"
#include "tui/rect.h"
#include "tui/theme.h"

/*
 * A sparkline of series s in r, scaled 0..scale_max (values above are drawn
 * full, below 0 empty). Newest point in the rightmost column, older to the
 * left, as many points as r.w; r.h rows give r.h*8 levels, value rounded to
 * the nearest level (not truncated). A gap (none) leaves the column blank;
 * carried and estimate points are drawn dim. scale_max <= 0 draws nothing.
 */
void tui_sparkline(WINDOW *win, const struct tui_theme *t, struct rect r,
                   const struct hist_series *s, double scale_max, enum tui_role role);

/* Level of a value in a sparkline of `rows` rows: 0 .. rows*8, rounded to
 * the nearest eighth of a row. Exposed for tests. */
int tui_spark_level(double v, double scale_max, int rows);

/*
 * The RAM chart: one column per tick (newest right), used stacked under
 * cached, scaled to total bytes over r.h rows with eighth-of-a-row
 * precision. The cell where used ends is drawn in the used colour over a
 * cached background when the column has cached memory, so the two touch
 * (seed v0.3.9); used is coloured by that column's used %. Columns with a
 * gap are blank. total <= 0 draws nothing.
 */
void tui_ram_chart(WINDOW *win, const struct tui_theme *t, struct rect r,
                   const struct hist_series *used, const struct hist_series *cached,
                   double total);

#endif
