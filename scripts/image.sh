#!/usr/bin/env bash
# scripts/image.sh BUILD-DIR IMAGE: the OCI image IMAGE (make image), built
# offline with buildah from scratch: the portable binary in BUILD-DIR, the
# libraries it opens at run time (libmicrohttpd for export, libnghttp2 and
# libprotobuf-c for the pod labels) with everything they need, copied from
# this machine, glibc's loader, libc and libm, the simulator and its
# scenarios (so the image runs --demo), a non-root user (uid 65532) and
# `export --listen :9400` as the default command. NVML comes from the node
# (the NVIDIA container toolkit mounts it). Also writes the image as an OCI
# archive, BUILD-DIR/IMAGE-NAME-oci.tar, to copy to a registry or a node.
#
#   scripts/image.sh --list BUILD-DIR   the files the image holds, one a line
#   BUILDAH_OPTS="--root DIR --runroot DIR --storage-driver vfs"   another
#                                       image store (the tests use a private one)
set -euo pipefail
# shellcheck disable=SC2086 # BUILDAH_OPTS: words
bh() { buildah ${BUILDAH_OPTS:-} "$@"; }

list_only=
if [ "${1:-}" = --list ]; then
    list_only=1
    shift
fi
# paths relative to the source tree (the scenarios, LICENSE), wherever it is run from
build=$(cd "$1" && pwd)
image=${2:-}
cd "$(dirname "$0")/.."
bin=$build/mig-gpu-mon
[ -x "$bin" ] || {
    echo "image: no portable binary $bin (make portable)" >&2
    exit 1
}

# The shared objects the dlopen()ed libraries need, as ldd resolves them
# here, and the libraries themselves: "SONAME-PATH REAL-FILE" lines.
libs() {
    local l sonames=(libmicrohttpd.so.12 libnghttp2.so.14 libprotobuf-c.so.1) path
    for l in "${sonames[@]}"; do
        path=$(ldconfig -p | awk -v n="$l" '$1 == n && /x86-64|x86_64|64bit|AArch64/ { print $NF; exit }')
        [ -n "$path" ] || path=$(ldconfig -p | awk -v n="$l" '$1 == n { print $NF; exit }')
        [ -n "$path" ] || {
            echo "image: $l is not installed here (scripts/deps.sh installs it)" >&2
            exit 1
        }
        echo "$path"
        ldd "$path" | awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }'
    done
    ldd "$bin" | awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }'
}

# In the image, every library lives in /lib/<multiarch>/ under its soname
# (the loader's own path as the binary names it, /lib64/...).
multiarch=$(gcc -print-multiarch 2>/dev/null || echo "$(uname -m)-linux-gnu")
files() {
    local p
    libs | sort -u | while read -r p; do
        case "$p" in
        */ld-linux*) echo "$p $p" ;;
        *) echo "/lib/$multiarch/$(basename "$p") $p" ;;
        esac
    done
    echo "/usr/bin/mig-gpu-mon $bin"
    echo "/usr/lib/mig-gpu-mon/sim/libnvidia-ml.so.1 $build/sim/libnvidia-ml.so.1"
    echo "/usr/lib/mig-gpu-mon/sim/libdcgm.so.4 $build/sim/libdcgm.so.4"
    echo "/usr/lib/mig-gpu-mon/sim/dcgm3/libdcgm.so.3 $build/sim/dcgm3/libdcgm.so.3"
    for p in sim/scenarios/*.ini; do echo "/usr/lib/mig-gpu-mon/$p $p"; done
    echo "/usr/share/doc/mig-gpu-mon/LICENSE LICENSE"
}

if [ -n "$list_only" ]; then
    { files | awk '{ print $1 }'; printf '%s\n' /etc/passwd /etc/group; } | LC_ALL=C sort -u
    exit 0
fi
command -v buildah >/dev/null || {
    echo "image: buildah is not installed (apt-get install buildah; scripts/deps.sh lists it)" >&2
    exit 1
}
[ -n "$image" ] || {
    echo "usage: scripts/image.sh BUILD-DIR IMAGE" >&2
    exit 2
}

ctr=$(bh from --quiet scratch)
trap 'bh rm "$ctr" >/dev/null 2>&1 || true' EXIT
root=$(bh mount "$ctr")
files | while read -r dst src; do
    mkdir -p "$root$(dirname "$dst")"
    # the file itself (cp -L), never the host's symlink
    cp -L "$src" "$root$dst"
done
chmod 0755 "$root/usr/bin/mig-gpu-mon"
mkdir -p "$root/etc"
printf 'root:x:0:0:root:/:/nonexistent\nnonroot:x:65532:65532:nonroot:/:/nonexistent\n' >"$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$root/etc/group"
mkdir -m 1777 "$root/tmp"
bh umount "$ctr" >/dev/null
bh config --user 65532:65532 --workingdir / --port 9400/tcp \
    --entrypoint '["/usr/bin/mig-gpu-mon"]' --cmd 'export --listen :9400' \
    --label org.opencontainers.image.title=mig-gpu-mon \
    --label org.opencontainers.image.version="${image##*:}" \
    --label org.opencontainers.image.licenses=MIT "$ctr"
bh commit --quiet --rm "$ctr" "$image" >/dev/null
trap - EXIT
archive=$build/$(echo "${image%%:*}" | tr '/' '_')-oci.tar
rm -f "$archive"
bh push --quiet "$image" "oci-archive:$archive:$image"
echo "image: $image ($(bh images --format '{{.Size}}' "$image" | head -n 1)), OCI archive $archive"
