#!/usr/bin/env bash
# The fleet view (--prometheus) against a real Prometheus holding a
# synthetic fleet (tests/fleet/synth.py, backfilled with promtool;
# tests/fleet/promfleet.sh):
#
#   bench/bench_fleet_prom.sh BINARY [NODES...]        (default: 100 1250)
#
# Each size is a fleet of NODES nodes, a tenth of them DGX A100s (8 GPUs x
# 7 MIG instances, sim/scenarios/dgx-a100-8x7.ini), the others HGX H100s
# (8 GPUs, tests/fleet/hgx-h100-8x.ini), every node up, our exporter's
# series. BINARY talks to Prometheus through a counting proxy
# (tests/fleet/countproxy.py), which logs every answer's size, and is
# measured as a whole process:
#
#  (a) the interactive monitor in tmux at 200x60 with -i 2000: the time from
#      its start to the first screen whose header names every node, and
#      whether that screen's devices show values (rows with a utilisation
#      %) or N/A / STALLED;
#  (b) its CPU (utime + stime, /proc/PID/stat) over BENCH_ROUNDS rounds
#      after that screen, per round, and Prometheus' over the same rounds; a
#      round is counted by the proxy: the most frequent query text (asked
#      once a round) answered once more;
#  (c) its peak RSS (VmHWM) after those rounds;
#  (g) the device filter "idle" (asked of Prometheus): the time from Enter
#      to the header that counts what it matches;
#  (d) the time from q to its exit (a zombie: tmux reaps it later), q sent
#      while the proxy holds a query in flight (a round running);
#  (e) what Prometheus sends it per round: the bytes of the answers to
#      /api/v1/query as relayed (compressed as Prometheus sends them) and
#      decoded, and how many were cut off by the monitor (its bound on an
#      answer);
#  (f) --once --format json of the whole fleet (directly, no proxy): wall
#      time, peak RSS (wait4's rusage, tests/fleet/rusage.py), exit status,
#      nodes listed, GPUs with a utilisation value.
#
# It measures the binary it is given, whatever its queries: nothing here
# knows how many queries a round asks. BENCH_ROUNDS (default 10),
# BENCH_LABEL (the table's column; default the binary's --version) and
# BENCH_SYNTH (more options of synth.py, e.g. "--legacy 1250": every node's
# exporter without node summaries) may be set. Everything runs under a temporary directory, removed at the end;
# Prometheus, the proxy and tmux are stopped by PID / socket.
set -uo pipefail
BIN=${1:?usage: bench_fleet_prom.sh BINARY [NODES...]}
shift
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(100 1250)
ROUNDS=${BENCH_ROUNDS:-10}
INTERVAL_MS=2000
LABEL=${BENCH_LABEL:-$("$BIN" --version 2>/dev/null | head -1)}
HERE=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
for tool in prometheus promtool tmux curl jq "$PY"; do
    command -v "$tool" >/dev/null || { echo "bench_fleet_prom: $tool is required (scripts/deps.sh)" >&2; exit 1; }
done
# shellcheck source=tests/fleet/promfleet.sh
. "$HERE/tests/fleet/promfleet.sh"

# the nodes' pages from BINARY on the simulator built beside it (synth.py's
# default otherwise: build/ of this tree)
SYNTH=()
[ -e "$(dirname "$BIN")/sim/libnvidia-ml.so.1" ] && SYNTH=(--bin "$BIN" --sim-dir "$(dirname "$BIN")/sim")

WORK=$(mktemp -d /tmp/migmon-bench-fleet.XXXXXX)
SOCK="migmon-bench-fleet-$$"
PROXY_PID=
tmx() { LC_ALL=C.UTF-8 tmux -u -L "$SOCK" -f /dev/null "$@"; }
cleanup() {
    tmx kill-server 2>/dev/null
    [ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null && wait "$PROXY_PID" 2>/dev/null
    PROXY_PID=
    promfleet_stop
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now_ms() { echo $(($(date +%s%N) / 1000000)); }
# CPU ticks (utime + stime) of a process
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }
# exited PID: the process has ended (a zombie until tmux, its parent,
# reaps it, which can take a second or two after a large screen)
exited() {
    local st
    st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
    [ -z "$st" ] || [ "$st" = Z ]
}
hwm_kb() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
# The proxy's log (a JSON line per answer, written when it ends). A round
# is told by its marker: the /api/v1/query text asked most often so far,
# of those the one asked first (each round asks it once).
marker() {
    jq -rs '[.[] | select(.path == "/api/v1/query")] | group_by(.query) |
        map({q: .[0].query, n: length, s: (map(.start) | min)}) |
        sort_by(-.n, .s) | .[0].q // ""' "$WORK/proxy.log"
}
# marker_starts MARKER: the start times of its answers so far, in order
marker_starts() {
    jq -rs --arg m "$1" '[.[] | select(.path == "/api/v1/query" and .query == $m) | .start] |
        sort | .[]' "$WORK/proxy.log"
}
TICK=$(getconf CLK_TCK)

declare -A R
bench_size() {
    local n=$1 d t0 t1 pid i j k k0 m c0 c1 p0 p1 got hdr from to purl
    d="$WORK/n$n"
    mkdir -p "$d"
    echo "== $n nodes: generating and backfilling" >&2
    # shellcheck disable=SC2086 # BENCH_SYNTH: synth.py's options, split at spaces
    promfleet_build "$d" --nodes "$n" "${SYNTH[@]}" ${BENCH_SYNTH:-} || return 1
    R[$n.gen]=$PROMFLEET_GEN_S
    R[$n.fill]=$PROMFLEET_FILL_S
    R[$n.fillrss]=$(mib "$PROMFLEET_FILL_KB")
    R[$n.om]=$(awk -v b="$PROMFLEET_OM_BYTES" 'BEGIN { printf "%.0f", b / 1048576 }')
    R[$n.data]=$(mib "$PROMFLEET_DATA_KB")
    R[$n.shape]=$(jq -r '[.totals.gpus, .totals.migs] | "\(.[0]) GPUs, \(.[1]) MIG"' "$d/truth.json")
    # an hour of lookback: every series is live (no variant stopped any)
    promfleet_start "$d" 3600 || return 1
    R[$n.promrss0]=$(mib "$(hwm_kb "$PROMFLEET_PID")")
    R[$n.series]=$(promfleet_query 'count({__name__=~".+"})' | jq -r '.data.result[0].value[1]')

    rm -f "$d/port"
    "$PY" "$HERE/tests/fleet/countproxy.py" "$PROMFLEET_URL" "$d/port" "$WORK/proxy.log" &
    PROXY_PID=$!
    for ((i = 0; i < 100; i++)); do [ -s "$d/port" ] && break; sleep 0.05; done
    purl="http://127.0.0.1:$(cat "$d/port")"

    # (a) the first screen that names every node in its header
    echo "== $n nodes: the monitor" >&2
    t0=$(now_ms)
    tmx new-session -d -s mon -x 200 -y 60 "exec env -i PATH=/usr/bin:/bin HOME=$d \
        TERM=tmux-256color LANG=C.UTF-8 $(printf '%q' "$BIN") --no-config \
        --prometheus $purl -i $INTERVAL_MS"
    pid=$(tmx list-panes -t mon -F '#{pane_pid}')
    R[$n.first]=">600"
    for ((i = 0; i < 6000; i++)); do
        screen=$(tmx capture-pane -p -t mon 2>/dev/null)
        if grep -q " $n nodes" <<<"$(head -1 <<<"$screen")"; then
            t1=$(now_ms)
            R[$n.first]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1000 }')
            break
        fi
        exited "$pid" && break
        sleep 0.1
    done
    hdr=$(head -1 <<<"$screen" | sed -E 's/ +GPU health.*//; s/^ *mig-gpu-mon +[^ ]+ +//; s/ +[0-9]{4}-[0-9]{2}-.*//')
    R[$n.header]=$hdr
    printf '%s\n' "$screen" >"$d/first-screen.txt"
    # device rows of the list (the right half): with a % value, N/A, STALLED
    R[$n.rows]=$(PYTHONIOENCODING=utf-8 "$PY" -c 'import sys
for l in sys.stdin.buffer.read().decode("utf-8").splitlines(): print(l[100:])' <"$d/first-screen.txt" |
        grep -E '(GPU|MIG) [0-9]+ ' |
        awk '/STALL/ { s++; next } /N\/A/ { na++; next } /[0-9]+%/ { v++ } END {
            printf "%d with values, %d N/A, %d STALLED", v, na, s }')

    # (b) CPU per round, (e) bytes per round: from the end of a marker's
    # answer to the end of the one ROUNDS rounds later; the answers of the
    # rounds between (by their start)
    m=$(marker)
    k0=$(marker_starts "$m" | wc -l)
    c0='' got=0
    for ((i = 0; i < (ROUNDS + 1) * 600; i++)); do
        k=$(marker_starts "$m" | wc -l)
        if [ -z "$c0" ] && [ "$k" -gt "$k0" ]; then
            c0=$(cpu_ticks "$pid")
            p0=$(cpu_ticks "$PROMFLEET_PID")
            k0=$k
        elif [ -n "$c0" ] && [ "$k" -ge $((k0 + ROUNDS)) ]; then
            c1=$(cpu_ticks "$pid")
            p1=$(cpu_ticks "$PROMFLEET_PID")
            got=$ROUNDS
            break
        fi
        exited "$pid" && break
        sleep 0.05
    done
    R[$n.rounds]=$got
    if [ "$got" -gt 0 ] && [ -n "$c1" ]; then
        R[$n.cpu]=$(awk -v a="$c0" -v b="$c1" -v r="$got" -v t="$TICK" \
            'BEGIN { printf "%.0f", (b - a) * 1000 / t / r }')
        R[$n.promcpu]=$(awk -v a="$p0" -v b="$p1" -v r="$got" -v t="$TICK" \
            'BEGIN { printf "%.0f", (b - a) * 1000 / t / r }')
        from=$(marker_starts "$m" | sed -n "${k0}p")
        to=$(marker_starts "$m" | sed -n "$((k0 + ROUNDS))p")
        jq -rs --argjson r "$got" --argjson a "$from" --argjson b "$to" '
            [.[] | select(.path == "/api/v1/query" and .start >= $a and .start < $b)] |
            "\(length / $r) \((map(.wire) | add) / $r / 1048576) \((map(.body) | add) / $r / 1048576) \((map(select(.cut)) | length) / $r) \(($b - $a) / $r)"' \
            "$WORK/proxy.log" >"$d/bytes"
        read -r "R[$n.queries]" "R[$n.wire]" "R[$n.body]" "R[$n.cut]" "R[$n.period]" <"$d/bytes"
    fi
    # (c) peak RSS
    R[$n.rss]=$(mib "$(hwm_kb "$pid")")
    # (g) the device filter "idle", asked of Prometheus: from Enter to the
    # header that counts what it matches
    tmx send-keys -t mon / i d l e
    t0=$(now_ms)
    tmx send-keys -t mon Enter
    R[$n.filter]=">30"
    R[$n.fheader]=""
    for ((i = 0; i < 600; i++)); do
        hdr=$(tmx capture-pane -p -t mon 2>/dev/null | head -1)
        if grep -q "/idle: " <<<"$hdr"; then
            R[$n.filter]=$(awk -v a="$t0" -v b="$(now_ms)" 'BEGIN { printf "%.1f", (b - a) / 1000 }')
            R[$n.fheader]=$(sed -E 's/ +GPU health.*//; s/^ *mig-gpu-mon +[^ ]+ +//; s/ +[0-9]{4}-[0-9]{2}-.*//' <<<"$hdr")
            break
        fi
        exited "$pid" && break
        sleep 0.05
    done
    tmx send-keys -t mon Escape
    # (d) q while a query is in flight
    R[$n.quit]="no query in flight"
    for ((i = 0; i < 3000; i++)); do
        if [ "$(cat "$WORK/proxy.log.inflight" 2>/dev/null)" != 0 ]; then
            t0=$(now_ms)
            tmx send-keys -t mon q
            R[$n.quit]=">10000"
            for ((j = 0; j < 2000; j++)); do
                exited "$pid" && { R[$n.quit]=$(($(now_ms) - t0)); break; }
                sleep 0.005
            done
            break
        fi
        sleep 0.01
    done
    kill -KILL "$pid" 2>/dev/null
    tmx kill-server 2>/dev/null

    # (f) --once --format json, straight to Prometheus
    echo "== $n nodes: --once" >&2
    "$PY" "$HERE/tests/fleet/rusage.py" "$d/once.cost" "$BIN" --no-config \
        --prometheus "$PROMFLEET_URL" --once --format json >"$d/once.json" 2>"$d/once.err"
    read -r "R[$n.oncewall]" "R[$n.oncerss]" _ _ "R[$n.oncerc]" <"$d/once.cost"
    R[$n.oncerss]=$(mib "${R[$n.oncerss]}")
    R[$n.oncenodes]=$(jq '[.devices[].node] | unique | length' "$d/once.json" 2>/dev/null)
    R[$n.onceutil]=$(jq -r '[.devices[] | select(.kind == "gpu")] |
        "\(map(select(.metrics.gpu_util_pct.value != null)) | length) of \(length)"' "$d/once.json" 2>/dev/null)
    R[$n.promrss]=$(mib "$(hwm_kb "$PROMFLEET_PID")")

    kill "$PROXY_PID" 2>/dev/null
    wait "$PROXY_PID" 2>/dev/null
    PROXY_PID=
    promfleet_stop
    rm -rf "$d"
}

row() { printf '| %s |' "$1"; shift; printf ' %s |' "$@"; printf '\n'; }
for n in "${SIZES[@]}"; do
    bench_size "$n" || { echo "bench_fleet_prom: $n nodes: failed" >&2; exit 1; }
done
for n in "${SIZES[@]}"; do
    echo
    row "$n nodes (${R[$n.shape]}, ${R[$n.series]} series)" "$LABEL"
    row "---" "---"
    row "fleet: generate / backfill" "${R[$n.gen]} s / ${R[$n.fill]} s (text ${R[$n.om]} MiB, promtool peak RSS ${R[$n.fillrss]} MiB, blocks ${R[$n.data]} MiB)"
    row "Prometheus RSS: started / at the end" "${R[$n.promrss0]} / ${R[$n.promrss]} MiB"
    row "(a) TUI 200x60 -i 2000: first screen with every node" "${R[$n.first]} s"
    row "... its header" "${R[$n.header]}"
    row "... its device rows" "${R[$n.rows]}"
    row "(b) CPU per round (${R[$n.rounds]} rounds, one each $(printf '%.1f' "${R[$n.period]:-0}") s)" "${R[$n.cpu]:-?} ms"
    row "... Prometheus' CPU per round" "${R[$n.promcpu]:-?} ms"
    row "(c) peak RSS" "${R[$n.rss]} MiB"
    row "(g) the filter idle: Enter to its header" "${R[$n.filter]} s: ${R[$n.fheader]}"
    row "(d) q to exit, a round running" "${R[$n.quit]} ms"
    row "(e) per round: queries; bytes sent (compressed) / decoded; answers cut off" \
        "${R[$n.queries]:-?}; $(printf '%.2f' "${R[$n.wire]:-0}") / $(printf '%.1f' "${R[$n.body]:-0}") MiB; ${R[$n.cut]:-?}"
    row "(f) --once json: wall, peak RSS, exit status" "${R[$n.oncewall]} s, ${R[$n.oncerss]} MiB, ${R[$n.oncerc]}"
    row "... nodes listed; GPUs with a utilisation" "${R[$n.oncenodes]}; ${R[$n.onceutil]}"
done
