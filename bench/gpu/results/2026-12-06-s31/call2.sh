#!/usr/bin/env bash
# Stop 31, call 2: call 1's ctx_probe ran without the Debian ICD loader on its library path and
# took 130-307 ms (context ~1 ms, the platform query the rest) where stop 30's, through that
# loader, took 228-306 (platforms ~110, context 123-199). Which loader is that, and does a warm
# start through it (LOWCONV_OPENCL_LIBRARY unset: lowconv's dlopen of libOpenCL.so.1) start
# faster? Interleaved, one process a sample: warm starts with LOWCONV_CL_TIMING=1 through each
# loader and ctx_probe through each.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c2; mkdir -p $o
deb_env="OCL_ICD_VENDORS=$OCL_ICD_VENDORS LOWCONV_OPENCL_LIBRARY=$LOWCONV_OPENCL_LIBRARY"
unset OCL_ICD_VENDORS LOWCONV_OPENCL_LIBRARY
export LOWCONV_CACHE_DIR=/tmp/lc-s31 CUDA_CACHE_PATH=/tmp/cc-s31
st() { local l=$1; shift
  env "$@" LOWCONV_CL_TIMING=1 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>$o/$l.err | python3 -c "
import json,sys; j=json.load(sys.stdin)
print('%-10s start_ms %7.1f median_ms %.3f' % ('$l', j['start_ms'], j['median_ms']))"
  grep -h "opencl context:" $o/$l.err | sed 's/^/    /' | cut -c1-200; }
{
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
echo "-- system loaders: $(ldconfig -p | grep -i libopencl | tr '\n' ' ')"
echo "-- ctx_probe links: $(ldd .cl-debs/pb/ctx_probe | grep -i opencl)"
echo "-- /etc/OpenCL/vendors: $(ls /etc/OpenCL/vendors 2>&1 | tr '\n' ' ') $(cat /etc/OpenCL/vendors/* 2>/dev/null | tr '\n' ' ')"
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
st cold $deb_env >/dev/null
for r in 1 2 3 4 5 6; do
  st deb$r $deb_env
  st sys$r X=1
  echo "    ctx_probe deb: $(env $deb_env LD_LIBRARY_PATH=/tmp/lc-ocl/usr/lib/x86_64-linux-gnu .cl-debs/pb/ctx_probe 2>&1 | cut -c1-160)"
  echo "    ctx_probe sys: $(.cl-debs/pb/ctx_probe 2>&1 | cut -c1-160)"
done
echo "== done ($(date +%T))"
} 2>&1 | tee $o/summary.txt
cd $OUT && tar czf c2.tgz c2 && rm -rf c2
