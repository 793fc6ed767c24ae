# shellcheck shell=bash
# Shell completions: the bash function completes modes, options, their
# values and the scenario names (from the program itself); the zsh file
# parses. Installed by make install.
comp() { # comp WORD...: what bash completes for the last word
    bash -c '
        source "$1/completions/mig-gpu-mon.bash"
        shift
        COMP_WORDS=("$@")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        _mig_gpu_mon
        printf "%s\n" "${COMPREPLY[@]}"' _ "$MIGMON_SRC" "$@" | sort | tr '\n' ' '
}
eq "completion: modes" "$(comp "$MIGMON_BIN" re)" "record replay "
eq "completion: replay's options" "$(comp "$MIGMON_BIN" replay --sp)" "--speed "
eq "completion: replay's formats (--once: json, table; --print: json, csv)" \
    "$(comp "$MIGMON_BIN" replay x.jsonl --once -f "")" "csv json table "
eq "completion: replay's --print" "$(comp "$MIGMON_BIN" replay x.jsonl --pr)" "--print "
eq "completion: options before replay" "$(comp "$MIGMON_BIN" --once replay --sp)" "--speed "
eq "completion: -f before replay: replay's formats" "$(comp "$MIGMON_BIN" --once -f table replay x.jsonl -f "")" \
    "csv json table "
eq "completion: options" "$(comp "$MIGMON_BIN" --no-)" "--no-color --no-config --no-host "
eq "completion: --all-processes" "$(comp "$MIGMON_BIN" --once --all)" "--all-processes "
eq "completion: --format values" "$(comp "$MIGMON_BIN" --once --format p)" "prometheus "
eq "completion: record's formats" "$(comp "$MIGMON_BIN" record -f "")" "csv influx jsonl "
eq "completion: record's --compress" "$(comp "$MIGMON_BIN" record --compress "")" "gzip none zstd "
eq "completion: record's --schema" "$(comp "$MIGMON_BIN" record -o x.zst --schema "")" "1 2 "
eq "completion: --gpm" "$(comp "$MIGMON_BIN" --gpm o)" "off on "
eq "completion: --demo NAME from the program" "$(comp "$MIGMON_BIN" --demo h200)" "h200-mig h200-mig-595 "
eq "completion: --demo=NAME (bash splits at =)" "$(comp "$MIGMON_BIN" --demo = dgx)" "dgx-a100-8x7 "
eq "completion: --demo mi300x, once" "$(comp "$MIGMON_BIN" --demo mi3)" "mi300x "
eq "completion: profile's options" "$(comp "$MIGMON_BIN" profile --ti)" "--timeline "
eq "completion: after profile's --, the command's own" "$(comp "$MIGMON_BIN" profile -- --o)" " "
# the mode where the program finds it: options may come before it, and an
# option's value is no mode
eq "completion: options before record" "$(comp "$MIGMON_BIN" --demo h200-mig record --app)" "--append "
eq "completion: --demo before record" "$(comp "$MIGMON_BIN" --demo record --app)" "--append "
eq "completion: options before export" "$(comp "$MIGMON_BIN" -i 200 export --li)" "--listen "
eq "completion: options before profile" "$(comp "$MIGMON_BIN" --demo profile --ti)" "--timeline "
eq "completion: -o record is a file, no mode" "$(comp "$MIGMON_BIN" -o record --app)" " "
eq "completion: --config=record is a file, no mode" "$(comp "$MIGMON_BIN" --config = record --app)" " "
eq "completion: profile -o record: profile's formats" "$(comp "$MIGMON_BIN" profile -o record -f "")" "json text "
eq "completion: after --demo profile --, the command's own" "$(comp "$MIGMON_BIN" --demo profile -- --o)" " "
eq "completion: profile's --proc-root" "$(comp "$MIGMON_BIN" profile --pro)" "--proc-root "
if command -v zsh >/dev/null; then
    zsh -n "$MIGMON_SRC/completions/_mig-gpu-mon"
    eq "completion: the zsh file parses" "$?" 0
fi
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD -u SAN make -s -C "$MIGMON_SRC" -o all install \
    PREFIX="$TMP/cprefix" DESTDIR= >/dev/null 2>&1
[ -f "$TMP/cprefix/share/bash-completion/completions/mig-gpu-mon" ] && ok || bad "completion: bash file not installed"
[ -f "$TMP/cprefix/share/zsh/site-functions/_mig-gpu-mon" ] && ok || bad "completion: zsh file not installed"
eq "completion: --dcgm's values" "$(comp "$MIGMON_BIN" --dcgm e)" "embedded "
