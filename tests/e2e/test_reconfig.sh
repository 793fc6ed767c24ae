# shellcheck shell=bash
# MIG reconfiguration is seen (the device list is re-enumerated), a GPU that
# falls off the bus is shown with its reason, an inaccessible GPU is listed.
layout() { SIM_TIME=$1 mon mig-reconfig.ini --once --format json | jq -c '[.devices[] | select(.kind=="mig") | [.mig_index, .profile, .gpu_instance_id]]'; }
eq "reconfig t=10" "$(layout 10)" '[[0,"3g.40gb",1],[1,"2g.20gb",5]]'
eq "reconfig t=65 (slot 1 destroyed)" "$(layout 65)" '[[0,"3g.40gb",1]]'
eq "reconfig t=80 (new instances)" "$(layout 80)" '[[0,"3g.40gb",1],[2,"1g.10gb",13],[4,"1g.10gb",11]]'
jeq "privileged parent memory readable" "$(SIM_TIME=10 mon mig-reconfig.ini --once --format json)" \
    '.devices[0].metrics.memory_used_bytes.source' '"direct"'

out=$(SIM_TIME=40 mon faults.ini --once --format json); rc=$?
eq "lost GPU exit 0" "$rc" 0
jeq "healthy GPU still direct" "$out" '.devices[0].metrics.gpu_util_pct.source' '"direct"'
jeq "lost GPU listed with reason" "$out" '.devices[1].metrics.temperature_c | [.value, .reason]' '[null,"NVML_ERROR_GPU_IS_LOST"]'
out=$(mon inaccessible-gpu.ini --once --format json); rc=$?
eq "inaccessible GPU exit 0" "$rc" 0
jeq "inaccessible GPU listed, NO_PERMISSION" "$out" '[.devices[] | select(.metrics.temperature_c.reason == "NVML_ERROR_NO_PERMISSION")] | length >= 1' 'true'
# (seed: one GPU's error stopped the collection of every GPU)
jeq "inaccessible GPU: the other GPU is read in full" "$out" \
    '[.devices[] | [.index] + (.metrics | [.temperature_c.value, .gpu_util_pct.value,
        .memory_total_bytes.value, .temperature_c.reason])]' \
    '[[0,44,35,85899345920,null],[1,null,null,null,"NVML_ERROR_NO_PERMISSION"]]'
# Nothing was read of the GPU that would not open, so nothing is known of
# it in any output: every metric none with the driver's answer (the Xid
# count too: its events cannot be watched), lost and MIG mode unknown, no
# verdict; in Prometheus only its identity and that sampling it is not
# stalled, in InfluxDB no line, in CSV no value, in the table N/A.
jeq "inaccessible GPU: every metric none with the driver's answer" "$out" \
    '.devices[1] | [.metrics[], .process_count] | map([.value, .source, .reason]) | unique' \
    '[[null,"none","NVML_ERROR_NO_PERMISSION"]]'
jeq "inaccessible GPU: lost, MIG mode and verdict unknown" "$out" \
    '.devices[1] | [.lost, .lost_for_s, .mig_enabled, .health]' '[null,null,null,{"verdict":"unknown","rules":[]}]'
jeq "inaccessible GPU: the GPU that opens is watched (0 Xids), and ok" "$out" \
    '.devices[0] | [.lost, .mig_enabled, .metrics.xid_errors_total.value, .health.verdict]' '[false,false,0,"ok"]'
page=$(mon inaccessible-gpu.ini --once --format prometheus --compat dcgm --export-processes)
eq "inaccessible GPU prom: its identity and sampling state only" \
    "$(grep -E '^[A-Za-z_]+\{(gpu="1"|.*UUID="",)' <<<"$page")" \
    'migmon_device_info{gpu="1",uuid="",pci_bus_id="",model="",architecture="",compute_capability=""} 1
migmon_gpu_sampling_stalled{gpu="1",uuid="",pci_bus_id="",model=""} 0'
eq "inaccessible GPU prom: GPU 0 has its 0 Xids and verdict" \
    "$(grep -cE '^(migmon_gpu_xid_errors_total\{gpu="0".*source="direct"\} 0|migmon_gpu_health\{gpu="0".*state="ok"\} 1|DCGM_FI_DEV_XID_ERRORS\{gpu="0".*\} 0)$' <<<"$page")" 3
eq "inaccessible GPU influx: no line" \
    "$(mon inaccessible-gpu.ini --once --format influx | grep -c ',index=1 ')" 0
row=$(mon inaccessible-gpu.ini --once --format csv | awk -F, '$3 == "gpu" && $4 == "1"')
eq "inaccessible GPU csv: no value, lost unknown, every source none" \
    "$(printf '%s\n' "$row" | cut -d, -f5- | tr ',' '\n' | sort | uniq -c | awk '{print $1, $2}' | tr '\n' ';')" \
    '77 ;65 none;'
eq "inaccessible GPU table: N/A, no figure" \
    "$(mon inaccessible-gpu.ini --once --format table | grep -E '^1 +\(unknown\)' | tr -s ' ')" \
    '1 (unknown) N/A N/A N/A N/A N/A N/A'

# A MIG device whose UUID cannot be read (mig-no-uuid.ini: slot 1 until t = 10)
# is listed with what is known and the reason, in JSON and in the table.
out=$(SIM_TIME=0 mon mig-no-uuid.ini --once --format json)
jeq "MIG without UUID listed" "$out" \
    '[.devices[] | select(.kind=="mig") | [.mig_index, .uuid, .uuid_error, .profile, .gpu_instance_id, .metrics.memory_used_bytes.value]]' \
    '[[0,"MIG-428ad7f8-b2e3-218c-dfaf-0e927f51bed8",null,"3g.40gb",2,20971520000],[1,null,"NVML_ERROR_UNKNOWN","2g.20gb",3,5242880000]]'
contains "table says why the UUID is N/A" "$(SIM_TIME=0 mon mig-no-uuid.ini --once --format table)" \
    "UUID N/A: NVML_ERROR_UNKNOWN"
jeq "MIG UUID once readable" "$(SIM_TIME=12 mon mig-no-uuid.ini --once --format json)" \
    '[.devices[] | select(.mig_index==1) | [.uuid, .uuid_error]]' '[["MIG-7c1d2e3f-4a5b-5c6d-8e9f-0a1b2c3d4e5f",null]]'
