#!/usr/bin/env bash
# Installs lowconv into a temporary prefix and builds a consumer both ways users would:
# pkg-config (static library) and CMake's find_package(lowconv) (shared library).
set -euo pipefail
src=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
here=$(cd "$(dirname "$0")" && pwd)
pcdir=$(dirname "$(find "$tmp/prefix" -name lowconv.pc | head -n1)")
cc $(PKG_CONFIG_PATH=$pcdir pkg-config --cflags lowconv) "$here/install/consumer.c" -o "$tmp/c1" \
  "$(dirname "$pcdir")/liblowconv.a" -lpthread -lm
"$tmp/c1"
PKG_CONFIG_PATH=$pcdir pkg-config --libs lowconv | grep -q -- -llowconv
cmake -S "$here/install" -B "$tmp/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/b" >/dev/null
LD_LIBRARY_PATH="$(dirname "$pcdir")" "$tmp/b/consumer"
echo "1 passed, 0 failed"
