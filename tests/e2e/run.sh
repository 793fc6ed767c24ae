#!/usr/bin/env bash
# Run every tests/e2e/test_*.sh against the built binary and simulator.
# Needs MIGMON_BIN, MIGMON_SIM_LIB, MIGMON_SIM_DIR, MIGMON_SRC (set by make).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${MIGMON_BIN:?}" "${MIGMON_SIM_LIB:?}" "${MIGMON_SIM_DIR:?}" "${MIGMON_SRC:?}"
command -v jq >/dev/null || { echo "e2e: jq is required" >&2; exit 1; }
. "$here/lib.sh"
TMP=$(mktemp -d /tmp/migmon-e2e.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export TMP
# the files the tests write are writable by their owner alone, whatever the
# caller's umask: a configuration or credentials file writable by others is
# refused (src/trust.h)
umask 022
# no configuration file of the user's reaches the tests (test_config.sh writes its own)
export XDG_CONFIG_HOME="$TMP/config-home"
# the table's full width (test_cli.sh checks the 80-column one)
export COLUMNS=120
# no locale from the caller's shell: CI runs with none, and a check whose
# grep or sed needs UTF-8 says so itself (LC_ALL=C.UTF-8 on that command)
unset LANG LANGUAGE LC_ALL LC_CTYPE LC_COLLATE LC_MESSAGES
for t in "$here"/test_*.sh; do
    CURRENT=$(basename "$t" .sh)
    # E2E_ONLY="test_tui test_hang": only these files
    if [ -n "${E2E_ONLY:-}" ]; then
        case " $E2E_ONLY " in *" $CURRENT "*) ;; *) continue ;; esac
    fi
    before=$FAIL
    . "$t"
    [ "$FAIL" -eq "$before" ] && echo "ok   $CURRENT" || echo "FAIL $CURRENT"
done
echo "e2e: $PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
