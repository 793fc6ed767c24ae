# shellcheck shell=bash
# profile -- CMD: a job (tests/profile_child.c) registers itself and a child
# with the simulator as GPU processes (MIGMON_SIM_PROC_FILE), allocates CPU
# memory and ends as told; the report's peaks, metric, exit status, signal
# passing and fallbacks are checked against what the job did.
CHILD=${MIGMON_PROFILE_CHILD:-}
if [ ! -x "$CHILD" ]; then
    bad "profile: MIGMON_PROFILE_CHILD (build/profile_child) is not built"
    return 0
fi
SCN="$MIGMON_SRC/sim/scenarios"
export MIGMON_SIM_PROC_FILE="$TMP/profile.ctl"
prof() { # prof SCENARIO ARGS...: profile on the simulator
    local sc=$1
    shift
    rm -f "$MIGMON_SIM_PROC_FILE"
    MIGMON_SIM_SCENARIO="$SCN/$sc.ini" "$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" "$@"
}

# 3 steps of 1000 MiB, then a child with 500 MiB beside them: peak 3500 MiB,
# attributed by PID through the process tree; exit status 7 passed on
prof a100-sxm4-80gb -f json -o "$TMP/p1.json" --timeline "$TMP/p1.jsonl" -- \
    "$CHILD" 0 1000 3 500 64 150 7
eq "profile: the command's exit status" "$?" 7
r=$(cat "$TMP/p1.json")
jeq "profile: metric" "$r" '.gpu_memory_metric' '"nvml_process_allocation"'
jeq "profile: peak GPU memory = 3 x 1000 + 500 MiB (parent and child)" "$r" '.peak_gpu_memory_bytes' 3670016000
jeq "profile: peak in MiB" "$r" '.peak_gpu_memory_mb' 3500
jeq "profile: the device's own peak" "$r" '.devices[0].peak_gpu_memory_bytes' 3670016000
jeq "profile: CPU peak holds the 64 MiB touched" "$r" '.peak_cpu_memory_bytes >= 64 * 1048576' true
jeq "profile: ru_maxrss in bytes, at least 64 MiB" "$r" '.ru_maxrss_bytes >= 64 * 1048576' true
jeq "profile: utilisation with its source and scope" "$r" \
    '.devices[0] | [.util_source, .util_scope, (.util_peak_pct > 0)]' '["direct","gpu",true]'
jeq "profile: energy counted" "$r" '.devices[0].energy_joules > 0' true
jeq "profile: exit status in the report" "$r" '.exit_status' 7
n=$(jq -r .samples <<<"$r")
eq "profile: one timeline line per sample" "$(wc -l <"$TMP/p1.jsonl")" "$n"
eq "profile: every timeline line is a snapshot" "$(jq -c 'select(.schema != null) | .devices | length' "$TMP/p1.jsonl" | sort -u)" 1

# text report with the seed's labels, on stderr
out=$(prof a100-sxm4-80gb -- "$CHILD" 0 256 2 0 0 150 0 2>&1 >/dev/null)
contains "profile: text 'Peak GPU Memory'" "$out" "Peak GPU Memory: 512 MiB"
contains "profile: text 'Peak CPU Memory'" "$out" "Peak CPU Memory: "
contains "profile: text 'GPU Memory Metric'" "$out" "GPU Memory Metric: nvml_process_allocation"

# energy in text: joules below 1 Wh, the same figure as the JSON's
# energy_joules; Wh above. The counter steps by 211 J (then 7200 J) half a
# second after the driver's init, while the job sleeps for a second.
energy_scn() { # energy_scn JOULES: a100 whose counter gains JOULES at t = 0.5 s
    cp "$SCN/a100-sxm4-80gb.ini" "$TMP/energy.ini"
    printf '[gpu.0]\nenergy_j = steps(0:1000, 0.5:%s)\n' $((1000 + $1)) >>"$TMP/energy.ini"
}
energy_scn 211
MIGMON_SIM_SCENARIO="$TMP/energy.ini" "$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" \
    -o "$TMP/e1.txt" -- sleep 1
contains "profile: text energy below 1 Wh in joules" "$(cat "$TMP/e1.txt")" ", energy 211 J, "
MIGMON_SIM_SCENARIO="$TMP/energy.ini" "$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" -f json \
    -o "$TMP/e1.json" -- sleep 1
jeq "profile: JSON energy_joules is the same 211 J" "$(cat "$TMP/e1.json")" '.devices[0].energy_joules' 211
energy_scn 7200
MIGMON_SIM_SCENARIO="$TMP/energy.ini" "$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" \
    -o "$TMP/e2.txt" -- sleep 1
contains "profile: text energy of 1 Wh and more in Wh" "$(cat "$TMP/e2.txt")" ", energy 2.0 Wh, "

# a job on a MIG instance (h200-mig, slot 1: 2g.35gb): 2 steps of 200 MiB
# and a child's 300 MiB, counted on that instance and nowhere else. Energy,
# temperature and throttle reasons are the parent GPU's: on its row only.
h200=GPU-2e9b7c41-d85a-4f03-b6e2-91c7a4d0f5e8
prof h200-mig -f json -o "$TMP/m1.json" -- "$CHILD" 0:1 200 2 300 0 150 0
eq "profile: a job on a MIG instance ends well" "$?" 0
r=$(cat "$TMP/m1.json")
jeq "profile: the MIG job's peak is 2 x 200 + 300 MiB" "$r" '.peak_gpu_memory_bytes' 734003200
jeq "profile: that peak is MIG 1's (2g.35gb), no other device's" "$r" \
    '[.devices[] | select(.peak_gpu_memory_bytes > 0) | [.kind, .mig_index, .profile, .peak_gpu_memory_bytes]]' \
    '[["mig",1,"2g.35gb",734003200]]'
jeq "profile: the GPU and its 4 instances listed" "$r" '[.devices[] | .kind]' '["gpu","mig","mig","mig","mig"]'
jeq "profile: the GPU row has the energy and temperature" "$r" \
    ".devices[] | select(.uuid == \"$h200\") | [(.energy_joules > 0), .temp_peak_c, .throttle_reasons]" '[true,52,[]]'
jeq "profile: MIG rows have no energy, temperature or throttle reasons of their own" "$r" \
    '[.devices[] | select(.kind == "mig") | has("energy_joules"), has("temp_peak_c"), has("throttle_reasons")] | unique' \
    '[false]'
jeq "profile: MIG rows name their parent GPU" "$r" \
    '[.devices[] | select(.kind == "mig") | .parent_uuid] | unique' "[\"$h200\"]"
prof h200-mig -o "$TMP/m1.txt" -- "$CHILD" 0:1 200 2 300 0 150 0
out=$(cat "$TMP/m1.txt")
contains "profile: text, the MIG job's memory on MIG 0/1 (the monitor's name)" "$out" \
    "  MIG 0/1 2g.35gb GI 5 CI 0: GPU memory 700 MiB, activity "
contains "profile: text, a MIG row points to its GPU for energy" "$out" "; energy, temp, throttle: see GPU 0"
eq "profile: text, energy shown once (the GPU's)" "$(grep -c 'energy [0-9]' <<<"$out")" 1
# the activity is the whole device's or instance's (other tenants'
# processes counted), and said so: a sleep on h200-mig's MIG 0 (3g.71gb,
# 85 % busy with others' work) is not "util 85 %" of the command
contains "profile: text, a MIG row's activity is the whole instance's" "$out" \
    "  MIG 0/0 3g.71gb GI 1 CI 0: GPU memory 0 MiB, activity (whole instance, all its processes) peak "
contains "profile: text, the GPU row's activity is the whole GPU's" "$out" \
    "  GPU 0 NVIDIA H200: GPU memory 0 MiB, activity (whole GPU, all its processes) peak "
case "$out" in *", util "*) bad "profile: text, an unlabelled 'util' figure" ;; *) ok ;; esac
jeq "profile: JSON util_scope, gpu on the GPU row, instance on each MIG row" "$(cat "$TMP/m1.json")" \
    '[.devices[] | [.kind, .util_scope, .util_source]]' \
    '[["gpu","gpu","gpm"],["mig","instance","gpm"],["mig","instance","gpm"],["mig","instance","gpm"],["mig","instance","gpm"]]'
jeq "profile: JSON, MIG 0's activity is its tenants' (some 85 %) though the job is on MIG 1" \
    "$(cat "$TMP/m1.json")" '.devices[] | select(.mig_index == 0) | .util_peak_pct > 50' true

# died of a signal: 128 + N
prof a100-sxm4-80gb -- "$CHILD" 0 100 1 0 0 100 sig9 2>/dev/null
eq "profile: killed by SIGKILL gives 137" "$?" 137

# SIGTERM to the profiler reaches the command, whose status comes back
rm -f "$MIGMON_SIM_PROC_FILE"
MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" "$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" \
    -o "$TMP/p2.txt" -- "$CHILD" 0 100 1 0 0 100 wait 2>"$TMP/p2.err" &
pp=$!
sleep 1
kill -TERM "$pp"
wait "$pp"
eq "profile: SIGTERM passed on, the command's status returned" "$?" 143
contains "profile: the command got SIGTERM" "$(cat "$TMP/p2.err")" "got SIGTERM"
contains "profile: report written after the signal" "$(cat "$TMP/p2.txt")" "exit status 143"

pstate() { sed 's/.*) //' /proc/"$1"/stat 2>/dev/null | cut -d' ' -f1; }
# wait_exit PID: its exit status, waiting 10 s at most: then it and its
# children are killed (a signal not passed on would leave the job waiting)
wait_exit() {
    local i
    for i in $(seq 100); do
        [ -e /proc/"$1" ] && [ "$(pstate "$1")" != Z ] || break
        sleep 0.1
    done
    if [ -e /proc/"$1" ] && [ "$(pstate "$1")" != Z ]; then
        # shellcheck disable=SC2046
        kill -KILL $(cat /proc/"$1"/task/*/children 2>/dev/null) "$1" 2>/dev/null
    fi
    wait "$1"
}

# SIGINT to the profiler reaches the command, which dies of it: 130, and the
# report is written
rm -f "$MIGMON_SIM_PROC_FILE"
MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" "$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" \
    -f json -o "$TMP/int.json" -- "$CHILD" 0 100 1 0 0 100 wait 2>/dev/null &
pp=$!
sleep 1
kill -INT "$pp"
wait_exit "$pp"
eq "profile: SIGINT passed on, the command died of it: 130" "$?" 130
jeq "profile: report written after SIGINT" "$(cat "$TMP/int.json")" '[.exit_status, (.devices | length)]' '[130,1]'
jeq "profile: the report names the signal passed on" "$(cat "$TMP/int.json")" \
    '[.signals, .signals_received, .killed_by_profiler]' '[["SIGINT"],1,false]'

# job PROFILER-PID NAME: the PID of the profiler's child called NAME
job() {
    local c i
    for i in $(seq 50); do
        for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
            [ "$(cat /proc/"$c"/comm 2>/dev/null)" = "$2" ] && { echo "$c"; return; }
        done
        sleep 0.1
    done
}
# gone PID: it has ended (a zombie no one reaps yet counts) within 1 s
gone() {
    local i
    for i in $(seq 10); do
        [ -e /proc/"$1" ] && [ "$(pstate "$1")" != Z ] || return 0
        sleep 0.1
    done
    return 1
}

# The profiler killed (SIGKILL, or a signal it does not pass on): the
# command does not run on unwatched, it is killed with it (PR_SET_PDEATHSIG).
# Not SIGSEGV: the sanitizer builds catch it and report a crash.
for sig in KILL USR1 ALRM; do
    rm -f "$MIGMON_SIM_PROC_FILE"
    MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" "$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" \
        -o "$TMP/pk.txt" -- sleep 30 2>/dev/null &
    pp=$!
    cmd=$(job "$pp" sleep)
    [ -n "$cmd" ] && ok || bad "profile: the command did not start"
    kill -"$sig" "$pp"
    wait "$pp" 2>/dev/null
    if gone "$cmd"; then ok; else
        bad "profile: SIG$sig to the profiler left its command running unwatched"
        kill -KILL "$cmd" 2>/dev/null
    fi
done

# A command that catches SIGINT and goes on: the first SIGINT is passed on
# (the command says it got it, once), the second sends it SIGKILL, as
# timeout --kill-after would; the report says so, in JSON and text.
# ready FILE: wait (5 s at most) for FILE.ready, which the command writes
# once its trap is set
trapint='trap "echo got INT >>\"$0\"" INT; : >"$0.ready"; while :; do sleep 0.1; done'
ready() { for _ in $(seq 50); do [ -e "$1.ready" ] && break; sleep 0.1; done; }
for fmt in json text; do
    rm -f "$MIGMON_SIM_PROC_FILE" "$TMP/trap.log" "$TMP/trap.log.ready"
    MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" "$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" \
        -f "$fmt" -o "$TMP/trap.$fmt" -- sh -c "$trapint" "$TMP/trap.log" 2>/dev/null &
    pp=$!
    cmd=$(job "$pp" sh)
    ready "$TMP/trap.log"
    kill -INT "$pp"
    for _ in $(seq 20); do [ -s "$TMP/trap.log" ] && break; sleep 0.1; done
    sleep 0.3
    eq "profile ($fmt): the first SIGINT passed on, once; the command runs on" \
        "$(cat "$TMP/trap.log" 2>/dev/null):$(kill -0 "$cmd" 2>/dev/null && echo running)" "got INT:running"
    kill -INT "$pp"
    wait_exit "$pp"
    eq "profile ($fmt): the second SIGINT sent the command SIGKILL: 137" "$?" 137
    eq "profile ($fmt): the second SIGINT was not passed on" "$(cat "$TMP/trap.log")" "got INT"
done
jeq "profile: JSON, the signals and the kill" "$(cat "$TMP/trap.json")" \
    '[.exit_status, .signals, .signals_received, .killed_by_profiler]' '[137,["SIGINT","SIGINT"],2,true]'
contains "profile: text, the signals and the kill" "$(cat "$TMP/trap.text")" \
    "Signals: SIGINT passed on to the command; a second, SIGINT, sent it SIGKILL"

# Ctrl-C on a terminal (a detached tmux): the terminal sends SIGINT to its
# whole foreground process group, the command included, so the profiler
# does not send it again (the command's handler runs once); the second
# Ctrl-C sends the command SIGKILL. The pane's shell ignores SIGINT (a
# non-interactive shell would die of it) and writes the profiler's status.
if command -v tmux >/dev/null; then
    ptmx() { tmux -L "migmon-prof-$$" -f /dev/null "$@"; }
    rm -f "$MIGMON_SIM_PROC_FILE" "$TMP/tty.log" "$TMP/tty.log.ready" "$TMP/tty.exit"
    run=$(printf '%q ' env MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" \
        MIGMON_SIM_PROC_FILE="$MIGMON_SIM_PROC_FILE" "$MIGMON_BIN" profile \
        --nvml-path "$MIGMON_SIM_LIB" -o "$TMP/tty.txt" -- sh -c "$trapint" "$TMP/tty.log")
    ptmx new-session -d -s prof -x 100 -y 20 "trap '' INT; $run; echo \$? >$TMP/tty.exit; sleep 600"
    pane=$(ptmx list-panes -t prof -F '#{pane_pid}')
    pp=$(job "$pane" mig-gpu-mon)
    cmd=$([ -n "$pp" ] && job "$pp" sh)
    if [ -n "$cmd" ]; then
        ready "$TMP/tty.log"
        ptmx send-keys -t prof C-c
        for _ in $(seq 20); do [ -s "$TMP/tty.log" ] && break; sleep 0.1; done
        sleep 0.3
        eq "profile, Ctrl-C: the command got the terminal's SIGINT once, and runs on" \
            "$(cat "$TMP/tty.log" 2>/dev/null):$(kill -0 "$cmd" 2>/dev/null && echo running)" \
            "got INT:running"
        ptmx send-keys -t prof C-c
        for _ in $(seq 50); do [ -s "$TMP/tty.exit" ] && break; sleep 0.1; done
        eq "profile, a second Ctrl-C: the command sent SIGKILL, 137" "$(cat "$TMP/tty.exit" 2>/dev/null)" 137
        # the terminal sends the second SIGINT to the command as well, and
        # its handler may run before the profiler's SIGKILL lands; what the
        # profiler must not do is pass a SIGINT on itself: at most the
        # terminal's two
        log=$(cat "$TMP/tty.log")
        case "$log" in "got INT" | "got INT"$'\n'"got INT") log="got INT (terminal only)" ;; esac
        eq "profile, a second Ctrl-C: no SIGINT but the terminal's reached the command" "$log" \
            "got INT (terminal only)"
        contains "profile, Ctrl-C: the report says so" "$(cat "$TMP/tty.txt" 2>/dev/null)" \
            "Signals: SIGINT from the terminal, which sent it to the command too; a second, SIGINT, sent it SIGKILL"
    else
        bad "profile, Ctrl-C: the profiler or its command did not start in tmux"
    fi
    [ -n "$cmd" ] && kill -KILL "$cmd" 2>/dev/null
    ptmx kill-server 2>/dev/null
fi

# a command that crashes: 128 + SIGSEGV, and the JSON report is whole
prof a100-sxm4-80gb -f json -o "$TMP/segv.json" -- sh -c 'kill -SEGV $$' 2>/dev/null
eq "profile: a command killed by SIGSEGV gives 139" "$?" 139
jeq "profile: the crashed command's report parses, with its status" "$(cat "$TMP/segv.json")" \
    '[.exit_status, .gpu_memory_metric, (.devices | length)]' '[139,"nvml_process_allocation",1]'

# no zombie, nothing left behind: while the profiler runs, its children (the
# command, the events helper, and on a Hopper GPU the GPM helper) are read
# from /proc. The helpers are killed: the profiler must reap them while it
# still runs (no zombie stays), and no child of it outlives it.
kids() { cat /proc/"$1"/task/*/children 2>/dev/null; }
rm -f "$MIGMON_SIM_PROC_FILE"
MIGMON_SIM_SCENARIO="$SCN/h200-mig.ini" "$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" \
    -o "$TMP/z.txt" -- sleep 3 &
pp=$!
# until the command has been started (its child is "sleep", not a fork of
# the profiler not yet replaced) beside the two helpers, 5 s at most on a
# loaded machine
for _ in $(seq 50); do
    sleep 0.1
    seen=$(kids "$pp")
    [ "$(echo $seen | wc -w)" -ge 3 ] || continue
    for c in $seen; do [ "$(cat /proc/"$c"/comm 2>/dev/null)" = sleep ] && break 2; done
done
eq "profile: while running, its children are the GPM and events helpers and the command" \
    "$(for c in $seen; do cat /proc/"$c"/comm; done | sort | tr '\n' ' ')" "mig-gpu-mon mig-gpu-mon sleep "
helpers=$(for c in $seen; do [ "$(cat /proc/"$c"/comm)" = mig-gpu-mon ] && echo "$c"; done)
for helper in $helpers; do
    kill -KILL "$helper"
    for _ in $(seq 20); do # reaped within 2 s (a sample every 50 ms notices it)
        [ -e /proc/"$helper" ] || break
        sleep 0.1
    done
    eq "profile: a dead helper is reaped while the profiler runs, not left a zombie" \
        "$(pstate "$helper"):$(kill -0 "$pp" 2>/dev/null && echo running)" ":running"
done
zombies=0
for _ in 1 2 3 4 5; do
    for c in $(kids "$pp"); do
        seen="$seen $c"
        [ "$(pstate "$c")" = Z ] && zombies=$((zombies + 1))
    done
    sleep 0.2
done
eq "profile: no zombie child while the command runs" "$zombies" 0
wait "$pp"
eq "profile: the run with its helper killed ends well" "$?" 0
left=""
for c in $seen; do [ -e /proc/"$c" ] && left="$left $c:$(pstate "$c")"; done
eq "profile: no child of the profiler outlives it" "$left" ""

# a report or a timeline that cannot be written (a full disk): one message
# naming the file, and never status 0; a command's own failure status is
# kept. The report is still written where it can be.
out=$(prof a100-sxm4-80gb -o /dev/full -- true 2>&1); rc=$?
eq "profile: a lost text report is said, status 1" "$out:$rc" \
    "mig-gpu-mon profile: writing the report to /dev/full failed: No space left on device:1"
out=$(prof a100-sxm4-80gb -f json -o /dev/full -- true 2>&1); rc=$?
eq "profile: a lost JSON report is said, status 1" "$out:$rc" \
    "mig-gpu-mon profile: writing the report to /dev/full failed: No space left on device:1"
out=$(prof a100-sxm4-80gb -o /dev/full -- sh -c 'exit 7' 2>&1); rc=$?
eq "profile: a lost report keeps the command's failure status" "$out:$rc" \
    "mig-gpu-mon profile: writing the report to /dev/full failed: No space left on device:7"
out=$(prof a100-sxm4-80gb -f json -o "$TMP/tl.json" --timeline /dev/full -- true 2>&1); rc=$?
eq "profile: a lost timeline is said, status 1" "$out:$rc" \
    "mig-gpu-mon profile: writing the timeline to /dev/full failed: No space left on device:1"
jeq "profile: ... and the report is still written" "$(cat "$TMP/tl.json")" '.exit_status' 0
prof a100-sxm4-80gb -- true 2>/dev/full
eq "profile: a report lost on standard error: status 1" "$?" 1

# a command that cannot be run
out=$(prof a100-sxm4-80gb -- /nonexistent/job 2>&1)
eq "profile: unknown command exits 127" "$?" 127
contains "profile: unknown command message" "$out" "cannot run '/nonexistent/job': No such file or directory"
# a file that is not executable: 126
printf '#!/bin/sh\nexit 0\n' >"$TMP/noexec.sh"
chmod 644 "$TMP/noexec.sh"
out=$(prof a100-sxm4-80gb -- "$TMP/noexec.sh" 2>&1)
eq "profile: a file that is not executable exits 126" "$?" 126
contains "profile: not executable, said why" "$out" "cannot run '$TMP/noexec.sh': Permission denied"

# no driver: GPU figures unavailable (null, not 0), CPU figures still there
empty="$TMP/empty-lib"
mkdir -p "$empty"
LD_LIBRARY_PATH="$empty" "$MIGMON_BIN" profile -f json -o "$TMP/p3.json" -- "$CHILD" 0 100 1 0 32 100 0 \
    2>"$TMP/p3.err"
eq "profile: no driver, the command still runs" "$?" 0
contains "profile: no driver, said once on stderr" "$(cat "$TMP/p3.err")" "a sample failed (later failures not shown): waiting for the NVIDIA driver"
out=$(cat "$TMP/p3.json")
jeq "profile: no driver, metric unavailable" "$out" '.gpu_memory_metric' '"unavailable"'
jeq "profile: no driver, GPU peak null" "$out" '.peak_gpu_memory_bytes' null
jeq "profile: no driver, CPU peak there" "$out" '.peak_cpu_memory_bytes >= 32 * 1048576' true

# no driver, the report on stderr: the library search is said once, whole
# (every path tried on a line of its own with its reason, the hint last);
# the report refers to it. To a file, the report has it whole.
if [ -e /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 ] || ldconfig -p 2>/dev/null | grep -q libnvidia-ml; then
    echo "note: a real NVML is installed; skipping the no-driver message checks" >&2
else
    LD_LIBRARY_PATH="$empty" "$MIGMON_BIN" profile -- sleep 0.3 2>"$TMP/nd.err"
    eq "profile, no driver: the command's status" "$?" 0
    nd=$(cat "$TMP/nd.err")
    eq "profile, no driver: the search said once" \
        "$(grep -c 'NVML library (libnvidia-ml) not found' "$TMP/nd.err")" 1
    eq "profile, no driver: the 10 paths tried, each once and whole" \
        "$(grep -cE '^  [^ ]*libnvidia-ml\.so(\.1)?: cannot open shared object file: No such file or directory$' "$TMP/nd.err")" 10
    eq "profile, no driver: the 2 sonames looked up, each once and whole" \
        "$(grep -cE '^  libnvidia-ml\.so(\.1)?: not in (LD_LIBRARY_PATH, )?the ld\.so cache or the system.s library directories$' "$TMP/nd.err")" 2
    contains "profile, no driver: the hint, whole" "$nd" \
        "If the library is elsewhere, run with --nvml-path /path/to/libnvidia-ml.so.1"
    contains "profile, no driver: the WSL path, the last tried" "$nd" "  /usr/lib/wsl/lib/libnvidia-ml.so.1: "
    contains "profile, no driver: the report refers to it" "$nd" "(the first one's reason is above)"
    LD_LIBRARY_PATH="$empty" "$MIGMON_BIN" profile -o "$TMP/nd.txt" -- true 2>/dev/null
    contains "profile, no driver, report to a file: the reason whole" "$(cat "$TMP/nd.txt")" \
        "/usr/lib/wsl/lib/libnvidia-ml.so.1: cannot open shared object file: No such file or directory"
    LD_LIBRARY_PATH="$empty" "$MIGMON_BIN" profile -f json -o "$TMP/nd.json" -- true 2>/dev/null
    jeq "profile, no driver: first_error whole" "$(cat "$TMP/nd.json")" \
        '.first_error | [contains("/usr/lib/wsl/lib/libnvidia-ml.so.1: cannot open"), endswith("--nvml-path /path/to/libnvidia-ml.so.1")]' \
        '[true,true]'
fi

# options before and after the word profile, one rule with the other modes
rm -f "$MIGMON_SIM_PROC_FILE"
MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" -f json \
    profile -i 100 -o "$TMP/around.json" -- "$CHILD" 0 300 1 0 0 150 0
eq "profile: options before and after the word, the command's status" "$?" 0
jeq "profile: options before and after the word applied" "$(cat "$TMP/around.json")" \
    '[.interval_ms, .peak_gpu_memory_bytes]' '[100,314572800]'
out=$(MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo profile -- true 2>&1); rc=$?
eq "--demo profile -- true: exit 0" "$rc" 0
contains "--demo profile -- true: the demo's devices" "$out" "GPU 0 NVIDIA H200"
out=$(MIGMON_SIM_TIME=100 "$MIGMON_BIN" profile --demo -- true 2>&1); rc=$?
eq "profile --demo -- true: exit 0" "$rc" 0
contains "profile --demo -- true: the demo's devices" "$out" "GPU 0 NVIDIA H200"
# after --, nothing is read: a mode word or an option is the command's
out=$(MIGMON_SIM_TIME=100 "$MIGMON_BIN" profile -f json --demo -- sh -c 'exit 5' record --once 2>&1); rc=$?
eq "profile -- sh -c ... record --once: the command's status" "$rc" 5
jeq "profile -- CMD: the command as given" "$out" '.command' '["sh","-c","exit 5","record","--once"]'
out=$(MIGMON_SIM_TIME=100 "$MIGMON_BIN" --demo profile -- record 2>&1); rc=$?
eq "profile -- record: record is the command (127: not found)" "$rc" 127
contains "profile -- record: said so" "$out" "cannot run 'record': No such file or directory"

# process lists refused: the device's used memory growth, labelled as such
sed -n '1,/^\[process/p' "$SCN/a100-sxm4-80gb.ini" | sed '$d' >"$TMP/noprocs.ini"
printf '[fault.noprocs]\ntarget = gpu.0\nfunction = nvmlDeviceGet*RunningProcesses*\nreturn = NO_PERMISSION\n' \
    >>"$TMP/noprocs.ini"
rm -f "$MIGMON_SIM_PROC_FILE"
MIGMON_SIM_SCENARIO="$TMP/noprocs.ini" "$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" -f json \
    -o "$TMP/p4.json" -- "$CHILD" 0 2048 1 0 0 150 0 2>/dev/null
out=$(cat "$TMP/p4.json")
jeq "profile: without process lists, the fallback is named" "$out" '.gpu_memory_metric' '"device_memory_delta"'
jeq "profile: fallback peak is the used-memory growth (2048 MiB)" "$out" '.peak_gpu_memory_mb' 2048
contains "profile: fallback marked approximate in text" \
    "$(MIGMON_SIM_SCENARIO="$TMP/noprocs.ini" "$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" \
        -- "$CHILD" 0 1024 1 0 0 150 0 2>&1 >/dev/null)" "(device-level, approximate)"

# bad usage
"$MIGMON_BIN" profile -i 5 -- true 2>/dev/null
eq "profile: interval below 10 ms is refused" "$?" 2
out=$("$MIGMON_BIN" profile 2>&1)
contains "profile: no command" "$out" "no command given"
# the long options
# (a job of about 1 s: some 10 samples at 100 ms, 20 at the default 50)
prof a100-sxm4-80gb --interval 100 --format json --output "$TMP/long.json" -- "$CHILD" 0 256 1 0 0 500 0
eq "profile: long options accepted" "$?" 0
jeq "profile: --interval 100 and --format json applied" "$(cat "$TMP/long.json")" \
    '[.interval_ms, .peak_gpu_memory_bytes, (.samples >= 5 and .samples <= 15)]' '[100,268435456,true]'

# a failing sample, then good ones: nvmlDeviceGetCount fails for its first 3
# calls (the sample before the command starts and the next two); one message
# on stderr, the count and the first error in the report, and the job's
# memory still measured by the later samples
cp "$SCN/a100-sxm4-80gb.ini" "$TMP/count-glitch.ini"
printf '[fault.count]\ntarget = system\nfunction = nvmlDeviceGetCount*\nreturn = UNKNOWN\ncalls = 3\n' \
    >>"$TMP/count-glitch.ini"
rm -f "$MIGMON_SIM_PROC_FILE"
MIGMON_SIM_SCENARIO="$TMP/count-glitch.ini" "$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" -f json \
    -o "$TMP/glitch.json" -- "$CHILD" 0 400 2 0 0 150 0 2>"$TMP/glitch.err"
eq "profile: after failing samples the command ends well" "$?" 0
eq "profile: one message for the failing samples" "$(cat "$TMP/glitch.err")" \
    "mig-gpu-mon profile: a sample failed (later failures not shown): nvmlDeviceGetCount failed: NVML_ERROR_UNKNOWN"
jeq "profile: the failures counted, the later samples good" "$(cat "$TMP/glitch.json")" \
    '[.failed_samples, .first_error, .gpu_memory_metric, .peak_gpu_memory_bytes, (.samples > 5)]' \
    '[2,"nvmlDeviceGetCount failed: NVML_ERROR_UNKNOWN","nvml_process_allocation",838860800,true]'

# CUDA_VISIBLE_DEVICES naming a GPU by UUID: that GPU and its instances
# only; an ordinal is CUDA's numbering, not NVML's: every device, and a note
u3=$(MIGMON_SIM_SCENARIO="$SCN/dgx-a100-8x7.ini" "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" --once -f json |
    jq -r '[.devices[] | select(.kind == "gpu")][3].uuid')
CUDA_VISIBLE_DEVICES="$u3" prof dgx-a100-8x7 -f json -o "$TMP/p5.json" -- true 2>/dev/null
jeq "profile: CUDA_VISIBLE_DEVICES=UUID keeps that GPU and its 7 instances" "$(cat "$TMP/p5.json")" \
    '[(.devices | length), (.devices | map(.index) | unique)]' '[8,[3]]'
CUDA_VISIBLE_DEVICES=0 prof dgx-a100-8x7 -f json -o "$TMP/p6.json" -- true 2>/dev/null
jeq "profile: an ordinal is not mapped to NVML" "$(cat "$TMP/p6.json")" \
    '[(.devices | length), (.note | contains("CUDA ordinals"))]' '[64,true]'
# NVIDIA_VISIBLE_DEVICES (the container runtime's) by UUID limits them the same way
NVIDIA_VISIBLE_DEVICES="$u3" prof dgx-a100-8x7 -f json -o "$TMP/p8.json" -- true 2>/dev/null
jeq "profile: NVIDIA_VISIBLE_DEVICES=UUID keeps that GPU and its 7 instances" "$(cat "$TMP/p8.json")" \
    '[(.devices | length), (.devices | map(.index) | unique), .note]' '[8,[3],null]'
# two GPUs (faults.ini, MIG off): with GPU 1 listed, a job's 300 MiB on GPU 0
# is not counted, on GPU 1 it is
g1=GPU-66666666-7777-4888-9999-aaaaaaaaaaaa
NVIDIA_VISIBLE_DEVICES="$g1" prof faults -f json -o "$TMP/p9.json" -- "$CHILD" 0 300 1 0 0 150 0
jeq "profile: NVIDIA_VISIBLE_DEVICES=GPU 1, a job on GPU 0 counts nothing" "$(cat "$TMP/p9.json")" \
    '[[.devices[].uuid], .peak_gpu_memory_bytes]' "[[\"$g1\"],0]"
NVIDIA_VISIBLE_DEVICES="$g1" prof faults -f json -o "$TMP/p9.json" -- "$CHILD" 1 300 1 0 0 150 0
jeq "profile: NVIDIA_VISIBLE_DEVICES=GPU 1, a job on GPU 1 counts" "$(cat "$TMP/p9.json")" \
    '[[.devices[].uuid], .peak_gpu_memory_bytes]' "[[\"$g1\"],314572800]"
# a unique UUID prefix, as CUDA accepts: a GPU's brings its instances; a MIG
# instance's brings that instance and its GPU (whose row has the energy and
# temperature), not the other instances
CUDA_VISIBLE_DEVICES=GPU-2e9b7c41 prof h200-mig -f json -o "$TMP/v1.json" -- true
jeq "profile: a GPU UUID prefix keeps the GPU and its 4 instances" "$(cat "$TMP/v1.json")" \
    '[[.devices[] | [.kind, .mig_index]], .note]' '[[["gpu",null],["mig",0],["mig",1],["mig",2],["mig",4]],null]'
CUDA_VISIBLE_DEVICES=" MIG-3b36b6e9" prof h200-mig -f json -o "$TMP/v2.json" -- "$CHILD" 0:1 200 2 300 0 150 0
jeq "profile: a MIG UUID prefix keeps that instance and its GPU" "$(cat "$TMP/v2.json")" \
    '[[.devices[] | [.kind, .mig_index]], .peak_gpu_memory_bytes, (.devices[0].energy_joules > 0), .note]' \
    '[[["gpu",null],["mig",1]],734003200,true,null]'
# an entry that names no device, or several, counts nothing, and the note says so
CUDA_VISIBLE_DEVICES=GPU-5a1b,MIG-3b36b6e9 prof h200-mig -f json -o "$TMP/v3.json" -- true
jeq "profile: an unknown UUID is named in the note, the other entry still counts" "$(cat "$TMP/v3.json")" \
    '[[.devices[] | [.kind, .mig_index]], .note]' \
    '[[["gpu",null],["mig",1]],"CUDA_VISIBLE_DEVICES: GPU-5a1b names no device"]'
CUDA_VISIBLE_DEVICES=MIG- prof h200-mig -f json -o "$TMP/v4.json" -- true
jeq "profile: a prefix of several devices counts none, and is named" "$(cat "$TMP/v4.json")" \
    '[(.devices | length), .gpu_memory_metric, .note]' \
    '[0,"unavailable","CUDA_VISIBLE_DEVICES: MIG- names 4 devices, not one"]'
# the container runtime's none and void: no GPU; all: every device
for v in none void; do
    NVIDIA_VISIBLE_DEVICES=$v prof h200-mig -f json -o "$TMP/v5.json" -- true
    jeq "profile: NVIDIA_VISIBLE_DEVICES=$v, no GPU and a true note" "$(cat "$TMP/v5.json")" \
        '[(.devices | length), .peak_gpu_memory_bytes, .note]' \
        "[0,null,\"NVIDIA_VISIBLE_DEVICES=$v: no GPU visible to the command\"]"
done
NVIDIA_VISIBLE_DEVICES=all prof h200-mig -f json -o "$TMP/v6.json" -- true
jeq "profile: NVIDIA_VISIBLE_DEVICES=all, every device, no note" "$(cat "$TMP/v6.json")" \
    '[(.devices | length), .note]' '[5,null]'
CUDA_VISIBLE_DEVICES= prof h200-mig -o "$TMP/v7.txt" -- true
contains "profile: an empty CUDA_VISIBLE_DEVICES, no GPU, said in text" "$(cat "$TMP/v7.txt")" \
    "Note: CUDA_VISIBLE_DEVICES is empty: no GPU visible to the command"

# a driver slow to list the MIG instances (10 ms per handle: 70 ms per GPU, more
# than one 50 ms sample's deadline): a command that ends at once is still
# matched against every device, found by the first sample before it starts
cp "$SCN/dgx-a100-8x7.ini" "$TMP/slowmig.ini"
printf '[fault.slowmig]\nfunction = nvmlDeviceGetMigDeviceHandleByIndex\ndelay_ms = 10\n' >>"$TMP/slowmig.ini"
rm -f "$MIGMON_SIM_PROC_FILE"
MIGMON_SIM_SCENARIO="$TMP/slowmig.ini" "$MIGMON_BIN" profile --nvml-path "$MIGMON_SIM_LIB" -f json \
    -o "$TMP/p7.json" -- true 2>/dev/null
jeq "profile: a slow MIG walk still lists all 64 devices for a short command" "$(cat "$TMP/p7.json")" \
    '[(.devices | length), ([.devices[] | select(.kind == "mig")] | length)]' '[64,56]'
unset MIGMON_SIM_PROC_FILE

# profile --help: every option it takes, and a failed write of it said
out=$("$MIGMON_BIN" profile --help)
for o in --interval --output --format --timeline --nvml-path --demo --proc-root --backend --sysfs-root --help; do
    contains "profile --help lists $o" "$out" "$o"
done
"$MIGMON_BIN" profile --help >/dev/full 2>"$TMP/ph.err"
eq "profile --help into a full disk: exit 1" "$?" 1
eq "... with one line saying why" "$(cat "$TMP/ph.err")" \
    "mig-gpu-mon profile: writing the help failed: No space left on device"
