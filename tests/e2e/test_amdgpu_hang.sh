# shellcheck shell=bash
# amdgpu files that would hang a reader. FIFOs in place of the attributes
# (gpu_metrics, product_name, gpu_busy_percent, hwmon, KFD properties) are
# refused at once: sysfs attributes are regular files. A read that never
# comes back (a FUSE file standing for a hung GPU's gpu_metrics) is given up
# at the deadline, and the GPU is then stalled, with the file in the reason:
# in --once, the exporter (/health, /metrics) and the monitor, which never
# blames NVML for it.
FX="$MIGMON_SRC/tests/fixtures/sysfs"
PROCFX="$MIGMON_SRC/tests/fixtures/proc/amd-cpx"
# ms since an instant taken with $(ms)
ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
# stop PID: SIGTERM, and SIGKILL after 5 s (a monitor stuck in a read of a
# FIFO never ends on the first); echoes "killed" when it took the second
stop() {
    local i
    kill "$1" 2>/dev/null
    for ((i = 0; i < 50; i++)); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$1" 2>/dev/null; then
        kill -9 "$1" 2>/dev/null
        echo killed
    fi
    wait "$1" 2>/dev/null
}

# --- FIFOs ---
HF="$TMP/amd-fifo"
cp -a "$FX/mi300x-cpx" "$HF"
HFD="$HF/devices/pci0000:00/0000:0c:00.0"
KFD="$HF/class/kfd/kfd/topology/nodes"
for f in "$HFD/gpu_metrics" "$HFD/product_name" "$HFD/gpu_busy_percent" \
    "$HFD/hwmon/hwmon0/temp3_input" "$HFD/hwmon/hwmon0/power1_cap" \
    "$KFD/3/mem_banks/0/properties" "$KFD/0/properties"; do
    rm "$f"
    mkfifo "$f"
done
fifo_why() { echo "$1: not a regular file (a FIFO; sysfs attributes are regular files)"; }
t0=$(ms)
j=$(timeout 20 "$MIGMON_BIN" --backend amdgpu --sysfs-root "$HF" --proc-root "$PROCFX" --once --timeout 2 --format json)
rc=$?
took=$(($(ms) - t0))
eq "fifo: --once --timeout 2 exits 0" "$rc" 0
eq "fifo: ... within the timeout (${took} ms)" "$((took < 2000))" 1
jeq "fifo: the GPU and its 8 partitions, none stalled, not partial" "$j" \
    '[(.devices | length), ([.devices[] | .stall] | unique), .partial]' '[9,[null],false]'
jeq "fifo: no product_name: named from the PCI id" "$j" '.devices[0].name' '"AMD Instinct MI300X"'
jeq "fifo: gpu_busy_percent none with the path and why" "$j" \
    '.devices[0].metrics.gpu_util_pct | [.value, .reason]' "[null,\"$(fifo_why "$HFD/gpu_busy_percent")\"]"
jeq "fifo: gpu_metrics (energy)" "$j" \
    '.devices[0].metrics.energy_j | [.value, .reason]' "[null,\"$(fifo_why "$HFD/gpu_metrics")\"]"
jeq "fifo: a partition's activity (gpu_metrics)" "$j" \
    '.devices[4].metrics.gpu_util_pct | [.value, .reason]' "[null,\"$(fifo_why "$HFD/gpu_metrics")\"]"
jeq "fifo: hwmon's HBM temperature" "$j" \
    '.devices[0].metrics.memory_temp_c | [.value, .reason]' "[null,\"$(fifo_why "$HFD/hwmon/hwmon0/temp3_input")\"]"
jeq "fifo: hwmon's power cap" "$j" \
    '.devices[0].metrics.power_limit_w | [.value, .reason]' "[null,\"$(fifo_why "$HFD/hwmon/hwmon0/power1_cap")\"]"
jeq "fifo: KFD mem_banks of partition 2" "$j" \
    '.devices[3].metrics.memory_total_bytes | [.value, .reason]' "[null,\"$(fifo_why "$KFD/3/mem_banks/0/properties")\"]"
jeq "fifo: the regular files still read (power, the other partitions' VRAM)" "$j" \
    '[.devices[0].metrics.power_w.value, .devices[2].metrics.memory_total_bytes.value]' '[412,25769803776]'

"$MIGMON_BIN" export --backend amdgpu --sysfs-root "$HF" --listen 127.0.0.1:0 -i 250 \
    2>"$TMP/hang-exp.err" &
epid=$!
eport=$(export_port "$TMP/hang-exp.err")
health=""
for ((i = 0; i < 50; i++)); do
    health=$(curl -s -m 2 -w ' %{http_code}' "http://127.0.0.1:$eport/health" | sed -n '1p;$p' | tr '\n' ' ')
    [ "$health" = "OK  200" ] && break
    sleep 0.1
done
page=$(curl -s -m 2 "http://127.0.0.1:$eport/metrics")
eq "fifo: the exporter ends on SIGTERM" "$(stop "$epid")" ""
eq "fifo: the exporter's /health: 200, OK" "$health" "OK  200"
contains "fifo: the exporter: not stalled" "$page" \
    'migmon_gpu_sampling_stalled{gpu="0",uuid="AMD-4f1c2d3e5a6b7c80",pci_bus_id="0000:0c:00.0",model="AMD Instinct MI300X",vendor="amd"} 0'
eq "fifo: the exporter: no utilisation from the FIFO" "$(grep -c '^migmon_gpu_utilization_ratio{' <<<"$page")" 0

if command -v tmux >/dev/null; then
    . "$MIGMON_SRC/tests/e2e/tui_lib.sh"
    tui_start amdfifo 120 40 2 -- --backend amdgpu --sysfs-root "$HF" --proc-root "$PROCFX"
    scr=$(tui_capture amdfifo)
    contains "fifo: the monitor shows the GPU" "$scr" "GPU 0 AMD Instinct MI300X"
    eq "fifo: ... and does not blame NVML" "$(grep -ci nvml <<<"$scr")" 0
    eq "fifo: q quits" "$(tui_quit amdfifo q)" 0
    tui_kill_all
fi

# --- a read that does not come back: gpu_metrics on a FUSE file whose
# reads wait while $HOLD exists (tests/e2e/hangfs.py) ---
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
if [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null || ! "$PY" -c 'import fusepy' 2>/dev/null; then
    echo "     (skipped the hung-read checks: no /dev/fuse, fusermount3 or Python's fusepy)"
else
    HH="$TMP/amd-hung"
    cp -a "$FX/mi300x-cpx" "$HH"
    HHD="$HH/devices/pci0000:00/0000:0c:00.0"
    HOLD="$TMP/amd-hold"
    cp "$HHD/gpu_metrics" "$TMP/amd-gm"
    touch "$HOLD"
    "$PY" "$MIGMON_SRC/tests/e2e/hangfs.py" "$HHD/gpu_metrics" "$HOLD" "$TMP/amd-gm" 2>"$TMP/hangfs.err" &
    fspid=$!
    # a run cut short must not leave the mount (nor $TMP, which holds it)
    trap 'rm -f "$HOLD"; fusermount3 -u "$HHD/gpu_metrics" 2>/dev/null; rm -rf "$TMP"' EXIT
    for ((i = 0; i < 100; i++)); do
        grep -q " $HHD/gpu_metrics fuse" /proc/mounts && break
        sleep 0.05
    done
    eq "hung: the FUSE file is mounted" "$(grep -c " $HHD/gpu_metrics fuse" /proc/mounts)" 1
    stalled="stalled 2 s reading $HHD/gpu_metrics"

    # --once: the snapshot by the deadline, the process ends once the read
    # comes back (no thread can leave a read the kernel holds)
    out="$TMP/hung-once.json"
    t0=$(ms)
    ("$MIGMON_BIN" --backend amdgpu --sysfs-root "$HH" --proc-root "$PROCFX" --once --timeout 2 \
        --format json >"$out" 2>"$TMP/hung-once.err"
    echo $? >"$TMP/hung-once.rc") &
    opid=$!
    for ((i = 0; i < 200; i++)); do
        [ -s "$out" ] && jq -e . "$out" >/dev/null 2>&1 && break
        sleep 0.05
    done
    took=$(($(ms) - t0))
    j=$(cat "$out")
    eq "hung: --once --timeout 2 writes its snapshot at the deadline (${took} ms)" \
        "$((took >= 1900 && took < 3500))" 1
    jeq "hung: partial, the GPU and its partitions stalled, with the file" "$j" \
        '[.partial, ([.devices[] | .stall] | unique)]' "[true,[\"$stalled\"]]"
    jeq "hung: the table's values: none with it" "$j" \
        '[.devices[0].metrics.energy_j.reason, .devices[5].metrics.gpu_util_pct.reason]' "[\"$stalled\",\"$stalled\"]"
    jeq "hung: the reads after it are not waited on (none, the same reason)" "$j" \
        '.devices[0].metrics.gpu_util_pct | [.value, .reason]' "[null,\"$stalled\"]"
    rm -f "$HOLD"
    wait "$opid"
    eq "hung: --once's exit status: 3 (partial)" "$(cat "$TMP/hung-once.rc")" 3
    contains "hung: ... and its message" "$(cat "$TMP/hung-once.err")" "partial snapshot"

    # the exporter: /health stays OK, the GPU is stalled in /metrics
    touch "$HOLD"
    "$MIGMON_BIN" export --backend amdgpu --sysfs-root "$HH" --listen 127.0.0.1:0 -i 250 \
        2>"$TMP/hung-exp.err" &
    epid=$!
    eport=$(export_port "$TMP/hung-exp.err")
    page=""
    for ((i = 0; i < 100; i++)); do
        page=$(curl -s -m 2 "http://127.0.0.1:$eport/metrics")
        case "$page" in *'vendor="amd"} 1'*) break ;; esac
        sleep 0.1
    done
    health=$(curl -s -m 2 -w ' %{http_code}' "http://127.0.0.1:$eport/health" | sed -n '1p;$p' | tr '\n' ' ')
    contains "hung: the exporter: the GPU stalled" "$page" \
        'migmon_gpu_sampling_stalled{gpu="0",uuid="AMD-4f1c2d3e5a6b7c80",pci_bus_id="0000:0c:00.0",model="AMD Instinct MI300X",vendor="amd"} 1'
    eq "hung: ... its 8 partitions too" "$(grep -c '^migmon_mig_sampling_stalled{.*vendor="amd".*} 1$' <<<"$page")" 8
    eq "hung: the exporter's /health: 200, OK (it samples on)" "$health" "OK  200"
    rm -f "$HOLD"
    eq "hung: the exporter ends on SIGTERM" "$(stop "$epid")" ""

    # the monitor: the device row says STALLED, the detail why
    if command -v tmux >/dev/null; then
        touch "$HOLD"
        tui_start amdhung 120 40 2 -- --backend amdgpu --sysfs-root "$HH" --proc-root "$PROCFX" -i 300
        tui_tick amdhung
        scr=$(tui_capture amdhung)
        contains "hung: the monitor tags the GPU" "$scr" "STALLED"
        contains "hung: ... and says which read" "$scr" "stalled"
        eq "hung: ... and does not blame NVML" "$(grep -ci nvml <<<"$scr")" 0
        rm -f "$HOLD"
        eq "hung: q quits" "$(tui_quit amdhung q)" 0
        tui_kill_all
    fi
    rm -f "$HOLD"
    fusermount3 -u "$HHD/gpu_metrics" 2>/dev/null || umount -l "$HHD/gpu_metrics"
    wait "$fspid" 2>/dev/null
    trap 'rm -rf "$TMP"' EXIT # run.sh's
    eq "hung: unmounted" "$(grep -c " $HHD/gpu_metrics fuse" /proc/mounts)" 0
fi
