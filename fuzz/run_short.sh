#!/bin/sh
# Short fuzz run for CI: builds fuzz_onnx_loader and fuzz_model_run with clang + libFuzzer
# (ASan/UBSan) and runs each for ${FUZZ_SECONDS:-30} s on a seed corpus (fuzz/make_seeds.py: hand-made
# models and ONNX's node-test models). Exit 0 if clean or clang / libFuzzer is missing, else the
# fuzzer's status (crash files land in $build). FUZZ_TARGETS picks targets; docs/fuzzing.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
secs=${FUZZ_SECONDS:-30}
targets=${FUZZ_TARGETS:-fuzz_onnx_loader fuzz_model_run}
if ! command -v clang >/dev/null 2>&1; then
  echo "fuzz: clang not found, skipping"
  exit 0
fi
CC=clang cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOWCONV_FUZZ=ON -DLOWCONV_SANITIZE=ON \
  -DLOWCONV_TESTS=OFF -DLOWCONV_BENCH=OFF >/dev/null
# shellcheck disable=SC2086
if ! cmake --build "$build" -j2 --target $targets >"$build/build.log" 2>&1; then
  if grep -q "fuzzer" "$build/build.log" && ! grep -q "error:" "$build/build.log"; then
    echo "fuzz: libFuzzer runtime not available, skipping"
    exit 0
  fi
  cat "$build/build.log"
  exit 1
fi
py=python3
[ -x "$root/.venv/bin/python" ] && py="$root/.venv/bin/python"
seeds="$build/seeds"
[ -d "$seeds" ] || "$py" "$here/make_seeds.py" "$seeds" 65536
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$build"
# -timeout 25: a unit that blocks (a FIFO opened without O_NONBLOCK) is caught, while the largest
# folds the 16 MiB cap allows (~2 s under ASan) survive a loaded 2-core machine.
for t in $targets; do
  mkdir -p "corpus-$t"
  echo "fuzz: $t for $secs s"
  "./fuzz/$t" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -timeout=25 -print_final_stats=1 \
    -artifact_prefix="$build/$t-" "corpus-$t" "$seeds"
done
