#!/usr/bin/env bash
# The interactive monitor under valgrind (make valgrind-check): the DGX
# scenario in a detached tmux, keys, a resize, a few samples, then q. Fails
# on any valgrind error or definite leak (exit status 99) or a hang.
set -uo pipefail
: "${MIGMON_BIN:?}" "${MIGMON_SIM_LIB:?}" "${MIGMON_SRC:?}"
TMP=$(mktemp -d /tmp/migmon-vg.XXXXXX)
trap 'tui_kill_all; [ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"' EXIT
start=$(date +%s)
export TMP
export TUI_WAIT_S=120
FAIL=0
bad() { FAIL=1; echo "FAIL $*" >&2; }
ok() { :; }
. "$MIGMON_SRC/tests/e2e/tui_lib.sh"
wrapper="$TMP/vg-mig-gpu-mon"
cat >"$wrapper" <<EOW
#!/bin/sh
exec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
    --log-file="$TMP/valgrind.log" "$MIGMON_BIN" "\$@"
EOW
chmod +x "$wrapper"
REAL_BIN=$MIGMON_BIN
MIGMON_BIN=$wrapper
P=$(tui_proc vg c64-offline)
tui_start vg 200 60 3 MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/dgx-a100-8x7.ini" -- \
    --nvml-path "$MIGMON_SIM_LIB" --proc-root "$P" || bad "no first frame under valgrind"
tui_cpu_step vg
tui_keys vg End Tab '?' x p s Enter x Escape ' ' ' '
n=$(tui_frames vg)
tmx resize-window -t vg -x 60 -y 15
tui_wait vg $((n + 1))
tui_tick vg
tui_tick vg
status=$(tui_quit vg q)
MIGMON_BIN=$REAL_BIN
if [ "$status" != 0 ]; then
    bad "TUI under valgrind exited with '$status'"
    cat "$TMP/valgrind.log" >&2
else
    echo "valgrind: the interactive monitor is clean ($(($(date +%s) - start)) s)"
fi
exit $FAIL
