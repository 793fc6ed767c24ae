# shellcheck shell=bash
# libmigmon: the C and Python examples of docs/library.md, compiled and run
# as they stand there, on the simulator (its libnvidia-ml.so.1 found through
# LD_LIBRARY_PATH, as a real driver's would be), with the process
# registering itself as a GPU process (MIGMON_SIM_PROC_FILE); the exported
# symbols; the pkg-config file of an installed copy.
PUB=${MIGMON_PUB_DIR:-}
if [ ! -e "$PUB/libmigmon.so.0" ]; then
    bad "library: $PUB/libmigmon.so.0 is not built (make lib)"
    return 0
fi
doc="$MIGMON_SRC/docs/library.md"
block() { # block LANG: the first fenced block of that language in docs/library.md
    awk -v l="$1" '$0 == "```" l { on = 1; next } on && $0 == "```" { exit } on { print }' "$doc"
}
block c >"$TMP/example.c"
block python >"$TMP/example.py"
cc -Wall -Wextra -Werror -I"$MIGMON_SRC/include" "$TMP/example.c" -L"$PUB" -lmigmon \
    -o "$TMP/example"
eq "library: the C example compiles against the shared library" "$?" 0
# the plain build's simulator beside the plain library (a sanitizer build's
# simulator would need its runtime loaded first)
simdir="$(dirname "$PUB")/sim"
export MIGMON_SIM_PROC_FILE="$TMP/lib.ctl"
# the example's PID is the shell's after exec: it registers 700 MiB on GPU 0
out=$(MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/a100-sxm4-80gb.ini" \
    LD_LIBRARY_PATH="$PUB:$simdir" sh -c 'echo "$$ 0 700" >"$MIGMON_SIM_PROC_FILE"; exec "$1"' sh \
    "$TMP/example")
eq "library: C example's GPU peak is its 700 MiB, by NVML's process list" "$(printf '%s\n' "$out" | head -1)" \
    "Peak GPU Memory: 734003200 bytes (nvml_process_allocation)"
contains "library: C example's CPU peak" "$out" "Peak CPU Memory: "
# static: the same program without the shared library at run time
cc -I"$MIGMON_SRC/include" "$TMP/example.c" "$PUB/libmigmon.a" -ldl -lm -pthread \
    -o "$TMP/example-static"
out=$(MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/a100-sxm4-80gb.ini" LD_LIBRARY_PATH="$simdir" \
    sh -c 'echo "$$ 0 300" >"$MIGMON_SIM_PROC_FILE"; exec "$1"' sh "$TMP/example-static")
eq "library: the static archive works the same" "$(printf '%s\n' "$out" | head -1)" \
    "Peak GPU Memory: 314572800 bytes (nvml_process_allocation)"
# no driver: unavailable, and the program still runs
out=$(LD_LIBRARY_PATH="$PUB:$TMP/nowhere" "$TMP/example")
eq "library: without NVML the program runs" "$?" 0
contains "library: without NVML the metric is unavailable" "$out" "(unavailable)"
# return codes and messages are per call: a sample that fails says so
# (MIGMON_EGPU and the reason), and a later good call says ""
cat >"$TMP/errors.c" <<'C'
#include <migmon.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    migmon_t *m;
    int rc = migmon_open(&m, argc > 1 ? argv[1] : NULL, 50);
    printf("open %d [%s]\n", rc, migmon_last_error(NULL));
    if (rc != MIGMON_OK)
        return 0;
    migmon_watch_self(m);
    for (int i = 0; i < 4; i++) {
        rc = migmon_sample(m);
        printf("sample %d [%s]\n", rc, migmon_last_error(m));
    }
    struct migmon_peaks p;
    rc = migmon_peaks(m, &p);
    printf("peaks %d [%s] %s %llu\n", rc, migmon_last_error(m), p.gpu_memory_metric,
           p.peak_gpu_memory_bytes);
    migmon_close(m);
    return 0;
}
C
cc -Wall -Wextra -Werror -I"$MIGMON_SRC/include" "$TMP/errors.c" -L"$PUB" -lmigmon -o "$TMP/errors"
eq "library: the error program compiles" "$?" 0
# nvmlDeviceGetCount fails for its first 3 calls: the open's sample and the
# first two migmon_sample calls; the next two are good
cp "$MIGMON_SRC/sim/scenarios/a100-sxm4-80gb.ini" "$TMP/count-glitch.ini"
printf '[fault.count]\ntarget = system\nfunction = nvmlDeviceGetCount*\nreturn = UNKNOWN\ncalls = 3\n' \
    >>"$TMP/count-glitch.ini"
out=$(MIGMON_SIM_SCENARIO="$TMP/count-glitch.ini" LD_LIBRARY_PATH="$PUB:$simdir" \
    sh -c 'echo "$$ 0 700" >"$MIGMON_SIM_PROC_FILE"; exec "$1"' sh "$TMP/errors")
eq "library: a failing sample returns MIGMON_EGPU and why; a good call OK and \"\"" "$out" \
    "open 0 []
sample -5 [nvmlDeviceGetCount failed: NVML_ERROR_UNKNOWN]
sample -5 [nvmlDeviceGetCount failed: NVML_ERROR_UNKNOWN]
sample 0 []
sample 0 []
peaks 0 [] nvml_process_allocation 734003200"
# no driver: every sample says so; the peaks call itself does not fail
out=$(LD_LIBRARY_PATH="$PUB:$TMP/nowhere" "$TMP/errors")
eq "library: without NVML each sample returns MIGMON_EGPU and why" \
    "$(printf '%s\n' "$out" | grep -c '^sample -5 \[waiting for the NVIDIA driver')" 4
eq "library: without NVML, no sample returns OK" "$(printf '%s\n' "$out" | grep -c '^sample')" 4
eq "library: without NVML the peaks call succeeds, unavailable" "$(printf '%s\n' "$out" | tail -1)" \
    "peaks 0 [] unavailable 0"
# an nvml_path that does not exist: MIGMON_ENVML, naming it
out=$(LD_LIBRARY_PATH="$PUB" "$TMP/errors" "$TMP/nowhere/libnvidia-ml.so.1")
contains "library: a missing nvml_path fails the open with MIGMON_ENVML" "$out" "open -3 ["
contains "library: a missing nvml_path is named" "$out" "$TMP/nowhere/libnvidia-ml.so.1"
# Python through ctypes
if command -v python3 >/dev/null; then
    out=$(MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/a100-sxm4-80gb.ini" MIGMON_LIB="$PUB/libmigmon.so.0" \
        LD_LIBRARY_PATH="$simdir" sh -c 'echo "$$ 0 1024" >"$MIGMON_SIM_PROC_FILE"; exec python3 "$1"' sh \
        "$TMP/example.py")
    eq "library: the Python example" "$out" "Peak GPU Memory: 1073741824 bytes (nvml_process_allocation)"
else
    bad "library: python3 is required (scripts/deps.sh installs it)"
fi
unset MIGMON_SIM_PROC_FILE
# only migmon_ symbols are exported, from both libraries
eq "library: shared library exports migmon_ only" \
    "$(nm -D --defined-only "$PUB/libmigmon.so.0" | awk '$2 ~ /[TDBR]/ {print $3}' | grep -vc '^migmon_')" 0
eq "library: soname" "$(objdump -p "$PUB/libmigmon.so.0" | awk '$1 == "SONAME" {print $2}')" "libmigmon.so.0"
eq "library: static archive's globals are migmon_ only" \
    "$(nm -g --defined-only "$PUB/libmigmon.a" | awk 'NF == 3 {print $3}' | grep -vc '^migmon_')" 0
# an installed copy: header, libraries, pkg-config
if command -v pkg-config >/dev/null; then
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD -u SAN make -s -C "$MIGMON_SRC" -o all install \
        PREFIX="$TMP/prefix" DESTDIR= >/dev/null 2>&1
    flags=$(PKG_CONFIG_PATH="$TMP/prefix/lib/pkgconfig" pkg-config --cflags --libs migmon | sed "s/ *$//")
    eq "library: pkg-config flags of an installed copy" "$flags" "-I$TMP/prefix/include -L$TMP/prefix/lib -lmigmon"
    # shellcheck disable=SC2086
    cc "$TMP/example.c" $flags -o "$TMP/example-installed"
    eq "library: builds with pkg-config's flags" "$?" 0
else
    bad "library: pkg-config is required (scripts/deps.sh installs pkgconf)"
fi
