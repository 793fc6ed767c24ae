# shellcheck shell=bash
# Compressed recordings read back (docs/replay.md): value for value the
# same as a plain recording of the same simulated run, schema 1 and 2 as the
# documentation says to read them (tests/e2e/rec_expand.py), older files
# (plain and gzip of schema 1), --at through the seek index of a long file,
# and bad input: a damaged frame in the middle (skipped, counted, said), a
# cut file, compression bombs (refused, in little memory), a file still
# being written (read up to its last whole block).

RZ=$TMP/replay-compress
mkdir -p "$RZ"
PROC_FIX="$MIGMON_SRC/tests/fixtures/proc/gpu-host"
# zrec SCENARIO OUT N [ARGS...]: one simulated second a tick from t = 56,
# the host from a fixed /proc: two recordings of it hold the same values
zrec() {
    local scen=$1 out=$2 n=$3
    shift 3
    MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/$scen" MIGMON_SIM_TIME=56+1 \
        "$MIGMON_BIN" record --nvml-path "$MIGMON_SIM_LIB" -o "$out" --force -n "$n" -i 100 \
        --gpm off --dcgm off --proc-root "$PROC_FIX" "$@" </dev/null
}
# values FILE: every snapshot replay reads, without what differs between
# two runs by nature (the clocks, the generator)
values() {
    "$MIGMON_BIN" replay "$1" --print 2>/dev/null | jq -cS 'del(.generator, .elapsed_ns, .timestamp)'
}
rp() { "$MIGMON_BIN" replay "$@"; }

# --- the same run, plain and compressed: value for value --------------------
# (mig-reconfig: the MIG layout changes at t = 60 and 70, so schema 2 has
# full lines in the middle; its failing process lists too)
zrec mig-reconfig.ini "$RZ/m.jsonl" 20
zrec mig-reconfig.ini "$RZ/m.jsonl.zst" 20
zrec mig-reconfig.ini "$RZ/m.jsonl.gz" 20
eq "round trip: 20 snapshots plain" "$(values "$RZ/m.jsonl" | wc -l)" 20
eq "round trip: the layout changes within the run (full lines between deltas)" \
    "$(zstdcat -q "$RZ/m.jsonl.zst" | grep -v '^{"type":' | jq -c '.delta // false' | sort | uniq -c | awk '{print $2}' | tr '\n' ' ')" \
    "false true "
# (the events helper starts beside the first ticks: how many of the first
# snapshots still wait for it depends on the machine's load, so the three
# are compared after the last snapshot of any of them that waits)
skip=$(for f in m.jsonl m.jsonl.zst m.jsonl.gz; do
    values "$RZ/$f" | grep -n 'waiting for the events helper' | tail -1 | cut -d: -f1
done | sort -n | tail -1)
same() { tail -n +$((${skip:-0} + 1)); }
[ "${skip:-0}" -le 5 ] && ok || bad "round trip: the events helper waited for $skip snapshots"
eq "round trip: zstd of schema 2 gives the plain recording's values" \
    "$(values "$RZ/m.jsonl.zst" | same | md5sum)" "$(values "$RZ/m.jsonl" | same | md5sum)"
eq "round trip: gzip of schema 2 too" "$(values "$RZ/m.jsonl.gz" | same | md5sum)" \
    "$(values "$RZ/m.jsonl" | same | md5sum)"
eq "round trip: and the plain lines themselves" \
    "$(grep -v '^{"type":' "$RZ/m.jsonl" | jq -cS 'del(.generator, .elapsed_ns, .timestamp)' | md5sum)" \
    "$(values "$RZ/m.jsonl" | md5sum)"
# the documented rules, applied by another program, give what replay gives
eq "schema 2 read by its documentation (rec_expand.py) as replay reads it" \
    "$(zstdcat -q "$RZ/m.jsonl.zst" | python3 "$MIGMON_SRC/tests/e2e/rec_expand.py" | jq -cS 'del(.generator) | .schema = 1' | md5sum)" \
    "$(rp "$RZ/m.jsonl.zst" --print | jq -cS 'del(.generator)' | md5sum)"
# --print -f csv: the rows --once --format csv writes, each snapshot's
eq "--print -f csv: a header, a row per device per snapshot" \
    "$(rp "$RZ/m.jsonl.zst" --print -f csv | awk -F, 'NR == 1 { print $1 } END { print NR - 1 }' | tr '\n' ' ')" \
    "timestamp $(values "$RZ/m.jsonl" | jq '.devices | length' | awk '{ n += $1 } END { print n }') "

# --- older files: schema 1, plain and gzip without an index ------------------
gzip -kf "$RZ/m.jsonl"
eq "schema 1 gzip (one member, no index): its values" "$(values "$RZ/m.jsonl.gz" | md5sum)" \
    "$(values "$RZ/m.jsonl" | md5sum)"
zstd -qf "$RZ/m.jsonl" -o "$RZ/m1.jsonl.zst"
eq "schema 1 compressed by zstd(1): its values" "$(values "$RZ/m1.jsonl.zst" | md5sum)" \
    "$(values "$RZ/m.jsonl" | md5sum)"

# --- a long recording: 10 minutes a second apart, frames of a minute ---------
"$MIGMON_REC_SYNTH" "$RZ/m.jsonl" "$RZ/long.jsonl.zst" 600
eq "long: 600 snapshots" "$(rp "$RZ/long.jsonl.zst" --print | wc -l)" 600
# the entries: one after each of the 10 frames (a skippable frame, magic
# 0x184D2A5B, 88 bytes: the tag MGMIDX1)
eq "long: an index entry a frame" "$(grep -ao 'MGMIDX1' "$RZ/long.jsonl.zst" | wc -l)" 10
rp "$RZ/long.jsonl.zst" --print >"$RZ/long.all"
for k in 1 59 60 61 300 455 600; do
    eq "long: --at +$((k - 1))s is snapshot $k" \
        "$(rp "$RZ/long.jsonl.zst" --once --at "+$((k - 1))s" | md5sum)" "$(sed -n "${k}p" "$RZ/long.all" | md5sum)"
done

# --- a damaged frame in the middle: skipped, counted, said -------------------
# offsets of the frames from their entries (frame_off at payload byte 24)
frame_of() { # FILE N: "OFF LEN" of the N-th frame (1-based)
    python3 - "$1" "$2" <<'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
at, n = 0, 0
while True:
    at = b.find(b"MGMIDX1\0", at)
    if at < 0:
        break
    n += 1
    if n == int(sys.argv[2]):
        off, ln = struct.unpack_from("<QQ", b, at + 24)
        print(off, ln)
    at += 8
EOF
}
read -r off len <<<"$(frame_of "$RZ/long.jsonl.zst" 4)"
cp "$RZ/long.jsonl.zst" "$RZ/bad.jsonl.zst"
printf '\377\377\377\377\377\377\377\377\377\377\377\377' |
    dd of="$RZ/bad.jsonl.zst" bs=1 seek=$((off + len / 2)) conv=notrunc status=none
rp "$RZ/bad.jsonl.zst" --print >"$RZ/bad.out" 2>"$RZ/bad.err"; rc=$?
eq "damaged frame: --print ends with status 0" "$rc" 0
n=$(wc -l <"$RZ/bad.out")
[ "$n" -ge 540 ] && [ "$n" -lt 600 ] && ok || bad "damaged frame: $n snapshots read (540 to 599 expected: a frame of 60 at most lost)"
contains "damaged frame: counted and said" "$(cat "$RZ/bad.err")" "snapshots could not be read"
contains "damaged frame: where and why" "$(cat "$RZ/bad.err")" "does not decode"
eq "damaged frame: what is read is what was written" \
    "$(grep -cvxFf "$RZ/long.all" "$RZ/bad.out")" 0
eq "damaged frame: the frames after it read (the last snapshot)" "$(tail -1 "$RZ/bad.out" | md5sum)" \
    "$(tail -1 "$RZ/long.all" | md5sum)"
err=$(rp "$RZ/bad.jsonl.zst" --once --at +239s 2>&1 >/dev/null); rc=$?
eq "damaged frame: --at in it: exit 2, nothing made up" "$rc" 2
contains "damaged frame: --at in it: why" "$err" "does not decode"
# the same damage with its index entry gone too: the file is scanned, the
# damage said when it is opened
read -r eoff _ <<<"$(python3 -c "import sys; b=open(sys.argv[1],'rb').read(); print(b.find(b'MGMIDX1', $off))" "$RZ/bad.jsonl.zst") 0"
printf 'XX' | dd of="$RZ/bad.jsonl.zst" bs=1 seek="$eoff" conv=notrunc status=none
rp "$RZ/bad.jsonl.zst" --print >"$RZ/bad2.out" 2>"$RZ/bad2.err"
contains "damaged frame and entry: said when opened" "$(cat "$RZ/bad2.err")" "does not decode (Data corruption detected)"
contains "damaged frame and entry: skipped to the next frame" "$(cat "$RZ/bad2.err")" "skipped to the next frame (1 damaged)"
eq "damaged frame and entry: what is read is what was written" "$(grep -cvxFf "$RZ/long.all" "$RZ/bad2.out")" 0
n=$(wc -l <"$RZ/bad2.out")
[ "$n" -ge 540 ] && [ "$n" -lt 600 ] && ok || bad "damaged frame and entry: $n snapshots read"

# --- a cut file: read up to its last whole block -----------------------------
read -r off len <<<"$(frame_of "$RZ/long.jsonl.zst" 6)"
head -c $((off + len / 2)) "$RZ/long.jsonl.zst" >"$RZ/cut.jsonl.zst"
rp "$RZ/cut.jsonl.zst" --print >"$RZ/cut.out" 2>"$RZ/cut.err"; rc=$?
eq "cut file: status 0" "$rc" 0
n=$(wc -l <"$RZ/cut.out")
[ "$n" -ge 300 ] && [ "$n" -lt 360 ] && ok || bad "cut file: $n snapshots read (300 to 359 expected)"
eq "cut file: each as it was written, in order" "$(head -"$n" "$RZ/long.all" | md5sum)" "$(md5sum <"$RZ/cut.out")"

# --- compression bombs: refused, in little memory -----------------------------
# (at most the memory a replay of a small recording takes and 32 MiB: the
# line buffer's 16 MiB bound and the decoder's window, where the bombs
# decode hundreds of MiB; a sanitizer build keeps what is freed in its
# quarantine, so its figure says nothing of the program's)
base=$(/usr/bin/time -f "%M" "$MIGMON_BIN" replay "$RZ/m.jsonl.zst" --once 2>&1 >/dev/null | tail -1)
rss_max=$((base + 32768))
[ -n "${MIGMON_SAN:-}" ] && rss_max=$((1 << 30))
head -c 200M /dev/zero | zstd -1 -q -c >"$RZ/zeros.jsonl.zst"
err=$(/usr/bin/time -f "rss %M" "$MIGMON_BIN" replay "$RZ/zeros.jsonl.zst" --once 2>&1 >/dev/null); rc=$?
eq "zstd of zeros: exit 2" "$rc" 2
contains "zstd of zeros: said" "$err" "its content is over 8192 times its compressed size (16 MiB from 0 KiB, a compression bomb?)"
rss=$(sed -n 's/^rss //p' <<<"$err")
[ "$rss" -lt "$rss_max" ] && ok || bad "zstd of zeros: $rss KiB resident ($base for a small recording)"
# a frame that asks for a window of 1 GiB
head -1 "$RZ/m.jsonl" | zstd --long=30 -q -c >"$RZ/window.jsonl.zst"
err=$(/usr/bin/time -f "rss %M" "$MIGMON_BIN" replay "$RZ/window.jsonl.zst" --once 2>&1 >/dev/null); rc=$?
eq "a 1 GiB window: exit 2" "$rc" 2
contains "a 1 GiB window: refused" "$err" "Frame requires too much memory for decoding"
rss=$(sed -n 's/^rss //p' <<<"$err")
[ "$rss" -lt "$rss_max" ] && ok || bad "a 1 GiB window: $rss KiB resident ($base for a small recording)"
# one snapshot line repeated, clocks and all (no recording is): zstd -19
# takes it over 8,192 times; the snapshots before the bound are replayed
yes "$(head -1 "$RZ/m.jsonl")" | head -40000 | zstd -19 -q -c >"$RZ/same.jsonl.zst"
err=$(/usr/bin/time -f "rss %M" "$MIGMON_BIN" replay "$RZ/same.jsonl.zst" --once --at -0 2>&1 >/dev/null); rc=$?
eq "identical lines, ratio over 8192: exit 0 (the snapshots before)" "$rc" 0
contains "identical lines: the bound said" "$err" "its content is over 8192 times its compressed size"
rss=$(sed -n 's/^rss //p' <<<"$err")
[ "$rss" -lt "$rss_max" ] && ok || bad "identical lines: $rss KiB resident ($base for a small recording)"

# a recording whose values never change compresses far less than that: one
# snapshot line with only its clocks advancing, 2,500 times (17 MiB, past
# where the bound is checked), at zstd's level 3 and 19: read whole
python3 - "$RZ/m.jsonl" >"$RZ/idle.jsonl" <<'EOF'
import json, sys
d = json.loads(open(sys.argv[1]).readline())
for i in range(2500):
    d["elapsed_ns"] = i * 1000000000 + 12345
    d["timestamp"] = "2026-12-02T%02d:%02d:%02d.000Z" % (i // 3600, i // 60 % 60, i % 60)
    print(json.dumps(d, separators=(",", ":")))
EOF
for l in 3 19; do
    zstd -q -f -"$l" "$RZ/idle.jsonl" -o "$RZ/idle-$l.jsonl.zst"
    ratio=$(($(wc -c <"$RZ/idle.jsonl") / $(wc -c <"$RZ/idle-$l.jsonl.zst")))
    [ "$ratio" -lt 4096 ] && ok || bad "idle at level $l: $ratio times, over half the bound"
    eq "idle at level $l ($ratio times): read whole, nothing said" \
        "$(rp "$RZ/idle-$l.jsonl.zst" --print 2>&1 >/dev/null | head -c 200):$(rp "$RZ/idle-$l.jsonl.zst" --print 2>/dev/null | wc -l)" ":2500"
done

# --- a file still being written: read up to its last whole block ------------
MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/h200-mig.ini" MIGMON_SIM_TIME=0+1 \
    "$MIGMON_BIN" record --nvml-path "$MIGMON_SIM_LIB" -o "$RZ/live.jsonl.zst" -i 100 \
    --gpm off --dcgm off </dev/null &
pid=$!
sleep 2.5
n1=$(rp "$RZ/live.jsonl.zst" --print 2>/dev/null | wc -l)
last=$(rp "$RZ/live.jsonl.zst" --once --at -0 2>&1 | jq -r '.devices | length')
sleep 2
n2=$(rp "$RZ/live.jsonl.zst" --print 2>/dev/null | wc -l)
kill -TERM "$pid"
wait "$pid"
[ "$n1" -ge 8 ] && ok || bad "while written: $n1 snapshots after 2.5 s"
[ "$n2" -ge $((n1 + 10)) ] && ok || bad "while written: $n1, then $n2 snapshots 2 s later"
[ "$last" -ge 1 ] 2>/dev/null && ok || bad "while written: --at -0: $last"
eq "while written: after the end, zstd -t" "$(zstd -tq "$RZ/live.jsonl.zst" 2>&1; echo $?)" 0
