#!/usr/bin/env bash
# Set up, build, install and start mig-gpu-mon.
#   ./install.sh                     installs to /usr/local (PREFIX=... to change)
# Installs the compiler, make and libraries it needs (apt-get, dnf or yum),
# printing each package; runs as root or through sudo.
set -euo pipefail
cd "$(dirname "$0")"
. scripts/deps.sh

PREFIX=${PREFIX:-/usr/local}
install_packages build
echo "==> building"
make -j"$(nproc 2>/dev/null || echo 2)"
echo "==> installing to $PREFIX"
as_root make install PREFIX="$PREFIX"
bin="$PREFIX/bin/mig-gpu-mon"
echo "==> installed $bin ($("$bin" --version))"
case ":$PATH:" in
*":$PREFIX/bin:"*) ;;
*) echo "note: $PREFIX/bin is not in your PATH" ;;
esac
if [ -t 0 ] && [ -t 1 ]; then
    echo "==> starting the monitor (Ctrl-C quits)"
    exec "$bin"
else
    echo "==> not on a terminal: one snapshot instead (run '$bin' in a terminal for the live view)"
    "$bin" --once
fi
