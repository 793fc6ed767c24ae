/*
 * tui.c — the interactive monitor's loop: terminal setup and restore,
 * signals, the drift-corrected tick, keys and mouse.
 */
#include "tui/tui.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/debuglog.h"
#include "core/history.h"
#include "engine/engine.h"
#include "system/procinfo.h"
#include "tui/allprocs.h"
#include "tui/fleet_view.h"
#include "tui/overlays.h"
#include "tui/panels.h"
#include "tui/past_ui.h"
#include "tui/prockeys.h"
#include "tui/replay_ui.h"
#include "tui/terminfo_builtin.h"
#include "tui/view.h"

#include <term.h> /* setupterm: after curses.h (theme.h) */
#include "tui/frame.h"
#include "tui/termout.h"
#include "tui/widgets.h"

static volatile sig_atomic_t quit_requested;
static volatile sig_atomic_t tick_requested; /* test mode: SIGUSR1 */
static struct termios saved_termios;
static bool have_termios;

static void on_quit(int sig)
{
    (void)sig;
    quit_requested = 1;
}

static volatile sig_atomic_t cont_requested; /* SIGCONT: the screen was given back */
static volatile sig_atomic_t tstp_requested; /* SIGTSTP (Ctrl-Z): stop, then come back */

static void on_cont(int sig)
{
    (void)sig;
    cont_requested = 1;
}

static void on_tstp(int sig)
{
    (void)sig;
    tstp_requested = 1;
}

static void on_usr1(int sig)
{
    (void)sig;
    tick_requested = 1;
}

/* Crash: put the terminal back the way we found it with async-signal-safe
 * calls only (endwin() is not), then die of the same signal. */
static void on_crash(int sig)
{
    static const char reset[] = "\033[?1000l\033[?1002l\033[?1006l\033[0m\033[?25h\033[?1049l\r\n";
    if (have_termios)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved_termios);
    ssize_t n = write(STDOUT_FILENO, reset, sizeof(reset) - 1);
    (void)n;
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_signals(bool test_mode)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_quit; /* no SA_RESTART: poll() wakes with EINTR */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = on_cont;
    sigaction(SIGCONT, &sa, NULL);
    /* in place of curses' own, which repaints its copy of the screen (not
     * kept: termout writes the frames) from inside the handler */
    sa.sa_handler = on_tstp;
    sigaction(SIGTSTP, &sa, NULL);
    if (test_mode) {
        sa.sa_handler = on_usr1;
        sigaction(SIGUSR1, &sa, NULL);
    }
    sa.sa_handler = on_crash;
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    const int crash[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof(crash) / sizeof(crash[0]); i++)
        sigaction(crash[i], &sa, NULL);
}

static void restore_default_signals(void)
{
    const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGUSR1, SIGCONT, SIGTSTP};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        signal(sigs[i], SIG_DFL);
}

/* Test hook: "TICKS FRAMES PID\n" into a file, replaced atomically so a reader
 * never sees half a line. */
static void write_frames(const char *path, unsigned long ticks, unsigned long frames)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
        return;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "%lu %lu %d\n", ticks, frames, (int)getpid());
    bool ok = write(fd, buf, (size_t)n) == n;
    close(fd);
    if (ok)
        rename(tmp, path);
}

struct loop {
    const char *proc_root; /* --proc-root (tests), or NULL for /proc */
    struct collector *col;
    struct engine *eng; /* samples in its own thread; we take its snapshots */
    struct history hist;
    struct snapshot snaps[2];
    struct snapshot *shown;  /* what the screen shows */
    struct snapshot *latest; /* the newest sample */
    struct tui_view v;
    struct host_core frozen[1024]; /* the shown CPU cores while paused */
    unsigned long ticks, frames;
    const char *frames_file;
    struct tui_replay R; /* replaying a recording: R.rp set */
    struct tui_past P;   /* the charts' past from the backend (the fleet view) */
    /* a fleet: the backend reads what the list asked for (fleet_ask); a
     * sample is taken as soon as it has (ask_wait, until ask_gen) */
    bool ask_wait;
    uint64_t ask_gen;
};

/* Take the engine's newest snapshot, if there is one; false when none. */
static bool loop_tick(struct loop *L)
{
    struct snapshot *dst = L->shown;
    if (L->v.paused) /* keep the frozen snapshot; take into the other one */
        dst = L->shown == &L->snaps[0] ? &L->snaps[1] : &L->snaps[0];
    if (!engine_acquire(L->eng, dst))
        return false;
    history_push(&L->hist, dst); /* -ENOMEM: that device simply has no chart */
    L->latest = dst;
    L->ticks++;
    if (L->R.rp)
        tui_replay_taken(&L->R);
    if (L->v.paused) {
        L->v.hist_age++;
    } else {
        L->shown = dst;
        L->v.snap = dst;
        L->v.hist_age = 0;
        tui_view_follow(&L->v);
    }
    return true;
}

static void loop_pause(struct loop *L, bool pause)
{
    if (pause == L->v.paused)
        return;
    L->v.paused = pause;
    if (pause) {
        /* host cores are borrowed from the collector, which overwrites them
         * on the next sample: keep a copy for the frozen screen */
        struct host_sample *h = &L->shown->host;
        size_t n = h->ncores < 1024 ? h->ncores : 1024;
        memcpy(L->frozen, h->cores, n * sizeof(L->frozen[0]));
        h->cores = L->frozen;
        h->ncores = n;
    } else {
        L->shown = L->latest;
        L->v.snap = L->latest;
        L->v.hist_age = 0;
        tui_view_follow(&L->v);
    }
}

/* Ctrl-Z: the terminal as it was found, stop (the shell takes over; an
 * orphaned process group is not stopped, and carries on at once), then the
 * monitor's modes again and the whole screen repainted. */
static void suspend(void)
{
    endwin();
    struct sigaction dfl, mine;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGTSTP, &dfl, &mine);
    raise(SIGTSTP);
    sigaction(SIGTSTP, &mine, NULL);
    werase(stdscr); /* curses' copy is stale: it clears, termout repaints */
    refresh();
    keypad(stdscr, TRUE); /* not sent again by the resume */
    tui_frame_invalidate();
}

/* A fleet: tell the backend what the list shows (the filter, the nodes
 * on screen), when that changed; it reads only that (fleet_view.h). True
 * when the footer now says why a filter cannot be asked. */
static bool fleet_ask(struct loop *L)
{
    struct tui_view *v = &L->v;
    if (!tui_view_fleet(v))
        return false;
    const char *nodes[64];
    size_t n = tui_fleet_wanted(v, nodes, sizeof(nodes) / sizeof(nodes[0]));
    /* the filter is asked for once typed (Enter), not at every key */
    const char *filter = v->dfilter_edit ? "" : v->dfilter;
    uint64_t sum = 1469598103934665603ull;
    for (const char *p = filter; *p; p++)
        sum = (sum ^ (unsigned char)*p) * 1099511628211ull;
    for (size_t i = 0; i < n; i++) {
        sum = (sum ^ 0x1f) * 1099511628211ull;
        for (const char *p = nodes[i]; *p; p++)
            sum = (sum ^ (unsigned char)*p) * 1099511628211ull;
    }
    if (sum == v->ask_sum)
        return false;
    struct backend_view_ask a = {.filter = filter, .nodes = nodes, .nnodes = n};
    uint64_t gen = 0;
    char err[160];
    int rc = collect_view_ask(L->col, &a, &gen, err, sizeof(err));
    if (rc == -2) /* said once; the list stays as the last filter had it */
        snprintf(v->status, sizeof(v->status), "filter /%s: %s", filter, err);
    if (rc >= 0 || rc == -2)
        v->ask_sum = sum;
    if (rc == 1) {
        L->ask_wait = true;
        L->ask_gen = gen;
    }
    return rc == -2;
}

/* The backend has read what the list asked for: a sample now. */
static void fleet_answered(struct loop *L)
{
    if (L->ask_wait && collect_view_answered(L->col) >= L->ask_gen) {
        L->ask_wait = false;
        engine_tick_now(L->eng);
    }
}

static void draw_frame(struct loop *L)
{
    tui_draw(stdscr, &L->v);
    if (tui_frame_emitted()) {
        /* The frame's output is termout's. curses' own copy of the screen
         * is left as it is, and no doupdate(): even with nothing to send it
         * hashes every line of the screen for its scrolling optimisation.
         * stdscr is marked as refreshed, so getch does not refresh it. */
        untouchwin(stdscr);
        wnoutrefresh(stdscr);
        termout_flush();
    } else {
        if (termout_active()) {
            /* no frame buffer (out of memory): curses draws this frame
             * whole, and termout repaints the next one */
            clearok(curscr, TRUE);
            termout_reset();
        }
        wnoutrefresh(stdscr);
        doupdate();
    }
    L->frames++;
    if (L->frames_file)
        write_frames(L->frames_file, L->ticks, L->frames);
}

static void draw(struct loop *L)
{
    draw_frame(L);
    /* the selection as drawn (a draw may move it, tui_view_place_sel), or
     * the interval, changed: ask for the new charts' past */
    tui_past_update(&L->P);
    if (fleet_ask(L)) /* the footer's new message, at once */
        draw_frame(L);
}

/* Send sig to the process under the cursor, after checking again that it
 * is the process listed. */
static void signal_selected(struct loop *L, int sig, const char *name)
{
    struct tui_view *v = &L->v;
    const struct gpu_process *p = tui_view_selected_proc(v);
    if (!p || tui_view_selected_proc_node(v)) /* another host's PID (the k key says so) */
        return;
    if (!tui_proc_signalable(p, L->proc_root, v->status, sizeof(v->status)))
        return;
    if (kill((pid_t)p->local_pid, sig) != 0)
        snprintf(v->status, sizeof(v->status), "kill -%s %lld: %s", name, (long long)p->local_pid,
                 strerror(errno));
    else
        snprintf(v->status, sizeof(v->status), "SIG%s sent to PID %lld", name,
                 (long long)p->local_pid);
}

/* The filter line (key /): printable characters add, Backspace removes,
 * Enter keeps the filter, Esc clears it. The process filter, or in the
 * fleet view's device list the device filter (fleet_ui.h). */
static void filter_key(struct tui_view *v, int key)
{
    char *f = v->dfilter_edit ? v->dfilter : v->filter;
    size_t cap = v->dfilter_edit ? sizeof(v->dfilter) : sizeof(v->filter);
    size_t n = strlen(f);
    if (key == 27) {
        f[0] = '\0';
        v->filter_edit = v->dfilter_edit = false;
    } else if (key == '\n' || key == '\r' || key == KEY_ENTER) {
        v->filter_edit = v->dfilter_edit = false;
    } else if (key == KEY_BACKSPACE || key == 127 || key == 8) {
        if (n > 0)
            f[n - 1] = '\0';
    } else if (key >= 0x20 && key < 0x7f && n + 1 < cap) {
        f[n] = (char)key;
        f[n + 1] = '\0';
    }
    tui_view_proc_unpin(v);
}

/* + and -: the next interval up or down the steps 100 ms, 250 ms, 500 ms,
 * 1 s, 2 s, 5 s, 10 s, 30 s, 60 s. */
static void change_interval(struct loop *L, int dir)
{
    static const unsigned steps[] = {100, 250, 500, 1000, 2000, 5000, 10000, 30000, 60000};
    size_t n = sizeof(steps) / sizeof(steps[0]), i = 0;
    unsigned cur = L->v.interval_ms;
    if (dir > 0) {
        while (i < n && steps[i] <= cur)
            i++;
        if (i == n)
            i = n - 1;
    } else {
        i = n;
        while (i > 0 && steps[i - 1] >= cur)
            i--;
        i = i > 0 ? i - 1 : 0;
    }
    L->v.interval_ms = steps[i];
    engine_set_interval(L->eng, steps[i]);
    snprintf(L->v.status, sizeof(L->v.status), "sampling every %u ms", steps[i]);
}

/* Returns false when the key asks to quit. */
static bool handle_key(struct loop *L, int key)
{
    struct tui_view *v = &L->v;
    v->status[0] = '\0';
    if (key == KEY_RESIZE)
        return true;
    MEVENT ev;
    bool wheel = false;
    if (key == KEY_MOUSE) {
        if (getmouse(&ev) != OK)
            return true;
        wheel = (ev.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) != 0;
    }
    if (v->modal == MODAL_KILL_CONFIRM) {
        v->modal = MODAL_NONE;
        if (key == 't' || key == 'T' || key == '\n' || key == '\r' || key == KEY_ENTER)
            signal_selected(L, SIGTERM, "TERM");
        else if (key == 'i' || key == 'I')
            signal_selected(L, SIGINT, "INT");
        else if (key == '9')
            signal_selected(L, SIGKILL, "KILL");
        else
            snprintf(v->status, sizeof(v->status), "no signal sent");
        return key != 3;
    }
    if (v->modal == MODAL_PROC_DETAIL || v->modal == MODAL_REASONS ||
        v->modal == MODAL_EVENTS) { /* these scroll */
        int page = v->lay.h > 12 ? v->lay.h - 8 : 4;
        if (wheel)
            key = (ev.bstate & BUTTON4_PRESSED) ? KEY_UP : KEY_DOWN;
        switch (key) {
        case KEY_DOWN: v->cmd_scroll++; return true;
        case KEY_UP: v->cmd_scroll = v->cmd_scroll > 0 ? v->cmd_scroll - 1 : 0; return true;
        case KEY_NPAGE: v->cmd_scroll += page; return true;
        case KEY_PPAGE: v->cmd_scroll = v->cmd_scroll > page ? v->cmd_scroll - page : 0; return true;
        default: break;
        }
    }
    if (v->modal != MODAL_NONE) { /* any other key closes an overlay (a wheel does not) */
        if (wheel)
            return true;
        v->modal = MODAL_NONE;
        tui_view_free_cmdline(v);
        return key != 3; /* Ctrl-C still quits */
    }
    if (v->filter_edit || v->dfilter_edit) {
        if (key == 3)
            return false;
        if (key != KEY_MOUSE)
            filter_key(v, key);
        return true;
    }
    if (key == KEY_MOUSE) {
        tui_mouse(v, &ev);
        return true;
    }
    if (L->R.rp && tui_replay_key(&L->R, key))
        return true;
    switch (key) {
    case 'q':
    case 'Q':
    case 3:
        return false;
    case '?':
    case 'h':
        v->modal = MODAL_HELP;
        return true;
    case 'i':
        v->modal = MODAL_REASONS;
        v->cmd_scroll = 0;
        return true;
    case 'e':
        v->modal = MODAL_EVENTS;
        v->cmd_scroll = 0;
        return true;
    case ' ':
        loop_pause(L, !v->paused);
        return true;
    case 's':
    case 'S':
        tui_view_sort_next(v, key == 's' ? 1 : -1);
        return true;
    case 'r':
        tui_view_sort_reverse(v);
        return true;
    case 't':
        v->proc_tree = !v->proc_tree;
        return true;
    case 'p':
        v->proc_focus = !v->all_procs && !v->proc_focus;
        return true;
    case 'a':
        tui_allprocs_toggle(v);
        return true;
    case 'g':
        v->gpm_page = !v->gpm_page;
        return true;
    case 'o':
        /* the fleet's device list: the next order (the selection stays on
         * its device, wherever that is now) */
        if (tui_view_fleet(v))
            v->dsort = (enum tui_fleet_sort)((v->dsort + 1) % FSORT_COUNT);
        return true;
    case 'c':
        v->charts = (enum tui_charts)((v->charts + 1) % CHARTS_COUNT);
        return true;
    case '/':
        /* the fleet's device list filters devices; processes otherwise */
        if (tui_view_fleet(v) && !v->proc_focus && !v->all_procs)
            v->dfilter_edit = true;
        else
            v->filter_edit = true;
        return true;
    case '+':
    case '=':
        change_interval(L, 1);
        return true;
    case '-':
    case '_':
        change_interval(L, -1);
        return true;
    case 27: /* Esc */
        v->proc_focus = false;
        v->all_procs = false;
        v->cmd_hoff = 0;
        v->filter[0] = '\0';
        v->dfilter[0] = '\0';
        return true;
    }
    if ((v->proc_focus || v->all_procs) && tui_proc_key(v, key))
        return true;
    if (v->all_procs) /* the device list's keys are not for this view */
        return true;
    if (key >= '0' && key <= '9') {
        tui_view_jump_digit(v, key - '0', clock_mono_ns());
        return true;
    }
    switch (key) {
    case '\t':
    case KEY_DOWN:
    case KEY_RIGHT:
        tui_view_select(v, 1);
        break;
    case KEY_BTAB:
    case KEY_UP:
    case KEY_LEFT:
        tui_view_select(v, -1);
        break;
    case KEY_NPAGE:
        tui_view_page(v, 1);
        break;
    case KEY_PPAGE:
        tui_view_page(v, -1);
        break;
    case KEY_HOME:
        tui_view_select_home(v);
        break;
    case KEY_END:
        tui_view_select_end(v);
        break;
    case '\n':
    case '\r':
    case KEY_ENTER:
        tui_view_toggle_fold(v);
        break;
    default:
        break;
    }
    return true;
}

static unsigned long env_ulong(const char *name, unsigned long dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    return *end ? dflt : v;
}

int tui_run(struct collector *col, const struct tui_opts *o)
{
    if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)) {
        fprintf(stderr, "mig-gpu-mon: the interactive monitor needs a terminal; "
                        "for scripts use --once --format json|table\n");
        return 2;
    }
    setlocale(LC_ALL, "");
    bool utf8 = tui_locale_utf8();
    bool want_color = tui_color_wanted(o->no_color, getenv("NO_COLOR"));

    static struct loop L; /* large (frozen cores); one per process */
    memset(&L, 0, sizeof(L));
    L.col = col;
    L.proc_root = o->proc_root;
    if (history_init(&L.hist, o->history) != 0) {
        fprintf(stderr, "mig-gpu-mon: out of memory for the history\n");
        return 1;
    }
    unsigned long test_ticks = env_ulong("MIGMON_TEST_TICKS", 0);
    bool test_mode = test_ticks > 0;
    L.R = (struct tui_replay){.rp = o->replay,
                              .hist_points = o->history,
                              .speed = o->speed > 0 ? o->speed : 1,
                              .playing = o->replay && !o->paused,
                              .hist = &L.hist,
                              .v = &L.v};
    L.P = (struct tui_past){.col = col, .hist = &L.hist, .v = &L.v};
    L.frames_file = getenv("MIGMON_TEST_FRAMES");
    if (L.frames_file && !*L.frames_file)
        L.frames_file = NULL;

    if (tcgetattr(STDIN_FILENO, &saved_termios) == 0)
        have_termios = true;
    /* An unknown TERM is found out with setupterm first: a failing
     * newterm leaves curses' per-screen memory allocated. */
    int terr = 0;
    SCREEN *scr = NULL;
    /* No entry for TERM on this host (a container, the portable binary on
     * another distribution): the built-in one, if TERM is a common
     * terminal (terminfo_builtin.h). */
    char ti_dir[PATH_MAX];
    bool ti_builtin = false;
    int ti_ok = setupterm(NULL, STDOUT_FILENO, &terr);
    if (ti_ok != OK && terminfo_builtin_install(ti_dir, sizeof(ti_dir)) == 0) {
        ti_builtin = true;
        ti_ok = setupterm(NULL, STDOUT_FILENO, &terr);
    }
    if (ti_ok == OK) {
        del_curterm(cur_term); /* newterm sets up its own */
        scr = newterm(NULL, stdout, stdin);
    }
    if (ti_builtin)
        terminfo_builtin_remove(ti_dir); /* read by now */
    /* A terminal without cursor addressing (TERM=dumb, say) is known to
     * terminfo, but curses can draw no more than its first line there. */
    const char *cup = NULL;
    if (scr) {
        set_term(scr);
        cup = tigetstr("cup");
    }
    if (!scr || !cup || cup == (const char *)-1) {
        const char *term = getenv("TERM");
        /* Nothing was drawn and no mode set: no endwin(), which would
         * write to the terminal; the modes as found, to be sure. */
        if (scr) {
            delscreen(scr);
            if (have_termios)
                tcsetattr(STDIN_FILENO, TCSANOW, &saved_termios);
        }
        fprintf(stderr, "mig-gpu-mon: cannot use terminal type '%s'%s; set TERM (e.g. "
                        "xterm-256color) or use --once\n", term ? term : "(unset)",
                scr ? " (it cannot move the cursor)" : "");
        history_free(&L.hist);
        return 2;
    }
    install_signals(test_mode);
    cbreak(); /* Ctrl-C stays a signal */
    noecho();
    nonl();
    curs_set(0);
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    /* No look at the keyboard in the middle of a refresh: curses flushes
     * what it has so far before each look. Keys are read right after each
     * frame instead. (See also the first refresh, below.) */
    typeahead(-1);
    set_escdelay(25);
    mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    mouseinterval(0);
    tui_theme_init(&L.v.theme, want_color, utf8);
    /* A frame goes to the terminal in one write, not one per changed line
     * or two (each write is a wake-up of the terminal's side: pty, tmux,
     * ssh): ncurses 6 flushes after every cursor move until the screen has
     * once been left and resumed, taking such moves for a low-level
     * terminfo program's. So the screen is left and resumed once, before
     * anything is drawn; the resume does not send the keypad mode again. */
    endwin();
    refresh();
    keypad(stdscr, TRUE);
    /* Frames are written by termout (unless MIGMON_TERM_OUTPUT=curses):
     * curses then never moves the cursor itself. */
    const char *tout = getenv("MIGMON_TERM_OUTPUT");
    if (!(tout && strcmp(tout, "curses") == 0) && termout_open(STDOUT_FILENO))
        leaveok(stdscr, TRUE);
    L.v.interval_ms = o->interval_ms;
    L.v.demo_label = o->demo_label;
    L.v.fahrenheit = o->fahrenheit;
    L.v.charts = o->thermal_charts ? CHARTS_THERMAL : CHARTS_ACTIVITY;
    L.v.debug_path = debuglog_enabled() ? debuglog_path() : NULL;
    L.v.proc_root = o->proc_root;
    L.v.procs_recorded = o->replay != NULL;
    L.shown = L.latest = &L.snaps[0];
    L.v.snap = L.shown;
    L.v.hist = &L.hist;

    /* The engine samples in its own thread on a drift-corrected grid (its
     * second sample ~200 ms after the first whatever the interval, so CPU %
     * and GPM values are on screen at once: engine.c); this loop only
     * waits for keys, signals and the engine's "new snapshot" byte, so it
     * never waits for the driver. Screen tests (manual mode)
     * first wait (bounded) for the GPM helper's first values, so their
     * screens do not depend on its timing, then take test_ticks samples
     * and one more per SIGUSR1, each shown. */
    if (test_mode && !L.R.rp)
        collect_settle(L.col, 3000);
    struct engine_opts eo = {.interval_ms = o->interval_ms, .manual = test_mode || L.R.rp};
    if (engine_start(&L.eng, L.col, &eo) != 0) {
        endwin();
        termout_close();
        delscreen(scr);
        restore_default_signals();
        history_free(&L.hist);
        fprintf(stderr, "mig-gpu-mon: cannot start the sampling thread\n");
        return 1;
    }
    unsigned long want = test_mode ? test_ticks : 1;
    if (L.R.rp) { /* the first snapshot of the part replayed */
        L.R.eng = L.eng;
        tui_replay_start(&L.R);
        want = L.R.pending;
        test_mode = false; /* the replay's keys move it, not SIGUSR1 */
    } else if (test_mode) {
        engine_request_tick(L.eng, (unsigned)test_ticks);
    }
    /* The first frame once the first sample is there (or at once when none
     * comes quickly: the screen says what is missing). */
    for (int i = 0; i < 200 && L.ticks < want && !quit_requested; i++) {
        struct pollfd pfd = {.fd = engine_fd(L.eng), .events = POLLIN};
        poll(&pfd, 1, 10);
        while (loop_tick(&L))
            ;
        if (!test_mode && i >= 20)
            break; /* 200 ms: show the screen, the sample follows */
    }
    draw(&L);

    while (!quit_requested) {
        struct pollfd pfd[2] = {{.fd = STDIN_FILENO, .events = POLLIN},
                                {.fd = engine_fd(L.eng), .events = POLLIN}};
        int wait = L.R.rp ? tui_replay_due_ms(&L.R) : -1, pw = tui_past_poll_ms(&L.P);
        if (pw >= 0 && (wait < 0 || pw < wait))
            wait = pw;
        if (L.ask_wait && (wait < 0 || wait > TUI_PAST_POLL_MS))
            wait = TUI_PAST_POLL_MS;
        int pr = poll(pfd, 2, wait);
        if (quit_requested)
            break;
        if (pr > 0 && (pfd[0].revents & (POLLHUP | POLLERR | POLLNVAL)))
            break; /* the terminal went away */
        if (test_mode && tick_requested) {
            tick_requested = 0;
            engine_request_tick(L.eng, 1);
        }
        fleet_answered(&L);
        /* keys, and KEY_RESIZE after SIGWINCH interrupted poll() */
        /* A frame for every key read (KEY_RESIZE included: after SIGWINCH
         * interrupted poll() it is the next getch) and for every snapshot;
         * not for a signal alone (SIGUSR1 in test mode asks for a tick,
         * whose frame follows with its snapshot). */
        bool redraw = false, keep = true;
        int key;
        while (keep && (key = getch()) != ERR) {
            keep = handle_key(&L, key);
            redraw = true;
        }
        if (!keep)
            break;
        if (tstp_requested) {
            tstp_requested = 0;
            suspend();
            cont_requested = 0;
            redraw = true;
        }
        if (cont_requested) {
            /* continued after a stop from elsewhere (SIGSTOP): what the
             * terminal shows meanwhile is unknown */
            cont_requested = 0;
            tui_frame_invalidate();
            redraw = true;
        }
        if (L.R.rp && tui_replay_due_ms(&L.R) == 0) /* the next snapshot, at its time */
            tui_replay_goto(&L.R, L.R.where.shown + 1);
        /* in test mode every snapshot is drawn; otherwise the newest */
        while (loop_tick(&L)) {
            redraw = true;
            if (test_mode)
                break;
        }
        /* the past asked for after a frame (below) has come: the charts
         * are filled */
        if (tui_past_take(&L.P))
            redraw = true;
        if (L.R.rp && L.R.pending)
            redraw = false; /* the history leading to a new place: drawn once there */
        if (redraw && !quit_requested)
            draw(&L);
    }

    /* Stop sampling first (bounded), then give the terminal back. */
    engine_stop(L.eng);
    tui_view_free(&L.v);
    endwin();
    termout_close();
    tui_frame_free();
    delscreen(scr);
    restore_default_signals();
    history_free(&L.hist);
    for (int i = 0; i < 2; i++)
        snapshot_free(&L.snaps[i]);
    return 0;
}
