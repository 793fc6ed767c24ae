# shellcheck shell=bash
# The health counters in `--once --format json` on the shipped scenarios:
# a pending row remap (h100-sxm.ini, MIG off), NVLink CRC errors and PCIe
# replays rising on two DGX GPUs (dgx-a100-8x7.ini, MIG on), violation
# time and replays carried by every MIG device (h200-mig.ini), and what
# NVML does not report: retired pages on Ampere and later, remapped rows
# while MIG is on, NVLink on a PCIe board (h100-pcie-mig-535.ini).

# hm JSON FILTER: a device's health metric as [value, source] (jq -c)
hm() { printf '%s' "$1" | jq -c "$2 | [.value, .source]"; }

# --- H100 SXM, MIG off: two rows remapped, a third at t = 30 pending a reset ---
out=$(SIM_TIME=100 mon h100-sxm.ini --once --format json); rc=$?
eq "h100-sxm: exit 0" "$rc" 0
jeq "h100-sxm: remapped rows and the pending remap" "$out" \
    '.devices[0].metrics | [.remapped_rows_correctable, .remapped_rows_uncorrectable, .row_remap_pending, .row_remap_failure] | map([.value, .source])' \
    '[[3,"direct"],[0,"direct"],[1,"direct"],[0,"direct"]]'
out=$(SIM_TIME=20 mon h100-sxm.ini --once --format json)
jeq "h100-sxm before t = 30: two rows, nothing pending" "$out" \
    '.devices[0].metrics | [.remapped_rows_correctable.value, .row_remap_pending.value]' '[2,0]'
jeq "h100-sxm: retired pages not on Hopper, and why" "$out" \
    '.devices[0].metrics.retired_pages_sbe | [.value, .source, .reason]' \
    '[null,"none","Ampere and later remap rows instead of retiring pages (NVML_ERROR_NOT_SUPPORTED)"]'
jeq "h100-sxm: 18 NVLink links up, no errors" "$out" \
    '.devices[0].metrics | [.nvlink_links_up.value, .nvlink_crc_errors.value, .nvlink_replay_errors.value, .nvlink_recovery_errors.value]' \
    '[18,0,0,0]'
# the byte counters are the GPM NVLink rates' integral over [0, 20]: TX
# wave(120000, 30000, 30) gives 2614859.17 MiB, RX wave(118000, 30000, 30, 5)
# 2360000 MiB; each in whole KiB (2677615793 + 2416640000), x 1024
jeq "h100-sxm: NVLink bytes, read directly" "$out" \
    '.devices[0].metrics.nvlink_data_bytes | [.value, .source]' '[5216517932032,"direct"]'
jeq "h100-sxm: memory temperature and reserved memory" "$out" \
    '.devices[0].metrics | [.memory_temp_c.source, .memory_reserved_bytes.value]' '["direct",614465536]'

# --- DGX A100, MIG on: GPU 2's NVLink CRC errors and replays, GPU 6's PCIe replays ---
out=$(SIM_TIME=100 mon dgx-a100-8x7.ini --once --format json); rc=$?
eq "dgx: exit 0" "$rc" 0
jeq "dgx: GPU 2's NVLink errors, over its 12 links" "$out" \
    '.devices[] | select(.kind=="gpu" and .index==2) | .metrics | [.nvlink_links_up.value, .nvlink_crc_errors.value, .nvlink_replay_errors.value, .nvlink_crc_errors.source]' \
    '[12,50,10,"direct"]'
jeq "dgx: GPU 6's PCIe replays" "$out" \
    '.devices[] | select(.kind=="gpu" and .index==6) | .metrics.pcie_replay_total | [.value, .source]' '[29,"direct"]'
jeq "dgx: the other GPUs have none" "$out" \
    '[.devices[] | select(.kind=="gpu" and .index!=2) | .metrics.nvlink_crc_errors.value] | unique' '[0]'
jeq "dgx: GPU 2's instances carry its NVLink errors" "$out" \
    '[.devices[] | select(.kind=="mig" and .index==2) | [.metrics.nvlink_crc_errors.value, .metrics.nvlink_crc_errors.source, .metrics.nvlink_crc_errors.scope]] | unique' \
    '[[50,"direct","parent"]]'
jeq "dgx: GPU 6's instances carry its replays" "$out" \
    '[.devices[] | select(.kind=="mig" and .index==6) | .metrics.pcie_replay_total.value] | [length, unique]' '[7,[29]]'
jeq "dgx: no remapped rows while MIG is on, with the reason" "$out" \
    '[.devices[] | .metrics.remapped_rows_correctable | [.value, .reason]] | unique' \
    '[[null,"NVML does not report remapped rows while MIG mode is enabled (NVML_ERROR_NOT_SUPPORTED)"]]'
out=$(SIM_TIME=20 mon dgx-a100-8x7.ini --once --format json)
jeq "dgx at t = 20: the counters rose since" "$out" \
    '[(.devices[] | select(.kind=="gpu" and .index==2) | .metrics.nvlink_crc_errors.value), (.devices[] | select(.kind=="gpu" and .index==6) | .metrics.pcie_replay_total.value)]' \
    '[10,9]'

# --- H200 in MIG mode: the power cap's violation time, two replays at t = 60 ---
out=$(SIM_TIME=100 mon h200-mig.ini --once --format json); rc=$?
eq "h200: exit 0" "$rc" 0
jeq "h200: every device the GPU's violation time and replays" "$out" \
    '[.devices[] | [.metrics.throttle_power_s.value, .metrics.pcie_replay_total.value, .metrics.throttle_thermal_s.value]] | [length, unique]' \
    '[5,[[30,2,0]]]'
jeq "h200: on the MIG devices as the parent's" "$out" \
    '[.devices[] | select(.kind=="mig") | .metrics.throttle_power_s | [.source, .scope]] | unique' '[["direct","parent"]]'
jeq "h200: reserved memory, the parent's and the instances' own" "$out" \
    '[.devices[] | .metrics.memory_reserved_bytes | [.value, .source]]' \
    '[[1184890880,"direct"],[0,"direct"],[0,"direct"],[0,"direct"],[0,"direct"]]'
out=$(SIM_TIME=50 mon h200-mig.ini --once --format json)
jeq "h200 at t = 50: 10 s held down, no replay yet" "$out" \
    '.devices[0].metrics | [.throttle_power_s.value, .pcie_replay_total.value]' '[10,0]'

# --- H100 PCIe in MIG mode: a board without NVLink ---
out=$(mon h100-pcie-mig-535.ini --once --format json); rc=$?
eq "h100-pcie: exit 0" "$rc" 0
nvl='no NVLink on this GPU (nvmlDeviceGetNvLinkState: NVML_ERROR_NOT_SUPPORTED)'
jeq "h100-pcie: NVLink none with the reason, never 0" "$out" \
    '[.devices[] | .metrics | (.nvlink_links_up, .nvlink_crc_errors, .nvlink_data_bytes) | [.value, .source, .reason]] | unique' \
    "[[null,\"none\",\"$nvl\"]]"
eq "h100-pcie: PCIe replays read" "$(hm "$out" '.devices[0].metrics.pcie_replay_total')" '[0,"direct"]'
jeq "h100-pcie: the unprivileged parent's reserved memory is refused" "$out" \
    '.devices[0].metrics.memory_reserved_bytes | [.value, (.reason | test("NVML_ERROR_NO_PERMISSION"))]' '[null,true]'
jeq "h100-pcie: the instances' own reserved memory" "$out" \
    '[.devices[] | select(.kind=="mig") | .metrics.memory_reserved_bytes.source] | unique' '["direct"]'
