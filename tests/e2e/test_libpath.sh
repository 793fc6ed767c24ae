# shellcheck shell=bash
# No vendor library is ever loaded from the current directory
# (src/core/libpath.c): a library planted there under each name we dlopen
# (NVML, DCGM, libcurl, libmicrohttpd, libnghttp2, libprotobuf-c), whose
# constructor writes a marker, never runs, whatever LD_LIBRARY_PATH holds:
# an empty entry (':', '/x:', ':/x') and a relative one ('.', 'x') are the
# current directory to the dynamic linker. The real libraries are still
# found (through the ld.so cache), and the simulator still loads through
# an absolute LD_LIBRARY_PATH entry and --nvml-path.
# What the dynamic linker loads on its own is not ours to choose: the
# libraries the program needs at start, and those a vendor library needs
# (libcurl's libnghttp2), follow LD_LIBRARY_PATH as ld.so reads it, empty
# entries included (docs/decisions.md); the libcurl run's directory holds
# only libcurl's names for that reason.
PL="$TMP/plant"
PLC="$TMP/plant-curl"
mkdir -p "$PL/x" "$PLC/x" "$TMP/plant-nowhere"
cat >"$TMP/plant.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* what a planted library would do: run code in the process that loads it */
__attribute__((constructor)) static void planted(void)
{
    Dl_info di;
    const char *m = getenv("MIGMON_PLANT_MARKER");
    if (!m || !dladdr((void *)planted, &di) || !di.dli_fname)
        return;
    int fd = open(m, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        ssize_t n = write(fd, di.dli_fname, strlen(di.dli_fname));
        n = write(fd, "\n", 1);
        (void)n;
        close(fd);
    }
}
EOF
if ! cc -shared -fPIC -o "$TMP/plant.so" "$TMP/plant.c"; then
    bad "libpath: cannot build the planted library"
    return 0
fi
for n in libnvidia-ml.so.1 libnvidia-ml.so libdcgm.so.4 libdcgm.so.3 libcurl.so.4 \
    libcurl-gnutls.so.4 libmicrohttpd.so.12 libnghttp2.so.14 libprotobuf-c.so.1; do
    cp "$TMP/plant.so" "$PL/$n"
    cp "$TMP/plant.so" "$PL/x/$n"
done
for n in libcurl.so.4 libcurl-gnutls.so.4; do
    cp "$TMP/plant.so" "$PLC/$n"
    cp "$TMP/plant.so" "$PLC/x/$n"
done
export MIGMON_PLANT_MARKER="$TMP/plant.marker"
# a socket file nobody listens on: the pod labels' libraries are opened
# before the connection is tried
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$PL/kubelet.sock"
SCN="$MIGMON_SRC/sim/scenarios"

planted() { # planted DESC: the marker must not exist
    if [ -e "$MIGMON_PLANT_MARKER" ]; then
        bad "$1: a library in the current directory was loaded: $(tr '\n' ' ' <"$MIGMON_PLANT_MARKER")"
        rm -f "$MIGMON_PLANT_MARKER"
    else
        ok
    fi
}

for llp in ':' "$TMP/plant-nowhere:" ":$TMP/plant-nowhere" '.' 'x'; do
    rm -f "$MIGMON_PLANT_MARKER"
    # NVML: the bare names libnvidia-ml.so.1 and libnvidia-ml.so
    out=$(cd "$PL" && LD_LIBRARY_PATH="$llp" "$MIGMON_BIN" --once --format json 2>/dev/null)
    planted "NVML, LD_LIBRARY_PATH='$llp'"
    jeq "NVML, LD_LIBRARY_PATH='$llp': no GPU, host there" "$out" \
        '[.devices, (.host.cpu.online > 0)]' '[[],true]'
    # DCGM: the helper's libdcgm.so.4 and libdcgm.so.3, on an Ampere scenario
    out=$(cd "$PL" && LD_LIBRARY_PATH="$llp" MIGMON_SIM_SCENARIO="$SCN/dgx-a100-8x7.ini" \
        MIGMON_SIM_TIME=100 "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" --once --format json \
        2>/dev/null)
    planted "DCGM, LD_LIBRARY_PATH='$llp'"
    jeq "DCGM, LD_LIBRARY_PATH='$llp': not installed, said" "$out" '.dcgm' \
        '"DCGM not installed (no libdcgm.so.4 or libdcgm.so.3)"'
    # libcurl: the fleet view; nothing listens on port 9, so the query fails
    # after libcurl loaded
    err=$(cd "$PLC" && LD_LIBRARY_PATH="$llp" timeout 20 "$MIGMON_BIN" --once \
        --prometheus http://127.0.0.1:9 2>&1 >/dev/null)
    planted "libcurl, LD_LIBRARY_PATH='$llp'"
    case "$err" in
    *"needs libcurl"* | *"lacks curl_"*) bad "libcurl, LD_LIBRARY_PATH='$llp': not loaded: $err" ;;
    *) ok ;;
    esac
    # libmicrohttpd, libnghttp2, libprotobuf-c: the exporter with pod labels
    (cd "$PL" && LD_LIBRARY_PATH="$llp" MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" \
        exec "$MIGMON_BIN" export --nvml-path "$MIGMON_SIM_LIB" --listen 127.0.0.1:0 \
        --kubelet-socket "$PL/kubelet.sock" 2>"$TMP/plant-export.err") &
    epid=$!
    port=$(export_port "$TMP/plant-export.err")
    for _ in $(seq 50); do grep -q 'kubelet:' "$TMP/plant-export.err" && break; sleep 0.1; done
    kill -TERM "$epid" 2>/dev/null
    wait "$epid"
    planted "libmicrohttpd, libnghttp2, libprotobuf-c, LD_LIBRARY_PATH='$llp'"
    [ -n "$port" ] && ok || bad "export, LD_LIBRARY_PATH='$llp': no server: $(cat "$TMP/plant-export.err")"
    contains "export, LD_LIBRARY_PATH='$llp': the kubelet asked (its libraries loaded)" \
        "$(cat "$TMP/plant-export.err")" "kubelet: $PL/kubelet.sock: nothing listens on the socket (connection refused)"
done

# the simulator through an absolute LD_LIBRARY_PATH entry beside an empty
# one, from the directory with the planted libraries
mkdir -p "$TMP/plant-sim"
ln -sf "$MIGMON_SIM_LIB" "$TMP/plant-sim/libnvidia-ml.so.1"
rm -f "$MIGMON_PLANT_MARKER"
out=$(cd "$PL" && LD_LIBRARY_PATH=":$TMP/plant-sim" MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" \
    MIGMON_SIM_TIME=100 "$MIGMON_BIN" --once --format json)
planted "the simulator through LD_LIBRARY_PATH=':DIR'"
jeq "the simulator through LD_LIBRARY_PATH=':DIR': the A100" "$out" '[.devices[].name]' \
    '["NVIDIA A100-SXM4-80GB"]'
# --nvml-path: a relative path, and a name without a '/', are the files the
# user named (in the current directory), not a search
out=$(cd "$TMP/plant-sim" && MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" MIGMON_SIM_TIME=100 \
    "$MIGMON_BIN" --once --format json --nvml-path libnvidia-ml.so.1)
jeq "--nvml-path NAME: the file in the current directory" "$out" '[.devices[].name]' \
    '["NVIDIA A100-SXM4-80GB"]'
out=$(cd "$TMP" && MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" MIGMON_SIM_TIME=100 \
    "$MIGMON_BIN" --once --format json --nvml-path plant-sim/libnvidia-ml.so.1)
jeq "--nvml-path DIR/NAME: relative to the current directory" "$out" '[.devices[].name]' \
    '["NVIDIA A100-SXM4-80GB"]'
unset MIGMON_PLANT_MARKER
