# shellcheck shell=bash
# A100 (MIG off), H200 (MIG on, 570), DGX 8x7, no GPU.
out=$(mon a100-sxm4-80gb.ini --once --format json); rc=$?
eq "a100 exit 0" "$rc" 0
jeq "a100 one gpu" "$out" '[.devices[].kind]' '["gpu"]'
jeq "a100 mig off" "$out" '.devices[0].mig_enabled' 'false'
jeq "a100 util direct 0..100" "$out" '.devices[0].metrics.gpu_util_pct | [.source, (.value >= 0 and .value <= 100)]' '["direct",true]'
jeq "a100 mem util direct" "$out" '.devices[0].metrics.mem_util_pct.source' '"direct"'
jeq "a100 memory total 80 GiB class" "$out" '.devices[0].metrics.memory_total_bytes.value > 80000000000' 'true'
jeq "a100 used <= total" "$out" '.devices[0].metrics | .memory_used_bytes.value <= .memory_total_bytes.value' 'true'
jeq "a100 clocks" "$out" '.devices[0].metrics | [.clock_graphics_mhz.source, .clock_sm_mhz.source, .clock_mem_mhz.source]' '["direct","direct","direct"]'
jeq "a100 pcie gen/width" "$out" '.devices[0].metrics | [.pcie_gen.value, .pcie_width.value]' '[4,16]'
jeq "a100 ecc on with counts" "$out" '.devices[0].metrics | [.ecc_enabled.value, .ecc_corrected.source, .ecc_uncorrected.source]' '[1,"direct","direct"]'
jeq "a100 thresholds" "$out" '.devices[0].metrics | [.temp_slowdown_c.source, .temp_shutdown_c.source]' '["direct","direct"]'
jeq "a100 energy in joules" "$out" '.devices[0].metrics.energy_j | [.source, .value > 0]' '["direct",true]'
jeq "a100 throttle reasons array" "$out" '.devices[0].throttle_reasons | type' '"array"'
jeq "a100 arch" "$out" '.devices[0] | [.architecture, .compute_capability]' '["Ampere","8.0"]'
jeq "a100 pstate P0..P15" "$out" '.devices[0].metrics.pstate.value | (. >= 0 and . <= 15)' 'true'
jeq "a100 timestamp RFC 3339" "$out" '.timestamp | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$")' 'true'
jeq "a100 elapsed_ns positive" "$out" '.elapsed_ns > 0' 'true'

out=$(mon h200-mig.ini --once --format json); rc=$?
eq "h200 exit 0" "$rc" 0
jeq "h200 driver 570" "$out" '.driver_version | startswith("570.")' 'true'
jeq "h200 has MIG devices" "$out" '[.devices[] | select(.kind=="mig")] | length >= 3' 'true'
jeq "h200 profiles named *.gb" "$out" '[.devices[] | select(.kind=="mig") | .profile | test("^([0-9]c\\.)?[0-9]g\\.[0-9]+gb$")] | unique' '[true]'
jeq "h200 MIG util never 0-faked" "$out" '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct | select(.source=="none") | .value] | unique | map(select(. != null))' '[]'

out=$(mon dgx-a100-8x7.ini --once --format json); rc=$?
eq "dgx exit 0" "$rc" 0
jeq "dgx 8 gpus" "$out" '[.devices[] | select(.kind=="gpu")] | length' '8'
jeq "dgx 56 mig" "$out" '[.devices[] | select(.kind=="mig")] | length' '56'
jeq "dgx all 1g.10gb" "$out" '[.devices[] | select(.kind=="mig") | .profile] | unique' '["1g.10gb"]'
jeq "dgx MIG grouped after their parent" "$out" '[.devices | to_entries[] | select(.value.kind=="mig") | .value.index] == ([.devices[] | select(.kind=="mig") | .index] | sort)' 'true'
jeq "dgx unique uuids" "$out" '[.devices[].uuid] | unique | length' '64'
jeq "dgx Ampere MIG util reason names DCGM" "$out" '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.reason | contains("DCGM")] | unique' '[true]'

out=$(mon no-gpu.ini --once --format json); rc=$?
eq "no-gpu exit 0" "$rc" 0
jeq "no-gpu devices empty, no error" "$out" '[.devices, .gpu_error]' '[[],null]'
tab=$(mon no-gpu.ini --once)
contains "no-gpu table" "$tab" "no NVIDIA GPU found"
# Regression: an empty per-process answer on a MIG handle is not a 0 %.
out=$(mon dgx-a100-8x7.ini --once --format json)
jeq "dgx MIG util never a process-0 from an empty answer" "$out" '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.source] | unique' '["none"]'
