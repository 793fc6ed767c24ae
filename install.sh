#!/usr/bin/env bash
# Set up, build, install and start mig-gpu-mon.
#   ./install.sh                     installs to /usr/local (PREFIX=... to change)
# Installs the compiler, make and libraries it needs (apt-get, dnf or yum),
# printing each package; runs as root or through sudo. While another job
# holds apt's lock (unattended-upgrades) it waits, at most PKG_LOCK_WAIT_S
# seconds (600).
set -euo pipefail
cd "$(dirname "$0")"
. scripts/deps.sh
. scripts/install-lib.sh

PREFIX=${PREFIX:-/usr/local}
pkg_install_waiting build
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
install_finish "$bin"
