# shellcheck shell=bash
# Per-MIG activity from GPM, sampled by the isolated helper process: values
# match the scenario's rates, whole-GPU values on the MIG-enabled parent,
# per-compute-instance values on 595+, NaN and failed metrics as none,
# Ampere's reason, a driver that corrupts the session after GPM calls, a
# helper that hangs, and no helper left behind.

# near DESC JSON FILTER EXPECTED: |value - expected| < 0.5
near() {
    local got
    got=$(printf '%s' "$2" | jq "($3) - ($4) | if . < 0 then -. else . end < 0.5" 2>&1)
    if [ "$got" = true ]; then ok; else
        bad "$1: $(printf '%s' "$2" | jq -c "$3" 2>&1), expected $4 +- 0.5"
    fi
}
# helpers: how many GPM helper processes are alive (started from this binary)
helpers() { pgrep_mine "$MIGMON_BIN --gpm-helper" | wc -l; }

# Scenario rates at t = 100 (MIGMON_SIM_TIME=100; wave(b, a, p, ph) =
# b + a*sin(2*pi*(t+ph)/p)), from sim/scenarios/h100-pcie-mig-535.ini:
#   slot 0 (3g, GI 2): graphics wave(80,8,60) = 73.07, sm wave(72,8,60) = 65.07,
#                      dram wave(50,8,60,10) = 43.07
#   slot 1 (2g, GI 3): 29.87, 25.90, 19.26     slot 3 (1g, GI 9): 10.00, 8.00, 6.00
#   parent: slice-weighted mean (73.07*3 + 29.87*2 + 10*1) / 7 = 41.28
out=$(mon h100-pcie-mig-535.ini --once --format json); rc=$?
eq "h100 535: exit 0" "$rc" 0
jeq "h100 535: every MIG device's GPU/SM/MEM util from GPM" "$out" \
    '[.devices[] | select(.kind=="mig") | .metrics | .gpu_util_pct.source, .sm_util_pct.source, .mem_util_pct.source] | unique' '["gpm"]'
sel='.devices[] | select(.kind=="mig" and .mig_index=='
near "h100 535: slot 0 graphics" "$out" "$sel"'0) | .metrics.gpu_util_pct.value' 73.07
near "h100 535: slot 0 SM" "$out" "$sel"'0) | .metrics.sm_util_pct.value' 65.07
near "h100 535: slot 0 DRAM" "$out" "$sel"'0) | .metrics.mem_util_pct.value' 43.07
near "h100 535: slot 1 graphics" "$out" "$sel"'1) | .metrics.gpu_util_pct.value' 29.87
near "h100 535: slot 1 SM" "$out" "$sel"'1) | .metrics.sm_util_pct.value' 25.90
near "h100 535: slot 1 DRAM" "$out" "$sel"'1) | .metrics.mem_util_pct.value' 19.26
near "h100 535: slot 3 graphics" "$out" "$sel"'3) | .metrics.gpu_util_pct.value' 10
near "h100 535: slot 3 SM" "$out" "$sel"'3) | .metrics.sm_util_pct.value' 8
near "h100 535: slot 3 DRAM" "$out" "$sel"'3) | .metrics.mem_util_pct.value' 6
near "h100 535: parent whole-GPU graphics" "$out" '.devices[0].metrics.gpu_util_pct.value' 41.28
jeq "h100 535: parent util from GPM" "$out" '.devices[0].metrics.gpu_util_pct.source' '"gpm"'
jeq "h100 535: one CI per GI, so no gpu_instance scope" "$out" \
    '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.scope] | unique' '[null]'
jeq "h100 535: tensor util per MIG device" "$out" \
    '[.devices[] | select(.kind=="mig") | .metrics.tensor_util_pct.source] | unique' '["gpm"]'
jeq "h100 535: NVLink of a MIG device is the parent's" "$out" \
    '[.devices[] | select(.kind=="mig") | .metrics.nvlink_tx_bytes_per_s.scope] | unique' '["parent"]'
jeq "h100 535: no GPM percentage outside 0-100" "$out" \
    '[.devices[].metrics | to_entries[] | select(.key | endswith("_pct")) | .value.value | select(. != null and (. < 0 or . > 100))]' '[]'
jeq "h100 535: no fake zero: every none is null" "$out" '[.. | objects | select(.source? == "none") | .value] | unique' '[null]'
eq "h100 535: no helper left after --once" "$(helpers)" 0
tab=$(mon h100-pcie-mig-535.ini --once --format table)
contains "h100 535: table MIG row has GPM util" "$(printf '%s\n' "$tab" | grep 'MIG 3g.40gb')" "73%"
contains "h100 535: table has the GPM section" "$tab" "GPM activity"
contains "h100 535: table legend names GPM" "$tab" "come from GPM"

# The monitor's own NVML session never calls an nvmlGpm* function.
mon h100-pcie-mig-535.ini --once --format json --debug="$TMP/gpm-debug.log" >/dev/null
calls=$(grep -c ' dev=' "$TMP/gpm-debug.log")
[ "$calls" -gt 10 ] && ok || bad "debug log has no NVML calls ($calls)"
eq "main process makes no GPM call" "$(grep ' dev=' "$TMP/gpm-debug.log" | grep -c 'nvmlGpm')" 0
contains "debug log notes the helper" "$(cat "$TMP/gpm-debug.log")" "gpm: helper started"

# h200-mig (driver 570, privileged): rates at t = 100
#   slot 0 (3g): 85, 76, 60   slot 1 (2g): 20.50, 18.40, 18.25   slot 2 (1g): 11.76, 9.41, 8.05
#   slot 4 (1g): no gpm keys: idle (0)   parent: (85*3 + 20.50*2 + 11.76 + 0) / 7 = 43.97
out=$(mon h200-mig.ini --once --format json)
near "h200: slot 0 graphics" "$out" "$sel"'0) | .metrics.gpu_util_pct.value' 85
near "h200: slot 0 DRAM" "$out" "$sel"'0) | .metrics.mem_util_pct.value' 60
near "h200: slot 1 SM" "$out" "$sel"'1) | .metrics.sm_util_pct.value' 18.40
near "h200: slot 2 graphics" "$out" "$sel"'2) | .metrics.gpu_util_pct.value' 11.76
jeq "h200: idle slot 4 reads 0 from GPM (a reading, not a default)" "$out" \
    "$sel"'4) | .metrics.gpu_util_pct | [.value, .source]' '[0,"gpm"]'
near "h200: parent graphics" "$out" '.devices[0].metrics.gpu_util_pct.value' 43.97
jeq "h200: parent SM from GPM" "$out" '.devices[0].metrics.sm_util_pct.source' '"gpm"'

# h200-mig-595: driver 595 samples compute instances; GI 1 has two CIs
# (slots 0 and 1): their own graphics values, a shared (GI-level) DRAM value.
out=$(mon h200-mig-595.ini --once --format json)
jeq "595: CI-level graphics, no scope" "$out" "[($sel"'0)), ('"$sel"'1)) | .metrics.gpu_util_pct | [.source, .scope]] | unique' '[["gpm",null]]'
jeq "595: two CIs have different graphics values" "$out" "[($sel"'0)), ('"$sel"'1)) | .metrics.gpu_util_pct.value] | unique | length' '2'
jeq "595: DRAM is per GPU instance" "$out" "[($sel"'0)), ('"$sel"'1)) | .metrics.mem_util_pct | [.source, .scope]] | unique' '[["gpm","gpu_instance"]]'
jeq "595: the two CIs share one DRAM value" "$out" "[($sel"'0)), ('"$sel"'1)) | .metrics.mem_util_pct.value] | unique | length' '1'

# h100-sxm (no MIG): NVML's own utilisation stays direct, SM from GPM, a
# NaN metric and a failed one are none with the reason, NVLink in bytes/s.
out=$(mon h100-sxm.ini --once --format json)
jeq "h100 sxm: GPU util stays direct" "$out" '.devices[0].metrics.gpu_util_pct.source' '"direct"'
jeq "h100 sxm: SM util from GPM" "$out" '.devices[0].metrics.sm_util_pct.source' '"gpm"'
jeq "h100 sxm: NaN metric is none" "$out" '.devices[0].metrics.imma_tensor_util_pct | [.value, .source, .reason]' '[null,"none","GPM returned NaN"]'
jeq "h100 sxm: failed metric is none" "$out" '.devices[0].metrics.fp64_util_pct | [.value, .source, .reason]' '[null,"none","NVML_ERROR_NOT_SUPPORTED"]'
jeq "h100 sxm: NVLink TX from GPM, bytes/s" "$out" '.devices[0].metrics.nvlink_tx_bytes_per_s | [.source, .value > 1000000]' '["gpm",true]'

# Ampere: no GPM, no estimate from anything else.
out=$(mon dgx-a100-8x7.ini --once --format json)
jeq "dgx: MIG util none with the Ampere reason" "$out" \
    '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct | [.value, .source, (.reason | startswith("needs Hopper or later (GPM) or DCGM profiling"))]] | unique' '[[null,"none",true]]'
jeq "dgx: GPM metrics none with the Ampere reason" "$out" \
    '[.devices[].metrics.sm_occupancy_pct.reason] | unique' '["needs Hopper or later (GPM) or DCGM profiling"]'
eq "dgx: the helper left by itself (nothing to sample)" "$(helpers)" 0

# --gpm off: no helper, the reason says so.
out=$(mon h200-mig.ini --once --format json --gpm off)
jeq "--gpm off: reason" "$out" "$sel"'0) | .metrics.gpu_util_pct.reason' '"GPM off (--gpm off)"'
err=$(mon h200-mig.ini --once --gpm sometimes 2>&1); rc=$?
eq "--gpm bad value: exit 2" "$rc" 2
contains "--gpm bad value: message" "$err" "--gpm sometimes: expected auto, on, off or helper"

# A driver that corrupts the NVML session after GPM calls (the seed's 535
# report): the helper notices; auto switches GPM off for that GPU with the
# reason, and the monitor's own VRAM readings are exact either way.
ref=$(mon h100-pcie-mig-535-gpm-corrupts.ini --once --format json --gpm off)
out=$(mon h100-pcie-mig-535-gpm-corrupts.ini --once --format json)
jeq "corrupts, auto: GPM off with the reason" "$out" \
    "$sel"'0) | .metrics.gpu_util_pct.reason | startswith("GPM off for this GPU: after GPM calls the driver failed memory reads")' 'true'
eq "corrupts, auto: MIG VRAM exact" "$(printf '%s' "$out" | jq -c '[.devices[].metrics.memory_used_bytes.value]')" \
    "$(printf '%s' "$ref" | jq -c '[.devices[].metrics.memory_used_bytes.value]')"
# The MIG-enabled parent says both why NVML has no figure and why GPM
# has none, not only the first (the cause was on its MIG rows alone).
jeq "corrupts, auto: the parent says why GPM is off too" "$out" \
    '.devices[0].metrics | [.gpu_util_pct.reason, .mem_util_pct.reason] | map(startswith("NVML does not report utilisation while MIG mode is enabled (NVML_ERROR_NOT_SUPPORTED); GPM off for this GPU: after GPM calls")) ' '[true,true]'
jeq "--gpm off: the parent names the option" "$ref" \
    '.devices[0].metrics.gpu_util_pct.reason' '"NVML does not report utilisation while MIG mode is enabled (NVML_ERROR_NOT_SUPPORTED); GPM off (--gpm off)"'
out=$(mon gpm-hang.ini --once --format json)
jeq "gpm-hang: the parent names the stalled GPM call" "$out" \
    '.devices[0].metrics.gpu_util_pct.reason' '"NVML does not report utilisation while MIG mode is enabled (NVML_ERROR_NOT_SUPPORTED); GPM helper stalled in nvmlGpmMigSampleGet; restarting it"'
out=$(mon dgx-a100-8x7.ini --once --format json)
jeq "A100 MIG: the parent names what would measure it" "$out" \
    '.devices[0].metrics.gpu_util_pct.reason' '"NVML does not report utilisation while MIG mode is enabled (NVML_ERROR_NOT_SUPPORTED); needs Hopper or later (GPM) or DCGM profiling"'
out=$(mon h100-pcie-mig-535-gpm-corrupts.ini --once --format json --gpm on)
jeq "corrupts, --gpm on: GPM values flow" "$out" \
    '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.source] | unique' '["gpm"]'
jeq "corrupts, --gpm on: the fault is noted" "$out" \
    "$sel"'0) | .metrics.gpu_util_pct.reason | contains("kept by --gpm on")' 'true'
eq "corrupts, --gpm on: MIG VRAM exact" "$(printf '%s' "$out" | jq -c '[.devices[].metrics.memory_used_bytes.value]')" \
    "$(printf '%s' "$ref" | jq -c '[.devices[].metrics.memory_used_bytes.value]')"
jeq "corrupts: MIG VRAM is direct" "$out" '[.devices[] | select(.kind=="mig") | .metrics.memory_used_bytes.source] | unique' '["direct"]'

# The helper's GPM samples (the seed leaked and double-freed them when MIG
# instances came and went): an H200 whose GI 13 goes and GI 14 comes 1.5 s
# after the helper's NVML starts (the simulator's clock runs here), recorded
# for 3 s. The simulator counts the helper's allocations and frees
# (MIGMON_SIM_GPM_STATS); at the end every sample was freed once: the whole
# GPU, GI 1, GI 13 and 14 and, until this driver's first answer says it
# cannot sample them, the two compute instances, two samples each. The
# monitor asks the helper to leave before the thread that started it ends,
# so the last frees happen too.
rm -f "$TMP/gpm.stats"
MIGMON_SIM_SCENARIO="$MIGMON_SRC/tests/fixtures/scenarios/h200-gpm-reconfig.ini" MIGMON_SIM_GPM_STATS="$TMP/gpm.stats" \
    "$MIGMON_BIN" record --nvml-path "$MIGMON_SIM_LIB" -i 200 -n 15 --gpm helper -o "$TMP/gpm-reconfig.jsonl" </dev/null
rc=$?
eq "GPM across a MIG change: exit 0" "$rc" 0
eq "GPM across a MIG change: GI 14 has GPM values at the end" \
    "$(tail -1 "$TMP/gpm-reconfig.jsonl" | jq -c '[.devices[] | select(.kind=="mig") | [.gpu_instance_id, .metrics.gpu_util_pct.source]]')" \
    '[[1,"gpm"],[14,"gpm"]]'
eq "GPM across a MIG change: every sample freed once" "$(cat "$TMP/gpm.stats")" "live 0 allocs 12 frees 12 bad 0"
eq "GPM across a MIG change: no helper left" "$(helpers)" 0
