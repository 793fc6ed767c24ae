# shellcheck shell=bash
# Tiny assertion helpers for the end-to-end tests. Sourced by run.sh.
PASS=0
FAIL=0

ok() { PASS=$((PASS + 1)); }
bad() {
    FAIL=$((FAIL + 1))
    echo "FAIL [$CURRENT] $*" >&2
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
