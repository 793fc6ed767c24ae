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
