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
