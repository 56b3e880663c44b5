#!/usr/bin/env bash
# Stop 29, call 3 (lead): the stop's final tree (f20d6a7: the async device open, CPU changes only
# otherwise) on the GPU: the OpenCL tests, then every issue 9/10 figure against PyTorch/cuDNN in the
# same run (run_h200.sh final).
cd "$(dirname "$0")/../../../.."
ln -sfn .cl-debs/ppocr .ppocr
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c3; mkdir -p $o
{
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
for t in test_cl_cache test_cl_faults test_context_shared; do
  echo "== $t on the GPU ($(date +%T))"; LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 60 .cl-debs/pb/tests/$t 2>&1 | tail -1
done
} 2>&1 | tee $o/summary.txt
LC_PREBUILT=.cl-debs/pb FINAL_S=400 FAMS="gemmq wino gemvq gemm direct" bash bench/gpu/run_h200.sh final > /dev/null 2>&1
mv $OUT/summary.txt $OUT/final_summary.txt 2>/dev/null
cd $OUT && tar czf c3.tgz c3 && rm -rf c3
