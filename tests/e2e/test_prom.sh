# shellcheck shell=bash
# The Prometheus exporter with real components: promtool lints every
# scenario's page (with and without --compat dcgm); --compat dcgm on a
# Hopper MIG board against our own series; a real Prometheus server scrapes
# `export` on dgx-a100-8x7, on h200-mig and on h200-mig with --compat dcgm,
# and answers MIG, process and DCGM queries and every PromQL expression of
# the shipped Grafana dashboard; the HTTP server survives 1,000 concurrent
# connections, held half-sent requests, malformed and oversized requests
# with RSS bounded; 404/405; a scrape while a driver call hangs
# (hang-power.ini) returns at once.
# Everything started here is stopped by PID at the end.
for tool in promtool prometheus curl; do
    if ! command -v "$tool" >/dev/null; then
        bad "$tool is required for the exporter tests (scripts/deps.sh installs it)"
        return 0
    fi
done
PR="$MIGMON_SRC/tests/fixtures/proc/gpu-host"
DASH="$MIGMON_SRC/contrib/grafana/mig-gpu-mon.json"
# provisioned from a file or a ConfigMap, the dashboard must resolve its
# data source itself: a datasource variable, no import-time input
jeq "dashboard: a datasource variable, used by every query" "$(cat "$DASH")" \
    '[(.templating.list[0] | .type, .name), (.__inputs == null), ([.. | objects | select(has("datasource") and (.datasource | type) == "object") | .datasource.uid] | unique)]' \
    '["datasource","datasource",true,["${datasource}"]]'
PROM_PIDS=()

now_ns() { date +%s%N; }
ms_since() { echo $((($(now_ns) - $1) / 1000000)); }

# promtool's findings, less the ones dcgm-exporter's names and labels make
# unavoidable (modelName, Hostname, UUID, GPU_I_*; its counters, energy,
# PCIe replays, remapped rows and NVLink, named without _total, and
# PCIE_REPLAY_COUNTER's "counter"). Anything else is a real problem.
lint() {
    promtool check metrics 2>&1 |
        grep -vE "^DCGM_FI_[A-Z_]+ label names should be written in 'snake_case' not 'camelCase'$" |
        grep -vE '^DCGM_FI_DEV_(TOTAL_ENERGY_CONSUMPTION|PCIE_REPLAY_COUNTER|(UN)?CORRECTABLE_REMAPPED_ROWS|NVLINK_BANDWIDTH_TOTAL) counter metrics should have "_total" suffix$' |
        grep -vE "^DCGM_FI_DEV_PCIE_REPLAY_COUNTER metric name should not include type 'counter'$"
}

# === 1. promtool on every scenario's page ===================================
for s in "$MIGMON_SRC"/sim/scenarios/*.ini; do
    n=$(basename "$s")
    for compat in "" "--compat dcgm"; do
        # shellcheck disable=SC2086
        page=$(mon "$n" --once --format prometheus --timeout 1 --proc-root "$PR" \
            --export-processes $compat 2>/dev/null)
        eq "promtool: $n ${compat:-plain}" "$(printf '%s\n' "$page" | lint)" ""
        case "$page" in *$'\n'"migmon_build_info{"*) ok ;; *) bad "$n: no migmon_build_info" ;; esac
    done
done
page=$(mon h200-mig.ini --once --format prometheus)
contains "--once prometheus: a MIG ratio from GPM" "$page" \
    'migmon_mig_utilization_ratio{gpu="0",uuid="GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8",pci_bus_id="00000000:19:00.0",model="NVIDIA H200",gpu_instance_id="1",compute_instance_id="0",mig_profile="3g.71gb",mig_uuid="MIG-760076c7-d3b3-392a-4dba-0e98392dab98",source="gpm"} 0.'
case "$page" in *DCGM_FI_*) bad "--once prometheus without --compat has DCGM series" ;; *) ok ;; esac
eq "--no-host: no host series" "$(mon h200-mig.ini --once --format prometheus --no-host | grep -c '^migmon_host_')" 0
eq "--no-host: the device series stay" "$(mon h200-mig.ini --once --format prometheus --no-host | grep -c '^migmon_mig_utilization_ratio{')" 4
[ "$(printf '%s\n' "$page" | grep -c '^migmon_host_')" -gt 10 ] && ok || bad "without --no-host: host series expected"
err=$(mon h200-mig.ini --once --format json --no-host 2>&1); rc=$?
eq "--no-host with json: exit 2" "$rc" 2
contains "--no-host with json: says what it needs" "$err" "--no-host needs export or --once --format prometheus"
case "$page" in *migmon_process_*) bad "--once prometheus without --export-processes has process series" ;; *) ok ;; esac
page=$(mon dgx-a100-8x7.ini --once --format prometheus --compat dcgm)
contains "--compat dcgm: MIG framebuffer in MiB with dcgm's labels" "$page" 'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-'
contains "--compat dcgm: GPU_I labels" "$page" ',GPU_I_PROFILE="1g.10gb",GPU_I_ID="'
eq "--compat dcgm: no PROF series without GPM (A100)" "$(printf '%s\n' "$page" | grep -c '^DCGM_FI_PROF_SM_ACTIVE')" 0

# prom_json: the samples of an exposition on stdin as a JSON array of
# {name, labels, value} (for pages whose label values hold no '"')
prom_json() {
    grep -v '^#' | jq -R -s -c '[split("\n")[] | select(length > 0) |
        capture("^(?<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(?<l>.*)\\})? (?<v>[^ ]+)$") |
        {name, value: (.v | tonumber? // .v),
         labels: ([(.l // "") | scan("([a-zA-Z_][a-zA-Z0-9_]*)=\"([^\"]*)\"") | {(.[0]): .[1]}] | add // {})}]'
}
# --compat dcgm on a Hopper MIG board: DCGM_FI_PROF_GR_ENGINE_ACTIVE for each
# MIG instance, with dcgm-exporter's labels, is our GPM graphics activity:
# the migmon_ ratio of the same page, and the JSON percentage / 100.
page=$(MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo=h200-mig --once --format prometheus --compat dcgm)
json=$(MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo=h200-mig --once --format json)
samples=$(printf '%s\n' "$page" | prom_json)
gr='map(select(.name == "DCGM_FI_PROF_GR_ENGINE_ACTIVE" and .labels.GPU_I_ID != null))'
jeq "--compat dcgm h200: GR_ENGINE_ACTIVE per MIG instance (GPU_I_ID, GPU_I_PROFILE, value)" "$samples" \
    "$gr"' | map([.labels.GPU_I_ID, .labels.GPU_I_PROFILE, .value])' \
    '[["1","3g.71gb",0.85],["5","2g.35gb",0.205014417563635],["13","1g.18gb",0.117568741204067],["14","1g.18gb",0]]'
jeq "--compat dcgm h200: dcgm-exporter's label names on the MIG series" "$samples" \
    "$gr"' | map(.labels | keys) | unique' \
    '[["DCGM_FI_DRIVER_VERSION","GPU_I_ID","GPU_I_PROFILE","Hostname","UUID","device","gpu","hostname","modelName","pci_bus_id"]]'
jeq "--compat dcgm h200: ... and values (the parent GPU's)" "$samples" \
    "$gr"' | map(.labels | [.gpu, .UUID, .pci_bus_id, .device, .modelName, .Hostname, .hostname, .DCGM_FI_DRIVER_VERSION]) | unique' \
    "[[\"0\",\"GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8\",\"00000000:19:00.0\",\"nvidia0\",\"NVIDIA H200\",\"$(uname -n)\",\"$(uname -n)\",\"570.211.01\"]]"
# dcgm-exporter's MIG model: the MIG-mode GPU only through its instances,
# each with the GPU-wide values, so sums count memory once
jeq "--compat dcgm h200: sum(FB_USED) = the instances' sum, no whole-GPU series" "$samples" \
    'map(select(.name == "DCGM_FI_DEV_FB_USED")) | [length, (map(.value) | add), (map(select(.labels.GPU_I_ID == null)) | length)]' \
    "[4,$(printf '%s' "$json" | jq '[.devices[] | select(.kind == "mig") | .metrics.memory_used_bytes.value / 1048576 | floor] | add'),0]"
jeq "--compat dcgm h200: every instance has the GPU's temperature, power and clocks" "$samples" \
    '[("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_SM_CLOCK") as $n | map(select(.name == $n and .labels.GPU_I_ID != null)) | length]' \
    '[4,4,4]'
page=$(NODE_NAME=gpu-node-7 MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo=h200-mig --once --format prometheus --compat dcgm)
contains "--compat dcgm: Hostname and hostname from NODE_NAME" "$page" 'Hostname="gpu-node-7",hostname="gpu-node-7",'
contains "NODE_NAME: migmon_ series carry node" "$page" 'model="NVIDIA H200",node="gpu-node-7",'
# per MIG device of the JSON: [GI, GPM?, DCGM series, in 0-1, = migmon_ ratio, = JSON % / 100]
got=$(jq -n -c --argjson p "$samples" --argjson j "$json" '
    [$j.devices[] | select(.kind == "mig") | . as $m | ($m.gpu_instance_id | tostring) as $gi |
     ($p | map(select(.name == "DCGM_FI_PROF_GR_ENGINE_ACTIVE" and .labels.GPU_I_ID == $gi))) as $g |
     ($p | map(select(.name == "migmon_mig_utilization_ratio" and .labels.gpu_instance_id == $gi and
        .labels.source == "gpm"))) as $r |
     ($g[0].value - $m.metrics.gpu_util_pct.value / 100) as $d |
     [$m.gpu_instance_id, $m.metrics.gpu_util_pct.source, ($g | length),
      ($g[0].value >= 0 and $g[0].value <= 1), ($r | length) == 1 and $g[0].value == $r[0].value,
      ($d < 1e-6 and $d > -1e-6)]]' 2>&1)
eq "--compat dcgm h200: GR_ENGINE_ACTIVE = migmon_mig_utilization_ratio{source=gpm} = JSON gpu_util_pct / 100" \
    "$got" '[[1,"gpm",1,true,true,true],[5,"gpm",1,true,true,true],[13,"gpm",1,true,true,true],[14,"gpm",1,true,true,true]]'

# === helpers for the running exporter ==========================================
# start_export NAME SCENARIO ARGS...: runs `export` on a free loopback port;
# sets PORT; the PID is remembered for the end.
start_export() {
    local name=$1 scen=$2 i
    shift 2
    MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/$scen" MIGMON_SIM_TIME=${SIM_TIME:-100} \
        "$MIGMON_BIN" export --nvml-path "$MIGMON_SIM_LIB" --listen 127.0.0.1:0 "$@" \
        2>"$TMP/$name.err" &
    PROM_PIDS+=($!)
    LAST_PID=$!
    PORT=$(export_port "$TMP/$name.err")
    [ -n "$PORT" ] || bad "$name: export did not start: $(cat "$TMP/$name.err")"
}
# wait_health PORT: up to 10 s for /health 200
wait_health() {
    local i
    for ((i = 0; i < 100; i++)); do
        [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/health")" = 200 ] && return 0
        sleep 0.1
    done
    return 1
}
code() { curl -s -m 5 -o /dev/null -w '%{http_code}' "$@"; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
free_port() {
    local p
    for p in $(shuf -i 20000-60000 -n 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
    done
}

# === 2. a real Prometheus scraping dgx-a100-8x7 and h200-mig (also with dcgm) =
# the dgx as a DGX runs: with DCGM (the simulated library, on the node's nv-hostengine)
start_export dgx dgx-a100-8x7.ini -i 250 --export-processes --proc-root "$PR" \
    --dcgm-lib "$MIGMON_SIM_DIR/libdcgm.so.4"
DGX=$PORT
start_export h200 h200-mig.ini -i 250 --export-processes
H200=$PORT
start_export h200dcgm h200-mig.ini -i 250 --compat dcgm
H200DCGM=$PORT
wait_health "$DGX" && ok || bad "dgx exporter: /health never OK"
wait_health "$H200" && ok || bad "h200 exporter: /health never OK"
wait_health "$H200DCGM" && ok || bad "h200 --compat dcgm exporter: /health never OK"
PP=$(free_port)
mkdir -p "$TMP/prom-data"
cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
  evaluation_interval: 1s
scrape_configs:
  - job_name: dgx
    static_configs: [{targets: ["127.0.0.1:$DGX"]}]
  - job_name: h200
    static_configs: [{targets: ["127.0.0.1:$H200"]}]
  - job_name: h200dcgm
    static_configs: [{targets: ["127.0.0.1:$H200DCGM"]}]
EOF
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/prom-data" \
    --web.listen-address="127.0.0.1:$PP" --log.level=warn >"$TMP/prometheus.log" 2>&1 &
PROM_PIDS+=($!)
q() { curl -s -m 5 --data-urlencode "query=$1" "http://127.0.0.1:$PP/api/v1/query"; }
for ((i = 0; i < 200; i++)); do
    [ "$(q 'count(up == 1)' | jq -r '.data.result[0].value[1] // empty' 2>/dev/null)" = 3 ] && break
    sleep 0.1
done
eq "prometheus: the three exporters up" "$(q 'count(up == 1)' | jq -r '.data.result[0].value[1]')" 3
r=$(q 'migmon_mig_utilization_ratio{job="h200",mig_profile="3g.71gb",source="gpm"}')
jeq "prometheus: the h200's 3g.71gb instance, GPM-measured" "$r" \
    '.data.result | map(.metric | [.gpu_instance_id, .compute_instance_id, .mig_uuid, .uuid]) ' \
    '[["1","0","MIG-760076c7-d3b3-392a-4dba-0e98392dab98","GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8"]]'
jeq "prometheus: its value is a ratio" "$r" '.data.result[0].value[1] | tonumber | (. > 0 and . < 1)' true
jeq "prometheus: 56 MIG instances on the dgx" "$(q 'count(migmon_mig_info{job="dgx"})')" \
    '.data.result[0].value[1]' '"56"'
# PID 20100 (dgx-a100-8x7.ini: GPU 0, MIG slot 0, 2900 MiB) runs in a pod:
# the fixture's /proc/20100/cgroup is
# /kubepods/besteffort/pod0a1b2c3d-…/9b8c7d6e5f4a…, a runtime it does not name
jeq "prometheus: a dgx process with its pod and container" \
    "$(q 'migmon_process_gpu_memory_bytes{job="dgx",pid="20100"}')" \
    '.data.result | map(.metric | [.process_name, .pod_uid, .container, .gpu, .gpu_instance_id, .mig_profile]) + map(.value[1])' \
    '[["worker","0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d","cri:9b8c7d6e5f4a","0","7","1g.10gb"],"3040870400"]'
# dcgm-exporter's names through Prometheus, as a DCGM dashboard queries them
r=$(q 'DCGM_FI_PROF_GR_ENGINE_ACTIVE{job="h200dcgm",GPU_I_ID!=""}')
jeq "prometheus dcgm: GR_ENGINE_ACTIVE for the h200's four MIG instances" "$r" \
    '.data.result | map(.metric | [.GPU_I_ID, .GPU_I_PROFILE, .UUID, .device]) | sort_by(.[0] | tonumber)' \
    '[["1","3g.71gb","GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8","nvidia0"],["5","2g.35gb","GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8","nvidia0"],["13","1g.18gb","GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8","nvidia0"],["14","1g.18gb","GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8","nvidia0"]]'
jeq "prometheus dcgm: ... ratios in 0-1, the 3g.71gb one busy" "$r" \
    '[.data.result[] | .value[1] | tonumber | . >= 0 and . <= 1] + [.data.result[] | select(.metric.GPU_I_ID == "1") | .value[1] | tonumber > 0.5]' \
    '[true,true,true,true,true]'
r=$(q 'DCGM_FI_DEV_FB_USED{job="h200dcgm"}')
jeq "prometheus dcgm: FB_USED for each MIG instance (the MIG GPU only through them)" "$r" '.data.result | length' 4
jeq "prometheus dcgm: FB_USED of MIG 3g.71gb in MiB" "$r" \
    '.data.result[] | select(.metric.GPU_I_ID == "1") | .value[1] | tonumber | floor' 42535
jeq "prometheus dcgm: no DCGM series from the exporters without --compat" \
    "$(q 'count({__name__=~"DCGM_FI_.*",job=~"dgx|h200"})')" '.data.result' '[]'
# Every expression of the dashboard (panels and variables) returns data on
# each exporter alone ($instance is that exporter; $gpu "all"): the
# unprivileged DGX whose MIG GPUs have no memory or activity of their own
# as much as the H200. rate() windows get a minute.
for job in dgx h200; do
    case $job in dgx) inst="127.0.0.1:$DGX" ;; h200) inst="127.0.0.1:$H200" ;; esac
    exprs=$(jq -r '(.. | .expr? // empty), (.templating.list[].query | capture("^label_values\\((?<m>.*), *[a-z_]+\\)$").m)' "$DASH" |
        sed -e "s/\\\$instance/$inst/g" -e 's/\$gpu/.*/g' -e 's/\$__rate_interval/1m/g')
    nexpr=0 empty=()
    while IFS= read -r e; do
        [ -n "$e" ] || continue
        nexpr=$((nexpr + 1))
        n=0
        for ((i = 0; i < 50; i++)); do # rate() needs two scrapes: up to 5 s
            n=$(q "$e" | jq '.data.result | length' 2>/dev/null)
            [ "${n:-0}" -gt 0 ] && break
            sleep 0.1
        done
        # the dgx reads a fixture /proc whose CPU counters never move: no CPU % (N/A, not 0)
        [ "${n:-0}" -gt 0 ] || [ "$job/${e%%\{*}" = dgx/migmon_host_cpu_utilization_ratio ] || empty+=("$e")
    done <<<"$exprs"
    eq "dashboard on $job alone: every one of its $nexpr expressions returns data" "${empty[*]:-}" ""
    [ "$nexpr" -ge 20 ] && ok || bad "dashboard: only $nexpr expressions found"
done

# === 3. HTTP: gzip, 404/405, bounds ==========================================
U="http://127.0.0.1:$DGX"
hdr=$(curl -s -m 5 -D - -o "$TMP/gz.bin" -H 'Accept-Encoding: gzip' "$U/metrics")
contains "gzip: Content-Encoding" "$hdr" "Content-Encoding: gzip"
contains "content type" "$hdr" "Content-Type: text/plain; version=0.0.4; charset=utf-8"
eq "gzip: the page inflates and lints" "$(gzip -dc "$TMP/gz.bin" | lint)" ""
hdr=$(curl -s -m 5 -D - -o /dev/null -H 'Accept-Encoding: gzip;q=0, identity' "$U/metrics")
case "$hdr" in *Content-Encoding*) bad "gzip;q=0 still compressed" ;; *) ok ;; esac
eq "GET /nope: 404" "$(code "$U/nope")" 404
eq "GET /: 404" "$(code "$U/")" 404
eq "POST /metrics: 405" "$(code -X POST -d x=1 "$U/metrics")" 405
eq "PUT /health: 405" "$(code -X PUT -d x "$U/health")" 405
eq "DELETE /nope: 404" "$(code -X DELETE "$U/nope")" 404
contains "405 says what is allowed" "$(curl -s -m 5 -D - -o /dev/null -X POST "$U/metrics")" "Allow: GET, HEAD"
eq "HEAD /metrics: 200" "$(code -I "$U/metrics")" 200
eq "HEAD /metrics: no body" "$(curl -s -m 5 -I "$U/metrics" | grep -c '^migmon_')" 0
big=$(head -c 20000 /dev/zero | tr '\0' a)
c=$(code -H "X-Big: $big" "$U/metrics")
case "$c" in 4[0-9][0-9]) ok ;; *) bad "oversized header: got $c, expected a 4xx" ;; esac
c=$(code "$U/metrics?$big")
case "$c" in 4[0-9][0-9]) ok ;; *) bad "oversized URL: got $c, expected a 4xx" ;; esac
# raw malformed requests: an answer or a close, never a hang
raw() { # raw BYTES: send, print the status line (or nothing), 5 s at most
    timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/'"$DGX"'; printf "%b" "$1" >&3; head -1 <&3' _ "$1" 2>/dev/null | tr -d '\r'
}
for req in 'GARBAGE\r\n\r\n' 'GET\r\n\r\n' 'GET /metrics HTTP/9.9\r\n\r\n' '\x01\x02\x00\xff\r\n\r\n' \
    'GET /metrics HTTP/1.1\r\nContent-Length: -5\r\n\r\n' 'GET /metrics HTTP/1.1\r\nHost: a\r\nbad header\r\n\r\n'; do
    t0=$(now_ns)
    line=$(raw "$req")
    [ "$(ms_since "$t0")" -lt 4500 ] && ok || bad "malformed request '$req': no answer and no close within 4.5 s"
    case "$line" in "" | HTTP/1.[01]\ [45]*) ok ;; *) bad "malformed request '$req': got '$line'" ;; esac
done
eq "after malformed requests: /health" "$(code "$U/health")" 200

DPID=${PROM_PIDS[0]}
for ((i = 0; i < 20; i++)); do curl -s -m 5 --compressed -o /dev/null "$U/metrics"; done
rss0=$(rss_kb "$DPID")
# Slow clients: 100 connections each holding half a request (one address
# holds 64 at a time: the oldest are closed as more come).
slow=()
for ((i = 0; i < 100; i++)); do
    exec {fd}<>"/dev/tcp/127.0.0.1/$DGX" && slow+=("$fd")
    printf 'GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ' >&"$fd"
done
# A request line that starts with NUL reads as the blank lines a server
# skips before a request: it waits like a slow client, and is closed the same way.
exec {fd}<>"/dev/tcp/127.0.0.1/$DGX" && slow+=("$fd")
printf '\x00\x01\x02\xff\r\n\r\n' >&"$fd"
t_slow=$(now_ns)
t0=$(now_ns)
eq "slowloris: /health answers while 100 requests hang half-sent" "$(code "$U/health")" 200
[ "$(ms_since "$t0")" -lt 1000 ] && ok || bad "slowloris: /health took $(ms_since "$t0") ms"
# 1,000 concurrent connections from one address (four curls of 250 parallel
# transfers each): it holds 64 at a time, each new one closing its oldest
# unfinished one, so every transfer ends at once, answered or closed
# (tests/e2e/test_serve_limits.sh: a scrape through such floods).
urls=()
for ((i = 0; i < 250; i++)); do urls+=("$U/metrics"); done
t_load=$(now_ns)
for k in 1 2 3 4; do
    timeout 60 curl -s -Z --parallel-max 250 -m 20 -H 'Accept-Encoding: gzip' \
        -w '%{http_code}\n' -o /dev/null "${urls[@]}" >"$TMP/load.$k" 2>/dev/null &
done
wait_load() { local p; for p in $(jobs -p); do case " ${PROM_PIDS[*]} " in *" $p "*) ;; *) wait "$p" ;; esac; done; }
wait_load
ms_load=$(ms_since "$t_load")
n200=$(cat "$TMP"/load.* | grep -c '^200$')
echo "     (1,000 concurrent scrapes from one address: $n200 answered 200, all done in $ms_load ms)"
[ "$n200" -ge 64 ] && ok || bad "1,000 concurrent: only $n200 scrapes answered"
[ "$ms_load" -lt 10000 ] && ok || bad "1,000 concurrent: the transfers took $ms_load ms to end"
kill -0 "$DPID" 2>/dev/null && ok || bad "the exporter died under load"
eq "after the load: /health" "$(code "$U/health")" 200
rss1=$(rss_kb "$DPID")
echo "     (exporter RSS ${rss0} kB before the load, ${rss1} kB after)"
if grep -qE 'lib(a|t)san' "/proc/$DPID/maps"; then
    echo "     (sanitizer build: its shadow memory makes RSS no measure; bound not checked)"
else
    [ $((rss1 - rss0)) -lt 32768 ] && ok || bad "RSS grew from $rss0 kB to $rss1 kB"
fi
# The request deadline (10 s from the accept) closes the half-sent requests
# the per-address bound has not.
left=$((11000 - $(ms_since "$t_slow")))
[ "$left" -gt 0 ] && sleep "$(printf '%d.%03d' $((left / 1000)) $((left % 1000)))"
closed=0
for fd in "${slow[@]}"; do
    if timeout 2 cat <&"$fd" >/dev/null 2>&1; then closed=$((closed + 1)); fi
    exec {fd}<&-
done
eq "slowloris: every half-sent request closed" "$closed" 101

# === 4. a scrape while a driver call hangs ==================================
start_export hang hang-power.ini -i 300
HANG=$PORT
wait_health "$HANG" && ok || bad "hang-power exporter: /health never OK"
sleep 0.5
worst=0
for ((i = 0; i < 5; i++)); do
    t0=$(now_ns)
    curl -s -m 5 -o "$TMP/hang.prom" "http://127.0.0.1:$HANG/metrics"
    ms=$(ms_since "$t0")
    [ "$ms" -gt "$worst" ] && worst=$ms
    sleep 0.2
done
[ "$worst" -lt 500 ] && ok || bad "scrape while GPU 1 hangs took $worst ms"
page=$(cat "$TMP/hang.prom")
contains "hang: GPU 1 marked stalled" "$page" $'\nmigmon_gpu_sampling_stalled{gpu="1",uuid="GPU-0b0b0b0b-5555-4666-8777-888888888888"'
eq "hang: GPU 1's stalled series is 1" "$(printf '%s\n' "$page" | grep '^migmon_gpu_sampling_stalled{gpu="1"' | awk '{print $NF}')" 1
eq "hang: GPU 1 power absent" "$(printf '%s\n' "$page" | grep -c '^migmon_gpu_power_watts{gpu="1"')" 0
eq "hang: GPU 0 power present" "$(printf '%s\n' "$page" | grep -c '^migmon_gpu_power_watts{gpu="0".*source="direct"')" 1
eq "hang: the page lints" "$(printf '%s\n' "$page" | lint)" ""
eq "hang: /health OK (the sampler keeps publishing)" "$(code "http://127.0.0.1:$HANG/health")" 200

# === 5. startup errors, shutdown =============================================
err=$(MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/a100-sxm4-80gb.ini" timeout 5 "$MIGMON_BIN" export \
    --nvml-path "$MIGMON_SIM_LIB" --listen "127.0.0.1:$DGX" 2>&1 >/dev/null)
rc=$?
eq "port in use: exit 2" "$rc" 2
contains "port in use: message" "$err" "--listen 127.0.0.1:$DGX: Address already in use"
# libmicrohttpd is opened by export only: no other mode loads it (nor the
# GnuTLS it brings), and without it export says so and the rest works.
needed=$(readelf -d "$MIGMON_BIN" | grep NEEDED)
contains "the binary needs libc" "$needed" "libc.so"
case "$needed" in
*microhttpd* | *gnutls*) bad "the binary links libmicrohttpd or GnuTLS: $needed" ;;
*) ok ;;
esac
mkdir -p "$TMP/nomhd"
printf 'not a library\n' >"$TMP/nomhd/libmicrohttpd.so.12"
err=$(LD_LIBRARY_PATH="$TMP/nomhd" MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/a100-sxm4-80gb.ini" \
    timeout 5 "$MIGMON_BIN" export --nvml-path "$MIGMON_SIM_LIB" --listen 127.0.0.1:0 2>&1 >/dev/null)
rc=$?
eq "no libmicrohttpd: exit 2" "$rc" 2
contains "no libmicrohttpd: message" "$err" "mig-gpu-mon: the HTTP server needs libmicrohttpd ($TMP/nomhd/libmicrohttpd.so.12:"
contains "no libmicrohttpd: what to install" "$err" "Debian: libmicrohttpd12"
eq "no libmicrohttpd: one line" "$(printf '%s\n' "$err" | wc -l)" 1
out=$(LD_LIBRARY_PATH="$TMP/nomhd" MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/a100-sxm4-80gb.ini" \
    timeout 5 "$MIGMON_BIN" --once --format prometheus --nvml-path "$MIGMON_SIM_LIB" 2>&1)
eq "no libmicrohttpd: --once --format prometheus still works" "$?" 0
contains "no libmicrohttpd: the page" "$out" 'migmon_gpu_power_watts{gpu="0"'
for p in "${PROM_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
for p in "${PROM_PIDS[@]}"; do
    for ((i = 0; i < 100; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
    if kill -0 "$p" 2>/dev/null; then
        bad "PID $p ($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | head -c 60)) still runs 5 s after SIGTERM"
        kill -KILL "$p" 2>/dev/null
    fi
done
for p in "${PROM_PIDS[0]}" "${PROM_PIDS[1]}" "${PROM_PIDS[2]}" "$LAST_PID"; do
    wait "$p"
    eq "export ends on SIGTERM with status 0" "$?" 0
done
wait 2>/dev/null
