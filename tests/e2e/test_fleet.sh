# shellcheck shell=bash
# The fleet view (--prometheus, docs/fleet.md) on a real Prometheus that
# scrapes three exporters on the simulator: a DGX A100 (dgx-a100-8x7), an
# H200 with MIG (h200-mig, its processes exported) and an H200 whose
# migmon_* series are dropped at scrape time, leaving the --compat dcgm
# series: a node that runs only dcgm-exporter. --once --format json lists
# every node, GPU, MIG instance and process with the values a direct --once
# of the same scenario reads; an AMD MI300X in CPX mode, on a Prometheus of
# its own, gives its GPU and partitions; a target taken down is shown as
# down; the selected device's charts are filled from a range query with
# what Prometheus scraped before the monitor started; a Prometheus stand-in
# that stalls or answers garbage (every query, or only the range query)
# leaves the monitor responsive (q quits within 1 s) with the reason; one
# that fails a query with an error full of terminal controls and invisible
# characters, asked with a password in its URL, has every output clean,
# the query named and the password redacted.
# Everything started here is stopped by PID at the end.
for tool in prometheus curl python3 tmux; do
    if ! command -v "$tool" >/dev/null; then
        bad "$tool is required for the fleet tests (scripts/deps.sh installs it)"
        return 0
    fi
done
# shellcheck source=tests/e2e/tui_lib.sh
. "$MIGMON_SRC/tests/e2e/tui_lib.sh"
FL_PIDS=()
fl_free_port() {
    local p
    for p in $(shuf -i 20000-60000 -n 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
    done
}
# fl_export NAME SCENARIO ARGS...: sets PORT and LAST_PID; FL_PROC: the
# /proc fixture (gpu-host)
fl_export() {
    local name=$1 scen=$2
    shift 2
    MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/$scen" MIGMON_SIM_TIME=100 \
        "$MIGMON_BIN" export --nvml-path "$MIGMON_SIM_LIB" --listen 127.0.0.1:0 -i 250 \
        --proc-root "$MIGMON_SRC/tests/fixtures/proc/${FL_PROC:-gpu-host}" "$@" 2>"$TMP/fl-$name.err" &
    FL_PIDS+=($!)
    LAST_PID=$!
    PORT=$(export_port "$TMP/fl-$name.err")
    [ -n "$PORT" ] || bad "$name: export did not start: $(cat "$TMP/fl-$name.err")"
}
fl_export dgx dgx-a100-8x7.ini
DGX=$PORT
# Kubernetes: a pod holds h200-mig's 3g.71gb instance (GI 1), as the
# kubelet's pod-resources API says (its stand-in, kubelet_server.py); the
# h200 and dcgm exporters label that instance's series with it
FL_PY=/usr/bin/python3
[ -x "$FL_PY" ] || FL_PY=python3
FL_SOCK="$TMP/fl-kubelet.sock"
cat >"$TMP/fl-pods.json" <<'JSON'
[{"name": "llm-0", "namespace": "serving", "containers": [{"name": "vllm", "devices":
  [{"resource": "nvidia.com/mig-3g.71gb", "ids": ["MIG-760076c7-d3b3-392a-4dba-0e98392dab98"]}]}]}]
JSON
"$FL_PY" "$MIGMON_SRC/tests/e2e/kubelet_server.py" "$FL_SOCK" ok "$TMP/fl-pods.json" \
    >"$TMP/fl-kubelet.out" 2>"$TMP/fl-kubelet.err" &
FL_PIDS+=($!)
for ((i = 0; i < 400; i++)); do grep -q ready "$TMP/fl-kubelet.out" 2>/dev/null && break; sleep 0.05; done
grep -q ready "$TMP/fl-kubelet.out" || bad "the kubelet stand-in did not start: $(cat "$TMP/fl-kubelet.err")"
# the processes of h200-mig.ini, with their /proc entries (h200-node)
FL_PROC=h200-node fl_export h200 h200-mig.ini --export-processes --kubelet-socket "$FL_SOCK"
H200=$PORT
H200_PID=$LAST_PID
fl_export dcgm h200-mig.ini --compat dcgm --kubelet-socket "$FL_SOCK"
DCGM=$PORT
PP=$(fl_free_port)
mkdir -p "$TMP/fl-prom"
cat >"$TMP/fl-prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: dgx
    static_configs: [{targets: ["127.0.0.1:$DGX"], labels: {instance: dgx}}]
  - job_name: h200
    static_configs: [{targets: ["127.0.0.1:$H200"], labels: {instance: h200}}]
  - job_name: dcgm
    static_configs: [{targets: ["127.0.0.1:$DCGM"], labels: {instance: dcgm}}]
    metric_relabel_configs:
      - {source_labels: [__name__], regex: "migmon_.*", action: drop}
YML
prometheus --config.file="$TMP/fl-prometheus.yml" --storage.tsdb.path="$TMP/fl-prom" \
    --web.listen-address="127.0.0.1:$PP" --log.level=warn >"$TMP/fl-prometheus.log" 2>&1 &
FL_PIDS+=($!)
PROM_PID=$!
PURL="http://127.0.0.1:$PP"
q() { curl -s -m 5 --data-urlencode "query=$1" "$PURL/api/v1/query"; }
for ((i = 0; i < 300; i++)); do
    [ "$(q 'count(up == 1) + count(DCGM_FI_PROF_GR_ENGINE_ACTIVE{instance="dcgm"}) + count(migmon_mig_utilization_ratio{instance="h200"})' |
        jq -r '.data.result[0].value[1] // empty' 2>/dev/null)" = 11 ] && break
    sleep 0.1
done
eq "prometheus: three targets up, with their series" "$i" "$([ "$i" -lt 300 ] && echo "$i" || echo ready)"
for ((i = 0; i < 300; i++)); do
    [ "$(q 'count(migmon_mig_utilization_ratio{pod="llm-0"}) + count(DCGM_FI_PROF_GR_ENGINE_ACTIVE{pod="llm-0"})' |
        jq -r '.data.result[0].value[1] // empty' 2>/dev/null)" = 2 ] && break
    sleep 0.1
done
eq "prometheus: the pod's labels on the h200 and dcgm instance" "$i" "$([ "$i" -lt 300 ] && echo "$i" || echo ready)"

direct() { MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/$1" MIGMON_SIM_TIME=100 \
    "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" --once --format json --proc-root \
    "$MIGMON_SRC/tests/fixtures/proc/${2:-gpu-host}"; }
DGX_J=$(direct dgx-a100-8x7.ini)
H200_J=$(direct h200-mig.ini)
fleet=$("$MIGMON_BIN" --no-config --prometheus "$PURL" --once --format json 2>"$TMP/fl-once.err")
eq "--prometheus --once json: exit 0" "$?" 0
jeq "fleet: the three nodes, in order" "$fleet" '[.devices[].node] | unique' '["dcgm","dgx","h200"]'
jeq "fleet: GPUs and MIG instances per node" "$fleet" \
    '[.devices | group_by(.node)[] | [.[0].node, (map(select(.kind == "gpu")) | length), (map(select(.kind == "mig")) | length)]]' \
    '[["dcgm",1,4],["dgx",8,56],["h200",1,4]]'
jeq "fleet: no node down" "$fleet" '[.devices[] | select(.node_down)] | length' 0
# identity and values as the direct --once of the same scenario reads them
ident='[.devices[] | [.kind, .index, .uuid, .parent_uuid, .gpu_instance_id, .compute_instance_id, .mig_index, .profile, .metrics.memory_used_bytes.value, .metrics.memory_total_bytes.value]]'
eq "fleet dgx: every GPU and MIG instance with the exporter's identity and memory" \
    "$(printf '%s' "$fleet" | jq -c "[.devices[] | select(.node == \"dgx\")] | {devices: .} | $ident")" \
    "$(printf '%s' "$DGX_J" | jq -c "$ident")"
eq "fleet h200: the same" \
    "$(printf '%s' "$fleet" | jq -c "[.devices[] | select(.node == \"h200\")] | {devices: .} | $ident")" \
    "$(printf '%s' "$H200_J" | jq -c "$ident")"
vals='[.devices[] | [.metrics.gpu_util_pct.value, .metrics.gpu_util_pct.source, .metrics.temperature_c.value, .metrics.power_w.value, .health.verdict]]'
eq "fleet h200: utilisation (GPM per instance), temperature, power and health" \
    "$(printf '%s' "$fleet" | jq -c "[.devices[] | select(.node == \"h200\")] | {devices: .} | $vals")" \
    "$(printf '%s' "$H200_J" | jq -c "$vals")"
jeq "fleet h200: a value the exporter does not write is none, with its reason" "$fleet" \
    '[.devices[] | select(.node == "h200" and .kind == "gpu")][0].metrics.pcie_tx_bytes_per_s | [.value, .reason]' \
    '[null,"not read from Prometheus"]'
# the dcgm-exporter node: identity from its labels, memory in MiB, activity from DCGM
dcgm_want=$(printf '%s' "$H200_J" | jq -c '[.devices[] | [.kind, .uuid // "", .gpu_instance_id, .profile,
    (if .kind == "mig" then (.metrics.memory_used_bytes.value / 1048576 | floor) * 1048576 else null end),
    (if .kind == "mig" then .metrics.gpu_util_pct.value else null end)]]')
eq "fleet dcgm: the GPU and its four instances, FB_USED and GR_ENGINE_ACTIVE" \
    "$(printf '%s' "$fleet" | jq -c '[.devices[] | select(.node == "dcgm") | [.kind, (if .kind == "mig" then "" else .uuid end), .gpu_instance_id, .profile,
        (if .kind == "mig" then .metrics.memory_used_bytes.value else null end),
        (if .kind == "mig" then .metrics.gpu_util_pct.value else null end)]]' |
        jq -c --argjson w "$dcgm_want" '[.[] | .[5] |= (if . == null then null else (. * 1e6 | round) end)]')" \
    "$(jq -n -c --argjson w "$dcgm_want" '$w | map(if .[0] == "mig" then .[1] = "" else . end) | [.[] | .[5] |= (if . == null then null else (. * 1e6 | round) end)]')"
jeq "fleet dcgm: sources (dcgm for activity) and the GPU's temperature" "$fleet" \
    '[.devices[] | select(.node == "dcgm")] | [.[1].metrics.gpu_util_pct.source, .[0].metrics.temperature_c.source, .[1].uuid, .[1].uuid_error]' \
    '["dcgm","direct",null,"dcgm-exporter does not label MIG UUIDs"]'
jeq "fleet: the pod that holds an instance, from ours and dcgm-exporter's labels; none elsewhere" "$fleet" \
    '[.devices[] | select(.pod != null) | [.node, .gpu_instance_id, .pod]] ,
     ([.devices[] | select(.pod == null)] | length)' \
    "$(printf '%s\n' '[["dcgm",1,{"name":"llm-0","namespace":"serving","container":"vllm"}],["h200",1,{"name":"llm-0","namespace":"serving","container":"vllm"}]]' 72)"
table=$("$MIGMON_BIN" --no-config --prometheus "$PURL" --once --format table 2>&1)
contains "--once table: a line per node" "$table" "node dgx: 8 GPUs, 56 MIGs"
contains "--once table: the dcgm node" "$table" "node dcgm: 1 GPU, 4 MIGs"
# the other formats name each device's node (its GPUs and instances apart
# from the same GPU on another node) and its pod
page=$("$MIGMON_BIN" --no-config --prometheus "$PURL" --once --format prometheus 2>&1)
eq "--once prometheus: promtool finds nothing wrong" "$(printf '%s\n' "$page" | promtool check metrics 2>&1)" ""
eq "--once prometheus: no series twice (h200 and dcgm scrape the same simulated GPU)" \
    "$(grep -v '^#' <<<"$page" | sed 's/ [^ ]*$//' | sort | uniq -d | head -3)" ""
eq "--once prometheus: the GPU temperature of each node's GPUs" \
    "$(grep '^migmon_gpu_temperature_celsius{' <<<"$page" | grep -o 'node="[a-z0-9]*"' | sort | uniq -c | tr -s ' ')" \
    "$(printf '%s\n' ' 1 node="dcgm"' ' 8 node="dgx"' ' 1 node="h200"')"
eq "--once prometheus: the pod on its instance on both nodes" \
    "$(grep '^migmon_mig_info{.*pod="llm-0",namespace="serving",container="vllm"' <<<"$page" | grep -o 'node="[a-z0-9]*"' | tr '\n' ' ')" \
    'node="dcgm" node="h200" '
influx=$("$MIGMON_BIN" --no-config --prometheus "$PURL" --once --format influx 2>&1)
eq "--once influx: every GPU and MIG line tagged with its node" \
    "$(grep '^nvidia_smi\(_mig\)\?,' <<<"$influx" | grep -o ',node=[a-z0-9]*' | sort | uniq -c | tr -s ' ')" \
    "$(printf '%s\n' ' 5 ,node=dcgm' ' 64 ,node=dgx' ' 5 ,node=h200')"
eq "--once influx: the processes too" "$(grep -c '^nvidia_smi_process,.*,node=h200,' <<<"$influx")" 3
csv=$("$MIGMON_BIN" --no-config --prometheus "$PURL" --once --format csv 2>&1)
eq "--once csv: the node column, last" \
    "$(awk -F, 'NR == 1 { print $NF; next } { n[$NF]++ } END { for (k in n) print k, n[k] }' <<<"$csv" | sort)" \
    "$(printf '%s\n' 'dcgm 5' 'dgx 64' 'h200 5' 'node')"

# processes: h200's exporter writes them; each is listed on its device and
# node with the values of the exporter's own --once (same /proc fixture)
H200P_J=$(direct h200-mig.ini h200-node)
procs='[.devices[] | select(.processes | length > 0) | [.kind, .index, .gpu_instance_id, .compute_instance_id,
    [.processes[] | [.pid, .name, .memory_bytes, .rss_bytes, .container, .gpu_instance_id, .compute_instance_id, .unattributed]]]]'
want=$(printf '%s' "$H200P_J" | jq -c "$procs")
eq "fleet h200: its three processes, on their instances, with the exporter's values" \
    "$(printf '%s' "$fleet" | jq -c "[.devices[] | select(.node == \"h200\")] | {devices: .} | $procs")" "$want"
eq "fleet h200: ... the ones its own --once lists (7001 7040 7102)" \
    "$(printf '%s' "$want" | jq -c '[.[][4][][0]] | sort')" '[7001,7040,7102]'
jeq "fleet h200: a PID is its node's: no local PID, no command or user from this host" "$fleet" \
    '[.devices[] | .processes[] | [.local_pid, .command, .user]] | unique' '[[null,null,null]]'
jeq "fleet h200: the process counts as its exporter gives them" "$fleet" \
    '[.devices[] | select(.node == "h200" and .kind == "mig") | .process_count.value]' \
    "$(printf '%s' "$H200P_J" | jq -c '[.devices[] | select(.kind == "mig") | .process_count.value]')"
jeq "fleet dgx: its exporter writes no processes: a count with no list is none, with the reason" "$fleet" \
    '[.devices[] | select(.node == "dgx") | .process_count | select(.value == null) | .reason] | unique' \
    '["its node'"'"'s exporter writes no processes (mig-gpu-mon export --export-processes)"]'
jeq "fleet dgx: ... and a device with no process keeps its 0" "$fleet" \
    '[.devices[] | select(.node == "dgx") | .process_count.value | select(. == 0)] | length > 0' true
allp=$("$MIGMON_BIN" --no-config --prometheus "$PURL" --once --all-processes --format json 2>/dev/null)
jeq "--all-processes json: each process with its node and device, its values' sources" "$allp" \
    '[.[] | [.node, .device, .pid, .sm_util_source, .sm_util_reason]] | sort_by(.[2])' \
    '[["h200","0/0",7001,"none","not read from Prometheus"],["h200","0/1",7040,"none","not read from Prometheus"],["h200","0/2",7102,"none","not read from Prometheus"]]'
allt=$("$MIGMON_BIN" --no-config --prometheus "$PURL" --once --all-processes --format table 2>&1)
contains "--all-processes table: DEV names the node" "$allt" "h200:0/0"
eq "--once table: the processes under their node's line" \
    "$(printf '%s\n' "$table" | sed -n '/^ID .*PID/,$p' | grep -E '^(node |0/[0-9] +7[0-9]{3} )' | sed -E 's/^(0\/[0-9]) +([0-9]+) .*/\1 \2/')" \
    "$(printf '%s\n' "node dcgm:" "node dgx:" "node h200:" "0/0 7001" "0/1 7040" "0/2 7102")"

# The monitor's charts of the selected device come from a range query
# over the chart's window: at -i 100 the 300 points of a chart span 30 s,
# of which a 200-column screen shows 9.8 s. Prometheus has scraped the
# simulators longer than that before a screen is taken (13 scrapes a
# second apart), so every column shown holds a point from before the
# monitor started, whose test mode reads only two samples.
for ((i = 0; i < 300; i++)); do
    [ "$(q 'min(count_over_time(up[1m]))' | jq -r '.data.result[0].value[1] // 0' 2>/dev/null)" -ge 13 ] && break
    sleep 0.1
done
eq "prometheus: 13 scrapes of each target" "$i" "$([ "$i" -lt 300 ] && echo "$i" || echo ready)"
# fl_past NAME: until the selected device's charts show the past the range
# query gave (the caption under the first chart with data)
fl_past() {
    local j
    for ((j = 0; j < 100; j++)); do
        tmx capture-pane -p -t "$1" | grep -q ' s from Prometheus ' && return 0
        sleep 0.1
    done
    bad "$1: no chart filled from Prometheus within 10 s"
}
# fl_wait NAME TEXT: until the screen shows TEXT (a filter goes to
# Prometheus: the monitor takes a sample when its round has come)
fl_wait() {
    local j
    for ((j = 0; j < 100; j++)); do
        tmx capture-pane -p -t "$1" | grep -qF -- "$2" && return 0
        sleep 0.1
    done
    bad "$1: '$2' not on the screen within 10 s"
}

# the monitor on the fleet: devices grouped by node, the fleet's totals in
# the header (values fixed: the simulators' clocks stand still)
for size in 200x60 80x24; do
    name="fleet-$size" wide=
    [ "$size" = 200x60 ] && wide=1
    TUI_WAIT_S=15 tui_start "$name" "${size%x*}" "${size#*x}" 2 -- --no-config \
        --proc-root "$(tui_proc "$name" two-core)" --prometheus "$PURL" -i 100
    fl_past "$name"
    tui_screen "fleet TUI $size" "$name" "fleet-$size"
    screen=$(tmx capture-pane -p -t "$name")
    contains "fleet TUI $size: a row per node, its GPUs, instances and idle ones" \
        "$screen" "dgx${wide:+ } 8 GPU 56 MIG 53 idle"
    # the dcgm node's GPU: its power over the whole chart (the monitor read
    # two samples), the span of it that came from Prometheus said
    if [ "$size" = 200x60 ]; then span="9.8 s" cols=98; else span="3.0 s" cols=30; fi
    contains "fleet TUI $size: the charts' past from Prometheus" "$screen" "─ $span from Prometheus ─"
    # dcgm-exporter writes no power limit: "N/A", not "N/A W"
    eq "fleet TUI $size: the power chart's title" \
        "$(LC_ALL=C.UTF-8 grep -o 'Power 498 W / N/A[^─]*' <<<"$screen" | head -1 | sed 's/  .*//; s/ *$//')" "Power 498 W / N/A"
    eq "fleet TUI $size: every column of the power chart has a point" \
        "$(LC_ALL=C.UTF-8 awk '/Power 498 W/ { getline; print; exit }' <<<"$screen" |
            LC_ALL=C.UTF-8 grep -o '█' | wc -l)" "$cols"
    # Up: the node's row above the first GPU; Enter folds it, Down goes to
    # the next node's row (its GPUs hidden), Enter folds that one too
    tui_keys "$name" Up Enter Down Enter
    # the dgx node's first GPU is selected: its own past
    fl_past "$name"
    tui_screen "fleet TUI $size: two nodes folded" "$name" "fleet-fold-$size"
    screen=$(tmx capture-pane -p -t "$name")
    contains "fleet TUI $size folded: dgx GPU 0's power from before the monitor started" \
        "$screen" "Power 86 W / 400 W${wide:+  max 86 W in $span}"
    if [ "$size" = 200x60 ]; then
        want=$(printf '%s\n' "▸ dcgm  1 GPU 4 MIG 1 idle  57.7/130.7 GiB" \
            "▸ dgx  8 GPU 56 MIG 53 idle  251.6/532.0 GiB" "▾ h200  1 GPU 4 MIG 1 idle  57.7/130.8 GiB")
    else # the short forms that fit 80 columns
        want=$(printf '%s\n' "▸ dcgm 1 GPU 4 MIG 1 idle 58/131G" "▸ dgx 8 GPU 56 MIG 53 idle" \
            "▾ h200 1 GPU 4 MIG 1 idle 58/131G")
    fi
    eq "fleet TUI $size folded: the node rows, h200's open" \
        "$(LC_ALL=C.UTF-8 grep -ao '[▸▾] \(dcgm\|dgx\|h200\) [^│]*' <<<"$screen" | LC_ALL=C.UTF-8 sed -E 's/ +[▮▯].*//')" "$want"
    eq "fleet TUI $size folded: a folded node hides its GPUs" "$(grep -ac 'GPU [0-9] A100' <<<"$screen")" 0
    eq "fleet TUI $size folded: the open node's GPU is listed" "$(grep -ac 'GPU 0 H200' <<<"$screen")" 1
    contains "fleet TUI $size folded: the node row is selected" "$screen" "▶ ▸ dgx"
    # the filter: every word must match; "h200" is the model of the dcgm
    # node's GPU too, "1g.18" the profile of two instances on each
    tui_keys "$name" Enter Home Enter / h 2 0 0 Space 1 g . 1 8 Enter
    fl_wait "$name" "/h200 1g.18: 2 nodes"
    fl_past "$name"
    tui_screen "fleet TUI $size: filtered" "$name" "fleet-filter-$size"
    screen=$(tmx capture-pane -p -t "$name")
    contains "fleet TUI $size filtered: the title names the filter" "$screen" "Devices /h200 1g.18"
    contains "fleet TUI $size filtered: the header's totals are the list's" "$screen" "/h200 1g.18: 2 nodes"
    eq "fleet TUI $size filtered: exactly the matching instances under their GPUs and nodes" \
        "$(LC_ALL=C.UTF-8 sed -n 's/^.*│[▶ ] *\([▸▾├└] [^│]*\)│$/\1/p' <<<"$screen" |
            LC_ALL=C.UTF-8 sed -E 's/^([▸▾]) (dcgm|h200) .*/\1 \2/; s/^(▾ GPU 0 H200).*/\1/; s/^([├└] MIG [0-9]+).*/\1/')" \
        "$(printf '%s\n' "▾ dcgm" "▾ GPU 0 H200" "├ MIG 2" "└ MIG 3" "▾ h200" "▾ GPU 0 H200" "├ MIG 2" "└ MIG 4")"
    contains "fleet TUI $size filtered: the node row counts what is listed" "$screen" "dcgm${wide:+ } 1 GPU 2 MIG 1 idle"
    eq "fleet TUI $size: q quits" "$(tui_quit "$name" q)" 0
done
# the README's picture of the fleet is the stored screen
eq "README: the fleet's picture is fleet-fold-80x24" \
    "$(awk '/<!-- fleet-screen -->/ { on = 1; next } /<!-- \/fleet-screen -->/ { on = 0 } on' \
        "$MIGMON_SRC/README.md" | sed '1d;$d')" "$(cat "$MIGMON_SRC/tests/e2e/screens/fleet-fold-80x24.txt")"
# the word idle: the idle instances alone; Esc gives the whole fleet back
TUI_WAIT_S=15 tui_start fleet-idle 200 60 2 -- --no-config \
    --proc-root "$(tui_proc fleet-idle two-core)" --prometheus "$PURL"
tui_keys fleet-idle / i d l e Enter
fl_wait fleet-idle "/idle: "
screen=$(tmx capture-pane -p -t fleet-idle)
contains "fleet TUI idle: every instance listed is idle" "$screen" "/idle: 3 nodes  10 GPUs  55 MIG, 55 idle"
eq "fleet TUI idle: the busy instances are not listed" "$(grep -ac '85% dcgm\|21% dcgm' <<<"$screen")" 0
contains "fleet TUI idle: the idle one of the dcgm node is" "$screen" "MIG 3 1g.18gb"
tui_keys fleet-idle Escape
fl_wait fleet-idle "3 nodes  10 GPUs  64 MIG, 55 idle"
screen=$(tmx capture-pane -p -t fleet-idle)
contains "fleet TUI idle: Esc clears the filter" "$screen" "3 nodes  10 GPUs  64 MIG, 55 idle"
# a pod's namespace filters too; the detail names the pod
tui_keys fleet-idle / s e r v i n g Enter
fl_wait fleet-idle "/serving: "
tui_keys fleet-idle Home Down Down
screen=$(tmx capture-pane -p -t fleet-idle)
eq "fleet TUI: the filter 'serving' lists the pod's two instances" \
    "$(grep -ac '├ MIG 0 3g.71gb\|└ MIG 0 3g.71gb' <<<"$screen")|$(grep -ac 'MIG [1-3] ' <<<"$screen")" "2|0"
contains "fleet TUI: the detail names the pod holding the instance" "$screen" "Pod serving/llm-0  container vllm"
tui_keys fleet-idle Escape
tui_keys fleet-idle / z z
contains "fleet TUI: / types into the device filter" "$(tmx capture-pane -p -t fleet-idle | tail -1)" \
    " Filter devices (node, model, profile, UUID, pod; idle): zz_"
tui_keys fleet-idle Enter
fl_wait fleet-idle "/zz: "
screen=$(tmx capture-pane -p -t fleet-idle)
contains "fleet TUI: a filter nothing matches says so" "$screen" "No device matches the filter (Esc clears it)"
contains "fleet TUI: and the totals are of nothing" "$screen" "/zz: 0 nodes  0 GPUs  0 MIG, 0 idle  VRAM N/A"
# a filter past what is asked of Prometheus (6 words): said, the list as it was
tui_keys fleet-idle Escape / a Space b Space c Space d Space e Space f Space g Enter
for ((i = 0; i < 50; i++)); do
    tmx capture-pane -p -t fleet-idle | grep -q "filter /a b c d e f g:" && break
    sleep 0.1
done
contains "fleet TUI: a filter of 7 words is refused, and says why" "$(tmx capture-pane -p -t fleet-idle)" \
    "filter /a b c d e f g: the filter has more than 6 words or a word longer than 48 bytes"
tui_keys fleet-idle Escape
# key o: the list's orders; nodes, GPUs and instances each by the key, a
# tree kept, unknown values last, ties in node order, the selection
# staying on its device (the dcgm node's GPU)
fl_nodes() { LC_ALL=C.UTF-8 grep -ao '[▸▾] \(dcgm\|dgx\|h200\)  ' <<<"$1" | awk '{ printf "%s ", $2 }'; }
# fl_after NODE N: the N rows after NODE's, their marks and indexes
fl_after() {
    LC_ALL=C.UTF-8 grep -a -A"$2" "[▸▾] $1  " <<<"$3" | sed 1d |
        LC_ALL=C.UTF-8 sed -E 's/^.*│(.) +[▸▾├└] (GPU [0-9]|MIG [0-9]).*/\1\2/' | tr '\n' ','
}
tui_keys fleet-idle Escape
fl_wait fleet-idle "3 nodes  10 GPUs  64 MIG"
tui_keys fleet-idle Home Down o
screen=$(tmx capture-pane -p -t fleet-idle)
contains "fleet TUI o: the title names the order" "$screen" "Devices (by util) "
eq "fleet TUI by util: the nodes by their busiest device, dgx (nothing known) last" \
    "$(fl_nodes "$screen")" "dcgm h200 dgx "
tui_keys fleet-idle o o
screen=$(tmx capture-pane -p -t fleet-idle)
contains "fleet TUI o o o: by idle" "$screen" "Devices (by idle) "
eq "fleet TUI by idle: the nodes by their idle devices" "$(fl_nodes "$screen")" "dgx dcgm h200 "
eq "fleet TUI by idle: the dcgm GPU still selected, its idle instance first" \
    "$(fl_after dcgm 5 "$screen")" "▶GPU 0, MIG 3, MIG 0, MIG 1, MIG 2,"
tui_keys fleet-idle o
screen=$(tmx capture-pane -p -t fleet-idle)
eq "fleet TUI by health: the node with an action first, then the warning; the GPU that needs the action first" \
    "$(fl_nodes "$screen")|$(fl_after dgx 9 "$screen")" \
    "dgx h200 dcgm | GPU 5, MIG 0, MIG 1, MIG 2, MIG 3, MIG 4, MIG 5, MIG 6, GPU 0,"
tui_keys fleet-idle o
screen=$(tmx capture-pane -p -t fleet-idle)
contains "fleet TUI o: back to node order" "$screen" "Devices ───"
eq "fleet TUI by node: as Prometheus names them" "$(fl_nodes "$screen")" "dcgm dgx h200 "
# each folded GPU counts its own instances
contains "fleet TUI: a folded A100 counts its 7 instances" "$screen" "GPU 7 A100-SXM4-80GB +7 MIG "
contains "fleet TUI: a folded H200 its 4" "$screen" "GPU 0 H200 +4 MIG "
eq "fleet TUI idle: q quits" "$(tui_quit fleet-idle q)" 0

# the processes in the monitor: key a lists them with their nodes' devices;
# the monitor's /proc holds the same PIDs (h200-node), yet a fleet's PID is
# its node's: nothing is read of it here and k does not signal it
TUI_WAIT_S=15 tui_start fleet-procs 200 60 2 -- --no-config \
    --proc-root "$(tui_proc fleet-procs h200-node)" --prometheus "$PURL"
tui_keys fleet-procs a
screen=$(tmx capture-pane -p -t fleet-procs)
eq "fleet TUI a: the fleet's processes, by VRAM, each with its node and device" \
    "$(grep -aoE '(7001|7040|7102) +h200:0/[0-9]' <<<"$screen" | tr -s ' ')" \
    "$(printf '%s\n' "7001 h200:0/0" "7040 h200:0/1" "7102 h200:0/2")"
tui_keys fleet-procs k
contains "fleet TUI k: another node's PID is not signalled" \
    "$(tmx capture-pane -p -t fleet-procs | tail -1)" "PID 7001 runs on node h200: not signalled from here"
tui_keys fleet-procs Enter
screen=$(tmx capture-pane -p -t fleet-procs)
contains "fleet TUI Enter: the process's node, no local PID" "$screen" \
    "PID 7001  local PID none (on node h200)  type ?  user N/A"
contains "fleet TUI Enter: no command line read from this host's /proc" "$screen" "(command line not visible)"
tui_keys fleet-procs Escape Escape
eq "fleet TUI processes: q quits" "$(tui_quit fleet-procs q)" 0

# record over the fleet: each line names the devices' nodes
rec=$("$MIGMON_BIN" --no-config --prometheus "$PURL" record -n 1 2>/dev/null)
jeq "record: one snapshot of the fleet" "$rec" '[.devices[].node] | unique' '["dcgm","dgx","h200"]'

# Prometheus stops answering (SIGSTOP) during a recording: the processes
# are carried with the devices' values for carry (3) rounds, then gone,
# the count none with the reason
"$MIGMON_BIN" --no-config --prometheus "$PURL" record -n 10 -i 1000 -o "$TMP/fl-carry.jsonl" 2>/dev/null &
rpid=$!
for ((i = 0; i < 200; i++)); do grep -q '"devices"' "$TMP/fl-carry.jsonl" 2>/dev/null && break; sleep 0.05; done
kill -STOP "$PROM_PID"
wait "$rpid"
kill -CONT "$PROM_PID"
carry=$(jq -c 'select(.devices) | [.devices[] | select(.node == "h200" and .kind == "mig")] |
    [([.[].processes[] | [.pid, .carried, .memory_bytes]] | sort), .[0].process_count.source, .[0].process_count.reason]' "$TMP/fl-carry.jsonl")
eq "Prometheus stalls: the processes as read first" "$(head -1 <<<"$carry")" \
    '[[[7001,false,39845888000],[7040,false,13107200000],[7102,false,4299161600]],"direct",null]'
contains "Prometheus stalls: then carried, with their last values" "$carry" \
    '[[[7001,true,39845888000],[7040,true,13107200000],[7102,true,4299161600]],"carried","Prometheus did not answer"]'
eq "Prometheus stalls: then none, with the reason" "$(tail -1 <<<"$carry")" '[[],"none","Prometheus did not answer"]'

# a target taken down: its node is shown as down, with the time since
kill -TERM "$H200_PID"
for ((i = 0; i < 100; i++)); do
    [ "$(q 'up{instance="h200"}' | jq -r '.data.result[0].value[1] // empty')" = 0 ] && break
    sleep 0.1
done
fleet=$("$MIGMON_BIN" --no-config --prometheus "$PURL" --once --format json 2>/dev/null)
jeq "target down: its node's devices listed, down, every value none" "$fleet" \
    '[.devices[] | select(.node == "h200")] | [length, (map(.node_down) | unique), (map(.node_down_for_s > 0 and .node_down_for_s < 60) | unique), .[0].metrics.temperature_c.reason]' \
    '[5,[true],[true],"the node'"'"'s target is down (up == 0)"]'
jeq "target down: the other nodes are up" "$fleet" '[.devices[] | select(.node != "h200") | .node_down] | unique' '[false]'
table=$("$MIGMON_BIN" --no-config --prometheus "$PURL" --once --format table 2>&1)
contains "target down: the table says so" "$table" "node h200: 1 GPU, 4 MIGs  DOWN for"
TUI_WAIT_S=15 tui_start fleet-down 200 60 1 -- --no-config \
    --proc-root "$(tui_proc fleet-down two-core)" --prometheus "$PURL"
screen=$(tmx capture-pane -p -t fleet-down)
contains "target down: the monitor tags the node's row" "$(LC_ALL=C.UTF-8 grep -o '▾ h200 [^│]*DOWN [0-9]*s' <<<"$screen")" "DOWN"
contains "target down: and its GPU" "$(LC_ALL=C.UTF-8 grep -o 'GPU 0 H200 +4 MIG[^│]*DOWN [0-9]*s' <<<"$screen")" "DOWN"
contains "target down: the header counts it" "$screen" "3 nodes (1 down)"
eq "target down: q quits" "$(tui_quit fleet-down q)" 0

# An AMD node: the amdgpu backend's MI300X fixture in CPX mode (8
# partitions, their processes from fdinfo) exported with vendor="amd" and
# partition_id, on a Prometheus of its own (the checks above count the
# first one's nodes)
AFX="$MIGMON_SRC/tests/fixtures"
"$MIGMON_BIN" export --backend amdgpu --sysfs-root "$AFX/sysfs/mi300x-cpx" \
    --proc-root "$AFX/proc/amd-cpx" --export-processes --listen 127.0.0.1:0 -i 250 \
    2>"$TMP/fl-amd.err" &
FL_PIDS+=($!)
AMD=$(export_port "$TMP/fl-amd.err")
[ -n "$AMD" ] || bad "amd: export did not start: $(cat "$TMP/fl-amd.err")"
APP=$(fl_free_port)
mkdir -p "$TMP/fl-prom-amd"
cat >"$TMP/fl-prometheus-amd.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: mi300x
    static_configs: [{targets: ["127.0.0.1:$AMD"], labels: {instance: mi300x}}]
YML
prometheus --config.file="$TMP/fl-prometheus-amd.yml" --storage.tsdb.path="$TMP/fl-prom-amd" \
    --web.listen-address="127.0.0.1:$APP" --log.level=warn >"$TMP/fl-prometheus-amd.log" 2>&1 &
FL_PIDS+=($!)
AURL="http://127.0.0.1:$APP"
for ((i = 0; i < 300; i++)); do
    [ "$(curl -s -m 5 --data-urlencode 'query=count(migmon_mig_info) + count(migmon_process_gpu_memory_bytes)' \
        "$AURL/api/v1/query" | jq -r '.data.result[0].value[1] // empty' 2>/dev/null)" = 11 ] && break
    sleep 0.1
done
eq "amd prometheus: 8 partitions and 3 processes scraped" "$i" "$([ "$i" -lt 300 ] && echo "$i" || echo ready)"
AMD_J=$("$MIGMON_BIN" --backend amdgpu --sysfs-root "$AFX/sysfs/mi300x-cpx" --proc-root "$AFX/proc/amd-cpx" \
    --once --format json)
afleet=$("$MIGMON_BIN" --no-config --prometheus "$AURL" --once --format json 2>/dev/null)
amdid='[.devices[] | [.kind, .vendor, .index, .name, .uuid, .parent_uuid, .gpu_instance_id, .compute_instance_id, .profile, .slices, .metrics.gpu_util_pct.value, .metrics.gpu_util_pct.source, .metrics.memory_total_bytes.value, .metrics.memory_used_bytes.value, .metrics.memory_used_bytes.source]]'
eq "fleet amd: the GPU and its 8 partitions as the amdgpu backend gives them" \
    "$(printf '%s' "$afleet" | jq -c "$amdid")" "$(printf '%s' "$AMD_J" | jq -c "$amdid")"
jeq "fleet amd: the partitions' VRAM in use N/A, as the backend gives it (no sum of processes)" "$afleet" \
    '[.devices[] | select(.kind == "mig") | .metrics.memory_used_bytes.value] | unique' '[null]'
jeq "fleet amd: ... their totals there" "$afleet" \
    '[.devices[] | select(.kind == "mig") | .metrics.memory_total_bytes.value] | unique' '[25769803776]'
jeq "fleet amd: ... vendor amd, partitions 0-7 of CPX/NPS4, on the exporter's host" "$afleet" \
    '[([.devices[].vendor] | unique), [.devices[] | select(.kind == "mig") | .gpu_instance_id], ([.devices[] | select(.kind == "mig") | .profile] | unique), ([.devices[].node] | unique)]' \
    '[["amd"],[0,1,2,3,4,5,6,7],["CPX/NPS4"],["mi300x-node-01"]]'
jeq "fleet amd: the partitions' processes on their partitions, with their memory" "$afleet" \
    '[.devices[] | select(.processes | length > 0) | [.gpu_instance_id, [.processes[] | [.pid, .memory_bytes, .gpu_instance_id]]]]' \
    "$(printf '%s' "$AMD_J" | jq -c '[.devices[] | select(.processes | length > 0) | [.gpu_instance_id, [.processes[] | [.pid, .memory_bytes, .gpu_instance_id]]]]')"
atable=$("$MIGMON_BIN" --no-config --prometheus "$AURL" --once --format table 2>&1)
contains "fleet amd: the table's node line" "$atable" "node mi300x-node-01: 1 GPU, 8 MIGs"

# Prometheus stand-ins: one that never answers, one that answers garbage
cat >"$TMP/fl-standin.py" <<'PY'
import http.server, os, ssl, sys, time, urllib.parse, urllib.request
mode = sys.argv[2]
EMPTY = b'{"status":"success","data":{"resultType":"vector","result":[]}}'
# an error whose text holds an OSC title, a clear screen, C1 NEL, a
# right-to-left override, RLM, the line separator, a BOM, a zero width
# space, a tag and C1 CSI
HOSTILE = (b'{"status":"error","errorType":"execution","error":"bad \\u001b]0;pwned\\u0007 '
           b'\\u001b[2J\\u0085 \\u202egnp.exe \\u200f\\u2028\\ufeff\\u200b\\udb40\\udc41'
           b'\\u009b31m end"}')
# flood: 240,000 minimal series (31 MB, under the client's bound): each a
# target that is up and a device of its own, the answer to every query but
# the summaries', which get a node's GPU count for each
FLOOD = FLOOD_SUM = None
def flood(item):
    return (b'{"status":"success","data":{"resultType":"vector","result":[' +
            b",".join(item % (i, i) for i in range(240000)) + b"]}}")
if mode == "flood":
    FLOOD = flood(b'{"metric":{"__name__":"migmon_device_info","a":"up","instance":"n%06d",'
                  b'"uuid":"GPU-%06d"},"value":[1,"1"]}')
    FLOOD_SUM = flood(b'{"metric":{"__name__":"migmon_node_gpus","instance":"n%06d",'
                      b'"uuid":"GPU-%06d"},"value":[1,"1"]}')
class H(http.server.BaseHTTPRequestHandler):
    body = None
    def do_POST(self):
        # the instant queries come as forms (a query of any length)
        self.body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.do_GET()
    def do_GET(self):
        asked = urllib.parse.unquote_plus(self.path + "?" + (self.body or b"").decode())
        if mode == "hostile-some" and "migmon_process_" in asked:
            # the processes' query fails; the others are the real Prometheus' answers
            self.send_response(422)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(HOSTILE)
            return
        if (mode.startswith("range-") and not self.path.startswith("/api/v1/query_range")) \
                or mode == "hostile-some":
            # the instant queries: the real Prometheus' answers (argv[4])
            up = urllib.request.Request(sys.argv[4] + self.path, data=self.body)
            with urllib.request.urlopen(up, timeout=5) as r:
                body = r.read()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)
            return
        if mode in ("stall", "range-stall"):
            time.sleep(3600)
        if mode == "flood":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            try:
                self.wfile.write(FLOOD_SUM if "migmon_node_.+" in asked else FLOOD)
            except OSError:
                pass
            return
        if mode == "huge":
            # an answer past the 32 MiB bound: the transfer is cut off there
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            try:
                for _ in range(40):
                    self.wfile.write(b" " * (1 << 20))
            except OSError:
                pass
            return
        if mode == "tls":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(EMPTY)
            return
        if mode == "auth":
            # bearer "s3cret", or basic fleet:pa55 (ZmxlZXQ6cGE1NQ==); every
            # Authorization received is logged to FL_AUTH_LOG
            with open(os.environ["FL_AUTH_LOG"], "a") as f:
                f.write(str(self.headers.get("Authorization")) + "\n")
            ok = self.headers.get("Authorization") in ("Bearer s3cret", "Basic ZmxlZXQ6cGE1NQ==")
            self.send_response(200 if ok else 401)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(EMPTY if ok else b'{"status":"error","error":"unauthorized"}')
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"<html>not json at all</html>")
    def log_message(self, *a):
        pass
# port 0: the kernel picks a free one, written to argv[3] once listening
# (a port picked beforehand may be taken by then on a busy machine)
srv = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H)
if mode == "tls":
    # a self-signed certificate (tests/fixtures/tls): no CA store trusts it
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.environ["FL_TLS"] + ".crt", os.environ["FL_TLS"] + ".key")
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(sys.argv[3] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(sys.argv[3] + ".tmp", sys.argv[3])
srv.serve_forever()
PY
# fl_standin MODE: the stand-in listening; sets sp to its port
fl_standin() {
    local f="$TMP/fl-standin-$1.port" i
    rm -f "$f"
    python3 "$TMP/fl-standin.py" 0 "$1" "$f" "$PURL" &
    FL_PIDS+=($!)
    for ((i = 0; i < 100; i++)); do [ -s "$f" ] && break; sleep 0.1; done
    sp=$(cat "$f" 2>/dev/null)
    [ -n "$sp" ] || bad "the $1 stand-in did not start"
}
# credentials from a file: a bearer token, basic authentication
export FL_AUTH_LOG="$TMP/fl-auth.log"
fl_standin auth
out=$("$MIGMON_BIN" --no-config --prometheus "http://127.0.0.1:$sp" --once 2>&1)
contains "auth: without credentials, the server's refusal" "$out" "HTTP 401: unauthorized"
printf 'Bearer s3cret\n' >"$TMP/fl-bearer"
out=$("$MIGMON_BIN" --no-config --prometheus "http://127.0.0.1:$sp" --prometheus-auth "$TMP/fl-bearer" --once 2>&1)
contains "auth: a bearer token" "$out" "has no migmon_* or DCGM_FI_* series of the last 10 minutes"
printf 'fleet:pa55\n' >"$TMP/fl-basic"
out=$("$MIGMON_BIN" --no-config --prometheus "http://127.0.0.1:$sp" --prometheus-auth "$TMP/fl-basic" --once 2>&1)
contains "auth: basic" "$out" "has no migmon_* or DCGM_FI_* series of the last 10 minutes"
# the same from the config file's [fleet] section (a flag wins over it)
printf '[fleet]\nprometheus = http://127.0.0.1:%s\nauth_file = %s\n' "$sp" "$TMP/fl-basic" >"$TMP/fl-auth.ini"
out=$("$MIGMON_BIN" --config "$TMP/fl-auth.ini" --once 2>&1)
contains "auth: [fleet] prometheus and auth_file" "$out" "has no migmon_* or DCGM_FI_* series of the last 10 minutes"
out=$("$MIGMON_BIN" --config "$TMP/fl-auth.ini" --prometheus-auth "$TMP/fl-none" --once 2>&1)
contains "auth: --prometheus-auth wins over auth_file" "$out" "--prometheus-auth $TMP/fl-none: No such file or directory"
out=$("$MIGMON_BIN" --no-config --prometheus "http://127.0.0.1:$sp" --prometheus-auth "$TMP/fl-none" --once 2>&1)
eq "auth: a missing file is exit status 2" "$?" 2
contains "auth: ... naming it" "$out" "--prometheus-auth $TMP/fl-none: No such file or directory"
# A credentials file is read only when it is a regular file owned by the
# user running the program (or root) and writable by no one else; else one
# line, exit 2, and nothing is sent (the stand-in logs what it gets).
# Through the flag and through a configuration file's auth_file alike.
printf 'fleet:pa55\n' >"$TMP/fl-basic-ww"
chmod 666 "$TMP/fl-basic-ww"
printf '[fleet]\nprometheus = http://127.0.0.1:%s\nauth_file = %s\n' "$sp" "$TMP/fl-basic-ww" \
    >"$TMP/fl-auth-ww.ini"
: >"$FL_AUTH_LOG"
out=$("$MIGMON_BIN" --no-config --prometheus "http://127.0.0.1:$sp" --prometheus-auth "$TMP/fl-basic-ww" \
    --once 2>&1)
eq "auth: a file writable by others: refused, exit 2, one line" "$?|$out" \
    "2|mig-gpu-mon: --prometheus-auth $TMP/fl-basic-ww: writable by others than its owner (mode 0666); not read"
out=$("$MIGMON_BIN" --config "$TMP/fl-auth-ww.ini" --once 2>&1)
eq "auth: auth_file writable by others: refused the same" "$?|$out" \
    "2|mig-gpu-mon: --prometheus-auth $TMP/fl-basic-ww: writable by others than its owner (mode 0666); not read"
chmod 620 "$TMP/fl-basic-ww"
out=$("$MIGMON_BIN" --config "$TMP/fl-auth-ww.ini" --once 2>&1)
eq "auth: auth_file writable by its group: refused" "$?|$out" \
    "2|mig-gpu-mon: --prometheus-auth $TMP/fl-basic-ww: writable by others than its owner (mode 0620); not read"
mkfifo "$TMP/fl-fifo"
out=$(timeout 10 "$MIGMON_BIN" --no-config --prometheus "http://127.0.0.1:$sp" --prometheus-auth "$TMP/fl-fifo" \
    --once 2>&1)
eq "auth: a FIFO: refused at once, never waited on" "$?|$out" \
    "2|mig-gpu-mon: --prometheus-auth $TMP/fl-fifo: a FIFO, not a regular file"
out=$("$MIGMON_BIN" --no-config --prometheus "http://127.0.0.1:$sp" --prometheus-auth "$TMP" --once 2>&1)
eq "auth: a directory: refused" "$?|$out" "2|mig-gpu-mon: --prometheus-auth $TMP: a directory, not a regular file"
if [ "$(id -u)" = 0 ]; then
    # another user's file, readable by root: not ours, not read
    cp "$TMP/fl-basic" "$TMP/fl-basic-other"
    chown 1000:1000 "$TMP/fl-basic-other"
    chmod 644 "$TMP/fl-basic-other"
    out=$("$MIGMON_BIN" --no-config --prometheus "http://127.0.0.1:$sp" \
        --prometheus-auth "$TMP/fl-basic-other" --once 2>&1)
    eq "auth: another user's file: refused" "$?|$out" \
        "2|mig-gpu-mon: --prometheus-auth $TMP/fl-basic-other: owned by uid 1000, neither root nor the user running mig-gpu-mon (uid 0); not read"
fi
eq "auth: no refused file's credentials reached the server" "$(grep -c 'Basic' "$FL_AUTH_LOG")" 0
# TLS is verified against the system's CA store: a certificate it does
# not trust is refused, though the server answers (curl trusting it reads
# the answer)
export FL_TLS="$MIGMON_SRC/tests/fixtures/tls/self-signed"
fl_standin tls
eq "https: the stand-in answers a client that trusts its certificate" \
    "$(curl -s --max-time 5 --cacert "$MIGMON_SRC/tests/fixtures/tls/self-signed.crt" \
        "https://127.0.0.1:$sp/api/v1/query?query=up")" \
    '{"status":"success","data":{"resultType":"vector","result":[]}}'
out=$("$MIGMON_BIN" --no-config --prometheus "https://127.0.0.1:$sp" --once 2>&1)
contains "https: an untrusted certificate is refused, saying so" "$out" \
    "SSL peer certificate or SSH remote key was not OK"
contains "https: and nothing is read from it" "$out" "gpu: N/A"
# --prometheus-ca: that certificate trusted instead of the store; the same
# by the config file's [fleet] ca_file; a file that cannot be read is exit 2
out=$("$MIGMON_BIN" --no-config --prometheus "https://127.0.0.1:$sp" \
    --prometheus-ca "$MIGMON_SRC/tests/fixtures/tls/self-signed.crt" --once 2>&1)
contains "https --prometheus-ca: the server is trusted and read" "$out" \
    "has no migmon_* or DCGM_FI_* series of the last 10 minutes"
printf '[fleet]\nprometheus = https://127.0.0.1:%s\nca_file = %s\n' "$sp" \
    "$MIGMON_SRC/tests/fixtures/tls/self-signed.crt" >"$TMP/fl-ca.ini"
out=$("$MIGMON_BIN" --config "$TMP/fl-ca.ini" --once 2>&1)
contains "https [fleet] ca_file: the same" "$out" "has no migmon_* or DCGM_FI_* series of the last 10 minutes"
out=$("$MIGMON_BIN" --no-config --prometheus "https://127.0.0.1:$sp" --prometheus-ca "$TMP/no-such.pem" --once 2>&1)
eq "--prometheus-ca: a missing file is exit 2, saying why" "$?|$out" \
    "2|mig-gpu-mon: --prometheus-ca $TMP/no-such.pem: No such file or directory"
fl_standin huge
out=$("$MIGMON_BIN" --no-config --prometheus "http://127.0.0.1:$sp" --once 2>&1)
contains "an answer past 32 MiB is cut off" "$out" "answer larger than 33554432 bytes, cut off"
out=$("$MIGMON_BIN" --no-config --prometheus "ftp://x" --once 2>&1)
contains "--prometheus: only http and https" "$out" "expected an http:// or https:// URL"

# fl_quick_quit NAME MODE: q ends the monitor with status 0 within 1 s
fl_quick_quit() {
    local start st took
    start=$(date +%s%N)
    st=$(tui_quit "$1" q)
    took=$((($(date +%s%N) - start) / 1000000))
    eq "$2: q quits with status 0" "$st" 0
    [ "$took" -le 1000 ] && ok || bad "$2: q took $took ms (at most 1000)"
}
for mode in stall garbage; do
    fl_standin "$mode"
    start=$(date +%s%N)
    out=$(timeout 20 "$MIGMON_BIN" --no-config --prometheus "http://127.0.0.1:$sp" --once --timeout 2 --format table 2>&1)
    rc=$?
    took=$((($(date +%s%N) - start) / 1000000))
    [ "$took" -lt 8000 ] && ok || bad "$mode: --once took $took ms"
    case $mode in
    stall) # as a driver that does not answer within --timeout: partial, exit 3
        eq "stall: --once is a partial snapshot, exit status 3" "$rc" 3
        contains "stall: --once says why on stderr, naming the query waited on" "$out" \
            "mig-gpu-mon: partial snapshot: Prometheus http://127.0.0.1:$sp: no answer to the targets query within 2." ;;
    garbage) # nothing to show: why, exit 0 (as a host without a driver)
        eq "garbage: --once exits 0" "$rc" 0
        contains "garbage: --once says why" "$out" "answer is not JSON" ;;
    esac
    name="fleet-$mode"
    TUI_WAIT_S=15 tui_start "$name" 120 30 0 -- --no-config --prometheus "http://127.0.0.1:$sp"
    for ((i = 0; i < 60; i++)); do
        tmx capture-pane -p -t "$name" | grep -q "Prometheus" && break
        sleep 0.1
    done
    screen=$(tmx capture-pane -p -t "$name")
    case $mode in
    stall) contains "stall: the monitor shows the reason" "$screen" "no answer" ;;
    garbage) contains "garbage: the monitor shows the reason" "$screen" "not JSON" ;;
    esac
    fl_quick_quit "$name" "$mode"
done
# a Prometheus whose range queries stall or answer garbage (its instant
# queries answered): the monitor shows the fleet and stays responsive; the
# charts keep what the monitor reads, and a failed range query says why
for mode in range-stall range-garbage; do
    fl_standin "$mode"
    name="fleet-$mode"
    TUI_WAIT_S=15 tui_start "$name" 120 30 2 -- --no-config --proc-root "$(tui_proc "$name" two-core)" \
        --prometheus "http://127.0.0.1:$sp"
    screen=$(tmx capture-pane -p -t "$name")
    contains "$mode: the fleet is shown" "$screen" "3 nodes 1 down"
    if [ "$mode" = range-garbage ]; then
        for ((i = 0; i < 100; i++)); do
            tmx capture-pane -p -t "$name" | grep -q "charts: no past" && break
            sleep 0.1
        done
        contains "range-garbage: the footer says why the charts have no past" \
            "$(tmx capture-pane -p -t "$name" | tail -1)" "charts: no past from Prometheus: answer is not JSON"
    else
        # the range query of the device selected stalls: a key still draws
        tui_keys "$name" Down
        contains "range-stall: the screen moves on" "$(tmx capture-pane -p -t "$name")" "[2/"
    fi
    eq "$mode: no chart from Prometheus' past" "$(tmx capture-pane -p -t "$name" | grep -c ' s from Prometheus ')" 0
    fl_quick_quit "$name" "$mode"
done

# A Prometheus that fails one query (the processes') with an error whose
# text is full of terminal controls, bidi and invisible characters, the
# others answered, asked with a user and password in its URL: every
# output shows the reason cleaned, naming Prometheus and the query, and
# the URL with the password redacted; --once is a partial snapshot (exit
# status 3) and says why on stderr, at once.
fl_standin hostile-some
HURL="http://fleet:pa55w0rd@127.0.0.1:$sp"
SHOWN="http://fleet:***@127.0.0.1:$sp"
said='HTTP 422: bad ?]0;pwned? ?[2J?? ???gnp.exe ??????????????????31m end'
# fl_secret DESC FILE: FILE is clean text and does not hold the password
fl_secret() {
    eq "$1: clean text" "$(clean_text "$2")" ok
    eq "$1: no password" "$(grep -c pa55w0rd "$2")" 0
}
start=$(date +%s%N)
"$MIGMON_BIN" --no-config --prometheus "$HURL" --once --format table >"$TMP/fl-hostile.txt" \
    2>"$TMP/fl-hostile.err"
rc=$?
took=$((($(date +%s%N) - start) / 1000000))
eq "hostile error: --once is a partial snapshot, exit status 3" "$rc" 3
[ "$took" -lt 5000 ] && ok || bad "hostile error: --once took $took ms"
eq "hostile error: stderr names Prometheus and the query, with the reason cleaned" \
    "$(cat "$TMP/fl-hostile.err")" \
    "mig-gpu-mon: partial snapshot: Prometheus $SHOWN: $said (the processes query)"
fl_secret "hostile error: stderr" "$TMP/fl-hostile.err"
fl_secret "hostile error: --once table" "$TMP/fl-hostile.txt"
contains "hostile error: the table names the node's devices" "$(cat "$TMP/fl-hostile.txt")" "node h200: 1 GPU, 4 MIGs"
contains "hostile error: the table says why under a device" "$(tr -s ' \n' ' ' <"$TMP/fl-hostile.txt")" \
    "Prometheus $SHOWN: $said (the processes query) (devices from"
"$MIGMON_BIN" --no-config --prometheus "$HURL" --once --format json >"$TMP/fl-hostile.json" 2>/dev/null
fl_secret "hostile error: --once json" "$TMP/fl-hostile.json"
hj=$(cat "$TMP/fl-hostile.json")
jeq "hostile error: json: partial, the URL redacted" "$hj" '[.partial, .dcgm]' \
    "[true,\"from Prometheus $SHOWN\"]"
jeq "hostile error: json: each device's stall and the processes' reason, cleaned" "$hj" \
    '[.devices[] | select(.node == "dgx" and .process_count.value == null)][0] | [(.stall | sub(" \\(devices from .*"; "")), .process_count.reason]' \
    "[\"Prometheus $SHOWN: $said (the processes query)\",\"Prometheus: the processes query: $said\"]"
for fmt in csv influx prometheus; do
    "$MIGMON_BIN" --no-config --prometheus "$HURL" --once --format "$fmt" >"$TMP/fl-hostile.$fmt" 2>/dev/null
    fl_secret "hostile error: --once $fmt" "$TMP/fl-hostile.$fmt"
done
contains "hostile error: csv: the devices' rows with the stall" "$(grep -c ',h200$' "$TMP/fl-hostile.csv")" 5
"$MIGMON_BIN" --no-config --prometheus "$HURL" --debug="$TMP/fl-hostile.log" record -n 2 \
    -o "$TMP/fl-hostile.jsonl" 2>/dev/null
fl_secret "hostile error: the recording" "$TMP/fl-hostile.jsonl"
eq "hostile error: the recording's source, redacted" \
    "$(jq -r '.dcgm // empty' "$TMP/fl-hostile.jsonl" | sort -u)" "from Prometheus $SHOWN"
fl_secret "hostile error: the debug log" "$TMP/fl-hostile.log"
contains "hostile error: the debug log names Prometheus, redacted" \
    "$(cat "$TMP/fl-hostile.log")" "prometheus: $SHOWN, a round of queries every"
contains "hostile error: the debug log names the failed query, its reason cleaned" \
    "$(cat "$TMP/fl-hostile.log")" "prometheus: the processes query of 3 nodes: $said,"
# the monitor: the detail and the reasons overlay (i) of the first device
# (the overlay's list of values not read is longer than the screen: its
# last line, the source, is not checked here; JSON's dcgm above is it)
TUI_WAIT_S=15 tui_start fleet-hostile 200 60 2 -- --no-config \
    --proc-root "$(tui_proc fleet-hostile two-core)" --prometheus "$HURL"
for ((i = 0; i < 60; i++)); do
    tmx capture-pane -p -t fleet-hostile | grep -q "the processes query" && break
    sleep 0.1
done
tui_capture fleet-hostile >"$TMP/fl-hostile.screen"
fl_secret "hostile error: the monitor" "$TMP/fl-hostile.screen"
contains "hostile error: the monitor's detail says why, redacted" "$(cat "$TMP/fl-hostile.screen")" \
    "Prometheus $SHOWN: HTTP 422"
tui_capture fleet-hostile -e >"$TMP/fl-hostile.ansi"
eq "hostile error: no OSC or clear reached the screen" "$(grep -c $'\e\]\|\e\[2J' "$TMP/fl-hostile.ansi")" 0
tui_keys fleet-hostile i
tui_capture fleet-hostile >"$TMP/fl-hostile-i.screen"
fl_secret "hostile error: the reasons overlay" "$TMP/fl-hostile-i.screen"
contains "hostile error: the reasons overlay says why in full, redacted" \
    "$(cat "$TMP/fl-hostile-i.screen")" "Prometheus $SHOWN: $said (the processes query) (devices from"
tui_keys fleet-hostile Escape
eq "hostile error: q quits" "$(tui_quit fleet-hostile q)" 0
# a Prometheus that gives nothing usable: the message that replaces the
# devices names it, redacted
fl_standin garbage
"$MIGMON_BIN" --no-config --prometheus "http://fleet:pa55w0rd@127.0.0.1:$sp" --once >"$TMP/fl-garbage.txt" 2>&1
fl_secret "garbage: --once table" "$TMP/fl-garbage.txt"
contains "garbage: the reason names Prometheus, redacted" "$(cat "$TMP/fl-garbage.txt")" \
    "Prometheus http://fleet:***@127.0.0.1:$sp: HTTP 200: the answer is not JSON (the targets query)"
# A Prometheus that floods every answer with 240,000 series (31 MB each):
# what is held is bounded by the caps (docs/fleet.md: 20,000 nodes, the
# devices of the nodes shown), whatever comes; q quits at once; --once
# ends at its --timeout, its memory bounded too.
fl_standin flood
TUI_WAIT_S=30 tui_start fleet-flood 120 30 0 -- --no-config --prometheus "http://127.0.0.1:$sp" -i 1000
for ((i = 0; i < 150; i++)); do
    tmx capture-pane -p -t fleet-flood | grep -q "20000 nodes" && break
    sleep 0.2
done
# (ThreadSanitizer's build reads the 31 MB answers too slowly for a round:
# what it checks there is that nothing races, not the cap)
[ "${MIGMON_SAN:-}" = thread ] ||
    contains "flood: the nodes held, at the cap" "$(tmx capture-pane -p -t fleet-flood | head -1)" "20000 nodes"
sleep 3 # more rounds of the flood
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$(tui_pid fleet-flood)/status")
# (a sanitizer's build holds freed memory in its quarantine: no bound to check)
[ -n "${MIGMON_SAN:-}" ] || { [ "${hwm:-999999}" -lt 262144 ] && ok || bad "flood: the monitor's peak RSS $hwm kB (at most 256 MiB)"; }
fl_quick_quit fleet-flood flood
"$FL_PY" "$MIGMON_SRC/tests/fleet/rusage.py" "$TMP/fl-flood.ru" "$MIGMON_BIN" --no-config \
    --prometheus "http://127.0.0.1:$sp" --once --timeout 5 --format json >"$TMP/fl-flood.json" 2>/dev/null
read -r wall kb _ _ rc <"$TMP/fl-flood.ru"
eq "flood: --once ends, a partial snapshot (exit status 3)" "$rc" 3
[ -n "${MIGMON_SAN:-}" ] || { [ "${kb:-999999}" -lt 262144 ] && ok || bad "flood: --once's peak RSS $kb kB (at most 256 MiB)"; }
awk -v w="$wall" 'BEGIN { exit !(w < 9) }' && ok || bad "flood: --once took $wall s (--timeout 5)"
[ "${MIGMON_SAN:-}" = thread ] ||
    jeq "flood: --once says the nodes past the cap are not listed" "$(cat "$TMP/fl-flood.json")" \
    '[(.nodes | length), (.nodes_why | test("more than 20000 nodes"))]' '[20000,true]'

# --prometheus-match: the queries limited to the targets it selects
out=$("$MIGMON_BIN" --no-config --prometheus "$PURL" --prometheus-match '{job="h200"}' --once --format json 2>/dev/null)
# (a node is named by its host name when no other has it: the instance named here)
jeq "--prometheus-match: the one target selected" "$out" \
    '[[.nodes[].instance], ([.devices[].node] | unique) == [.nodes[].name]]' '[["h200"],true]'
out=$("$MIGMON_BIN" --no-config --prometheus "$PURL" --prometheus-match 'job=~"dgx|dcgm"' --once --format json 2>/dev/null)
jeq "--prometheus-match: a regular expression, braces left out" "$out" '[.nodes[].instance]' '["dcgm","dgx"]'
out=$("$MIGMON_BIN" --no-config --prometheus "$PURL" --prometheus-match '{job=h200}' --once 2>&1)
eq "--prometheus-match: a selector that is none, refused" "$?|$out" \
    "2|mig-gpu-mon: --prometheus-match {job=h200}: expected label matchers such as '{job=\"gpu\",cluster=~\"a|b\"}'"
printf '[fleet]\nprometheus = %s\nmatch = {job="dgx"}\n' "$PURL" >"$TMP/fl-match.ini"
chmod 600 "$TMP/fl-match.ini"
out=$("$MIGMON_BIN" --config "$TMP/fl-match.ini" --once --format json 2>/dev/null)
jeq "[fleet] match: the same from the configuration file" "$out" '[.nodes[].instance]' '["dgx"]'

# a URL refused by --prometheus or the configuration file: redacted too
out=$("$MIGMON_BIN" --no-config --prometheus "ftp://fleet:pa55w0rd@x" --once 2>&1)
eq "--prometheus refused: the URL shown redacted" "$out" \
    "mig-gpu-mon: --prometheus ftp://fleet:***@x: expected an http:// or https:// URL"
printf '[fleet]\nprometheus = ftp://fleet:pa55w0rd@x\n' >"$TMP/fl-badurl.ini"
out=$("$MIGMON_BIN" --config "$TMP/fl-badurl.ini" --demo h200-mig --once 2>&1 >/dev/null)
contains "[fleet] prometheus refused: the URL shown redacted" "$out" \
    "prometheus = ftp://fleet:***@x: expected an http:// or https:// URL, or off"
tui_kill_all

for p in "${FL_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
for p in "${FL_PIDS[@]}"; do wait "$p" 2>/dev/null; done
