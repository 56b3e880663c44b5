#!/usr/bin/env bash
# Stop 27, call 5: gemmq's fused tiles (f64x64, f32x32 and split forms: the input coded while staged,
# no gemmq_quant launch) against the previous binary (lowconv_base): the resnet34-112 suites b1
# f32 / q8 / q4 and b32 q8 / q4 (tuning fast, fresh caches), IResNet-34 and od96 q4 whole, and
# test_cl_conv / test_cl_inaff for family gemmq on the GPU.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c5; mkdir -p $o/raw
lb=.cl-debs/pb/lowconv_base
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, iresnet34, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx'); onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
S() { local b=$1 mb=$2; shift 2; timeout 120 $b conv --suite resnet34-112 --mb $mb --device opencl --json --repeat 50 --warmup 3 "$@" 2>/dev/null; }
{
echo "== GPU tests, family gemmq ($(date +%T))"
LOWCONV_CACHE_DIR=/tmp/lc-t LOWCONV_CL_FAMILY=gemmq LC_TEST_QUICK=1 timeout 200 .cl-debs/pb/tests/test_cl_conv 2>&1 | tail -4
LOWCONV_CACHE_DIR=/tmp/lc-t timeout 200 .cl-debs/pb/tests/test_cl_inaff 2>&1 | tail -2
for r in 1 2 3; do
  for b in new base; do bin=$lc; [ $b = base ] && bin=$lb
    for w in q8 q4; do echo "== b1 $w $b r$r ($(date +%T))"; rm -rf /tmp/lc-s; LOWCONV_CACHE_DIR=/tmp/lc-s S $bin 1 --weights $w --tune fast > $o/raw/b1_${w}_${b}_r$r.jsonl; done
  done
  echo "== b1 f32 r$r"; rm -rf /tmp/lc-s; LOWCONV_CACHE_DIR=/tmp/lc-s S $lc 1 --weights f32 --tune fast > $o/raw/b1_f32_r$r.jsonl
done
for b in new base; do bin=$lc; [ $b = base ] && bin=$lb
  for w in q8 q4; do echo "== b32 $w $b ($(date +%T))"; rm -rf /tmp/lc-s; LOWCONV_CACHE_DIR=/tmp/lc-s S $bin 32 --weights $w --tune fast > $o/raw/b32_${w}_${b}.jsonl; done
done
echo "== b32 f32"; rm -rf /tmp/lc-s; LOWCONV_CACHE_DIR=/tmp/lc-s S $lc 32 --weights f32 --tune fast > $o/raw/b32_f32.jsonl
for b in new base; do bin=$lc; [ $b = base ] && bin=$lb
  for m in ir34 od96; do timeout 120 env LOWCONV_CACHE_DIR=/tmp/lc-m$b $bin bench /tmp/$m.onnx --device opencl --weights q4 --repeat 5 >/dev/null 2>&1; done
done
for r in 1 2; do for b in new base; do bin=$lc; [ $b = base ] && bin=$lb
  for m in ir34 od96; do
    LOWCONV_CACHE_DIR=/tmp/lc-m$b timeout 60 $bin bench /tmp/$m.onnx --device opencl --weights q4 --repeat 300 --json > $o/m.json 2>/dev/null
    echo "$m q4 $b r$r median_ms $(python3 -c "import json; j=json.load(open('$o/m.json')); print(j['median_ms'], j['kernels'])")"
  done
done; done
} 2>&1 | tee $o/summary.txt
rm -f $o/m.json; cd $o && tar czf raw.tgz raw && rm -rf raw
