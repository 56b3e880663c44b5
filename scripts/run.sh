#!/usr/bin/env bash
# Builds lowconv (Release: the libraries and the CLI, all that `cmake --install build` installs) and
# runs the main job: the conv benchmark on the arcface-like ResNet34 suite, every layer checked
# against the reference. Extra arguments go to `lowconv conv`.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cmake >/dev/null || ! command -v cc >/dev/null; then
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq build-essential cmake >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq build-essential cmake >/dev/null; fi
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target lowconv_static lowconv_shared lowconv_cli
./build/lowconv conv --suite resnet34-112 --check "$@"
