# shellcheck shell=bash
# A real Prometheus holding a synthetic fleet (tests/fleet/synth.py), for
# the end-to-end tests and the benchmarks. Source it, then:
#
#   promfleet_build DIR SYNTH-ARGS...   the fleet's OpenMetrics text written
#       by synth.py, backfilled into DIR/data with promtool (the text is
#       removed afterwards); DIR/truth.json is the truth file. Sets what
#       it cost: PROMFLEET_GEN_S and PROMFLEET_FILL_S (wall seconds),
#       PROMFLEET_GEN_KB and PROMFLEET_FILL_KB (peak RSS, rusage.py),
#       PROMFLEET_OM_BYTES (the text's size), PROMFLEET_DATA_KB (the blocks').
#   promfleet_start DIR [LOOKBACK]      Prometheus on DIR/data, listening on a
#       free port of 127.0.0.1, ready (/-/ready); sets PROMFLEET_URL and
#       PROMFLEET_PID. LOOKBACK (seconds) defaults to the truth file's.
#   promfleet_stop                      stops it and waits for it.
#
# Each returns non-zero with a message on stderr when a step fails.
#
# Why a lookback: the samples are written before Prometheus starts and end
# shortly before that (the truth file's `end`), while an instant query sees
# a series only when its last sample is within --query.lookback-delta
# before the query's time (5 minutes by default; no staleness marker can be
# written in the text format). Prometheus gets the lookback the truth file
# names, the gap before the end at which the variants' stopped series
# stopped, less a step: the live series are seen until end + lookback
# (`valid_until`), the stopped ones never after `end`, as a scraping
# Prometheus would have them (stale). A fleet without stopped series can be
# given a longer one (the benchmarks: an hour).
#
# Blocks: promtool 2.42 has no --max-block-duration for OpenMetrics; it cuts
# blocks of the default 2 h, aligned to multiples of 2 h since the epoch, so
# data of the last minutes makes one block (two across such a boundary).
# Prometheus 2.42 loads blocks that end at the present (its head is empty:
# nothing is scraped, the configuration has no targets).

PROMFLEET_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROMFLEET_PY=/usr/bin/python3
[ -x "$PROMFLEET_PY" ] || PROMFLEET_PY=python3
PROMFLEET_PID=
PROMFLEET_URL=

# shellcheck disable=SC2034 # PROMFLEET_*: for the caller
promfleet_build() {
    local dir=$1 g
    shift
    mkdir -p "$dir" || return 1
    rm -rf "$dir/data"
    "$PROMFLEET_PY" "$PROMFLEET_HERE/rusage.py" "$dir/synth.cost" "$PROMFLEET_PY" \
        "$PROMFLEET_HERE/synth.py" --out "$dir/fleet.om" --truth "$dir/truth.json" "$@" ||
        { echo "promfleet: synth.py failed" >&2; return 1; }
    PROMFLEET_OM_BYTES=$(stat -c %s "$dir/fleet.om")
    if ! "$PROMFLEET_PY" "$PROMFLEET_HERE/rusage.py" "$dir/promtool.cost" \
        promtool tsdb create-blocks-from openmetrics -q "$dir/fleet.om" "$dir/data" \
        >"$dir/promtool.log" 2>&1; then
        rm -f "$dir/fleet.om"
        echo "promfleet: promtool failed: $(tail -3 "$dir/promtool.log")" >&2
        return 1
    fi
    rm -f "$dir/fleet.om"
    read -r PROMFLEET_GEN_S g _ <"$dir/synth.cost"
    read -r PROMFLEET_FILL_S PROMFLEET_FILL_KB _ <"$dir/promtool.cost"
    PROMFLEET_GEN_KB=$g
    PROMFLEET_DATA_KB=$(du -sk "$dir/data" | cut -f1)
}

# promfleet_free_port: a port of 127.0.0.1 nothing listens on now
promfleet_free_port() {
    local p
    for p in $(shuf -i 20000-60000 -n 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
    done
    return 1
}

promfleet_start() {
    local dir=$1 lookback=${2:-} port i
    if [ -z "$lookback" ]; then
        lookback=$(jq -r '.lookback' "$dir/truth.json") || return 1
    fi
    printf 'global:\n  scrape_interval: 1h\nscrape_configs: []\n' >"$dir/prometheus.yml"
    # a port found free may be taken before Prometheus binds it: try again
    for _ in 1 2 3; do
        port=$(promfleet_free_port) || break
        prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
            --web.listen-address="127.0.0.1:$port" --query.lookback-delta="${lookback}s" \
            --storage.tsdb.retention.time=30d --log.level=warn >"$dir/prometheus.log" 2>&1 &
        PROMFLEET_PID=$!
        PROMFLEET_URL="http://127.0.0.1:$port"
        for ((i = 0; i < 1200; i++)); do
            kill -0 "$PROMFLEET_PID" 2>/dev/null || break
            curl -sf -m 2 -o /dev/null "$PROMFLEET_URL/-/ready" && return 0
            sleep 0.05
        done
        promfleet_stop
    done
    echo "promfleet: Prometheus did not become ready: $(tail -3 "$dir/prometheus.log")" >&2
    return 1
}

promfleet_stop() {
    [ -n "$PROMFLEET_PID" ] || return 0
    kill -TERM "$PROMFLEET_PID" 2>/dev/null
    wait "$PROMFLEET_PID" 2>/dev/null
    PROMFLEET_PID=
}

# promfleet_query EXPR: the instant query's answer (JSON) at the present
promfleet_query() {
    curl -s -m 30 --data-urlencode "query=$1" "$PROMFLEET_URL/api/v1/query"
}
