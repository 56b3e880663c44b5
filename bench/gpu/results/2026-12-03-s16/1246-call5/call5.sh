# Session 16 call 5: wide kernels specialized by width only (kh at run time): GPU tests and od96.
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT
{
date +%T
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
export LOWCONV_CACHE_DIR=/tmp/lc-t
LOWCONV_CL_FAMILY=wide LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 90 $(dirname $lc)/tests/test_cl_conv 2>&1 | tail -n 2
export LOWCONV_CACHE_DIR=/tmp/lc-fast
for w in f32 q4; do timeout 150 $lc bench /tmp/od96.onnx --device opencl --weights $w --tune fast --repeat 3 2>&1 | grep -E "median" | cut -c1-100; done
for r in 1 2 3; do for w in f32 q4; do
  timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 100 2>&1 | grep -h "median" | sed "s/^/$w /" | cut -c1-100
done; done
timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights f32 --repeat 20 --per-layer 2>&1 | grep -E "wide|device time" | cut -c1-140
echo "== done $(date +%T)"
} 2>&1 | tee $o/summary.txt
