#!/usr/bin/env bash
# Compare mig-gpu-mon's snapshot with nvidia-smi on a machine with a real
# NVIDIA GPU; prints a pass/fail table and exits non-zero on any failure.
#   scripts/hw-check.sh [path/to/mig-gpu-mon]
# Tolerances (values are sampled a moment apart): memory used ±64 MiB or ±2 %,
# temperature ±3 °C, power ±20 W or ±15 %, clocks ±15 %, utilisation ±15 points;
# name, UUID, PCI bus id, memory total and P-state exact; the active clock
# event reasons and the remapped rows exact; INFO rows record what recent
# drivers' calls gave (docs/nvml.md).
set -uo pipefail
bin=${1:-./mig-gpu-mon}
command -v nvidia-smi >/dev/null || { echo "hw-check: nvidia-smi not found" >&2; exit 2; }
command -v jq >/dev/null || { echo "hw-check: jq not found" >&2; exit 2; }
json=$("$bin" --once --format json --top 0) || { echo "hw-check: $bin --once failed" >&2; exit 2; }
fields=name,uuid,pci.bus_id,memory.used,memory.total,temperature.gpu,power.draw,clocks.gr,clocks.sm,clocks.mem,utilization.gpu,pstate
smi=$(nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits) || exit 2
pass=0 fail=0
row() { # gpu field ours theirs verdict
    printf '%-4s %-18s %-40.40s %-40.40s %s\n' "$1" "$2" "$3" "$4" "$5"
    if [ "$5" = PASS ]; then pass=$((pass + 1)); elif [ "$5" = FAIL ]; then fail=$((fail + 1)); fi
}
near() { # ours theirs abs rel  -> PASS/FAIL/SKIP
    awk -v a="$1" -v b="$2" -v abs="$3" -v rel="$4" 'BEGIN {
        if (a == "null" || b ~ /N\/A|Not Supported|\[/) { print "SKIP"; exit }
        d = a - b; if (d < 0) d = -d; m = (b < 0 ? -b : b) * rel;
        print (d <= abs || d <= m) ? "PASS" : "FAIL" }'
}
printf '%-4s %-18s %-40s %-40s %s\n' GPU FIELD MIG-GPU-MON NVIDIA-SMI RESULT
i=0
while IFS=, read -r name uuid bus mused mtot temp pw gr sm mem util ps; do
    trim() { sed 's/^ *//;s/ *$//' <<<"$1"; }
    name=$(trim "$name"); uuid=$(trim "$uuid"); bus=$(trim "$bus"); ps=$(trim "$ps")
    d=$(jq -c --argjson i "$i" '[.devices[] | select(.kind=="gpu" and .index==$i)][0]' <<<"$json")
    g() { jq -r "$1" <<<"$d"; }
    v=$(g .name); row "$i" name "$v" "$name" "$([ "$v" = "$name" ] && echo PASS || echo FAIL)"
    v=$(g .uuid); row "$i" uuid "$v" "$uuid" "$([ "$v" = "$uuid" ] && echo PASS || echo FAIL)"
    v=$(g .pci_bus_id); row "$i" pci_bus_id "$v" "$bus" "$([ "${v^^}" = "${bus^^}" ] && echo PASS || echo FAIL)"
    v=$(g '.metrics.memory_used_bytes.value | if . == null then "null" else . / 1048576 | floor end')
    row "$i" memory.used_MiB "$v" "$(trim "$mused")" "$(near "$v" "$(trim "$mused")" 64 0.02)"
    v=$(g '.metrics.memory_total_bytes.value | if . == null then "null" else . / 1048576 | floor end')
    row "$i" memory.total_MiB "$v" "$(trim "$mtot")" "$(near "$v" "$(trim "$mtot")" 1 0)"
    v=$(g '.metrics.temperature_c.value'); row "$i" temperature "$v" "$(trim "$temp")" "$(near "$v" "$(trim "$temp")" 3 0)"
    v=$(g '.metrics.power_w.value'); row "$i" power_W "$v" "$(trim "$pw")" "$(near "$v" "$(trim "$pw")" 20 0.15)"
    v=$(g '.metrics.clock_graphics_mhz.value'); row "$i" clocks.gr "$v" "$(trim "$gr")" "$(near "$v" "$(trim "$gr")" 0 0.15)"
    v=$(g '.metrics.clock_sm_mhz.value'); row "$i" clocks.sm "$v" "$(trim "$sm")" "$(near "$v" "$(trim "$sm")" 0 0.15)"
    v=$(g '.metrics.clock_mem_mhz.value'); row "$i" clocks.mem "$v" "$(trim "$mem")" "$(near "$v" "$(trim "$mem")" 0 0.15)"
    v=$(g '.metrics.gpu_util_pct.value'); row "$i" utilization.gpu "$v" "$(trim "$util")" "$(near "$v" "$(trim "$util")" 15 0)"
    v=$(g '.metrics.pstate.value | if . == null then "null" else "P\(.)" end')
    row "$i" pstate "$v" "$ps" "$([ "$v" = "$ps" ] && echo PASS || echo FAIL)"
    i=$((i + 1))
done <<<"$smi"
n=$(jq '[.devices[] | select(.kind=="gpu")] | length' <<<"$json")
row all gpu_count "$n" "$i" "$([ "$n" = "$i" ] && echo PASS || echo FAIL)"
# Compute processes: each one nvidia-smi lists must be ours on that GPU or on
# one of its MIG devices (nvidia-smi names the parent GPU's UUID), once, with
# about the same memory (N/A on either side: SKIP).
napps=0
while IFS=, read -r guuid pid used; do
    [ -n "$pid" ] || continue
    guuid=$(sed 's/^ *//;s/ *$//' <<<"$guuid"); pid=${pid// /}; used=${used// /}
    napps=$((napps + 1))
    hits=$(jq -c --arg u "$guuid" --argjson p "$pid" '[.devices[] |
        select(.uuid == $u or .parent_uuid == $u) | .processes[]? | select(.pid == $p)]' <<<"$json")
    n=$(jq length <<<"$hits")
    row all "pid $pid listed" "$n time(s)" "1" "$([ "$n" = 1 ] && echo PASS || echo FAIL)"
    if [ "$n" = 1 ]; then
        v=$(jq -r '.[0].memory_bytes | if . == null then "null" else . / 1048576 | floor end' <<<"$hits")
        row all "pid $pid MiB" "$v" "$used" "$(near "$v" "$used" 64 0.02)"
    fi
done < <(nvidia-smi --query-compute-apps=gpu_uuid,pid,used_memory --format=csv,noheader,nounits 2>/dev/null)
ours=$(jq '[.devices[] | .processes[]? | select(.type | test("C|M"))] | length' <<<"$json")
row all compute_apps "$ours" "$napps" "$([ "$ours" -ge "$napps" ] && echo PASS || echo FAIL)"
# GPM (Hopper and later): graphics activity (metric 1), SM activity (2) and
# DRAM bandwidth (10) against nvidia-smi dmon --gpm-metrics, per GPU and, with
# MIG on, per GPU instance. Both sides average over their own window, so a
# busy GPU needs a steady load for a fair comparison (±15 points).
# nvidia-smi's dmon layout: a '#' header naming the columns, then one row per
# entity; rows with a GI column give per-GPU-instance values.
if dmon=$(nvidia-smi dmon --gpm-metrics 1,2,10 --gpm-options dm -c 3 2>/dev/null) ||
    dmon=$(nvidia-smi dmon --gpm-metrics 1,2,10 -c 3 2>/dev/null); then
    gjson=$("$bin" --once --format json) || gjson=$json
    header=$(grep -m1 '^# *gpu' <<<"$dmon" | sed 's/^# *//')
    read -r -a cols <<<"$header"
    # the last three columns are the requested metrics; gi/ci columns if any
    gi_col=-1
    for c in "${!cols[@]}"; do [ "${cols[$c]}" = gi ] && gi_col=$c; done
    while read -r -a f; do
        [ "${#f[@]}" -ge 4 ] || continue
        n=${#f[@]}
        gpu=${f[0]} gract=${f[$((n - 3))]} smact=${f[$((n - 2))]} dram=${f[$((n - 1))]}
        if [ "$gi_col" -ge 0 ] && [[ "${f[$gi_col]}" =~ ^[0-9]+$ ]]; then
            sel=".devices[] | select(.kind==\"mig\" and .index==$gpu and .gpu_instance_id==${f[$gi_col]})"
            who="$gpu/gi${f[$gi_col]}"
        else
            sel=".devices[] | select(.kind==\"gpu\" and .index==$gpu)"
            who=$gpu
        fi
        for m in "gpm.graphics gpu_util_pct $gract" "gpm.sm sm_util_pct $smact" "gpm.dram mem_util_pct $dram"; do
            read -r label key theirs <<<"$m"
            v=$(jq -r "[$sel][0].metrics.$key | if . == null or .source != \"gpm\" then \"null\" else .value end" <<<"$gjson")
            row "$who" "$label" "$v" "$theirs" "$(near "$v" "$theirs" 15 0)"
        done
    done < <(grep -v '^#' <<<"$dmon")
else
    row all gpm "-" "nvidia-smi dmon --gpm-metrics unavailable" SKIP
fi
# The entry points of recent drivers (docs/nvml.md): the clock event reasons
# (ClocksEventReasons, or the deprecated ThrottleReasons) against nvidia-smi's
# clocks_event_reasons; the remapped rows (RemappedRows_v2 from 595, v1
# before) against --query-remapped-rows, exact; and, as INFO rows for the
# record (nvidia-smi prints no stable form of them), which call read the
# temperature and held-down times, the unrepairable-memory flag, the bank
# remapper and whether the events helper waits with nvmlEventSetWait_v3.
i=0
while IFS=, read -r uuid pcap thermal; do
    uuid=$(sed 's/^ *//;s/ *$//' <<<"$uuid")
    d=$(jq -c --arg u "$uuid" '[.devices[] | select(.uuid == $u)][0]' <<<"$json")
    [ "$d" = null ] && continue
    for m in "sw_power_cap $pcap" "sw_thermal $thermal"; do
        read -r key theirs <<<"$m"
        [[ "$theirs" == *Active* ]] || { row "$i" "reason.$key" - "$theirs" SKIP; continue; }
        v=$(jq -r --arg k "$key" 'if .throttle_reasons == null then "null" elif (.throttle_reasons | index($k)) then "Active" else "Not Active" end' <<<"$d")
        row "$i" "reason.$key" "$v" "$theirs" "$([ "$v" = "$theirs" ] && echo PASS || echo FAIL)"
    done
    row "$i" "reasons.source" "$(jq -r '.throttle_reasons_source // "-"' <<<"$d")" - INFO
    for k in temperature_c throttle_power_s throttle_thermal_s unrepairable_memory bank_remaps_active bank_remap_pending bank_remap_no_spare_groups remapped_rows_inactive; do
        row "$i" "$k" "$(jq -r --arg k "$k" '.metrics[$k] | "\(.value) \(.reason // "")"' <<<"$d")" - INFO
    done
    i=$((i + 1))
done < <(nvidia-smi --query-gpu=uuid,clocks_event_reasons.sw_power_cap,clocks_event_reasons.sw_thermal_slowdown --format=csv,noheader 2>/dev/null)
while IFS=, read -r uuid corr unc pend fail; do
    uuid=$(sed 's/^ *//;s/ *$//' <<<"$uuid")
    d=$(jq -c --arg u "$uuid" '[.devices[] | select(.uuid == $u)][0]' <<<"$json")
    [ "$d" = null ] && continue
    for m in "remapped_rows_correctable $corr" "remapped_rows_uncorrectable $unc" "row_remap_pending $pend" "row_remap_failure $fail"; do
        read -r key theirs <<<"$m"
        theirs=${theirs// /}
        case "$theirs" in Yes) theirs=1 ;; No) theirs=0 ;; esac
        v=$(jq -r --arg k "$key" '.metrics[$k].value' <<<"$d")
        if [[ ! "$theirs" =~ ^[0-9]+$ ]]; then
            row "$uuid" "$key" "$v" "$theirs" SKIP
        else
            row "$uuid" "$key" "$v" "$theirs" "$([ "$v" = "$theirs" ] && echo PASS || echo FAIL)"
        fi
    done
done < <(nvidia-smi --query-remapped-rows=gpu_uuid,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure --format=csv,noheader,nounits 2>/dev/null)
ev=$(jq -r '"\(.events_error // "watching") (\(.events_total) events)"' <<<"$json")
row all events "$ev" - INFO
row all "operational events" "$(jq '[.events[] | select(.type == "operational")] | length' <<<"$json")" - INFO
echo "hw-check: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
