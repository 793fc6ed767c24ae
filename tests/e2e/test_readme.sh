# shellcheck shell=bash
# The README's picture of the monitor is what scripts/screenshot.sh makes
# from this build (regenerate it with scripts/screenshot.sh after an
# intended change of the screen).
if ! command -v tmux >/dev/null; then
    bad "tmux is required for the README picture (scripts/deps.sh installs it)"
    return 0
fi
MIGMON_BIN="$MIGMON_BIN" MIGMON_SIM_LIB="$MIGMON_SIM_LIB" "$MIGMON_SRC/scripts/screenshot.sh" "$TMP/shot.txt"
eq "README: screenshot.sh ran" "$?" 0
awk '/<!-- screenshot -->/ { on = 1; next } /<!-- \/screenshot -->/ { on = 0 } on' \
    "$MIGMON_SRC/README.md" | sed '1d;$d' >"$TMP/readme-shot.txt"
if cmp -s "$TMP/shot.txt" "$TMP/readme-shot.txt"; then
    ok
else
    bad "README: the picture differs from what scripts/screenshot.sh makes (run it):
$(diff "$TMP/readme-shot.txt" "$TMP/shot.txt" | head -10)"
fi

# The README's first command after a build: `make`, then ./mig-gpu-mon
# --demo=dgx-a100-8x7 from the checkout. `make` puts the simulator beside
# that binary (sim/), the simulated DCGM with it, so the A100 instances
# show DCGM's activity as on build/mig-gpu-mon, not N/A ("DCGM not
# installed"). Only for the default build, which `make` copies there.
if [ "$MIGMON_BIN" = "$MIGMON_SRC/build/mig-gpu-mon" ]; then
    env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s --no-print-directory -C "$MIGMON_SRC" all \
        >"$TMP/readme-make.log" 2>&1
    eq "README: make" "$?" 0
    out=$(cd "$MIGMON_SRC" && ./mig-gpu-mon --demo=dgx-a100-8x7 --once --format json)
    jeq "README: ./mig-gpu-mon --demo=dgx-a100-8x7 has the simulated DCGM" "$out" \
        '[(.dcgm | startswith("DCGM via")), ([.devices[] | select(.kind == "mig") | .metrics.gpu_util_pct.source] | unique)]' \
        '[true,["dcgm"]]'
fi
