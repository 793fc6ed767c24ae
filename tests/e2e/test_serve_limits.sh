# shellcheck shell=bash
# The exporter answers a scrape within 1 s while it is attacked, on
# loopback only (tests/e2e/http_clients.py makes the clients):
# 1. slowloris: 1,000 connections from ten addresses (127.0.0.1, the
#    scraper's, among them), each sending a header byte every 2 s and
#    opening again 0.5 s after the server closes it; scrapes during it.
# 2. a flood: 1,000 connections sending GET /metrics back to back from the
#    scraper's own address, each opened again at once when closed; scrapes
#    during it and right after it.
# 3. the request deadline: 20 connections that no bound closes, sending a
#    byte every 2 s (never silent long enough for an idle timeout), are
#    closed 10 s after they were opened.
# 4. a low soft RLIMIT_NOFILE is raised to what the bounds need; a low hard
#    one lowers the connection bound, and export says so.
# About 16 s. Everything started here is stopped by PID at the end.
if ! command -v curl >/dev/null || [ ! -x /usr/bin/python3 ]; then
    bad "curl and /usr/bin/python3 are required for the exporter's limits test (scripts/deps.sh installs them)"
    return 0
fi
LIM_CLIENTS="$MIGMON_SRC/tests/e2e/http_clients.py"
LIM_PIDS=()

# Each client process holds about 1,000 sockets, export about 600.
lim_soft=$(ulimit -Sn)
lim_hard=$(ulimit -Hn)
if [ "$lim_hard" != unlimited ] && [ "$lim_hard" -lt 4096 ]; then ulimit -Hn 4096 2>/dev/null; fi
ulimit -Sn 4096 2>/dev/null || bad "cannot raise the open-file limit to 4096 (run as root, or raise it)"

# lim_start NAME ARGS...: export on h200-mig on a free loopback port, under
# the shell's limits, once its page is whole; sets LPORT and LPID.
lim_start() {
    local name=$1 i
    shift
    MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/h200-mig.ini" MIGMON_SIM_TIME=100 \
        "$MIGMON_BIN" export --nvml-path "$MIGMON_SIM_LIB" --listen 127.0.0.1:0 -i 500 "$@" \
        2>"$TMP/lim-$name.err" &
    LPID=$!
    LIM_PIDS+=("$LPID")
    LPORT=$(export_port "$TMP/lim-$name.err")
    [ -n "$LPORT" ] || bad "$name: export did not start: $(cat "$TMP/lim-$name.err")"
    # the MIG series need two GPM samples (a tick)
    for ((i = 0; i < 100; i++)); do
        curl -s -m 2 "http://127.0.0.1:$LPORT/metrics" | grep -q '^migmon_mig_utilization_ratio{gpu="0"' &&
            return 0
        sleep 0.1
    done
    bad "$name: /metrics never had the MIG series"
}
# lim_clients NAME MODE PORT ARGS...: http_clients.py in the background,
# its summary in $TMP/lim-NAME.json; waits until every connection has been
# tried (5 s at most). Sets CPID.
lim_clients() {
    local name=$1 i
    shift
    rm -f "$TMP/lim-$name.ready"
    /usr/bin/python3 "$LIM_CLIENTS" "$@" --ready "$TMP/lim-$name.ready" --out "$TMP/lim-$name.json" &
    CPID=$!
    for ((i = 0; i < 60; i++)); do
        [ -e "$TMP/lim-$name.ready" ] && return 0
        sleep 0.1
    done
    bad "$name: the clients never got going"
}
# lim_scrape WHAT: one scrape timed by curl: status 200 and the page (the
# H200's MIG series) within LIM_BOUND_MS. Its milliseconds are added to LIM_MS.
lim_scrape() {
    local out code ms
    rm -f "$TMP/lim.page"
    local cerr
    out=$(curl -sS -o "$TMP/lim.page" -w '%{http_code} %{time_total}' --max-time 3 \
        "http://127.0.0.1:$LPORT/metrics" 2>"$TMP/lim.curl")
    code=${out% *}
    ms=$(awk -v t="${out#* }" 'BEGIN { printf "%d", t * 1000 }')
    LIM_MS+=" $ms"
    cerr=$(head -c 200 "$TMP/lim.curl")
    eq "$1: status" "$code${cerr:+ ($cerr)}" 200
    if grep -qs '^migmon_mig_utilization_ratio{gpu="0"' "$TMP/lim.page"; then ok; else
        bad "$1: not the page ($(head -c 200 "$TMP/lim.page" 2>/dev/null))"
    fi
    [ "$ms" -lt "$LIM_BOUND_MS" ] && ok || bad "$1: took $ms ms, more than $LIM_BOUND_MS ms"
}
lim_json() { jq -r "$2" "$TMP/lim-$1.json" 2>/dev/null; }

# A second exporter with nothing else on it, for the deadline (3): its 20
# slow connections run through 1 and 2.
lim_start deadline
DPORT=$LPORT
lim_clients deadline slow "$DPORT" --conns 20 --sources 1 --every 2 --reconnect -1 --seconds 12.5
DCPID=$CPID
lim_start main
MPID=$LPID
# The bound is 1 s. A sanitizer build does all it does several times slower
# (a flood's scrapes take 3-10 times as long): 2 s there, still well short
# of the no answer at all (curl's 3 s) that unbounded connections give.
LIM_BOUND_MS=1000
if grep -qE 'lib(a|t)san' "/proc/$MPID/maps"; then
    LIM_BOUND_MS=2000
    echo "     (sanitizer build: scrapes bounded at 2 s, not 1 s)"
fi

# === 1. slowloris =============================================================
lim_clients slow slow "$LPORT" --conns 1000 --sources 10 --every 2 --reconnect 0.5 --seconds 60
LIM_MS=
for ((k = 0; k < 5; k++)); do
    lim_scrape "slowloris, scrape $k"
    sleep 0.8
done
kill -TERM "$CPID"
wait "$CPID"
echo "     (1,000 slow connections: scrapes took$LIM_MS ms; $(lim_json slow .open_at_end) held open at the end, $(lim_json slow .server_closed) closed by the server)"
[ "$(lim_json slow .open_at_end)" -ge 400 ] && ok ||
    bad "slowloris: only $(lim_json slow .open_at_end) slow connections held at once: not an attack"

# === 2. flood =================================================================
lim_clients flood flood "$LPORT" --conns 1000 --sources 1 --seconds 60
LIM_MS=
for ((k = 0; k < 5; k++)); do
    lim_scrape "flood, scrape $k"
    sleep 0.8
done
during=$LIM_MS
kill -TERM "$CPID"
wait "$CPID"
LIM_MS=
for ((k = 0; k < 3; k++)); do lim_scrape "right after the flood, scrape $k"; done
echo "     (1,000 flooding connections: scrapes took$during ms during, $LIM_MS ms right after; $(lim_json flood '.answers["200"] // 0') pages served to the flood)"
[ "$(lim_json flood '.answers["200"] // 0')" -ge 1000 ] && ok || bad "flood: only $(lim_json flood '.answers["200"] // 0') answers: not a flood"
kill -0 "$MPID" 2>/dev/null && ok || bad "export died under the attacks"

# === 3. the request deadline ==================================================
wait "$DCPID"
echo "     (slow connections alone: $(lim_json deadline .server_closed) of 20 closed after $(lim_json deadline .min_life_closed_s)-$(lim_json deadline .max_life_closed_s) s)"
eq "deadline: every slow connection closed by the server" "$(lim_json deadline .server_closed)" 20
eq "deadline: 10 s after it was opened (±1 s), though never idle for 2 s" \
    "$(lim_json deadline '.min_life_closed_s >= 9 and .max_life_closed_s <= 11')" true

# === 4. RLIMIT_NOFILE =========================================================
(ulimit -Sn 256 && exec env MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/h200-mig.ini" \
    "$MIGMON_BIN" export --nvml-path "$MIGMON_SIM_LIB" --listen 127.0.0.1:0 2>"$TMP/lim-soft.err") &
LIM_PIDS+=($!)
(ulimit -n 300 && exec env MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/h200-mig.ini" \
    "$MIGMON_BIN" export --nvml-path "$MIGMON_SIM_LIB" --listen 127.0.0.1:0 2>"$TMP/lim-hard.err") &
LIM_PIDS+=($!)
for ((i = 0; i < 100; i++)); do
    grep -q /metrics "$TMP/lim-soft.err" 2>/dev/null && grep -q /metrics "$TMP/lim-hard.err" 2>/dev/null && break
    sleep 0.05
done
eq "soft open-file limit 256: raised to 512 connections + 64 + 64" \
    "$(awk '/^Max open files/ {print $4}' "/proc/${LIM_PIDS[-2]}/limits")" 640
eq "soft open-file limit 256: nothing to say" "$(grep -v serving "$TMP/lim-soft.err")" ""
eq "hard open-file limit 300: export says how many connections fit" "$(grep -v serving "$TMP/lim-hard.err")" \
    "mig-gpu-mon: the open-file limit (300) leaves room for 172 connections at once, not 512"

for p in "${LIM_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
for p in "${LIM_PIDS[@]}"; do
    for ((i = 0; i < 100; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
    if kill -0 "$p" 2>/dev/null; then
        bad "export (PID $p) still runs 5 s after SIGTERM"
        kill -KILL "$p" 2>/dev/null
    fi
    wait "$p"
    eq "export ends on SIGTERM with status 0" "$?" 0
done
ulimit -Sn "$lim_soft"
ulimit -Hn "$lim_hard" 2>/dev/null
