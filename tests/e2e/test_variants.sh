# shellcheck shell=bash
# Symbol-accurate driver variants: an old library without the versioned
# names still gives every metric through the fallbacks.
lib450="$MIGMON_SIM_DIR/drv-450/libnvidia-ml.so.1"
log="$TMP/v450.log"
out=$(MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/a100-sxm4-80gb.ini" MIGMON_SIM_TIME=100 \
    "$MIGMON_BIN" --once --format json --nvml-path "$lib450" --debug="$log"); rc=$?
eq "drv-450 exit 0" "$rc" 0
jeq "drv-450 reports its driver" "$out" '.driver_version | startswith("450.")' 'true'
contains "drv-450 lacks GetMemoryInfo_v2" "$(cat "$log")" "dlsym nvmlDeviceGetMemoryInfo_v2 -> missing"
contains "drv-450 falls back to GetMemoryInfo v1" "$(cat "$log")" "nvmlDeviceGetMemoryInfo dev=GPU0 rc=0"
jeq "drv-450 memory via v1" "$out" '.devices[0].metrics.memory_used_bytes.source' '"direct"'
contains "drv-450 lacks ClocksEventReasons" "$(cat "$log")" "dlsym nvmlDeviceGetCurrentClocksEventReasons -> missing"
contains "drv-450 uses ThrottleReasons" "$(cat "$log")" "dlsym nvmlDeviceGetCurrentClocksThrottleReasons -> found"
jeq "drv-450 throttle reasons still an array" "$out" '.devices[0].throttle_reasons | type' '"array"'
contains "drv-450 process list falls back to _v2" "$(cat "$log")" "dlsym nvmlDeviceGetComputeRunningProcesses_v2 -> found"
lib535="$MIGMON_SIM_DIR/drv-535/libnvidia-ml.so.1"
out=$(MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/h100-pcie-mig-535.ini" MIGMON_SIM_TIME=100 \
    "$MIGMON_BIN" --once --format json --nvml-path "$lib535"); rc=$?
eq "drv-535 exit 0" "$rc" 0
jeq "drv-535 same MIG layout" "$out" '[.devices[] | select(.kind=="mig") | .profile] | sort' '["1g.10gb","2g.20gb","3g.40gb"]'
