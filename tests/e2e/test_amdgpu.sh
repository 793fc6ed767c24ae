# shellcheck shell=bash
# The amdgpu backend on the fixture trees (tests/fixtures/sysfs, written by
# gen.py): JSON values equal to the files, partitions as child devices
# with their own activity, the table, Prometheus (promtool), a stored
# screen, fdinfo processes on their partitions, a malformed gpu_metrics,
# and NVIDIA's simulator beside an AMD tree in one snapshot.
FX="$MIGMON_SRC/tests/fixtures/sysfs"
PROCFX="$MIGMON_SRC/tests/fixtures/proc/amd-cpx"
amd() { # amd TREE ARGS...
    local t=$1
    shift
    "$MIGMON_BIN" --backend amdgpu --sysfs-root "$FX/$t" --proc-root "$PROCFX" "$@"
}
f() { tr -d '\n' <"$FX/$1"; }

# --- MI250X: two GCDs, two PCI GPUs, gpu_metrics v1.3 ---
j=$(amd mi250x --once --format json)
D0=mi250x/devices/pci0000:00/0000:29:00.0
D1=mi250x/devices/pci0000:00/0000:2c:00.0
jeq "mi250x: two AMD GPUs" "$j" '[.devices[] | [.kind, .vendor, .pci_bus_id]]' \
    '[["gpu","amd","0000:29:00.0"],["gpu","amd","0000:2c:00.0"]]'
jeq "mi250x: name and uuid from product_name, unique_id" "$j" '.devices[0] | [.name, .uuid]' \
    "[\"$(f $D0/product_name)\",\"AMD-$(f $D0/unique_id)\"]"
jeq "mi250x: GCD 0 busy = gpu_busy_percent" "$j" '.devices[0].metrics.gpu_util_pct.value' "$(f $D0/gpu_busy_percent)"
jeq "mi250x: GCD 1 busy = gpu_busy_percent" "$j" '.devices[1].metrics.gpu_util_pct.value' "$(f $D1/gpu_busy_percent)"
jeq "mi250x: mem busy" "$j" '.devices[1].metrics.mem_util_pct.value' "$(f $D1/mem_busy_percent)"
jeq "mi250x: VRAM used/total = mem_info_vram_*" "$j" '.devices[1].metrics | [.memory_used_bytes.value, .memory_total_bytes.value]' \
    "[$(f $D1/mem_info_vram_used),$(f $D1/mem_info_vram_total)]"
jeq "mi250x: edge temperature (temp1, °C)" "$j" '.devices[0].metrics.temperature_c.value' 51
jeq "mi250x: power1_average and power1_cap in W" "$j" '.devices[0].metrics | [.power_w.value, .power_limit_w.value]' '[300,560]'
# amdgpu has no Xid events and this tree no health counter or slowdown
# threshold: nothing the health rules read is read, so the verdict is
# unknown, not ok
jeq "mi250x: no Xid count, verdict unknown" "$j" \
    '[.devices[] | [.metrics.xid_errors_total.source, .health.verdict]] | unique' '[["none","unknown"]]'
jeq "mi250x: clocks from the * line of pp_dpm_sclk/mclk" "$j" '.devices[1].metrics | [.clock_graphics_mhz.value, .clock_mem_mhz.value]' '[1600,1600]'
jeq "mi250x: PCIe gen 4 x16 from current_link_*" "$j" '.devices[0].metrics | [.pcie_gen.value, .pcie_width.value]' '[4,16]'
jeq "mi250x: no energy (v1.3 has no documented unit), with the file in the reason" "$j" \
    '.devices[0].metrics.energy_j.reason | endswith("gpu_metrics: energy_accumulator'"'"'s unit is not documented before v1.4")' true
jeq "mi250x: no partitions" "$j" '[.devices[] | select(.kind == "mig")] | length' 0

# --- MI300X SPX/NPS1: one device, the mode as its profile ---
j=$(amd mi300x-spx --once --format json)
jeq "mi300x spx: one GPU, no children (SPX has one partition)" "$j" '[.devices[] | .kind]' '["gpu"]'
jeq "mi300x spx: profile SPX/NPS1" "$j" '.devices[0].profile' '"SPX/NPS1"'
jeq "mi300x spx: junction stands in for the hidden edge sensor" "$j" '.devices[0].metrics.temperature_c.value' 57
jeq "mi300x spx: power1_input" "$j" '.devices[0].metrics.power_w.value' 412
jeq "mi300x spx: energy from gpu_metrics v1.6 (2^-16 J)" "$j" '.devices[0].metrics.energy_j.value' 1000000
jeq "mi300x spx: mem_busy_percent" "$j" '.devices[0].metrics.mem_util_pct.value' 17
jeq "mi300x spx: HBM temperature from hwmon temp3 (mem)" "$j" '.devices[0].metrics.memory_temp_c.value' 49
jeq "mi300x spx: no available_memory_partition (before 6.13): null with the path" "$j" \
    '.devices[0].partition_modes | [.compute, .compute_available, .memory, .memory_available, (.memory_available_reason | endswith("0000:0c:00.0/available_memory_partition: No such file or directory"))]' \
    '["SPX",["SPX","DPX","QPX","CPX"],"NPS1",null,true]'
jeq "mi300x spx: GTT used/total = mem_info_gtt_*" "$j" '.devices[0].metrics | [.gtt_used_bytes, .gtt_total_bytes] | map([.value, .source])' \
    "[[$(f mi300x-spx/devices/pci0000:00/0000:0c:00.0/mem_info_gtt_used),\"direct\"],[68719476736,\"direct\"]]"

# --- MI300X CPX/NPS4: eight partitions as children, their own activity ---
j=$(amd mi300x-cpx --once --format json)
jeq "mi300x cpx: a GPU and 8 partitions" "$j" '[.devices[] | .kind] | group_by(.) | map([.[0], length])' '[["gpu",1],["mig",8]]'
jeq "mi300x cpx: partitions' activity from xcp_stats gfx_busy_inst" "$j" \
    '[.devices[] | select(.kind == "mig") | .metrics.gpu_util_pct.value]' '[10,20,30,40,50,60,70,80]'
jeq "mi300x cpx: partitions' VRAM from KFD mem_banks" "$j" \
    '[.devices[] | select(.kind == "mig") | .metrics.memory_total_bytes.value] | unique' '[25769803776]'
jeq "mi300x cpx: partition identity" "$j" '.devices[3] | [.vendor, .profile, .gpu_instance_id, .parent_uuid, .uuid]' \
    '["amd","CPX/NPS4",2,"AMD-4f1c2d3e5a6b7c80","AMD-4f1c2d3e5a6b7c80-P2"]'
jeq "mi300x cpx: the GPU's VRAM is the whole device's" "$j" '.devices[0].metrics.memory_total_bytes.value' 205822885888
jeq "mi300x cpx: the partition's temperature is its GPU's" "$j" '.devices[3].metrics.temperature_c.value' 57

# --- fdinfo processes on their partitions ---
jeq "fdinfo: processes on partitions 0, 2, 5 (render minors 128, 130, 133)" "$j" \
    '[.devices[] | select(.kind == "mig") | {p: .gpu_instance_id, n: [.processes[]?.pid]} | select(.n | length > 0)]' \
    '[{"p":0,"n":[7003]},{"p":2,"n":[7001]},{"p":5,"n":[7002]}]'
jeq "fdinfo: drm-memory-vram (KiB) in bytes" "$j" '[.devices[3].processes[0].memory_bytes]' '[4294967296]'
# a partition's VRAM in use: none, with the reason, though its processes
# are listed (their sum is not the partition's use: docs/decisions.md)
PART_VRAM_WHY="the kernel reports VRAM in use per GPU only; a sum over the partition's visible processes (listed with their own VRAM) would not be its use"
jeq "fdinfo: partition VRAM in use is none, with the reason, where it has processes" "$j" \
    '.devices[3].metrics.memory_used_bytes | [.value, .source, .reason]' "[null,\"none\",\"$PART_VRAM_WHY\"]"
jeq "fdinfo: ... and where it has none (not 0)" "$j" \
    '[.devices[] | select(.kind == "mig") | .metrics.memory_used_bytes | [.value, .source]] | unique' '[[null,"none"]]'
jeq "fdinfo: one read gives no GPU % (it needs two)" "$j" '.devices[3].processes[0].sm_util_pct' null

jeq "mi300x cpx: the modes it can be switched to (available_*_partition)" "$j" '.devices[0].partition_modes' \
    '{"compute":"CPX","compute_available":["SPX","DPX","QPX","CPX"],"memory":"NPS4","memory_available":["NPS1","NPS4"]}'
jeq "mi300x cpx: a partition has no modes of its own" "$j" '.devices[1] | has("partition_modes")' false
jeq "mi300x cpx: a partition's GTT is its GPU's" "$j" '.devices[3].metrics.gtt_used_bytes | [.value, .scope]' '[3145728,"parent"]'
# a GTT file missing: none with its path, the other one still read
cp -a "$FX/mi250x" "$TMP/mi250x-nogtt"
rm "$TMP/mi250x-nogtt/devices/pci0000:00/0000:2c:00.0/mem_info_gtt_used"
j=$("$MIGMON_BIN" --backend amdgpu --sysfs-root "$TMP/mi250x-nogtt" --proc-root "$PROCFX" --once --format json)
jeq "no mem_info_gtt_used: none with the path and the error" "$j" \
    '.devices[1].metrics.gtt_used_bytes | [.value, .source, (.reason | endswith("0000:2c:00.0/mem_info_gtt_used: No such file or directory"))]' \
    '[null,"none",true]'
jeq "... its total still read, GCD 0's GTT in use too" "$j" '[.devices[1].metrics.gtt_total_bytes.value, .devices[0].metrics.gtt_used_bytes.value]' \
    '[68719476736,3145728]'
j=$(MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/h200-mig.ini" "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" --backend nvml --once --format json)
jeq "NVIDIA: no GTT, with the reason" "$j" '.devices[0].metrics.gtt_used_bytes | [.value, .reason]' \
    '[null,"GTT is amdgpu'"'"'s: NVIDIA GPUs have none"]'

# --- throttle reasons from two reads of gpu_metrics' residency counters ---
j=$(amd mi300x-cpx --once --format json)
jeq "throttle: one read gives none yet, with the reason" "$j" '.devices[0] | [.throttle_reasons, .throttle_reasons_reason]' \
    '[null,"gpu_metrics throttle residencies: first read (the reasons need two)"]'
jeq "throttle: a partition has its GPU's" "$j" '.devices[4] | [.throttle_reasons, .throttle_reasons_reason]' \
    '[null,"gpu_metrics throttle residencies: first read (the reasons need two)"]'
jsl=$(amd mi300x-cpx record -n 2 -i 100 -f jsonl -o - | jq -c 'select(.devices) | .devices[0]' | tail -1)
jeq "throttle: the second read of an unchanged table: none, from the counters" "$jsl" \
    '[.throttle_reasons, .throttle_reasons_source]' '[[],"gpu_metrics residency counters"]'
j1=$(amd mi250x --once --format json)
jeq "throttle: v1.3 (MI250X) has no residencies: null, the file and why" "$j1" \
    '.devices[0] | [.throttle_reasons, (.throttle_reasons_reason | endswith("0000:29:00.0/gpu_metrics: no throttle residencies before format 1.6"))]' '[null,true]'
# profile: the command swaps in the same table with ppt_residency_acc 300
# ticks on (gen.py): the power limit held the clocks while it ran
cp -a "$FX/mi300x-cpx" "$TMP/cpx-thr"
"$MIGMON_BIN" profile --backend amdgpu --sysfs-root "$TMP/cpx-thr" --proc-root "$PROCFX" -f json \
    -o "$TMP/thr.json" -- sh -c "sleep 0.3; cp '$FX/mi300x-cpx-ppt.gpu_metrics' \
        '$TMP/cpx-thr/devices/pci0000:00/0000:0c:00.0/gpu_metrics'; sleep 0.3"
jeq "throttle: PPT residency grew during the command: SW power cap in its report" "$(cat "$TMP/thr.json")" \
    '.devices[0].throttle_reasons' '["SW power cap"]'

# --- per-process GPU % from two fdinfo reads, end to end: in a copy of the
# fixture /proc, PID 7001's fdinfo is rewritten every few ms (a new file
# renamed over it) with drm-engine-gfx as half the wall clock of that
# moment (busy 50% of the time); PID 7002's and 7003's counters stay (0%) ---
cp -a "$PROCFX" "$TMP/amdproc2"
fdi="$TMP/amdproc2/7001/fdinfo/5"
head=$(grep -v '^drm-engine-gfx' "$PROCFX/7001/fdinfo/5")
(
    t0=${EPOCHREALTIME/./}
    while :; do # a value a few ms old, up to ~100 ms on a loaded machine: within ±5 % of 2 s
        now=${EPOCHREALTIME/./}
        printf '%s\ndrm-engine-gfx:\t%d ns\n' "$head" $(((now - t0) * 500 + 250000000)) >"$fdi.new"
        mv -f "$fdi.new" "$fdi"
    done
) 2>/dev/null &
wpid=$!
jl=$("$MIGMON_BIN" --backend amdgpu --sysfs-root "$FX/mi300x-cpx" --proc-root "$TMP/amdproc2" \
    record -n 2 -i 2000 -f jsonl -o - | jq -c 'select(.devices)')
kill "$wpid"
wait "$wpid" 2>/dev/null
first=$(head -1 <<<"$jl")
last=$(tail -1 <<<"$jl")
jeq "fdinfo GPU %: the first read has none, with the reason" "$first" \
    '[.devices[] | .processes[]? | select(.pid == 7001) | .sm_util_pct]' '[null]'
jeq "fdinfo GPU %: drm-engine-gfx at half the wall clock reads 50% (±5) the second time" "$last" \
    '[.devices[] | .processes[]? | select(.pid == 7001) | .sm_util_pct | (. >= 45 and . <= 55)]' '[true]'
jeq "fdinfo GPU %: ... on partition 2, source direct" "$last" \
    '[.devices[] | select(.processes[]?.pid == 7001) | .gpu_instance_id]' '[2]'
jeq "fdinfo GPU %: counters that did not move read 0%, not null" "$last" \
    '[.devices[] | .processes[]? | select(.pid == 7002 or .pid == 7003) | [.pid, .sm_util_pct]] | sort' \
    '[[7002,0],[7003,0]]'
t=$(COLUMNS=100 "$MIGMON_BIN" --backend amdgpu --sysfs-root "$FX/mi300x-cpx" --proc-root "$PROCFX" --once --format table)
contains "fdinfo GPU %: the table's SM% of a first read is N/A" "$t" "0/2        7001 C+G     4096MiB   N/A"

# --- RX 7900: consumer, no FRU name (named from the PCI id), fan ---
j=$(amd rx7900 --once --format json)
jeq "rx7900: name from the PCI id, uuid from the bus id (no unique_id)" "$j" '.devices[0] | [.name, .uuid]' \
    '["AMD Radeon RX 7900 XT/XTX","AMD-PCI-0000:03:00.0"]'
jeq "rx7900: fan from pwm1 (51/255)" "$j" '.devices[0].metrics.fan_pct.value' 20
jeq "rx7900: no partitions" "$j" '.devices | length' 1
jeq "rx7900: no partition modes (null)" "$j" '.devices[0] | [has("partition_modes"), .partition_modes]' '[true,null]'
j=$(MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/h200-mig.ini" "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" --backend nvml --once --format json)
jeq "NVIDIA: no partition_modes member" "$j" '[.devices[] | has("partition_modes")] | unique' '[false]'


# --- a truncated gpu_metrics: none with a reason, sysfs values stay ---
j=$(amd rx7900-truncated --once --format json)
jeq "truncated gpu_metrics: energy none, reason names the file" "$j" \
    '.devices[0].metrics.energy_j | [.value, (.reason | test("rx7900-truncated/devices/pci0000:00/0000:03:00.0/gpu_metrics: gpu_metrics truncated"))]' \
    '[null,true]'
jeq "truncated gpu_metrics: gpu_busy_percent still read" "$j" '.devices[0].metrics.gpu_util_pct.value' 23

# --- sysfs numbers parsed strictly: a minus sign, trailing garbage, an
# empty file, past 2^64 are none with the file and its text (strtoull made
# "-5" 2^64 - 5: a memory busy of 1.8e19 %); out of range is none too ---
cp -a "$FX/mi300x-spx" "$TMP/amd-nums"
ND="$TMP/amd-nums/devices/pci0000:00/0000:0c:00.0"
rm "$ND/gpu_metrics" # no table to stand in for the files refused
printf -- '-5\n' >"$ND/mem_busy_percent"
printf '250\n' >"$ND/gpu_busy_percent"
printf '' >"$ND/mem_info_vram_used"
printf '99999999999999999999\n' >"$ND/mem_info_vram_total"
printf '3145728kB\n' >"$ND/mem_info_gtt_used"
printf -- '-750000000\n' >"$ND/hwmon/hwmon0/power1_cap"
printf -- '-3000\n' >"$ND/hwmon/hwmon0/temp2_input" # signed: -3 °C is a reading
printf '0: 500Mhz\n1: -5Mhz *\n' >"$ND/pp_dpm_sclk"
printf '16.0abc GT/s PCIe\n' >"$ND/current_link_speed"
j=$("$MIGMON_BIN" --backend amdgpu --sysfs-root "$TMP/amd-nums" --once --format json)
num_why() { # num_why METRIC: [value, the reason past the device directory]
    jq -c --arg d "$ND/" ".devices[0].metrics.$1 | [.value, (.reason // \"\" | ltrimstr(\$d))]" <<<"$j"
}
eq "strict: mem_busy_percent -5: none, the file and why" "$(num_why mem_util_pct)" \
    '[null,"mem_busy_percent: \"-5\" is negative (only 0 and up)"]'
eq "strict: gpu_busy_percent 250: out of range" "$(num_why gpu_util_pct)" \
    '[null,"gpu_busy_percent: \"250\" is out of range (gpu_util_pct 0 to 100 %)"]'
eq "strict: an empty mem_info_vram_used" "$(num_why memory_used_bytes)" '[null,"mem_info_vram_used: \"\" is empty"]'
eq "strict: mem_info_vram_total past 2^64" "$(num_why memory_total_bytes)" \
    '[null,"mem_info_vram_total: \"99999999999999999999\" is out of range (past 2^64 - 1)"]'
eq "strict: trailing characters" "$(num_why gtt_used_bytes)" '[null,"mem_info_gtt_used: \"3145728kB\" is not a number"]'
eq "strict: a negative hwmon power cap" "$(num_why power_limit_w)" \
    '[null,"hwmon/hwmon0/power1_cap: \"-750000000\" is negative (only 0 and up)"]'
jeq "strict: a negative temperature is a reading (hwmon's are signed)" "$j" '.devices[0].metrics.temperature_c | [.value, .source]' '[-3,"direct"]'
eq "strict: a minus sign in pp_dpm_sclk's current level" "$(num_why clock_graphics_mhz)" \
    '[null,"pp_dpm_sclk: no current level (a line \"N: <MHz>Mhz *\")"]'
eq "strict: a PCIe speed with garbage" "$(num_why pcie_gen)" '[null,"current_link_speed: \"16.0abc GT/s PCIe\" is no PCIe speed"]'
jeq "strict: the files still good are read" "$j" '.devices[0].metrics | [.power_w.value, .memory_temp_c.value, .pcie_width.value, .gtt_total_bytes.value]' \
    '[412,49,16,68719476736]'
page=$("$MIGMON_BIN" --backend amdgpu --sysfs-root "$TMP/amd-nums" --once --format prometheus)
eq "strict: no memory busy series (was 1.84e17)" "$(grep -c '^migmon_gpu_memory_utilization_ratio{' <<<"$page")" 0
eq "strict: promtool clean" "$(printf '%s\n' "$page" | promtool check metrics 2>&1)" ""
# with the table there, the refused file gives way to its value
cp "$FX/mi300x-spx/devices/pci0000:00/0000:0c:00.0/gpu_metrics" "$ND/gpu_metrics"
j=$("$MIGMON_BIN" --backend amdgpu --sysfs-root "$TMP/amd-nums" --once --format json)
jeq "strict: mem_busy_percent refused, the table's average_umc_activity stands in" "$j" \
    '.devices[0].metrics.mem_util_pct | [.value, .source]' '[17,"direct"]'

# --- missing files: none with the path ---
j=$("$MIGMON_BIN" --backend amdgpu --sysfs-root /nonexistent --once --format json)
jeq "no amdgpu tree: no devices, the reason names it" "$j" '.gpu_error' \
    '"amdgpu: no GPU bound to the amdgpu driver under /nonexistent/class/drm"'
out=$("$MIGMON_BIN" --backend cuda --once 2>&1)
eq "--backend cuda: exit 2" "$?" 2
contains "--backend cuda: the message" "$out" '--backend: "cuda" is not a backend (expected nvml, amdgpu)'

# --- table ---
t=$(COLUMNS=80 amd mi300x-cpx --once --format table)
contains "table: the MI300X" "$t" "AMD Instinct MI300X    41%   17%"
contains "table: partition 2" "$t" "0/2    CPX/NPS4 partition 2   30%"
contains "table: partition 2's process" "$t" "0/2        7001"
contains "table: partition 2's VRAM in use N/A, its total read" "$t" "N/A/24576 MiB"
eq "table: no partition reads 0 MiB in use" "$(grep -c ' 0/24576 MiB' <<<"$t")" 0
t=$(COLUMNS=80 amd mi300x-cpx --once --all-processes)
eq "all-processes table: partitions have no GI/CI column" "$(head -1 <<<"$t")" \
    " PID DEV    VRAM SM% CPU%      RSS ELAPSED USER COMMAND"
contains "all-processes table: the process on partition 0/2" "$t" "7001 0/2 4096MiB N/A"

# --- Prometheus: promtool clean, vendor and partition labels ---
for t in mi250x mi300x-spx mi300x-cpx rx7900; do
    page=$(amd $t --once --format prometheus)
    eq "promtool: $t" "$(printf '%s\n' "$page" | promtool check metrics 2>&1)" ""
done
page=$(amd mi300x-cpx --once --format prometheus)
contains "prometheus: partition 5's activity" "$page" \
    'migmon_mig_utilization_ratio{gpu="0",uuid="AMD-4f1c2d3e5a6b7c80",pci_bus_id="0000:0c:00.0",model="AMD Instinct MI300X",vendor="amd",partition_id="5",mig_profile="CPX/NPS4",mig_uuid="AMD-4f1c2d3e5a6b7c80-P5",source="direct"} 0.6'
contains "prometheus: GTT in use (migmon_gpu_gtt_used_bytes)" "$page" \
    'migmon_gpu_gtt_used_bytes{gpu="0",uuid="AMD-4f1c2d3e5a6b7c80",pci_bus_id="0000:0c:00.0",model="AMD Instinct MI300X",vendor="amd",source="direct"} 3145728'
contains "prometheus: GTT total" "$page" \
    'migmon_gpu_gtt_total_bytes{gpu="0",uuid="AMD-4f1c2d3e5a6b7c80",pci_bus_id="0000:0c:00.0",model="AMD Instinct MI300X",vendor="amd",source="direct"} 68719476736'
eq "prometheus: no partition GTT series (GPU-wide)" "$(printf '%s\n' "$page" | grep -c '^migmon_mig_gtt')" 0
contains "prometheus: the GPU has vendor=amd" "$page" \
    'migmon_gpu_power_watts{gpu="0",uuid="AMD-4f1c2d3e5a6b7c80",pci_bus_id="0000:0c:00.0",model="AMD Instinct MI300X",vendor="amd",source="direct"} 412'

# --- the exporter without --export-processes does not walk /proc's fdinfo ---
"$MIGMON_BIN" export --backend amdgpu --sysfs-root "$FX/mi300x-cpx" --proc-root "$PROCFX" \
    --listen 127.0.0.1:0 2>"$TMP/amdexp.err" &
epid=$!
eport=$(export_port "$TMP/amdexp.err")
page=""
for ((i = 0; i < 50; i++)); do
    page=$(curl -s -m 2 "http://127.0.0.1:$eport/metrics")
    case "$page" in *migmon_mig_utilization_ratio*) break ;; esac
    sleep 0.1
done
kill "$epid" 2>/dev/null
wait "$epid" 2>/dev/null
contains "exporter: partitions' activity served" "$page" 'partition_id="2",mig_profile="CPX/NPS4",mig_uuid="AMD-4f1c2d3e5a6b7c80-P2",source="direct"} 0.3'
eq "exporter: no partition memory in use (its processes are not read)" \
    "$(printf '%s\n' "$page" | grep -c '^migmon_mig_memory_used_bytes{')" 0
page=$(amd mi300x-cpx --once --format prometheus --export-processes)
eq "prometheus with processes: still no partition memory in use" \
    "$(printf '%s\n' "$page" | grep -c '^migmon_mig_memory_used_bytes{')" 0
contains "prometheus with processes: the processes' own memory" "$page" 'pid="7001"'
influx=$(amd mi300x-cpx --once --format influx)
eq "influx: no partition memory_fb_used field" "$(grep '^nvidia_smi_mig,' <<<"$influx" | grep -c 'memory_fb_used=')" 0
eq "influx: ... its memory_fb_total is there" "$(grep '^nvidia_smi_mig,' <<<"$influx" | grep -c 'memory_fb_total=24576i')" 8
eq "exporter: partition memory totals served" \
    "$(printf '%s\n' "$page" | grep -c '^migmon_mig_memory_total_bytes{.*vendor="amd"')" 8

# --- both backends in one snapshot: the simulated H200 and the MI250X ---
j=$(MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/h200-mig.ini" MIGMON_SIM_TIME=100 \
    "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" --sysfs-root "$FX/mi250x" --proc-root "$PROCFX" \
    --once --format json)
jeq "both backends: NVIDIA's GPU first, then the two GCDs" "$j" \
    '[.devices[] | select(.kind == "gpu") | [.index, .vendor]]' '[[0,"nvidia"],[1,"amd"],[2,"amd"]]'
jeq "both backends: the H200's MIG instances stay NVIDIA's" "$j" \
    '[.devices[] | select(.kind == "mig") | .vendor] | unique' '["nvidia"]'
j2=$(MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/h200-mig.ini" MIGMON_SIM_TIME=100 \
    "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" --backend nvml --sysfs-root "$FX/mi250x" --once --format json)
j3=$(MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/h200-mig.ini" MIGMON_SIM_TIME=100 \
    "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" --backend nvml,amdgpu --sysfs-root "$FX/mi300x-cpx" \
    --proc-root "$PROCFX" --once --format json)
jeq "--backend nvml,amdgpu: the H200 (MIG) and the MI300X (CPX) in one snapshot" "$j3" \
    '[.devices[] | select(.kind == "gpu") | [.vendor, .name]]' '[["nvidia","NVIDIA H200"],["amd","AMD Instinct MI300X"]]'
jeq "--backend nvml,amdgpu: partitions point at their GPU's position" "$j3" \
    '[.devices[] | select(.vendor == "amd" and .kind == "mig") | .index] | unique' '[1]'
csv=$(amd mi300x-cpx --once --format csv)
eq "csv: a row per device (GPU and 8 partitions)" "$(printf '%s\n' "$csv" | grep -c ',AMD Instinct MI300X,')" 9
col=$(head -1 <<<"$csv" | tr ',' '\n' | grep -nx 'memory_used_bytes' | cut -d: -f1)
eq "csv: the partitions' memory_used_bytes empty (none)" \
    "$(grep ',AMD Instinct MI300X,' <<<"$csv" | tail -8 | cut -d, -f"${col:-1}" | sort -u)" ""
jeq "--backend nvml: no AMD device" "$j2" '[.devices[] | select(.vendor == "amd")] | length' 0

# --- --demo mi300x: a simulated sysfs tree, removed at exit ---
dtmp=$(mktemp -d "$TMP/demo-amd.XXXXXX")
j=$(TMPDIR=$dtmp "$MIGMON_BIN" --demo mi300x --once --format json)
jeq "demo mi300x: the GPU and 8 partitions, all AMD" "$j" \
    '[.devices[] | [.kind, .vendor]] | group_by(.) | map([.[0][0], .[0][1], length])' '[["gpu","amd",1],["mig","amd",8]]'
jeq "demo mi300x: every partition has its activity" "$j" \
    '[.devices[] | select(.kind == "mig") | .metrics.gpu_util_pct.source] | unique' '["direct"]'
jeq "demo mi300x: the name says demo" "$j" '.devices[0].name' '"AMD Instinct MI300X (demo)"'
jeq "demo mi300x: the GPU's VRAM in use read, its partitions' none (not 0)" "$j" \
    '[.devices[0].metrics.memory_used_bytes.source, ([.devices[] | select(.kind == "mig") | .metrics.memory_used_bytes | [.value, .reason]] | unique)]' \
    "[\"direct\",[[null,\"$PART_VRAM_WHY\"]]]"
eq "demo mi300x: its tree is removed at exit" "$(ls -A "$dtmp")" ""

# --- the interactive monitor at 120x40 on the CPX tree ---
if command -v tmux >/dev/null; then
    . "$MIGMON_SRC/tests/e2e/tui_lib.sh"
    tui_start amdcpx 120 40 2 -- --backend amdgpu --sysfs-root "$FX/mi300x-cpx" --proc-root "$PROCFX"
    tui_screen "mi300x cpx at 120x40" amdcpx amdgpu-mi300x-cpx-120x40
    for t in mi250x mi300x-spx rx7900; do
        tui_start "amd-$t" 120 40 2 -- --backend amdgpu --sysfs-root "$FX/$t" --proc-root "$PROCFX"
        tui_screen "$t at 120x40" "amd-$t" "amdgpu-$t-120x40"
    done
    contains "mi300x cpx screen: the modes it can be switched to, in the detail" "$(cat "$MIGMON_SRC/tests/e2e/screens/amdgpu-mi300x-cpx-120x40.txt")" \
        "Compute partition CPX  can switch to SPX, DPX, QPX, CPX"
    contains "mi300x cpx screen: the memory partition, in AMD's words" "$(cat "$MIGMON_SRC/tests/e2e/screens/amdgpu-mi300x-cpx-120x40.txt")" \
        "Memory partition NPS4  can switch to NPS1, NPS4"
    contains "mi300x cpx screen: the GPU's partitions counted, not \"MIG on\"" "$(cat "$MIGMON_SRC/tests/e2e/screens/amdgpu-mi300x-cpx-120x40.txt")" \
        "Name AMD Instinct MI300X  0000:0c:00.0  8 partitions  S/N"
    contains "mi300x cpx screen: throttle reasons from the residencies (none grew)" "$(cat "$MIGMON_SRC/tests/e2e/screens/amdgpu-mi300x-cpx-120x40.txt")" \
        "Throttle none"
    contains "mi300x cpx screen: a partition's VRAM gauge N/A (not its processes' sum)" \
        "$(cat "$MIGMON_SRC/tests/e2e/screens/amdgpu-mi300x-cpx-120x40.txt")" \
        "├ Partition 0/2 CPX/NPS4    ▮▮▮▯▯▯▯▯▯▯   30%      ▯▯▯▯▯▯▯▯▯▯   N/A│"
    contains "mi300x spx screen: no memory list: N/A" "$(cat "$MIGMON_SRC/tests/e2e/screens/amdgpu-mi300x-spx-120x40.txt")" \
        "Memory partition NPS1  can switch to N/A"
    contains "mi300x spx screen: the mode on the GPU's detail" "$(cat "$MIGMON_SRC/tests/e2e/screens/amdgpu-mi300x-spx-120x40.txt")" "AMD Instinct MI300X"
    tui_kill_all
fi

# --- profile -- CMD on the CPX tree: the command writes its own DRM client
# (6 GiB of VRAM on partition 3, render minor 131) into a copy of the
# fixture /proc, under its own PID, and removes it before it ends ---
cp -a "$PROCFX" "$TMP/amdproc"
cat >"$TMP/amdjob.sh" <<'JOB'
#!/bin/sh
P=$1
mkdir -p "$P/$$/fdinfo" "$P/$$/fd"
printf 'drm-driver:\tamdgpu\ndrm-client-id:\t21\ndrm-pdev:\t0000:0c:00.0\ndrm-memory-vram:\t6291456 KiB\ndrm-engine-gfx:\t1000 ns\n' >"$P/$$/fdinfo/9"
ln -s /dev/dri/renderD131 "$P/$$/fd/9"
sleep 0.5
rm -rf "${P:?}/$$"
exit 3
JOB
chmod +x "$TMP/amdjob.sh"
"$MIGMON_BIN" profile --backend amdgpu --sysfs-root "$FX/mi300x-cpx" --proc-root "$TMP/amdproc" \
    -f json -o "$TMP/amdprof.json" -- "$TMP/amdjob.sh" "$TMP/amdproc"
eq "profile amdgpu: the command's exit status" "$?" 3
r=$(cat "$TMP/amdprof.json")
jeq "profile amdgpu: metric and peak = the command's drm-memory-vram (6 GiB)" "$r" \
    '[.gpu_memory_metric, .peak_gpu_memory_bytes]' '["drm_fdinfo_vram",6442450944]'
jeq "profile amdgpu: the GPU and its 8 partitions" "$r" '[.devices[] | .kind] | group_by(.) | map([.[0], length])' \
    '[["gpu",1],["mig",8]]'
jeq "profile amdgpu: partition 3 holds it, the others none of it" "$r" \
    '[.devices[] | select(.kind == "mig") | .peak_gpu_memory_bytes]' '[0,0,0,6442450944,0,0,0,0]'
jeq "profile amdgpu: partition 3's activity (xcp_stats) and profile" "$r" \
    '.devices[4] | [.uuid, .profile, .util_peak_pct, .util_mean_pct, .util_source]' \
    '["AMD-4f1c2d3e5a6b7c80-P3","CPX/NPS4",40,40,"direct"]'
jeq "profile amdgpu: the GPU's activity, peak temperature (junction), energy over a static table" "$r" \
    '.devices[0] | [.name, .util_peak_pct, .temp_peak_c, .energy_joules]' '["AMD Instinct MI300X",41,57,0]'
jeq "profile amdgpu: no events, with the reason" "$r" '[.events, .events_error]' \
    '[null,"no events: only NVML has an event source (amdgpu has none)"]'
out=$("$MIGMON_BIN" profile --backend amdgpu --sysfs-root "$FX/mi300x-cpx" --proc-root "$TMP/amdproc" \
    -- "$TMP/amdjob.sh" "$TMP/amdproc" 2>&1)
contains "profile amdgpu: text report" "$out" "Peak GPU Memory: 6.0 GiB"
contains "profile amdgpu: text metric" "$out" "GPU Memory Metric: drm_fdinfo_vram"
contains "profile amdgpu: text row of partition 3, in AMD's words" "$out" \
    "  Partition 0/3 CPX/NPS4: GPU memory 6.0 GiB, activity (whole partition, all its processes) peak 40% mean 40% (direct)"
out=$("$MIGMON_BIN" profile --backend cuda -- true 2>&1)
eq "profile --backend cuda: exit 2" "$?" 2
contains "profile --backend cuda: the message" "$out" '--backend: "cuda" is not a backend (expected nvml, amdgpu)'
dtmp=$(mktemp -d "$TMP/demo-amdprof.XXXXXX")
TMPDIR=$dtmp "$MIGMON_BIN" profile --demo mi300x -f json -o "$TMP/amddemo.json" -- sleep 0.3
jeq "profile --demo mi300x: the simulated MI300X and its partitions" "$(cat "$TMP/amddemo.json")" \
    '[.devices[] | .kind] | group_by(.) | map([.[0], length])' '[["gpu",1],["mig",8]]'
eq "profile --demo mi300x: its tree is removed at exit" "$(ls -A "$dtmp")" ""
