/*
 * bench_draw — the cost of one frame of the interactive monitor.
 *
 *   build/bench_draw SCENARIO [FRAMES]
 *
 * Samples the scenario (as bench_tick), pushes the history and draws the
 * whole 200x60 screen into /dev/null, FRAMES times, the way the monitor
 * does: the frame's changed cells written by termout (tui_draw +
 * termout_flush), and again with MIGMON_TERM_OUTPUT=curses's path (tui_draw
 * + doupdate). Prints the median and p90 wall time of the draw alone, the
 * bytes a frame sends, and our code's heap calls per frame (ncurses' own
 * allocations are inside the shared library and not counted).
 */
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/history.h"
#include "engine/collect.h"
#include "tui/frame.h"
#include "tui/panels.h"
#include "tui/termout.h"

static long heap_calls;
void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n) { __atomic_fetch_add(&heap_calls, 1, __ATOMIC_RELAXED); return __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) { __atomic_fetch_add(&heap_calls, 1, __ATOMIC_RELAXED); return __real_calloc(a, b); }
void *__wrap_realloc(void *p, size_t n) { __atomic_fetch_add(&heap_calls, 1, __ATOMIC_RELAXED); return __real_realloc(p, n); }

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_draw SCENARIO.ini [FRAMES]\n");
        return 2;
    }
    int frames = argc > 2 ? atoi(argv[2]) : 1000;
    if (frames < 10)
        frames = 10;
    const char *lib = getenv("MIGMON_SIM_LIB");
    if (!lib) {
        fprintf(stderr, "bench_draw: set MIGMON_SIM_LIB to the simulator library\n");
        return 2;
    }
    setenv("MIGMON_SIM_SCENARIO", argv[1], 1);
    setenv("MIGMON_SIM_TIME", "100+1", 1);
    setenv("TERM", "xterm-256color", 1);
    setenv("LINES", "60", 1);
    setenv("COLUMNS", "200", 1);
    setlocale(LC_ALL, "C.UTF-8");

    struct collector c;
    struct collect_opts o = {.nvml_path = lib};
    char err[2048];
    if (collect_open(&c, &o, err, sizeof(err)) != 0 || !c.be_state) {
        fprintf(stderr, "bench_draw: %s\n", err[0] ? err : c.gpu_error);
        return 1;
    }
    struct history h;
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    printf("scenario %s: %d frames at 200x60\n", argv[1], frames);
    uint64_t *ns = calloc((size_t)frames, sizeof(*ns));
    for (int pass = 0; pass < 2 && ns; pass++) {
        bool direct = pass == 0;
        int null = open("/dev/null", O_WRONLY);
        FILE *out = fopen("/dev/null", "w");
        FILE *in = fopen("/dev/null", "r");
        SCREEN *scr = out && in ? newterm(NULL, out, in) : NULL;
        if (!scr || null < 0) {
            fprintf(stderr, "bench_draw: newterm failed\n");
            return 1;
        }
        set_term(scr);
        if (direct && !termout_open(null)) {
            fprintf(stderr, "bench_draw: the terminal description lacks cup, clear or sgr0\n");
            return 1;
        }
        static struct tui_view v;
        memset(&v, 0, sizeof(v));
        history_init(&h, 0);
        tui_theme_init(&v.theme, true, true);
        v.snap = &s;
        v.hist = &h;
        v.interval_ms = 1000;
        long heap = 0;
        unsigned long long bytes = 0;
        for (int i = -5; i < frames; i++) { /* 5 warm-up frames: rings, buffers, curses */
            collect_tick(&c, &s);
            history_push(&h, &s);
            tui_view_follow(&v);
            if (i >= 0 && i % 7 == 0) /* move around the device list now and then */
                tui_view_select(&v, 1);
            long h0 = heap_calls, sent = 0;
            uint64_t t = clock_mono_ns();
            tui_draw(stdscr, &v);
            if (direct && tui_frame_emitted()) { /* as the monitor's draw() */
                untouchwin(stdscr);
                wnoutrefresh(stdscr);
                sent = termout_flush();
            } else {
                wnoutrefresh(stdscr);
                doupdate();
            }
            if (i < 0)
                continue;
            ns[i] = clock_mono_ns() - t;
            heap += heap_calls - h0;
            if (sent > 0)
                bytes += (unsigned long long)sent;
        }
        qsort(ns, (size_t)frames, sizeof(*ns), cmp_u64);
        if (direct)
            termout_close();
        endwin();
        delscreen(scr);
        tui_frame_free();
        tui_view_free(&v);
        history_free(&h);
        fclose(out);
        fclose(in);
        close(null);
        printf("  %s: draw per frame median %.1f us, p90 %.1f us", direct ? "termout" : "curses ",
               (double)ns[frames / 2] / 1e3, (double)ns[frames * 9 / 10] / 1e3);
        if (direct)
            printf(", %.0f bytes/frame", (double)bytes / frames);
        printf(", heap calls per frame (our code) %.3f\n", (double)heap / frames);
    }
    free(ns);
    snapshot_free(&s);
    collect_close(&c);
    return 0;
}
