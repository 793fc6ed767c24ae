#!/usr/bin/env bash
# scripts/screenshot.sh [FILE]: the README's picture of the interactive
# monitor, made from a tmux capture of `--demo=h200-mig` at 120x40 on a
# fixed simulator clock and a fixture /proc (so the same build gives the
# same picture), clock masked. Writes FILE, or replaces the block between
# the screenshot markers in README.md. tests/e2e/test_readme.sh checks that
# README.md holds what this script makes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${MIGMON_BIN:-$root/build/mig-gpu-mon}
lib=${MIGMON_SIM_LIB:-$root/build/sim/libnvidia-ml.so.1}
command -v tmux >/dev/null || { echo "screenshot.sh: tmux is required" >&2; exit 1; }
tmp=$(mktemp -d /tmp/migmon-shot.XXXXXX)
sock="migmon-shot-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/proc/sys/kernel"
cp "$root"/tests/fixtures/proc/two-core/* "$tmp/proc/"
cp "$tmp/proc/stat.1" "$tmp/proc/stat"
echo gpu-node-07 >"$tmp/proc/sys/kernel/hostname"
frames() { cut -d' ' -f2 "$tmp/frames" 2>/dev/null || echo 0; }
wait_frame() {
    for ((i = 0; i < 200; i++)); do [ "$(frames)" -ge "$1" ] && return 0; sleep 0.05; done
    echo "screenshot.sh: no frame $1" >&2
    exit 1
}
cmd=$(printf '%q ' env -i PATH="$PATH" HOME="$tmp" TERM=tmux-256color LANG=C.UTF-8 \
    MIGMON_TEST_TICKS=3 MIGMON_TEST_FRAMES="$tmp/frames" MIGMON_SIM_TIME=1000+1 \
    MIGMON_SIM_SCENARIO="$root/sim/scenarios/h200-mig.ini" "$bin" --nvml-path "$lib" \
    --proc-root "$tmp/proc")
tmux -u -L "$sock" -f /dev/null new-session -d -s shot -x 120 -y 40 "$cmd; sleep 60"
wait_frame 1
pid=$(cut -d' ' -f3 "$tmp/frames")
n=$(frames)
cat "$tmp/proc/stat.2" >"$tmp/proc/stat"
kill -USR1 "$pid"
wait_frame $((n + 1))
shot=$(tmux -u -L "$sock" capture-pane -p -t shot |
    sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}/2026-11-30 12:00:00/')
kill -TERM "$pid" 2>/dev/null || true
if [ $# -ge 1 ]; then
    printf '%s\n' "$shot" >"$1"
    exit 0
fi
readme="$root/README.md"
awk -v shot="$shot" '
    /<!-- screenshot -->/ { print; print "```"; print shot; print "```"; skip = 1; next }
    /<!-- \/screenshot -->/ { skip = 0 }
    !skip { print }' "$readme" >"$tmp/README.md"
cp "$tmp/README.md" "$readme"
