#!/usr/bin/env bash
# bench_profile.sh BINARY SIMLIB SCENARIO_DIR: the profile mode's own cost
# at its default 50 ms interval, from the kernel's per-thread CPU time
# (/proc/PID/task/*/schedstat) over 4 s of a job that does nothing
# (sleep), median of 3 runs: CPU per sample and % of one core.
set -u
bin=$1 lib=$2 scn=$3
cpu_ns() { local t=0 a; for f in /proc/"$1"/task/*/schedstat; do read -r a _ <"$f" && t=$((t + a)); done; echo "$t"; }
for sc in a100-sxm4-80gb dgx-a100-8x7; do
    res=()
    for run in 1 2 3; do
        MIGMON_SIM_SCENARIO="$scn/$sc.ini" "$bin" profile --nvml-path "$lib" -o /dev/null -- sleep 6 &
        pid=$!
        sleep 1
        c1=$(cpu_ns "$pid")
        sleep 4
        c2=$(cpu_ns "$pid")
        wait "$pid"
        res+=("$(( (c2 - c1) / 80 / 1000 ))")
    done
    med=$(printf '%s\n' "${res[@]}" | sort -n | sed -n 2p)
    awk -v s="$sc" -v m="$med" -v r="${res[*]}" 'BEGIN { printf "profile %-16s CPU per 50 ms sample: median %d us (%s); %.2f %% of one core\n", s, m, r, m / 50000 * 100 }'
done
