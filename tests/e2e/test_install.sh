# shellcheck shell=bash
# install.sh's helpers (scripts/install-lib.sh): waiting for a package
# manager lock that another job holds, then installing; and the closing
# snapshot's hint when no GPU can be shown. install.sh itself installs
# system-wide and is not run here.
#
# The locks are apt's own, taken with fcntl by a python3 holder, but in a
# private apt state directory (Dir::State::status, Dir::State::Lists,
# Dir::Cache): the host's /var/lib/dpkg locks are never touched, so an apt-get
# of someone else's is not disturbed, and neither root nor a package is
# needed. The real apt-get takes and reports them.
INS=$TMP/install
mkdir -p "$INS/apt/dpkg" "$INS/apt/lists/partial" "$INS/apt/cache/archives/partial" "$INS/apt/parts"
: >"$INS/apt/dpkg/status"
: >"$INS/apt/sources.list"

# hold_lock FILE SECONDS &: hold FILE's fcntl lock (as apt takes it), then
# let go; "held" in FILE.held once it is taken
hold_lock() {
    exec python3 -c 'import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o640)
fcntl.lockf(fd, fcntl.LOCK_EX)
open(sys.argv[1] + ".held", "w").write("held")
time.sleep(float(sys.argv[2]))' "$1" "$2"
}
wait_held() {
    local t
    for ((t = 0; t < 100; t++)); do
        [ -s "$1.held" ] && return 0
        sleep 0.1
    done
    return 1
}
# ins_run STUB-STATUS: pkg_install_waiting with install_packages replaced by
# what scripts/deps.sh runs for apt (update, then a command that takes the
# dpkg lock: check), in the private state directory; "runs" counts the tries
ins_run() {
    (
        . "$MIGMON_SRC/scripts/install-lib.sh"
        A=$INS/apt
        o=(-q -o "Dir::State::status=$A/dpkg/status" -o "Dir::State::Lists=$A/lists"
            -o "Dir::Cache=$A/cache" -o "Dir::Etc::sourcelist=$A/sources.list"
            -o "Dir::Etc::sourceparts=$A/parts")
        install_packages() {
            echo run >>"$INS/runs"
            apt-get "${o[@]}" update >/dev/null && apt-get "${o[@]}" check >/dev/null
        }
        pkg_install_waiting build
    )
}

if ! command -v apt-get >/dev/null || ! command -v python3 >/dev/null; then
    echo "skip [test_install] the package lock: needs apt-get and python3" >&2
else
    export PKG_LOCK_FILES="$INS/apt/dpkg/lock-frontend $INS/apt/dpkg/lock $INS/apt/lists/lock $INS/apt/cache/archives/lock"
    for lock in dpkg/lock-frontend lists/lock; do
        rm -f "$INS/runs" "$INS/apt/$lock.held"
        hold_lock "$INS/apt/$lock" 2 &
        holder=$!
        wait_held "$INS/apt/$lock" || bad "install: the $lock holder did not start"
        t0=$SECONDS
        out=$(ins_run 2>&1); rc=$?
        wait "$holder"
        eq "install: $lock held 2 s: waited, then installed" "$rc" 0
        contains "install: $lock held: apt-get stopped at first" "$out" \
            "Could not get lock $INS/apt/$lock. It is held by process $holder"
        contains "install: $lock held: says who holds it" "$out" \
            "==> waiting for the package manager lock held by PID $holder ("
        contains "install: $lock held: ... and where" "$out" "on $INS/apt/$lock (at most "
        contains "install: $lock held: tried again once free" "$out" \
            "==> the package manager is free: trying again"
        eq "install: $lock held: two tries, about 2 s" \
            "$(wc -l <"$INS/runs"):$((SECONDS - t0 >= 1 && SECONDS - t0 <= 8))" "2:1"
    done

    # held past the limit: one clear error, status 1
    rm -f "$INS/runs" "$INS/apt/dpkg/lock-frontend.held"
    hold_lock "$INS/apt/dpkg/lock-frontend" 6 &
    holder=$!
    wait_held "$INS/apt/dpkg/lock-frontend" || bad "install: the holder did not start"
    err=$(PKG_LOCK_WAIT_S=2 ins_run 2>&1 >/dev/null); rc=$?
    kill "$holder" 2>/dev/null
    wait "$holder" 2>/dev/null
    eq "install: still locked at the limit: status 1" "$rc" 1
    contains "install: still locked at the limit: says so" "$err" \
        "error: the package manager is still locked by PID $holder ("
    contains "install: ... and what to do" "$err" "after 2 s; run this again when it has finished"
    eq "install: still locked at the limit: one try" "$(wc -l <"$INS/runs")" 1

    # a failure that is not a lock: its status at once, no waiting
    out=$(
        . "$MIGMON_SRC/scripts/install-lib.sh"
        install_packages() { return 7; }
        pkg_install_waiting build 2>&1
        echo "status $?"
    )
    eq "install: another failure: its own status, no wait" "$out" "status 7"
    unset PKG_LOCK_FILES
fi

# the closing snapshot off a terminal: a hint at --demo when no GPU can be
# shown (no driver: the simulator without a scenario answers
# DRIVER_NOT_LOADED; a driver with no GPU bound), none when there is one
fin() { # fin SCENARIO|"": install_finish on the simulator, standard input not a terminal
    (
        . "$MIGMON_SRC/scripts/install-lib.sh"
        if [ -n "$1" ]; then export MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/$1"; fi
        MIGMON_SIM_TIME=100 install_finish "$MIGMON_BIN" --nvml-path "$MIGMON_SIM_LIB" </dev/null 2>&1
    )
}
hint="==> no NVIDIA GPU to show here (no driver, or no GPU bound to it): try '$MIGMON_BIN --demo' to see the monitor on the bundled simulator"
(unset MIGMON_SIM_SCENARIO; fin "") >"$INS/nodriver.txt"; rc=$?
eq "install: no driver: status 0" "$rc" 0
contains "install: no driver: one snapshot" "$(cat "$INS/nodriver.txt")" "==> not on a terminal: one snapshot instead"
eq "install: no driver: ends with the --demo hint" "$(tail -1 "$INS/nodriver.txt")" "$hint"
eq "install: no GPU bound: ends with the --demo hint" "$(fin no-gpu.ini | tail -1)" "$hint"
out=$(fin h200-mig.ini)
contains "install: a GPU: the snapshot shows it" "$out" "NVIDIA H200"
case "$out" in *"--demo"*) bad "install: a GPU: no --demo hint" ;; *) ok ;; esac
