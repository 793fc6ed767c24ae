# shellcheck shell=bash
# The replay mode (docs/replay.md): recordings of simulator runs with MIG
# changes, faults, a lost GPU and an Xid, replayed headless (--once --at)
# and compared with the recorded lines; --from/--to; a gzip file; the
# robust-input cases (a cut last line, garbage, unknown members, another
# schema); a stored screen of the replay paused at a known snapshot.
RP=$TMP/replay
mkdir -p "$RP"
# rp_rec SCENARIO TIME FILE N [ARGS...]: a recording, one simulated step per tick
rp_rec() {
    local scen=$1 t=$2 out=$3 n=$4
    shift 4
    MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/$scen" MIGMON_SIM_TIME=$t \
        "$MIGMON_BIN" record --nvml-path "$MIGMON_SIM_LIB" -o "$out" --force -n "$n" -i 100 \
        --gpm off --dcgm off "$@" </dev/null
}
# snap_line FILE K: the K-th snapshot line (1-based), normalised
snap_line() {
    grep -v '^{"type":' "$1" | sed -n "${2}p" | jq -cS 'del(.generator)'
}
# offset FILE K: the K-th snapshot's elapsed_ns from the first, as +S.NNNNNNNNNs
offset() {
    grep -v '^{"type":' "$1" | jq -s -r --argjson k "$2" \
        '((.[$k - 1].elapsed_ns - .[0].elapsed_ns) | tostring) as $n
         | "+" + ((("000000000" + $n) | .[-9:]) as $f | (($n | tonumber / 1e9 | floor | tostring) + "." + $f)) + "s"'
}
rp() { "$MIGMON_BIN" replay "$@"; }

# --- MIG changes (mig-reconfig: the layout changes at t = 60 and 70, a MIG
# device's own process lists fail) -------------------------------------------
rp_rec mig-reconfig.ini 56+2 "$RP/mig.jsonl" 10; rc=$?
eq "record: exit 0" "$rc" 0
# (a first snapshot taken while NVML was still starting, on a loaded
# machine, has none)
eq "the recording has the MIG change: 3 devices, then 2" \
    "$(jq -s -c '[.[].devices | length] | [index(3) != null, .[-1]]' "$RP/mig.jsonl")" "[true,2]"
for k in 1 2 3 6 10; do
    eq "mig: --at the offset of snapshot $k gives that line" \
        "$(rp "$RP/mig.jsonl" --once --at "$(offset "$RP/mig.jsonl" $k)" | jq -cS 'del(.generator)')" \
        "$(snap_line "$RP/mig.jsonl" $k)"
done
ts3=$(snap_line "$RP/mig.jsonl" 3 | jq -r .timestamp)
eq "mig: --at a wall time (RFC 3339) gives the snapshot at it" \
    "$(rp "$RP/mig.jsonl" --once --at "$ts3" | jq -cS 'del(.generator)')" "$(snap_line "$RP/mig.jsonl" 3)"
eq "mig: -0 is the last snapshot" \
    "$(rp "$RP/mig.jsonl" --once --at -0 | jq -c '[.elapsed_ns, (.devices | length)]')" \
    "$(snap_line "$RP/mig.jsonl" 10 | jq -c '[.elapsed_ns, (.devices | length)]')"
# a time outside the recording has no snapshot: said with the recording's
# span, exit 2, nothing printed (a bare clock time is on the first
# snapshot's day, and said as taken)
first_ts=$(snap_line "$RP/mig.jsonl" 1 | jq -r .timestamp)
last_ts=$(snap_line "$RP/mig.jsonl" 10 | jq -r .timestamp)
span_s=$(grep -v '^{"type":' "$RP/mig.jsonl" | jq -s -r '.[-1].elapsed_ns - .[0].elapsed_ns' |
    awk '{ printf "%.3f", $1 / 1e9 }')
span="which runs from $first_ts to $last_ts (+0s to +${span_s}s): no snapshot then"
# an hour before the first snapshot, as a clock time on its day (or, for a
# recording made just after midnight UTC, an RFC 3339 time)
first_h=$((10#${first_ts:11:2}))
if [ "$first_h" -ge 1 ]; then
    early=$(printf '%02d:%s' $((first_h - 1)) "${first_ts:14:2}")
    early_shown="$early (${first_ts:0:11}$early:00.000Z)"
else
    early=1970-01-02T00:00:00Z
    early_shown=$early
fi
for spec in "$early" 1970-01-02T00:00:00Z -1h; do
    out=$(rp "$RP/mig.jsonl" --once --at "$spec" 2>"$RP/outside.err"); rc=$?
    eq "mig: --at $spec (before the recording): exit 2, nothing printed" "$rc:$out" "2:"
done
eq "mig: --at before the recording: said, with its span" "$(cat "$RP/outside.err")" \
    "mig-gpu-mon replay: --at -1h is before the recording, $span"
err=$(rp "$RP/mig.jsonl" --once --at "$early" 2>&1)
eq "mig: a clock time before the recording: said as taken" "$err" \
    "mig-gpu-mon replay: --at $early_shown is before the recording, $span"
err=$(rp "$RP/mig.jsonl" --once --at +1h 2>&1); rc=$?
eq "mig: --at after the recording: exit 2, said" "$rc:$err" \
    "2:mig-gpu-mon replay: --at +1h is after the recording, $span"
err=$(rp "$RP/mig.jsonl" --once --from 2099-01-01T00:00:00Z 2>&1); rc=$?
eq "mig: --from after the recording: exit 2, said" "$rc:$err" \
    "2:mig-gpu-mon replay: --from 2099-01-01T00:00:00Z is after the recording, $span"
err=$(rp "$RP/mig.jsonl" --from -1h 2>&1); rc=$?
eq "mig: --from before the recording (in the monitor too): exit 2, said" "$rc:$err" \
    "2:mig-gpu-mon replay: --from -1h is before the recording, $span"
# the end of the part may lie past the end of the recording: to its end
eq "mig: --to after the recording: to the end" \
    "$(rp "$RP/mig.jsonl" --once --to +1h --at -0 | jq -c .elapsed_ns)" \
    "$(snap_line "$RP/mig.jsonl" 10 | jq -c .elapsed_ns)"
eq "mig: without --at, --once gives --from's snapshot" \
    "$(rp "$RP/mig.jsonl" --once --from "$(offset "$RP/mig.jsonl" 4)" | jq -cS 'del(.generator)')" \
    "$(snap_line "$RP/mig.jsonl" 4)"
eq "mig: --at past --to gives --to's" \
    "$(rp "$RP/mig.jsonl" --once --to "$(offset "$RP/mig.jsonl" 5)" --at -0 | jq -c .elapsed_ns)" \
    "$(snap_line "$RP/mig.jsonl" 5 | jq -c .elapsed_ns)"
tbl=$(rp "$RP/mig.jsonl" --once --format table --at -0)
contains "mig: --format table" "$tbl" "A100-SXM4-80GB"
eq "mig: the table is the --once table of that snapshot (its time in the header)" \
    "$(head -1 <<<"$tbl" | awk '{ print $3 }')" "$(snap_line "$RP/mig.jsonl" 10 | jq -r .timestamp)"

# --- faults: a GPU lost at t = 30 --------------------------------------------
rp_rec faults.ini 27+1 "$RP/faults.jsonl" 6; rc=$?
eq "faults: record exit 0" "$rc" 0
for k in 1 4 6; do
    eq "faults: snapshot $k replayed as recorded" \
        "$(rp "$RP/faults.jsonl" --once --at "$(offset "$RP/faults.jsonl" $k)" | jq -cS 'del(.generator)')" \
        "$(snap_line "$RP/faults.jsonl" $k)"
done
eq "faults: the lost GPU is lost in the replay" \
    "$(rp "$RP/faults.jsonl" --once --at -0 | jq -c '[.devices[] | select(.lost)] | length > 0')" true

# --- events: h200-mig's Xid 94 at t = 3 appears at its time ----------------
rp_rec h200-mig.ini 1+1 "$RP/xid.jsonl" 4; rc=$?
eq "xid: record exit 0" "$rc" 0
first_ev=$(grep -v '^{"type":' "$RP/xid.jsonl" | jq -s '[.[].events_total] | index(1) + 1')
eq "xid: before its snapshot no event" \
    "$(rp "$RP/xid.jsonl" --once --at "$(offset "$RP/xid.jsonl" $((first_ev - 1)))" | jq -c '[.events_total, (.events | length)]')" "[0,0]"
eq "xid: from its snapshot on, the Xid 94 on its MIG device" \
    "$(rp "$RP/xid.jsonl" --once --at "$(offset "$RP/xid.jsonl" "$first_ev")" | jq -c '[.events_total, .events[0].xid, .events[0].mig_index]')" \
    "$(snap_line "$RP/xid.jsonl" "$first_ev" | jq -c '[.events_total, .events[0].xid, .events[0].mig_index]')"

# --- profile --timeline: the same lines ------------------------------------------
MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/h200-mig.ini" MIGMON_SIM_TIME=100 \
    "$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" --timeline "$RP/timeline.jsonl" \
    -o "$RP/report.txt" -- sleep 0.3 </dev/null; rc=$?
eq "timeline: profile exit 0" "$rc" 0
n=$(grep -vc '^{"type":' "$RP/timeline.jsonl")
eq "timeline: its last snapshot replayed as written" \
    "$(rp "$RP/timeline.jsonl" --once --at -0 | jq -cS 'del(.generator)')" "$(snap_line "$RP/timeline.jsonl" "$n")"

# --- gzip: read as it is -----------------------------------------------------
gzip -c "$RP/mig.jsonl" >"$RP/mig.jsonl.gz"
eq "gzip: --at on a compressed recording" \
    "$(rp "$RP/mig.jsonl.gz" --once --at "$(offset "$RP/mig.jsonl" 7)" | jq -cS 'del(.generator)')" \
    "$(snap_line "$RP/mig.jsonl" 7)"
eq "gzip: --at back after forward (a seek back in the stream)" \
    "$(rp "$RP/mig.jsonl.gz" --once --from -0 --at +0 | jq -c .elapsed_ns)" \
    "$(snap_line "$RP/mig.jsonl" 10 | jq -c .elapsed_ns)"

# --- robust input --------------------------------------------------------------
# a cut last line (a recorder killed mid-write)
size=$(wc -c <"$RP/mig.jsonl")
head -c $((size - 500)) "$RP/mig.jsonl" >"$RP/cut.jsonl"
out=$(rp "$RP/cut.jsonl" --once --at -0 2>"$RP/cut.err"); rc=$?
eq "cut: exit 0" "$rc" 0
eq "cut: the last whole snapshot" "$(jq -c .elapsed_ns <<<"$out")" "$(snap_line "$RP/mig.jsonl" 9 | jq -c .elapsed_ns)"
contains "cut: said" "$(cat "$RP/cut.err")" "the last line is cut"
# garbage lines: skipped, counted, said
{ echo 'not json at all'; sed -n 1,3p "$RP/mig.jsonl"; printf '{"half": \n'; echo '[1,2]'
  sed -n 4,10p "$RP/mig.jsonl"; printf '\x00\xff\xfe\n'; } >"$RP/garbage.jsonl"
out=$(rp "$RP/garbage.jsonl" --once --at "$(offset "$RP/mig.jsonl" 5)" 2>"$RP/garbage.err"); rc=$?
eq "garbage: exit 0" "$rc" 0
eq "garbage: snapshots numbered past it" "$(jq -cS 'del(.generator)' <<<"$out")" "$(snap_line "$RP/mig.jsonl" 5)"
contains "garbage: counted and said" "$(cat "$RP/garbage.err")" "4 lines skipped"
# unknown members (a newer writer): read as before
sed 's/^{"schema":1,/{"schema":1,"from_the_future":{"a":[1,2]},/; s/"metrics":{/"metrics":{"new_metric":{"value":1,"source":"direct"},/' \
    "$RP/mig.jsonl" >"$RP/extra.jsonl"
eq "extra members: ignored" \
    "$(rp "$RP/extra.jsonl" --once --at "$(offset "$RP/mig.jsonl" 2)" | jq -cS 'del(.generator)')" \
    "$(snap_line "$RP/mig.jsonl" 2)"
# another schema: a clear error, exit 2
sed '3s/^{"schema":1,/{"schema":3,/' "$RP/mig.jsonl" >"$RP/schema3.jsonl"
err=$(rp "$RP/schema3.jsonl" --once 2>&1 >/dev/null); rc=$?
eq "schema 3: exit 2" "$rc" 2
contains "schema 3: names it" "$err" "line 3: a snapshot of schema 3; this mig-gpu-mon reads schema 1 and 2 recordings"
: >"$RP/empty.jsonl"
err=$(rp "$RP/empty.jsonl" --once 2>&1); rc=$?
eq "empty: exit 2" "$rc" 2
contains "empty: says so" "$err" "no snapshot in it"
err=$(rp "$RP/none.jsonl" --once 2>&1); rc=$?
eq "missing file: exit 2" "$rc" 2
contains "missing file: says so" "$err" "No such file or directory"
head -c 300 "$RP/mig.jsonl.gz" >"$RP/cut.gz"
rp "$RP/cut.gz" --once >/dev/null 2>&1; rc=$?
eq "a cut gzip stream: exit 2, no crash" "$rc" 2
err=$(rp "$RP/mig.jsonl" --once --at tomorrow 2>&1); rc=$?
eq "a bad time: exit 2" "$rc" 2
contains "a bad time: the forms" "$err" "is no time"
err=$(rp "$RP/mig.jsonl" --speed 0 2>&1); rc=$?
eq "--speed 0: exit 2" "$rc" 2
err=$(rp "$RP/mig.jsonl" --at +1s 2>&1); rc=$?
eq "--at without --once: exit 2" "$rc" 2
rp --help | grep -q -- '--speed X' && ok || bad "replay --help names --speed"
err=$(rp "$RP/mig.jsonl" --from -0 --to +0 --once 2>&1); rc=$?
eq "--from after --to: exit 2" "$rc" 2

# --- what is not a recording: refused at once, as such ------------------------
# a pipe (process substitution), a FIFO (never opened twice, never waited
# on), a device and a directory: a recording is read twice
err=$(rp <(cat "$RP/mig.jsonl") --once 2>&1 >"$RP/pipe.out"); rc=$?
eq "a pipe: exit 2" "$rc" 2
eq "a pipe: no snapshot made up" "$(wc -c <"$RP/pipe.out")" 0
contains "a pipe: said" "$err" "is not a regular file (a pipe, FIFO, socket or device)"
mkfifo "$RP/fifo"
err=$(timeout 10 "$MIGMON_BIN" replay "$RP/fifo" --once 2>&1 >/dev/null); rc=$?
eq "a FIFO without a writer: exit 2, no hang" "$rc" 2
contains "a FIFO: said" "$err" "$RP/fifo is not a regular file"
err=$(timeout 10 "$MIGMON_BIN" replay /dev/zero --once 2>&1 >/dev/null); rc=$?
eq "/dev/zero: exit 2 at once" "$rc" 2
contains "/dev/zero: said" "$err" "/dev/zero is not a regular file"
err=$(rp "$RP" --once 2>&1 >/dev/null); rc=$?
eq "a directory: exit 2" "$rc" 2
eq "a directory: said as such" "$err" "mig-gpu-mon replay: $RP is a directory, not a recording"
# the index scan is bounded (docs/replay.md, "Large files"): a sparse
# terabyte of zeros, a gzip bomb (64 MiB of zeros in 64 KB), and snapshots
# followed by a gap without one, whose snapshots before it are replayed
truncate -s 1T "$RP/sparse.jsonl"
err=$(timeout 30 "$MIGMON_BIN" replay "$RP/sparse.jsonl" --once 2>&1 >/dev/null); rc=$?
eq "a terabyte of zeros: exit 2, soon" "$rc" 2
eq "a terabyte of zeros: said" "$err" \
    "mig-gpu-mon replay: $RP/sparse.jsonl: no snapshot line in its first 64 MiB"
rm -f "$RP/sparse.jsonl"
head -c 64M /dev/zero | gzip -9 >"$RP/bomb.jsonl.gz"
err=$(timeout 30 "$MIGMON_BIN" replay "$RP/bomb.jsonl.gz" --once 2>&1 >/dev/null); rc=$?
eq "a gzip bomb: exit 2" "$rc" 2
contains "a gzip bomb: said" "$err" "its content is over 512 times its compressed size (16 MiB from"
cp "$RP/mig.jsonl" "$RP/gap.jsonl"
truncate -s +70M "$RP/gap.jsonl"
{ echo; sed -n 1p "$RP/mig.jsonl"; } >>"$RP/gap.jsonl"
out=$(timeout 30 "$MIGMON_BIN" replay "$RP/gap.jsonl" --once --at -0 2>"$RP/gap.err"); rc=$?
eq "a gap of 70 MiB: exit 0" "$rc" 0
eq "a gap of 70 MiB: the last snapshot before it" "$(jq -c .elapsed_ns <<<"$out")" \
    "$(snap_line "$RP/mig.jsonl" 10 | jq -c .elapsed_ns)"
eq "a gap of 70 MiB: said" "$(cat "$RP/gap.err")" \
    "mig-gpu-mon replay: $RP/gap.jsonl: 64 MiB without a snapshot line after snapshot 10: not read past there; the 10 snapshots before are replayed"
rm -f "$RP/gap.jsonl"
# a snapshot line that does not parse after all (its head is a snapshot's):
# nothing made up, and the line's bytes that jansson quotes ("near '...'")
# cleaned of terminal controls (U+009B CSI, U+202E RLO)
printf '{"schema":1,"elapsed_ns":5,"timestamp":"2026-12-02T14:07:00Z","devices":[] "\xc2\x9b31m\xe2\x80\xaeevil"}\n' \
    >"$RP/evil.jsonl"
err=$(rp "$RP/evil.jsonl" --once 2>&1 >"$RP/evil.out"); rc=$?
eq "a snapshot that does not parse: exit 2" "$rc" 2
eq "a snapshot that does not parse: none made up" "$(wc -c <"$RP/evil.out")" 0
eq "a snapshot that does not parse: said, cleaned" "$err" \
    "mig-gpu-mon replay: $RP/evil.jsonl: snapshot 1: not JSON ('}' expected near '\"??31m???evil\"', column 86)"

# --- the replay in the TUI, paused at a known snapshot -------------------------
if command -v tmux >/dev/null; then
    . "$MIGMON_SRC/tests/e2e/tui_lib.sh"
    P=$(tui_proc replay two-core)
    # six snapshots with devices (on a loaded machine the first may have
    # been taken while NVML was still starting)
    rp_rec mig-reconfig.ini 56+2 "$RP/screen-all.jsonl" 7 --proc-root "$P"
    grep -v -e '^{"type":' -e '"devices":\[\]' "$RP/screen-all.jsonl" | head -6 >"$RP/screen.jsonl"
    TUI_MASK="s#$RP/##; s/ss\.[0-9]{3}Z/ss.mmmZ/"
    tui_start replay 120 40 0 -- replay "$RP/screen.jsonl" --paused
    tui_keys replay . . .
    scr=$(tui_capture replay)
    contains "tui: the header says REPLAY and the file" "$scr" "REPLAY screen.jsonl"
    contains "tui: the position bar at snapshot 4 of 6, paused" "$scr" "|| 1x YYYY-MM-DD hh:mm:ss.mmmZ 4/6"
    tui_screen "tui: replay paused at snapshot 4" replay replay-paused-120x40
    tui_keys replay , ,
    contains "tui: two back" "$(tui_capture replay)" " 2/6 "
    tui_keys replay p k
    contains "tui: a recorded process is never signalled (its PID is no process here)" \
        "$(tui_capture replay)" "a recorded process: not signalled"
    tui_keys replay Escape '>'
    contains "tui: > the end" "$(tui_capture replay)" " 6/6 "
    tui_keys replay "<" Space
    for ((i = 0; i < 100; i++)); do
        case "$(tui_capture replay)" in *" 6/6 "*) break ;; esac
        sleep 0.05
    done
    contains "tui: space plays to the end at the recorded pace, then pauses" "$(tui_capture replay)" "|| 1x"
    eq "tui: q quits with 0" "$(tui_quit replay q)" 0
    # the help lists no k: a recorded process is never signalled
    tui_start replay-help 100 30 0 -- replay "$RP/screen.jsonl" --paused
    tui_keys replay-help '?'
    scr=$(tui_capture replay-help)
    contains "tui help: Esc alone in the process list" "$scr" \
        "  Esc               back (a recorded process is never signalled)"
    case "$scr" in *"send a signal"*) bad "tui help: replay lists k (send a signal)" ;; *) ok ;; esac
    tui_quit replay-help q >/dev/null
    # a recording that cannot be read at a snapshot: said as that, never as a
    # scenario the simulator could not start, and the quoted bytes cleaned
    tui_start replay-evil 100 30 0 -- replay "$RP/evil.jsonl"
    scr=$(tui_capture replay-evil)
    contains "tui: an unreadable snapshot is the recording's fault" "$scr" \
        "The recording could not be read at this snapshot:"
    case "$scr" in *simulator*) bad "tui: an unreadable recording called the simulator's failure" ;; *) ok ;; esac
    contains "tui: the quoted bytes cleaned" "$scr" "near '\"??31m???evil\"'"
    tui_quit replay-evil q >/dev/null
    # ... and at a later snapshot: nothing of the one shown before is left on
    # the screen as if it were this one's
    { cat "$RP/screen.jsonl"; cat "$RP/evil.jsonl"; } >"$RP/tail.jsonl"
    tui_start replay-tail 100 30 0 -- replay "$RP/tail.jsonl" --paused
    contains "tui: the first snapshot's devices" "$(tui_capture replay-tail)" "GPU 0 A100-SXM4-80GB"
    tui_keys replay-tail '>'
    for ((i = 0; i < 100; i++)); do
        case "$(tui_capture replay-tail)" in *"could not be read at this snapshot"*) break ;; esac
        sleep 0.05
    done
    scr=$(tui_capture replay-tail)
    contains "tui: an unreadable last snapshot said" "$scr" "tail.jsonl: snapshot 7: not "
    case "$scr" in *"GPU 0"*) bad "tui: an unreadable snapshot shows the devices of another" ;; *) ok ;; esac
    tui_quit replay-tail q >/dev/null
    tui_kill_all
    unset TUI_MASK
fi
