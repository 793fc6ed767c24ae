# shellcheck shell=bash
# GPU processes through the binary: attribution on MIG (own lists, the parent
# fallback, unattributed), the JSON shape, null for what is unknown, --top,
# and the table's process section. /proc facts come from the fixture tree
# tests/fixtures/proc/gpu-host (--proc-root), whose PIDs match the scenarios.
PR="$MIGMON_SRC/tests/fixtures/proc/gpu-host"
out=$(mon h100-pcie-mig-535.ini --once --format json --proc-root "$PR"); rc=$?
eq "h100 exit 0" "$rc" 0
jeq "h100: each process on its MIG device" "$out" \
    '[.devices[] | select(.kind=="mig") | [.mig_index, .gpu_instance_id, [.processes[] | .pid, .gpu_instance_id]]]' \
    '[[0,2,[4101,2]],[1,3,[4187,3]],[3,9,[4230,9]]]'
jeq "h100: parent lists none, counts all" "$out" '.devices[0] | [(.processes | length), .process_count.value]' '[0,3]'
jeq "h100: no PID twice" "$out" '[.devices[].processes[].pid] | (length == (unique | length))' 'true'
jeq "h100: NOT_AVAILABLE memory is null" "$out" '.devices[] | select(.mig_index==3) | .processes[0].memory_bytes' 'null'
jeq "h100: process fields" "$out" '.devices[1].processes[0] | keys' \
    '["carried","command","compute_instance_id","container","cpu_pct","dec_util_pct","enc_util_pct","gpu_instance_id","local_pid","mem_util_pct","memory_bytes","name","pid","rss_bytes","sm_util_pct","type","unattributed","user"]'
jeq "h100: /proc facts" "$out" '.devices[1].processes[0] | [.name, .user, .type, .local_pid, .container]' \
    '["python3","root","C",4101,"docker:4f9a1c2b3d5e"]'
jeq "h100: no MIG per-process util (null, never 0)" "$out" '[.devices[].processes[] | .sm_util_pct] | unique' '[null]'
# --once looks at the processes it lists a second time, a moment later: the
# fixture's counters do not move, so each one measures 0 %
jeq "h100: --once's second look, counters unchanged: 0 %" "$out" '[.devices[].processes[] | .cpu_pct] | unique' '[0]'

out=$(mon dgx-a100-8x7.ini --once --format json --proc-root "$PR")
jeq "dgx: three processes, each on its slice" "$out" \
    '[.devices[] | select(.processes | length > 0) | [.index, .mig_index, .processes[].pid]]' \
    '[[0,0,20100],[3,5,20135],[7,6,20176]]'
jeq "dgx: GPU counts" "$out" '[.devices[] | select(.kind=="gpu") | .process_count.value]' '[1,0,0,1,0,0,0,1]'

out=$(SIM_TIME=30 mon mig-reconfig.ini --once --format json --proc-root "$PR")
jeq "reconfig: slot 0 from the parent list, C+G merged" "$out" \
    '.devices[] | select(.mig_index==0) | [.processes[] | [.pid, .type]]' '[[6100,"C"],[6150,"C+G"]]'
jeq "reconfig: count says where it came from" "$out" \
    '.devices[] | select(.mig_index==0) | .process_count.reason | contains("parent")' 'true'

out=$(mon mig-unattributed.ini --once --format json --proc-root "$PR")
jeq "unattributed: once, on the parent" "$out" \
    '[.devices[] | [.mig_index, [.processes[] | [.pid, .unattributed]]]]' \
    '[[null,[[4187,true]]],[0,[[4101,false]]],[1,[]],[3,[[4230,false]]]]'
jeq "unattributed: the slice's count is unknown, not 0" "$out" '.devices[2].process_count | [.value, .source]' '[null,"none"]'

out=$(SIM_TIME=30 mon process-churn.ini --once --format json --proc-root "$PR" --top 3)
jeq "--top 3 keeps the 3 largest, counts all" "$out" '.devices[0] | [[.processes[].pid], .process_count.value]' '[[8100,8300,8150],6]'
out=$(SIM_TIME=30 mon process-churn.ini --once --format json --proc-root "$PR" --top 0)
jeq "--top 0: all, N/A memory last" "$out" '[.devices[0].processes[] | [.pid, .memory_bytes != null]]' \
    '[[8100,true],[8300,true],[8150,true],[8200,true],[9999,true],[1450,false]]'
jeq "per-process SM % on a full GPU" "$out" '[.devices[0].processes[] | select(.pid==8100 or .pid==8300) | .sm_util_pct]' '[40,70]'
jeq "no fake zero: every none metric is null" "$out" '[.. | objects | select(.source? == "none") | .value] | unique' '[null]'

out=$(SIM_TIME=21 mon faults.ini --once --format json --proc-root "$PR")
jeq "failed list, nothing to carry in --once: null count with reason" "$out" \
    '.devices[0] | [.process_count.value, .process_count.reason, (.processes | length)]' '[null,"NVML_ERROR_NOT_SUPPORTED",0]'

out=$(mon h100-pcie-mig-535.ini --once --format json --proc-root "$MIGMON_SRC/tests/fixtures/proc/ns-own")
jeq "own PID namespace: host PIDs not visible, no wrong names" "$out" \
    '[.devices[].processes[] | [.local_pid, .name, .command]] | unique' '[[null,null,null]]'

tab=$(mon mig-unattributed.ini --once --format table --proc-root "$PR"); rc=$?
eq "table exit 0" "$rc" 0
contains "table: process header" "$tab" "COMMAND"
contains "table: unattributed marked" "$tab" "(unattributed)"
row=$(printf '%s\n' "$tab" | grep ' 4230 ')
contains "table: N/A memory" "$row" "N/A"
contains "table: command line" "$row" "bash batch.sh --epochs 3"
contains "table: unknown GI shown as ?" "$tab" "MIG 2g.20gb GI ? CI"

# The per-driver lists (24-byte "_v2" on 450.66, 24-byte "_v3" on 535.129,
# 32-byte "_v3" on 535.86) all decode to the same processes; the 16-byte v1
# entries are read in tests/unit/test_procs.c.
for v in drv-450 drv-535 drv-535.86; do
    out=$(MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/mig-reconfig.ini" MIGMON_SIM_TIME=30 \
        "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_DIR/$v/libnvidia-ml.so.1" --once --format json --proc-root "$PR")
    jeq "$v: processes decoded with its stride" "$out" \
        '[.devices[] | [.mig_index, [.processes[] | [.pid, .type, .memory_bytes, .gpu_instance_id]]]]' \
        '[[null,[]],[0,[[6100,"C",20971520000,1],[6150,"C+G",3145728000,1]]],[1,[[6200,"C",6291456000,5]]]]'
done

# --once's second look on live processes (the host's /proc): one spinning and
# one asleep, made GPU processes of the simulated A100.
ctl="$TMP/once-cpu.ctl"
sh -c 'while :; do :; done' &
spin=$!
sleep 60 &
idle=$!
printf '%s 0 1000\n%s 0 500\n' "$spin" "$idle" >"$ctl"
out=$(MIGMON_SIM_PROC_FILE="$ctl" mon a100-sxm4-80gb.ini --once --format json)
tab=$(MIGMON_SIM_PROC_FILE="$ctl" mon a100-sxm4-80gb.ini --once)
kill "$spin" "$idle"
wait "$spin" "$idle" 2>/dev/null
jeq "--once: a sleeping process measures 0 % CPU" "$out" \
    "[.devices[0].processes[] | select(.pid == $idle) | [.cpu_pct, .command]]" '[[0,"sleep 60"]]'
jeq "--once: a spinning process measures 20-110 % CPU" "$out" \
    "[.devices[0].processes[] | select(.pid == $spin) | .cpu_pct | . > 20 and . <= 110]" '[true]'
jeq "--once: processes not on this host stay null" "$out" \
    '[.devices[0].processes[] | select(.command == null) | .cpu_pct] | unique' '[null]'
row=$(printf '%s\n' "$tab" | grep " $idle ")
contains "--once table: the sleeping process's CPU %" "$row" " 0.0 "
