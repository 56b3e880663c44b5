#!/usr/bin/env bash
# Start-up on the lent GPU: whether the driver builds programs in parallel (bench/gpu/build_probe.c:
# threads on one context, a context per thread, processes), and IResNet-34's load to first result
# cold, then warm without diagnostics (as users run it) and with LOWCONV_CL_TIMING. Setup as run_h200.sh;
# the probe built here: gcc -O2 bench/gpu/build_probe.c -lOpenCL -lpthread -o .cl-debs/build_probe
set -uo pipefail
cd "$(dirname "$0")/../.."
. bench/gpu/cl_env.sh
k=src/backend/opencl
cat $k/cl_conv_args.h $k/kernels/common.cl $k/kernels/conv_direct.cl > /tmp/direct.cl
cat $k/cl_conv_args.h $k/kernels/common.cl $k/kernels/conv_gemm.cl > /tmp/gemm.cl
bp() { LD_LIBRARY_PATH=$ocl/usr/lib/x86_64-linux-gnu timeout 120 ${PROBE_BIN:-.cl-debs/build_probe} "$@"; }
echo "== parallel builds: direct c8h1w4, gemm 64x128"
for n in 4 8; do bp /tmp/direct.cl $n "-DWFMT=0 -DASYM=0 -DLC_ONE_KERNEL -DLC_WANT_conv_c8h1w4"; done
bp /tmp/gemm.cl 4 "-DWFMT=0 -DASYM=0 -DLC_ONE_KERNEL -DLC_WANT_gemm_64x128"
echo "== IResNet-34 b1: cold, warm x4 (plain), warm with LOWCONV_CL_TIMING=1"
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
export LOWCONV_CACHE_DIR=/tmp/lc-sp CUDA_CACHE_PATH=/tmp/cc-sp; rm -rf $LOWCONV_CACHE_DIR $CUDA_CACHE_PATH
st() { timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>/tmp/st.err | python3 -c "
import json,sys; j=json.load(sys.stdin); print('$1 start_ms %.1f' % j['start_ms'], j.get('start_phases_ms'), 'compile_ms', j['compile_ms'], 'median_ms %.3f' % j['median_ms'])"; }
st cold; for i in 1 2 3 4; do st warm$i; done
LOWCONV_CL_TIMING=1 st warm_timing; grep -h "start-up\|context:\|op init\|plan:" /tmp/st.err | cut -c1-220
