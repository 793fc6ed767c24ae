# shellcheck shell=bash
# The process view (docs/tui.md, "Processes"): one name per slice wherever
# one is named, the / filter by PID, slice and pod, every sort key both ways
# with the sorted column marked, the commands scrolled sideways, the mouse
# wheel and clicks in the process lists, the process tree (key t) with the
# parents /proc gives, folded per slice, and the help at 80x24 with the keys.
# Stored screens: the tree of h200-mig, dgx-a100-8x7 and an MI300X in CPX
# mode at 120x40 and 80x24, and process-churn's at 120x40.
if ! command -v tmux >/dev/null; then
    bad "tmux is required for the screen tests (scripts/deps.sh installs it)"
    return 0
fi
. "$MIGMON_SRC/tests/e2e/tui_lib.sh"
SCN="$MIGMON_SRC/sim/scenarios"
SIMARGS=(--nvml-path "$MIGMON_SIM_LIB")
AMDARGS=(--backend amdgpu --sysfs-root "$MIGMON_SRC/tests/fixtures/sysfs/mi300x-cpx"
    --proc-root "$MIGMON_SRC/tests/fixtures/proc/amd-cpx")

# pids NAME: the PIDs of the process lines on screen, top to bottom (the
# CPU panel's cores have one or two digits)
pids() { tui_capture "$1" | grep -oE '│ *[0-9]{4,} ' | tr -dc '0-9\n' | paste -sd' '; }
# click NAME X Y / wheel NAME up|down X Y: a mouse event (X10 encoding) at
# the 0-based column X and the 1-based screen row Y, and its frame; a click
# is a press and a release, as a terminal sends them (the release draws
# nothing)
mouse() {
    local n x y
    n=$(tui_frames "$1")
    x=$(printf '%x' $((32 + $3 + 1)))
    y=$(printf '%x' $((32 + $4)))
    if [ "$2" = 20 ]; then
        tmx send-keys -t "$1" -H 1b 5b 4d 20 "$x" "$y" 1b 5b 4d 23 "$x" "$y"
    else
        tmx send-keys -t "$1" -H 1b 5b 4d "$2" "$x" "$y"
    fi
    tui_wait "$1" $((n + 1))
}
click() { mouse "$1" 20 "$2" "$3"; }
wheel() { mouse "$1" "$([ "$2" = up ] && echo 60 || echo 61)" "$3" "$4"; }
# row NAME TEXT: the 1-based screen row of the first line holding TEXT
row() { tui_capture "$1" | grep -nF -- "$2" | head -1 | cut -d: -f1; }

# --- one name per slice: h200-mig (h200-node's processes) ---
P=$(tui_proc names h200-node)
tui_start names 120 40 3 MIGMON_SIM_SCENARIO="$SCN/h200-mig.ini" -- "${SIMARGS[@]}" --proc-root "$P"
scr=$(tui_capture names)
contains "device tree: index, profile and GI/CI" "$scr" "├ MIG 0/1 2g.35gb GI 5 CI 0 ! "
contains "device tree: the last instance" "$scr" "└ MIG 0/4 1g.18gb GI 14 CI 0 "
contains "process panel: the slice's ID in DEV" "$scr" "   7040 4242     C     0/1  12.2 GiB"
contains "process panel: the sorted column marked" "$scr" "    PID USER     TYPE  DEV     VRAM▼  SM%  CPU% COMMAND"
tui_keys names Down Down
scr=$(tui_capture names)
contains "detail: the slice's name" "$scr" "│Name MIG 0/1 2g.35gb GI 5 CI 0  2/7 slices of GPU 0 NVIDIA H200"
tui_keys names i
contains "why N/A: the slice's name" "$(tui_capture names)" "Why N/A: MIG 0/1 2g.35gb GI 5 CI 0,"
tui_keys names x p Enter
scr=$(tui_capture names)
contains "process popup: the slice's name" "$scr" "│ MIG 0/1 2g.35gb GI 5 CI 0"
contains "process popup: the process" "$scr" "PID 7040  local PID 7040  type C  user 4242"
tui_quit names q >/dev/null
# 80x24: the short form, on every row
P=$(tui_proc names80 h200-node)
tui_start names80 80 24 3 MIGMON_SIM_SCENARIO="$SCN/h200-mig.ini" -- "${SIMARGS[@]}" --proc-root "$P"
scr=$(tui_capture names80)
contains "80x24: the short form" "$scr" "├ 0/1 2g.35gb !"
contains "80x24: the short form, last row" "$scr" "└ 0/4 1g.18gb  "
eq "80x24: no row in another form" "$(grep -c 'MIG 0/' <<<"$scr")" 0
# the help fits whole and lists the process keys
tui_keys names80 '?'
help=$(tui_capture names80)
contains "help: its first line" "$help" "│ Up/Down Tab         previous / next device (PgUp/PgDn Home/End: pages)     │"
contains "help: sort keys both ways" "$help" "│   s S r             sort key: next, previous; reverse the order            │"
contains "help: the tree" "$help" "│   t                 tree: processes under their parents, per slice         │"
contains "help: the filter" "$help" "│   /                 filter: PID, command, user, slice (0/1, 2g.35gb), pod  │"
contains "help: scrolling commands" "$help" "(Left/Right: scroll)"
contains "help: its last line, whole" "$help" "│ !  !!  health: worth a look / an operator must act (detail panel, e)       │"
case "$help" in *"…│"*) bad "help at 80x24: a line is cut" ;; *) ok ;; esac
tui_quit names80 q >/dev/null

# --- an MI300X in CPX mode: its partitions in AMD's words ---
tui_start amdn 120 40 2 -- "${AMDARGS[@]}"
scr=$(tui_capture amdn)
contains "mi300x: a partition's row" "$scr" "├ Partition 0/2 CPX/NPS4 "
contains "mi300x: the GPU's partitions counted, not MIG" "$scr" "│Name AMD Instinct MI300X  0000:0c:00.0  8 partitions  S/N"
contains "mi300x: the compute partition" "$scr" "│Compute partition CPX  can switch to SPX, DPX, QPX, CPX"
contains "mi300x: the memory partition" "$scr" "│Memory partition NPS4  can switch to NPS1, NPS4"
case "$scr" in *"MIG on"* | *GI/CI*) bad "mi300x: NVIDIA's words for AMD partitions" ;; *) ok ;; esac
tui_keys amdn Down Down Down
contains "mi300x: a partition's detail" "$(tui_capture amdn)" \
    "│Name Partition 0/2 CPX/NPS4  partition index 2 of 8 of GPU 0 AMD Inst…│"
tui_keys amdn p Enter
contains "mi300x: the process popup names the partition" "$(tui_capture amdn)" "│ Partition 0/2 CPX/NPS4"
tui_quit amdn q >/dev/null

# --- the filter: a PID, a slice (its ID, its profile), a pod ---
P=$(tui_proc filt h200-node)
tui_start filt 120 40 3 MIGMON_SIM_SCENARIO="$SCN/h200-mig.ini" -- "${SIMARGS[@]}" --proc-root "$P"
tui_keys filt a / 7 0 4 0 Enter
contains "filter by PID: the title" "$(tui_capture filt)" "All processes (by VRAM) /7040: 1 "
eq "filter by PID: the process" "$(pids filt)" "7040"
tui_keys filt / BSpace BSpace BSpace BSpace 0 / 2 Enter
eq "filter by slice ID 0/2" "$(pids filt)" "7102"
tui_keys filt / BSpace BSpace BSpace 2 g . 3 5 Enter
eq "filter by profile 2g.35gb" "$(pids filt)" "7040"
tui_keys filt / BSpace BSpace BSpace BSpace BSpace BSpace BSpace G I Space 1 3 Enter
eq "filter by GPU instance" "$(pids filt)" "7102"
tui_keys filt / BSpace BSpace BSpace BSpace BSpace d o c k e r Enter
eq "filter by container" "$(pids filt)" "7001"
tui_quit filt q >/dev/null
# a pod: the rank in a Kubernetes pod on the DGX (gpu-host's cgroups)
P=$(tui_proc pod gpu-host)
tui_start pod 120 40 3 MIGMON_SIM_SCENARIO="$SCN/dgx-a100-8x7.ini" -- "${SIMARGS[@]}" --proc-root "$P"
tui_keys pod a
eq "dgx: three ranks" "$(pids pod)" "20135 20100 20176"
tui_keys pod / 0 a 1 b 2 c 3 d Enter
eq "filter by pod UID" "$(pids pod)" "20100"
tui_quit pod q >/dev/null

# --- every sort key both ways (h200-mig's three processes: 7001 root 37.1
# GiB, RSS 10 GiB, 1-01:00:00, "python3 -m vllm…" on 0/0; 7040 4242 12.2
# GiB, 3 GiB, 02:03:04, "python3 embed_worker…" on 0/1; 7102 root 4.0 GiB,
# 256 MiB, 05:07, "/opt/conda/bin/python…" on 0/2; SM% N/A on MIG; 7040
# takes CPU time between two samples) ---
P=$(tui_proc sort h200-node)
tui_start sort 120 40 3 MIGMON_SIM_SCENARIO="$SCN/h200-mig.ini" -- "${SIMARGS[@]}" --proc-root "$P"
st=$(sed 's/ 61000 2400 / 62000 2400 /' "$P/7040/stat")
printf '%s\n' "$st" >"$P/7040/stat" # the same inode: the monitor preads it
tui_cpu_step sort
tui_keys sort a
# sorted KEY MARK TITLE ORDER: the title, the marked header, the order
sorted() {
    local scr
    scr=$(tui_capture sort)
    contains "sort by $1: the title" "$scr" "All processes (by $3): 3 "
    contains "sort by $1: the header marks $1$2" "$(grep -A1 '┌ All processes' <<<"$scr" | tail -1)" "$1$2"
    eq "sort by $3: the order" "$(pids sort)" "$4"
}
sorted VRAM ▼ VRAM "7001 7040 7102"
tui_keys sort r
sorted VRAM ▲ "VRAM, reversed" "7102 7040 7001"
tui_keys sort s
sorted SM% ▼ SM% "7001 7040 7102" # N/A: last either way, then by PID
tui_keys sort r
sorted SM% ▲ "SM%, reversed" "7001 7040 7102"
tui_keys sort s
sorted CPU% ▼ CPU% "7040 7001 7102"
tui_keys sort r
sorted CPU% ▲ "CPU%, reversed" "7001 7102 7040"
tui_keys sort s
sorted RSS ▼ RSS "7001 7040 7102" # RSS is the first to give way, but not when sorted by
tui_keys sort r
sorted RSS ▲ "RSS, reversed" "7102 7040 7001"
tui_keys sort s
sorted TIME ▼ TIME "7001 7040 7102"
tui_keys sort r
sorted TIME ▲ "TIME, reversed" "7102 7040 7001"
tui_keys sort s
sorted PID ▲ PID "7001 7040 7102"
tui_keys sort r
sorted PID ▼ "PID, reversed" "7102 7040 7001"
tui_keys sort s
sorted USER ▲ USER "7040 7001 7102"
tui_keys sort r
sorted USER ▼ "USER, reversed" "7001 7102 7040"
tui_keys sort s
sorted COMMAND ▲ COMMAND "7102 7001 7040"
tui_keys sort r
sorted COMMAND ▼ "COMMAND, reversed" "7040 7001 7102"
tui_keys sort s
sorted DEV ▲ DEV "7001 7040 7102"
tui_keys sort r
sorted DEV ▼ "DEV, reversed" "7102 7040 7001"
tui_keys sort s
sorted VRAM ▼ VRAM "7001 7040 7102"
tui_keys sort S
sorted DEV ▲ DEV "7001 7040 7102"
# the process panel: TIME is not among its columns, but shown sorted by it
tui_keys sort S S S S Escape
scr=$(tui_capture sort)
contains "panel sorted by TIME: the title" "$scr" "Processes (by TIME) "
contains "panel sorted by TIME: its column, marked (USER gives way)" "$scr" "    PID TYPE  DEV      VRAM  SM%  CPU%      TIME▼ COMMAND"
# the commands scrolled sideways: 8 columns a key
tui_keys sort p Right
contains "Right: the commands scrolled" "$(tui_capture sort)" "…-m vllm.entry"
tui_keys sort Right Left Left Left
contains "Left: back to their start" "$(tui_capture sort)" " python3 -m vllm"
tui_quit sort q >/dev/null

# --- the mouse in the process lists ---
P=$(tui_proc mouse h200-node)
tui_start mouse 120 40 3 MIGMON_SIM_SCENARIO="$SCN/h200-mig.ini" -- "${SIMARGS[@]}" --proc-root "$P"
pr=$(row mouse "┌ Processes") # the panel's border; its header below, then the lines
click mouse 70 $((pr + 3))
contains "a click on a process line focuses the list" "$(tui_capture mouse | tail -1)" "Esc Devices"
tui_keys mouse Enter
contains "... and selects the line clicked" "$(tui_capture mouse)" "PID 7040  local PID 7040"
wheel mouse down 60 20 # a popup: the wheel scrolls it, does not close it
contains "the wheel in a popup leaves it open" "$(tui_capture mouse)" "PID 7040  local PID 7040"
tui_keys mouse x
wheel mouse down 70 $((pr + 2))
tui_keys mouse Enter
contains "the wheel moves the process cursor" "$(tui_capture mouse)" "PID 7102  local PID 7102"
tui_keys mouse x
wheel mouse up 70 $((pr + 2))
wheel mouse up 70 $((pr + 2))
tui_keys mouse Enter
contains "the wheel up to the first process" "$(tui_capture mouse)" "PID 7001  local PID 7001"
tui_keys mouse x Escape
dr=$(row mouse "┌ Devices")
wheel mouse down 70 $((dr + 2))
contains "the wheel over the devices selects the next" "$(tui_capture mouse | tail -1)" "[2/5]"
wheel mouse down 70 $((dr + 2))
wheel mouse up 70 $((dr + 2))
contains "... and the previous" "$(tui_capture mouse | tail -1)" "[2/5]"
# the all-processes view: the wheel moves its cursor (the charts follow
# its device), a click selects a line
tui_keys mouse a
ar=$(row mouse "┌ All processes")
wheel mouse down 70 $((ar + 5))
contains "all processes: the wheel moves to the second process (0/1)" "$(tui_capture mouse | tail -1)" "[3/5]"
wheel mouse down 70 $((ar + 5))
contains "all processes: and the third (0/2)" "$(tui_capture mouse | tail -1)" "[4/5]"
click mouse 70 $((ar + 2))
contains "all processes: a click on the first" "$(tui_capture mouse | tail -1)" "[2/5]"
tui_quit mouse q >/dev/null

# --- the tree on process-churn (t = 30: burst runs), all processes ---
P=$(tui_proc churn gpu-host)
tui_start churn 120 40 3 MIGMON_SIM_SCENARIO="$SCN/process-churn.ini" MIGMON_SIM_TIME=30+1 -- \
    "${SIMARGS[@]}" --proc-root "$P"
tui_cpu_step churn
tui_keys churn a t
tui_screen "process-churn: the tree at 120x40" churn churn-tree-120x40
scr=$(tui_capture churn)
contains "tree: the title" "$scr" "All processes (by VRAM, tree): 5 "
contains "tree: the GPU's heading" "$scr" "│▾ GPU 0 L40S  5 processes"
contains "tree: systemd, the root" "$scr" "│   1                                        systemd "
contains "tree: an ssh login" "$scr" "│8040                                        ├─ sshd "
contains "tree: render under its shell" "$scr" "│8100 0   5.9 GiB 40%   0% 12 MiB   N/A root │     └─ render --scene c…│"
contains "tree: the MPS server under its control daemon" "$scr" "│8140                                           └─ nvidia-cuda-mps     │"
contains "tree: the MPS clients under the MPS server" "$scr" "│8150 0   2.0 GiB  0%   0% 12 MiB   N/A root       ├─ mps-b            │"
contains "tree: a parent with no /proc entry" "$scr" "│   ?                                        parent: not readable      │"
contains "tree: ... over burst" "$scr" "│8300 0   3.7 GiB 70%   0% 12 MiB   N/A root └─ burst                  │"
contains "tree: a parent whose PID started after its child" "$scr" "│   ?                                        parent: PID reused        │"
contains "tree: ... over Xorg" "$scr" "│1450 0       N/A  0%   0% 12 MiB 06:18 root └─ /usr/lib/xorg/Xorg :0  │"
eq "tree: every GPU process once, every parent once (and systemd, PID 1)" "$(pids churn)" \
    "8040 8050 8100 8130 8140 8150 8200 8300 1450"
# Enter on a "parent unknown" line says why; k there signals nothing
tui_keys churn End Up
tui_keys churn Enter
contains "Enter on parent unknown: the reason" "$(tui_capture churn | tail -1)" \
    "parent unknown: its parent's PID is another process's now (it started after its child)"
tui_keys churn k
contains "k on a line without a GPU process" "$(tui_capture churn | tail -1)" "k signals a GPU process: not this line"
tui_keys churn Home Down Enter
contains "Enter on a parent: what it is" "$(tui_capture churn | tail -1)" "PID 1 systemd: a parent, without GPU memory"
# Enter on the heading folds the slice, again unfolds it
tui_keys churn Home Enter
scr=$(tui_capture churn)
contains "Enter folds the slice" "$scr" "▸ GPU 0 L40S  5 processes"
case "$scr" in *"sshd"*) bad "a folded slice still shows its processes" ;; *) ok ;; esac
tui_keys churn Enter
contains "Enter unfolds it" "$(tui_capture churn)" "├─ sshd"
# the process panel draws the tree too (t is the list's, either view)
tui_keys churn a
contains "the panel's tree" "$(tui_capture churn)" "Processes (by VRAM, tree) "
tui_keys churn t
case "$(tui_capture churn)" in *"sshd"*) bad "t again: still the tree" ;; *) ok ;; esac
tui_quit churn q >/dev/null

# --- the tree's stored screens: h200-mig, dgx-a100-8x7, an MI300X (CPX)
# at 120x40 and 80x24, all processes ---
for size in 120x40 80x24; do
    P=$(tui_proc "th200-$size" h200-node)
    tui_start "th200-$size" "${size%x*}" "${size#*x}" 3 MIGMON_SIM_SCENARIO="$SCN/h200-mig.ini" -- \
        "${SIMARGS[@]}" --proc-root "$P"
    tui_cpu_step "th200-$size"
    tui_keys "th200-$size" a t
    tui_screen "h200-mig: the tree at $size" "th200-$size" "h200-tree-$size"
    P=$(tui_proc "tdgx-$size" gpu-host)
    tui_start "tdgx-$size" "${size%x*}" "${size#*x}" 3 MIGMON_SIM_SCENARIO="$SCN/dgx-a100-8x7.ini" -- \
        "${SIMARGS[@]}" --proc-root "$P"
    tui_cpu_step "tdgx-$size"
    tui_keys "tdgx-$size" a t
    tui_screen "dgx-a100-8x7: the tree at $size" "tdgx-$size" "dgx-tree-$size"
    tui_start "tamd-$size" "${size%x*}" "${size#*x}" 2 -- "${AMDARGS[@]}"
    tui_keys "tamd-$size" a t
    tui_screen "mi300x (CPX): the tree at $size" "tamd-$size" "mi300x-tree-$size"
done
scr=$(tui_capture th200-120x40)
contains "h200 tree: a slice's heading" "$scr" "│▾ MIG 0/1 2g.35gb GI 5 CI 0  1 process"
contains "h200 tree: the embedder under torchrun" "$scr" "│7040 0/1   5/0 12.2 GiB N/A   0%"
contains "h200 tree: torchrun's line" "$scr" "│7035                                                   └─ torchrun "
scr=$(tui_capture tdgx-120x40)
contains "dgx tree: rank 35 on 3/5, under torchrun and slurmstepd" "$scr" "▾ MIG 3/5 1g.10gb GI 12 CI 0  1 process"
contains "dgx tree: slurmstepd" "$scr" "└─ slurmstepd"
scr=$(tui_capture tamd-120x40)
contains "mi300x tree: a partition's heading in AMD's words" "$scr" "▾ Partition 0/2 CPX/NPS4  1 process"
contains "mi300x tree: the vLLM server" "$scr" "└─ vllm"
case "$scr" in *GI/CI*) bad "mi300x: a GI/CI column for AMD partitions" ;; *) ok ;; esac
for size in 120x40 80x24; do
    for s in th200 tdgx tamd; do tui_quit "$s-$size" q >/dev/null; done
done

tui_kill_all
