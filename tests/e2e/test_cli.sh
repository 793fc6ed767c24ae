# shellcheck shell=bash
# Flags, help, version and bad input: one clear line, the right exit status.
out=$("$MIGMON_BIN" --version)
case "$out" in
"mig-gpu-mon 0.1.0 (git unknown)") ok ;;
"mig-gpu-mon 0.1.0 (git "*")")
    rev=${out#*git }
    rev=${rev%)}
    rev=${rev%-dirty}
    # the revision is a real commit of this checkout
    git -C "$MIGMON_SRC" cat-file -e "$rev^{commit}" 2>/dev/null && ok || bad "--version: '$rev' is not a commit here" ;;
*) bad "--version: '$out'" ;;
esac
out=$("$MIGMON_BIN" --help); contains "--help lists --once" "$out" "--once"
contains "--help lists --nvml-path" "$out" "--nvml-path PATH"
contains "--help lists --debug" "$out" "--debug[=FILE]"
contains "--help lists --proc-root" "$out" "--proc-root DIR"
missing=""
for o in $(sed -n 's/^ *{"\([a-z-]*\)", \(no\|required\|optional\)_argument.*/\1/p' "$MIGMON_SRC/src/app/cli.c"); do
    case "$out" in *"--$o"*) ;; *) missing="$missing --$o" ;; esac
done
eq "--help lists every long option" "$missing" ""
contains "README shows --proc-root" "$(cat "$MIGMON_SRC/README.md")" "--proc-root /host/proc"
# the Modes block lists the modes only, each at the left
eq "--help: the Modes block" "$(printf '%s\n' "$out" | sed -n '/^Modes:$/,/^$/p' | grep -oE '^ {2,6}[a-z(-][a-z)-]*')" \
    "  (none)
  --once
  profile
  export
  record
  replay"
contains "--help: --demo among the options" "$(printf '%s\n' "$out" | sed -n '/^Options:$/,/^$/p')" \
    "      --demo[=SCENARIO]  "
# help and version written nowhere: exit 1 with one line, like a snapshot
if [ -w /dev/full ]; then
    for o in help version; do
        err=$("$MIGMON_BIN" --$o 2>&1 >/dev/full); rc=$?
        eq "--$o >/dev/full exits 1" "$rc" 1
        eq "--$o >/dev/full says so" "$err" "mig-gpu-mon: writing the $o failed: No space left on device"
    done
fi

# A reader that has gone (| head -3 having read its lines) is the normal end
# of a pipe, in every mode that writes to standard output: exit 0 and
# nothing said, as record does. The reader is closed before the program
# starts, so each write fails with EPIPE, the program's signals as a
# shell's (SIGPIPE at its default).
closed_pipe() {
    python3 -c 'import os, subprocess, sys
r, w = os.pipe(); os.close(r)
p = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
print("%d %s" % (p.returncode, p.stderr.decode(errors="replace").strip()))' "$@"
}
EP=(env MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/dgx-a100-8x7.ini" MIGMON_SIM_TIME=100
    "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" --gpm off --dcgm off)
for f in table json csv influx prometheus; do
    eq "--once -f $f | (a closed reader): exit 0, nothing said" "$(closed_pipe "${EP[@]}" --once -f $f)" "0 "
done
eq "--once --all-processes | (a closed reader): exit 0" \
    "$(closed_pipe "${EP[@]}" --once --all-processes -f json)" "0 "
eq "record -f influx | (a closed reader): exit 0" "$(closed_pipe "${EP[@]}" record -f influx -i 100)" "0 "
"${EP[@]}" record -n 1 -o "$TMP/epipe.jsonl" </dev/null 2>/dev/null
eq "replay --once | (a closed reader): exit 0" \
    "$(closed_pipe "$MIGMON_BIN" replay "$TMP/epipe.jsonl" --once -f table)" "0 "
for o in help version; do
    eq "--$o | (a closed reader): exit 0" "$(closed_pipe "$MIGMON_BIN" --$o)" "0 "
done

err=$("$MIGMON_BIN" --interval 50 2>&1 >/dev/null); rc=$?
eq "interval too small exits 2" "$rc" 2
eq "interval message" "$err" "mig-gpu-mon: --interval 50: must be between 100 and 3600000 milliseconds"
for v in 99 3600001 1.5 x ""; do
    err=$("$MIGMON_BIN" --dcgm-interval "$v" --once 2>&1 >/dev/null); rc=$?
    eq "--dcgm-interval '$v': exits 2" "$rc" 2
    eq "--dcgm-interval '$v': says the range" "$err" \
        "mig-gpu-mon: --dcgm-interval $v: expected a whole number of milliseconds from 100 to 3600000"
done
# --format takes what --help and the man page list, for --once and for record
for args in "--once --format xml" "--once -f jsonl"; do
    err=$(timeout 10 "$MIGMON_BIN" $args --demo 2>&1 >/dev/null); rc=$?
    eq "$args: exits 2" "$rc" 2
    eq "$args: the formats of --once" "$err" \
        "mig-gpu-mon: --format ${args##* }: expected table, json, prometheus, csv or influx"
done
for args in "record -f xml" "record -f json" "record -f table"; do
    err=$(timeout 10 "$MIGMON_BIN" $args --demo -n 1 2>&1 >/dev/null </dev/null); rc=$?
    eq "$args: exits 2" "$rc" 2
    eq "$args: the formats of record" "$err" \
        "mig-gpu-mon: record --format ${args##* }: expected jsonl, csv or influx"
done
err=$("$MIGMON_BIN" --once --nvml-path /nonexistent/libnvidia-ml.so.1 2>&1 >/dev/null); rc=$?
eq "missing --nvml-path exits 2" "$rc" 2
eq "missing --nvml-path message" "$err" "mig-gpu-mon: --nvml-path /nonexistent/libnvidia-ml.so.1: no such file"
printf 'not an ELF' >"$TMP/bogus.so"
err=$("$MIGMON_BIN" --once --nvml-path "$TMP/bogus.so" 2>&1 >/dev/null); rc=$?
eq "unloadable --nvml-path exits 2" "$rc" 2
contains "unloadable --nvml-path says why" "$err" "cannot load it"
# The live view refuses a non-terminal stdout instead of spewing escapes.
err=$("$MIGMON_BIN" 2>&1 >"$TMP/out"); rc=$?
eq "non-tty live view exits 2" "$rc" 2
contains "non-tty live view suggests --once" "$err" "use --once"

# --demo finds the simulator and its scenarios from the binary's own path.
src=$(cd "$MIGMON_SRC" && pwd -P)
# the names listed: the scenarios and the AMD demo's (a simulated sysfs)
names=$({ cd "$MIGMON_SRC/sim/scenarios" && ls -- *.ini | sed 's/\.ini$//'; echo mi300x; } |
    LC_ALL=C sort | paste -sd, - | sed 's/,/, /g')
err=$("$MIGMON_BIN" --demo=nonexistent --once 2>&1 >/dev/null); rc=$?
eq "unknown --demo scenario exits 2" "$rc" 2
eq "unknown --demo scenario names the directory and the scenarios" "$err" \
    "mig-gpu-mon: --demo=nonexistent: no such scenario in $src/sim/scenarios (available: $names)"
# the nearest known name suggested: the names it begins, else the nearest
# by edits; a mode word's typo said as such
for pair in "a100:a100-sxm4-80gb" "mi300:mi300x" "h200-mgi:h200-mig" \
    "h100:h100-pcie-mig-535, h100-pcie-mig-535-gpm-corrupts, h100-sxm" \
    "dcgm:dcgm-hang, dcgm-hostengine-restart, dcgm-multi-pass, dcgm-no-hostengine, ..."; do
    err=$("$MIGMON_BIN" --demo="${pair%%:*}" --once 2>&1 >/dev/null)
    eq "--demo=${pair%%:*}: the nearest names suggested" "$err" \
        "mig-gpu-mon: --demo=${pair%%:*}: no such scenario in $src/sim/scenarios; did you mean ${pair#*:}? (available: $names)"
done
err=$("$MIGMON_BIN" --demo=recrod --once 2>&1 >/dev/null); rc=$?
eq "--demo=recrod: exit 2, the mode named" "$rc:$err" \
    "2:mig-gpu-mon: --demo=recrod: no such scenario in $src/sim/scenarios; recrod looks like the mode record mistyped (--demo record) (available: $names)"
for args in "--demo recrod -n 1" "--demo exprot --listen 127.0.0.1:0" "-i 500 --demo rceord -o x.jsonl"; do
    # shellcheck disable=SC2086
    err=$(cd "$TMP" && timeout 10 "$MIGMON_BIN" $args 2>&1 >/dev/null </dev/null); rc=$?
    w=$(set -- $args; while [ "$1" != --demo ]; do shift; done; echo "$2")
    m=$(case $w in rec* | rce*) echo record ;; *) echo export ;; esac)
    eq "$args: exit 2, the typo said, not the mode's options" "$rc:$err" \
        "2:mig-gpu-mon: --demo $w: taken as a scenario's name, but it looks like the mode $m mistyped (a scenario of that name: --demo=$w)"
done
[ -e "$TMP/x.jsonl" ] && bad "--demo rceord -o x.jsonl: a file was written" || ok
out=$(MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo=a100-sxm4-80gb.ini --once --format json); rc=$?
eq "--demo=NAME.ini exits 0" "$rc" 0
jeq "--demo=NAME.ini runs that scenario" "$out" '.devices[0].name' '"NVIDIA A100-SXM4-80GB"'
cp "$MIGMON_SRC/sim/scenarios/h100-sxm.ini" "$TMP/mine.ini"
out=$(cd "$TMP" && MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo=./mine.ini --once --format json)
jeq "--demo=PATH runs that file" "$out" '.devices[0].name' '"NVIDIA H100 80GB HBM3"'
err=$(cd "$TMP" && "$MIGMON_BIN" --demo=mine.ini --once 2>&1 >/dev/null)
contains "a name that is a file here says how to run it" "$err" \
    "; for the file mine.ini in this directory, write --demo=./mine.ini"

# A bad scenario file is reported as one, with the simulator's message.
printf 'garbage\n' >"$TMP/garbage.ini"
err=$("$MIGMON_BIN" --demo="$TMP/garbage.ini" --once 2>&1 >/dev/null); rc=$?
eq "garbage scenario exits 2" "$rc" 2
eq "garbage scenario message" "$err" \
    "mig-gpu-mon: --demo: invalid scenario file: $TMP/garbage.ini:1: syntax error (expected [section] or key = value)"
printf '[system]\ndriver_version = 550.144.03\n[gpu.0]\nname = X\nmemory_total_mb = 1\n' >"$TMP/badkey.ini"
err=$("$MIGMON_BIN" --demo="$TMP/badkey.ini" 2>&1 >/dev/null); rc=$?
eq "bad key exits 2" "$rc" 2
eq "bad key message" "$err" \
    "mig-gpu-mon: --demo: invalid scenario file: $TMP/badkey.ini:5: [gpu.0] unknown key 'memory_total_mb'"

# An installed copy (make install PREFIX=...), moved elsewhere afterwards.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD -u SAN make -s -o all -C "$MIGMON_SRC" install \
    PREFIX="$TMP/prefix" DESTDIR= BIN="$MIGMON_BIN" SIM_LIB="$MIGMON_SIM_LIB" >/dev/null
mv "$TMP/prefix" "$TMP/moved"
err=$(cd / && "$TMP/moved/bin/mig-gpu-mon" --demo=nonexistent 2>&1 >/dev/null); rc=$?
eq "installed: unknown scenario exits 2" "$rc" 2
eq "installed: unknown scenario names the installed directory" "$err" \
    "mig-gpu-mon: --demo=nonexistent: no such scenario in $(cd "$TMP" && pwd -P)/moved/lib/mig-gpu-mon/sim/scenarios (available: $names)"
out=$(cd / && MIGMON_SIM_TIME=100 "$TMP/moved/bin/mig-gpu-mon" --demo=a100-sxm4-80gb --once --format json); rc=$?
eq "installed: --demo --once exits 0" "$rc" 0
jeq "installed: --demo --once runs the scenario" "$out" '.devices[0].name' '"NVIDIA A100-SXM4-80GB"'
rm -rf "$TMP/moved"

# --demo NAME and --debug FILE: the value as the next argument.
out=$(MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo a100-sxm4-80gb --once --format json); rc=$?
eq "--demo NAME exits 0" "$rc" 0
jeq "--demo NAME runs that scenario" "$out" '.devices[0].name' '"NVIDIA A100-SXM4-80GB"'
out=$(MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo --once --format json); rc=$?
eq "--demo before an option exits 0" "$rc" 0
jeq "--demo before an option runs the default scenario" "$out" '.driver_version' '"570.211.01"'
err=$("$MIGMON_BIN" --demo no-such-thing --once 2>&1 >/dev/null); rc=$?
eq "--demo UNKNOWN exits 2" "$rc" 2
contains "--demo UNKNOWN lists the scenarios" "$err" "--demo=no-such-thing: no such scenario in "
MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo a100-sxm4-80gb --debug "$TMP/space.log" --once >/dev/null; rc=$?
eq "--debug FILE exits 0" "$rc" 0
contains "--debug FILE logs there" "$(cat "$TMP/space.log" 2>&1)" "nvmlInit"
out=$("$MIGMON_BIN" --help)
contains "--help explains the value as the next argument" "$out" "--demo h200-mig, --debug /tmp/nvml.log"
# a mode word after --demo or --debug is the mode, not the value
err=$(timeout 10 "$MIGMON_BIN" --demo export --once 2>&1); rc=$?
eq "--demo export --once exits 2" "$rc" 2
eq "--demo export --once: the modes, not a scenario" "$err" \
    "mig-gpu-mon: export and --once exclude each other (--once --format prometheus prints the page once)"
mkdir -p "$TMP/nomhd-cli"
printf 'not a library\n' >"$TMP/nomhd-cli/libmicrohttpd.so.12"
err=$(LD_LIBRARY_PATH="$TMP/nomhd-cli" timeout 10 "$MIGMON_BIN" --demo export --listen 127.0.0.1:0 2>&1); rc=$?
eq "--demo export --listen: the exporter on the default scenario (no libmicrohttpd here: exit 2)" "$rc" 2
contains "--demo export --listen: the exporter starts" "$err" "mig-gpu-mon: the HTTP server needs libmicrohttpd"
out=$(XDG_STATE_HOME="$TMP/debug-state" MIGMON_SIM_TIME=100 timeout 20 "$MIGMON_BIN" --debug record -n 1 --demo \
    2>"$TMP/debug-record.err" </dev/null); rc=$?
eq "--debug record -n 1: the mode, exit 0" "$rc" 0
eq "--debug record -n 1: one snapshot (and h200-mig's Xid 94 line)" \
    "$(printf '%s\n' "$out" | jq -c 'select(.type == null) | [.devices[0].name]' 2>&1)" '["NVIDIA H200"]'
[ -s "$TMP/debug-state/mig-gpu-mon/debug.log" ] && ok || bad "--debug record: no log at the default path"

# Two modes together are refused in either order, with one line and exit
# status 2, before anything is opened or written
modes_refused() { # modes_refused MESSAGE ARGS...
    local want=$1 err rc
    shift
    err=$(cd "$TMP" && timeout 10 "$MIGMON_BIN" "$@" 2>&1 </dev/null); rc=$?
    eq "$*: exits 2" "$rc" 2
    eq "$*: one message" "$err" "mig-gpu-mon: $want"
}
modes_refused "record and export exclude each other" record export --demo -n 1 -o modes.jsonl --listen 127.0.0.1:0
[ -e "$TMP/modes.jsonl" ] && bad "record export: the output file was created" || ok
modes_refused "record and export exclude each other" export record --demo -n 1 -o modes.jsonl
[ -e "$TMP/modes.jsonl" ] && bad "export record: the output file was created" || ok
modes_refused "record and export exclude each other" record -o modes.jsonl --demo export
modes_refused "record and --once exclude each other" record --once --demo
modes_refused "record and --once exclude each other" --once record --demo
modes_refused "record and profile exclude each other" record profile -- true
modes_refused "export and profile exclude each other" export profile -- true
modes_refused "export and profile exclude each other" --demo profile export -- true
modes_refused "export and --once exclude each other (--once --format prometheus prints the page once)" export --once
modes_refused "export and --once exclude each other (--once --format prometheus prints the page once)" --once export
modes_refused "profile and --once exclude each other" --once profile -- true
[ -e "$TMP/modes.jsonl" ] && bad "a refused pair of modes created the output file" || ok

# profile takes --demo NAME as the other modes do (a word not starting with
# '-' and not a mode); its COMMAND follows "--"; a second mode is refused
out=$(MIGMON_SIM_TIME=100 "$MIGMON_BIN" profile -f json --demo a100-sxm4-80gb -- true 2>&1); rc=$?
eq "profile --demo NAME -- CMD: CMD's exit status" "$rc" 0
jeq "profile --demo NAME: that scenario, that command" "$out" '[.devices[0].name, .command]' \
    '["NVIDIA A100-SXM4-80GB",["true"]]'
out=$(MIGMON_SIM_TIME=100 "$MIGMON_BIN" profile -f json --demo -- true 2>&1); rc=$?
eq "profile --demo -- CMD: CMD's exit status" "$rc" 0
jeq "profile --demo -- CMD: the default scenario" "$out" '.devices[0].name' '"NVIDIA H200"'
err=$(timeout 10 "$MIGMON_BIN" profile --demo sleep 1 2>&1); rc=$?
eq "profile --demo sleep 1: exit 2, nothing run" "$rc" 2
contains "profile --demo sleep 1: sleep is the scenario" "$err" "mig-gpu-mon: --demo=sleep: no such scenario in "
modes_refused "profile and --once exclude each other" profile --once -- true
modes_refused "record and profile exclude each other" profile record -o modes.jsonl
modes_refused "export and profile exclude each other" profile --demo export
[ -e "$TMP/modes.jsonl" ] && bad "profile record: the output file was created" || ok
MIGMON_SIM_TIME=100 "$MIGMON_BIN" profile -o /dev/null --demo -- sh -c 'exit 3' record 2>/dev/null; rc=$?
eq "profile -- CMD: after --, a mode word is the command's" "$rc" 3

# Options go before or after the mode word, one rule for every mode: the
# mode is the first argument that is record, export or profile and is not an
# option's value; nothing after -- is read as a mode or an option
out=$(MIGMON_SIM_TIME=100 timeout 20 "$MIGMON_BIN" --demo=h200-mig record -n 1 --gpm off \
    2>"$TMP/around.err" </dev/null); rc=$?
eq "--demo=h200-mig record -n 1 --gpm off: exit 0" "$rc" 0
eq "--demo=h200-mig record -n 1 --gpm off: one snapshot of the scenario" \
    "$(printf '%s\n' "$out" | jq -sc 'map(select(.type == null)) | [length, .[0].devices[0].name]' 2>&1)" '[1,"NVIDIA H200"]'
eq "--demo=h200-mig record -n 1 --gpm off: nothing on stderr" "$(cat "$TMP/around.err")" ""
out=$(MIGMON_SIM_TIME=100 timeout 20 "$MIGMON_BIN" -n 2 --demo h200-mig -i 100 record </dev/null); rc=$?
eq "-n 2 --demo h200-mig -i 100 record: exit 0" "$rc" 0
eq "-n 2 --demo h200-mig -i 100 record: two snapshots" \
    "$(printf '%s\n' "$out" | jq -s 'map(select(.type == null)) | length' 2>&1)" 2
# export, options before and after the word: started, then stopped
rm -f "$TMP/around-export.err"
MIGMON_SIM_TIME=100 "$MIGMON_BIN" -i 200 export --listen 127.0.0.1:0 --demo 2>"$TMP/around-export.err" \
    </dev/null &
exp_pid=$!
for _ in $(seq 100); do
    grep -q "serving\|libmicrohttpd" "$TMP/around-export.err" 2>/dev/null && break
    sleep 0.05
done
err=$(cat "$TMP/around-export.err")
case "$err" in
*"needs libmicrohttpd"*)
    wait "$exp_pid"
    echo "     (no libmicrohttpd: -i 200 export --listen checked as parsed only)"
    ok ;;
*"serving http://127.0.0.1:"*)
    port=$(printf '%s' "$err" | grep -oE '127\.0\.0\.1:[0-9]+' | head -1 | cut -d: -f2)
    if command -v curl >/dev/null; then
        # 503 "no sample yet" until the first sample is published (the
        # helpers start with it): answered 200 within 3 s
        for _ in $(seq 60); do
            code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health")
            [ "$code" = 200 ] && break
            sleep 0.05
        done
        eq "-i 200 export --listen --demo: /health answers" "$code" 200
    fi
    kill -TERM "$exp_pid"
    wait "$exp_pid"
    eq "-i 200 export --listen --demo: stopped by SIGTERM, exit 0" "$?" 0 ;;
*)
    kill -TERM "$exp_pid" 2>/dev/null
    wait "$exp_pid"
    bad "-i 200 export --listen 127.0.0.1:0 --demo did not start: $err" ;;
esac
# profile: its options before and after the word
for args in "--demo profile -f json -- true" "profile --demo -f json -- true" \
    "-f json --demo profile -- true"; do
    # shellcheck disable=SC2086
    out=$(MIGMON_SIM_TIME=100 timeout 20 "$MIGMON_BIN" $args 2>&1 </dev/null); rc=$?
    eq "$args: the command's status" "$rc" 0
    jeq "$args: the report, on the default scenario" "$out" '[.command, .devices[0].name]' \
        '[["true"],"NVIDIA H200"]'
done
# an option's value is taken first, also when it is a mode word (files
# named like the modes, in a directory of their own)
mw="$TMP/mode-words"
mkdir -p "$mw"
(cd "$mw" && MIGMON_SIM_TIME=100 timeout 20 "$MIGMON_BIN" --demo -o record record -n 1 </dev/null)
eq "-o record record -n 1: exit 0" "$?" 0
eq "-o record record: the file named record has the snapshot" \
    "$(jq -sc 'map(select(.type == null)) | [length, .[0].devices[0].name]' "$mw/record" 2>&1)" '[1,"NVIDIA H200"]'
(cd "$mw" && MIGMON_SIM_TIME=100 timeout 20 "$MIGMON_BIN" record --demo -n 1 -o export </dev/null)
eq "record -o export: exit 0, a recording" "$?" 0
[ -s "$mw/export" ] && ok || bad "record -o export: no file named export"
rm -f "$mw/record"
(cd "$mw" && MIGMON_SIM_TIME=100 timeout 20 "$MIGMON_BIN" -f json -o record --demo profile -- true 2>/dev/null)
eq "-o record profile -- true: the command's status" "$?" 0
jeq "-o record profile: the report in the file named record" "$(cat "$mw/record" 2>&1)" '.command' '["true"]'
rm -rf "$mw"
modes_refused "-o, --append, --force, --duration, -n, --trigger, --compress and --schema need the record mode (mig-gpu-mon record ...)" \
    -o record --demo
modes_refused "record: unexpected argument (see --help)" --demo -- record
modes_refused "record given twice (see --help)" record -n 1 --demo record
# after --, a mode word is the command's
out=$(MIGMON_SIM_TIME=100 timeout 20 "$MIGMON_BIN" --demo profile -- record 2>&1 </dev/null); rc=$?
eq "--demo profile -- record: record is the command (not found: 127)" "$rc" 127
contains "--demo profile -- record: the command named" "$out" "cannot run 'record': No such file or directory"
# the real conflicts, with options around the words: exit 2, one line
modes_refused "record and export exclude each other" --demo -n 1 record export
modes_refused "record and export exclude each other" -i 200 export -o modes.jsonl record
modes_refused "record and profile exclude each other" --demo record -n 1 -- profile true
modes_refused "export and profile exclude each other" -i 200 export --demo profile -- true
modes_refused "record and --once exclude each other" --demo record -n 1 --once
modes_refused "--listen needs export" --listen 127.0.0.1:0 --demo record -n 1
modes_refused "--compat needs export or --once --format prometheus" --demo record --compat dcgm -n 1
modes_refused "-o, --append, --force, --duration, -n, --trigger, --compress and --schema need the record mode (mig-gpu-mon record ...)" \
    --demo -o modes.jsonl export --listen 127.0.0.1:0
modes_refused "--timeline: unknown option (see --help)" --timeline t.jsonl --demo record
# profile's own parser says so, as "mig-gpu-mon profile: ..."
profile_refused() { # profile_refused MESSAGE ARGS...
    local want=$1 err rc
    shift
    err=$(cd "$TMP" && timeout 10 "$MIGMON_BIN" "$@" 2>&1 </dev/null); rc=$?
    eq "$*: exits 2" "$rc" 2
    eq "$*: one message" "$err" "mig-gpu-mon profile: $want"
}
profile_refused "--listen: unknown option (see profile --help)" --listen 127.0.0.1:0 --demo profile -- true
profile_refused "-n: unknown option (see profile --help)" -n 1 profile --demo -- true
profile_refused "stray: unexpected argument before profile (profile [OPTIONS] -- COMMAND [ARGS...])" \
    --demo -i 100 stray profile -- true
[ -e "$TMP/modes.jsonl" ] && bad "a refused command line created the output file" || ok
# replay, like the other modes: its options before and after the mode word
# (a recording of one snapshot, made above)
want=$("$MIGMON_BIN" replay "$TMP/epipe.jsonl" --once -f table 2>&1)
for args in "--once -f table replay epipe.jsonl" "-f table replay epipe.jsonl --once" \
    "--once replay -f table epipe.jsonl" "replay --once -- epipe.jsonl -f table"; do
    # shellcheck disable=SC2086
    got=$(cd "$TMP" && timeout 10 "$MIGMON_BIN" $args 2>&1 </dev/null)
    if [ "$args" = "replay --once -- epipe.jsonl -f table" ]; then
        # after --, words only: -f is a second file
        eq "$args: refused" "$got" \
            "mig-gpu-mon replay: -f: one recording at a time (see mig-gpu-mon replay --help)"
    else
        eq "$args: the snapshot as with every option after replay" "$got" "$want"
    fi
done
contains "--help replay: replay's help" "$("$MIGMON_BIN" --no-color --help replay)" \
    "usage: mig-gpu-mon replay FILE"
replay_refused() { # replay_refused MESSAGE ARGS...
    local want=$1 err rc
    shift
    err=$(cd "$TMP" && timeout 10 "$MIGMON_BIN" "$@" 2>&1 </dev/null); rc=$?
    eq "$*: exits 2" "$rc" 2
    eq "$*: one message" "$err" "$want"
}
replay_refused "mig-gpu-mon replay: stray: unexpected argument before replay (replay FILE [OPTIONS])" \
    --once stray replay epipe.jsonl
replay_refused "mig-gpu-mon replay: --demo: unknown option (see mig-gpu-mon replay --help)" \
    --demo replay epipe.jsonl --once
replay_refused "mig-gpu-mon replay: -o: unknown option (see mig-gpu-mon replay --help)" \
    -o x.jsonl replay epipe.jsonl --once
replay_refused "mig-gpu-mon: record and replay exclude each other" replay epipe.jsonl record
replay_refused "mig-gpu-mon: record and replay exclude each other" --demo record -n 1 replay
replay_refused "mig-gpu-mon: profile and replay exclude each other" --once replay epipe.jsonl profile

# --help's Usage names every mode, each on a line of its own
usage=$("$MIGMON_BIN" --help | sed -n '1,/^Monitor/p')
for m in "Usage: mig-gpu-mon [OPTIONS]" "       mig-gpu-mon --once " "       mig-gpu-mon record " \
    "       mig-gpu-mon export " "       mig-gpu-mon profile [PROFILE-OPTIONS] -- COMMAND [ARGS...]"; do
    contains "--help Usage: $m" "$usage" "$m"
done
contains "--help: where options go" "$("$MIGMON_BIN" --help)" "Options go before or after the mode word"

# A terminal without cursor addressing (TERM=dumb) is refused like an
# unknown one: one line, exit 2, nothing written to it, its modes as found.
if command -v script >/dev/null; then
    out=$(TERM=dumb script -qec "stty -g >'$TMP/stty.1'; timeout --foreground 10 '$MIGMON_BIN' --demo; echo \"rc=\$?\"; \
stty -g >'$TMP/stty.2'" /dev/null </dev/null | tr -d '\r')
    eq "TERM=dumb: one message, exit 2, nothing drawn" "$out" \
        "mig-gpu-mon: cannot use terminal type 'dumb' (it cannot move the cursor); set TERM (e.g. xterm-256color) or use --once
rc=2"
    eq "TERM=dumb: terminal modes unchanged" "$(cat "$TMP/stty.2" 2>&1)" "$(cat "$TMP/stty.1" 2>&1)"
    out=$(TERM=no-such-terminal script -qec "timeout --foreground 10 '$MIGMON_BIN' --demo; echo \"rc=\$?\"" /dev/null </dev/null | tr -d '\r')
    eq "unknown TERM: one message, exit 2" "$out" \
        "mig-gpu-mon: cannot use terminal type 'no-such-terminal'; set TERM (e.g. xterm-256color) or use --once
rc=2"
else
    echo "     (skipped the TERM=dumb check: no script(1))"
fi

# Demo mode's messages speak of the simulator, not of options not given.
mkdir -p "$TMP/junk/bin" "$TMP/junk/lib/mig-gpu-mon/sim/scenarios"
cp "$MIGMON_BIN" "$TMP/junk/bin/mig-gpu-mon"
cp "$MIGMON_SRC/sim/scenarios/h200-mig.ini" "$TMP/junk/lib/mig-gpu-mon/sim/scenarios/"
echo junk >"$TMP/junk/lib/mig-gpu-mon/sim/libnvidia-ml.so.1"
err=$("$TMP/junk/bin/mig-gpu-mon" --demo --once 2>&1 >/dev/null); rc=$?
eq "unloadable simulator exits 2" "$rc" 2
contains "unloadable simulator is named as such" "$err" "mig-gpu-mon: --demo: cannot load the bundled simulator: "
case "$err" in *--nvml-path*) bad "unloadable simulator: message names --nvml-path: $err" ;; *) ok ;; esac
rm -rf "$TMP/junk"
# A simulated machine without GPUs: said plainly, no advice to try --demo.
out=$(MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo=no-gpu --once 2>&1); rc=$?
eq "--demo=no-gpu exits 0" "$rc" 0
contains "--demo=no-gpu says there is no GPU" "$out" "gpu: no NVIDIA GPU found by the driver"
case "$out" in *--demo* | *--nvml-path*) bad "--demo=no-gpu gives advice: $out" ;; *) ok ;; esac
out=$(MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo=no-gpu --once --format json)
jeq "--demo=no-gpu JSON: no devices, no error" "$out" '[.devices, .gpu_error]' '[[],null]'

# the man page: clean under mandoc -Tlint, and every long option of the
# monitor and of profile is in it (hidden test-only ones aside)
if command -v mandoc >/dev/null; then
    out=$(mandoc -Tlint "$MIGMON_SRC/man/mig-gpu-mon.1" 2>&1)
    eq "man page: mandoc -Tlint is clean" "$out" ""
else
    bad "man page: mandoc is required (scripts/deps.sh installs it)"
fi
man_src=$(cat "$MIGMON_SRC/man/mig-gpu-mon.1")
missing=""
for o in $(sed -n 's/^ *{"\([a-z-]*\)", \(no\|required\|optional\)_argument.*/\1/p' \
    "$MIGMON_SRC/src/app/cli.c" "$MIGMON_SRC/src/app/profile.c" | sort -u); do
    esc=$(printf '%s' "$o" | sed 's/-/\\-/g')
    case "$man_src" in *"\\-\\-$esc"*) ;; *) missing="$missing --$o" ;; esac
done
eq "man page: every long option is documented" "$missing" ""

# man_section NAME: that section's source, "\-" read as "-"
man_section() {
    awk -v s=".SH $1" '$0 == s { on = 1; next } /^\.SH / { on = 0 } on' "$MIGMON_SRC/man/mig-gpu-mon.1" |
        sed 's/\\-/-/g'
}
# man_bold NAME [tags]: the bold words of a section, one a line: ".B x",
# the unquoted arguments of ".BR a ", " b", and \fBx\fR; with "tags", only
# those of the entries' tags (the line after .TP)
man_bold() {
    man_section "$1" | awk -v tags="${2:-}" '
        tags != "" { if (prev != ".TP") { prev = $0; next } prev = $0 }
        /^\.B / { sub(/^\.B /, ""); print; next }
        /^\.BR / { sub(/^\.BR /, ""); gsub(/"[^"]*"/, " "); n = split($0, w, " "); for (i = 1; i <= n; i++) print w[i] }
        { while (match($0, /\\fB[^\\]*\\f[RP]/)) { print substr($0, RSTART + 3, RLENGTH - 6); $0 = substr($0, RSTART + RLENGTH) } }'
}

# Every key the interactive monitor handles (tui.c: filter_key and
# handle_key) is in KEYS, by its name there
keys_bold=$(man_bold KEYS)
keys_text=$(man_section KEYS)
key_name() {
    case "$1" in
    "'\\n'" | "'\\r'" | KEY_ENTER) echo Enter ;;
    "'\\t'") echo Tab ;;
    "' '") echo space ;;
    27) echo Esc ;;
    3) echo Ctrl-C ;;
    8 | 127 | KEY_BACKSPACE) echo Backspace ;;
    KEY_DOWN) echo Down ;; KEY_UP) echo Up ;; KEY_LEFT) echo Left ;; KEY_RIGHT) echo Right ;;
    KEY_NPAGE) echo PgDn ;; KEY_PPAGE) echo PgUp ;; KEY_HOME) echo Home ;; KEY_END) echo End ;;
    KEY_BTAB) echo Shift-Tab ;;
    KEY_MOUSE) echo mouse ;;
    KEY_RESIZE) ;; # not a key
    "'"?"'") printf '%s\n' "${1:1:1}" ;;
    *) echo "UNNAMED:$1" ;; # a key this test has no man page name for: add one
    esac
}
handled=$(sed -n '/^static void filter_key(/,/^}/p; /^static bool handle_key(/,/^}/p' "$MIGMON_SRC/src/tui/tui.c" |
    grep -oE "(case |key == )('[^']+'|[A-Z_]+|[0-9]+)" | sed -E 's/^(case |key == )//' | sort -u)
[ "$(printf '%s\n' "$handled" | wc -l)" -gt 30 ] && ok || bad "man page: found too few keys in tui.c: $handled"
missing=""
while IFS= read -r k; do
    name=$(key_name "$k")
    [ -z "$name" ] && continue
    if [ "$name" = mouse ]; then
        case "$keys_text" in *"mouse click"*) continue ;; esac
    else
        # a whole line of keys_bold, matched without a pipe (under pipefail a
        # loaded machine once made the printf | grep -q form fail here)
        case $'\n'"$keys_bold"$'\n' in *$'\n'"$name"$'\n'*) continue ;; esac
    fi
    missing="$missing $name"
done <<<"$handled"
eq "man page: every key handled in tui.c is in KEYS" "$missing" ""
# the digits: handled as a range
contains "man page: the digit keys" "$keys_text" '\fB0\fR to \fB9\fR'

# Every environment variable the program reads (getenv in src/, the
# *_VISIBLE_DEVICES that watch.c reads through a list, the locale
# variables setlocale reads), but the test hooks MIGMON_TEST_*, is in
# ENVIRONMENT
vars=$({
    grep -rhoE '(getenv|env_ulong)\("[A-Z_]+"' "$MIGMON_SRC/src" | sed -E 's/.*\("//; s/"$//'
    grep -rhoE '"[A-Z]+_VISIBLE_DEVICES"' "$MIGMON_SRC/src" | tr -d '"'
    grep -rqF 'setlocale(LC_ALL, "")' "$MIGMON_SRC/src" && printf '%s\n' LC_ALL LC_CTYPE LANG
    grep -rqF 'setenv("MIGMON_SIM_SCENARIO"' "$MIGMON_SRC/src" && echo MIGMON_SIM_SCENARIO
} | grep -v '^MIGMON_TEST_' | sort -u)
[ "$(printf '%s\n' "$vars" | wc -l)" -ge 12 ] && ok || bad "man page: found too few variables in src/: $vars"
env_bold=$(man_bold ENVIRONMENT tags)
missing=""
for v in $vars; do
    grep -qxF -- "$v" <<<"$env_bold" || missing="$missing $v"
done
eq "man page: every environment variable read is in ENVIRONMENT" "$missing" ""
# what the installed files are (make install) is in FILES
files=$(man_section FILES)
for f in share/bash-completion/completions/mig-gpu-mon share/zsh/site-functions/_mig-gpu-mon \
    lib/libmigmon.so.0 include/migmon.h lib/pkgconfig/migmon.pc lib/mig-gpu-mon/sim/ \
    mig-gpu-mon/config.ini mig-gpu-mon/debug.log; do
    contains "man page: FILES names $f" "$files" "$f"
done
for f in $(sed -n 's/.*\$(DESTDIR)\$(PREFIX)\/\([a-z/_-]*migmon[a-z0-9._]*\).*/\1/p; s/.*\$(DESTDIR)\$(PREFIX)\/\(share\/[a-z/_-]*\/_\{0,1\}mig-gpu-mon\)$/\1/p' \
    "$MIGMON_SRC/Makefile" | sort -u); do
    contains "man page: FILES names the installed $f" "$files" "$f"
done
opts=$(man_section OPTIONS)
for o in --config --no-config --write-config; do
    # a here-string: grep -q leaving early must not fail a writer under pipefail
    grep -qE "^\.B[I]? $o( |$)" <<<"$opts" && ok || bad "man page: no OPTIONS entry of its own for $o"
done
contains "man page: -i is refused with --once" "$(printf '%s\n' "$opts" | grep -A3 '^.BR -i')" "Refused
with \\fB--once\\fR"
# the carry window is configurable: every "3 samples" says "by default"
for f in man/mig-gpu-mon.1 docs/metrics.md; do
    txt=$(tr '\n' ' ' <"$MIGMON_SRC/$f")
    all=$(printf '%s' "$txt" | grep -o '3 samples' | wc -l)
    dflt=$(printf '%s' "$txt" | grep -o '3 samples by default' | wc -l)
    [ "$all" -gt 0 ] && [ "$all" -eq "$dflt" ] && ok ||
        bad "$f: the carry window said to be 3 samples ($all), not 3 by default ($dflt)"
done

# The table fits the output: 80 columns when stdout is not a terminal and
# COLUMNS is unset, COLUMNS otherwise, never less than 80. Every bundled
# scenario; the hang-* ones print a partial snapshot after --timeout (exit 3).
# Widths in characters (wc -L in a UTF-8 locale: "é" is one column).
widest() { LC_ALL=C.UTF-8 wc -L; }
for f in "$MIGMON_SRC"/sim/scenarios/*.ini; do
    sc=$(basename "$f" .ini)
    want=0
    case "$sc" in hang-*) want=3 ;; esac
    for cols in unset 100 60; do
        [ "$cols" = 60 ] && case "$sc" in h200-mig | dgx-a100-8x7 | mig-unattributed | hostile) ;; *) continue ;; esac
        if [ "$cols" = unset ]; then
            out=$(env -u COLUMNS MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo="$sc" --once --timeout 2 2>/dev/null); rc=$?
            limit=80
        else
            out=$(COLUMNS=$cols MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo="$sc" --once --timeout 2 2>/dev/null); rc=$?
            limit=$((cols < 80 ? 80 : cols))
        fi
        eq "table: $sc, COLUMNS=$cols: exit status" "$rc" "$want"
        w=$(printf '%s\n' "$out" | widest)
        [ "$w" -le "$limit" ] && ok || bad "table: $sc, COLUMNS=$cols: a line of $w columns (limit $limit):
$(printf '%s\n' "$out" | LC_ALL=C.UTF-8 awk -v l="$limit" 'length($0) > l' | head -3)"
        case "$sc:$cols" in h200-mig:*) eq "table: h200-mig, COLUMNS=$cols: as wide as allowed" "$w" "$limit" ;; esac
    done
done
out=$(env -u COLUMNS "$MIGMON_BIN" --demo=h200-mig --once)
contains "table, 80 columns: a MIG row keeps its GI and CI" "$out" "3g.71gb GI1 CI0"
out=$(COLUMNS=120 "$MIGMON_BIN" --demo=h200-mig --once)
contains "table, 120 columns: the full name" "$out" "NVIDIA H200"
# below 80 the table is the 80-column one (the man page says so)
eq "table: COLUMNS=60 is the 80-column table" \
    "$(COLUMNS=60 MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo=h200-mig --once | sed -n '4p')" \
    "$(env -u COLUMNS MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo=h200-mig --once | sed -n '4p')"

# How it fits: a long note wraps at a word with an indent, a process row
# gives its command what is left, the unattributed mark becomes "?" after the
# type below 100 columns, an over-long driver string or name is cut and marked
# the process directories come from a fixture that has none: a real process
# with the simulated PID on this machine must not lend the row its name
noprocs="$MIGMON_SRC/tests/fixtures/proc/two-core"
out=$(env -u COLUMNS MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo=mig-unattributed --once \
    --proc-root "$noprocs")
eq "table, 80: a long note wraps with an indent" \
    "$(printf '%s\n' "$out" | grep -A1 '^0/1    processes N/A')" \
    "0/1    processes N/A (the MIG device's GPU instance id is unknown, so the
         parent's list cannot be split; see the parent's unattributed processes)"
eq "table, 80: an unattributed process row fits, marked C?" \
    "$(printf '%s\n' "$out" | grep '^0  *4187 ')" \
    "0          4187 C?      9000MiB   N/A    N/A    N/A N/A        N/A (not visib..."
contains "table, 80: the ? after a type is explained" "$out" \
    "? after TYPE = on a MIG GPU, not attributed to one of its instances"
out=$(COLUMNS=100 MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo=mig-unattributed --once --proc-root "$noprocs")
contains "table, 100: unattributed said in words" "$out" \
    "0          4187 C       9000MiB   N/A    N/A    N/A N/A        (unattributed) N/A (not visible fr..."
case "$out" in *"C? "* | *"? after TYPE"*) bad "table, 100: the narrow mark used at 100 columns" ;; *) ok ;; esac
out=$(env -u COLUMNS MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo=hostile --once)
eq "table, 80: a long driver version is cut, marked" "$(printf '%s\n' "$out" | sed -n 2p)" \
    "driver 550.144.03?[2J?]0;pwned?...  CUDA 12.4  NVML 12.550.144.03"
contains "table, 80: a long device name is cut, marked" "$out" "0      ?[2J?]0;title?A10...   N/A"
# a big host's line breaks between its groups; an unknown CPU count is N/A
out=$(env -u COLUMNS MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo=a100-sxm4-80gb --once \
    --proc-root "$MIGMON_SRC/tests/fixtures/proc/huge-swap")
eq "table, 80: the host line breaks between groups" "$(printf '%s\n' "$out" | sed -n 3,4p | sed 's/^host [^ ]* /host H /')" \
    "host H  cpus N/A  cpu N/A  ram 226.3/1007.5G  swap 64.0/256.0G
     load 96.04 88.51 80.17"

# The process list: its header names what each column is; a device whose
# list could not be read is N/A with the reason, and then "no GPU
# processes" would be false
out=$(MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo=inaccessible-gpu --once)
contains "table: the process header" "$out" \
    "ID          PID TYPE        VRAM  SM% MemBW%   CPU% USER       COMMAND"
case "$out" in *MEM%* | *" BW%"*) bad "table: the process header says MEM% or BW%" ;; *) ok ;; esac
eq "table: no power figure at all is one N/A" "$(printf '%s\n' "$out" | grep '^1  *(unknown)')" \
    "1      (unknown)                          N/A   N/A   N/A                      N/A   N/A         N/A"
case "$out" in *N/A/N/A*) bad "table: N/A/N/A printed" ;; *) ok ;; esac
contains "table: an unreadable process list says why" "$out" "1      processes N/A (NVML_ERROR_NO_PERMISSION)"
case "$out" in *"no GPU processes"*) bad "table: 'no GPU processes' beside a list that is N/A" ;; *) ok ;; esac
contains "table: the readable devices have none" "$out" "none on the other devices"
# Memory-controller activity is MemBW (not VRAM use: that is the VRAM
# column), one name for it everywhere (docs/metrics.md); the process shares
# are percentages and say so; NVLink TX/RX is one pair in one unit, not
# "146 GB/s/118 GB/s". a100: processes 31337 (SM 38, MemBW 21) and 31402
# (3, 1); h100-sxm at 100 s: NVLink TX 146, RX 118 GB/s.
out=$(env -u COLUMNS MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo=a100-sxm4-80gb --once)
contains "table: the device header says MemBW" "$out" \
    "ID     DEVICE                 GPU MemBW    SM    VRAM USED/TOTAL  TEMP     POWER"
contains "table: a process's SM% and MemBW% with their % sign" "$out" \
    "0         31337 C      52120MiB   38%    21%    N/A "
contains "table: ... one-digit shares too" "$out" "0         31402 C       2300MiB    3%     1%    N/A "
case "$out" in *" MEM "*) bad "table: a MEM column" ;; *) ok ;; esac
out=$(env -u COLUMNS MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo=h100-sxm --once)
eq "table: NVLink TX/RX in one unit" "$(printf '%s\n' "$out" | grep -A1 'NVLINK TX/RX' | sed -n 2p)" \
    "0        61%    55%   50%   N/A    2%   N/A   14%   20%    9%       146/118 GB/s"
case "$out" in *"GB/s/"* | *"B/s/"*) bad "table: a rate followed by /" ;; *) ok ;; esac
out=$(env -u COLUMNS MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo=h200-mig --once)
eq "table: NVLink at 0 on both sides, one unit" "$(printf '%s\n' "$out" | grep -A1 'NVLINK TX/RX' | sed -n 2p)" \
    "0        26%    22%   21%    0%    0%    0%    4%    5%    4%           0/0 kB/s"
contains "table: the GPM key names MemBW" "$out" "GPU/MemBW/SM of MIG-mode devices come from GPM"
out=$(MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo=h100-sxm --once --top 1)
case "$out" in *"no GPU processes"* | *"none on the other"*) bad "table: a list with processes said empty" ;; *) ok ;; esac
out=$(MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo=process-churn --once --top 2)
contains "table: the processes left out by --top are counted, in ASCII" "$out" "
0      ... 4 more (--top)
"
