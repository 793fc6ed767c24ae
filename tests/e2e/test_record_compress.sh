# shellcheck shell=bash
# Compressed recordings (docs/record.md, "Compressed recordings"): the
# compression by the file's name or --compress, refused names, schema 2's
# lines as zstdcat | jq shows them, a DGX A100's day within 100 MB, the
# seek index after each frame, CSV compressed, and what survives: SIGKILL
# (everything up to about a second before it), a full disk (the frame
# ended by hand: zstd -t and gzip -t take the file whole), --append onto a
# file a killed recorder left, rotation; profile --timeline compressed the
# same way.

crec() {
    local scen=$1
    shift
    MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/$scen" MIGMON_SIM_TIME=${SIM_TIME:-100} \
        "$MIGMON_BIN" record --nvml-path "$MIGMON_SIM_LIB" "$@" </dev/null
}
crec_bg() {
    exec env MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/$1" MIGMON_SIM_TIME=0+1 \
        "$MIGMON_BIN" record --nvml-path "$MIGMON_SIM_LIB" "${@:2}" </dev/null
}
# nsnap FILE: the snapshots replay reads in it
nsnap() { "$MIGMON_BIN" replay "$1" --print 2>/dev/null | wc -l; }
C=$TMP/compress
mkdir -p "$C"

# --- by the name: zstd, gzip; the lines inside ------------------------------
crec h200-mig.ini -o "$C/a.jsonl.zst" -n 4 -i 100 --gpm off --dcgm off; rc=$?
eq "zstd: exit 0" "$rc" 0
eq "zstd: a zstd file, whole (zstd -t)" "$(zstd -tq "$C/a.jsonl.zst" 2>&1; echo $?)" 0
eq "zstd: its magic" "$(head -c 4 "$C/a.jsonl.zst" | od -An -tx1 | tr -d ' ')" 28b52ffd
zstdcat -q "$C/a.jsonl.zst" | grep -v '^{"type":' >"$C/a.lines"
eq "zstd: 4 snapshot lines, each JSON (jq reads them)" "$(jq -c .schema "$C/a.lines" | sort | uniq -c | awk '{print $1 ":" $2}')" "4:2"
eq "zstd: schema 2: a full line first, then delta lines" "$(jq -c '[.delta, (.devices | length > 0 and (.[0].kind? // "x") != "x")]' "$C/a.lines" | head -1):$(jq -c .delta "$C/a.lines" | sort | uniq -c | awk '{print $1 $2}' | tr '\n' ' ')" \
    "[null,true]:1null 3true "
jeq "zstd: a delta line holds its times and what changed, readable" "$(sed -n 2p "$C/a.lines")" \
    '[.schema, .delta, (.elapsed_ns | type), (.timestamp | test("Z$")), (has("generator"))]' '[2,true,"number",true,false]'
eq "zstd: the file ends with its seek index entry (a skippable frame)" \
    "$(tail -c 96 "$C/a.jsonl.zst" | head -c 8 | od -An -tx1 | tr -d ' ')" 5b2a4d1858000000
eq "zstd: replay reads the 4 snapshots" "$(nsnap "$C/a.jsonl.zst")" 4

crec h200-mig.ini -o "$C/a.jsonl.gz" -n 3 -i 100 --gpm off --dcgm off; rc=$?
eq "gzip: exit 0, gzip -t" "$rc:$(gzip -tq "$C/a.jsonl.gz" 2>&1; echo $?)" "0:0"
eq "gzip: schema 2, one full line" "$(zcat "$C/a.jsonl.gz" | grep -v '^{"type":' | jq -c .delta | tr '\n' ' ')" "null true true "
eq "gzip: replay reads the 3" "$(nsnap "$C/a.jsonl.gz")" 3

crec h200-mig.ini -o "$C/a.csv.gz" -f csv -n 3 -i 100 --gpm off --dcgm off
ndev=$(mon h200-mig.ini --once -f json --gpm off --dcgm off | jq '.devices | length')
eq "csv.gz: the header once, a row per device per snapshot" \
    "$(zcat "$C/a.csv.gz" | head -1 | cut -d, -f1-3):$(zcat "$C/a.csv.gz" | grep -c '^timestamp,'):$(($(zcat "$C/a.csv.gz" | wc -l) - 1))" \
    "timestamp,elapsed_ns,kind:1:$((3 * ndev))"

# --compress for standard output and other names; --schema
crec h200-mig.ini --compress zstd -n 2 -i 100 --gpm off --dcgm off | zstd -dcq >"$C/stdout.lines"
eq "--compress zstd to a pipe: the lines" "$(grep -vc '^{"type":' "$C/stdout.lines")" 2
# standard output redirected to a file with > (no O_APPEND): the frame
# closed after each flush is taken off and written over at its place, not
# after a hole (a few flushes: 2.5 s at -i 100)
SIM_TIME=0+1 crec h200-mig.ini --compress zstd -n 25 -i 100 --gpm off --dcgm off >"$C/redirect.zst"
eq "--compress zstd > FILE: whole for zstd -t, 25 snapshots" \
    "$(zstd -tq "$C/redirect.zst" 2>&1; echo $?):$(nsnap "$C/redirect.zst")" "0:25"
crec h200-mig.ini -o "$C/s1.jsonl.zst" --schema 1 -n 2 -i 100 --gpm off --dcgm off
eq "--schema 1 compressed: every line in full" "$(zstdcat -q "$C/s1.jsonl.zst" | grep -v '^{"type":' | jq -c '[.schema, .delta]' | sort -u)" "[1,null]"
crec h200-mig.ini -o "$C/s2.jsonl" --schema 2 -n 3 -i 100 --gpm off --dcgm off
eq "--schema 2 plain: a full line, then deltas" "$(grep -v '^{"type":' "$C/s2.jsonl" | jq -c .delta | tr '\n' ' ')" "null true true "
eq "--schema 2 plain: replay reads it" "$(nsnap "$C/s2.jsonl")" 3
crec h200-mig.ini -o "$C/p.jsonl" -n 2 -i 100 --gpm off --dcgm off
eq "plain by default: schema 1, every line in full" "$(grep -v '^{"type":' "$C/p.jsonl" | jq -c '[.schema, .delta]' | sort -u)" "[1,null]"

# --- a day's size: a DGX A100 with its DCGM (dgx-a100-8x7: 64 devices, DCGM's
# values), one simulated second a snapshot, DCGM watched at each (as at
# -i 1000: at -i 100 DCGM's own 1 s would carry its values over ten
# snapshots); the recorder's snapshots written again a second apart as at
# -i 1000 (rec_synth: the recorder's writer, so frames of a minute, each
# beginning with a full snapshot): at most 1,160 bytes a snapshot, so at
# most 100 MB a day (bench/README.md, "bench_record", for the figures)
SIM_TIME=0+1 crec dgx-a100-8x7.ini -o "$C/dgx.jsonl" -n 120 -i 100 --dcgm-interval 100 \
    --dcgm-lib "$MIGMON_SIM_DIR/libdcgm.so.4" 2>"$C/dgx.err"
"$MIGMON_REC_SYNTH" "$C/dgx.jsonl" "$C/dgx.jsonl.zst" 120 1
eq "a day's size: 120 snapshots in 2 frames, each with its index entry" \
    "$(nsnap "$C/dgx.jsonl.zst"):$(grep -ao 'MGMIDX1' "$C/dgx.jsonl.zst" | wc -l)" "120:2"
eq "a day's size: DCGM's values are recorded (640 in the last snapshot)" \
    "$("$MIGMON_BIN" replay "$C/dgx.jsonl.zst" --print 2>/dev/null | tail -1 |
        jq '[.devices[].metrics[] | select(.source == "dcgm")] | length')" 640
svals() { "$MIGMON_BIN" replay "$1" --print 2>/dev/null | jq -cS 'del(.schema, .elapsed_ns, .timestamp)' | md5sum; }
eq "a day's size: the values are the plain recording's" "$(svals "$C/dgx.jsonl.zst")" "$(svals "$C/dgx.jsonl")"
n=$(jq -r 'select(.devices) | .devices[1].metrics.sm_occupancy_pct.value' "$C/dgx.jsonl" | tail -20 | uniq | wc -l)
[ "$n" -ge 15 ] && ok || bad "a day's size: DCGM's values moved $n times in the last 20 snapshots (at least 15 expected)"
b=$(wc -c <"$C/dgx.jsonl.zst")
[ $((b / 120)) -le 1160 ] && ok || bad "a day's size: $((b / 120)) bytes a snapshot (at most 1,160 expected)"
[ $((b * 86400 / 120)) -le 100000000 ] && ok || bad "a day's size: $((b * 86400 / 120)) bytes a day (at most 100 MB expected)"

# --- names and combinations refused before anything is written -------------
for args in "-o $C/x.jsonl.xz|-o $C/x.jsonl.xz: .xz compression is not written; name the file .zst (zstd) or .gz (gzip), or without .xz for plain text" \
    "-o $C/x.jsonl.zst --compress gzip|--compress gzip: -o $C/x.jsonl.zst names zstd" \
    "-o $C/x.gz --compress none|--compress none: -o $C/x.gz names gzip" \
    "-o $C/x.gz -f influx|--format influx is written plain (Telegraf's inputs.execd reads its lines): without a .gz or .zst name" \
    "--compress lz4|--compress lz4: expected zstd, gzip or none" \
    "-f csv --schema 2 -o $C/x.csv|--schema goes with --format jsonl"; do
    a=${args%%|*}
    # shellcheck disable=SC2086
    err=$(crec h200-mig.ini $a -n 1 2>&1 >/dev/null); rc=$?
    eq "refused: $a: exit 2" "$rc" 2
    eq "refused: $a: said" "$err" "mig-gpu-mon: ${args#*|}"
done
eq "refused: nothing was created" "$(ls "$C" | grep -c '^x\.')" 0
# compressed bytes are not written to a terminal
out=$(script -qec "env MIGMON_SIM_SCENARIO=$MIGMON_SRC/sim/scenarios/h200-mig.ini $MIGMON_BIN record --nvml-path $MIGMON_SIM_LIB --compress zstd -n 1; echo rc=\$?" /dev/null </dev/null)
contains "a terminal: refused" "$out" "standard output is a terminal: a zstd recording is written to a file or a pipe"
contains "a terminal: exit 2" "$out" "rc=2"

# --- SIGKILL: everything up to about a second before it reads --------------
# (-i 100: what was put is flushed within a second; the frame left open
# reads up to its last whole block)
crec_bg h200-mig.ini -o "$C/k.jsonl.zst" -i 100 --gpm off --dcgm off &
pid=$!
sleep 4
killed=$(date +%s%N)
{ kill -KILL "$pid" && wait "$pid"; } 2>/dev/null
n=$(nsnap "$C/k.jsonl.zst")
last=$("$MIGMON_BIN" replay "$C/k.jsonl.zst" --once --at -0 2>/dev/null | jq -r .timestamp)
age=$(((killed / 1000000 - $(date -d "$last" +%s%3N))))
[ "$age" -le 2000 ] && ok || bad "SIGKILL zstd: the last snapshot read is $age ms before the kill (at most 2000 expected)"
eq "SIGKILL zstd: the file is whole for zstd -t as the kill left it" "$(zstd -tq "$C/k.jsonl.zst" 2>&1; echo $?)" 0
[ "$n" -ge 20 ] && ok || bad "SIGKILL zstd: only $n snapshots read from 4 s at -i 100"
eq "SIGKILL zstd: every line zstdcat gives is whole JSON" \
    "$(zstdcat -q "$C/k.jsonl.zst" 2>/dev/null | jq -c .schema 2>&1 | grep -cvE '^(2|null)$')" 0
# --append onto it: the open frame is closed first, so every zstd reader
# takes the file whole, and the snapshots are the ones before and 2 more
crec h200-mig.ini -o "$C/k.jsonl.zst" --append -n 2 -i 100 --gpm off --dcgm off; rc=$?
eq "append after SIGKILL: exit 0, zstd -t" "$rc:$(zstd -tq "$C/k.jsonl.zst" 2>&1; echo $?)" "0:0"
eq "append after SIGKILL: the snapshots before and 2" "$(nsnap "$C/k.jsonl.zst")" $((n + 2))
# the same with gzip: the member closed with its trailer
crec_bg h200-mig.ini -o "$C/k.jsonl.gz" -i 100 --gpm off --dcgm off &
pid=$!
sleep 3
killed=$(date +%s%N)
{ kill -KILL "$pid" && wait "$pid"; } 2>/dev/null
n=$(nsnap "$C/k.jsonl.gz")
[ "$n" -ge 10 ] && ok || bad "SIGKILL gzip: only $n snapshots read from 3 s at -i 100"
last=$("$MIGMON_BIN" replay "$C/k.jsonl.gz" --once --at -0 2>/dev/null | jq -r .timestamp)
age=$(((killed / 1000000 - $(date -d "$last" +%s%3N))))
[ "$age" -le 2000 ] && ok || bad "SIGKILL gzip: the last snapshot read is $age ms before the kill (at most 2000 expected)"
eq "SIGKILL gzip: the file is whole for gzip -t as the kill left it" "$(gzip -tq "$C/k.jsonl.gz" 2>&1; echo $?)" 0
crec h200-mig.ini -o "$C/k.jsonl.gz" --append -n 2 -i 100 --gpm off --dcgm off
eq "gzip append after SIGKILL: gzip -t, the snapshots before and 2" \
    "$(gzip -tq "$C/k.jsonl.gz" 2>&1; echo $?):$(nsnap "$C/k.jsonl.gz")" "0:$((n + 2))"
# a plain --append onto a whole recording continues its index
crec h200-mig.ini -o "$C/a.jsonl.zst" --append -n 2 -i 100 --gpm off --dcgm off
eq "append: zstd -t, 4 + 2 snapshots" "$(zstd -tq "$C/a.jsonl.zst" 2>&1; echo $?):$(nsnap "$C/a.jsonl.zst")" "0:6"

# --- a full disk: the file ends with a whole block, and its frame is ended
# there by hand: zstd -t and gzip -t take it whole -------------------------
mkdir -p "$C/full"
if mount -t tmpfs -o size=16k migmon-test "$C/full" 2>/dev/null; then
    for f in jsonl.zst jsonl.gz; do
        # (a simulated second a tick: values that change, deltas that fill it)
        err=$(SIM_TIME=0+1 crec dgx-a100-8x7.ini -o "$C/full/r.$f" -i 100 --gpm off --duration 30 2>&1); rc=$?
        eq "ENOSPC $f: status 1" "$rc" 1
        contains "ENOSPC $f: the reason" "$err" "No space left on device"
        case $f in
        *.zst) t=$(zstd -tq "$C/full/r.$f" 2>&1; echo $?) ;;
        *) t=$(gzip -tq "$C/full/r.$f" 2>&1; echo $?) ;;
        esac
        eq "ENOSPC $f: the file is whole for its decompressor" "$t" 0
        n=$(nsnap "$C/full/r.$f")
        [ "$n" -ge 1 ] && ok || bad "ENOSPC $f: no snapshot reads"
        eq "ENOSPC $f: every snapshot whole (64 devices)" \
            "$("$MIGMON_BIN" replay "$C/full/r.$f" --print 2>/dev/null | jq -c '.devices | length' | sort -u)" 64
        rm -f "$C/full/r.$f"
    done
    umount "$C/full"
else
    bad "ENOSPC: cannot mount a tmpfs (the tests run as root)"
fi

# --- rotation: the file renamed while recording: both whole ----------------
crec_bg h200-mig.ini -o "$C/rot.jsonl.zst" -i 100 --gpm off --dcgm off 2>"$C/rot.err" &
pid=$!
sleep 1.5
mv "$C/rot.jsonl.zst" "$C/rot.jsonl.zst.1"
sleep 1.5
kill -TERM "$pid"
wait "$pid"
eq "rotation: both files whole (zstd -t)" \
    "$(zstd -tq "$C/rot.jsonl.zst.1" 2>&1; echo $?):$(zstd -tq "$C/rot.jsonl.zst" 2>&1; echo $?)" "0:0"
n1=$(nsnap "$C/rot.jsonl.zst.1")
n2=$(nsnap "$C/rot.jsonl.zst")
[ "$n1" -ge 3 ] && [ "$n2" -ge 3 ] && ok || bad "rotation: $n1 and $n2 snapshots"
eq "rotation: the new file begins with a full line" "$(zstdcat -q "$C/rot.jsonl.zst" | head -1 | jq -c '[.schema, .delta]')" "[2,null]"

# --- profile --timeline: compressed by its name too ---------------------------
MIGMON_SIM_TIME=0+1 "$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" -i 100 \
    --timeline "$C/tl.jsonl.zst" -o /dev/null -- sleep 1.5 </dev/null 2>/dev/null; rc=$?
eq "profile --timeline FILE.zst: exit 0, zstd -t" "$rc:$(zstd -tq "$C/tl.jsonl.zst" 2>&1; echo $?)" "0:0"
n=$(zstdcat -q "$C/tl.jsonl.zst" | jq -c .schema | sort -u)
eq "profile --timeline FILE.zst: full lines (schema 1)" "$n" 1
eq "profile --timeline FILE.zst: replay reads them all" "$(nsnap "$C/tl.jsonl.zst")" \
    "$(zstdcat -q "$C/tl.jsonl.zst" | wc -l)"
err=$("$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" --timeline "$C/tl.jsonl.bz2" -- true 2>&1 </dev/null); rc=$?
eq "profile --timeline FILE.bz2: exit 2" "$rc" 2
eq "profile --timeline FILE.bz2: said" "$err" \
    "mig-gpu-mon profile: --timeline $C/tl.jsonl.bz2: .bz2 compression is not written; name the file .zst (zstd) or .gz (gzip), or without .bz2 for plain text"
[ -e "$C/tl.jsonl.bz2" ] && bad "profile --timeline FILE.bz2: the file was created" || ok
