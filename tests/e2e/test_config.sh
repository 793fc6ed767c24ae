# shellcheck shell=bash
# The configuration file: flags override it, bad lines are reported with
# their line and skipped, --config / --no-config / --write-config, and the
# [tui] keys seen on the screen.
SCN="$MIGMON_SRC/sim/scenarios"
SIMARGS=(--nvml-path "$MIGMON_SIM_LIB")
cfgdir="$XDG_CONFIG_HOME/mig-gpu-mon"
mkdir -p "$cfgdir"

# --write-config: the settings in force (file under flags), never over a file
rm -f "$cfgdir/config.ini"
printf '[general]\ninterval = 250\ntop = 3\n[tui]\ntemp_warn = 65\n' >"$TMP/base.ini"
out=$("$MIGMON_BIN" --config "$TMP/base.ini" -i 500 --write-config --config "$TMP/base.ini" 2>&1)
eq "--config given twice is the last one" "$?" 2
contains "--write-config over an existing file is refused" "$out" "File exists"
out=$(XDG_CONFIG_HOME="$TMP/fresh" "$MIGMON_BIN" -i 500 --gpm off --write-config)
eq "--write-config exits 0" "$?" 0
eq "--write-config says where" "$out" "wrote $TMP/fresh/mig-gpu-mon/config.ini"
w=$(cat "$TMP/fresh/mig-gpu-mon/config.ini")
contains "written: the flag's interval" "$w" "interval = 500"
contains "written: the flag's gpm" "$w" "gpm = off"
contains "written: defaults for the rest" "$w" "vram_alarm = 90"
contains "written: with comments" "$w" "; sampling interval in milliseconds"
eq "written file is private" "$(stat -c %a "$TMP/fresh/mig-gpu-mon/config.ini")" "600"
# --config replaces the default file: its values do not come along
out=$(XDG_CONFIG_HOME="$TMP/fresh" "$MIGMON_BIN" --write-config --config "$TMP/again.ini" 2>"$TMP/again.err")
eq "--write-config --config FILE exits 0" "$?" 0
eq "--write-config --config FILE says where" "$out" "wrote $TMP/again.ini"
# the file to be written is not there yet: nothing to say about it
eq "--write-config --config FILE: no warning that the file is missing" "$(cat "$TMP/again.err")" ""
contains "--config FILE instead of the default file" "$(cat "$TMP/again.ini")" "interval = 1000"

# bad lines: reported as FILE:LINE, skipped; the program runs
printf '[general]\ntop = 1\ninterval = 5\nfoo = 1\n[tui]\ncolor = maybe\n' >"$cfgdir/config.ini"
out=$(MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" "$MIGMON_BIN" "${SIMARGS[@]}" --once --format json 2>"$TMP/cfg.err")
eq "bad configuration lines are not fatal" "$?" 0
err=$(cat "$TMP/cfg.err")
contains "bad value reported with its line" "$err" "$cfgdir/config.ini:3: interval = 5: expected milliseconds from 100 to 3600000"
contains "unknown key reported with its line" "$err" "$cfgdir/config.ini:4: unknown key 'foo' in [general]"
contains "bad on/off reported" "$err" "$cfgdir/config.ini:6: color = maybe: expected on or off"
jeq "the good line applies: top = 1" "$out" '[.devices[0].processes | length]' '[1]'
out=$(MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" "$MIGMON_BIN" "${SIMARGS[@]}" --once --format json --top 0 2>/dev/null)
jeq "a flag overrides the file: --top 0" "$out" '[.devices[0].processes | length]' '[2]'
err=$(MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" "$MIGMON_BIN" "${SIMARGS[@]}" --once --no-config 2>&1 >/dev/null)
eq "--no-config reads nothing" "$err" ""
err=$("$MIGMON_BIN" --config "$TMP/none.ini" --demo=a100-sxm4-80gb --once 2>&1 >/dev/null)
contains "--config naming no file says so" "$err" "--config $TMP/none.ini: no such file; the defaults apply"
# a directory is reported like a missing file, and the program runs on
mkdir -p "$TMP/cfg.d"
err=$("$MIGMON_BIN" --config "$TMP/cfg.d" --demo=a100-sxm4-80gb --once 2>&1 >/dev/null); rc=$?
eq "--config DIR exits 0" "$rc" 0
eq "--config DIR says so" "$err" "mig-gpu-mon: --config $TMP/cfg.d: a directory, not a file; the defaults apply"
err=$("$MIGMON_BIN" --config "$TMP/cfg.d" --write-config 2>&1); rc=$?
eq "--write-config --config DIR exits 2" "$rc" 2
eq "--write-config --config DIR: one message" "$err" "mig-gpu-mon: --write-config: $TMP/cfg.d: File exists (remove it first, or name another file with --config)"
rm -f "$cfgdir/config.ini"

# [general] top limits the processes listed, not the count
printf '[general]\ntop = 2\n' >"$TMP/top2.ini"
out=$(MIGMON_SIM_SCENARIO="$SCN/process-churn.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" "${SIMARGS[@]}" \
    --once --format json --config "$TMP/top2.ini")
jeq "top = 2: two processes listed of six" "$out" '[(.devices[0].processes | length), .devices[0].process_count.value]' '[2,6]'
out=$(MIGMON_SIM_SCENARIO="$SCN/process-churn.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" "${SIMARGS[@]}" \
    --once --format json --no-config)
jeq "without the file: all six" "$out" '[.devices[0].processes | length]' '[6]'

# [export] compat = dcgm applies to --once --format prometheus
printf '[export]\ncompat = dcgm\n' >"$TMP/dcgm.ini"
out=$(MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" "${SIMARGS[@]}" \
    --once --format prometheus --config "$TMP/dcgm.ini")
eq "compat = dcgm: the DCGM_FI_ samples" "$(printf '%s\n' "$out" | grep -c '^DCGM_FI_')" 10
contains "compat = dcgm: dcgm-exporter's labels" "$(printf '%s\n' "$out" | grep '^DCGM_FI_DEV_GPU_UTIL')" \
    'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-4c1d2a9e-7b3f-4e51-9c0a-3e8d5f6a7b21",pci_bus_id="00000000:07:00.0",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",Hostname="'
contains "compat = dcgm: the migmon_ series too" "$out" "migmon_gpu_utilization_ratio"
out=$(MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" "${SIMARGS[@]}" \
    --once --format prometheus --no-config)
eq "without the file: no DCGM_FI_ series" "$(printf '%s\n' "$out" | grep -c 'DCGM_FI_')" 0

# [tui]: °F, the thermal charts first
if command -v tmux >/dev/null; then
    . "$MIGMON_SRC/tests/e2e/tui_lib.sh"
    printf '[tui]\ntemperature_unit = F\ncharts = thermal\n' >"$TMP/tui.ini"
    tui_start cfgt 120 40 2 MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" -- "${SIMARGS[@]}" \
        --proc-root "$(tui_proc cfgt two-core)" --config "$TMP/tui.ini"
    scr=$(tui_capture cfgt)
    contains "temperature_unit = F: the detail in °F" "$scr" "°F (↓192 ✕198)"
    contains "charts = thermal: the temperature chart first" "$scr" "┌ Temp "
    tui_quit cfgt q >/dev/null
    tui_kill_all
fi
