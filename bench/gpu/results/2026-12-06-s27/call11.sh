#!/usr/bin/env bash
# Stop 27, call 11: split-K in one launch (the tile's last work-group adds the partial sums) against
# the previous commit (lowconv_prev, 4204789): GPU tests of the changed families, the resnet34-112
# suites at batch 1 (two rounds) and 32, cuDNN at batch 1, and whole models, interleaved.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c11; mkdir -p $o/raw
lp=.cl-debs/pb/lowconv_prev
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, iresnet34, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx'); onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
S() { local b=$1 mb=$2; shift 2; timeout 90 $b conv --suite resnet34-112 --mb $mb --device opencl --json --repeat 50 --warmup 3 "$@" 2>/dev/null; }
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for fam in gemm gemmq wino; do echo "== test_cl_conv $fam ($(date +%T))"
  LOWCONV_CACHE_DIR=/tmp/lc-t LOWCONV_CL_FAMILY=$fam LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 90 .cl-debs/pb/tests/test_cl_conv 2>&1 | tail -1; done
LOWCONV_CACHE_DIR=/tmp/lc-t LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 60 .cl-debs/pb/tests/test_cl_inaff 2>&1 | tail -1
echo "== fences in the cached PTX of this tree's programs (split-K's last work-group relies on them)"
grep -r -a -o -h "membar\.[a-z]*\|fence\.[a-z.]*" /tmp/lc-t 2>/dev/null | sort | uniq -c
echo "== b1 suites with --check (the CPU reference) ($(date +%T))"
for w in f32 q8 q4; do rm -rf /tmp/lc-s; LOWCONV_CACHE_DIR=/tmp/lc-s S $lc 1 --weights $w --tune fast --check > $o/raw/b1_${w}_check.jsonl
  python3 -c "import json,sys; e=[json.loads(l).get('max_rel_err') for l in open(sys.argv[1])]; print('$w max_rel_err', max(x for x in e if x is not None), len(e))" $o/raw/b1_${w}_check.jsonl; done
for r in 1 2; do for b in new prev; do bin=$lc; [ $b = prev ] && bin=$lp; for w in f32 q8 q4; do
  echo "== b1 $w $b r$r ($(date +%T))"; rm -rf /tmp/lc-s; LOWCONV_CACHE_DIR=/tmp/lc-s S $bin 1 --weights $w --tune fast > $o/raw/b1_${w}_${b}_r$r.jsonl
done; done; done
for b in new prev; do bin=$lc; [ $b = prev ] && bin=$lp; for w in f32 q4; do
  echo "== b32 $w $b ($(date +%T))"; rm -rf /tmp/lc-s; LOWCONV_CACHE_DIR=/tmp/lc-s S $bin 32 --weights $w --tune fast > $o/raw/b32_${w}_${b}.jsonl
done; done
echo "== cuDNN b1 ($(date +%T))"; timeout 60 python3 bench/gpu/torch_conv.py --lowconv $lc --suite resnet34-112 --mb 1 > $o/raw/b1_cudnn.jsonl 2>/dev/null
for b in new prev; do bin=$lc; [ $b = prev ] && bin=$lp; for m in ir34 od96; do for w in f32 q4; do
  LOWCONV_CACHE_DIR=/tmp/lc-m$b timeout 60 $bin bench /tmp/$m.onnx --device opencl --weights $w --repeat 3 >/dev/null 2>&1; done; done; done
for r in 1 2; do for b in new prev; do bin=$lc; [ $b = prev ] && bin=$lp; for m in ir34 od96; do for w in f32 q4; do
  LOWCONV_CACHE_DIR=/tmp/lc-m$b timeout 60 $bin bench /tmp/$m.onnx --device opencl --weights $w --repeat 200 --json > $o/m.json 2>/dev/null
  echo "$m $w $b r$r $(python3 -c "import json; j=json.load(open('$o/m.json')); print(j['median_ms'], j['kernels'])")"
done; done; done; done
} 2>&1 | tee $o/summary.txt
rm -f $o/m.json; cd $o && tar czf raw.tgz raw && rm -rf raw
