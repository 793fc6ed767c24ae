/*
 * bench_draw — the cost of one frame of the interactive monitor.
 *
 *   build/bench_draw SCENARIO [FRAMES]
 *
 * Samples the scenario (as bench_tick), pushes the history and draws the
 * whole 200x60 screen with ncurses into /dev/null, FRAMES times. Prints the
 * median and p90 wall time of the draw (tui_draw + doupdate) alone, and our
 * code's heap calls per frame (ncurses' own allocations are inside the
 * shared library and not counted).
 */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "collect.h"
#include "history.h"
#include "tui/panels.h"

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
    FILE *out = fopen("/dev/null", "w");
    FILE *in = fopen("/dev/null", "r");
    SCREEN *scr = out && in ? newterm(NULL, out, in) : NULL;
    if (!scr) {
        fprintf(stderr, "bench_draw: newterm failed\n");
        return 1;
    }
    set_term(scr);
    static struct tui_view v;
    struct history h;
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    history_init(&h, 0);
    tui_theme_init(&v.theme, true, true);
    v.snap = &s;
    v.hist = &h;
    v.interval_ms = 1000;
    for (int i = 0; i < 5; i++) { /* warm-up: rings, buffers, curses */
        collect_tick(&c, &s);
        history_push(&h, &s);
        tui_view_follow(&v);
        tui_draw(stdscr, &v);
        doupdate();
    }
    uint64_t *ns = calloc((size_t)frames, sizeof(*ns));
    long heap = 0;
    for (int i = 0; i < frames; i++) {
        collect_tick(&c, &s);
        history_push(&h, &s);
        tui_view_follow(&v);
        if (i % 7 == 0) /* move around the device list now and then */
            tui_view_select(&v, 1);
        long h0 = heap_calls;
        uint64_t t = clock_mono_ns();
        tui_draw(stdscr, &v);
        wnoutrefresh(stdscr);
        doupdate();
        ns[i] = clock_mono_ns() - t;
        heap += heap_calls - h0;
    }
    qsort(ns, (size_t)frames, sizeof(*ns), cmp_u64);
    endwin();
    delscreen(scr);
    printf("scenario %s: %zu devices, %d frames at 200x60\n", argv[1], s.ndevices, frames);
    printf("  draw per frame: median %.1f us, p90 %.1f us\n", (double)ns[frames / 2] / 1e3,
           (double)ns[frames * 9 / 10] / 1e3);
    printf("  heap calls per frame (our code): %.3f\n", (double)heap / frames);
    free(ns);
    history_free(&h);
    snapshot_free(&s);
    collect_close(&c);
    fclose(out);
    fclose(in);
    return 0;
}
