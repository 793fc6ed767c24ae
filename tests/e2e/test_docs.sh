# shellcheck shell=bash
# Every member the JSON snapshot writes is documented: docs/json.md says
# members are never omitted, so its tables (with docs/host-metrics.md for
# "host" and docs/metrics.md for the metrics) must name each one, as `key`
# or "key". The scenarios cover GPUs, MIG devices, processes, a hostile
# driver, no GPU, an inaccessible GPU and a MIG device without a UUID.
docs=("$MIGMON_SRC/docs/json.md" "$MIGMON_SRC/docs/host-metrics.md" "$MIGMON_SRC/docs/metrics.md")
keys=$(for s in h200-mig dgx-a100-8x7 a100-sxm4-80gb hostile no-gpu inaccessible-gpu mig-no-uuid; do
    MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/$s.ini" MIGMON_SIM_TIME=100 \
        "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" --once --format json --gpm off </dev/null
done | jq -r '[paths | map(select(type == "string")) | last | select(. != null)] | .[]' | sort -u)
# and those of --once --all-processes (docs/json.md, "All processes")
apkeys=$(MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/h200-mig.ini" MIGMON_SIM_TIME=100 \
    "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" --once --all-processes --format json --gpm off </dev/null |
    jq -r '.[] | keys[]' | sort -u)
for k in device gpu_uuid elapsed_s sm_util_source; do
    grep -qx -- "$k" <<<"$apkeys" || bad "docs: --all-processes wrote no member $k"
done
keys=$(printf '%s\n%s\n' "$keys" "$apkeys" | sort -u)
# the scenarios did write: top level, host, device, metric and process members
for k in schema cuda_driver_version total_pct gpu_instance_id gpu_util_pct source memory_bytes; do
    grep -qx -- "$k" <<<"$keys" || bad "docs: the snapshots have no member $k (scenarios changed?)"
done
missing=()
for k in $keys; do
    grep -qF -e "\`$k\`" -e "\"$k\"" "${docs[@]}" || missing+=("$k")
done
eq "docs: every JSON member of the snapshots is documented" "${missing[*]}" ""

# docs/metrics.md maps every label to its names in each output: every
# Prometheus metric the exporter writes (prom_write, the renderer of both
# export and --once --format prometheus) on the bundled scenarios, process
# metrics included (--export-processes, processes visible through a /proc
# fixture), is named there as `name`, so the table cannot fall behind
proms=$(for s in h200-mig dgx-a100-8x7 a100-sxm4-80gb h100-sxm hostile no-gpu inaccessible-gpu faults; do
    pr=()
    [ "$s" = dgx-a100-8x7 ] && pr=(--proc-root "$MIGMON_SRC/tests/fixtures/proc/gpu-host")
    MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/$s.ini" MIGMON_SIM_TIME=100 \
        "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" --once --format prometheus --export-processes \
        "${pr[@]}" </dev/null 2>/dev/null
done | awk '$1 == "#" && $2 == "TYPE" { print $3 }' | sort -u)
# the scenarios did write GPU, MIG, GPM, host, process and status families
for k in migmon_gpu_utilization_ratio migmon_mig_memory_utilization_ratio migmon_gpu_nvlink_tx_bytes_per_second \
    migmon_host_cpu_utilization_ratio migmon_process_cpu_ratio migmon_nvml_up migmon_mig_info; do
    grep -qx -- "$k" <<<"$proms" || bad "docs: the scenarios wrote no $k (scenarios changed?)"
done
missing=()
for k in $proms; do
    grep -qF -e "\`$k\`" "$MIGMON_SRC/docs/metrics.md" || missing+=("$k")
done
eq "docs: every Prometheus metric the exporter writes is in docs/metrics.md" "${missing[*]}" ""
# ... and the one name of memory-controller activity is there with its meaning
contains "docs: metrics.md names MemBW and what it is" "$(cat "$MIGMON_SRC/docs/metrics.md")" \
    "**MemBW** (memory bandwidth /
memory-controller busy time)"
