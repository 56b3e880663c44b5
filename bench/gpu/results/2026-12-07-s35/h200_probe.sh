#!/usr/bin/env bash
# Stop 35 (issues 9, 10): on an H200 only (the card the issues name; the pool mostly lends H100s),
# stop 33's call1.sh cut short: `final`'s first FINAL_S seconds (cold / warm start, the GPU tests)
# and Q_ROUNDS independent tunings of f32 / q8 / q4 at batch 1. Any other card: nothing is run.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
n=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$n"
case "$n" in *H200*) ;; *) echo "not an H200: nothing run"; exit 0 ;; esac
FINAL_S=${FINAL_S:-130} Q_ROUNDS=${Q_ROUNDS:-4} bash bench/gpu/results/2026-12-06-s33/call1.sh
