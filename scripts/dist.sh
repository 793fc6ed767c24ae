#!/bin/sh
# scripts/dist.sh BUILD-DIR NAME: the release tarball BUILD-DIR/NAME.tar.gz
# from the portable build in BUILD-DIR (make dist). Unpacked, NAME/ is
# ready to run: mig-gpu-mon --demo finds the simulator in NAME/sim/.
set -eu
build=$1
name=$2
stage=$build/dist/$name
rm -rf "$build/dist"
mkdir -p "$stage/sim/scenarios" "$stage/sim/dcgm3" "$stage/man" "$stage/completions"
install -m 0755 "$build/mig-gpu-mon" "$stage/mig-gpu-mon"
install -m 0755 "$build/sim/libnvidia-ml.so.1" "$build/sim/libdcgm.so.4" "$stage/sim/"
install -m 0755 "$build/sim/dcgm3/libdcgm.so.3" "$stage/sim/dcgm3/"
install -m 0644 sim/scenarios/*.ini "$stage/sim/scenarios/"
install -m 0644 man/mig-gpu-mon.1 "$stage/man/"
install -m 0644 completions/mig-gpu-mon.bash completions/_mig-gpu-mon "$stage/completions/"
install -m 0644 README.md LICENSE "$stage/"
(cd "$stage" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort |
    xargs sha256sum >SHA256SUMS)
# the same bytes from the same commit: fixed order, owners and times
mtime=$(git log -1 --format=%ct 2>/dev/null || echo 0)
tar -C "$build/dist" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" \
    -cf - "$name" | gzip -9n >"$build/$name.tar.gz"
echo "dist: $build/$name.tar.gz ($(wc -c <"$build/$name.tar.gz") bytes, $(find "$stage" -type f | wc -l) files)"
