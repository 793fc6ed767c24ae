#!/usr/bin/env bash
# shellcheck disable=SC2317 # the teardown functions run from traps
# scripts/ci-chroot.sh: run ./test.sh the way the README promises it works,
# on a fresh minimal Debian 12 (bookworm) machine that has nothing but git.
# CI runs this (.ci/run); docs/ci.md describes it.
#
#   scripts/ci-chroot.sh                    as root; exit status is the suite's
#
# What it does, each run:
#   1. installs debootstrap on this machine if it is missing (apt-get);
#   2. makes the base tarball ($MIGMON_CI_DIR/bookworm-minbase.tgz: the .debs
#      of `debootstrap --variant=minbase --include=git bookworm`) unless a
#      cached one made with the same arguments is there;
#   3. in a private mount namespace (unshare), installs a new root
#      from that tarball ($MIGMON_CI_DIR/root, deleted first), gives it this
#      machine's Debian apt sources (same mirror, same suites: bookworm,
#      -updates, -security), its Acquire:: apt settings, resolv.conf and
#      hosts, mounts proc, sysfs, a /dev of its own (tmpfs with the usual
#      nodes, a new devpts instance, /dev/shm), clones the committed HEAD of
#      this checkout to /root/mig-gpu-mon and runs ./test.sh, then
#      ./test.sh --full, there as root with CI=true, no stdin and a login-like environment;
#   4. when that ends (or on an error or a signal): kills every process
#      whose root is the chroot (servers the tests left running), unmounts
#      everything, checks that nothing is mounted under the root any more and
#      only then deletes it (--one-file-system).
#
# Nothing is ever mounted in this machine's own mount namespace: the mounts
# live in the private namespace and go away with it even if this script is
# killed. There is no PID namespace: the tests must see the machine's own
# PIDs as a real machine's would (the monitor takes NVML's PIDs as invisible
# inside a PID namespace other than the init one).
#
# Environment:
#   MIGMON_CI_CMD=...     run this bash command in the clone instead of
#                         ./test.sh && ./test.sh --full (a shorter check while working on this
#                         script or on scripts/deps.sh)
#   MIGMON_CI_DIR=DIR     where the tarball and the root are (build/ci)
#   MIGMON_CI_MIRROR=URI  the Debian mirror for debootstrap (default: the
#                         one this machine's apt sources name for bookworm)
#   MIGMON_CI_REFRESH=1   make the base tarball again even if one is cached
#   MIGMON_CI_KEEP=1      leave the root in place afterwards (to look at it;
#                         the next run deletes it)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
self=$repo/scripts/$(basename "$0")
suite=bookworm
variant=minbase
include=git
ci_dir=${MIGMON_CI_DIR:-$repo/build/ci}
tarball=$ci_dir/$suite-$variant.tgz
root=$ci_dir/root
clone=/root/mig-gpu-mon

log() { printf '==> [ci-chroot] %s\n' "$*"; }
die() {
    printf 'ci-chroot: error: %s\n' "$*" >&2
    exit 1
}
# elapsed START: seconds since START ($SECONDS)
elapsed() { echo "$((SECONDS - $1)) s"; }

# The Debian apt sources of this machine, as deb822 stanzas: every enabled
# entry for bookworm or bookworm-SOMETHING, from sources.list, *.list and
# *.sources (third-party repositories, whose keys a fresh machine would not
# have, are left out).
debian_sources() {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        awk -v s="$suite" '
            /^[ \t]*deb[ \t]/ {
                line = $0
                sub(/^[ \t]*deb[ \t]+/, "", line)
                opts = ""
                if (line ~ /^\[/) {
                    opts = substr(line, 2, index(line, "]") - 2)
                    line = substr(line, index(line, "]") + 1)
                }
                n = split(line, w, /[ \t]+/)
                i = 1; while (i <= n && w[i] == "") i++
                uri = w[i]; dist = w[i + 1]
                if (dist != s && dist !~ ("^" s "-[a-z]+$")) next
                comps = ""
                for (j = i + 2; j <= n; j++) if (w[j] != "") comps = comps " " w[j]
                printf "Types: deb\nURIs: %s\nSuites: %s\nComponents:%s\n", uri, dist, comps
                if (match(opts, /signed-by=[^ \t]+/))
                    printf "Signed-By: %s\n", substr(opts, RSTART + 10, RLENGTH - 10)
                print ""
            }' "$f"
    done
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk -v s="$suite" '
            BEGIN { RS = ""; FS = "\n" }
            {
                keep = 0; off = 0
                for (i = 1; i <= NF; i++) {
                    if ($i ~ /^Suites:/) {
                        n = split(substr($i, 8), w, /[ \t]+/)
                        for (j = 1; j <= n; j++)
                            if (w[j] == s || w[j] ~ ("^" s "-[a-z]+$")) keep = 1
                    }
                    if ($i ~ /^Enabled:[ \t]*[Nn]o/) off = 1
                    if ($i ~ /^Types:/ && $i !~ /[ \t]deb([ \t]|$)/) off = 1
                }
                if (keep && !off) {
                    for (i = 1; i <= NF; i++) if ($i !~ /^#/) print $i
                    print ""
                }
            }' "$f"
    done
}

# The mirror for debootstrap: the first URI given for the suite itself.
debian_mirror() {
    debian_sources | awk -v s="$suite" '
        BEGIN { RS = ""; FS = "\n" }
        {
            uri = ""; has = 0
            for (i = 1; i <= NF; i++) {
                if ($i ~ /^URIs:/) { split(substr($i, 6), u, /[ \t]+/); uri = (u[1] != "" ? u[1] : u[2]) }
                if ($i ~ /^Suites:/) { n = split(substr($i, 8), w, /[ \t]+/); for (j = 1; j <= n; j++) if (w[j] == s) has = 1 }
            }
            if (has && uri != "") { print uri; exit }
        }'
}

# Kill every process whose root directory is the chroot's (compared by
# device and inode, which holds across mount namespaces).
kill_chrooted() {
    local id d pid i left
    id=$(stat -c %d:%i "$root" 2>/dev/null) || return 0
    for ((i = 0; i < 50; i++)); do
        left=0
        for d in /proc/[0-9]*; do
            pid=${d#/proc/}
            [ "$pid" != "$$" ] || continue
            [ "$(stat -Lc %d:%i "$d/root" 2>/dev/null)" = "$id" ] || continue
            kill -KILL "$pid" 2>/dev/null && left=1
        done
        [ "$left" -eq 0 ] && return 0
        sleep 0.1
    done
    echo "ci-chroot: processes in $root would not end" >&2
}

# Mount points at or under $1 in the current mount namespace, deepest first.
mounts_under() {
    findmnt -rn -o TARGET | awk -v r="$1" '$0 == r || index($0, r "/") == 1' | sort -r
}

# Delete the root: only when nothing is mounted in or under it, and never
# crossing onto another file system.
remove_root() {
    [ -e "$root" ] || return 0
    if [ -n "$(mounts_under "$root")" ]; then
        echo "ci-chroot: error: still mounted under $root, not deleting it:" >&2
        mounts_under "$root" >&2
        return 1
    fi
    rm -rf --one-file-system "$root"
}

# How long apt spent installing in the chroot (its history log).
apt_time() {
    local h=$root/var/log/apt/history.log s e total=0 n=0
    [ -f "$h" ] || return 0
    while IFS= read -r line; do
        case "$line" in
        Start-Date:*) s=$(date -d "${line#Start-Date: }" +%s 2>/dev/null) || s= ;;
        End-Date:*)
            e=$(date -d "${line#End-Date: }" +%s 2>/dev/null) || continue
            [ -n "$s" ] && total=$((total + e - s)) && n=$((n + 1))
            ;;
        esac
    done <"$h"
    [ "$n" -eq 0 ] || log "apt installed packages in the chroot for $total s ($n runs)"
}

# ---------------------------------------------------------------------------
# Inside the private mount namespace: install the root, set it up, run the
# suite, tear down. $1 = the commit to test.
inside() {
    local rev=$1 rc=0 t run_pid=
    teardown() {
        local m
        # what the tests left running would keep the mounts busy
        kill_chrooted
        mounts_under "$root" | while read -r m; do
            umount "$m" 2>/dev/null || umount -l "$m" || echo "ci-chroot: cannot unmount $m" >&2
        done
    }
    trap teardown EXIT
    trap 'exit 143' TERM
    trap 'exit 130' INT
    trap 'exit 129' HUP

    t=$SECONDS
    log "installing the root from $tarball"
    debootstrap --variant="$variant" --include="$include" --unpack-tarball="$tarball" \
        "$suite" "$root" "$mirror" >"$ci_dir/debootstrap.log" 2>&1 ||
        { tail -n 30 "$ci_dir/debootstrap.log" >&2; die "debootstrap failed (log: $ci_dir/debootstrap.log)"; }
    log "root installed in $(elapsed "$t")"

    # apt: this machine's Debian sources and how it reaches them
    rm -f "$root/etc/apt/sources.list"
    debian_sources >"$root/etc/apt/sources.list.d/debian.sources"
    local f
    for f in /etc/apt/apt.conf /etc/apt/apt.conf.d/*; do
        [ -f "$f" ] && grep -q 'Acquire' "$f" && cp "$f" "$root/etc/apt/${f#/etc/apt/}"
    done
    cp -L /etc/resolv.conf "$root/etc/resolv.conf"
    cp -L /etc/hosts "$root/etc/hosts"
    # no init system here: packages must not start their daemons (the tests
    # start their own)
    printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod 755 "$root/usr/sbin/policy-rc.d"

    # the root a mount point of its own, as a system's / is: tools that
    # remount / (buildah's layer, unshare's private propagation) need one
    mount --bind "$root" "$root"
    mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
    mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root/sys"
    mount -t tmpfs -o nosuid,mode=0755,size=64m devtmp "$root/dev"
    mknod -m 666 "$root/dev/null" c 1 3
    mknod -m 666 "$root/dev/zero" c 1 5
    mknod -m 666 "$root/dev/full" c 1 7
    mknod -m 666 "$root/dev/random" c 1 8
    mknod -m 666 "$root/dev/urandom" c 1 9
    mknod -m 666 "$root/dev/tty" c 5 0
    # FUSE, where this machine has it: the amdgpu hung-read test mounts one
    # (tests/e2e/test_amdgpu_hang.sh; it says it skipped without)
    if [ -c /dev/fuse ]; then mknod -m 666 "$root/dev/fuse" c 10 229; fi
    ln -s /proc/self/fd "$root/dev/fd"
    ln -s /proc/self/fd/0 "$root/dev/stdin"
    ln -s /proc/self/fd/1 "$root/dev/stdout"
    ln -s /proc/self/fd/2 "$root/dev/stderr"
    mkdir "$root/dev/pts" "$root/dev/shm"
    mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5,nosuid,noexec devpts "$root/dev/pts"
    ln -s pts/ptmx "$root/dev/ptmx"
    mount -t tmpfs -o nosuid,nodev,mode=1777 shm "$root/dev/shm"

    t=$SECONDS
    git clone -q --no-hardlinks "$repo" "$root$clone"
    git -C "$root$clone" -c advice.detachedHead=false checkout -q "$rev" ||
        die "commit $rev is on no branch of $repo"
    log "cloned $rev to $clone in $(elapsed "$t")"

    local cmd='./test.sh && ./test.sh --full'
    [ -n "${MIGMON_CI_CMD:-}" ] && cmd=$MIGMON_CI_CMD
    local envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
        USER=root LOGNAME=root SHELL=/bin/bash CI=true)
    for f in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
        [ -n "${!f:-}" ] && envs+=("$f=${!f}")
    done
    t=$SECONDS
    log "running in the chroot: $cmd"
    # in the background so that a signal reaches the traps at once, with INT
    # and QUIT as they were (a background job would ignore them, and so
    # would every test)
    (
        trap - INT QUIT
        exec chroot "$root" /usr/bin/env -i "${envs[@]}" /bin/bash -c "cd $clone && $cmd" </dev/null
    ) &
    run_pid=$!
    wait "$run_pid" || rc=$?
    log "the command ended with status $rc after $(elapsed "$t")"
    apt_time
    return "$rc"
}

if [ "${1:-}" = --inside ]; then
    mirror=$3
    inside "$2"
    exit
fi

# ---------------------------------------------------------------------------
# On this machine.
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, mount, chroot)"
t_all=$SECONDS
case "$ci_dir" in
/*[[:space:]]* | *[[:space:]]*) die "MIGMON_CI_DIR must not contain white space: $ci_dir" ;;
esac
mkdir -p "$ci_dir"
ci_dir=$(cd "$ci_dir" && pwd -P)
export MIGMON_CI_DIR=$ci_dir # the same, resolved, for the part in the namespace
tarball=$ci_dir/$suite-$variant.tgz
root=$ci_dir/root
# one run at a time per directory (the lock is not handed to the chroot)
exec 9>"$ci_dir/lock"
flock -n 9 || die "another run is using $ci_dir"
rev=$(git -C "$repo" rev-parse HEAD)
[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ] ||
    log "note: the checkout has uncommitted changes; only the commit $rev is tested"

for tool in debootstrap unshare chroot findmnt flock; do
    command -v "$tool" >/dev/null 2>&1 && continue
    [ "$tool" = debootstrap ] || die "$tool not found (util-linux / coreutils)"
    command -v apt-get >/dev/null 2>&1 || die "debootstrap is missing and there is no apt-get to install it"
    t=$SECONDS
    log "installing debootstrap"
    env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
    log "debootstrap installed in $(elapsed "$t")"
done

mirror=${MIGMON_CI_MIRROR:-$(debian_mirror)}
[ -n "$mirror" ] || die "no Debian $suite source in /etc/apt (set MIGMON_CI_MIRROR)"
[ -n "$(debian_sources)" ] || die "no Debian $suite apt source to give the chroot"
log "mirror $mirror"

key="$suite $variant $include $mirror"
if [ "${MIGMON_CI_REFRESH:-}" != 1 ] && [ -f "$tarball" ] &&
    [ "$(cat "$tarball.key" 2>/dev/null)" = "$key" ]; then
    log "base tarball: cached $tarball"
else
    t=$SECONDS
    log "making the base tarball $tarball"
    rm -f "$tarball" "$tarball.key" "$tarball.part"
    work=$ci_dir/tarball-work
    [ -z "$(mounts_under "$work")" ] || die "something is mounted under $work"
    rm -rf --one-file-system "$work"
    # in a mount namespace of its own, like everything else here
    unshare --mount --fork debootstrap --variant="$variant" --include="$include" \
        --make-tarball="$tarball.part" "$suite" "$work" "$mirror" >"$ci_dir/make-tarball.log" 2>&1 ||
        { tail -n 30 "$ci_dir/make-tarball.log" >&2; die "debootstrap --make-tarball failed (log: $ci_dir/make-tarball.log)"; }
    rm -rf --one-file-system "$work"
    mv "$tarball.part" "$tarball"
    printf '%s\n' "$key" >"$tarball.key"
    log "base tarball made in $(elapsed "$t")"
fi

remove_root || exit 1

ns_pid=
on_signal() {
    trap - INT TERM HUP
    log "interrupted: ending the chroot"
    # the inner script ends the chroot's processes and unmounts
    if [ -n "$ns_pid" ]; then
        kill -TERM "$ns_pid" 2>/dev/null || true
        wait "$ns_pid" 2>/dev/null || true
    fi
    exit 130
}
on_exit() {
    if [ "${MIGMON_CI_KEEP:-}" = 1 ]; then
        log "MIGMON_CI_KEEP=1: the root stays in $root"
    else
        kill_chrooted
        remove_root || true
    fi
}
trap on_signal INT TERM HUP
trap on_exit EXIT

rc=0
# in the background so that the traps above can act while it runs; with
# INT and QUIT as they were (a background job would otherwise ignore them,
# and so would every test)
(
    trap - INT QUIT
    exec unshare --mount --propagation private "$self" --inside "$rev" "$mirror" </dev/null 9>&-
) &
ns_pid=$!
wait "$ns_pid" || rc=$?
ns_pid=
log "total $(elapsed "$t_all"), status $rc"
exit "$rc"
