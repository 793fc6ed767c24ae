# shellcheck shell=bash
# The portable binary (make portable, docs/portable.md) in a root that holds
# nothing but glibc: --demo --once, the interactive monitor at 80x24 in tmux
# (the stored screen of test_tui), record; ldd names only glibc's libraries;
# with TERM=xterm-256color and no terminfo anywhere it still draws (the
# built-in entries). Then the release tarball (make dist) and the OCI image
# (make image): the image's root holds exactly the expected files, and its
# binary, run inside that root, answers --demo --once and a scrape.
#
# The root: MIGMON_PORTABLE_ROOT=DIR (a pristine Debian minbase, say, from
# debootstrap) is copied; without it, the files of Debian's libc6 package
# alone (stricter than minbase: no shell, no ncurses, no terminfo). It is
# entered with chroot in a private mount namespace (unshare), so it needs
# root; the test's directory and the source tree are bind-mounted into it
# at their own paths for the scenarios, fixtures and frame files.
portable_t0=$SECONDS
if [ -n "${MIGMON_SAN:-}" ]; then
    echo "not run [test_portable] a sanitizer build (SAN=$MIGMON_SAN): the portable binary is built without sanitizers" >&2
    return 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null || ! command -v tmux >/dev/null; then
    echo "not run [test_portable] needs root, unshare and tmux (chroot into a glibc-only root)" >&2
    return 0
fi
if ! make -C "$MIGMON_SRC" --no-print-directory -s portable >"$TMP/portable.make" 2>&1; then
    bad "make portable failed: $(tail -n 5 "$TMP/portable.make")"
    return 0
fi
PB=$MIGMON_SRC/build-portable
contains "make portable states the glibc floor" "$(cat "$TMP/portable.make")" "glibc 2.34 or newer"
# a size of the portable binary given in the docs is this build's, or none
# is given (a figure no test computes goes stale)
psize=$(stat -c %s "$PB/mig-gpu-mon")
pmib=$(awk -v b="$psize" 'BEGIN { printf "%.2f", b / 1048576 }')
contains "make portable prints the size" "$(cat "$TMP/portable.make")" "$psize bytes ($pmib MiB)"
stale=$(for f in README.md docs/portable.md; do
    sed -nE 's/.*build-portable\/mig-gpu-mon.*[^0-9.]([0-9]+\.[0-9]+) MiB.*/\1/p' "$MIGMON_SRC/$f" |
        grep -vxF "$pmib" | sed "s|^|$f: |"
done)
eq "docs: every size given for the portable binary is this build's ($pmib MiB)" "$stale" ""

# --- the root -----------------------------------------------------------
PR=$TMP/proot
if [ -n "${MIGMON_PORTABLE_ROOT:-}" ]; then
    cp -a "$MIGMON_PORTABLE_ROOT" "$PR"
    root_kind="a copy of $MIGMON_PORTABLE_ROOT"
else
    mkdir -p "$PR"
    # every file and link of libc6, not its directories (merged /usr: /lib
    # and /lib64 are links into usr/), and glibc's C.UTF-8 locale (libc-bin,
    # as in every Debian system)
    (cd / && { dpkg -L libc6; dpkg -L libc-bin | grep '^/usr/lib/locale/C\.utf8/'; } | while read -r f; do
        [ -f "$f" ] || [ -L "$f" ] || continue
        [ -d "$f" ] && continue
        printf '%s\n' "${f#/}"
    done | tar -cf - --no-recursion -T - 2>/dev/null) | tar -C "$PR" -xf -
    [ -L /lib ] && [ ! -e "$PR/lib" ] && ln -s usr/lib "$PR/lib"
    [ -L /lib64 ] && [ ! -e "$PR/lib64" ] && ln -s usr/lib64 "$PR/lib64"
    root_kind="glibc only: $(find "$PR" -type f | wc -l) files of libc6 and libc-bin's C.UTF-8 locale"
fi
rm -rf "$PR/etc/terminfo" "$PR/lib/terminfo" "$PR/usr/lib/terminfo" "$PR/usr/share/terminfo" 2>/dev/null
mkdir -p "$PR/opt/mig-gpu-mon/sim" "$PR/proc" "$PR/dev" "$PR/tmp" "$PR$TMP" "$PR$MIGMON_SRC"
cp "$PB/mig-gpu-mon" "$PR/opt/mig-gpu-mon/"
cp "$PB/sim/libnvidia-ml.so.1" "$PB/sim/libdcgm.so.4" "$PR/opt/mig-gpu-mon/sim/"
cp -r "$MIGMON_SRC/sim/scenarios" "$PR/opt/mig-gpu-mon/sim/"
echo "note [test_portable] the root: $root_kind; no terminfo in it" >&2

# unshare makes the new namespace's mounts private by remounting /, which
# fails where / is no mount point: in a chroot such as CI's
# (scripts/ci-chroot.sh), whose own namespace is private already. There,
# the propagation as it is (mountpoint(1) cannot tell: in a chroot it takes
# / for one).
UNSHARE=(unshare --mount)
"${UNSHARE[@]}" true 2>/dev/null || UNSHARE+=(--propagation unchanged)
# $TMP/in-root CMD...: CMD (an absolute path: the root may have no env) in the root
cat >"$TMP/in-root" <<EOS
#!/bin/sh
exec ${UNSHARE[*]} sh -c 'mount -t proc proc "$PR/proc" &&
    mount --rbind /dev "$PR/dev" && mount --bind "$TMP" "$PR$TMP" &&
    mount --bind -o ro "$MIGMON_SRC" "$PR$MIGMON_SRC" &&
    exec chroot "$PR" "\$@"' in-root "\$@"
EOS
chmod +x "$TMP/in-root"

out=$("$TMP/in-root" /opt/mig-gpu-mon/mig-gpu-mon --version 2>&1)
case "$out" in
"mig-gpu-mon 0.1.0 (git "*", portable)") ok ;;
*) bad "portable --version: '$out'" ;;
esac
out=$("$TMP/in-root" /opt/mig-gpu-mon/mig-gpu-mon --demo --once 2>&1); rc=$?
eq "in the root: --demo --once exits 0" "$rc" 0
contains "in the root: --demo --once shows the H200" "$out" "H200"
contains "in the root: --demo --once names the driver" "$out" "driver 570.211.01"

# ldd, run outside the root (it is a shell script): glibc's libraries only
libs=$(ldd "$PB/mig-gpu-mon" | awk '{ print $1 }' | sed 's|.*/||' | LC_ALL=C sort | tr '\n' ' ')
eq "ldd lists only glibc's libraries" "$libs" "ld-linux-x86-64.so.2 libc.so.6 libm.so.6 linux-vdso.so.1 "

# record, in the root
"$TMP/in-root" /opt/mig-gpu-mon/mig-gpu-mon record --demo -n 2 -i 100 -o "$TMP/portable.jsonl" </dev/null 2>"$TMP/portable.rec.err"
rc=$?
eq "in the root: record -n 2 exits 0" "$rc" 0
eq "in the root: record -n 2 writes two snapshots" \
    "$(jq -c 'select(.type == null) | .devices[0].name' "$TMP/portable.jsonl" 2>&1 | tr '\n' ' ')" \
    '"NVIDIA H200" "NVIDIA H200" '

# the interactive monitor at 80x24, TERM=tmux-256color from the built-in
# entries: the very screen test_tui stores for the normal build
. "$MIGMON_SRC/tests/e2e/tui_lib.sh"
P=$(tui_proc pa100 two-core)
MIGMON_BIN="$TMP/in-root" tui_start pa100 80 24 4 MIGMON_SIM_SCENARIO="$MIGMON_SRC/sim/scenarios/a100-sxm4-80gb.ini" -- \
    /opt/mig-gpu-mon/mig-gpu-mon --nvml-path /opt/mig-gpu-mon/sim/libnvidia-ml.so.1 --proc-root "$P"
tui_cpu_step pa100
tui_screen "portable, in the root, a100 at 80x24" pa100 a100-80x24
eq "portable TUI: q exits 0" "$(tui_quit pa100 q)" 0
ls "$PR/tmp" | grep -q terminfo && bad "the built-in terminfo directory was left in /tmp"
ok

# TERM=xterm-256color, no terminfo anywhere in the root: still draws
MIGMON_BIN="$TMP/in-root" tui_start px 80 24 2 TERM=xterm-256color -- /opt/mig-gpu-mon/mig-gpu-mon --demo
got=$(tui_capture px)
contains "xterm-256color without terminfo: the header" "$got" "mig-gpu-mon"
contains "xterm-256color without terminfo: the devices panel" "$got" "GPU 0 H200"
eq "xterm-256color without terminfo: q exits 0" "$(tui_quit px q)" 0
# and a terminal that is not built in: the usual one line
MIGMON_BIN="$TMP/in-root" tui_start pk 80 24 2 TERM=kitty -- /opt/mig-gpu-mon/mig-gpu-mon --demo
eq "TERM=kitty without terminfo: exit 2" "$(tui_quit pk q)" 2
tui_kill_all

# --- the release tarball ----------------------------------------------------
if ! make -C "$MIGMON_SRC" --no-print-directory -s dist >"$TMP/dist.make" 2>&1; then
    bad "make dist failed: $(tail -n 5 "$TMP/dist.make")"
else
    tgz=$(ls "$PB"/mig-gpu-mon-0.1.0-linux-*.tar.gz)
    mkdir -p "$TMP/dist"
    tar -C "$TMP/dist" -xzf "$tgz"
    D=$(echo "$TMP"/dist/mig-gpu-mon-0.1.0-linux-*)
    eq "dist: its files" "$(cd "$D" && find . -type f ! -path './sim/scenarios/*' | LC_ALL=C sort | tr '\n' ' ')" \
        "./LICENSE ./README.md ./SHA256SUMS ./completions/_mig-gpu-mon ./completions/mig-gpu-mon.bash ./man/mig-gpu-mon.1 ./mig-gpu-mon ./sim/dcgm3/libdcgm.so.3 ./sim/libdcgm.so.4 ./sim/libnvidia-ml.so.1 "
    eq "dist: every scenario" "$(ls "$D/sim/scenarios" | wc -l)" "$(ls "$MIGMON_SRC/sim/scenarios"/*.ini | wc -l)"
    (cd "$D" && sha256sum -c --quiet SHA256SUMS) && ok || bad "dist: SHA256SUMS does not match"
    contains "dist: the licence is MIT" "$(head -n 3 "$D/LICENSE")" "Copyright (c) 2026 the mig-gpu-mon authors"
    # unpacked into the glibc-only root: --demo from the unpacked directory
    cp -r "$D" "$PR/opt/dist"
    out=$("$TMP/in-root" /opt/dist/mig-gpu-mon --demo --once --format json 2>&1)
    jeq "dist in the root: --demo --once from the unpacked directory" "$out" '.devices[0].name' '"NVIDIA H200"'
fi

# --- the OCI image ------------------------------------------------------------
if ! command -v buildah >/dev/null; then
    bad "buildah is required for the image test (scripts/deps.sh installs it)"
else
    # a private image store on vfs, which needs no overlay mounts (and works in
    # a chroot)
    export BUILDAH_OPTS="--root $TMP/containers --runroot $TMP/containers-run --storage-driver vfs"
    if ! make -C "$MIGMON_SRC" --no-print-directory -s image IMAGE=mig-gpu-mon-test:0.1.0 >"$TMP/image.make" 2>&1; then
        bad "make image failed: $(tail -n 5 "$TMP/image.make")"
    else
        # shellcheck disable=SC2086
        bh() { buildah $BUILDAH_OPTS "$@"; }
        eq "image: non-root user" "$(bh inspect --format '{{.OCIv1.Config.User}}' mig-gpu-mon-test:0.1.0)" "65532:65532"
        eq "image: export is the default command" \
            "$(bh inspect --format '{{.OCIv1.Config.Entrypoint}} {{.OCIv1.Config.Cmd}}' mig-gpu-mon-test:0.1.0)" \
            "[/usr/bin/mig-gpu-mon] [export --listen :9400]"
        # the DaemonSet runs the image make image names by default (pushed to a registry)
        contains "the DaemonSet names the image" "$(grep -E '^ +image:' "$MIGMON_SRC/contrib/kubernetes/daemonset.yaml")" \
            "/mig-gpu-mon:0.1.0"
        ctr=$(bh from --quiet mig-gpu-mon-test:0.1.0)
        IR=$(bh mount "$ctr")
        eq "image: exactly the expected files" "$(cd "$IR" && find . -type f | sed 's|^\.||' | LC_ALL=C sort)" \
            "$("$MIGMON_SRC/scripts/image.sh" --list "$PB")"
        mkdir -p "$IR/proc"
        irun() {
            exec "${UNSHARE[@]}" sh -c 'mount -t proc proc "$0/proc" &&
                exec chroot --userspec=65532:65532 "$0" "$@"' "$IR" "$@"
        }
        out=$(irun /usr/bin/mig-gpu-mon --demo --once 2>&1)
        contains "image root: --demo --once" "$out" "H200"
        irun /usr/bin/mig-gpu-mon --demo export --listen 127.0.0.1:0 >/dev/null 2>"$TMP/image.export.err" &
        epid=$!
        port=$(export_port "$TMP/image.export.err")
        if [ -z "$port" ]; then
            bad "image root: export did not start: $(head -c 300 "$TMP/image.export.err")"
        else
            # until the first sample is in (the page says "no sample yet" before)
            for ((i = 0; i < 50; i++)); do
                m=$(curl -s "http://127.0.0.1:$port/metrics")
                case "$m" in *'model="NVIDIA H200"'*) break ;; esac
                sleep 0.1
            done
            contains "image root: a scrape answers (libmicrohttpd from the image)" "$m" 'model="NVIDIA H200"'
        fi
        kill "$epid" 2>/dev/null
        wait "$epid" 2>/dev/null
        if command -v podman >/dev/null; then
            # shellcheck disable=SC2086
            if ! out=$(podman $BUILDAH_OPTS run --rm mig-gpu-mon-test:0.1.0 --demo --once 2>&1); then
                echo "note [test_portable] podman run failed here (checked with chroot instead): $(echo "$out" | tail -n 1)" >&2
            else
                contains "podman run: --demo --once" "$out" "H200"
            fi
        else
            echo "note [test_portable] podman is not installed: the image was run with chroot only" >&2
        fi
        bh umount "$ctr" >/dev/null
        bh rm "$ctr" >/dev/null
        bh rmi -a -f >/dev/null 2>&1
        chmod -R u+w "$TMP/containers" 2>/dev/null
    fi
    unset BUILDAH_OPTS
fi
echo "note [test_portable] $((SECONDS - portable_t0)) s" >&2
