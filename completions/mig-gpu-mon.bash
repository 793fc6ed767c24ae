# bash completion for mig-gpu-mon: modes, options, their values, and the
# bundled scenario names for --demo (asked of the program itself, so an
# installed copy lists its own).

_mig_gpu_mon_scenarios() {
    # "--demo=_: no such scenario in DIR (available: a, b, c)"
    # (mi300x, the AMD demo on a simulated sysfs, among them)
    "${COMP_WORDS[0]}" --demo=_ --once 2>&1 >/dev/null |
        sed -n 's/.*(available: \(.*\))$/\1/p' | tr -d ','
}

_mig_gpu_mon() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    # The mode: the first word that is record, export, profile or replay and
    # is not an option's value, before "--" (as the program reads it)
    local mode="" w value=0 i
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        if [ "$value" = 1 ]; then
            value=0
            continue
        fi
        case "$w" in
        --) return 0 ;; # profile's COMMAND, or words no mode takes
        # --opt=value arrives as (--opt, =, value)
        =) value=1 ;;
        -f | --format | -i | --interval | -o | --output | -n | --count | --nvml-path | --proc-root | --backend | --sysfs-root | \
            --top | --config | --gpm | --dcgm | --dcgm-lib | --timeout | --listen | --compat | --duration | \
            --trigger | --timeline | --speed | --from | --to | --at | --prometheus | --prometheus-auth | \
            --prometheus-ca | --prometheus-match | --compress | --schema)
            [ "${COMP_WORDS[i + 1]}" != "=" ] && value=1 ;;
        record | export | profile | replay) [ -z "$mode" ] && mode=$w ;;
        esac
    done
    # --opt=value arrives as (--opt, =, value)
    if [ "$prev" = "=" ] && [ "$COMP_CWORD" -ge 2 ]; then
        prev=${COMP_WORDS[COMP_CWORD - 2]}
    elif [ "$cur" = "=" ]; then
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        cur=""
    fi
    case "$prev" in
    -f | --format)
        case "$mode" in
        record) COMPREPLY=($(compgen -W "jsonl csv influx" -- "$cur")) ;;
        profile) COMPREPLY=($(compgen -W "text json" -- "$cur")) ;;
        replay) COMPREPLY=($(compgen -W "json table csv" -- "$cur")) ;;
        *) COMPREPLY=($(compgen -W "table json prometheus csv influx" -- "$cur")) ;;
        esac
        return 0 ;;
    --gpm) COMPREPLY=($(compgen -W "auto on off helper" -- "$cur")); return 0 ;;
    --dcgm) COMPREPLY=($(compgen -W "auto off embedded unix:/tmp/nv-hostengine" -- "$cur")); return 0 ;;
    --compat) COMPREPLY=($(compgen -W "dcgm" -- "$cur")); return 0 ;;
    --kubelet-socket) COMPREPLY=($(compgen -f -W "off" -- "$cur")); return 0 ;;
    --trigger) COMPREPLY=($(compgen -W "interval stdin" -- "$cur")); return 0 ;;
    --compress) COMPREPLY=($(compgen -W "zstd gzip none" -- "$cur")); return 0 ;;
    --schema) COMPREPLY=($(compgen -W "1 2" -- "$cur")); return 0 ;;
    --demo) COMPREPLY=($(compgen -W "$(_mig_gpu_mon_scenarios)" -- "$cur")); return 0 ;;
    --backend) COMPREPLY=($(compgen -W "nvml amdgpu nvml,amdgpu" -- "$cur")); return 0 ;;
    --nvml-path | --dcgm-lib | --config | --debug | -o | --output | --timeline | --proc-root | --sysfs-root | \
        --prometheus-auth | --prometheus-ca)
        COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
    --prometheus) COMPREPLY=($(compgen -W "http:// https://" -- "$cur")); return 0 ;;
    -i | --interval | --top | --timeout | --duration | -n | --count | --listen | --speed | --from | \
        --to | --at | --prometheus-match) return 0 ;;
    esac
    local opts
    case "$mode" in
    replay)
        # options, else the recording
        case "$cur" in
        -*) COMPREPLY=($(compgen -W "--speed --from --to --paused --once --print -f --format --at --no-color
            -h --help" -- "$cur")) ;;
        *) COMPREPLY=($(compgen -f -- "$cur")) ;;
        esac
        return 0 ;;
    profile) opts="-i --interval -o --output -f --format --timeline --nvml-path --demo --proc-root --backend
        --sysfs-root --dcgm --dcgm-lib -h
        --help --" ;;
    record) opts="-o --output --append --force -f --format --compress --schema --duration -n --count --trigger -i --interval
        --top --gpm --dcgm --dcgm-lib --nvml-path --demo --debug --proc-root --backend --sysfs-root --config --no-config
        --prometheus --prometheus-auth --prometheus-ca --prometheus-match" ;;
    export) opts="--listen --compat --export-processes --no-host --kubelet-socket -i --interval --top --gpm --dcgm --dcgm-lib
        --nvml-path --demo --debug --proc-root --backend --sysfs-root --config --no-config" ;;
    *) opts="record export profile replay --once --all-processes -f --format --timeout -i --interval --top --no-color --gpm
        --dcgm --dcgm-lib --nvml-path --debug --demo --proc-root --backend --sysfs-root --listen --compat --export-processes --no-host --config
        --no-config --write-config --prometheus --prometheus-auth --prometheus-ca --prometheus-match -h --help -V --version" ;;
    esac
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -F _mig_gpu_mon mig-gpu-mon
