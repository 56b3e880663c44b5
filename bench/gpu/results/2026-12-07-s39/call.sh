#!/usr/bin/env bash
# Stop 39 (issue 9): on an H200, the stop 35 probe (start figures, GPU tests, Q_ROUNDS q / f32
# tunings at batch 1). On any card, then: every candidate's device time (LOWCONV_CL_DEBUG) of the
# batch-1 resnet34-112 tunings, f32 / q8 / q4, for where q loses to f32 at batch 1.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
n=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$n"
case "$n" in *H200*) FINAL_S=${FINAL_S:-150} Q_ROUNDS=${Q_ROUNDS:-4} bash bench/gpu/results/2026-12-06-s33/call1.sh ;; esac
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
d=$OUT/debug; mkdir -p $d
for r in 1 2; do
  for w in f32 q4 q8; do
    rm -rf /tmp/lc-d; LOWCONV_CL_DEBUG=1 LOWCONV_CACHE_DIR=/tmp/lc-d timeout 90 $lc conv --suite resnet34-112 --mb 1 \
      --device opencl --json --repeat 50 --warmup 3 --weights $w --tune fast > $d/b1_${w}_$r.jsonl 2> $d/b1_${w}_$r.err
  done
done
cd $OUT && tar czf debug.tgz debug && rm -rf debug
