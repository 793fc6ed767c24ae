# shellcheck shell=bash
# Device health in the interactive monitor: the mark on a device row ("!"
# warning, "!!" action), the header's summary, the verdict with its rules
# in the detail panel, and the events overlay (key e), on the scenarios'
# scheduled events: GPU 5's Xid 79 on the DGX (t = 20; the simulated clock
# starts at 1000, so it is due at once), the Xid 94 on the H200's 2g.35gb
# instance (t = 3), and a driver without the event API.
if ! command -v tmux >/dev/null; then
    bad "tmux is required for the screen tests (scripts/deps.sh installs it)"
    return 0
fi
. "$MIGMON_SRC/tests/e2e/tui_lib.sh"
TUI_SOCK="migmon-test-health-$$"
SCN="$MIGMON_SRC/sim/scenarios"
SIMARGS=(--nvml-path "$MIGMON_SIM_LIB")
# An event's wall clock and age are the events helper's, not the simulated
# clock's: masked in the stored screens (the column is 20 wide).
EVMASK='s/[0-9]{2}:[0-9]{2}:[0-9]{2} +[0-9]+ (s|min|h|d) ago/hh:mm:ss  ...... ago/'

# --- the DGX at 120x40, GPU 5 selected: marked with its 7 instances ---
P=$(tui_proc hdgx two-core)
tui_start hdgx 120 40 2 MIGMON_SIM_SCENARIO="$SCN/dgx-a100-8x7.ini" -- "${SIMARGS[@]}" --proc-root "$P"
tui_cpu_step hdgx
tui_keys hdgx 5
tui_screen "dgx: GPU 5 after its Xid 79, at 120x40" hdgx dgx-health-120x40
scr=$(tui_capture hdgx)
contains "dgx: the header sums the GPUs" "$(printf '%s\n' "$scr" | head -1)" \
    "GPU health: 1 action (e: events)"
devs=$(printf '%s\n' "$scr" | LC_ALL=C.UTF-8 grep -oE '[▸▾├└] (GPU [0-9]|MIG [0-9]/[0-6]) [^│]*')
eq "dgx: GPU 5 and its 7 instances marked, nothing else" \
    "$(printf '%s\n' "$devs" | grep -c ' !! ')" 8
eq "dgx: GPU 5's row" "$(printf '%s\n' "$devs" | grep -c 'GPU 5 A100-SXM4-80GB !! ')" 1
eq "dgx: no warning mark" "$(printf '%s\n' "$devs" | grep -c ' ! ')" 0
contains "dgx: the verdict and its rule's action, among the key lines" "$scr" \
    "│Health action  xid-needs-reset: an Xid whose remedy is a reset or a d…│"
tui_keys hdgx 4
scr=$(tui_capture hdgx)
contains "dgx: an ok GPU says so" "$scr" "│Health ok      "
tui_keys hdgx e
TUI_MASK=$EVMASK tui_screen "dgx: the events overlay at 120x40" hdgx dgx-events-120x40
scr=$(tui_capture hdgx)
contains "dgx events: the count" "$scr" "│ 1 event since the monitor started, newest first"
contains "dgx events: GPU 5's Xid 79 and its meaning" "$scr" \
    " ago  GPU 5            Xid 79   GPU has fallen off the bus "
contains "dgx events: the action" "$scr" "│     action: drain the node and reset or reseat the GPU "
tui_keys hdgx Down
contains "dgx events: Down keeps the overlay (nothing to scroll)" "$(tui_capture hdgx)" \
    "Health events (Up/Down, any key closes)"
tui_keys hdgx e
case "$(tui_capture hdgx)" in *"Health events ("*) bad "e did not close the events overlay" ;; *) ok ;; esac
tui_keys hdgx '?'
contains "help names e" "$(tui_capture hdgx)" "e  c                health events (Xids, ECC); charts: activity / thermal"
tui_keys hdgx x
eq "dgx: q quits with status 0" "$(tui_quit hdgx q)" "0"

# --- without colour, in the C locale: the marks are text (80x24) ---
P=$(tui_proc hasc two-core)
tui_start hasc 80 24 2 MIGMON_SIM_SCENARIO="$SCN/dgx-a100-8x7.ini" LANG=C -- "${SIMARGS[@]}" \
    --proc-root "$P" --no-color
tui_cpu_step hasc
tui_keys hasc 5
scr=$(tui_capture hasc)
contains "C locale: GPU 5's mark" "$scr" "|> - GPU 5 A100-SX> !! ...   N/A"
contains "C locale: an instance's mark" "$scr" "|    | 5/0 1g.10gb !!  ...   N/A"
contains "C locale: at 80 columns the summary is the mark, the driver's version stays" \
    "$(printf '%s\n' "$scr" | head -1)" " driver 550.144.03      health !! YYYY-MM-DD"
tui_quit hasc q >/dev/null

# --- the H200 at 120x40: a contained ECC error (Xid 94) on MIG 1 ---
P=$(tui_proc hh two-core)
tui_start hh 120 40 2 MIGMON_SIM_SCENARIO="$SCN/h200-mig.ini" -- "${SIMARGS[@]}" --proc-root "$P"
tui_cpu_step hh
scr=$(tui_capture hh)
contains "h200: the instance's warning" "$scr" "├ MIG 0/1 2g.35gb GI 5 CI 0 ! "
contains "h200: its GPU's" "$scr" "▾ GPU 0 H200 !  "
contains "h200: the other instances unmarked" "$scr" "├ MIG 0/0 3g.71gb GI 1 CI 0   "
contains "h200: the header" "$(printf '%s\n' "$scr" | head -1)" "GPU health: 1 warning (e: events)"
tui_keys hh Down Down
scr=$(tui_capture hh)
contains "h200: an instance shows its GPU's counters, marked as its" "$scr" "│Mem temp 59°C  PCIe replays 2 [GPU 0]"
contains "h200: ... its NVLink" "$scr" "│NVLink 18 up  errors CRC 0 replay 0 recovery 0 [GPU 0]"
contains "h200: the rule and its action" "$scr" \
    "│Health warning  xid-contained-ecc: restart the jobs on the affected M…│"
tui_keys hh e
TUI_MASK=$EVMASK tui_screen "h200: the events overlay at 120x40" hh h200-events-120x40
contains "h200 events: the instance, with its profile" "$(tui_capture hh)" \
    " ago  MIG 0/1 2g.35gb GI 5 CI 0  Xid 94   contained ECC error (only the processes using the"
tui_quit hh q >/dev/null

# --- more events than the 64 kept: the count says so, and the overlay scrolls ---
cp "$SCN/h200-mig.ini" "$TMP/many-events.ini"
for ((i = 1; i <= 69; i++)); do
    printf '[event.fault%d]\nt = %d\ngpu = 0\nxid = 31\n' "$i" "$i" >>"$TMP/many-events.ini"
done
P=$(tui_proc hmany two-core)
tui_start hmany 100 30 2 MIGMON_SIM_SCENARIO="$TMP/many-events.ini" -- "${SIMARGS[@]}" --proc-root "$P"
tui_keys hmany e
scr=$(tui_capture hmany)
contains "many events: the count and what was not kept" "$scr" \
    "│ 70 events since the monitor started, newest first; the 64 newest kept, 6 older not shown"
contains "many events: an application fault on the GPU" "$scr" \
    " ago  GPU 0            Xid 31   GPU memory page fault (the application "
tui_keys hmany NPage
scr=$(tui_capture hmany)
case "$scr" in *"70 events since"*) bad "many events: PgDn did not scroll" ;; *) ok ;; esac
contains "many events: still open after PgDn" "$scr" "Health events (Up/Down, any key closes)"
tui_keys hmany NPage NPage NPage NPage NPage NPage NPage NPage NPage NPage
scr=$(tui_capture hmany)
# 1 + 64 x 3 rows at 92 columns; past the end the end stays in view: the
# popup's last row (screen row 27) is the oldest kept event's action
contains "many events: scrolled to the end, the last row is an action" \
    "$(printf '%s\n' "$scr" | sed -n 27p)" "│     action: the job's own bug or input: check the application  "
case "$scr" in *"Xid 94"*) bad "many events: the Xid 94 of t = 3 was kept past 64" ;; *) ok ;; esac
tui_quit hmany q >/dev/null

# --- no event API: the overlay says why, and there is no summary ---
P=$(tui_proc hnone two-core)
tui_start hnone 100 30 2 MIGMON_SIM_SCENARIO="$SCN/events-none.ini" -- "${SIMARGS[@]}" --proc-root "$P"
case "$(tui_capture hnone | head -1)" in *health:*) bad "events-none: a health summary" ;; *) ok ;; esac
tui_keys hnone e
contains "events-none: why there are none" "$(tui_capture hnone)" \
    "│ no health events: this driver has no NVML event API (FUNCTION_NOT_FOUND): no Xid events"
tui_quit hnone q >/dev/null
tui_kill_all
