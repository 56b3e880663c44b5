# Session call 3: the tree's figures (final), IResNet cold program list, b32 local-epilogue bound A/B.
o=$OUT; mkdir -p $o
LC_PREBUILT=.cl-debs/pb FAMS="gemm wino gemmq" FINAL_S=400 OUT=$o/final bash bench/gpu/run_h200.sh final > /dev/null 2>&1
ocl=/tmp/lc-ocl; export OCL_ICD_VENDORS=$ocl/vendors LOWCONV_OPENCL_LIBRARY=$ocl/usr/lib/x86_64-linux-gnu/libOpenCL.so.1
b=.cl-debs/pb
{
[ -x $b/tests/test_conv_qi8 ] && { echo "== AVX-512 host CPU: test_conv_qi8"; timeout 120 $b/tests/test_conv_qi8 2>&1 | tail -3; }
echo "== IResNet cold, program list $(date +%T)"
export LOWCONV_CACHE_DIR=/tmp/lc-ir3 CUDA_CACHE_PATH=/tmp/cc-ir3; rm -rf $LOWCONV_CACHE_DIR $CUDA_CACHE_PATH
LOWCONV_CL_TIMING=2 LOWCONV_CL_BUILD_THREADS=1 timeout 60 $b/lowconv bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>$o/ir3.err > $o/ir3.json
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('start_ms', j['start_ms'], 'compile_ms', j['compile_ms'], 'median_ms', j['median_ms'])" $o/ir3.json
grep -h "built\|start-up\|op init" $o/ir3.err | sed 's/-DWFMT=0 -DASYM=0 -DLC_ONE_KERNEL //' | cut -c1-160
unset CUDA_CACHE_PATH
} 2>&1 | tee $o/c3.txt
LC_PREBUILT=.cl-debs/pb CEXP_CFGS=";-DLC_EPI_LOCAL_MAX=16384" PROBE_S=100 OUT=$o/cexp bash bench/gpu/run_h200.sh cexp > /dev/null 2>&1
grep -v "^lowconv: built" $o/final/summary.txt | grep -A3 "cold start,\|IResNet34-112 load\|geomean\|q8 /\|q4 /\|GEMV q4 K\|cold:\|warm" | head -60
tail -c 1500 $o/cexp/summary.txt
