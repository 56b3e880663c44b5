#!/usr/bin/env bash
# Stop 30, call 2: the stop's final tree (fd562d1; its GPU code is f20d6a7's) on the GPU. Where
# today's warm starts go: the driver's part from ctx_probe (one process a sample) and from
# LOWCONV_CL_TIMING=1 inside IResNet-34-112 warm starts, interleaved; then the OpenCL tests and
# py_test_device_nets on NVIDIA. Setup: .cl-debs/ debs, pb/ binaries (+ ctx_probe), ppocr/.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
ln -sfn .cl-debs/ppocr .ppocr
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c2; mkdir -p $o
export LOWCONV_CACHE_DIR=/tmp/lc-s30 CUDA_CACHE_PATH=/tmp/cc-s30; rm -rf $LOWCONV_CACHE_DIR $CUDA_CACHE_PATH
st() { local l=$1; shift
  env "$@" timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>$o/$l.err | python3 -c "
import json,sys; j=json.load(sys.stdin); p=j.get('start_phases_ms', {})
print('%-10s start_ms %7.1f  plan %6.1f first_run %5.1f median_ms %.3f' % ('$l', j['start_ms'], p.get('plan',0), p.get('first_run',0), j['median_ms']))"
  grep -h "opencl context:" $o/$l.err | sed 's/^/    /' | cut -c1-200; }
{
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
echo "== cold start, then interleaved warm starts and driver probes ($(date +%T))"
st cold X=1
for r in 1 2 3 4 5 6; do
  st warm$r LOWCONV_CL_TIMING=1
  echo "    ctx_probe: $(LD_LIBRARY_PATH=/tmp/lc-ocl/usr/lib/x86_64-linux-gnu .cl-debs/pb/ctx_probe 2>&1 | tr '\n' ' ' | cut -c1-200)"
done
echo "== OpenCL tests on NVIDIA ($(date +%T))"
for t in test_cl_cache test_cl_faults test_context_shared test_cl_gemv test_cl_inaff test_cl_ops test_cl_res_up; do
  echo "-- $t: $(LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 60 .cl-debs/pb/tests/$t 2>&1 | tail -1)"
done
for f in gemmq wino gemvq gemm direct; do
  echo "-- test_cl_conv $f: $(LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 LOWCONV_CL_FAMILY=$f timeout 60 .cl-debs/pb/tests/test_cl_conv 2>&1 | tail -1)"
done
mkdir -p /tmp/lc-bd && ln -sfn "$(pwd)/.cl-debs/ppocr" /tmp/lc-bd/rapidocr
echo "-- py_test_device_nets.py ($(date +%T))"
timeout 240 python3 tests/py_test_device_nets.py --lowconv $lc --build-dir /tmp/lc-bd 2>&1 | tail -12
echo "== done ($(date +%T))"
} 2>&1 | tee $o/summary.txt
cd $OUT && tar czf c2.tgz c2 && rm -rf c2
