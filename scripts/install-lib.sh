# shellcheck shell=bash
# Sourced by install.sh after scripts/deps.sh, not run: install the packages
# while another job holds the package manager, and end with the monitor.

# apt's locks: dpkg's frontend lock and its own, the package lists' (taken by
# apt-get update) and the download cache's. They are POSIX record locks
# (fcntl), so /proc/locks names the process holding one. apt-get stops at
# once with "Could not get lock" (status 100) when one is held, by
# unattended-upgrades say. Its DPkg::Lock::Timeout option (apt 1.9.11 and
# later) waits for the dpkg locks but not for the lists lock of apt-get
# update (apt 2.6), so the wait is done here. dnf and yum wait by themselves:
# none of these files exists there.
PKG_LOCK_FILES=${PKG_LOCK_FILES:-/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock /var/cache/apt/archives/lock}
# How long to wait for them, in seconds.
PKG_LOCK_WAIT_S=${PKG_LOCK_WAIT_S:-600}

# pkg_lock_holder: "PID FILE NAME" for a process that holds one of
# PKG_LOCK_FILES, else nothing. /proc/locks gives the device as the kernel's
# major:minor in hex and the inode; stat gives st_dev in the user-space
# encoding (major in bits 8-19 and above 32, minor in 0-7 and 20-31).
pkg_lock_holder() {
    local f dev ino id pid name
    [ -r /proc/locks ] || return 0
    for f in $PKG_LOCK_FILES; do
        read -r dev ino 2>/dev/null < <(stat -L -c '%d %i' "$f" 2>/dev/null) || continue
        id=$(printf '%02x:%02x:%s' $(((dev >> 8) & 0xfff | (dev >> 32) & ~0xfff)) \
            $(((dev & 0xff) | (dev >> 12) & ~0xff)) "$ino")
        # "1: POSIX  ADVISORY  WRITE 812 fe:00:405102 0 EOF"; a process
        # blocked on the lock is listed under it as "1: -> POSIX ..."
        pid=$(awk -v id="$id" '$2 != "->" && $6 == id { print $5; exit }' /proc/locks)
        [ -n "$pid" ] || continue
        name=$(cat "/proc/$pid/comm" 2>/dev/null) || name="?"
        echo "$pid $f ${name:-?}"
        return 0
    done
}

# pkg_lock_wait DEADLINE: wait while a package manager lock is held, until
# $SECONDS reaches DEADLINE, saying who holds it (again when that changes).
# 0: one was held and is free now; 2: none was held; 1: still held at the
# deadline (one error line on stderr).
pkg_lock_wait() {
    local held pid file name last="" waited=""
    while held=$(pkg_lock_holder) && [ -n "$held" ]; do
        read -r pid file name <<<"$held"
        if [ "$SECONDS" -ge "$1" ]; then
            echo "error: the package manager is still locked by PID $pid ($name) on $file" \
                "after ${PKG_LOCK_WAIT_S} s; run this again when it has finished" \
                "(PKG_LOCK_WAIT_S=SECONDS to wait longer)" >&2
            return 1
        fi
        if [ "$pid $name" != "$last" ]; then
            echo "==> waiting for the package manager lock held by PID $pid ($name) on $file" \
                "(at most $(($1 - SECONDS)) s more)..."
            last="$pid $name"
        fi
        waited=1
        sleep 1
    done
    [ -n "$waited" ] && return 0
    return 2
}

# pkg_install_waiting KIND: install_packages KIND (scripts/deps.sh); when it
# fails while another job holds the package manager's lock, wait for that
# job (at most PKG_LOCK_WAIT_S in all) and try again. Waiting only after a
# failure keeps a machine that has every package from waiting at all.
pkg_install_waiting() {
    local deadline=$((SECONDS + PKG_LOCK_WAIT_S)) rc w
    while :; do
        rc=0
        install_packages "$@" || rc=$?
        [ "$rc" -eq 0 ] && return 0
        w=0
        pkg_lock_wait "$deadline" || w=$?
        case "$w" in
        0) echo "==> the package manager is free: trying again" ;;
        1) return 1 ;;
        *) return "$rc" ;; # not a lock: apt's own message says why
        esac
    done
}

# install_finish BIN [ARGS...]: start the monitor on a terminal; elsewhere
# print one snapshot, and when no GPU can be shown (no driver, or none bound
# to it) say how to see the monitor anyway. ARGS go to every run (tests
# point them at the simulator).
install_finish() {
    local bin=$1
    shift
    if [ -t 0 ] && [ -t 1 ]; then
        echo "==> starting the monitor (Ctrl-C quits)"
        exec "$bin" "$@"
    fi
    echo "==> not on a terminal: one snapshot instead (run '$bin' in a terminal for the live view)"
    "$bin" --once "$@"
    # gpu_error is null and devices not empty when a driver lists a GPU
    # (docs/json.md); the JSON is one line
    local json
    json=$("$bin" --once --format json --gpm off "$@" 2>/dev/null) || json=""
    case "$json" in
    *'"gpu_error":null,'*'"devices":[{'*) ;;
    *)
        echo "==> no NVIDIA GPU to show here (no driver, or no GPU bound to it): try" \
            "'$bin --demo' to see the monitor on the bundled simulator"
        ;;
    esac
}
