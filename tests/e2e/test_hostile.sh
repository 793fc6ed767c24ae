# shellcheck shell=bash
# hostile.ini: a driver that returns garbage (sim/scenarios/hostile.ini):
# strings without a NUL, with escapes, C1 bytes, a bidi override and invalid
# UTF-8; values at 2^32-1 and 2^64-1; used above total; a PID 0; a process
# list that answers INSUFFICIENT_SIZE forever. Every output stays valid,
# clean and bounded, and no absurd value is shown as a number.

# no byte a terminal would act on, in a file: C0 but newline/tab, DEL, C1
# as UTF-8 (c2 80-9f), a raw 0x9b, and the bidi controls
has_controls() {
    LC_ALL=C grep -qP '[\x00-\x08\x0b-\x1f\x7f\x9b]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]' "$1"
}

out=$(mon hostile.ini --once --format json --gpm off); rc=$?
eq "hostile: exit 0" "$rc" 0
printf '%s' "$out" >"$TMP/hostile.json"
if command -v python3 >/dev/null; then
    py=$(python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8", errors="strict")); print("ok")' "$TMP/hostile.json" 2>&1)
    eq "hostile: JSON is valid UTF-8 JSON" "$py" ok
fi
has_controls "$TMP/hostile.json" && bad "hostile: control bytes in the JSON" || ok
jeq "hostile: driver version bounded and clean" "$out" '.driver_version | (length < 80) and (contains("\u001b") | not)' 'true'
jeq "hostile: GPU name has no escape left" "$out" '.devices[0].name | contains("\u001b") or contains("\u202e")' 'false'
jeq "hostile: the name keeps its readable part" "$out" '.devices[0].name | startswith("NVIDIA ?[2J")' 'true'
jeq "hostile: util 2^32-1 is none with the value" "$out" '.devices[0].metrics.gpu_util_pct | [.value, .reason]' '[null,"driver returned 4294967295"]'
jeq "hostile: temperature 2^32-1 is none" "$out" '.devices[0].metrics.temperature_c.value' 'null'
jeq "hostile: PCIe generation 2^32-1 is none" "$out" '.devices[0].metrics.pcie_gen.value' 'null'
jeq "hostile: fan 2^32-1 is none" "$out" '.devices[0].metrics.fan_pct.value' 'null'
jeq "hostile: used 2^64-1 is none with the value" "$out" '.devices[0].metrics.memory_used_bytes | [.value, .reason]' '[null,"driver returned about 2^64 (1.84467e+19; all ones: not available?)"]'
jeq "hostile: no number above the ranges anywhere" "$out" \
    '[.devices[].metrics | to_entries[] | select(.key | endswith("_pct")) | .value.value | select(. != null and (. < 0 or . > 200))]' '[]'
jeq "hostile: an absurd compute capability is null" "$out" '[.devices[].compute_capability]' '[null,"8.0"]'
jeq "hostile: PID 0 is not a process" "$out" '[.devices[].processes[] | select(.pid == 0)] | length' '0'
jeq "hostile: PID 0's samples are not in the GPU's SM sum" "$out" '.devices[0].metrics.sm_util_pct | [.value, .source]' '[20,"process"]'
jeq "hostile: an impossible process memory is null" "$out" '.devices[0].processes[] | select(.pid == 4242) | .memory_bytes' 'null'
jeq "hostile: the storm GPU's list is none, with the reason" "$out" '.devices[1].process_count | [.value, .reason]' '[null,"NVML_ERROR_INSUFFICIENT_SIZE"]'
jeq "hostile: the healthy GPU keeps its figures" "$out" '.devices[1].metrics.gpu_util_pct.source' '"direct"'

mon hostile.ini --once --format table --gpm off >"$TMP/hostile.txt"; rc=$?
eq "hostile table: exit 0" "$rc" 0
has_controls "$TMP/hostile.txt" && bad "hostile table: control bytes reach the terminal" || ok
contains "hostile table: absurd util shown as N/A" "$(grep '^0 ' "$TMP/hostile.txt")" "N/A"

# The storm must not grow memory: 60 ticks of the interactive monitor.
if command -v tmux >/dev/null; then
    . "$MIGMON_SRC/tests/e2e/tui_lib.sh"
    TUI_SOCK="migmon-test-hostile-$$"
    tui_start hostile 120 40 3 MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/hostile.ini" -- \
        --nvml-path "$MIGMON_SIM_LIB" --gpm off --proc-root "$(tui_proc hostile two-core)"
    pid=$(tui_pid hostile)
    rss0=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
    for ((i = 0; i < 60; i++)); do tui_tick hostile; done
    rss1=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
    [ $((rss1 - rss0)) -lt 4096 ] && ok || bad "hostile: RSS grew from $rss0 to $rss1 KiB over 60 ticks"
    tui_capture hostile -e >"$TMP/hostile.screen"
    # only our own colour codes (ESC [ ... m) on screen: no title, no clear
    grep -q $'\e\]' "$TMP/hostile.screen" && bad "hostile: an OSC reached the screen" || ok
    eq "hostile: q quits" "$(tui_quit hostile q)" "0"
    tui_kill_all
fi
