#!/usr/bin/env bash
# Stop 33, call 1 (issues 9, 10): the tip's GPU code (unchanged since stop 32's gemmq list) measured
# whole: `run_h200.sh final` (cold / warm start, GPU tests, resnet34-112 b1 / b32 f32 / q8 / q4 and
# cuDNN in the same run, whole models against PyTorch, the GEMV), then Q_ROUNDS more independent
# tunings (level fast, empty caches) of f32 / q8 / q4 at batch 1 for q / f32's spread. Binaries
# built here into .cl-debs/pb (lowconv, tests/); run from the repository root.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
ln -sfn .cl-debs/ppocr .ppocr
LC_PREBUILT=.cl-debs/pb FINAL_S=${FINAL_S:-430} FAMS="gemmq wino gemvq gemm direct split" bash bench/gpu/run_h200.sh final > /dev/null 2>&1
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/q; mkdir -p $o
. "$(dirname "$0")/q_rounds.sh"
q_rounds ${Q_ROUNDS:-4}
q_summary $o ${Q_ROUNDS:-4} | tee $OUT/q_summary.txt
cd $OUT && tar czf q.tgz q && rm -rf q
