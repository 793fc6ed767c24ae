# shellcheck shell=bash
# The fleet view (--prometheus, docs/fleet.md) on a fleet of 100 nodes: a
# real Prometheus holding a synthetic fleet (tests/fleet/synth.py: our own
# exporter's pages from the simulator, replicated per node with unique
# host names and UUIDs and varied values; backfilled with promtool,
# tests/fleet/promfleet.sh). 10 nodes are DGX A100s (8 GPUs x 7 MIG
# instances), the others HGX H100s (8 GPUs); among them two nodes down for
# the last 5 minutes (a DGX and an HGX), two running only dcgm-exporter (a
# DGX and an HGX), one whose MIG layout changed 5 minutes ago
# (mig-reconfig.ini), two reporting the same UUIDs, three whose exporters
# give no node summaries (an older exporter: the fleet view aggregates
# their devices' series), and one more target that was never up.
# --once --format json and the monitor's header are
# compared with the generator's truth file: nodes, GPUs and instances per
# node, every device's utilisation, memory and health, the down nodes,
# dcgm-exporter's nodes, the totals.
# The fleet view's defects of old are checked too: the target never up is
# listed, the reconfigured node lists its layout of now, the duplicated
# UUIDs' node is named in its range query, and --once of 250 DGX nodes
# (about 40 MiB of values) reads every device.
for tool in prometheus promtool curl python3 tmux; do
    if ! command -v "$tool" >/dev/null; then
        bad "$tool is required for the fleet tests (scripts/deps.sh installs it)"
        return 0
    fi
done
# shellcheck source=tests/fleet/promfleet.sh
. "$MIGMON_SRC/tests/fleet/promfleet.sh"
# shellcheck source=tests/e2e/tui_lib.sh
. "$MIGMON_SRC/tests/e2e/tui_lib.sh"
FS="$TMP/fleet-scale"
FS_TRUTH="$FS/truth.json"
fs_synth=(--bin "$MIGMON_BIN" --sim-dir "$MIGMON_SIM_DIR" --src "$MIGMON_SRC")
if ! promfleet_build "$FS" --nodes 100 --dgx 10 --down 2 --dcgm-only 2 --reconfig 1 --dup-uuid 1 \
    --never-up 1 --legacy 3 "${fs_synth[@]}"; then
    bad "the synthetic fleet could not be built"
    return 0
fi
if ! promfleet_start "$FS"; then
    bad "Prometheus did not start on the synthetic fleet"
    return 0
fi
# fs_truth FILTER: jq on the truth file
fs_truth() { jq -c "$1" "$FS_TRUTH"; }
fs_q() { promfleet_query "$1" | jq -r '.data.result[0].value[1] // "none"'; }

# the variants' nodes, named in the checks below
eq "the truth: the variants' nodes" "$(fs_truth '[.nodes[] | select(.down or .never_up or .reconfigured or
    .uuids_of != null or .job == "dcgm") | [.name, .hardware, .job, (if .down then "down" elif .never_up then
    "never up" elif .reconfigured then "reconfigured" elif .uuids_of then "UUIDs of \(.uuids_of)" else "dcgm only" end)]]')" \
    '[["node0005","a100-reconfig","migmon","reconfigured"],["node0010","dgx-a100-8x7","dcgm","dcgm only"],["node0020","dgx-a100-8x7","migmon","down"],["node0037","hgx-h100-8x","migmon","down"],["node0042","hgx-h100-8x","migmon","UUIDs of node0074"],["node0069","hgx-h100-8x","dcgm","dcgm only"],["node0101","hgx-h100-8x","migmon","never up"]]'
eq "the truth: the nodes whose exporters give no node summaries" \
    "$(fs_truth '[.nodes[] | select(.legacy) | .name]')" '["node0015","node0047","node0079"]'

# The fleet as Prometheus holds it: 101 targets, 3 of them not up now;
# the stopped series (the down nodes', the old MIG layout's) are not seen
# at the present (its lookback ends before them), but within the last 10
# minutes
eq "prometheus: targets, and those not up" "$(fs_q 'count(up)') $(fs_q 'count(up == 0)')" "101 3"
eq "prometheus: host names of our exporters' nodes now, and in the last 10 minutes" \
    "$(fs_q 'count(migmon_host_info)') $(fs_q 'count(last_over_time(migmon_host_info[10m]))')" "96 98"
eq "prometheus: the node summaries now, of our exporters' nodes but those 3" \
    "$(fs_q 'count(migmon_node_gpus)')" 93
eq "prometheus: the series of a MIG instance of a DGX, 4 samples 15 s apart" \
    "$(fs_q 'count_over_time(migmon_mig_utilization_ratio{instance="node0030:9400", gpu="3", gpu_instance_id="9"}[5m])')" 4

fleet=$("$MIGMON_BIN" --no-config --prometheus "$PROMFLEET_URL" --once --format json 2>"$FS/once.err")
eq "--once json: exit 0" "$?" 0
jeq "--once json: every node that has devices, by its host name" "$fleet" '[.devices[].node] | unique' \
    "$(fs_truth '[.nodes[] | select(.devices != []) | .name] | sort')"
jeq "--once json: GPUs and MIG instances per node (the reconfigured node aside)" "$fleet" \
    '[.devices | group_by(.node)[] | select(.[0].node != "node0005") |
      [.[0].node, (map(select(.kind == "gpu")) | length), (map(select(.kind == "mig")) | length)]]' \
    "$(fs_truth '[.nodes[] | select(.devices != [] and (.reconfigured | not)) | [.name, .gpus, .migs]] | sort')"
eq "the truth: the fleet's shape" "$(fs_truth '[.targets, .totals.nodes, .totals.gpus, .totals.migs]')" \
    "[101,101,793,563]"

# every device of the up nodes: its identity, utilisation, memory and
# health as the node's last sample wrote them (dcgm-exporter writes no
# health: unknown). A device is found by its node and UUID, a
# dcgm-exporter instance (no UUID) by its GPU's UUID and GI id.
fs_key='(if .uuid then .uuid else "\(.parent_uuid)/\(.gpu_instance_id)" end)'
want=$(fs_truth "[.nodes[] | select(.up) | .name as \$n | .devices[] |
    {k: \"\(\$n) \($fs_key)\", kind, gi: .gpu_instance_id, profile, util: .gpu_util_pct,
     used: .memory_used_bytes, total: .memory_total_bytes, health: (.health // \"unknown\")}]")
got=$(printf '%s' "$fleet" | jq -c "[.devices[] | {k: \"\(.node) \($fs_key)\", kind,
    gi: .gpu_instance_id, profile, util: .metrics.gpu_util_pct.value,
    used: .metrics.memory_used_bytes.value, total: .metrics.memory_total_bytes.value,
    health: .health.verdict}]")
eq "the truth: devices of the up nodes" "$(jq length <<<"$want")" 1284
# the mismatches: a device missing, or a value off by more than 1e-6 (util
# is ratio x 100 on both sides, the JSON writer rounds)
printf '%s' "$want" >"$FS/want.json"
printf '%s' "$got" >"$FS/got.json"
fs_diff=$(jq -n -c --slurpfile w "$FS/want.json" --slurpfile g "$FS/got.json" '
    ($g[0] | map({(.k): .}) | add) as $by |
    def near(a; b): (a == null and b == null) or (a != null and b != null and
        ((a - b) | fabs) <= 1e-6 * ([1, (b | fabs)] | max));
    [$w[0][] | . as $t | $by[$t.k] as $f |
     if $f == null then {missing: $t.k}
     elif [$f.kind, $f.gi, $f.profile, $f.health] != [$t.kind, $t.gi, $t.profile, $t.health] or
          (near($f.util; $t.util) and near($f.used; $t.used) and near($f.total; $t.total) | not)
     then {k: $t.k, want: $t, got: $f} else empty end] | .[:3]')
eq "--once json: every device of the up nodes with its truth's utilisation, memory and health" \
    "$fs_diff" "[]"
jeq "--once json: ... utilisation read for every one of them that has one" "$fleet" \
    '[.devices[] | select(.node_down | not) | select(.metrics.gpu_util_pct.value != null)] | length' \
    "$(jq '[.[] | select(.util != null)] | length' <<<"$want")"

# every up node of our exporters: its figures, from its summary (or, for
# the three without, its devices' series) as the truth's devices give
# them: GPUs, instances, VRAM used of the leaves, their mean utilisation
# (within 0.01 %: the JSON writer rounds), the devices not ok
fs_truth '[.nodes[] | select(.up and .job == "migmon") | (.devices | map(select(.kind == "mig") | .parent_uuid)) as $p |
    (.devices | map(select(.kind == "mig" or ((.uuid as $u | $p | index($u)) | not)))) as $l |
    ($l | map(.gpu_util_pct | select(. != null))) as $u |
    [.name, .gpus, .migs, ($l | map(.memory_used_bytes) | add),
     (.devices | map(select(.health == "warning" or .health == "action")) | length),
     (if $u == [] then null else ($u | add / length) end)]]' >"$FS/want-nodes.json"
printf '%s' "$fleet" | jq -c '[.nodes[] | select(.up and .exporter == "mig-gpu-mon") |
    [.name, .gpus, .mig_devices, .memory_used_bytes, .devices_not_ok, .util_mean_pct]]' >"$FS/got-nodes.json"
eq "--once json: each up node's GPUs, instances, VRAM used, devices not ok and mean utilisation" \
    "$(jq -n -c --slurpfile w "$FS/want-nodes.json" --slurpfile g "$FS/got-nodes.json" '
    ($g[0] | map({(.[0]): .}) | add) as $by |
    [$w[0][] | . as $t | $by[$t[0]] as $f |
     if $f == null then {missing: $t[0]}
     elif $f[0:5] != $t[0:5] or (($f[5] == null) != ($t[5] == null)) or
          ($t[5] != null and (($f[5] - $t[5]) | fabs) > 0.01) then {want: $t, got: $f}
     else empty end] + [if ($g[0] | length) != ($w[0] | length) then {nodes: ($g[0] | length)} else empty end]')" "[]"

# the down nodes: listed from the last 10 minutes, every value none with
# the reason, down for the 5 minutes since their exporter's last sample
jeq "down nodes: their devices listed, down, values none with the reason" "$fleet" \
    '[.devices[] | select(.node == "node0020" or .node == "node0037")] |
     [length, (map(.node_down) | unique), (map(.metrics.gpu_util_pct.value, .metrics.memory_used_bytes.value) | unique),
      (map(.metrics.gpu_util_pct.reason) | unique), (map(.health.verdict) | unique)]' \
    '[72,[true],[null],["the node'"'"'s target is down (up == 0)"],["unknown"]]'
fs_since=$(fs_truth '.nodes[] | select(.name == "node0037") | .last_sample')
jeq "down nodes: down since their exporter's last sample, 300 s before the data's end" "$fleet" \
    "[.devices[] | select(.node == \"node0037\") | .node_down_for_s - (now - $fs_since) | fabs < 30] | unique" '[true]'
jeq "down nodes: no other node is down" "$fleet" \
    '[.devices[] | select(.node_down) | .node] | unique' '["node0020","node0037"]'

# dcgm-exporter's nodes: the DGX's instances without UUIDs, activity from
# DCGM's profiling fields; the HGX's GPUs from DCGM_FI_DEV_GPU_UTIL
jeq "dcgm-only DGX: 8 GPUs, 56 instances without UUIDs, GR_ENGINE_ACTIVE as utilisation" "$fleet" \
    '[.devices[] | select(.node == "node0010")] | [length, ([.[] | select(.kind == "mig") | .uuid] | unique),
      ([.[] | select(.kind == "mig") | .uuid_error] | unique), ([.[] | select(.kind == "mig") | .metrics.gpu_util_pct.source] | unique)]' \
    '[64,[null],["dcgm-exporter does not label MIG UUIDs"],["dcgm"]]'
jeq "dcgm-only HGX: GPU_UTIL as utilisation, FB_USED as memory" "$fleet" \
    '[.devices[] | select(.node == "node0069") | [.metrics.gpu_util_pct.source, .metrics.memory_used_bytes.source]] | unique' \
    '[["direct","direct"]]'

# two nodes with the same UUIDs: each listed with its own values
jeq "same UUIDs on two nodes: both list the 8 GPUs under those UUIDs" "$fleet" \
    '[.devices[] | select(.node == "node0042" or .node == "node0074")] | group_by(.node) |
     [(map([.[].uuid]) | .[0] == .[1]), (map([.[].metrics.gpu_util_pct.value]) | .[0] != .[1]), (.[0] | length)]' \
    '[true,true,8]'

table=$("$MIGMON_BIN" --no-config --prometheus "$PROMFLEET_URL" --once --format table 2>&1)
contains "--once table: a DGX's line" "$table" "node node0030: 8 GPUs, 56 MIGs"
contains "--once table: a down node's line" "$table" "node node0037: 8 GPUs, 0 MIGs  DOWN for "

# the monitor's header: the fleet's totals, every target (the one never up
# among the down), the idle leaves. At -i 5000 (a round of the node
# queries and the devices of the nodes shown gets 90 % of it); the header
# comes from the first round.
fs_header_want() {
    jq -r '.totals | "\(.nodes) \(.down) \(.gpus) \(.migs) \(.idle) \(.vram_used_bytes) \(.vram_total_bytes) \(.not_ok)"' "$FS_TRUTH" |
        awk '{ printf "%d nodes (%d down) %d GPUs %d MIG, %d idle VRAM %.1f/%.1f TiB %d devices not ok\n",
            $1, $2, $3, $4, $5, $6 / 1099511627776, $7 / 1099511627776, $8 }'
}
TUI_WAIT_S=30 tui_start fleet-scale 200 60 2 -- --no-config \
    --proc-root "$(tui_proc fleet-scale two-core)" --prometheus "$PROMFLEET_URL" -i 5000
fs_header=$(tmx capture-pane -p -t fleet-scale | head -1)
eq "the monitor's header: nodes, down, GPUs, MIG instances, idle leaves, VRAM, devices not ok" \
    "$(sed -E 's/^ *mig-gpu-mon +[^ ]+ +//; s/ +GPU health.*//; s/  */ /g' <<<"$fs_header")" \
    "$(fs_header_want)"
# a fleet past FLEET_OPEN_NODES_MAX nodes starts folded: a row per node
eq "the monitor: the nodes folded, a row each" \
    "$(tmx capture-pane -p -t fleet-scale | LC_ALL=C.UTF-8 grep -c '▸ node0')" \
    "$(tmx capture-pane -p -t fleet-scale | LC_ALL=C.UTF-8 grep -c '│.*node0')"
eq "the monitor: q quits" "$(tui_quit fleet-scale q)" 0
tui_kill_all

# ---- the defects of old ----

# A target that was never up has only `up 0`: it is a node, down, named by
# its instance (it has no host name).
fs_never_up() {
    local t
    t=$("$MIGMON_BIN" --no-config --prometheus "$PROMFLEET_URL" --once --format table 2>&1)
    contains "a target never up is listed as a down node" \
        "$(grep -E '^node node0101(:9400)?:' <<<"$t")" "DOWN"
    TUI_WAIT_S=30 tui_start fleet-scale-nu 200 60 2 -- --no-config \
        --proc-root "$(tui_proc fleet-scale-nu two-core)" --prometheus "$PROMFLEET_URL" -i 5000
    contains "... and counted in the header" "$(tmx capture-pane -p -t fleet-scale-nu | head -1)" \
        "101 nodes (3 down)"
    tui_quit fleet-scale-nu q >/dev/null
}
# A node whose MIG layout changed lists the instances it has now, not the
# old layout's (their series stopped 5 minutes ago, within the identity
# queries' 10 minutes).
fs_reconfig() {
    jeq "the reconfigured node lists its current layout" "$fleet" \
        '[.devices[] | select(.node == "node0005")] | [(map(select(.kind == "gpu")) | length),
          ([.[] | select(.kind == "mig") | .gpu_instance_id] | sort)]' \
        "$(fs_truth '.nodes[] | select(.name == "node0005") | [.gpus, ([.devices[] | select(.kind == "mig") | .gpu_instance_id] | sort)]')"
    jeq "... none of the old layout's instances" "$fleet" \
        "$(fs_truth '[.nodes[] | select(.name == "node0005") | .gone_devices[].uuid]') as \$gone |
         [.devices[] | select(.node == \"node0005\" and (.uuid | IN(\$gone[])))] | length" 0
    TUI_WAIT_S=30 tui_start fleet-scale-rc 200 60 2 -- --no-config \
        --proc-root "$(tui_proc fleet-scale-rc two-core)" --prometheus "$PROMFLEET_URL" -i 5000
    contains "the header counts the instances there are" "$(tmx capture-pane -p -t fleet-scale-rc | head -1)" \
        "$(fs_truth '.totals.migs') MIG,"
    tui_quit fleet-scale-rc q >/dev/null
}
# Two targets with the same UUIDs: the charts' range query of the selected
# node's first GPU names that node's instance (it is looked up by UUID
# alone: node0042, listed first, answers for node0074's GPU 0).
fs_dup_uuid() {
    local port="$FS/proxy.port" log="$FS/proxy.log" pid i q=""
    rm -f "$port"
    "$PROMFLEET_PY" "$MIGMON_SRC/tests/fleet/countproxy.py" "$PROMFLEET_URL" "$port" "$log" &
    pid=$!
    for ((i = 0; i < 100; i++)); do [ -s "$port" ] && break; sleep 0.05; done
    TUI_WAIT_S=30 tui_start fleet-scale-dup 200 60 2 -- --no-config \
        --proc-root "$(tui_proc fleet-scale-dup two-core)" --prometheus "http://127.0.0.1:$(cat "$port")" -i 5000
    tui_keys fleet-scale-dup / n o d e 0 0 7 4 Enter
    for ((i = 0; i < 100; i++)); do
        q=$(jq -r 'select(.path == "/api/v1/query_range") | .query' "$log" | tail -1)
        [[ $q == *3c5b7d000074* ]] && break
        sleep 0.1
    done
    contains "node0074's GPU 0 (node0042 has its UUID): the charts' query names node0074" \
        "$q" 'instance="node0074:9400"'
    tui_quit fleet-scale-dup q >/dev/null
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}
# --once past the bound of an answer: 250 DGX nodes (about 40 MiB of
# values, more than one answer may hold: read in pages of nodes) give
# every GPU and instance its utilisation.
fs_once_250() {
    local d="$TMP/fleet-scale-250" j url=$PROMFLEET_URL pid=$PROMFLEET_PID
    promfleet_build "$d" --nodes 250 --dgx 250 --samples 1 --gap 30 "${fs_synth[@]}" || {
        bad "the 250-node fleet could not be built"
        return
    }
    PROMFLEET_PID=
    promfleet_start "$d" 3600 || { bad "Prometheus on 250 nodes"; PROMFLEET_PID=$pid; return; }
    # (--timeout 60: a sanitizer's build reads 16,000 devices slowly)
    j=$("$MIGMON_BIN" --no-config --prometheus "$PROMFLEET_URL" --once --timeout 60 --format json 2>/dev/null)
    jeq "--once of 250 DGX nodes: every GPU and instance with its utilisation" "$j" \
        '[.devices[] | select(.metrics.gpu_util_pct.value != null)] | length' 16000
    promfleet_stop
    rm -rf "$d"
    PROMFLEET_URL=$url PROMFLEET_PID=$pid
}
fs_never_up
fs_reconfig
fs_dup_uuid
fs_once_250
tui_kill_all

promfleet_stop
rm -rf "$FS"
