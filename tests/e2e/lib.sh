# shellcheck shell=bash
# Tiny assertion helpers for the end-to-end tests. Sourced by run.sh.
PASS=0
FAIL=0

ok() { PASS=$((PASS + 1)); }
bad() {
    FAIL=$((FAIL + 1))
    echo "FAIL [$CURRENT] $*" >&2
}

# pgrep_mine PATTERN: the PIDs of the processes matching PATTERN (pgrep -f)
# that this test file started: their environment carries its
# MIGMON_E2E_RUN (run_file.sh), so files running at the same time never
# count each other's helpers.
pgrep_mine() {
    local p
    for p in $(pgrep -f -- "$1"); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qxF "MIGMON_E2E_RUN=${MIGMON_E2E_RUN:-}" &&
            echo "$p"
    done
}

# eq DESC ACTUAL EXPECTED
eq() {
    if [ "$2" == "$3" ]; then ok; else bad "$1: got '$2', expected '$3'"; fi
}

# contains DESC HAYSTACK NEEDLE
contains() {
    case "$2" in
    *"$3"*) ok ;;
    *) bad "$1: '$3' not found in: $(printf '%s' "$2" | head -c 400)" ;;
    esac
}

# jeq DESC JSON JQ-FILTER EXPECTED  (jq -c output compared as text)
jeq() {
    local got
    got=$(printf '%s' "$2" | jq -c "$3" 2>&1) || got="jq error: $got"
    eq "$1" "$got" "$4"
}

# export_port ERRFILE: the port an exporter started with --listen
# 127.0.0.1:0 says on its stderr (in ERRFILE) that it listens on, waiting
# up to 5 s; empty when it never says so.
export_port() {
    local i p
    for ((i = 0; i < 100; i++)); do
        p=$(grep -oE '127\.0\.0\.1:[0-9]+/metrics' "$1" 2>/dev/null | grep -oE '[0-9]+/' | tr -d /)
        [ -n "$p" ] && break
        sleep 0.05
    done
    echo "$p"
}

# Run the monitor on a simulator scenario: mon SCENARIO [ARGS...]
mon() {
    local scen=$1
    shift
    MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/$scen" MIGMON_SIM_TIME=${SIM_TIME:-100} \
        "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" "$@"
}

# hostile_proc_root DIR: the gpu-host /proc fixture plus PID 4242 (a process
# of hostile.ini), whose name and command line hold every character that
# line protocol and CSV treat specially: name 'ev il,x=1 "q"\', command
# line 'run "quoted, a=b" back\slash'.
hostile_proc_root() {
    local src="$MIGMON_SRC/tests/fixtures/proc/gpu-host"
    cp -r "$src" "$1"
    mkdir -p "$1/4242"
    sed 's/^4101 (python3)/4242 (ev il,x=1 "q"\\)/' "$src/4101/stat" >"$1/4242/stat"
    sed 's/4101/4242/' "$src/4101/status" >"$1/4242/status"
    printf 'run\0"quoted, a=b"\0back\\slash\0' >"$1/4242/cmdline"
    : >"$1/4242/cgroup"
}

# clean_text FILE: "ok" when FILE is strict UTF-8 without a character the
# program never writes (src/core/text.h): a control a terminal acts on (C0 but
# tab and newline, DEL, C1: U+0080-U+009F; as a raw byte 0x80-0x9f outside
# a sequence it is not UTF-8 at all), a format character (Unicode's Cf:
# the bidi embeddings, overrides, isolates and marks, zero-width
# characters, the BOM, the soft hyphen, tags...), the line or paragraph
# separator (Zl, Zp); else the first offender.
clean_text() {
    if command -v python3 >/dev/null; then
        python3 - "$1" <<'PY'
import sys, unicodedata
data = open(sys.argv[1], "rb").read()
try:
    text = data.decode("utf-8", errors="strict")
except UnicodeDecodeError as e:
    print("invalid UTF-8 at byte %d: %r" % (e.start, data[max(0, e.start - 20):e.start + 4]))
    sys.exit(0)
for i, ch in enumerate(text):
    c = ord(ch)
    if ch not in "\t\n" and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
        print("control U+%04X at character %d: %r" % (c, i, text[max(0, i - 20):i + 4]))
        sys.exit(0)
print("ok")
PY
    elif LC_ALL=C grep -qaP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f\xad]|\xd8\x9c|\xe2\x80[\x8b-\x8f\xa8-\xae]|\xe2\x81[\xa0-\xaf]|\xef\xbb\xbf|\xf3\xa0[\x80\x81]' "$1" ||
        LC_ALL=C.UTF-8 grep -qaxv '.*' "$1"; then
        echo "a control or invalid UTF-8"
    else
        echo ok
    fi
}
