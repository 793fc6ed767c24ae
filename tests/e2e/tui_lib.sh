# shellcheck shell=bash
# Screen tests of the interactive monitor in a detached tmux (sourced by
# test_tui*.sh). The monitor runs in test mode (src/tui/tui.h):
# MIGMON_TEST_TICKS samples back to back, then one more per SIGUSR1, and
# MIGMON_TEST_FRAMES reports "ticks frames pid" after each drawn frame, so every
# wait below is for a known frame, never a sleep guess. The simulator runs on
# a fixed clock (MIGMON_SIM_TIME=T0+1: one simulated second per sample) and
# the host side reads a fixture /proc, so screens are identical on every
# machine; only the header clock is masked.
#
# Stored screens: tests/e2e/screens/NAME.txt (plain) and NAME.ansi (with
# colours, tmux capture-pane -e). MIGMON_UPDATE_SCREENS=1 rewrites them.

TUI_SOCK="migmon-test-$$"
# -u and a UTF-8 locale: the server must not turn wide characters into "_"
# when the caller (CI) runs in the C locale.
tmx() { LC_ALL=C.UTF-8 tmux -u -L "$TUI_SOCK" -f /dev/null "$@"; }

# A private copy of a fixture /proc (with its process directories): stat.1 as stat (stat.2 comes later with
# tui_cpu_step), and a fixed host name.
tui_proc() {
    local name=$1 fixture=$2 dir="$TMP/proc-$1"
    rm -rf "$dir"
    mkdir -p "$dir/sys/kernel"
    cp -R "$MIGMON_SRC/tests/fixtures/proc/$fixture"/. "$dir/"
    cp "$dir/stat.1" "$dir/stat"
    echo "gpu-node-07" >"$dir/sys/kernel/hostname"
    echo "$dir"
}

# tui_start NAME COLS ROWS TICKS ENV... -- ARGS...
#   ENV: extra VAR=value pairs (MIGMON_SIM_SCENARIO=..., TERM=..., LANG=...)
tui_start() {
    local name=$1 cols=$2 rows=$3 ticks=$4
    shift 4
    local envs=() args=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
    [ "${1:-}" = -- ] && shift
    args=("$@")
    rm -f "$TMP/$name.frames" "$TMP/$name.exit"
    local cmd
    cmd=$(printf '%q ' env -i PATH="$PATH" HOME="$TMP" MIGMON_E2E_RUN="${MIGMON_E2E_RUN:-}" TERM=tmux-256color LANG=C.UTF-8 \
        MIGMON_TEST_TICKS="$ticks" MIGMON_TEST_FRAMES="$TMP/$name.frames" \
        MIGMON_SIM_TIME=1000+1 "${envs[@]}" "$MIGMON_BIN" "${args[@]}")
    tmx new-session -d -s "$name" -x "$cols" -y "$rows" \
        "$cmd; echo \$? > $TMP/$name.exit; sleep 600"
    tui_wait "$name" 1
}

# Frames drawn so far (0 before the first).
tui_frames() {
    local t f p
    { read -r t f p <"$TMP/$1.frames"; } 2>/dev/null && echo "$f" || echo 0
}
# The monitor's PID, from its frames file (also right under valgrind).
tui_pid() {
    local t f p
    { read -r t f p <"$TMP/$1.frames"; } 2>/dev/null && echo "$p"
}

# tui_wait NAME N: until at least N frames are drawn (or the monitor exits).
tui_wait() {
    local i limit=$((${TUI_WAIT_S:-10} * 20))
    for ((i = 0; i < limit; i++)); do
        [ "$(tui_frames "$1")" -ge "$2" ] && return 0
        [ -e "$TMP/$1.exit" ] && return 1
        sleep 0.05
    done
    echo "tui_wait $1: no frame $2 after ${TUI_WAIT_S:-10} s" >&2
    return 1
}

# tui_keys NAME KEY...: send keys (tmux names: Tab, BTab, Down, Home, …),
# one at a time, each waiting for its frame.
tui_keys() {
    local name=$1 k n
    shift
    for k in "$@"; do
        n=$(tui_frames "$name")
        tmx send-keys -t "$name" "$k"
        tui_wait "$name" $((n + 1))
    done
}

# tui_tick NAME: one more sample (SIGUSR1 to the monitor) and its frame.
tui_tick() {
    local n
    n=$(tui_frames "$1")
    kill -USR1 "$(tui_pid "$1")"
    tui_wait "$1" $((n + 1))
}

# tui_cpu_step NAME: the fixture's second /proc/stat, then one sample, so
# CPU percentages are real deltas.
tui_cpu_step() {
    cat "$TMP/proc-$1/stat.2" >"$TMP/proc-$1/stat" # same inode: the monitor preads it
    tui_tick "$1"
}

# TUI_MASK: one more sed -E expression for what a screen shows that depends
# on the machine's speed (a lost GPU's age).
tui_capture() { # tui_capture NAME [-e]
    tmx capture-pane -p ${2:+"$2"} -t "$1" |
        sed -E -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}/YYYY-MM-DD hh:mm:ss/' \
            ${TUI_MASK:+-e "$TUI_MASK"}
}

# tui_screen DESC NAME SCREEN: compare plain and coloured captures with the
# stored screens.
tui_screen() {
    local desc=$1 name=$2 screen=$3 kind ext flag got want
    for kind in plain ansi; do
        if [ $kind = plain ]; then ext=txt flag=; else ext=ansi flag=-e; fi
        want="$MIGMON_SRC/tests/e2e/screens/$screen.$ext"
        got="$TMP/$screen.$ext"
        tui_capture "$name" $flag >"$got"
        if [ "${MIGMON_UPDATE_SCREENS:-}" = 1 ]; then
            cp "$got" "$want"
        fi
        if [ ! -f "$want" ]; then
            bad "$desc: no stored screen $want (run with MIGMON_UPDATE_SCREENS=1)"
        elif cmp -s "$got" "$want"; then
            ok
        else
            bad "$desc ($ext): screen differs from $screen.$ext:
$(diff "$want" "$got" | head -20)"
        fi
    done
}

# tui_quit NAME KEY: send KEY, wait for the exit, echo the exit status.
tui_quit() {
    local i
    tmx send-keys -t "$1" "$2"
    for ((i = 0; i < ${TUI_WAIT_S:-10} * 20; i++)); do
        [ -s "$TMP/$1.exit" ] && break
        sleep 0.05
    done
    cat "$TMP/$1.exit" 2>/dev/null || echo "no exit"
}

# usub STRING OFFSET [LEN]: a substring counted in characters, not bytes,
# whatever the caller's locale.
usub() {
    local LC_ALL=C.UTF-8
    if [ $# -ge 3 ]; then printf '%s' "${1:$2:$3}"; else printf '%s' "${1:$2}"; fi
}

# tui_kill_all: end the tmux server and wait until it is gone, so that the
# next file's first session does not land on a server still shutting down.
tui_kill_all() {
    local i
    tmx kill-server 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        tmx list-sessions >/dev/null 2>&1 || return 0
        sleep 0.02
    done
}
