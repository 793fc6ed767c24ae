/*
 * replay_ui.c — pace, keys and position bar of a replay (replay_ui.h).
 */
#include "tui/replay_ui.h"

#include <stdio.h>
#include <string.h>

#include "core/clock.h"

/* The footer's position bar from where the replay is. */
static void bar(struct tui_replay *R)
{
    const struct replay_where *w = &R->where;
    struct tui_replay_bar *b = &R->v->replay;
    b->on = true;
    b->playing = R->playing;
    b->speed = R->speed;
    b->wall_ns = w->shown_wall;
    b->pos = w->shown - w->from + 1;
    b->count = w->to - w->from + 1;
    b->frac = w->to > w->from ? (double)(w->shown - w->from) / (double)(w->to - w->from) : 1;
    b->skipped = w->garbage + w->damaged + (w->cut_bytes ? 1 : 0);
}

/* Show snapshot rec with the history that leads to it: the history is
 * made again from the snapshots before it (as many as it holds). */
void tui_replay_goto(struct tui_replay *R, uint64_t rec)
{
    uint64_t from = R->where.from;
    rec = rec < from ? from : rec > R->where.to ? R->where.to : rec;
    if (R->pending || (rec == R->where.shown && R->started))
        return; /* one move at a time; none to where it is */
    if (rec == R->where.shown + 1 && R->started) {
        replay_seek(R->rp, rec); /* the next one: the history goes on */
        R->pending = 1;
        engine_request_tick(R->eng, 1);
        return;
    }
    history_free(R->hist);
    if (history_init(R->hist, R->hist_points) != 0)
        memset(R->hist, 0, sizeof(*R->hist));
    uint64_t n = R->hist->points ? R->hist->points : 1;
    uint64_t start = rec - from + 1 > n ? rec - n + 1 : from;
    replay_seek(R->rp, start);
    R->pending = (unsigned)(rec - start + 1);
    engine_request_tick(R->eng, R->pending);
}

/* Playing: when the next snapshot is due (ms from now; -1 none). A gap of
 * more than 10 s in the recording is played in 10 s / speed. */
int tui_replay_due_ms(struct tui_replay *R)
{
    if (!R->playing || R->pending || !R->where.has_next)
        return -1;
    uint64_t gap = R->where.next_elapsed > R->where.shown_elapsed
                       ? R->where.next_elapsed - R->where.shown_elapsed
                       : 0;
    if (gap > 10000000000ull)
        gap = 10000000000ull;
    uint64_t due = R->shown_at + (uint64_t)((double)gap / R->speed);
    uint64_t now = clock_mono_ns();
    return due <= now ? 0 : (int)((due - now + 999999) / 1000000);
}

/* The replay's keys; false when the key is not one of them. */
bool tui_replay_key(struct tui_replay *R, int key)
{
    const struct replay_where *w = &R->where;
    switch (key) {
    case ' ':
        R->playing = !R->playing && w->has_next;
        R->shown_at = clock_mono_ns();
        break;
    case '.':
        R->playing = false;
        tui_replay_goto(R, w->shown + 1);
        break;
    case ',':
        R->playing = false;
        tui_replay_goto(R, w->shown > w->from ? w->shown - 1 : w->from);
        break;
    case ']':
        tui_replay_goto(R, replay_find_from(R->rp, w->shown_elapsed, 60000000000ll));
        break;
    case '[':
        tui_replay_goto(R, replay_find_from(R->rp, w->shown_elapsed, -60000000000ll));
        break;
    case '>':
        tui_replay_goto(R, w->to);
        break;
    case '<':
        tui_replay_goto(R, w->from);
        break;
    case '+':
    case '=':
    case '-':
    case '_':
        R->speed = key == '+' || key == '=' ? R->speed * 2 : R->speed / 2;
        R->speed = R->speed < 0.125 ? 0.125 : R->speed > 1024 ? 1024 : R->speed;
        snprintf(R->v->status, sizeof(R->v->status), "replaying at %gx the recorded pace", R->speed);
        break;
    default:
        return false;
    }
    bar(R);
    return true;
}

void tui_replay_start(struct tui_replay *R)
{
    replay_where(R->rp, &R->where);
    R->where.shown = R->where.from;
    tui_replay_goto(R, R->where.from);
}

void tui_replay_taken(struct tui_replay *R)
{
    if (R->pending == 0 || --R->pending > 0)
        return;
    R->started = true;
    R->shown_at = clock_mono_ns();
    replay_where(R->rp, &R->where);
    if (!R->where.has_next)
        R->playing = false; /* the end of what is replayed */
    bar(R);
}
