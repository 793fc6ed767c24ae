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
        # binutils: the Makefile runs objcopy and ld itself (gcc brings it too)
        want=(gcc binutils make libc6-dev libinih-dev libncurses-dev)
        # zlib and zstd: the exporter's gzip, compressed recordings (src/app/recout.c,
        # src/backend/replay/source.c); zstd(1) for the tests that check them
        want+=(libmicrohttpd-dev zlib1g-dev libzstd-dev)
        # the exporter's pod labels (src/system/podres.c): HTTP/2 and protobuf,
        # headers to build, the libraries it opens at run time on a Kubernetes node
        want+=(libnghttp2-dev libprotobuf-c-dev libnghttp2-14 libprotobuf-c1)
        # the fleet view (--prometheus, src/backend/prometheus/): HTTP and JSON, linked;
        # the replay mode (src/backend/replay/) reads recordings with jansson too
        want+=(libcurl4-openssl-dev libjansson-dev ca-certificates)
        if [ "$1" = test ]; then
            want+=(libcmocka-dev jq valgrind tmux python3 pkgconf mandoc)
            # Commands the tests run that a minimal Debian (debootstrap
            # --variant=minbase) lacks; everything else they call is in it
            # (coreutils, util-linux and bsdutils' script and setsid, mount,
            # diffutils, findutils, mawk, perl-base, ncurses-bin):
            # pgrep (test_gpm, test_tui_gpm, test_hang)
            want+=(procps)
            want+=(prometheus curl)
            # a real InfluxDB 1.x for the line-protocol test (tests/e2e/test_influxdb.sh)
            want+=(influxdb)
            # a gRPC stand-in for the kubelet (tests/e2e/kubelet_server.py)
            want+=(python3-grpcio python3-protobuf)
            # make image and its test (tests/e2e/test_portable.sh)
            want+=(buildah)
            # a hung GPU's sysfs file for the amdgpu backend's deadline
            # (tests/e2e/hangfs.py: a FUSE file whose reads wait)
            want+=(fuse3 python3-fusepy)
            # compressed recordings checked by their own tools (zstd -t,
            # zstdcat), and the resident memory of a replay fed a bomb
            # (/usr/bin/time): tests/e2e/test_record_compress.sh,
            # test_replay_compress.sh
            want+=(zstd time)
            # load generators and other tools of further tests: here
        fi
        ;;
    dnf | yum)
        want=(gcc binutils make glibc-devel inih-devel ncurses-devel)
        want+=(libmicrohttpd-devel zlib-devel libzstd-devel)
        want+=(libnghttp2-devel protobuf-c-devel libnghttp2 protobuf-c)
        want+=(libcurl-devel jansson-devel ca-certificates)
        if [ "$1" = test ]; then
            want+=(libcmocka-devel jq valgrind tmux python3 pkgconf mandoc)
            # What Debian has in its minimal system and a minimal Fedora or
            # RHEL may not: pgrep, script and setsid, diff and cmp, find,
            # and Perl with the socket modules (test_record)
            want+=(procps-ng util-linux diffutils findutils perl-interpreter perl-IO perl-Socket)
            want+=(golang-github-prometheus curl)
            # No influxdb: Fedora and EPEL carry no InfluxDB server. The line-
            # protocol test (tests/e2e/test_influxdb.sh) needs influxd 1.x and
            # fails without it; InfluxData's own RPM repository has it as influxdb.
            want+=(python3-grpcio python3-protobuf)
            want+=(buildah)
            want+=(fuse3 python3-fusepy)
            want+=(zstd time)
            # load generators and other tools of further tests: here
        fi
        ;;
    *)
        echo "error: no apt-get, dnf or yum found; install a C compiler, make, inih, ncurses," \
            "libmicrohttpd, zlib, zstd, nghttp2, protobuf-c, libcurl and jansson (and for tests cmocka, jq, valgrind," \
            "tmux, python3, pkgconf, mandoc, procps, curl, Prometheus with promtool, InfluxDB 1.x" \
            "Python's grpcio and protobuf, buildah, fuse3, Python's fusepy, zstd and time) by hand, then run 'make'" >&2
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
