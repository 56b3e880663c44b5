# Session call 2: correctness after the kernel-name fix, then LC_EPI_LOCAL A/B (cexp) and IResNet cold both ways.
ocl=/tmp/lc-ocl; mkdir -p $ocl/vendors; for f in .cl-debs/*.deb; do dpkg -x "$f" $ocl; done; echo libnvidia-opencl.so.1 > $ocl/vendors/nvidia.icd
export OCL_ICD_VENDORS=$ocl/vendors LOWCONV_OPENCL_LIBRARY=$ocl/usr/lib/x86_64-linux-gnu/libOpenCL.so.1 LOWCONV_CACHE_DIR=/tmp/lcc
b=.cl-debs/pb; o=$OUT/c2; mkdir -p $o
{
echo "== GPU tests $(date +%T)"
for f in gemm gemmq wino gemv direct dw gemvq; do echo "family $f: $(LOWCONV_CL_FAMILY=$f LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 60 $b/tests/test_cl_conv 2>&1 | tail -1)"; done
for t in test_cl_gemv test_cl_inaff test_cl_ops; do echo "$t: $(LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 60 $b/tests/$t 2>&1 | tail -1)"; done
[ -x $b/tests/test_conv_qi8 ] && { echo "== AVX-512 host CPU: test_conv_qi8"; timeout 120 $b/tests/test_conv_qi8 2>&1 | tail -3; }
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
for cfg in "" "-DLC_EPI_LOCAL" "" "-DLC_EPI_LOCAL"; do
  export LOWCONV_CL_EXTRA_OPTIONS="$cfg" LOWCONV_CACHE_DIR=/tmp/lc-ir-$RANDOM CUDA_CACHE_PATH=/tmp/cc-ir-$RANDOM
  echo "== IResNet cold [$cfg] $(date +%T)"
  LOWCONV_CL_TIMING=1 timeout 60 $b/lowconv bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>$o/ir.err > $o/ir.json
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('start_ms', j['start_ms'], 'compile_ms', j['compile_ms'], 'median_ms', j['median_ms'])" $o/ir.json
  grep -h "start-up\|op init" $o/ir.err | cut -c1-220
done
unset LOWCONV_CL_EXTRA_OPTIONS CUDA_CACHE_PATH
} 2>&1 | tee $o/summary.txt
LC_PREBUILT=.cl-debs/pb CEXP_CFGS=";-DLC_EPI_LOCAL" PROBE_S=240 OUT=$o/cexp bash bench/gpu/run_h200.sh cexp > /dev/null 2>&1
tail -c 2500 $o/cexp/summary.txt
