# shellcheck shell=bash
# hostile.ini: a driver that returns garbage (sim/scenarios/hostile.ini):
# strings without a NUL, with escapes, C1 bytes, a bidi override and invalid
# UTF-8; values at 2^32-1 and 2^64-1; used above total; an absurd compute
# capability; a PID 0; a process list that answers INSUFFICIENT_SIZE
# forever. Every output (JSON, table, CSV, line protocol, Prometheus, the
# screen) stays valid, clean and bounded, and no absurd value is shown as a
# number.

# A /proc where PID 4242 (a process of GPU 0) has a name and a command line
# full of controls: ED, an OSC title, a raw C1 CSI byte, C1 NEL as UTF-8,
# bidi overrides, a tab, invalid UTF-8.
HPROC="$TMP/hostile-proc"
hostile_proc_root "$HPROC"
stat=$(cat "$HPROC/4242/stat")
printf '4242 (%s) %s' $'e\e[1mv\xc2\x9bi\xe2\x80\xaeL\tx' "${stat#*) }" >"$HPROC/4242/stat"
printf 'run\0\033[2J\0\033]0;title\a\0\23331m\0\302\205\0\342\200\256\342\201\246\0a\tb\0\377\376\0' \
    >"$HPROC/4242/cmdline"

out=$(mon hostile.ini --once --format json --gpm off --proc-root "$HPROC"); rc=$?
eq "hostile: exit 0" "$rc" 0
printf '%s' "$out" >"$TMP/hostile.json"
if command -v python3 >/dev/null; then
    py=$(python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8", errors="strict")); print("ok")' "$TMP/hostile.json" 2>&1)
    eq "hostile: JSON is valid UTF-8 JSON" "$py" ok
fi
eq "hostile: JSON valid UTF-8 without controls" "$(clean_text "$TMP/hostile.json")" ok
jeq "hostile: the process's name and command line cleaned" "$out" \
    '.devices[0].processes[] | select(.pid == 4242) | [.name, .command]' \
    '["e?[1mv??i???L?x","run ?[2J ?]0;title? ?31m ?? ?????? a?b ??"]'
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

mon hostile.ini --once --format table --gpm off --proc-root "$HPROC" >"$TMP/hostile.txt"; rc=$?
eq "hostile table: exit 0" "$rc" 0
eq "hostile table: valid UTF-8 without controls" "$(clean_text "$TMP/hostile.txt")" ok
contains "hostile table: absurd util shown as N/A" "$(grep '^0 ' "$TMP/hostile.txt")" "N/A"
contains "hostile table: the command line cleaned" "$(cat "$TMP/hostile.txt")" "run ?[2J ?]0;title?"

mon hostile.ini --once --format csv --gpm off --proc-root "$HPROC" >"$TMP/hostile.csv"; rc=$?
eq "hostile CSV: exit 0" "$rc" 0
eq "hostile CSV: valid UTF-8 without controls" "$(clean_text "$TMP/hostile.csv")" ok
if command -v python3 >/dev/null; then
    got=$(python3 -c 'import csv,sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8", errors="strict")))
print([[r["index"], r["name"], r["gpu_util_pct"], r["sm_util_pct"], r["temperature_c"],
        r["memory_used_bytes"], r["pcie_gen"]] for r in rows])' "$TMP/hostile.csv" 2>&1)
    eq "hostile CSV: absurd values empty, PID 0 not summed, names cleaned" "$got" \
        "[['0', 'NVIDIA ?[2J?]0;title?A100?31m ???LANIMRET??-80GB', '', '20', '', '', ''], ['1', 'NVIDIA A100-SXM4-80GB', '31', '30', '55', '2147483648', '4']]"
fi

mon hostile.ini --once --format influx --gpm off --proc-root "$HPROC" >"$TMP/hostile.influx"; rc=$?
eq "hostile influx: exit 0" "$rc" 0
eq "hostile influx: valid UTF-8 without controls" "$(clean_text "$TMP/hostile.influx")" ok
gpu0=$(grep '^nvidia_smi,.*,index=0 ' "$TMP/hostile.influx")
contains "hostile influx: the name cleaned" "$gpu0" 'name=NVIDIA\ ?[2J?]0;title?A100?31m\ ???LANIMRET??-80GB,'
contains "hostile influx: SM utilisation without PID 0" "$gpu0" ",sm_util_pct=20,"
case "$gpu0" in
*utilization_gpu=* | *temperature_gpu=* | *memory_used=* | *4294967295*) bad "hostile influx: an absurd value written: $gpu0" ;;
*) ok ;;
esac
contains "hostile influx: the command line cleaned" "$(cat "$TMP/hostile.influx")" \
    'command="run ?[2J ?]0;title? ?31m ?? ?????? a?b ??"'

mon hostile.ini --once --format prometheus --export-processes --gpm off --proc-root "$HPROC" \
    >"$TMP/hostile.prom"; rc=$?
eq "hostile prometheus: exit 0" "$rc" 0
eq "hostile prometheus: valid UTF-8 without controls" "$(clean_text "$TMP/hostile.prom")" ok
contains "hostile prometheus: no compute capability for an absurd one" \
    "$(grep '^migmon_device_info{gpu="0"' "$TMP/hostile.prom")" 'compute_capability="",'
contains "hostile prometheus: the real one kept" \
    "$(grep '^migmon_device_info{gpu="1"' "$TMP/hostile.prom")" 'compute_capability="8.0",'
eq "hostile prometheus: no utilisation sample for GPU 0" \
    "$(grep -c '^migmon_gpu_utilization_ratio{gpu="0"' "$TMP/hostile.prom")" 0
contains "hostile prometheus: SM utilisation without PID 0" \
    "$(grep '^migmon_gpu_sm_utilization_ratio{gpu="0"' "$TMP/hostile.prom")" '} 0.2'
contains "hostile prometheus: the process name cleaned" "$(grep 'pid="4242"' "$TMP/hostile.prom" | head -1)" \
    'process_name="e?[1mv??i???L?x"'

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
    tui_capture hostile >"$TMP/hostile.plain"
    eq "hostile screen: valid UTF-8 without controls" "$(clean_text "$TMP/hostile.plain")" ok
    tui_capture hostile -e >"$TMP/hostile.screen"
    # only our own colour codes (ESC [ ... m) on screen: no title, no clear
    grep -q $'\e\]' "$TMP/hostile.screen" && bad "hostile: an OSC reached the screen" || ok
    eq "hostile: q quits" "$(tui_quit hostile q)" "0"
    tui_kill_all
fi

# amdgpu: a board whose product_name holds an OSC title, C1 NEL, a
# right-to-left override, RLM, a zero width space, a BOM and a byte of no
# UTF-8 (a copy of the MI300X CPX tree): cleaned where it is read, so the
# GPU and its partitions are named cleanly in every format.
AH="$TMP/hostile-amd"
rm -rf "$AH"
cp -R "$MIGMON_SRC/tests/fixtures/sysfs/mi300x-cpx" "$AH"
printf 'AMD \033]0;pwn\007Instinct\302\205 \342\200\256X003IM\342\200\217\342\200\213\357\273\277\377\n' \
    >"$AH/devices/pci0000:00/0000:0c:00.0/product_name"
AMD_NAME='AMD ?]0;pwn?Instinct?? ???X003IM??????????'
for fmt in json table csv influx prometheus; do
    "$MIGMON_BIN" --backend amdgpu --sysfs-root "$AH" --proc-root "$MIGMON_SRC/tests/fixtures/proc/amd-cpx" \
        --once --format "$fmt" >"$TMP/hostile-amd.$fmt"
    eq "hostile amdgpu product_name: --once $fmt exits 0" "$?" 0
    eq "hostile amdgpu product_name: --once $fmt is clean" "$(clean_text "$TMP/hostile-amd.$fmt")" ok
done
jeq "hostile amdgpu product_name: the GPU and its partitions named, cleaned" "$(cat "$TMP/hostile-amd.json")" \
    '[.devices[].name] | unique' "[\"$AMD_NAME\"]"
contains "hostile amdgpu product_name: the Prometheus model label" "$(cat "$TMP/hostile-amd.prometheus")" \
    "model=\"$AMD_NAME\""
contains "hostile amdgpu product_name: the line protocol's name tag" "$(cat "$TMP/hostile-amd.influx")" \
    "name=${AMD_NAME// /\\ },"
