# shellcheck shell=bash
# The exporter's pod, namespace and container labels from the kubelet's
# pod-resources API (src/system/podres.c, docs/prometheus.md
# "Kubernetes"), against a real gRPC server on a unix socket
# (kubelet_server.py): pods hold a GPU and two MIG instances of the
# simulator; a device no pod holds has no such label; a kubelet that
# stalls, answers garbage or vanishes never delays a scrape past 1 s, is
# said once on stderr and in /health's body, and the labels go (after the
# keep of 3 refreshes) and come back; the binary needs neither library, and
# runs without them.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
if ! command -v curl >/dev/null || ! "$PY" -c 'import grpc, google.protobuf' 2>/dev/null; then
    bad "kubelet: curl, python3-grpcio and python3-protobuf are required (scripts/deps.sh installs them)"
    return 0
fi
KT="$TMP/kubelet"
mkdir -p "$KT"
SOCK="$KT/kubelet.sock"
GPU0=GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8
GPU1=GPU-4d8f2a6c-13e7-4b59-9c0a-7e2d5f8b1a36
MIG_GI1=MIG-760076c7-d3b3-392a-4dba-0e98392dab98  # 3g.71gb
MIG_GI5=MIG-3b36b6e9-53c9-a66e-40ad-6c326efaf3d0  # 2g.35gb: no pod
MIG_GI13=MIG-7ee8cbee-f200-710d-bf7c-b31042c3833c # 1g.18gb

# h200-mig (GPU 0, MIG on) and a second GPU with MIG off
{
    cat "$MIGMON_SRC/sim/scenarios/h200-mig.ini"
    cat <<EOF

[gpu.1]
name = NVIDIA H100 80GB HBM3
uuid = $GPU1
pci_bus_id = 00000000:1B:00.0
architecture = hopper
memory_total_mib = 81559
mig_mode = off
util_gpu = 90
util_memory = 40
temperature_c = 60
power_w = 500
power_limit_w = 700
fan_pct = none
EOF
} >"$KT/scenario.ini"
cat >"$KT/pods.json" <<EOF
[{"name": "llm-0", "namespace": "serving", "containers": [
   {"name": "vllm", "devices": [{"resource": "nvidia.com/mig-3g.71gb", "ids": ["$MIG_GI1"]}]}]},
 {"name": "notebook", "namespace": "research", "containers": [
   {"name": "jupyter", "devices": [{"resource": "nvidia.com/mig-1g.18gb", "ids": ["$MIG_GI13::1"]}]},
   {"name": "sidecar", "devices": []}]},
 {"name": "trainer-0", "namespace": "training", "containers": [
   {"name": "pytorch", "devices": [{"resource": "nvidia.com/gpu", "ids": ["$GPU1"]}]}]},
 {"name": "fpga-job", "namespace": "default", "containers": [
   {"name": "c", "devices": [{"resource": "example.com/fpga", "ids": ["fpga0"]}]}]}]
EOF
# The notebook's process (PID 7102 on GI 13) in a /proc whose cgroup names
# its pod's UID, and the kubelet's log directories naming that pod (and
# another), among names that are not the kubelet's.
UID_NB=3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d
cp -r "$MIGMON_SRC/tests/fixtures/proc/gpu-host" "$KT/proc"
mkdir "$KT/proc/7102"
for f in stat status cmdline; do
    sed 's/4101/7102/g' "$MIGMON_SRC/tests/fixtures/proc/gpu-host/4101/$f" >"$KT/proc/7102/$f"
done
echo "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID_NB//-/_}.slice/cri-containerd-$(printf 'ab%.0s' $(seq 32)).scope" \
    >"$KT/proc/7102/cgroup"
mkdir -p "$KT/logs/research_notebook_$UID_NB/jupyter" "$KT/logs/serving_llm-0_0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d" \
    "$KT/logs/no_uid" "$KT/logs/a_b_c_d" "$KT/logs/Upper_case_$UID_NB"
: >"$KT/logs/file_not-dir_0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4e"
# refreshed every second: labels are kept up to 3 s after the last answer
printf '[export]\nkubelet_refresh = 1000\npod_logs = %s\n' "$KT/logs" >"$KT/config.ini"

KPID=
# start_kubelet MODE [PODS]: the stand-in on $SOCK, up within 10 s, with
# the pods of PODS ($KT/pods.json). It listens on
# a socket of its own that is then renamed over $SOCK, and only then is the
# one before stopped, so a refresh never meets the change (a connection
# refused in between would be a state of its own).
KN=0
start_kubelet() {
    local i old=$KPID out="$KT/server.$((++KN))"
    rm -f "$SOCK.new"
    "$PY" "$MIGMON_SRC/tests/e2e/kubelet_server.py" "$SOCK.new" "$1" "${2:-$KT/pods.json}" \
        >"$out.out" 2>"$out.err" &
    KPID=$!
    for ((i = 0; i < 400; i++)); do
        grep -q ready "$out.out" 2>/dev/null && break
        sleep 0.05
    done
    grep -q ready "$out.out" || bad "kubelet: the stand-in ($1) did not start in 20 s: $(cat "$out.err")"
    mv -f "$SOCK.new" "$SOCK"
    if [ -n "$old" ]; then
        kill "$old" 2>/dev/null
        wait "$old" 2>/dev/null
    fi
}
stop_kubelet() {
    [ -n "$KPID" ] || return 0
    kill "$KPID" 2>/dev/null
    wait "$KPID" 2>/dev/null
    KPID=
}
# page: /metrics into $KT/page; the time it took in ms on stdout
page() {
    local t
    t=$(curl -s -m 5 -o "$KT/page" -w '%{time_total}' "http://127.0.0.1:$KPORT/metrics")
    awk -v t="$t" 'BEGIN { printf "%d\n", t * 1000 }'
}
health() { curl -s -m 5 "http://127.0.0.1:$KPORT/health"; }
# scrapes PHASE: 10 scrapes 100 ms apart; each must take under 1 s
scrapes() {
    local i ms max=0
    for ((i = 0; i < 10; i++)); do
        ms=$(page)
        [ "$ms" -gt "$max" ] && max=$ms
        sleep 0.1
    done
    [ "$max" -lt 1000 ] && ok || bad "kubelet $1: a scrape took $max ms"
    echo "     (kubelet $1: slowest of 10 scrapes $max ms)"
}
# device samples with a pod label (a process's name its own pod: not counted)
labelled() { grep -v '^migmon_process_' "$KT/page" | grep -c 'pod="'; }
# wait_labels N SECONDS: until the page has N labelled samples (0: none)
wait_labels() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        page >/dev/null
        if [ "$1" = 0 ]; then [ "$(labelled)" -eq 0 ] && return 0; else [ "$(labelled)" -gt 0 ] && return 0; fi
        sleep 0.1
    done
    return 1
}

# === the binary needs neither library ==========================================
if command -v readelf >/dev/null; then
    eq "kubelet: the binary does not need libnghttp2 or libprotobuf-c" \
        "$(readelf -d "$MIGMON_BIN" | grep -c 'NEEDED.*\(nghttp2\|protobuf-c\)')" 0
fi

# === labels from the kubelet ==================================================
start_kubelet ok
MIGMON_SIM_SCENARIO="$KT/scenario.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" export \
    --nvml-path "$MIGMON_SIM_LIB" --listen 127.0.0.1:0 --config "$KT/config.ini" -i 200 \
    --compat dcgm --kubelet-socket "$SOCK" --export-processes --proc-root "$KT/proc" \
    2>"$KT/export.err" &
EPID=$!
KPORT=$(export_port "$KT/export.err")
[ -n "$KPORT" ] || bad "kubelet: export did not start: $(cat "$KT/export.err")"
wait_labels 1 10 || bad "kubelet: no pod labels within 10 s: $(health)"
P=$(cat "$KT/page")
contains "kubelet: a MIG instance's migmon_ series carry its pod" "$P" \
    "migmon_mig_info{gpu=\"0\",uuid=\"$GPU0\",pci_bus_id=\"00000000:19:00.0\",model=\"NVIDIA H200\",gpu_instance_id=\"1\",compute_instance_id=\"0\",mig_profile=\"3g.71gb\",mig_uuid=\"$MIG_GI1\",pod=\"llm-0\",namespace=\"serving\",container=\"vllm\",mig_index=\"0\"} 1"
contains "kubelet: the ::N suffix is stripped (GI 13)" "$P" \
    "mig_uuid=\"$MIG_GI13\",pod=\"notebook\",namespace=\"research\",container=\"jupyter\",mig_index=\"2\"} 1"
contains "kubelet: a whole GPU's series carry its pod" "$P" \
    "migmon_gpu_temperature_celsius{gpu=\"1\",uuid=\"$GPU1\",pci_bus_id=\"00000000:1B:00.0\",model=\"NVIDIA H100 80GB HBM3\",pod=\"trainer-0\",namespace=\"training\",container=\"pytorch\",source=\"direct\"} 60"
contains "kubelet: --compat dcgm: a GPU instance's DCGM_FI_ series carry its pod" "$P" \
    "GPU_I_PROFILE=\"3g.71gb\",GPU_I_ID=\"1\",pod=\"llm-0\",namespace=\"serving\",container=\"vllm\"}"
contains "kubelet: --compat dcgm: a whole GPU's DCGM_FI_ series carry its pod" "$P" \
    "DCGM_FI_DEV_GPU_TEMP{gpu=\"1\",UUID=\"$GPU1\",pci_bus_id=\"00000000:1B:00.0\",device=\"nvidia1\",modelName=\"NVIDIA H100 80GB HBM3\","
eq "kubelet: DCGM_FI_DEV_GPU_TEMP of GPU 1 names the trainer" \
    "$(grep '^DCGM_FI_DEV_GPU_TEMP{gpu="1"' "$KT/page" | grep -o 'pod="[^"]*",namespace="[^"]*",container="[^"]*"')" \
    'pod="trainer-0",namespace="training",container="pytorch"'
# a labelled sample is one of the three held devices' (GPU 0 itself, GI 5
# and GI 14 are held by no pod)
eq "kubelet: only the held devices carry pod labels" \
    "$(grep -v '^migmon_process_' "$KT/page" | grep 'pod="' | grep -vc -e "mig_uuid=\"$MIG_GI1\"" -e "mig_uuid=\"$MIG_GI13\"" \
        -e "uuid=\"$GPU1\"" -e "UUID=\"$GPU1\"" -e 'GPU_I_ID="1",' -e 'GPU_I_ID="13",')" 0
contains "kubelet: a device no pod holds keeps its series, without pod labels" "$P" \
    "mig_uuid=\"$MIG_GI5\",mig_index=\"1\"} 1"
eq "kubelet: GPU 0 (MIG on, no pod) has no pod label" \
    "$(grep "uuid=\"$GPU0\"" "$KT/page" | grep -v mig_uuid | grep -c 'pod=')" 0
eq "kubelet: no namespace or container label without a pod" \
    "$(grep -v '^migmon_process_' "$KT/page" | grep -c -e 'namespace="' -e 'container="')" "$(labelled)"
# a process names its own pod (from its cgroup's UID and the log
# directories), not the device's holder, and has one container label (its
# runtime's id)
l=$(grep '^migmon_process_gpu_memory_bytes{.*pid="7102"' "$KT/page")
contains "kubelet: a process's series name its pod from the log directories" "$l" \
    "mig_uuid=\"$MIG_GI13\",pid=\"7102\",process_name=\"python3\",pod_uid=\"$UID_NB\",pod=\"notebook\",namespace=\"research\",container=\"containerd:abababababab\",source=\"direct\"}"
eq "kubelet: one container label on a process series" "$(grep -o 'container=' <<<"$l" | wc -l)" 1
eq "kubelet: a process whose pod is not known has no pod label" \
    "$(grep '^migmon_process_gpu_memory_bytes{.*pid="7001"' "$KT/page" | grep -c 'pod=')" 0
h=$(health)
contains "kubelet: /health says what the kubelet listed" "$h" "OK
kubelet: $SOCK: 4 pods, 4 device ids, listed "
contains "kubelet: /health says how many pods the log directories name" "$h" \
    "kubelet: pod log directories $KT/logs: 2 pods"
eq "kubelet: stderr says where the labels come from, once" \
    "$(grep -c "kubelet: pod labels from $SOCK (4 pods, 4 device ids), asked every 1 s" "$KT/export.err")" 1
scrapes ok

# === the kubelet stalls: scrapes stay fast, labels kept 3 s, then dropped =====
start_kubelet stall
page >/dev/null
[ "$(labelled)" -gt 0 ] && ok || bad "kubelet stall: the labels went at once (kept for 3 s)"
scrapes stall
wait_labels 0 10 && ok || bad "kubelet stall: the labels were not dropped within 10 s: $(health)"
h=$(health)
contains "kubelet stall: /health stays OK and says why" "$h" "OK
kubelet: $SOCK: no answer within 500 ms"
contains "kubelet stall: /health says the labels are gone" "$h" "); no pod labels"
eq "kubelet stall: said once on stderr (whichever deadline came first)" \
    "$(grep -c "kubelet: $SOCK: no answer within 500 ms.*; the pod labels of its last answer are kept for at most 3 s" "$KT/export.err")" 1
eq "kubelet stall: not said again when the labels go" "$(grep -c "no answer within 500 ms" "$KT/export.err")" 1

# === garbage on the socket =================================================
seen=$(wc -l <"$KT/export.err")
start_kubelet garbage
scrapes garbage
sleep 1.5
# what nghttp2 makes of random bytes varies (a GOAWAY, a frame error, a
# connection reset): the kind is said, once
hl=$(health | grep "^kubelet: $SOCK: ")
case "$hl" in
*"no answer within"* | *"no socket"*) bad "kubelet garbage: /health: $hl" ;;
*"HTTP/2"* | *"connection"*) contains "kubelet garbage: /health: no labels" "$hl" "; no pod labels" ;;
*) bad "kubelet garbage: /health does not say HTTP/2 or connection: $hl" ;;
esac
eq "kubelet garbage: still no labels" "$(labelled)" 0
# what nghttp2 makes of them varies (a GOAWAY, a frame error, a reset
# connection): one line of the HTTP/2 kind, whatever it says
new=$(tail -n +$((seen + 1)) "$KT/export.err" | grep 'kubelet:')
eq "kubelet garbage: said once on stderr" "$(grep -c 'no pod labels until it answers' <<<"$new") $(wc -l <<<"$new")" "1 1"

# === gRPC with bytes that are no List answer =================================
start_kubelet badproto
sleep 2.5
contains "kubelet badproto: /health names the undecodable answer" "$(health)" \
    "the answer is not a ListPodResourcesResponse (12 bytes that do not decode)"
eq "kubelet badproto: said once" "$(grep -c 'not a ListPodResourcesResponse' "$KT/export.err")" 1

# === the kubelet vanishes, socket and all ====================================
rm -f "$SOCK"
stop_kubelet
scrapes vanished
contains "kubelet vanished: /health says there is no socket" "$(health)" \
    "kubelet: $SOCK: no socket there (No such file or directory) (for "
eq "kubelet vanished: said once" "$(grep -c "no socket there" "$KT/export.err")" 1

# === it comes back ===========================================================
start_kubelet ok
wait_labels 1 10 && ok || bad "kubelet back: no labels within 10 s: $(health)"
contains "kubelet back: the labels are those of the new answer" "$(cat "$KT/page")" \
    "mig_uuid=\"$MIG_GI1\",pod=\"llm-0\",namespace=\"serving\",container=\"vllm\",mig_index=\"0\"} 1"
eq "kubelet back: stderr says it answers again" \
    "$(grep -c "(4 pods, 4 device ids; it answers again)" "$KT/export.err")" 1
n=$(grep -c 'kubelet:' "$KT/export.err")
[ "$n" = 6 ] && ok || bad "kubelet: $n lines on stderr, not one per change of state (6): $(cat "$KT/export.err")"
kill -TERM "$EPID"
wait "$EPID"
eq "kubelet: export stops on SIGTERM with the kubelet thread, exit 0" "$?" 0
stop_kubelet

# === names full of controls, and one of 3.9 MB ================================
# The instance's pod is named with C1 CSI, a right-to-left override, RLM and
# a zero width space, its namespace with an OSC title, its container with a
# BOM and the line separator; GPU 1's pod has a name of 3.9 MB (under the
# 4 MiB a List answer may be), a namespace and a container of 100 bytes.
# The labels are cleaned where the answer is read, and cut to what
# Kubernetes allows (253 bytes for a pod's name, 63 for a namespace's or a
# container's): every series still carries them, and a scrape stays small.
"$PY" - "$KT/pods-hostile.json" "$MIG_GI1" "$GPU1" <<'PY'
import json, sys
pods = [{"name": "llm\u009b31m\u202e0-\u200f\u200b", "namespace": "ser\u001b]0;x\u0007ving",
         "containers": [{"name": "vl\ufeff\u2028lm", "devices": [
             {"resource": "nvidia.com/mig-3g.71gb", "ids": [sys.argv[2]]}]}]},
        {"name": "t" * 3900000, "namespace": "n" * 100,
         "containers": [{"name": "c" * 100, "devices": [
             {"resource": "nvidia.com/gpu", "ids": [sys.argv[3]]}]}]}]
json.dump(pods, open(sys.argv[1], "w"))
PY
start_kubelet ok "$KT/pods-hostile.json"
MIGMON_SIM_SCENARIO="$KT/scenario.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" export \
    --nvml-path "$MIGMON_SIM_LIB" --listen 127.0.0.1:0 -i 200 --kubelet-socket "$SOCK" \
    2>"$KT/hostile.err" &
EPID=$!
KPORT=$(export_port "$KT/hostile.err")
[ -n "$KPORT" ] || bad "kubelet hostile: export did not start: $(cat "$KT/hostile.err")"
wait_labels 1 10 || bad "kubelet hostile: no pod labels within 10 s: $(health)"
eq "kubelet hostile: /metrics is clean text" "$(clean_text "$KT/page")" ok
contains "kubelet hostile: the instance's pod, namespace and container, cleaned" "$(cat "$KT/page")" \
    "mig_uuid=\"$MIG_GI1\",pod=\"llm??31m???0-??????\",namespace=\"ser?]0;x?ving\",container=\"vl??????lm\",mig_index=\"0\"} 1"
long="pod=\"$(printf 't%.0s' $(seq 253))\",namespace=\"$(printf 'n%.0s' $(seq 63))\",container=\"$(printf 'c%.0s' $(seq 63))\""
eq "kubelet hostile: GPU 1's labels cut to 253 and 63 bytes" \
    "$(grep '^migmon_gpu_temperature_celsius{gpu="1"' "$KT/page" | grep -o 'pod="[^"]*",namespace="[^"]*",container="[^"]*"')" \
    "$long"
size=$(wc -c <"$KT/page")
[ "$size" -lt 200000 ] && ok || bad "kubelet hostile: a scrape of $size bytes (the labels not cut)"
scrapes hostile
kill -TERM "$EPID"
wait "$EPID"
eq "kubelet hostile: export stops on SIGTERM, exit 0" "$?" 0
stop_kubelet

# === --kubelet-socket off: not asked, nothing said ===========================
MIGMON_SIM_SCENARIO="$KT/scenario.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" export \
    --nvml-path "$MIGMON_SIM_LIB" --listen 127.0.0.1:0 -i 200 --kubelet-socket off \
    2>"$KT/off.err" &
EPID=$!
KPORT=$(export_port "$KT/off.err")
for _ in $(seq 50); do [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$KPORT/health")" = 200 ] && break; sleep 0.1; done
h=$(health)
eq "kubelet off: /health is OK" "$(printf '%s\n' "$h" | head -n 1)" "OK"
case "$h" in
*kubelet*) bad "kubelet off: /health speaks of the kubelet: $h" ;;
*) ok ;;
esac
eq "kubelet off: nothing on stderr but the listening line" "$(grep -vc 'serving http' "$KT/off.err")" 0
kill -TERM "$EPID"
wait "$EPID"

# === the default socket on a host without Kubernetes: quiet but for /health ===
if [ ! -e /var/lib/kubelet/pod-resources/kubelet.sock ]; then
    MIGMON_SIM_SCENARIO="$KT/scenario.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" export \
        --nvml-path "$MIGMON_SIM_LIB" --listen 127.0.0.1:0 -i 200 2>"$KT/default.err" &
    EPID=$!
    KPORT=$(export_port "$KT/default.err")
    for _ in $(seq 50); do [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$KPORT/health")" = 200 ] && break; sleep 0.1; done
    contains "kubelet default, no socket: /health says so" "$(health)" \
        "kubelet: /var/lib/kubelet/pod-resources/kubelet.sock: no socket there"
    eq "kubelet default, no socket: nothing on stderr but the listening line" \
        "$(grep -vc 'serving http' "$KT/default.err")" 0
    kill -TERM "$EPID"
    wait "$EPID"
fi

# === without libnghttp2: said once, no labels, everything else served ========
NG=$(ldconfig -p 2>/dev/null | awk '$1 == "libnghttp2.so.14" { print $NF; exit }')
if [ -n "$NG" ] && unshare -m sh -c 'mount --bind /dev/null "$1"' sh "$(readlink -f "$NG")" 2>/dev/null; then
    start_kubelet ok
    unshare -m sh -c 'mount --bind /dev/null "$(readlink -f "$1")" && shift && exec "$@"' sh "$NG" \
        env MIGMON_SIM_SCENARIO="$KT/scenario.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" export \
        --nvml-path "$MIGMON_SIM_LIB" --listen 127.0.0.1:0 -i 200 --kubelet-socket "$SOCK" \
        2>"$KT/nolib.err" &
    EPID=$!
    KPORT=$(export_port "$KT/nolib.err")
    sleep 2.5
    page >/dev/null
    eq "kubelet without libnghttp2: no labels" "$(labelled)" 0
    contains "kubelet without libnghttp2: the GPUs are served" "$(cat "$KT/page")" \
        "migmon_gpu_temperature_celsius{gpu=\"1\""
    contains "kubelet without libnghttp2: /health names the package" "$(health)" \
        "pod labels need libnghttp2"
    eq "kubelet without libnghttp2: said once" "$(grep -c 'pod labels need libnghttp2' "$KT/nolib.err")" 1
    kill -TERM "$EPID"
    wait "$EPID"
    stop_kubelet
else
    echo "     (kubelet: no libnghttp2 in ld.so's cache, or no mount namespace to hide it in: the missing library not checked)"
fi
