# Session 17 call 2: family split (reduction split in a work-group) on the GPU; od96 and IResNet34 with and without it.
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT
b=$(dirname $lc)
{
date +%T
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, iresnet34, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx'); onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
echo "== test_cl_conv quick, family split, on the GPU"
LOWCONV_CACHE_DIR=/tmp/lc-t LOWCONV_CL_FAMILY=split LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 60 $b/tests/test_cl_conv 2>&1 | tail -n 2
echo "== od96 tuning fast, A = with split, B = LOWCONV_CL_SKIP=split"
for ab in A B; do for w in f32 q4; do
  sk=""; [ $ab = B ] && sk=split
  LOWCONV_CL_SKIP=$sk LOWCONV_CACHE_DIR=/tmp/lc-$ab timeout 150 $lc bench /tmp/od96.onnx --device opencl --weights $w --tune fast --repeat 3 2>&1 | grep -E "^start" | sed "s/^/$ab $w /" | cut -c1-60
done; done
for r in 1 2 3; do for ab in A B; do for w in f32 q4; do
  LOWCONV_CACHE_DIR=/tmp/lc-$ab timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 200 2>&1 | grep -h "median" | sed "s/^/$ab $w /" | cut -c1-90
done; done; done
for ab in A B; do for w in f32 q4; do
  LOWCONV_CACHE_DIR=/tmp/lc-$ab timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 50 --per-layer > $o/od_${w}_pl_$ab.txt 2>&1
  echo "$ab $w: $(grep -c split $o/od_${w}_pl_$ab.txt) split layers; $(tail -1 $o/od_${w}_pl_$ab.txt | cut -c1-150)"
done; done
echo "== IResNet34 cold (empty lowconv + driver caches) with split, warm x3; f32 then q4"
for w in f32 q4; do
  rm -rf /tmp/lc-ir /tmp/cc-ir; export CUDA_CACHE_PATH=/tmp/cc-ir
  for s in cold warm1 warm2 warm3; do
    LOWCONV_CACHE_DIR=/tmp/lc-ir timeout 60 $lc bench /tmp/ir34.onnx --device opencl --weights $w --json --repeat 20 2>/dev/null > $o/ir_${w}_$s.json
    python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('ir34 $w $s start_ms', j['start_ms'], 'compile_ms', j['compile_ms'], 'tune_ms', j['tune_ms'], 'median_ms', j['median_ms'])" $o/ir_${w}_$s.json
  done
  unset CUDA_CACHE_PATH
done
for r in 1 2; do for w in f32 q4; do
  LOWCONV_CACHE_DIR=/tmp/lc-ir timeout 60 $lc bench /tmp/ir34.onnx --device opencl --weights $w --repeat 300 2>&1 | grep -h "median" | sed "s/^/ir34 $w /" | cut -c1-90
done; done
LOWCONV_CACHE_DIR=/tmp/lc-ir timeout 60 $lc bench /tmp/ir34.onnx --device opencl --weights f32 --repeat 50 --per-layer > $o/ir_f32_pl.txt 2>&1
echo "ir34 f32: $(grep -c split $o/ir_f32_pl.txt) split layers"
echo "== done $(date +%T)"
} 2>&1 | tee $o/summary.txt
