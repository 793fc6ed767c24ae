/*
 * profile_cli.c — `mig-gpu-mon profile`'s options, help and parser
 * (profile_cli.h; docs/profile.md).
 */
#include "app/profile_cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli.h"
#include "app/profile.h"
#include "core/text.h"

static void usage(FILE *f)
{
    fputs("Usage: mig-gpu-mon profile [OPTIONS] -- COMMAND [ARGS...]\n"
          "Run COMMAND and report its peak GPU and CPU memory, energy and activity.\n"
          "\n"
          "  -i, --interval MS     sample every MS milliseconds (default 50, min 10)\n"
          "  -o, --output FILE     write the report to FILE instead of stderr\n"
          "  -f, --format FMT      report as text (default) or json\n"
          "      --timeline FILE   one JSON snapshot per sample (JSON Lines; FILE.zst,\n"
          "                        FILE.gz: compressed, as record writes them)\n"
          "      --nvml-path PATH  load this libnvidia-ml\n"
          "      --demo[=SCENARIO] on the bundled NVML simulator (--demo h200-mig -- CMD);\n"
          "                        --demo mi300x: an AMD MI300X on a simulated sysfs\n"
          "      --proc-root DIR   read processes and memory from DIR instead of /proc\n"
          "      --backend LIST    GPU sources, comma-separated: nvml, amdgpu (default:\n"
          "                        NVML and every other source that finds a GPU)\n"
          "      --sysfs-root DIR  read amdgpu's sysfs from DIR instead of /sys\n"
          "      --dcgm WHERE      per-MIG activity on Ampere from DCGM: auto (default),\n"
          "                        HOST[:PORT], unix:PATH, embedded or off\n"
          "      --dcgm-lib PATH   load this libdcgm instead of libdcgm.so.4 / .so.3\n"
          "  -h, --help            this help\n"
          "\n"
          "OPTIONS may also come before the word profile (mig-gpu-mon --demo profile\n"
          "-- CMD). What follows -- is COMMAND and its arguments, never read here.\n"
          "\n"
          "The exit status is COMMAND's (128+N when it died of signal N; 127 when it\n"
          "cannot be found, 126 when it cannot be executed); 1 when COMMAND succeeded\n"
          "but the report or timeline could not be written. SIGINT, SIGTERM, SIGHUP\n"
          "and SIGQUIT are passed on to it; a second one sends it SIGKILL. COMMAND is\n"
          "killed when the profiler dies.\n",
          f);
}

enum { O_TIMELINE = 256, O_NVML, O_DEMO, O_PROC_ROOT, O_DCGM, O_DCGM_LIB, O_BACKEND, O_SYSFS };
static const struct option longopts[] = {
    {"interval", required_argument, NULL, 'i'},
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, 'f'},
    {"timeline", required_argument, NULL, O_TIMELINE},
    {"nvml-path", required_argument, NULL, O_NVML},
    {"demo", optional_argument, NULL, O_DEMO},
    {"proc-root", required_argument, NULL, O_PROC_ROOT},
    {"backend", required_argument, NULL, O_BACKEND},
    {"sysfs-root", required_argument, NULL, O_SYSFS},
    {"dcgm", required_argument, NULL, O_DCGM},
    {"dcgm-lib", required_argument, NULL, O_DCGM_LIB},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* '+': options end at COMMAND, so its own options stay its own */
const struct cli_options profile_options = {.shorts = "+:i:o:f:h", .longs = longopts};

/*
 * argv[at] is the mode word: options come before and after it, COMMAND
 * after it (after "--", or from the first other word on). getopt stops at
 * the mode word as at any word that is no option; it is stepped over and
 * the options go on. Returns an exit status, or -1 to go on.
 */
int profile_parse(struct prof_opts *o, int argc, char **argv, int at)
{
    memset(o, 0, sizeof(*o));
    o->interval_ms = PROF_INTERVAL_DEFAULT_MS;
    char err[160];
    optind = 1;
    opterr = 0;
    bool past_mode = false, dashdash = false;
    for (;;) {
        int before = optind;
        int opt = getopt_long(argc, argv, profile_options.shorts, longopts, NULL);
        if (opt == -1 && !past_mode && optind == at) {
            past_mode = true;
            optind++;
            continue;
        }
        if (opt == -1) {
            /* getopt steps over "--" and stops after it */
            dashdash = optind == before + 1 && strcmp(argv[before], "--") == 0;
            break;
        }
        if (optarg && optarg == argv[at]) {
            /* an abbreviation cli_mode_index reads as no option of one
             * meaning (--o: --once or --output in the other modes) took the
             * mode word as its value */
            fprintf(stderr, "mig-gpu-mon profile: %s profile: write the option in full, or its "
                            "value after '='\n", argv[optind - 2]);
            return 2;
        }
        switch (opt) {
        case 'i': {
            char *end;
            errno = 0;
            unsigned long v = strtoul(optarg, &end, 10);
            if (errno || *end || !*optarg || v < PROF_INTERVAL_MIN_MS || v > 60000) {
                fprintf(stderr, "mig-gpu-mon profile: --interval %s: expected %u to 60000 ms\n",
                        optarg, PROF_INTERVAL_MIN_MS);
                return 2;
            }
            o->interval_ms = (unsigned)v;
            break;
        }
        case 'o': o->report = optarg; break;
        case 'f':
            if (strcmp(optarg, "text") == 0)
                o->format = PF_TEXT;
            else if (strcmp(optarg, "json") == 0)
                o->format = PF_JSON;
            else {
                fprintf(stderr, "mig-gpu-mon profile: --format %s: expected text or json\n", optarg);
                return 2;
            }
            break;
        case O_TIMELINE: o->timeline = optarg; break;
        case O_NVML: o->nvml_path = optarg; break;
        case O_DEMO: /* --demo NAME as in the other modes */
            o->demo = true;
            o->demo_scenario = cli_optional_value(argc, argv);
            break;
        case O_PROC_ROOT: o->proc_root = optarg; break;
        case O_BACKEND: o->backends = optarg; break;
        case O_SYSFS:
            if (!*optarg) {
                fprintf(stderr, "mig-gpu-mon profile: --sysfs-root: expected a directory\n");
                return 2;
            }
            o->sysfs_root = optarg;
            break;
        case O_DCGM:
            if (cli_parse_dcgm(optarg, &o->dcgm, o->dcgm_addr, sizeof(o->dcgm_addr)) != 0) {
                char v[208];
                snprintf(v, sizeof(v), "%s", optarg);
                text_clean(v, sizeof(v));
                fprintf(stderr, "mig-gpu-mon profile: --dcgm %s: expected auto, off, embedded, "
                                "HOST[:PORT] or unix:PATH\n", v);
                return 2;
            }
            break;
        case O_DCGM_LIB:
            if (!*optarg) {
                fprintf(stderr, "mig-gpu-mon profile: --dcgm-lib: expected a file path\n");
                return 2;
            }
            o->dcgm_lib = optarg;
            break;
        case 'h':
            usage(stdout);
            if (fflush(stdout) == 0 && !ferror(stdout))
                return 0;
            fprintf(stderr, "mig-gpu-mon profile: writing the help failed: %s\n", strerror(errno));
            return 1;
        case ':':
            fprintf(stderr, "mig-gpu-mon profile: %s: missing argument\n", argv[optind - 1]);
            return 2;
        default:
            if (cli_mode_conflict("profile", argv[optind - 1], err, sizeof(err)) != 0)
                fprintf(stderr, "mig-gpu-mon: %s\n", err);
            else
                fprintf(stderr, "mig-gpu-mon profile: %s: unknown option (see profile --help)\n",
                        argv[optind - 1]);
            return 2;
        }
    }
    /* COMMAND is what follows "--", never read; without "--", a word
     * before the mode word is out of place, and a second mode is one too
     * many */
    if (!dashdash && optind < argc && !past_mode) {
        fprintf(stderr, "mig-gpu-mon profile: %s: unexpected argument before profile (profile "
                        "[OPTIONS] -- COMMAND [ARGS...])\n", argv[optind]);
        return 2;
    }
    if (!dashdash && optind < argc &&
        cli_mode_conflict("profile", argv[optind], err, sizeof(err)) != 0) {
        fprintf(stderr, "mig-gpu-mon: %s\n", err);
        return 2;
    }
    if (optind >= argc) {
        fprintf(stderr, "mig-gpu-mon profile: no command given (profile -- COMMAND ARGS...)\n");
        return 2;
    }
    if (o->demo && o->nvml_path) {
        fprintf(stderr, "mig-gpu-mon profile: --demo and --nvml-path exclude each other\n");
        return 2;
    }
    o->cmd = argv + optind;
    return -1; /* go on */
}

