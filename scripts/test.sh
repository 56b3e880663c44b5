#!/usr/bin/env bash
# Installs the test dependencies (Debian packages, a Python venv with numpy/onnx/onnxruntime),
# builds lowconv with warnings as errors and runs every test. Usage: scripts/test.sh [--sanitize]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

sudo_if() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

need_pkgs=()
# PoCL: the OpenCL backend's tests run on the CPU through it (and the ICD loader + headers).
# clang: the libFuzzer targets (fuzz/run_short.sh).
for p in build-essential cmake python3-venv python3-pip libdnnl-dev pocl-opencl-icd ocl-icd-opencl-dev opencl-c-headers clang; do
  dpkg -s "$p" >/dev/null 2>&1 || need_pkgs+=("$p")
done
if [ ${#need_pkgs[@]} -gt 0 ]; then
  sudo_if apt-get update -qq
  DEBIAN_FRONTEND=noninteractive sudo_if apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -c 'import numpy, onnx, onnxruntime, pytest, PIL' 2>/dev/null ||
  .venv/bin/pip install -q -r tests/requirements.txt

san=OFF
build=build
if [ "${1:-}" = "--sanitize" ]; then
  san=ON
  build=build-asan
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DLOWCONV_WERROR=ON -DLOWCONV_SANITIZE=$san >/dev/null
cmake --build "$build" -j"$(nproc)"
export LC_TEST_QUICK=${LC_TEST_QUICK:-}
# The OpenCL tests fail (not skip) when no device opens: PoCL was installed above.
export LC_REQUIRE_OPENCL=${LC_REQUIRE_OPENCL:-1}
if [ "$san" = ON ]; then
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
(cd "$build" && ctest --output-on-failure -j1)
if [ "$san" = OFF ]; then
  # The threading contract under ThreadSanitizer: one test, in its own build (TSan excludes ASan).
  cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOWCONV_WERROR=ON -DLOWCONV_TSAN=ON \
    -DLOWCONV_BENCH=OFF >/dev/null
  cmake --build build-tsan -j"$(nproc)" --target test_context_shared >/dev/null
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 LC_TEST_QUICK=1 build-tsan/tests/test_context_shared
  # Where the OpenCL headers are absent the backend is left out: that build must stay warning-free too.
  cmake -S . -B build-nocl -DCMAKE_BUILD_TYPE=Release -DLOWCONV_WERROR=ON -DLOWCONV_OPENCL=OFF -DLOWCONV_BENCH=OFF \
    >/dev/null
  cmake --build build-nocl -j"$(nproc)" --target lowconv_cli >/dev/null
  build-nocl/lowconv devices | grep -q "opencl: backend not built" ||
    { echo "lowconv devices without OpenCL:"; build-nocl/lowconv devices; exit 1; }
  # Both libFuzzer targets briefly (skipped where clang has no libFuzzer); docs/fuzzing.md.
  FUZZ_SECONDS=${FUZZ_SECONDS:-30} fuzz/run_short.sh
fi
