/*
 * rect.h — a rectangle of the screen in cells: what the layout hands out
 * and what every widget draws into.
 */
#ifndef MIGMON_TUI_RECT_H
#define MIGMON_TUI_RECT_H

struct rect {
    int y, x, h, w;
};

#endif
