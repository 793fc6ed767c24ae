# shellcheck shell=bash
# H100 PCIe, MIG on, driver 535.129.03 (the seed's measured tables): three MIG
# devices with their profiles, per-instance VRAM, utilisation none on every
# MIG device (never 0), parent GPU-wide values valid, parent memory needs
# privilege. With GPM off (per-MIG activity from GPM: test_gpm.sh), what the
# standard NVML calls give.
out=$(mon h100-pcie-mig-535.ini --once --format json --gpm off); rc=$?
eq "exit 0" "$rc" 0
jeq "schema" "$out" '.schema' '1'
jeq "driver" "$out" '.driver_version' '"535.129.03"'
jeq "1 gpu + 3 mig" "$out" '[.devices[].kind]' '["gpu","mig","mig","mig"]'
jeq "profiles" "$out" '[.devices[] | select(.kind=="mig") | .profile] | sort' '["1g.10gb","2g.20gb","3g.40gb"]'
jeq "slices" "$out" '[.devices[] | select(.kind=="mig") | .slices] | sort' '[1,2,3]'
jeq "slices_total from GI profiles is 7" "$out" '[.devices[].slices_total] | unique' '[7]'
parent=$(printf '%s' "$out" | jq -r '.devices[0].uuid')
jeq "MIG parent_uuid" "$out" "[.devices[] | select(.kind==\"mig\") | .parent_uuid] | unique" "[\"$parent\"]"
jeq "MIG uuids" "$out" '[.devices[] | select(.kind=="mig") | .uuid | startswith("MIG-")] | unique' '[true]'
jeq "mig_index set, gpu null" "$out" '[.devices[].mig_index | type] | unique | sort' '["null","number"]'
jeq "GI/CI ids" "$out" '[.devices[] | select(.kind=="mig") | (.gpu_instance_id|type), (.compute_instance_id|type)] | unique' '["number"]'
jeq "per-instance VRAM direct" "$out" '[.devices[] | select(.kind=="mig") | .metrics.memory_used_bytes.source, .metrics.memory_total_bytes.source] | unique' '["direct"]'
jeq "per-instance used <= total" "$out" '[.devices[] | select(.kind=="mig") | .metrics.memory_used_bytes.value <= .metrics.memory_total_bytes.value] | unique' '[true]'
jeq "MIG gpu util none, null, never 0" "$out" '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct | [.value, .source]] | unique' '[[null,"none"]]'
jeq "MIG mem util none" "$out" '[.devices[] | select(.kind=="mig") | .metrics.mem_util_pct.value] | unique' '[null]'
jeq "MIG util reason: GPM is off" "$out" '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.reason] | unique' '["GPM off (--gpm off)"]'
jeq "parent util none: MIG enabled" "$out" '.devices[0].metrics.gpu_util_pct | [.value, .source, (.reason | contains("MIG"))]' '[null,"none",true]'
jeq "parent memory needs privilege" "$out" '.devices[0].metrics.memory_used_bytes | [.value, .source, (.reason | contains("privilege"))]' '[null,"none",true]'
jeq "parent temperature direct" "$out" '.devices[0].metrics.temperature_c | [.source, (.value > 20 and .value < 100)]' '["direct",true]'
jeq "parent power direct, watts" "$out" '.devices[0].metrics.power_w | [.source, (.value > 30 and .value < 400)]' '["direct",true]'
jeq "parent enc util none on MIG-enabled GPU" "$out" '.devices[0].metrics.enc_util_pct.source' '"none"'
jeq "MIG temperature is the parent's" "$out" '[.devices[] | select(.kind=="mig") | .metrics.temperature_c | [.source, .scope]] | unique' '[["direct","parent"]]'
jeq "MIG temperature equals parent" "$out" '[.devices[].metrics.temperature_c.value] | unique | length' '1'
jeq "no fake zero anywhere: every none has null" "$out" '[.. | objects | select(.source? == "none") | .value] | unique' '[null]'
jeq "no power-as-utilisation: util never above 100" "$out" '[.devices[].metrics | .gpu_util_pct.value, .mem_util_pct.value, .sm_util_pct.value | select(. != null and . > 100)]' '[]'
jeq "arch" "$out" '.devices[0].architecture' '"Hopper"'
jeq "compute capability" "$out" '.devices[0].compute_capability' '"9.0"'
jeq "pci bus id shared" "$out" '[.devices[].pci_bus_id] | unique | length' '1'
tab=$(mon h100-pcie-mig-535.ini --once --format table --gpm off); rc=$?
eq "table exit 0" "$rc" 0
contains "table shows the 3g.40gb row" "$tab" "MIG 3g.40gb"
# the parent's own VRAM needs privilege: the row gives its instances' sum,
# marked, and says so; the JSON keeps the parent's VRAM unknown
gpu_row=$(printf '%s\n' "$tab" | grep '^0 ')
contains "table: unprivileged MIG parent's VRAM is its instances' sum" "$gpu_row" "S44515/70400 MiB"
jeq "JSON: the instances' used memory sums to the table's figure" "$out" \
    '[.devices[] | select(.kind=="mig") | .metrics.memory_used_bytes.value] | add / 1048576 | round' '44515'
contains "table: the sum is explained" "$tab" "S before VRAM = the sum of a MIG GPU's instances (its own needs privilege)"
jeq "JSON: the parent's VRAM stays unknown" "$out" '.devices[0].metrics.memory_used_bytes | [.value, .source]' '[null,"none"]'
mig_row=$(printf '%s\n' "$tab" | grep 'MIG 3g.40gb')
contains "table MIG util N/A" "$mig_row" "N/A"
