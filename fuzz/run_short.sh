#!/bin/sh
# Short fuzz run for CI: builds fuzz_onnx_loader with clang + libFuzzer (ASan/UBSan) and runs it
# for ${FUZZ_SECONDS:-30} s on a generated seed corpus. Exit 0 if clean or clang is missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
secs=${FUZZ_SECONDS:-30}
if ! command -v clang >/dev/null 2>&1; then
  echo "fuzz: clang not found, skipping"
  exit 0
fi
CC=clang cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOWCONV_FUZZ=ON -DLOWCONV_SANITIZE=ON \
  -DLOWCONV_TESTS=OFF -DLOWCONV_BENCH=OFF >/dev/null
if ! cmake --build "$build" -j2 --target fuzz_onnx_loader >"$build/build.log" 2>&1; then
  if grep -q "fuzzer" "$build/build.log" && ! grep -q "error:" "$build/build.log"; then
    echo "fuzz: libFuzzer runtime not available, skipping"
    exit 0
  fi
  cat "$build/build.log"
  exit 1
fi
corpus="$build/corpus"
mkdir -p "$corpus"
python3 "$here/make_seeds.py" "$corpus"
cd "$build"
./fuzz/fuzz_onnx_loader -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 "$corpus"
