#!/usr/bin/env bash
# Run every tests/e2e/test_*.sh against the built binary and simulator,
# E2E_JOBS files at a time (default: one a CPU, at least two; most of a
# file's time is spent waiting for the monitor's ticks, but twice the CPUs
# on two cores slowed a monitor's start past the screen tests' 10 s wait
# for a frame). Each file runs
# in its own process (run_file.sh); its output is printed whole when it
# ends, then "ok NAME (Ns)" or "FAIL NAME (Ns)", and at the end
# "e2e: N passed, N failed" over every assertion.
# Needs MIGMON_BIN, MIGMON_SIM_LIB, MIGMON_SIM_DIR, MIGMON_SRC (set by make).
# E2E_ONLY="test_tui test_hang": only these files.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${MIGMON_BIN:?}" "${MIGMON_SIM_LIB:?}" "${MIGMON_SIM_DIR:?}" "${MIGMON_SRC:?}"
command -v jq >/dev/null || { echo "e2e: jq is required" >&2; exit 1; }
cpus=$(nproc 2>/dev/null || echo 2)
jobs=${E2E_JOBS:-$((cpus > 2 ? cpus : 2))}
case "$jobs" in '' | *[!0-9]* | 0) echo "e2e: E2E_JOBS=$jobs: expected a number of files at a time, 1 or more" >&2; exit 1 ;; esac
OUT=$(mktemp -d /tmp/migmon-e2e-out.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

# The files that take longest start first, so that the run ends with short
# ones (the order is only a schedule: every file is self-contained).
first=" test_serve_limits test_fleet test_record test_hang test_tui test_prom test_alerts
 test_fleet_scale test_replay test_tui_layout test_kubelet test_profile "
# The files that bound a CPU-heavy step's wall time (test_fleet: --once
# against a Prometheus flooding 31 MB answers ends within its --timeout;
# test_serve_limits: scrapes answered while 1,000 connections flood)
# run alone, after the others: sharing two cores would measure the load.
alone=" test_fleet test_serve_limits "
files=() solo=()
for n in $first; do
    case "$alone" in *" $n "*) continue ;; esac
    [ -f "$here/$n.sh" ] && files+=("$here/$n.sh")
done
for t in "$here"/test_*.sh; do
    case "$first$alone" in *" $(basename "$t" .sh) "*) continue ;; esac
    files+=("$t")
done
for n in $alone; do [ -f "$here/$n.sh" ] && solo+=("$here/$n.sh"); done

pass=0 fail=0 failed=()
declare -A started name_of
# finish PID: print a file's output and add up its counts
finish() {
    local pid=$1 n=${name_of[$1]} log=$OUT/${name_of[$1]}.log last p f took
    took=$(($(date +%s) - ${started[$pid]}))
    last=$(tail -n 1 "$log" 2>/dev/null)
    sed '$d' "$log"
    case "$last" in
    "e2e-file $n "*)
        read -r _ _ p f <<<"$last"
        pass=$((pass + p)) fail=$((fail + f))
        ;;
    *)  # the file ended without its counts (it exited or was killed)
        [ -n "$last" ] && echo "$last"
        echo "FAIL [$n] the file ended early, without its counts"
        p=0 f=1 fail=$((fail + 1))
        ;;
    esac
    if [ "$f" -eq 0 ]; then echo "ok   $n (${took} s)"; else echo "FAIL $n (${took} s)"; failed+=("$n"); fi
    unset "started[$pid]" "name_of[$pid]"
}

running=0
# start T, after waiting while MAX files run
start() {
    local t=$1 max=$2 n
    n=$(basename "$t" .sh)
    if [ -n "${E2E_ONLY:-}" ]; then
        case " $E2E_ONLY " in *" $n "*) ;; *) return ;; esac
    fi
    drain "$max"
    "$here/run_file.sh" "$t" >"$OUT/$n.log" 2>&1 </dev/null &
    started[$!]=$(date +%s) name_of[$!]=$n
    running=$((running + 1))
}
# drain MAX: wait until fewer than MAX files run (0: none)
drain() {
    local done_pid
    while [ "$running" -gt 0 ] && [ "$running" -ge "${1:-1}" ]; do
        wait -n -p done_pid
        finish "$done_pid"
        running=$((running - 1))
    done
}
for t in "${files[@]}"; do start "$t" "$jobs"; done
drain 1
for t in "${solo[@]}"; do start "$t" 1; done
drain 1
[ "${#failed[@]}" -gt 0 ] && echo "e2e: failed files: ${failed[*]}"
echo "e2e: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
