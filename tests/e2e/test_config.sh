# shellcheck shell=bash
# The configuration file: flags override it, bad lines are reported with
# their line and skipped, --config / --no-config / --write-config, and the
# [tui] keys seen on the screen.
SCN="$MIGMON_SRC/sim/scenarios"
SIMARGS=(--nvml-path "$MIGMON_SIM_LIB")
cfgdir="$XDG_CONFIG_HOME/mig-gpu-mon"
mkdir -p "$cfgdir"

# --write-config: the settings in force (file under flags), never over a file
rm -f "$cfgdir/config.ini"
printf '[general]\ninterval = 250\ntop = 3\n[tui]\ntemp_warn = 65\n' >"$TMP/base.ini"
out=$("$MIGMON_BIN" --config "$TMP/base.ini" -i 500 --write-config --config "$TMP/base.ini" 2>&1)
eq "--config given twice is the last one" "$?" 2
contains "--write-config over an existing file is refused" "$out" "File exists"
out=$(XDG_CONFIG_HOME="$TMP/fresh" "$MIGMON_BIN" -i 500 --gpm off --write-config)
eq "--write-config exits 0" "$?" 0
eq "--write-config says where" "$out" "wrote $TMP/fresh/mig-gpu-mon/config.ini"
w=$(cat "$TMP/fresh/mig-gpu-mon/config.ini")
contains "written: the flag's interval" "$w" "interval = 500"
contains "written: the flag's gpm" "$w" "gpm = off"
contains "written: defaults for the rest" "$w" "vram_alarm = 90"
contains "written: with comments" "$w" "; sampling interval in milliseconds"
eq "written file is private" "$(stat -c %a "$TMP/fresh/mig-gpu-mon/config.ini")" "600"
# --config replaces the default file: its values do not come along
out=$(XDG_CONFIG_HOME="$TMP/fresh" "$MIGMON_BIN" --write-config --config "$TMP/again.ini" 2>"$TMP/again.err")
eq "--write-config --config FILE exits 0" "$?" 0
eq "--write-config --config FILE says where" "$out" "wrote $TMP/again.ini"
# the file to be written is not there yet: nothing to say about it
eq "--write-config --config FILE: no warning that the file is missing" "$(cat "$TMP/again.err")" ""
contains "--config FILE instead of the default file" "$(cat "$TMP/again.ini")" "interval = 1000"

# bad lines: reported as FILE:LINE, skipped; the program runs
printf '[general]\ntop = 1\ninterval = 5\nfoo = 1\n[tui]\ncolor = maybe\n' >"$cfgdir/config.ini"
out=$(MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" "$MIGMON_BIN" "${SIMARGS[@]}" --once --format json 2>"$TMP/cfg.err")
eq "bad configuration lines are not fatal" "$?" 0
err=$(cat "$TMP/cfg.err")
contains "bad value reported with its line" "$err" "$cfgdir/config.ini:3: interval = 5: expected milliseconds from 100 to 3600000"
contains "unknown key reported with its line" "$err" "$cfgdir/config.ini:4: unknown key 'foo' in [general]"
contains "bad on/off reported" "$err" "$cfgdir/config.ini:6: color = maybe: expected on or off"
jeq "the good line applies: top = 1" "$out" '[.devices[0].processes | length]' '[1]'
out=$(MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" "$MIGMON_BIN" "${SIMARGS[@]}" --once --format json --top 0 2>/dev/null)
jeq "a flag overrides the file: --top 0" "$out" '[.devices[0].processes | length]' '[2]'
err=$(MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" "$MIGMON_BIN" "${SIMARGS[@]}" --once --no-config 2>&1 >/dev/null)
eq "--no-config reads nothing" "$err" ""
# --config FILE that cannot be read: one line, exit 2, nothing run
err=$("$MIGMON_BIN" --config "$TMP/none.ini" --demo=a100-sxm4-80gb --once 2>&1 >/dev/null); rc=$?
eq "--config naming no file exits 2" "$rc" 2
eq "--config naming no file says so" "$err" "mig-gpu-mon: --config $TMP/none.ini: no such file"
mkdir -p "$TMP/cfg.d"
err=$("$MIGMON_BIN" --config "$TMP/cfg.d" --demo=a100-sxm4-80gb --once 2>&1 >/dev/null); rc=$?
eq "--config DIR exits 2" "$rc" 2
eq "--config DIR says so" "$err" "mig-gpu-mon: --config $TMP/cfg.d: a directory, not a regular file"
err=$("$MIGMON_BIN" --config "$TMP/base.ini/x" --demo=a100-sxm4-80gb --once 2>&1 >/dev/null); rc=$?
eq "--config under a file exits 2" "$rc" 2
eq "--config under a file: the errno's text" "$err" "mig-gpu-mon: --config $TMP/base.ini/x: cannot read it: Not a directory"
err=$("$MIGMON_BIN" --config "$TMP/cfg.d" --write-config 2>&1); rc=$?
eq "--write-config --config DIR exits 2" "$rc" 2
eq "--write-config --config DIR: one message" "$err" "mig-gpu-mon: --write-config: $TMP/cfg.d: File exists (remove it first, or name another file with --config)"
rm -f "$cfgdir/config.ini"

# [general] top limits the processes listed, not the count
printf '[general]\ntop = 2\n' >"$TMP/top2.ini"
out=$(MIGMON_SIM_SCENARIO="$SCN/process-churn.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" "${SIMARGS[@]}" \
    --once --format json --config "$TMP/top2.ini")
jeq "top = 2: two processes listed of six" "$out" '[(.devices[0].processes | length), .devices[0].process_count.value]' '[2,6]'
out=$(MIGMON_SIM_SCENARIO="$SCN/process-churn.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" "${SIMARGS[@]}" \
    --once --format json --no-config)
jeq "without the file: all six" "$out" '[.devices[0].processes | length]' '[6]'

# [export] compat = dcgm applies to --once --format prometheus
printf '[export]\ncompat = dcgm\n' >"$TMP/dcgm.ini"
out=$(MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" "${SIMARGS[@]}" \
    --once --format prometheus --config "$TMP/dcgm.ini")
# (DCGM_FI_DEV_XID_ERRORS among them, 0: the GPU's Xid events are watched)
eq "compat = dcgm: the DCGM_FI_ samples" "$(printf '%s\n' "$out" | grep -c '^DCGM_FI_')" 20
contains "compat = dcgm: dcgm-exporter's labels" "$(printf '%s\n' "$out" | grep '^DCGM_FI_DEV_GPU_UTIL')" \
    'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-4c1d2a9e-7b3f-4e51-9c0a-3e8d5f6a7b21",pci_bus_id="00000000:07:00.0",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",Hostname="'
contains "compat = dcgm: the migmon_ series too" "$out" "migmon_gpu_utilization_ratio"
out=$(MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" MIGMON_SIM_TIME=100 "$MIGMON_BIN" "${SIMARGS[@]}" \
    --once --format prometheus --no-config)
eq "without the file: no DCGM_FI_ series" "$(printf '%s\n' "$out" | grep -c 'DCGM_FI_')" 0

# [tui]: °F, the thermal charts first
if command -v tmux >/dev/null; then
    . "$MIGMON_SRC/tests/e2e/tui_lib.sh"
    printf '[tui]\ntemperature_unit = F\ncharts = thermal\n' >"$TMP/tui.ini"
    tui_start cfgt 120 40 2 MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" -- "${SIMARGS[@]}" \
        --proc-root "$(tui_proc cfgt two-core)" --config "$TMP/tui.ini"
    scr=$(tui_capture cfgt)
    contains "temperature_unit = F: the detail in °F" "$scr" "°F (↓192 ✕198)"
    contains "charts = thermal: the temperature chart first" "$scr" "┌ Temp "
    tui_quit cfgt q >/dev/null
    tui_kill_all
fi

# Only regular files are read, and nothing waits on one that is not: a FIFO
# with no writer would block an open for reading. timeout: a regression
# fails (124) instead of hanging the suite.
mkfifo "$TMP/cfg.fifo"
err=$(timeout 10 "$MIGMON_BIN" --config "$TMP/cfg.fifo" --demo=a100-sxm4-80gb --once 2>&1 >/dev/null); rc=$?
eq "--config FIFO exits 2 at once" "$rc" 2
eq "--config FIFO says so" "$err" "mig-gpu-mon: --config $TMP/cfg.fifo: a FIFO, not a regular file"
mkdir -p "$TMP/fifo-home/mig-gpu-mon"
mkfifo "$TMP/fifo-home/mig-gpu-mon/config.ini"
out=$(XDG_CONFIG_HOME="$TMP/fifo-home" MIGMON_SIM_TIME=100 timeout 10 "$MIGMON_BIN" --demo=a100-sxm4-80gb \
    --once --format json 2>"$TMP/fifo.err"); rc=$?
eq "default file a FIFO: runs on the defaults" "$rc" 0
eq "default file a FIFO: said once" "$(cat "$TMP/fifo.err")" \
    "mig-gpu-mon: $TMP/fifo-home/mig-gpu-mon/config.ini: a FIFO, not a regular file; the defaults apply"
jeq "default file a FIFO: the snapshot" "$out" '[.devices[0].name]' '["NVIDIA A100-SXM4-80GB"]'
err=$(XDG_CONFIG_HOME="$TMP/fifo-home" timeout 10 "$MIGMON_BIN" --write-config 2>&1); rc=$?
eq "--write-config over a FIFO exits 2 at once" "$rc" 2
contains "--write-config over a FIFO: File exists" "$err" "config.ini: File exists"
mkdir -p "$TMP/dir-home/mig-gpu-mon/config.ini"
err=$(XDG_CONFIG_HOME="$TMP/dir-home" "$MIGMON_BIN" --demo=a100-sxm4-80gb --once 2>&1 >/dev/null); rc=$?
eq "default file a directory: runs on the defaults" "$rc" 0
eq "default file a directory: said" "$err" \
    "mig-gpu-mon: $TMP/dir-home/mig-gpu-mon/config.ini: a directory, not a regular file; the defaults apply"
# devices: /dev/null, under any name, is an empty file; any other is refused
err=$(timeout 10 "$MIGMON_BIN" --config /dev/null --demo=a100-sxm4-80gb --once 2>&1 >/dev/null); rc=$?
eq "--config /dev/null: an empty file" "$rc:$err" "0:"
ln -s /dev/null "$TMP/null.ini"
err=$(timeout 10 "$MIGMON_BIN" --config "$TMP/null.ini" --demo=a100-sxm4-80gb --once 2>&1 >/dev/null); rc=$?
eq "--config LINK to /dev/null: an empty file" "$rc:$err" "0:"
err=$(timeout 10 "$MIGMON_BIN" --config /dev/zero --demo=a100-sxm4-80gb --once 2>&1 >/dev/null); rc=$?
eq "--config /dev/zero exits 2 at once" "$rc" 2
eq "--config /dev/zero says so" "$err" "mig-gpu-mon: --config /dev/zero: a character device, not a regular file"
# a link to a regular file is read
printf '[general]\ntop = 1\n' >"$TMP/top1.ini"
ln -s "$TMP/top1.ini" "$TMP/top1-link.ini"
out=$(MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" "$MIGMON_BIN" "${SIMARGS[@]}" --once --format json \
    --config "$TMP/top1-link.ini")
jeq "--config LINK: the file it names is read" "$out" '[.devices[0].processes | length]' '[1]'

# A line longer than inih's buffer is one bad line, named by its number: its
# tail is no setting (here a comment of 199 bytes, then "top = 1"), and the
# lines after it keep their numbers.
{
    printf '[general]\n; %s' "$(printf '%0197d' 0 | tr 0 x)"
    printf 'top = 1\ninterval = 5\n'
} >"$TMP/long.ini"
out=$(MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" "$MIGMON_BIN" "${SIMARGS[@]}" --once --format json \
    --config "$TMP/long.ini" 2>"$TMP/long.err"); rc=$?
eq "long line: not fatal" "$rc" 0
eq "long line: named with its number, then the next bad line with its own" "$(cat "$TMP/long.err")" \
    "$TMP/long.ini:2: line longer than 198 bytes; line skipped
$TMP/long.ini:3: interval = 5: expected milliseconds from 100 to 3600000"
jeq "long line: its tail top = 1 is not applied" "$out" '[.devices[0].processes | length]' '[2]'

# Control bytes in the file, and in its name, reach the terminal escaped.
printf '[general]\ninterval = \033[31mred\033]0;pwned\007\n\033[2Jkey = 1\n' >"$TMP/esc.ini"
"$MIGMON_BIN" --config "$TMP/esc.ini" --demo=a100-sxm4-80gb --once >/dev/null 2>"$TMP/esc.err"
eq "escapes: the value and the key, escaped" "$(cat "$TMP/esc.err")" \
    "$TMP/esc.ini:2: interval = \\x1b[31mred\\x1b]0;pwned\\x07: expected milliseconds from 100 to 3600000
$TMP/esc.ini:3: unknown key '\\x1b[2Jkey' in [general]"
LC_ALL=C grep -qaP '[\x00-\x09\x0b-\x1f\x7f]' "$TMP/esc.err" && bad "escapes: a control byte reached stderr" || ok
name="$TMP/$(printf 'a\033[2Jb').ini"
err=$("$MIGMON_BIN" --config "$name" --demo=a100-sxm4-80gb --once 2>&1 >/dev/null)
eq "escapes: the file's name" "$err" "mig-gpu-mon: --config $TMP/a\\x1b[2Jb.ini: no such file"

# --write-config where the directory cannot be made: the errno's own text
# (the test runs as root, which a mode does not stop: a read-only mount)
mkdir -p "$TMP/ro"
if unshare -m true 2>/dev/null; then
    err=$(unshare -m sh -c 'mount -t tmpfs -o ro tmpfs "$1" && XDG_CONFIG_HOME="$1" "$2" --write-config' \
        sh "$TMP/ro" "$MIGMON_BIN" 2>&1); rc=$?
    eq "--write-config, read-only file system: exits 2" "$rc" 2
    eq "--write-config, read-only file system: EROFS" "$err" \
        "mig-gpu-mon: --write-config: cannot create $TMP/ro/mig-gpu-mon: Read-only file system"
fi
err=$(XDG_CONFIG_HOME=/sys "$MIGMON_BIN" --write-config 2>&1); rc=$?
eq "--write-config under /sys: exits 2" "$rc" 2
# EPERM on a host's sysfs, EROFS where sysfs is mounted read-only (a
# container, the CI chroot): the real errno either way, never ENOENT
case "$err" in
"mig-gpu-mon: --write-config: cannot create /sys/mig-gpu-mon: Operation not permitted" | \
    "mig-gpu-mon: --write-config: cannot create /sys/mig-gpu-mon: Read-only file system") ok ;;
*) bad "--write-config under /sys: got '$err', expected EPERM or EROFS" ;;
esac

# A value that is itself an option was forgotten: refused, never taken as
# the value (no file named --no-config read, no --force written)
err=$(cd "$TMP" && "$MIGMON_BIN" --config --no-config --demo=a100-sxm4-80gb --once 2>&1 >/dev/null); rc=$?
eq "--config --no-config exits 2" "$rc" 2
eq "--config --no-config needs a value" "$err" \
    "mig-gpu-mon: --config needs a value: --no-config is an option (write --config=--no-config to give it as the value)"
err=$(cd "$TMP" && timeout 10 "$MIGMON_BIN" record -o --force -n 1 --demo=a100-sxm4-80gb 2>&1 >/dev/null </dev/null); rc=$?
eq "record -o --force exits 2" "$rc:$([ -e "$TMP/--force" ] && echo written)" "2:"
eq "record -o --force needs a value" "$err" \
    "mig-gpu-mon: -o needs a value: --force is an option (write -o--force to give it as the value)"
err=$("$MIGMON_BIN" -i --top 5 --demo=a100-sxm4-80gb --once 2>&1 >/dev/null); rc=$?
eq "-i --top exits 2" "$rc" 2
contains "-i --top needs a value" "$err" "mig-gpu-mon: -i needs a value: --top is an option"
err=$("$MIGMON_BIN" --once --format --demo 2>&1 >/dev/null); rc=$?
eq "--format --demo exits 2" "$rc" 2
contains "--format --demo needs a value" "$err" "mig-gpu-mon: --format needs a value: --demo is an option"
out=$(MIGMON_SIM_TIME=100 timeout 10 "$MIGMON_BIN" record -o - -n 1 --demo=a100-sxm4-80gb </dev/null); rc=$?
eq "record -o - still standard output" "$rc" 0
jeq "record -o -: the snapshot" "$out" '[.devices[0].name]' '["NVIDIA A100-SXM4-80GB"]'

# A configuration file steers the program (a fleet view, a credentials
# file): as ssh does, only one owned by the user running it, or by root,
# and writable by no one else is read. Refused: one line, exit status 2,
# nothing of it applied (no fleet view asked for).
printf '[fleet]\nprometheus = http://127.0.0.1:9\n' >"$TMP/steer.ini"
for mode in 666 646 664 620; do
    chmod "$mode" "$TMP/steer.ini"
    out=$(MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" timeout 10 "$MIGMON_BIN" "${SIMARGS[@]}" \
        --config "$TMP/steer.ini" --once 2>&1); rc=$?
    eq "--config FILE writable by others (mode $mode): refused, exit 2, one line" "$rc|$out" \
        "2|mig-gpu-mon: --config $TMP/steer.ini: writable by others than its owner (mode 0$mode); not read"
done
chmod 600 "$TMP/steer.ini"
printf '[general]\ntop = 2\n' >"$TMP/own.ini"
chmod 644 "$TMP/own.ini"
out=$(MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" "$MIGMON_BIN" "${SIMARGS[@]}" \
    --config "$TMP/own.ini" --once --format json 2>&1); rc=$?
eq "--config FILE of ours, mode 644: read" "$rc|$(printf '%s' "$out" | jq -c '.devices | length')" "0|1"
# the default file the same way, and through a link the file's own owner
# and mode count
mkdir -p "$TMP/ww-home/mig-gpu-mon"
cp "$TMP/steer.ini" "$TMP/ww-home/mig-gpu-mon/config.ini"
chmod 666 "$TMP/ww-home/mig-gpu-mon/config.ini"
out=$(XDG_CONFIG_HOME="$TMP/ww-home" MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" timeout 10 \
    "$MIGMON_BIN" "${SIMARGS[@]}" --once 2>&1); rc=$?
eq "the default file writable by others: refused, exit 2, one line" "$rc|$out" \
    "2|mig-gpu-mon: $TMP/ww-home/mig-gpu-mon/config.ini: writable by others than its owner (mode 0666); not read"
ln -sf "$TMP/ww-home/mig-gpu-mon/config.ini" "$TMP/ww-link.ini"
out=$(MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" timeout 10 "$MIGMON_BIN" "${SIMARGS[@]}" \
    --config "$TMP/ww-link.ini" --once 2>&1); rc=$?
eq "a link to a file writable by others: refused" "$rc" 2
out=$(XDG_CONFIG_HOME="$TMP/ww-home" MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" \
    "$MIGMON_BIN" "${SIMARGS[@]}" --no-config --once --format json 2>&1); rc=$?
eq "--no-config: the refused default file is not looked at" "$rc" 0
# /dev/null (writable by all, owned by root) still reads as an empty file
out=$(MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" "$MIGMON_BIN" "${SIMARGS[@]}" \
    --config /dev/null --once --format json 2>&1); rc=$?
eq "--config /dev/null: still the empty file" "$rc" 0
# sudo -E: HOME (here XDG_CONFIG_HOME) is the user's, the program runs as
# root: the user's file is not read by root (needs root to make a file
# another user owns)
if [ "$(id -u)" = 0 ]; then
    mkdir -p "$TMP/user-home/mig-gpu-mon"
    cp "$TMP/steer.ini" "$TMP/user-home/mig-gpu-mon/config.ini"
    chmod 600 "$TMP/user-home/mig-gpu-mon/config.ini"
    chown 1000:1000 "$TMP/user-home/mig-gpu-mon/config.ini"
    out=$(XDG_CONFIG_HOME="$TMP/user-home" MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" timeout 10 \
        "$MIGMON_BIN" "${SIMARGS[@]}" --once 2>&1); rc=$?
    eq "root reading a user's default file (sudo -E): refused, exit 2, one line" "$rc|$out" \
        "2|mig-gpu-mon: $TMP/user-home/mig-gpu-mon/config.ini: owned by uid 1000, neither root nor the user running mig-gpu-mon (uid 0); not read"
    out=$(MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" timeout 10 "$MIGMON_BIN" "${SIMARGS[@]}" \
        --config "$TMP/user-home/mig-gpu-mon/config.ini" --once 2>&1); rc=$?
    eq "root given a user's file by --config: refused too" "$rc|$out" \
        "2|mig-gpu-mon: --config $TMP/user-home/mig-gpu-mon/config.ini: owned by uid 1000, neither root nor the user running mig-gpu-mon (uid 0); not read"
    # the user reads it (setpriv: the user's uid, no other change)
    if command -v setpriv >/dev/null; then
        chmod 755 "$TMP" "$TMP/user-home" "$TMP/user-home/mig-gpu-mon"
        out=$(XDG_CONFIG_HOME="$TMP/user-home" MIGMON_SIM_SCENARIO="$SCN/a100-sxm4-80gb.ini" \
            setpriv --reuid=1000 --regid=1000 --clear-groups "$MIGMON_BIN" "${SIMARGS[@]}" \
            --once 2>&1)
        contains "the user's own file is read by the user: its fleet view" "$out" \
            "Prometheus http://127.0.0.1:9: "
        chmod 700 "$TMP"
    fi
else
    echo "     (config: not root: a file of another user not made, the sudo -E case not checked)"
fi
