#!/usr/bin/env bash
# Run one tests/e2e/test_*.sh in a process of its own: its own temporary
# directory ($TMP), its own tmux sockets (named after this process's PID)
# and its own ports (every server the tests start listens on port 0 or on
# a port it was just given), so run.sh can run several files at once.
# Prints the file's output, then "e2e-file NAME PASS FAIL" as its last line.
# Needs what run.sh needs (MIGMON_BIN, MIGMON_SIM_LIB, MIGMON_SIM_DIR,
# MIGMON_SRC).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
t=$1
. "$here/lib.sh"
TMP=$(mktemp -d /tmp/migmon-e2e.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export TMP
# the files the tests write are writable by their owner alone, whatever the
# caller's umask: a configuration or credentials file writable by others is
# refused (src/core/trust.h)
umask 022
# no configuration file of the user's reaches the tests (test_config.sh writes its own)
export XDG_CONFIG_HOME="$TMP/config-home"
# the table's full width (test_cli.sh checks the 80-column one)
export COLUMNS=120
# no locale from the caller's shell: CI runs with none, and a check whose
# grep or sed needs UTF-8 says so itself (LC_ALL=C.UTF-8 on that command)
unset LANG LANGUAGE LC_ALL LC_CTYPE LC_COLLATE LC_MESSAGES
CURRENT=$(basename "$t" .sh)
# what this file starts carries it (lib.sh: pgrep_mine)
export MIGMON_E2E_RUN="$CURRENT.$$"
. "$t"
echo "e2e-file $CURRENT $PASS $FAIL"
