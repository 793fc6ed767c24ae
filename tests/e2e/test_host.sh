# shellcheck shell=bash
# Host metrics through the binary, from fixture /proc trees (--proc-root).
out=$("$MIGMON_BIN" --once --format json --proc-root "$MIGMON_SRC/tests/fixtures/proc/huge-swap"); rc=$?
eq "proc-root exit 0" "$rc" 0
jeq "huge-swap RAM and swap totals" "$out" '.host | [.memory.total_bytes.value, .swap.total_bytes.value]' '[1081804673024,274877902848]'
jeq "no stat file: CPU none, not 0" "$out" '.host.cpu.total_pct | [.value, .source]' '[null,"none"]'
jeq "loadavg" "$out" '.host.loadavg."1m".value' '96.04'
out=$("$MIGMON_BIN" --once --format json --proc-root /nonexistent-proc); rc=$?
eq "missing proc-root exit 0" "$rc" 0
jeq "missing proc-root: host null with error" "$out" '[.host, (.host_error | contains("/nonexistent-proc"))]' '[null,true]'
out=$("$MIGMON_BIN" --once --format json)
jeq "live /proc: CPU primed, a real percentage" "$out" '.host.cpu.total_pct | [.source, (.value >= 0 and .value <= 100)]' '["direct",true]'
