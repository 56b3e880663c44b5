#!/usr/bin/env bash
# Stop 26, call 4: every issue 9/10 figure on the tree with od96's output pinned
# (bench/gpu/run_h200.sh final: PyTorch + cuDNN in the same call, GPU tests, start, GEMV).
cd "$(dirname "$0")/../../../.."
[ -e .ppocr ] || ln -s .cl-debs/ppocr .ppocr
LC_PREBUILT=.cl-debs/pb FAMS="wino gemm gemvq" FINAL_S=${FINAL_S:-360} exec bash bench/gpu/run_h200.sh final
