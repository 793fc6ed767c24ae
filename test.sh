#!/usr/bin/env bash
# Install the build and test dependencies, build, and run the tests.
#
#   ./test.sh          the -Werror build, the unit tests and the end-to-end
#                      suite (its files in parallel): make test
#   ./test.sh --full   the deeper passes (docs/ci.md): the short soak,
#                      valgrind, then the unit and end-to-end tests again
#                      under ASan+UBSan and under ThreadSanitizer:
#                      make check-full. CI runs it after ./test.sh.
#
# Ends with one line: "test.sh: N passed, N failed" (unit tests and
# end-to-end assertions), and a non-zero status when any failed.
set -euo pipefail
cd "$(dirname "$0")"
full=false
case "${1:-}" in
"") ;;
--full) full=true ;;
-h | --help)
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
*)
    echo "test.sh: $1: unknown option (--full, --help)" >&2
    exit 2
    ;;
esac
. scripts/deps.sh

install_packages test
make -j"$(nproc 2>/dev/null || echo 2)" all
log=$(mktemp /tmp/migmon-test.XXXXXX)
trap 'rm -f "$log"' EXIT
rc=0
if $full; then
    make check-full 2>&1 | tee "$log" || rc=$?
else
    make test 2>&1 | tee "$log" || rc=$?
fi
# cmocka: "[  PASSED  ] N test(s)." / "[  FAILED  ] N test(s), listed below:";
# run.sh: "e2e: N passed, N failed"
read -r pass fail < <(awk '
    /^\[  PASSED  \] [0-9]+ test/ { p += $4 }
    /^\[  FAILED  \] [0-9]+ test/ { f += $4 }
    /^e2e: [0-9]+ passed, [0-9]+ failed$/ { p += $2; f += $4 }
    END { print p + 0, f + 0 }' "$log")
[ "$rc" -ne 0 ] && [ "$fail" -eq 0 ] && fail=1 # a step that failed before counting
echo "test.sh: $pass passed, $fail failed"
exit "$rc"
