# shellcheck shell=bash
# GPU health in the JSON snapshot and the Prometheus page, from what the
# simulator gives (docs/health.md): an Xid 94 attributed to a MIG instance
# (h200-mig.ini, t = 3) and an Xid 79 of a whole GPU (dgx-a100-8x7.ini,
# t = 20) give the verdict and its rule, the per-code Xid count on the
# device the event belongs to, and dcgm-exporter's last-Xid gauge; every
# device whose events are watched has its Xid series at 0 before any Xid
# (as dcgm-exporter writes XID_ERRORS), one whose events are not (a driver
# without the event API: events-none.ini; an unprivileged monitor's MIG
# instances) has none.
H200=GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8
GI5="gpu=\"0\",uuid=\"$H200\",pci_bus_id=\"00000000:19:00.0\",model=\"NVIDIA H200\",gpu_instance_id=\"5\",compute_instance_id=\"0\",mig_profile=\"2g.35gb\",mig_uuid=\"MIG-3b36b6e9-53c9-a66e-40ad-6c326efaf3d0\""
GPU0="gpu=\"0\",uuid=\"$H200\",pci_bus_id=\"00000000:19:00.0\",model=\"NVIDIA H200\""
# samples NAME < page: the sample lines of NAME
samples() { grep -E "^$1(\{| )"; }

# --- h200: an Xid 94 on the 2g.35gb instance (slot 1, GI 5, CI 0) ---
json=$(SIM_TIME=5 mon h200-mig.ini --once --format json)
jeq "h200 json: the instance's verdict and its rule" "$json" \
    '.devices[] | select(.kind == "mig" and .mig_index == 1) | .health | [.verdict, (.rules | map([.name, .level]))]' \
    '["warning",[["xid-contained-ecc","warning"]]]'
jeq "h200 json: the rule's action" "$json" \
    '.devices[] | select(.kind == "mig" and .mig_index == 1) | .health.rules[0].action' \
    '"restart the jobs on the affected MIG instance (contained ECC error)"'
jeq "h200 json: the GPU's row covers its instance's event" "$json" \
    '.devices[] | select(.kind == "gpu") | .health | [.verdict, (.rules | map(.name))]' \
    '["warning",["xid-contained-ecc"]]'
jeq "h200 json: the other instances are ok, no rules" "$json" \
    '[.devices[] | select(.kind == "mig" and .mig_index != 1) | .health] | unique' \
    '[{"verdict":"ok","rules":[]}]'
page=$(SIM_TIME=5 mon h200-mig.ini --once --format prometheus)
eq "h200 prom: Xid 94 counted once on that instance" \
    "$(samples migmon_mig_xid_errors_total <<<"$page" | grep -F 'gpu_instance_id="5"')" \
    "migmon_mig_xid_errors_total{$GI5,xid=\"94\",source=\"direct\"} 1"
eq "h200 prom: 0 on the other instances (privileged: their events are watched)" \
    "$(samples migmon_mig_xid_errors_total <<<"$page" | grep -vF 'gpu_instance_id="5"' |
        grep -oE 'gpu_instance_id="[0-9]+".*$')" \
    'gpu_instance_id="1",compute_instance_id="0",mig_profile="3g.71gb",mig_uuid="MIG-760076c7-d3b3-392a-4dba-0e98392dab98",source="direct"} 0
gpu_instance_id="13",compute_instance_id="0",mig_profile="1g.18gb",mig_uuid="MIG-7ee8cbee-f200-710d-bf7c-b31042c3833c",source="direct"} 0
gpu_instance_id="14",compute_instance_id="0",mig_profile="1g.18gb",mig_uuid="MIG-64d56bd7-8152-659a-9bd5-e16ee07d4f5c",source="direct"} 0'
contains "h200 prom: a counter" "$page" "# TYPE migmon_mig_xid_errors_total counter"
eq "h200 prom: 0 on the GPU, no code (the event is the instance's)" \
    "$(samples migmon_gpu_xid_errors_total <<<"$page")" \
    "migmon_gpu_xid_errors_total{$GPU0,source=\"direct\"} 0"
eq "h200 prom: the instance's last Xid" "$(samples migmon_mig_last_xid <<<"$page")" \
    "migmon_mig_last_xid{$GI5,source=\"direct\"} 94"
eq "h200 prom: the instance's verdict, one series per state" \
    "$(samples migmon_mig_health <<<"$page" | grep -F "gpu_instance_id=\"5\"")" \
    "migmon_mig_health{$GI5,state=\"ok\"} 0
migmon_mig_health{$GI5,state=\"warning\"} 1
migmon_mig_health{$GI5,state=\"action\"} 0"
eq "h200 prom: the GPU warning" "$(samples migmon_gpu_health <<<"$page" | grep -F 'state="warning"')" \
    "migmon_gpu_health{$GPU0,state=\"warning\"} 1"
eq "h200 prom: the other instances ok" \
    "$(samples migmon_mig_health <<<"$page" | grep -F 'state="ok"} 1' | grep -c -v 'gpu_instance_id="5"')" 3
page=$(SIM_TIME=5 mon h200-mig.ini --once --format prometheus --compat dcgm)
eq "h200 dcgm: XID_ERRORS 94 on GI 5, 0 on the others" \
    "$(samples DCGM_FI_DEV_XID_ERRORS <<<"$page" | grep -oE 'GPU_I_ID="[0-9]+"\} [0-9]+$')" \
    'GPU_I_ID="1"} 0
GPU_I_ID="5"} 94
GPU_I_ID="13"} 0
GPU_I_ID="14"} 0'
contains "h200 dcgm: a gauge" "$page" "# TYPE DCGM_FI_DEV_XID_ERRORS gauge"
# before the event: no Xid series (none is not 0), every device ok
json=$(SIM_TIME=2 mon h200-mig.ini --once --format json)
jeq "h200 before t = 3: every verdict ok" "$json" '[.devices[].health.verdict] | unique' '["ok"]'
page=$(SIM_TIME=2 mon h200-mig.ini --once --format prometheus --compat dcgm)
eq "h200 before t = 3: every device's Xid count 0, no code" \
    "$(samples 'migmon_(gpu|mig)_xid_errors_total' <<<"$page" | grep -c 'xid=')/$(samples 'migmon_(gpu|mig)_xid_errors_total' <<<"$page" | grep -c 'source="direct"} 0$')" \
    0/5
eq "h200 before t = 3: XID_ERRORS 0 on each GPU instance (dcgm-exporter's healthy node)" \
    "$(samples DCGM_FI_DEV_XID_ERRORS <<<"$page" | grep -oE 'GPU_I_ID="[0-9]+"\} [0-9]+$')" \
    'GPU_I_ID="1"} 0
GPU_I_ID="5"} 0
GPU_I_ID="13"} 0
GPU_I_ID="14"} 0'
eq "h200 before t = 3: no last Xid" "$(samples 'migmon_(gpu|mig)_last_xid' <<<"$page" | wc -l)" 0

# --- dgx: an Xid 79 of GPU 5 (unprivileged: a whole-GPU event) ---
json=$(SIM_TIME=25 mon dgx-a100-8x7.ini --once --format json)
jeq "dgx json: GPU 5 and its instances need action (xid-needs-reset)" "$json" \
    '[.devices[] | select(.index == 5) | [.kind, .health.verdict, (.health.rules | map(.name))]] | unique' \
    '[["gpu","action",["xid-needs-reset"]],["mig","action",["xid-needs-reset"]]]'
jeq "dgx json: the other GPUs ok" "$json" '[.devices[] | select(.index != 5) | .health.verdict] | unique' '["ok"]'
page=$(SIM_TIME=25 mon dgx-a100-8x7.ini --once --format prometheus --compat dcgm)
eq "dgx prom: Xid 79 counted once on GPU 5, the other GPUs 0" \
    "$(samples migmon_gpu_xid_errors_total <<<"$page" |
        sed -E 's/^[^{]*\{gpu="([0-9]+)".*,xid="([0-9]+)",source="direct"\} ([0-9]+)$/\1 \2 \3/
                s/^[^{]*\{gpu="([0-9]+)".*,source="direct"\} ([0-9]+)$/\1 - \2/' | tr '\n' ';')" \
    '0 - 0;1 - 0;2 - 0;3 - 0;4 - 0;5 79 1;6 - 0;7 - 0;'
# unprivileged: an instance's own Xids do not reach the monitor (nvml.h), so
# no count for them, not 0
eq "dgx prom: no count on the instances" "$(samples migmon_mig_xid_errors_total <<<"$page" | wc -l)" 0
eq "dgx prom: GPU 5 action" "$(samples migmon_gpu_health <<<"$page" | grep -E '^[^{]*\{gpu="5"' | grep -oE 'state="[a-z]+"\} 1$')" \
    'state="action"} 1'
# dcgm-exporter shows a MIG GPU through its instances: each carries its GPU's Xid
eq "dgx dcgm: XID_ERRORS 79 on each of GPU 5's seven instances, nowhere else" \
    "$(samples DCGM_FI_DEV_XID_ERRORS <<<"$page" | grep -F 'GPU_I_ID=' |
        sed -E 's/^[^{]*\{gpu="([0-9]+)".*\} ([0-9]+)$/\1 \2/' | sort | uniq -c | awk '{print $1, $2, $3}')" \
    '7 5 79'
eq "dgx dcgm: ... and no XID_ERRORS of a whole GPU" \
    "$(samples DCGM_FI_DEV_XID_ERRORS <<<"$page" | grep -cvF 'GPU_I_ID=')" 0
page=$(SIM_TIME=10 mon dgx-a100-8x7.ini --once --format prometheus --compat dcgm)
eq "dgx before t = 20 (unprivileged): no XID_ERRORS on the instances, not 0" \
    "$(samples DCGM_FI_DEV_XID_ERRORS <<<"$page" | wc -l)" 0
eq "dgx before t = 20: each GPU's count 0" \
    "$(samples migmon_gpu_xid_errors_total <<<"$page" | grep -c 'source="direct"} 0$')" 8

# --- no event API: no Xid series, the verdict from what can be read ---
page=$(mon events-none.ini --once --format prometheus --compat dcgm)
eq "events-none prom: no Xid series" "$(grep -ciE '^[a-z_]*xid' <<<"$page")" 0
eq "events-none prom: the verdict from the temperatures" \
    "$(samples migmon_gpu_health <<<"$page" | grep -oE 'state="[a-z]+"\} 1$')" 'state="ok"} 1'
json=$(mon events-none.ini --once --format json)
jeq "events-none json: ok, no rules" "$json" '.devices[0].health' '{"verdict":"ok","rules":[]}'
