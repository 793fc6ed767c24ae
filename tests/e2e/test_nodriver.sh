# shellcheck shell=bash
# No driver anywhere: the host part still works, gpu_error lists every path
# tried, exit 0. LD_LIBRARY_PATH directories are searched first.
empty="$TMP/empty-lib"; mkdir -p "$empty"
out=$(LD_LIBRARY_PATH="$empty" "$MIGMON_BIN" --once --format json); rc=$?
eq "no driver exits 0" "$rc" 0
if [ -e /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 ] || ldconfig -p 2>/dev/null | grep -q libnvidia-ml; then
    echo "note: a real NVML is installed; skipping the no-driver assertions" >&2
else
    jeq "devices empty" "$out" '.devices' '[]'
    jeq "host present" "$out" '.host.cpu.online > 0' 'true'
    jeq "gpu_error names the LD_LIBRARY_PATH candidate first" "$out" \
        ".gpu_error | split(\"\n\")[1] | startswith(\"  $empty/libnvidia-ml.so.1\")" 'true'
    jeq "gpu_error lists the WSL path" "$out" '.gpu_error | contains("/usr/lib/wsl/lib/libnvidia-ml.so.1")' 'true'
    jeq "gpu_error counts 12 attempts" "$out" '[.gpu_error | split("\n")[] | select(startswith("  /") or startswith("  lib"))] | length' '12'
    jeq "gpu_error gives the --nvml-path hint" "$out" '.gpu_error | contains("--nvml-path")' 'true'
    jeq "gpu_error of --once promises no retry" "$out" \
        '.gpu_error | (contains("next try") or contains("waiting for"))' 'false'
    paths=$(printf '%s' "$out" | jq -r '.gpu_error | split("\n")[] | select(startswith("  ")) | ltrimstr("  ") | split(": ")[0]')
    out=$(LD_LIBRARY_PATH="$empty" "$MIGMON_BIN" --once); rc=$?
    eq "no driver table exits 0" "$rc" 0
    contains "table says N/A for gpu" "$out" "gpu: N/A"
    eq "table: the reason follows, without the monitor's retry wording" "$(printf '%s\n' "$out" | sed -n 5p)" \
        "NVML library (libnvidia-ml) not found; is the NVIDIA driver installed? Tried:"
    # --once makes one try: no promise of another, no "Last error" line
    case "$out" in *"next try"* | *"waiting for"* | *"Last error"*) bad "no driver table: $out" ;; *) ok ;; esac
    contains "table gives the --nvml-path hint" "$out" "run with --nvml-path /path/to/libnvidia-ml.so.1"
    out80=$(env -u COLUMNS LD_LIBRARY_PATH="$empty" "$MIGMON_BIN" --once)
    # each path tried starts one line of its own, once
    tried() { printf '%s\n' "$1" | awk -v p="  $2: " 'index($0, p) == 1' | wc -l; }
    for p in $paths; do
        eq "table lists $p once" "$(tried "$out" "$p")" 1
        eq "table at 80 columns lists $p once" "$(tried "$out80" "$p")" 1
    done
    eq "the table lists the 12 paths" "$(printf '%s\n' "$paths" | wc -l)" 12
    w=$(printf '%s\n' "$out80" | LC_ALL=C.UTF-8 wc -L)
    [ "$w" -le 80 ] && ok || bad "no driver table at 80 columns: a line of $w"
fi
# The simulator is found through LD_LIBRARY_PATH without --nvml-path.
ln -sf "$MIGMON_SIM_LIB" "$TMP/libnvidia-ml.so.1"
out=$(LD_LIBRARY_PATH="$empty:$TMP" MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/a100-sxm4-80gb.ini" \
    MIGMON_SIM_TIME=100 "$MIGMON_BIN" --once --format json)
jeq "LD_LIBRARY_PATH library used" "$out" '.devices | length' '1'
jeq "LD_LIBRARY_PATH library is the A100" "$out" '.devices[0].name' '"NVIDIA A100-SXM4-80GB"'
# A library that loads but whose nvmlInit fails (no scenario = driver not loaded).
out=$(env -u MIGMON_SIM_SCENARIO "$MIGMON_BIN" --once --format json --nvml-path "$MIGMON_SIM_LIB"); rc=$?
eq "init failure exits 0" "$rc" 0
jeq "init failure explained" "$out" '.gpu_error | contains("NVML_ERROR_DRIVER_NOT_LOADED")' 'true'
