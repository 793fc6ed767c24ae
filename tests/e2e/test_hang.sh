# shellcheck shell=bash
# Driver calls that never return (hang-power.ini, hang-power-late.ini,
# hang-init.ini) and a driver that appears while the monitor runs. A stuck
# call never holds the front end: --once --timeout prints what it has and
# exits 3; the interactive monitor keeps the healthy GPU updating, names the
# call a GPU is stuck in, answers keys, and ends on q, Ctrl-C, SIGTERM and
# SIGHUP within 1 s with the terminal restored, even while a call (nvmlInit
# included) is stuck for good.
if ! command -v tmux >/dev/null; then
    bad "tmux is required for the screen tests (scripts/deps.sh installs it)"
    return 0
fi
. "$MIGMON_SRC/tests/e2e/tui_lib.sh"
# A server of our own: the previous file's kill-server may still be ending.
TUI_SOCK="migmon-test-hang-$$"
SCN="$MIGMON_SRC/sim/scenarios"
SIMARGS=(--nvml-path "$MIGMON_SIM_LIB")

now_ns() { date +%s%N; }
ms_since() { echo $((($(now_ns) - $1) / 1000000)); }
# within DESC MS LIMIT_MS
within() {
    if [ "$2" -le "$3" ]; then ok; else bad "$1: took $2 ms (limit $3 ms)"; fi
}
# PIDs of the monitor (and anything it started) of tmux session NAME: their
# environment names the session's frames file.
hang_procs() {
    local d
    for d in /proc/[0-9]*; do
        grep -qsa "MIGMON_TEST_FRAMES=$TMP/$1.frames" "$d/environ" && echo "${d#/proc/}"
    done
}
# hang_gone DESC NAME PID: the monitor PID is gone and nothing of the session
# is left (waits up to 1 s for the process table to settle).
hang_gone() {
    local i left
    for ((i = 0; i < 20; i++)); do
        left=$(hang_procs "$2")
        [ -z "$left" ] && ! kill -0 "$3" 2>/dev/null && break
        sleep 0.05
    done
    if kill -0 "$3" 2>/dev/null; then
        bad "$1: monitor PID $3 still runs: $(tr '\0' ' ' </proc/"$3"/cmdline 2>/dev/null)"
        kill -KILL "$3" 2>/dev/null
    else
        ok
    fi
    eq "$1: no process of the session left" "$left" ""
}
# hang_exit NAME: wait up to 5 s for the exit file, echo the status.
hang_exit() {
    local i
    for ((i = 0; i < 500; i++)); do
        [ -s "$TMP/$1.exit" ] && break
        sleep 0.01
    done
    cat "$TMP/$1.exit" 2>/dev/null || echo "no exit"
}
# hang_signal NAME SIG: send SIG to the monitor, wait, echo the exit status.
hang_signal() {
    kill -"$2" "$(tui_pid "$1")"
    hang_exit "$1"
}
# hang_ctrl NAME KEY: a key through tmux (C-c, q), wait, echo the exit status.
hang_ctrl() {
    tmx send-keys -t "$1" "$2"
    hang_exit "$1"
}
# (the patterns' bracket expressions hold multibyte characters: a UTF-8
# locale, whatever the caller's)
row_of() { # row_of SCREEN N: GPU N's row of the device list (name, gauges, figures)
    printf '%s\n' "$1" | LC_ALL=C.UTF-8 grep -o "GPU $2 A100-SXM4-80GB[^│]*"
}
util_of() { # util_of ROW: the utilisation figure, NN% (with a trailing * when carried) or N/A
    printf '%s\n' "$1" | sed 's/^GPU [0-9]* A100-SXM4-80GB//' | grep -oE '([0-9]+%\*?|N/A)' | head -1
}

# === 1. --once --timeout =====================================================
t0=$(now_ns)
out=$(mon hang-power.ini --once --format json --timeout 2 2>"$TMP/hang-once.err")
rc=$?
within "--once --timeout 2 with GPU 1 hung returns in time" "$(ms_since "$t0")" 3000
eq "--once with a hung GPU: exit status 3" "$rc" 3
if printf '%s' "$out" | jq -e . >/dev/null 2>&1; then ok; else bad "--once hung: not valid JSON: $(printf '%s' "$out" | head -c 300)"; fi
jeq "--once hung: partial" "$out" '.partial' 'true'
jeq "--once hung: two GPUs, both named" "$out" '[.devices[] | [.index, .name]]' \
    '[[0,"NVIDIA A100-SXM4-80GB"],[1,"NVIDIA A100-SXM4-80GB"]]'
jeq "--once hung: GPU 0 power read directly" "$out" '.devices[0].metrics.power_w | [.source, (.value | type)]' \
    '["direct","number"]'
jeq "--once hung: GPU 0 util read directly" "$out" '.devices[0].metrics.gpu_util_pct | [.source, (.value | type)]' \
    '["direct","number"]'
jeq "--once hung: GPU 0 not stalled, no stalled metric" "$out" \
    '[.devices[0].stall, ([.devices[0].metrics[] | select((.reason // "") | test("stalled"))] | length)]' '[null,0]'
jeq "--once hung: GPU 1 power null" "$out" '.devices[1].metrics.power_w | [.value, .source]' '[null,"none"]'
jeq "--once hung: GPU 1 power reason names the call" "$out" \
    '.devices[1].metrics.power_w.reason | test("^stalled [0-9]+ s in nvmlDeviceGetPowerUsage$")' 'true'
jeq "--once hung: GPU 1 stall names the call" "$out" '.devices[1].stall | contains("nvmlDeviceGetPowerUsage")' 'true'
jeq "--once hung: GPU 1 keeps its UUID" "$out" '.devices[1].uuid' '"GPU-0b0b0b0b-5555-4666-8777-888888888888"'
contains "--once hung: stderr says the snapshot is partial" "$(cat "$TMP/hang-once.err")" "partial snapshot"

t0=$(now_ns)
out=$(mon hang-power.ini --once --timeout 1 2>/dev/null)
rc=$?
within "--once --timeout 1 (table) returns in time" "$(ms_since "$t0")" 2000
eq "--once table with a hung GPU: exit status 3" "$rc" 3
contains "table: GPU 1 row is N/A" "$(printf '%s\n' "$out" | grep -E '^1 +NVIDIA')" "N/A"
# (1 s; 2 s where a slow machine or a sanitizer took the tick past the second)
grep -qE 'stalled [12] s in nvmlDeviceGetPowerUsage' <<<"$out" && ok ||
    bad "table: a line says GPU 1 is stalled in the call: not in: $(head -c 1200 <<<"$out")"
contains "table: GPU 0 has figures" "$(printf '%s\n' "$out" | grep -E '^0 +NVIDIA')" "/400W"

out=$(mon a100-sxm4-80gb.ini --once --format json)
rc=$?
eq "--once on a healthy GPU: exit status 0" "$rc" 0
jeq "--once on a healthy GPU: not partial" "$out" '.partial' 'false'

for a in 0 abc; do
    err=$(mon a100-sxm4-80gb.ini --once --timeout "$a" 2>&1 >/dev/null)
    rc=$?
    eq "--timeout $a: exit status 2" "$rc" 2
    contains "--timeout $a: message" "$err" "--timeout $a: expected seconds"
done
err=$(mon a100-sxm4-80gb.ini --timeout 5 2>&1 >/dev/null)
rc=$?
eq "--timeout without --once: exit status 2" "$rc" 2
contains "--timeout without --once: message" "$err" "--timeout needs --once"

# === 2. the TUI with GPU 1 stuck in nvmlDeviceGetPowerUsage ==================
# hang_stall NAME: select GPU 1, tick until it is STALLED with the call named;
# sets stall_seen, util_changed (GPU 0's GPU:NN% changed between ticks).
hang_stall() {
    local i scr u prev=
    stall_seen=0 util_changed=0
    tui_keys "$1" End
    for ((i = 0; i < 25; i++)); do
        tui_tick "$1"
        scr=$(tui_capture "$1")
        u=$(util_of "$(row_of "$scr" 0)")
        [ -n "$prev" ] && [ -n "$u" ] && [ "$u" != "$prev" ] && util_changed=1
        prev=$u
        case "$(row_of "$scr" 1)" in *STALLED*)
            case "$scr" in *"stalled "[0-9]*" s in nvmlDeviceGetPowerUsage"*) stall_seen=1 ;; esac
            ;;
        esac
        [ $stall_seen = 1 ] && [ $util_changed = 1 ] && break
        sleep 0.1
    done
}

for how in q TERM HUP; do
    n=hp$how
    P=$(tui_proc "$n" two-core)
    if tui_start "$n" 120 40 1 MIGMON_SIM_SCENARIO="$SCN/hang-power.ini" -- "${SIMARGS[@]}" --proc-root "$P" -i 200; then
        ok
    else
        bad "hang-power ($how): no first frame"
        continue
    fi
    pid=$(tui_pid "$n")
    hang_stall "$n"
    scr=$(tui_capture "$n")
    eq "hang-power ($how): GPU 1 STALLED, the call named" "$stall_seen" 1
    [ $stall_seen = 1 ] || printf '%s\n' "$scr" | head -20 >&2
    eq "hang-power ($how): GPU 1 values are N/A" "$(util_of "$(row_of "$scr" 1)")" "N/A"
    if [ "$how" = q ]; then
        eq "hang-power: GPU 0's util keeps changing" "$util_changed" 1
        contains "hang-power: GPU 1 selected" "$(printf '%s\n' "$scr" | tail -1)" "[2/2]"
        t0=$(now_ns)
        tui_keys "$n" '?'
        within "hang-power: ? opens the help while GPU 1 hangs" "$(ms_since "$t0")" 200
        contains "hang-power: help overlay" "$(tui_capture "$n")" "Help (any key closes)"
        tui_keys "$n" x
        t0=$(now_ns)
        st=$(tui_quit "$n" q)
        within "hang-power: q ends the monitor" "$(ms_since "$t0")" 1000
        eq "hang-power: q exit status" "$st" 0
    else
        t0=$(now_ns)
        st=$(hang_signal "$n" "$how")
        within "hang-power: SIG$how ends the monitor" "$(ms_since "$t0")" 1000
        eq "hang-power: SIG$how exit status" "$st" 0
    fi
    eq "hang-power ($how): alternate screen left" "$(tmx display -p -t "$n" '#{alternate_on}')" 0
    hang_gone "hang-power ($how)" "$n" "$pid"
    tmx kill-session -t "$n" 2>/dev/null
done

# === 3. nvmlInit never returns ===============================================
P=$(tui_proc hinit two-core)
t0=$(now_ns)
if tui_start hinit 120 40 1 MIGMON_SIM_SCENARIO="$SCN/hang-init.ini" -- "${SIMARGS[@]}" --proc-root "$P" -i 200; then
    ok
    echo "     (hang-init: first frame after $(ms_since "$t0") ms)"
    pid=$(tui_pid hinit)
    tui_tick hinit
    scr=$(tui_capture hinit)
    contains "hang-init: the screen says NVML is stuck in nvmlInit" "$scr" "starting NVML: stalled"
    contains "hang-init: the call is named" "$scr" "in nvmlInit"
    t0=$(now_ns)
    st=$(hang_ctrl hinit C-c)
    within "hang-init: Ctrl-C ends the monitor" "$(ms_since "$t0")" 1000
    eq "hang-init: Ctrl-C exit status" "$st" 0
    eq "hang-init: alternate screen left" "$(tmx display -p -t hinit '#{alternate_on}')" 0
    hang_gone "hang-init" hinit "$pid"
else
    bad "hang-init: no first frame after $(ms_since "$t0") ms: $(tui_capture hinit | head -5)"
fi
tmx kill-session -t hinit 2>/dev/null

# The same without test mode (the monitor's own timing, no MIGMON_TEST_*):
# the screen comes at once and q ends it while nvmlInit still hangs.
cmd=$(printf '%q ' env -i PATH="$PATH" HOME="$TMP" TERM=tmux-256color LANG=C.UTF-8 \
    MIGMON_SIM_SCENARIO="$SCN/hang-init.ini" "$MIGMON_BIN" "${SIMARGS[@]}" --proc-root "$P")
rm -f "$TMP/hlive.exit"
tmx new-session -d -s hlive -x 120 -y 40 "$cmd; echo \$? > $TMP/hlive.exit; sleep 600"
t0=$(now_ns)
seen=0
for ((i = 0; i < 60; i++)); do
    case "$(tui_capture hlive)" in *"in nvmlInit"*) seen=1 && break ;; esac
    sleep 0.05
done
eq "hang-init live: the screen names nvmlInit" "$seen" 1
within "hang-init live: the first screen comes soon" "$(ms_since "$t0")" 2000
live_pid=$(pgrep -P "$(tmx display -p -t hlive '#{pane_pid}')" -x mig-gpu-mon | head -1)
t0=$(now_ns)
st=$(hang_ctrl hlive q)
within "hang-init live: q ends the monitor" "$(ms_since "$t0")" 1000
eq "hang-init live: q exit status" "$st" 0
eq "hang-init live: alternate screen left" "$(tmx display -p -t hlive '#{alternate_on}')" 0
if [ -n "$live_pid" ]; then
    for ((i = 0; i < 20; i++)); do kill -0 "$live_pid" 2>/dev/null || break; sleep 0.05; done
    if kill -0 "$live_pid" 2>/dev/null; then bad "hang-init live: PID $live_pid still runs"; kill -KILL "$live_pid"; else ok; fi
else
    bad "hang-init live: could not find the monitor's PID"
fi
tmx kill-session -t hlive 2>/dev/null

t0=$(now_ns)
out=$(mon hang-init.ini --once --format json --timeout 1 2>/dev/null)
rc=$?
within "hang-init --once --timeout 1 returns in time" "$(ms_since "$t0")" 2000
eq "hang-init --once: exit status 3" "$rc" 3
jeq "hang-init --once: partial, no devices" "$out" '[.partial, .devices]' '[true,[]]'
jeq "hang-init --once: gpu_error names nvmlInit" "$out" \
    '.gpu_error | test("^starting NVML: stalled [0-9]+ s in nvmlInit")' 'true'
jeq "hang-init --once: the host part is there" "$out" '.host.cpu.online > 0' 'true'

# === 4. the driver appears while the monitor runs ============================
late="$TMP/hotplug.ini"
rm -f "$late"
P=$(tui_proc hot two-core)
if tui_start hot 120 40 1 MIGMON_SIM_SCENARIO="$late" -- "${SIMARGS[@]}" --proc-root "$P" -i 200; then
    ok
    pid=$(tui_pid hot)
    scr=$(tui_capture hot)
    contains "hot-plug: waiting for the driver" "$scr" "waiting for the NVIDIA driver (next try in"
    contains "hot-plug: the reason" "$scr" "NVML_ERROR_DRIVER_NOT_LOADED"
    cp "$SCN/a100-sxm4-80gb.ini" "$late"
    t0=$(now_ns)
    seen=0
    for ((i = 0; i < 50; i++)); do
        tui_tick hot
        case "$(tui_capture hot)" in *"GPU 0 A100-SXM4-80GB"*) seen=1 && break ;; esac
        sleep 0.2
    done
    eq "hot-plug: the GPU appears by itself" "$seen" 1
    within "hot-plug: ... within 10 s" "$(ms_since "$t0")" 10000
    tui_tick hot
    scr=$(tui_capture hot)
    contains "hot-plug: the GPU has figures" "$(util_of "$(row_of "$scr" 0)")" "%"
    case "$scr" in *"waiting for the NVIDIA driver"*) bad "hot-plug: still says waiting" ;; *) ok ;; esac
    eq "hot-plug: q exit status" "$(tui_quit hot q)" 0
    eq "hot-plug: alternate screen left" "$(tmx display -p -t hot '#{alternate_on}')" 0
    hang_gone "hot-plug" hot "$pid"
else
    bad "hot-plug: no first frame"
fi
tmx kill-session -t hot 2>/dev/null

# === 5. the hang begins at the 6th sample: values, carried, then N/A =========
P=$(tui_proc late two-core)
if tui_start late 120 40 1 MIGMON_SIM_SCENARIO="$SCN/hang-power-late.ini" MIGMON_SIM_TIME=0+1 -- \
    "${SIMARGS[@]}" --proc-root "$P" -i 200; then
    ok
    pid=$(tui_pid late)
    tui_keys late End
    first_fresh=0 first_carried=0 first_na=0 last_fresh='' carried_val='' carried_detail='' na_reason=0 g0_ok=1
    for ((i = 1; i <= 25; i++)); do
        tui_tick late
        scr=$(tui_capture late)
        u=$(util_of "$(row_of "$scr" 1)")
        case "$u" in
        N/A) [ $first_na = 0 ] && first_na=$i
            case "$scr" in *"stalled "[0-9]*" s in nvmlDeviceGetPowerUsage"*) na_reason=1 ;; esac ;;
        *'*') [ $first_carried = 0 ] && first_carried=$i && carried_val=$u
            carried_detail=$(printf '%s\n' "$scr" | grep -o 'GPU [0-9]*%\*' | head -1) ;;
        *%) [ $first_fresh = 0 ] && first_fresh=$i
            last_fresh=$u ;;
        esac
        case "$(util_of "$(row_of "$scr" 0)")" in *'*' | N/A | '') g0_ok=0 ;; esac
        [ $first_na -gt 0 ] && [ $na_reason = 1 ] && break
        sleep 0.1
    done
    eq "late hang: GPU 1 shows read values first" "$first_fresh" 1
    if [ $first_carried -gt $first_fresh ] && [ $first_na -gt $first_carried ]; then ok; else
        bad "late hang: expected values, then carried, then N/A; first at ticks $first_fresh / $first_carried / $first_na"
    fi
    eq "late hang: the carried figure is the last one read" "$carried_val" "$last_fresh*"
    contains "late hang: the detail marks carried values" "$carried_detail" "*"
    eq "late hang: N/A names the stuck call" "$na_reason" 1
    contains "late hang: GPU 1 STALLED" "$(row_of "$(tui_capture late)" 1)" "STALLED"
    eq "late hang: GPU 0 kept fresh figures throughout" "$g0_ok" 1
    eq "late hang: q exit status" "$(tui_quit late q)" 0
    eq "late hang: alternate screen left" "$(tmx display -p -t late '#{alternate_on}')" 0
    hang_gone "late hang" late "$pid"
else
    bad "late hang: no first frame"
fi
tui_kill_all

# === 6. GPUs sampled in turn by one thread: the first one hangs =============
# While the driver is quick, the engine's sampling thread samples the GPUs
# one after the other. When it hangs in GPU 0, the watchdog gives the
# sampling to another thread half way to the tick's deadline, which hands
# GPU 1 (not reached yet) to its own thread: it is never late, not even on
# the tick the hang began.
sed 's/^target = gpu\.1$/target = gpu.0/' "$SCN/hang-power-late.ini" >"$TMP/hang-first.ini"
MIGMON_SIM_TIME=0+1 MIGMON_SIM_SCENARIO="$TMP/hang-first.ini" "$MIGMON_BIN" record "${SIMARGS[@]}" \
    --gpm off -i 200 -n 9 --force -o "$TMP/hang-first.jsonl" 2>"$TMP/hang-first.err" </dev/null
eq "hang in the first GPU: record exit status" "$?" 0
g0=$(jq -r '.devices[0].metrics.power_w.source' "$TMP/hang-first.jsonl" | tr '\n' ' ')
g1=$(jq -r '.devices[1].metrics.power_w.source' "$TMP/hang-first.jsonl" | tr '\n' ' ')
case "$g0" in
"direct "*"carried "*"none ") ok ;;
*) bad "hang in the first GPU: GPU 0 should go direct, carried, none; got $g0" ;;
esac
eq "hang in the first GPU: GPU 1 fresh on every tick" "$g1" \
    "direct direct direct direct direct direct direct direct direct "

# === 7. The GPU count hangs ================================================
# While the driver is quick the sampling thread counts the GPUs at the start
# of each tick, without waking the system worker. When that count never
# returns, the watchdog gives the sampling to another thread half way to the
# deadline; the GPUs go to their own threads, and every later tick samples
# them there from the last enumeration (the system worker, asked next, hangs
# in the count too).
sed '/^\[fault\.power-hangs\]/,$d' "$SCN/hang-power-late.ini" >"$TMP/hang-count.ini"
printf '[fault.count-hangs]\ntarget = system\nfunction = nvmlDeviceGetCount_v2\nhang = true\nfrom = 4\n' \
    >>"$TMP/hang-count.ini"
t0=$(now_ns)
MIGMON_SIM_TIME=0+1 MIGMON_SIM_SCENARIO="$TMP/hang-count.ini" "$MIGMON_BIN" record "${SIMARGS[@]}" \
    --gpm off -i 200 -n 9 --force -o "$TMP/hang-count.jsonl" 2>"$TMP/hang-count.err" </dev/null
eq "the count hangs: record exit status" "$?" 0
within "the count hangs: 9 samples at 200 ms and the exit" "$(ms_since "$t0")" 4000
eq "the count hangs: 9 samples" "$(wc -l <"$TMP/hang-count.jsonl")" 9
for g in 0 1; do
    eq "the count hangs: GPU $g fresh on every tick" \
        "$(jq -r ".devices[$g].metrics.power_w.source" "$TMP/hang-count.jsonl" | tr '\n' ' ')" \
        "direct direct direct direct direct direct direct direct direct "
done
eq "the count hangs: ticks after it are partial" \
    "$(jq -r '.partial' "$TMP/hang-count.jsonl" | tr '\n' ' ')" \
    "false false false false true true true true true "

# === 8. A slow first enumeration ===========================================
# Before the first enumeration there is nothing to fall back on: the tick
# waits for it until its deadline, not only half way (two handles at
# 450 ms each: past half of what --timeout 2 leaves the tick, within it).
sed '/^\[fault\.power-hangs\]/,$d' "$SCN/hang-power-late.ini" >"$TMP/slow-enum.ini"
printf '[fault.slow-handles]\nfunction = nvmlDeviceGetHandleByIndex_v2\ndelay_ms = 450\n' \
    >>"$TMP/slow-enum.ini"
out=$(MIGMON_SIM_SCENARIO="$TMP/slow-enum.ini" "$MIGMON_BIN" --once --gpm off --format json \
    --timeout 2 "${SIMARGS[@]}" 2>/dev/null)
eq "slow first enumeration: both GPUs listed" "$(jq -c '[.devices[].uuid]' <<<"$out")" \
    '["GPU-0a0a0a0a-1111-4222-8333-444444444444","GPU-0b0b0b0b-5555-4666-8777-888888888888"]'
eq "slow first enumeration: not partial" "$(jq -r '.partial' <<<"$out")" false
