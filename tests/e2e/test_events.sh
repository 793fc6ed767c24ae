# shellcheck shell=bash
# NVML health events through the events helper: an Xid 94 attributed to a
# MIG instance (h200-mig.ini), an Xid 79 of a whole GPU (dgx-a100-8x7.ini),
# a driver without the event API (events-none.ini) and a wait that never
# returns (events-hang.ini), which must hold neither --once nor the TUI.

# helpers: how many events helper processes of this binary are alive
ev_helpers() { pgrep_mine "$MIGMON_BIN --events-helper" | wc -l; }
now_ns() { date +%s%N; }
ms_since() { echo $((($(now_ns) - $1) / 1000000)); }
within() {
    if [ "$2" -le "$3" ]; then ok; else bad "$1: took $2 ms (limit $3 ms)"; fi
}

# --- an Xid 94 on the 2g.35gb instance (slot 1, GI 5, CI 0) at t = 3 ---
out=$(SIM_TIME=5 mon h200-mig.ini --once --format json); rc=$?
eq "h200: exit 0" "$rc" 0
jeq "h200: one event, no error" "$out" '[.events_total, .events_error, (.events | length)]' '[1,null,1]'
jeq "h200: the event is Xid 94" "$out" '.events[0] | [.type, .xid]' '["xid",94]'
jeq "h200: on GPU 0, MIG slot 1, GI 5, CI 0" "$out" \
    '.events[0] | [.gpu, .uuid, .mig_index, .gi_id, .ci_id]' \
    '[0,"GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8",1,5,0]'
jeq "h200: the slot's GI is the event's" "$out" \
    '.devices[] | select(.kind=="mig" and .mig_index==1) | .gpu_instance_id' '5'
contains "h200: meaning" "$(printf '%s' "$out" | jq -r '.events[0].meaning')" "contained ECC error"
contains "h200: action" "$(printf '%s' "$out" | jq -r '.events[0].action')" "MIG instance"
jeq "h200: the MIG device counts it" "$out" \
    '.devices[] | select(.kind=="mig" and .mig_index==1) | .metrics | [.xid_errors_total.value, .xid_errors_total.source, .last_xid.value]' \
    '[1,"direct",94]'
jeq "h200: every other device 0" "$out" \
    '[.devices[] | select(.mig_index != 1) | .metrics.xid_errors_total.value] | unique' '[0]'
jeq "h200: no last_xid elsewhere, with a reason" "$out" \
    '[.devices[] | select(.mig_index != 1) | .metrics.last_xid | [.value, (.reason | length > 0)]] | unique' '[[null,true]]'
jeq "h200: timestamp and elapsed_ns" "$out" \
    '.events[0] | [(.timestamp | test("^[0-9-]+T[0-9:.]+Z$")), (.elapsed_ns <= 10000000000)]' '[true,true]'
out=$(SIM_TIME=2 mon h200-mig.ini --once --format json)
jeq "h200 before t = 3: no event yet" "$out" '[.events_total, .events_error]' '[0,null]'
eq "h200: no events helper left after --once" "$(ev_helpers)" 0

# --- an Xid 79 on GPU 5 of the DGX at t = 20 (unprivileged: a whole-GPU event) ---
out=$(SIM_TIME=25 mon dgx-a100-8x7.ini --once --format json); rc=$?
eq "dgx: exit 0" "$rc" 0
jeq "dgx: GPU 5's Xid 79, no instance" "$out" \
    '.events | map([.gpu, .xid, .mig_index, .gi_id, .ci_id])' '[[5,79,null,null,null]]'
contains "dgx: the meaning says the bus" "$(printf '%s' "$out" | jq -r '.events[0].meaning')" "bus"
jeq "dgx: GPU 5 counts it" "$out" \
    '.devices[] | select(.kind == "gpu" and .index == 5) | .metrics.xid_errors_total | [.value, .source]' '[1,"direct"]'
# Unprivileged, an instance's own events do not reach the monitor (nvml.h):
# its count is not known, not 0; its verdict still has its GPU's events.
jeq "dgx: the instances' own counts unknown, and why" "$out" \
    '[.devices[] | select(.kind == "mig") | .metrics.xid_errors_total | [.value, .source, .reason]] | unique' \
    '[[null,"none","a MIG instance'"'"'s own Xid events reach only a privileged monitor (nvml.h); those of its whole GPU are counted on the GPU"]]'
jeq "dgx: the other GPUs 0" "$out" \
    '[.devices[] | select(.kind == "gpu" and .index != 5) | .metrics.xid_errors_total | [.value, .source]] | unique' \
    '[[0,"direct"]]'
jeq "dgx: every instance's verdict known (its GPU's events count)" "$out" \
    '[.devices[] | select(.kind == "mig") | .health.verdict] | unique' '["action","ok"]'
jeq "dgx: GPU 5's last Xid" "$out" '.devices[] | select(.kind=="gpu" and .index==5) | .metrics.last_xid.value' '79'

# --- a GPU that does not report Xid events beside one that does ---
# (nvmlDeviceGetSupportedEventTypes without the Xid bit: xid_events = false)
cat >"$TMP/ev-noxid.ini" <<'INI'
[system]
driver_version = 550.144.03
[gpu.0-1]
name = NVIDIA A100-SXM4-80GB
memory_total_mib = 81920
[gpu.0]
uuid = GPU-0a0a0a0a-1111-4222-8333-444444444444
[gpu.1]
uuid = GPU-0b0b0b0b-5555-4666-8777-888888888888
xid_events = false
INI
out=$(MIGMON_SIM_SCENARIO="$TMP/ev-noxid.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" \
    --once --format json); rc=$?
eq "no Xid on GPU 1: exit 0" "$rc" 0
jeq "no Xid on GPU 1: events flow for GPU 0" "$out" '[.events_error, .devices[0].metrics.xid_errors_total.value]' '[null,0]'
jeq "no Xid on GPU 1: its count none, and why" "$out" \
    '.devices[1].metrics.xid_errors_total | [.value, .source, .reason]' \
    '[null,"none","this GPU does not report Xid events (nvmlDeviceGetSupportedEventTypes)"]'
page=$(MIGMON_SIM_SCENARIO="$TMP/ev-noxid.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" \
    --once --format prometheus --compat dcgm)
eq "no Xid on GPU 1 prom: Xid series of GPU 0 only, at 0" \
    "$(grep -E '^(migmon_gpu_xid_errors_total|DCGM_FI_DEV_XID_ERRORS)\{' <<<"$page" | sed -E 's/\{gpu="([0-9])".*\} /{\1} /')" \
    'migmon_gpu_xid_errors_total{0} 0
DCGM_FI_DEV_XID_ERRORS{0} 0'

# /health says where Xid events are not watched, and why: those devices
# have no Xid series
if command -v curl >/dev/null; then
    health_of() {
        MIGMON_SIM_SCENARIO="$1" MIGMON_SIM_TIME=25 "$MIGMON_BIN" export --nvml-path "$MIGMON_SIM_LIB" \
            --listen 127.0.0.1:0 -i 200 --kubelet-socket off 2>"$TMP/ev-health.err" &
        local pid=$! port body=""
        port=$(export_port "$TMP/ev-health.err")
        for ((i = 0; i < 300; i++)); do # until the helper has said what it watches (30 s on a loaded machine)
            body=$(curl -s -m 2 "http://127.0.0.1:$port/health")
            case "$body" in *"waiting for the events helper"*) ;; *events:*) break ;; esac
            sleep 0.1
        done
        kill -TERM "$pid"
        wait "$pid"
        printf '%s\n' "$body" | grep '^events:'
    }
    eq "/health: the inaccessible GPU's events not watched" \
        "$(health_of "$MIGMON_SRC/sim/scenarios/inaccessible-gpu.ini")" \
        "events: Xid events watched on 1 of 2 GPUs and 0 of 0 MIG devices; not on GPU 1: NVML_ERROR_NO_PERMISSION"
    eq "/health: no GPU reports Xid events on GPU 1" "$(health_of "$TMP/ev-noxid.ini")" \
        "events: Xid events watched on 1 of 2 GPUs and 0 of 0 MIG devices; not on GPU 1: this GPU does not report Xid events (nvmlDeviceGetSupportedEventTypes)"
    eq "/health: an unprivileged monitor's MIG instances" "$(health_of "$MIGMON_SRC/sim/scenarios/dgx-a100-8x7.ini")" \
        "events: Xid events watched on 8 of 8 GPUs and 0 of 56 MIG devices; not on the MIG devices of GPU 0, 1, 2, 3, 4, 5, 6, 7: a MIG instance's own Xid events reach only a privileged monitor (nvml.h); those of its whole GPU are counted on the GPU"
    eq "/health: every device watched" "$(health_of "$MIGMON_SRC/sim/scenarios/h200-mig.ini")" \
        "events: Xid events watched on 1 of 1 GPUs and 4 of 4 MIG devices"
    eq "/health: no event API" "$(health_of "$MIGMON_SRC/sim/scenarios/events-none.ini")" \
        "events: no Xid series: this driver has no NVML event API (FUNCTION_NOT_FOUND): no Xid events"
fi

# --- no event API ---
out=$(mon events-none.ini --once --format json); rc=$?
eq "none: exit 0" "$rc" 0
contains "none: events unavailable, and why" "$(printf '%s' "$out" | jq -r '.events_error')" "no NVML event API"
jeq "none: no events" "$out" '[.events_total, .events]' '[0,[]]'
jeq "none: xid_errors_total none with the reason" "$out" \
    '.devices[0].metrics.xid_errors_total | [.value, .source, (.reason | test("event API"))]' '[null,"none",true]'
jeq "none: other values still read" "$out" '.devices[0].metrics.power_w.source' '"direct"'

# --- a wait that fails: said, and retried by the helper ---
sed 's/^events_api = no/event_wait = fail/' "$MIGMON_SRC/sim/scenarios/events-none.ini" >"$TMP/ev-fail.ini"
out=$(MIGMON_SIM_SCENARIO="$TMP/ev-fail.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" \
    --once --format json); rc=$?
eq "fail: exit 0" "$rc" 0
jeq "fail: the wait's failure is the reason" "$out" \
    '[.events_error, .devices[0].metrics.xid_errors_total.reason]' \
    '["nvmlEventSetWait_v2 failed; retrying","nvmlEventSetWait_v2 failed; retrying"]'

# --- a wait that never returns ---
t0=$(now_ns)
out=$(mon events-hang.ini --once --timeout 2 --format json); rc=$?
within "hang: --once --timeout 2 finishes" "$(ms_since "$t0")" 3000
eq "hang: exit 0" "$rc" 0
jeq "hang: the GPU's values are read" "$out" '.devices[0].metrics.power_w.source' '"direct"'
eq "hang: no events helper left after --once" "$(ev_helpers)" 0
# Past the watchdog (3 s): the stall is named and the helper restarted.
mon events-hang.ini record -i 500 -n 10 --force -o "$TMP/ev-hang.jsonl" </dev/null 2>"$TMP/ev-hang.err"
last=$(tail -1 "$TMP/ev-hang.jsonl")
contains "hang: the stall is named" "$(printf '%s' "$last" | jq -r '.events_error')" \
    "stalled in nvmlEventSetWait_v2"
jeq "hang: xid_errors_total none meanwhile" "$last" '.devices[0].metrics.xid_errors_total.source' '"none"'
eq "hang: no events helper left" "$(ev_helpers)" 0

# A scrape while the helper hangs in its wait, and past its watchdog: answered
# at once, with the stall named once the watchdog has seen it.
if command -v curl >/dev/null; then
    MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/events-hang.ini" MIGMON_SIM_TIME=100 \
        "$MIGMON_BIN" export --nvml-path "$MIGMON_SIM_LIB" --listen 127.0.0.1:0 -i 250 \
        --kubelet-socket off 2>"$TMP/ev-exp.err" &
    EVP=$!
    EVPORT=$(export_port "$TMP/ev-exp.err")
    maxms=0
    for ((i = 0; i < 20; i++)); do # 4 s: past the 3 s watchdog
        t0=$(now_ns)
        curl -s -m 5 -o "$TMP/ev-page" "http://127.0.0.1:$EVPORT/metrics"
        ms=$(ms_since "$t0")
        [ "$ms" -gt "$maxms" ] && maxms=$ms
        sleep 0.2
    done
    echo "     (scrapes with the events helper hung: slowest $maxms ms)"
    [ "$maxms" -lt 1000 ] && ok || bad "hang: a scrape took $maxms ms"
    contains "hang: the page has the GPU's power" "$(cat "$TMP/ev-page")" "migmon_gpu_power_watts{"
    kill -TERM "$EVP"
    wait "$EVP"
    eq "hang: export ends on SIGTERM with status 0" "$?" 0
fi

if command -v tmux >/dev/null; then
    . "$MIGMON_SRC/tests/e2e/tui_lib.sh"
    TUI_SOCK="migmon-test-events-$$"
    P=$(tui_proc evh two-core)
    if tui_start evh 120 40 1 MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/events-hang.ini" -- \
        --nvml-path "$MIGMON_SIM_LIB" --proc-root "$P" -i 200; then
        ok
        sleep 0.5 # the helper is in its wait by now
        t0=$(now_ns)
        st=$(tui_quit evh q)
        within "hang: q ends the TUI" "$(ms_since "$t0")" 1000
        eq "hang: q exit status" "$st" 0
    else
        bad "hang: the TUI drew no frame"
    fi
    tui_kill_all
    eq "hang: no events helper left after the TUI" "$(ev_helpers)" 0
else
    bad "tmux is required for the screen tests (scripts/deps.sh installs it)"
fi
