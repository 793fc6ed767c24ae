/*
 * main.c — `mig-gpu-mon replay FILE`: a recording in the interactive
 * monitor, or one of its snapshots printed (--once). docs/replay.md.
 */
#include "app/replay_mode.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/replay/replay.h"
#include "core/outfile.h"
#include "engine/collect.h"
#include "export/csv.h"
#include "export/json.h"
#include "export/table.h"
#include "tui/tui.h"

static void usage(FILE *f)
{
    fputs("usage: mig-gpu-mon replay FILE [--speed X] [--from TIME] [--to TIME] [--paused]\n"
          "       mig-gpu-mon replay FILE --once [--format json|table] [--at TIME]\n"
          "       mig-gpu-mon replay FILE --print [--format json|csv] [--from T] [--to T]\n"
          "\n"
          "Plays a recording (the JSON Lines of record or profile --timeline, plain,\n"
          "gzip- or zstd-compressed, schema 1 or 2) in the interactive monitor, at the\n"
          "pace it was recorded.\n"
          "  --speed X       X times the recorded pace (0.1 to 1000; default 1)\n"
          "  --from TIME     start there; --to TIME: end there\n"
          "  --paused        start paused\n"
          "  --once          print one snapshot and exit: the one at --at (default: --from)\n"
          "  --print         print every snapshot from --from to --to and exit: one\n"
          "                  JSON line each (the --once object), or -f csv rows\n"
          "  -f, --format F  json (default) or table, with --once; json or csv, with\n"
          "                  --print\n"
          "  --at TIME       the snapshot that is the last at or before TIME\n"
          "  --no-color      no colours\n"
          "TIME: +90s, +5m, +1h (from the first snapshot), -30s (from the last),\n"
          "03:12, 03:12:30 (UTC, on the first snapshot's day) or 2026-12-02T03:12:00Z;\n"
          "--at and --from outside the recording are refused (--to may pass its end).\n"
          "Keys: space pause/resume; . and , one snapshot forward/back (paused);\n"
          "] and [ one minute forward/back; > and < the end/start; + and - twice/half\n"
          "the speed; q quit.\n"
          "Exit status: 0 (also when the reader of standard output closes the pipe);\n"
          "1 when the snapshot could not be written; 2 for a bad option, a file that\n"
          "is not a regular file, cannot be read or has no snapshot to show, or a\n"
          "recording of another schema.\n",
          f);
}

enum { O_SPEED = 256, O_FROM, O_TO, O_AT, O_ONCE, O_PAUSED, O_NOCOLOR, O_PRINT };
static const struct option longopts[] = {
    {"speed", required_argument, NULL, O_SPEED}, {"from", required_argument, NULL, O_FROM},
    {"to", required_argument, NULL, O_TO},       {"at", required_argument, NULL, O_AT},
    {"once", no_argument, NULL, O_ONCE},         {"paused", no_argument, NULL, O_PAUSED},
    {"format", required_argument, NULL, 'f'},    {"no-color", no_argument, NULL, O_NOCOLOR},
    {"print", no_argument, NULL, O_PRINT},
    {"help", no_argument, NULL, 'h'},            {NULL, 0, NULL, 0}};

/* '-': a word that is no option comes back in its place (as 1), so the
 * mode word is known by where it is, as in the monitor's modes (cli.c) */
const struct cli_options replay_options = {.shorts = "-:f:h", .longs = longopts};

/*
 * --print: every snapshot from a to b, in order, as JSON lines (the --once
 * object) or CSV rows under one header. A snapshot that cannot be read is
 * skipped and counted (said at the end); none is made up. Returns the exit
 * status: 1 when the output could not be written.
 */
static int print_all(struct collector *col, struct replay *r, uint64_t a, uint64_t b, bool csv)
{
    struct snapshot s;
    memset(&s, 0, sizeof(s));
    uint64_t skipped = 0;
    char first[512] = "";
    if (csv)
        csv_write_header(stdout);
    for (uint64_t rec = a; rec <= b && !ferror(stdout);) {
        replay_seek(r, rec);
        collect_tick(col, &s);
        struct replay_where w;
        replay_where(r, &w);
        if (w.failed) { /* none readable from rec to b */
            if (!first[0])
                snprintf(first, sizeof(first), "%s", w.failed);
            skipped += b - rec + 1;
            break;
        }
        if (w.shown > rec && !first[0])
            snprintf(first, sizeof(first), "%s", w.skip_why);
        skipped += w.shown - rec;
        if (csv)
            csv_write_rows(stdout, &s);
        else
            json_write_snapshot(stdout, &s, false);
        rec = w.shown + 1;
    }
    snapshot_free(&s);
    if (skipped)
        fprintf(stderr, "mig-gpu-mon replay: %llu snapshots could not be read (%s)\n",
                (unsigned long long)skipped, first);
    return outfile_stdout_done("mig-gpu-mon replay", "snapshots");
}

/* What was typed, for a message: no terminal control in it (cli_escape). */
static const char *typed(const char *s, char *buf, size_t cap)
{
    cli_escape(buf, cap, s);
    return buf;
}

/* A word that is no option, argv[i]: the mode word (at), else FILE, after
 * it; 0, or 2 (the exit status) after one line on stderr. */
static int take_word(char **argv, int i, int at, const char **path)
{
    char err[160], t[512];
    if (i == at)
        return 0;
    if (i < at) {
        fprintf(stderr, "mig-gpu-mon replay: %s: unexpected argument before replay "
                        "(replay FILE [OPTIONS])\n", typed(argv[i], t, sizeof(t)));
        return 2;
    }
    if (!*path) {
        *path = argv[i];
        return 0;
    }
    if (argv[i][0] != '-' && cli_mode_conflict("replay", argv[i], err, sizeof(err)) != 0)
        fprintf(stderr, "mig-gpu-mon: %s\n", err);
    else
        fprintf(stderr, "mig-gpu-mon replay: %s: one recording at a time (see "
                        "mig-gpu-mon replay --help)\n", typed(argv[i], t, sizeof(t)));
    return 2;
}

int replay_main(int argc, char **argv, int at)
{
    double speed = 1;
    const char *from = NULL, *to = NULL, *at_t = NULL, *format = "json", *path = NULL;
    bool once = false, paused = false, no_color = false, print = false;
    int c;
    char err[1024];
    /* options before and after the mode word, FILE after it; after "--",
     * words only */
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, replay_options.shorts, longopts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 1:
            if (take_word(argv, optind - 1, at, &path) != 0)
                return 2;
            break;
        case O_SPEED:
            speed = strtod(optarg, &end);
            if (*end || !(speed >= 0.1 && speed <= 1000)) {
                fprintf(stderr, "mig-gpu-mon replay: --speed %s: a number from 0.1 to 1000\n",
                        typed(optarg, err, sizeof(err)));
                return 2;
            }
            break;
        case O_FROM: from = optarg; break;
        case O_TO: to = optarg; break;
        case O_AT: at_t = optarg; break;
        case O_ONCE: once = true; break;
        case O_PRINT: print = true; break;
        case O_PAUSED: paused = true; break;
        case O_NOCOLOR: no_color = true; break;
        case 'f': format = optarg; break;
        case 'h': usage(stdout); return outfile_stdout_done("mig-gpu-mon replay", "help");
        case ':':
            fprintf(stderr, "mig-gpu-mon replay: %s: missing argument\n",
                    typed(argv[optind - 1], err, sizeof(err)));
            return 2;
        default:
            /* another mode's option (the monitor's --demo, record's -o) or none */
            fprintf(stderr, "mig-gpu-mon replay: %s: unknown option (see mig-gpu-mon "
                            "replay --help)\n", typed(argv[optind - 1], err, sizeof(err)));
            return 2;
        }
    }
    for (int i = optind; i < argc; i++)
        if (take_word(argv, i, at, &path) != 0)
            return 2;
    if (!path) {
        fprintf(stderr, "mig-gpu-mon replay: name the recording: replay FILE (see mig-gpu-mon "
                        "replay --help)\n");
        return 2;
    }
    if (once && print) {
        fprintf(stderr, "mig-gpu-mon replay: --once and --print exclude each other\n");
        return 2;
    }
    if (strcmp(format, "json") && strcmp(format, print ? "csv" : "table")) {
        fprintf(stderr, "mig-gpu-mon replay: --format %s: json or %s\n",
                typed(format, err, sizeof(err)), print ? "csv" : "table");
        return 2;
    }
    if ((at_t && !once) || (strcmp(format, "json") && !once && !print)) {
        fprintf(stderr, "mig-gpu-mon replay: --at goes with --once, --format with --once or "
                        "--print\n");
        return 2;
    }
    struct collector col;
    struct collect_opts co = {.backend = &replay_backend_ops, .source = path,
                              .one_shot = once || print};
    if (collect_open(&col, &co, err, sizeof(err)) != 0) {
        fprintf(stderr, "mig-gpu-mon replay: %s\n", err);
        return 2;
    }
    struct replay *r = replay_of(col.be_state);
    struct replay_where w;
    replay_where(r, &w);
    uint64_t a = 0, b = w.count - 1;
    if ((from && replay_time(r, "--from", from, false, &a, err, sizeof(err)) != 0) ||
        (to && replay_time(r, "--to", to, true, &b, err, sizeof(err)) != 0)) {
        fprintf(stderr, "mig-gpu-mon replay: %s\n", err);
        collect_close(&col);
        return 2;
    }
    if (a > b) {
        fprintf(stderr, "mig-gpu-mon replay: --from is after --to\n");
        collect_close(&col);
        return 2;
    }
    replay_set_range(r, a, b);
    if (w.garbage || w.cut_bytes)
        fprintf(stderr, "mig-gpu-mon replay: %s: %llu lines skipped (not a snapshot)%s\n", w.name,
                (unsigned long long)w.garbage, w.cut_bytes ? "; the last line is cut" : "");
    if (w.damaged)
        fprintf(stderr, "mig-gpu-mon replay: %s: %s; skipped to the next frame (%llu damaged)\n",
                w.name, w.damage, (unsigned long long)w.damaged);
    if (w.stopped[0])
        fprintf(stderr, "mig-gpu-mon replay: %s: %s; the %llu snapshots before are replayed\n",
                w.name, w.stopped, (unsigned long long)w.count);
    int rc = 0;
    if (print) {
        rc = print_all(&col, r, a, b, strcmp(format, "csv") == 0);
    } else if (once) {
        uint64_t rec = a;
        if (at_t && replay_time(r, "--at", at_t, false, &rec, err, sizeof(err)) != 0) {
            fprintf(stderr, "mig-gpu-mon replay: %s\n", err);
            collect_close(&col);
            return 2;
        }
        /* that snapshot (within --from..--to) or none: not the next one
         * that reads */
        rec = rec < a ? a : rec > b ? b : rec;
        replay_set_range(r, rec, rec);
        struct snapshot s;
        memset(&s, 0, sizeof(s));
        collect_tick(&col, &s);
        replay_where(r, &w);
        if (w.failed) {
            /* no snapshot to print: none is made up */
            fprintf(stderr, "mig-gpu-mon replay: %s\n", w.failed);
            snapshot_free(&s);
            collect_close(&col);
            return 2;
        }
        if (!strcmp(format, "table"))
            table_write_snapshot(stdout, &s);
        else
            json_write_snapshot(stdout, &s, false);
        snapshot_free(&s);
        rc = outfile_stdout_done("mig-gpu-mon replay", "snapshot");
    } else {
        char label[600];
        snprintf(label, sizeof(label), "REPLAY %s", w.name);
        struct tui_opts to_ = {.interval_ms = 1000,
                               .no_color = no_color,
                               .demo_label = label,
                               .replay = r,
                               .speed = speed,
                               .paused = paused};
        rc = tui_run(&col, &to_);
    }
    collect_close(&col);
    return rc;
}
