#!/bin/sh
# scripts/portable-check.sh BIN [FLOOR]: that BIN is a portable build: its
# only dynamic dependencies are glibc's own libraries, it is at most 2 MB,
# and the newest glibc symbol version it needs (read from its GLIBC_
# version references) is no newer than FLOOR (2.34). Prints one line:
# the size, the libraries it needs and the oldest glibc it runs on.
set -eu
bin=$1
floor=${2:-2.34}
max_bytes=2097152
fail() {
    echo "portable-check: $bin: $*" >&2
    exit 1
}
[ -f "$bin" ] || fail "no such file"
needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*Shared library: \[\(.*\)\]/\1/p')
for lib in $needed; do
    case "$lib" in
    libc.so.6 | libm.so.6 | libpthread.so.0 | libdl.so.2 | librt.so.1 | ld-linux*.so.*) ;;
    *) fail "needs $lib, which is not part of glibc" ;;
    esac
done
glibc=$(readelf -V "$bin" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -u -V | tail -n 1)
[ -n "$glibc" ] || fail "no GLIBC_ symbol versions found"
newest=$(printf '%s\n%s\n' "$glibc" "$floor" | sort -V | tail -n 1)
[ "$newest" = "$floor" ] || fail "needs glibc $glibc, newer than $floor"
size=$(wc -c <"$bin")
[ "$size" -le "$max_bytes" ] || fail "$size bytes, more than $max_bytes"
if readelf -S "$bin" | grep -q '\.symtab'; then fail "not stripped"; fi
echo "portable: $bin: $size bytes ($(awk -v s="$size" 'BEGIN { printf "%.2f MiB", s / 1048576 }')), needs" \
    "$(echo $needed | tr ' ' ','), glibc $glibc or newer"
