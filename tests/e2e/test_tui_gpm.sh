# shellcheck shell=bash
# GPM in the interactive monitor: MIG rows and the selected MIG device's
# charts with GPM values, the GPM page (key g), and a GPM helper that hangs:
# the UI keeps answering, says why GPM values are missing, and no helper is
# left behind. The helper's simulated clock stays at its start (it calls
# nvmlDeviceGetCount_v2 once), so its values are those at t = 1000.
if ! command -v tmux >/dev/null; then
    bad "tmux is required for the screen tests (scripts/deps.sh installs it)"
    return 0
fi
. "$MIGMON_SRC/tests/e2e/tui_lib.sh"
# A server of our own: the previous file's kill-server may still be ending.
TUI_SOCK="migmon-test-gpm-$$"
SCN="$MIGMON_SRC/sim/scenarios"
SIMARGS=(--nvml-path "$MIGMON_SIM_LIB")
helpers() { pgrep_mine "$MIGMON_BIN --gpm-helper" | wc -l; }

P=$(tui_proc h200g two-core)
tui_start h200g 120 40 3 MIGMON_SIM_SCENARIO="$SCN/h200-mig.ini" -- "${SIMARGS[@]}" --proc-root "$P" -i 100
eq "one GPM helper while the monitor runs" "$(helpers)" 1
tui_keys h200g Down
scr=$(tui_capture h200g)
contains "MIG row shows GPU util with the gpm marker" "$(printf '%s\n' "$scr" | grep 'MIG 0/0 3g.71gb')" "gpm"
contains "GPU util chart of the MIG device is GPM's" "$scr" "GPU Util 85% gpm"
contains "memory chart is MemBW, from GPM" "$scr" "┌ MemBW 60% gpm"
tui_screen "h200 MIG device with GPM values at 120x40" h200g h200-gpm-120x40
tui_keys h200g g
scr=$(tui_capture h200g)
contains "g opens the GPM page" "$scr" "Detail: GPM (g: back)"
contains "GPM page lists SM occupancy with its source" "$scr" "SM occupancy"
tui_screen "GPM page of a MIG device at 120x40" h200g h200-gpm-page-120x40
tui_keys h200g g
case "$(tui_capture h200g)" in *"Detail: GPM"*) bad "g did not close the GPM page" ;; *) ok ;; esac
eq "q quits with status 0" "$(tui_quit h200g q)" "0"
for ((i = 0; i < 40 && $(helpers) > 0; i++)); do sleep 0.05; done
eq "no GPM helper left after q" "$(helpers)" 0
tui_kill_all

# gpm-hang.ini: GPM calls block forever after six of them, in every helper.
# The watchdog (3 intervals, at least 1 s) kills and restarts the helper
# with backoff, and after the third hang switches GPM off for that GPU.
P=$(tui_proc hang two-core)
TUI_WAIT_S=20 tui_start hang 200 60 1 MIGMON_SIM_SCENARIO="$SCN/gpm-hang.ini" -- "${SIMARGS[@]}" --proc-root "$P" -i 200
tui_keys hang Down
seen_stall=0 seen_off=0
for ((i = 0; i < 100; i++)); do
    tui_tick hang
    scr=$(tui_capture hang)
    case "$scr" in *"GPM helper stalled in nvmlGpmMigSampleGet; restarting it"*) seen_stall=1 ;; esac
    case "$scr" in *"GPM off for this GPU: the GPM helper hung 3 times in nvmlGpmMigSampleGet"*)
        seen_off=1
        break
        ;;
    esac
    sleep 0.2
done
eq "hang: the stall is named while the helper restarts" "$seen_stall" 1
eq "hang: GPM off after three hangs, with the reason" "$seen_off" 1
t0=$(date +%s%N)
tui_keys hang '?'
t1=$(date +%s%N)
contains "hang: the UI still answers keys" "$(tui_capture hang)" "Help (any key closes)"
[ $(((t1 - t0) / 1000000)) -lt 1000 ] && ok || bad "hang: help took $(((t1 - t0) / 1000000)) ms"
tui_keys hang x
eq "hang: q quits with status 0" "$(tui_quit hang q)" "0"
for ((i = 0; i < 40 && $(helpers) > 0; i++)); do sleep 0.05; done
eq "hang: no helper left behind" "$(helpers)" 0
tui_kill_all
