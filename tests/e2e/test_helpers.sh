# shellcheck shell=bash
# What the helper processes cost while the driver is quick, and where GPM
# is sampled. A GPU whose driver the GPM helper proved (its memory-read
# canary passed after the first GPM round and ten rounds later) is sampled
# on the sampling thread with its other values, giving the helper's values;
# the helper leaves, and a steady tick wakes the sampler and the front end
# only. A driver that corrupts a GPM session never gets there; --gpm helper
# keeps GPM in the helper; a GPM call that hangs in the monitor's session is
# a stall named like any other, and one that is slow gives the GPU's GPM
# back to the helper. DCGM is watched at 1 Hz at most, so its helper wakes
# once a second.

SCN="$MIGMON_SRC/sim/scenarios"
DCGM_LIB="$MIGMON_SIM_DIR/libdcgm.so.4"
gpm_helpers() { pgrep_mine "$MIGMON_BIN --gpm-helper" | wc -l; }

# tree_wakes PID: voluntary context switches of every thread of PID and of
# the processes under it (each one is a thread that slept and was woken)
tree_wakes() {
    local pids p t n=0 v
    pids="$1 $(pgrep -P "$1" | tr '\n' ' ')"
    for p in $pids; do
        for t in /proc/"$p"/task/*; do
            v=$(awk '/^voluntary_ctxt_switches/ {print $2}' "$t/status" 2>/dev/null)
            n=$((n + ${v:-0}))
        done
    done
    echo "$n"
}

# rec_bg SCENARIO-FILE OUT LOG SECONDS [ARGS...]: record at -i 100 in the
# background at a fixed simulated time (so values do not depend on when a
# sample is taken), or with REAL=1 on the simulator's clock (seconds since
# its init: a fault's from); its PID in RECPID
rec_bg() {
    local scn=$1 out=$2 log=$3 secs=$4
    shift 4
    rm -f "$out"
    if [ "${REAL:-}" = 1 ]; then
        MIGMON_SIM_SCENARIO="$scn" "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" \
            record -i 100 --duration "$secs" -o "$out" --debug="$log" "$@" </dev/null 2>/dev/null &
    else
        MIGMON_SIM_SCENARIO="$scn" MIGMON_SIM_TIME=100 "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" \
            record -i 100 --duration "$secs" -o "$out" --debug="$log" "$@" </dev/null 2>/dev/null &
    fi
    RECPID=$!
}

# the MIG devices' GPM values in a record line, for comparing two runs
mig_gpm='[.devices[] | select(.kind=="mig") | .metrics | [.gpu_util_pct.value, .sm_util_pct.value, .mem_util_pct.value, .tensor_util_pct.value, .gpu_util_pct.source]]'

# --- a proved driver: GPM on the sampling thread, the helper gone. On the
# simulator's own clock: with it fixed, the simulated event wait naps in
# 10 ms slices (sim/api_events.c), where a driver's blocks ---
REAL=1 rec_bg "$SCN/h100-pcie-mig-535.ini" "$TMP/hs-real.jsonl" "$TMP/hs-real.log" 5
sleep 3
helpers_mid=$(gpm_helpers)
w0=$(tree_wakes "$RECPID")
t0=$(date +%s%N)
sleep 1.5
w1=$(tree_wakes "$RECPID")
t1=$(date +%s%N)
wait "$RECPID"
eq "proved: record exits 0" "$?" 0
eq "proved: no GPM helper once the monitor samples GPM itself" "$helpers_mid" 0
ticks=$(((t1 - t0) / 100000000))
per_tick=$(awk -v w=$((w1 - w0)) -v t="$ticks" 'BEGIN { printf "%.1f", w / t }')
echo "     (threads woken a tick, whole tree, h100 MIG at -i 100: $per_tick)"
# (ThreadSanitizer's runtime starts a thread of its own, woken every 100
# ms, in a process that starts threads: what that build checks is that
# nothing races)
[ "${MIGMON_SAN:-}" = thread ] || { awk -v p="$per_tick" 'BEGIN { exit !(p <= 2.6) }' && ok ||
    bad "proved: $per_tick threads woken a tick (the sampler, the front end, the events helper once a second: at most 2.6)"; }
log=$(cat "$TMP/hs-real.log")
contains "proved: the helper proved the GPU" "$log" "proved (canary after GPM calls)"
contains "proved: then the monitor sampled it" "$log" "sampled in the monitor's session"
[ "$(grep ' dev=' "$TMP/hs-real.log" | grep -c 'nvmlGpmMigSampleGet')" -gt 10 ] && ok ||
    bad "proved: the monitor's own session made no nvmlGpmMigSampleGet call"

# the same values either way, at a fixed simulated time
rec_bg "$SCN/h100-pcie-mig-535.ini" "$TMP/hs-in.jsonl" "$TMP/hs-in.log" 3
wait "$RECPID"
contains "proved, fixed time: sampled in the monitor's session" "$(cat "$TMP/hs-in.log")" \
    "sampled in the monitor's session"

rec_bg "$SCN/h100-pcie-mig-535.ini" "$TMP/hs-helper.jsonl" "$TMP/hs-helper.log" 4 --gpm helper
sleep 3
eq "--gpm helper: the helper still samples after its proof" "$(gpm_helpers)" 1
wait "$RECPID"
eq "--gpm helper: record exits 0" "$?" 0
eq "--gpm helper: the monitor's session makes no GPM call" "$(grep ' dev=' "$TMP/hs-helper.log" | grep -c 'nvmlGpm')" 0
in_vals=$(tail -1 "$TMP/hs-in.jsonl" | jq -c "$mig_gpm")
eq "proved: the sampling thread's values are the helper's" "$in_vals" "$(tail -1 "$TMP/hs-helper.jsonl" | jq -c "$mig_gpm")"
# h100-pcie-mig-535.ini at t = 100: slot 0 graphics 73.07, SM 65.07, DRAM 43.07 (test_gpm.sh)
jeq "proved: slot 0's values as the scenario says" "$(tail -1 "$TMP/hs-in.jsonl")" \
    '.devices[] | select(.kind=="mig" and .mig_index==0) | .metrics | [(.gpu_util_pct.value * 100 | round), (.sm_util_pct.value * 100 | round), (.mem_util_pct.value * 100 | round), .gpu_util_pct.source]' \
    '[7307,6507,4307,"gpm"]'
eq "proved: no helper left" "$(gpm_helpers)" 0

# --- the helper's canary across its re-walk of the MIG slots (every 5 s):
# on an unprivileged MIG GPU the parent's memory read answers NO_PERMISSION
# before GPM calls as after, and the canary is one of its MIG devices; the
# re-walk made it the parent again, and the next check called the driver
# faulty and switched GPM off ---
rec_bg "$SCN/h100-pcie-mig-535.ini" "$TMP/hs-rewalk.jsonl" "$TMP/hs-rewalk.log" 7 --gpm helper
wait "$RECPID"
eq "helper past its re-walk: record exits 0" "$?" 0
eq "helper past its re-walk: never called degraded" "$(grep -c 'gpm: GPU .* state 4' "$TMP/hs-rewalk.log")" 0
jeq "helper past its re-walk: GPM values to the end" "$(tail -1 "$TMP/hs-rewalk.jsonl")" \
    '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.source] | unique' '["gpm"]'

# --- a driver that corrupts a GPM session: never sampled in the monitor's ---
mon h100-pcie-mig-535-gpm-corrupts.ini --once --format json --gpm off >"$TMP/hs-ref.json"
for mode in auto on; do
    rec_bg "$SCN/h100-pcie-mig-535-gpm-corrupts.ini" "$TMP/hs-cor.jsonl" "$TMP/hs-cor-$mode.log" 3 --gpm "$mode"
    wait "$RECPID"
    eq "corrupts, $mode: the monitor's session makes no GPM call" \
        "$(grep ' dev=' "$TMP/hs-cor-$mode.log" | grep -c 'nvmlGpm')" 0
    eq "corrupts, $mode: never proved" "$(grep -c 'proved' "$TMP/hs-cor-$mode.log")" 0
    eq "corrupts, $mode: VRAM exact and direct to the end" \
        "$(tail -1 "$TMP/hs-cor.jsonl" | jq -c '[.devices[].metrics.memory_used_bytes | [.value, .source]]')" \
        "$(jq -c '[.devices[].metrics.memory_used_bytes | [.value, .source]]' "$TMP/hs-ref.json")"
done
jeq "corrupts, on: GPM values from the helper" "$(tail -1 "$TMP/hs-cor.jsonl")" \
    '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.source] | unique' '["gpm"]'

# --- a GPM call that hangs in the monitor's session (from t = 3 s, after
# the proof): a stall like any other, named; record ends on time ---
{ cat "$SCN/h100-pcie-mig-535.ini"; printf '\n[fault.gpm-late-hang]\nfunction = nvmlGpm*SampleGet\nhang = true\nfrom = 3\n'; } >"$TMP/gpm-late-hang.ini"
t0=$(date +%s%N)
REAL=1 rec_bg "$TMP/gpm-late-hang.ini" "$TMP/hs-hang.jsonl" "$TMP/hs-hang.log" 5
wait "$RECPID"
st=$?
ms=$((($(date +%s%N) - t0) / 1000000))
eq "late GPM hang: record exits 0" "$st" 0
[ "$ms" -lt 7000 ] && ok || bad "late GPM hang: record took $ms ms for 5 s"
contains "late GPM hang: it was the monitor's session" "$(cat "$TMP/hs-hang.log")" "sampled in the monitor's session"
jeq "late GPM hang: every device names the call it is stuck in" "$(tail -1 "$TMP/hs-hang.jsonl")" \
    '[.partial, ([.devices[].stall | test("^stalled [0-9]+ s in nvmlGpm(Mig)?SampleGet$")] | unique)]' '[true,[true]]'

# --- a GPM call there that comes back after 1.2 s: back to the helper ---
{ cat "$SCN/h100-pcie-mig-535.ini"; printf '\n[fault.gpm-slow]\nfunction = nvmlGpm*SampleGet\ndelay_ms = 1200\nafter_calls = 60\ncalls = 1\n'; } >"$TMP/gpm-slow.ini"
REAL=1 rec_bg "$TMP/gpm-slow.ini" "$TMP/hs-slow.jsonl" "$TMP/hs-slow.log" 6
wait "$RECPID"
eq "slow GPM call: record exits 0" "$?" 0
log=$(cat "$TMP/hs-slow.log")
contains "slow GPM call: the GPU goes back to the helper" "$log" "was slow; back to the helper"
jeq "slow GPM call: the GPU's values and the helper's GPM again" "$(tail -1 "$TMP/hs-slow.jsonl")" \
    '[.devices[] | [.metrics.temperature_c.source, .metrics.gpu_util_pct.source]] | unique' '[["direct","gpm"]]'
eq "slow GPM call: no helper left" "$(gpm_helpers)" 0

# --- samples the monitor's session takes are freed once, across a MIG
# change (as test_gpm.sh checks the helper's): GI 14 comes at 1.5 s, before
# the proof at -i 200 ---
rm -f "$TMP/hs-gpm.stats" "$TMP/hs-reconfig.jsonl"
MIGMON_SIM_SCENARIO="$MIGMON_SRC/tests/fixtures/scenarios/h200-gpm-reconfig.ini" MIGMON_SIM_GPM_STATS="$TMP/hs-gpm.stats" \
    "$MIGMON_BIN" record --nvml-path "$MIGMON_SIM_LIB" -i 200 -n 25 -o "$TMP/hs-reconfig.jsonl" \
    --debug="$TMP/hs-reconfig.log" </dev/null
eq "monitor's GPM across a MIG change: exit 0" "$?" 0
contains "monitor's GPM across a MIG change: sampled in its session" "$(cat "$TMP/hs-reconfig.log")" \
    "sampled in the monitor's session"
eq "monitor's GPM across a MIG change: GI 14 has GPM values at the end" \
    "$(tail -1 "$TMP/hs-reconfig.jsonl" | jq -c '[.devices[] | select(.kind=="mig") | [.gpu_instance_id, .metrics.gpu_util_pct.source]]')" \
    '[[1,"gpm"],[14,"gpm"]]'
# the whole GPU, GI 1, GI 14 and the two compute instances until the first
# answer says this driver cannot sample them: two samples each, the last
# frees at close, before NVML's session ends
eq "monitor's GPM across a MIG change: every sample freed once" "$(cat "$TMP/hs-gpm.stats")" \
    "live 0 allocs 10 frees 10 bad 0"

# --- DCGM at 1 Hz at most: its helper wakes once a second at -i 100 ---
MIGMON_SIM_SCENARIO="$SCN/dgx-a100-8x7.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" \
    --dcgm-lib "$DCGM_LIB" record -i 100 --duration 5 -o "$TMP/hs-dcgm.jsonl" </dev/null 2>/dev/null &
RECPID=$!
sleep 2
dpid=$(pgrep -P "$RECPID" -f -- '--dcgm-helper' | head -1)
if [ -n "$dpid" ]; then
    d0=$(tree_wakes "$dpid")
    sleep 2
    d1=$(tree_wakes "$dpid")
    echo "     (DCGM helper, dgx at -i 100: $((d1 - d0)) wake-ups in 2 s)"
    [ $((d1 - d0)) -le 6 ] && ok || bad "dcgm: its helper woke $((d1 - d0)) times in 2 s (at most 6)"
else
    bad "dcgm: no DCGM helper under the monitor"
fi
wait "$RECPID"
eq "dcgm: record exits 0" "$?" 0
last=$(tail -1 "$TMP/hs-dcgm.jsonl")
jeq "dcgm: watched every second at -i 100" "$last" '.dcgm' '"DCGM via nv-hostengine unix:/tmp/nv-hostengine, watched every 1 s"'
jeq "dcgm: MIG activity from DCGM to the end" "$last" \
    '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.source] | unique' '["dcgm"]'
# at 1 Hz, ten snapshots a second share DCGM's values (one simulated
# second a snapshot: the simulator's values move every snapshot);
# --dcgm-interval 100 watches at the interval, a new value each snapshot
dcgm_runs() {
    jq -r 'select(.devices) | .devices[1].metrics.sm_occupancy_pct | "\(.source) \(.value)"' "$1" |
        tail -20 | uniq | wc -l
}
MIGMON_SIM_SCENARIO="$SCN/dgx-a100-8x7.ini" MIGMON_SIM_TIME=0+1 "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" \
    --dcgm-lib "$DCGM_LIB" record -i 100 -n 30 -o "$TMP/hs-dcgm1.jsonl" </dev/null 2>/dev/null
MIGMON_SIM_SCENARIO="$SCN/dgx-a100-8x7.ini" MIGMON_SIM_TIME=0+1 "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" \
    --dcgm-lib "$DCGM_LIB" --dcgm-interval 100 record -i 100 -n 30 -o "$TMP/hs-dcgm10.jsonl" \
    </dev/null 2>/dev/null
n1=$(dcgm_runs "$TMP/hs-dcgm1.jsonl")
[ "$n1" -le 8 ] && ok || bad "dcgm at 1 Hz: the last 20 snapshots at -i 100 hold $n1 DCGM values (at most 8)"
# (a loaded machine may let a snapshot come before the helper's next read)
n10=$(dcgm_runs "$TMP/hs-dcgm10.jsonl")
[ "$n10" -ge 15 ] && ok ||
    bad "dcgm --dcgm-interval 100: the last 20 snapshots hold $n10 DCGM values (at least 15 expected)"
jeq "dcgm --dcgm-interval 100: says so" "$(tail -1 "$TMP/hs-dcgm10.jsonl")" '.dcgm' \
    '"DCGM via nv-hostengine unix:/tmp/nv-hostengine, watched every 0.1 s"'
