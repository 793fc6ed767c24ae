# shellcheck shell=bash
# The record mode (docs/record.md): JSON Lines against --once, CSV against
# its header, whole lines after SIGKILL, overwrite rules (and devices,
# FIFOs and sockets written to as they are), limits, signals and a closed
# pipe; the line protocol's escaping, types and absent values; Telegraf
# execd: the STDIN trigger (lines read before the first snapshot included,
# a last line without its newline too),
# and the end of a piped stdin ending an interval recording.

# rec SCENARIO [ARGS...]: the record mode on a simulator scenario. Standard
# input is /dev/null: the end of a piped one ends a recording, and the
# harness's own stdin may be such a pipe.
rec() {
    local scen=$1
    shift
    MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/$scen" MIGMON_SIM_TIME=${SIM_TIME:-100} \
        "$MIGMON_BIN" record --nvml-path "$MIGMON_SIM_LIB" "$@" </dev/null
}
# rec_in SCENARIO [ARGS...]: the same reading the caller's standard input,
# in a subshell (&, a pipeline, a coproc) whose $! is the recorder's own PID
rec_in() {
    local scen=$1
    shift
    exec env MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/$scen" MIGMON_SIM_TIME=100 \
        "$MIGMON_BIN" record --nvml-path "$MIGMON_SIM_LIB" "$@"
}
# rec_bg SCENARIO [ARGS...] &: the same on /dev/null
rec_bg() {
    rec_in "$@" </dev/null
}
# wait_lines FILE N: until FILE has N lines (at most 20 s; slower under
# the sanitizers)
wait_lines() {
    local t
    for ((t = 0; t < 200; t++)); do
        [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ] && return 0
        sleep 0.1
    done
    return 1
}
# snaps FILE: the snapshot lines of a JSON Lines recording (h200-mig's
# Xid 94 at t = 3 is an event line of its own, docs/record.md "Events")
snaps() {
    grep -v '^{"type":' "$1"
}
R=$TMP/record
mkdir -p "$R"

# --- JSON Lines: each record is the --once object, field by field ----------
rec h200-mig.ini -o "$R/a.jsonl" -n 3 -i 100 --gpm off --dcgm off; rc=$?
eq "jsonl: exit 0" "$rc" 0
eq "jsonl: -n 3 writes 3 snapshot lines" "$(snaps "$R/a.jsonl" | wc -l)" 3
jeq "jsonl: and the Xid 94 once, after the first snapshot that counts it" "$(jq -s -c . "$R/a.jsonl")" \
    '(map(.type == null and .events_total == 1) | index(true)) as $i | [.[$i + 1].type, .[$i + 1].xid, (map(select(.type == "event")) | length)]' \
    '["event",94,1]'
once=$(mon h200-mig.ini --once --format json --gpm off --dcgm off)
# what differs by nature: the clocks, host CPU figures (a delta that --once
# primes for 200 ms), and the health events with what they feed (xid counts,
# the verdict): the events helper's first answer may come a tick later in a
# recording than in --once on a slow machine (test_events_outputs.sh checks
# the events in a recording)
norm='del(.elapsed_ns, .timestamp, .host, .events, .events_total, .events_error)
    | .devices |= map(del(.processes[]?.cpu_pct, .health, .metrics.xid_errors_total, .metrics.last_xid))'
want=$(printf '%s' "$once" | jq -cS "$norm")
n=0
while IFS= read -r line; do
    n=$((n + 1))
    got=$(printf '%s' "$line" | jq -cS "$norm" 2>&1)
    eq "jsonl: record $n equals --once (devices, versions, errors)" "$got" "$want"
done < <(snaps "$R/a.jsonl")
eq "jsonl: a known value" "$(head -1 "$R/a.jsonl" | jq -c '.devices[0].metrics.memory_total_bytes.value')" 150754820096
eq "jsonl: elapsed_ns grows from one reference instant" \
    "$(snaps "$R/a.jsonl" | jq -s -c '[.[].elapsed_ns] | (. == sort) and (.[2] - .[0] >= 150000000)')" true

# --- CSV: every row against the header --------------------------------------
rec h200-mig.ini -o "$R/a.csv" -f csv -n 2 -i 100 --gpm off; rc=$?
eq "csv: exit 0" "$rc" 0
grep -q '"' "$R/a.csv" && bad "csv: h200-mig has no field that needs quoting" || ok
ndev=$(printf '%s' "$once" | jq '.devices | length')
eq "csv: a header and one row per device per tick" "$(wc -l <"$R/a.csv")" $((1 + 2 * ndev))
eq "csv: every row has the header's column count" \
    "$(awk -F, 'NR == 1 { n = NF; next } NF != n { bad++ } END { print n, bad + 0 }' "$R/a.csv")" "146 0"
col() { # col NAME ROW: the field of column NAME in data row ROW
    awk -F, -v name="$1" -v row="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
        NR == row + 1 { print $c }' "$R/a.csv"
}
eq "csv: memory_total_bytes of the GPU" "$(col memory_total_bytes 1)" 150754820096
eq "csv: memory_used_bytes of MIG 3g.71gb" "$(col memory_used_bytes 2)" \
    "$(printf '%s' "$once" | jq '.devices[1].metrics.memory_used_bytes.value')"
eq "csv: profile column" "$(col profile 2)" 3g.71gb
jeq "csv: gpu_util_pct is N/A in JSON" "$once" '.devices[0].metrics.gpu_util_pct.value' null
eq "csv: ... and empty in CSV, not 0" "$(col gpu_util_pct 1)" ""
eq "csv: a real 0 stays 0 (MIG 1g.18gb holds no memory)" "$(col memory_used_bytes 5)" 0
# the header is the column list of docs/record.md, in its order: the names
# in each row's first cell, or in the second where the first is a range (…)
doc_cols=$(awk '/^RFC 4180: a header line/ { on = 1 }
    on && /^\| `/ { split($0, cell, "|"); c = cell[2]; if (c ~ /…/) c = cell[3]
        while (match(c, /`[^`]+`/)) { printf "%s%s", sep, substr(c, RSTART + 1, RLENGTH - 2); sep = ","
            c = substr(c, RSTART + RLENGTH) } }
    on && /^[0-9]+ columns\./ { print ""; print $1; exit }' "$MIGMON_SRC/docs/record.md")
eq "csv: docs/record.md documents 146 columns" \
    "$(sed -n 2p <<<"$doc_cols"):$(head -1 <<<"$doc_cols" | tr , '\n' | wc -l)" "146:146"
eq "csv: the header is the documented column list" "$(head -1 "$R/a.csv")" "$(head -1 <<<"$doc_cols")"

# --- CSV: sources and the parent's values -----------------------------------
eq "csv: each metric column has its source column right after it, the node last" \
    "$(head -1 "$R/a.csv" | awk -F, '{ for (i = 16; i < NF; i += 2) { n++; if ($(i + 1) != $i "_source") bad++ }
        print n, bad + 0, $NF }')" "65 0 node"
# every cell of every device against --once JSON: the value (empty when null
# or when it is the parent's) and the source word ("parent" for scope parent)
csv_vs_json='($csv | split("\n") | map(select(length > 0) | split(","))) as $rows
    | ($rows[0] | to_entries | map({key: .value, value: .key}) | from_entries) as $col
    | [range(1; $rows | length) as $r | $j.devices[$r - 1] as $d | $rows[$r] as $row
       | ($d.metrics + {process_count: $d.process_count}) | to_entries[] | .key as $k | .value as $m
       | (if $m.scope == "parent" then ["", "parent"]
          else [($m.value // "" | tostring), $m.source] end) as $want
       | [($row[$col[$k]] | if . == "" then . else tonumber | tostring end), $row[$col[$k + "_source"]]]
       | select(. != $want) | "\($d.kind) \($d.mig_index // $d.index) \($k): \(.) not \($want)"]
    | (($rows | length) - 1 | tostring) + " rows, " + (length | tostring) + " differ " + (.[:3] | join("; "))'
for sc in h200-mig dgx-a100-8x7; do
    mon $sc.ini --once -f json --gpm off >"$R/$sc.json"
    mon $sc.ini --once -f csv --gpm off >"$R/$sc.csv"
    eq "csv: $sc: every value and source as in JSON, a parent's value on its GPU row only" \
        "$(jq -n -r --slurpfile js "$R/$sc.json" --rawfile csv "$R/$sc.csv" "\$js[0] as \$j | $csv_vs_json" 2>&1)" \
        "$(jq -r '.devices | length' "$R/$sc.json") rows, 0 differ "
done
dgx=$(cat "$R/dgx-a100-8x7.csv")
eq "csv: power_w summed over every row is the GPUs' sum (each GPU once, not once per MIG device)" \
    "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "power_w") c = i; next }
        { all += $c } $3 == "gpu" { gpu += $c; n++ } END { print n, (all == gpu), (gpu > 0) }' <<<"$dgx")" "8 1 1"
# the GPU-wide metrics: those JSON marks scope parent on a MIG device
wide=$(jq -r '[.devices[] | select(.kind == "mig") | .metrics | to_entries[]
    | select(.value.scope == "parent") | .key] | unique | join(" ")' "$R/dgx-a100-8x7.json")
eq "csv: a MIG row's GPU-wide cells (all 47) are empty and say parent" \
    "$(awk -F, -v wide="$wide" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; nw = split(wide, w, " "); next }
        $3 == "mig" { n++; for (i = 1; i <= nw; i++) if ($c[w[i]] != "" || $c[w[i] "_source"] != "parent") bad++ }
        END { print nw, n, bad + 0 }' <<<"$dgx")" "47 56 0"
eq "csv: ... and the GPU row holds them, read directly" \
    "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $3 == "gpu" && NR == 2 {
        print ($c["power_w"] > 0), $c["power_w_source"], $c["temperature_c_source"] }' <<<"$dgx")" "1 direct direct"
# GPM (H200): the instances' utilisation is gpm; NVLink is the whole GPU's,
# gpm on the GPU row and the parent's on each MIG row (--once waits for the
# GPM helper's first values)
mon h200-mig.ini --once -f csv >"$R/gpm.csv"
eq "csv: GPM sources: MIG gpu_util_pct, GPU nvlink_tx, MIG nvlink_tx" \
    "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } {
        if ($3 == "mig") { u[$c["gpu_util_pct_source"]]++; m[$c["nvlink_tx_bytes_per_s_source"]]++ }
        else g[$c["nvlink_tx_bytes_per_s_source"]]++ }
        END { n = 0; for (k in m) n++; print ("gpm" in u), ("gpm" in g), n == 1 && ("parent" in m) }' "$R/gpm.csv")" "1 1 1"

# --- a killed recorder leaves whole lines only ------------------------------
rec_bg dgx-a100-8x7.ini -o "$R/k.jsonl" -i 100 --gpm off &
pid=$!
wait_lines "$R/k.jsonl" 3 || bad "SIGKILL: fewer than 3 lines after 20 s"
sleep 0.25 # a moment later: between two snapshots or inside the write of one
{ kill -KILL "$pid" && wait "$pid"; } 2>/dev/null
[ -z "$(tail -c 1 "$R/k.jsonl")" ] && ok || bad "SIGKILL: the file ends inside a line"
eq "SIGKILL: every line parses (a snapshot, or the Xid 79 at t = 20)" \
    "$(jq -c '.schema // .type' "$R/k.jsonl" 2>&1 | grep -cxE '1|"event"')" "$(wc -l <"$R/k.jsonl")"
# a first tick may end before every MIG instance's first sample (slow under
# the sanitizers): it is marked partial; every other one holds all 64
eq "SIGKILL: whole snapshots" "$(jq -c 'select(.type == null and (.partial | not)) | .devices | length' "$R/k.jsonl" 2>&1 | sort -u)" 64

# --- existing files: refused, --append, --force -----------------------------
printf 'keep\n' >"$R/exists.jsonl"
err=$(rec h200-mig.ini -o "$R/exists.jsonl" -n 1 --gpm off 2>&1 >/dev/null); rc=$?
eq "overwrite: refused with status 2" "$rc" 2
contains "overwrite: says how to go on" "$err" "exists.jsonl exists: --append adds to it, --force replaces it"
eq "overwrite: the file is untouched" "$(cat "$R/exists.jsonl")" keep
rec h200-mig.ini -o "$R/exists.jsonl" -n 2 -i 100 --gpm off --append; rc=$?
eq "append: exit 0" "$rc" 0
eq "append: adds to the file" "$(snaps "$R/exists.jsonl" | wc -l):$(head -1 "$R/exists.jsonl")" "3:keep"
rec h200-mig.ini -o "$R/a.csv" -f csv -n 1 --gpm off --append
eq "append: CSV gets no second header" "$(grep -c '^timestamp,' "$R/a.csv"):$(wc -l <"$R/a.csv")" \
    "1:$((1 + 3 * ndev))"
rec h200-mig.ini -o "$R/exists.jsonl" -n 1 --gpm off --force; rc=$?
eq "force: exit 0" "$rc" 0
eq "force: replaces the file" "$(snaps "$R/exists.jsonl" | wc -l)" 1
# a directory is refused as such at once, whatever the flags (not as a
# file that exists first, then as "Is a directory"); profile's -o too
mkdir -p "$R/dir"
for flags in "" --force --append; do
    # shellcheck disable=SC2086
    err=$(rec h200-mig.ini -o "$R/dir" -n 1 --gpm off $flags 2>&1); rc=$?
    eq "-o a directory ${flags:-(no flag)}: status 2, one line saying so" "$rc:$err" \
        "2:mig-gpu-mon: $R/dir is a directory, not a file"
done
err=$("$MIGMON_BIN" profile --demo -o "$R/dir" -- true 2>&1); rc=$?
eq "profile -o a directory: status 2, said" "$rc:$err" \
    "2:mig-gpu-mon profile: $R/dir is a directory, not a file"
err=$(rec h200-mig.ini -o "$R/no/such/dir.jsonl" -n 1 2>&1); rc=$?
eq "unwritable path: status 2" "$rc" 2
contains "unwritable path: named with the reason" "$err" "dir.jsonl: No such file or directory"
# a symlink is never followed to a file, whatever the flags (as root, a link
# to /etc/passwd must not let a recording replace it); a dangling one is not
# created through either
printf 'keep\n' >"$R/target.jsonl"
ln -s target.jsonl "$R/link.jsonl"
for flags in "" --force --append; do
    # shellcheck disable=SC2086
    err=$(rec h200-mig.ini -o "$R/link.jsonl" -n 1 --gpm off $flags 2>&1); rc=$?
    eq "symlink to a file ${flags:-(no flag)}: refused with status 2, the file untouched" \
        "$rc:$err:$(cat "$R/target.jsonl")" \
        "2:mig-gpu-mon: $R/link.jsonl is a symbolic link: output is never written through one (name the file it points to):keep"
done
ln -s nowhere.jsonl "$R/dangling.jsonl"
err=$(rec h200-mig.ini -o "$R/dangling.jsonl" -n 1 --gpm off --force 2>&1); rc=$?
eq "dangling symlink --force: refused with status 2, nothing created" \
    "$rc:$([ -e "$R/nowhere.jsonl" ] && echo created)" "2:"
contains "dangling symlink: says why" "$err" "is a symbolic link: output is never written through one"
err=$("$MIGMON_BIN" profile --demo -o "$R/link.jsonl" -- true 2>&1); rc=$?
eq "profile -o a symlink: refused with status 2, the file untouched" "$rc:$(cat "$R/target.jsonl")" "2:keep"
contains "profile -o a symlink: says why" "$err" "link.jsonl is a symbolic link"
err=$("$MIGMON_BIN" profile --demo --timeline "$R/link.jsonl" -- true 2>&1); rc=$?
eq "profile --timeline a symlink: refused with status 2, the file untouched" "$rc:$(cat "$R/target.jsonl")" "2:keep"

# --- a device, a FIFO, a socket: written to as they are ---------------------
# The rule above protects a regular file's content; these have none to lose
# and are neither refused nor truncated.
out=$(rec h200-mig.ini -o /dev/null -n 1 --gpm off 2>&1); rc=$?
eq "-o /dev/null: nothing said, status 0" "$out:$rc" ":0"
ln -s /dev/null "$R/null-link"
out=$(rec h200-mig.ini -o "$R/null-link" -n 1 --gpm off 2>&1); rc=$?
eq "-o a symlink to /dev/null: nothing said, status 0" "$out:$rc" ":0"
# standard output here is a pipe
out=$(rec h200-mig.ini -o /dev/stdout -n 2 -i 100 --gpm off 2>&1); rc=$?
eq "-o /dev/stdout on a pipe: 2 snapshots, status 0" "$(jq -c 'select(.type == null) | .schema' <<<"$out" 2>&1 | tr '\n' ' ')$rc" "1 1 0"
# ... where it is a regular file, that file's rule: -o - writes there
err=$(rec h200-mig.ini -o /dev/stdout -n 1 --gpm off 2>&1 >"$R/stdout.jsonl"); rc=$?
eq "-o /dev/stdout on a file: refused with status 2" "$rc:$err" \
    "2:mig-gpu-mon: /dev/stdout is a symbolic link: output is never written through one (name the file it points to)"
mkfifo "$R/fifo"
timeout 20 cat "$R/fifo" >"$R/fifo.out" &
cpid=$!
out=$(rec h200-mig.ini -o "$R/fifo" -n 2 -i 100 --gpm off 2>&1); rc=$?
[ "$rc" -eq 0 ] || exec 3>"$R/fifo" 3>&- # a refused FIFO: let the reader end
wait "$cpid"
eq "-o FIFO: nothing said, status 0" "$out:$rc" ":0"
eq "-o FIFO: the reader got 2 snapshots" "$(jq -c 'select(.type == null) | .schema' "$R/fifo.out" 2>&1 | tr '\n' ' ')" "1 1 "
# a FIFO nobody reads: the open waits, and SIGTERM then ends it as it ends
# any recording (status 0, nothing said), not as a failed open
mkfifo "$R/fifo2"
MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/h200-mig.ini" MIGMON_SIM_TIME=100 timeout 20 \
    "$MIGMON_BIN" record --nvml-path "$MIGMON_SIM_LIB" -o "$R/fifo2" --gpm off \
    </dev/null 2>"$R/fifo2.err" &
rpid=$!
sleep 0.5
kill -TERM "$rpid"
wait "$rpid"
eq "-o FIFO without a reader, SIGTERM: status 0, nothing said" "$?:$(cat "$R/fifo2.err")" "0:"
# a Unix stream socket is connected to (a listener in Perl, which Debian
# always has); its reader gets the snapshots
timeout 20 perl -MIO::Socket::UNIX -e '
    my $l = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Local => $ARGV[0], Listen => 1) or die "$!\n";
    my $c = $l->accept; print while <$c>;' "$R/sock" >"$R/sock.out" &
spid=$!
for ((i = 0; i < 100; i++)); do [ -S "$R/sock" ] && break; sleep 0.1; done
out=$(rec h200-mig.ini -o "$R/sock" -n 2 -i 100 --gpm off 2>&1); rc=$?
[ "$rc" -eq 0 ] || kill "$spid" 2>/dev/null
wait "$spid"
eq "-o socket: nothing said, status 0" "$out:$rc" ":0"
eq "-o socket: the listener got 2 snapshots" "$(jq -c 'select(.type == null) | .schema' "$R/sock.out" 2>&1 | tr '\n' ' ')" "1 1 "
# /dev/stdout where standard output is a socket (systemd's journal): written
# through it. Perl reads the other end of a socket pair and prints what came.
out=$(timeout 20 perl -MSocket -e '
    socketpair(my $r, my $w, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die "$!\n";
    my $pid = fork // die "$!\n";
    if (!$pid) { close $r; open(STDOUT, ">&", $w) or die "$!\n"; exec @ARGV or die "$!\n" }
    close $w; print while <$r>; waitpid $pid, 0; print "rc ", $? >> 8, "\n"' \
    env MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/h200-mig.ini" MIGMON_SIM_TIME=100 \
    "$MIGMON_BIN" record --nvml-path "$MIGMON_SIM_LIB" -o /dev/stdout -n 2 -i 100 --gpm off \
    </dev/null 2>&1)
eq "-o /dev/stdout on a socket: 2 snapshots, status 0" \
    "$(grep -v '^{"type":' <<<"$out" | head -2 | jq -c .schema 2>&1 | tr '\n' ' ')$(grep -v '^{"type":' <<<"$out" | tail -n +3)" "1 1 rc 0"

# --- --duration -------------------------------------------------------------
t0=$(date +%s%N)
rec h200-mig.ini -o "$R/d.jsonl" --duration 1 -i 200 --gpm off; rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
eq "duration: exit 0" "$rc" 0
n=$(snaps "$R/d.jsonl" | wc -l)
[ "$n" -ge 3 ] && [ "$n" -le 6 ] && ok || bad "duration: 1 s at 200 ms wrote $n snapshots"
[ "$ms" -lt 6000 ] && ok || bad "duration: 1 s took $ms ms"

# --- the grid does not drift when the driver is slow -------------------------
# Every power reading takes 100 ms: the ticks still start 300 ms apart (the
# seed slept a full interval after each tick's work, so its ticks drifted by
# the work's length). elapsed_ns is taken when a tick starts.
cp "$MIGMON_SRC/sim/scenarios/a100-sxm4-80gb.ini" "$R/slow-power.ini"
printf '\n[fault.slow-power]\ntarget = gpu.0\nfunction = nvmlDeviceGetPowerUsage\ndelay_ms = 100\n' \
    >>"$R/slow-power.ini"
MIGMON_SIM_SCENARIO="$R/slow-power.ini" MIGMON_SIM_TIME=100 \
    "$MIGMON_BIN" record --nvml-path "$MIGMON_SIM_LIB" -o "$R/grid.jsonl" -n 8 -i 300 </dev/null; rc=$?
eq "slow driver: exit 0" "$rc" 0
eq "slow driver: the power was read (slowly)" "$(jq -s -c '[.[].devices[0].metrics.power_w.source] | unique' "$R/grid.jsonl")" '["direct"]'
# (the second tick is the priming one, ~200 ms after the first: the grid
# is counted from it)
gap=$(jq -s '(.[7].elapsed_ns - .[1].elapsed_ns) / 6 / 1000000 | round' "$R/grid.jsonl")
[ "$gap" -ge 285 ] && [ "$gap" -le 315 ] && ok || bad "slow driver: ticks $gap ms apart on average, not 300"

# --- priming: the second sample within ~200 ms whatever the interval --------
# CPU % and GPM values are deltas of two samples: with an hour's interval
# they would stay N/A for an hour. The second sample comes ~200 ms after
# the first (plus a bounded wait for GPM's first values), with them; then
# the interval is kept. Real time, GPM on (h200-mig: MIG instances on GPM).
t0=$(date +%s%N)
timeout 20 env MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/h200-mig.ini" MIGMON_SIM_TIME=100 \
    "$MIGMON_BIN" record --nvml-path "$MIGMON_SIM_LIB" -o "$R/prime.jsonl" -n 2 -i 3600000 </dev/null; rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
eq "priming: record -i 3600000 -n 2 ends" "$rc" 0
[ "$ms" -lt 5000 ] && ok || bad "priming: two samples at an hour's interval took $ms ms"
jeq "priming: the first sample's CPU % is N/A (one sample, no delta), the second's read" \
    "$(snaps "$R/prime.jsonl" | jq -s -c .)" \
    '[.[0].host.cpu.total_pct.value, (.[1].host.cpu.total_pct.value | type)]' '[null,"number"]'
jeq "priming: the second sample ~200 ms after the first" "$(snaps "$R/prime.jsonl" | jq -s -c .)" \
    '(.[1].elapsed_ns - .[0].elapsed_ns) / 1000000 | (. >= 150 and . < 1500)' true
jeq "priming: the second sample has GPM values (a MIG instance's utilisation, the GPU's occupancy)" \
    "$(snaps "$R/prime.jsonl" | sed -n 2p)" \
    '[.devices[1].metrics.gpu_util_pct.source, (.devices[0].metrics.sm_occupancy_pct.value | type)]' \
    '["gpm","number"]'
# after it, the interval: a third sample does not follow 200 ms later
rec_bg h200-mig.ini -o "$R/prime3.jsonl" -i 2000 --gpm off &
pp=$!
wait_lines "$R/prime3.jsonl" 3 # two snapshots and the event
sleep 1
kill -TERM "$pp"
wait "$pp"
eq "priming: then the interval (2 s): 2 samples in the first ~1.2 s" "$(snaps "$R/prime3.jsonl" | wc -l)" 2

# --- signals and a closed pipe end it cleanly -------------------------------
first=$(timeout 10 "$BASH" -c 'MIGMON_SIM_SCENARIO="$1/sim/scenarios/h200-mig.ini" MIGMON_SIM_TIME=100 \
    "$2" record --nvml-path "$3" -i 100 --gpm off </dev/null | head -1; echo "${PIPESTATUS[0]}" >"$4"' _ \
    "$MIGMON_SRC" "$MIGMON_BIN" "$MIGMON_SIM_LIB" "$R/pipe.rc")
eq "SIGPIPE: the recorder exits 0" "$(cat "$R/pipe.rc" 2>/dev/null)" 0
eq "SIGPIPE: the line read is whole" "$(printf '%s' "$first" | jq -c .schema)" 1
for sig in TERM INT; do
    # job control on, so the background recorder does not start with
    # SIGINT ignored, as a non-interactive shell's background jobs do
    set -m
    rec_bg h200-mig.ini -o "$R/sig-$sig.jsonl" -i 100 --gpm off &
    pid=$!
    set +m
    wait_lines "$R/sig-$sig.jsonl" 2 || bad "SIG$sig: no 2 lines after 20 s"
    kill -"$sig" "$pid"
    wait "$pid"; rc=$?
    eq "SIG$sig: exit 0" "$rc" 0
    eq "SIG$sig: every line whole (a snapshot or an event)" \
        "$(jq -c '.schema // .type' "$R/sig-$sig.jsonl" 2>&1 | grep -cvxE '1|"event"')" 0
done

# --- a full disk: the file ends with the last whole snapshot ---------------
# (a 64 KiB tmpfs holds a few h200-mig snapshots; the write that does not fit
# is cut off again: every line parses, status 1 with the reason)
mkdir -p "$R/full"
if mount -t tmpfs -o size=64k migmon-test "$R/full" 2>/dev/null; then
    for f in jsonl influx csv; do
        err=$(rec h200-mig.ini -o "$R/full/r.$f" -f "$f" -i 100 --gpm off --duration 30 2>&1); rc=$?
        eq "ENOSPC $f: status 1" "$rc" 1
        contains "ENOSPC $f: the reason, and what was done" "$err" \
            "No space left on device; the part of the snapshot written was taken back"
        eq "ENOSPC $f: the file ends in a newline" "$(tail -c 1 "$R/full/r.$f" | od -An -c | tr -d ' ')" '\n'
        rm -f "$R/full/r.$f"
    done
    # whole JSON lines: each one a snapshot with every device
    rec h200-mig.ini -o "$R/full/r.jsonl" -i 100 --gpm off --duration 30 2>/dev/null
    eq "ENOSPC jsonl: every line a whole snapshot" \
        "$(jq -c 'select(.type == null) | .devices | length' "$R/full/r.jsonl" 2>&1 | sort -u)" "$ndev"
    umount "$R/full"
else
    bad "ENOSPC: cannot mount a tmpfs (the tests run as root)"
fi

# --- --append onto a cut line: a new line first, and a note ----------------
printf '{"whole":1}\n{"cut' >"$R/frag.jsonl"
err=$(rec h200-mig.ini -o "$R/frag.jsonl" -n 1 --gpm off --append 2>&1); rc=$?
eq "append onto a cut line: status 0" "$rc" 0
eq "append onto a cut line: says so" "$err" \
    "mig-gpu-mon: $R/frag.jsonl ended in a cut line of 5 bytes, left as it was; the recording starts on a new line"
eq "append onto a cut line: the fragment kept, the snapshot on its own line" \
    "$(sed -n 2p "$R/frag.jsonl"):$(sed -n 3p "$R/frag.jsonl" | jq -c .schema)" '{"cut:1'
printf 'a,b\n' >"$R/whole.csv"
err=$(rec h200-mig.ini -o "$R/whole.csv" -f csv -n 1 --gpm off --append 2>&1)
eq "append onto a whole line: nothing said, nothing added" "$err:$(sed -n 2p "$R/whole.csv" | cut -c1-2)" ":20"

# --- rotation: removed, renamed, SIGHUP -------------------------------------
rec_bg h200-mig.ini -o "$R/rot.jsonl" -i 100 --gpm off 2>"$R/rot.err" &
pid=$!
wait_lines "$R/rot.jsonl" 2 || bad "rotation: no 2 lines after 20 s"
rm "$R/rot.jsonl"
wait_lines "$R/rot.jsonl" 1 || bad "rotation: the removed file was not made again"
mv "$R/rot.jsonl" "$R/rot.jsonl.1"
wait_lines "$R/rot.jsonl" 1 || bad "rotation: the renamed file was not followed by a new one"
n1=$(wc -l <"$R/rot.jsonl.1")
kill -HUP "$pid"
for ((i = 0; i < 100; i++)); do grep -q SIGHUP "$R/rot.err" && break; sleep 0.1; done
sleep 0.3
kill -TERM "$pid"
wait "$pid"; rc=$?
eq "rotation: exit 0 (SIGHUP does not end it)" "$rc" 0
eq "rotation: the renamed file got nothing after the rename" "$(wc -l <"$R/rot.jsonl.1")" "$n1"
eq "rotation: every line in the new file whole" "$(jq -c .schema "$R/rot.jsonl" | sort -u)" 1
eq "rotation: said on stderr, each time" \
    "$(sed -E "s|$R|R|" "$R/rot.err")" \
    "mig-gpu-mon: R/rot.jsonl was removed or replaced: writing to the file now at that path (new)
mig-gpu-mon: R/rot.jsonl was removed or replaced: writing to the file now at that path (new)
mig-gpu-mon: R/rot.jsonl reopened on SIGHUP: writing to the file now at that path"
# SIGHUP with standard output still ends the recording (a hung-up terminal)
rec_bg h200-mig.ini -i 100 --gpm off >"$R/hup-stdout.jsonl" &
pid=$!
wait_lines "$R/hup-stdout.jsonl" 1
kill -HUP "$pid"
wait "$pid"; rc=$?
eq "SIGHUP, standard output: ends it with status 0" "$rc" 0

# --- CSV: a cell a spreadsheet would run is written as text ------------------
# (the name as the driver gives it: name_raw, in a hostile scenario)
sed -e '/^name = NVIDIA H200$/a name_raw = =HYPERLINK("http://x","y")' -e '/^\[system\]/a hostile = true' \
    "$MIGMON_SRC/sim/scenarios/h200-mig.ini" >"$R/formula.ini"
csv=$(MIGMON_SIM_SCENARIO="$R/formula.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" --once -f csv \
    --nvml-path "$MIGMON_SIM_LIB" --gpm off)
contains "CSV: a formula name is quoted text" "$csv" ",\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\","
case "$csv" in *',=HYPERLINK'*) bad "CSV: a cell starts with =" ;; *) ok ;; esac

# --- line protocol ------------------------------------------------------------
lp=$(mon h200-mig.ini --once --format influx --gpm off); rc=$?
eq "influx --once: exit 0" "$rc" 0
eq "influx --once: one nvidia_smi line per GPU" "$(grep -c '^nvidia_smi,' <<<"$lp")" \
    "$(printf '%s' "$once" | jq '[.devices[] | select(.kind == "gpu")] | length')"
eq "influx --once: one nvidia_smi_mig line per MIG device" "$(grep -c '^nvidia_smi_mig,' <<<"$lp")" \
    "$(printf '%s' "$once" | jq '[.devices[] | select(.kind == "mig")] | length')"
eq "influx --once: one nvidia_smi_process line per process" "$(grep -c '^nvidia_smi_process,' <<<"$lp")" \
    "$(printf '%s' "$once" | jq '[.devices[].processes[]] | length')"
eq "influx --once: one migmon_host line" "$(grep -c '^migmon_host ' <<<"$lp")" 1
gpu=$(grep '^nvidia_smi,' <<<"$lp")
contains "influx: Telegraf's tags, escaped" "$gpu" \
    "nvidia_smi,arch=Hopper,name=NVIDIA\\ H200,pstate=P0,uuid=GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8,vendor=nvidia,index=0 "
contains "influx: memory in MiB, integer" "$gpu" "memory_total=143771i,"
contains "influx: power a float" "$gpu" ",power_limit=700,"
case "$gpu" in *utilization_gpu=*) bad "influx: N/A utilization_gpu written" ;; *) ok ;; esac
ts=$(grep -v '^migmon_event' <<<"$lp" | awk '{ print $NF }' | sort -u)
eq "influx: one timestamp per batch (an event has its own)" "$(wc -l <<<"$ts")" 1
eq "influx --once: the Xid 94, first in the batch" "$(head -1 <<<"$lp" | cut -d' ' -f1)" \
    "migmon_event,uuid=GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8,vendor=nvidia,index=0,mig_uuid=MIG-3b36b6e9-53c9-a66e-40ad-6c326efaf3d0,mig_index=1,gi_id=5,ci_id=0,type=xid,xid=94"
now=$(date +%s%N)
[ $((now - ts)) -ge 0 ] && [ $((now - ts)) -lt 60000000000 ] && ok || bad "influx: timestamp $ts is not the wall clock in ns ($now)"
contains "influx: a MIG line" "$lp" \
    "nvidia_smi_mig,arch=Hopper,name=NVIDIA\\ H200,pstate=P0,uuid=GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8,vendor=nvidia,index=0,gpu_index=1,compute_index=0,parent_index=0,mig_uuid=MIG-760076c7-d3b3-392a-4dba-0e98392dab98,profile=3g.71gb memory_fb_used=42535i,memory_fb_total=67840i,memory_fb_free=25305i,xid_errors_total=0,memory_reserved_bytes=0,process_count=1i,lost=0i "
# every Telegraf integer field ends in i, every float does not
ints='utilization_gpu|utilization_memory|utilization_encoder|utilization_decoder|memory_used|memory_free|memory_total|temperature_gpu|clocks_current_graphics|clocks_current_sm|clocks_current_memory|fan_speed|pcie_link_gen_current|pcie_link_width_current|memory_fb_used|memory_fb_free|memory_fb_total|pid|used_memory'
lpa=$(mon a100-sxm4-80gb.ini --once --format influx)
eq "influx: integer fields end in i" \
    "$(grep -oE "[ ,]($ints)=[^, ]+" <<<"$lp$lpa" | grep -vcE '=-?[0-9]+i$')" 0
eq "influx: power is a float" "$(grep -oE '[ ,]power_(draw|limit)=[^, ]+' <<<"$lpa" | grep -c 'i$')" 0
for f in utilization_gpu utilization_memory temperature_gpu clocks_current_sm power_draw; do
    contains "influx a100: $f present" "$(grep '^nvidia_smi,' <<<"$lpa")" "$f="
done
# an SXM board has no fan: N/A in JSON, no field (never 0)
jeq "a100: fan_pct is N/A" "$(mon a100-sxm4-80gb.ini --once --format json)" '.devices[0].metrics.fan_pct.value' null
case "$lpa" in *fan_speed=*) bad "influx a100: fan_speed written for a board without a fan" ;; *) ok ;; esac

# hostile strings: the driver's, and a process whose name and command line
# hold every character line protocol treats specially
HP=$R/hproc
hostile_proc_root "$HP"
hl=$(mon hostile.ini --once --format influx --gpm off --proc-root "$HP"); rc=$?
eq "influx hostile: exit 0" "$rc" 0
g0=$(grep '^nvidia_smi,.*index=0 ' <<<"$hl")
case "$g0" in *utilization_gpu=* | *temperature_gpu=* | *memory_used=* | *fan_speed=*) bad "influx hostile: an absurd value was written: $g0" ;; *) ok ;; esac
contains "influx hostile: the GPU name's spaces escaped" "$g0" "name=NVIDIA\\ ?[2J?]0;title?A100?31m\\ "
contains "influx hostile: the process tags" "$hl" 'nvidia_smi_process,name=ev\ il\,x\=1\ "q"?,type=C,uuid=GPU-0c0c0c0c-1111-4222-8333-444444444444,vendor=nvidia pid=4242i'
contains "influx hostile: the command string" "$hl" 'command="run \"quoted, a=b\" back\\slash"'
has_ctl=$(LC_ALL=C grep -cP '[\x00-\x08\x0b-\x1f\x7f]' <<<"$hl")
eq "influx hostile: no control bytes" "$has_ctl" 0
eq "influx hostile: every line has a measurement, fields and a timestamp" \
    "$(grep -cvE '^[a-z_]+(,[^ ]+)? [^ ].* [0-9]{19}$' <<<"$hl")" 0
eq "influx: a device with no value at all writes no line" \
    "$(mon no-gpu.ini --once --format influx | grep -c '^nvidia_smi')" 0

# --- Telegraf execd, signal = "STDIN" ---------------------------------------
# a batch's lines: the events come once, in the first batch that has them
nlines=$(grep -vc '^migmon_event' <<<"$lp")
# batch_lines N: the lines of N batches read from the recorder, its event
# lines not counted
batch_lines() {
    local n=0 l
    while [ "$n" -lt "$1" ] && IFS= read -r -t 5 l <&"${REC[0]}"; do
        case "$l" in migmon_event,*) ;; *) n=$((n + 1)) ;; esac
    done
    echo "$n"
}
coproc REC { rec_in h200-mig.ini -o - -f influx --trigger stdin -i 200 --gpm off 2>"$R/stdin.err"; }
rpid=$REC_PID
got=0
printf '\n' >&"${REC[1]}"
got=$(batch_lines "$nlines")
eq "stdin: one newline, one batch" "$got" "$nlines"
IFS= read -r -t 0.8 l <&"${REC[0]}" && bad "stdin: wrote without being asked: $l" || ok
printf '\n\n' >&"${REC[1]}"
got=$(batch_lines $((2 * nlines)))
eq "stdin: two newlines, two batches" "$got" $((2 * nlines))
t0=$(date +%s%N)
exec {REC[1]}>&-
wait "$rpid"; rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
eq "stdin: EOF ends it with status 0" "$rc" 0
[ "$ms" -lt 3000 ] && ok || bad "stdin: took $ms ms to end after EOF"
eq "stdin: nothing on stderr" "$(cat "$R/stdin.err")" ""

# Lines that come before the first snapshot are each answered when it is
# there (up to -n), also when standard input ends before it; the recording
# then ends. The driver takes 0.7 s to initialise here, so the lines and the
# end of input both come first. --duration and a signal still end the
# recording when they come, answered or not.
cp "$MIGMON_SRC/sim/scenarios/h200-mig.ini" "$R/slow-init.ini"
printf '\n[fault.slow-init]\ntarget = system\nfunction = nvmlInit*\ndelay_ms = 700\n' >>"$R/slow-init.ini"
early() { # early ARGS...: the recorder on slow-init.ini, reading the caller's stdin
    exec env MIGMON_SIM_SCENARIO="$R/slow-init.ini" MIGMON_SIM_TIME=100 \
        "$MIGMON_BIN" record --nvml-path "$MIGMON_SIM_LIB" --gpm off "$@"
}
out=$(printf '\n\n\n' | (early --trigger stdin -n 2 2>&1)); rc=$?
eq "stdin ended before the first snapshot: 3 lines, -n 2: 2 batches, status 0" \
    "$(jq -c 'select(.type == null) | .schema' <<<"$out" 2>&1 | tr '\n' ' ')$rc" "1 1 0"
out=$(printf '\n\n\n' | (early --trigger stdin 2>&1)); rc=$?
eq "stdin ended before the first snapshot: 3 lines, 3 batches, status 0" \
    "$(jq -c 'select(.type == null) | .schema' <<<"$out" 2>&1 | tr '\n' ' ')$rc" "1 1 1 0"
out=$(echo | (early --trigger stdin -f influx 2>&1)); rc=$?
eq "stdin ended before the first snapshot: one line, one batch, status 0" \
    "$(grep -c '^migmon_host ' <<<"$out"):$(grep -vc '^migmon_event' <<<"$out"):$rc" "1:$nlines:0"
# a last line without its newline is a line (as a shell's read takes it);
# nothing at all is none
out=$(printf 'a\nb' | (early --trigger stdin 2>&1)); rc=$?
eq "stdin: a last line without a newline is answered too: 2 batches, status 0" \
    "$(jq -c 'select(.type == null) | .schema' <<<"$out" 2>&1 | tr '\n' ' ')$rc" "1 1 0"
out=$(early --trigger stdin </dev/null 2>&1); rc=$?
eq "stdin: empty input, no batch, status 0" "$out:$rc" ":0"
out=$(printf '\n' | (early --trigger stdin --duration 0.3 2>&1)); rc=$?
eq "stdin: --duration ends before the first snapshot, the line unanswered, status 0" "$out:$rc" ":0"
{ printf '\n'; sleep 3; } | early --trigger stdin >"$R/early-sig.out" 2>&1 &
epid=$!
sleep 0.5
kill -TERM "$epid"
wait "$epid"; rc=$?
eq "stdin: SIGTERM before the first snapshot ends it, the line unanswered, status 0" \
    "$(cat "$R/early-sig.out"):$rc" ":0"

# --- Telegraf execd, signal = "none": the end of a piped stdin ends it -----
# Telegraf stops the plugin by closing the program's stdin; in interval mode
# a pipe's end ends the recording, while /dev/null and a regular file (what
# a shell or a service manager gives) keep it running. What comes on the
# pipe before its end is read and dropped.
t0=$(date +%s%N)
{ printf "\n\nnoise\n"; sleep 1; } | rec_in h200-mig.ini -o "$R/none.lp" -f influx -i 200 --gpm off 2>"$R/none.err" &
npid=$!
for ((i = 0; i < 60; i++)); do kill -0 "$npid" 2>/dev/null || break; sleep 0.1; done
ms=$((($(date +%s%N) - t0) / 1000000))
if kill -0 "$npid" 2>/dev/null; then
    bad "stdin pipe closed: still running after $ms ms"
    kill -KILL "$npid" 2>/dev/null
fi
wait "$npid"; rc=$?
eq "stdin pipe closed (interval mode): exit 0" "$rc" 0
[ "$ms" -lt 3000 ] && ok || bad "stdin pipe closed after 1 s: took $ms ms to end"
eq "stdin pipe closed: nothing on stderr" "$(cat "$R/none.err")" ""
[ -s "$R/none.lp" ] && [ -z "$(tail -c 1 "$R/none.lp")" ] && ok ||
    bad "stdin pipe closed: the output is empty or ends inside a line"
eq "stdin pipe closed: every line whole" \
    "$(grep -cvE '^[a-z_]+(,[^ ]+)? [^ ].* [0-9]{19}$' "$R/none.lp")" 0
n=$(grep -c '^migmon_host ' "$R/none.lp")
[ "$n" -ge 2 ] && [ "$n" -le 8 ] && ok || bad "stdin pipe closed after 1 s at 200 ms: $n batches"
printf 'x\n' >"$R/stdin.reg"
rec_bg h200-mig.ini -o "$R/devnull.lp" -f influx -i 200 --gpm off &
dpid=$!
rec_in h200-mig.ini -o "$R/regular.lp" -f influx -i 200 --gpm off <"$R/stdin.reg" &
fpid=$!
sleep 2
kill -0 "$dpid" 2>/dev/null && ok || bad "stdin /dev/null: the recorder ended within 2 s"
kill -0 "$fpid" 2>/dev/null && ok || bad "stdin a regular file: the recorder ended within 2 s"
kill -TERM "$dpid" "$fpid" 2>/dev/null
wait "$dpid"; rc=$?
eq "stdin /dev/null: SIGTERM ends it with status 0" "$rc" 0
wait "$fpid"; rc=$?
eq "stdin a regular file: SIGTERM ends it with status 0" "$rc" 0

# --- a process that execs: its new command line within the re-read cadence --
# Two live processes made GPU processes of the simulated A100 wait for a
# flag, then exec: sh -> sleep (another name: read again at the next tick)
# and sh -> sh (the same exe and name: at the next tick by its new stack
# address, else at the latest 5 s after the previous read;
# docs/processes.md).
flag=$R/exec.go
sh -c 'while [ ! -e "$0" ]; do sleep 0.1; done; exec sleep 61' "$flag" &
xa=$!
sh -c 'while [ ! -e "$0" ]; do sleep 0.1; done; exec sh -c "sleep 62; :"' "$flag" &
xb=$!
printf '%s 0 1000\n%s 0 500\n' "$xa" "$xb" >"$R/exec.ctl"
MIGMON_SIM_PROC_FILE="$R/exec.ctl" rec_bg a100-sxm4-80gb.ini -o "$R/exec.jsonl" -i 250 --gpm off &
rpid=$!
cmds="[.devices[0].processes[] | select(.pid == $xa or .pid == $xb) | .command]"
wait_lines "$R/exec.jsonl" 2 || bad "exec: no records from the recorder"
t_flag=$(date +%s.%N)
: >"$flag"
new='["sleep 61","sh -c sleep 62; :"]'
end=$((SECONDS + 20))
while [ "$SECONDS" -lt "$end" ]; do
    [ "$(tail -n 1 "$R/exec.jsonl" | jq -c "$cmds" 2>/dev/null)" == "$new" ] && break
    sleep 0.1
done
kill -TERM "$rpid"
wait "$rpid"
xbc=$(pgrep -P "$xb") # the second one's sleep, ended after its shell
kill "$xa" "$xb" 2>/dev/null
wait "$xa" "$xb" 2>/dev/null
[ -n "$xbc" ] && kill "$xbc" 2>/dev/null
jeq "exec: the first record shows the command lines before the exec" \
    "$(head -n 1 "$R/exec.jsonl")" "$cmds | map(startswith(\"sh -c while\"))" '[true,true]'
# seconds from the flag to the first record showing each new command line
# (the timestamp is RFC 3339 with milliseconds)
ts='(.timestamp | (.[0:19] + "Z" | fromdateiso8601) + (.[20:23] | tonumber) / 1000)'
for want in 'sleep 61' 'sh -c sleep 62; :'; do
    late=$(jq -rs --arg w "$want" --argjson t "$t_flag" \
        "[.[] | select($cmds | index([\$w])) | $ts - \$t][0] // \"never\"" "$R/exec.jsonl")
    case $late in
    never) bad "exec: '$want' never shown within 20 s" ;;
    *) awk -v s="$late" 'BEGIN { exit !(s ~ /^-?[0-9.]+$/ && s + 0 <= 7) }' && ok ||
        bad "exec: '$want' shown $late s after the exec (cadence 5 s, 2 s slack)" ;;
    esac
done
