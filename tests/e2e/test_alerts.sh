# shellcheck shell=bash
# The alerting rules of contrib/prometheus/alerts.yml: promtool checks them,
# and promtool's rule tests run each alert over what Prometheus would have
# stored from the exporter's own /metrics pages on the simulator's fault
# scenarios: a GPU that falls off the bus (faults.ini), a driver call that
# never returns (hang-power-late.ini), an Xid 79 (dgx-a100-8x7.ini), a
# pending row remap (h100-sxm.ini) and an exporter that stops answering.
# The scrapes become the tests' input series (tests/e2e/prom_series.py,
# one scrape a minute of the tests' time); the alerts each should give,
# and the ones it should not, are written here.
RULES="$MIGMON_SRC/contrib/prometheus/alerts.yml"
if ! command -v promtool >/dev/null || ! command -v curl >/dev/null; then
    bad "promtool and curl are required for the alert tests (scripts/deps.sh installs them)"
    return 0
fi
contains "alerts: promtool check rules" "$(promtool check rules "$RULES" 2>&1)" "SUCCESS: 6 rules found"
# the Xid codes of the alert are those of the health rule xid-needs-reset
codes=$(sed -n '/^static enum health_rule xid_rule/,/return HEALTH_R_XID_RESET/p' "$MIGMON_SRC/src/engine/health.c" |
    grep -oE 'case [0-9]+' | awk '{print $2}' | paste -sd'|')
eq "alerts: the Xid codes are health.c's xid-needs-reset ($codes)" \
    "$(grep -cF "{xid=~\"$codes\"}" "$RULES")" 2

AL="$TMP/alerts"
mkdir -p "$AL"
# the series the rules read, and up
NAMES=$(grep -oE '\b(migmon_[a-z_]+|up)\b' "$RULES" | sort -u | paste -sd'|')
ALERTS=(MigGpuMonGpuLost MigGpuMonSamplingStalled MigGpuMonXidNeedsReset MigGpuMonRowRemapPending
    MigGpuMonHealthAction MigGpuMonExporterDown)

# al_start NAME SCENARIO SIM_TIME ARGS...: `export` on the scenario, a page
# every 200 ms; sets AL_PID and AL_PORT once a page is served and the
# events helper has said what it watches (before, no device has Xid series)
al_start() {
    local name=$1 scen=$2 t=$3 i
    shift 3
    MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/$scen" MIGMON_SIM_TIME=$t \
        "$MIGMON_BIN" export --nvml-path "$MIGMON_SIM_LIB" --listen 127.0.0.1:0 -i 200 \
        --kubelet-socket off "$@" 2>"$AL/$name.err" &
    AL_PID=$!
    AL_PORT=$(export_port "$AL/$name.err")
    for ((i = 0; i < 100; i++)); do
        case "$(curl -s -m 2 "http://127.0.0.1:$AL_PORT/health")" in
        OK*"waiting for the events helper"*) ;;
        OK*) return 0 ;;
        esac
        sleep 0.1
    done
    bad "alerts: $name: no page within 10 s"
}
al_stop() {
    kill -TERM "$AL_PID"
    wait "$AL_PID"
}
# al_page NAME: one scrape of the running exporter into the next file of
# NAME, appended to PAGES ("-" when the scrape failed); 200 ms apart
PAGES=()
al_page() {
    local f
    f="$AL/$1.$(printf '%03d' "${#PAGES[@]}")"
    if curl -sf -m 2 -o "$f" "http://127.0.0.1:$AL_PORT/metrics"; then PAGES+=("$f"); else PAGES+=(-); fi
    sleep 0.2
}
# al_until NAME PATTERN MORE: scrape until a page has a line matching the
# ERE PATTERN (at most 100 scrapes), then MORE scrapes
al_until() {
    local i
    for ((i = 0; i < 100; i++)); do
        al_page "$1"
        [ "${PAGES[-1]}" != - ] && grep -qE "$2" "${PAGES[-1]}" && break
    done
    for ((i = 0; i < $3; i++)); do al_page "$1"; done
}
# al_test NAME INSTANCE: a test of the rule file over PAGES (then emptied)
al_test() {
    printf '  - name: %s\n    interval: 1m\n    input_series:\n' "$1"
    python3 "$MIGMON_SRC/tests/e2e/prom_series.py" "$2" mig-gpu-mon "$NAMES" "${PAGES[@]}"
    printf '    alert_rule_test:\n'
    AL_LAST=$((${#PAGES[@]} - 1))
    PAGES=()
}
# al_none TIME NAME...: no alert of these names at TIME (minutes)
al_none() {
    local t=$1 a
    shift
    for a in "$@"; do
        printf '      - eval_time: %sm\n        alertname: %s\n        exp_alerts: []\n' "$t" "$a"
    done
}
# al_except NAME...: every alert name but these
al_except() {
    local a x skip
    for a in "${ALERTS[@]}"; do
        skip=
        for x in "$@"; do [ "$a" = "$x" ] && skip=1; done
        [ -n "$skip" ] || printf '%s ' "$a"
    done
}

T="$AL/tests.yml"
printf 'rule_files: [%s]\nevaluation_interval: 1m\ntests:\n' "$RULES" >"$T"

# --- faults.ini: GPU 1 falls off the bus at t = 30 (simulated seconds, one a tick) ---
al_start lost faults.ini 20+1
al_until lost '^migmon_gpu_lost\{gpu="1".*\} 1$' 3
al_stop
grep -qE '^migmon_gpu_lost\{gpu="1".*\} 0$' "${PAGES[0]}" && ok || bad "alerts: faults.ini's first page has GPU 1 lost already"
{
    al_test faults.ini node-faults:9400
    # shellcheck disable=SC2046
    al_none 0 $(al_except)
    cat <<EOF
      - eval_time: ${AL_LAST}m
        alertname: MigGpuMonGpuLost
        exp_alerts:
          - exp_labels: {severity: critical, instance: "node-faults:9400", gpu: "1", uuid: GPU-66666666-7777-4888-9999-aaaaaaaaaaaa, pci_bus_id: "00000000:0F:00.0"}
            exp_annotations:
              summary: "GPU 1 (GPU-66666666-7777-4888-9999-aaaaaaaaaaaa) on node-faults:9400 fell off the bus"
              description: "NVML answers NVML_ERROR_GPU_IS_LOST for GPU 1 (bus 00000000:0F:00.0): drain the node and reset or reseat the GPU."
      - eval_time: ${AL_LAST}m
        alertname: MigGpuMonHealthAction
        exp_alerts:
          - exp_labels: {severity: critical, instance: "node-faults:9400", gpu: "1", uuid: GPU-66666666-7777-4888-9999-aaaaaaaaaaaa}
            exp_annotations:
              summary: "GPU 1 on node-faults:9400 needs an operator"
              description: "The health verdict of GPU 1 (GPU-66666666-7777-4888-9999-aaaaaaaaaaaa) is action: drain, reset or replace. The rules that fired are in --once's JSON (devices[].health.rules) and in the TUI."
EOF
    # shellcheck disable=SC2046
    al_none "$AL_LAST" $(al_except MigGpuMonGpuLost MigGpuMonHealthAction)
} >>"$T"

# --- hang-power-late.ini: GPU 1's power reading never returns from t = 5 ---
al_start stall hang-power-late.ini 0+1
al_until stall '^migmon_gpu_sampling_stalled\{gpu="1".*\} 1$' 6
al_stop
grep -qE '^migmon_gpu_sampling_stalled\{gpu="1".*\} 0$' "${PAGES[0]}" && ok ||
    bad "alerts: hang-power-late.ini's first page has GPU 1 stalled already"
{
    al_test hang-power-late.ini node-stall:9400
    # shellcheck disable=SC2046
    al_none 0 $(al_except)
    # pending for 5 minutes: not yet at the fifth minute of the stall
    al_none $((AL_LAST - 2)) MigGpuMonSamplingStalled
    cat <<EOF
      - eval_time: ${AL_LAST}m
        alertname: MigGpuMonSamplingStalled
        exp_alerts:
          - exp_labels: {severity: warning, instance: "node-stall:9400", gpu: "1", uuid: GPU-0b0b0b0b-5555-4666-8777-888888888888}
            exp_annotations:
              summary: "A driver call for GPU 1 on node-stall:9400 has not returned for 5 minutes"
              description: "The exporter cannot read GPU 1 (GPU-0b0b0b0b-5555-4666-8777-888888888888): the call it is stuck in is in the TUI and in --once's JSON (stall). A GPU in this state often needs a reset."
EOF
    # shellcheck disable=SC2046
    al_none "$AL_LAST" $(al_except MigGpuMonSamplingStalled)
} >>"$T"

# --- dgx-a100-8x7.ini: an Xid 79 of GPU 5 at t = 20: pages before it, then after ---
al_start dgx1 dgx-a100-8x7.ini 10
al_page dgx
al_page dgx
al_stop
al_start dgx2 dgx-a100-8x7.ini 25
al_until dgx '^migmon_gpu_xid_errors_total\{gpu="5".*xid="79".*\} 1$' 2
al_stop
grep -qE '^migmon_gpu_xid_errors_total\{gpu="5",.*source="direct"\} 0$' "${PAGES[0]}" && ok ||
    bad "alerts: dgx's first page has no Xid count 0 on GPU 5"
{
    al_test dgx-a100-8x7.ini node-dgx:9400
    # shellcheck disable=SC2046
    al_none 1 $(al_except)
    cat <<EOF
      - eval_time: ${AL_LAST}m
        alertname: MigGpuMonXidNeedsReset
        exp_alerts:
          - exp_labels: {severity: critical, instance: "node-dgx:9400", gpu: "5", uuid: GPU-0a1b2c3d-5555-4a5b-8c6d-7e8f90a1b2c3, xid: "79"}
            exp_annotations:
              summary: "Xid 79 on GPU 5 of node-dgx:9400"
              description: "Xid 79 was reported on GPU 5 (GPU-0a1b2c3d-5555-4a5b-8c6d-7e8f90a1b2c3): its remedy is a reset or a drain. The events list (--once's JSON, the TUI's key e) says what it means."
      - eval_time: ${AL_LAST}m
        alertname: MigGpuMonHealthAction
        exp_alerts:
          - exp_labels: {severity: critical, instance: "node-dgx:9400", gpu: "5", uuid: GPU-0a1b2c3d-5555-4a5b-8c6d-7e8f90a1b2c3}
            exp_annotations:
              summary: "GPU 5 on node-dgx:9400 needs an operator"
              description: "The health verdict of GPU 5 (GPU-0a1b2c3d-5555-4a5b-8c6d-7e8f90a1b2c3) is action: drain, reset or replace. The rules that fired are in --once's JSON (devices[].health.rules) and in the TUI."
EOF
    # shellcheck disable=SC2046
    al_none "$AL_LAST" $(al_except MigGpuMonXidNeedsReset MigGpuMonHealthAction)
} >>"$T"

# --- h100-sxm.ini: a row remap pending from t = 30 ---
al_start remap1 h100-sxm.ini 10
al_page remap
al_page remap
al_stop
al_start remap2 h100-sxm.ini 40
al_page remap
al_page remap
al_stop
grep -qE '^migmon_gpu_row_remap_pending\{gpu="0".*\} 1$' "${PAGES[3]}" && ok ||
    bad "alerts: h100-sxm.ini at t = 40 has no pending row remap"
{
    al_test h100-sxm.ini node-h100:9400
    # shellcheck disable=SC2046
    al_none 1 $(al_except)
    cat <<EOF
      - eval_time: ${AL_LAST}m
        alertname: MigGpuMonRowRemapPending
        exp_alerts:
          - exp_labels: {severity: warning, instance: "node-h100:9400", gpu: "0", uuid: GPU-4d8f2a6c-13e7-4b59-9c0a-7e2d5f8b1a36}
            exp_annotations:
              summary: "GPU 0 on node-h100:9400 has a row remap pending"
              description: "Reset GPU 0 (GPU-4d8f2a6c-13e7-4b59-9c0a-7e2d5f8b1a36) when its jobs allow: a memory row remap waits for it."
      - eval_time: ${AL_LAST}m
        alertname: MigGpuMonHealthAction
        exp_alerts:
          - exp_labels: {severity: critical, instance: "node-h100:9400", gpu: "0", uuid: GPU-4d8f2a6c-13e7-4b59-9c0a-7e2d5f8b1a36}
            exp_annotations:
              summary: "GPU 0 on node-h100:9400 needs an operator"
              description: "The health verdict of GPU 0 (GPU-4d8f2a6c-13e7-4b59-9c0a-7e2d5f8b1a36) is action: drain, reset or replace. The rules that fired are in --once's JSON (devices[].health.rules) and in the TUI."
EOF
    # shellcheck disable=SC2046
    al_none "$AL_LAST" $(al_except MigGpuMonRowRemapPending MigGpuMonHealthAction)
} >>"$T"

# --- an exporter that stops answering (h200-mig.ini, stopped after two pages) ---
al_start down h200-mig.ini 100
al_page down
al_page down
al_stop
for ((i = 0; i < 7; i++)); do al_page down; done
eq "alerts: the stopped exporter's scrapes fail" "${PAGES[*]:2}" "- - - - - - -"
{
    al_test "exporter down" node-h200:9400
    # shellcheck disable=SC2046
    al_none 1 $(al_except)
    al_none 6 MigGpuMonExporterDown # down for 4 minutes: pending
    cat <<EOF
      - eval_time: 8m
        alertname: MigGpuMonExporterDown
        exp_alerts:
          - exp_labels: {severity: warning, instance: "node-h200:9400", job: mig-gpu-mon}
            exp_annotations:
              summary: "mig-gpu-mon's exporter on node-h200:9400 is down"
              description: "Prometheus has not scraped node-h200:9400 (job mig-gpu-mon) for 5 minutes: its GPUs are not watched."
EOF
    # shellcheck disable=SC2046
    al_none 8 $(al_except MigGpuMonExporterDown)
} >>"$T"

out=$(cd "$AL" && promtool test rules tests.yml 2>&1)
eq "alerts: promtool test rules over the fault scenarios' pages" "$out" "Unit Testing:  tests.yml
  SUCCESS"
