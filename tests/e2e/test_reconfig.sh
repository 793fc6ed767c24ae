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
