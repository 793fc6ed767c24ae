# shellcheck shell=bash
# Flags, help, version and bad input: one clear line, the right exit status.
out=$("$MIGMON_BIN" --version); eq "--version" "$out" "mig-gpu-mon 0.1.0"
out=$("$MIGMON_BIN" --help); contains "--help lists --once" "$out" "--once"
contains "--help lists --nvml-path" "$out" "--nvml-path PATH"
contains "--help lists --debug" "$out" "--debug[=FILE]"

err=$("$MIGMON_BIN" --interval 50 2>&1 >/dev/null); rc=$?
eq "interval too small exits 2" "$rc" 2
eq "interval message" "$err" "mig-gpu-mon: --interval 50: must be between 100 and 3600000 milliseconds"
err=$("$MIGMON_BIN" --once --format xml 2>&1 >/dev/null); rc=$?
eq "bad format exits 2" "$rc" 2
eq "bad format message" "$err" "mig-gpu-mon: --format xml: expected json or table"
err=$("$MIGMON_BIN" --once --nvml-path /nonexistent/libnvidia-ml.so.1 2>&1 >/dev/null); rc=$?
eq "missing --nvml-path exits 2" "$rc" 2
eq "missing --nvml-path message" "$err" "mig-gpu-mon: --nvml-path /nonexistent/libnvidia-ml.so.1: no such file"
printf 'not an ELF' >"$TMP/bogus.so"
err=$("$MIGMON_BIN" --once --nvml-path "$TMP/bogus.so" 2>&1 >/dev/null); rc=$?
eq "unloadable --nvml-path exits 2" "$rc" 2
contains "unloadable --nvml-path says why" "$err" "cannot load it"
# The live view refuses a non-terminal stdout instead of spewing escapes.
err=$("$MIGMON_BIN" 2>&1 >"$TMP/out"); rc=$?
eq "non-tty live view exits 2" "$rc" 2
contains "non-tty live view suggests --once" "$err" "use --once"
