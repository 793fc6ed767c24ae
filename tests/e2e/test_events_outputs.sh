# shellcheck shell=bash
# Health events in record's JSON Lines and line protocol and in profile's
# report (docs/record.md "Events", docs/profile.md "Events"): each event
# once in a recording, on the device it is attributed to; a ring that
# overflows between two snapshots said as a count; line protocol escaping
# of a hostile UUID; profile's events on the command's devices only.

EO=$TMP/events-outputs
mkdir -p "$EO"
H200_GPU=GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8
H200_MIG1=MIG-3b36b6e9-53c9-a66e-40ad-6c326efaf3d0
# erec SCENARIO-FILE SIM_TIME ARGS...: record on a scenario file, stdin /dev/null
erec() {
    local sc=$1 t=$2
    shift 2
    MIGMON_SIM_SCENARIO="$sc" MIGMON_SIM_TIME="$t" \
        "$MIGMON_BIN" record --nvml-path "$MIGMON_SIM_LIB" --gpm off "$@" </dev/null
}
SC=$MIGMON_SRC/sim/scenarios

# --- JSON Lines: h200-mig's Xid 94 on slot 1 (GI 5, CI 0), due at once (t = 5) ---
# (10 snapshots: the events helper's first answer may come a few ticks in on
# a slow machine or under a sanitizer)
erec "$SC/h200-mig.ini" 5 -o "$EO/h.jsonl" -n 10 -i 100; rc=$?
eq "jsonl: exit 0" "$rc" 0
all=$(jq -s -c . "$EO/h.jsonl")
jeq "jsonl: 10 snapshots and one event line" "$all" \
    '[(map(select(.type == null)) | length), (map(select(.type == "event")) | length), (map(select(.type == "events_dropped")) | length)]' \
    '[10,1,0]'
jeq "jsonl: the event where it happened" "$all" \
    '.[] | select(.type == "event") | [.event_type, .xid, .gpu, .uuid, .device, .mig_index, .gi_id, .ci_id]' \
    "[\"xid\",94,0,\"$H200_GPU\",\"$H200_MIG1\",1,5,0]"
jeq "jsonl: what it means and what to do" "$all" \
    '.[] | select(.type == "event") | [.meaning, .action]' \
    '["contained ECC error (only the processes using the bad memory were affected)","restart the jobs on the affected MIG instance"]'
jeq "jsonl: its device is the snapshot's slot 1" "$all" \
    "[.[0].devices[] | select(.uuid == \"$H200_MIG1\") | [.mig_index, .gpu_instance_id, .compute_instance_id]]" \
    '[[1,5,0]]'
jeq "jsonl: the line follows the first snapshot that counts it" "$all" \
    '(map(.type == null and .events_total == 1) | index(true)) as $i | .[$i + 1].type' '"event"'
jeq "jsonl: every snapshot from its own on counts it, none again" "$all" \
    '[.[] | select(.type == null) | .events_total] | [(. == sort), (unique - [0]), last]' '[true,[1],1]'
jeq "jsonl: its times: elapsed_ns on the samples' timeline, wall_ns and timestamp one instant" "$all" \
    '(.[] | select(.type == "event")) as $e | [($e.elapsed_ns < (map(select(.type == null)) | last | .elapsed_ns)), ($e.timestamp[0:19] == ($e.wall_ns / 1e9 | floor | todate)[0:19])]' \
    '[true,true]'

# --- an event in the middle of a recording (real time: t = 1 s after the helper starts) ---
sed 's/^t = 3$/t = 1/' "$SC/h200-mig.ini" >"$EO/late.ini"
MIGMON_SIM_SCENARIO="$EO/late.ini" "$MIGMON_BIN" record --nvml-path "$MIGMON_SIM_LIB" --gpm off \
    -o "$EO/late.jsonl" -i 200 --duration 2 </dev/null
all=$(jq -s -c . "$EO/late.jsonl")
jeq "late: one event line, the Xid 94" "$all" '[.[] | select(.type == "event") | .xid]' '[94]'
jeq "late: snapshots before it count 0, after it 1" "$all" \
    '[.[] | if .type then "E" else (.events_total | tostring) end] | join("") | test("^0+1E1*$")' true
jeq "late: its elapsed_ns between the last snapshot without it and the tick that took it" "$all" \
    '(map(.type == "event") | index(true)) as $i | (.[$i].elapsed_ns > .[$i - 2].elapsed_ns) and (.[$i].elapsed_ns < .[$i - 1].elapsed_ns + 200000000) and (.[$i].elapsed_ns >= 1000000000)' \
    true

# --- a whole-GPU Xid 79 on GPU 5 of the DGX (t = 20) ---
erec "$SC/dgx-a100-8x7.ini" 25 -o "$EO/dgx.jsonl" -n 10 -i 100
all=$(jq -s -c . "$EO/dgx.jsonl")
g5=$(jq -r 'select(.type == null) | .devices[] | select(.kind == "gpu" and .index == 5) | .uuid' "$EO/dgx.jsonl" | head -1)
jeq "dgx: GPU 5's Xid 79, on the GPU itself" "$all" \
    '[.[] | select(.type == "event") | [.xid, .gpu, .device, .mig_index, .gi_id, .ci_id]]' \
    "[[79,5,\"$g5\",null,null,null]]"

# --- 70 more events than a tick takes: the ring keeps 64, the rest is counted ---
cp "$SC/h200-mig.ini" "$EO/many.ini"
for i in $(seq 1 70); do printf '\n[event.e%d]\nt = 1\ngpu = 0\nxid = %d\n' "$i" $((1000 + i)) >>"$EO/many.ini"; done
erec "$EO/many.ini" 5 -o "$EO/many.jsonl" -n 3 -i 100
all=$(jq -s -c . "$EO/many.jsonl")
jeq "overflow: 71 counted, 7 dropped (said once), the newest 64 written once each" "$all" \
    '[(map(select(.type == null)) | last | .events_total), ([.[] | select(.type == "events_dropped") | .count]), ([.[] | select(.type == "event") | .xid] | [length, (unique | length), first, .[62], last])]' \
    '[71,[7],[64,64,1008,1070,94]]'
jeq "overflow: the dropped line says why" "$all" \
    '.[] | select(.type == "events_dropped") | .reason' \
    '"more events arrived between two snapshots than the 64 a snapshot keeps"'
erec "$EO/many.ini" 5 -o - -f influx -n 2 -i 100 >"$EO/many.lp"
eq "overflow, line protocol: the dropped count, once" \
    "$(grep '^migmon_event,type=dropped ' "$EO/many.lp" | cut -d' ' -f2)" "count=7i"
eq "overflow, line protocol: 64 event points" "$(grep -c '^migmon_event,.*,type=xid,' "$EO/many.lp")" 64

# --- line protocol: a migmon_event point, once in a stream ---
erec "$SC/h200-mig.ini" 5 -o - -f influx -n 3 -i 100 >"$EO/h.lp"
ev=$(grep '^migmon_event' "$EO/h.lp")
eq "influx: one event point in three batches" "$(grep -c '^migmon_event' "$EO/h.lp")" 1
eq "influx: three batches" "$(grep -c '^migmon_host ' "$EO/h.lp")" 3
eq "influx: its tags and fields" "$(cut -d' ' -f1-2 <<<"$ev")" \
    "migmon_event,uuid=$H200_GPU,vendor=nvidia,index=0,mig_uuid=$H200_MIG1,mig_index=1,gi_id=5,ci_id=0,type=xid,xid=94 count=1i,code=94i,meaning=\"contained"
contains "influx: the action, quoted" "$ev" 'action="restart the jobs on the affected MIG instance" '
ets=$(awk '{ print $NF }' <<<"$ev")
first=$(grep -m1 '^migmon_host ' "$EO/h.lp" | awk '{ print $NF }')
last=$(grep '^migmon_host ' "$EO/h.lp" | tail -1 | awk '{ print $NF }')
[ "$ets" != "$first" ] && [ "$ets" -le "$last" ] && [ $((first - ets)) -lt 5000000000 ] && ok ||
    bad "influx: the event's timestamp $ets is not its own wall clock (batches $first..$last)"
lp=$(MIGMON_SIM_SCENARIO="$SC/h200-mig.ini" MIGMON_SIM_TIME=5 "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" \
    --once --format influx --gpm off)
eq "influx --once: the event, first in the batch" "$(head -1 <<<"$lp" | cut -d' ' -f1)" \
    "migmon_event,uuid=$H200_GPU,vendor=nvidia,index=0,mig_uuid=$H200_MIG1,mig_index=1,gi_id=5,ci_id=0,type=xid,xid=94"

# --- a hostile UUID as the events helper reads it ---
sed -n '1,/^\[gpu\.1\]/p' "$SC/hostile.ini" | sed '$d' >"$EO/hostile.ini"
sed -i 's/^uuid = GPU-0c0c0c0c-1111-4222-8333-444444444444$/&\nuuid_raw = GPU-ev il,x=1 "q"\\e[2J\\\\/' "$EO/hostile.ini"
printf '\n[event.bus]\nt = 1\ngpu = 0\nxid = 79\n' >>"$EO/hostile.ini"
erec "$EO/hostile.ini" 5 -o - -f influx -n 1 >"$EO/hostile.lp"
eq "hostile: the UUID tag escaped, its escape and trailing backslash made '?'" \
    "$(grep '^migmon_event' "$EO/hostile.lp" | sed 's/ count=1i,.*//')" \
    'migmon_event,uuid=GPU-ev\ il\,x\=1\ "q"?[2J?,vendor=nvidia,type=xid,xid=79'
eq "hostile: every line has a measurement, fields and a timestamp" \
    "$(grep -cvE '^[a-z_]+(,[^ ]+)? [^ ].* [0-9]{19}$' "$EO/hostile.lp")" 0
erec "$EO/hostile.ini" 5 -o "$EO/hostile.jsonl" -n 1
jeq "hostile: the JSON line's UUID cleaned as the devices' are" \
    "$(grep '"type":"event"' "$EO/hostile.jsonl")" '.uuid' '"GPU-ev il,x=1 \"q\"?[2J\\"'

# --- profile: the events on the command's devices while it ran ---
# Real time: at t = 1 s after the helper starts, an Xid 94 on slot 1 and an
# Xid 43 on slot 2; at 1.2 s a whole-GPU Xid 31. The command runs on slot 1.
cp "$EO/late.ini" "$EO/prof.ini"
printf '\n[event.other]\nt = 1\ngpu = 0\nmig = 2\nxid = 43\n\n[event.whole]\nt = 1.2\ngpu = 0\nxid = 31\n' >>"$EO/prof.ini"
eprof() { # eprof ARGS...: profile on prof.ini
    MIGMON_SIM_SCENARIO="$EO/prof.ini" "$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" "$@"
}
CUDA_VISIBLE_DEVICES=$H200_MIG1 eprof -f json -o "$EO/p.json" -- sleep 2
eq "profile: the command's status" "$?" 0
r=$(cat "$EO/p.json")
jeq "profile: slot 1's Xid 94 and the GPU's Xid 31, not slot 2's Xid 43" "$r" \
    '[.events[] | [.type, .xid, .gpu, .device, .mig_index, .gi_id, .ci_id]]' \
    "[[\"xid\",94,0,\"$H200_MIG1\",1,5,0],[\"xid\",31,0,\"$H200_GPU\",null,null,null]]"
jeq "profile: at about 1 s and 1.2 s into the run" "$r" \
    '[.events[] | .at_s] | (.[0] > 0.5 and .[0] < 1.9 and .[1] - .[0] > 0.1 and .[1] - .[0] < 0.4)' true
jeq "profile: meaning and action" "$r" '.events[1] | [.meaning, .action]' \
    '["GPU memory page fault (the application touched memory it does not own)","the job'"'"'s own bug or input: check the application"]'
jeq "profile: watched throughout, none dropped" "$r" '[.events_error, .events_dropped, .events_unlisted]' '[null,0,0]'
CUDA_VISIBLE_DEVICES=$H200_MIG1 eprof -o "$EO/p.txt" -- sleep 2
txt=$(cat "$EO/p.txt")
contains "profile text: the count" "$txt" "Events: 2 on the command's devices"
grep -qE '^  Xid 94 on MIG 0/1 2g\.35gb GI 5 CI 0 at [0-9.]+ s: contained ECC error \(only the processes using the bad memory were affected\) — restart the jobs on the affected MIG instance$' \
    "$EO/p.txt" && ok || bad "profile text: the Xid 94 line: $txt"
grep -qE '^  Xid 31 on GPU 0 at [0-9.]+ s: GPU memory page fault' "$EO/p.txt" && ok ||
    bad "profile text: the Xid 31 line: $txt"
case "$txt" in *"Xid 43"*) bad "profile text: another instance's Xid 43 reported" ;; *) ok ;; esac
# every device the command may use: slot 2's Xid 43 too
eprof -f json -o "$EO/pall.json" -- sleep 2
jeq "profile, every device: the three" "$(cat "$EO/pall.json")" \
    '[.events[] | [.xid, .mig_index]] | sort_by(.[0])' '[[31,null],[43,2],[94,1]]'
# no event API: unknown, never "none"
MIGMON_SIM_SCENARIO="$SC/events-none.ini" "$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" \
    -f json -o "$EO/pnone.json" -- sleep 0.2
jeq "profile, no event API: events null, with the reason" "$(cat "$EO/pnone.json")" '[.events, .events_error]' \
    '[null,"this driver has no NVML event API (FUNCTION_NOT_FOUND): no Xid events"]'
# a command on a MIG instance of an unprivileged monitor: the instance's
# own Xids would not be seen, so "none" is not known either
CUDA_VISIBLE_DEVICES=MIG-0e55abca-f289-2698-d261-2dbc739dd0e0 MIGMON_SIM_TIME=5 \
    MIGMON_SIM_SCENARIO="$SC/dgx-a100-8x7.ini" "$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" \
    -f json -o "$EO/pdgx.json" -- sleep 0.2
jeq "profile, unprivileged MIG instance: events null, with the reason" "$(cat "$EO/pdgx.json")" \
    '[.events, .events_error]' \
    '[null,"a MIG instance'"'"'s own Xid events reach only a privileged monitor (nvml.h); those of its whole GPU are counted on the GPU"]'
MIGMON_SIM_SCENARIO="$SC/events-none.ini" "$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" \
    -o "$EO/pnone.txt" -- sleep 0.2
contains "profile text, no event API: N/A with the reason" "$(cat "$EO/pnone.txt")" \
    "Events: N/A (this driver has no NVML event API (FUNCTION_NOT_FOUND): no Xid events)"
