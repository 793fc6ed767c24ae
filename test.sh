#!/usr/bin/env bash
# Install the build and test dependencies, then run every test suite
# (make check: -Werror build, unit tests, end-to-end tests, valgrind, then
# the unit and end-to-end tests again under ASan+UBSan and under
# ThreadSanitizer).
set -euo pipefail
cd "$(dirname "$0")"
. scripts/deps.sh

install_packages test
make -j"$(nproc 2>/dev/null || echo 2)" all
make check
