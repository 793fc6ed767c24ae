#include "app/cli.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "app/profile.h"
#include "app/recout.h"
#include "app/replay_mode.h"
#include "backend/prometheus/prom_query.h"
#include "core/text.h"

size_t cli_escape(char *out, size_t cap, const char *s)
{
    if (cap == 0)
        return 0;
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s), n = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t k = text_utf8_decode(p + i, len - i, &cp);
        char esc[12];
        const char *piece = (const char *)p + i;
        size_t m = k;
        if (k == 0) { /* a byte of no valid sequence */
            m = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", p[i]);
            piece = esc;
            k = 1;
        } else if (text_is_control(cp)) {
            if (cp < 0x80)
                m = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", (unsigned)cp);
            else if (cp > 0xffff)
                m = (size_t)snprintf(esc, sizeof(esc), "\\U%08x", (unsigned)cp);
            else
                m = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", (unsigned)cp);
            piece = esc;
        }
        if (n + m >= cap) /* whole escapes and characters only */
            break;
        memcpy(out + n, piece, m);
        n += m;
        i += k;
    }
    out[n] = '\0';
    return n;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    errno = 0;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v > max)
        return -1;
    *out = v;
    return 0;
}

/* The modes, in the order a conflict names them: record, export, profile
 * and replay are words (cli_mode_index finds the one), --once an option. */
static const char *const mode_names[] = {"record", "export", "profile", "replay", "--once"};
enum { MODE_RECORD = 1u << 0, MODE_EXPORT = 1u << 1, MODE_PROFILE = 1u << 2,
       MODE_REPLAY = 1u << 3, MODE_ONCE = 1u << 4 };
#define MODE_WORDS (MODE_RECORD | MODE_EXPORT | MODE_PROFILE | MODE_REPLAY)

/* The MODE_* bit of word, 0 when it names no mode. */
static unsigned mode_bit(const char *word)
{
    for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
        if (strcmp(word, mode_names[i]) == 0)
            return 1u << i;
    return 0;
}

/* More than one mode in modes (MODE_* bits): -1 with one line naming the
 * first two. */
static int check_modes(unsigned modes, char *err, size_t errlen)
{
    int first = -1;
    for (int i = 0; i < (int)(sizeof(mode_names) / sizeof(mode_names[0])); i++) {
        if (!(modes & 1u << i))
            continue;
        if (first < 0) {
            first = i;
            continue;
        }
        snprintf(err, errlen, "%s and %s exclude each other%s", mode_names[first], mode_names[i],
                 (1u << first | 1u << i) == (MODE_EXPORT | MODE_ONCE)
                     ? " (--once --format prometheus prints the page once)"
                     : "");
        return -1;
    }
    return 0;
}

int cli_mode_conflict(const char *mode, const char *word, char *err, size_t errlen)
{
    unsigned w = mode_bit(word);
    return w ? check_modes(mode_bit(mode) | w, err, errlen) : 0;
}

const char *cli_mode_near(const char *word)
{
    for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
        if ((1u << i) & MODE_WORDS && text_distance(word, mode_names[i]) <= 2)
            return mode_names[i];
    return NULL;
}

const char *cli_optional_value(int argc, char **argv)
{
    if (optarg)
        return optarg;
    if (optind < argc && argv[optind][0] != '-' && !mode_bit(argv[optind]))
        return argv[optind++];
    return NULL;
}

struct format_name {
    const char *name;
    enum cli_format format;
};

/* What --format takes in each mode: what --help and the man page list. */
static const struct format_name once_formats[] = {
    {"table", FMT_TABLE}, {"json", FMT_JSON}, {"prometheus", FMT_PROM},
    {"csv", FMT_CSV},     {"influx", FMT_INFLUX}, {NULL, 0},
};
static const struct format_name record_formats[] = {
    {"jsonl", FMT_JSONL}, {"csv", FMT_CSV}, {"influx", FMT_INFLUX}, {NULL, 0},
};

/* --format arg of a mode (what: "" or "record ") by its table; -1 with the
 * names the mode takes in err otherwise. */
static int parse_format(const struct format_name *t, const char *what, const char *arg,
                        enum cli_format *out, char *err, size_t errlen)
{
    for (size_t i = 0; t[i].name; i++) {
        if (strcmp(arg, t[i].name) == 0) {
            *out = t[i].format;
            return 0;
        }
    }
    size_t n = (size_t)snprintf(err, errlen, "%s--format %s: expected ", what, arg);
    for (size_t i = 0; t[i].name && n < errlen; i++)
        n += (size_t)snprintf(err + n, errlen - n, "%s%s",
                              i == 0 ? "" : t[i + 1].name ? ", " : " or ", t[i].name);
    return -1;
}

/* The compression (--compress, else -o's name) and the schema (--schema,
 * else 2 when compressed, 1 when plain) of a recording: a name that asks
 * for what is not written, or for what --compress contradicts, is refused
 * (docs/record.md, "Compressed recordings"). */
static int check_compress(struct cli *c, char *err, size_t errlen)
{
    static const char *const names[] = {[REC_PLAIN] = "none", [REC_GZIP] = "gzip",
                                         [REC_ZSTD] = "zstd"};
    int asked = -1;
    for (int k = 0; c->compress_arg && k < 3; k++)
        if (strcmp(c->compress_arg, names[k]) == 0)
            asked = k;
    if (c->compress_arg && asked < 0) {
        snprintf(err, errlen, "--compress %s: expected zstd, gzip or none", c->compress_arg);
        return -1;
    }
    char other[16] = "";
    enum rec_compress named = REC_PLAIN;
    if (strcmp(c->output, "-") != 0)
        named = recout_by_name(c->output, other, sizeof(other));
    if (other[0]) {
        snprintf(err, errlen, "-o %s: %s compression is not written; name the file .zst (zstd) "
                 "or .gz (gzip), or without %s for plain text", c->output, other, other);
        return -1;
    }
    if (asked >= 0 && named != REC_PLAIN && (int)named != asked) {
        snprintf(err, errlen, "--compress %s: -o %s names %s", c->compress_arg, c->output,
                 names[named]);
        return -1;
    }
    c->compress = asked >= 0 ? asked : (int)named;
    if (c->compress != REC_PLAIN && c->format == FMT_INFLUX) {
        snprintf(err, errlen, "--format influx is written plain (Telegraf's inputs.execd reads "
                 "its lines): without %s", c->compress_arg ? "--compress" : "a .gz or .zst name");
        return -1;
    }
    if (c->schema && c->format != FMT_JSONL) {
        snprintf(err, errlen, "--schema goes with --format jsonl");
        return -1;
    }
    if (!c->schema)
        c->schema = c->compress != REC_PLAIN && c->format == FMT_JSONL ? 2 : 1;
    return 0;
}

/* The combinations the record mode accepts. */
static int check_record(struct cli *c, char *err, size_t errlen)
{
    c->format = FMT_JSONL;
    if (c->format_arg && parse_format(record_formats, "record ", c->format_arg, &c->format, err,
                                      errlen) != 0)
        return -1;
    if (c->append && c->force) {
        snprintf(err, errlen, "--append and --force exclude each other");
        return -1;
    }
    if (!c->output)
        c->output = "-";
    if ((c->append || c->force) && strcmp(c->output, "-") == 0) {
        snprintf(err, errlen, "--append and --force need -o FILE");
        return -1;
    }
    return check_compress(c, err, errlen);
}

/* The monitor's options (record and export take the same table; what does
 * not belong to the mode given is refused after the parse). */
enum { OPT_NVML_PATH = 256, OPT_DEBUG, OPT_PROC_ROOT, OPT_ONCE, OPT_TOP, OPT_DEMO,
       OPT_BACKEND, OPT_SYSFS_ROOT, OPT_NO_COLOR, OPT_GPM, OPT_DCGM, OPT_DCGM_LIB, OPT_DCGM_INTERVAL, OPT_TIMEOUT, OPT_ALL_PROCESSES,
       OPT_LISTEN = 300, OPT_COMPAT, OPT_EXPORT_PROCESSES, OPT_NO_HOST, OPT_KUBELET_SOCKET,
       OPT_PROMETHEUS = 400, OPT_PROMETHEUS_AUTH,
       OPT_PROMETHEUS_CA, OPT_PROMETHEUS_MATCH };
enum { OPT_APPEND = 512, OPT_FORCE, OPT_DURATION, OPT_TRIGGER, OPT_COMPRESS, OPT_SCHEMA };
enum { OPT_CONFIG = 600, OPT_NO_CONFIG, OPT_WRITE_CONFIG };
static const struct option longopts[] = {
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {"once", no_argument, NULL, OPT_ONCE},
    {"all-processes", no_argument, NULL, OPT_ALL_PROCESSES},
    {"format", required_argument, NULL, 'f'},
    {"interval", required_argument, NULL, 'i'},
    {"nvml-path", required_argument, NULL, OPT_NVML_PATH},
    {"debug", optional_argument, NULL, OPT_DEBUG},
    {"proc-root", required_argument, NULL, OPT_PROC_ROOT},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"sysfs-root", required_argument, NULL, OPT_SYSFS_ROOT},
    {"top", required_argument, NULL, OPT_TOP},
    {"demo", optional_argument, NULL, OPT_DEMO},
    {"no-color", no_argument, NULL, OPT_NO_COLOR},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"no-config", no_argument, NULL, OPT_NO_CONFIG},
    {"write-config", no_argument, NULL, OPT_WRITE_CONFIG},
    {"gpm", required_argument, NULL, OPT_GPM},
    {"dcgm", required_argument, NULL, OPT_DCGM},
    {"dcgm-lib", required_argument, NULL, OPT_DCGM_LIB},
    {"dcgm-interval", required_argument, NULL, OPT_DCGM_INTERVAL},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"listen", required_argument, NULL, OPT_LISTEN},
    {"compat", required_argument, NULL, OPT_COMPAT},
    {"export-processes", no_argument, NULL, OPT_EXPORT_PROCESSES},
    {"no-host", no_argument, NULL, OPT_NO_HOST},
    {"kubelet-socket", required_argument, NULL, OPT_KUBELET_SOCKET},
    {"prometheus", required_argument, NULL, OPT_PROMETHEUS},
    {"prometheus-auth", required_argument, NULL, OPT_PROMETHEUS_AUTH},
    {"prometheus-ca", required_argument, NULL, OPT_PROMETHEUS_CA},
    {"prometheus-match", required_argument, NULL, OPT_PROMETHEUS_MATCH},
    {"output", required_argument, NULL, 'o'},
    {"append", no_argument, NULL, OPT_APPEND},
    {"force", no_argument, NULL, OPT_FORCE},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"count", required_argument, NULL, 'n'},
    {"trigger", required_argument, NULL, OPT_TRIGGER},
    {"compress", required_argument, NULL, OPT_COMPRESS},
    {"schema", required_argument, NULL, OPT_SCHEMA},
    {NULL, 0, NULL, 0},
};
/* '-': a word that is no option comes back in its place (as 1), so the
 * mode word is known by where it is, and nothing is moved (also under
 * POSIXLY_CORRECT) */
static const char shorts[] = "-:hVf:i:o:n:";

const struct cli_options cli_monitor_options = {.shorts = shorts, .longs = longopts};

/*
 * How getopt_long reads --NAME (NAME up to any '='), with the tables of
 * every mode at once: the has_arg of the option NAME names, exactly, or as
 * the start of options that all take a value alike. -1: none, or starts of
 * options that differ (getopt refuses those where they are ambiguous).
 */
static int long_has_arg(const char *name, const struct cli_options *const *sets)
{
    size_t n = strcspn(name, "=");
    int found = -1;
    bool mixed = false;
    for (; *sets; sets++) {
        for (const struct option *o = (*sets)->longs; o->name; o++) {
            if (strncmp(o->name, name, n) != 0)
                continue;
            if (o->name[n] == '\0')
                return o->has_arg;
            if (found >= 0 && found != o->has_arg)
                mixed = true;
            found = o->has_arg;
        }
    }
    return mixed ? -1 : found;
}

/* Whether the short option ch takes a value in one of the modes (its
 * getopt string has one ':' after it; no mode has a short option whose
 * value is optional). */
static bool short_has_arg(char ch, const struct cli_options *const *sets)
{
    for (; *sets; sets++) {
        const char *s = (*sets)->shorts;
        s += strspn(s, "+-:"); /* getopt's flags, not options */
        const char *p = ch == ':' ? NULL : strchr(s, ch);
        if (p && p[1] == ':' && p[2] != ':')
            return true;
    }
    return false;
}

int cli_mode_index(int argc, char **argv)
{
    static const struct cli_options *const sets[] = {&cli_monitor_options, &profile_options,
                                                     &replay_options, NULL};
    for (int i = 1; i < argc; i++) {
        const char *w = argv[i];
        if (strcmp(w, "--") == 0)
            return 0; /* what follows is no option and no mode */
        if (w[0] != '-' || w[1] == '\0') {
            if (mode_bit(w) & MODE_WORDS)
                return i;
            continue;
        }
        if (w[1] == '-') {
            if (strchr(w, '='))
                continue;
            int has = long_has_arg(w + 2, sets);
            if (has == required_argument ||
                (has == optional_argument && i + 1 < argc && argv[i + 1][0] != '-' &&
                 !mode_bit(argv[i + 1])))
                i++;
            continue;
        }
        /* -abc: the first that takes a value takes the rest, or the next word */
        for (const char *p = w + 1; *p; p++) {
            if (short_has_arg(*p, sets)) {
                if (p[1] == '\0')
                    i++;
                break;
            }
        }
    }
    return 0;
}

/*
 * Whether word would be read as one of the options (optstring: getopt's
 * string; longs: its table): "--", --NAME or --NAME=... where NAME is a long
 * option or the start of one (getopt_long takes abbreviations), or -X...
 * where X is a short option. "-" (standard output for -o), negative numbers
 * and any other word are values.
 */
static bool is_option(const char *word, const char *optstring, const struct option *longs)
{
    if (word[0] != '-' || word[1] == '\0')
        return false;
    if (word[1] != '-')
        return word[1] != ':' && strchr(optstring, word[1]) != NULL;
    if (word[2] == '\0')
        return true;
    size_t n = strcspn(word + 2, "=");
    for (; n > 0 && longs->name; longs++)
        if (strncmp(longs->name, word + 2, n) == 0)
            return true;
    return false;
}

static int parse_args(struct cli *c, int argc, char **argv, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    c->interval_ms = CLI_INTERVAL_DEFAULT_MS;
    c->timeout_ms = CLI_TIMEOUT_DEFAULT_MS;
    c->top = CLI_TOP_DEFAULT;
    /* The mode word stays where it is, so --demo or --debug before it see
     * a mode there, not a value. */
    int at = cli_mode_index(argc, argv);
    unsigned mode = at ? mode_bit(argv[at]) : 0;
    c->record = mode == MODE_RECORD;
    c->exporter = mode == MODE_EXPORT;
    /* any other mode among the words counts (also after "--"), so that two
     * modes are refused whatever their order */
    unsigned modes = mode;
    const char *stray = NULL;
    optind = 1;
    opterr = 0;
    int opt, li;
    while ((li = -1, opt = getopt_long(argc, argv, shorts, longopts, &li)) != -1) {
        unsigned long v;
        /* getopt takes the next word as the value whatever it is: one that is
         * itself an option (--config --no-config, -o --force) means the
         * value was forgotten. Given with '=' or attached (-o-x), a value is
         * taken as it is. */
        if (opt != 1 && optarg && optarg == argv[optind - 1] &&
            is_option(optarg, shorts, longopts)) {
            char name[32];
            if (li >= 0)
                snprintf(name, sizeof(name), "--%s", longopts[li].name);
            else
                snprintf(name, sizeof(name), "-%c", opt);
            snprintf(err, errlen, "%s needs a value: %s is an option (write %s%s%s to give it "
                                  "as the value)", name, optarg, name, li >= 0 ? "=" : "", optarg);
            return -1;
        }
        switch (opt) {
        case 1:
            if (optind - 1 != at) {
                modes |= mode_bit(optarg);
                if (!stray)
                    stray = optarg;
            }
            break;
        case 'h': c->help = true; break;
        case 'V': c->version = true; break;
        case OPT_ONCE: c->once = true; break;
        case OPT_ALL_PROCESSES: c->all_processes = true; break;
        case 'f': c->format_arg = optarg; break; /* its mode is known at the end */
        case 'i':
            if (parse_uint(optarg, ULONG_MAX, &v) != 0) {
                snprintf(err, errlen, "--interval %s: expected a whole number of milliseconds "
                                      "from %u to %u", optarg, CLI_INTERVAL_MIN_MS, CLI_INTERVAL_MAX_MS);
                return -1;
            }
            if (v < CLI_INTERVAL_MIN_MS || v > CLI_INTERVAL_MAX_MS) {
                snprintf(err, errlen, "--interval %s: must be between %u and %u milliseconds",
                         optarg, CLI_INTERVAL_MIN_MS, CLI_INTERVAL_MAX_MS);
                return -1;
            }
            c->interval_ms = (unsigned)v;
            c->interval_given = true;
            break;
        case OPT_NVML_PATH:
            if (!*optarg) {
                snprintf(err, errlen, "--nvml-path: expected a file path");
                return -1;
            }
            c->nvml_path = optarg;
            break;
        case OPT_DEBUG:
            c->debug = true;
            c->debug_file = cli_optional_value(argc, argv);
            if (c->debug_file && !*c->debug_file) {
                snprintf(err, errlen, "--debug: expected a file path, got an empty one");
                return -1;
            }
            break;
        case OPT_PROC_ROOT: c->proc_root = optarg; break;
        case OPT_BACKEND: c->backends = optarg; break;
        case OPT_SYSFS_ROOT: c->sysfs_root = optarg; break;
        case OPT_TOP:
            if (parse_uint(optarg, CLI_TOP_MAX, &v) != 0) {
                snprintf(err, errlen, "--top %s: expected a number of processes from 0 (all) to %u",
                         optarg, CLI_TOP_MAX);
                return -1;
            }
            c->top = (unsigned)v;
            c->top_given = true;
            break;
        case OPT_DEMO: {
            bool next = !optarg; /* a value of the next word, not after '=' */
            c->demo = true;
            c->demo_scenario = cli_optional_value(argc, argv);
            if (c->demo_scenario && !*c->demo_scenario) {
                snprintf(err, errlen, "--demo: expected a scenario name, got an empty one");
                return -1;
            }
            /* --demo recrod -n 1: a mode word mistyped is taken as the
             * scenario, and what follows is refused for want of the mode;
             * said as the typo it likely is (cli_parse) */
            c->demo_mode_typo = next && c->demo_scenario && !strchr(c->demo_scenario, '/')
                                    ? cli_mode_near(c->demo_scenario)
                                    : NULL;
            break;
        }
        case OPT_NO_COLOR: c->no_color = true; break;
        case OPT_CONFIG:
            if (!*optarg) {
                snprintf(err, errlen, "--config: expected a file path");
                return -1;
            }
            c->config_file = optarg;
            break;
        case OPT_NO_CONFIG: c->no_config = true; break;
        case OPT_WRITE_CONFIG: c->write_config = true; break;
        case OPT_TIMEOUT: {
            char *end = NULL;
            errno = 0;
            double t = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(t > 0) || t > CLI_TIMEOUT_MAX_S) {
                snprintf(err, errlen, "--timeout %s: expected seconds, more than 0 and at most %.0f",
                         optarg, CLI_TIMEOUT_MAX_S);
                return -1;
            }
            c->timeout_ms = (unsigned)(t * 1000.0 + 0.5);
            if (c->timeout_ms == 0)
                c->timeout_ms = 1;
            c->timeout_given = true;
            break;
        }
        case OPT_GPM:
            if (strcmp(optarg, "auto") == 0)
                c->gpm = CLI_GPM_AUTO;
            else if (strcmp(optarg, "on") == 0)
                c->gpm = CLI_GPM_ON;
            else if (strcmp(optarg, "off") == 0)
                c->gpm = CLI_GPM_OFF;
            else if (strcmp(optarg, "helper") == 0)
                c->gpm = CLI_GPM_HELPER;
            else {
                snprintf(err, errlen, "--gpm %s: expected auto, on, off or helper", optarg);
                return -1;
            }
            c->gpm_given = true;
            break;
        case OPT_DCGM:
            if (cli_parse_dcgm(optarg, &c->dcgm, c->dcgm_addr, sizeof(c->dcgm_addr)) != 0) {
                snprintf(err, errlen,
                         "--dcgm %.200s: expected auto, off, embedded, HOST[:PORT] or unix:PATH",
                         optarg);
                return -1;
            }
            c->dcgm_given = true;
            break;
        case OPT_DCGM_LIB:
            if (!*optarg) {
                snprintf(err, errlen, "--dcgm-lib: expected a file path");
                return -1;
            }
            c->dcgm_lib = optarg;
            break;
        case OPT_DCGM_INTERVAL:
            if (parse_uint(optarg, ULONG_MAX, &v) != 0 || v < CLI_INTERVAL_MIN_MS ||
                v > CLI_INTERVAL_MAX_MS) {
                snprintf(err, errlen, "--dcgm-interval %s: expected a whole number of "
                                      "milliseconds from %u to %u", optarg, CLI_INTERVAL_MIN_MS,
                         CLI_INTERVAL_MAX_MS);
                return -1;
            }
            c->dcgm_interval_ms = (unsigned)v;
            break;
        case OPT_LISTEN:
            if (!strchr(optarg, ':')) {
                snprintf(err, errlen, "--listen %s: expected ADDR:PORT or :PORT", optarg);
                return -1;
            }
            c->listen = optarg;
            break;
        case OPT_COMPAT:
            if (strcmp(optarg, "dcgm") != 0) {
                snprintf(err, errlen, "--compat %s: expected dcgm", optarg);
                return -1;
            }
            c->compat_dcgm = true;
            break;
        case OPT_PROMETHEUS:
            if (strncmp(optarg, "http://", 7) != 0 && strncmp(optarg, "https://", 8) != 0) {
                char shown[201];
                text_url_redact(shown, sizeof(shown), optarg); /* no password in a message */
                snprintf(err, errlen, "--prometheus %s: expected an http:// or https:// URL",
                         shown);
                return -1;
            }
            c->prometheus = optarg;
            break;
        case OPT_PROMETHEUS_AUTH:
            if (!*optarg) {
                snprintf(err, errlen, "--prometheus-auth: expected a file path");
                return -1;
            }
            c->prometheus_auth = optarg;
            break;
        case OPT_PROMETHEUS_CA:
            if (!*optarg) {
                snprintf(err, errlen, "--prometheus-ca: expected a file path");
                return -1;
            }
            c->prometheus_ca = optarg;
            break;
        case OPT_PROMETHEUS_MATCH: {
            char canon[2048];
            if (promq_match_parse(optarg, canon, sizeof(canon), err, errlen) != 0)
                return -1;
            c->prometheus_match = optarg;
            break;
        }
        case OPT_EXPORT_PROCESSES: c->export_processes = true; break;
        case OPT_NO_HOST: c->no_host = true; break;
        case OPT_KUBELET_SOCKET:
            if (!*optarg || strlen(optarg) > CLI_SOCKET_PATH_MAX) {
                snprintf(err, errlen, "--kubelet-socket %s: expected a socket path (at most %d "
                         "bytes) or off", optarg, CLI_SOCKET_PATH_MAX);
                return -1;
            }
            c->kubelet_socket = optarg;
            break;
        case 'o':
            if (!*optarg) {
                snprintf(err, errlen, "--output: expected a file path or '-'");
                return -1;
            }
            c->output = optarg;
            break;
        case OPT_APPEND: c->append = true; break;
        case OPT_FORCE: c->force = true; break;
        case OPT_DURATION: {
            char *end = NULL;
            errno = 0;
            double t = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(t > 0) || t > CLI_DURATION_MAX_S) {
                snprintf(err, errlen, "--duration %s: expected seconds, more than 0 and at most %.0f",
                         optarg, CLI_DURATION_MAX_S);
                return -1;
            }
            c->duration_s = t;
            break;
        }
        case 'n':
            if (parse_uint(optarg, CLI_COUNT_MAX, &v) != 0 || v == 0) {
                snprintf(err, errlen, "--count %s: expected a number of snapshots from 1 to %lu",
                         optarg, CLI_COUNT_MAX);
                return -1;
            }
            c->count = v;
            break;
        case OPT_TRIGGER:
            if (strcmp(optarg, "stdin") == 0)
                c->trigger_stdin = true;
            else if (strcmp(optarg, "interval") == 0)
                c->trigger_stdin = false;
            else {
                snprintf(err, errlen, "--trigger %s: expected interval or stdin", optarg);
                return -1;
            }
            break;
        case OPT_COMPRESS: c->compress_arg = optarg; break;
        case OPT_SCHEMA:
            if (strcmp(optarg, "1") != 0 && strcmp(optarg, "2") != 0) {
                snprintf(err, errlen, "--schema %s: expected 1 or 2", optarg);
                return -1;
            }
            c->schema = optarg[0] - '0';
            break;
        case ':':
            snprintf(err, errlen, "%s: missing argument", argv[optind - 1]);
            return -1;
        default:
            if (optopt)
                snprintf(err, errlen, "-%c: unknown option (see --help)", optopt);
            else
                snprintf(err, errlen, "%s: unknown option (see --help)", argv[optind - 1]);
            return -1;
        }
    }
    for (int i = optind; i < argc; i++) { /* after "--" */
        modes |= mode_bit(argv[i]);
        if (!stray)
            stray = argv[i];
    }
    if (c->once)
        modes |= MODE_ONCE;
    if (check_modes(modes, err, errlen) != 0)
        return -1;
    if (stray) {
        if (mode && mode_bit(stray) == mode)
            snprintf(err, errlen, "%s given twice (see --help)", stray);
        else
            snprintf(err, errlen, "%s: unexpected argument (see --help)", stray);
        return -1;
    }
    if (mode == MODE_PROFILE || mode == MODE_REPLAY) { /* their own mains parse them */
        snprintf(err, errlen, "%s: see %s --help", argv[at], argv[at]);
        return -1;
    }
    if (c->demo && c->nvml_path) {
        snprintf(err, errlen, "--demo and --nvml-path exclude each other");
        return -1;
    }
    if (c->config_file && c->no_config) {
        snprintf(err, errlen, "--config and --no-config exclude each other");
        return -1;
    }
    if (c->interval_given && c->once) {
        snprintf(err, errlen, "--interval has no meaning with --once (one snapshot); "
                              "for a series use record -i MS");
        return -1;
    }
    if (c->all_processes && !c->once) {
        snprintf(err, errlen, "--all-processes needs --once (the interactive monitor's key a "
                              "shows the same list)");
        return -1;
    }
    if (c->timeout_given && !c->once) {
        snprintf(err, errlen, "--timeout needs --once");
        return -1;
    }
    if (c->record && (c->listen || c->kubelet_socket)) {
        snprintf(err, errlen, "%s needs export", c->listen ? "--listen" : "--kubelet-socket");
        return -1;
    }
    if (c->record && (c->compat_dcgm || c->export_processes || c->no_host)) {
        snprintf(err, errlen, "%s needs export or --once --format prometheus",
                 c->compat_dcgm ? "--compat" : c->no_host ? "--no-host" : "--export-processes");
        return -1;
    }
    if (c->record)
        return check_record(c, err, errlen);
    if (c->output || c->append || c->force || c->duration_s > 0 || c->count || c->trigger_stdin ||
        c->compress_arg || c->schema) {
        snprintf(err, errlen, "-o, --append, --force, --duration, -n, --trigger, --compress and "
                              "--schema need the record mode (mig-gpu-mon record ...)");
        return -1;
    }
    if (c->format_arg && !c->once) {
        snprintf(err, errlen, "--format needs --once or record");
        return -1;
    }
    if (c->format_arg &&
        parse_format(once_formats, "", c->format_arg, &c->format, err, errlen) != 0)
        return -1;
    if (c->all_processes && c->format != FMT_TABLE && c->format != FMT_JSON) {
        snprintf(err, errlen, "--all-processes --format %s: expected table or json",
                 c->format_arg);
        return -1;
    }
    if (c->listen && !c->exporter) {
        snprintf(err, errlen, "--listen needs export");
        return -1;
    }
    if (c->kubelet_socket && !c->exporter) {
        snprintf(err, errlen, "--kubelet-socket needs export");
        return -1;
    }
    if ((c->compat_dcgm || c->export_processes || c->no_host) && !c->exporter &&
        !(c->once && c->format == FMT_PROM)) {
        snprintf(err, errlen, "%s needs export or --once --format prometheus",
                 c->compat_dcgm ? "--compat" : c->no_host ? "--no-host" : "--export-processes");
        return -1;
    }
    return 0;
}

int cli_parse(struct cli *c, int argc, char **argv, char *err, size_t errlen)
{
    int rc = parse_args(c, argc, argv, err, errlen);
    if (rc != 0 && c->demo_mode_typo)
        snprintf(err, errlen,
                 "--demo %s: taken as a scenario's name, but it looks like the mode %s "
                 "mistyped (a scenario of that name: --demo=%s)",
                 c->demo_scenario, c->demo_mode_typo, c->demo_scenario);
    if (rc != 0 && errlen > 0) {
        /* the message quotes what was typed: no terminal control in it */
        char raw[1024];
        snprintf(raw, sizeof(raw), "%s", err);
        cli_escape(err, errlen, raw);
    }
    return rc;
}

int cli_parse_dcgm(const char *s, int *mode, char *addr, size_t addrlen)
{
    addr[0] = '\0';
    if (!strcmp(s, "auto") || !strcmp(s, "off") || !strcmp(s, "embedded")) {
        *mode = !strcmp(s, "auto") ? CLI_DCGM_AUTO : !strcmp(s, "off") ? CLI_DCGM_OFF
                                                                        : CLI_DCGM_EMBEDDED;
        return 0;
    }
    size_t n = strlen(s);
    if (n == 0 || n >= addrlen)
        return -1;
    if (!strncmp(s, "unix:", 5)) {
        if (s[5] != '/')
            return -1; /* an absolute socket path */
    } else {
        const char *colon = strrchr(s, ':');
        size_t host = colon ? (size_t)(colon - s) : n;
        if (host == 0)
            return -1;
        for (size_t i = 0; i < host; i++) {
            if (!(isalnum((unsigned char)s[i]) || s[i] == '.' || s[i] == '-'))
                return -1;
        }
        if (colon) {
            char *end;
            long port = strtol(colon + 1, &end, 10);
            if (end == colon + 1 || *end || port < 1 || port > 65535)
                return -1;
        }
    }
    memcpy(addr, s, n + 1);
    *mode = CLI_DCGM_ADDR;
    return 0;
}
