#!/usr/bin/env bash
# Stop 28, call 1: the tip of stop 27 (f33d4fe) on the lent GPU. Stop 27's last call was refused, so
# its final tree never ran py_test_device_nets on NVIDIA: that first, then the OpenCL tests, then
# every issue 9/10 figure against PyTorch/cuDNN in the same run (run_h200.sh final).
cd "$(dirname "$0")/../../../.."
ln -sfn .cl-debs/ppocr .ppocr
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c1; mkdir -p $o
{
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
echo "== py_test_device_nets.py ($(date +%T))"
mkdir -p /tmp/lc-bd && ln -sfn "$(pwd)/.cl-debs/ppocr" /tmp/lc-bd/rapidocr
timeout 150 python3 tests/py_test_device_nets.py --lowconv $lc --build-dir /tmp/lc-bd 2>&1 | tail -45
for t in test_cl_cache test_cl_faults test_cl_res_up; do
  echo "== $t on the GPU ($(date +%T))"; LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 60 .cl-debs/pb/tests/$t 2>&1 | tail -2
done
} 2>&1 | tee $o/summary.txt
LC_PREBUILT=.cl-debs/pb FINAL_S=330 FAMS="gemmq wino gemvq gemm direct" bash bench/gpu/run_h200.sh final > /dev/null 2>&1
mv $OUT/summary.txt $OUT/final_summary.txt 2>/dev/null
cd $OUT && tar czf c1.tgz c1 && rm -rf c1
