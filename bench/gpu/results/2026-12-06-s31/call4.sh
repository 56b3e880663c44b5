#!/usr/bin/env bash
# Stop 31, call 4: the stop's final tree (7632f17; its GPU code is f20d6a7's plus the
# LOWCONV_CL_SPLIT_STAGE A/B switch, off by default) on the GPU: every issue 9/10 figure against
# PyTorch/cuDNN in the same run (run_h200.sh final).
cd "$(dirname "$0")/../../../.."
ln -sfn .cl-debs/ppocr .ppocr
LC_PREBUILT=.cl-debs/pb FINAL_S=420 FAMS="gemmq wino gemvq gemm direct" bash bench/gpu/run_h200.sh final > /dev/null 2>&1
