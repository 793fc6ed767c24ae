# shellcheck shell=bash
# The monitor's layout at 80x24, 120x40 and 200x60 on one GPU, one GPU with
# MIG instances and the 64-device DGX (stored screens), and the keys that
# move through and fold the device list, filter processes, switch charts,
# explain N/A values and change the interval.
if ! command -v tmux >/dev/null; then
    bad "tmux is required for the screen tests (scripts/deps.sh installs it)"
    return 0
fi
. "$MIGMON_SRC/tests/e2e/tui_lib.sh"
SCN="$MIGMON_SRC/sim/scenarios"
SIMARGS=(--nvml-path "$MIGMON_SIM_LIB")

# every size, every scenario: a stored screen each
for sc in a100-sxm4-80gb h200-mig dgx-a100-8x7; do
    for size in 80x24 120x40 200x60; do
        [ "$sc-$size" = dgx-a100-8x7-200x60 ] && continue # test_tui.sh has it
        lay="lay-${sc%%-*}-$size" # a session of its own each
        P=$(tui_proc "$lay" two-core)
        tui_start "$lay" "${size%x*}" "${size#*x}" 3 MIGMON_SIM_SCENARIO="$SCN/$sc.ini" -- \
            "${SIMARGS[@]}" --proc-root "$P"
        tui_cpu_step "$lay"
        tui_screen "$sc at $size" "$lay" "layout-$sc-$size"
        scr=$(tui_capture "$lay")
        case "$sc-$size" in
        h200-mig-80x24)
            # every device row, with gauges; the key figures; 3 processes
            for r in "GPU 0 H200" "├ 0/0 3g.71gb" "├ 0/1 2g.35gb" "├ 0/2 1g.18gb" "└ 0/4 1g.18gb"; do
                contains "80x24: device row '$r'" "$scr" "$r"
            done
            contains "80x24: gauges" "$(printf '%s\n' "$scr" | grep '0/0 3g.71gb')" "▮"
            contains "80x24: VRAM figure" "$scr" "VRAM 64.2 GiB / 140 GiB"
            contains "80x24: temperature and power" "$scr" "Power 499 W / 700 W"
            contains "80x24: the footer keeps ? Help" "$(printf '%s\n' "$scr" | tail -1)" "i Why N/A  ? Help"
            contains "80x24: the header keeps the driver version" "$(printf '%s\n' "$scr" | head -1)" "driver 570.211.01"
            # ? : the whole help at 80x24, its last legend line included
            tui_keys "$lay" '?'
            help=$(tui_capture "$lay")
            contains "80x24 help: the key of the all-process list" "$help" "every GPU process in one list"
            contains "80x24 help: the last legend line" "$help" "its own needs privilege)│"
            tui_keys "$lay" x
            eq "80x24: three process rows with their slice" \
                "$(printf '%s\n' "$scr" | grep -cE '│ +7[01][0-9]{2} C +0/[0-9] ')" 3
            ;;
        h200-mig-120x40)
            # the whole detail panel; the MIG parent's processes of every instance
            for l in "Name NVIDIA H200" "UUID GPU-" "Clk " "Energy " "PCIe Gen5" "ECC on" "Throttle none"; do
                contains "120x40: detail line '$l'" "$scr" "$l"
            done
            contains "120x40: the slice column" "$scr" "    PID USER     TYPE  DEV     VRAM▼"
            contains "120x40: energy in kWh" "$scr" "kWh"
            ;;
        a100-sxm4-80gb-200x60)
            contains "200x60: PCIe scaled to the window's largest value" "$scr" "PCIe TX 209 MB/s RX 792 MB/s  scale 973 MB/s, 4.0 s"
            contains "200x60: chart title with its maximum" "$scr" "GPU Util 40%  max 42% in 4.0 s"
            contains "200x60: host charts" "$scr" "┌ CPU Total"
            ;;
        dgx-a100-8x7-80x24)
            contains "dgx 80x24: folded GPUs counted" "$scr" "rows ▼"
            # the reason inside the N/A chart, once; no empty process rows
            contains "dgx 80x24: the reason in the GPU Util chart" "$scr" "│NVML does not report          │"
            contains "dgx 80x24: MemBW says it once" "$scr" "│N/A: as GPU Util above        │"
            contains "dgx 80x24: the GPU's power charted instead" "$scr" "┌ Power 85 W / 400 W ─"
            eq "dgx 80x24: the process panel ends under its one row" \
                "$(printf '%s\n' "$scr" | grep -A1 '  20100 C ' | tail -1 | grep -c '└─')" 1
            ;;
        dgx-a100-8x7-120x40)
            # Ampere MIG: the N/A charts say why and give their rows away;
            # the host charts are kept (under the GPU charts: the right
            # column holds 15 device rows and the whole detail)
            contains "dgx 120x40: the whole reason in the chart" "$scr" "│needs Hopper or later (GPM) or DCGM profiling │"
            for t in "┌ MemBW N/A ─" "┌ VRAM Σ instances" "┌ PCIe TX" "┌ Power 85 W / 400 W" "┌ Temp 40°C" "┌ CPU Total 42.4%" "┌ RAM ─"; do
                contains "dgx 120x40: chart '$t'" "$scr" "$t"
            done
            contains "dgx 120x40: the RAM legend" "$scr" "▮ used  ▮ cached  ▯ free"
            contains "dgx 120x40: the detail says MemBW" "$scr" "│GPU N/A  MemBW N/A  SM N/A"
            contains "dgx 120x40: the whole detail panel" "$scr" "│Processes 1  Throttle none"
            ;;
        esac
        tui_quit "$lay" q >/dev/null
    done
done

# --- keys on the DGX at 200x60 ---
P=$(tui_proc keys two-core)
tui_start keys 200 60 2 MIGMON_SIM_SCENARIO="$SCN/dgx-a100-8x7.ini" -- "${SIMARGS[@]}" --proc-root "$P"
scr=$(tui_capture keys)
# (bracket expressions of multibyte characters: a UTF-8 locale, whatever the caller's)
eq "dgx 200x60: all 8 GPUs on screen" "$(printf '%s\n' "$scr" | LC_ALL=C.UTF-8 grep -cE '[▾▸] GPU [0-7] A100')" 8
dev_rows=$(printf '%s\n' "$scr" | LC_ALL=C.UTF-8 grep -cE '│[▶ ] +([▾▸] GPU|[├└] MIG)')
[ "$dev_rows" -ge 30 ] && ok || bad "dgx 200x60: $dev_rows device rows, expected 30 or more"
contains "dgx 200x60: a folded GPU says how many instances it hides" "$scr" "▸ GPU 7 A100-SXM4-80GB +7 MIG"
# digits jump to a GPU; two quick digits; Enter folds and unfolds
tui_keys keys 3
contains "3 jumps to GPU 3" "$(tui_capture keys | tail -1)" "[25/64]"
contains "GPU 3 is unfolded when selected" "$(tui_capture keys)" "▶ ▾ GPU 3 A100"
tui_keys keys Enter
contains "Enter folds the selected GPU" "$(tui_capture keys)" "▶ ▸ GPU 3 A100-SXM4-80GB +7 MIG"
tui_keys keys Down
contains "Down from a folded GPU goes to the next GPU" "$(tui_capture keys | tail -1)" "[33/64]"
tui_keys keys Up Enter
contains "Enter unfolds it again" "$(tui_capture keys)" "▶ ▾ GPU 3 A100"
# PgDn / PgUp move a page of the list
tui_keys keys Home PageDown
pos=$(tui_capture keys | tail -1 | grep -oE '\[[0-9]+/64\]' | tr -d '[' | cut -d/ -f1)
[ "${pos:-0}" -ge 20 ] && ok || bad "PgDn moved to device ${pos:-?}, expected a page (20 or more) down"
tui_keys keys PageUp
contains "PgUp goes back to the top" "$(tui_capture keys | tail -1)" "[1/64]"
# End: the last instance names its GPU when the GPU's row is off screen
tui_keys keys End
contains "End: the last instance" "$(tui_capture keys | tail -1)" "[64/64]"
# c: temperature, power and clocks; again: back
tui_keys keys c
scr=$(tui_capture keys)
contains "c shows the temperature chart" "$scr" "┌ Temp "
contains "c shows the clocks" "$scr" "┌ SM clock"
tui_keys keys c
contains "c again: activity charts" "$(tui_capture keys)" "┌ GPU Util"
# i: every N/A of the selected device with its whole reason
tui_keys keys Home i
scr=$(tui_capture keys)
contains "i opens the reasons" "$scr" "Why N/A: GPU 0"
contains "i: the whole reason of GPU util" "$scr" "gpu_util_pct: NVML does not report utilisation while MIG mode is enabled"
tui_keys keys x
case "$(tui_capture keys)" in *"Why N/A:"*) bad "reasons popup still open after a key" ;; *) ok ;; esac
# + and -: the interval, shown in the footer
contains "the footer shows the interval" "$(tui_capture keys | tail -1)" " 1s [1/64]"
tui_keys keys +
contains "+ lengthens the interval" "$(tui_capture keys | tail -1)" " 2s [1/64]"
tui_keys keys - - -
contains "- shortens it" "$(tui_capture keys | tail -1)" " 250ms [1/64]"
tui_keys keys - -
contains "never below 100 ms" "$(tui_capture keys | tail -1)" " 100ms [1/64]"
tui_quit keys q >/dev/null

# --- / filters processes (h200-mig: three processes, PIDs 7001, 7040, 7102) ---
P=$(tui_proc filt two-core)
tui_start filt 120 40 2 MIGMON_SIM_SCENARIO="$SCN/h200-mig.ini" -- "${SIMARGS[@]}" --proc-root "$P"
eq "MIG parent lists its instances' processes" "$(tui_capture filt | grep -cE '│ +7[01][0-9]{2} ')" 3
tui_keys filt / 9 9 9
contains "/ edits the filter in the footer" "$(tui_capture filt | tail -1)" "Filter processes: 999_"
tui_keys filt Enter
scr=$(tui_capture filt)
contains "the filter is in the title" "$scr" "Processes (by VRAM) /999: 0"
contains "no match says so" "$scr" "No process matches the filter"
tui_keys filt Escape
eq "Esc clears the filter" "$(tui_capture filt | grep -cE '│ +7[01][0-9]{2} ')" 3
# s sorts without focusing the list first
tui_keys filt s
contains "s from the device list" "$(tui_capture filt)" "Processes (by SM%)"
# Enter folds GPU 0: the Devices panel shrinks to its one row, the rows go
# to the panels below (none stays empty)
eq "before folding: 5 device rows" "$(tui_capture filt | grep -A7 '┌ Devices' | tail -1 | grep -c '┌ Detail')" 1
tui_keys filt Enter
scr=$(tui_capture filt)
contains "Enter folds the GPU" "$scr" "▶ ▸ GPU 0 H200 +4 MIG"
eq "folded: the Detail panel right under the one row" \
    "$(printf '%s\n' "$scr" | grep -A3 '┌ Devices' | tail -1 | grep -c '┌ Detail')" 1
tui_quit filt q >/dev/null

# --- markers in the C locale: `>` ends a cut text, `~` stays the estimate
# marker, `[GPU n]` is whole (h200-mig, MIG 0 selected, 80x24) ---
P=$(tui_proc asc two-core)
tui_start asc 80 24 2 MIGMON_SIM_SCENARIO="$SCN/h200-mig.ini" LANG=C -- "${SIMARGS[@]}" --proc-root "$P" --no-color
tui_keys asc Down
tui_screen "h200-mig MIG 0 at 80x24 in the C locale" asc h200-mig-80x24-ascii
scr=$(tui_capture asc)
contains "C locale: a cut text ends in >" "$scr" "Enc N>|"
case "$scr" in *"~"*) bad "C locale: '~' on a screen without estimates" ;; *) ok ;; esac
contains "C locale: the GPU-wide temperature line keeps its marker" "$scr" "|Temp 52C  Power 499 W / 700 W [GPU 0]"
contains "C locale: energy and fan keep the marker" "$scr" "Energy 139 kWh  Fan N/A [GPU 0]"
tui_quit asc q >/dev/null

# --- the header: versions, and where --debug writes ---
tui_start dbg 160 40 2 MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" -- "${SIMARGS[@]}" \
    --proc-root "$(tui_proc dbg two-core)" --debug="$TMP/tui-debug.log"
hdr=$(tui_capture dbg | head -1)
contains "header: driver, CUDA and NVML versions" "$hdr" "driver 550.144.03  CUDA 12.4  NVML 12.550.144.03"
contains "header: the debug log's path" "$hdr" "DEBUG → $TMP/tui-debug.log"
tui_quit dbg q >/dev/null

tui_kill_all
