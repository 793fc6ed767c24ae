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

# --once --all-processes: every process once, largest VRAM first, with the
# device it is on; /proc facts from tests/fixtures/proc/h200-node, whose
# uptime (93784.25 s) and start times give the elapsed times.
HN="$MIGMON_SRC/tests/fixtures/proc/h200-node"
out=$(mon h200-mig.ini --once --all-processes --format json --proc-root "$HN" 2>"$TMP/ap.err"); rc=$?
eq "all-processes json: exit 0" "$rc" 0
eq "all-processes json: nothing on stderr when every list was read" "$(cat "$TMP/ap.err")" ""
jeq "all-processes json: one array, the scenario's three processes by VRAM" "$out" \
    '[.[] | [.pid, .device, .gpu_index, .mig_index, .gpu_instance_id, .compute_instance_id, .memory_bytes]]' \
    '[[7001,"0/0",0,0,1,0,39845888000],[7040,"0/1",0,1,5,0,13107200000],[7102,"0/2",0,2,13,0,4299161600]]'
jeq "all-processes json: the MIG device's UUID and its GPU's" "$out" '.[0] | [.device_uuid[0:4], .gpu_uuid]' \
    '["MIG-","GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8"]'
jeq "all-processes json: device_uuid is the MIG device's from the snapshot" "$out" \
    "[.[0].device_uuid] == [$(mon h200-mig.ini --once --format json --proc-root "$HN" | jq '.devices[] | select(.mig_index==0) | .uuid')]" 'true'
jeq "all-processes json: elapsed seconds from uptime and start time" "$out" '[.[].elapsed_s]' '[90000,7384,307]'
jeq "all-processes json: /proc facts" "$out" '[.[] | [.user, .rss_bytes, .container]]' \
    '[["root",10737418240,"docker:9c1e5a7b3d2f"],["4242",3221225472,null],["root",268435456,null]]'
jeq "all-processes json: no SM % on MIG: null, with its source and why" "$out" \
    '[.[] | [.sm_util_pct, .sm_util_source, (.sm_util_reason | test("MIG"))]] | unique' '[[null,"none",true]]'
jeq "all-processes json: the process members of devices[].processes[] and the device's" "$out" '.[0] | keys' \
    '["carried","command","compute_instance_id","container","cpu_pct","dec_util_pct","device","device_uuid","elapsed_s","enc_util_pct","gpu_index","gpu_instance_id","gpu_uuid","local_pid","mem_util_pct","memory_bytes","mig_index","name","pid","rss_bytes","sm_util_pct","sm_util_reason","sm_util_source","type","unattributed","user"]'
tab=$(COLUMNS=80 mon h200-mig.ini --once --all-processes --proc-root "$HN"); rc=$?
eq "all-processes table: exit 0" "$rc" 0
eq "all-processes table: header" "$(printf '%s\n' "$tab" | head -1)" \
    " PID DEV GI/CI     VRAM SM% CPU%      RSS    ELAPSED USER COMMAND"
eq "all-processes table: the vLLM server, cut at 80 columns" "$(printf '%s\n' "$tab" | sed -n 2p)" \
    "7001 0/0   1/0 38000MiB N/A  0.0 10240MiB 1-01:00:00 root python3 -m vllm.ent..."
eq "all-processes table: the embedder, a UID without a name" "$(printf '%s\n' "$tab" | sed -n 3p)" \
    "7040 0/1   5/0 12500MiB N/A  0.0  3072MiB   02:03:04 4242 python3 embed_worke..."
eq "all-processes table: three rows and the key" "$(printf '%s\n' "$tab" | wc -l)" 5
row=$(COLUMNS=200 mon h200-mig.ini --once --all-processes --proc-root "$HN" | grep '^7102 ')
eq "all-processes table at 200 columns: the whole command" "$row" \
    "7102 0/2  13/0  4100MiB N/A  0.0   256MiB      05:07 root /opt/conda/bin/python -m ipykernel_launcher -f /root/.local/share/jupyter/runtime/kernel-1.json"
# a full GPU: per-process SM % where NVML samples it, N/A where not (never 0);
# unknown memory last
out=$(SIM_TIME=30 mon process-churn.ini --once --all-processes -f json --proc-root "$PR")
jeq "all-processes: SM % sampled on a full GPU, null without a sample" "$out" \
    '[.[] | [.pid, .sm_util_pct, .sm_util_source]]' \
    '[[8100,40,"direct"],[8300,70,"direct"],[8150,0,"direct"],[8200,0,"direct"],[9999,null,"none"],[1450,0,"direct"]]'
jeq "all-processes: MIG off: no instance ids, no MIG index" "$out" '[.[] | [.device, .mig_index, .gpu_instance_id]] | unique' '[["0",null,null]]'
# --top given: cut per device, and what was cut is said
out=$(SIM_TIME=30 mon process-churn.ini --once --all-processes -f json --top 2 --proc-root "$PR" 2>"$TMP/ap.err")
jeq "all-processes --top 2: the two largest" "$out" '[.[].pid]' '[8100,8300]'
eq "all-processes --top 2: stderr says how many more" "$(cat "$TMP/ap.err")" \
    "mig-gpu-mon: device 0: 4 more processes (--top)"
contains "all-processes table --top 2: how many more" \
    "$(SIM_TIME=30 mon process-churn.ini --once --all-processes --top 2 --proc-root "$PR")" "0      ... 4 more (--top)"
eq "all-processes table: MIG off: no GI/CI column" \
    "$(SIM_TIME=30 mon process-churn.ini --once --all-processes --top 2 --proc-root "$PR" | head -1)" \
    " PID DEV    VRAM SM% CPU%   RSS ELAPSED USER COMMAND"
# unattributed on the MIG parent: listed once, on the GPU; a list that could
# not be read is said, never shown as no process
out=$(mon mig-unattributed.ini --once --all-processes -f json --proc-root "$PR" 2>"$TMP/ap.err")
jeq "all-processes: unattributed once, on the parent" "$out" '[.[] | [.pid, .device, .unattributed]]' \
    '[[4101,"0/0",false],[4187,"0",true],[4230,"0/3",false]]'
contains "all-processes json: the unread list on stderr" "$(cat "$TMP/ap.err")" \
    "mig-gpu-mon: device 0/1: processes N/A (the MIG device's GPU instance id is unknown"
tab=$(mon mig-unattributed.ini --once --all-processes --proc-root "$PR")
contains "all-processes table: unattributed marked after DEV" "$tab" "4187 0?    3/0"
contains "all-processes table: the unread list" "$tab" "0/1    processes N/A (the MIG device's GPU"
contains "all-processes table: the ? explained" "$tab" "? after DEV = on a MIG GPU, not attributed"
out=$(mon dgx-a100-8x7.ini --once --all-processes -f json --proc-root "$PR")
jeq "all-processes dgx: each slice's process once" "$out" '[.[] | [.pid, .device]] | sort' \
    '[[20100,"0/0"],[20135,"3/5"],[20176,"7/6"]]'
# no GPU, no driver: an empty array; without a driver, why on stderr
out=$(mon no-gpu.ini --once --all-processes -f json 2>"$TMP/ap.err"); rc=$?
eq "all-processes json, no GPU: an empty array, exit 0, nothing to say" "$out $rc $(cat "$TMP/ap.err")" "[] 0 "
eq "all-processes table, no GPU" "$(mon no-gpu.ini --once --all-processes | head -2 | tail -1)" "no GPU processes"
if ldconfig -p 2>/dev/null | grep -q libnvidia-ml; then
    echo "     (a real NVML is installed: the no-driver case of --all-processes not checked)"
else
    mkdir -p "$TMP/ap-empty"
    out=$(LD_LIBRARY_PATH="$TMP/ap-empty" "$MIGMON_BIN" --once --all-processes -f json 2>"$TMP/ap.err"); rc=$?
    eq "all-processes json without a driver: an empty array, exit 0" "$out $rc" "[] 0"
    eq "all-processes json without a driver: why on stderr, one line" "$(cat "$TMP/ap.err")" \
        "mig-gpu-mon: no GPU data: NVML library (libnvidia-ml) not found; is the NVIDIA driver installed? Tried:"
    contains "all-processes table without a driver" "$(LD_LIBRARY_PATH="$TMP/ap-empty" "$MIGMON_BIN" --once \
        --all-processes)" "gpu: N/A"
fi
# refusals
out=$(mon h200-mig.ini --once --all-processes -f csv 2>&1); rc=$?
eq "all-processes -f csv refused" "$out $rc" "mig-gpu-mon: --all-processes --format csv: expected table or json 2"
out=$(mon h200-mig.ini --all-processes 2>&1); rc=$?
eq "all-processes without --once refused" "$out $rc" \
    "mig-gpu-mon: --all-processes needs --once (the interactive monitor's key a shows the same list) 2"
