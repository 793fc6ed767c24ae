# shellcheck shell=bash
# Per-MIG activity on Ampere from DCGM's profiling fields, read by the DCGM
# helper process from the simulated libdcgm (sim/dcgm/), which serves the
# same scenario as the simulated NVML: values equal the scenario's
# activity, the order of trust, where DCGM comes from, and each fault with
# its reason and no stall.

DCGM_LIB="$MIGMON_SIM_DIR/libdcgm.so.4"
dcgm_helpers() { pgrep_mine "$MIGMON_BIN --dcgm-helper" | wc -l; }
# near DESC JSON FILTER EXPECTED: |value - expected| < 0.01
dnear() {
    local got
    got=$(printf '%s' "$2" | jq "($3) - ($4) | if . < 0 then -. else . end < 0.01" 2>&1)
    if [ "$got" = true ]; then ok; else
        bad "$1: $(printf '%s' "$2" | jq -c "$3" 2>&1), expected $4"
    fi
}
# as_user CMD...: CMD as an unprivileged user when we are root (the embedded
# engine's rules depend on it), else as ourselves.
as_user() {
    if [ "$(id -u)" = 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; else "$@"; fi
}

# dgx-a100-8x7.ini at t = 100 (wave(b, a, p, ph) = b + a*sin(2*pi*(t+ph)/p)):
#   every 1g slot: graphics wave(45,20,90) = 57.8558, sm wave(40,18,90) = 51.5702,
#                  tensor wave(20,10,90) = 26.4279, dram wave(30,12,90) = 37.7135
#   GPU 0 slot 0: graphics wave(85,8,60) = 78.0718; GPU 3 slot 5: wave(70,10,75,20) = 64.1221
#   a MIG-mode parent: the mean of its seven 1g instances; GPU 0: 60.7438
out=$(mon dgx-a100-8x7.ini --once --format json --dcgm-lib "$DCGM_LIB"); rc=$?
eq "dgx dcgm: exit 0" "$rc" 0
jeq "dgx dcgm: all 56 instances' GPU util from dcgm" "$out" \
    '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.source] | [length, unique]' '[56,["dcgm"]]'
jeq "dgx dcgm: SM, memory and tensor activity of every instance from dcgm" "$out" \
    '[.devices[] | select(.kind=="mig") | .metrics | .sm_util_pct.source, .mem_util_pct.source, .tensor_util_pct.source, .sm_occupancy_pct.source] | unique' '["dcgm"]'
sel='.devices[] | select(.kind=="mig" and .index=='
dnear "dgx dcgm: a 1g slot's graphics activity" "$out" "$sel"'1 and .mig_index==2) | .metrics.gpu_util_pct.value' 57.8558
dnear "dgx dcgm: its SM activity" "$out" "$sel"'1 and .mig_index==2) | .metrics.sm_util_pct.value' 51.5702
dnear "dgx dcgm: its tensor activity" "$out" "$sel"'1 and .mig_index==2) | .metrics.tensor_util_pct.value' 26.4279
dnear "dgx dcgm: its DRAM activity as memory utilisation" "$out" "$sel"'1 and .mig_index==2) | .metrics.mem_util_pct.value' 37.7135
dnear "dgx dcgm: GPU 0 slot 0's own activity" "$out" "$sel"'0 and .mig_index==0) | .metrics.gpu_util_pct.value' 78.0718
dnear "dgx dcgm: GPU 3 slot 5's own activity" "$out" "$sel"'3 and .mig_index==5) | .metrics.gpu_util_pct.value' 64.1221
jeq "dgx dcgm: every other instance at the range's value" "$out" \
    '[.devices[] | select(.kind=="mig" and ((.index==0 and .mig_index==0) or (.index==3 and .mig_index==5) | not)) | .metrics.gpu_util_pct.value * 1000 | round] | unique' '[57856]'
dnear "dgx dcgm: the MIG-mode parent's own activity" "$out" '.devices[] | select(.kind=="gpu" and .index==0) | .metrics.gpu_util_pct.value' 60.7438
jeq "dgx dcgm: parents' utilisation from dcgm" "$out" '[.devices[] | select(.kind=="gpu") | .metrics.gpu_util_pct.source] | unique' '["dcgm"]'
jeq "dgx dcgm: where it comes from" "$out" '.dcgm' '"DCGM via nv-hostengine unix:/tmp/nv-hostengine, watched every 0.11 s"'
jeq "dgx dcgm: no fake zero: every none is null" "$out" '[.. | objects | select(.source? == "none") | .value] | unique' '[null]'
eq "dgx dcgm: no helper left after --once" "$(dcgm_helpers)" 0
tab=$(mon dgx-a100-8x7.ini --once --format table --dcgm-lib "$DCGM_LIB")
contains "dgx dcgm: the table's legend names DCGM" "$tab" "come from DCGM"
contains "dgx dcgm: the table's activity section is DCGM's" "$tab" "DCGM activity"

# DCGM 3's soname, by path and by the loader's search
out=$(mon dgx-a100-8x7.ini --once --format json --dcgm-lib "$MIGMON_SIM_DIR/dcgm3/libdcgm.so.3")
jeq "dcgm 3: values from libdcgm.so.3" "$out" '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.source] | unique' '["dcgm"]'
out=$(LD_LIBRARY_PATH="$MIGMON_SIM_DIR/dcgm3" mon dgx-a100-8x7.ini --once --format json)
jeq "dcgm 3: found as libdcgm.so.3 when there is no .so.4" "$out" '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.source] | unique' '["dcgm"]'

# --dcgm off and no library: today's reason, unchanged; JSON says why
ampere='"needs Hopper or later (GPM) or DCGM profiling: NVML has no per-MIG utilisation before Hopper"'
out=$(mon dgx-a100-8x7.ini --once --format json --dcgm-lib "$DCGM_LIB" --dcgm off)
jeq "--dcgm off: MIG utilisation N/A with the Ampere reason" "$out" '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct | [.value, .reason]] | unique' "[[null,$ampere]]"
jeq "--dcgm off: said" "$out" '.dcgm' '"DCGM off (--dcgm off)"'
eq "--dcgm off: no DCGM helper started" "$(dcgm_helpers)" 0
out=$(mon dgx-a100-8x7.ini --once --format json)
jeq "no libdcgm: the reason is unchanged" "$out" '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.reason] | unique' "[$ampere]"
jeq "no libdcgm: DCGM not installed" "$out" '.dcgm' '"DCGM not installed (no libdcgm.so.4 or libdcgm.so.3)"'

# Bad input: one clear line and exit 2
err=$(mon dgx-a100-8x7.ini --once --dcgm tcp://x 2>&1 >/dev/null); rc=$?
eq "--dcgm tcp://x: exit 2" "$rc" 2
contains "--dcgm tcp://x: names what is expected" "$err" "expected auto, off, embedded, HOST[:PORT] or unix:PATH"
err=$(mon dgx-a100-8x7.ini --once --dcgm-lib "$TMP/no-such-libdcgm.so" 2>&1 >/dev/null); rc=$?
eq "--dcgm-lib missing: exit 2" "$rc" 2
contains "--dcgm-lib missing: says so" "$err" "no-such-libdcgm.so: No such file or directory"

# A hostengine elsewhere: only that address is tried
out=$(mon dgx-a100-8x7.ini --once --format json --dcgm-lib "$DCGM_LIB" --dcgm unix:/tmp/nv-hostengine)
jeq "--dcgm unix:PATH: values through it" "$out" '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.source] | unique' '["dcgm"]'
out=$(mon dgx-a100-8x7.ini --once --format json --dcgm-lib "$DCGM_LIB" --dcgm 10.9.9.9:5555)
jeq "--dcgm HOST:PORT that does not answer: named" "$out" '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.reason] | unique' \
    "[$(printf '%s' "$ampere" | sed 's/"$//')"'; the nv-hostengine given with --dcgm does not answer"]'

# No hostengine: a user gets the reason; root gets an embedded engine
# (the unprivileged user may not read the build tree, e.g. a checkout under
# /root: a copy it can read)
NR=$(mktemp -d /tmp/migmon-nonroot.XXXXXX)
cp "$MIGMON_BIN" "$MIGMON_SIM_LIB" "$DCGM_LIB" "$MIGMON_SRC/sim/scenarios/dcgm-no-hostengine.ini" "$NR/"
chmod -R a+rX "$NR"
out=$(cd / && as_user env MIGMON_SIM_SCENARIO="$NR/dcgm-no-hostengine.ini" MIGMON_SIM_TIME=100 \
    "$NR/$(basename "$MIGMON_BIN")" --nvml-path "$NR/libnvidia-ml.so.1" --dcgm-lib "$NR/libdcgm.so.4" \
    --once --format json --no-config)
rm -rf "$NR"
jeq "no hostengine, not root: the reason says what is needed" "$out" '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.reason | endswith("an embedded DCGM engine needs root")] | unique' '[true]'
if [ "$(id -u)" = 0 ]; then
    out=$(mon dcgm-no-hostengine.ini --once --format json --dcgm-lib "$DCGM_LIB")
    jeq "no hostengine, root: an embedded engine" "$out" '.dcgm' '"DCGM embedded in the helper, watched every 0.11 s"'
    jeq "no hostengine, root: values from it" "$out" '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.source] | unique' '["dcgm"]'
fi
# Every GPU has GPM (H200): no embedded engine, whoever runs it; GPM's values stay
out=$(mon h200-mig.ini --once --format json --dcgm-lib "$DCGM_LIB")
jeq "hopper only, no hostengine: no embedded engine, said" "$out" '.dcgm' \
    '"no nv-hostengine answered, and no embedded DCGM engine is started where every GPU has GPM (Hopper or later)"'
jeq "hopper only: MIG activity from GPM, unchanged" "$out" '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.source] | unique' '["gpm"]'
# The order of trust on Hopper with a hostengine: GPM stays first; where the
# GPM helper stalls (gpm-hang: every GPM sample after the sixth hangs), DCGM
# fills in
{ cat "$MIGMON_SRC/sim/scenarios/h200-mig.ini"; printf '\n[dcgm]\nhostengine = unix:/tmp/nv-hostengine\n'; } >"$TMP/h200-hostengine.ini"
out=$(MIGMON_SIM_SCENARIO="$TMP/h200-hostengine.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" \
    --dcgm-lib "$DCGM_LIB" --once --format json)
jeq "hopper with a hostengine: DCGM connected" "$out" '.dcgm' '"DCGM via nv-hostengine unix:/tmp/nv-hostengine, watched every 0.11 s"'
jeq "hopper with a hostengine: GPM's values stay first" "$out" \
    '[.devices[] | select(.kind=="mig") | .metrics | .gpu_util_pct.source, .sm_util_pct.source, .tensor_util_pct.source] | unique' '["gpm"]'
{ cat "$MIGMON_SRC/sim/scenarios/gpm-hang.ini"; printf '\n[dcgm]\nhostengine = unix:/tmp/nv-hostengine\n'; } >"$TMP/gpm-hang-hostengine.ini"
MIGMON_SIM_SCENARIO="$TMP/gpm-hang-hostengine.ini" "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" --dcgm-lib "$DCGM_LIB" \
    record -i 500 --duration 4 -o "$TMP/gpm-hang-dcgm.jsonl" 2>/dev/null
jeq "GPM stalled on Hopper: DCGM fills in" "$(tail -n 1 "$TMP/gpm-hang-dcgm.jsonl")" \
    '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.source] | unique' '["dcgm"]'
MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/gpm-hang.ini" "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" --dcgm-lib "$DCGM_LIB" \
    record -i 500 --duration 4 -o "$TMP/gpm-hang-nodcgm.jsonl" 2>/dev/null
jeq "GPM stalled on Hopper, no hostengine: none, both reasons" "$(tail -n 1 "$TMP/gpm-hang-nodcgm.jsonl")" \
    '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct | [.source, (.reason | contains("GPM helper stalled") and contains("no nv-hostengine answered"))]] | unique' '[["none",true]]'
# Embedded forced where DCGM needs root for MIG: REQUIRES_ROOT, once
out=$(mon dcgm-requires-root.ini --once --format json --dcgm-lib "$DCGM_LIB" --dcgm embedded)
jeq "REQUIRES_ROOT: named" "$out" '.dcgm | startswith("DCGM answered REQUIRES_ROOT")' true
jeq "REQUIRES_ROOT: in every MIG value's reason" "$out" '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.reason | contains("REQUIRES_ROOT")] | unique' '[true]'
# Another profiler holds the module: -37, named
out=$(mon dcgm-profiling-held.ini --once --format json --dcgm-lib "$DCGM_LIB" --dcgm embedded)
jeq "profiling module held: -37 named" "$out" '.dcgm | contains("(-37)")' true
# Multiplexed fields: the group with GR_ENGINE_ACTIVE is watched, the rest named
out=$(mon dcgm-multi-pass.ini --once --format json --dcgm-lib "$DCGM_LIB")
jeq "multi-pass: GR_ENGINE_ACTIVE watched" "$out" '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.source] | unique' '["dcgm"]'
jeq "multi-pass: the tensor pipe says why it is not" "$out" '[.devices[] | select(.kind=="mig") | .metrics.tensor_util_pct.reason | contains("PROFILING_MULTI_PASS")] | unique' '[true]'
jeq "multi-pass: the dcgm line lists what is not watched" "$out" '.dcgm | endswith("not watched: PIPE_TENSOR_ACTIVE PIPE_FP64_ACTIVE PIPE_FP32_ACTIVE PIPE_FP16_ACTIVE (multiplexed)")' true

# A read that never returns: --once is not delayed past its bound and names the call
t0=$(date +%s%N)
out=$(mon dcgm-hang.ini --once --format json --dcgm-lib "$DCGM_LIB" --timeout 5); rc=$?
t1=$(date +%s%N)
eq "dcgm hang: --once exits 0 (the NVML side answers)" "$rc" 0
[ $(((t1 - t0) / 1000000)) -lt 5000 ] && ok || bad "dcgm hang: --once took $(((t1 - t0) / 1000000)) ms"
jeq "dcgm hang: the stalled call is named" "$out" '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct.reason | contains("DCGM helper stalled in dcgmEntitiesGetLatestValues")] | unique' '[true]'
for ((i = 0; i < 40 && $(dcgm_helpers) > 0; i++)); do sleep 0.05; done
eq "dcgm hang: no helper left after --once" "$(dcgm_helpers)" 0

# --compat dcgm on the A100 board: DCGM_FI_PROF_GR_ENGINE_ACTIVE for every
# MIG instance, from DCGM
page=$(mon dgx-a100-8x7.ini --once --format prometheus --compat dcgm --dcgm-lib "$DCGM_LIB")
eq "compat dcgm dgx: GR_ENGINE_ACTIVE for all 56 instances" \
    "$(printf '%s\n' "$page" | grep '^DCGM_FI_PROF_GR_ENGINE_ACTIVE{' | grep -c 'GPU_I_ID="')" 56
contains "compat dcgm dgx: GPU 1 instance value as a ratio" "$page" 'GPU_I_PROFILE="1g.10gb",GPU_I_ID="9"} 0.578557'
eq "compat dcgm dgx: no whole-GPU series for a MIG GPU" \
    "$(printf '%s\n' "$page" | grep '^DCGM_FI_PROF_GR_ENGINE_ACTIVE{' | grep -vc 'GPU_I_ID="')" 0

# profile -- CMD: each instance's activity over the command's run, from DCGM
# (the simulated clock stands at t = 100, so peak and mean are the values above)
out=$(mon dgx-a100-8x7.ini profile -f json --dcgm-lib "$DCGM_LIB" -i 100 -- sleep 1 2>&1); rc=$?
eq "profile dgx dcgm: exit 0" "$rc" 0
jeq "profile dgx dcgm: every instance's activity from dcgm" "$out" \
    '[.devices[] | select(.kind=="mig") | .util_source] | [length, unique]' '[56,["dcgm"]]'
dnear "profile dgx dcgm: GPU 0 slot 0's peak" "$out" '.devices[] | select(.kind=="mig" and .index==0 and .mig_index==0) | .util_peak_pct' 78.0718
dnear "profile dgx dcgm: a 1g slot's mean (one decimal)" "$out" '.devices[] | select(.kind=="mig" and .index==1 and .mig_index==2) | .util_mean_pct' 57.9
jeq "profile dgx dcgm: the scope is the instance" "$out" '[.devices[] | select(.kind=="mig") | .util_scope] | unique' '["instance"]'
out=$(mon dgx-a100-8x7.ini profile -f json --dcgm off -i 100 -- sleep 0.3 2>&1)
jeq "profile dgx --dcgm off: no activity, never a 0" "$out" \
    '[.devices[] | select(.kind=="mig") | .util_peak_pct] | unique' '[null]'
out=$(mon dgx-a100-8x7.ini profile --dcgm nowhere: -- true 2>&1); rc=$?
eq "profile --dcgm bad address: exit 2" "$rc" 2
contains "profile --dcgm bad address: one line" "$out" "--dcgm nowhere:: expected auto, off, embedded"

# A hostengine that goes away (simulated seconds 5-10 after the helper
# connects) and comes back: values, then the lost connection named, then
# values again after the reconnect (5 s backoff). record at 500 ms, 18 s.
MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/dcgm-hostengine-restart.ini" \
    "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" --dcgm-lib "$DCGM_LIB" record -i 500 --duration 18 \
    -o "$TMP/dcgm-restart.jsonl" 2>/dev/null
srcs=$(jq -r -c '[.devices[] | select(.kind=="mig") | .metrics.gpu_util_pct | if .source == "dcgm" then "dcgm" elif (.reason | contains("connection was lost")) then "lost" else "other" end] | unique | .[]' \
    "$TMP/dcgm-restart.jsonl" | uniq | tr '\n' ' ')
contains "hostengine restart: dcgm, lost, dcgm again" "$srcs" "dcgm lost dcgm"

# The interactive monitor while DCGM's read never returns: the helper is
# restarted, the stall named in i, and q still quits within a second.
if command -v tmux >/dev/null; then
    . "$MIGMON_SRC/tests/e2e/tui_lib.sh"
    TUI_SOCK="migmon-test-dcgm-$$"
    P=$(tui_proc dcgmhang two-core)
    TUI_WAIT_S=20 tui_start dcgmhang 120 40 1 MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/dcgm-hang.ini" -- \
        --nvml-path "$MIGMON_SIM_LIB" --dcgm-lib "$DCGM_LIB" --proc-root "$P" -i 200
    tui_keys dcgmhang Down i
    seen=0
    for ((i = 0; i < 40; i++)); do
        tui_tick dcgmhang
        case "$(tui_capture dcgmhang)" in *"DCGM helper stalled"*) seen=1; break ;; esac
        sleep 0.2
    done
    eq "dcgm hang: i names the stalled DCGM helper" "$seen" 1
    tui_keys dcgmhang i
    t0=$(date +%s%N)
    rc=$(tui_quit dcgmhang q)
    t1=$(date +%s%N)
    eq "dcgm hang: q quits with status 0" "$rc" 0
    [ $(((t1 - t0) / 1000000)) -lt 1000 ] && ok || bad "dcgm hang: q took $(((t1 - t0) / 1000000)) ms"
    for ((i = 0; i < 40 && $(dcgm_helpers) > 0; i++)); do sleep 0.05; done
    eq "dcgm hang: no helper left behind" "$(dcgm_helpers)" 0
    # The DGX with DCGM at 120x40: every MIG row has its activity (a stored
    # screen of the device list: the charts' history depends on when the
    # helper's first values came)
    P=$(tui_proc dcgmdgx two-core)
    tui_start dcgmdgx 120 40 1 MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/dgx-a100-8x7.ini" MIGMON_SIM_TIME=1000 -- \
        --nvml-path "$MIGMON_SIM_LIB" --dcgm-lib "$DCGM_LIB" --proc-root "$P"
    for ((i = 0; i < 40; i++)); do
        tui_tick dcgmdgx
        case "$(tui_capture dcgmdgx)" in *"0/1 1g.10gb"*%*dcgm*) break ;; esac
        sleep 0.1
    done
    tui_cpu_step dcgmdgx
    rows=$(tui_capture dcgmdgx | LC_ALL=C.UTF-8 grep -oE '[▾▸] GPU [0-9].*|[├└] (MIG )?[0-9]+/[0-9].*')
    want="$MIGMON_SRC/tests/e2e/screens/dcgm-dgx-120x40-devices.txt"
    [ "${MIGMON_UPDATE_SCREENS:-}" = 1 ] && printf '%s\n' "$rows" >"$want"
    if [ -f "$want" ] && [ "$rows" = "$(cat "$want")" ]; then ok; else
        bad "dcgm dgx 120x40: device list differs from $want:
$(diff "$want" <(printf '%s\n' "$rows") | head -20)"
    fi
    contains "dcgm dgx 120x40: the detail marks DCGM's values" "$(tui_capture dcgmdgx)" "dcgm"
    tui_keys dcgmdgx Down i
    tui_tick dcgmdgx
    contains "dcgm dgx 120x40: i says where the activity comes from" "$(tui_capture dcgmdgx | tr -s ' \n' ' ')" \
        "Activity from DCGM via nv-hostengine unix:/tmp/nv-hostengine, watched every 1 s"
    tui_keys dcgmdgx i
    tui_quit dcgmdgx q >/dev/null
    tui_kill_all
fi
