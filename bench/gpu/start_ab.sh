#!/usr/bin/env bash
# IResNet-34 b1 load to first result on the lent GPU, A/B interleaved in one call: the device's
# context opened first (LOWCONV_DEVICE_OPEN=serial) or while the host folds the weights (default),
# weights uploaded in one piece (LOWCONV_CL_UPLOAD_CHUNK huge) or in pinned pieces (default).
# Then the build probe with the driver's JIT cache off. Setup as run_h200.sh.
set -uo pipefail
cd "$(dirname "$0")/../.."
. bench/gpu/cl_env.sh
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
export LOWCONV_CACHE_DIR=/tmp/lc-ab CUDA_CACHE_PATH=/tmp/cc-ab; rm -rf $LOWCONV_CACHE_DIR $CUDA_CACHE_PATH
st() { env $2 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 5 2>/tmp/st.err | python3 -c "
import json,sys; j=json.load(sys.stdin); print('%-28s start_ms %7.1f' % ('$1', j['start_ms']), {k: round(v, 1) for k, v in j.get('start_phases_ms', {}).items()})"; }
st cold "X=1"
for r in 1 2 3 4 5 6; do
  st "serial+whole" "LOWCONV_DEVICE_OPEN=serial LOWCONV_CL_UPLOAD_CHUNK=1000000000000"
  st "serial+chunks" "LOWCONV_DEVICE_OPEN=serial"
  st "overlap+whole" "LOWCONV_CL_UPLOAD_CHUNK=1000000000000"
  st "overlap+chunks (default)" "X=1"
done
for c in "LOWCONV_DEVICE_OPEN=serial LOWCONV_CL_UPLOAD_CHUNK=1000000000000" "X=1"; do
  LOWCONV_CL_TIMING=1 st "timing $c" "$c"; grep -h "start-up\|context:\|op init\|plan:" /tmp/st.err | cut -c1-250; done
echo "== build probe, driver JIT cache off"
k=src/backend/opencl
cat $k/cl_conv_args.h $k/kernels/common.cl $k/kernels/conv_gemm.cl > /tmp/gemm.cl
CUDA_CACHE_DISABLE=1 LD_LIBRARY_PATH=$ocl/usr/lib/x86_64-linux-gnu timeout 120 .cl-debs/build_probe /tmp/gemm.cl 4 \
  "-DWFMT=0 -DASYM=0 -DLC_ONE_KERNEL -DLC_WANT_gemm_64x128"
echo "== one program holding every variant vs one variant per program (JIT cache off)"
for f in conv_direct:conv_c8h1w4 conv_gemv:gemv_p1 conv_gemm:gemm_64x128; do
  cat $k/cl_conv_args.h $k/kernels/common.cl $k/kernels/${f%%:*}.cl > /tmp/p.cl
  for o in "-DLC_ONE_KERNEL -DLC_WANT_${f#*:}" ""; do
    echo "${f%%:*} [${o:-all variants}]"
    CUDA_CACHE_DISABLE=1 LD_LIBRARY_PATH=$ocl/usr/lib/x86_64-linux-gnu timeout 120 .cl-debs/build_probe /tmp/p.cl 1 \
      "-DWFMT=0 -DASYM=0 $o" | head -1
  done
done
