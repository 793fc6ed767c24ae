# shellcheck shell=bash
# The drivers to come (docs/nvml.md, "Deprecated calls"; docs/health.md):
# a CUDA 14-era driver whose deprecated calls answer NVML_ERROR_DEPRECATED
# still gives every value a 570 driver gives, each naming the replacement
# that read it; the old drivers' outputs name nothing new; a B200 in MIG
# mode through JSON, the table, Prometheus (--compat dcgm) and the TUI; the
# operational events and memory health of a 615 driver, attributed to their
# GPU and instance, with their rules.

# --- CUDA 14: every value of the same GPU on 570.211.01 is read, and equal ---
c14=$(mon cuda14-h100-sxm.ini --once --format json --gpm off); rc=$?
eq "cuda14: exit 0" "$rc" 0
ref="$TMP/drivers-570.ini"
sed -e 's/^driver_version = 610.43.03/driver_version = 570.211.01/' -e '/^cuda_version = /d' \
    "$MIGMON_SRC/sim/scenarios/cuda14-h100-sxm.ini" >"$ref"
r570=$(MIGMON_SIM_SCENARIO="$ref" MIGMON_SIM_TIME=100 "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" \
    --once --format json --gpm off)
vals() { printf '%s' "$1" | jq -c '.devices[0] | [(.metrics | to_entries | map(select(.value.value != null)) | map({key, value: .value.value}) | from_entries), .throttle_reasons]'; }
# the 570 values, each with the CUDA 14 driver's value for the same key
both=$(jq -cn --argjson a "$(vals "$r570")" --argjson b "$(vals "$c14")" \
    '[$a[0] | to_entries[] | select($b[0][.key] != .value) | .key] + (if $a[1] == $b[1] then [] else ["throttle_reasons"] end)')
eq "cuda14: every value the 570 driver gives is read, the same" "$both" "[]"
jeq "cuda14: the values this checks are there" "$r570" \
    '.devices[0] | [.metrics.temperature_c.value, .metrics.throttle_power_s.value, .metrics.throttle_thermal_s.value, .throttle_reasons]' \
    '[62,37,9,["sw_power_cap","sw_thermal"]]'
jeq "cuda14: the temperature names nvmlDeviceGetTemperatureV" "$c14" '.devices[0].metrics.temperature_c | [.source, .reason]' \
    '["direct","read with nvmlDeviceGetTemperatureV (nvmlDeviceGetTemperature is deprecated from CUDA 13.0)"]'
jeq "cuda14: the held-down times name their fields" "$c14" \
    '.devices[0].metrics | [.throttle_power_s.reason, .throttle_thermal_s.reason]' \
    '["read with the field NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP (nvmlDeviceGetViolationStatus is deprecated from CUDA 13.0)","read with the field NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN (nvmlDeviceGetViolationStatus is deprecated from CUDA 13.0)"]'
jeq "cuda14: the throttle reasons name nvmlDeviceGetCurrentClocksEventReasons" "$c14" \
    '.devices[0].throttle_reasons_source' \
    '"read with nvmlDeviceGetCurrentClocksEventReasons (nvmlDeviceGetCurrentClocksThrottleReasons is deprecated from CUDA 13.0)"'
jeq "570: the same values name nothing" "$r570" \
    '.devices[0] | [.metrics.temperature_c.reason, .metrics.throttle_power_s.reason, .throttle_reasons_source]' '[null,null,null]'

# A driver that exports the replacement but refuses it (FUNCTION_NOT_FOUND)
# and has removed the old call (CUDA 14): none, naming both answers.
cat >"$TMP/drivers-refused.ini" <<'EOF'
[system]
driver_version = 610.43.03
cuda_version = 14000
[gpu.0]
name = NVIDIA H100 80GB HBM3
memory_total_mib = 81559
[fault.no-tempv]
function = nvmlDeviceGetTemperatureV
return = FUNCTION_NOT_FOUND
EOF
out=$(MIGMON_SIM_SCENARIO="$TMP/drivers-refused.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" \
    --nvml-path "$MIGMON_SIM_LIB" --once --format json --gpm off)
jeq "both temperature calls refused: none, naming each answer" "$out" \
    '.devices[0].metrics.temperature_c | [.value, .reason]' \
    '[null,"nvmlDeviceGetTemperatureV: NVML_ERROR_FUNCTION_NOT_FOUND; nvmlDeviceGetTemperature: NVML_ERROR_DEPRECATED"]'
# ... and on a 580 driver (the replacement asked first from 580) that
# wants another struct version, the old call answers, naming the refused
# one (a replacement the driver lacks, FUNCTION_NOT_FOUND, is not news: the
# old call is read as it always was)
sed -e 's/^driver_version = 610.43.03/driver_version = 580.82.07/' -e '/^cuda_version/d' \
    -e 's/^return = FUNCTION_NOT_FOUND/return = ARGUMENT_VERSION_MISMATCH/' \
    "$TMP/drivers-refused.ini" >"$TMP/drivers-refused-580.ini"
out=$(MIGMON_SIM_SCENARIO="$TMP/drivers-refused-580.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" \
    --nvml-path "$MIGMON_SIM_LIB" --once --format json --gpm off)
jeq "TemperatureV refused on 580: the old call reads it, and says so" "$out" \
    '.devices[0].metrics.temperature_c | [.value, .source, .reason]' \
    '[40,"direct","read with nvmlDeviceGetTemperature (nvmlDeviceGetTemperatureV: NVML_ERROR_ARGUMENT_VERSION_MISMATCH)"]'
# before 580 the old call is asked first, as it always was: the refusing
# replacement is never asked, nothing is said
sed -e 's/^driver_version = 580.82.07/driver_version = 570.211.01/' \
    "$TMP/drivers-refused-580.ini" >"$TMP/drivers-refused-570.ini"
out=$(MIGMON_SIM_SCENARIO="$TMP/drivers-refused-570.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" \
    --nvml-path "$MIGMON_SIM_LIB" --once --format json --gpm off)
jeq "TemperatureV refusing on 570: the old call, as always" "$out" \
    '.devices[0].metrics.temperature_c | [.value, .source, .reason]' '[40,"direct",null]'

# --- the old drivers: nothing new in their outputs ---
for s in h100-pcie-mig-535.ini a100-sxm4-80gb.ini; do
    out=$(mon "$s" --once --format json --gpm off)
    jeq "$s: no value names an entry point" "$out" \
        '[.devices[] | (.metrics.temperature_c.reason, .metrics.throttle_power_s.reason, .throttle_reasons_source)] | unique' '[null]'
done
out=$(mon h100-pcie-mig-535.ini --once --format json --gpm off)
jeq "535: the new health counters are none with the call they need" "$out" \
    '.devices[0].metrics | [.unrepairable_memory.reason, .bank_remaps_active.reason]' \
    '["needs nvmlDeviceGetUnrepairableMemoryFlag_v1 (drivers 590 and later): NVML_ERROR_FUNCTION_NOT_FOUND","needs nvmlDeviceGetBankRemapperStatus_v1 (drivers 615 and later): NVML_ERROR_FUNCTION_NOT_FOUND"]'

# --- B200 in MIG mode: JSON, table, Prometheus (--compat dcgm) ---
b=$(mon b200-mig.ini --once --format json); rc=$?
eq "b200: exit 0" "$rc" 0
jeq "b200: Blackwell, compute capability 10.0, 7 slices" "$b" \
    '.devices[0] | [.name, .architecture, .compute_capability, .slices_total]' '["NVIDIA B200","Blackwell","10.0",7]'
jeq "b200: the instances' profiles, GI ids and slices" "$b" \
    '[.devices[] | select(.kind=="mig") | [.mig_index, .profile, .gpu_instance_id, .slices]]' \
    '[[0,"3g.90gb",2,3],[1,"2g.45gb",3,2],[2,"1g.23gb",9,1],[4,"1g.23gb",10,1]]'
jeq "b200: each instance's activity from GPM, as on Hopper" "$b" \
    '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.source] | unique' '["gpm"]'
jeq "b200: the 2g.45gb's activity (wave(50, 15, 80, 20) at t = 100)" "$b" \
    '.devices[] | select(.mig_index==1) | .metrics.gpu_util_pct.value' '50'
jeq "b200: the Xid 94 of the 2g.45gb" "$b" \
    '[.devices[] | [.mig_index, .metrics.xid_errors_total.value, .health.verdict]]' \
    '[[null,0,"warning"],[0,0,"ok"],[1,1,"warning"],[2,0,"ok"],[4,0,"ok"]]'
t=$(mon b200-mig.ini --once --format table)
contains "b200 table: the GPU" "$t" "0      NVIDIA B200 "
contains "b200 table: the 3g.90gb" "$t" "0/0      MIG 3g.90gb GI 2 CI 0"
contains "b200 table: the second 1g.23gb" "$t" "0/4      MIG 1g.23gb GI 10 CI 0"
p=$(mon b200-mig.ini --once --format prometheus --compat dcgm)
contains "b200 dcgm: GR_ENGINE_ACTIVE of the 3g.90gb" "$p" \
    'modelName="NVIDIA B200",Hostname='
contains "b200 dcgm: the instance labels" "$p" 'GPU_I_PROFILE="3g.90gb",GPU_I_ID="2"} 0.7'
contains "b200 dcgm: the 2g.45gb's last Xid" "$p" 'GPU_I_PROFILE="2g.45gb",GPU_I_ID="3"} 94'
if command -v promtool >/dev/null; then
    # dcgm-exporter's names break the naming rules promtool lints (camelCase
    # labels, counters without _total): its lint says so, and nothing else
    eq "b200 dcgm: promtool parses the page" \
        "$(printf '%s\n' "$p" | promtool check metrics 2>&1 | grep -v -e "should be written in 'snake_case'" -e 'should have "_total" suffix' -e "should not include type 'counter'")" ""
fi

# --- the TUI at 120x40 ---
if command -v tmux >/dev/null; then
    . "$MIGMON_SRC/tests/e2e/tui_lib.sh"
    P=$(tui_proc b200 two-core)
    tui_start b200 120 40 3 MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/b200-mig.ini" -- \
        --nvml-path "$MIGMON_SIM_LIB" --proc-root "$P"
    tui_keys b200 Down Down
    tui_screen "b200 MIG at 120x40, the 2g.45gb" b200 b200-mig-120x40
    tui_quit b200 q >/dev/null
fi

# --- a 615 driver: operational events and memory health ---
h=$(mon b200-health-615.ini --once --format json); rc=$?
eq "615: exit 0" "$rc" 0
jeq "615: the events, each on its GPU and instance" "$h" \
    '[.events[] | [.type, .gpu, .mig_index, .gi_id, .xid, .severity, .category]]' \
    '[["xid",1,1,3,94,null,null],["operational",1,1,3,94,3,2],["operational",1,0,2,null,2,2],["operational",0,null,null,79,4,1]]'
jeq "615: an operational event is not a second Xid of the same incident" "$h" \
    '[.devices[] | .metrics.xid_errors_total.value]' '[0,0,0,1]'
jeq "615: the verdicts" "$h" \
    '[.devices[] | [.index, .mig_index, .health.verdict, [.health.rules[].name]]]' \
    '[[0,null,"action",["unrepairable-memory","bank-remap-pending","xid-needs-reset","bank-remap-exhausted"]],[1,null,"warning",["xid-contained-ecc","operational-event"]],[1,0,"warning",["operational-event"]],[1,1,"warning",["xid-contained-ecc"]]]'
jeq "615: remapped rows v2 and the bank remapper" "$h" \
    '.devices[0].metrics | [.remapped_rows_correctable.value, .remapped_rows_inactive.value, .bank_remaps_active.value, .bank_remap_pending.value, .bank_remap_no_spare_groups.value, .unrepairable_memory.value]' \
    '[3,2,6,1,1,1]'
h=$(SIM_TIME=30 mon b200-health-615.ini --once --format json)
jeq "615 at t = 30: nothing pending, every spare, memory repairable" "$h" \
    '.devices[0] | [.metrics.bank_remap_pending.value, .metrics.bank_remap_no_spare_groups.value, .metrics.unrepairable_memory.value]' \
    '[0,0,0]'
jeq "615: no remapped rows while MIG is on, with v1's reason" "$h" \
    '.devices[1].metrics.remapped_rows_inactive.reason' \
    '"NVML does not report remapped rows while MIG mode is enabled (NVML_ERROR_NOT_SUPPORTED)"'
p=$(mon b200-health-615.ini --once --format prometheus)
contains "615 prometheus: unrepairable memory" "$p" 'migmon_gpu_unrepairable_memory{'
contains "615 prometheus: the action verdict" "$p" 'state="action"} 1'

# a recording replays the operational events as they were recorded
mon b200-health-615.ini record -o "$TMP/drivers-615.jsonl" --force -n 4 -i 250 --gpm off --dcgm off \
    </dev/null
evs='[.events[] | [.type, .xid, .severity, .category]]'
eq "615 replay: the events' severities and categories as recorded" \
    "$("$MIGMON_BIN" replay "$TMP/drivers-615.jsonl" --once --at -0 | jq -c "$evs")" \
    "$(grep -v '^{"type":' "$TMP/drivers-615.jsonl" | tail -1 | jq -c "$evs")"
jeq "615 replay: the values this compares" "$(tail -1 "$TMP/drivers-615.jsonl")" "$evs" \
    '[["xid",94,null,null],["operational",94,3,2],["operational",null,2,2],["operational",79,4,1]]'

# --- a 615 driver's wait is nvmlEventSetWait_v3: its failure and its stall name it ---
sed 's/^\[system\]$/[events]\nevent_wait = fail\n\n[system]/' \
    "$MIGMON_SRC/sim/scenarios/b200-health-615.ini" >"$TMP/drivers-615-fail.ini"
out=$(MIGMON_SIM_SCENARIO="$TMP/drivers-615-fail.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" \
    --nvml-path "$MIGMON_SIM_LIB" --once --format json); rc=$?
eq "615 wait fails: exit 0" "$rc" 0
jeq "615 wait fails: v3's failure is the reason" "$out" \
    '[.events_error, .devices[0].metrics.xid_errors_total.reason]' \
    '["nvmlEventSetWait_v3 failed; retrying","nvmlEventSetWait_v3 failed; retrying"]'
sed 's/^event_wait = fail$/event_wait = hang/' "$TMP/drivers-615-fail.ini" >"$TMP/drivers-615-hang.ini"
# past the events helper's watchdog (3 s): the stall is named
MIGMON_SIM_SCENARIO="$TMP/drivers-615-hang.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" \
    --nvml-path "$MIGMON_SIM_LIB" record -i 500 -n 10 --force -o "$TMP/drivers-615-hang.jsonl" \
    </dev/null 2>"$TMP/drivers-615-hang.err"
eq "615 wait hangs: record exit 0" "$?" 0
jeq "615 wait hangs: the stall names nvmlEventSetWait_v3" "$(tail -1 "$TMP/drivers-615-hang.jsonl")" \
    '.events_error' '"events helper stalled in nvmlEventSetWait_v3; restarting it"'
