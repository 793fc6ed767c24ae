# shellcheck shell=bash
# --debug logs every NVML call with device, return code and latency.
log="$TMP/debug.log"
mon h100-pcie-mig-535.ini --once --format json --debug="$log" >/dev/null; rc=$?
eq "debug run exit 0" "$rc" 0
eq "debug log mode 0600" "$(stat -c %a "$log")" "600"
contains "loader attempt logged" "$(cat "$log")" "dlopen $MIGMON_SIM_LIB -> loaded"
contains "symbol resolution logged" "$(cat "$log")" "dlsym nvmlDeviceGetMemoryInfo_v2 -> found"
line=$(grep -m1 'nvmlDeviceGetMemoryInfo_v2 dev=GPU0/MIG' "$log")
contains "MIG memory call logged with rc" "$line" "rc=0 SUCCESS"
case "$line" in *us) ok ;; *) bad "latency missing: $line" ;; esac
contains "parent util failure logged" "$(cat "$log")" "nvmlDeviceGetUtilizationRates dev=GPU0 rc=3 NOT_SUPPORTED"
# A symlink at the log path is refused, with exit 2.
ln -sf "$TMP/elsewhere" "$TMP/link.log"
err=$(mon h100-pcie-mig-535.ini --once --debug="$TMP/link.log" 2>&1 >/dev/null); rc=$?
eq "symlinked log exits 2" "$rc" 2
contains "symlinked log message" "$err" "symbolic link"
# Default path under XDG_STATE_HOME.
XDG_STATE_HOME="$TMP/state" mon a100-sxm4-80gb.ini --once --debug >/dev/null
[ -s "$TMP/state/mig-gpu-mon/debug.log" ] && ok || bad "default debug log not written"
# Eight GPU workers log at once: every line whole (timestamp, call, rc) and
# each GPU's calls present, also across a rotation (a small cap would need a
# long run; the lines themselves are the check).
mon dgx-a100-8x7.ini --once --format json --debug="$TMP/dgx-debug.log" >/dev/null
eq "8 GPUs: every GPU's calls logged" \
    "$(grep -o 'nvmlDeviceGetTemperature dev=GPU[0-9]* ' "$TMP/dgx-debug.log" | sort -u | wc -l)" 8
eq "8 GPUs: no torn or interleaved line" \
    "$(grep -cvE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z ' "$TMP/dgx-debug.log")" 0
# A FIFO at the log path must not block the start; a file others may write
# to, or another user's file, is refused (as ssh does for its files).
mkfifo "$TMP/fifo.log"
t0=$(date +%s%N)
err=$(timeout 5 "$MIGMON_BIN" --once --gpm off --debug="$TMP/fifo.log" 2>&1 >/dev/null); rc=$?
t1=$(date +%s%N)
eq "FIFO log: exit 2 (not a hang)" "$rc" 2
contains "FIFO log: message" "$err" "is not a regular file"
[ $(((t1 - t0) / 1000000)) -lt 2000 ] && ok || bad "FIFO log took $(((t1 - t0) / 1000000)) ms"
: >"$TMP/open.log"
chmod 0666 "$TMP/open.log"
err=$("$MIGMON_BIN" --once --gpm off --debug="$TMP/open.log" 2>&1 >/dev/null); rc=$?
eq "world-writable log: exit 2" "$rc" 2
contains "world-writable log: message" "$err" "writable by group or others (mode 666)"
eq "world-writable log: nothing appended" "$(stat -c %s "$TMP/open.log")" 0
if [ "$(id -u)" = 0 ] && chown 65534 "$TMP/open.log" 2>/dev/null; then
    chmod 0600 "$TMP/open.log"
    err=$("$MIGMON_BIN" --once --gpm off --debug="$TMP/open.log" 2>&1 >/dev/null); rc=$?
    eq "another user's log: exit 2" "$rc" 2
    contains "another user's log: message" "$err" "belongs to another user (uid 65534)"
fi
