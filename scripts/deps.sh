# shellcheck shell=bash
# Shared by install.sh and test.sh: detect the package manager, install what
# is missing, printing each package it installs. Sourced, not run.

# Run a command as root: directly when we are root, else through sudo.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        echo "error: '$*' needs root; run this script as root or install sudo" >&2
        exit 1
    fi
}

detect_pm() {
    if command -v apt-get >/dev/null 2>&1; then
        echo apt
    elif command -v dnf >/dev/null 2>&1; then
        echo dnf
    elif command -v yum >/dev/null 2>&1; then
        echo yum
    else
        echo none
    fi
}

# Is a package installed? $1 = package manager, $2 = package.
pkg_installed() {
    case "$1" in
    apt) dpkg-query -W -f='${Status}' "$2" 2>/dev/null | grep -q "install ok installed" ;;
    dnf | yum) rpm -q "$2" >/dev/null 2>&1 ;;
    *) return 1 ;;
    esac
}

# install_packages KIND: KIND is "build" or "test".
install_packages() {
    local pm want missing=() p
    pm=$(detect_pm)
    case "$pm" in
    apt)
        want=(gcc make libc6-dev libinih-dev libncurses-dev)
        want+=(libmicrohttpd-dev zlib1g-dev)
        [ "$1" = test ] && want+=(libcmocka-dev jq valgrind tmux python3 pkgconf mandoc)
        [ "$1" = test ] && want+=(prometheus curl)
        # a real InfluxDB 1.x for the line-protocol test (tests/e2e/test_influxdb.sh)
        [ "$1" = test ] && want+=(influxdb)
        ;;
    dnf | yum)
        want=(gcc make glibc-devel inih-devel ncurses-devel)
        want+=(libmicrohttpd-devel zlib-devel)
        [ "$1" = test ] && want+=(libcmocka-devel jq valgrind tmux python3 pkgconf mandoc)
        [ "$1" = test ] && want+=(golang-github-prometheus curl)
        # No influxdb: Fedora and EPEL carry no InfluxDB server. The line-
        # protocol test (tests/e2e/test_influxdb.sh) needs influxd 1.x and
        # fails without it; InfluxData's own RPM repository has it as influxdb.
        ;;
    *)
        echo "error: no apt-get, dnf or yum found; install a C compiler, make, inih, ncurses," \
            "libmicrohttpd and zlib (and for tests cmocka, jq, valgrind, tmux, curl," \
            "Prometheus with promtool and InfluxDB 1.x) by hand, then run 'make'" >&2
        exit 1
        ;;
    esac
    for p in "${want[@]}"; do
        pkg_installed "$pm" "$p" || missing+=("$p")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        echo "==> build dependencies already installed"
        return 0
    fi
    echo "==> installing: ${missing[*]}"
    case "$pm" in
    apt)
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "${missing[@]}"
        ;;
    dnf | yum) as_root "$pm" install -y "${missing[@]}" ;;
    esac
}
