#!/bin/sh
# bench_record.sh BIN BENCH_RECORD REC_SYNTH [SCENARIO...]
#
# What a recording costs, by scenario (bench/README.md, "bench_record"):
# each scenario is recorded by BIN (the recorder itself, --demo=SCENARIO: the
# simulated NVML and, where the scenario has one, its simulated DCGM) for
# 300 snapshots, one simulated second a tick (MIGMON_SIM_TIME=0+1, -i 100,
# DCGM watched each tick: --dcgm-interval 100), plain and of schema 1: the
# data of five minutes at -i 1000. BENCH_RECORD cost writes those
# snapshots again as each of plain, gzip and zstd, schema 1 and 2, and
# prints bytes a snapshot and a day, and the writer's CPU against the
# tick, both in a loop; BENCH_RECORD live then runs the
# recorder itself at -i 1000 for BENCH_RECORD_LIVE_S seconds (30; 0: not
# run) and gives its writing thread's CPU against the rest of its tree.
# Without SCENARIO: a100-sxm4-80gb, h100-pcie-mig-535 and dgx-a100-8x7;
# BENCH_RECORD_ALL=1: every scenario of sim/scenarios.
#
# Then a day: dgx-a100-8x7's snapshots over and over, a second apart, for
# 86,400 snapshots (REC_SYNTH), as zstd of schema 2, and the wall time of
# `BIN replay DAY --once --at T` at 25 places across it (the file in the
# page cache): the median and the slowest; and one of its snapshots
# compressed alone, what a frame of one snapshot would hold.
set -eu
bin=$1 bench=$2 synth=$3
shift 3
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ $# -eq 0 ]; then
    if [ "${BENCH_RECORD_ALL:-}" = 1 ]; then
        set -- $(cd "$src/sim/scenarios" && ls ./*.ini | sed 's|^\./||; s|\.ini$||')
    else
        set -- a100-sxm4-80gb h100-pcie-mig-535 dgx-a100-8x7
    fi
fi
for s in "$@"; do
    MIGMON_SIM_TIME=0+1 timeout 120 "$bin" --demo="$s" record -i 100 -n 300 \
        --dcgm-interval 100 -o "$tmp/$s.jsonl" </dev/null 2>"$tmp/$s.err" || true
    if [ ! -s "$tmp/$s.jsonl" ]; then
        echo "$s: no recording ($(head -c 200 "$tmp/$s.err"))"
        continue
    fi
    # (a scenario whose driver never answers, hang-init, gives no tick to
    # measure: bench_record waits for it; a call that overruns its tick
    # ends it with no figures)
    if timeout 300 "$bench" cost "$src/sim/scenarios/$s.ini" "$tmp/$s.jsonl" 3 >"$tmp/out" 2>&1; then
        sed "s|$src/sim/scenarios/||" "$tmp/out"
    else
        echo "$s: no figures ($(tail -1 "$tmp/out" | head -c 200))"
        continue
    fi
    if [ "${BENCH_RECORD_LIVE_S:-30}" != 0 ]; then
        TMPDIR=$tmp timeout 120 "$bench" live "$bin" "$s" "${BENCH_RECORD_LIVE_S:-30}" 2>&1 || true
    fi
done

echo "== replay --once --at across a day of dgx-a100-8x7 (zstd, schema 2)"
day=$tmp/day.jsonl.zst
if [ ! -s "$tmp/dgx-a100-8x7.jsonl" ]; then
    MIGMON_SIM_TIME=0+1 "$bin" --demo=dgx-a100-8x7 record -i 100 -n 300 \
        --dcgm-interval 100 -o "$tmp/dgx-a100-8x7.jsonl" </dev/null 2>/dev/null
fi
"$synth" "$tmp/dgx-a100-8x7.jsonl" "$day" 86400
"$bin" replay "$day" --once --at -0 >/dev/null # into the page cache
times=$tmp/times
: >"$times"
for m in 0 61 127 188 244 301 359 422 480 541 600 661 719 777 840 901 962 1020 1083 1141 \
    1199 1261 1320 1381 1439; do
    t0=$(date +%s%N)
    "$bin" replay "$day" --once --at "+${m}m" >/dev/null
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000000)) >>"$times"
done
printf '%s: %s bytes, 86400 snapshots; --at: median %s ms, slowest %s ms\n' "$(basename "$day")" \
    "$(wc -c <"$day")" "$(sort -n "$times" | sed -n 13p)" "$(sort -n "$times" | tail -1)"
# what a frame of one snapshot would hold: its last snapshot (DCGM's values
# in) compressed alone
printf 'one snapshot compressed alone (zstd -3): %s bytes\n' \
    "$(grep -v '^{"type":' "$tmp/dgx-a100-8x7.jsonl" | tail -1 | zstd -3 -c | wc -c)"
