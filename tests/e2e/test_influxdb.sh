# shellcheck shell=bash
# A real InfluxDB 1.x ingests the line protocol: a temporary influxd on
# loopback (Debian package influxdb, installed by scripts/deps.sh), the
# batches written through its HTTP /write API, values and types read back
# with InfluxQL. A missing influxd or curl is a failure, not a skip.

for tool in influxd curl; do
    if ! command -v "$tool" >/dev/null; then
        bad "$tool is required for the line-protocol test (Debian packages influxdb and curl;" \
            "scripts/deps.sh installs them)"
        return 0
    fi
done
ID=$TMP/influxdb
mkdir -p "$ID"
influx_start() { # influx_start PORT: 0 when /ping answers within 30 s
    cat >"$ID/influxdb.conf" <<CONF
reporting-disabled = true
bind-address = "127.0.0.1:$(($1 + 1))"
[meta]
  dir = "$ID/meta"
[data]
  dir = "$ID/data"
  wal-dir = "$ID/wal"
  query-log-enabled = false
[monitor]
  store-enabled = false
[continuous_queries]
  enabled = false
[http]
  bind-address = "127.0.0.1:$1"
  log-enabled = false
CONF
    # bounded: whatever happens to this test, influxd is gone in 5 min
    timeout 300 influxd run -config "$ID/influxdb.conf" >"$ID/log" 2>&1 &
    IPID=$!
    for ((t = 0; t < 150; t++)); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/ping")" = 204 ] && return 0
        kill -0 "$IPID" 2>/dev/null || return 1
        sleep 0.2
    done
    return 1
}
started=0
for try in 1 2 3; do
    PORT=$((20000 + RANDOM % 20000))
    if influx_start "$PORT"; then started=1; break; fi
    kill "$IPID" 2>/dev/null; wait "$IPID" 2>/dev/null
done
if [ "$started" != 1 ]; then
    bad "influxd did not start on loopback: $(tail -5 "$ID/log")"
else
    U=http://127.0.0.1:$PORT
    q() { # q INFLUXQL: the JSON answer
        curl -s -G "$U/query" --data-urlencode db=migmon --data-urlencode "q=$1"
    }
    write() { # write FILE: the HTTP status of /write (204: every point taken)
        curl -s -o "$ID/write.out" -w '%{http_code}' -XPOST "$U/write?db=migmon&precision=ns" \
            --data-binary @"$1"
    }
    curl -s -XPOST "$U/query" --data-urlencode "q=CREATE DATABASE migmon" >/dev/null

    # two batches from the record stream, one tick apart
    rec_i() {
        MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/$1" MIGMON_SIM_TIME=100 \
            "$MIGMON_BIN" record --nvml-path "$MIGMON_SIM_LIB" "${@:2}" </dev/null
    }
    rec_i h200-mig.ini -f influx -o - -n 2 -i 100 --gpm off >"$ID/h200.lp"
    eq "influxdb: /write takes the h200-mig stream" "$(write "$ID/h200.lp")" 204
    jeq "influxdb: nvidia_smi memory_total (MiB) of the GPU, both batches" \
        "$(q "SELECT memory_total FROM nvidia_smi WHERE uuid = 'GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8'")" \
        '[.results[0].series[0].values[][1]]' '[143771,143771]'
    jeq "influxdb: nvidia_smi_mig memory_fb_used of MIG 3g.71gb" \
        "$(q "SELECT last(memory_fb_used) FROM nvidia_smi_mig WHERE mig_uuid = 'MIG-760076c7-d3b3-392a-4dba-0e98392dab98'")" \
        '.results[0].series[0].values[0][1]' 42535
    jeq "influxdb: MIG tags as Telegraf's (index, gpu_index, compute_index)" \
        "$(q "SELECT memory_fb_total FROM nvidia_smi_mig WHERE \"index\" = '1' AND gpu_index = '5' AND compute_index = '0' LIMIT 1")" \
        '.results[0].series[0].values[0][1]' 33280
    jeq "influxdb: h200-mig's Xid 94, one point in two batches, on its MIG device" \
        "$(q "SELECT \"count\", code, meaning FROM migmon_event WHERE mig_uuid = 'MIG-3b36b6e9-53c9-a66e-40ad-6c326efaf3d0' AND xid = '94' AND gi_id = '5'")" \
        '[.results[0].series[0].values[] | .[1:]]' \
        '[[1,94,"contained ECC error (only the processes using the bad memory were affected)"]]'
    jeq "influxdb: migmon_event field types" "$(q 'SHOW FIELD KEYS FROM migmon_event')" \
        '[.results[0].series[0].values[]] | sort' \
        '[["action","string"],["code","integer"],["count","integer"],["meaning","string"]]'
    jeq "influxdb: field types" "$(q 'SHOW FIELD KEYS FROM nvidia_smi')" \
        '[.results[0].series[0].values[] | select(.[0] == "memory_total" or .[0] == "power_draw" or .[0] == "temperature_gpu" or .[0] == "driver_version")] | sort' \
        '[["driver_version","string"],["memory_total","integer"],["power_draw","float"],["temperature_gpu","integer"]]'

    # an AMD MI300X in CPX (fixture) beside them: the same measurements,
    # told apart by the vendor tag every point has
    "$MIGMON_BIN" --backend amdgpu --sysfs-root "$MIGMON_SRC/tests/fixtures/sysfs/mi300x-cpx" \
        --proc-root "$MIGMON_SRC/tests/fixtures/proc/amd-cpx" --once --format influx >"$ID/amd.lp"
    eq "influxdb: /write takes the MI300X batch" "$(write "$ID/amd.lp")" 204
    jeq "influxdb: vendor tag values of nvidia_smi" "$(q 'SHOW TAG VALUES FROM nvidia_smi WITH KEY = "vendor"')" \
        '[.results[0].series[0].values[][1]]' '["amd","nvidia"]'
    jeq "influxdb: the MI300X's power and GTT in use, by vendor" \
        "$(q "SELECT power_draw, gtt_used_bytes FROM nvidia_smi WHERE vendor = 'amd'")" \
        '.results[0].series[0].values[0][1:]' '[412,3145728]'
    jeq "influxdb: its 8 partitions on nvidia_smi_mig, vendor amd" \
        "$(q "SELECT count(utilization_gpu) FROM nvidia_smi_mig WHERE vendor = 'amd'")" \
        '.results[0].series[0].values[0][1]' 8
    jeq "influxdb: partition 5's activity" \
        "$(q "SELECT utilization_gpu FROM nvidia_smi_mig WHERE vendor = 'amd' AND mig_uuid = 'AMD-4f1c2d3e5a6b7c80-P5'")" \
        '.results[0].series[0].values[0][1]' 60
    jeq "influxdb: its processes, vendor amd" \
        "$(q "SELECT pid, used_memory FROM nvidia_smi_process WHERE vendor = 'amd'")" \
        '[.results[0].series[0].values[] | .[1:]] | sort' '[[7001,4096],[7002,1024],[7003,2]]'
    jeq "influxdb: the H200's Xid has vendor nvidia" \
        "$(q "SELECT \"count\" FROM migmon_event WHERE vendor = 'nvidia' AND xid = '94'")" \
        '[.results[0].series[0].values[][1]]' '[1]'

    # every Telegraf integer field of the a100 is an integer in InfluxDB
    rec_i a100-sxm4-80gb.ini -f influx -o - -n 1 --gpm off >"$ID/a100.lp"
    eq "influxdb: /write takes the a100 batch" "$(write "$ID/a100.lp")" 204
    jeq "influxdb: a100 utilization_gpu" \
        "$(q "SELECT utilization_gpu FROM nvidia_smi WHERE uuid = 'GPU-4c1d2a9e-7b3f-4e51-9c0a-3e8d5f6a7b21'")" \
        '.results[0].series[0].values[0][1]' 42
    # its two processes are not visible from here (no name): two points
    jeq "influxdb: two unnamed processes on one GPU are two points" \
        "$(q "SELECT pid FROM nvidia_smi_process WHERE uuid = 'GPU-4c1d2a9e-7b3f-4e51-9c0a-3e8d5f6a7b21'")" \
        '[.results[0].series[0].values[][1]] | sort' '[31337,31402]'

    # hostile strings survive the round trip
    hostile_proc_root "$ID/hproc"
    MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/hostile.ini" MIGMON_SIM_TIME=100 \
        "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" --once --format influx --gpm off \
        --proc-root "$ID/hproc" >"$ID/hostile.lp"
    eq "influxdb: /write takes the hostile batch" "$(write "$ID/hostile.lp")" 204
    eq "influxdb: ... with no error" "$(cat "$ID/write.out")" ""
    jeq "influxdb: a process name with space, comma, '=', quotes and a trailing backslash" \
        "$(q 'SELECT pid, command FROM nvidia_smi_process WHERE pid = 4242')" \
        '.results[0].series[0].values[0][1:]' '[4242,"run \"quoted, a=b\" back\\slash"]'
    jeq "influxdb: ... its name tag" \
        "$(q 'SHOW TAG VALUES FROM nvidia_smi_process WITH KEY = "name" WHERE "type" = '"'C'"' AND uuid = '"'GPU-0c0c0c0c-1111-4222-8333-444444444444'")" \
        '[.results[0].series[0].values[][1]] | index("ev il,x=1 \"q\"?") != null' true
    jeq "influxdb: the hostile GPU's name tag with its spaces" \
        "$(q 'SHOW TAG VALUES FROM nvidia_smi WITH KEY = "name"')" \
        '[.results[0].series[0].values[][1] | select(startswith("NVIDIA ?[2J?]0;title?A100?31m "))] | length' 1
    # an event whose GPU UUID (as the events helper reads it) holds a space,
    # a comma, '=', quotes, an escape and a trailing backslash
    sed -n '1,/^\[gpu\.1\]/p' "$MIGMON_SRC/sim/scenarios/hostile.ini" | sed '$d' >"$ID/hev.ini"
    sed -i 's/^uuid = GPU-0c0c0c0c-1111-4222-8333-444444444444$/&\nuuid_raw = GPU-ev il,x=1 "q"\\e[2J\\\\/' "$ID/hev.ini"
    printf '\n[event.bus]\nt = 1\ngpu = 0\nxid = 79\n' >>"$ID/hev.ini"
    MIGMON_SIM_SCENARIO="$ID/hev.ini" MIGMON_SIM_TIME=5 "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" \
        --once --format influx --gpm off >"$ID/hev.lp"
    eq "influxdb: /write takes the hostile event" "$(write "$ID/hev.lp")" 204
    jeq "influxdb: ... one point" \
        "$(q "SELECT code FROM migmon_event WHERE xid = '79'")" \
        '[.results[0].series[0].values[] | .[1]]' '[79]'
    jeq "influxdb: ... the tag value" "$(q 'SHOW TAG VALUES FROM migmon_event WITH KEY = "uuid" WHERE xid = '"'79'")" \
        '[.results[0].series[0].values[][1]]' '["GPU-ev il,x=1 \"q\"?[2J?"]'
    jeq "influxdb: an N/A field is absent, not 0 (hostile GPU 0 utilisation)" \
        "$(q "SELECT utilization_gpu FROM nvidia_smi WHERE uuid = 'GPU-0c0c0c0c-1111-4222-8333-444444444444'")" \
        '.results[0].series' null
fi
kill "$IPID" 2>/dev/null
wait "$IPID" 2>/dev/null
